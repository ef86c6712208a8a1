use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::*;
use crate::note::yaml::Node;
use crate::text::edit::apply;

/// The note after moving the key `key` (its first occurrence) as `name` (`␍` for CR), or the
/// error. A moved note must analyse with no warning or error left about the moved key.
fn check(text: &str, key: &str, name: &str, want: Expect) {
    let at = text.find(&format!("{key}:")).unwrap_or(usize::MAX);
    let shown = match move_into_triggers(text, at, name) {
        Ok(edits) => match apply(text, &edits) {
            Ok(out) => {
                let a = crate::note::analyze(&out, &crate::note::Options::default());
                assert!(!a.has_errors(), "{out}\n{:?}", a.diagnostics);
                assert!(
                    a.diagnostics.iter().all(|d| !d.message.contains("belongs in")),
                    "{out}\n{:?}",
                    a.diagnostics
                );
                out.replace('\r', "␍")
            }
            Err(e) => panic!("edits do not apply: {e}"),
        },
        Err(e) => format!("error: {e}"),
    };
    want.assert_eq(&shown);
}

#[test]
fn cron_creates_triggers_above_the_runtime_fields() {
    check(
        "---\nlive:\n  objective: x\n  cron: \"0 9 * * *\"   # daily\n  lastRunAt: \"2026-01-01T00:00:00Z\"\n---\nbody\n",
        "cron",
        "cronExpr",
        expect![[r#"
            ---
            live:
              objective: x
              triggers:
                cronExpr: "0 9 * * *"   # daily
              lastRunAt: "2026-01-01T00:00:00Z"
            ---
            body
        "#]],
    );
}

#[test]
fn cron_becomes_the_last_key_without_runtime_fields() {
    check(
        "---\nlive:\n    cronExpr: '@daily'\n    objective: x\n---\n",
        "cronExpr",
        "cronExpr",
        expect![[r#"
            ---
            live:
                objective: x
                triggers:
                  cronExpr: '@daily'
            ---
        "#]],
    );
}

#[test]
fn crlf_is_kept() {
    check(
        "---\r\nlive:\r\n  objective: x\r\n  cron: 0 9 * * *\r\n---\r\n",
        "cron",
        "cronExpr",
        expect![[r#"
            ---␍
            live:␍
              objective: x␍
              triggers:␍
                cronExpr: 0 9 * * *␍
            ---␍
        "#]],
    );
}

#[test]
fn appended_under_an_existing_triggers_block_at_its_indentation() {
    check(
        "---\nlive:\n  cron: \"*/5 * * * *\"\n  objective: x\n  triggers:\n      eventMatchCriteria: Storms\n      # more later\n  active: true\n---\n",
        "cron",
        "cronExpr",
        expect![[r#"
            ---
            live:
              objective: x
              triggers:
                  eventMatchCriteria: Storms
                  # more later
                  cronExpr: "*/5 * * * *"
              active: true
            ---
        "#]],
    );
}

#[test]
fn right_after_the_triggers_block_is_one_edit() {
    let text = "---\r\nlive:\r\n  objective: x\r\n  triggers:\r\n    eventMatchCriteria: Storms\r\n  cron: \"@hourly\"\r\n---\r\n";
    let at = text.find("cron").unwrap_or(usize::MAX);
    assert_eq!(move_into_triggers(text, at, "cronExpr").map(|e| e.len()), Ok(1));
    check(
        text,
        "cron",
        "cronExpr",
        expect![[r#"
            ---␍
            live:␍
              objective: x␍
              triggers:␍
                eventMatchCriteria: Storms␍
                cronExpr: "@hourly"␍
            ---␍
        "#]],
    );
}

#[test]
fn an_empty_flow_triggers_opens_as_a_block() {
    check(
        "---\nlive:\n  objective: x\n  triggers: {}  # none yet\n  cron: \"@daily\"\n---\n",
        "cron",
        "cronExpr",
        expect![[r#"
            ---
            live:
              objective: x
              triggers:  # none yet
                cronExpr: "@daily"
            ---
        "#]],
    );
}

#[test]
fn refused_where_it_would_duplicate_or_cannot_be_edited() {
    check(
        "---\nlive:\n  objective: x\n  cron: \"@daily\"\n  triggers:\n    cronExpr: \"@hourly\"\n---\n",
        "cron",
        "cronExpr",
        expect!["error: `triggers:` already has a `cronExpr`; keep one of the two and remove the other"],
    );
    check(
        "---\nlive:\n  objective: x\n  cron: \"@daily\"\n  triggers: {eventMatchCriteria: x}\n---\n",
        "cron",
        "cronExpr",
        expect![
            "error: `triggers:` is not written as indented `key: value` lines (flow style or a plain value); write it that way to edit it"
        ],
    );
    check(
        "---\nlive:\n  objective: x\n  cron: \"@daily\"\n  cronExpr: \"@hourly\"\n---\n",
        "cron",
        "cronExpr",
        expect!["error: `live:` has two keys for `cronExpr`; keep one of the two and remove the other"],
    );
    // Only a direct child of `live:` moves.
    check(
        "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"@daily\"\n---\n",
        "cronExpr",
        "cronExpr",
        expect!["error: there is no `key: value` line at this position in the frontmatter"],
    );
}

#[test]
fn windows_move_whole_and_reindented() {
    check(
        "---\nlive:\n  objective: x\n  windows:   # office hours\n  - startTime: \"09:00\"\n    endTime: '12:00'\n    # lunch\n\n  - {startTime: \"13:00\", endTime: \"17:00\"}\n  triggers:\n    cronExpr: \"@daily\"\n---\n",
        "windows",
        "windows",
        expect![[r#"
            ---
            live:
              objective: x
              triggers:
                cronExpr: "@daily"
                windows:   # office hours
                - startTime: "09:00"
                  endTime: '12:00'
                  # lunch

                - {startTime: "13:00", endTime: "17:00"}
            ---
        "#]],
    );
}

#[test]
fn event_criteria_with_an_alias_and_a_block_scalar() {
    check(
        "---\nlive:\n  objective: x\n  events: |\n    Emails about Q3\n    and storms\n  active: true\n---\n",
        "events",
        "eventMatchCriteria",
        expect![[r#"
            ---
            live:
              objective: x
              active: true
              triggers:
                eventMatchCriteria: |
                  Emails about Q3
                  and storms
            ---
        "#]],
    );
}

/// A live block with the trigger `cron` (in one of several spellings and quotings) written
/// directly under `live:`, other keys around it, maybe a `triggers:` block, LF or CRLF.
fn misplaced() -> impl Strategy<Value = (String, String, String)> {
    let value = prop_oneof![
        Just(("\"0 9 * * 1-5\"".to_owned(), "0 9 * * 1-5".to_owned())),
        Just(("'@hourly'".to_owned(), "@hourly".to_owned())),
        Just(("15 10 * * *".to_owned(), "15 10 * * *".to_owned())),
        Just(("\"30 8 * * *\"  # morning".to_owned(), "30 8 * * *".to_owned())),
    ];
    (
        1usize..5,
        prop::sample::select(vec!["cron", "cronExpr", "crontab", "\"cron\""]),
        value,
        0usize..4,
        prop::option::of(0usize..3),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(ci, key, (written, value), place, trig, runtime, comment, crlf)| {
            let s = " ".repeat(ci);
            let mut children = vec![format!("{s}objective: Keep it short"), format!("{s}active: true")];
            match trig {
                Some(0) => children.push(format!("{s}triggers:\n{s}  eventMatchCriteria: Storms")),
                Some(1) => children.push(format!("{s}triggers: {{}}")),
                Some(_) => children.push(format!("{s}triggers:\n{s}    windows:\n{s}    - startTime: \"09:00\"\n{s}      endTime: \"10:00\"")),
                None => {}
            }
            let mut line = format!("{s}{key}: {written}");
            if comment {
                line.push_str(&format!("\n{s}  # set by hand"));
            }
            children.insert(place.min(children.len()), line);
            if runtime {
                children.push(format!("{s}lastRunAt: \"2026-01-01T00:00:00Z\""));
            }
            let text = format!("---\ntitle: T\nlive:\n{}\nother: 1\n---\n# T\n", children.join("\n"));
            let text = if crlf { text.replace('\n', "\r\n") } else { text };
            (text, key.to_owned(), value)
        })
}

fn get<'a>(n: &'a Node, key: &str) -> Option<&'a Node> {
    n.get(key).map(|e| &e.value)
}

proptest! {
    #[test]
    fn the_move_applies_in_frontmatter_and_triggers_hold_the_value((text, key, value) in misplaced()) {
        let content = frontmatter::locate(&text).map(|f| f.content.clone());
        prop_assert!(content.is_some());
        let Some(content) = content else { return Ok(()) };
        let key_at = text.find(&format!("{key}:")).unwrap_or(usize::MAX);
        let edits = move_into_triggers(&text, key_at, "cronExpr");
        prop_assert!(edits.is_ok(), "{:?}\n{}", edits, text);
        let Ok(edits) = edits else { return Ok(()) };
        let crlf = text.contains("\r\n");
        for e in &edits {
            prop_assert!(e.range.start >= content.start && e.range.end <= content.end, "{:?}", e);
            // The file's line endings, and only those.
            let lf_only = e.new_text.replace("\r\n", "");
            prop_assert!(if crlf { !lf_only.contains('\n') } else { !e.new_text.contains('\r') }, "{:?}", e);
        }
        let out = apply(&text, &edits);
        prop_assert!(out.is_ok());
        let Ok(out) = out else { return Ok(()) };
        // The body and what is outside `live:` are untouched.
        let tail = if crlf { "other: 1\r\n---\r\n# T\r\n" } else { "other: 1\n---\n# T\n" };
        prop_assert!(out.ends_with(tail), "{}", out);
        let fm = frontmatter::locate(&out).map(|f| f.content.clone());
        let root = fm.and_then(|c| yaml::parse(&out, c).ok().flatten());
        prop_assert!(root.is_some(), "{}", out);
        let Some(root) = root else { return Ok(()) };
        let cron = get(&root, "live").and_then(|l| get(l, "triggers")).and_then(|t| get(t, "cronExpr"));
        prop_assert_eq!(cron.and_then(|c| c.as_str()), Some(value.as_str()), "{}", out);
        let a = crate::note::analyze(&out, &crate::note::Options::default());
        prop_assert!(!a.has_errors(), "{}\n{:?}", out, a.diagnostics);
        prop_assert!(a.diagnostics.is_empty(), "{}\n{:?}", out, a.diagnostics);
    }
}
