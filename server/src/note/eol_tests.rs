//! Every writer of a note against one simple model: a CRLF note goes through any sequence of
//! rewrites, runs (whole-region replacement and patches) and conversions exactly as its LF
//! twin does, only with `\r\n` where the twin has `\n`, and never gains a bare `\n`.

use proptest::prelude::*;

use super::body::{Patch, replace_region_edits};
use super::frontmatter;
use super::rewrite::{self, RuntimeField, TriggerEdits};
use crate::text::edit::apply;
use crate::text::{Eol, TextEdit};

#[derive(Debug, Clone)]
enum Op {
    Runtime(Vec<(RuntimeField, Option<String>)>),
    MakeLive(Option<String>),
    MakeLiveWith(String, Option<String>, Option<Vec<(String, String)>>),
    SetActive(bool),
    MakePassive,
    /// A run's output written over the agent region (also what undo and restore write).
    Region(String),
    /// A model step's output, as a patch applied to the same text.
    Patch(String),
    MoveCron,
    ConvertTrack,
}

/// Text a provider, a model or a user might hand over: lines ending in `\n` or `\r\n` alike.
fn produced() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (
            prop_oneof![
                Just(String::new()),
                Just("# T".to_owned()),
                Just("## Log".to_owned()),
                Just("---".to_owned()),
                "[a-zé ]{1,8}",
                "- [0-9]{1,2}:00 PM",
            ],
            prop_oneof![Just("\n"), Just("\r\n")],
        ),
        0..6,
    )
    .prop_map(|lines| lines.into_iter().map(|(l, nl)| format!("{l}{nl}")).collect::<String>())
    .prop_flat_map(|s| {
        let n = s.len();
        (Just(s), 0..=n)
    })
    // Sometimes without a final line ending.
    .prop_map(|(s, cut)| if s.is_char_boundary(cut) && cut % 3 == 0 { s.trim_end().to_owned() } else { s })
}

fn op() -> impl Strategy<Value = Op> {
    let field = proptest::sample::select(RuntimeField::ALL.to_vec());
    let value =
        proptest::option::of(prop_oneof!["[a-z ]{0,6}", "[a-z]{1,4}\n[a-z]{1,4}", Just("3".to_owned())]);
    prop_oneof![
        proptest::collection::vec((field, value), 1..4).prop_map(Op::Runtime),
        proptest::option::of(prop_oneof!["[a-z ]{1,8}", "[a-z]{1,4}\n[a-z]{1,4}\n"]).prop_map(Op::MakeLive),
        (
            prop_oneof![Just(String::new()), "[a-z]{1,4}\n[a-z]{1,4}"],
            proptest::option::of(Just("0 9 * * *".to_owned())),
            proptest::option::of(Just(vec![("09:00".to_owned(), "12:00".to_owned())])),
        )
            .prop_map(|(o, c, w)| Op::MakeLiveWith(o, c, w)),
        any::<bool>().prop_map(Op::SetActive),
        Just(Op::MakePassive),
        produced().prop_map(Op::Region),
        produced().prop_map(Op::Patch),
        Just(Op::MoveCron),
        Just(Op::ConvertTrack),
    ]
}

/// An LF note: maybe a BOM, maybe a frontmatter (maybe live, maybe with a trigger written
/// under `live:` directly), maybe an H1, a body, maybe a legacy track fence.
fn lf_note() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        0u8..4,
        any::<bool>(),
        proptest::collection::vec("[a-z ]{0,8}", 0..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(bom, fm, h1, body, track, final_nl)| {
            let mut t = String::from(if bom { "\u{feff}" } else { "" });
            match fm {
                1 => t.push_str("---\ntitle: x\n---\n"),
                2 => t.push_str("---\nlive:\n  objective: keep it\n  cron: \"0 9 * * *\" # daily\n---\n"),
                3 => t.push_str("---\n# mine\nlive:\n  objective: |\n    two\n    lines\n  active: true\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n---\n"),
                _ => {}
            }
            if h1 {
                t.push_str("# Title\n\n");
            }
            if track {
                t.push_str("```track\ntrackId: t\ninstruction: |\n  Morning brief.\n  Short.\nschedule: {type: cron, expression: \"0 7 * * *\"}\n```\n<!-- track-target:t -->\n");
            }
            for l in body {
                t.push_str(&l);
                t.push('\n');
            }
            if !final_nl && t.ends_with('\n') {
                t.pop();
            }
            t
        })
}

/// The edits `op` makes to `text`, as its error's text when it refuses.
fn edits(text: &str, op: &Op) -> Result<Vec<TextEdit>, String> {
    let e = |r: Result<Vec<TextEdit>, rewrite::RewriteError>| r.map_err(|e| e.to_string());
    match op {
        Op::Runtime(fields) => {
            let f: Vec<(RuntimeField, Option<&str>)> =
                fields.iter().map(|(f, v)| (*f, v.as_deref())).collect();
            e(rewrite::set_runtime_fields(text, &f))
        }
        Op::MakeLive(o) => e(rewrite::make_live(text, o.as_deref())),
        Op::MakeLiveWith(o, cron, windows) => {
            let t = TriggerEdits {
                cron_expr: cron.clone(),
                windows: windows.clone(),
                event_match_criteria: None,
            };
            e(rewrite::make_live_with(text, o, &t))
        }
        Op::SetActive(a) => e(rewrite::set_active(text, *a)),
        Op::MakePassive => e(rewrite::make_passive(text)),
        Op::Region(content) => Ok(replace_region_edits(text, content)),
        Op::Patch(content) => Ok(Patch::compute(text, content).apply_to(text).edits),
        Op::MoveCron => match text.find("  cron:") {
            Some(at) => e(rewrite::move_into_triggers(text, at + 2, "cronExpr")),
            None => Ok(Vec::new()),
        },
        Op::ConvertTrack => {
            let start = frontmatter::locate(text).map_or(frontmatter::bom_len(text), |f| f.body_start());
            match frontmatter::track_fences(text, start).first() {
                Some(fence) => e(rewrite::convert_track_fence(text, fence)),
                None => Ok(Vec::new()),
            }
        }
    }
}

fn bare_lf(text: &str) -> Option<usize> {
    text.match_indices('\n').map(|(i, _)| i).find(|&i| !text[..i].ends_with('\r'))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_crlf_note_goes_through_every_writer_as_its_lf_twin(
        lf in lf_note(),
        ops in proptest::collection::vec(op(), 1..6),
    ) {
        let mut lf = lf;
        let mut crlf = Eol::CrLf.convert(&lf).into_owned();
        for op in &ops {
            // A note without a line ending is no CRLF note (it takes `\n`, as the rule says).
            if !crlf.contains('\n') {
                break;
            }
            let (a, b) = (edits(&lf, op), edits(&crlf, op));
            match (a, b) {
                (Ok(a), Ok(b)) => {
                    let next_lf = apply(&lf, &a).map_err(|e| TestCaseError::fail(format!("{e}")))?;
                    let next_crlf = apply(&crlf, &b).map_err(|e| TestCaseError::fail(format!("{e}")))?;
                    prop_assert_eq!(bare_lf(&next_crlf), None, "{:?} on {:?} gave {:?}", op, crlf, next_crlf);
                    prop_assert_eq!(
                        Eol::Lf.convert(&next_crlf).into_owned(),
                        next_lf.clone(),
                        "{:?} on {:?}",
                        op,
                        crlf
                    );
                    lf = next_lf;
                    crlf = next_crlf;
                }
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                (a, b) => prop_assert!(false, "{:?}: LF {:?} but CRLF {:?} on {:?}", op, a, b, crlf),
            }
        }
    }
}

/// `text` with the line endings at the given indices (of its `\r\n`s, modulo their count) made
/// `\n`, as long as fewer than half of them would be.
fn with_some_lf(text: &str, picks: &[usize]) -> String {
    let ends: Vec<usize> = text.match_indices("\r\n").map(|(i, _)| i).collect();
    if ends.is_empty() {
        return text.to_owned();
    }
    let mut flip: Vec<usize> = picks.iter().map(|p| ends[p % ends.len()]).collect();
    flip.sort_unstable();
    flip.dedup();
    flip.truncate((ends.len() - 1) / 2);
    let mut out = text.to_owned();
    for at in flip.into_iter().rev() {
        out.remove(at);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A note CRLF but for a few lines (a paste, a Unix tool): no writer adds a bare `\n`; a
    /// run may only take some away (the region comes out in the note's ending).
    #[test]
    fn a_mostly_crlf_note_gains_no_bare_lf(
        lf in lf_note(),
        picks in proptest::collection::vec(any::<usize>(), 0..4),
        ops in proptest::collection::vec(op(), 1..6),
    ) {
        let mut text = with_some_lf(&Eol::CrLf.convert(&lf), &picks);
        for op in &ops {
            if Eol::of(&text) != Eol::CrLf {
                break;
            }
            let Ok(e) = edits(&text, op) else { continue };
            let next = apply(&text, &e).map_err(|e| TestCaseError::fail(format!("{e}")))?;
            let bare = |t: &str| t.match_indices('\n').filter(|(i, _)| !t[..*i].ends_with('\r')).count();
            prop_assert!(bare(&next) <= bare(&text), "{:?} on {:?} gave {:?}", op, text, next);
            text = next;
        }
    }
}
