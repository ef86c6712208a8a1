//! Issue 23 §1: a folder whose `[scheduler] host` names another machine. Every surface says
//! where the note runs ("scheduled on NAME": the `live:` line's hint, the status lens,
//! `livenote/listNotes` and `livenote list`), *Run now* is still offered, and the language
//! server's scheduler does not fire the note although it is due.

use std::process::Command;

use chrono::{DateTime, Utc};
use expect_test::expect;
use serde_json::{Value, json};

use super::harness::TestClient;
use super::utf16_caps;

/// No machine is called this (the test process's name comes from the system).
const ELSEWHERE: &str = "nas-of-issue-23";

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[tokio::test]
async fn a_note_scheduled_on_another_machine_says_so_everywhere_and_does_not_fire_here() {
    // Never run: due now wherever it is scheduled.
    let text = "---\nlive:\n  objective: the time\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Time\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let config = format!(
        "[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"echo\", \"ran\"]\n[scheduler]\nhost = \"{ELSEWHERE}\"\n"
    );
    std::fs::write(root.path().join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
    let root_path = root.path().to_path_buf();
    let mut c = TestClient::start_in(root, &[("n.md", text)], utf16_caps(), Value::Null, true).await;
    c.clock.set(at("2026-11-23T09:00:30Z"));
    let uri = c.open("n.md", text).await;
    c.diagnostics(&uri, 1).await;
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 8, "character": 0}}}),
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
    let list_on = list["result"][0]["scheduledOn"].clone();
    let cli = |format: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(["list", "--format", format, "--at", "2026-11-23T09:00:30Z"])
            .current_dir(&root_path)
            .env("LIVENOTE_DATA_DIR", root_path.join(".data"))
            .env("LIVENOTE_CONFIG_DIR", root_path.join(".data"))
            .env_remove("LIVENOTE_HOST")
            .env("TZ", "UTC")
            .output()
            .unwrap_or_else(|e| panic!("livenote list: {e}"));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let json: Value = serde_json::from_str(&cli("json")).unwrap_or_else(|e| panic!("{e}"));
    let text_list = cli("text");
    let table = text_list.lines().skip(1).collect::<Vec<_>>().join("\n");
    // Due, trusted, scheduling on: a scheduler that ignored the host would have run it by now.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let on_disk = std::fs::read_to_string(root_path.join("n.md")).unwrap_or_default();
    c.shutdown().await;
    assert!(!on_disk.contains("lastRunId"), "fired on a machine that is not the host:\n{on_disk}");
    expect![[r#"
        hints: scheduled on nas-of-issue-23 | every hour · due now
        lenses: ● Live · never run · due now · scheduled on nas-of-issue-23 | Run now | Pause
        listNotes: "nas-of-issue-23"
        livenote list: "nas-of-issue-23"
        n.md  live       cron    2026-11-23T09:00:30+00:00  never
            scheduled on nas-of-issue-23: runs here only by hand"#]]
    .assert_eq(&format!(
        "hints: {}\nlenses: {}\nlistNotes: {list_on}\nlivenote list: {}\n{table}",
        hints.join(" | "),
        lenses.join(" | "),
        json[0]["scheduledOn"]
    ));
}
