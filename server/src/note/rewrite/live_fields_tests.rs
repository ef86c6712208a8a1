use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::*;
use crate::text::edit::apply;

fn triggers(cron: Option<&str>, windows: Option<&[(&str, &str)]>, event: Option<&str>) -> TriggerEdits {
    TriggerEdits {
        cron_expr: cron.map(str::to_owned),
        windows: windows.map(|w| w.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()),
        event_match_criteria: event.map(str::to_owned),
    }
}

/// The note after the edits (`␍` for CR, `<EOF>` at the end), or the error; the result must
/// analyse without errors whenever the edit succeeds with valid values.
fn check(text: &str, objective: &str, t: &TriggerEdits, want: Expect) {
    let shown = match make_live_with(text, objective, t) {
        Ok(edits) => match apply(text, &edits) {
            Ok(out) => {
                let analysis = crate::note::analyze(&out, &crate::note::Options::default());
                assert!(!analysis.has_errors(), "{out}\n{:?}", analysis.diagnostics);
                format!("{}<EOF>", out.replace('\r', "␍"))
            }
            Err(e) => panic!("edits do not apply: {e}"),
        },
        Err(e) => format!("error: {e}"),
    };
    want.assert_eq(&shown);
}

#[test]
fn a_passive_note_gets_the_block_make_live_writes() {
    let text = "---\ntitle: Weather\n---\n# Weather\n";
    check(
        text,
        "Today's weather in Berlin.",
        &triggers(Some("0 7 * * *"), Some(&[("09:00", "12:00")]), Some("Storm warnings")),
        expect![[r#"
            ---
            title: Weather
            live:
              objective: "Today's weather in Berlin."
              triggers:
                cronExpr: "0 7 * * *"
                windows:
                  - startTime: "09:00"
                    endTime: "12:00"
                eventMatchCriteria: "Storm warnings"
            ---
            # Weather
            <EOF>"#]],
    );
    // Without triggers, the very edit of the editor's *Make live*.
    let with = make_live_with(text, "x", &TriggerEdits::default());
    assert_eq!(with, make_live(text, Some("x")));
    // No frontmatter, CRLF: one is created with the note's line endings; empty values are none.
    check(
        "# Notes\r\nbody\r\n",
        "",
        &triggers(Some(""), Some(&[]), None),
        expect![[r#"
            ---␍
            live:␍
              objective: 'Keep this note about "Notes" up to date.'␍
            ---␍
            # Notes␍
            body␍
            <EOF>"#]],
    );
}

const LIVE: &str = r#"---
title: Chicago time   # the user's
live:
  objective: "Show the time."   # what it keeps
  active: false
  # written by livenote only:
  lastRunAt: "2026-11-23T15:02:00Z"
  lastRunId: "01KAT5"
other: 1
---
# Chicago time
"#;

#[test]
fn a_live_note_gets_its_objective_replaced_and_triggers_added_above_the_runtime_fields() {
    check(
        LIVE,
        "Show the time in Chicago,\nin 12-hour format.",
        &triggers(Some("0 * * * *"), None, Some("")),
        expect![[r#"
            ---
            title: Chicago time   # the user's
            live:
              objective: |-   # what it keeps
                Show the time in Chicago,
                in 12-hour format.
              active: false
              triggers:
                cronExpr: "0 * * * *"
              # written by livenote only:
              lastRunAt: "2026-11-23T15:02:00Z"
              lastRunId: "01KAT5"
            other: 1
            ---
            # Chicago time
            <EOF>"#]],
    );
    // A blank objective leaves it; no triggers given changes nothing else.
    assert_eq!(make_live_with(LIVE, " ", &TriggerEdits::default()), Ok(vec![]));
}

const TRIGGERS: &str = r#"---
live:
  objective: |
    Keep the plan.
  triggers:
      cronExpr: "0 9 * * 1"   # Mondays
      windows:
      - startTime: "08:00"
        endTime: "09:00"
      # a comment in the list
      - startTime: "17:00"
        endTime: "18:00"
      eventMatchCriteria: "Emails about the plan"
  # trailing comment of triggers
  lastRunId: "01KAT5"
---
"#;

#[test]
fn given_triggers_are_replaced_in_place_and_empty_ones_removed() {
    check(
        TRIGGERS,
        "Keep the plan,\nand the budget.\n",
        &triggers(Some("*/30 9-17 * * 1-5"), Some(&[("12:00", "13:00")]), None),
        expect![[r#"
            ---
            live:
              objective: |
                Keep the plan,
                and the budget.
              triggers:
                  cronExpr: "*/30 9-17 * * 1-5"   # Mondays
                  windows:
                    - startTime: "12:00"
                      endTime: "13:00"
                  eventMatchCriteria: "Emails about the plan"
              # trailing comment of triggers
              lastRunId: "01KAT5"
            ---
            <EOF>"#]],
    );
    check(
        TRIGGERS,
        "",
        &triggers(Some(""), Some(&[]), Some("Emails about the budget")),
        expect![[r#"
            ---
            live:
              objective: |
                Keep the plan.
              triggers:
                  eventMatchCriteria: "Emails about the budget"
              # trailing comment of triggers
              lastRunId: "01KAT5"
            ---
            <EOF>"#]],
    );
    // A trigger the block lacks goes after the others, at their column.
    let only_cron = "---\nlive:\n  objective: x\n  triggers:\n      cronExpr: \"@daily\"\n---\n";
    check(
        only_cron,
        "",
        &triggers(None, Some(&[("09:00", "09:30")]), Some("News")),
        expect![[r#"
            ---
            live:
              objective: x
              triggers:
                  cronExpr: "@daily"
                  windows:
                    - startTime: "09:00"
                      endTime: "09:30"
                  eventMatchCriteria: "News"
            ---
            <EOF>"#]],
    );
}

#[test]
fn empty_triggers_get_keys_and_odd_ones_are_refused() {
    for empty in ["triggers:", "triggers: {}", "triggers: null"] {
        let text = format!("---\nlive:\n  objective: x\n  {empty}\n---\n");
        let edits = make_live_with(&text, "", &triggers(Some("0 8 * * *"), None, None));
        let out = edits.map(|e| apply(&text, &e).map_err(|e| e.to_string()));
        assert_eq!(
            out,
            Ok(Ok("---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"0 8 * * *\"\n---\n".to_owned())),
            "{empty}"
        );
    }
    let flow = "---\nlive:\n  objective: x\n  triggers: {cronExpr: \"@daily\"}\n---\n";
    check(
        flow,
        "",
        &triggers(Some("@hourly"), None, None),
        expect![
            "error: `triggers:` is not written as indented `key: value` lines (flow style or a plain value); write it that way to edit it"
        ],
    );
    let twice = "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: a\n    cronExpr: b\n---\n";
    check(
        twice,
        "",
        &triggers(Some("@hourly"), None, None),
        expect!["error: `cronExpr` appears more than once in the `live:` block; remove the extra one first"],
    );
    check(
        "---\nlive: {objective: x}\n---\n",
        "y",
        &TriggerEdits::default(),
        expect![
            "error: the `live:` block is written in flow style (`{...}`); write it as indented `key: value` lines to edit it"
        ],
    );
}

#[test]
fn a_block_without_an_objective_gets_one_first() {
    check(
        "---\nlive:\n  lastRunId: \"01KAT5\"\n---\n",
        "Track it.",
        &triggers(Some("@hourly"), None, None),
        expect![[r#"
            ---
            live:
              objective: "Track it."
              triggers:
                cronExpr: "@hourly"
              lastRunId: "01KAT5"
            ---
            <EOF>"#]],
    );
}

proptest! {
    /// Whatever the objective and values, a live note keeps every byte outside the values the
    /// call replaces, and the block reads back with the objective and triggers given.
    #[test]
    fn values_read_back_exactly(
        objective in "[ -~\u{e9}\u{4e2d}\n\t]{1,40}",
        cron in "[ -~]{1,20}",
        event in "[ -~\u{e9}\n]{1,20}",
    ) {
        prop_assume!(!objective.trim().is_empty() && !cron.trim().is_empty() && !event.trim().is_empty());
        let t = triggers(Some(&cron), Some(&[("09:00", "10:00")]), Some(&event));
        let edits = make_live_with(TRIGGERS, &objective, &t);
        let out = edits.map(|e| apply(TRIGGERS, &e).map_err(|e| e.to_string()));
        let Ok(Ok(out)) = out else { panic!("{out:?}") };
        let analysis = crate::note::analyze(&out, &crate::note::Options::default());
        let live = analysis.live.unwrap_or_else(|| panic!("not live:\n{out}"));
        prop_assert_eq!(live.objective.as_deref(), Some(objective.as_str()));
        prop_assert_eq!(live.cron_expr.map(|c| c.value), Some(cron));
        prop_assert_eq!(live.event_match_criteria, Some(event));
        prop_assert_eq!(live.last_run_id.as_deref(), Some("01KAT5"));
        prop_assert!(out.contains("  # trailing comment of triggers\n"));
    }
}

/// Every preset on the note as it is, one after another: the note as each leaves it.
fn schedules(text: &str) -> String {
    let mut out = String::new();
    for s in Schedule::ALL {
        let edits = set_schedule(text, s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        let after = apply(text, &edits).unwrap_or_else(|e| panic!("{e}"));
        let analysis = crate::note::analyze(&after, &crate::note::Options::default());
        assert!(!analysis.has_errors(), "{after}\n{:?}", analysis.diagnostics);
        assert_eq!(Schedule::from_id(s.id()), Some(s));
        out.push_str(&format!("== {}\n{}", s.title(), after.replace('\r', "␍")));
    }
    out
}

#[test]
fn set_schedule_replaces_the_time_triggers_and_keeps_events() {
    let text = "---\nlive:\n  objective: x  # mine\n  triggers:\n    cronExpr: \"@daily\"  # old\n    windows:\n      - startTime: \"07:00\"\n        endTime: \"08:00\"\n    eventMatchCriteria: mail\n  lastRunAt: \"2026-11-20T08:00:00Z\"\n---\n# N\n";
    expect![[r#"
        == every hour
        ---
        live:
          objective: x  # mine
          triggers:
            cronExpr: "0 * * * *"  # old
            eventMatchCriteria: mail
          lastRunAt: "2026-11-20T08:00:00Z"
        ---
        # N
        == every morning at 8
        ---
        live:
          objective: x  # mine
          triggers:
            cronExpr: "0 8 * * *"  # old
            eventMatchCriteria: mail
          lastRunAt: "2026-11-20T08:00:00Z"
        ---
        # N
        == weekdays at 9
        ---
        live:
          objective: x  # mine
          triggers:
            cronExpr: "0 9 * * 1-5"  # old
            eventMatchCriteria: mail
          lastRunAt: "2026-11-20T08:00:00Z"
        ---
        # N
        == once a day between 09:00 and 12:00
        ---
        live:
          objective: x  # mine
          triggers:
            windows:
              - startTime: "09:00"
                endTime: "12:00"
            eventMatchCriteria: mail
          lastRunAt: "2026-11-20T08:00:00Z"
        ---
        # N
        == manual only
        ---
        live:
          objective: x  # mine
          lastRunAt: "2026-11-20T08:00:00Z"
        ---
        # N
    "#]]
    .assert_eq(&schedules(text));
}

#[test]
fn set_schedule_adds_triggers_to_a_note_without_and_keeps_crlf() {
    let text = "---\r\nlive:\r\n  objective: x\r\n---\r\n";
    expect![[r#"
        == every hour
        ---␍
        live:␍
          objective: x␍
          triggers:␍
            cronExpr: "0 * * * *"␍
        ---␍
        == every morning at 8
        ---␍
        live:␍
          objective: x␍
          triggers:␍
            cronExpr: "0 8 * * *"␍
        ---␍
        == weekdays at 9
        ---␍
        live:␍
          objective: x␍
          triggers:␍
            cronExpr: "0 9 * * 1-5"␍
        ---␍
        == once a day between 09:00 and 12:00
        ---␍
        live:␍
          objective: x␍
          triggers:␍
            windows:␍
              - startTime: "09:00"␍
                endTime: "12:00"␍
        ---␍
        == manual only
        ---␍
        live:␍
          objective: x␍
        ---␍
    "#]]
    .assert_eq(&schedules(text));
    assert_eq!(set_schedule("# N\n", Schedule::Hourly), Err(RewriteError::NoFrontmatter));
}

proptest! {
    /// Presets compose like a register: after any sequence, the note's triggers are the last
    /// preset's, `eventMatchCriteria` survives every preset but "manual only", and everything
    /// outside `triggers:` is as it was.
    #[test]
    fn set_schedule_keeps_only_the_last_preset(
        picks in proptest::collection::vec(0usize..5, 1..6),
        event in any::<bool>(),
        crlf in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = format!("---{nl}title: t{nl}live:{nl}  objective: x{nl}");
        if event {
            text.push_str(&format!("  triggers:{nl}    eventMatchCriteria: mail{nl}"));
        }
        text.push_str(&format!("  lastRunId: \"01KAT5\"{nl}---{nl}# T{nl}"));
        let mut manual_since = false;
        for &p in &picks {
            let s = Schedule::ALL[p];
            let edits = set_schedule(&text, s).map_err(|e| TestCaseError::fail(e.to_string()))?;
            text = apply(&text, &edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
            manual_since |= s == Schedule::Manual;
        }
        let a = crate::note::analyze(&text, &crate::note::Options::default());
        prop_assert!(!a.has_errors(), "{text}");
        let live = a.live.ok_or_else(|| TestCaseError::fail("not live"))?;
        let last = Schedule::ALL[picks[picks.len() - 1]];
        let cron = live.cron_expr.map(|c| c.value);
        let want_cron = match last {
            Schedule::Hourly => Some("0 * * * *"),
            Schedule::Morning => Some("0 8 * * *"),
            Schedule::Weekdays => Some("0 9 * * 1-5"),
            Schedule::Window | Schedule::Manual => None,
        };
        prop_assert_eq!(cron.as_deref(), want_cron, "{}", text);
        prop_assert_eq!(live.windows.len(), usize::from(last == Schedule::Window), "{}", text);
        prop_assert_eq!(live.event_match_criteria.is_some(), event && !manual_since, "{}", text);
        prop_assert_eq!(live.last_run_id.as_deref(), Some("01KAT5"));
        prop_assert!(text.starts_with(&format!("---{nl}title: t{nl}live:{nl}  objective: x{nl}")), "{}", text);
        prop_assert_eq!(text.contains('\n') && !text.contains("\r\n"), !crlf);
    }
}
