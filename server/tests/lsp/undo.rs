//! Issue 14: *Undo last run* in the editor leaves runtime fields that describe the body that is
//! there: the summary says the run was undone; `lastRunAt` and `lastRunId` stay (the schedule's
//! anchor, the latest attempt); the run stays in `livenote history`; undoing the undo gives the
//! run's text and summary back.

use std::process::Command;

use serde_json::{Value, json};

use super::harness::TestClient;
use super::{CONFIG, undo_until, utf16_caps};

/// The lines of the note's runtime fields.
fn runtime(text: &str) -> String {
    text.lines().filter(|l| l.starts_with("  last")).map(|l| format!("{l}\n")).collect()
}

#[tokio::test]
async fn undo_in_the_buffer_marks_the_summary_and_redo_restores_it() {
    let note = "---\ntitle: Undo\nlive:\n  objective: say something\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Undo\n\nmine\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Trusted; scheduling off, so that only the manual run writes the note.
    let settings = json!({"scheduler": {"enabled": false}});
    let files = [(".livenote.toml", CONFIG), ("undo.md", note)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), settings, true).await;
    let uri = c.open("undo.md", note).await;
    c.diagnostics(&uri, 1).await;
    assert_eq!(c.run_to_end(&uri).await, "Updated: Agent wrote this.");
    let ran = c.doc(&uri).text;
    let ran_fields = runtime(&ran);
    assert!(ran_fields.contains("  lastRunSummary: \"Updated: Agent wrote this.\"\n"), "{ran}");

    let undone = undo_until(&mut c, &uri, "# Undo\n\nmine\n").await;
    assert!(undone.ends_with("# Undo\n\nmine\n"), "{undone}");
    assert_eq!(
        runtime(&undone),
        ran_fields.replace("\"Updated: Agent wrote this.\"", "\"Undone: Updated: Agent wrote this.\""),
        "only the summary changes"
    );
    // The file is untouched (the edits went to the buffer); its history lists the run and the undo.
    assert_eq!(std::fs::read_to_string(c.root.path().join("undo.md")).unwrap_or_default(), note);
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["history", "undo.md", "--format", "json"])
        .current_dir(c.root.path())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("livenote history: {e}"));
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    let triggers: Vec<&str> =
        runs.as_array().into_iter().flatten().filter_map(|r| r["trigger"].as_str()).collect();
    assert_eq!(triggers, ["undo", "manual"], "{runs}");

    let redone = undo_until(&mut c, &uri, "# Undo\n\nAgent wrote this.\n").await;
    assert_eq!(redone, ran);
    c.shutdown().await;
}
