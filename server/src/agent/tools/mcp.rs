//! The run's MCP tools in the toolbox: each as the model sees it (the server's description and
//! input schema under its `mcp__<server>__<tool>` name), and each call routed to its server
//! through the run's `mcp::Session`. Results are cut like the workspace and web tools'; a tool
//! error (`isError`), a server that fails or does not answer, are error results the model
//! reads, and the run goes on. Every call is recorded for the transcript.

use serde_json::{Value, json};

use super::{ToolError, object_args, truncate};
use crate::mcp::Session;
use crate::model::ToolSpec;
use crate::run_types::RunEvent;

/// How much of the arguments a call's one-line transcript message shows.
const EVENT_ARGS_CHARS: usize = 300;

/// The specs of the session's tools.
pub(super) fn specs(session: &Session) -> Vec<ToolSpec> {
    session
        .tools()
        .iter()
        .map(|t| ToolSpec {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.input_schema.clone(),
        })
        .collect()
}

/// Call the session's tool `name`; `None` when it has none of that name. The result (cut at
/// `max_output` bytes) or error, and the transcript's record of the call.
pub(super) async fn call(
    session: &Session,
    name: &str,
    args: &Value,
    max_output: usize,
) -> Option<(Result<String, ToolError>, RunEvent)> {
    let tool = session.find(name)?;
    let arguments = match object_args(name, args) {
        Ok(a) => a,
        Err(e) => {
            let event = RunEvent::new("mcp", format!("{}.{}: {e}", tool.server, tool.tool));
            return Some((Err(e), event));
        }
    };
    let outcome = session.call(tool, arguments).await;
    let r = &outcome.record;
    let args_text = crate::text::short::clip(&r.arguments.to_string(), EVENT_ARGS_CHARS);
    let message = match &r.error {
        None => format!(
            "{}.{} {args_text}: {} in {} ms",
            r.server,
            r.tool,
            crate::text::count(r.result_bytes, "byte"),
            r.duration_ms
        ),
        Some(e) => format!("{}.{} {args_text}: failed after {} ms: {e}", r.server, r.tool, r.duration_ms),
    };
    let data = serde_json::to_value(&outcome.record).unwrap_or_else(|_| json!({}));
    let event = RunEvent::new("mcp", message).with_data(data);
    let result = outcome.result.map(|text| truncate(&text, max_output, "the result")).map_err(ToolError);
    Some((result, event))
}
