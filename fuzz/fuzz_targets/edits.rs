//! Fuzz the byte-minimal frontmatter rewrites (server/src/note/rewrite.rs) on arbitrary notes.
//!
//! Input: byte 0 picks the operation, byte 1 its flags, the rest (UTF-8) is `ARG \0 NOTE`
//! (no NUL: the whole rest is the note and ARG is empty). In ARG, U+001F separates runtime
//! values, a value that is exactly U+0002 means `None`, and with flag 0x40 U+0001 stands for
//! a NUL. Seeds in fuzz/seeds/edits/ follow this layout.
//!
//! Whenever an operation returns `Ok`:
//! - its edits apply, touch only the frontmatter (or insert one / remove it whole), are
//!   line-wise (a new or removed line is whole) and use the note's line ending;
//! - when the frontmatter's YAML was valid before (and defines no anchors, which a rewrite of
//!   the anchored value would orphan), it is valid after, the analysed note agrees with the
//!   intended values, and every other key reads exactly as before.
#![no_main]

mod common;

use common::{V, at_line_start, tree};
use libfuzzer_sys::fuzz_target;
use livenote::note::frontmatter::{self, Frontmatter};
use livenote::note::outline::Outline;
use livenote::note::rewrite::{self, RuntimeField};
use livenote::note::yaml::{self, Kind, Node, Scalar};
use livenote::note::{self, Options};
use livenote::text::{TextEdit, edit};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (op, flags) = (data[0], data[1]);
    let Ok(rest) = std::str::from_utf8(&data[2..]) else { return };
    let (arg, text) = rest.split_once('\0').unwrap_or(("", rest));
    let arg = if flags & 0x40 != 0 { arg.replace('\u{1}', "\0") } else { arg.to_owned() };
    check(op % 10, flags, &arg, text);
});

fn analyze(text: &str) -> note::Analysis {
    note::analyze(text, &Options { providers: None, mcp: None, skills: None, scan_body: false, max_backoff: None })
}

/// Keys of the frontmatter's outline, for the operations that take a position.
fn key_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let Some(fm) = frontmatter::locate(text) else { return Vec::new() };
    let o = Outline::parse(text, fm.content.clone());
    (0..o.lines.len()).filter_map(|i| o.key(i).map(|k| k.key.clone())).collect()
}

fn check(op: u8, flags: u8, arg: &str, text: &str) {
    let fm = frontmatter::locate(text);
    let before = tree(text);
    // Rewrites are line-wise: replacing an anchored value orphans its aliases. Not a goal.
    let strict = before.is_some() && fm.as_ref().is_some_and(|f| !text[f.content.clone()].contains('&'));
    let keys = key_ranges(text);
    let pick = |n: usize| (n > 0).then(|| keys[flags as usize % n].clone());
    match op {
        0 | 1 => {
            let objective = (op == 0).then_some(arg);
            let Ok(edits) = rewrite::make_live(text, objective) else { return };
            let new = applied(text, &edits);
            let expected = match objective {
                Some(o) if !o.trim().is_empty() => o.to_owned(),
                _ => {
                    let body_start = fm.as_ref().map_or(frontmatter::bom_len(text), Frontmatter::body_start);
                    rewrite::default_objective(frontmatter::title(text, body_start))
                }
            };
            let a = analyze(&new);
            let live = a.live.as_ref().unwrap_or_else(|| panic!("make_live: no live block in {new:?}"));
            match &fm {
                None => {
                    // A new frontmatter in front of the untouched text.
                    assert_eq!(edits.len(), 1);
                    let ins = &edits[0];
                    assert!(ins.range.is_empty() && ins.range.start == frontmatter::bom_len(text));
                    let nfm = frontmatter::locate(&new).unwrap_or_else(|| panic!("no frontmatter in {new:?}"));
                    assert_eq!(nfm.body_start(), ins.range.start + ins.new_text.len(), "{new:?}");
                    assert_eq!(&new[nfm.body_start()..], &text[ins.range.start..]);
                    assert_eq!(live.objective.as_deref(), Some(expected.as_str()), "{new:?}");
                    let t = tree(&new).unwrap_or_else(|| panic!("make_live wrote invalid YAML: {new:?}"));
                    let V::Map(es) = &t else { panic!("root is not a mapping: {new:?}") };
                    assert_eq!(es.len(), 1);
                }
                Some(f) => {
                    frontmatter_only(text, f, &edits, &new);
                    if strict {
                        assert_eq!(live.objective.as_deref(), Some(expected.as_str()), "{new:?}");
                        assert!(live.active);
                        let mut after = tree(&new).unwrap_or_else(|| panic!("invalid YAML after: {new:?}"));
                        after.remove("live");
                        assert_eq!(norm(after), norm(before.clone().unwrap_or(V::Null)), "{new:?}");
                    }
                }
            }
            line_wise(text, &edits, fm.as_ref());
        }
        2 => {
            let Ok(edits) = rewrite::make_passive(text) else { return };
            let f = fm.unwrap_or_else(|| panic!("make_passive succeeded without frontmatter"));
            let new = applied(text, &edits);
            assert!(analyze(&new).live.is_none(), "still live: {new:?}");
            let close = f.close.clone().unwrap_or_else(|| panic!("unterminated"));
            if edits.len() == 1 && edits[0].range == (f.open.start..close.end) {
                // The whole frontmatter went: the note is its body, which opens none.
                assert_eq!(new, format!("{}{}", &text[..f.open.start], &text[close.end..]));
                assert!(frontmatter::locate(&new).is_none(), "{new:?}");
            } else {
                frontmatter_only(text, &f, &edits, &new);
                if strict {
                    let mut b = before.unwrap_or(V::Null);
                    b.remove("live");
                    let after = tree(&new).unwrap_or_else(|| panic!("invalid YAML after: {new:?}"));
                    assert_eq!(norm(after), norm(b), "{new:?}");
                }
            }
            line_wise(text, &edits, frontmatter::locate(text).as_ref());
        }
        3 => {
            let active = flags & 1 != 0;
            let Ok(edits) = rewrite::set_active(text, active) else { return };
            let new = after_frontmatter_edit(text, fm.as_ref(), &edits);
            if strict {
                let a = analyze(&new);
                let live = a.live.unwrap_or_else(|| panic!("no live block after set_active: {new:?}"));
                assert_eq!(live.active, active, "{new:?}");
                assert!(live.active_span.is_some());
                let mut after = tree(&new).unwrap_or_else(|| panic!("invalid YAML after: {new:?}"));
                assert_eq!(after.get("live").and_then(|l| l.get("active")), Some(&V::Bool(active)));
                let mut b = before.unwrap_or(V::Null);
                for t in [&mut after, &mut b] {
                    if let Some(l) = t.get_mut("live") {
                        l.remove("active");
                    }
                }
                assert_eq!(norm(after), norm(b), "{new:?}");
            }
        }
        4 => {
            let values: Vec<Option<&str>> =
                arg.split('\u{1f}').take(8).map(|v| (v != "\u{2}").then_some(v)).collect();
            let fields: Vec<(RuntimeField, Option<&str>)> = values
                .iter()
                .enumerate()
                .map(|(j, v)| (RuntimeField::ALL[(flags as usize + j) % 5], *v))
                .collect();
            let Ok(edits) = rewrite::set_runtime_fields(text, &fields) else { return };
            let new = after_frontmatter_edit(text, fm.as_ref(), &edits);
            if strict {
                let a = analyze(&new);
                let live = a.live.unwrap_or_else(|| panic!("no live block after: {new:?}"));
                let mut after = tree(&new).unwrap_or_else(|| panic!("invalid YAML after: {new:?}"));
                let mut b = before.unwrap_or(V::Null);
                for field in RuntimeField::ALL {
                    // The last value given for a field wins.
                    let Some(&(_, value)) = fields.iter().rev().find(|(f, _)| *f == field) else { continue };
                    let want = value.map_or(V::Null, |s| V::Str(s.to_owned()));
                    let got = after.get("live").and_then(|l| l.get(field.key()));
                    assert_eq!(got, Some(&want), "{} in {new:?}", field.key());
                    let value = value.map(str::to_owned);
                    match field {
                        RuntimeField::LastRunId => assert_eq!(live.last_run_id, value),
                        RuntimeField::LastRunSummary => assert_eq!(live.last_run_summary, value),
                        RuntimeField::LastRunError => {
                            assert_eq!(live.last_run_error, value.filter(|s| !s.trim().is_empty()))
                        }
                        RuntimeField::LastRunAt | RuntimeField::LastAttemptAt => {}
                        // Not among the fields this target writes (it takes the first five).
                        RuntimeField::Failures | RuntimeField::LastStoppedAt => {}
                    }
                    assert!(live.runtime_span(field.key()).is_some());
                    for t in [&mut after, &mut b] {
                        if let Some(l) = t.get_mut("live") {
                            l.remove(field.key());
                        }
                    }
                }
                assert_eq!(norm(after), norm(b), "{new:?}");
            }
        }
        5 | 6 => {
            let Some(key) = pick(keys.len()) else { return };
            let value = if op == 5 { rewrite::yaml_string(arg) } else { arg.to_owned() };
            let Ok(edits) = rewrite::replace_value(text, key.start, &value) else { return };
            let new = after_frontmatter_edit(text, fm.as_ref(), &edits);
            if strict && op == 5 {
                assert_eq!(edits.len(), 1);
                let e = &edits[0];
                let at = e.range.start + (e.new_text.len() - e.new_text.trim_start().len());
                let nfm = frontmatter::locate(&new).unwrap_or_else(|| panic!("frontmatter lost"));
                let root = yaml::parse(&new, nfm.content.clone())
                    .unwrap_or_else(|err| panic!("invalid YAML after replace_value: {err:?} in {new:?}"));
                let node = root.as_ref().and_then(|r| node_at(r, at));
                assert_eq!(
                    node.map(|n| &n.kind),
                    Some(&Kind::Scalar(Scalar::Str(arg.to_owned()))),
                    "value at {at} in {new:?}"
                );
            }
        }
        7 => {
            let Some(key) = pick(keys.len()) else { return };
            let Ok(edits) = rewrite::rename_key(text, key.clone(), arg) else { return };
            let new = after_frontmatter_edit(text, fm.as_ref(), &edits);
            if strict {
                let nfm = frontmatter::locate(&new).unwrap_or_else(|| panic!("frontmatter lost"));
                match yaml::parse(&new, nfm.content.clone()) {
                    Ok(root) => {
                        let found = root.as_ref().is_some_and(|r| key_at(r, key.start, arg));
                        assert!(found, "no key {arg:?} at {} in {new:?}", key.start);
                    }
                    // Renaming onto a sibling's name.
                    Err(e) if e.kind == yaml::YamlErrorKind::DuplicateKey => {}
                    Err(e) => panic!("invalid YAML after rename_key: {e:?} in {new:?}"),
                }
            }
        }
        8 => {
            let Some(key) = pick(keys.len()) else { return };
            let Ok(edits) = rewrite::remove_entry(text, key.start) else { return };
            let new = after_frontmatter_edit(text, fm.as_ref(), &edits);
            if strict {
                assert!(tree(&new).is_some(), "invalid YAML after remove_entry: {new:?}");
            }
        }
        _ => {
            let body_start = fm.as_ref().map_or(frontmatter::bom_len(text), Frontmatter::body_start);
            let fences = frontmatter::track_fences(text, body_start);
            if fences.is_empty() {
                return;
            }
            let fence = &fences[flags as usize % fences.len()];
            let Ok(edits) = rewrite::convert_track_fence(text, fence) else { return };
            let new = applied(text, &edits);
            line_wise(text, &edits, fm.as_ref());
            let a = analyze(&new);
            let live = a.live.unwrap_or_else(|| panic!("no live block after conversion: {new:?}"));
            let nfm = frontmatter::locate(&new).unwrap_or_else(|| panic!("no frontmatter: {new:?}"));
            let nfences = frontmatter::track_fences(&new, nfm.body_start());
            assert_eq!(nfences.len() + 1, fences.len(), "{new:?}");
            if strict || fm.is_none() {
                assert!(tree(&new).is_some(), "invalid YAML after conversion: {new:?}");
                let instruction = match yaml::parse(text, fence.inner.clone()) {
                    Ok(Some(root)) => root.get("instruction").and_then(|e| e.value.as_str().map(str::to_owned)),
                    _ => None,
                };
                if let Some(i) = instruction.filter(|i| !i.trim().is_empty()) {
                    assert_eq!(live.objective.as_deref(), Some(i.as_str()), "{new:?}");
                }
            }
        }
    }
}

fn applied(text: &str, edits: &[TextEdit]) -> String {
    edit::apply(text, edits).unwrap_or_else(|e| panic!("edits {edits:?} do not apply: {e}"))
}

/// Apply edits that must stay inside the frontmatter's YAML and be line-wise.
fn after_frontmatter_edit(text: &str, fm: Option<&Frontmatter>, edits: &[TextEdit]) -> String {
    let f = fm.unwrap_or_else(|| panic!("an edit succeeded without frontmatter"));
    let new = applied(text, edits);
    frontmatter_only(text, f, edits, &new);
    line_wise(text, edits, Some(f));
    new
}

/// Every edit lies within the YAML (an insertion may sit right before the closing line), so
/// the delimiters and the body are byte-identical.
fn frontmatter_only(text: &str, f: &Frontmatter, edits: &[TextEdit], new: &str) {
    for e in edits {
        assert!(
            e.range.start >= f.content.start && e.range.end <= f.content.end,
            "edit {e:?} outside the frontmatter {:?}",
            f.content
        );
    }
    assert_eq!(&new[..f.content.start], &text[..f.content.start]);
    assert!(new.ends_with(&text[f.content.end..]), "closing line or body changed: {new:?}");
    let nfm = frontmatter::locate(new).unwrap_or_else(|| panic!("frontmatter lost: {new:?}"));
    assert_eq!(
        nfm.body_start() + text.len(),
        f.body_start() + new.len(),
        "the frontmatter no longer closes where it did: {new:?}"
    );
}

/// Lines come and go whole, in the note's line ending (`text::Eol::of`); a replacement stays
/// on its line.
fn line_wise(text: &str, edits: &[TextEdit], fm: Option<&Frontmatter>) {
    let nl = livenote::text::Eol::of(text).as_str();
    for e in edits {
        let removed = &text[e.range.clone()];
        let ends_line = |at: usize| at == text.len() || at_line_start(text, at);
        if e.range.is_empty() {
            if e.new_text.contains('\n') {
                assert!(at_line_start(text, e.range.start), "insertion {e:?} not at a line start");
                assert!(e.new_text.ends_with('\n'), "insertion {e:?} does not end its line");
            }
        } else if e.new_text.is_empty() {
            if removed.contains('\n') {
                assert!(at_line_start(text, e.range.start) && ends_line(e.range.end), "deletion {e:?} cuts a line");
            }
        } else {
            assert!(!e.new_text.contains(['\n', '\r']), "replacement {e:?} adds a line");
        }
        if fm.is_some() || e.range.is_empty() {
            let crlf = e.new_text.matches("\r\n").count();
            let lf = e.new_text.matches('\n').count();
            if nl == "\r\n" {
                assert_eq!(crlf, lf, "edit {e:?} writes LF into a CRLF note");
            } else {
                assert_eq!(crlf, 0, "edit {e:?} writes CRLF into an LF note");
            }
        }
    }
}

/// An empty mapping reads like an empty value; `live:` alone is null, `live:` with keys that
/// were all removed is too.
fn norm(v: V) -> V {
    match v {
        V::Map(es) if es.is_empty() => V::Null,
        V::Map(es) => V::Map(es.into_iter().map(|(k, v)| (k, norm(v))).collect()),
        other => other,
    }
}

/// The node whose text starts at byte `at`, searching values (not keys).
fn node_at(n: &Node, at: usize) -> Option<&Node> {
    match &n.kind {
        Kind::Map(es) => es.iter().find_map(|e| {
            if e.value.span.start == at && !matches!(e.value.kind, Kind::Map(_) | Kind::Seq(_)) {
                Some(&e.value)
            } else {
                node_at(&e.value, at)
            }
        }),
        Kind::Seq(items) => items.iter().find_map(|i| node_at(i, at)),
        _ => (n.span.start == at).then_some(n),
    }
}

/// Whether some mapping has a key `name` whose text starts at `at`.
fn key_at(n: &Node, at: usize, name: &str) -> bool {
    match &n.kind {
        Kind::Map(es) => es.iter().any(|e| (e.key_span.start == at && e.key == name) || key_at(&e.value, at, name)),
        Kind::Seq(items) => items.iter().any(|i| key_at(i, at, name)),
        _ => false,
    }
}
