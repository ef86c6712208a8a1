//! Issue 26: `$/cancelRequest` is honoured. An editor that sends a completion, then the next
//! keystroke and a cancel of that completion, gets -32800 (RequestCancelled) for it and no
//! work is done for an answer no one wants; the next completion is answered on the new text.

use serde_json::json;

use super::harness::{TestClient, pos};
use super::{cursor, utf16_caps};

#[tokio::test]
async fn a_completion_superseded_by_the_next_keystroke_answers_request_cancelled() {
    let (typed, at) = cursor("---\nlive:\n  objective: x\n  $0\n---\n# N\n");
    let mut c = TestClient::start(&[("n.md", typed.as_str())], utf16_caps()).await;
    let uri = c.open("n.md", &typed).await;
    c.diagnostics(&uri, 1).await;
    let next = format!("{}s{}", &typed[..at], &typed[at..]);
    let keystroke = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": next}]}});
    let params = json!({"textDocument": {"uri": uri}, "position": pos(&typed, at, false)});
    let superseded = c
        .request_then("textDocument/completion", params, |id| {
            vec![keystroke, json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}})]
        })
        .await;
    assert_eq!(superseded["error"]["code"], -32800, "{superseded}");
    assert!(superseded.get("result").is_none(), "{superseded}");
    // The keystroke was applied: the next completion, not cancelled, is answered on the new text.
    let params = json!({"textDocument": {"uri": uri}, "position": pos(&next, at + 1, false)});
    let answered = c.request("textDocument/completion", params).await;
    let labels: Vec<&str> =
        answered["result"].as_array().into_iter().flatten().filter_map(|i| i["label"].as_str()).collect();
    assert!(labels.contains(&"schedule") || labels.contains(&"skills"), "{answered}");
    c.shutdown().await;
}
