use expect_test::expect;

use super::*;
use crate::note::Options;

fn written(text: &str, w: &Written) -> String {
    apply(text, &w.edits).unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn a_reply_in_a_fence_with_prose_is_read() {
    let reply = "Sure! Here is the block:\n```json\n{\"objective\": \"Keep the latest Rust release notes.\", \
                 \"triggers\": [{\"cron\": \"0 8 * * 1\"}, {\"window\": {\"start\": \"09:00\", \"end\": \"12:00\"}}, \
                 {\"event\": \"Rust release announcements\"}], \"tools\": [\"web\"], \"runNow\": true}\n```\nEnjoy.";
    let d = parse_reply(reply).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        d,
        Draft {
            objective: "Keep the latest Rust release notes.".into(),
            cron: Some("0 8 * * 1".into()),
            windows: vec![("09:00".into(), "12:00".into())],
            event: Some("Rust release announcements".into()),
            tools: Some(vec!["web".into()]),
            skills: None,
        }
    );
    assert_eq!(
        describe_triggers(&d),
        "cron \"0 8 * * 1\", window 09:00–12:00, events \"Rust release announcements\""
    );
}

#[test]
fn triggers_spelled_as_the_note_spells_them_are_read() {
    let reply = r#"{"objective": "x", "triggers": {"cronExpr": "@daily", "windows": [{"startTime": "07:00", "endTime": "08:00"}], "eventMatchCriteria": "mail"}}"#;
    let d = parse_reply(reply).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.cron.as_deref(), Some("@daily"));
    assert_eq!(d.windows, vec![("07:00".to_owned(), "08:00".to_owned())]);
    assert_eq!(d.event.as_deref(), Some("mail"));
}

#[test]
fn replies_that_are_not_a_draft_say_why() {
    let cases = [
        ("I cannot help with that.", "the model's reply is not a JSON object: I cannot help with that."),
        ("{\"objective\": \"\"}", "the model's draft has no `objective`"),
        ("{\"objective\": 3}", "the model's draft has no `objective`"),
        (
            "{\"objective\": \"x\", \"triggers\": [{\"cron\": \"@daily\"}, {\"cron\": \"@hourly\"}]}",
            "the model's draft has two cron triggers; a note has one `cronExpr`",
        ),
        (
            "{\"objective\": \"x\", \"triggers\": [{\"once\": \"tomorrow\"}]}",
            "the model's draft has a trigger of unknown kind `once`",
        ),
        (
            "{\"objective\": \"x\", \"triggers\": \"hourly\"}",
            "the model's draft has `triggers` that is not a list",
        ),
        ("{\"objective\": \"x\", \"tools\": [1]}", "the model's draft has `tools` holding a non-string: 1"),
        (
            "{\"objective\": \"x\", \"triggers\": [{\"window\": {\"start\": \"09:00\"}}]}",
            "the model's draft has a window without a start or an end: {\"window\":{\"start\":\"09:00\"}}",
        ),
    ];
    for (reply, why) in cases {
        assert_eq!(parse_reply(reply).map_err(|e| e.to_string()), Err(why.to_owned()), "{reply}");
    }
}

#[test]
fn the_prompt_carries_the_sentence_title_first_lines_tools_and_skills() {
    let text = "---\ntags: [rust]\n---\n# Rust releases\n\nWhat changed lately.\n";
    let tools = vec!["web".to_owned()];
    let skills = vec![("weekly-digest".to_owned(), "A digest\nof the week".to_owned())];
    let p = prompt(
        text,
        &Setting {
            sentence: "  keep the latest Rust release notes, every Monday morning ",
            tools: &tools,
            skills: &skills,
        },
    );
    expect![[r#"
        ## What the user wants

        keep the latest Rust release notes, every Monday morning

        ## The note

        Title: Rust releases

        First lines:

        # Rust releases

        What changed lately.

        ## Available tools

        - web

        ## Available skills

        - weekly-digest: A digest of the week
    "#]]
    .assert_eq(&p);
    let bare = prompt("", &Setting { sentence: "x", ..Setting::default() });
    assert!(
        bare.contains("(no title)")
            && bare.contains("(the note is empty)")
            && bare.contains("(none: omit `tools`)"),
        "{bare}"
    );
}

#[test]
fn a_valid_draft_is_written_as_one_block() {
    let text = "---\ntitle: Rust\n---\n# Rust releases\n";
    let reply = r#"{"objective": "Keep the latest Rust release notes: version, date, highlights.", "triggers": [{"cron": "0 8 * * 1"}, {"window": {"start": "09:00", "end": "12:00"}}], "skills": ["weekly-digest"]}"#;
    let w = choose(text, "keep the latest Rust release notes", Ok(reply.to_owned()), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.fallback, None);
    assert_eq!(w.edits.len(), 1, "one edit, one undo");
    expect![[r#"
        ---
        title: Rust
        live:
          objective: "Keep the latest Rust release notes: version, date, highlights."
          triggers:
            cronExpr: "0 8 * * 1"
            windows:
              - startTime: "09:00"
                endTime: "12:00"
          skills: ["weekly-digest"]
        ---
        # Rust releases
    "#]]
    .assert_eq(&written(text, &w));
}

#[test]
fn an_invalid_draft_is_never_written_and_the_template_says_why() {
    let text = "# Rust releases\n";
    let reply = r#"{"objective": "Keep it.", "triggers": [{"cron": "0 25 * * *"}, {"window": {"start": "12:00", "end": "09:00"}}]}"#;
    assert!(matches!(
        parse_reply(reply).map(|d| edits(text, &d, &Options::default())),
        Ok(Err(DraftError::Invalid(_)))
    ));
    let w = choose(text, "keep the latest Rust release notes", Ok(reply.to_owned()), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let why = w.fallback.clone().unwrap_or_default();
    assert!(why.starts_with("the model's draft would give the note errors: "), "{why}");
    assert!(why.contains("cron") && why.contains("12:00"), "{why}");
    expect![[r#"
        ---
        live:
          objective: "keep the latest Rust release notes"
        ---
        # Rust releases
    "#]]
    .assert_eq(&written(text, &w));
    assert_eq!(w.draft, template("keep the latest Rust release notes"));
}

#[test]
fn without_a_model_the_template_is_written() {
    let w = choose("# T\n", "", Err("no provider is configured".into()), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.fallback.as_deref(), Some("no provider is configured"));
    assert!(written("# T\n", &w).contains("objective: 'Keep this note about \"T\" up to date.'"), "{w:?}");
}

#[test]
fn a_tool_the_workspace_does_not_have_refuses_the_draft() {
    let catalog = crate::note::tools::McpCatalog { servers: Vec::new() };
    let options = Options { mcp: Some(&catalog), ..Options::default() };
    let reply = r#"{"objective": "x", "tools": ["github"]}"#;
    let w = choose("# T\n", "s", Ok(reply.to_owned()), &options).unwrap_or_else(|e| panic!("{e}"));
    let why = w.fallback.unwrap_or_default();
    assert!(why.contains("github"), "{why}");
}

#[test]
fn a_draft_replaces_a_live_notes_triggers_and_the_template_extends_its_objective() {
    let text = "---\nlive:\n  objective: old\n  triggers:\n    cronExpr: \"@hourly\"\n    eventMatchCriteria: mail\n  tools: [time]\n  lastRunAt: \"2026-11-20T08:00:00Z\"\n---\n";
    let reply = r#"{"objective": "old, and new", "triggers": [{"window": {"start": "09:00", "end": "12:00"}}], "tools": ["web", "github.list_issues"]}"#;
    let w = choose(text, "s", Ok(reply.to_owned()), &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    expect![[r#"
        ---
        live:
          objective: "old, and new"
          triggers:
            windows:
              - startTime: "09:00"
                endTime: "12:00"
          tools: ["web", "github.list_issues"]
          lastRunAt: "2026-11-20T08:00:00Z"
        ---
    "#]]
    .assert_eq(&written(text, &w));
    assert_eq!(
        w.change.describe(),
        "objective extended, schedule changed (was cron \"@hourly\", events \"mail\", now window 09:00–12:00)"
    );
    let t = choose(text, "the sentence", Err("no model".into()), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    expect![[r#"
        ---
        live:
          objective: "old. the sentence"
          triggers:
            cronExpr: "@hourly"
            eventMatchCriteria: mail
          tools: [time]
          lastRunAt: "2026-11-20T08:00:00Z"
        ---
    "#]]
    .assert_eq(&written(text, &t));
    assert_eq!(t.change.describe(), "objective extended, schedule kept (cron \"@hourly\", events \"mail\")");
    assert_eq!(describe_triggers(&t.draft), "cron \"@hourly\", events \"mail\"");
}

/// Issue 32 §5: the user's words are extended, never replaced. A draft that drops words of a
/// live note's objective is not written; the sentence is added to the objective instead.
#[test]
fn a_draft_that_drops_the_objective_is_not_written() {
    let text = "---\nlive:\n  objective: Show the weather in Chicago.\n  triggers:\n    cronExpr: \"0 7 * * *\"\n---\n# W\n";
    let reply = r#"{"objective": "Track the pollen count.", "triggers": []}"#;
    let w = choose(text, "also keep an eye on the pollen count", Ok(reply.to_owned()), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        w.fallback.as_deref(),
        Some("the model's draft leaves out words of the note's objective (\"Show the weather in Chicago.\")")
    );
    expect![[r#"
        ---
        live:
          objective: "Show the weather in Chicago. also keep an eye on the pollen count"
          triggers:
            cronExpr: "0 7 * * *"
        ---
        # W
    "#]]
    .assert_eq(&written(text, &w));
    // Punctuation and case may move; the words stay, in their order.
    let kept = r#"{"objective": "show the weather in Chicago, and keep an eye on the pollen count.", "triggers": [{"cron": "0 7 * * *"}]}"#;
    let w =
        choose(text, "pollen", Ok(kept.to_owned()), &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.fallback, None);
    assert_eq!(w.change.describe(), "objective extended, schedule kept (cron \"0 7 * * *\")");
}

#[test]
fn extend_keeps_both_and_adds_nothing_twice() {
    assert_eq!(extend("Show the weather.", "also pollen"), "Show the weather. also pollen");
    assert_eq!(extend("Show the weather", " also pollen "), "Show the weather. also pollen");
    assert_eq!(extend("", "also pollen"), "also pollen");
    assert_eq!(extend("Show the weather.", ""), "Show the weather.");
    assert_eq!(extend("Show the weather and the pollen.", "the Pollen"), "Show the weather and the pollen.");
    let text = "---\nlive:\n  objective: Show the weather and the pollen.\n---\n";
    let w = choose(text, "the pollen", Err("no model".into()), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.change.describe(), "objective kept (it says this already), schedule kept (manual only)");
}

/// The model is shown a live note's block in the form it answers in, to extend it.
#[test]
fn the_prompt_of_a_live_note_carries_its_block() {
    let text = "---\nlive:\n  objective: Show the weather in Chicago.\n  triggers:\n    cronExpr: \"0 7 * * *\"\n  tools: [web]\n---\n# Weather\n";
    let p = prompt(text, &Setting { sentence: "also the pollen count", ..Setting::default() });
    assert!(
        p.contains("## The note's live block now (extend it)\n\n{\"objective\":\"Show the weather in Chicago.\",\"tools\":[\"web\"],\"triggers\":[{\"cron\":\"0 7 * * *\"}]}\n"),
        "{p}"
    );
    assert!(SYSTEM_PROMPT.contains("Extend them, never replace them"));
    assert!(!SYSTEM_PROMPT.contains("runNow"));
    let passive = prompt("# Weather\n", &Setting { sentence: "x", ..Setting::default() });
    assert!(!passive.contains("live block now"), "{passive}");
}

#[test]
fn tools_and_skills_are_added_above_the_runtime_fields() {
    let text = "---\nlive:\n  objective: old\n  # written by livenote only:\n  lastRunAt: \"2026-11-20T08:00:00Z\"\n---\n";
    let d = Draft {
        objective: "new".into(),
        cron: Some("@daily".into()),
        skills: Some(vec!["digest".into()]),
        ..Draft::default()
    };
    let e = edits(text, &d, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    expect![[r#"
        ---
        live:
          objective: "new"
          triggers:
            cronExpr: "@daily"
          skills: ["digest"]
          # written by livenote only:
          lastRunAt: "2026-11-20T08:00:00Z"
        ---
    "#]]
    .assert_eq(&apply(text, &e).unwrap_or_else(|e| panic!("{e:?}")));
}

#[test]
fn a_frontmatter_that_cannot_be_edited_refuses_even_the_template() {
    let text = "---\nlive: {objective: x}\n---\n";
    let e = choose(text, "s", Err("no model".into()), &Options::default());
    assert_eq!(e.map(|_| ()), Err(DraftError::Rewrite(RewriteError::FlowStyle)));
}

mod model {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever the model answers, what `choose` writes leaves a note without errors, or
        /// nothing is written at all; and a live note keeps every word of its objective.
        #[test]
        fn nothing_invalid_is_ever_written(
            objective in "[a-z \"]{0,12}",
            cron in proptest::option::of(prop_oneof!["@daily", "0 8 * * 1", "0 25 * * *", "x"]),
            window in proptest::option::of(("[0-2][0-9]:[0-5][0-9]", "[0-2][0-9]:[0-5][0-9]")),
            event in proptest::option::of("[a-z ]{0,6}"),
            live in any::<bool>(),
        ) {
            let mut triggers = Vec::new();
            if let Some(c) = &cron { triggers.push(serde_json::json!({"cron": c})); }
            if let Some((s, e)) = &window { triggers.push(serde_json::json!({"window": {"start": s, "end": e}})); }
            if let Some(e) = &event { triggers.push(serde_json::json!({"event": e})); }
            let reply = serde_json::json!({"objective": objective, "triggers": triggers}).to_string();
            let text = if live { "---\nlive:\n  objective: before\n---\n# N\n" } else { "# N\n" };
            if let Ok(w) = choose(text, "sentence", Ok(reply), &Options::default()) {
                let after = apply(text, &w.edits).unwrap_or_else(|e| panic!("{e:?}"));
                let analysis = crate::note::analyze(&after, &Options::default());
                prop_assert!(analysis.diagnostics.iter().all(|d| d.severity != Severity::Error), "{after}");
                let objective = analysis.live.and_then(|l| l.objective);
                prop_assert!(objective.is_some(), "{after}");
                if live {
                    prop_assert!(says(&objective.unwrap_or_default(), "before"), "{after}");
                }
            }
        }
    }
}
