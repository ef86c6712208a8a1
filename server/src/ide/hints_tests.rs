use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::*;
use crate::ide::fixture::with_ctx;
use crate::status::RunFacts;

const TRUSTED: RunFacts = RunFacts::TRUSTED;
/// A client without code lenses: the status hints are its only status.
const HELIX: Shown = Shown { lens: false };

/// The text with `[label]` inserted at each hint's offset; `\r` shows as `␍`.
fn render(text: &str, hints: &[Hint]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for h in hints {
        out.push_str(&text[at..h.offset]);
        out.push_str(&format!("[{}]", h.label));
        at = h.offset;
    }
    out.push_str(&text[at..]);
    out.replace('\r', "␍")
}

fn check_with(facts: RunFacts, text: &str, expect: Expect) {
    let actual = with_ctx(text, facts, |ctx| render(text, &inlay_hints(ctx, 0..text.len(), HELIX)));
    expect.assert_eq(&actual);
}

fn check(text: &str, expect: Expect) {
    check_with(TRUSTED, text, expect);
}

fn hourly(extra: &str) -> String {
    format!(
        r#"---
live:
  objective: Show the time in Chicago.
  triggers:
    cronExpr: "0 * * * *"
{extra}---
# Chicago time
"#
    )
}

#[test]
fn never_run() {
    check(
        &hourly(""),
        expect![[r#"
                ---
                live:
                  objective: Show the time in Chicago.
                  triggers:
                    cronExpr: "0 * * * *"[every hour · due now]
                ---
                # Chicago time
            "#]],
    );
}

#[test]
fn ran_five_minutes_ago() {
    check(
        &hourly("  lastAttemptAt: \"2026-11-23T15:01:59Z\"\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n"),
        expect![[r#"
                ---
                live:
                  objective: Show the time in Chicago.
                  triggers:
                    cronExpr: "0 * * * *"[every hour · next 10:00]
                  lastAttemptAt: "2026-11-23T15:01:59Z"
                  lastRunAt: "2026-11-23T15:02:00Z"[5 min ago]
                ---
                # Chicago time
            "#]],
    );
}

#[test]
fn an_occurrence_slept_through_is_named_until_the_next() {
    check(
        &hourly("  lastAttemptAt: \"2026-11-22T13:00:01Z\"\n  lastRunAt: \"2026-11-22T13:00:05Z\"\n"),
        expect![[r#"
            ---
            live:
              objective: Show the time in Chicago.
              triggers:
                cronExpr: "0 * * * *"[every hour · missed 09:00 · next 10:00]
              lastAttemptAt: "2026-11-22T13:00:01Z"
              lastRunAt: "2026-11-22T13:00:05Z"[yesterday]
            ---
            # Chicago time
        "#]],
    );
}

#[test]
fn failed_in_backoff() {
    check(
        &hourly(
            r#"  lastAttemptAt: "2026-11-23T15:05:00Z"
  lastRunAt: "2026-11-23T14:00:01Z"
  lastRunError: "connection refused"
"#,
        ),
        expect![[r#"
                ---
                live:[failed 2 min ago]
                  objective: Show the time in Chicago.
                  triggers:
                    cronExpr: "0 * * * *"[every hour · due in 3 min]
                  lastAttemptAt: "2026-11-23T15:05:00Z"[retry in 3 min]
                  lastRunAt: "2026-11-23T14:00:01Z"[1 h ago]
                  lastRunError: "connection refused"
                ---
                # Chicago time
            "#]],
    );
}

#[test]
fn a_third_failure_says_when_it_retries() {
    check(
        &hourly(
            r#"  lastAttemptAt: "2026-11-23T15:05:00Z"
  lastRunAt: "2026-11-23T14:00:01Z"
  lastRunError: "connection refused"
  failures: 3
"#,
        ),
        expect![[r#"
                ---
                live:[failed 2 min ago · retry at 09:25 (3rd failure)]
                  objective: Show the time in Chicago.
                  triggers:
                    cronExpr: "0 * * * *"[every hour · due in 18 min]
                  lastAttemptAt: "2026-11-23T15:05:00Z"[retry in 18 min]
                  lastRunAt: "2026-11-23T14:00:01Z"[1 h ago]
                  lastRunError: "connection refused"
                  failures: 3
                ---
                # Chicago time
            "#]],
    );
}

#[test]
fn backoff_past_the_grace_names_the_next_fire() {
    // Every 5 minutes; an attempt at 09:03:30 holds runs back until 09:08:30, after the
    // 09:05 occurrence's grace: that one is missed, the next fire is 09:10 (as the lens says).
    check(
        r#"---
live:
  objective: x
  triggers:
    cronExpr: "*/5 * * * *"
  lastAttemptAt: "2026-11-23T15:03:30Z"
  lastRunAt: "2026-11-23T15:00:05Z"
  lastRunError: boom
---
"#,
        expect![[r#"
                ---
                live:[failed 3 min ago]
                  objective: x
                  triggers:
                    cronExpr: "*/5 * * * *"[every 5 minutes · next 09:10]
                  lastAttemptAt: "2026-11-23T15:03:30Z"
                  lastRunAt: "2026-11-23T15:00:05Z"[6 min ago]
                  lastRunError: boom
                ---
            "#]],
    );
}

#[test]
fn paused() {
    check(
        &hourly("  active: false\n  lastRunAt: \"2026-11-23T12:00:00Z\"\n"),
        expect![[r#"
                ---
                live:
                  objective: Show the time in Chicago.
                  triggers:
                    cronExpr: "0 * * * *"[every hour]
                  active: false[paused]
                  lastRunAt: "2026-11-23T12:00:00Z"[3 h ago]
                ---
                # Chicago time
            "#]],
    );
}

#[test]
fn running_and_untrusted() {
    check_with(
        RunFacts { running: true, ..RunFacts::TRUSTED },
        &hourly("  lastRunAt: \"2026-11-23T15:02:00Z\"\n"),
        expect![[r#"
                ---
                live:[updating…]
                  objective: Show the time in Chicago.
                  triggers:
                    cronExpr: "0 * * * *"[every hour · next 10:00]
                  lastRunAt: "2026-11-23T15:02:00Z"[5 min ago]
                ---
                # Chicago time
            "#]],
    );
    check_with(
        RunFacts { trusted: Some(false), ..RunFacts::TRUSTED },
        &hourly("  lastRunAt: \"2026-11-23T15:02:00Z\"\n"),
        expect![[r#"
                ---
                live:[waiting for trust]
                  objective: Show the time in Chicago.
                  triggers:
                    cronExpr: "0 * * * *"[every hour · next 10:00]
                  lastRunAt: "2026-11-23T15:02:00Z"[5 min ago]
                ---
                # Chicago time
            "#]],
    );
}

#[test]
fn a_client_with_lenses_gets_no_status_hint_on_the_live_line() {
    // Neovim draws the lens and the hints side by side at the end of the line: the status
    // would read twice ("waiting for trust Waiting for trust").
    let text = hourly("  lastRunAt: \"2026-11-23T15:02:00Z\"\n");
    for facts in [
        RunFacts { trusted: Some(false), ..RunFacts::TRUSTED },
        RunFacts { running: true, ..RunFacts::TRUSTED },
        RunFacts { scheduled_on: Some("nas"), ..RunFacts::TRUSTED },
    ] {
        let with_lens = with_ctx(&text, facts, |ctx| {
            render(&text, &inlay_hints(ctx, 0..text.len(), Shown { lens: true }))
        });
        expect![[r#"
                ---
                live:
                  objective: Show the time in Chicago.
                  triggers:
                    cronExpr: "0 * * * *"[every hour · next 10:00]
                  lastRunAt: "2026-11-23T15:02:00Z"[5 min ago]
                ---
                # Chicago time
            "#]]
        .assert_eq(&with_lens);
        let without = with_ctx(&text, facts, |ctx| render(&text, &inlay_hints(ctx, 0..text.len(), HELIX)));
        assert!(without.contains("live:["), "{without}");
    }
}

#[test]
fn a_stopped_run_is_not_a_failure() {
    check(
        &hourly(
            r#"  lastAttemptAt: "2026-11-23T15:01:00Z"
  lastRunAt: "2026-11-23T14:00:01Z"
  lastRunError: "stopped"
  lastStoppedAt: "2026-11-23T15:04:00Z"
"#,
        ),
        expect![[r#"
                ---
                live:[stopped 3 min ago]
                  objective: Show the time in Chicago.
                  triggers:
                    cronExpr: "0 * * * *"[every hour · next 10:00]
                  lastAttemptAt: "2026-11-23T15:01:00Z"
                  lastRunAt: "2026-11-23T14:00:01Z"[1 h ago]
                  lastRunError: "stopped"
                  lastStoppedAt: "2026-11-23T15:04:00Z"
                ---
                # Chicago time
            "#]],
    );
}

#[test]
fn invalid_values_get_no_hints() {
    check(
        r#"---
live:
  objective: x
  active: no
  triggers:
    cronExpr: "61 * * * *"
    windows:
      - startTime: "9:00"
        endTime: "12:00"
  lastRunAt: yesterday
---
"#,
        expect![[r#"
                ---
                live:
                  objective: x
                  active: no
                  triggers:
                    cronExpr: "61 * * * *"
                    windows:
                      - startTime: "9:00"
                        endTime: "12:00"
                  lastRunAt: yesterday
                ---
            "#]],
    );
    // An error elsewhere: facts stay, the schedule goes.
    check(
        r#"---
live:
  objective: ""
  active: false
  triggers:
    cronExpr: "0 9 * * 1-5"
    windows:
      - startTime: "08:00"
        endTime: "12:00"
  lastRunAt: "2026-11-23T15:02:00Z"
---
"#,
        expect![[r#"
                ---
                live:
                  objective: ""
                  active: false[paused]
                  triggers:
                    cronExpr: "0 9 * * 1-5"[at 09:00 on weekdays]
                    windows:
                      - startTime: "08:00"
                        endTime: "12:00"
                  lastRunAt: "2026-11-23T15:02:00Z"[5 min ago]
                ---
            "#]],
    );
}

#[test]
fn windows() {
    // 09:07 in Chicago; the latest run was yesterday.
    check(
        r#"---
live:
  objective: x
  triggers:
    windows:
      - startTime: "06:00"
        endTime: "07:00"
      - startTime: "08:00"
        endTime: "12:00"
      - {startTime: "13:00", endTime: "14:00"}
  lastRunAt: "2026-11-22T15:00:00Z"
---
"#,
        expect![[r#"
                ---
                live:
                  objective: x
                  triggers:
                    windows:
                      - startTime: "06:00"
                        endTime: "07:00"[closed today]
                      - startTime: "08:00"
                        endTime: "12:00"[due now]
                      - {startTime: "13:00", endTime: "14:00"}[opens 13:00]
                  lastRunAt: "2026-11-22T15:00:00Z"[yesterday]
                ---
            "#]],
    );
    // The latest run at 09:02 covers the window it ran in, not the one that closed at 07:59.
    check(
        r#"---
live:
  objective: x
  triggers:
    windows:
      - startTime: "06:00"
        endTime: "07:00"
      - startTime: "08:00"
        endTime: "12:00"
      - startTime: "13:00"
        endTime: "14:00"
  lastRunAt: "2026-11-23T15:02:00Z"
---
"#,
        expect![[r#"
                ---
                live:
                  objective: x
                  triggers:
                    windows:
                      - startTime: "06:00"
                        endTime: "07:00"[closed today]
                      - startTime: "08:00"
                        endTime: "12:00"[done today]
                      - startTime: "13:00"
                        endTime: "14:00"[opens 13:00]
                  lastRunAt: "2026-11-23T15:02:00Z"[5 min ago]
                ---
            "#]],
    );
    // In backoff inside the band: due when the backoff ends.
    check(
        r#"---
live:
  objective: x
  triggers:
    windows:
      - startTime: "08:00"
        endTime: "12:00"
  lastAttemptAt: "2026-11-23T15:05:00Z"
  lastRunError: boom
---
"#,
        expect![[r#"
                ---
                live:[failed 2 min ago]
                  objective: x
                  triggers:
                    windows:
                      - startTime: "08:00"
                        endTime: "12:00"[due in 3 min]
                  lastAttemptAt: "2026-11-23T15:05:00Z"[retry in 3 min]
                  lastRunError: boom
                ---
            "#]],
    );
}

#[test]
fn tooltips() {
    let text = r#"---
live:
  objective: x
  triggers:
    cronExpr: "0 9 * * 1-5"
    windows:
      - {startTime: "08:00", endTime: "12:00"}
  lastAttemptAt: "2026-11-23T15:05:00Z"
  lastRunError: "connection refused"
---
"#;
    let hints = with_ctx(text, TRUSTED, |ctx| inlay_hints(ctx, 0..text.len(), HELIX));
    let actual: String =
        hints.iter().map(|h| format!("{}: {}\n", h.label, h.tooltip.as_deref().unwrap_or("-"))).collect();
    expect![[r#"
            failed 2 min ago: connection refused
            at 09:00 on weekdays · due in 3 min: Next fire times (local): tomorrow 09:00, Wed 09:00, Thu 09:00
            due in 3 min: Runs once a day, as soon as possible from 08:00 through 12:00 (local time).
            retry in 3 min: The latest run did not succeed; scheduled runs wait 5 minutes after it, doubling with each consecutive failure.
        "#]].assert_eq(&actual);
}

#[test]
fn only_hints_in_range() {
    let text = hourly("  active: false\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n");
    let Some(line) = text.find("  lastRunAt") else { panic!("no lastRunAt") };
    let end = line + text[line..].find('\n').unwrap_or(0);
    let hints = with_ctx(&text, TRUSTED, |ctx| inlay_hints(ctx, line..end, HELIX));
    let labels: Vec<&str> = hints.iter().map(|h| h.label.as_str()).collect();
    assert_eq!(labels, ["5 min ago"]);
}

#[test]
fn crlf_and_wide_characters() {
    // The status hint goes before the line ending.
    check_with(
        RunFacts { running: true, ..RunFacts::TRUSTED },
        "---\r\nlive:  \r\n  objective: x\r\n---\r\n",
        expect![[r#"
                ---␍
                live:[updating…]  ␍
                  objective: x␍
                ---␍
            "#]],
    );
    check(
        &hourly("  lastAttemptAt: \"2026-11-23T15:01:59Z\"\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n")
            .replace('\n', "\r\n"),
        expect![[r#"
                ---␍
                live:␍
                  objective: Show the time in Chicago.␍
                  triggers:␍
                    cronExpr: "0 * * * *"[every hour · next 10:00]␍
                  lastAttemptAt: "2026-11-23T15:01:59Z"␍
                  lastRunAt: "2026-11-23T15:02:00Z"[5 min ago]␍
                ---␍
                # Chicago time␍
            "#]],
    );
    check(
        r#"---
title: 東京の天気 ☀️
live: # 😀 ライブ
  objective: 東京の天気 🌤
  active: false # 一時停止 ⏸
  lastRunSummary: "晴れ ☀️"
  lastRunAt: "2026-11-23T15:02:00Z"
  lastRunError: "失敗 😢"
---
"#,
        expect![[r#"
                ---
                title: 東京の天気 ☀️
                live: # 😀 ライブ
                  objective: 東京の天気 🌤
                  active: false[paused] # 一時停止 ⏸
                  lastRunSummary: "晴れ ☀️"
                  lastRunAt: "2026-11-23T15:02:00Z"[5 min ago]
                  lastRunError: "失敗 😢"
                ---
            "#]],
    );
}

#[test]
fn passive_notes_have_none() {
    check(
        r#"---
title: x
---
# x
"#,
        expect![[r#"
            ---
            title: x
            ---
            # x
        "#]],
    );
}

fn live_note() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("  objective: x".to_owned()),
        Just("  active: false".to_owned()),
        Just("  triggers:".to_owned()),
        "    cronExpr: \"[0-9*/ ,-]{0,14}\"",
        "      - startTime: \"[0-9:]{0,6}\"",
        "        endTime: \"[0-9:]{0,6}\"",
        "  last(Attempt|Run)At: \"2026-11-2[0-9]T1[0-9]:0[0-9]:00Z\"",
        "  lastRunError: \\PC{0,10}",
        "\\PC{0,20}",
    ];
    (prop::collection::vec(line, 0..12), any::<bool>()).prop_map(|(lines, crlf)| {
        let nl = if crlf { "\r\n" } else { "\n" };
        format!("---{nl}live:{nl}{}{nl}---{nl}# T{nl}", lines.join(nl))
    })
}

proptest! {
    #[test]
    fn never_panics(
        text in prop_oneof!["\\PC{0,200}", live_note()],
        a in 0usize..400,
        b in 0usize..400,
        running: bool,
        trusted: Option<bool>,
    ) {
        with_ctx(&text, RunFacts { running, trusted, scheduling_off: false, undoable: false, scheduled_on: None }, |ctx| {
            let range = floor_range(&text, a..b);
            for h in inlay_hints(ctx, a..b, HELIX) {
                assert!(range.start <= h.offset && h.offset <= range.end, "{h:?} outside {range:?}");
                assert!(text.is_char_boundary(h.offset), "{h:?}");
            }
        });
    }
}
