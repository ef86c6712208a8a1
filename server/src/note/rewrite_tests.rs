use super::*;
use crate::text::edit::apply;
use expect_test::{Expect, expect};

/// The text after the edits, with CR, BOM and the end of the text made visible so
/// snapshots are byte-exact.
fn show(text: &str, result: Result<Vec<TextEdit>, RewriteError>) -> String {
    match result {
        Ok(edits) => match apply(text, &edits) {
            Ok(out) => format!("{}<EOF>", out.replace('\r', "␍").replace('\u{feff}', "<BOM>")),
            Err(e) => panic!("edits do not apply: {e}"),
        },
        Err(e) => format!("error: {e}"),
    }
}

fn check(text: &str, result: Result<Vec<TextEdit>, RewriteError>, want: Expect) {
    want.assert_eq(&show(text, result));
}

const NOTE: &str = r#"---
title: "Chicago time"   # the user's
tags: [a, 'b c', {x: 1}]
live:
  objective: |          # required
    Show the current time in Chicago.
    One short line.

  triggers:
    cronExpr: "0 * * * *"   # hourly
    windows:
    - startTime: '09:00'
      endTime: "12:00"
  lastRunError: "boom"  # cleared on success
  # written by livenote only
'odd key': x
---

# Chicago time

3:00 PM
"#;

#[test]
fn runtime_fields_replace_in_place_and_insert_missing_in_order() {
    let fields = [
        (RuntimeField::LastAttemptAt, Some("2026-05-08T15:00:00.123Z")),
        (RuntimeField::LastRunError, None),
        (RuntimeField::LastRunId, Some("01JTX3")),
        (RuntimeField::LastRunSummary, Some("Updated \"3:00 PM\" Central.")),
    ];
    check(
        NOTE,
        set_runtime_fields(NOTE, &fields),
        expect![[r#"
                ---
                title: "Chicago time"   # the user's
                tags: [a, 'b c', {x: 1}]
                live:
                  objective: |          # required
                    Show the current time in Chicago.
                    One short line.

                  triggers:
                    cronExpr: "0 * * * *"   # hourly
                    windows:
                    - startTime: '09:00'
                      endTime: "12:00"
                  lastRunError: null  # cleared on success
                  # written by livenote only
                  lastAttemptAt: "2026-05-08T15:00:00.123Z"
                  lastRunId: "01JTX3"
                  lastRunSummary: "Updated \"3:00 PM\" Central."
                'odd key': x
                ---

                # Chicago time

                3:00 PM
                <EOF>"#]],
    );
}

#[test]
fn runtime_field_after_a_block_scalar_and_at_deeper_indentation() {
    let text = "---\nlive:\n    objective: >-\n      folded\n      text\n\n# top comment\nz: 1\n---\nbody";
    check(
        text,
        set_runtime_fields(text, &[(RuntimeField::LastRunAt, Some("t"))]),
        expect![[r#"
                ---
                live:
                    objective: >-
                      folded
                      text
                    lastRunAt: "t"

                # top comment
                z: 1
                ---
                body<EOF>"#]],
    );
    // `|+` keeps its trailing blank lines: a key inserted before them would change it.
    let text = "---\nlive:\n  objective: |+\n    keep\n\n\nz: 1\n---\n";
    check(
        text,
        set_runtime_fields(text, &[(RuntimeField::LastRunAt, None)]),
        expect![[r#"
                ---
                live:
                  objective: |+
                    keep


                  lastRunAt: null
                z: 1
                ---
                <EOF>"#]],
    );
}

#[test]
fn runtime_field_multi_line_values_are_replaced_whole() {
    let text = "---\nlive:\n  objective: x\n  lastRunSummary: |  # from the run\n    two\n    lines\n  lastRunError: \"a\n    b\"\n  lastRunId:\n  lastRunAt: # none yet\nafter: 1\n---\n";
    let fields = [
        (RuntimeField::LastRunSummary, Some("one")),
        (RuntimeField::LastRunError, Some("e")),
        (RuntimeField::LastRunId, Some("id")),
        (RuntimeField::LastRunAt, Some("at")),
    ];
    check(
        text,
        set_runtime_fields(text, &fields),
        expect![[r#"
                ---
                live:
                  objective: x
                  lastRunSummary: "one"  # from the run
                  lastRunError: "e"
                  lastRunId: "id"
                  lastRunAt: "at" # none yet
                after: 1
                ---
                <EOF>"#]],
    );
}

#[test]
fn runtime_strings_are_escaped_on_one_line() {
    let text = "---\nlive:\n  objective: x\n---\n";
    let value = "a \"q\" \\ back\nnew\ttab \u{7} bell \u{85}\u{2028} é 漢字 🎉";
    check(
        text,
        set_runtime_fields(text, &[(RuntimeField::LastRunError, Some(value))]),
        expect![[r#"
                ---
                live:
                  objective: x
                  lastRunError: "a \"q\" \\ back\nnew\ttab \x07 bell \x85\u2028 é 漢字 🎉"
                ---
                <EOF>"#]],
    );
    let out = apply(
        text,
        &set_runtime_fields(text, &[(RuntimeField::LastRunError, Some(value))]).unwrap_or_default(),
    );
    let Ok(out) = out else { panic!("edits do not apply") };
    let Some(fm) = frontmatter::locate(&out) else { panic!("no frontmatter") };
    let Ok(Some(root)) = yaml::parse(&out, fm.content) else { panic!("does not parse") };
    let got = root.get("live").and_then(|l| l.value.get("lastRunError")).and_then(|e| e.value.as_str());
    assert_eq!(got, Some(value));
}

/// Found by the `edits` fuzz target: YAML breaks lines at a lone `\r`, the line-wise
/// edits do not, so "Make passive" removed `live: \r:` as one line and took the YAML
/// entry after the `\r` (a `null` key) with it. Such a frontmatter is now refused.
#[test]
fn a_lone_carriage_return_in_the_frontmatter_is_refused() {
    let text = "---\nt:\nlive: \r:\n---";
    assert_eq!(make_passive(text), Err(RewriteError::LoneCarriageReturn));
    let text = "---\nlive:\n  objective: x\rfoo: 1\n---\nbody\r\n";
    assert_eq!(set_active(text, false), Err(RewriteError::LoneCarriageReturn));
    assert_eq!(set_runtime_fields(text, &[]), Err(RewriteError::LoneCarriageReturn));
    assert_eq!(make_live("---\na: \"\r\"\n---\n", None), Err(RewriteError::LoneCarriageReturn));
    // CRLF line endings, and a lone `\r` in the body, are fine.
    let text = "---\r\nlive:\r\n  objective: x\r\n---\r\nbody\rmore\n";
    assert!(set_active(text, false).is_ok());
}

/// Found by the `edits` fuzz target: a root mapping indented as a whole (` a: 1`) is valid
/// YAML, and "Make live" appended `live:` at column 0, which made it invalid.
#[test]
fn an_indented_root_mapping_is_not_edited() {
    let text = "---\n :\n---";
    assert_eq!(make_live(text, None), Err(RewriteError::FrontmatterNotMapping));
    let text = "---\n  title: x\n  live:\n    objective: y\n---\n";
    assert_eq!(make_live(text, None), Err(RewriteError::FrontmatterNotMapping));
    assert_eq!(set_active(text, false), Err(RewriteError::FrontmatterNotMapping));
    // Indented lines that belong to a top-level key are fine.
    let text = "---\ntags:\n  - a\nlive:\n  objective: y\n---\n";
    assert!(set_active(text, false).is_ok());
}

/// Found by the `edits` fuzz target: in `t: [a,'` + `live: o']` the second line is part
/// of a quoted string, but the outline read it as the `live:` key, and "Make passive"
/// deleted it from the string (and broke the YAML). Likewise `t: [a` + `]`: replacing the
/// value of `t` left the `]` behind.
#[test]
fn a_key_line_inside_a_value_spanning_lines_is_not_edited() {
    let text = "---\nt: [a\n]\n---";
    assert_eq!(replace_value(text, 4, "1"), Err(RewriteError::UnclearLayout));
    // The usual multi-line flow list, indented under its key, is fine.
    let text = "---\nt: [a,\n  b]\nlive:\n  objective: x\n---";
    assert!(replace_value(text, 4, "1").is_ok() && set_active(text, false).is_ok());
    let text = "---\nt: [a,'\nlive: o']\n---";
    assert_eq!(make_passive(text), Err(RewriteError::UnclearLayout));
    let text = "---\nlive:\n  objective: x\n  triggers: [a, \"b\n  active: true\"]\n---\n";
    assert_eq!(set_active(text, false), Err(RewriteError::UnclearLayout));
    // Half-typed YAML is still edited line-wise.
    let text = "---\nlive:\n  objective: x\n  triggers: [\n---\n";
    assert!(set_active(text, false).is_ok());
}

/// Found by the `edits` fuzz target: `active: \u{c}` (a form feed) read as a key with no
/// value, since Rust trims Unicode white space; YAML reads the form feed as text, so
/// "Resume" wrote `active: true\u{c}`, the string "true\u{c}".
#[test]
fn only_spaces_and_tabs_are_trimmed_around_values() {
    let text = "---\nlive:\n active: \u{c}\n---\n";
    let out = apply(text, &set_active(text, true).unwrap_or_default()).unwrap_or_default();
    assert_eq!(out, "---\nlive:\n active: true\n---\n");
    let text = "---\nlive:\n  objective: x\n  lastRunId: a\u{a0}\u{c} # c\n---\n";
    let fields = [(RuntimeField::LastRunId, Some("b"))];
    let out = apply(text, &set_runtime_fields(text, &fields).unwrap_or_default()).unwrap_or_default();
    assert_eq!(out, "---\nlive:\n  objective: x\n  lastRunId: \"b\" # c\n---\n");
}

#[test]
fn runtime_fields_with_crlf_bom_and_an_empty_block() {
    let text = "\u{feff}---\r\ntitle: x\r\nlive: # empty for now\r\n---\r\nbody\r\n";
    check(
        text,
        set_runtime_fields(
            text,
            &[(RuntimeField::LastAttemptAt, Some("t")), (RuntimeField::LastRunId, Some("i"))],
        ),
        expect![[r#"
                <BOM>---␍
                title: x␍
                live: # empty for now␍
                  lastAttemptAt: "t"␍
                  lastRunId: "i"␍
                ---␍
                body␍
                <EOF>"#]],
    );
    // A repeated field takes its last value.
    let text = "---\nlive:\n  objective: x\n---";
    check(
        text,
        set_runtime_fields(
            text,
            &[(RuntimeField::LastRunAt, Some("a")), (RuntimeField::LastRunAt, Some("b"))],
        ),
        expect![[r#"
                ---
                live:
                  objective: x
                  lastRunAt: "b"
                ---<EOF>"#]],
    );
}

#[test]
fn errors_say_what_is_wrong() {
    let f = [(RuntimeField::LastRunAt, Some("t"))];
    let cases = [
        "# no frontmatter\n",
        "---\nlive:\n  objective: x\n",
        "---\ntitle: x\n---\n",
        "---\nlive: {objective: x}\n---\n",
        "---\nlive:\n  {objective: x}\n---\n",
        "---\nlive: yes\n---\n",
        "---\nlive:\n- a\n---\n",
        "---\nlive:\n  objective: x\nlive:\n  objective: y\n---\n",
        "---\nlive:\n  objective: x\n  lastRunAt: a\n  lastRunAt: b\n---\n",
        "---\n- a\n- b\n---\n",
        "---\n{live: {objective: x}}\n---\n",
    ];
    let got: Vec<String> = cases.iter().map(|t| show(t, set_runtime_fields(t, &f))).collect();
    expect![[r#"
            [
                "error: this note has no frontmatter",
                "error: the frontmatter has no closing `---` line",
                "error: this note is not live (it has no `live:` block)",
                "error: the `live:` block is written in flow style (`{...}`); write it as indented `key: value` lines to edit it",
                "error: the `live:` block is written in flow style (`{...}`); write it as indented `key: value` lines to edit it",
                "error: `live:` is not a mapping of `key: value` lines",
                "error: `live:` is not a mapping of `key: value` lines",
                "error: the frontmatter has more than one `live:` block; remove the extra one first",
                "error: `lastRunAt` appears more than once in the `live:` block; remove the extra one first",
                "error: the frontmatter is not a list of `key: value` lines, so it cannot be edited safely",
                "error: the frontmatter is not a list of `key: value` lines, so it cannot be edited safely",
            ]
        "#]]
        .assert_debug_eq(&got);
}

#[test]
fn make_live_without_frontmatter() {
    let text = "# Groceries\n\n- milk\n";
    check(
        text,
        make_live(text, None),
        expect![[r#"
                ---
                live:
                  objective: 'Keep this note about "Groceries" up to date.'
                ---
                # Groceries

                - milk
                <EOF>"#]],
    );
    let text = "\u{feff}no title, no newline";
    check(
        text,
        make_live(text, None),
        expect![[r#"
                <BOM>---
                live:
                  objective: "Keep this note up to date with the latest information on its topic."
                ---
                no title, no newline<EOF>"#]],
    );
    let text = "# Bob's \"notes\"\r\nbody\r\n";
    check(
        text,
        make_live(text, None),
        expect![[r#"
                ---␍
                live:␍
                  objective: "Keep this note about \"Bob's \"notes\"\" up to date."␍
                ---␍
                # Bob's "notes"␍
                body␍
                <EOF>"#]],
    );
    check(
        "",
        make_live("", Some("Track the weather.\nOne line per day.\n")),
        expect![[r#"
                ---
                live:
                  objective: |
                    Track the weather.
                    One line per day.
                ---
                <EOF>"#]],
    );
}

#[test]
fn make_live_with_frontmatter() {
    let text =
        "---\ntitle: 'x' # keep\ntags: [a, b]\nnotes: |\n  text\n# trailing comment\n---\n# Ünïcode ✓\n";
    check(
        text,
        make_live(text, None),
        expect![[r#"
                ---
                title: 'x' # keep
                tags: [a, b]
                notes: |
                  text
                # trailing comment
                live:
                  objective: 'Keep this note about "Ünïcode ✓" up to date.'
                ---
                # Ünïcode ✓
                <EOF>"#]],
    );
    let text = "---\r\n---\r\nbody";
    check(
        text,
        make_live(text, Some("  padded\tline ")),
        expect![[r#"
                ---␍
                live:␍
                  objective: "  padded\tline "␍
                ---␍
                body<EOF>"#]],
    );
    let text = "---\na: 1\n...";
    check(
        text,
        make_live(text, Some("two\nlines")),
        expect![[r#"
                ---
                a: 1
                live:
                  objective: |-
                    two
                    lines
                ...<EOF>"#]],
    );
    let errors: Vec<String> = [
        "---\nlive:\n  objective: x\n---\n",
        "---\n\"live\": {}\n---\n",
        "---\na: [1\n---\n",
        "---\njust text\n---\n",
        "---\n",
    ]
    .iter()
    .map(|t| show(t, make_live(t, None)))
    .collect();
    expect![[r#"
            [
                "error: this note is already live",
                "error: this note is already live",
                "error: the frontmatter is not valid YAML (while parsing a flow sequence, expected ',' or ']'); fix it first",
                "error: the frontmatter is not a list of `key: value` lines, so it cannot be edited safely",
                "error: the frontmatter has no closing `---` line",
            ]
        "#]]
        .assert_debug_eq(&errors);
}

#[test]
fn set_active_replaces_or_inserts_after_the_objective() {
    let text = "---\nlive:\n  objective: x\n  active: true   # on\n---\n";
    check(
        text,
        set_active(text, false),
        expect![[r#"
                ---
                live:
                  objective: x
                  active: false   # on
                ---
                <EOF>"#]],
    );
    check(
        NOTE,
        set_active(NOTE, false),
        expect![[r#"
                ---
                title: "Chicago time"   # the user's
                tags: [a, 'b c', {x: 1}]
                live:
                  objective: |          # required
                    Show the current time in Chicago.
                    One short line.
                  active: false

                  triggers:
                    cronExpr: "0 * * * *"   # hourly
                    windows:
                    - startTime: '09:00'
                      endTime: "12:00"
                  lastRunError: "boom"  # cleared on success
                  # written by livenote only
                'odd key': x
                ---

                # Chicago time

                3:00 PM
                <EOF>"#]],
    );
    let text = "---\r\nlive:\r\n    triggers:\r\n      cronExpr: '@daily'\r\n---\r\n";
    check(
        text,
        set_active(text, true),
        expect![[r#"
                ---␍
                live:␍
                    active: true␍
                    triggers:␍
                      cronExpr: '@daily'␍
                ---␍
                <EOF>"#]],
    );
}

#[test]
fn make_passive_removes_the_block_and_its_indented_comments() {
    check(
        NOTE,
        make_passive(NOTE),
        expect![[r#"
                ---
                title: "Chicago time"   # the user's
                tags: [a, 'b c', {x: 1}]
                'odd key': x
                ---

                # Chicago time

                3:00 PM
                <EOF>"#]],
    );
    let text = "---\nlive: {objective: x}\n\n# about a\na: 1\n---\n";
    check(
        text,
        make_passive(text),
        expect![[r#"
                ---

                # about a
                a: 1
                ---
                <EOF>"#]],
    );
}

#[test]
fn make_passive_drops_a_frontmatter_left_empty() {
    let text = "\u{feff}---\r\n\r\nlive:\r\n  objective: x\r\n\r\n---\r\n# Title\r\n";
    check(
        text,
        make_passive(text),
        expect![[r#"
                <BOM># Title␍
                <EOF>"#]],
    );
    let text = "---\nlive:\n  objective: x\n---";
    check(text, make_passive(text), expect![[r#"<EOF>"#]]);
    // A user's comment is never deleted, so the frontmatter stays for it.
    let text = "---\n# mine\nlive:\n  objective: x\n---\nbody";
    check(
        text,
        make_passive(text),
        expect![[r#"
                ---
                # mine
                ---
                body<EOF>"#]],
    );
    let text = "---\ntitle: x\n---\n";
    check(text, make_passive(text), expect![[r#"error: this note is not live (it has no `live:` block)"#]]);
}

#[test]
fn primitives() {
    let text = "---\nlive:\n  objective: x\n  triggers:\n    cron: \"0 9 * * *\"  # daily\n    windows:\n    - startTime: 9:00\n      endTime: '12:00'\n    once: {runAt: x}\n---\n";
    let at = |s: &str| text.find(s).unwrap_or(usize::MAX);
    check(
        text,
        replace_value(text, at("startTime"), "\"09:00\""),
        expect![[r#"
                ---
                live:
                  objective: x
                  triggers:
                    cron: "0 9 * * *"  # daily
                    windows:
                    - startTime: "09:00"
                      endTime: '12:00'
                    once: {runAt: x}
                ---
                <EOF>"#]],
    );
    let key = at("cron")..at("cron") + 4;
    check(
        text,
        rename_key(text, key.clone(), "cronExpr"),
        expect![[r#"
                ---
                live:
                  objective: x
                  triggers:
                    cronExpr: "0 9 * * *"  # daily
                    windows:
                    - startTime: 9:00
                      endTime: '12:00'
                    once: {runAt: x}
                ---
                <EOF>"#]],
    );
    check(
        text,
        remove_entry(text, at("once") + 2),
        expect![[r#"
                ---
                live:
                  objective: x
                  triggers:
                    cron: "0 9 * * *"  # daily
                    windows:
                    - startTime: 9:00
                      endTime: '12:00'
                ---
                <EOF>"#]],
    );
    check(
        text,
        remove_entry(text, at("windows")),
        expect![[r#"
                ---
                live:
                  objective: x
                  triggers:
                    cron: "0 9 * * *"  # daily
                    once: {runAt: x}
                ---
                <EOF>"#]],
    );
    let errors = [
        show(text, remove_entry(text, at("startTime"))),
        show(text, replace_value(text, at("startTime"), "a\nb")),
        show(text, replace_value(text, 0, "x")),
        show(text, rename_key(text, key.start..key.end + 1, "x")),
        show(text, rename_key(text, key, "bad\nname")),
    ];
    expect![[r#"
            [
                "error: the first key of a list item cannot be removed on its own",
                "error: a value written in place must be a single line of YAML",
                "error: there is no `key: value` line at this position in the frontmatter",
                "error: there is no `key: value` line at this position in the frontmatter",
                "error: `bad\nname` cannot be used as a key name",
            ]
        "#]]
    .assert_debug_eq(&errors);
    let text = "---\n'a b': 1\n\"c\": 2\n---\n";
    let mut edits = Vec::new();
    for (old, new) in [("'a b'", "x'y"), ("\"c\"", "true")] {
        let start = text.find(old).unwrap_or(0);
        let Ok(e) = rename_key(text, start..start + old.len(), new) else { panic!("cannot rename {old}") };
        edits.extend(e);
    }
    check(
        text,
        Ok(edits),
        expect![[r#"
                ---
                "x'y": 1
                "true": 2
                ---
                <EOF>"#]],
    );
}

fn first_fence(text: &str) -> TrackFence {
    let body = frontmatter::locate(text).map_or(0, |fm| fm.body_start());
    let Some(f) = frontmatter::track_fences(text, body).into_iter().next() else { panic!("no fence") };
    f
}

#[test]
fn convert_the_seed_example() {
    let text = "---\ntags: [time]\n---\n# Chicago\n\n```track\ntrackId: chicago-time\ninstruction: Show the current time in Chicago, IL in 12-hour format.\nactive: true\nschedule:\n  type: cron\n  expression: \"0 * * * *\"\nlastRunAt: 2026-04-14T13:00:02Z\n```\n\n<!--track-target:chicago-time-->\n2:30 PM, Central Time\n<!--/track-target:chicago-time-->\n\nMore text.\n";
    check(
        text,
        convert_track_fence(text, &first_fence(text)),
        expect![[r#"
                ---
                tags: [time]
                live:
                  objective: "Show the current time in Chicago, IL in 12-hour format."
                  triggers:
                    cronExpr: "0 * * * *"
                  lastRunAt: "2026-04-14T13:00:02Z"
                ---
                # Chicago

                2:30 PM, Central Time

                More text.
                <EOF>"#]],
    );
}

#[test]
fn convert_windows_once_and_crlf() {
    let text = "Intro\r\n```track\r\ntrackId: brief\r\ninstruction: |\r\n  Morning brief.\r\n  Keep it short.\r\nactive: false\r\nschedule: {type: window, cron: \"0 * * * *\", startTime: \"09:00\", endTime: '12:00'}\r\neventMatchCriteria: Emails about Q3\r\n```\r\n<!-- track-target:brief -->\r\n<!-- /track-target:brief -->\r\n";
    check(
        text,
        convert_track_fence(text, &first_fence(text)),
        expect![[r#"
                ---␍
                live:␍
                  objective: |␍
                    Morning brief.␍
                    Keep it short.␍
                  active: false␍
                  triggers:␍
                    windows:␍
                      - startTime: "09:00"␍
                        endTime: "12:00"␍
                    eventMatchCriteria: "Emails about Q3"␍
                  # from track "brief": its window's cron "0 * * * *" was dropped; a window now fires at most once a day␍
                ---␍
                Intro␍
                <EOF>"#]],
    );
    let text = "```track\ninstruction: Ping\nschedule:\n  type: once\n  runAt: \"2026-04-14T09:00:00\"\n```\n\n# T\n";
    check(
        text,
        convert_track_fence(text, &first_fence(text)),
        expect![[r#"
                ---
                live:
                  objective: "Ping"
                  # from the track block: its one-time schedule (runAt 2026-04-14T09:00:00) was dropped; live notes have no one-time trigger
                ---
                # T
                <EOF>"#]],
    );
}

#[test]
fn convert_refuses_what_it_cannot_do() {
    let live = "---\nlive:\n  objective: x\n---\n```track\ninstruction: y\n```\n";
    let bad = "```track\ninstruction: [unclosed\n```\n";
    let list = "```track\n- a\n```\n";
    let unclosed = "```track\ninstruction: y\n";
    let got: Vec<String> = [live, bad, list, unclosed]
        .iter()
        .map(|t| show(t, convert_track_fence(t, &first_fence(t))))
        .collect();
    expect![[r#"
            [
                "error: this note is already live",
                "error: the track block cannot be converted: its YAML does not parse (while parsing a flow sequence, expected ',' or ']')",
                "error: the track block cannot be converted: its YAML is not a mapping",
                "error: the track block cannot be converted: the ```track fence is not closed",
            ]
        "#]]
        .assert_debug_eq(&got);
    let fence = TrackFence { range: 5..500, open_line: 0..1, inner: 0..1 };
    assert_eq!(convert_track_fence(bad, &fence), Err(RewriteError::BadRange));
}

/// Properties over generated notes: random user keys, comments, quoting and block styles,
/// key orders, indentation, CRLF or LF, BOM, random bodies.
#[path = "rewrite_props_tests.rs"]
mod props;

/// Found by the `edits` fuzz target (see outline.rs, `only_spaces_and_tabs_end_a_key`): a
/// vertical tab does not end a key, so `live\u{b}:` is no live block to rewrite.
#[test]
fn a_vertical_tab_ends_no_key() {
    let note = "---\nlive\u{b}:\n---";
    assert!(set_runtime_fields(note, &[]).is_err());
}

/// Found by the `edits` fuzz target (see outline.rs, `a_tab_before_a_comment_keeps_it_a_comment`):
/// "Resume" inserts `active: true` after the entry, not between `objective:` and its value.
#[test]
fn a_tab_before_a_comment_keeps_resume_right() {
    let note = "---\nlive:\n objective:\n \t# \n  c\n---";
    let edits = set_active(note, true).unwrap_or_default();
    let out = crate::text::edit::apply(note, &edits).unwrap_or_default();
    assert_eq!(out, "---\nlive:\n objective:\n \t# \n  c\n active: true\n---");
}
