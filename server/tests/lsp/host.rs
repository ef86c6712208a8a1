//! Issue 23 §1: a folder whose `[scheduler] host` names another machine. Every surface says
//! where the note runs ("scheduled on NAME": the `live:` line's hint, the status lens,
//! `livenote/listNotes` and `livenote list`), *Run now* is still offered, and the language
//! server's scheduler does not fire the note when it comes due (the same folder without
//! `host` does: the control).

use std::path::Path;
use std::process::Command;

use expect_test::expect;
use serde_json::{Value, json};

use super::harness::{self, TestClient};
use super::utf16_caps;

/// No machine is called this (the test process's name comes from the system).
const ELSEWHERE: &str = "nas-of-issue-23";

/// Hourly, ran at 09:02 (Chicago): not due before 10:00.
const HOURLY: &str = "---\nlive:\n  objective: the time\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastAttemptAt: \"2026-11-23T15:01:59.000Z\"\n  lastRunAt: \"2026-11-23T15:02:00.000Z\"\n---\n# Time\n\n9:02\n";

fn settings() -> Value {
    json!({
        "scheduler": {"enabled": true},
        "agent": {"provider": "echo"},
        "providers": {"echo": {"kind": "command", "command": ["sh", "-c", "echo ran"]}},
    })
}

fn runs_started(root: &Path) -> usize {
    std::fs::read_dir(root.join(".livenote/runs")).map(|d| d.count()).unwrap_or(0)
}

/// What the surfaces show at 09:07 with `config` as the folder's `.livenote.toml`, and how many
/// runs started within a second of 10:00:30, when the note comes due.
async fn shown(config: &str) -> (String, usize) {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.path().join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
    let root_path = root.path().to_path_buf();
    let mut c = TestClient::start_in(root, &[("n.md", HOURLY)], utf16_caps(), settings(), true).await;
    let uri = c.open("n.md", HOURLY).await;
    c.diagnostics(&uri, 1).await;
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 12, "character": 0}}}),
        )
        .await;
    let hints: Vec<&str> =
        hints["result"].as_array().into_iter().flatten().filter_map(|h| h["label"].as_str()).collect();
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    let lenses: Vec<&str> = lenses["result"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["command"]["title"].as_str())
        .collect();
    let mut list = Value::Null;
    for _ in 0..200 {
        list = c.request("livenote/listNotes", Value::Null).await;
        if list["result"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let cli = |format: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(["list", "--format", format, "--at", "2026-11-23T15:07:00Z"])
            .current_dir(&root_path)
            .env("LIVENOTE_DATA_DIR", root_path.join(".data"))
            .env("LIVENOTE_CONFIG_DIR", root_path.join(".data"))
            .env("LIVENOTE_HOST", "desk")
            .env("TZ", "UTC")
            .output()
            .unwrap_or_else(|e| panic!("livenote list: {e}"));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let json: Value = serde_json::from_str(&cli("json")).unwrap_or_else(|e| panic!("{e}"));
    let table = cli("text").lines().skip(1).collect::<Vec<_>>().join("\n");
    // 10:00:30 in Chicago: the 10:00 occurrence is due.
    c.clock.set(harness::now() + chrono::TimeDelta::minutes(53) + chrono::TimeDelta::seconds(30));
    for _ in 0..50 {
        if runs_started(&root_path) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let runs = runs_started(&root_path);
    c.shutdown().await;
    let said = format!(
        "hints: {}\nlenses: {}\nlistNotes: {}\nlivenote list: {}\n{table}",
        hints.join(" | "),
        lenses.join(" | "),
        list["result"][0]["scheduledOn"],
        json[0]["scheduledOn"]
    );
    (said, runs)
}

#[tokio::test]
async fn a_note_scheduled_on_another_machine_says_so_everywhere_and_does_not_fire_here() {
    let (said, runs) = shown(&format!("[scheduler]\nhost = \"{ELSEWHERE}\"\n")).await;
    assert_eq!(runs, 0, "fired on a machine that is not the host");
    expect![[r#"
        hints: scheduled on nas-of-issue-23 | every hour · next 10:00 | 5 min ago
        lenses: ● Live · updated 5 min ago · next 10:00 · scheduled on nas-of-issue-23 | Run now | Pause
        listNotes: "nas-of-issue-23"
        livenote list: "nas-of-issue-23"
        n.md  live       -       2026-11-23T16:00:00+00:00  2026-11-23T15:02:00+00:00
            scheduled on nas-of-issue-23: runs here (desk) only by hand"#]]
    .assert_eq(&said);
    // The control: the same folder without a host fires here.
    let (said, runs) = shown("").await;
    assert_eq!(runs, 1, "{said}");
    assert!(!said.contains("scheduled on"), "{said}");
}

/// Without `[scheduler] host`, a run this machine did not make arrives with the note (a sync
/// tool wrote it): the editor is told once, as a message, that another machine runs the
/// folder and how to name a host; a second such run says nothing more.
#[tokio::test]
async fn another_machines_run_is_said_once_as_a_message() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("n.md", HOURLY)], utf16_caps(), settings(), true).await;
    // Indexed, and its scheduler has seen the note as it was.
    for _ in 0..200 {
        let list = c.request("livenote/listNotes", Value::Null).await;
        if list["result"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let synced = |id: &str, at: &str| {
        HOURLY
            .replace("2026-11-23T15:01:59.000Z", at)
            .replace("2026-11-23T15:02:00.000Z", at)
            .replace("---\n# Time", &format!("  lastRunId: {id}\n---\n# Time"))
    };
    for (id, at) in [
        ("01KAQ8XW0000000000000000AA", "2026-11-23T15:05:00.000Z"),
        ("01KAQ8XW0000000000000000AB", "2026-11-23T15:06:00.000Z"),
    ] {
        std::fs::write(c.root.path().join("n.md"), synced(id, at)).unwrap_or_else(|e| panic!("{e}"));
        c.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": c.uri("n.md"), "type": 2}]}))
            .await;
        if id.ends_with("AA") {
            let message = c.next_notification("window/showMessage").await;
            let text = message["message"].as_str().unwrap_or_default();
            assert!(text.contains("another machine runs"), "{message}");
            assert!(text.contains("01KAQ8XW0000000000000000AA"), "{message}");
            assert!(text.contains("[scheduler] host = \"NAME\""), "{message}");
        }
    }
    // The second run is in the index (its listNotes item) and was not said.
    for _ in 0..200 {
        let list = c.request("livenote/listNotes", Value::Null).await;
        if list["result"][0]["lastRunAt"].as_str().is_some_and(|t| t.starts_with("2026-11-23T15:06")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let said: Vec<Value> = c.drained().into_iter().filter(|n| n["method"] == "window/showMessage").collect();
    assert!(said.is_empty(), "said twice: {said:?}");
    c.shutdown().await;
}
