//! Fixture tests: one note per diagnostic code, rendered as `line:col-line:col severity code
//! message` (1-based, columns in Unicode scalar values) plus the fixes on offer.

use expect_test::{Expect, expect};

use super::*;
use crate::text::{Encoding, LineIndex, edit};

fn render(text: &str, providers: Option<&[String]>) -> String {
    let a =
        analyze(text, &Options { providers, mcp: None, skills: None, scan_body: true, max_backoff: None });
    let idx = LineIndex::new(text);
    let mut out = String::new();
    for d in &a.diagnostics {
        let s = idx.position(text, d.range.start, Encoding::Scalar);
        let e = idx.position(text, d.range.end, Encoding::Scalar);
        out.push_str(&format!(
            "{}:{}-{}:{} {} {} {}\n",
            s.line + 1,
            s.col + 1,
            e.line + 1,
            e.col + 1,
            d.severity.as_str(),
            d.code.as_str(),
            d.message
        ));
        for f in &d.fixes {
            out.push_str(&format!("  fix{}: {}\n", if f.preferred { "*" } else { "" }, f.title));
        }
    }
    if let Some(l) = &a.live {
        out.push_str(&format!("live: has_errors={}\n", l.has_errors));
    }
    out
}

fn check(text: &str, expect: Expect) {
    expect.assert_eq(&render(text, None));
}

/// Apply the fix titled `title` and return the text after it.
fn check_fix(text: &str, title: &str, expect: Expect) {
    let a = analyze(
        text,
        &Options {
            providers: Some(&["local".to_owned()]),
            mcp: None,
            skills: None,
            scan_body: true,
            max_backoff: None,
        },
    );
    let Some(fix) = a.diagnostics.iter().flat_map(|d| &d.fixes).find(|f| f.title == title) else {
        panic!("no fix titled {title:?} in {:#?}", a.diagnostics)
    };
    let after = edit::apply(text, &fix.edits).unwrap_or_else(|e| panic!("{e}"));
    // CR is shown as ␍ so snapshots survive editors and formatters that normalise line endings.
    expect.assert_eq(&after.replace('\r', "␍"));
}

#[test]
fn valid_note_has_no_diagnostics() {
    check(
        r#"---
title: Chicago time   # the user's
live:
  objective: |
    Show the current time in Chicago.
  active: true
  triggers:
    cronExpr: "0 * * * *"
    windows:
      - startTime: "09:00"
        endTime: "12:00"
      - startTime: 12:00
        endTime: 15:00
    eventMatchCriteria: Emails about Q3 planning
  provider: ""
  model: ""
  lastAttemptAt: "2026-05-08T15:00:00.123Z"
  lastRunAt: "2026-05-08T15:00:01.234Z"
  lastRunId: "01JTX3"
  lastRunSummary: "Updated."
  lastRunError: null
---

# Chicago time
"#,
        expect![[r#"
            live: has_errors=false
        "#]],
    );
}

#[test]
fn passive_notes_are_left_alone() {
    check("# just a note\n", expect![[""]]);
    check("---\ntitle: x\ntags: [a, b]\n---\nbody\n", expect![[""]]);
    check("---\n---\n", expect![[""]]);
}

#[test]
fn yaml_syntax() {
    check(
        "---\nlive:\n  objective: [unclosed\n  active: true\n---\n",
        expect![[r#"
            4:9-4:10 error live/yaml-syntax YAML syntax error: illegal placement of ':' indicator
            live: has_errors=true
        "#]],
    );
}

#[test]
fn duplicate_key_and_duplicate_live() {
    check(
        "---\nlive:\n  objective: a\n  objective: b\n---\n",
        expect![[r#"
            4:3-4:12 error live/duplicate-key duplicate key `objective`: YAML keys must be unique in a mapping
            live: has_errors=true
        "#]],
    );
    check(
        "---\nlive:\n  objective: a\nlive:\n  objective: b\n---\n",
        expect![[r#"
            4:1-4:5 error live/duplicate-live `live:` appears twice; a note has one live block (merge the objectives into one)
              fix: Remove this second `live:` block
            live: has_errors=true
        "#]],
    );
}

#[test]
fn yaml_too_complex() {
    let mut bomb = String::from("---\na: &a [x,x,x,x,x,x,x,x,x,x]\n");
    for i in 0..6 {
        let p = if i == 0 { "a".to_owned() } else { format!("b{}", i - 1) };
        bomb.push_str(&format!("b{i}: &b{i} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"));
    }
    bomb.push_str("live:\n  objective: x\n---\n");
    let r = render(&bomb, None);
    assert!(r.contains("error live/yaml-too-complex YAML aliases expand to too many nodes"), "{r}");
    check(
        &format!("---\nlive:\n  objective: {}\n---\n", "[".repeat(100)),
        expect![[r#"
            3:76-3:77 error live/yaml-too-complex YAML is nested more than 64 levels deep
            live: has_errors=true
        "#]],
    );
}

#[test]
fn unterminated_frontmatter() {
    check(
        "---\nlive:\n  objective: x\n# Title\n",
        expect![[r#"
            1:1-1:4 error live/unterminated-frontmatter frontmatter is not closed: add a line `---` after it
        "#]],
    );
    check(
        "---\nsome text\n",
        expect![[r#"
            1:1-1:4 warning live/unterminated-frontmatter frontmatter is not closed: add a line `---` after it
        "#]],
    );
}

#[test]
fn live_not_mapping_and_missing_objective() {
    check(
        "---\nlive: true\n---\n",
        expect![[r#"
            2:1-2:5 error live/live-not-mapping `live` must be a mapping with at least an `objective`, found a boolean
            live: has_errors=true
        "#]],
    );
    check(
        "---\nlive:\n  active: true\n---\n",
        expect![[r#"
            2:1-2:5 error live/missing-objective a live note needs an `objective`: what the note should keep being, in plain words
            live: has_errors=true
        "#]],
    );
    check(
        "---\nlive:\n  objective: \"   \"\n---\n",
        expect![[r#"
            3:14-3:19 error live/missing-objective `objective` is empty: say in plain words what this note should keep being
            live: has_errors=true
        "#]],
    );
    check(
        "---\nlive:\n---\n",
        expect![[r#"
            2:1-2:5 error live/missing-objective a live note needs an `objective`: what the note should keep being, in plain words
            live: has_errors=true
        "#]],
    );
}

#[test]
fn wrong_types() {
    check(
        "---\nlive:\n  objective: x\n  active: yes\n  triggers: every hour\n  model: 4\n---\n",
        expect![[r#"
            4:11-4:14 error live/wrong-type `active` must be true or false, found the string "yes" (YAML 1.2 reads `yes`/`no` as text)
              fix*: Change to `true`
            5:13-5:23 error live/wrong-type `triggers` must be a mapping (cronExpr, windows, eventMatchCriteria), found a string
            6:10-6:11 error live/wrong-type `model` must be a model name, found an integer
            live: has_errors=true
        "#]],
    );
    check_fix(
        "---\nlive:\n  objective: x\n  active: \"no\" # paused\n---\n",
        "Change to `false`",
        expect![[r#"
            ---
            live:
              objective: x
              active: false # paused
            ---
        "#]],
    );
}

#[test]
fn empty_values() {
    check(
        "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"\"\n    eventMatchCriteria: ''\n---\n",
        expect![[r#"
            5:15-5:17 error live/empty-value `cronExpr` is empty: write a cron expression such as "0 9 * * 1-5", or remove the key
            6:25-6:27 error live/empty-value `eventMatchCriteria` is empty: describe which events matter, or remove the key
            live: has_errors=true
        "#]],
    );
}

#[test]
fn unknown_keys_with_did_you_mean() {
    check(
        "---\nlive:\n  instruction: x\n  objective: y\n  cronExpr: \"0 * * * *\"\n  triggers:\n    cron: \"0 * * * *\"\n    windows:\n      - start: \"09:00\"\n        endTime: \"10:00\"\n  colour: blue\n---\n",
        expect![[r#"
            3:3-3:14 warning live/unknown-key unknown key `instruction` in `live`; did you mean `objective`?
              fix*: Rename to `objective`
            5:3-5:11 warning live/unknown-key unknown key `cronExpr` in `live`; `cronExpr` belongs in `triggers`
              fix*: Move into `triggers:` as `cronExpr`
            7:5-7:9 warning live/unknown-key unknown key `cron` in `triggers`; did you mean `cronExpr`?
              fix*: Rename to `cronExpr`
            9:9-9:14 warning live/unknown-key unknown key `start` in a window; did you mean `startTime`?
              fix*: Rename to `startTime`
            9:9-9:14 error live/incomplete-window this window has no `startTime`; a window needs both startTime and endTime
            11:3-11:9 warning live/unknown-key unknown key `colour` in `live`; expected one of objective, active, triggers, provider, model, tools, until, maxChars, skills, sources, notify
            live: has_errors=true
        "#]],
    );
    check_fix(
        "---\nlive:\n  cron: '0 * * * *' # hourly\n  objective: y\n---\n",
        "Move into `triggers:` as `cronExpr`",
        expect![[r#"
            ---
            live:
              objective: y
              triggers:
                cronExpr: '0 * * * *' # hourly
            ---
        "#]],
    );
    // Windows and event criteria move the same way, under their aliases too.
    check_fix(
        "---\nlive:\n  objective: y\n  window:\n    - startTime: \"09:00\"\n      endTime: \"10:00\"\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n",
        "Move into `triggers:` as `windows`",
        expect![[r#"
            ---
            live:
              objective: y
              triggers:
                cronExpr: "0 9 * * *"
                windows:
                  - startTime: "09:00"
                    endTime: "10:00"
            ---
        "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  events: Storm warnings\n  eventMatchCriteria: x\n---\n",
        expect![[r#"
            4:3-4:9 warning live/unknown-key unknown key `events` in `live`; `eventMatchCriteria` belongs in `triggers` (`live:` has two keys for `eventMatchCriteria`; keep one of the two and remove the other)
            5:3-5:21 warning live/unknown-key unknown key `eventMatchCriteria` in `live`; `eventMatchCriteria` belongs in `triggers` (`live:` has two keys for `eventMatchCriteria`; keep one of the two and remove the other)
            live: has_errors=false
        "#]],
    );
    // With a `cronExpr` in `triggers:` already, the warning says why nothing is offered.
    check(
        "---\nlive:\n  objective: y\n  cronExpr: \"0 7 * * *\"\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n",
        expect![[r#"
            4:3-4:11 warning live/unknown-key unknown key `cronExpr` in `live`; `cronExpr` belongs in `triggers` (`triggers:` already has a `cronExpr`; keep one of the two and remove the other)
            live: has_errors=false
        "#]],
    );
    check_fix(
        "---\nlive:\n  objective: y\n  triggers:\n    cron: '0 * * * *' # hourly\n---\n",
        "Rename to `cronExpr`",
        expect![[r#"
            ---
            live:
              objective: y
              triggers:
                cronExpr: '0 * * * *' # hourly
            ---
        "#]],
    );
}

#[test]
fn removed_once_trigger() {
    check(
        "---\nlive:\n  objective: y\n  triggers:\n    once:\n      runAt: \"2026-04-14T09:00:00\"\n    cronExpr: \"0 9 * * *\"\n---\n",
        expect![[r#"
            5:5-5:9 warning live/removed-once-trigger the `once` trigger was removed: a live note keeps being up to date; use `Run now` for a one-off update
              fix*: Remove `once`
            live: has_errors=false
        "#]],
    );
    check_fix(
        "---\nlive:\n  objective: y\n  triggers:\n    once:\n      runAt: \"2026-04-14T09:00:00\"\n    cronExpr: \"0 9 * * *\"\n---\n",
        "Remove `once`",
        expect![[r#"
            ---
            live:
              objective: y
              triggers:
                cronExpr: "0 9 * * *"
            ---
        "#]],
    );
}

#[test]
fn invalid_and_frequent_cron() {
    check(
        "---\nlive:\n  objective: y\n  triggers:\n    cronExpr: \"0 25 * * *\"\n---\n",
        expect![[r#"
            5:15-5:27 error live/invalid-cron invalid cron expression: hour field `25`: out of range (allowed 0-23)
            live: has_errors=true
        "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  triggers:\n    cronExpr: \"*/2 9 * * 1\"\n---\n",
        expect![[r#"
            5:15-5:28 warning live/frequent-cron `*/2 9 * * 1` fires more often than every 5 minutes (every 2 minutes from 09:00 to 09:58 on Mondays); every fire is an agent run
            live: has_errors=false
        "#]],
    );
}

#[test]
fn window_times() {
    check(
        "---\nlive:\n  objective: y\n  triggers:\n    windows:\n      - startTime: 9:00\n        endTime: \"25:00\"\n      - startTime: 10\n        endTime: ab\n      - endTime: \"10:00\"\n---\n",
        expect![[r#"
            6:20-6:24 error live/invalid-time `9:00` needs a two-digit hour: `09:00`
              fix*: Change to `09:00`
            7:18-7:25 error live/invalid-time `25:00` is not a time: 25:00 is not a time of day: hours run 00-23 and minutes 00-59
            8:20-8:22 error live/invalid-time `startTime` must be a 24-hour time like "09:00", found an integer
            9:18-9:20 error live/invalid-time `ab` is not a time: expected a 24-hour time written HH:MM, like "09:00"
            10:9-10:16 error live/incomplete-window this window has no `startTime`; a window needs both startTime and endTime
            live: has_errors=true
        "#]],
    );
    check_fix(
        "---\nlive:\n  objective: y\n  triggers:\n    windows:\n      - startTime: '9:00'\n        endTime: \"10:00\"\n---\n",
        "Change to `09:00`",
        expect![[r#"
            ---
            live:
              objective: y
              triggers:
                windows:
                  - startTime: '09:00'
                    endTime: "10:00"
            ---
        "#]],
    );
}

#[test]
fn window_end_before_start_and_overlaps() {
    let note = "---\r\nlive:\r\n  objective: y\r\n  triggers:\r\n    windows:\r\n    - startTime: \"22:00\"  # late\r\n      endTime: \"02:00\"\r\n    - startTime: \"08:00\"\r\n      endTime: \"12:00\"\r\n    - startTime: \"11:00\"\r\n      endTime: \"13:00\"\r\n---\r\n";
    check(
        note,
        expect![[r#"
            6:18-7:23 error live/window-end-before-start window ends (02:00) before it starts (22:00); windows cannot cross midnight
              fix: Swap start and end
              fix*: Split into 22:00–23:59 and 00:00–02:00
            10:7-11:23 warning live/overlapping-windows window 11:00–13:00 overlaps 08:00–12:00: one run inside both counts for both
            live: has_errors=true
        "#]],
    );
    check_fix(
        note,
        "Split into 22:00–23:59 and 00:00–02:00",
        expect![[r#"
            ---␍
            live:␍
              objective: y␍
              triggers:␍
                windows:␍
                - startTime: "22:00"␍
                  endTime: "23:59"␍
                - startTime: "00:00"␍
                  endTime: "02:00"␍
                - startTime: "08:00"␍
                  endTime: "12:00"␍
                - startTime: "11:00"␍
                  endTime: "13:00"␍
            ---␍
        "#]],
    );
    check_fix(
        note,
        "Swap start and end",
        expect![[r#"
            ---␍
            live:␍
              objective: y␍
              triggers:␍
                windows:␍
                - startTime: "02:00"  # late␍
                  endTime: "22:00"␍
                - startTime: "08:00"␍
                  endTime: "12:00"␍
                - startTime: "11:00"␍
                  endTime: "13:00"␍
            ---␍
        "#]],
    );
}

#[test]
fn unknown_provider() {
    let note = "---\nlive:\n  objective: y\n  provider: claud\n---\n";
    expect![[r#"
        4:13-4:18 error live/unknown-provider no provider named `claud` (did you mean `claude`? configured: local, claude); see [providers.*] in .livenote.toml
          fix*: Use provider `claude`
          fix: Use provider `local`
        live: has_errors=true
    "#]]
    .assert_eq(&render(note, Some(&["local".to_owned(), "claude".to_owned()])));
    // Without configuration the check is skipped.
    check(
        note,
        expect![[r#"
        live: has_errors=false
    "#]],
    );
}

/// `live.tools` against the MCP catalog.
#[path = "validate_tools_tests.rs"]
mod tools;

#[test]
fn last_run_failed_and_runtime_shapes() {
    check(
        "---\nlive:\n  objective: y\n  lastRunAt: yesterday\n  lastAttemptAt: 2026-05-08\n  lastRunSummary: [a]\n  lastRunError: \"provider timed out after 10m\"\n---\n",
        expect![[r#"
            2:1-2:5 warning live/last-run-failed the latest run failed: provider timed out after 10m
            4:14-4:23 warning live/runtime-field-shape `lastRunAt` is not an RFC 3339 time like "2026-05-08T15:00:01Z"; it is written by livenote and counts as absent
            5:18-5:28 warning live/runtime-field-shape `lastAttemptAt` is not an RFC 3339 time like "2026-05-08T15:00:01Z"; it is written by livenote and counts as absent
            6:19-6:22 warning live/runtime-field-shape `lastRunSummary` is written by livenote and should be text; this value is ignored
            live: has_errors=false
        "#]],
    );
}

#[test]
fn until_takes_a_date_or_an_instant() {
    check(
        "---\nlive:\n  objective: y\n  until: 2026-02-25\n---\n",
        expect![[r#"
        live: has_errors=false
    "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  until: \"2026-02-25T18:00:00+01:00\"\n---\n",
        expect![[r#"
        live: has_errors=false
    "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  until: next friday\n  active: true\n---\nlive:\n",
        expect![[r#"
        4:10-4:21 error live/invalid-until `until` must be a date like 2026-02-25 (the end of that day) or an RFC 3339 time like "2026-02-25T18:00:00Z", found "next friday"
        live: has_errors=true
    "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  until: 2026\n---\n",
        expect![[r#"
        4:10-4:14 error live/invalid-until `until` must be a date like 2026-02-25 (the end of that day) or an RFC 3339 time like "2026-02-25T18:00:00Z", found an integer
        live: has_errors=true
    "#]],
    );
}

/// `live.notify`: its four values, a misspelt one with the value it most likely meant.
#[path = "validate_notify_tests.rs"]
mod notify;

#[test]
fn legacy_track_fence() {
    check(
        "# Chicago\n\n```track\ntrackId: chicago\ninstruction: Show the time.\nschedule:\n  type: cron\n  expression: \"0 * * * *\"\n```\n",
        expect![[r#"
            3:1-3:9 hint live/legacy-track-fence a ```track fence from the older per-block model; livenote uses one `live:` block in the frontmatter
              fix*: Convert to live note
        "#]],
    );
}

#[test]
fn legacy_track_list() {
    check(
        "---\ntrack:\n  - trackId: chicago\n    instruction: Show the time.\n---\n# Chicago\n",
        expect![[r#"
            2:1-2:6 hint live/legacy-track-list a `track:` list from the older per-block model; livenote uses one `live:` block in the frontmatter
              fix*: Convert to live note
        "#]],
    );
}

#[test]
fn unicode_and_crlf_positions() {
    check(
        "\u{feff}---\r\ntitle: \"😀 日本\"\r\nlive:\r\n  objective: \"東京の天気 🌧\"\r\n  active: oui\r\n---\r\n",
        expect![[r#"
            5:11-5:14 error live/wrong-type `active` must be true or false, found the string "oui" (YAML 1.2 reads `yes`/`no` as text)
            live: has_errors=true
        "#]],
    );
}

#[test]
fn every_code_has_a_fixture_here_and_a_section_in_the_docs() {
    // The fixtures of this file and of the files split from it.
    let src = [
        include_str!("validate_tests.rs"),
        include_str!("validate_budget_tests.rs"),
        include_str!("validate_notify_tests.rs"),
        include_str!("validate_tools_tests.rs"),
        include_str!("validate_docs_tests.rs"),
        include_str!("validate_quick_fixes_tests.rs"),
        include_str!("validate_never_panics_tests.rs"),
    ]
    .concat();
    let docs = include_str!("../../../docs/diagnostics.md");
    for code in Code::ALL {
        let name = code.as_str();
        assert!(docs.contains(&format!("## `{name}`")), "docs/diagnostics.md lacks a section for {name}");
        let fixture_line = format!(" {} {name} ", "error");
        let seen =
            ["error", "warning", "hint", "info"].iter().any(|s| src.contains(&format!(" {s} {name} ")));
        assert!(seen || src.contains(&fixture_line), "no fixture asserts {name}");
    }
}

#[test]
fn a_sync_conflict_copy_is_said_on_its_live_key() {
    let note = "---\nlive:\n  objective: x\n---\n";
    let a = analyze(note, &Options::default());
    let got: Vec<String> = crate::note::conflict::diagnostics("n (conflicted copy).md", a.live.as_ref())
        .iter()
        .map(|d| format!("{:?} {} {} {}", d.range, d.severity.as_str(), d.code.as_str(), d.message))
        .collect();
    expect![[r#"
        [
            "4..8 warning live/sync-conflict-copy this file is a sync conflict copy of n.md made by Dropbox, Nextcloud or ownCloud; it never runs on its own: keep what you need in n.md and delete this file",
        ]
    "#]]
    .assert_debug_eq(&got);
    assert!(crate::note::conflict::diagnostics("n.md", a.live.as_ref()).is_empty());
}

#[test]
fn a_notes_events_are_checked_against_its_folders_sources() {
    use crate::note::sources::{SourceRef, source_diagnostics};
    let note = "---\nlive:\n  objective: x\n  sources: [mail]\n  triggers:\n    eventMatchCriteria: mail about Q3\n---\n";
    let a = analyze(note, &Options::default());
    let render = |sources: &[SourceRef]| -> Vec<String> {
        source_diagnostics(note, a.live.as_ref(), sources)
            .iter()
            .map(|d| format!("{:?} {} {} {}", d.range, d.severity.as_str(), d.code.as_str(), d.message))
            .collect()
    };
    expect![[r#"
        [
            "4..8 info live/no-event-source no source sends events here: `eventMatchCriteria` waits for events, and this folder has no `[sources.NAME]` (a feed, a calendar, a mailbox, a webhook, a program; docs/sources.md); `livenote event` can still queue one",
            "37..41 warning live/unknown-source no source named `mail` (this folder configures no source); only events queued with `livenote event --source mail` reach this note",
        ]
    "#]].assert_debug_eq(&render(&[]));
    let mail = SourceRef { name: "mail".to_owned(), kind: "imap", waiting_for_trust: true };
    assert_eq!(render(&[mail]), Vec::<String>::new());
}

#[test]
fn sources_without_criteria_is_a_warning_on_its_key() {
    let note = "---\nlive:\n  objective: x\n  sources: [mail]\n  cronExpr: \"0 9 * * *\"\n---\n";
    let a = analyze(note, &Options::default());
    let got: Vec<String> = a
        .diagnostics
        .iter()
        .map(|d| format!("{:?} {} {} {}", d.range, d.severity.as_str(), d.code.as_str(), d.message))
        .collect();
    expect![[r#"
        [
            "27..34 warning live/sources-without-criteria `sources` narrows which events reach the note, and it has no `triggers.eventMatchCriteria`: no event reaches it; add the criteria, or remove `sources`",
            "45..53 warning live/unknown-key unknown key `cronExpr` in `live`; `cronExpr` belongs in `triggers`",
        ]
    "#]].assert_debug_eq(&got);
    let listed = a.live.as_ref().and_then(|l| l.source_names());
    assert_eq!(listed, Some(vec!["mail".to_owned()]));
    let wrong = analyze("---\nlive:\n  objective: x\n  sources: mail\n---\n", &Options::default());
    assert!(wrong.diagnostics.iter().any(|d| d.code == Code::WrongType), "{:?}", wrong.diagnostics);
}

#[test]
fn instructions_too_long_covers_what_runs_do_not_get() {
    let render_file = |text: &str, max: usize| -> String {
        let idx = LineIndex::new(text);
        instructions_too_long(text, max).map_or(String::new(), |d| {
            let s = idx.position(text, d.range.start, Encoding::Scalar);
            let e = idx.position(text, d.range.end, Encoding::Scalar);
            format!(
                "{}:{}-{}:{} {} {} {}",
                s.line + 1,
                s.col + 1,
                e.line + 1,
                e.col + 1,
                d.severity.as_str(),
                d.code.as_str(),
                d.message
            )
        })
    };
    assert_eq!(render_file("héllo\n", 5), "");
    expect![[r#"1:6-2:6 warning live/instructions-too-long standing instructions of 11 characters, over the budget of 5 ([agent] instructions_max_chars): runs get only the first 5, cut with a marker"#]]
        .assert_eq(&render_file("héllo\nworld\n", 5));
}

/// docs/diagnostics.md's examples, each checked.
#[path = "validate_docs_tests.rs"]
mod docs;

#[path = "validate_never_panics_tests.rs"]
mod never_panics;

#[path = "validate_quick_fixes_tests.rs"]
mod quick_fixes_are_local;

/// `live.maxChars` and the body budget.
#[path = "validate_budget_tests.rs"]
mod budget;

#[test]
fn expired_is_an_information_at_the_instant_given() {
    let note = "---\nlive:\n  objective: y\n  until: 2026-11-24\n---\n";
    let a = analyze(note, &Options::default());
    let at = |s: &str| DateTime::parse_from_rfc3339(s).map(|t| t.to_utc()).unwrap_or_default();
    let shown: Vec<String> =
        super::super::expiry::diagnostics(note, a.live.as_ref(), at("2026-11-25T00:00:00Z"), &Utc)
            .iter()
            .map(|d| format!("{:?} {} {} {}", d.range, d.severity.as_str(), d.code.as_str(), d.message))
            .collect();
    expect![[r#"["34..44 info live/expired this note expired: `until` passed on Tue 24 Nov 2026; nothing fires on schedule or on events (a run by hand still works)"]"#]]
        .assert_eq(&format!("{shown:?}"));
    assert!(
        super::super::expiry::diagnostics(note, a.live.as_ref(), at("2026-11-24T23:59:59Z"), &Utc).is_empty()
    );
}

/// The skills of the fixtures: one of the workspace's, livenote's own.
fn skill_catalog() -> crate::note::skills::SkillCatalog {
    use crate::note::skills::{SkillCatalog, SkillInfo, Source};
    let skill = |name: &str, source| SkillInfo {
        name: name.to_owned(),
        description: format!("About {name}."),
        source,
        path: None,
    };
    SkillCatalog {
        skills: vec![skill("weekly-digest", Source::Workspace), skill("writing-live-notes", Source::BuiltIn)],
    }
}

fn render_skills(text: &str, skills: Option<&crate::note::skills::SkillCatalog>) -> String {
    let a =
        analyze(text, &Options { providers: None, mcp: None, skills, scan_body: true, max_backoff: None });
    render_diagnostics(text, &a.diagnostics)
}

fn render_diagnostics(text: &str, diagnostics: &[Diagnostic]) -> String {
    let idx = LineIndex::new(text);
    let mut out = String::new();
    for d in diagnostics {
        let s = idx.position(text, d.range.start, Encoding::Scalar);
        let e = idx.position(text, d.range.end, Encoding::Scalar);
        out.push_str(&format!(
            "{}:{}-{}:{} {} {} {}\n",
            s.line + 1,
            s.col + 1,
            e.line + 1,
            e.col + 1,
            d.severity.as_str(),
            d.code.as_str(),
            d.message
        ));
        for f in &d.fixes {
            out.push_str(&format!("  fix{}: {}\n", if f.preferred { "*" } else { "" }, f.title));
        }
    }
    out
}

#[test]
fn skills_are_names_checked_against_the_known_skills() {
    let text = "---\nlive:\n  objective: x\n  skills: [weekly-digest, weekly-digst, \"\", 3, nothing-like-it]\n---\n";
    expect![[r#"
        4:27-4:39 warning live/unknown-skill no skill named `weekly-digst` (did you mean `weekly-digest`?); skills live in the workspace's skills/ folder, ~/.config/livenote/skills/ or livenote itself
          fix*: Use skill `weekly-digest`
        4:41-4:43 error live/empty-value an entry of `skills` is empty: name a skill (`livenote skills` lists them)
        4:45-4:46 error live/wrong-type `skills` must be a skill name, as text, found an integer
        4:48-4:63 warning live/unknown-skill no skill named `nothing-like-it` (`livenote skills` lists them); skills live in the workspace's skills/ folder, ~/.config/livenote/skills/ or livenote itself
    "#]]
    .assert_eq(&render_skills(text, Some(&skill_catalog())));
    // Without the known skills (no workspace yet), only the shape is checked.
    let a = analyze(
        text,
        &Options { providers: None, mcp: None, skills: None, scan_body: true, max_backoff: None },
    );
    assert!(a.diagnostics.iter().all(|d| d.code != Code::UnknownSkill));
    let names = a.live.map(|l| l.skill_names()).unwrap_or_default();
    assert_eq!(names, ["weekly-digest", "weekly-digst", "nothing-like-it"]);
    expect![[r#"
        4:11-4:20 error live/wrong-type `skills` must be a list of skill names, like [weekly-digest], found a string
    "#]]
    .assert_eq(&render_skills("---\nlive:\n  objective: x\n  skills: one-skill\n---\n", None));
    check_fix_with_skills(
        "---\nlive:\n  objective: x\n  skills: [weekly-digst]\n---\n",
        expect![[r#"
            ---
            live:
              objective: x
              skills: [weekly-digest]
            ---
        "#]],
    );
}

fn check_fix_with_skills(text: &str, expect: Expect) {
    let skills = skill_catalog();
    let a = analyze(
        text,
        &Options { providers: None, mcp: None, skills: Some(&skills), scan_body: true, max_backoff: None },
    );
    let Some(fix) = a.diagnostics.iter().flat_map(|d| &d.fixes).find(|f| f.preferred) else {
        panic!("no preferred fix in {:#?}", a.diagnostics)
    };
    expect.assert_eq(&edit::apply(text, &fix.edits).unwrap_or_else(|e| panic!("{e}")));
}

#[test]
fn skill_files_need_name_and_description_and_a_name_of_their_own() {
    let text = "---\nname: weekly-digest\ndescription: \"\"\n---\n# Digest\n";
    expect![[r#"
        3:1-3:12 warning live/skill-missing-field a skill's `description` must be non-empty text: one line on when to use it; runs show it in the catalog
    "#]]
    .assert_eq(&render_diagnostics(text, &crate::note::skills::file_diagnostics(text, None)));
    let text = "---\nname: weekly-digest\ndescription: Sum up a week.\n---\n";
    expect![[r#"
        2:7-2:20 warning live/duplicate-skill the skill `weekly-digest` is also defined in skills/digest.md; notes and runs get only one of them (the first by path): rename one
    "#]]
    .assert_eq(&render_diagnostics(text, &crate::note::skills::file_diagnostics(text, Some("skills/digest.md"))));
}
