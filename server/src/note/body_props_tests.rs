use super::*;

/// A generated note and where its parts are.
#[derive(Debug, Clone)]
struct Note {
    text: String,
    crlf: bool,
}

const LINES: [&str; 9] = ["", "a", "b", "- x", "## S", "  ", "é ü", "`c`", "# B"];

fn line() -> impl Strategy<Value = &'static str> {
    prop::sample::select([&LINES[..], &["keep"]].concat())
}

/// A note: optional BOM and frontmatter (closed, closed at the end of the file without a
/// newline, or unterminated), text above the H1, an optional H1, body lines.
fn note() -> impl Strategy<Value = Note> {
    note_with(0..4u8)
}

/// A note whose frontmatter is of the kinds `fm` gives: 0 none, 1 closed, 2 closed at the
/// end of the file, 3 unterminated.
fn note_with(fm: impl Strategy<Value = u8>) -> impl Strategy<Value = Note> {
    let parts = (
        any::<bool>(),
        any::<bool>(),
        fm,
        prop::collection::vec(line(), 0..3),
        prop::collection::vec(line(), 0..3),
        0..3u8,
        prop::collection::vec(line(), 0..8),
        any::<bool>(),
    );
    parts.prop_map(|(crlf, bom, fm, fm_lines, above, h1, body, final_nl)| {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = String::from(if bom { "\u{feff}" } else { "" });
        let join = |lines: &[&str]| lines.iter().map(|l| format!("{l}{nl}")).collect::<String>();
        match fm {
            1 => text += &format!("---{nl}{}---{nl}", join(&fm_lines)),
            2 => return Note { text: text + &format!("---{nl}{}---", join(&fm_lines)), crlf },
            3 => return Note { text: text + &format!("---{nl}{}", join(&fm_lines)), crlf },
            _ => {}
        }
        text += &join(&above);
        match h1 {
            1 => text += &format!("# Title{nl}"),
            2 => return Note { text: text + "# Title", crlf },
            _ => {}
        }
        text += &body.join(nl);
        if final_nl && !body.is_empty() {
            text += nl;
        }
        Note { text, crlf }
    })
}

/// A provider's output: lines joined by LF or CRLF, with or without a final newline.
fn output() -> impl Strategy<Value = String> {
    (prop::collection::vec((line(), any::<bool>()), 0..8), any::<bool>()).prop_map(|(lines, last)| {
        let mut out = String::new();
        for (i, (l, crlf)) in lines.iter().enumerate() {
            out += l;
            if i + 1 < lines.len() || last {
                out += if *crlf { "\r\n" } else { "\n" };
            }
        }
        out
    })
}

fn content_lines(s: &str) -> Vec<&str> {
    s.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

fn blank_first(s: &str) -> bool {
    !s.is_empty() && s.split('\n').next().unwrap_or_default().trim().is_empty()
}

fn has_h1(text: &str) -> bool {
    let start = locate(text).map_or(bom_len(text), |fm| fm.body_start());
    h1_line(text, start).is_some()
}

fn edits_are_ordered(edits: &[TextEdit], region: &Range<usize>) -> Result<(), TestCaseError> {
    for e in edits {
        prop_assert!(region.start <= e.range.start && e.range.end <= region.end, "{e:?} outside {region:?}");
    }
    for w in edits.windows(2) {
        // Runs of changes are separated by at least one unchanged line.
        prop_assert!(w[0].range.end < w[1].range.start, "{:?} and {:?} touch", w[0], w[1]);
    }
    Ok(())
}

/// Text made of the tokens that matter to the rules, for the never-panics property.
fn soup() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "---", "...", "\n", "\r\n", "\r", "# ", "#", "a", "b", " ", "é", "\u{feff}", "```", ":", "- x\n",
    ]);
    prop::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

proptest! {
    #[test]
    fn replace_keeps_the_rest_and_writes_the_output(note in note(), output in output()) {
        let text = &note.text;
        let region = agent_region(text);
        let edits = replace_region_edits(text, &output);
        edits_are_ordered(&edits, &region)?;
        let out = apply(text, &edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if locate(text).is_some_and(|fm| fm.close.is_none()) {
            prop_assert!(edits.is_empty());
            return Ok(());
        }
        // Frontmatter, text above the H1 and the H1 itself are byte-identical.
        prop_assert!(out.starts_with(&text[..region.start]));
        // A note without any line break has no convention of its own: LF.
        let nl = if note.crlf && text.contains('\n') { "\r\n" } else { "\n" };
        let body = &text[region.clone()];
        // The output less the leading lines that repeat the note's H1.
        let mut new = output.as_str();
        let start = locate(text).map_or(bom_len(text), |fm| fm.body_start());
        if let Some(own) = title(text, start).filter(|t| first_line_title(body) != Some(*t)) {
            while first_line_title(new) == Some(own) {
                new = &new[new.find('\n').map_or(new.len(), |i| i + 1)..];
            }
        }
        let mut tail = &out[region.start..];
        let needs_break = body.is_empty() && !text.is_empty() && !text.ends_with('\n') && text != "\u{feff}";
        if needs_break && !new.is_empty() {
            prop_assert!(tail.starts_with(nl), "no line break before the content: {tail:?}");
            tail = &tail[nl.len()..];
        }
        if has_h1(text) {
            prop_assert_eq!(agent_region(&out).start, out.len() - tail.len());
        }
        // Every line ending is the note's.
        prop_assert_eq!(tail.matches('\n').count(), tail.matches(nl).count());
        if nl == "\n" {
            prop_assert!(!tail.contains('\r'));
        }
        // Modulo line endings, the region is the output, plus the blank line under the H1
        // and the final newline the rules add.
        let mut want: Vec<&str> = Vec::new();
        if !new.is_empty() {
            let blank_region = body.is_empty() || blank_first(body);
            if has_h1(text) && blank_region && !blank_first(new) {
                want.push("");
            }
            want.extend(content_lines(new));
            let final_nl = if body.is_empty() { !needs_break } else { body.ends_with('\n') };
            if final_nl && !new.ends_with('\n') {
                want.push("");
            }
        }
        let got = if tail.is_empty() { Vec::new() } else { content_lines(tail) };
        prop_assert_eq!(got, want);
        // Writing the same output again changes nothing (unless it brought the first H1).
        if agent_region(&out).start == out.len() - tail.len() {
            prop_assert_eq!(replace_region_edits(&out, &output), vec![]);
        }
        prop_assert_eq!(replace_region_edits(text, &text[region]), vec![]);
    }

    #[test]
    fn unchanged_blocks_are_never_edited(
        a in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
        a2 in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
        c in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
        c2 in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
    ) {
        let lines = |v: &[&str]| v.iter().map(|l| format!("{l}\n")).collect::<String>();
        // Longer than `a` and `c` together, so a minimal diff keeps all of it.
        let block: String = (0..12).map(|i| format!("keep{i}\n")).collect();
        let text = format!("# T\n\n{}{block}{}", lines(&a), lines(&c));
        let new = format!("\n{}{block}{}", lines(&a2), lines(&c2));
        let start = 5 + lines(&a).len();
        let inner = start + "keep0\n".len()..start + block.len() - "keep11\n".len();
        let edits = replace_region_edits(&text, &new);
        edits_are_ordered(&edits, &agent_region(&text))?;
        for e in &edits {
            prop_assert!(e.range.end <= inner.start || e.range.start >= inner.end, "{e:?} inside the block");
        }
        prop_assert_eq!(applied(&text, &edits), format!("# T\n{new}"));
    }

    #[test]
    fn user_edits_outside_the_region_never_conflict(
        note in note_with(Just(1)),
        new in output(),
        pick in any::<prop::sample::Index>(),
        word in "[a-z]{1,6}",
    ) {
        let text = &note.text;
        let nl = if note.crlf { "\r\n" } else { "\n" };
        let Some(fm) = locate(text) else { return Ok(()) };
        // Insertion points: a new line at any line start of the frontmatter's content or
        // above the H1, or letters at the end of a frontmatter line.
        let region = agent_region(text);
        let mut spots: Vec<(usize, String)> = Vec::new();
        let mut at = fm.content.start;
        for l in text[fm.content.clone()].split_inclusive('\n') {
            spots.push((at, format!("{word}: x{nl}")));
            let end = at + l.trim_end_matches(['\r', '\n']).len();
            spots.push((end, word.clone()));
            at += l.len();
        }
        spots.push((fm.content.end, format!("{word}: y{nl}")));
        if has_h1(text) {
            let mut at = fm.body_start();
            for l in text[fm.body_start()..region.start].split_inclusive('\n') {
                spots.push((at, format!("{word}{nl}")));
                at += l.len();
            }
        }
        let (at, insert) = pick.get(&spots).clone();
        let current = format!("{}{insert}{}", &text[..at], &text[at..]);
        prop_assert_eq!(&current[agent_region(&current)], &text[region.clone()]);

        let patch = Patch::compute(text, &new);
        for cur in [text.as_str(), current.as_str()] {
            let r = patch.apply_to(cur);
            prop_assert_eq!(r.conflicts, 0);
            prop_assert_eq!(&r.edits, &replace_region_edits(cur, &new));
            let out = apply(cur, &r.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let base_out = applied(text, &replace_region_edits(text, &new));
            let cur_region = agent_region(cur);
            prop_assert_eq!(&out[..cur_region.start], &cur[..cur_region.start]);
            prop_assert_eq!(&out[cur_region.start..], &base_out[region.start..]);
            // A retry on the result finds everything done.
            prop_assert_eq!(patch.apply_to(&out), PatchResult::default(), "{:?}", out);
        }
    }

    #[test]
    fn user_lines_in_the_region_are_never_overwritten(
        note in note(),
        new in output(),
        pick in any::<prop::sample::Index>(),
        append in any::<bool>(),
    ) {
        let text = &note.text;
        let region = agent_region(text);
        let nl = if note.crlf { "\r\n" } else { "\n" };
        // The user adds a line, or appends to one, somewhere in the region.
        let mut spots = vec![region.start];
        spots.extend(text[region.clone()].match_indices('\n').map(|(i, _)| region.start + i + 1));
        let at = *pick.get(&spots);
        let current = if append && at > region.start {
            let end = if text[..at - 1].ends_with('\r') { at - 2 } else { at - 1 };
            format!("{} USER{}", &text[..end], &text[end..])
        } else if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
            format!("{text}{nl}USER")
        } else {
            format!("{}USER{nl}{}", &text[..at], &text[at..])
        };
        let patch = Patch::compute(text, &new);
        let r = patch.apply_to(&current);
        edits_are_ordered(&r.edits, &agent_region(&current))?;
        let out = apply(&current, &r.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // A retry on the result may still find work where the user's edit broke a hunk's
        // context (it cannot always tell "to do" from "done" then), but never costs the
        // user's line either.
        let retry = patch.apply_to(&out);
        let again = apply(&out, &retry.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // A deleted blank line can join the user's line to a BOM; the line itself is intact.
        let current = current.replace('\u{feff}', "");
        let user_line = current.lines().find(|l| l.contains("USER")).unwrap_or_default();
        for out in [out, again] {
            let out = out.replace('\u{feff}', "");
            prop_assert!(out.lines().any(|l| l == user_line), "lost {user_line:?}:\n{out:?}");
        }
    }

    #[test]
    fn never_panics(base in soup(), new in soup(), splice in soup(), pick in any::<prop::sample::Index>()) {
        let region = agent_region(&base);
        prop_assert!(region.start <= region.end && region.end == base.len());
        prop_assert!(base.is_char_boundary(region.start));
        let edits = replace_region_edits(&base, &new);
        prop_assert!(apply(&base, &edits).is_ok());
        // The user typed anywhere, frontmatter and H1 included.
        let spots: Vec<usize> = (0..=base.len()).filter(|i| base.is_char_boundary(*i)).collect();
        let at = *pick.get(&spots);
        let current = format!("{}{splice}{}", &base[..at], &base[at..]);
        let r = Patch::compute(&base, &new).apply_to(&current);
        prop_assert!(r.conflicts <= Patch::compute(&base, &new).hunks().len());
        // Never in the frontmatter; below the H1 unless the base had none (then the agent
        // owned the whole body, whatever the user added since).
        let body_start = locate(&current).map_or(bom_len(&current), |fm| fm.body_start());
        let floor = if has_h1(&base) { agent_region(&current).start } else { body_start };
        for e in &r.edits {
            prop_assert!(floor <= e.range.start && e.range.end <= current.len(), "{e:?}");
        }
        prop_assert!(apply(&current, &r.edits).is_ok());
    }
}
