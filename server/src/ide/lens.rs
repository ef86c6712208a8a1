//! Code lenses on the `live:` line: the note's status in a few words, then the buttons a user
//! reaches for most (`Run now` or `Stop`, then `Pause` or `Resume`).
//!
//! Decisions where SPEC section 2 is silent:
//! - The status lens has no command (clicking a status must not start anything). The LSP layer
//!   should still send it with a command whose id is empty: VS Code renders such a lens as
//!   plain text, and clients that resolve command-less lenses (Neovim) then have a title.
//! - "Invalid: fix N errors" counts error diagnostics; an invalid note gets no `Run now`, since
//!   the run could only fail (the diagnostics say what to fix first).
//! - A healthy note's lens ends with "due now", "next <time>", "manual only" (no triggers) or
//!   "on events" (only `eventMatchCriteria`); nothing when no fire time can be computed. Before
//!   it, "missed 08:00" when the latest occurrence passed without a run (the machine asleep or
//!   off), until the next one.
//! - `Pause`/`Resume` appear only when the rewrite can be done (not on a flow-style `live:`),
//!   like the code actions, so a button never answers with an error.
//! - A passive note has one lens on its first line, "Make live" (the status bar's passive
//!   state in VS Code, and the code action of the same name): offered where that action is,
//!   i.e. when the frontmatter can take a `live:` block.
//! - A stopped run reads "Stopped 5 min ago · next 10:00": a stop is the user's choice, not a
//!   failure, and its occurrence is over.

use std::ops::Range;

use chrono::TimeZone;
use serde_json::Value;

use super::text::{ago, at_local};
use super::{Command, Ctx, commands};
use crate::note::Severity;
use crate::note::model::Live;
use crate::note::rewrite;
use crate::schedule::{Decision, SkipReason};
use crate::status::{self, Status};

/// One code lens: a title over a byte range, clickable when it has a command.
#[derive(Debug, Clone, PartialEq)]
pub struct Lens {
    /// The `live` key.
    pub range: Range<usize>,
    pub title: String,
    pub command: Option<Command>,
}

/// How much of a failure's message the status lens shows, in characters; the whole message is
/// in the `live/last-run-failed` diagnostic at the same key.
const REASON_MAX: usize = 60;

/// The lenses of a live note, in display order; "Make live" for a passive note.
pub fn code_lenses<Tz: TimeZone>(ctx: &Ctx<Tz>) -> Vec<Lens> {
    let Some(live) = &ctx.analysis.live else { return passive_lenses(ctx) };
    let range = live.key_span.clone();
    let state = status::status(live, ctx.facts, ctx.now, ctx.tz);
    let lens = |title: String, command: Option<Command>| Lens { range: range.clone(), title, command };

    // "Waiting for trust" answers the question when clicked.
    let mut title = status_text(ctx, live, state);
    if let Some(max) = &live.max_chars {
        let size = crate::note::budget::body_chars(ctx.text);
        if size > max.value {
            use crate::note::budget::grouped;
            title.push_str(&format!(" · over budget ({} of {})", grouped(size), grouped(max.value)));
        }
    }
    let status_command =
        (state == Status::Untrusted).then(|| command(&title, commands::TRUST_WORKSPACE, Vec::new()));
    let mut lenses = vec![lens(title, status_command)];
    if ctx.facts.running {
        lenses.push(lens("Stop".to_owned(), Some(command("Stop", commands::STOP, Vec::new()))));
    } else if state != Status::Invalid {
        lenses.push(lens("Run now".to_owned(), Some(command("Run now", commands::RUN, Vec::new()))));
    }
    let resume = !live.active;
    if rewrite::set_active(ctx.text, resume).is_ok() {
        let title = if resume { "Resume" } else { "Pause" };
        lenses.push(lens(
            title.to_owned(),
            Some(command(title, commands::SET_ACTIVE, vec![Value::Bool(resume)])),
        ));
    }
    lenses
}

/// "Make live" on the first line of a passive note, when the template can be written there
/// (the same test as the code action's).
fn passive_lenses<Tz: TimeZone>(ctx: &Ctx<Tz>) -> Vec<Lens> {
    if rewrite::make_live(ctx.text, None).is_err() {
        return Vec::new();
    }
    let line = &ctx.text[..ctx.text.find('\n').unwrap_or(ctx.text.len())];
    let first_line = line.strip_suffix('\r').unwrap_or(line).len();
    let title = "Make live";
    vec![Lens {
        range: 0..first_line,
        title: title.to_owned(),
        command: Some(command(title, commands::MAKE_LIVE, Vec::new())),
    }]
}

fn command(title: &str, id: &'static str, args: Vec<Value>) -> Command {
    Command { title: title.to_owned(), id, args }
}

/// The status lens's title, e.g. "● Live · updated 5 min ago · next 15:00".
fn status_text<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live, state: Status) -> String {
    match state {
        Status::Running => "Updating…".to_owned(),
        Status::Invalid => {
            let n = ctx.analysis.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
            format!("Invalid: fix {}", crate::text::count(n, "error"))
        }
        Status::Paused => "Paused".to_owned(),
        Status::Expired => match &live.until {
            Some(u) => format!("Expired {}", super::text::until_text(&u.value, ctx.tz)),
            None => "Expired".to_owned(),
        },
        Status::Untrusted => "Waiting for trust".to_owned(),
        Status::Failed => {
            let reason = live.last_run_error.as_deref().map(short_reason).unwrap_or_default();
            // The failure happened during the latest attempt; `lastRunAt` is the last success.
            let failed = match live.last_attempt_at {
                Some(t) => format!("Failed {}: {reason}", ago(t, ctx.now)),
                None => format!("Failed: {reason}"),
            };
            let next = status::schedule_view(live, ctx.now, ctx.tz).next_due;
            // Retried by the host that fires it, not here.
            if let Some(host) = ctx.facts.scheduled_on.filter(|_| !ctx.facts.scheduling_off) {
                return format!("{failed} · scheduled on {host}");
            }
            match status::Retry::of(live, next) {
                _ if ctx.facts.scheduling_off => failed,
                Some(r) => format!("{failed} · {}", r.text(|t| at_local(t, ctx.now, ctx.tz))),
                None => failed,
            }
        }
        Status::Stopped => {
            let mut parts = vec![match live.last_stopped_at {
                Some(t) => format!("Stopped {}", ago(t, ctx.now)),
                None => "Stopped".to_owned(),
            }];
            parts.extend(schedule_parts(ctx, live));
            parts.join(" · ")
        }
        Status::Live => {
            let mut parts = vec!["● Live".to_owned()];
            parts.push(match live.last_run_at {
                Some(t) => format!("updated {}", ago(t, ctx.now)),
                None => "never run".to_owned(),
            });
            parts.extend(schedule_parts(ctx, live));
            parts.join(" · ")
        }
    }
}

/// What a healthy (or stopped) note's lens ends with: when it fires next, and where.
fn schedule_parts<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live) -> Vec<String> {
    let mut parts = Vec::new();
    let view = status::schedule_view(live, ctx.now, ctx.tz);
    // Its latest occurrence passed without a run (asleep, off): said before the next.
    if !ctx.facts.scheduling_off
        && ctx.facts.scheduled_on.is_none()
        && let Some(m) = status::missed(live, ctx.now, ctx.tz)
    {
        parts.push(format!("missed {}", at_local(m.at, ctx.now, ctx.tz)));
    }
    let when = match &view.decision {
        // Triggers are kept but nothing fires: say so rather than promise a time.
        _ if ctx.facts.scheduling_off => Some("scheduling off".to_owned()),
        Some(Decision::Due(_)) => Some("due now".to_owned()),
        Some(Decision::NotDue(SkipReason::ManualOnly)) => {
            let on_events = live.event_match_criteria.is_some();
            Some(if on_events { "on events" } else { "manual only" }.to_owned())
        }
        _ => view.next_due.map(|t| {
            if t <= ctx.now { "due now".to_owned() } else { format!("next {}", at_local(t, ctx.now, ctx.tz)) }
        }),
    };
    parts.extend(when);
    // Another machine fires it (`[scheduler] host`); here it runs by hand.
    parts.extend(
        ctx.facts.scheduled_on.filter(|_| !ctx.facts.scheduling_off).map(|h| format!("scheduled on {h}")),
    );
    parts
}

/// A failure message on one line, cut to about [`REASON_MAX`] characters at a word boundary.
fn short_reason(message: &str) -> String {
    let one_line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= REASON_MAX {
        return one_line;
    }
    let cut_at = one_line.char_indices().nth(REASON_MAX).map_or(one_line.len(), |(i, _)| i);
    let head = &one_line[..cut_at];
    // Cut at the last space unless that would drop most of the text (a long URL or path).
    let head = match head.rfind(' ') {
        Some(i) if i >= head.len() / 2 => &head[..i],
        _ => head,
    };
    format!("{}…", head.trim_end_matches([' ', ',', ';', ':', '.', '(', '-']))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};
    use proptest::prelude::*;

    use super::*;
    use crate::ide::fixture::with_ctx;
    use crate::status::RunFacts;
    use crate::text::{Encoding, LineIndex};

    const TRUSTED: RunFacts = RunFacts::TRUSTED;

    /// Lenses as `line:col title [command args]`, 1-based, columns in characters.
    fn render(text: &str, lenses: &[Lens]) -> String {
        let index = LineIndex::new(text);
        let mut out = String::new();
        for l in lenses {
            let at = index.position(text, l.range.start, Encoding::Scalar);
            out.push_str(&format!("{}:{} {}", at.line + 1, at.col + 1, l.title));
            if let Some(c) = &l.command {
                let args: Vec<String> = c.args.iter().map(Value::to_string).collect();
                out.push_str(&format!(
                    " [{}{}]",
                    c.id,
                    args.iter().map(|a| format!(" {a}")).collect::<String>()
                ));
                assert_eq!(c.title, l.title, "a lens's command has the lens's title");
            }
            out.push('\n');
        }
        out
    }

    fn check_with(facts: RunFacts, text: &str, expect: Expect) {
        let actual = with_ctx(text, facts, |ctx| render(text, &code_lenses(ctx)));
        expect.assert_eq(&actual);
    }

    fn check(text: &str, expect: Expect) {
        check_with(TRUSTED, text, expect);
    }

    /// A note with an hourly cron and the given extra lines at the end of `live:`.
    fn hourly(extra: &str) -> String {
        format!(
            r#"---
title: Chicago time
live:
  objective: Show the time in Chicago.
  triggers:
    cronExpr: "0 * * * *"
{extra}---
# Chicago time

9:00 AM
"#
        )
    }

    const RAN: &str = r#"  lastAttemptAt: "2026-11-23T15:01:59Z"
  lastRunAt: "2026-11-23T15:02:00Z"
  lastRunId: "01KAT5"
"#;

    const FAILED: &str = r#"  lastAttemptAt: "2026-11-23T15:05:00Z"
  lastRunAt: "2026-11-23T14:00:01Z"
  lastRunError: "provider local: error sending request for url (http://127.0.0.1:11434/v1/chat/completions): connection refused"
"#;

    #[test]
    fn never_run_is_due_now() {
        check(
            &hourly(""),
            expect![[r#"
                3:1 ● Live · never run · due now
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn an_occurrence_slept_through_is_named_until_the_next() {
        // Ran at 07:00; the 08:00 and 09:00 occurrences passed with nothing running it: the
        // latest is named, as `list` and the log name it.
        let ran = "  lastAttemptAt: \"2026-11-23T13:00:01Z\"\n  lastRunAt: \"2026-11-23T13:00:05Z\"\n";
        check(
            &hourly(ran),
            expect![[r#"
                3:1 ● Live · updated 2 h ago · missed 09:00 · next 10:00
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn ran_five_minutes_ago() {
        check(
            &hourly(RAN),
            expect![[r#"
                3:1 ● Live · updated 5 min ago · next 10:00
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn failed_shows_age_and_short_reason() {
        check(
            &hourly(FAILED),
            expect![[r#"
                3:1 Failed 2 min ago: provider local: error sending request for url…
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn a_failing_note_says_when_it_retries() {
        check(
            &hourly(&format!("{FAILED}  failures: 3\n")),
            expect![[r#"
                3:1 Failed 2 min ago: provider local: error sending request for url… · retry at 09:25 (3rd failure)
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
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
                3:1 Stopped 3 min ago · next 10:00
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn scheduling_off_replaces_the_next_time() {
        check_with(
            RunFacts { scheduling_off: true, ..RunFacts::TRUSTED },
            &hourly(RAN),
            expect![[r#"
                3:1 ● Live · updated 5 min ago · scheduling off
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn paused_offers_resume() {
        check(
            &hourly("  active: false\n"),
            expect![[r#"
                3:1 Paused
                3:1 Run now [livenote.run]
                3:1 Resume [livenote.setActive true]
            "#]],
        );
    }

    #[test]
    fn running_offers_stop() {
        check_with(
            RunFacts { running: true, ..RunFacts::TRUSTED },
            &hourly(RAN),
            expect![[r#"
                3:1 Updating…
                3:1 Stop [livenote.stop]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn backoff_without_a_failure_shows_when_it_is_retried() {
        // A run started 3 minutes ago and left no trace (e.g. the process died): the cycle is
        // retried when the backoff ends.
        check(
            &hourly("  lastAttemptAt: \"2026-11-23T15:04:00Z\"\n"),
            expect![[r#"
                3:1 ● Live · never run · next 09:09
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn untrusted_waits() {
        check_with(
            RunFacts { trusted: Some(false), ..RunFacts::TRUSTED },
            &hourly(RAN),
            expect![[r#"
                3:1 Waiting for trust [livenote.trustWorkspace]
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn invalid_counts_errors_and_cannot_run() {
        check(
            r#"---
live:
  triggers:
    cronExpr: "61 * * * *"
---
"#,
            expect![[r#"
                2:1 Invalid: fix 2 errors
                2:1 Pause [livenote.setActive false]
            "#]],
        );
        check(
            r#"---
live:
  objective: x
  active: yes
---
"#,
            expect![[r#"
                2:1 Invalid: fix 1 error
                2:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn manual_only_and_event_notes() {
        check(
            r#"---
live:
  objective: x
---
"#,
            expect![[r#"
                2:1 ● Live · never run · manual only
                2:1 Run now [livenote.run]
                2:1 Pause [livenote.setActive false]
            "#]],
        );
        check(
            r#"---
live:
  objective: x
  triggers:
    eventMatchCriteria: Emails about Q3
---
"#,
            expect![[r#"
                2:1 ● Live · never run · on events
                2:1 Run now [livenote.run]
                2:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn windows_next_opening() {
        // 09:07 in Chicago, ran at 09:02: the 08:00-12:00 window is done, the next opens at 13:00.
        check(
            r#"---
live:
  objective: x
  triggers:
    windows:
      - startTime: "08:00"
        endTime: "12:00"
      - startTime: "13:00"
        endTime: "14:00"
  lastRunAt: "2026-11-23T15:02:00Z"
---
"#,
            expect![[r#"
                2:1 ● Live · updated 5 min ago · next 13:00
                2:1 Run now [livenote.run]
                2:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn passive_and_flow_style_notes() {
        // The status pill's passive state: "Make live" (the template, as the code action).
        check(
            r#"---
title: x
---
# Plain
"#,
            expect![[r#"
                1:1 Make live [livenote.makeLive]
            "#]],
        );
        check(
            "# No frontmatter\n",
            expect![[r#"
            1:1 Make live [livenote.makeLive]
        "#]],
        );
        // A frontmatter that does not parse gets its diagnostics, not a button that would fail.
        check("---\ntitle: [x\n---\n# Broken\n", expect![""]);
        // A flow-style block cannot be paused in place, so there is no Pause button.
        check(
            r#"---
live: {objective: x}
---
"#,
            expect![[r#"
                2:1 ● Live · never run · manual only
                2:1 Run now [livenote.run]
            "#]],
        );
    }

    #[test]
    fn crlf_and_wide_characters() {
        let text = hourly(RAN).replace('\n', "\r\n");
        check(
            &text,
            expect![[r#"
                3:1 ● Live · updated 5 min ago · next 10:00
                3:1 Run now [livenote.run]
                3:1 Pause [livenote.setActive false]
            "#]],
        );
        check(
            r#"---
title: 東京の天気 ☀️
tags: [😀, 日本]
live:
  objective: 東京の天気を一行で 🌤
  lastRunAt: "2026-11-23T15:02:00Z"
  lastRunError: "モデルが応答しませんでした 😢 モデルが応答しませんでした 😢 モデルが応答しませんでした 😢 モデルが応答しませんでした 😢"
---
"#,
            expect![[r#"
                4:1 Failed: モデルが応答しませんでした 😢 モデルが応答しませんでした 😢 モデルが応答しませんでした 😢…
                4:1 Run now [livenote.run]
                4:1 Pause [livenote.setActive false]
            "#]],
        );
    }

    #[test]
    fn reasons_are_cut_at_words() {
        assert_eq!(short_reason("timeout\n  after 10m"), "timeout after 10m");
        let long = format!("see {}", "x".repeat(100));
        assert_eq!(short_reason(&long), format!("see {}…", "x".repeat(56)));
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,200}", running: bool, trusted: Option<bool>) {
            for text in [text.clone(), format!(r#"---
live:
{text}
---
"#)] {
                with_ctx(&text, RunFacts { running, trusted, scheduling_off: false, undoable: false, scheduled_on: None }, |ctx| {
                    for l in code_lenses(ctx) {
                        assert!(l.range.end <= text.len() && text.is_char_boundary(l.range.start));
                    }
                });
            }
        }
    }
}
