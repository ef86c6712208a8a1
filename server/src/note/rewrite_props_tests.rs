use super::*;
use crate::note::outline::Outline;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// A YAML value without positions, to compare what a note means before and after.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Null,
    Bool(bool),
    Int(i64),
    Float(String),
    Str(String),
    Seq(Vec<V>),
    Map(Vec<(String, V)>),
    Bad,
}

fn v(n: &Node) -> V {
    match &n.kind {
        Kind::Map(es) => V::Map(es.iter().map(|e| (e.key.clone(), v(&e.value))).collect()),
        Kind::Seq(xs) => V::Seq(xs.iter().map(v).collect()),
        Kind::Scalar(Scalar::Null) => V::Null,
        Kind::Scalar(Scalar::Bool(b)) => V::Bool(*b),
        Kind::Scalar(Scalar::Int(i)) => V::Int(*i),
        Kind::Scalar(Scalar::Float(f)) => V::Float(f.to_string()),
        Kind::Scalar(Scalar::Str(s)) => V::Str(s.clone()),
        Kind::Bad => V::Bad,
    }
}

type Map = Vec<(String, V)>;

fn fail(msg: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(msg.to_string())
}

/// The frontmatter's top-level mapping (empty without frontmatter).
fn parsed(text: &str) -> Result<Map, TestCaseError> {
    let Some(fm) = frontmatter::locate(text) else { return Ok(Vec::new()) };
    match yaml::parse(text, fm.content) {
        Ok(None) => Ok(Vec::new()),
        Ok(Some(root)) => match v(&root) {
            V::Map(m) => Ok(m),
            V::Null => Ok(Vec::new()),
            other => Err(fail(format!("root is {other:?} in {text:?}"))),
        },
        Err(e) => Err(fail(format!("{} in {text:?}", e.message))),
    }
}

fn get<'m>(m: &'m Map, k: &str) -> Option<&'m V> {
    m.iter().find(|(n, _)| n == k).map(|(_, v)| v)
}

fn without(m: &Map, k: &str) -> Map {
    m.iter().filter(|(n, _)| n != k).cloned().collect()
}

fn live_of(m: &Map) -> Result<Map, TestCaseError> {
    match get(m, "live") {
        Some(V::Map(l)) => Ok(l.clone()),
        Some(V::Null) => Ok(Vec::new()),
        other => Err(fail(format!("live is {other:?}"))),
    }
}

fn body(text: &str) -> &str {
    let start = frontmatter::locate(text).map_or(frontmatter::bom_len(text), |fm| fm.body_start());
    &text[start..]
}

fn edited(text: &str, edits: &[TextEdit]) -> Result<String, TestCaseError> {
    apply(text, edits).map_err(fail)
}

/// Whether `want` appears, line by line and byte for byte, in order among `out`'s lines.
fn lines_in_order(out: &str, want: &[String]) -> bool {
    let mut it = want.iter().peekable();
    for line in out.split_inclusive('\n') {
        if it.peek().is_some_and(|w| w.as_str() == line) {
            it.next();
        }
    }
    it.peek().is_none()
}

/// Every line ending in the frontmatter is CRLF, or every one LF.
fn endings_ok(out: &str, crlf: bool) -> bool {
    let Some(fm) = frontmatter::locate(out) else { return true };
    let fm_text = &out[fm.open.start..fm.body_start()];
    fm_text.match_indices('\n').all(|(i, _)| fm_text[..i].ends_with('\r') == crlf)
}

/// Strings with quotes, backslashes, controls, separators and non-ASCII text.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[\\x00-\\x20\\x7f-\\u{a0}\\u{2028}\\u{2029}\\u{feff}\"'\\\\a-zé漢🎉: #|>{}\\[\\]-]{0,24}",
    ]
}

#[derive(Debug, Clone)]
struct Child {
    lines: Vec<String>,
    /// Lines no runtime or active edit may change.
    protected: bool,
    /// A comment on a single-line value, which replacing the value keeps.
    comment: Option<String>,
}

#[derive(Debug, Clone)]
struct Note {
    text: String,
    crlf: bool,
    /// Lines outside `live:` (with their endings), in order.
    outside: Vec<String>,
    /// Lines of `live:` other than runtime fields and `active`, in order.
    inside: Vec<String>,
    comments: Vec<String>,
    has_live: bool,
    /// The frontmatter has no non-blank line besides the `live:` block.
    only_live: bool,
}

fn user_entry(i: usize, kind: u8, w: &str) -> Vec<String> {
    let k = format!("user{i}");
    match kind {
        0 => vec![format!("{k}: {w}")],
        1 => vec![format!("{k}: 'it''s {w}' # a comment")],
        2 => vec![format!("\"{k}\": \"double \\\"q\\\" {w}\"")],
        3 => vec![format!("{k}: [a, \"b c\", {{x: 1}}]")],
        4 => vec![
            format!("{k}:"),
            "  nested: 1".into(),
            "  other: 'x'  # c".into(),
            "  list:".into(),
            "  - a".into(),
            "  - b: 2".into(),
        ],
        5 => vec![format!("{k}: |"), format!("  {w}"), "  line: two # not a comment".into()],
        6 => vec!["# a user comment ünïcode".into()],
        7 => vec![String::new()],
        8 => vec![format!("{k}: {{a: 1, b: [2, 3]}}")],
        9 => vec![format!("{k}:"), "- x".into(), format!("- {w}")],
        10 => vec![format!("{k}: >-"), format!("  {w}"), String::new(), "  folded".into()],
        11 => vec![format!("{k}: 2026-05-01  # a date, read as a string")],
        _ => vec![format!("{k}: ~")],
    }
}

fn live_children() -> impl Strategy<Value = Vec<Child>> {
    (
        prop_oneof![Just(2usize), Just(4usize)],
        proptest::option::of(0u8..7),
        proptest::option::of((any::<bool>(), any::<bool>())),
        proptest::option::of(0u8..3),
        (any::<bool>(), any::<bool>(), any::<bool>()),
        proptest::sample::subsequence(RuntimeField::ALL.to_vec(), 0..=5),
        proptest::collection::vec(0u8..8, 5),
    )
        .prop_flat_map(|(ci, obj, active, trig, (provider, comment, blank), fields, forms)| {
            let s = " ".repeat(ci);
            let c = " ".repeat(ci + 2);
            let keep = |lines: Vec<String>| Child { lines, protected: true, comment: None };
            let mut out = Vec::new();
            if let Some(style) = obj {
                out.push(keep(match style {
                    0 => vec![format!("{s}objective: Keep it short")],
                    1 => vec![format!("{s}objective: \"Quoted \\\"x\\\" é\"  # why")],
                    2 => vec![format!("{s}objective: 'single ''q'''")],
                    3 => {
                        vec![format!("{s}objective: |"), format!("{c}line one"), format!("{c}line: two")]
                    }
                    4 => vec![
                        format!("{s}objective: >"),
                        format!("{c}folded one"),
                        String::new(),
                        format!("{c}two"),
                    ],
                    5 => vec![format!("{s}objective: |+"), format!("{c}keep"), String::new()],
                    _ => vec![format!("{s}objective:"), format!("{c}plain multi"), format!("{c}line")],
                }));
            }
            if let Some((on, commented)) = active {
                let comment = commented.then(|| "# paused?".to_owned());
                let tail = comment.as_ref().map(|c| format!("  {c}")).unwrap_or_default();
                out.push(Child { lines: vec![format!("{s}active: {on}{tail}")], protected: false, comment });
            }
            if let Some(t) = trig {
                out.push(keep(match t {
                    0 => vec![
                        format!("{s}triggers:"),
                        format!("{s}  cronExpr: \"0 * * * *\"  # hourly"),
                        format!("{s}  windows:"),
                        format!("{s}  - startTime: \"09:00\""),
                        format!("{s}    endTime: '12:00'"),
                        format!("{s}  eventMatchCriteria: Emails about Q3"),
                    ],
                    1 => vec![
                        format!("{s}triggers:"),
                        format!("{s}  windows:"),
                        format!("{s}    - {{startTime: \"09:00\", endTime: \"10:00\"}}"),
                        format!("{s}    - startTime: '13:00'"),
                        format!("{s}      endTime: \"14:00\""),
                    ],
                    _ => vec![format!("{s}triggers: {{cronExpr: \"*/30 * * * *\"}}")],
                }));
            }
            if provider {
                out.push(keep(vec![format!("{s}provider: openai")]));
            }
            if comment {
                out.push(keep(vec![format!("{s}# written by livenote only:")]));
            }
            if blank {
                out.push(keep(vec![String::new()]));
            }
            for (f, form) in fields.into_iter().zip(forms) {
                let k = f.key();
                let (lines, comment) = match form {
                    0 => (vec![format!("{s}{k}: null")], None),
                    1 => (vec![format!("{s}{k}: \"2026-05-08T15:00:00.123Z\"")], None),
                    2 => (vec![format!("{s}{k}: plain text value  # note-{k}")], Some(format!("# note-{k}"))),
                    3 => (vec![format!("{s}{k}: 'single'")], None),
                    4 => (vec![format!("{s}{k}: |-"), format!("{c}multi"), format!("{c}line")], None),
                    5 => (vec![format!("{s}{k}: \"multi"), format!("{c}line quoted\"")], None),
                    6 => (vec![format!("{s}{k}:")], None),
                    _ => (vec![format!("{s}{k}: ~ # note2-{k}")], Some(format!("# note2-{k}"))),
                };
                out.push(Child { lines, protected: false, comment });
            }
            Just(out).prop_shuffle()
        })
}

fn note() -> impl Strategy<Value = Note> {
    (
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec((0u8..13, "[a-z][a-zé漢 ]{0,8}[a-z]"), 0..5),
        proptest::option::of((live_children(), any::<usize>())),
        prop_oneof![Just("---"), Just("...")],
        proptest::collection::vec(
            prop_oneof![
                "[a-z#é\\- ]{0,10}",
                Just("---".to_owned()),
                Just("# Title é".to_owned()),
                Just("```".to_owned())
            ],
            0..5,
        ),
        any::<bool>(),
    )
        .prop_map(|(crlf, bom, users, live, close, body, final_nl)| {
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut n = Note {
                text: String::new(),
                crlf,
                outside: Vec::new(),
                inside: Vec::new(),
                comments: Vec::new(),
                has_live: live.is_some(),
                only_live: users.iter().all(|(k, _)| *k == 7),
            };
            if bom {
                n.text.push('\u{feff}');
            }
            n.text.push_str("---");
            n.text.push_str(nl);
            let mut segments: Vec<Option<Vec<String>>> =
                users.iter().enumerate().map(|(i, (k, w))| Some(user_entry(i, *k, w))).collect();
            let mut children = Vec::new();
            if let Some((c, at)) = live {
                segments.insert(at % (segments.len() + 1), None);
                children = c;
            }
            for seg in segments {
                match seg {
                    Some(lines) => {
                        for l in lines {
                            let l = format!("{l}{nl}");
                            n.text.push_str(&l);
                            n.outside.push(l);
                        }
                    }
                    None => {
                        let l = format!("live:{nl}");
                        n.text.push_str(&l);
                        n.inside.push(l);
                        for c in &children {
                            for l in &c.lines {
                                let l = format!("{l}{nl}");
                                n.text.push_str(&l);
                                if c.protected {
                                    n.inside.push(l);
                                }
                            }
                            n.comments.extend(c.comment.clone());
                        }
                    }
                }
            }
            n.text.push_str(close);
            if !body.is_empty() || final_nl {
                n.text.push_str(nl);
            }
            n.text.push_str(&body.join(nl));
            if final_nl && !body.is_empty() {
                n.text.push_str(nl);
            }
            n
        })
}

/// Where the `live:` block of a generated note starts and ends.
fn live_span(text: &str) -> Result<Range<usize>, TestCaseError> {
    let doc = Doc::open(text).map_err(fail)?;
    let live = doc.live_block().map_err(fail)?;
    Ok(doc.outline.lines[live.line].full.start..live.insert_at)
}

fn check_common(note: &Note, out: &str, inside_too: bool) -> Result<(), TestCaseError> {
    prop_assert_eq!(body(out), body(&note.text));
    // Blank lines go with a frontmatter that "Make passive" empties.
    let emptied = frontmatter::locate(out).is_none_or(|fm| fm.content.is_empty());
    prop_assert!(
        (emptied && note.only_live) || lines_in_order(out, &note.outside),
        "user lines changed:\n{}",
        out
    );
    if inside_too {
        prop_assert!(lines_in_order(out, &note.inside), "block lines changed:\n{}", out);
        for c in &note.comments {
            prop_assert!(out.contains(c.as_str()), "comment {} lost:\n{}", c, out);
        }
    }
    prop_assert!(endings_ok(out, note.crlf), "line endings changed:\n{:?}", out);
    Ok(())
}

fn window() -> V {
    V::Seq(vec![V::Map(vec![
        ("startTime".into(), V::Str("09:00".into())),
        ("endTime".into(), V::Str("11:30".into())),
    ])])
}

proptest! {
    #[test]
    fn runtime_fields_are_written_and_nothing_else_changes(
        note in note(),
        fields in proptest::collection::vec(
            (proptest::sample::select(RuntimeField::ALL.to_vec()), proptest::option::of(any_text())),
            0..6,
        ),
    ) {
        let before = parsed(&note.text)?;
        let asked: Vec<(RuntimeField, Option<&str>)> =
            fields.iter().map(|(f, v)| (*f, v.as_deref())).collect();
        let result = set_runtime_fields(&note.text, &asked);
        if !note.has_live {
            prop_assert_eq!(result, Err(RewriteError::NotLive));
            return Ok(());
        }
        let edits = result.map_err(fail)?;
        let span = live_span(&note.text)?;
        for e in &edits {
            prop_assert!(span.start <= e.range.start && e.range.end <= span.end, "edit {:?} outside {:?}", e, span);
        }
        let out = edited(&note.text, &edits)?;
        check_common(&note, &out, true)?;
        let after = parsed(&out)?;
        prop_assert_eq!(without(&after, "live"), without(&before, "live"));
        let (bl, al) = (live_of(&before)?, live_of(&after)?);
        let mut expected = bl.clone();
        for (f, value) in &fields {
            let want = match value {
                None => V::Null,
                // A count is written as a number when it is one.
                Some(s) if *f == RuntimeField::Failures && s.parse::<u64>().is_ok() => {
                    s.parse::<i64>().map_or(V::Bad, V::Int)
                }
                Some(s) => V::Str(s.clone()),
            };
            match expected.iter_mut().find(|(k, _)| k == f.key()) {
                Some(slot) => slot.1 = want,
                None => expected.push((f.key().to_owned(), want)),
            }
        }
        let sorted = |mut m: Map| { m.sort_by(|a, b| a.0.cmp(&b.0)); m };
        prop_assert_eq!(sorted(al), sorted(expected));
    }

    #[test]
    fn set_active_sets_only_the_flag(note in note(), active in any::<bool>()) {
        let before = parsed(&note.text)?;
        let result = set_active(&note.text, active);
        if !note.has_live {
            prop_assert_eq!(result, Err(RewriteError::NotLive));
            return Ok(());
        }
        let edits = result.map_err(fail)?;
        let span = live_span(&note.text)?;
        for e in &edits {
            prop_assert!(span.start <= e.range.start && e.range.end <= span.end, "edit {:?} outside {:?}", e, span);
        }
        let out = edited(&note.text, &edits)?;
        check_common(&note, &out, true)?;
        let after = parsed(&out)?;
        prop_assert_eq!(without(&after, "live"), without(&before, "live"));
        let (bl, al) = (live_of(&before)?, live_of(&after)?);
        prop_assert_eq!(get(&al, "active"), Some(&V::Bool(active)));
        prop_assert_eq!(without(&al, "active"), without(&bl, "active"));
    }

    #[test]
    fn make_passive_removes_only_the_block(note in note()) {
        let before = parsed(&note.text)?;
        let result = make_passive(&note.text);
        if !note.has_live {
            prop_assert_eq!(result, Err(RewriteError::NotLive));
            return Ok(());
        }
        let out = edited(&note.text, &result.map_err(fail)?)?;
        check_common(&note, &out, false)?;
        let after = parsed(&out)?;
        prop_assert_eq!(after, without(&before, "live"));
        let bom = &note.text[..frontmatter::bom_len(&note.text)];
        let plain = format!("{bom}{}", body(&note.text));
        if note.only_live && frontmatter::locate(&plain).is_none() {
            prop_assert_eq!(out, plain);
        }
    }

    #[test]
    fn make_live_adds_a_block_that_make_passive_takes_back(
        note in note(),
        objective in proptest::option::of(any_text()),
    ) {
        let before = parsed(&note.text)?;
        let result = make_live(&note.text, objective.as_deref());
        if note.has_live {
            prop_assert_eq!(result, Err(RewriteError::AlreadyLive));
            return Ok(());
        }
        let out = edited(&note.text, &result.map_err(fail)?)?;
        check_common(&note, &out, false)?;
        let after = parsed(&out)?;
        prop_assert_eq!(without(&after, "live"), before);
        let body_start = frontmatter::locate(&note.text).map_or(0, |f| f.body_start());
        let want = match &objective {
            Some(o) if !o.trim().is_empty() => o.clone(),
            _ => default_objective(frontmatter::title(&note.text, body_start)),
        };
        prop_assert_eq!(live_of(&after)?, vec![("objective".to_owned(), V::Str(want))]);
        let back = edited(&out, &make_passive(&out).map_err(fail)?)?;
        let bom = &note.text[..frontmatter::bom_len(&note.text)];
        let plain = format!("{bom}{}", body(&note.text));
        if note.only_live && frontmatter::locate(&plain).is_none() {
            prop_assert_eq!(back, plain);
        } else if note.only_live {
            prop_assert_eq!(parsed(&back)?, Vec::new());
            prop_assert_eq!(body(&back), body(&note.text));
        } else {
            prop_assert_eq!(back, note.text.clone());
        }
    }

    #[test]
    fn make_live_with_changes_only_the_values_given(
        note in note(),
        objective in any_text(),
        cron in proptest::option::of(prop_oneof![Just(String::new()), Just(" ".to_owned()), any_text()]),
        windows in proptest::option::of(proptest::collection::vec(("[0-2][0-9]:[0-5][0-9]", "[0-2][0-9]:[0-5][0-9]"), 0..3)),
        event in proptest::option::of(prop_oneof![Just(String::new()), any_text()]),
    ) {
        let before = parsed(&note.text)?;
        let t = TriggerEdits { cron_expr: cron.clone(), windows: windows.clone(), event_match_criteria: event.clone() };
        let Ok(edits) = make_live_with(&note.text, &objective, &t) else {
            // Refused only where the block cannot be edited line-wise (flow-style triggers).
            prop_assert!(note.has_live && note.text.contains("triggers: {"), "{:?}", make_live_with(&note.text, &objective, &t));
            return Ok(());
        };
        let out = edited(&note.text, &edits)?;
        check_common(&note, &out, false)?;
        let after = parsed(&out)?;
        prop_assert_eq!(without(&after, "live"), without(&before, "live"));
        let (bl, al) = (if note.has_live { live_of(&before)? } else { Vec::new() }, live_of(&after)?);
        let others = |m: &Map| -> Map { without(&without(m, "objective"), "triggers") };
        prop_assert_eq!(others(&al), others(&bl));
        let blank = |s: &str| s.trim().is_empty();
        match get(&al, "objective") {
            Some(V::Str(o)) if !blank(&objective) => prop_assert_eq!(o, &objective),
            got => {
                if note.has_live {
                    prop_assert_eq!(got, get(&bl, "objective"));
                }
            }
        }
        let tr = |m: &Map| match get(m, "triggers") { Some(V::Map(t)) => t.clone(), _ => Vec::new() };
        let (bt, at) = (tr(&bl), tr(&al));
        let expect = |key: &str, given: Option<V>| -> Option<V> {
            match given {
                None => if note.has_live { get(&bt, key).cloned() } else { None },
                Some(v) => Some(v),
            }
        };
        let text_value = |v: &Option<String>| v.as_ref().map(|s| if blank(s) { V::Null } else { V::Str(s.clone()) });
        let windows_value = windows.as_ref().map(|w| if w.is_empty() { V::Null } else {
            V::Seq(w.iter().map(|(a, b)| V::Map(vec![("startTime".into(), V::Str(a.clone())), ("endTime".into(), V::Str(b.clone()))])).collect())
        });
        for (key, given) in [("cronExpr", text_value(&cron)), ("windows", windows_value), ("eventMatchCriteria", text_value(&event))] {
            let want = expect(key, given).filter(|v| *v != V::Null);
            prop_assert_eq!(get(&at, key), want.as_ref(), "{}:\n{}", key, out);
        }
    }

    #[test]
    fn make_live_without_frontmatter_round_trips(
        bom in any::<bool>(),
        crlf in any::<bool>(),
        lines in proptest::collection::vec(
            prop_oneof!["[a-z#é\\- ]{0,10}", Just("---".to_owned()), Just("# T ü".to_owned())],
            0..5,
        ),
        objective in proptest::option::of(any_text()),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let text = format!("{}{}", if bom { "\u{feff}" } else { "" }, lines.join(nl));
        // A first line `---` would open a frontmatter; keep that case out.
        let text = if frontmatter::locate(&text).is_some() { format!("x{text}") } else { text };
        let out = edited(&text, &make_live(&text, objective.as_deref()).map_err(fail)?)?;
        prop_assert!(endings_ok(&out, crlf && lines.len() > 1));
        prop_assert_eq!(body(&out), &text[frontmatter::bom_len(&text)..]);
        let live = live_of(&parsed(&out)?)?;
        prop_assert!(matches!(get(&live, "objective"), Some(V::Str(s)) if !s.trim().is_empty()));
        let back = edited(&out, &make_passive(&out).map_err(fail)?)?;
        prop_assert_eq!(back, text);
    }

    #[test]
    fn convert_moves_the_track_into_the_frontmatter(
        crlf in any::<bool>(),
        user_fm in proptest::option::of("[a-z][a-z ]{0,6}[a-z]"),
        id in proptest::option::of("[a-z][a-z-]{0,8}"),
        instruction in proptest::option::of(any_text()),
        schedule in 0u8..4,
        event in proptest::option::of("[A-Za-z][A-Za-z ]{0,10}[a-z]"),
        paused in any::<bool>(),
        last_run in proptest::option::of("2026-0[1-9]-1[0-9]T10:00:00Z"),
        before_lines in proptest::collection::vec("[a-z ]{0,8}", 0..3),
        kept in "[a-z]{1,8}",
    ) {
        // An empty fence is refused; something must be there to convert.
        prop_assume!(
            id.is_some() || instruction.is_some() || schedule > 0 || event.is_some() || paused || last_run.is_some()
        );
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = String::new();
        if let Some(t) = &user_fm {
            text.push_str(&format!("---{nl}title: {t}  # mine{nl}---{nl}"));
        }
        for l in &before_lines {
            text.push_str(&format!("{l}{nl}"));
        }
        let fence_start = text.len();
        text.push_str(&format!("```track{nl}"));
        if let Some(id) = &id {
            text.push_str(&format!("trackId: {id}{nl}"));
        }
        if let Some(i) = &instruction {
            text.push_str(&format!("instruction: {}{nl}", yaml_string(i)));
        }
        if paused {
            text.push_str(&format!("active: false{nl}"));
        }
        match schedule {
            1 => text.push_str(&format!("schedule:{nl}  type: cron{nl}  expression: \"0 9 * * *\"{nl}")),
            2 => text.push_str(&format!(
                "schedule: {{type: window, cron: \"0 * * * *\", startTime: \"09:00\", endTime: \"11:30\"}}{nl}"
            )),
            3 => text.push_str(&format!("schedule: {{type: once, runAt: \"2026-04-14T09:00:00\"}}{nl}")),
            _ => {}
        }
        if let Some(e) = &event {
            text.push_str(&format!("eventMatchCriteria: {e}{nl}"));
        }
        if let Some(t) = &last_run {
            text.push_str(&format!("lastRunAt: {t}{nl}"));
        }
        text.push_str(&format!("```{nl}"));
        let marker = id.as_deref().unwrap_or("none");
        text.push_str(&format!(
            "<!--track-target:{marker}-->{nl}{kept}{nl}<!--/track-target:{marker}-->{nl}tail{nl}"
        ));

        let body_start = frontmatter::locate(&text).map_or(0, |f| f.body_start());
        let fences = frontmatter::track_fences(&text, body_start);
        prop_assert_eq!(fences.len(), 1);
        prop_assert_eq!(fences[0].range.start, fence_start);
        let out = edited(&text, &convert_track_fence(&text, &fences[0]).map_err(fail)?)?;
        prop_assert!(endings_ok(&out, crlf), "line endings changed:\n{:?}", out);
        prop_assert!(!out.contains("```track"));
        prop_assert_eq!(out.contains("track-target:"), id.is_none());
        let after_fence = format!("{kept}{nl}");
        prop_assert!(body(&out).lines().any(|l| l == kept) && body(&out).contains(&after_fence));
        let tail = format!("tail{nl}");
        prop_assert!(body(&out).ends_with(&tail));
        let top = parsed(&out)?;
        if let Some(t) = &user_fm {
            prop_assert_eq!(get(&top, "title"), Some(&V::Str(t.clone())));
        }
        let live = live_of(&top)?;
        let want = match &instruction {
            Some(i) if !i.trim().is_empty() => i.clone(),
            _ => default_objective(None),
        };
        prop_assert_eq!(get(&live, "objective"), Some(&V::Str(want)));
        prop_assert_eq!(get(&live, "active"), paused.then_some(&V::Bool(false)));
        let last_run = last_run.map(V::Str);
        prop_assert_eq!(get(&live, "lastRunAt"), last_run.as_ref());
        let triggers = match get(&live, "triggers") {
            Some(V::Map(t)) => t.clone(),
            None => Vec::new(),
            other => return Err(fail(format!("triggers is {other:?}"))),
        };
        let cron = (schedule == 1).then(|| V::Str("0 9 * * *".into()));
        prop_assert_eq!(get(&triggers, "cronExpr"), cron.as_ref());
        let windows = (schedule == 2).then(window);
        prop_assert_eq!(get(&triggers, "windows"), windows.as_ref());
        let event = event.map(V::Str);
        prop_assert_eq!(get(&triggers, "eventMatchCriteria"), event.as_ref());
    }

    #[test]
    fn arbitrary_text_never_panics(
        text in prop_oneof![
            any::<String>(),
            proptest::collection::vec(
                proptest::sample::select(vec![
                    "---\n", "---\r\n", "...\n", "live:\n", "live: {a: 1}\n", "  objective: x\n",
                    "  objective: |\n", "    text\n", "  active: true # c\n", "  lastRunAt: \"x\n",
                    "  - a\n", "- b\n", "\n", "\r\n", "# c\n", "  # c\n", "\u{feff}", "```track\n",
                    "```\n", "trackId: t\n", "instruction: do\n", "<!--track-target:t-->\n",
                    "schedule: {type: window}\n", "é", "\t", ":", "'", "\"", "x", "  triggers:\n",
                    "    cronExpr: 1\n", "  lastRunError: |+\n", "title: a\n",
                ]),
                0..30,
            )
            .prop_map(|parts| parts.concat()),
        ],
        at in 0usize..300,
        len in 0usize..12,
        flag in any::<bool>(),
        value in proptest::option::of(any_text()),
    ) {
        let ok = |r: Result<Vec<TextEdit>, RewriteError>| -> Result<(), TestCaseError> {
            if let Ok(edits) = r {
                edited(&text, &edits)?;
            }
            Ok(())
        };
        let fields = [(RuntimeField::LastRunAt, value.as_deref()), (RuntimeField::LastRunError, None)];
        ok(set_runtime_fields(&text, &fields))?;
        ok(make_live(&text, value.as_deref()))?;
        ok(set_active(&text, flag))?;
        ok(make_passive(&text))?;
        ok(replace_value(&text, at, "x"))?;
        ok(remove_entry(&text, at))?;
        ok(rename_key(&text, at..at + len, "k"))?;
        let body_start = frontmatter::locate(&text).map_or(0, |f| f.body_start());
        for fence in frontmatter::track_fences(&text, body_start) {
            ok(convert_track_fence(&text, &fence))?;
        }
        let junk = TrackFence { range: at..at + len, open_line: at..at, inner: at..at + len / 2 };
        ok(convert_track_fence(&text, &junk))?;
        // Every key line can be renamed, replaced and removed without a panic.
        if let Some(fm) = frontmatter::locate(&text) {
            let outline = Outline::parse(&text, fm.content);
            for i in 0..outline.lines.len() {
                if let Some(k) = outline.key(i) {
                    ok(rename_key(&text, k.key.clone(), "renamed"))?;
                    ok(replace_value(&text, k.key.start, "1"))?;
                    ok(remove_entry(&text, k.key.start))?;
                }
            }
        }
    }
}
