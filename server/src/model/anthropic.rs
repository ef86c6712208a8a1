//! The `anthropic` provider (SPEC 6): the Messages API (`POST {base_url}/v1/messages`) with
//! tool use, always streamed so that Stop ends a reply mid-way.
//!
//! The API has no JSON mode, so a `json` request asks for one object in the system prompt and
//! the reply's text is cut down to that object.

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{
    self, ApiKey, Call, Decoder, Endpoint, HttpOptions, SseEvent, StreamError, extract_json_object,
};
use crate::config::{AnthropicConfig, Env};
use crate::model::error::ModelError;
use crate::model::{BoxFuture, Message, ModelClient, Request, Role, ToolCall, Turn, Usage};

/// The API version this code speaks (its event and block shapes).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Appended to the system prompt of a `json` request.
const JSON_INSTRUCTION: &str =
    "Reply with a single JSON object and nothing else: no prose before or after it, no code fences.";

/// A model behind the Anthropic Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    client: reqwest::Client,
    endpoint: Endpoint,
    model: String,
    key: ApiKey,
    opts: HttpOptions,
}

impl AnthropicClient {
    /// A client for `cfg`, with the note's `model:` overriding the configured one. Fails when
    /// the key variable named by `api_key_env` is unset or `base_url` is not a URL.
    pub fn new(
        cfg: &AnthropicConfig,
        model_override: Option<&str>,
        env: &dyn Env,
    ) -> Result<Self, ModelError> {
        let model = model_override.map(str::trim).filter(|m| !m.is_empty()).unwrap_or(cfg.model.trim());
        if model.is_empty() {
            return Err(ModelError::Config("the anthropic provider has no `model`".to_owned()));
        }
        // Accept a base_url that already ends in /v1 (as OpenAI-style URLs do).
        let path = if cfg.base_url.trim().trim_end_matches('/').ends_with("/v1") {
            "messages"
        } else {
            "v1/messages"
        };
        let endpoint = Endpoint::new(&cfg.base_url, path)?;
        let key = ApiKey::from_env(env, &cfg.api_key_env)?;
        let client = http::client_for(&endpoint)?;
        Ok(AnthropicClient { client, endpoint, model: model.to_owned(), key, opts: HttpOptions::default() })
    }

    /// Replace the timeouts and retry policy.
    pub fn with_options(mut self, opts: HttpOptions) -> Self {
        self.opts = opts;
        self
    }

    /// The model requests go to.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body of `req`.
    fn body(&self, req: &Request<'_>) -> Value {
        let system = if req.json {
            format!("{}\n\n{JSON_INSTRUCTION}", req.system).trim().to_owned()
        } else {
            req.system.to_owned()
        };
        let mut body = json!({
            "model": self.model,
            // Required by the API, and 0 is rejected.
            "max_tokens": req.max_tokens.max(1),
            "messages": wire_messages(req.messages),
            "stream": true,
        });
        if !system.is_empty() {
            body["system"] = json!(system);
        }
        if !req.tools.is_empty() {
            body["tools"] = req
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
        }
        body
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.insert("anthropic-version", HeaderValue::from_static(ANTHROPIC_VERSION));
        headers.insert("x-api-key", self.key.header("")?);
        Ok(headers)
    }

    async fn run(&self, req: Request<'_>, cancel: CancellationToken) -> Result<Turn, ModelError> {
        let body = serde_json::to_vec(&self.body(&req))
            .map_err(|e| ModelError::InvalidOutput(format!("cannot encode the request: {e}")))?;
        let call = Call {
            client: &self.client,
            endpoint: &self.endpoint,
            headers: self.headers()?,
            body,
            model: &self.model,
            key: Some(&self.key),
            auth_hint: format!("check {}", self.key.var()),
            opts: &self.opts,
        };
        let mut turn = http::execute::<AnthropicStream>(&call, &cancel).await?;
        if req.json
            && let Some(object) = extract_json_object(&turn.text)
        {
            turn.text = object;
        }
        Ok(turn)
    }
}

impl ModelClient for AnthropicClient {
    fn complete<'a>(
        &'a self,
        req: Request<'a>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Turn, ModelError>> {
        Box::pin(self.run(req, cancel))
    }
}

/// The conversation as the API wants it: roles alternate, so consecutive messages of one role
/// (tool results, or tool results and a user note) merge into one; tool results are user
/// content and come first in their message; empty text blocks are left out (the API rejects
/// them).
fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in messages {
        let mut blocks = Vec::new();
        let text_block = |blocks: &mut Vec<Value>| {
            if !m.content.trim().is_empty() {
                blocks.push(json!({"type": "text", "text": m.content}));
            }
        };
        let role = match m.role {
            Role::User => {
                text_block(&mut blocks);
                "user"
            }
            Role::Assistant => {
                text_block(&mut blocks);
                for c in &m.tool_calls {
                    // `input` must be an object; malformed arguments were kept as a string.
                    let input = if c.arguments.is_object() { c.arguments.clone() } else { json!({}) };
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
                }
                "assistant"
            }
            Role::Tool => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": m.tool_call_id.as_deref().unwrap_or("")});
                if !m.content.is_empty() {
                    block["content"] = json!(m.content);
                }
                if m.is_error {
                    block["is_error"] = json!(true);
                }
                blocks.push(block);
                "user"
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, mut blocks)| {
            // Stable: tool results first, everything else in order.
            blocks.sort_by_key(|b| b["type"] != "tool_result");
            json!({"role": role, "content": blocks})
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The streamed reply
// ---------------------------------------------------------------------------------------------

#[derive(Debug)]
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
        start_input: Value,
    },
    /// Thinking and server-tool blocks: not part of the turn.
    Other,
}

/// The reply assembled from `message_start` ... `message_stop` events.
#[derive(Debug, Default)]
struct AnthropicStream {
    /// By the event's `index`, in order.
    blocks: Vec<(u64, Block)>,
    usage: Usage,
    stop_reason: Option<String>,
}

fn malformed(what: &str) -> StreamError {
    StreamError::Malformed(what.to_owned())
}

/// Prompt tokens, including those written to or read from the prompt cache.
fn input_tokens(usage: &Value) -> Option<u64> {
    let base = usage["input_tokens"].as_u64()?;
    Some(
        base + usage["cache_creation_input_tokens"].as_u64().unwrap_or(0)
            + usage["cache_read_input_tokens"].as_u64().unwrap_or(0),
    )
}

impl AnthropicStream {
    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks.iter_mut().rev().find(|(i, _)| *i == index).map(|(_, b)| b)
    }

    fn start_block(&mut self, index: u64, block: &Value) {
        let block = match block["type"].as_str() {
            Some("text") => Block::Text(block["text"].as_str().unwrap_or("").to_owned()),
            Some("tool_use") => Block::ToolUse {
                id: block["id"].as_str().unwrap_or("").to_owned(),
                name: block["name"].as_str().unwrap_or("").to_owned(),
                json: String::new(),
                start_input: block["input"].clone(),
            },
            _ => Block::Other,
        };
        self.blocks.push((index, block));
    }

    fn delta(&mut self, index: u64, delta: &Value) -> Result<(), StreamError> {
        match delta["type"].as_str() {
            Some("text_delta") => {
                let text = delta["text"].as_str().ok_or_else(|| malformed("text_delta without text"))?;
                match self.block(index) {
                    Some(Block::Text(t)) => t.push_str(text),
                    // Lenient: a delta without its start still carries text.
                    None => self.blocks.push((index, Block::Text(text.to_owned()))),
                    Some(_) => return Err(malformed("text_delta for a block that is not text")),
                }
            }
            Some("input_json_delta") => {
                let part = delta["partial_json"]
                    .as_str()
                    .ok_or_else(|| malformed("input_json_delta without partial_json"))?;
                match self.block(index) {
                    Some(Block::ToolUse { json, .. }) => json.push_str(part),
                    _ => return Err(malformed("input_json_delta for a block that is not tool_use")),
                }
            }
            // thinking_delta, signature_delta, citations_delta ...
            _ => {}
        }
        Ok(())
    }

    /// Handle one event's JSON; `true` at `message_stop`.
    fn apply(&mut self, v: &Value) -> Result<bool, StreamError> {
        match v["type"].as_str() {
            Some("message_start") => {
                let usage = &v["message"]["usage"];
                self.usage.input_tokens = input_tokens(usage).unwrap_or(0);
                self.usage.output_tokens = usage["output_tokens"].as_u64().unwrap_or(0);
            }
            Some("content_block_start") => {
                let index =
                    v["index"].as_u64().ok_or_else(|| malformed("content_block_start without index"))?;
                self.start_block(index, &v["content_block"]);
            }
            Some("content_block_delta") => {
                let index =
                    v["index"].as_u64().ok_or_else(|| malformed("content_block_delta without index"))?;
                self.delta(index, &v["delta"])?;
            }
            Some("message_delta") => {
                if let Some(reason) = v["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_owned());
                }
                // Counts here are cumulative for the message.
                if let Some(n) = v["usage"]["output_tokens"].as_u64() {
                    self.usage.output_tokens = n;
                }
                if let Some(n) = input_tokens(&v["usage"]).filter(|n| *n > 0) {
                    self.usage.input_tokens = n;
                }
            }
            Some("message_stop") => return Ok(true),
            Some("error") => {
                let kind = v["error"]["type"].as_str().unwrap_or("error");
                let message = v["error"]["message"].as_str().unwrap_or(kind).to_owned();
                let retryable = matches!(kind, "overloaded_error" | "api_error" | "rate_limit_error");
                return Err(StreamError::Api { message, retryable });
            }
            // ping, content_block_stop, and event types added later.
            _ => {}
        }
        Ok(false)
    }

    fn into_turn(self) -> Turn {
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        for (_, block) in self.blocks {
            match block {
                Block::Text(t) => text.push_str(&t),
                Block::ToolUse { id, name, json, start_input } => {
                    let arguments = if json.trim().is_empty() && start_input.is_object() {
                        start_input
                    } else {
                        http::parse_tool_arguments(&json)
                    };
                    tool_calls.push(ToolCall { id, name, arguments });
                }
                Block::Other => {}
            }
        }
        Turn { text, tool_calls, usage: self.usage, stop_reason: self.stop_reason }
    }
}

impl Decoder for AnthropicStream {
    fn event(&mut self, event: &SseEvent) -> Result<bool, StreamError> {
        let v: Value = serde_json::from_str(&event.data)
            .map_err(|e| StreamError::Malformed(format!("bad JSON: {e}")))?;
        self.apply(&v)
    }

    fn finish(self, saw_end: bool) -> Result<Turn, StreamError> {
        if !saw_end {
            return Err(StreamError::Truncated);
        }
        Ok(self.into_turn())
    }

    fn arguments_len(&self) -> usize {
        let len = |b: &Block| match b {
            Block::ToolUse { json, .. } => json.len(),
            _ => 0,
        };
        self.blocks.iter().map(|(_, b)| len(b)).max().unwrap_or(0)
    }

    fn whole(body: &[u8]) -> Result<Turn, StreamError> {
        let v: Value =
            serde_json::from_slice(body).map_err(|e| StreamError::Malformed(format!("bad JSON: {e}")))?;
        let mut stream = AnthropicStream::default();
        if v["type"] == "error" {
            stream.apply(&v)?;
        }
        let blocks = v["content"].as_array().ok_or_else(|| malformed("no `content` in the message"))?;
        for (i, block) in blocks.iter().enumerate() {
            let index = i as u64;
            stream.start_block(index, block);
            if let Some(Block::ToolUse { start_input, .. }) = stream.block(index) {
                // The whole input is already in `input`; nothing streams after it.
                *start_input = block["input"].clone();
            }
        }
        stream.usage = Usage {
            input_tokens: input_tokens(&v["usage"]).unwrap_or(0),
            output_tokens: v["usage"]["output_tokens"].as_u64().unwrap_or(0),
        };
        stream.stop_reason = v["stop_reason"].as_str().map(str::to_owned);
        Ok(stream.into_turn())
    }
}

#[cfg(test)]
mod tests {
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
                ScriptedReply::ToolCalls(vec![(
                    "append_to_note".into(),
                    json!({"text": "a".repeat(20_000)}),
                )]),
                ScriptedReply::ToolCalls(vec![("append_to_note".into(), json!({"text": "a".repeat(4_000)}))]),
            ],
        )
        .await;
        let client = client(&server).with_options(HttpOptions { max_tool_args_bytes: 8 * 1024, ..fast() });
        let messages = [Message::user("go")];
        let tools = tools();
        let request =
            || Request { system: "", messages: &messages, tools: &tools, max_tokens: 512, json: false };
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
            MockModelServer::start(Flavor::Anthropic, vec![ScriptedReply::Text("Bonjour, Paris".into())])
                .await;
        let client = client(&server);
        let messages = [Message::user("Update the note")];
        let tools = tools();
        let turn = client.complete(request(&messages, &tools), CancellationToken::new()).await.unwrap();
        assert_eq!(turn.text, "Bonjour, Paris");
        assert_eq!(turn.stop_reason.as_deref(), Some("end_turn"));
        assert_eq!(turn.usage, Usage { input_tokens: 10, output_tokens: 2 });

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
        let e =
            clean(stalling.complete(request(&messages, &[]), CancellationToken::new()).await.unwrap_err());
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
        assert_eq!(turn.usage, Usage { input_tokens: 105, output_tokens: 9 });

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
        for base in
            ["https://api.anthropic.com", "https://api.anthropic.com/", "https://api.anthropic.com/v1"]
        {
            let cfg =
                AnthropicConfig { base_url: base.into(), model: "m".into(), api_key_env: KEY_VAR.into() };
            let c = AnthropicClient::new(&cfg, Some("claude-x"), &env).unwrap();
            assert_eq!(c.endpoint.url.as_str(), "https://api.anthropic.com/v1/messages");
            assert_eq!(c.model(), "claude-x");
        }
    }
}
