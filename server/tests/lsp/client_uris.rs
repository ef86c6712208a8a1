//! Issue 22: an editor matches documents by the URI's text, and editors spell one file
//! differently (Helix leaves `(` `)` unencoded, VS Code on Windows writes `c%3A`). The server
//! answers a path the client named in the client's own spelling: a run edits the open buffer
//! (not the disk behind it), and a symbol names an open note as the client opened it.

use serde_json::json;

use super::harness::TestClient;
use super::utf16_caps;

const NOTE: &str = "---\nlive:\n  objective: Say it is done.\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n# Done (1)\n\nNot yet.\n";

/// Helix's spelling (the `url` crate's): sub-delimiters such as `(` `)` stay as they are.
fn helix(uri: &str) -> String {
    uri.replace("%28", "(").replace("%29", ")")
}

#[tokio::test]
async fn a_run_edits_the_buffer_the_client_opened_under_its_own_spelling() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({
        "scheduler": {"enabled": false},
        "agent": {"provider": "p"},
        "providers": {"p": {"kind": "command", "command": ["sh", "-c", "printf 'Done now.\\n'"]}},
    });
    let mut c = TestClient::start_in(root, &[("plan(1).md", NOTE)], utf16_caps(), settings, true).await;
    let uri = helix(&c.uri("plan(1).md"));
    assert!(uri.ends_with("/plan(1).md"), "{uri}");
    c.open_uri(uri.clone(), NOTE).await;
    c.diagnostics(&uri, 1).await;
    let said = c.run_to_end(&uri).await;
    assert!(said.starts_with("Updated"), "{said}");
    assert!(c.doc(&uri).text.contains("Done now."), "the buffer got the run's edit: {}", c.doc(&uri).text);
    let disk = std::fs::read_to_string(c.root.path().join("plan(1).md")).unwrap_or_default();
    assert_eq!(disk, NOTE, "the disk behind the open buffer is untouched");
    c.shutdown().await;
}

#[tokio::test]
async fn a_symbol_names_an_open_note_as_the_client_spelled_it() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let files = [("notes(old)/plan.md", NOTE)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), json!({}), false).await;
    // Indexing runs in the background; wait for it (sleeping only between polls).
    let mut symbols = serde_json::Value::Null;
    for _ in 0..200 {
        symbols = c.request("workspace/symbol", json!({"query": "done"})).await;
        if symbols["result"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let uris: Vec<String> = symbols["result"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["location"]["uri"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(uris, vec![c.uri("notes(old)/plan.md")], "{symbols}");
    // Once the client names the note (it opens it, in its spelling), that spelling is used.
    let opened = helix(&c.uri("notes(old)/plan.md"));
    c.open_uri(opened.clone(), NOTE).await;
    c.diagnostics(&opened, 1).await;
    let symbols = c.request("workspace/symbol", json!({"query": "done"})).await;
    assert_eq!(symbols["result"][0]["location"]["uri"], opened.as_str(), "{symbols}");
    c.shutdown().await;
}
