//! Issue 16 §5: the hover of `lastRunAt` says what the latest run did and cost (model calls,
//! tool calls by name, tokens with the cached part, wall time), as the scripted model server
//! reported it.

use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::json;

use super::harness::{TestClient, pos};
use super::utf16_caps;

#[tokio::test]
async fn hover_of_last_run_at_shows_the_latest_runs_totals() {
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::ToolCalls(vec![(
                "edit_note".to_owned(),
                json!({"old_text": "old body", "new_text": "new body"}),
            )])
            .with_usage(1200, 30, 1000),
            ScriptedReply::Text("Replaced the body.".to_owned()).with_usage(1300, 20, 1100),
        ],
    )
    .await;
    let config = format!(
        "[agent]\nprovider = \"m\"\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\n",
        server.base_url()
    );
    let note = "---\ntitle: Costs\nlive:\n  objective: say something\n---\n# Costs\n\nold body\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({"scheduler": {"enabled": false}});
    let files = [(".livenote.toml", config.as_str()), ("costs.md", note)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), settings, true).await;
    let uri = c.open("costs.md", note).await;
    c.diagnostics(&uri, 1).await;
    assert_eq!(c.run_to_end(&uri).await, "Replaced the body.");
    let text = c.doc(&uri).text;
    assert!(text.ends_with("# Costs\n\nnew body\n"), "{text}");
    let at = text.find("lastRunAt").unwrap_or_else(|| panic!("no lastRunAt in {text}"));
    let id_line = text.lines().find(|l| l.trim_start().starts_with("lastRunId:")).unwrap_or_default();
    let id = id_line.trim_start().trim_start_matches("lastRunId:").trim().trim_matches('"').to_owned();
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": pos(&text, at + 2, false)}),
        )
        .await;
    let markdown = hover["result"]["contents"]["value"].as_str().unwrap_or_default().replace(&id, "ID");
    // The engine's clock is the test's manual clock: the run took no time on it.
    assert!(
        markdown.contains(
            "The latest run (`ID`): 2 model calls, 1 tool call (edit_note 1), 0.0 s; 2,550 tokens: 2,500 input (2,100 cached), 50 output."
        ),
        "{markdown}"
    );
    // Other keys do not show it.
    let other = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": pos(&text, text.find("objective").unwrap_or(0) + 2, false)}),
        )
        .await;
    assert!(
        !other["result"]["contents"]["value"].as_str().unwrap_or_default().contains("model calls"),
        "{other}"
    );
    c.shutdown().await;
}
