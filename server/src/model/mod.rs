//! Model clients: the conversation with a model, independent of any wire format
//! ([`conversation`]), the HTTP transport the clients share ([`http`]), and the OpenAI and
//! Anthropic clients.

pub mod anthropic;
pub mod conversation;
pub mod http;
pub mod openai;
#[doc(hidden)]
pub mod testing;

pub use conversation::{BoxFuture, Message, ModelClient, Request, Role, ToolCall, ToolSpec, Turn, Usage};
