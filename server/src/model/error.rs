//! Why a model call produced no reply. `Display` is one short line without secrets: it ends up
//! in `lastRunError` (through `ProviderError`'s `From<ModelError>`) and in logs.

use std::time::Duration;

use crate::config::format_duration;

/// The text of [`ModelError::ContextOverflow`].
pub const CONTEXT_OVERFLOW: &str = "the note and conversation are too long for the model's context";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The caller cancelled the call.
    #[error("stopped")]
    Stopped,
    /// The call (retries and waits included) or a stalled stream took too long.
    #[error("timed out after {}", format_duration(*.0))]
    TimedOut(Duration),
    /// The conversation does not fit the model's context window; the agent may shorten it and
    /// try again.
    #[error("{}", CONTEXT_OVERFLOW)]
    ContextOverflow,
    /// A reply (or one tool call's arguments) went past an `[agent]` byte bound.
    #[error("{0}")]
    TooLarge(String),
    /// The reply could not be used (malformed JSON, an unexpected content type).
    #[error("{0}")]
    InvalidOutput(String),
    /// Talking to the service failed (connection, rate limit, server error).
    #[error("{0}")]
    Io(String),
    /// The client cannot be used as configured (no model, no key, bad `base_url`, auth).
    #[error("{0}")]
    Config(String),
    /// The provider is not a model (a `command` provider): [`super::client_for`] has no client
    /// for it.
    #[error("a command provider, not a model")]
    NotAModel,
}
