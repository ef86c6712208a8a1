//! One run's MCP tools: the selected servers started (or reused) when the run begins, their
//! tools named for the model, and each call routed to its server and recorded for the
//! transcript. A server that does not start gives the run no tools of its own, except those
//! the cache remembers: the model then sees them, and calling one tries to start the server
//! again and answers its error, so the run goes on either way.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::JsonObject;
use serde::Serialize;
use serde_json::Value;

use super::cache::{CachedTool, listed};
use super::pool::Pool;
use super::select::Selected;
use super::{content, names};

/// One tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionTool {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    pub server: String,
    /// The tool's own name on its server.
    pub tool: String,
    pub description: String,
    pub input_schema: Value,
}

/// One call, for the transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRecord {
    pub server: String,
    pub tool: String,
    pub arguments: Value,
    /// Bytes of the result's text (before any cut).
    pub result_bytes: usize,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a call gave: the text for the model (or the error it reads) and the record.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    pub result: Result<String, String>,
    pub record: CallRecord,
}

pub struct Session {
    pool: Arc<Pool>,
    root: PathBuf,
    /// Whether `root` is trusted: where the servers' programs start (`workspace::launch`).
    trusted: bool,
    servers: Vec<Selected>,
    tools: Vec<SessionTool>,
    problems: Vec<String>,
}

impl Session {
    /// No MCP tools.
    pub fn none() -> Session {
        Session {
            pool: Pool::global(),
            root: PathBuf::new(),
            trusted: false,
            servers: Vec::new(),
            tools: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Start the `servers` a run may use (all at once, each within its `timeout`) in
    /// workspace `root` (`trusted` or not), and gather their tools.
    pub async fn start(pool: Arc<Pool>, root: &Path, trusted: bool, servers: Vec<Selected>) -> Session {
        let mut starts = tokio::task::JoinSet::new();
        for (i, s) in servers.iter().enumerate() {
            let (pool, s, root) = (Arc::clone(&pool), s.clone(), root.to_path_buf());
            starts.spawn(async move { (i, pool.acquire(&s.name, &s.config, &root, trusted).await) });
        }
        let mut started: Vec<Option<Result<Vec<CachedTool>, String>>> = vec![None; servers.len()];
        while let Some(joined) = starts.join_next().await {
            let Ok((i, result)) = joined else { continue };
            started[i] = Some(result.map(|inst| inst.tools().iter().map(listed).collect()));
        }
        let mut problems = Vec::new();
        let mut offered: Vec<(String, CachedTool)> = Vec::new();
        for (s, result) in servers.iter().zip(started) {
            let tools = match result {
                Some(Ok(tools)) => tools,
                Some(Err(why)) => {
                    problems.push(format!("MCP server `{}` did not start: {why}", s.name));
                    // What it listed before, if anything: calling one tries again.
                    pool.cache().and_then(|c| c.load(&s.config)).unwrap_or_default()
                }
                None => {
                    problems.push(format!("MCP server `{}` did not start", s.name));
                    Vec::new()
                }
            };
            if let Some(wanted) = &s.tools {
                for w in wanted.iter().filter(|w| !tools.iter().any(|t| t.name == **w)) {
                    problems.push(format!("MCP server `{}` has no tool `{w}` (live.tools)", s.name));
                }
            }
            for tool in tools {
                if s.tools.as_ref().is_none_or(|w| w.contains(&tool.name)) {
                    offered.push((s.name.clone(), tool));
                }
            }
        }
        let pairs: Vec<(&str, &str)> = offered.iter().map(|(s, t)| (s.as_str(), t.name.as_str())).collect();
        let named = names::assign(&pairs);
        let tools = offered
            .into_iter()
            .zip(named)
            .map(|((server, t), name)| SessionTool {
                description: t
                    .description
                    .filter(|d| !d.trim().is_empty())
                    .unwrap_or_else(|| format!("The tool `{}` of the MCP server `{server}`.", t.name)),
                name,
                server,
                tool: t.name,
                input_schema: t.input_schema,
            })
            .collect();
        Session { pool, root: root.to_path_buf(), trusted, servers, tools, problems }
    }

    pub fn tools(&self) -> &[SessionTool] {
        &self.tools
    }

    /// Why servers gave no tools (for the transcript).
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    pub fn find(&self, name: &str) -> Option<&SessionTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Call `tool` with `arguments` on its server (started again if it is gone). Never fails:
    /// an error is the model's to read.
    pub async fn call(&self, tool: &SessionTool, arguments: JsonObject) -> CallOutcome {
        let began = Instant::now();
        let args = Value::Object(arguments.clone());
        let result = match self.servers.iter().find(|s| s.name == tool.server) {
            None => Err(format!("no MCP server `{}` in this run", tool.server)),
            Some(s) => match self.pool.acquire(&s.name, &s.config, &self.root, self.trusted).await {
                Err(why) => Err(format!("the MCP server `{}` is not available: {why}", s.name)),
                Ok(inst) => match self.pool.call(&inst, &tool.tool, arguments, s.config.timeout).await {
                    Ok(r) => {
                        let text = content::result_text(&r);
                        if r.is_error == Some(true) {
                            Err(if text.trim().is_empty() { "the tool failed".to_owned() } else { text })
                        } else {
                            Ok(text)
                        }
                    }
                    Err(why) => Err(format!("the MCP server `{}`: {why}", s.name)),
                },
            },
        };
        let record = CallRecord {
            server: tool.server.clone(),
            tool: tool.tool.clone(),
            arguments: args,
            result_bytes: result.as_ref().map_or_else(String::len, String::len),
            duration_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
            error: result.as_ref().err().cloned(),
        };
        CallOutcome { result, record }
    }
}
