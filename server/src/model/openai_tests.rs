use std::ffi::OsString;
use std::time::{Duration, Instant};

use super::*;
use crate::model::ToolSpec;
use crate::model::testing::{Flavor, MockModelServer, ScriptedReply};

const KEY: &str = "sk-test-SECRET-0123456789abcdef";
const KEY_VAR: &str = "LIVENOTE_TEST_OPENAI_KEY";

fn env(name: &str) -> Option<OsString> {
    (name == KEY_VAR).then(|| OsString::from(KEY))
}

fn fast() -> HttpOptions {
    crate::model::testing::fast_options()
}

fn client(server: &MockModelServer, key_var: Option<&str>) -> OpenAiClient {
    let cfg = OpenAiConfig {
        base_url: server.base_url(),
        model: "gpt-test".to_owned(),
        api_key_env: key_var.map(str::to_owned),
    };
    OpenAiClient::new(&cfg, None, &env).unwrap().with_options(fast())
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "edit_note".to_owned(),
        description: "Replace text".to_owned(),
        parameters: json!({"type": "object", "properties": {"old_text": {"type": "string"}}}),
    }]
}

fn request<'a>(messages: &'a [Message], tools: &'a [ToolSpec]) -> Request<'a> {
    Request { system: "You keep notes.", messages, tools, max_tokens: 512, json: false }
}

/// The error, checked for the key in both forms it may be shown.
fn clean(e: ModelError) -> ModelError {
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(KEY) && !shown.contains("SECRET"), "key leaked: {shown}");
    assert!(!e.to_string().contains('\n'), "not one line: {e}");
    e
}

#[tokio::test]
async fn text_reply_and_wire_format() {
    let server =
        MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Text("Hello, world".into())]).await;
    let client = client(&server, Some(KEY_VAR));
    let messages = [Message::user("Update the note")];
    let tools = tools();
    let turn = client.complete(request(&messages, &tools), CancellationToken::new()).await.unwrap();
    assert_eq!(turn.text, "Hello, world");
    assert!(turn.tool_calls.is_empty());
    assert_eq!(turn.stop_reason.as_deref(), Some("stop"));
    assert_eq!(turn.usage, Usage { input_tokens: 10, output_tokens: 2, cached_input_tokens: 0 });

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body["model"], "gpt-test");
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["max_tokens"], 512);
    assert_eq!(
        r.body["messages"],
        json!([
            {"role": "system", "content": "You keep notes."},
            {"role": "user", "content": "Update the note"},
        ])
    );
    assert_eq!(r.body["tools"][0]["type"], "function");
    assert_eq!(r.body["tools"][0]["function"]["name"], "edit_note");
    assert_eq!(r.body["tools"][0]["function"]["parameters"]["type"], "object");
    assert!(r.body.get("response_format").is_none());
    assert!(!format!("{client:?}").contains(KEY));
}

#[tokio::test]
async fn two_tool_calls_in_chunks_then_tool_results() {
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::ToolCalls(vec![
                ("edit_note".into(), json!({"old_text": "Paris is sunny", "new_text": "Paris: rain"})),
                ("read_file".into(), json!({"path": "notes/weather.md"})),
            ]),
            ScriptedReply::Text("Done.".into()),
        ],
    )
    .await;
    let client = client(&server, Some(KEY_VAR));
    let tools = tools();
    let mut messages = vec![Message::user("go")];
    let turn = client.complete(request(&messages, &tools), CancellationToken::new()).await.unwrap();
    assert_eq!(turn.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(turn.tool_calls.len(), 2);
    assert_eq!(turn.tool_calls[0].name, "edit_note");
    assert_eq!(
        turn.tool_calls[0].arguments,
        json!({"old_text": "Paris is sunny", "new_text": "Paris: rain"})
    );
    assert_eq!(turn.tool_calls[1].name, "read_file");
    assert_eq!(turn.tool_calls[1].arguments, json!({"path": "notes/weather.md"}));
    assert_ne!(turn.tool_calls[0].id, turn.tool_calls[1].id);

    messages.push(turn.message());
    messages.push(Message::tool_result(&turn.tool_calls[0].id, "ok", false));
    messages.push(Message::tool_result(&turn.tool_calls[1].id, "no such file", true));
    let turn2 = client.complete(request(&messages, &tools), CancellationToken::new()).await.unwrap();
    assert_eq!(turn2.text, "Done.");

    let body = &server.requests()[1].body;
    let wire = &body["messages"];
    assert_eq!(wire[2]["role"], "assistant");
    assert_eq!(wire[2]["content"], Value::Null);
    assert_eq!(wire[2]["tool_calls"][0]["id"], json!(turn.tool_calls[0].id));
    assert_eq!(wire[2]["tool_calls"][0]["type"], "function");
    assert_eq!(wire[2]["tool_calls"][1]["function"]["name"], "read_file");
    let args: Value =
        serde_json::from_str(wire[2]["tool_calls"][1]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"path": "notes/weather.md"}));
    assert_eq!(wire[3], json!({"role": "tool", "tool_call_id": turn.tool_calls[0].id, "content": "ok"}));
    assert_eq!(wire[4]["tool_call_id"], json!(turn.tool_calls[1].id));
    assert_eq!(wire[4]["content"], "Error: no such file");
}

#[tokio::test]
async fn retry_after_is_honoured_on_429() {
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![ScriptedReply::Status(429, Some(1)), ScriptedReply::Text("ok".into())],
    )
    .await;
    let client = client(&server, Some(KEY_VAR));
    let messages = [Message::user("go")];
    let started = Instant::now();
    let turn = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(turn.text, "ok");
    assert_eq!(server.requests().len(), 2);
    assert!(elapsed >= Duration::from_millis(950) && elapsed < Duration::from_secs(3), "{elapsed:?}");
}

#[tokio::test]
async fn server_errors_are_retried_then_give_up() {
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::Status(500, None),
            ScriptedReply::Status(503, None),
            ScriptedReply::Text("ok".into()),
        ],
    )
    .await;
    let client = client(&server, Some(KEY_VAR));
    let messages = [Message::user("go")];
    let turn = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap();
    assert_eq!(turn.text, "ok");
    assert_eq!(server.requests().len(), 3);

    // Four attempts at most, then the last error.
    let server = MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Status(502, None); 5]).await;
    let client = self::client(&server, Some(KEY_VAR));
    let e = clean(client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap_err());
    assert!(e.to_string().starts_with("server error (HTTP 502 from 127.0.0.1:"), "{e}");
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn auth_failure_names_the_variable_and_is_not_retried() {
    let server = MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Status(401, None)]).await;
    let client = client(&server, Some(KEY_VAR));
    let messages = [Message::user("go")];
    let e = clean(client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap_err());
    assert_eq!(e.to_string(), format!("authentication failed (HTTP 401): check {KEY_VAR}"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn no_key_variable_means_no_authorization_header() {
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![ScriptedReply::Text("local".into()), ScriptedReply::Status(401, None)],
    )
    .await;
    let client = client(&server, None);
    let messages = [Message::user("go")];
    let turn = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap();
    assert_eq!(turn.text, "local");
    assert_eq!(server.requests()[0].header("authorization"), None);
    let e = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap_err();
    assert!(e.to_string().contains("set api_key_env"), "{e}");
}

#[test]
fn missing_key_variable_is_a_clear_error() {
    let cfg = OpenAiConfig {
        base_url: "https://api.openai.com/v1".to_owned(),
        model: "gpt-4.1-mini".to_owned(),
        api_key_env: Some("OPENAI_API_KEY".to_owned()),
    };
    let e = OpenAiClient::new(&cfg, None, &|_: &str| None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "OPENAI_API_KEY is not set (named by api_key_env in the livenote configuration)"
    );
    let official = OpenAiClient::new(&cfg, Some("gpt-5"), &|_: &str| Some(OsString::from("k-123"))).unwrap();
    assert_eq!(official.model(), "gpt-5");
    let messages = [Message::user("x")];
    let body = official.body(&request(&messages, &[]));
    assert_eq!(body["max_completion_tokens"], 512);
    assert!(body.get("max_tokens").is_none() && body.get("tools").is_none());
}

#[tokio::test]
async fn stall_mid_stream_times_out() {
    let server = MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Stall]).await;
    let client = client(&server, Some(KEY_VAR))
        .with_options(HttpOptions { stall_timeout: Duration::from_millis(300), ..fast() });
    let messages = [Message::user("go")];
    let started = Instant::now();
    let e = clean(client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap_err());
    assert_eq!(e, ModelError::TimedOut(Duration::from_millis(300)));
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(server.requests().len(), 1, "a stall is not retried");
}

#[tokio::test]
async fn stop_mid_stream_returns_promptly() {
    let server = MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Stall]).await;
    let client = client(&server, Some(KEY_VAR));
    let messages = [Message::user("go")];
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let started = Instant::now();
    let e = client.complete(request(&messages, &[]), cancel).await.unwrap_err();
    assert_eq!(e, ModelError::Stopped);
    assert!(started.elapsed() < Duration::from_millis(1300), "{:?}", started.elapsed());

    // Already stopped: nothing is sent.
    let cancel = CancellationToken::new();
    cancel.cancel();
    assert_eq!(client.complete(request(&messages, &[]), cancel).await.unwrap_err(), ModelError::Stopped);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn json_mode_unknown_model_context_overflow_and_malformed() {
    let overflow = json!({"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}});
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::Text("```json\n{\"candidates\": [1]}\n```".into()),
            ScriptedReply::Status(404, None),
            ScriptedReply::Raw {
                status: 400,
                content_type: "application/json".into(),
                body: overflow.to_string(),
            },
            ScriptedReply::Raw {
                status: 200,
                content_type: "text/event-stream".into(),
                body: "data: {nope\n\n".into(),
            },
            ScriptedReply::Raw {
                status: 400,
                content_type: "application/json".into(),
                body: format!(r#"{{"error": {{"message": "bad header x-key {KEY}"}}}}"#),
            },
            ScriptedReply::Raw {
                status: 200,
                content_type: "text/html".into(),
                body: "<html></html>".into(),
            },
        ],
    )
    .await;
    let client = client(&server, Some(KEY_VAR));
    let messages = [Message::user("route")];
    let json_req = Request { json: true, ..request(&messages, &[]) };
    let turn = client.complete(json_req, CancellationToken::new()).await.unwrap();
    assert_eq!(turn.text, "{\"candidates\": [1]}");
    assert_eq!(server.requests()[0].body["response_format"], json!({"type": "json_object"}));

    let mut errors = Vec::new();
    for _ in 0..5 {
        errors.push(clean(
            client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap_err(),
        ));
    }
    let host = server.base_url().trim_start_matches("http://").trim_end_matches("/v1").to_owned();
    assert_eq!(errors[0].to_string(), format!("unknown model `gpt-test` (HTTP 404 from {host})"));
    assert_eq!(errors[1].to_string(), crate::model::error::CONTEXT_OVERFLOW);
    assert!(
        errors[2].to_string().starts_with(&format!("malformed response from {host}: bad JSON")),
        "{}",
        errors[2]
    );
    assert_eq!(errors[3].to_string(), format!("HTTP 400 from {host}: bad header x-key ***"));
    assert_eq!(
        errors[4].to_string(),
        format!("malformed response from {host}: expected an event stream, got `text/html`")
    );
    assert_eq!(server.requests().len(), 6, "none of these is retried");
}

/// A reply over `max_reply_bytes` and a tool call over `max_tool_args_bytes` (streamed or
/// whole) fail the call at once, without retries; replies within the bounds pass.
#[tokio::test]
async fn replies_and_tool_arguments_over_the_bounds_fail() {
    let big_args = json!({"old_text": "a".repeat(20_000)});
    let whole = json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "edit_note",
                "arguments": big_args.to_string()}}]}}],
    });
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::Text("x".repeat(100_000)),
            ScriptedReply::ToolCalls(vec![("edit_note".into(), big_args.clone())]),
            ScriptedReply::Raw {
                status: 200,
                content_type: "application/json".into(),
                body: whole.to_string(),
            },
            ScriptedReply::ToolCalls(vec![("edit_note".into(), json!({"old_text": "a".repeat(4_000)}))]),
            ScriptedReply::Text("y".repeat(30_000)),
        ],
    )
    .await;
    let client = client(&server, None).with_options(HttpOptions {
        max_reply_bytes: 64 * 1024,
        max_tool_args_bytes: 8 * 1024,
        ..fast()
    });
    let messages = [Message::user("go")];
    let tools = tools();
    let next = || client.complete(request(&messages, &tools), CancellationToken::new());
    let reply = "model reply too large: over 64 KiB (agent.max_reply_bytes)";
    let args = "model reply too large: a tool call's arguments are over 8 KiB (agent.max_tool_args_bytes)";
    assert_eq!(next().await.map_err(|e| e.to_string()).err().as_deref(), Some(reply));
    assert_eq!(next().await.map_err(|e| e.to_string()).err().as_deref(), Some(args));
    assert_eq!(next().await.map_err(|e| e.to_string()).err().as_deref(), Some(args), "whole JSON");
    assert_eq!(next().await.map(|t| t.tool_calls.len()).ok(), Some(1));
    assert_eq!(next().await.map(|t| t.text.len()).ok(), Some(30_000));
    assert_eq!(server.requests().len(), 5, "none of these is retried");
}

#[tokio::test]
async fn plain_json_reply_from_servers_that_do_not_stream() {
    let whole = json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_note", "arguments": "{}"}}]}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 3}},
    });
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![ScriptedReply::Raw {
            status: 200,
            content_type: "application/json".into(),
            body: whole.to_string(),
        }],
    )
    .await;
    let client = client(&server, None);
    let messages = [Message::user("go")];
    let turn = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap();
    assert_eq!(
        turn.tool_calls,
        vec![ToolCall { id: "c1".into(), name: "read_note".into(), arguments: json!({}) }]
    );
    assert_eq!(turn.usage, Usage { input_tokens: 7, output_tokens: 2, cached_input_tokens: 3 });
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let cfg = OpenAiConfig {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        model: "m".into(),
        api_key_env: None,
    };
    let client = OpenAiClient::new(&cfg, None, &env).unwrap().with_options(fast());
    let messages = [Message::user("go")];
    let e = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap_err();
    assert_eq!(e.to_string(), format!("cannot connect to 127.0.0.1:{port}: connection refused"));
}

#[test]
fn stream_decoding_tolerates_server_quirks() {
    let mut s = OpenAiStream::default();
    let events = [
        // No index: matched by id, then by "latest".
        r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{\"k\":"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}"#,
        // Arguments as an object, and a reused index with a new id.
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"y","arguments":{"z":2}}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"w","arguments":"{bad"}}]}}]}"#,
        r#"{"choices":[{"delta":{"content":null},"finish_reason":"tool_calls"}],"usage":null}"#,
    ];
    for data in events {
        assert!(!s.event(&SseEvent { event: "message".into(), data: data.into() }).unwrap());
    }
    let turn = s.finish(false).unwrap();
    let calls: Vec<_> =
        turn.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone())).collect();
    assert_eq!(
        calls,
        vec![
            ("a", "x", json!({"k": 1})),
            ("b", "y", json!({"z": 2})),
            ("c", "w", Value::String("{bad".into())),
        ]
    );

    assert_eq!(OpenAiStream::default().finish(false), Err(StreamError::Truncated));
    let mut s = OpenAiStream::default();
    let e = s.event(&SseEvent {
        event: "message".into(),
        data: r#"{"error":{"message":"upstream down","code":502}}"#.into(),
    });
    assert_eq!(e, Err(StreamError::Api { message: "upstream down".into(), retryable: true }));
}

#[tokio::test]
async fn streamed_usage_carries_cached_tokens() {
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::Text("done".into()).with_usage(1200, 34, 1000),
            ScriptedReply::ToolCalls(vec![("read_note".into(), json!({}))]).with_usage(50, 7, 0),
        ],
    )
    .await;
    let client = client(&server, Some(KEY_VAR));
    let messages = [Message::user("go")];
    let turn = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap();
    assert_eq!(turn.usage, Usage { input_tokens: 1200, output_tokens: 34, cached_input_tokens: 1000 });
    let turn = client.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap();
    assert_eq!(turn.usage, Usage { input_tokens: 50, output_tokens: 7, cached_input_tokens: 0 });
    // The usage chunk comes only when asked for.
    assert_eq!(server.requests()[0].body["stream_options"], json!({"include_usage": true}));
}
