//! Fuzz what becomes of a `command` provider's stdout: the output parser
//! (server/src/providers/command.rs `parse_output`: plain text, or JSON `{"body", "summary"}`)
//! and the body rewrite it feeds (server/src/note/body.rs: `Patch::compute`/`apply_to`,
//! `replace_region_edits`), together with the runtime fields written in the same edit, as the
//! run engine does (server/src/runs/mod.rs).
//!
//! Input: byte 0 is flags, the rest is `NOTE \0 STDOUT`, and with flag 1 `NOTE \0 STDOUT \0
//! CURRENT`, where CURRENT is the note as the user edited it while the command ran. NOTE and
//! CURRENT must be UTF-8; STDOUT is any bytes. Seeds in fuzz/seeds/command_output/.
//!
//! Checked: the parser never panics and accepts exactly the non-blank UTF-8 outputs that do not
//! start with `{`, and of those that do, exactly the JSON objects with a string `body` (and a
//! string or null `summary`, if any); the edits
//! apply; with the note unchanged meanwhile nothing conflicts and the patch equals
//! `replace_region_edits`; the frontmatter is byte-identical (and none appears where there was
//! none); the H1 line and everything above the agent region stay; writing the region back is
//! a no-op (line endings all alike); with the runtime fields the edits still apply; on an
//! edited CURRENT the edits apply and leave its frontmatter alone (none appears either).
#![no_main]

use libfuzzer_sys::fuzz_target;
use livenote::note::body::{Patch, agent_region, replace_region_edits};
use livenote::note::frontmatter::{self, Frontmatter};
use livenote::note::rewrite::{self, RuntimeField};
use livenote::providers::command::parse_output;
use livenote::text::edit;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else { return };
    let Some(i) = rest.iter().position(|&b| b == 0) else { return };
    let Ok(note) = std::str::from_utf8(&rest[..i]) else { return };
    let mut stdout = &rest[i + 1..];
    let mut current = None;
    if flags & 1 != 0
        && let Some(j) = stdout.iter().position(|&b| b == 0)
    {
        let Ok(c) = std::str::from_utf8(&stdout[j + 1..]) else { return };
        current = Some(c);
        stdout = &stdout[..j];
    }
    check(note, stdout, current);
});

fn check(note: &str, stdout: &[u8], current: Option<&str>) {
    let out = parse_output(stdout.to_vec());
    let text = std::str::from_utf8(stdout);
    match (&text, &out) {
        (Err(_), Ok(_)) => panic!("non-UTF-8 output accepted"),
        (Ok(t), out) if t.trim_start().starts_with('{') => {
            // Output that starts like JSON is held to the JSON answer's shape.
            let answer = match serde_json::from_str::<serde_json::Value>(t) {
                Ok(serde_json::Value::Object(map)) => {
                    map.get("body").is_some_and(serde_json::Value::is_string)
                        && map.get("summary").is_none_or(|s| s.is_string() || s.is_null())
                }
                _ => false,
            };
            assert_eq!(out.is_ok(), answer, "output {t:?}: {out:?}");
        }
        (Ok(t), Err(e)) if !t.trim().is_empty() => panic!("output {t:?} refused: {e}"),
        (Ok(t), Ok(_)) if t.trim().is_empty() => panic!("blank output {t:?} accepted"),
        _ => {}
    }
    let Ok(out) = out else { return };
    assert!(out.body_is_below_h1);
    if let Some(s) = &out.summary {
        assert!(!s.is_empty() && s.trim() == s, "summary {s:?} not trimmed");
    }
    if let Ok(t) = text
        && !t.trim_start().starts_with('{')
    {
        // Only something that starts like a JSON object is read as one.
        assert_eq!(out.body, t, "plain output changed");
        assert_eq!(out.summary, None);
    }
    // The engine refuses output with a NUL before it gets here.
    if out.body.contains('\0') {
        return;
    }

    let fm = frontmatter::locate(note);
    let writable = fm.as_ref().is_none_or(|f| f.close.is_some());
    let region = agent_region(note);
    assert!(region.end == note.len() && region.start <= note.len());

    let patch = Patch::compute(note, &out.body);
    let r = patch.apply_to(note);
    let new = edit::apply(note, &r.edits).unwrap_or_else(|e| panic!("patch edits do not apply: {e}"));
    if writable {
        assert_eq!(r.conflicts, 0, "a patch conflicts with its own base");
    } else {
        assert!(r.edits.is_empty() && new == note, "wrote into an unterminated frontmatter");
    }
    let direct = replace_region_edits(note, &out.body);
    let direct_new = edit::apply(note, &direct).unwrap_or_else(|e| panic!("region edits do not apply: {e}"));
    assert_eq!(new, direct_new, "Patch and replace_region_edits disagree");

    // Everything above the agent region (frontmatter, text above the H1, the H1 line and its
    // line ending) is byte-identical, and the frontmatter reads the same.
    for e in &r.edits {
        assert!(e.range.start >= region.start, "edit {e:?} above the agent region {region:?}");
    }
    assert_eq!(&new[..region.start], &note[..region.start]);
    assert_eq!(shape(frontmatter::locate(&new)), shape(fm.clone()), "the frontmatter changed: {new:?}");
    if let Some(f) = &fm {
        assert_eq!(&new[..f.body_start()], &note[..f.body_start()]);
    }
    let body_start = fm.as_ref().map_or(frontmatter::bom_len(note), Frontmatter::body_start);
    if let Some(h1) = frontmatter::h1_line(note, body_start) {
        assert_eq!(new.get(h1.clone()), note.get(h1.clone()), "H1 line changed");
        assert_eq!(frontmatter::title(&new, body_start), frontmatter::title(note, body_start));
    }

    // Writing back the region's own text (Undo of a run that changed nothing) is a no-op,
    // unless some of its lines end otherwise than the note (they take its ending, like any
    // output's).
    let own = &note[region.clone()];
    if livenote::text::Eol::of(note).convert(own) == own {
        let same = replace_region_edits(note, own);
        assert!(same.is_empty(), "writing the region back edits it: {same:?}");
    }

    // The engine writes the result and the runtime fields in one edit.
    let summary = out.summary.clone().unwrap_or_else(|| "Updated.".to_owned());
    let fields = [
        (RuntimeField::LastRunAt, Some("2026-01-01T00:00:00.000Z")),
        (RuntimeField::LastRunSummary, Some(summary.as_str())),
        (RuntimeField::LastRunError, None),
    ];
    if let Ok(rt) = rewrite::set_runtime_fields(note, &fields) {
        let mut all = r.edits.clone();
        all.extend(rt);
        edit::apply(note, &all).unwrap_or_else(|e| panic!("body and runtime edits clash: {e}"));
    }

    if let Some(cur) = current {
        let r = patch.apply_to(cur);
        let cnew = edit::apply(cur, &r.edits).unwrap_or_else(|e| panic!("patch does not apply to CURRENT: {e}"));
        let cfm = frontmatter::locate(cur);
        let cbody = match &cfm {
            Some(f) if f.close.is_none() => {
                assert!(r.edits.is_empty(), "wrote into an unterminated frontmatter");
                return;
            }
            Some(f) => f.body_start(),
            None => frontmatter::bom_len(cur),
        };
        for e in &r.edits {
            assert!(e.range.start >= cbody, "edit {e:?} in CURRENT's frontmatter");
        }
        assert_eq!(shape(frontmatter::locate(&cnew)), shape(cfm), "CURRENT's frontmatter changed: {cnew:?}");
    }
}

/// Where a frontmatter is, up to its closing line's start: a closing `---` at the very end of
/// the text gains a line ending when content goes after it.
fn shape(fm: Option<Frontmatter>) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>, Option<usize>)> {
    fm.map(|f| (f.open, f.content, f.close.map(|c| c.start)))
}
