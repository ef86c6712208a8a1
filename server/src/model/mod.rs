//! Model clients, the bottom of the run side: the conversation with a model independent of
//! any wire format ([`conversation`]), why a call failed ([`ModelError`]), the HTTP transport
//! the clients share ([`http`]), the OpenAI and Anthropic clients, and [`client_for`], the one
//! place that turns a configured provider into a client.
//!
//! Imports only `config` (provider settings, `Env`) from the crate: nothing from `agent/`,
//! `providers/`, `runs/`, `lsp/` or `cli/`, which all sit above it.

pub mod anthropic;
pub mod conversation;
pub mod error;
pub mod http;
pub mod openai;
mod sse;
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod testing;

pub use conversation::{BoxFuture, Message, ModelClient, Request, Role, ToolCall, ToolSpec, Turn, Usage};
pub use error::ModelError;

use crate::config::{Config, Env, ProcessEnv, ProviderConfig, ProviderKind};

/// A client for `provider`'s model (`model_override`, e.g. a note's `model:`, wins over the
/// configured one) with the given transport options. The only place that names the concrete
/// clients: a new model provider kind adds a module here and an arm below.
/// [`ModelError::NotAModel`] for a `command` provider.
pub fn client_for(
    provider: &ProviderConfig,
    model_override: Option<&str>,
    env: &dyn Env,
    options: http::HttpOptions,
) -> Result<Box<dyn ModelClient>, ModelError> {
    Ok(match &provider.kind {
        ProviderKind::OpenAi(cfg) => {
            Box::new(openai::OpenAiClient::new(cfg, model_override, env)?.with_options(options))
        }
        ProviderKind::Anthropic(cfg) => {
            Box::new(anthropic::AnthropicClient::new(cfg, model_override, env)?.with_options(options))
        }
        ProviderKind::Command(_) => return Err(ModelError::NotAModel),
    })
}

/// A client for the default provider's model (`[agent] provider`, else the only configured
/// one, else the environment's): what one-shot calls use (event routing, drafting a live
/// block), since they serve no particular note. Otherwise why there is none, saying what to set
/// to `purpose` ("route events") with a model.
pub fn default_client(config: &Config, purpose: &str) -> Result<std::sync::Arc<dyn ModelClient>, String> {
    let (name, provider) = config.resolve_provider(None).map_err(|e| e.to_string())?;
    match client_for(&provider, None, &ProcessEnv, http::HttpOptions::default()) {
        Ok(client) => Ok(std::sync::Arc::from(client)),
        Err(ModelError::NotAModel) => {
            let which = match &config.agent.provider {
                Some(_) => format!("`[agent] provider` is `{name}`, a command provider"),
                None => format!("the default provider `{name}` is a command provider"),
            };
            Err(format!(
                "{which}; to {purpose} with a model, set `[agent] provider` to an `openai` or `anthropic` provider"
            ))
        }
        Err(e) => Err(format!("provider `{name}`: {e}")),
    }
}
