//! One connection to one MCP server: a program livenote starts (stdio, in the workspace folder
//! or, for an untrusted one, a neutral folder: `workspace::launch`; in a process group of its
//! own, its stderr into the log), or a server at a URL (streamable HTTP). The MCP handshake is
//! bounded by the server's `timeout`; a server that does not answer it is killed. Killing is
//! always the whole process group, synchronously, so nothing a server started outlives it. On
//! Windows the server runs in a Job object that its transport owns (`crate::platform::Group`):
//! ending the connection ends the transport, which terminates the job.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, JsonObject, Tool,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::config::{McpServerConfig, McpTransport, format_duration};
use crate::platform::Group;

/// The last lines of a server's stderr kept for messages ("the server exited: ...").
const STDERR_TAIL_LINES: usize = 3;
/// Characters of one stderr line kept for messages.
const STDERR_LINE_CHARS: usize = 300;
/// How long a server that failed to start may take to close its stderr.
const STDERR_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

type Service = RunningService<RoleClient, ClientConfig>;

/// A live connection.
pub struct Connection {
    service: Service,
    /// The process group of a server livenote started (`None` over HTTP).
    group: Option<Group>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    killed: AtomicBool,
    /// The neutral folder a program of an untrusted workspace runs in, kept while it runs.
    _launch: Option<crate::workspace::launch::Launch>,
}

/// Why a call got no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The connection is gone (the server exited or was killed): the next use starts it again.
    Closed(String),
    /// The server answered with a protocol error (unknown tool, invalid arguments, ...).
    Protocol(String),
}

impl Connection {
    /// The server's tools (every page of `tools/list`).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, CallError> {
        self.service.list_all_tools().await.map_err(|e| self.error(e))
    }

    /// One `tools/call`. Dropping the future abandons the call (rmcp tells the server with
    /// `notifications/cancelled`).
    pub async fn call(&self, tool: &str, arguments: JsonObject) -> Result<CallToolResult, CallError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        self.service.call_tool(params).await.map_err(|e| self.error(e))
    }

    fn error(&self, e: ServiceError) -> CallError {
        match e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                CallError::Closed(self.exit_reason())
            }
            ServiceError::McpError(data) => CallError::Protocol(data.message.into_owned()),
            other => CallError::Protocol(other.to_string()),
        }
    }

    /// "the server exited" with its last stderr lines, for messages.
    pub fn exit_reason(&self) -> String {
        if self.killed.load(Ordering::Relaxed) {
            return "the server was stopped".to_owned();
        }
        with_tail("the server exited", &self.stderr)
    }

    /// Whether the connection can still be used.
    pub fn is_alive(&self) -> bool {
        !self.killed.load(Ordering::Relaxed) && !self.service.is_transport_closed()
    }

    /// The server's process group, when livenote started it.
    pub fn process_group(&self) -> Option<i32> {
        self.group.as_ref().map(Group::id)
    }

    /// End the connection now: SIGKILL to the server's whole process group (a hung server
    /// would ignore anything gentler), and the connection's task stops.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Relaxed);
        if let Some(group) = &self.group {
            group.kill();
        }
        self.service.cancellation_token().cancel();
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(group) = &self.group {
            group.kill();
        }
    }
}

/// Kills a group on drop unless disarmed: a server whose handshake fails or hangs.
struct GroupGuard(Option<Group>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = &self.0 {
            group.kill();
        }
    }
}

fn with_tail(what: &str, stderr: &Mutex<VecDeque<String>>) -> String {
    let tail = stderr.lock().map(|t| t.iter().cloned().collect::<Vec<_>>().join(" | ")).unwrap_or_default();
    if tail.is_empty() { what.to_owned() } else { format!("{what} (its stderr: {tail})") }
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("livenote", env!("CARGO_PKG_VERSION")),
    )
}

/// Connect to server `name`: start it (stdio) or reach it (HTTP), then the MCP handshake,
/// within `cfg.timeout`. `root`: the workspace folder, where a program runs when `trusted`.
pub async fn connect(
    name: &str,
    cfg: &McpServerConfig,
    root: &Path,
    trusted: bool,
) -> Result<Connection, String> {
    match &cfg.transport {
        McpTransport::Stdio { command } => spawn(name, command, cfg, root, trusted).await,
        McpTransport::Http { url, headers } => {
            let headers = super::http::headers_from_env(name, headers, &crate::config::ProcessEnv)?;
            super::http::connect(url, headers, cfg.start_timeout(), client_info()).await.map(|service| {
                Connection {
                    service,
                    group: None,
                    stderr: Arc::default(),
                    killed: AtomicBool::new(false),
                    _launch: None,
                }
            })
        }
    }
}

async fn spawn(
    name: &str,
    command: &[String],
    cfg: &McpServerConfig,
    root: &Path,
    trusted: bool,
) -> Result<Connection, String> {
    let Some((program, args)) = command.split_first() else {
        return Err("the server's `command` is empty".to_owned());
    };
    let launch = crate::workspace::launch::prepare(root, trusted)
        .map_err(|e| format!("cannot make a folder for `{program}` to run in: {e}"))?;
    let mut cmd = tokio::process::Command::new(crate::workspace::program_path(program, root));
    if let Some(path) = launch.path_env() {
        cmd.env("PATH", path);
    }
    cmd.args(args).env("LIVENOTE_WORKSPACE", root).envs(&cfg.env).current_dir(launch.dir());
    // Its own group, so one signal reaches the server and everything it started.
    let cmd = Group::command(cmd);
    // stdin and stdout carry the protocol; stderr is the server's log, never the editor's.
    let (transport, stderr) =
        TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!("cannot start `{program}`: command not found")
            } else {
                format!("cannot start `{program}`: {e}")
            }
        })?;
    let group = Group::leader(transport.id());
    let mut guard = GroupGuard(group);
    let tail: Arc<Mutex<VecDeque<String>>> = Arc::default();
    let mut drain = None;
    if let Some(stderr) = stderr {
        // Drained to the end, or the server blocks once the pipe is full.
        let (name, tail) = (name.to_owned(), Arc::clone(&tail));
        drain = Some(tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!("stderr mcp {name}: {line}");
                if let Ok(mut t) = tail.lock() {
                    if t.len() == STDERR_TAIL_LINES {
                        t.pop_front();
                    }
                    t.push_back(crate::text::short::one_line(&line, STDERR_LINE_CHARS));
                }
            }
        }));
    }
    let service = match tokio::time::timeout(cfg.start_timeout(), client_info().serve(transport)).await {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => {
            tracing::debug!("start mcp {name}: {e}");
            drop(guard);
            // Its last words on stderr say why; the pipe closes with the group.
            if let Some(drain) = drain {
                let _ = tokio::time::timeout(STDERR_GRACE, drain).await;
            }
            return Err(with_tail("the server exited during start-up", &tail));
        }
        Err(_) => {
            return Err(format!("the server did not start within {}", format_duration(cfg.start_timeout())));
        }
    };
    guard.0 = None;
    Ok(Connection { service, group, stderr: tail, killed: AtomicBool::new(false), _launch: Some(launch) })
}
