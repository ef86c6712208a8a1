//! Issue 21 §3 in the editor: a note renamed there (`workspace/didRenameFiles`) keeps its
//! history; *Undo last run* on the new name undoes the run made under the old one.

use serde_json::json;

use super::harness::TestClient;
use super::{CONFIG, undo_until, utf16_caps};

#[tokio::test]
async fn a_note_renamed_in_the_editor_keeps_its_history() {
    let note = "---\nlive:\n  objective: say something\n---\n# Renamed\n\nmine\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({"scheduler": {"enabled": false}});
    let files = [(".livenote.toml", CONFIG), ("a.md", note)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), settings, true).await;
    let a = c.open("a.md", note).await;
    c.diagnostics(&a, 1).await;
    assert_eq!(c.run_to_end(&a).await, "Updated: Agent wrote this.");
    // Saved, then renamed by the editor: the file moves, the buffer reopens under the new name.
    let ran = c.doc(&a).text;
    std::fs::write(c.root.path().join("a.md"), &ran).unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(c.root.path().join("a.md"), c.root.path().join("b.md")).unwrap_or_else(|e| panic!("{e}"));
    let b = c.uri("b.md");
    c.notify("workspace/didRenameFiles", json!({"files": [{"oldUri": a, "newUri": b}]})).await;
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": a}})).await;
    let b = c.open("b.md", &ran).await;
    // The rename moved the note's history at once, before anything asked for it.
    let _ = c.request("livenote/documentText", json!({"uri": b})).await;
    let history: Vec<String> = std::fs::read_dir(c.root.path().join(".livenote/history"))
        .map(|r| r.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    assert!(history.len() == 1 && history[0].starts_with("b.md-"), "{history:?}");

    let undone = undo_until(&mut c, &b, "# Renamed\n\nmine\n").await;
    assert!(undone.ends_with("# Renamed\n\nmine\n"), "{undone}");
    assert!(undone.contains("lastRunSummary: \"Undone: Updated: Agent wrote this.\""), "{undone}");
    c.shutdown().await;
}
