use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::*;
use crate::ide::completion::tests::arb_note;
use crate::ide::fixture::{cursor, with_ctx};
use crate::status::RunFacts;

/// Hover over `windows` entries: the local times, each window today, overlaps.
#[path = "hover_windows_tests.rs"]
mod windows;

fn check_with(facts: RunFacts, fixture: &str, expect: Expect) {
    let (text, offset) = cursor(fixture);
    let hover = with_ctx(&text, facts, |ctx| hover(ctx, offset));
    let actual = match hover {
        Some(h) => format!("{}\n~~~~\n{}\n", &text[h.range], h.markdown),
        None => "(none)\n".to_owned(),
    };
    expect.assert_eq(&actual);
}

fn check(fixture: &str, expect: Expect) {
    check_with(RunFacts::default(), fixture, expect);
}

/// A note around `triggers` (indented under `triggers:`), with runtime fields `extra`.
fn note(triggers: &str, extra: &str) -> String {
    let triggers = triggers.lines().map(|l| format!("    {l}\n")).collect::<String>();
    format!(
        "---\ntitle: x\nlive:\n  objective: Keep the weather current.\n  triggers:\n{triggers}{extra}---\n# Weather\n"
    )
}

#[test]
fn cron_values() {
    check(
        &note("cronExpr: \"0 * *$0 * *\"  # hourly", ""),
        expect![[r#"
            "0 * * * *"
            ~~~~
            **Every hour**

            Next:
            - Mon 23 Nov 10:00 CST
            - Mon 23 Nov 11:00 CST
            - Mon 23 Nov 12:00 CST
        "#]],
    );
    check(
        &note("cronExpr: 0 9 * * 1-5$0", ""),
        expect![[r#"
            0 9 * * 1-5
            ~~~~
            **At 09:00 on weekdays**

            Next:
            - Tue 24 Nov 09:00 CST
            - Wed 25 Nov 09:00 CST
            - Thu 26 Nov 09:00 CST
        "#]],
    );
    check(
        &note("cronExpr: \"*/2 * * * *$0\"", ""),
        expect![[r#"
            "*/2 * * * *"
            ~~~~
            **Every 2 minutes**

            Next:
            - Mon 23 Nov 09:08 CST
            - Mon 23 Nov 09:10 CST
            - Mon 23 Nov 09:12 CST

            ⚠️ Fires more often than every 5 minutes, and every fire is an agent run.
        "#]],
    );
    check(
        &note("cronExpr: \"0 9 * *$0\"", ""),
        expect![[r#"
            "0 9 * *"
            ~~~~
            **Invalid cron expression:** expected 5 fields (minute hour day-of-month month day-of-week), or 6 with a leading seconds field, but found 4
        "#]],
    );
    check(
        &note("cronExpr: \"0 9 * * *$0\"", "  active: false\n"),
        expect![[r#"
            "0 9 * * *"
            ~~~~
            **Daily at 09:00**

            Next:
            - Tue 24 Nov 09:00 CST
            - Wed 25 Nov 09:00 CST
            - Thu 26 Nov 09:00 CST

            The note is paused: nothing fires until `active: true`.
        "#]],
    );
    // The key itself shows its documentation.
    check(
        &note("cron$0Expr: \"0 9 * * *\"", ""),
        expect![[r#"
            cronExpr
            ~~~~
            `live.triggers.cronExpr` · cron expression

            A cron expression in local time: 5 fields (minute hour day-of-month month day-of-week),
            an optional leading seconds field, or a nickname such as `@hourly`. Vixie semantics:
            0 and 7 are Sunday; day-of-month and day-of-week combine with OR. A missed time is
            skipped after a 2-minute grace, not replayed.
        "#]],
    );
}

#[test]
fn runtime_fields() {
    check(
        &note("", "  lastRunAt: \"2026-11-23T15:02:00Z$0\"\n"),
        expect![[r#"
            "2026-11-23T15:02:00Z"
            ~~~~
            **5 min ago** · Mon 23 Nov 09:02 CST

            ---

            `live.lastRunAt` · timestamp, written by livenote

            Written by livenote: when the latest successful run ended (the moment its result was
            written). Anchors every trigger's cycle.
        "#]],
    );
    check(
        &note("", "  lastAtt$0emptAt: \"2026-11-23T15:05:30.123Z\"\n"),
        expect![[r#"
            lastAttemptAt
            ~~~~
            **1 min ago** · Mon 23 Nov 09:05 CST

            Scheduled runs wait 4 min more (backoff after an attempt that did not succeed: 5 minutes, doubling with each consecutive failure).

            ---

            `live.lastAttemptAt` · timestamp, written by livenote

            Written by livenote: when the latest run started (every run). Drives the 5-minute
            retry backoff.
        "#]],
    );
    check(
        &note("", "  lastRunAt: yesterday$0\n"),
        expect![[r#"
            yesterday
            ~~~~
            `yesterday` is not an RFC 3339 timestamp; livenote treats it as absent.

            ---

            `live.lastRunAt` · timestamp, written by livenote

            Written by livenote: when the latest successful run ended (the moment its result was
            written). Anchors every trigger's cycle.
        "#]],
    );
    check(
        &note("", "  lastRunError: \"provider `local`: connection refused\"$0\n"),
        expect![[r#"
            "provider `local`: connection refused"
            ~~~~
            **The latest run failed:**

            ```text
            provider `local`: connection refused
            ```

            ---

            `live.lastRunError` · text, written by livenote

            Written by livenote: why the latest run failed; cleared when a run succeeds.
        "#]],
    );
    check(
        &note("", "  lastRunError$0: null\n"),
        expect![[r#"
            lastRunError
            ~~~~
            No error: the latest run succeeded.

            ---

            `live.lastRunError` · text, written by livenote

            Written by livenote: why the latest run failed; cleared when a run succeeds.
        "#]],
    );
    check(
        &note("", "  lastRunSummary$0: \"Updated - 3:00 PM.\"\n"),
        expect![[r#"
            lastRunSummary
            ~~~~
            > Updated - 3:00 PM.

            ---

            `live.lastRunSummary` · text, written by livenote

            Written by livenote: the agent's summary of the latest successful run.
        "#]],
    );
    check(
        &note("", "  lastRunId$0: \"01JTX3ABC\"\n"),
        expect![[r#"
            lastRunId
            ~~~~
            Run `01JTX3ABC`; its transcript is in `.livenote/runs/`.

            ---

            `live.lastRunId` · text, written by livenote

            Written by livenote: the id of the latest run (sortable, time-based); its transcript is
            in `.livenote/runs/`.
        "#]],
    );
}

#[test]
fn live_key_summary() {
    let full = "---\nlive$0:\n  objective: x\n  triggers:\n    cronExpr: \"0 * * * *\"\n    windows:\n      - startTime: \"09:00\"\n        endTime: \"12:00\"\n    eventMatchCriteria: \"Emails about Q3\"\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n  lastRunSummary: \"Sunny, 12 °C.\"\n---\n";
    check(
        full,
        expect![[r#"
            live
            ~~~~
            **Live note** · live

            Triggers:
            - cron `0 * * * *`: every hour
            - window 09:00–12:00: done today (last run 5 min ago)
            - events: Emails about Q3

            Next run: 10:00 (Mon 23 Nov 10:00 CST).

            Last run: 5 min ago.

            > Sunny, 12 °C.
        "#]],
    );
    check_with(
        RunFacts { running: true, ..RunFacts::TRUSTED },
        full,
        expect![[r#"
            live
            ~~~~
            **Live note** · updating now…

            Triggers:
            - cron `0 * * * *`: every hour
            - window 09:00–12:00: done today (last run 5 min ago)
            - events: Emails about Q3

            Next run: 10:00 (Mon 23 Nov 10:00 CST).

            Last run: 5 min ago.

            > Sunny, 12 °C.
        "#]],
    );
    check_with(
        RunFacts { trusted: Some(false), ..RunFacts::TRUSTED },
        full,
        expect![[r#"
            live
            ~~~~
            **Live note** · waiting for workspace trust

            Triggers:
            - cron `0 * * * *`: every hour
            - window 09:00–12:00: done today (last run 5 min ago)
            - events: Emails about Q3

            Next run: 10:00 (Mon 23 Nov 10:00 CST), once the workspace is trusted.

            Last run: 5 min ago.

            > Sunny, 12 °C.
        "#]],
    );
    check_with(
        RunFacts {
            running: false,
            trusted: Some(true),
            scheduling_off: false,
            undoable: false,
            scheduled_on: Some("nas"),
        },
        full,
        expect![[r#"
            live
            ~~~~
            **Live note** · live

            Triggers:
            - cron `0 * * * *`: every hour
            - window 09:00–12:00: done today (last run 5 min ago)
            - events: Emails about Q3

            Next run: 10:00 (Mon 23 Nov 10:00 CST) on nas (`[scheduler] host`; here it runs only by hand).

            Last run: 5 min ago.

            > Sunny, 12 °C.
        "#]],
    );
    check(
        "---\nlive$0:\n  objective: x\n  active: false\n---\n",
        expect![[r#"
            live
            ~~~~
            **Live note** · paused (`active: false`)

            Manual only: no triggers; use *Run now*.

            Never ran successfully yet.
        "#]],
    );
    check(
        "---\nlive$0:\n  objective: x\n  lastRunAt: \"2026-11-22T15:00:00Z\"\n  lastRunError: \"quota exceeded\"\n---\n",
        expect![[r#"
                live
                ~~~~
                **Live note** · the latest run failed: quota exceeded

                Manual only: no triggers; use *Run now*.

                Last run: yesterday.
            "#]],
    );
    check(
        "---\nlive$0:\n  active: maybe\n---\n",
        expect![[r#"
            live
            ~~~~
            **Live note** · has errors: nothing fires until they are fixed

            Manual only: no triggers; use *Run now*.

            Never ran successfully yet.
        "#]],
    );
    check(
        "---\nlive$0: [\n---\n",
        expect![[r#"
            live
            ~~~~
            **Live note** · has errors: nothing fires until they are fixed

            Manual only: no triggers; use *Run now*.

            Never ran successfully yet.
        "#]],
    );
}

#[test]
fn key_documentation() {
    check(
        &note("", "  prov$0ider: local\n"),
        expect![[r#"
            provider
            ~~~~
            `live.provider` · provider name

            Name of a configured provider (see `[providers.*]` in config); empty means the default.
        "#]],
    );
    check(
        "---\nlive:\n  $0objective: x\n---\n",
        expect![[r#"
            objective
            ~~~~
            `live.objective` · text, required

            What the note should keep being, in plain words. The agent reads it on every run and
            keeps the body below the title in line with it.
        "#]],
    );
    check(
        "---\nlive:\n  objective: x\n  triggers:\n    eventMatchCriteria$0: mail\n---\n",
        expect![[r#"
            eventMatchCriteria
            ~~~~
            `live.triggers.eventMatchCriteria` · text

            Which incoming events should update the note, in plain words
            (e.g. "Emails about Q3 planning").

            Events come from this folder's sources: `mail (imap)`, `releases (feed)`; and from `livenote event`. `livenote sources` shows what each saw last.
        "#]],
    );
    check(
        "---\nlive:\n  objective: x\n  noti$0fy: changes\n---\n",
        expect![[r#"
        notify
        ~~~~
        `live.notify` · changes | failures | all | false

        Who is told when a run ends: `changes` (a run changed the body), `failures` (a run
        failed), `all` (every run), or `false` (never). Absent: failures of scheduled and event
        runs. Desktop notifications come from `watch` and `tick` when `[notify] desktop = true`;
        an editor shows them itself; `[notify] command` gets each one as JSON. Several notes
        within a minute are one digest ("5 notes changed").
    "#]],
    );
}

#[test]
fn nothing_elsewhere() {
    check(
        &note("", "  objective2$0: x\n"),
        expect![[r#"
            (none)
        "#]],
    );
    check(
        "---\ntitle$0: x\nlive:\n  objective: x\n---\n",
        expect![[r#"
            (none)
        "#]],
    );
    check(
        "---\nlive:\n  objective: some$0 text\n---\n",
        expect![[r#"
            (none)
        "#]],
    );
    check(
        "---\nlive:\n  objective: x\n---\n# live$0: x\n",
        expect![[r#"
            (none)
        "#]],
    );
    check(
        "# Title\nlive$0: x\n",
        expect![[r#"
            (none)
        "#]],
    );
    check(
        "---\nlive:\n  active: true  # c$0omment\n---\n",
        expect![[r#"
            (none)
        "#]],
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Any offset into any text: no panic, and a hover covers the (floored) cursor.
    #[test]
    fn never_panics(text in arb_note()) {
        with_ctx(&text, RunFacts::default(), |ctx| {
            for offset in 0..=text.len() + 2 {
                let at = floor_offset(&text, offset);
                if let Some(h) = hover(ctx, offset) {
                    let r = h.range;
                    prop_assert!(r.start <= at && at <= r.end && text.get(r.clone()).is_some(), "{r:?} at {at}");
                }
            }
            Ok(())
        })?;
    }
}

#[test]
fn crlf_and_unicode_before_the_cursor() {
    check(
        "---\r\ntitle: 東京の天気 🌤\r\nlive:\r\n  objective: \"天気 ☀️\"\r\n  triggers:\r\n    cronExpr: \"0 9 * * 1-5$0\"\r\n---\r\n",
        expect![[r#"
                "0 9 * * 1-5"
                ~~~~
                **At 09:00 on weekdays**

                Next:
                - Tue 24 Nov 09:00 CST
                - Wed 25 Nov 09:00 CST
                - Thu 26 Nov 09:00 CST
            "#]],
    );
    check(
        "---\r\n題: 🌤\r\nlive:\r\n  active$0: true\r\n",
        expect![[r#"
            active
            ~~~~
            `live.active` · true | false

            `false` pauses the note: nothing fires on schedule or on events. A paused note can
            still be run by hand.
        "#]],
    );
}

#[test]
fn tools_entries() {
    let note = |tools: &str| format!("---\nlive:\n  objective: x\n  tools: {tools}\n---\n");
    check(
        &note("[ti$0me, github]"),
        expect![[r#"
        time
        ~~~~
        **MCP server `time`**: all of its 2 tools

        - `get_current_time`: Get current time in a specific timezone
        - `convert_time`: Convert time between timezones
    "#]],
    );
    check(
        &note("[time, \"time.conv$0ert_time\"]"),
        expect![[r#"
        "time.convert_time"
        ~~~~
        **`convert_time`** · a tool of MCP server `time`

        Convert time between timezones

        Arguments: `source_timezone`, `time`, `target_timezone`
    "#]],
    );
    check(
        &note("[git$0hub]"),
        expect![[r#"
        github
        ~~~~
        **MCP server `github`**: all of its tools

        Its tools are known once a run has started it.
    "#]],
    );
    check(
        &note("[github.list_iss$0ues]"),
        expect![[r#"
        github.list_issues
        ~~~~
        **`list_issues`** · a tool of MCP server `github`

        Its tools are known once a run has started it.
    "#]],
    );
    // Unknown names: the diagnostic speaks.
    check(&note("[nos$0uch, time.nos]"), expect!["(none)\n"]);
    check(&note("[time, time.no$0s]"), expect!["(none)\n"]);
    check(
        "---\nlive:\n  objective: x\n  tools:\n    - time.get_cur$0rent_time\n---\n",
        expect![[r#"
        time.get_current_time
        ~~~~
        **`get_current_time`** · a tool of MCP server `time`

        Get current time in a specific timezone

        Arguments: `timezone`
    "#]],
    );
    // The key: its documentation.
    check(
        &note("[time]").replacen("too", "t$0oo", 1),
        expect![[r#"
        tools
        ~~~~
        `live.tools` · list of MCP servers or server.tool

        The MCP tools the agent may use (`[mcp.servers.NAME]` in config): server names (all of
        that server's tools) or `server.tool` for one tool, like `[time, "github.list_issues"]`.
        Absent: every configured server's tools; an empty list: none.
    "#]],
    );
}

#[test]
fn a_skill_entry_shows_its_description_and_file() {
    check(
        "---\nlive:\n  objective: x\n  skills: [weekly-$0digest, writing-live-notes]\n---\n",
        expect![[r#"
            weekly-digest
            ~~~~
            **Skill `weekly-digest`**

            Sum up a week of notes, grouped by day.

            Workspace skill, `/w/skills/digest.md`. Runs of this note get its guidance in full.
        "#]],
    );
    check(
        "---\nlive:\n  objective: x\n  skills:\n    - writing-live-$0notes\n---\n",
        expect![[r#"
            writing-live-notes
            ~~~~
            **Skill `writing-live-notes`**

            How to write a good live note.

            Built into livenote (`livenote skills` lists every skill). Runs of this note get its guidance in full.
        "#]],
    );
    // An unknown name has no hover of its own (its diagnostic speaks); the key's doc is shown.
    check("---\nlive:\n  objective: x\n  skills: [no$0pe]\n---\n", expect!["(none)\n"]);
}
