//! CRLF notes through the editor's code actions: what "Make live" and "Pause" write takes the
//! note's line ending, the one most of its lines end with (`text::eol`), even when the first
//! line is the odd one out.

use serde_json::{Value, json};

use super::harness::TestClient;
use super::{check, utf16_caps};
use expect_test::expect;

/// The code action titled `title` at the start of line `line`.
async fn action(c: &mut TestClient, uri: &str, line: u32, title: &str) -> Value {
    let at = json!({"line": line, "character": 0});
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": at, "end": at},
                   "context": {"diagnostics": []}}),
        )
        .await;
    let found = actions["result"].as_array().into_iter().flatten().find(|a| a["title"] == title).cloned();
    found.unwrap_or_else(|| panic!("no {title:?} in {actions}"))
}

#[tokio::test]
async fn make_live_and_pause_write_the_notes_line_ending() {
    let mut c = TestClient::start(&[], utf16_caps()).await;
    // CRLF but for its first line (a heading a template wrote).
    let uri = c.open("plain.md", "# Groceries\n\r\nmilk\r\neggs\r\n").await;
    c.diagnostics(&uri, 1).await;
    let make_live = action(&mut c, &uri, 2, "Make live").await;
    c.apply_workspace_edit(&make_live["edit"]).await;
    let diags = c.diagnostics(&uri, 2).await;
    assert!(diags.is_empty(), "{diags:?}");
    let pause = action(&mut c, &uri, 2, "Pause").await;
    c.apply_workspace_edit(&pause["edit"]).await;
    c.diagnostics(&uri, 3).await;
    check(
        &c.doc(&uri).text.replace('\r', "␍"),
        expect![[r#"
            ---␍
            live:␍
              objective: 'Keep this note about "Groceries" up to date.'␍
              active: false␍
            ---␍
            # Groceries
            ␍
            milk␍
            eggs␍
        "#]],
    );
    c.shutdown().await;
}

/// A note run while it was LF, then given CRLF endings in the editor (VS Code's "Change End
/// of Line Sequence", or a checkout with git's `autocrlf`): *Undo last run* undoes the run
/// without asking whether to overwrite edits, since only the line endings changed, and the
/// restored body is CRLF.
#[tokio::test]
async fn undo_last_run_after_the_buffer_became_crlf() {
    let note = "---\nlive:\n  objective: say something\n---\n# T\n\nmine\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({"scheduler": {"enabled": false}});
    let files = [(".livenote.toml", super::CONFIG), ("n.md", note)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), settings, true).await;
    let uri = c.open("n.md", note).await;
    c.diagnostics(&uri, 1).await;
    assert_eq!(c.run_to_end(&uri).await, "Updated: Agent wrote this.");
    let ran = c.doc(&uri).text;
    assert!(ran.ends_with("# T\n\nAgent wrote this.\n"), "{ran:?}");
    c.edit(&uri, 0, ran.len(), &ran.replace('\n', "\r\n")).await;

    let undone = super::undo_until(&mut c, &uri, "# T\r\n\r\nmine\r\n").await;
    assert!(undone.ends_with("# T\r\n\r\nmine\r\n"), "{undone:?}");
    assert!(undone.match_indices('\n').all(|(i, _)| undone[..i].ends_with('\r')), "{undone:?}");
    let asked = c.asked();
    assert!(asked.iter().all(|q| !q.contains("edited")), "{asked:?}");
    c.shutdown().await;
}
