//! Skills in the editor: `live.skills` entries are completed from the workspace's, the user's
//! and livenote's skills; an unknown name gets `live/unknown-skill` with a fix; hover shows a
//! skill's description and file; go to definition opens it; skill files get their own
//! diagnostics; workspace symbols list skills.

use serde_json::{Value, json};

use super::harness::{TestClient, apply, pos};
use super::{check, cursor, render_diags, utf16_caps};
use expect_test::expect;

const DIGEST: &str = "---\nname: weekly-digest\ndescription: Sum up a week of notes.\n---\nGroup by day.\n";
const NOTE: &str = "---\nlive:\n  objective: x\n  skills: [weekly-digst, tone]\n---\n# N\n";

async fn start() -> TestClient {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let files = [
        ("skills/digest.md", DIGEST),
        ("skills/draft.md", "---\nname: draft\n---\nNo description yet.\n"),
        ("skills/dup/SKILL.md", "---\nname: weekly-digest\ndescription: Another digest.\n---\nx\n"),
        (".config/skills/tone.md", "---\nname: tone\ndescription: A friendly tone.\n---\nBe kind.\n"),
        ("n.md", NOTE),
    ];
    TestClient::start_in(root, &files, utf16_caps(), Value::Null, true).await
}

#[tokio::test]
async fn unknown_skills_are_reported_with_a_fix() {
    let mut c = start().await;
    let uri = c.open("n.md", NOTE).await;
    let diags = c.diagnostics(&uri, 1).await;
    check(
        &render_diags(&diags),
        expect![[r#"
            3:11-3:23 2 live/unknown-skill no skill named `weekly-digst` (did you mean `weekly-digest`?); skills live in the workspace's skills/ folder, ~/.config/livenote/skills/ or livenote itself
        "#]],
    );
    let actions = c.fixes_for(&uri, &diags).await;
    let action = &actions["result"][0];
    assert_eq!(action["title"], "Use skill `weekly-digest`", "{actions}");
    assert_eq!(action["isPreferred"], true, "{actions}");
    let edits = action["edit"]["documentChanges"][0]["edits"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        apply(NOTE, &edits, false),
        "---\nlive:\n  objective: x\n  skills: [weekly-digest, tone]\n---\n# N\n"
    );
    c.shutdown().await;
}

#[tokio::test]
async fn skill_names_are_completed_described_and_lead_to_their_file() {
    let mut c = start().await;
    let uri = c.open("n.md", NOTE).await;
    let _ = c.diagnostics(&uri, 1).await;
    // Completion inside the list: every skill the note does not list yet.
    let (typed, at) = cursor("---\nlive:\n  objective: x\n  skills: [tone, $0]\n---\n# N\n");
    c.edit(&uri, 0, NOTE.len(), &typed).await;
    let rendered: Vec<String> = c
        .completions(&uri, &typed, at)
        .await
        .iter()
        .map(|i| {
            format!(
                "{} {} {} | {}",
                i["label"].as_str().unwrap_or(""),
                i["kind"],
                i["detail"].as_str().unwrap_or(""),
                i["documentation"]["value"].as_str().unwrap_or("")
            )
        })
        .collect();
    check(
        &rendered.join("\n"),
        expect![[r#"
            weekly-digest 18 workspace skill | Sum up a week of notes.
            writing-live-notes 18 built-in skill | How to write a good live note (objective, triggers, windows or cron, tools, until, layout); use it when creating or revising a note's live block."#]],
    );
    // Hover on the user's skill.
    let (hovered, at) = cursor(
        "---\nlive:\n  objective: x\n  skills: [to$0ne, weekly-digest, writing-live-notes]\n---\n# N\n",
    );
    c.edit(&uri, 0, typed.len(), &hovered).await;
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": pos(&hovered, at, false)}),
        )
        .await;
    let value = hover["result"]["contents"]["value"].as_str().unwrap_or_default();
    let value = value.replace(&c.root.path().display().to_string(), "<ws>");
    check(
        &value,
        expect![[r#"
            **Skill `tone`**

            A friendly tone.

            User skill, `<ws>/.config/skills/tone.md`. Runs of this note get its guidance in full."#]],
    );
    // Definition: the workspace skill's file; a built-in skill has none.
    let at = hovered.find("weekly-digest").unwrap_or_default() + 3;
    let def = c
        .request(
            "textDocument/definition",
            json!({"textDocument": {"uri": uri}, "position": pos(&hovered, at, false)}),
        )
        .await;
    assert_eq!(def["result"]["uri"], json!(c.uri("skills/digest.md")), "{def}");
    assert_eq!(def["result"]["range"]["start"], json!({"line": 0, "character": 0}), "{def}");
    let at = hovered.find("writing-live-notes").unwrap_or_default() + 3;
    let def = c
        .request(
            "textDocument/definition",
            json!({"textDocument": {"uri": uri}, "position": pos(&hovered, at, false)}),
        )
        .await;
    assert_eq!(def["result"], Value::Null, "{def}");
    c.shutdown().await;
}

#[tokio::test]
async fn skill_files_get_their_diagnostics_and_are_workspace_symbols() {
    let mut c = start().await;
    let draft = c.open("skills/draft.md", "---\nname: draft\n---\nNo description yet.\n").await;
    check(
        &render_diags(&c.diagnostics(&draft, 1).await),
        expect![[r#"
            0:0-0:3 2 live/skill-missing-field a skill file needs `description` in its frontmatter: one line on when to use it; runs show it in the catalog
        "#]],
    );
    let dup_text = "---\nname: weekly-digest\ndescription: Another digest.\n---\nx\n";
    let dup = c.open("skills/dup/SKILL.md", dup_text).await;
    check(
        &render_diags(&c.diagnostics(&dup, 1).await),
        expect![[r#"
            1:6-1:19 2 live/duplicate-skill the skill `weekly-digest` is also defined in skills/digest.md; notes and runs get only one of them (the first by path): rename one
        "#]],
    );
    // A note outside the skills folder is no skill file.
    let other = c.open("n.md", "---\ntitle: x\n---\n# N\n").await;
    assert_eq!(c.diagnostics(&other, 1).await, Vec::<Value>::new());
    // The roots are indexed in the background; their skills come with them.
    let mut symbols = Value::Null;
    for _ in 0..200 {
        symbols = c.request("workspace/symbol", json!({"query": "dig"})).await;
        if symbols["result"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let rendered: Vec<String> = symbols["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            format!(
                "{} {} {} {}",
                s["name"],
                s["kind"],
                s["containerName"],
                s["location"]["uri"] == json!(c.uri("skills/digest.md"))
            )
        })
        .collect();
    assert_eq!(rendered, [r#""weekly-digest" 12 "workspace skill · skills/digest.md" true"#]);
    let all = c.request("workspace/symbol", json!({"query": ""})).await;
    let names: Vec<&str> =
        all["result"].as_array().into_iter().flatten().filter_map(|s| s["name"].as_str()).collect();
    assert!(names.contains(&"tone") && names.contains(&"weekly-digest"), "{names:?}");
    assert!(!names.contains(&"writing-live-notes"), "a built-in skill has no file: {names:?}");
    c.shutdown().await;
}

/// A skill file created while a note is open: the note's `live.skills` is checked again.
#[tokio::test]
async fn a_new_skill_file_clears_the_warning_of_an_open_note() {
    let mut c = start().await;
    let note = "---\nlive:\n  objective: x\n  skills: [fresh]\n---\n# N\n";
    let uri = c.open("n.md", note).await;
    let diags = c.diagnostics(&uri, 1).await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], "live/unknown-skill");
    let path = c.root.path().join("skills/fresh.md");
    std::fs::write(&path, "---\nname: fresh\ndescription: Just written.\n---\nNew.\n")
        .unwrap_or_else(|e| panic!("{e}"));
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": c.uri("skills/fresh.md"), "type": 1}]}),
    )
    .await;
    assert_eq!(c.diagnostics(&uri, 1).await, Vec::<Value>::new());
    c.shutdown().await;
}
