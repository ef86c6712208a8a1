//! Providers: whatever produces a note's new content for a run. The run engine hands one a
//! [`RunRequest`] and gets back a [`RunOutput`] or a [`ProviderError`], with [`RunEvent`]s on
//! the way for transcripts and progress (those types live in `run_types`, below the agent,
//! and are re-exported here).
//!
//! [`run`] dispatches: a `command` provider runs the program (`command.rs`); a model provider
//! gets its client from `model::client_for` and runs the agent loop (`agent::run`) with it.
//! The top of the run side's lower half: `providers` → `agent` → `run_types` → `model`.

pub mod command;

use tokio_util::sync::CancellationToken;

pub use crate::run_types::{
    BoxFuture, EditReply, EditSink, ProviderError, RunEvent, RunMemory, RunOutput, RunRequest, TriggerEvent,
    TriggerKind,
};
pub use command::run_command;

use crate::config::{ProviderConfig, ProviderKind};

/// Run `provider` once. A `command` provider has its own `timeout`; model providers run the
/// agent loop under `[agent]`'s limits, reporting each intermediate body through `on_edit`.
pub async fn run(
    provider: &ProviderConfig,
    req: &RunRequest,
    agent: &crate::config::AgentConfig,
    cancel: CancellationToken,
    on_edit: &mut dyn EditSink,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<RunOutput, ProviderError> {
    let env = crate::config::ProcessEnv;
    let limits = crate::agent::run::Limits {
        max_steps: agent.max_steps,
        timeout: agent.timeout,
        max_conversation_bytes: agent.max_conversation_bytes,
        max_tokens_total: agent.max_tokens,
    };
    let http = crate::model::http::HttpOptions {
        max_reply_bytes: agent.max_reply_bytes,
        max_tool_args_bytes: agent.max_tool_args_bytes,
        ..crate::model::http::HttpOptions::default()
    };
    let client = match &provider.kind {
        ProviderKind::Command(cfg) => return run_command(cfg, req, cancel, events).await,
        ProviderKind::OpenAi(_) | ProviderKind::Anthropic(_) => {
            crate::model::client_for(provider, req.model.as_deref(), &env, http)?
        }
    };
    crate::agent::run::run_agent(client.as_ref(), req, limits, agent.web, cancel, on_edit, events).await
}
