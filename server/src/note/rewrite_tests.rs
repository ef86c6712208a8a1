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
mod props {
    use super::*;
    use crate::note::outline::Outline;
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    /// A YAML value without positions, to compare what a note means before and after.
    #[derive(Debug, Clone, PartialEq)]
    enum V {
        Null,
        Bool(bool),
        Int(i64),
        Float(String),
        Str(String),
        Seq(Vec<V>),
        Map(Vec<(String, V)>),
        Bad,
    }

    fn v(n: &Node) -> V {
        match &n.kind {
            Kind::Map(es) => V::Map(es.iter().map(|e| (e.key.clone(), v(&e.value))).collect()),
            Kind::Seq(xs) => V::Seq(xs.iter().map(v).collect()),
            Kind::Scalar(Scalar::Null) => V::Null,
            Kind::Scalar(Scalar::Bool(b)) => V::Bool(*b),
            Kind::Scalar(Scalar::Int(i)) => V::Int(*i),
            Kind::Scalar(Scalar::Float(f)) => V::Float(f.to_string()),
            Kind::Scalar(Scalar::Str(s)) => V::Str(s.clone()),
            Kind::Bad => V::Bad,
        }
    }

    type Map = Vec<(String, V)>;

    fn fail(msg: impl std::fmt::Display) -> TestCaseError {
        TestCaseError::fail(msg.to_string())
    }

    /// The frontmatter's top-level mapping (empty without frontmatter).
    fn parsed(text: &str) -> Result<Map, TestCaseError> {
        let Some(fm) = frontmatter::locate(text) else { return Ok(Vec::new()) };
        match yaml::parse(text, fm.content) {
            Ok(None) => Ok(Vec::new()),
            Ok(Some(root)) => match v(&root) {
                V::Map(m) => Ok(m),
                V::Null => Ok(Vec::new()),
                other => Err(fail(format!("root is {other:?} in {text:?}"))),
            },
            Err(e) => Err(fail(format!("{} in {text:?}", e.message))),
        }
    }

    fn get<'m>(m: &'m Map, k: &str) -> Option<&'m V> {
        m.iter().find(|(n, _)| n == k).map(|(_, v)| v)
    }

    fn without(m: &Map, k: &str) -> Map {
        m.iter().filter(|(n, _)| n != k).cloned().collect()
    }

    fn live_of(m: &Map) -> Result<Map, TestCaseError> {
        match get(m, "live") {
            Some(V::Map(l)) => Ok(l.clone()),
            Some(V::Null) => Ok(Vec::new()),
            other => Err(fail(format!("live is {other:?}"))),
        }
    }

    fn body(text: &str) -> &str {
        let start = frontmatter::locate(text).map_or(frontmatter::bom_len(text), |fm| fm.body_start());
        &text[start..]
    }

    fn edited(text: &str, edits: &[TextEdit]) -> Result<String, TestCaseError> {
        apply(text, edits).map_err(fail)
    }

    /// Whether `want` appears, line by line and byte for byte, in order among `out`'s lines.
    fn lines_in_order(out: &str, want: &[String]) -> bool {
        let mut it = want.iter().peekable();
        for line in out.split_inclusive('\n') {
            if it.peek().is_some_and(|w| w.as_str() == line) {
                it.next();
            }
        }
        it.peek().is_none()
    }

    /// Every line ending in the frontmatter is CRLF, or every one LF.
    fn endings_ok(out: &str, crlf: bool) -> bool {
        let Some(fm) = frontmatter::locate(out) else { return true };
        let fm_text = &out[fm.open.start..fm.body_start()];
        fm_text.match_indices('\n').all(|(i, _)| fm_text[..i].ends_with('\r') == crlf)
    }

    /// Strings with quotes, backslashes, controls, separators and non-ASCII text.
    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[\\x00-\\x20\\x7f-\\u{a0}\\u{2028}\\u{2029}\\u{feff}\"'\\\\a-zé漢🎉: #|>{}\\[\\]-]{0,24}",
        ]
    }

    #[derive(Debug, Clone)]
    struct Child {
        lines: Vec<String>,
        /// Lines no runtime or active edit may change.
        protected: bool,
        /// A comment on a single-line value, which replacing the value keeps.
        comment: Option<String>,
    }

    #[derive(Debug, Clone)]
    struct Note {
        text: String,
        crlf: bool,
        /// Lines outside `live:` (with their endings), in order.
        outside: Vec<String>,
        /// Lines of `live:` other than runtime fields and `active`, in order.
        inside: Vec<String>,
        comments: Vec<String>,
        has_live: bool,
        /// The frontmatter has no non-blank line besides the `live:` block.
        only_live: bool,
    }

    fn user_entry(i: usize, kind: u8, w: &str) -> Vec<String> {
        let k = format!("user{i}");
        match kind {
            0 => vec![format!("{k}: {w}")],
            1 => vec![format!("{k}: 'it''s {w}' # a comment")],
            2 => vec![format!("\"{k}\": \"double \\\"q\\\" {w}\"")],
            3 => vec![format!("{k}: [a, \"b c\", {{x: 1}}]")],
            4 => vec![
                format!("{k}:"),
                "  nested: 1".into(),
                "  other: 'x'  # c".into(),
                "  list:".into(),
                "  - a".into(),
                "  - b: 2".into(),
            ],
            5 => vec![format!("{k}: |"), format!("  {w}"), "  line: two # not a comment".into()],
            6 => vec!["# a user comment ünïcode".into()],
            7 => vec![String::new()],
            8 => vec![format!("{k}: {{a: 1, b: [2, 3]}}")],
            9 => vec![format!("{k}:"), "- x".into(), format!("- {w}")],
            10 => vec![format!("{k}: >-"), format!("  {w}"), String::new(), "  folded".into()],
            11 => vec![format!("{k}: 2026-05-01  # a date, read as a string")],
            _ => vec![format!("{k}: ~")],
        }
    }

    fn live_children() -> impl Strategy<Value = Vec<Child>> {
        (
            prop_oneof![Just(2usize), Just(4usize)],
            proptest::option::of(0u8..7),
            proptest::option::of((any::<bool>(), any::<bool>())),
            proptest::option::of(0u8..3),
            (any::<bool>(), any::<bool>(), any::<bool>()),
            proptest::sample::subsequence(RuntimeField::ALL.to_vec(), 0..=5),
            proptest::collection::vec(0u8..8, 5),
        )
            .prop_flat_map(|(ci, obj, active, trig, (provider, comment, blank), fields, forms)| {
                let s = " ".repeat(ci);
                let c = " ".repeat(ci + 2);
                let keep = |lines: Vec<String>| Child { lines, protected: true, comment: None };
                let mut out = Vec::new();
                if let Some(style) = obj {
                    out.push(keep(match style {
                        0 => vec![format!("{s}objective: Keep it short")],
                        1 => vec![format!("{s}objective: \"Quoted \\\"x\\\" é\"  # why")],
                        2 => vec![format!("{s}objective: 'single ''q'''")],
                        3 => {
                            vec![format!("{s}objective: |"), format!("{c}line one"), format!("{c}line: two")]
                        }
                        4 => vec![
                            format!("{s}objective: >"),
                            format!("{c}folded one"),
                            String::new(),
                            format!("{c}two"),
                        ],
                        5 => vec![format!("{s}objective: |+"), format!("{c}keep"), String::new()],
                        _ => vec![format!("{s}objective:"), format!("{c}plain multi"), format!("{c}line")],
                    }));
                }
                if let Some((on, commented)) = active {
                    let comment = commented.then(|| "# paused?".to_owned());
                    let tail = comment.as_ref().map(|c| format!("  {c}")).unwrap_or_default();
                    out.push(Child {
                        lines: vec![format!("{s}active: {on}{tail}")],
                        protected: false,
                        comment,
                    });
                }
                if let Some(t) = trig {
                    out.push(keep(match t {
                        0 => vec![
                            format!("{s}triggers:"),
                            format!("{s}  cronExpr: \"0 * * * *\"  # hourly"),
                            format!("{s}  windows:"),
                            format!("{s}  - startTime: \"09:00\""),
                            format!("{s}    endTime: '12:00'"),
                            format!("{s}  eventMatchCriteria: Emails about Q3"),
                        ],
                        1 => vec![
                            format!("{s}triggers:"),
                            format!("{s}  windows:"),
                            format!("{s}    - {{startTime: \"09:00\", endTime: \"10:00\"}}"),
                            format!("{s}    - startTime: '13:00'"),
                            format!("{s}      endTime: \"14:00\""),
                        ],
                        _ => vec![format!("{s}triggers: {{cronExpr: \"*/30 * * * *\"}}")],
                    }));
                }
                if provider {
                    out.push(keep(vec![format!("{s}provider: openai")]));
                }
                if comment {
                    out.push(keep(vec![format!("{s}# written by livenote only:")]));
                }
                if blank {
                    out.push(keep(vec![String::new()]));
                }
                for (f, form) in fields.into_iter().zip(forms) {
                    let k = f.key();
                    let (lines, comment) = match form {
                        0 => (vec![format!("{s}{k}: null")], None),
                        1 => (vec![format!("{s}{k}: \"2026-05-08T15:00:00.123Z\"")], None),
                        2 => (
                            vec![format!("{s}{k}: plain text value  # note-{k}")],
                            Some(format!("# note-{k}")),
                        ),
                        3 => (vec![format!("{s}{k}: 'single'")], None),
                        4 => (vec![format!("{s}{k}: |-"), format!("{c}multi"), format!("{c}line")], None),
                        5 => (vec![format!("{s}{k}: \"multi"), format!("{c}line quoted\"")], None),
                        6 => (vec![format!("{s}{k}:")], None),
                        _ => (vec![format!("{s}{k}: ~ # note2-{k}")], Some(format!("# note2-{k}"))),
                    };
                    out.push(Child { lines, protected: false, comment });
                }
                Just(out).prop_shuffle()
            })
    }

    fn note() -> impl Strategy<Value = Note> {
        (
            any::<bool>(),
            any::<bool>(),
            proptest::collection::vec((0u8..13, "[a-z][a-zé漢 ]{0,8}[a-z]"), 0..5),
            proptest::option::of((live_children(), any::<usize>())),
            prop_oneof![Just("---"), Just("...")],
            proptest::collection::vec(
                prop_oneof![
                    "[a-z#é\\- ]{0,10}",
                    Just("---".to_owned()),
                    Just("# Title é".to_owned()),
                    Just("```".to_owned())
                ],
                0..5,
            ),
            any::<bool>(),
        )
            .prop_map(|(crlf, bom, users, live, close, body, final_nl)| {
                let nl = if crlf { "\r\n" } else { "\n" };
                let mut n = Note {
                    text: String::new(),
                    crlf,
                    outside: Vec::new(),
                    inside: Vec::new(),
                    comments: Vec::new(),
                    has_live: live.is_some(),
                    only_live: users.iter().all(|(k, _)| *k == 7),
                };
                if bom {
                    n.text.push('\u{feff}');
                }
                n.text.push_str("---");
                n.text.push_str(nl);
                let mut segments: Vec<Option<Vec<String>>> =
                    users.iter().enumerate().map(|(i, (k, w))| Some(user_entry(i, *k, w))).collect();
                let mut children = Vec::new();
                if let Some((c, at)) = live {
                    segments.insert(at % (segments.len() + 1), None);
                    children = c;
                }
                for seg in segments {
                    match seg {
                        Some(lines) => {
                            for l in lines {
                                let l = format!("{l}{nl}");
                                n.text.push_str(&l);
                                n.outside.push(l);
                            }
                        }
                        None => {
                            let l = format!("live:{nl}");
                            n.text.push_str(&l);
                            n.inside.push(l);
                            for c in &children {
                                for l in &c.lines {
                                    let l = format!("{l}{nl}");
                                    n.text.push_str(&l);
                                    if c.protected {
                                        n.inside.push(l);
                                    }
                                }
                                n.comments.extend(c.comment.clone());
                            }
                        }
                    }
                }
                n.text.push_str(close);
                if !body.is_empty() || final_nl {
                    n.text.push_str(nl);
                }
                n.text.push_str(&body.join(nl));
                if final_nl && !body.is_empty() {
                    n.text.push_str(nl);
                }
                n
            })
    }

    /// Where the `live:` block of a generated note starts and ends.
    fn live_span(text: &str) -> Result<Range<usize>, TestCaseError> {
        let doc = Doc::open(text).map_err(fail)?;
        let live = doc.live_block().map_err(fail)?;
        Ok(doc.outline.lines[live.line].full.start..live.insert_at)
    }

    fn check_common(note: &Note, out: &str, inside_too: bool) -> Result<(), TestCaseError> {
        prop_assert_eq!(body(out), body(&note.text));
        // Blank lines go with a frontmatter that "Make passive" empties.
        let emptied = frontmatter::locate(out).is_none_or(|fm| fm.content.is_empty());
        prop_assert!(
            (emptied && note.only_live) || lines_in_order(out, &note.outside),
            "user lines changed:\n{}",
            out
        );
        if inside_too {
            prop_assert!(lines_in_order(out, &note.inside), "block lines changed:\n{}", out);
            for c in &note.comments {
                prop_assert!(out.contains(c.as_str()), "comment {} lost:\n{}", c, out);
            }
        }
        prop_assert!(endings_ok(out, note.crlf), "line endings changed:\n{:?}", out);
        Ok(())
    }

    fn window() -> V {
        V::Seq(vec![V::Map(vec![
            ("startTime".into(), V::Str("09:00".into())),
            ("endTime".into(), V::Str("11:30".into())),
        ])])
    }

    proptest! {
        #[test]
        fn runtime_fields_are_written_and_nothing_else_changes(
            note in note(),
            fields in proptest::collection::vec(
                (proptest::sample::select(RuntimeField::ALL.to_vec()), proptest::option::of(any_text())),
                0..6,
            ),
        ) {
            let before = parsed(&note.text)?;
            let asked: Vec<(RuntimeField, Option<&str>)> =
                fields.iter().map(|(f, v)| (*f, v.as_deref())).collect();
            let result = set_runtime_fields(&note.text, &asked);
            if !note.has_live {
                prop_assert_eq!(result, Err(RewriteError::NotLive));
                return Ok(());
            }
            let edits = result.map_err(fail)?;
            let span = live_span(&note.text)?;
            for e in &edits {
                prop_assert!(span.start <= e.range.start && e.range.end <= span.end, "edit {:?} outside {:?}", e, span);
            }
            let out = edited(&note.text, &edits)?;
            check_common(&note, &out, true)?;
            let after = parsed(&out)?;
            prop_assert_eq!(without(&after, "live"), without(&before, "live"));
            let (bl, al) = (live_of(&before)?, live_of(&after)?);
            let mut expected = bl.clone();
            for (f, value) in &fields {
                let want = match value {
                    None => V::Null,
                    // A count is written as a number when it is one.
                    Some(s) if *f == RuntimeField::Failures && s.parse::<u64>().is_ok() => {
                        s.parse::<i64>().map_or(V::Bad, V::Int)
                    }
                    Some(s) => V::Str(s.clone()),
                };
                match expected.iter_mut().find(|(k, _)| k == f.key()) {
                    Some(slot) => slot.1 = want,
                    None => expected.push((f.key().to_owned(), want)),
                }
            }
            let sorted = |mut m: Map| { m.sort_by(|a, b| a.0.cmp(&b.0)); m };
            prop_assert_eq!(sorted(al), sorted(expected));
        }

        #[test]
        fn set_active_sets_only_the_flag(note in note(), active in any::<bool>()) {
            let before = parsed(&note.text)?;
            let result = set_active(&note.text, active);
            if !note.has_live {
                prop_assert_eq!(result, Err(RewriteError::NotLive));
                return Ok(());
            }
            let edits = result.map_err(fail)?;
            let span = live_span(&note.text)?;
            for e in &edits {
                prop_assert!(span.start <= e.range.start && e.range.end <= span.end, "edit {:?} outside {:?}", e, span);
            }
            let out = edited(&note.text, &edits)?;
            check_common(&note, &out, true)?;
            let after = parsed(&out)?;
            prop_assert_eq!(without(&after, "live"), without(&before, "live"));
            let (bl, al) = (live_of(&before)?, live_of(&after)?);
            prop_assert_eq!(get(&al, "active"), Some(&V::Bool(active)));
            prop_assert_eq!(without(&al, "active"), without(&bl, "active"));
        }

        #[test]
        fn make_passive_removes_only_the_block(note in note()) {
            let before = parsed(&note.text)?;
            let result = make_passive(&note.text);
            if !note.has_live {
                prop_assert_eq!(result, Err(RewriteError::NotLive));
                return Ok(());
            }
            let out = edited(&note.text, &result.map_err(fail)?)?;
            check_common(&note, &out, false)?;
            let after = parsed(&out)?;
            prop_assert_eq!(after, without(&before, "live"));
            let bom = &note.text[..frontmatter::bom_len(&note.text)];
            let plain = format!("{bom}{}", body(&note.text));
            if note.only_live && frontmatter::locate(&plain).is_none() {
                prop_assert_eq!(out, plain);
            }
        }

        #[test]
        fn make_live_adds_a_block_that_make_passive_takes_back(
            note in note(),
            objective in proptest::option::of(any_text()),
        ) {
            let before = parsed(&note.text)?;
            let result = make_live(&note.text, objective.as_deref());
            if note.has_live {
                prop_assert_eq!(result, Err(RewriteError::AlreadyLive));
                return Ok(());
            }
            let out = edited(&note.text, &result.map_err(fail)?)?;
            check_common(&note, &out, false)?;
            let after = parsed(&out)?;
            prop_assert_eq!(without(&after, "live"), before);
            let body_start = frontmatter::locate(&note.text).map_or(0, |f| f.body_start());
            let want = match &objective {
                Some(o) if !o.trim().is_empty() => o.clone(),
                _ => default_objective(frontmatter::title(&note.text, body_start)),
            };
            prop_assert_eq!(live_of(&after)?, vec![("objective".to_owned(), V::Str(want))]);
            let back = edited(&out, &make_passive(&out).map_err(fail)?)?;
            let bom = &note.text[..frontmatter::bom_len(&note.text)];
            let plain = format!("{bom}{}", body(&note.text));
            if note.only_live && frontmatter::locate(&plain).is_none() {
                prop_assert_eq!(back, plain);
            } else if note.only_live {
                prop_assert_eq!(parsed(&back)?, Vec::new());
                prop_assert_eq!(body(&back), body(&note.text));
            } else {
                prop_assert_eq!(back, note.text.clone());
            }
        }

        #[test]
        fn make_live_with_changes_only_the_values_given(
            note in note(),
            objective in any_text(),
            cron in proptest::option::of(prop_oneof![Just(String::new()), Just(" ".to_owned()), any_text()]),
            windows in proptest::option::of(proptest::collection::vec(("[0-2][0-9]:[0-5][0-9]", "[0-2][0-9]:[0-5][0-9]"), 0..3)),
            event in proptest::option::of(prop_oneof![Just(String::new()), any_text()]),
        ) {
            let before = parsed(&note.text)?;
            let t = TriggerEdits { cron_expr: cron.clone(), windows: windows.clone(), event_match_criteria: event.clone() };
            let Ok(edits) = make_live_with(&note.text, &objective, &t) else {
                // Refused only where the block cannot be edited line-wise (flow-style triggers).
                prop_assert!(note.has_live && note.text.contains("triggers: {"), "{:?}", make_live_with(&note.text, &objective, &t));
                return Ok(());
            };
            let out = edited(&note.text, &edits)?;
            check_common(&note, &out, false)?;
            let after = parsed(&out)?;
            prop_assert_eq!(without(&after, "live"), without(&before, "live"));
            let (bl, al) = (if note.has_live { live_of(&before)? } else { Vec::new() }, live_of(&after)?);
            let others = |m: &Map| -> Map { without(&without(m, "objective"), "triggers") };
            prop_assert_eq!(others(&al), others(&bl));
            let blank = |s: &str| s.trim().is_empty();
            match get(&al, "objective") {
                Some(V::Str(o)) if !blank(&objective) => prop_assert_eq!(o, &objective),
                got => {
                    if note.has_live {
                        prop_assert_eq!(got, get(&bl, "objective"));
                    }
                }
            }
            let tr = |m: &Map| match get(m, "triggers") { Some(V::Map(t)) => t.clone(), _ => Vec::new() };
            let (bt, at) = (tr(&bl), tr(&al));
            let expect = |key: &str, given: Option<V>| -> Option<V> {
                match given {
                    None => if note.has_live { get(&bt, key).cloned() } else { None },
                    Some(v) => Some(v),
                }
            };
            let text_value = |v: &Option<String>| v.as_ref().map(|s| if blank(s) { V::Null } else { V::Str(s.clone()) });
            let windows_value = windows.as_ref().map(|w| if w.is_empty() { V::Null } else {
                V::Seq(w.iter().map(|(a, b)| V::Map(vec![("startTime".into(), V::Str(a.clone())), ("endTime".into(), V::Str(b.clone()))])).collect())
            });
            for (key, given) in [("cronExpr", text_value(&cron)), ("windows", windows_value), ("eventMatchCriteria", text_value(&event))] {
                let want = expect(key, given).filter(|v| *v != V::Null);
                prop_assert_eq!(get(&at, key), want.as_ref(), "{}:\n{}", key, out);
            }
        }

        #[test]
        fn make_live_without_frontmatter_round_trips(
            bom in any::<bool>(),
            crlf in any::<bool>(),
            lines in proptest::collection::vec(
                prop_oneof!["[a-z#é\\- ]{0,10}", Just("---".to_owned()), Just("# T ü".to_owned())],
                0..5,
            ),
            objective in proptest::option::of(any_text()),
        ) {
            let nl = if crlf { "\r\n" } else { "\n" };
            let text = format!("{}{}", if bom { "\u{feff}" } else { "" }, lines.join(nl));
            // A first line `---` would open a frontmatter; keep that case out.
            let text = if frontmatter::locate(&text).is_some() { format!("x{text}") } else { text };
            let out = edited(&text, &make_live(&text, objective.as_deref()).map_err(fail)?)?;
            prop_assert!(endings_ok(&out, crlf && lines.len() > 1));
            prop_assert_eq!(body(&out), &text[frontmatter::bom_len(&text)..]);
            let live = live_of(&parsed(&out)?)?;
            prop_assert!(matches!(get(&live, "objective"), Some(V::Str(s)) if !s.trim().is_empty()));
            let back = edited(&out, &make_passive(&out).map_err(fail)?)?;
            prop_assert_eq!(back, text);
        }

        #[test]
        fn convert_moves_the_track_into_the_frontmatter(
            crlf in any::<bool>(),
            user_fm in proptest::option::of("[a-z][a-z ]{0,6}[a-z]"),
            id in proptest::option::of("[a-z][a-z-]{0,8}"),
            instruction in proptest::option::of(any_text()),
            schedule in 0u8..4,
            event in proptest::option::of("[A-Za-z][A-Za-z ]{0,10}[a-z]"),
            paused in any::<bool>(),
            last_run in proptest::option::of("2026-0[1-9]-1[0-9]T10:00:00Z"),
            before_lines in proptest::collection::vec("[a-z ]{0,8}", 0..3),
            kept in "[a-z]{1,8}",
        ) {
            // An empty fence is refused; something must be there to convert.
            prop_assume!(
                id.is_some() || instruction.is_some() || schedule > 0 || event.is_some() || paused || last_run.is_some()
            );
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut text = String::new();
            if let Some(t) = &user_fm {
                text.push_str(&format!("---{nl}title: {t}  # mine{nl}---{nl}"));
            }
            for l in &before_lines {
                text.push_str(&format!("{l}{nl}"));
            }
            let fence_start = text.len();
            text.push_str(&format!("```track{nl}"));
            if let Some(id) = &id {
                text.push_str(&format!("trackId: {id}{nl}"));
            }
            if let Some(i) = &instruction {
                text.push_str(&format!("instruction: {}{nl}", yaml_string(i)));
            }
            if paused {
                text.push_str(&format!("active: false{nl}"));
            }
            match schedule {
                1 => text.push_str(&format!("schedule:{nl}  type: cron{nl}  expression: \"0 9 * * *\"{nl}")),
                2 => text.push_str(&format!(
                    "schedule: {{type: window, cron: \"0 * * * *\", startTime: \"09:00\", endTime: \"11:30\"}}{nl}"
                )),
                3 => text.push_str(&format!("schedule: {{type: once, runAt: \"2026-04-14T09:00:00\"}}{nl}")),
                _ => {}
            }
            if let Some(e) = &event {
                text.push_str(&format!("eventMatchCriteria: {e}{nl}"));
            }
            if let Some(t) = &last_run {
                text.push_str(&format!("lastRunAt: {t}{nl}"));
            }
            text.push_str(&format!("```{nl}"));
            let marker = id.as_deref().unwrap_or("none");
            text.push_str(&format!(
                "<!--track-target:{marker}-->{nl}{kept}{nl}<!--/track-target:{marker}-->{nl}tail{nl}"
            ));

            let body_start = frontmatter::locate(&text).map_or(0, |f| f.body_start());
            let fences = frontmatter::track_fences(&text, body_start);
            prop_assert_eq!(fences.len(), 1);
            prop_assert_eq!(fences[0].range.start, fence_start);
            let out = edited(&text, &convert_track_fence(&text, &fences[0]).map_err(fail)?)?;
            prop_assert!(endings_ok(&out, crlf), "line endings changed:\n{:?}", out);
            prop_assert!(!out.contains("```track"));
            prop_assert_eq!(out.contains("track-target:"), id.is_none());
            let after_fence = format!("{kept}{nl}");
            prop_assert!(body(&out).lines().any(|l| l == kept) && body(&out).contains(&after_fence));
            let tail = format!("tail{nl}");
            prop_assert!(body(&out).ends_with(&tail));
            let top = parsed(&out)?;
            if let Some(t) = &user_fm {
                prop_assert_eq!(get(&top, "title"), Some(&V::Str(t.clone())));
            }
            let live = live_of(&top)?;
            let want = match &instruction {
                Some(i) if !i.trim().is_empty() => i.clone(),
                _ => default_objective(None),
            };
            prop_assert_eq!(get(&live, "objective"), Some(&V::Str(want)));
            prop_assert_eq!(get(&live, "active"), paused.then_some(&V::Bool(false)));
            let last_run = last_run.map(V::Str);
            prop_assert_eq!(get(&live, "lastRunAt"), last_run.as_ref());
            let triggers = match get(&live, "triggers") {
                Some(V::Map(t)) => t.clone(),
                None => Vec::new(),
                other => return Err(fail(format!("triggers is {other:?}"))),
            };
            let cron = (schedule == 1).then(|| V::Str("0 9 * * *".into()));
            prop_assert_eq!(get(&triggers, "cronExpr"), cron.as_ref());
            let windows = (schedule == 2).then(window);
            prop_assert_eq!(get(&triggers, "windows"), windows.as_ref());
            let event = event.map(V::Str);
            prop_assert_eq!(get(&triggers, "eventMatchCriteria"), event.as_ref());
        }

        #[test]
        fn arbitrary_text_never_panics(
            text in prop_oneof![
                any::<String>(),
                proptest::collection::vec(
                    proptest::sample::select(vec![
                        "---\n", "---\r\n", "...\n", "live:\n", "live: {a: 1}\n", "  objective: x\n",
                        "  objective: |\n", "    text\n", "  active: true # c\n", "  lastRunAt: \"x\n",
                        "  - a\n", "- b\n", "\n", "\r\n", "# c\n", "  # c\n", "\u{feff}", "```track\n",
                        "```\n", "trackId: t\n", "instruction: do\n", "<!--track-target:t-->\n",
                        "schedule: {type: window}\n", "é", "\t", ":", "'", "\"", "x", "  triggers:\n",
                        "    cronExpr: 1\n", "  lastRunError: |+\n", "title: a\n",
                    ]),
                    0..30,
                )
                .prop_map(|parts| parts.concat()),
            ],
            at in 0usize..300,
            len in 0usize..12,
            flag in any::<bool>(),
            value in proptest::option::of(any_text()),
        ) {
            let ok = |r: Result<Vec<TextEdit>, RewriteError>| -> Result<(), TestCaseError> {
                if let Ok(edits) = r {
                    edited(&text, &edits)?;
                }
                Ok(())
            };
            let fields = [(RuntimeField::LastRunAt, value.as_deref()), (RuntimeField::LastRunError, None)];
            ok(set_runtime_fields(&text, &fields))?;
            ok(make_live(&text, value.as_deref()))?;
            ok(set_active(&text, flag))?;
            ok(make_passive(&text))?;
            ok(replace_value(&text, at, "x"))?;
            ok(remove_entry(&text, at))?;
            ok(rename_key(&text, at..at + len, "k"))?;
            let body_start = frontmatter::locate(&text).map_or(0, |f| f.body_start());
            for fence in frontmatter::track_fences(&text, body_start) {
                ok(convert_track_fence(&text, &fence))?;
            }
            let junk = TrackFence { range: at..at + len, open_line: at..at, inner: at..at + len / 2 };
            ok(convert_track_fence(&text, &junk))?;
            // Every key line can be renamed, replaced and removed without a panic.
            if let Some(fm) = frontmatter::locate(&text) {
                let outline = Outline::parse(&text, fm.content);
                for i in 0..outline.lines.len() {
                    if let Some(k) = outline.key(i) {
                        ok(rename_key(&text, k.key.clone(), "renamed"))?;
                        ok(replace_value(&text, k.key.start, "1"))?;
                        ok(remove_entry(&text, k.key.start))?;
                    }
                }
            }
        }
    }
}

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
