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
use crate::model::conversation::{BoxFuture, Message, ModelClient, Request, Role, ToolCall, Turn, Usage};
use crate::model::error::ModelError;

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

/// Prompt tokens read from the prompt cache (a part of [`input_tokens`]).
fn cached_tokens(usage: &Value) -> Option<u64> {
    usage["cache_read_input_tokens"].as_u64()
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
                self.usage.cached_input_tokens = cached_tokens(usage).unwrap_or(0);
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
                    self.usage.cached_input_tokens = cached_tokens(&v["usage"]).unwrap_or(0);
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
            cached_input_tokens: cached_tokens(&v["usage"]).unwrap_or(0),
        };
        stream.stop_reason = v["stop_reason"].as_str().map(str::to_owned);
        Ok(stream.into_turn())
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
