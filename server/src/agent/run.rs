//! The agent loop: ask the model, run the tools it calls in order, hand their results back,
//! until it answers without calling a tool (that answer is the run's summary) or a limit hits.
//!
//! Every edit changes the body held in memory and is handed to `on_edit` at once, so the
//! engine can apply it to the note while the run goes on: the user watches the note change
//! patch by patch. Consequently a run that fails later (step or token limit, timeout, stop, a
//! provider error) has already shown its earlier edits; they are kept, not rolled back. Each
//! edit is a complete patch the model chose, the body was snapshotted into history before the
//! run (so `Undo last run` restores it), and throwing away good work because the model then
//! looped would help no one. The run still counts as failed (`lastRunError`, cycle unfired).
//!
//! The body the model sees: the engine hands the agent region of the note (the text below the
//! H1) as `RunRequest::body`. So that the model sees the title it must keep, the loop shows
//! `# {title}` above it when the body does not already carry that H1, and every body it hands
//! back (to `on_edit` and in the [`RunOutput`]) is that whole text, with
//! `body_is_below_h1: false`. Fed to `Patch::compute` as the new region, the unchanged H1 is
//! dropped as an echo. The H1 is the note's, not the agent's: the edit tools refuse any change
//! to it or above it (`tools::note`), so what the engine writes is what the tool reported.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::agent::prompt;
use crate::agent::tools::{self, Caps, Fetcher, HttpFetcher, Toolbox, Workspace, clip};
use crate::mcp::{Pool, Selected, Session};
use crate::model::ModelError;
use crate::model::http::json_len;
use crate::model::{Message, ModelClient, Request, Role, ToolCall, Turn};
use crate::note::body;
use crate::run_types::{EditReply, EditSink, ProviderError, RunEvent, RunOutput, RunRequest, TriggerKind};

/// The most tokens one reply may use; large enough to rewrite a long section in one call.
const MAX_REPLY_TOKENS: u64 = 8192;
/// The least a reply is allowed even when the budget is nearly spent, so a summary fits.
const MIN_REPLY_TOKENS: u64 = 512;
/// How much of a model text or tool call goes into the transcript.
const EVENT_TEXT_CHARS: usize = 2000;
/// How much of a tool result goes into the transcript.
const EVENT_RESULT_CHARS: usize = 500;

/// The limits of one run (SPEC 4: 25 tool calls, 10 minutes, bounded tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tool calls the model may make in all.
    pub max_steps: u32,
    /// Wall-clock time of the whole run.
    pub timeout: Duration,
    /// Input plus output tokens over all of the run's model calls, as the provider reports them.
    pub max_tokens_total: u64,
    /// Bytes of the conversation kept for the model (messages, tool calls, tool results).
    pub max_conversation_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 25,
            timeout: Duration::from_secs(600),
            // `[agent] max_tokens`'s default, 400k.
            max_tokens_total: crate::config::AgentConfig::default().max_tokens,
            max_conversation_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Run the agent on one note. `web`: offer `fetch_url` (never in `event` runs). `on_edit`
/// gets the whole new body after each edit; `events` gets the transcript (model turns, tool
/// calls and results, token usage).
pub async fn run_agent(
    client: &dyn ModelClient,
    req: &RunRequest,
    limits: Limits,
    web: bool,
    cancel: CancellationToken,
    on_edit: &mut dyn EditSink,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<RunOutput, ProviderError> {
    let http = HttpFetcher::default();
    let fetcher: Option<&dyn Fetcher> = if web { Some(&http) } else { None };
    run_agent_with(client, req, limits, fetcher, Caps::default(), cancel, on_edit, events).await
}

/// [`run_agent`] with a given fetcher (`None`: no `fetch_url`) and tool caps.
#[allow(clippy::too_many_arguments)]
pub async fn run_agent_with(
    client: &dyn ModelClient,
    req: &RunRequest,
    limits: Limits,
    fetcher: Option<&dyn Fetcher>,
    caps: Caps,
    cancel: CancellationToken,
    on_edit: &mut dyn EditSink,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<RunOutput, ProviderError> {
    // An event run decides whether the event matters to this note; reading the web is not
    // part of that (and an event payload must not be able to make livenote fetch URLs).
    let fetcher = fetcher.filter(|_| req.trigger != TriggerKind::Event);
    let workspace = Workspace::new(&req.workspace_root, &req.note_path, caps)
        .map_err(|e| ProviderError::Config(e.to_string()))?;
    let work = async {
        // The MCP servers start inside the run's time limit and Stop, like everything it does.
        let session = start_mcp(req, events).await;
        let toolbox = Toolbox::new(workspace, agent_body(req), fetcher)
            .with_mcp(&session)
            .with_budget(req.max_chars)
            .with_memory(tools::MemoryTools::new(req))
            .with_skills(req.skills.iter().chain(&req.skill_catalog));
        converse(client, req, limits, toolbox, cancel.clone(), on_edit, events).await
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ProviderError::Stopped),
        r = tokio::time::timeout(limits.timeout, work) => r.unwrap_or_else(|_| Err(failed(format!(
            "timed out after {} ([agent] timeout)",
            crate::config::format_duration(limits.timeout)
        )))),
    }
}

/// The run's MCP tools: its servers started (or reused), with what failed in the transcript.
/// An event run gets only servers marked `events = true`, whatever the caller selected.
async fn start_mcp(req: &RunRequest, events: &mut (dyn FnMut(&RunEvent) + Send)) -> Session {
    let servers: Vec<Selected> = req
        .mcp_servers
        .iter()
        .filter(|s| req.trigger != TriggerKind::Event || s.config.events)
        .cloned()
        .collect();
    if servers.is_empty() {
        return Session::none();
    }
    let session = Session::start(Pool::global(), &req.workspace_root, req.trusted, servers).await;
    for problem in session.problems() {
        events(&RunEvent::new("mcp", problem.clone()));
    }
    session
}

/// The body the model works on: the request's body, with the note's H1 on top when the body
/// is the text below it (see the module documentation); the H1 rule is the run engine's
/// (`note::body::with_title`).
fn agent_body(req: &RunRequest) -> String {
    body::with_title(req.title.as_deref(), &req.body)
}

async fn converse(
    client: &dyn ModelClient,
    req: &RunRequest,
    limits: Limits,
    mut toolbox: Toolbox<'_>,
    cancel: CancellationToken,
    on_edit: &mut dyn EditSink,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<RunOutput, ProviderError> {
    let specs = toolbox.specs();
    let system = prompt::with_instructions(
        prompt::system_prompt(
            specs.iter().any(|s| s.name == tools::FETCH_URL),
            specs.iter().any(|s| s.name.starts_with(crate::mcp::names::PREFIX)),
        ),
        &req.instructions,
    );
    let mut messages = vec![Message::user(prompt::run_message(req))];
    let mut tokens: u64 = 0;
    let mut steps: u32 = 0;
    loop {
        if cancel.is_cancelled() {
            return Err(ProviderError::Stopped);
        }
        check_conversation(&messages, limits.max_conversation_bytes)?;
        let remaining = limits.max_tokens_total.saturating_sub(tokens);
        let max_tokens = remaining.clamp(MIN_REPLY_TOKENS, MAX_REPLY_TOKENS);
        let request = Request {
            system: &system,
            messages: &messages,
            tools: &specs,
            max_tokens: u32::try_from(max_tokens).unwrap_or(u32::MAX),
            json: false,
        };
        let asked = tokio::time::Instant::now();
        let turn = match client.complete(request, cancel.clone()).await {
            Ok(turn) => turn,
            // Re-reads and file contents pile up; the latest ones are what the model needs.
            Err(ModelError::ContextOverflow) if elide_old_results(&mut messages) => {
                events(&RunEvent::new("context", "the conversation got too long: older tool results elided"));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        tokens = tokens.saturating_add(turn.usage.input_tokens).saturating_add(turn.usage.output_tokens);
        report_turn(&turn, tokens, asked.elapsed(), events);
        messages.push(turn.message());
        if !turn.tool_calls.is_empty() {
            check_conversation(&messages, limits.max_conversation_bytes)?;
        }
        if turn.tool_calls.is_empty() {
            let summary = turn.text.trim();
            let body = toolbox.into_body();
            return Ok(RunOutput {
                body,
                summary: (!summary.is_empty()).then(|| summary.to_owned()),
                body_is_below_h1: false,
            });
        }
        if tokens > limits.max_tokens_total {
            return Err(failed(format!(
                "stopped after using {tokens} tokens, over the limit of {} ([agent] max_tokens)",
                limits.max_tokens_total
            )));
        }
        for call in &turn.tool_calls {
            if steps >= limits.max_steps {
                return Err(failed(format!(
                    "stopped after {} tool calls ([agent] max_steps)",
                    limits.max_steps
                )));
            }
            steps += 1;
            let mut out = toolbox.call(call, &cancel).await;
            if out.edited {
                // Each step lands before the next is computed, so the model's next edit applies
                // to the note as this one left it (SPEC 4).
                match on_edit.apply(toolbox.body()).await {
                    EditReply::Applied(None) => {}
                    EditReply::Applied(Some(region)) => {
                        toolbox.sync_body(body::with_title(req.title.as_deref(), &region))
                    }
                    EditReply::Refused { message, body } => {
                        if let Some(region) = body {
                            toolbox.sync_body(body::with_title(req.title.as_deref(), &region));
                        }
                        out.content = format!(
                            "Not applied: {message}. Call read_note to see the note as it is now, then make your change again on that text."
                        );
                        out.is_error = true;
                    }
                    EditReply::Failed(e) => {
                        return Err(ProviderError::Io(format!("cannot write the note: {e}")));
                    }
                }
            }
            if let Some(event) = out.event.take() {
                events(&event);
            }
            let status = if out.is_error { "error" } else { "ok" };
            events(
                &RunEvent::new(
                    "tool_result",
                    format!("{} {status}: {}", call.name, clip(&out.content, EVENT_RESULT_CHARS)),
                )
                .with_data(serde_json::json!({"tool": call.name})),
            );
            messages.push(Message::tool_result(&call.id, out.content, out.is_error));
        }
    }
}

/// Fails when `messages` hold more than `limit` bytes: what the model sends back is kept and
/// re-sent at every step, so this bounds the run's memory whatever the model does.
fn check_conversation(messages: &[Message], limit: usize) -> Result<(), ProviderError> {
    let bytes = messages.iter().fold(0usize, |sum, m| {
        let calls = m.tool_calls.iter().map(|c| c.id.len() + c.name.len() + json_len(&c.arguments));
        sum.saturating_add(m.content.len()).saturating_add(calls.sum())
    });
    if bytes > limit {
        return Err(ProviderError::TooLarge(format!(
            "conversation too large: the run's conversation with the model grew past {} \
             (agent.max_conversation_bytes)",
            crate::text::count::bytes(limit as u64)
        )));
    }
    Ok(())
}

/// What replaces an elided tool result.
const ELIDED: &str = "[elided to save room; call the tool again if you still need this]";

/// Shorten the results of all tool calls but the latest turn's; whether anything changed (if
/// not, the conversation cannot shrink this way and the error stands).
fn elide_old_results(messages: &mut [Message]) -> bool {
    let latest = messages.iter().rposition(|m| m.role == Role::Assistant).unwrap_or(0);
    let mut changed = false;
    for m in &mut messages[..latest] {
        if m.role == Role::Tool && m.content.len() > ELIDED.len() {
            m.content = ELIDED.to_owned();
            changed = true;
        }
    }
    changed
}

/// The transcript of one model turn; its `usage` event carries the call's tokens and time as
/// data, which the run's totals add up (`cost::RunTotals`).
fn report_turn(turn: &Turn, tokens: u64, took: Duration, events: &mut (dyn FnMut(&RunEvent) + Send)) {
    let text = turn.text.trim();
    if !text.is_empty() {
        events(&RunEvent::new("model", clip(text, EVENT_TEXT_CHARS)));
    }
    for call in &turn.tool_calls {
        events(&RunEvent::new("tool_call", describe_call(call)));
    }
    let stop = turn.stop_reason.as_deref().map(|s| format!(" stop={s}")).unwrap_or_default();
    let u = turn.usage;
    let ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
    events(
        &RunEvent::new(
            "usage",
            format!(
                "input={} output={} cached={} ms={ms} total={tokens}{stop}",
                u.input_tokens, u.output_tokens, u.cached_input_tokens
            ),
        )
        .with_data(serde_json::json!({
            "input": u.input_tokens,
            "output": u.output_tokens,
            "cached": u.cached_input_tokens,
            "ms": ms,
        })),
    );
}

fn describe_call(call: &ToolCall) -> String {
    let args = match &call.arguments {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    clip(&format!("{} {args}", call.name), EVENT_TEXT_CHARS)
}

/// A run that ended on a limit: one line for `lastRunError`.
fn failed(message: String) -> ProviderError {
    ProviderError::Failed { status: message, stderr_tail: String::new() }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
