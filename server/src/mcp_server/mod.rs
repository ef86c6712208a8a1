//! `livenote mcp [DIR]`: the workspace as a Model Context Protocol server over stdio, so that
//! any chat assistant (VS Code's chat, Claude Code, Zed, Neovim plugins) can create and drive
//! live notes. This module is only the protocol: tool and prompt declarations and their
//! argument schemas (rmcp's macros), the resources; [`ops`] does the work with the code the
//! command line and the editor use, [`paths`] confines the paths clients send, [`prompt`] is
//! the `make_live_note` prompt.
//!
//! Decisions where the issue is silent:
//! - Failures a client caused (a bad path, an invalid cron, a note that is not live, a run that
//!   failed) are tool errors (`isError: true`) with a message for the assistant; protocol
//!   errors are kept for what the protocol defines (unknown tool, unknown resource).
//! - Rewrites take the note's run lock, and are refused while a run holds it, rather than
//!   waiting: a run writes into the same block, and the assistant can call again.
//! - `livenote mcp` never runs notes on its own (no scheduler): an editor or `livenote watch`
//!   does, and `run_note` runs one now.

pub mod changes;
pub mod ops;
pub mod paths;
pub mod prompt;

use std::path::Path;
use std::sync::Arc;

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler, ServiceExt, prompt, prompt_handler, prompt_router,
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use ops::{MakeLive, Refusal, Workspace};

const MARKDOWN: &str = "text/markdown";

/// Serve `root` on stdin/stdout until the client closes stdin.
pub async fn serve_stdio(root: &Path) -> anyhow::Result<()> {
    let workspace = Workspace::open(root)?;
    tracing::info!("serve {} over MCP on stdio", workspace.root.display());
    let service = Server::new(workspace).serve(rmcp::transport::stdio()).await?;
    let reason = service.waiting().await?;
    tracing::debug!("mcp session ended: {reason:?}");
    Ok(())
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathArgs {
    /// The note's path relative to the workspace, `/`-separated (`notes/weather.md`).
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MakeLiveArgs {
    /// The note's path relative to the workspace, `/`-separated, ending in `.md`; created
    /// (with a title from its file name) when it does not exist.
    pub path: String,
    /// What the note should keep being: what to show, from where, how fresh, in what layout.
    /// Replaces the objective of a note that is live already (pass the whole new text).
    /// Required unless `describe` is given.
    #[serde(default)]
    pub objective: String,
    /// A 5-field cron expression in local time (`minute hour day-of-month month
    /// day-of-week`, Monday = 1, 0 and 7 = Sunday), e.g. `0 9 * * 1-5`. Omit to keep the
    /// note's; `""` removes it.
    pub cron_expr: Option<String>,
    /// Daily time bands, each firing once a day inside it. Omit to keep the note's; `[]`
    /// removes them.
    pub windows: Option<Vec<WindowArg>>,
    /// Which incoming events should update the note, in words ("Emails about the Q3 budget").
    /// Omit to keep the note's; `""` removes it.
    pub event_match_criteria: Option<String>,
    /// One sentence of what the note should keep current, instead of `objective` and the
    /// triggers: the workspace's configured model drafts the block. A live note is extended:
    /// its objective is kept word for word with the sentence added; `draft.changes` in the
    /// answer says what changed.
    pub describe: Option<String>,
    /// Run the note once after it is written (as `run_note`). Nothing else starts a run: not a
    /// draft, whatever it says.
    #[serde(default)]
    pub run: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WindowArg {
    /// `HH:MM`, 24-hour, local time.
    pub start_time: String,
    /// `HH:MM`, not before `startTime`; the end minute is inside the band.
    pub end_time: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunNoteArgs {
    /// The note's path relative to the workspace, `/`-separated.
    pub path: String,
    /// Extra context for this run's agent ("backfill the last 7 days").
    pub context: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetActiveArgs {
    /// The note's path relative to the workspace, `/`-separated.
    pub path: String,
    /// `false` pauses the note (it no longer runs on its own), `true` resumes it.
    pub active: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtendObjectiveArgs {
    /// The note's path relative to the workspace, `/`-separated.
    pub path: String,
    /// What the objective should also cover, in the user's words ("Also the pollen count.");
    /// added after the objective, which keeps every word.
    pub addition: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetTriggersArgs {
    /// The note's path relative to the workspace, `/`-separated.
    pub path: String,
    /// A 5-field cron expression in local time (`0 9 * * 1-5`). Omit to keep the note's; `""`
    /// removes it.
    pub cron_expr: Option<String>,
    /// Daily time bands, each firing once a day inside it. Omit to keep the note's; `[]`
    /// removes them.
    pub windows: Option<Vec<WindowArg>>,
    /// Which incoming events should update the note, in words. Omit to keep the note's; `""`
    /// removes it.
    pub event_match_criteria: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// The note's path relative to the workspace, `/`-separated.
    pub path: String,
    /// At most this many runs, newest first (default: all that are kept).
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    /// One note's path relative to the workspace; omit to check every note.
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MakeLiveNoteArgs {
    /// What the user asked for, in their words.
    pub request: String,
    /// The note they mean, relative to the workspace, if any.
    pub path: Option<String>,
}

#[derive(Clone)]
pub struct Server {
    workspace: Arc<Workspace>,
    tool_router: ToolRouter<Server>,
    prompt_router: PromptRouter<Server>,
}

impl Server {
    pub fn new(workspace: Workspace) -> Server {
        Server {
            workspace: Arc::new(workspace),
            tool_router: Self::tool_router(),
            prompt_router: Self::prompt_router(),
        }
    }
}

/// A tool's answer: the JSON as text, or the refusal as a tool error.
fn answer(result: Result<Value, Refusal>) -> Result<CallToolResult, McpError> {
    Ok(match result {
        Ok(v) => {
            let text = serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string());
            CallToolResult::success(vec![ContentBlock::text(text)])
        }
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    })
}

#[tool_router]
impl Server {
    #[tool(
        description = "Every live note of the workspace with its status: path, title, status (live, paused, running, failed, invalid, untrusted, expired), due, nextDue, lastRunAt, lastRunSummary and the rest of `livenote list --format json`.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_live_notes(&self) -> Result<CallToolResult, McpError> {
        let ws = Arc::clone(&self.workspace);
        answer(blocking(move || Ok(ws.list_live_notes())).await)
    }

    #[tool(
        description = "One note's status: as in list_live_notes, plus its objective and triggers; `live: false` for a passive note.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn note_status(&self, Parameters(a): Parameters<PathArgs>) -> Result<CallToolResult, McpError> {
        let ws = Arc::clone(&self.workspace);
        answer(blocking(move || ws.note_status(&a.path)).await)
    }

    #[tool(
        description = "Make a note live, or change a live note: adds a `live:` block with this objective and these triggers to a passive note (creating the note if it does not exist), or replaces the objective and the triggers given of a live note. With `describe` (one sentence) instead, the configured model drafts the block, and a live note is extended, never replaced. Answers the note's diagnostics; refused, with nothing written, when the result would have errors (an invalid cron, a malformed window). `run: true` runs the note once afterwards. The make_live_note prompt explains good objectives and triggers.",
        annotations(destructive_hint = false, idempotent_hint = false, open_world_hint = true)
    )]
    async fn make_live(
        &self,
        Parameters(a): Parameters<MakeLiveArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let describe = a.describe.filter(|d| !d.trim().is_empty());
        let args = MakeLive {
            path: a.path.clone(),
            objective: a.objective,
            triggers: rewrite_triggers(a.cron_expr, a.windows, a.event_match_criteria),
            describe,
        };
        let mut made = match self.workspace.make_live(&args).await {
            Ok(v) => v,
            Err(refusal) => return answer(Err(refusal)),
        };
        // Only the caller's `run` runs the note: the note is made live either way, so a run
        // that fails is reported beside it, not as the tool's failure.
        if a.run {
            let run = match self.workspace.run_note(&a.path, None, ctx.ct.clone()).await {
                Ok(v) => v,
                Err(error) => serde_json::json!({ "outcome": "failed", "error": error }),
            };
            if let Some(o) = made.as_object_mut() {
                o.insert("run".into(), run);
            }
        }
        answer(Ok(made))
    }

    #[tool(
        description = "Run the note now and wait for the outcome: the run's summary, or its error. As `livenote run`: ignores `active` and the schedule; the folder's .livenote.toml is used only when the folder is trusted.",
        annotations(destructive_hint = false, open_world_hint = true)
    )]
    async fn run_note(
        &self,
        Parameters(a): Parameters<RunNoteArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        answer(self.workspace.run_note(&a.path, a.context, ctx.ct.clone()).await)
    }

    #[tool(
        description = "Pause (`active: false`) or resume (`active: true`) a live note.",
        annotations(destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn set_active(&self, Parameters(a): Parameters<SetActiveArgs>) -> Result<CallToolResult, McpError> {
        answer(self.workspace.set_active(&a.path, a.active).await)
    }

    #[tool(
        description = "Make a live note passive: removes its `live:` block; the body stays as it is.",
        annotations(destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn make_passive(&self, Parameters(a): Parameters<PathArgs>) -> Result<CallToolResult, McpError> {
        answer(self.workspace.make_passive(&a.path).await)
    }

    #[tool(
        description = "Restore the note's body from before its latest run that changed it (itself undoable); refused when the body was edited since that run.",
        annotations(destructive_hint = true, open_world_hint = false)
    )]
    async fn undo_last_run(&self, Parameters(a): Parameters<PathArgs>) -> Result<CallToolResult, McpError> {
        answer(self.workspace.undo_last_run(&a.path).await)
    }

    #[tool(
        description = "Extend a live note's objective: `addition` is added after it, every word of the objective kept (never replaced). Refused, with nothing written, on a passive note.",
        annotations(destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn extend_objective(
        &self,
        Parameters(a): Parameters<ExtendObjectiveArgs>,
    ) -> Result<CallToolResult, McpError> {
        answer(self.workspace.extend_objective(&a.path, &a.addition).await)
    }

    #[tool(
        description = "Set or change a live note's triggers: the ones given replace the note's (`\"\"` or `[]` removes one), the others stay. Refused, with nothing written, when the result would have errors (an invalid cron, a malformed window).",
        annotations(destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn set_triggers(
        &self,
        Parameters(a): Parameters<SetTriggersArgs>,
    ) -> Result<CallToolResult, McpError> {
        let triggers = rewrite_triggers(a.cron_expr, a.windows, a.event_match_criteria);
        answer(self.workspace.set_triggers(&a.path, triggers).await)
    }

    #[tool(
        description = "Stop the note's run, whichever livenote process holds it (an editor, `livenote watch`, `livenote run`); the run records \"stopped\". Refused when the note is not running.",
        annotations(destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn stop_run(&self, Parameters(a): Parameters<PathArgs>) -> Result<CallToolResult, McpError> {
        answer(self.workspace.stop(&a.path).await)
    }

    #[tool(
        description = "The note's runs, newest first, as `livenote history --format json`: id, time, trigger, outcome (done, failed, stopped, skipped, running), summary or error, lines added and removed, whether undo can restore from it, and what it cost.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn note_history(&self, Parameters(a): Parameters<HistoryArgs>) -> Result<CallToolResult, McpError> {
        let ws = Arc::clone(&self.workspace);
        answer(blocking(move || ws.history(&a.path, a.limit)).await)
    }

    #[tool(
        description = "The diagnostics of one note, or of every note of the workspace, as `livenote check --format json` gives them (1-based lines and columns), with counts.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn check(&self, Parameters(a): Parameters<CheckArgs>) -> Result<CallToolResult, McpError> {
        let ws = Arc::clone(&self.workspace);
        answer(blocking(move || ws.check(a.path.as_deref())).await)
    }
}

/// The tool's triggers as the rewrite takes them.
fn rewrite_triggers(
    cron_expr: Option<String>,
    windows: Option<Vec<WindowArg>>,
    event_match_criteria: Option<String>,
) -> crate::note::rewrite::TriggerEdits {
    crate::note::rewrite::TriggerEdits {
        cron_expr,
        windows: windows.map(|w| w.into_iter().map(|w| (w.start_time, w.end_time)).collect()),
        event_match_criteria,
    }
}

/// Walking and reading the workspace blocks: off the async workers.
async fn blocking(f: impl FnOnce() -> Result<Value, Refusal> + Send + 'static) -> Result<Value, Refusal> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| Err(format!("internal error: {e}")))
}

#[prompt_router]
impl Server {
    /// How to turn a request ("keep this note updated with ...") into a live note: when to make
    /// one, a good objective, triggers (cron, windows, events), and the tools to use.
    #[prompt(name = "make_live_note")]
    async fn make_live_note(
        &self,
        Parameters(a): Parameters<MakeLiveNoteArgs>,
    ) -> Result<GetPromptResult, McpError> {
        let text = self.workspace.prompt(&a.request, a.path.as_deref());
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).with_description(
            "Turn a request into a live note: objective, triggers, then make_live and run_note",
        ))
    }
}

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().enable_resources().build())
            .with_server_info(Implementation::new("livenote", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "livenote keeps markdown notes live: an agent updates a note's body on a schedule, on events or on demand. \
                 Use make_live to create or change a live note (the make_live_note prompt explains objectives and \
                 triggers), extend_objective and set_triggers to change a live one (the user's objective is extended, never \
                 replaced), run_note to update it now, list_live_notes, note_status and note_history to see them. Paths are relative to \
                 the workspace, `/`-separated. The live notes are resources: livenote://<path>.",
            )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let ws = Arc::clone(&self.workspace);
        let notes = tokio::task::spawn_blocking(move || ws.resources())
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let resources = notes
            .into_iter()
            .map(|(uri, path, title)| Resource::new(uri, path).with_title(title).with_mime_type(MARKDOWN))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let note = ResourceTemplate::new(format!("{}{{path}}", paths::SCHEME), "note")
            .with_description("A note of the workspace by its path, `/`-separated")
            .with_mime_type(MARKDOWN);
        Ok(ListResourceTemplatesResult::with_all_items(vec![note]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let ws = Arc::clone(&self.workspace);
        let uri = request.uri.clone();
        let text = tokio::task::spawn_blocking(move || ws.read_resource(&uri))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?
            .map_err(|e| McpError::resource_not_found(e, Some(serde_json::json!({ "uri": request.uri }))))?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri.clone()).with_mime_type(MARKDOWN),
        ])
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names the issue fixes.
    #[test]
    fn the_tools_and_the_prompt_have_their_names() {
        let mut tools: Vec<String> =
            Server::tool_router().list_all().into_iter().map(|t| t.name.into_owned()).collect();
        tools.sort();
        let want = [
            "check",
            "extend_objective",
            "list_live_notes",
            "make_live",
            "make_passive",
            "note_history",
            "note_status",
            "run_note",
            "set_active",
            "set_triggers",
            "stop_run",
            "undo_last_run",
        ];
        assert_eq!(tools, want);
        let prompts: Vec<String> = Server::prompt_router().list_all().into_iter().map(|p| p.name).collect();
        assert_eq!(prompts, ["make_live_note"]);
    }
}
