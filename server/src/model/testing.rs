//! A scripted model server on 127.0.0.1 for tests: it speaks the OpenAI Chat Completions or
//! the Anthropic Messages wire format, plays one [`ScriptedReply`] per request (streamed the
//! way the real service streams), and records every request so tests can check what went on
//! the wire.
//!
//! Not part of the product: compiled only for tests, and public (hidden from docs) with the
//! `test-support` feature so that integration tests in `server/tests` can script model turns
//! too; a release build leaves it out. A minimal HTTP/1.1 server is enough because the
//! only client is our own reqwest one; each response closes its connection, so no state is
//! shared between requests (or between test runtimes through reqwest's pool).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::{AnthropicConfig, OpenAiConfig};

/// Which API the server imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `POST /v1/chat/completions`; [`MockModelServer::base_url`] ends in `/v1`.
    OpenAi,
    /// `POST /v1/messages`.
    Anthropic,
}

/// What the server answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptedReply {
    /// A streamed text reply in a few chunks, ending normally.
    Text(String),
    /// A streamed reply calling these tools (name, arguments object), each call's arguments
    /// split over several chunks (interleaved between calls for OpenAI).
    ToolCalls(Vec<(String, Value)>),
    /// An error status with the service's error body (401/403 quote the key the request
    /// carried, as a careless service might), and `Retry-After: secs` when given.
    Status(u16, Option<u64>),
    /// Starts a streamed reply, sends a little text, then nothing until the client goes away.
    Stall,
    /// Exactly this response.
    Raw { status: u16, content_type: String, body: String },
    /// A `Text` or `ToolCalls` reply reporting this usage instead of the default (10 input
    /// tokens, a word count or 5 per call as output, nothing cached).
    WithUsage(Box<ScriptedReply>, ScriptedUsage),
}

/// The token usage a scripted reply reports, in each wire format's own fields: Anthropic's
/// `input_tokens` (uncached) plus `cache_read_input_tokens`, OpenAI's `prompt_tokens` (all)
/// with `prompt_tokens_details.cached_tokens`. `input` counts every prompt token, cached ones
/// included, as the clients report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScriptedUsage {
    pub input: u64,
    pub output: u64,
    pub cached: u64,
}

impl ScriptedReply {
    /// This reply, reporting `usage`.
    pub fn with_usage(self, input: u64, output: u64, cached: u64) -> ScriptedReply {
        ScriptedReply::WithUsage(Box::new(self), ScriptedUsage { input, output, cached })
    }

    /// A reply calling one tool.
    pub fn tool(name: &str, args: Value) -> ScriptedReply {
        ScriptedReply::ToolCalls(vec![(name.to_owned(), args)])
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::String` with the raw text when it is not JSON, `Null` when empty).
    pub body: Value,
}

impl RecordedRequest {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The system prompt, in either wire format (Anthropic's `system`, OpenAI's first
    /// `system` message).
    pub fn system_prompt(&self) -> String {
        if !self.body["system"].is_null() {
            return text_of(&self.body["system"]);
        }
        self.messages()
            .iter()
            .find(|m| m["role"] == "system")
            .map(|m| text_of(&m["content"]))
            .unwrap_or_default()
    }

    /// The run message: the first user message's text.
    pub fn run_message(&self) -> String {
        self.messages()
            .iter()
            .find(|m| m["role"] == "user")
            .map(|m| text_of(&m["content"]))
            .unwrap_or_default()
    }

    /// The names of the tools offered.
    pub fn tool_names(&self) -> Vec<String> {
        let tools = self.body["tools"].as_array().cloned().unwrap_or_default();
        tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().or_else(|| t["name"].as_str()))
            .map(str::to_owned)
            .collect()
    }

    /// The results of the previous turn's tool calls this request sends back, as (is_error,
    /// content). OpenAI has no error flag: the clients mark an error with an `Error: ` prefix,
    /// which stays in the content.
    pub fn tool_results(&self) -> Vec<(bool, String)> {
        let messages = self.messages();
        if let Some(last) = messages.last()
            && last["role"] == "user"
            && let Some(blocks) = last["content"].as_array()
        {
            return blocks
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| (b["is_error"] == true, text_of(&b["content"])))
                .collect();
        }
        let tail = messages.iter().rev().take_while(|m| m["role"] == "tool").collect::<Vec<_>>();
        tail.into_iter()
            .rev()
            .map(|m| {
                let content = text_of(&m["content"]);
                (content.starts_with("Error: "), content)
            })
            .collect()
    }

    fn messages(&self) -> Vec<Value> {
        self.body["messages"].as_array().cloned().unwrap_or_default()
    }
}

/// A message's content as text: a string, or its text blocks joined by newlines.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<ScriptedReply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Makes tool-call ids unique across the server's replies, as real ids are.
    next_id: AtomicU64,
    /// Report usage estimated from the request and the reply where the script gives none
    /// ([`MockModelServer::estimate_usage`]).
    estimate: std::sync::atomic::AtomicBool,
    /// Called with the number of model requests so far (1 for the first) before each reply:
    /// a test's stand-in for what happens in the world between two model turns.
    before_reply: Mutex<Option<BeforeReply>>,
}

/// See [`MockModelServer::before_reply`].
pub type BeforeReply = Arc<dyn Fn(usize) + Send + Sync>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A test that panicked while holding the lock has failed already; keep serving the rest.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The server; it stops when dropped.
pub struct MockModelServer {
    addr: SocketAddr,
    flavor: Flavor,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl MockModelServer {
    /// Listen on a free port of 127.0.0.1 and play `script`, one reply per request. Requests
    /// beyond the script get HTTP 418 (not retried by the clients), requests to another path
    /// HTTP 404 (without using up a reply).
    pub async fn start(flavor: Flavor, script: Vec<ScriptedReply>) -> Self {
        #[allow(clippy::expect_used)] // test support: no port means no test
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        #[allow(clippy::expect_used)]
        let addr = listener.local_addr().expect("local address of a bound listener");
        let shared = Arc::new(Shared { script: Mutex::new(script.into()), ..Shared::default() });
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(accept_loop(listener, flavor, Arc::clone(&shared), shutdown.clone()));
        MockModelServer { addr, flavor, shared, shutdown, task }
    }

    /// What to put in `base_url`.
    pub fn base_url(&self) -> String {
        match self.flavor {
            Flavor::OpenAi => format!("http://{}/v1", self.addr),
            Flavor::Anthropic => format!("http://{}", self.addr),
        }
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Add a reply to the end of the script.
    pub fn push(&self, reply: ScriptedReply) {
        lock(&self.shared.script).push_back(reply);
    }

    /// Call `f(n)` before answering the `n`-th model request (1-based), e.g. to edit the note
    /// as a user would between two of the model's steps.
    pub fn before_reply(&self, f: impl Fn(usize) + Send + Sync + 'static) {
        *lock(&self.shared.before_reply) = Some(Arc::new(f));
    }

    /// From now on, a reply without scripted usage reports tokens estimated from the bytes
    /// on the wire: the request body's and the reply's text or tool arguments, a token per 4
    /// bytes rounded up (the usual rule of thumb for English and JSON), nothing cached. For
    /// measuring what a run sends (the bench suite), where fixed figures would say nothing.
    pub fn estimate_usage(&self) {
        self.shared.estimate.store(true, Ordering::Relaxed);
    }

    /// Replies not played yet.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }

    /// An `openai` provider config pointing here.
    pub fn openai_config(&self, model: &str, api_key_env: Option<&str>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: self.base_url(),
            model: model.to_owned(),
            api_key_env: api_key_env.map(str::to_owned),
        }
    }

    /// An `anthropic` provider config pointing here.
    pub fn anthropic_config(&self, model: &str, api_key_env: &str) -> AnthropicConfig {
        AnthropicConfig {
            base_url: self.base_url(),
            model: model.to_owned(),
            api_key_env: api_key_env.to_owned(),
        }
    }
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.task.abort();
    }
}

async fn accept_loop(
    listener: TcpListener,
    flavor: Flavor,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            a = listener.accept() => a,
        };
        let Ok((socket, _)) = accepted else { continue };
        let (shared, shutdown) = (Arc::clone(&shared), shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = shutdown.cancelled() => {}
                () = serve(socket, flavor, &shared) => {}
            }
        });
    }
}

async fn serve(mut socket: TcpStream, flavor: Flavor, shared: &Shared) {
    let _ = socket.set_nodelay(true);
    let Some(request) = read_request(&mut socket).await else { return };
    lock(&shared.requests).push(request.clone());
    let expected = match flavor {
        Flavor::OpenAi => "/v1/chat/completions",
        Flavor::Anthropic => "/v1/messages",
    };
    if request.method != "POST" || request.path != expected {
        let _ = write_response(&mut socket, 404, "text/plain", &[], b"404 page not found").await;
        return;
    }
    let hook = lock(&shared.before_reply).clone();
    if let Some(hook) = hook {
        let n = lock(&shared.requests).iter().filter(|r| r.path == expected).count();
        hook(n);
    }
    let reply = lock(&shared.script).pop_front();
    let Some(reply) = reply else {
        let _ = write_response(&mut socket, 418, "text/plain", &[], b"no scripted reply left").await;
        return;
    };
    let model = request.body["model"].as_str().unwrap_or("").to_owned();
    let (reply, usage) = match reply {
        ScriptedReply::WithUsage(reply, usage) => (*reply, Some(usage)),
        reply => (reply, None),
    };
    let usage = usage.or_else(|| shared.estimate.load(Ordering::Relaxed).then(|| estimate(&request, &reply)));
    let _ = match reply {
        ScriptedReply::Text(text) => {
            let usage = usage.unwrap_or(ScriptedUsage { input: 10, output: tokens(&text), cached: 0 });
            write_stream(&mut socket, &render_text(flavor, &text, usage)).await
        }
        ScriptedReply::ToolCalls(calls) => {
            let ids: Vec<u64> =
                calls.iter().map(|_| shared.next_id.fetch_add(1, Ordering::Relaxed) + 1).collect();
            let usage =
                usage.unwrap_or(ScriptedUsage { input: 10, output: 5 * calls.len() as u64, cached: 0 });
            write_stream(&mut socket, &render_tool_calls(flavor, &calls, &ids, usage)).await
        }
        // Only text and tool calls report usage; anything else plays as it is.
        ScriptedReply::WithUsage(..) => {
            write_response(&mut socket, 500, "text/plain", &[], b"nested usage in the script").await
        }
        ScriptedReply::Status(code, retry_after) => {
            let key = request
                .header("authorization")
                .map(|v| v.trim_start_matches("Bearer ").to_owned())
                .or_else(|| request.header("x-api-key").map(str::to_owned))
                .unwrap_or_default();
            let body = error_body(flavor, code, &model, &key);
            let extra: Vec<(&str, String)> =
                retry_after.map(|s| ("Retry-After", s.to_string())).into_iter().collect();
            write_response(&mut socket, code, "application/json", &extra, body.as_bytes()).await
        }
        ScriptedReply::Stall => stall(&mut socket, flavor).await,
        ScriptedReply::Raw { status, content_type, body } => {
            write_response(&mut socket, status, &content_type, &[], body.as_bytes()).await
        }
    };
}

/// Reads one request (head and `Content-Length` body); `None` on anything unexpected.
pub(crate) async fn read_request(socket: &mut TcpStream) -> Option<RecordedRequest> {
    const MAX_REQUEST: usize = 64 * 1024 * 1024;
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut chunk = [0u8; 8192];
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() > MAX_REQUEST {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).ok()?;
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let (method, path) = (request_line.next()?.to_owned(), request_line.next()?.to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    if length > MAX_REQUEST {
        return None;
    }
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = vec![0u8; (length - body.len()).min(64 * 1024)];
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };
    Some(RecordedRequest { method, path, headers, body })
}

async fn write_response(
    socket: &mut TcpStream,
    status: u16,
    content_type: &str,
    extra: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} Scripted\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    socket.write_all(head.as_bytes()).await?;
    write_in_pieces(socket, body).await?;
    socket.shutdown().await
}

const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";

/// A close-delimited event stream.
async fn write_stream(socket: &mut TcpStream, events: &str) -> std::io::Result<()> {
    socket.write_all(STREAM_HEAD.as_bytes()).await?;
    write_in_pieces(socket, events.as_bytes()).await?;
    socket.shutdown().await
}

/// Odd-sized pieces, so that events and even UTF-8 characters straddle reads.
async fn write_in_pieces(socket: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    for piece in bytes.chunks(61) {
        socket.write_all(piece).await?;
        socket.flush().await?;
    }
    Ok(())
}

async fn stall(socket: &mut TcpStream, flavor: Flavor) -> std::io::Result<()> {
    let events = match flavor {
        Flavor::OpenAi => [openai_chunk(json!({"role": "assistant", "content": ""}), None), openai_chunk(json!({"content": "Thinking"}), None)]
            .concat(),
        Flavor::Anthropic => [
            anthropic_event("message_start", &message_start(ScriptedUsage { input: 10, output: 1, cached: 0 })),
            anthropic_event("content_block_start", &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            anthropic_event("content_block_delta", &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Thinking"}})),
        ]
        .concat(),
    };
    socket.write_all(STREAM_HEAD.as_bytes()).await?;
    socket.write_all(events.as_bytes()).await?;
    socket.flush().await?;
    // Hold the connection until the client gives up (or the server is dropped).
    let mut sink = [0u8; 1024];
    while socket.read(&mut sink).await? > 0 {}
    Ok(())
}

/// `text` in three pieces, split on character boundaries.
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(n).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// [`MockModelServer::estimate_usage`]'s figures for `reply` to `request`.
fn estimate(request: &RecordedRequest, reply: &ScriptedReply) -> ScriptedUsage {
    let per_4 = |bytes: usize| (bytes as u64).div_ceil(4);
    let output = match reply {
        ScriptedReply::Text(text) => text.len(),
        ScriptedReply::ToolCalls(calls) => {
            calls.iter().map(|(name, args)| name.len() + args.to_string().len()).sum()
        }
        _ => 0,
    };
    ScriptedUsage { input: per_4(request.body.to_string().len()), output: per_4(output).max(1), cached: 0 }
}

/// A rough token count for the usage fields: words.
fn tokens(text: &str) -> u64 {
    text.split_whitespace().count().max(1) as u64
}

// ---------------------------------------------------------------------------------------------
// OpenAI
// ---------------------------------------------------------------------------------------------

fn openai_chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "mock",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    });
    format!("data: {chunk}\n\n")
}

fn openai_tail(finish_reason: &str, u: ScriptedUsage) -> String {
    let usage = json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {
            "prompt_tokens": u.input, "completion_tokens": u.output, "total_tokens": u.input + u.output,
            "prompt_tokens_details": {"cached_tokens": u.cached},
        },
    });
    format!("{}data: {usage}\n\ndata: [DONE]\n\n", openai_chunk(json!({}), Some(finish_reason)))
}

// ---------------------------------------------------------------------------------------------
// Anthropic
// ---------------------------------------------------------------------------------------------

fn anthropic_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn message_start(u: ScriptedUsage) -> Value {
    let uncached = u.input.saturating_sub(u.cached);
    json!({"type": "message_start", "message": {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": "mock", "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": uncached, "cache_read_input_tokens": u.cached, "cache_creation_input_tokens": 0, "output_tokens": 1},
    }})
}

fn anthropic_tail(stop_reason: &str, output_tokens: u64) -> String {
    [
        anthropic_event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}}),
        ),
        anthropic_event("message_stop", &json!({"type": "message_stop"})),
    ]
    .concat()
}

fn render_text(flavor: Flavor, text: &str, usage: ScriptedUsage) -> String {
    let mut out = String::new();
    match flavor {
        Flavor::OpenAi => {
            out.push_str(": keep-alive\n\n");
            out.push_str(&openai_chunk(json!({"role": "assistant", "content": ""}), None));
            for piece in pieces(text, 3) {
                out.push_str(&openai_chunk(json!({"content": piece}), None));
            }
            out.push_str(&openai_tail("stop", usage));
        }
        Flavor::Anthropic => {
            out.push_str(&anthropic_event("message_start", &message_start(usage)));
            out.push_str(&anthropic_event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            out.push_str(&anthropic_event("ping", &json!({"type": "ping"})));
            for piece in pieces(text, 3) {
                out.push_str(&anthropic_event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}),
                ));
            }
            out.push_str(&anthropic_event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": 0}),
            ));
            out.push_str(&anthropic_tail("end_turn", usage.output));
        }
    }
    out
}

fn render_tool_calls(flavor: Flavor, calls: &[(String, Value)], ids: &[u64], usage: ScriptedUsage) -> String {
    let mut out = String::new();
    let args: Vec<Vec<String>> = calls.iter().map(|(_, a)| pieces(&a.to_string(), 4)).collect();
    match flavor {
        Flavor::OpenAi => {
            out.push_str(&openai_chunk(json!({"role": "assistant", "content": null}), None));
            for (i, ((name, _), id)) in calls.iter().zip(ids).enumerate() {
                let start = json!({"index": i, "id": format!("call_{id}"), "type": "function", "function": {"name": name, "arguments": ""}});
                out.push_str(&openai_chunk(json!({"tool_calls": [start]}), None));
            }
            // Round-robin over the calls: the client must sort fragments by index.
            let rounds = args.iter().map(Vec::len).max().unwrap_or(0);
            for round in 0..rounds {
                for (i, pieces) in args.iter().enumerate() {
                    if let Some(piece) = pieces.get(round) {
                        let delta = json!({"index": i, "function": {"arguments": piece}});
                        out.push_str(&openai_chunk(json!({"tool_calls": [delta]}), None));
                    }
                }
            }
            out.push_str(&openai_tail("tool_calls", usage));
        }
        Flavor::Anthropic => {
            out.push_str(&anthropic_event("message_start", &message_start(usage)));
            for (i, (((name, _), id), pieces)) in calls.iter().zip(ids).zip(&args).enumerate() {
                let block =
                    json!({"type": "tool_use", "id": format!("toolu_{id}"), "name": name, "input": {}});
                out.push_str(&anthropic_event(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": i, "content_block": block}),
                ));
                for piece in pieces {
                    let delta = json!({"type": "input_json_delta", "partial_json": piece});
                    out.push_str(&anthropic_event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i, "delta": delta}),
                    ));
                }
                out.push_str(&anthropic_event(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": i}),
                ));
            }
            out.push_str(&anthropic_tail("tool_use", usage.output));
        }
    }
    out
}

/// The error body each service sends for `code`.
fn error_body(flavor: Flavor, code: u16, model: &str, key: &str) -> String {
    let (kind, message) = match code {
        401 | 403 => ("authentication_error", format!("Incorrect API key provided: {key}.")),
        404 => (
            "not_found_error",
            format!("The model `{model}` does not exist or you do not have access to it."),
        ),
        429 => ("rate_limit_error", "Rate limit reached for requests".to_owned()),
        529 => ("overloaded_error", "Overloaded".to_owned()),
        _ => ("api_error", format!("Scripted error {code}")),
    };
    match flavor {
        Flavor::OpenAi => {
            let code_name = match code {
                401 | 403 => "invalid_api_key",
                404 => "model_not_found",
                429 => "rate_limit_exceeded",
                _ => "server_error",
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code_name}}).to_string()
        }
        Flavor::Anthropic => {
            json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
        }
    }
}

/// Client options for tests against the mock server: generous limits, quick retries.
pub fn fast_options() -> crate::model::http::HttpOptions {
    crate::model::http::HttpOptions {
        request_timeout: std::time::Duration::from_secs(20),
        stall_timeout: std::time::Duration::from_secs(10),
        backoff_base: std::time::Duration::from_millis(10),
        ..crate::model::http::HttpOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn records_requests_and_rejects_other_paths() {
        let server = MockModelServer::start(Flavor::Anthropic, vec![]).await;
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let r = client
            .get(format!("{}/v1/models", server.base_url()))
            .header("X-Test", "1")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 404);
        let r =
            client.post(format!("{}/v1/messages", server.base_url())).body("{\"a\":1}").send().await.unwrap();
        assert_eq!(r.status().as_u16(), 418);
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(
            (reqs[0].method.as_str(), reqs[0].path.as_str(), reqs[0].header("x-test")),
            ("GET", "/v1/models", Some("1"))
        );
        assert_eq!(reqs[0].body, Value::Null);
        assert_eq!(reqs[1].body, json!({"a": 1}));
        server.push(ScriptedReply::Text("x".into()));
        assert_eq!(server.remaining(), 1);
    }

    #[test]
    fn pieces_split_on_characters() {
        assert_eq!(pieces("héllo", 3), vec!["hé", "ll", "o"]);
        assert_eq!(pieces("", 3), Vec::<String>::new());
        assert_eq!(pieces("ab", 4), vec!["a", "b"]);
    }
}
