use expect_test::{Expect, expect};

use super::*;
use crate::text::edit::apply;

/// The note after the edits, checked to analyse without errors and without a track left.
fn check(text: &str, edits: Result<Vec<TextEdit>, RewriteError>, want: Expect) {
    let edits = edits.unwrap_or_else(|e| panic!("{e}"));
    let out = apply(text, &edits).unwrap_or_else(|e| panic!("{e}"));
    let a = crate::note::analyze(&out, &crate::note::Options { scan_body: true, ..Default::default() });
    assert!(!a.has_errors(), "{out}\n{:?}", a.diagnostics);
    assert!(a.live.is_some(), "{out}");
    assert!(!out.contains("```track") && !out.contains("track-target"), "{out}");
    want.assert_eq(&out.replace('\r', "␍"));
}

const TWO_FENCES: &str = "# Morning\n\n```track\ntrackId: time\ninstruction: Show the time in Chicago.\nschedule:\n  type: cron\n  expression: \"0 * * * *\"\nlastRunAt: \"2026-04-14T13:00:02Z\"\n```\n\n<!--track-target:time-->\n2:30 PM\n<!--/track-target:time-->\n\n```track\ntrackId: brief\ninstruction: |\n  Morning brief.\n  Keep it short.\nactive: false\nschedule:\n  type: window\n  startTime: \"09:00\"\n  endTime: \"12:00\"\neventMatchCriteria: Emails about Q3\nlastRunAt: \"2026-04-14T15:00:00Z\"\nlastRunSummary: brief done\n```\n\n```track\ninstruction: Weather.\nschedule:\n  type: cron\n  expression: \"@daily\"\n```\nEnd.\n";

#[test]
fn every_fence_merges_into_the_one_objective() {
    check(
        TWO_FENCES,
        convert_track_fences(TWO_FENCES),
        expect![[r#"
            ---
            live:
              objective: |
                Keep each of these current, in its own section of the note, in this order:

                1. time: Show the time in Chicago.
                2. brief: Morning brief.
                   Keep it short.
                3. Weather.
              triggers:
                cronExpr: "0 * * * *"
                windows:
                  - startTime: "09:00"
                    endTime: "12:00"
                eventMatchCriteria: "Emails about Q3"
              # from a track: its cron "@daily" was dropped; a note has one cronExpr ("0 * * * *" is kept)
              lastRunAt: "2026-04-14T15:00:00Z"
              lastRunSummary: "brief done"
            ---
            # Morning

            2:30 PM

            End.
        "#]],
    );
}

#[test]
fn every_fences_hint_offers_the_whole_conversion() {
    let a = crate::note::analyze(TWO_FENCES, &crate::note::Options { scan_body: true, ..Default::default() });
    let fixes: Vec<&Vec<TextEdit>> = a
        .diagnostics
        .iter()
        .filter(|d| d.code == crate::note::Code::LegacyTrackFence)
        .flat_map(|d| d.fixes.iter().map(|f| &f.edits))
        .collect();
    assert_eq!(fixes.len(), 3);
    let all = convert_track_fences(TWO_FENCES).unwrap_or_else(|e| panic!("{e}"));
    assert!(fixes.iter().all(|f| **f == all));
}

#[test]
fn one_fence_converts_as_before() {
    let text = "# T\n\n```track\ninstruction: Ping\n```\n";
    let fence = frontmatter::track_fences(text, 0).into_iter().next().unwrap_or_else(|| panic!("no fence"));
    assert_eq!(convert_track_fences(text), convert_track_fence(text, &fence));
}

#[test]
fn a_frontmatter_track_list_converts_with_the_fences() {
    let text = "---\r\ntitle: Daily\r\ntrack:\r\n  - trackId: time\r\n    instruction: Show the time.\r\n    schedule: {type: cron, expression: \"0 * * * *\"}\r\n  - trackId: mail\r\n    instruction: New mail.\r\n    eventMatchCriteria: Emails from Ana\r\ntags: [x]\r\n---\r\n# Daily\r\n\r\n<!--track-target:time-->\r\n9:00\r\n<!--/track-target:time-->\r\n";
    assert_eq!(track_list(text).map(|(k, n)| (&text[k], n)), Some(("track", 2)));
    check(
        text,
        convert_track_list(text),
        expect![[r#"
            ---␍
            title: Daily␍
            live:␍
              objective: |␍
                Keep each of these current, in its own section of the note, in this order:␍
            ␍
                1. time: Show the time.␍
                2. mail: New mail.␍
              triggers:␍
                cronExpr: "0 * * * *"␍
                eventMatchCriteria: "Emails from Ana"␍
            tags: [x]␍
            ---␍
            # Daily␍
            ␍
            9:00␍
        "#]],
    );
    let a = crate::note::analyze(text, &crate::note::Options::default());
    let hint = a.diagnostics.iter().find(|d| d.code == crate::note::Code::LegacyTrackList);
    let Some(hint) = hint else { panic!("{:?}", a.diagnostics) };
    assert_eq!(hint.severity, crate::note::Severity::Hint);
    assert_eq!(hint.fixes.first().map(|f| f.edits.clone()), convert_track_list(text).ok());
}

#[test]
fn a_users_own_track_key_is_left_alone() {
    for text in
        ["---\ntrack: running\n---\n", "---\ntrack: [a, b]\n---\n", "---\ntracks:\n  - trackId: x\n---\n"]
    {
        assert_eq!(track_list(text), None, "{text}");
    }
    let live = "---\nlive:\n  objective: x\ntrack:\n  - instruction: y\n---\n";
    assert!(track_list(live).is_some());
    assert_eq!(convert_track_list(live), Err(RewriteError::AlreadyLive));
}

mod merging {
    use proptest::prelude::*;

    use super::*;

    /// One track: (cron, window, event), each optional.
    type Spec = (Option<&'static str>, Option<(&'static str, &'static str)>, Option<&'static str>);

    fn spec() -> impl Strategy<Value = Spec> {
        (
            proptest::option::of(prop_oneof![Just("@daily"), Just("0 * * * *")]),
            proptest::option::of(prop_oneof![Just(("09:00", "12:00")), Just(("13:00", "14:00"))]),
            proptest::option::of(prop_oneof![Just("mail"), Just("calendar")]),
        )
    }

    proptest! {
        /// Against a simple model of the merge: the first cron, every distinct window and
        /// event in order of appearance, every track named in the objective, no fence left.
        #[test]
        fn fences_merge_like_the_model(specs in proptest::collection::vec(spec(), 1..5)) {
            let mut text = String::from("# N\n\n");
            for (i, (cron, window, event)) in specs.iter().enumerate() {
                text.push_str(&format!("```track\ntrackId: t{i}\ninstruction: Part {i}.\n"));
                match (cron, window) {
                    (Some(c), _) => text.push_str(&format!("schedule:\n  type: cron\n  expression: \"{c}\"\n")),
                    (None, Some((s, e))) => text.push_str(&format!("schedule:\n  type: window\n  startTime: \"{s}\"\n  endTime: \"{e}\"\n")),
                    (None, None) => {}
                }
                if let Some(e) = event {
                    text.push_str(&format!("eventMatchCriteria: {e}\n"));
                }
                text.push_str("```\n\n");
            }
            let edits = convert_track_fences(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let out = apply(&text, &edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(!out.contains("```track"), "{}", out);
            let a = crate::note::analyze(&out, &crate::note::Options::default());
            let live = a.live.ok_or_else(|| TestCaseError::fail("not live"))?;
            let want_cron = specs.iter().find_map(|(c, _, _)| *c);
            let cron = live.cron_expr.map(|c| c.value);
            prop_assert_eq!(cron.as_deref(), want_cron, "{}", out);
            let mut want_windows: Vec<(String, String)> = Vec::new();
            for (c, w, _) in &specs {
                if let (None, Some((s, e))) = (c, w) {
                    let w = ((*s).to_owned(), (*e).to_owned());
                    if !want_windows.contains(&w) {
                        want_windows.push(w);
                    }
                }
            }
            let windows: Vec<(String, String)> =
                live.windows.iter().filter_map(|w| Some((w.start_text.clone()?, w.end_text.clone()?))).collect();
            prop_assert_eq!(windows, want_windows, "{}", out);
            let mut events: Vec<&str> = Vec::new();
            for (_, _, e) in &specs {
                if let Some(e) = e && !events.contains(e) {
                    events.push(e);
                }
            }
            let want_event = (!events.is_empty()).then(|| events.join("; "));
            prop_assert_eq!(live.event_match_criteria, want_event, "{}", out);
            let objective = live.objective.unwrap_or_default();
            for i in 0..specs.len() {
                prop_assert!(objective.contains(&format!("Part {i}.")), "{}", objective);
            }
        }
    }
}
