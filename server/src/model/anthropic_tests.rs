use std::ffi::OsString;
use std::time::{Duration, Instant};

use super::*;
use crate::model::ToolSpec;
use crate::model::testing::{Flavor, MockModelServer, ScriptedReply};

const KEY: &str = "sk-ant-test-SECRET-0123456789abcdef";
const KEY_VAR: &str = "LIVENOTE_TEST_ANTHROPIC_KEY";

fn env(name: &str) -> Option<OsString> {
    (name == KEY_VAR).then(|| OsString::from(KEY))
}

fn fast() -> HttpOptions {
    crate::model::testing::fast_options()
}

fn client(server: &MockModelServer) -> AnthropicClient {
    let cfg = AnthropicConfig {
        base_url: server.base_url(),
        model: "claude-test".to_owned(),
        api_key_env: KEY_VAR.to_owned(),
    };
    AnthropicClient::new(&cfg, None, &env).unwrap().with_options(fast())
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "append_to_note".to_owned(),
        description: "Append".to_owned(),
        parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    }]
}

fn request<'a>(messages: &'a [Message], tools: &'a [ToolSpec]) -> Request<'a> {
    Request { system: "You keep notes.", messages, tools, max_tokens: 1024, json: false }
}

fn clean(e: ModelError) -> ModelError {
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(KEY) && !shown.contains("SECRET"), "key leaked: {shown}");
    assert!(!e.to_string().contains('\n'), "not one line: {e}");
    e
}

#[tokio::test]
async fn tool_arguments_over_the_bound_fail() {
    let server = MockModelServer::start(
        Flavor::Anthropic,
        vec![
            ScriptedReply::ToolCalls(vec![("append_to_note".into(), json!({"text": "a".repeat(20_000)}))]),
            ScriptedReply::ToolCalls(vec![("append_to_note".into(), json!({"text": "a".repeat(4_000)}))]),
        ],
    )
    .await;
    let client = client(&server).with_options(HttpOptions { max_tool_args_bytes: 8 * 1024, ..fast() });
    let messages = [Message::user("go")];
    let tools = tools();
    let request = || Request { system: "", messages: &messages, tools: &tools, max_tokens: 512, json: false };
    let e = client.complete(request(), CancellationToken::new()).await.map_err(|e| e.to_string());
    assert_eq!(
        e.err().as_deref(),
        Some("model reply too large: a tool call's arguments are over 8 KiB (agent.max_tool_args_bytes)")
    );
    let turn = client.complete(request(), CancellationToken::new()).await;
    assert_eq!(turn.map(|t| t.tool_calls.len()).ok(), Some(1));
    assert_eq!(server.requests().len(), 2, "not retried");
}

#[tokio::test]
async fn text_reply_and_wire_format() {
    let server =
        MockModelServer::start(Flavor::Anthropic, vec![ScriptedReply::Text("Bonjour, Paris".into())]).await;
    let client = client(&server);
    let messages = [Message::user("Update the note")];
    let tools = tools();
    let turn = client.complete(request(&messages, &tools), CancellationToken::new()).await.unwrap();
    assert_eq!(turn.text, "Bonjour, Paris");
    assert_eq!(turn.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(turn.usage, Usage { input_tokens: 10, output_tokens: 2, cached_input_tokens: 0 });

    let reqs = server.requests();
    let r = &reqs[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some(ANTHROPIC_VERSION));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.body["model"], "claude-test");
    assert_eq!(r.body["max_tokens"], 1024);
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["system"], "You keep notes.");
    assert_eq!(
        r.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Update the note"}]}])
    );
    assert_eq!(
        r.body["tools"],
        json!([{
            "name": "append_to_note",
            "description": "Append",
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }])
    );
    assert!(!format!("{client:?}").contains(KEY));
}

#[tokio::test]
async fn two_tool_calls_in_chunks_then_tool_results() {
    let server = MockModelServer::start(
        Flavor::Anthropic,
        vec![
            ScriptedReply::ToolCalls(vec![
                ("append_to_note".into(), json!({"text": "## Rain\nIt rains in Paris."})),
                ("read_file".into(), json!({"path": "a/b.md"})),
            ]),
            ScriptedReply::Text("Done.".into()),
        ],
    )
    .await;
    let client = client(&server);
    let tools = tools();
    let mut messages = vec![Message::user("go")];
    let turn = client.complete(request(&messages, &tools), CancellationToken::new()).await.unwrap();
    assert_eq!(turn.stop_reason.as_deref(), Some("tool_use"));
    let calls: Vec<_> = turn.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.clone())).collect();
    assert_eq!(
        calls,
        vec![
            ("append_to_note", json!({"text": "## Rain\nIt rains in Paris."})),
            ("read_file", json!({"path": "a/b.md"})),
        ]
    );

    messages.push(turn.message());
    messages.push(Message::tool_result(&turn.tool_calls[0].id, "appended", false));
    messages.push(Message::tool_result(&turn.tool_calls[1].id, "no such file", true));
    messages.push(Message::user("(2 of 25 tool calls used)"));
    let turn2 = client.complete(request(&messages, &tools), CancellationToken::new()).await.unwrap();
    assert_eq!(turn2.text, "Done.");

    let wire = &server.requests()[1].body["messages"];
    assert_eq!(wire.as_array().map(Vec::len), Some(3), "{wire}");
    assert_eq!(wire[1]["role"], "assistant");
    assert_eq!(
        wire[1]["content"],
        json!([
            {"type": "tool_use", "id": turn.tool_calls[0].id, "name": "append_to_note", "input": {"text": "## Rain\nIt rains in Paris."}},
            {"type": "tool_use", "id": turn.tool_calls[1].id, "name": "read_file", "input": {"path": "a/b.md"}},
        ])
    );
    assert_eq!(wire[2]["role"], "user");
    assert_eq!(
        wire[2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": turn.tool_calls[0].id, "content": "appended"},
            {"type": "tool_result", "tool_use_id": turn.tool_calls[1].id, "content": "no such file", "is_error": true},
            {"type": "text", "text": "(2 of 25 tool calls used)"},
        ])
    );
}

#[tokio::test]
async fn retries_429_and_overload_then_succeeds() {
    let server = MockModelServer::start(
        Flavor::Anthropic,
        vec![
            ScriptedReply::Status(429, Some(1)),
            ScriptedReply::Status(529, None),
            ScriptedReply::Status(500, None),
            ScriptedReply::Text("ok".into()),
        ],
    )
    .await;
    let client = client(&server);
    let messages = [Message::user("go")];
    let started = Instant::now();
    let turn = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(turn.text, "ok");
    assert_eq!(server.requests().len(), 4);
    assert!(elapsed >= Duration::from_millis(950) && elapsed < Duration::from_secs(3), "{elapsed:?}");
}

#[tokio::test]
async fn auth_failure_names_the_variable() {
    let server = MockModelServer::start(Flavor::Anthropic, vec![ScriptedReply::Status(401, None)]).await;
    let e = clean(
        client(&server)
            .complete(request(&[Message::user("go")], &[]), CancellationToken::new())
            .await
            .unwrap_err(),
    );
    assert_eq!(e.to_string(), format!("authentication failed (HTTP 401): check {KEY_VAR}"));
    assert_eq!(server.requests().len(), 1);

    let cfg = AnthropicConfig {
        base_url: server.base_url(),
        model: "m".into(),
        api_key_env: "ANTHROPIC_API_KEY".into(),
    };
    let e = AnthropicClient::new(&cfg, None, &|_: &str| None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ANTHROPIC_API_KEY is not set (named by api_key_env in the livenote configuration)"
    );
}

#[tokio::test]
async fn stall_times_out_and_stop_is_prompt() {
    let server =
        MockModelServer::start(Flavor::Anthropic, vec![ScriptedReply::Stall, ScriptedReply::Stall]).await;
    let messages = [Message::user("go")];
    let stalling =
        client(&server).with_options(HttpOptions { stall_timeout: Duration::from_millis(300), ..fast() });
    let e = clean(stalling.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap_err());
    assert_eq!(e, ModelError::TimedOut(Duration::from_millis(300)));

    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let started = Instant::now();
    let e = client(&server).complete(request(&messages, &[]), cancel).await.unwrap_err();
    assert_eq!(e, ModelError::Stopped);
    assert!(started.elapsed() < Duration::from_millis(1300), "{:?}", started.elapsed());
}

#[tokio::test]
async fn json_mode_and_errors() {
    let overflow = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}});
    let mid_stream_error = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"nope\"}}\n\n",
    );
    let server = MockModelServer::start(
        Flavor::Anthropic,
        vec![
            ScriptedReply::Text("Here you go:\n{\"candidates\": [\"a.md\"]}".into()),
            ScriptedReply::Status(404, None),
            ScriptedReply::Raw {
                status: 400,
                content_type: "application/json".into(),
                body: overflow.to_string(),
            },
            ScriptedReply::Raw {
                status: 200,
                content_type: "text/event-stream".into(),
                body: mid_stream_error.into(),
            },
        ],
    )
    .await;
    let client = client(&server);
    let messages = [Message::user("route")];
    let turn = client
        .complete(Request { json: true, ..request(&messages, &[]) }, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(turn.text, "{\"candidates\": [\"a.md\"]}");
    let system = server.requests()[0].body["system"].as_str().unwrap_or_default().to_owned();
    assert!(system.starts_with("You keep notes.\n\n") && system.ends_with(JSON_INSTRUCTION), "{system}");

    let host = server.base_url().trim_start_matches("http://").to_owned();
    let mut errors = Vec::new();
    for _ in 0..3 {
        errors.push(clean(
            client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap_err(),
        ));
    }
    assert_eq!(errors[0].to_string(), format!("unknown model `claude-test` (HTTP 404 from {host})"));
    assert_eq!(errors[1].to_string(), crate::model::error::CONTEXT_OVERFLOW);
    assert_eq!(errors[2].to_string(), format!("error from {host}: nope"));
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn whole_message_and_stream_quirks() {
    let whole = json!({
        "type": "message", "stop_reason": "tool_use",
        "content": [{"type": "text", "text": "Let me look."}, {"type": "tool_use", "id": "t1", "name": "read_note", "input": {"a": 1}}],
        "usage": {"input_tokens": 5, "cache_read_input_tokens": 100, "output_tokens": 9},
    });
    let turn = AnthropicStream::whole(whole.to_string().as_bytes()).unwrap();
    assert_eq!(turn.text, "Let me look.");
    assert_eq!(
        turn.tool_calls,
        vec![ToolCall { id: "t1".into(), name: "read_note".into(), arguments: json!({"a": 1}) }]
    );
    assert_eq!(turn.usage, Usage { input_tokens: 105, output_tokens: 9, cached_input_tokens: 100 });

    // Thinking blocks are skipped; a tool call with no input deltas has `{}`.
    let mut s = AnthropicStream::default();
    for data in [
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"read_note","input":{}}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":4}}"#,
    ] {
        assert!(!s.event(&SseEvent { event: "x".into(), data: data.into() }).unwrap());
    }
    assert!(
        s.event(&SseEvent { event: "message_stop".into(), data: r#"{"type":"message_stop"}"#.into() })
            .unwrap()
    );
    let turn = s.finish(true).unwrap();
    assert_eq!(turn.text, "");
    assert_eq!(turn.tool_calls[0].arguments, json!({}));
    assert_eq!(AnthropicStream::default().finish(false), Err(StreamError::Truncated));
    let mut s = AnthropicStream::default();
    let e = s.event(&SseEvent {
            event: "content_block_delta".into(),
            data: r#"{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{"}}"#.into(),
        });
    assert!(matches!(e, Err(StreamError::Malformed(_))));
}

#[test]
fn base_url_with_or_without_v1() {
    for base in ["https://api.anthropic.com", "https://api.anthropic.com/", "https://api.anthropic.com/v1"] {
        let cfg = AnthropicConfig { base_url: base.into(), model: "m".into(), api_key_env: KEY_VAR.into() };
        let c = AnthropicClient::new(&cfg, Some("claude-x"), &env).unwrap();
        assert_eq!(c.endpoint.url.as_str(), "https://api.anthropic.com/v1/messages");
        assert_eq!(c.model(), "claude-x");
    }
}

#[tokio::test]
async fn streamed_usage_counts_cache_reads_as_input_and_reports_them() {
    let server = MockModelServer::start(
        Flavor::Anthropic,
        vec![ScriptedReply::ToolCalls(vec![("read_note".into(), json!({}))]).with_usage(1200, 34, 1000)],
    )
    .await;
    let client = client(&server);
    let messages = [Message::user("go")];
    let turn = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap();
    assert_eq!(turn.usage, Usage { input_tokens: 1200, output_tokens: 34, cached_input_tokens: 1000 });
}
