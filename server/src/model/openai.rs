//! The `openai` provider (SPEC 6): any OpenAI-compatible Chat Completions endpoint with tool
//! calling (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter ...), always streamed so
//! that Stop ends a reply mid-way.
//!
//! Compatible servers differ in small ways; the decoder accepts tool-call deltas without an
//! `index`, arguments sent as objects, a missing `[DONE]` after a `finish_reason`, and a plain
//! JSON reply from servers that ignore `stream: true`.

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::http::{
    self, ApiKey, Call, Decoder, Endpoint, HttpOptions, SseEvent, StreamError, extract_json_object,
    parse_tool_arguments,
};
use crate::config::{Env, OpenAiConfig};
use crate::model::conversation::{BoxFuture, Message, ModelClient, Request, Role, ToolCall, Turn, Usage};
use crate::model::error::ModelError;

/// A model behind an OpenAI-compatible `POST {base_url}/chat/completions`.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    client: reqwest::Client,
    endpoint: Endpoint,
    model: String,
    /// `None` for local servers that want no key (no `Authorization` header is sent).
    key: Option<ApiKey>,
    /// OpenAI's newer models reject `max_tokens`; most compatible servers know only it.
    max_tokens_field: &'static str,
    opts: HttpOptions,
}

impl OpenAiClient {
    /// A client for `cfg`, with the note's `model:` overriding the configured one. Fails when
    /// the key variable named by `api_key_env` is unset or `base_url` is not a URL.
    pub fn new(cfg: &OpenAiConfig, model_override: Option<&str>, env: &dyn Env) -> Result<Self, ModelError> {
        let model = model_override.map(str::trim).filter(|m| !m.is_empty()).unwrap_or(cfg.model.trim());
        if model.is_empty() {
            return Err(ModelError::Config("the openai provider has no `model`".to_owned()));
        }
        let endpoint = Endpoint::new(&cfg.base_url, "chat/completions")?;
        let key = cfg.api_key_env.as_deref().map(|var| ApiKey::from_env(env, var)).transpose()?;
        let client = http::client_for(&endpoint)?;
        let official = endpoint.url.host_str().is_some_and(|h| h.eq_ignore_ascii_case("api.openai.com"));
        Ok(OpenAiClient {
            client,
            endpoint,
            model: model.to_owned(),
            key,
            max_tokens_field: if official { "max_completion_tokens" } else { "max_tokens" },
            opts: HttpOptions::default(),
        })
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
        let mut messages = Vec::with_capacity(req.messages.len() + 1);
        if !req.system.is_empty() {
            messages.push(json!({"role": "system", "content": req.system}));
        }
        messages.extend(req.messages.iter().map(wire_message));
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        body[self.max_tokens_field] = json!(req.max_tokens);
        // Some servers reject an empty `tools` array, so it is left out instead.
        if !req.tools.is_empty() {
            body["tools"] = req
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                    })
                })
                .collect();
        }
        if req.json {
            body["response_format"] = json!({"type": "json_object"});
        }
        body
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(key) = &self.key {
            headers.insert(AUTHORIZATION, key.header("Bearer ")?);
        }
        Ok(headers)
    }

    async fn run(&self, req: Request<'_>, cancel: CancellationToken) -> Result<Turn, ModelError> {
        let body = serde_json::to_vec(&self.body(&req))
            .map_err(|e| ModelError::InvalidOutput(format!("cannot encode the request: {e}")))?;
        let auth_hint = match &self.key {
            Some(key) => format!("check {}", key.var()),
            None => "the server wants an API key; set api_key_env to the name of the variable holding it"
                .to_owned(),
        };
        let call = Call {
            client: &self.client,
            endpoint: &self.endpoint,
            headers: self.headers()?,
            body,
            model: &self.model,
            key: self.key.as_ref(),
            auth_hint,
            opts: &self.opts,
        };
        let mut turn = http::execute::<OpenAiStream>(&call, &cancel).await?;
        if req.json
            && let Some(object) = extract_json_object(&turn.text)
        {
            turn.text = object;
        }
        Ok(turn)
    }
}

impl ModelClient for OpenAiClient {
    fn complete<'a>(
        &'a self,
        req: Request<'a>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Turn, ModelError>> {
        Box::pin(self.run(req, cancel))
    }
}

fn wire_message(m: &Message) -> Value {
    match m.role {
        Role::User => json!({"role": "user", "content": m.content}),
        Role::Assistant => {
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": arguments_text(&c.arguments)},
                    })
                })
                .collect();
            if calls.is_empty() {
                json!({"role": "assistant", "content": m.content})
            } else {
                // `content` is null, not "", for a turn that only calls tools (as OpenAI sends it).
                let content = if m.content.is_empty() { Value::Null } else { json!(m.content) };
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
        }
        Role::Tool => {
            // The format has no error flag; the model still needs to know the call failed.
            let content = if m.is_error && !m.content.trim_start().to_lowercase().starts_with("error") {
                format!("Error: {}", m.content)
            } else {
                m.content.clone()
            };
            json!({"role": "tool", "tool_call_id": m.tool_call_id.as_deref().unwrap_or(""), "content": content})
        }
    }
}

/// Arguments go back as the JSON text the model wrote; malformed ones were kept as a string.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// The streamed reply
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    /// `delta` in a stream chunk.
    delta: Option<WireMessage>,
    /// `message` in a whole (non-streamed) reply.
    message: Option<WireMessage>,
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireMessage {
    content: Option<String>,
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Debug, Deserialize)]
struct WireToolCall {
    index: Option<usize>,
    id: Option<String>,
    function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
struct WireFunction {
    name: Option<String>,
    /// A string (possibly a fragment); a few servers send the object itself.
    arguments: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptTokensDetails>,
}

/// Part of `prompt_tokens`: those served from the prompt cache.
#[derive(Debug, Deserialize)]
struct PromptTokensDetails {
    cached_tokens: Option<u64>,
}

#[derive(Debug, Default)]
struct PartialCall {
    index: Option<usize>,
    id: String,
    name: String,
    arguments: String,
}

/// The reply assembled from `chat.completion.chunk`s.
#[derive(Debug, Default)]
struct OpenAiStream {
    text: String,
    calls: Vec<PartialCall>,
    usage: Usage,
    finish_reason: Option<String>,
}

impl OpenAiStream {
    fn apply(&mut self, chunk: Chunk) -> Result<(), StreamError> {
        if let Some(error) = chunk.error {
            return Err(api_error(&error));
        }
        if let Some(u) = chunk.usage {
            self.usage.input_tokens = u.prompt_tokens.unwrap_or(self.usage.input_tokens);
            self.usage.output_tokens = u.completion_tokens.unwrap_or(self.usage.output_tokens);
            if let Some(n) = u.prompt_tokens_details.and_then(|d| d.cached_tokens) {
                self.usage.cached_input_tokens = n;
            }
        }
        // We ask for one choice; the usage chunk has none.
        let Some(choice) = chunk.choices.and_then(|c| c.into_iter().next()) else { return Ok(()) };
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason);
        }
        if let Some(delta) = choice.delta.or(choice.message) {
            if let Some(text) = delta.content {
                self.text.push_str(&text);
            }
            for call in delta.tool_calls.unwrap_or_default() {
                self.apply_call(call);
            }
        }
        Ok(())
    }

    /// Deltas are matched to calls by `index`; without one, by `id`, else the latest call.
    /// A new `id` at a used index (Gemini's compatibility layer does that) starts a new call.
    fn apply_call(&mut self, delta: WireToolCall) {
        let id = delta.id.filter(|id| !id.is_empty());
        let found = match (delta.index, &id) {
            (Some(i), Some(id)) => {
                self.calls.iter().rposition(|c| c.index == Some(i) && (c.id.is_empty() || c.id == *id))
            }
            (Some(i), None) => self.calls.iter().rposition(|c| c.index == Some(i)),
            (None, Some(id)) => self.calls.iter().rposition(|c| c.id == *id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let slot = match found {
            Some(slot) => slot,
            None => {
                self.calls.push(PartialCall { index: delta.index, ..PartialCall::default() });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[slot];
        if let Some(id) = id {
            call.id = id;
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty())
                && call.name.is_empty()
            {
                call.name = name;
            }
            match function.arguments {
                Some(Value::String(fragment)) => call.arguments.push_str(&fragment),
                Some(Value::Null) | None => {}
                Some(other) => call.arguments.push_str(&other.to_string()),
            }
        }
    }

    fn into_turn(self) -> Turn {
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                // Some local servers send no ids; the conversation still needs them to pair results.
                id: if c.id.is_empty() { format!("call_{i}") } else { c.id },
                name: c.name,
                arguments: parse_tool_arguments(&c.arguments),
            })
            .collect();
        Turn { text: self.text, tool_calls, usage: self.usage, stop_reason: self.finish_reason }
    }
}

fn api_error(error: &Value) -> StreamError {
    let message = error["message"].as_str().or(error.as_str()).unwrap_or("unknown error").to_owned();
    // OpenRouter forwards the upstream HTTP status as `code`.
    let retryable = error["code"].as_u64().is_some_and(|c| c == 429 || (500..600).contains(&c));
    StreamError::Api { message, retryable }
}

fn parse<T: for<'de> Deserialize<'de>>(data: &[u8]) -> Result<T, StreamError> {
    serde_json::from_slice(data).map_err(|e| StreamError::Malformed(format!("bad JSON: {e}")))
}

impl Decoder for OpenAiStream {
    fn event(&mut self, event: &SseEvent) -> Result<bool, StreamError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        self.apply(parse(data.as_bytes())?)?;
        Ok(false)
    }

    fn finish(self, saw_end: bool) -> Result<Turn, StreamError> {
        // A few servers close without `[DONE]`; a finish reason shows the reply is complete.
        if !saw_end && self.finish_reason.is_none() {
            return Err(StreamError::Truncated);
        }
        Ok(self.into_turn())
    }

    fn arguments_len(&self) -> usize {
        self.calls.iter().map(|c| c.arguments.len()).max().unwrap_or(0)
    }

    fn whole(body: &[u8]) -> Result<Turn, StreamError> {
        let mut stream = OpenAiStream::default();
        stream.apply(parse(body)?)?;
        Ok(stream.into_turn())
    }
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
