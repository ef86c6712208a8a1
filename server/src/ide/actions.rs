//! Code actions: the quick fixes of the diagnostics under the cursor, then the note-level
//! actions of SPEC section 2 ("Make live" on a passive note; "Run now" or "Stop", "Pause" or
//! "Resume", "Undo last run" and "Make passive" on a live one), offered anywhere in the note
//! since Neovim and Helix users ask for code actions from the body as often as from `live:`.
//!
//! Decisions where SPEC section 2 is silent:
//! - Rewrites ("Make live", "Pause"/"Resume", "Make passive") carry both their `edits`,
//!   computed here against the text the client sent, and the `command` that computes the same
//!   edit on the server. The LSP layer should send the edit and omit the command when `edits`
//!   is non-empty: a client applies a code action's edit itself, and would then also run the
//!   command, which would rewrite the note a second time. The command is for clients that
//!   only take commands, and for the palette (`livenote.makeLive` and friends).
//! - A rewrite is offered only when it can be done (no "Make live" on a note whose frontmatter
//!   does not parse: its diagnostics come first), so choosing an action never fails.
//! - "Run now" is not offered on a note with errors (the run could only fail), "Undo last run"
//!   needs something to undo (`RunFacts::undoable`: the note's history holds a run that
//!   changed the body) and no run in progress.
//! - "Make live: <heading>" (issue 25) drafts the block from the note's heading on the server
//!   (the model is needed), so it is a command without edits; "Set schedule: …" presets are
//!   offered with the cursor in the frontmatter, where the schedule is.
//! - A diagnostic's quick fixes are offered with the cursor anywhere on the lines it covers,
//!   as rust-analyzer does, not only on the value it underlines (`active` of `active: yes`).
//! - Kinds: quick fixes are `QuickFix`; rewrites of the frontmatter are `Refactor` (LSP
//!   `refactor.rewrite`); running, stopping and undoing act on the body through the agent and
//!   its history, so they are `Source` (LSP `source`).

use std::ops::Range;

use chrono::TimeZone;
use serde_json::Value;

use super::{Command, Ctx, commands};
use crate::note::model::Live;
use crate::note::rewrite;
use crate::text::TextEdit;

/// What kind of action this is, for the client's menus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionKind {
    /// Fixes a diagnostic (LSP `quickfix`).
    QuickFix,
    /// Rewrites the frontmatter (LSP `refactor.rewrite`).
    Refactor,
    /// Acts on the whole note (LSP `source`).
    Source,
}

/// One code action: edits to apply, a command to run, or both (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub title: String,
    pub kind: ActionKind,
    /// Edits over the text the context holds; may be empty.
    pub edits: Vec<TextEdit>,
    pub command: Option<Command>,
    /// Indices of the diagnostics this action fixes, into [`shown_diagnostics`].
    pub diagnostics: Vec<usize>,
    /// The obvious fix, applied by "fix all"-style requests.
    pub preferred: bool,
}

/// The diagnostics quick fixes are offered for: the analysis', those of the instant
/// (`note::expiry::with_timed`), then those of the folder's sources (`live.sources`).
pub fn shown_diagnostics<Tz: TimeZone>(ctx: &Ctx<Tz>) -> Vec<crate::note::Diagnostic> {
    let mut all = crate::note::expiry::with_timed(ctx.text, ctx.analysis, ctx.now, ctx.tz);
    if let Some(sources) = ctx.sources {
        all.extend(crate::note::sources::source_diagnostics(ctx.text, ctx.analysis.live.as_ref(), sources));
    }
    all
}

/// The actions for `range` (a cursor is an empty range): quick fixes for every diagnostic
/// on a line it touches, then the note-level actions. Offsets of `range` inside a character
/// are moved to its start.
pub fn code_actions<Tz: TimeZone>(ctx: &Ctx<Tz>, range: Range<usize>) -> Vec<Action> {
    let range = floor_range(ctx.text, range);
    let mut actions = Vec::new();
    let diagnostics = shown_diagnostics(ctx);
    for (i, d) in diagnostics.iter().enumerate() {
        // A diagnostic's fixes are offered anywhere on its lines, as rust-analyzer does: the
        // cursor on `active:` of `active: yes` is on the problem for the user.
        let lines = whole_lines(ctx.text, d.range.clone());
        if lines.start > range.end || range.start > lines.end {
            continue;
        }
        for fix in &d.fixes {
            actions.push(Action {
                title: fix.title.clone(),
                kind: ActionKind::QuickFix,
                edits: fix.edits.clone(),
                command: None,
                diagnostics: vec![i],
                preferred: fix.preferred,
            });
        }
    }
    match &ctx.analysis.live {
        None => {
            if let Ok(edits) = rewrite::make_live(ctx.text, None) {
                actions.push(rewrite_action("Make live", edits, commands::MAKE_LIVE, Vec::new()));
                // Clients without an input box (Helix) still get a drafted block: the heading
                // is the sentence. The draft needs the model, so the server computes it.
                if let Some(heading) = crate::note::frontmatter::body_title(ctx.text) {
                    let title = format!("Make live: {heading}");
                    let args = vec![serde_json::json!({ "describe": heading })];
                    actions.push(Action {
                        title: title.clone(),
                        kind: ActionKind::Refactor,
                        edits: Vec::new(),
                        command: Some(Command { title, id: commands::MAKE_LIVE, args }),
                        diagnostics: Vec::new(),
                        preferred: false,
                    });
                }
            }
        }
        Some(live) => note_actions(ctx, live, range, &mut actions),
    }
    actions
}

fn note_actions<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live, range: Range<usize>, actions: &mut Vec<Action>) {
    let running = ctx.facts.running;
    if running {
        actions.push(command_action("Stop", commands::STOP));
    } else if !live.has_errors {
        actions.push(command_action("Run now", commands::RUN));
    }
    let resume = !live.active;
    if let Ok(edits) = rewrite::set_active(ctx.text, resume) {
        let title = if resume { "Resume" } else { "Pause" };
        actions.push(rewrite_action(title, edits, commands::SET_ACTIVE, vec![Value::Bool(resume)]));
    }
    if ctx.facts.undoable && !running {
        actions.push(command_action("Undo last run", commands::UNDO_LAST_RUN));
    }
    if let Ok(edits) = rewrite::make_passive(ctx.text) {
        actions.push(rewrite_action("Make passive", edits, commands::MAKE_PASSIVE, Vec::new()));
    }
    // In the frontmatter only: from the body they would crowd the note's own actions.
    let in_frontmatter = ctx.analysis.frontmatter.as_ref().is_some_and(|fm| {
        fm.close.as_ref().is_some_and(|c| range.start >= fm.open.start && range.end <= c.start)
    });
    if in_frontmatter {
        for schedule in rewrite::Schedule::ALL {
            let Ok(edits) = rewrite::set_schedule(ctx.text, schedule) else { continue };
            // A preset the note already has is no action.
            if edits.is_empty() || crate::text::edit::apply(ctx.text, &edits).is_ok_and(|t| t == ctx.text) {
                continue;
            }
            let title = format!("Set schedule: {}", schedule.title());
            let args = vec![Value::String(schedule.id().to_owned())];
            actions.push(rewrite_action(&title, edits, commands::SET_SCHEDULE, args));
        }
    }
    // The trust question is asked once, and not at all by clients without
    // showMessageRequest (Helix): the answer stays reachable from the note.
    let scheduled = live.has_triggers() || live.event_match_criteria.is_some();
    if ctx.facts.trusted == Some(false) && scheduled && !live.has_errors {
        actions.push(command_action(
            "Trust this workspace (let its notes run on their own)",
            commands::TRUST_WORKSPACE,
        ));
    }
}

fn rewrite_action(title: &str, edits: Vec<TextEdit>, id: &'static str, args: Vec<Value>) -> Action {
    Action {
        title: title.to_owned(),
        kind: ActionKind::Refactor,
        edits,
        command: Some(Command { title: title.to_owned(), id, args }),
        diagnostics: Vec::new(),
        preferred: false,
    }
}

fn command_action(title: &str, id: &'static str) -> Action {
    Action {
        title: title.to_owned(),
        kind: ActionKind::Source,
        edits: Vec::new(),
        command: Some(Command { title: title.to_owned(), id, args: Vec::new() }),
        diagnostics: Vec::new(),
        preferred: false,
    }
}

/// `range` widened to the lines it touches: from the start of its first line to the end of
/// its last (before the line ending).
fn whole_lines(text: &str, range: Range<usize>) -> Range<usize> {
    let range = floor_range(text, range);
    let start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[range.end..].find('\n').map_or(text.len(), |i| range.end + i);
    start..end
}

/// `range` clamped to the text, ordered, with both ends moved back to a character boundary.
fn floor_range(text: &str, range: Range<usize>) -> Range<usize> {
    let a = text.floor_char_boundary(range.start);
    let b = text.floor_char_boundary(range.end);
    a.min(b)..a.max(b)
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};
    use proptest::prelude::*;

    use super::*;
    use crate::ide::fixture::{cursor, with_ctx};
    use crate::status::RunFacts;
    use crate::text::edit::apply;

    const TRUSTED: RunFacts = RunFacts::TRUSTED;
    /// Trusted, with a run to undo in the note's history.
    const UNDOABLE: RunFacts = RunFacts { undoable: true, ..TRUSTED };

    /// One action per line: `kind title (fixes: idx) [command args] *` (`*` = preferred).
    fn render(actions: &[Action]) -> String {
        let mut out = String::new();
        for a in actions {
            out.push_str(&format!("{:?} {}", a.kind, a.title));
            if !a.diagnostics.is_empty() {
                let idx: Vec<String> = a.diagnostics.iter().map(ToString::to_string).collect();
                out.push_str(&format!(" (fixes: {})", idx.join(", ")));
            }
            if let Some(c) = &a.command {
                let args: String = c.args.iter().map(|v| format!(" {v}")).collect();
                out.push_str(&format!(" [{}{args}]", c.id));
            }
            if a.preferred {
                out.push_str(" *");
            }
            out.push('\n');
        }
        out
    }

    fn check_with(facts: RunFacts, fixture: &str, expect: Expect) {
        let (text, at) = cursor(fixture);
        let actual = with_ctx(&text, facts, |ctx| render(&code_actions(ctx, at..at)));
        expect.assert_eq(&actual);
    }

    fn check(fixture: &str, expect: Expect) {
        check_with(TRUSTED, fixture, expect);
    }

    /// The text after applying the edits of the action titled `title` at the cursor; `\r`
    /// shows as `␍`.
    fn check_apply(fixture: &str, title: &str, expect: Expect) {
        let (text, at) = cursor(fixture);
        let after = with_ctx(&text, TRUSTED, |ctx| {
            let actions = code_actions(ctx, at..at);
            let Some(action) = actions.iter().find(|a| a.title == title) else {
                panic!("no action {title:?} in:\n{}", render(&actions))
            };
            assert!(!action.edits.is_empty(), "{title:?} has no edits");
            match apply(&text, &action.edits) {
                Ok(after) => after.replace('\r', "␍"),
                Err(e) => panic!("{title:?}: {e}"),
            }
        });
        expect.assert_eq(&after);
    }

    const NOTE: &str = r#"---
title: Chicago time
live:
  objective: Show the time in Chicago.
  triggers:
    cronExpr: "0 * * * *"
  lastRunAt: "2026-11-23T15:02:00Z"
  lastRunId: "01KAT5"
---
# Chicago time

9:00 AM$0
"#;

    #[test]
    fn set_schedule_from_the_frontmatter_only() {
        check(
            "---\nlive:\n  objective: x\n  trig$0gers:\n    cronExpr: \"0 * * * *\"\n---\n# N\n",
            expect![[r#"
                Source Run now [livenote.run]
                Refactor Pause [livenote.setActive false]
                Refactor Make passive [livenote.makePassive]
                Refactor Set schedule: every morning at 8 [livenote.setSchedule "morning"]
                Refactor Set schedule: weekdays at 9 [livenote.setSchedule "weekdays"]
                Refactor Set schedule: once a day between 09:00 and 12:00 [livenote.setSchedule "window"]
                Refactor Set schedule: manual only [livenote.setSchedule "manual"]
            "#]],
        );
    }

    #[test]
    fn live_note_from_the_body() {
        check_with(
            UNDOABLE,
            NOTE,
            expect![[r#"
                Source Run now [livenote.run]
                Refactor Pause [livenote.setActive false]
                Source Undo last run [livenote.undoLastRun]
                Refactor Make passive [livenote.makePassive]
            "#]],
        );
    }

    #[test]
    fn untrusted_offers_trust() {
        check_with(
            RunFacts { trusted: Some(false), undoable: true, ..RunFacts::TRUSTED },
            NOTE,
            expect![[r#"
                Source Run now [livenote.run]
                Refactor Pause [livenote.setActive false]
                Source Undo last run [livenote.undoLastRun]
                Refactor Make passive [livenote.makePassive]
                Source Trust this workspace (let its notes run on their own) [livenote.trustWorkspace]
            "#]],
        );
    }

    #[test]
    fn running_offers_stop_and_no_undo() {
        check_with(
            RunFacts { running: true, undoable: true, ..RunFacts::TRUSTED },
            NOTE,
            expect![[r#"
                Source Stop [livenote.stop]
                Refactor Pause [livenote.setActive false]
                Refactor Make passive [livenote.makePassive]
            "#]],
        );
    }

    #[test]
    fn nothing_to_undo_offers_no_undo() {
        // A `lastRunId` alone (say, after a failed run that changed nothing) is not enough.
        check_with(
            TRUSTED,
            NOTE,
            expect![[r#"
                Source Run now [livenote.run]
                Refactor Pause [livenote.setActive false]
                Refactor Make passive [livenote.makePassive]
            "#]],
        );
    }

    #[test]
    fn paused_offers_resume() {
        check(
            r#"---
live:
  objective: x
  active: false$0
---
"#,
            expect![[r#"
                Source Run now [livenote.run]
                Refactor Resume [livenote.setActive true]
                Refactor Make passive [livenote.makePassive]
                Refactor Set schedule: every hour [livenote.setSchedule "hourly"]
                Refactor Set schedule: every morning at 8 [livenote.setSchedule "morning"]
                Refactor Set schedule: weekdays at 9 [livenote.setSchedule "weekdays"]
                Refactor Set schedule: once a day between 09:00 and 12:00 [livenote.setSchedule "window"]
            "#]],
        );
        check_apply(
            r#"---
live:
  objective: x
  active: false$0
---
"#,
            "Resume",
            expect![[r#"
                ---
                live:
                  objective: x
                  active: true
                ---
            "#]],
        );
    }

    /// A trigger directly under `live:` is moved into `triggers:` by its warning's quick fix,
    /// offered first and preferred.
    #[test]
    fn cron_under_live_moves_into_triggers() {
        let fixture = "---\nlive:\n  objective: x\n  cr$0on: \"0 9 * * *\"  # daily\n---\n";
        check(
            fixture,
            expect![[r#"
                QuickFix Move into `triggers:` as `cronExpr` (fixes: 0) *
                Source Run now [livenote.run]
                Refactor Pause [livenote.setActive false]
                Refactor Make passive [livenote.makePassive]
                Refactor Set schedule: every hour [livenote.setSchedule "hourly"]
                Refactor Set schedule: every morning at 8 [livenote.setSchedule "morning"]
                Refactor Set schedule: weekdays at 9 [livenote.setSchedule "weekdays"]
                Refactor Set schedule: once a day between 09:00 and 12:00 [livenote.setSchedule "window"]
            "#]],
        );
        check_apply(
            fixture,
            "Move into `triggers:` as `cronExpr`",
            expect![[r#"
                ---
                live:
                  objective: x
                  triggers:
                    cronExpr: "0 9 * * *"  # daily
                ---
            "#]],
        );
    }

    #[test]
    fn pause_and_make_passive_edits() {
        check_apply(
            NOTE,
            "Pause",
            expect![[r#"
                ---
                title: Chicago time
                live:
                  objective: Show the time in Chicago.
                  active: false
                  triggers:
                    cronExpr: "0 * * * *"
                  lastRunAt: "2026-11-23T15:02:00Z"
                  lastRunId: "01KAT5"
                ---
                # Chicago time

                9:00 AM
            "#]],
        );
        check_apply(
            NOTE,
            "Make passive",
            expect![[r#"
                ---
                title: Chicago time
                ---
                # Chicago time

                9:00 AM
            "#]],
        );
    }

    #[test]
    fn quick_fixes_under_the_cursor() {
        let fixture = r#"---
live:
  objective: x
  active: yes$0
  triggers:
    windows:
      - startTime: "9:00"
        endTime: "12:00"
---
"#;
        check(
            fixture,
            expect![[r#"
                QuickFix Change to `true` (fixes: 0) *
                Refactor Pause [livenote.setActive false]
                Refactor Make passive [livenote.makePassive]
                Refactor Set schedule: every hour [livenote.setSchedule "hourly"]
                Refactor Set schedule: every morning at 8 [livenote.setSchedule "morning"]
                Refactor Set schedule: weekdays at 9 [livenote.setSchedule "weekdays"]
                Refactor Set schedule: once a day between 09:00 and 12:00 [livenote.setSchedule "window"]
                Refactor Set schedule: manual only [livenote.setSchedule "manual"]
            "#]],
        );
        // The same note with the cursor on the window's time.
        check(
            &fixture.replace("$0", "").replace("\"9:00\"", "\"9:$000\""),
            expect![[r#"
                QuickFix Change to `09:00` (fixes: 1) *
                Refactor Pause [livenote.setActive false]
                Refactor Make passive [livenote.makePassive]
                Refactor Set schedule: every hour [livenote.setSchedule "hourly"]
                Refactor Set schedule: every morning at 8 [livenote.setSchedule "morning"]
                Refactor Set schedule: weekdays at 9 [livenote.setSchedule "weekdays"]
                Refactor Set schedule: once a day between 09:00 and 12:00 [livenote.setSchedule "window"]
                Refactor Set schedule: manual only [livenote.setSchedule "manual"]
            "#]],
        );
        check_apply(
            fixture,
            "Change to `true`",
            expect![[r#"
                ---
                live:
                  objective: x
                  active: true
                  triggers:
                    windows:
                      - startTime: "9:00"
                        endTime: "12:00"
                ---
            "#]],
        );
    }

    #[test]
    fn a_fix_is_offered_anywhere_on_its_line() {
        // On the key, in the indentation, at the end: the line of `active: yes`.
        for fixture in ["  act$0ive: yes", "$0  active: yes", "  active: yes  $0"] {
            let text = format!("---\nlive:\n  objective: x\n{fixture}\n---\n");
            let quick: String = {
                let (text, at) = cursor(&text);
                with_ctx(&text, TRUSTED, |ctx| render(&code_actions(ctx, at..at)))
                    .lines()
                    .filter(|l| l.starts_with("QuickFix"))
                    .collect()
            };
            assert_eq!(quick, "QuickFix Change to `true` (fixes: 0) *", "{fixture}");
        }
        // Not from the line above, nor the one below.
        for fixture in ["  objective: $0x\n  active: yes\n", "  active: yes\n$0---\n"] {
            let (text, at) = cursor(&format!("---\nlive:\n{fixture}---\n"));
            let all = with_ctx(&text, TRUSTED, |ctx| render(&code_actions(ctx, at..at)));
            assert!(!all.contains("QuickFix"), "{fixture}: {all}");
        }
    }

    #[test]
    fn failed_note() {
        check(
            r#"---
li$0ve:
  objective: x
  lastAttemptAt: "2026-11-23T15:05:00Z"
  lastRunError: "connection refused"
---
"#,
            expect![[r#"
                Source Run now [livenote.run]
                Refactor Pause [livenote.setActive false]
                Refactor Make passive [livenote.makePassive]
                Refactor Set schedule: every hour [livenote.setSchedule "hourly"]
                Refactor Set schedule: every morning at 8 [livenote.setSchedule "morning"]
                Refactor Set schedule: weekdays at 9 [livenote.setSchedule "weekdays"]
                Refactor Set schedule: once a day between 09:00 and 12:00 [livenote.setSchedule "window"]
            "#]],
        );
    }

    #[test]
    fn passive_notes_can_be_made_live() {
        check(
            r#"---
title: x
---
# Weather in Chicago
$0"#,
            expect![[r#"
                Refactor Make live [livenote.makeLive]
                Refactor Make live: Weather in Chicago [livenote.makeLive {"describe":"Weather in Chicago"}]
            "#]],
        );
        check_apply(
            r#"---
title: x
---
# Weather in Chicago
$0"#,
            "Make live",
            expect![[r#"
                ---
                title: x
                live:
                  objective: 'Keep this note about "Weather in Chicago" up to date.'
                ---
                # Weather in Chicago
            "#]],
        );
        check_apply(
            "# Weather in Chicago\r\n\r\nSunny.$0\r\n",
            "Make live",
            expect![[r#"
                ---␍
                live:␍
                  objective: 'Keep this note about "Weather in Chicago" up to date.'␍
                ---␍
                # Weather in Chicago␍
                ␍
                Sunny.␍
            "#]],
        );
        // A frontmatter that does not parse: its diagnostic comes first, no "Make live".
        check(
            r#"---
title: [x
---
$0"#,
            expect![""],
        );
    }

    #[test]
    fn legacy_track_fence_converts() {
        let fixture = r#"# Weather

```track$0
trackId: weather
instruction: Keep the weather current.
schedule:
  type: cron
  expression: "0 * * * *"
```

<!--track-target:weather-->
Sunny.
<!--/track-target:weather-->
"#;
        check(
            fixture,
            expect![[r#"
                QuickFix Convert to live note (fixes: 0) *
                Refactor Make live [livenote.makeLive]
                Refactor Make live: Weather [livenote.makeLive {"describe":"Weather"}]
            "#]],
        );
        check_apply(
            fixture,
            "Convert to live note",
            expect![[r#"
                ---
                live:
                  objective: "Keep the weather current."
                  triggers:
                    cronExpr: "0 * * * *"
                ---
                # Weather

                Sunny.
            "#]],
        );
    }

    #[test]
    fn crlf_and_wide_characters() {
        let fixture = "---\r\ntitle: 東京の天気 ☀️\r\nlive:\r\n  objective: 東京の天気 🌤\r\n  active: false\r\n  lastRunId: \"01KAT5\"\r\n---\r\n# 東京 😀$0\r\n";
        check_with(
            UNDOABLE,
            fixture,
            expect![[r#"
                Source Run now [livenote.run]
                Refactor Resume [livenote.setActive true]
                Source Undo last run [livenote.undoLastRun]
                Refactor Make passive [livenote.makePassive]
            "#]],
        );
        check_apply(
            fixture,
            "Resume",
            expect![[r#"
                ---␍
                title: 東京の天気 ☀️␍
                live:␍
                  objective: 東京の天気 🌤␍
                  active: true␍
                  lastRunId: "01KAT5"␍
                ---␍
                # 東京 😀␍
            "#]],
        );
    }

    #[test]
    fn invalid_note_cannot_run() {
        check(
            r#"---
live:
  triggers:
    cronExpr: "61 * * * *"
---
$0"#,
            expect![[r#"
                Refactor Pause [livenote.setActive false]
                Refactor Make passive [livenote.makePassive]
            "#]],
        );
    }

    proptest! {
        #[test]
        fn never_panics_and_edits_apply(
            text in prop_oneof![
                "\\PC{0,200}",
                "\\PC{0,120}".prop_map(|t| format!(r#"---
live:
  objective: x
{t}
---
# T
"#)),
                "\\PC{0,120}".prop_map(|t| format!("---\r\ntitle: {t}\r\n---\r\n```track\r\n{t}\r\n```\r\n")),
            ],
            a in 0usize..400,
            b in 0usize..400,
            running: bool,
            undoable: bool,
        ) {
            with_ctx(&text, RunFacts { running, trusted: Some(true), scheduling_off: false, undoable, scheduled_on: None }, |ctx| {
                for action in code_actions(ctx, a..b) {
                    if let Err(e) = apply(&text, &action.edits) {
                        panic!("{:?}: {e}", action.title);
                    }
                    for &i in &action.diagnostics {
                        assert!(i < ctx.analysis.diagnostics.len());
                    }
                }
            });
        }
    }
}
