//! The conversation with a model, independent of any wire format: messages, tool calls and
//! tool specs, and the one call every model provider implements ([`ModelClient::complete`]).
//! The agent loop (`agent::run`) and event routing speak only this.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::model::error::ModelError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    /// The result of a tool call (`tool_call_id` says which).
    Tool,
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as JSON (an object). Malformed JSON from the model arrives as a string
    /// value so the tool can answer with a helpful error instead of the run failing.
    pub arguments: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// Text content (may be empty for an assistant turn that only calls tools).
    pub content: String,
    /// Tool calls of an assistant turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For `Role::Tool`: whether the tool failed (the content is the error the model sees).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
        }
    }

    pub fn tool_result(call_id: &str, content: impl Into<String>, is_error: bool) -> Message {
        Message {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.to_owned()),
            is_error,
        }
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Every prompt token, cached ones included (what the provider bills as input).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `input_tokens`, those read from the provider's prompt cache, where the API reports
    /// them (Anthropic `cache_read_input_tokens`, OpenAI `prompt_tokens_details.cached_tokens`).
    pub cached_input_tokens: u64,
}

/// One reply of the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Turn {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// The provider's stop reason as given ("stop", "tool_calls", "end_turn", "length", ...).
    pub stop_reason: Option<String>,
}

impl Turn {
    /// The assistant message to append to the conversation.
    pub fn message(&self) -> Message {
        Message {
            role: Role::Assistant,
            content: self.text.clone(),
            tool_calls: self.tool_calls.clone(),
            tool_call_id: None,
            is_error: false,
        }
    }
}

/// One completion request.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    /// Upper bound on the reply's tokens.
    pub max_tokens: u32,
    /// Ask for a JSON object as the whole reply (event routing); providers use their
    /// structured-output mode where they have one.
    pub json: bool,
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A model behind some API. Implementations stream where the API allows, so that `cancel`
/// ends a reply mid-way, retry 429/5xx/connection errors with backoff (honouring
/// `Retry-After`), and turn every failure into a short `ModelError` without secrets.
pub trait ModelClient: Send + Sync {
    fn complete<'a>(
        &'a self,
        req: Request<'a>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Turn, ModelError>>;
}
