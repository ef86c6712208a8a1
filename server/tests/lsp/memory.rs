//! Issue 16 §3 in the editor: a run whose `command` provider answers with `"memory"` leaves
//! entries that the `live` key's hover counts and *Clear agent memory* (offered only then)
//! deletes through `workspace/executeCommand`.

use serde_json::json;

use super::harness::{TestClient, pos};
use super::{actions_at, utf16_caps};

/// Reads the run on stdin (so the pipe is drained) and answers a body and two memories.
const AGENT: &str = "cat > /dev/null\nprintf '%s' '{\"body\": \"Agent wrote this.\\n\", \"memory\": {\"sources\": \"bbc.com\", \"tried\": \"meteo.fr\"}}'\n";
const CONFIG: &str = "[agent]\nprovider = \"script\"\n[providers.script]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\ntimeout = \"10s\"\n";

async fn hover_on_live(c: &mut TestClient, uri: &str, text: &str) -> String {
    let at = text.find("live:").unwrap_or(0) + 1;
    let res = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": pos(text, at, false)}),
        )
        .await;
    res["result"]["contents"]["value"].as_str().unwrap_or("<none>").to_owned()
}

#[tokio::test]
async fn clear_agent_memory_is_offered_with_memory_and_the_hover_counts_it() {
    let note = "---\ntitle: Memory\nlive:\n  objective: remember things\n---\n# Memory\n\nmine\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({"scheduler": {"enabled": false}});
    let files = [(".livenote.toml", CONFIG), ("agent.sh", AGENT), ("m.md", note)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), settings, true).await;
    let uri = c.open("m.md", note).await;
    c.diagnostics(&uri, 1).await;

    // No memory yet: no action; the hover says so.
    let at = note.len() - 1;
    assert!(!actions_at(&mut c, &uri, note, at).await.contains("Clear agent memory"));
    let h = hover_on_live(&mut c, &uri, note).await;
    assert!(h.starts_with("**Live note**") && h.ends_with("\n\nAgent memory: empty."), "{h}");

    assert_eq!(c.run_to_end(&uri).await, "Updated: Agent wrote this.");
    let text = c.doc(&uri).text;
    let h = hover_on_live(&mut c, &uri, &text).await;
    assert!(h.contains("\n\nAgent memory: 2 entries (`livenote memory NOTE` lists them"), "{h}");
    let mut titles = String::new();
    for _ in 0..500 {
        titles = actions_at(&mut c, &uri, &text, text.len() - 1).await;
        if !titles.contains("Stop") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(titles.ends_with("Clear agent memory\n"), "{titles}");

    let memory_dir = c.root.path().join(".livenote/memory");
    assert_eq!(std::fs::read_dir(&memory_dir).map(|d| d.count()).unwrap_or(0), 1);
    let res = c
        .request("workspace/executeCommand", json!({"command": "livenote.clearMemory", "arguments": [uri]}))
        .await;
    assert_eq!(res["result"], json!({"cleared": true}), "{res}");
    assert_eq!(std::fs::read_dir(&memory_dir).map(|d| d.count()).unwrap_or(0), 0);
    assert!(!actions_at(&mut c, &uri, &text, text.len() - 1).await.contains("Clear agent memory"));
    assert!(hover_on_live(&mut c, &uri, &text).await.ends_with("Agent memory: empty."));
    // A second clear has nothing to do, and says so.
    let res = c
        .request("workspace/executeCommand", json!({"command": "livenote.clearMemory", "arguments": [uri]}))
        .await;
    assert_eq!(res["result"], json!({"cleared": false}), "{res}");
    c.shutdown().await;
}
