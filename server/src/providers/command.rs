//! The `command` provider (SPEC 6): any program, run in the workspace root (in an untrusted
//! folder, a neutral one: `workspace::launch`) in its own process group. It reads the run as
//! JSON on stdin (and `LIVENOTE_*` variables) and prints the note's new content below its H1,
//! or JSON `{"body": ..., "summary": ...}` (with `"memory"`: changes to the note's memory, see
//! [`apply_memory`]).
//!
//! The whole process group (on Windows: the Job object, `crate::platform::ProcessTree`) is
//! killed on timeout, stop or oversized output, so a shell script's children never outlive the
//! run.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use chrono::SecondsFormat;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

use super::{ProviderError, RunEvent, RunOutput, RunRequest};
use crate::config::{CommandConfig, McpTransport, format_duration};
use crate::platform::ProcessTree;

/// stdout beyond this is an error: no note is that large, and we must not buffer without end.
pub const MAX_STDOUT: usize = 8 * 1024 * 1024;
/// How much of stderr is kept for the error message.
pub const STDERR_TAIL: usize = 4 * 1024;
/// Between SIGTERM and SIGKILL: long enough to clean up, short enough for Stop to feel instant.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// After the program exits, how long a leftover background process may keep the pipes open
/// before we stop waiting for end-of-file.
const PIPE_GRACE: Duration = Duration::from_secs(1);
/// Linux refuses a single environment string over 128 KiB (E2BIG); the full text is on stdin.
const MAX_ENV_VALUE: usize = 64 * 1024;
/// Transcripts keep stderr lines up to these limits; a chatty program must not flood them.
const MAX_STDERR_EVENTS: usize = 1000;
const MAX_EVENT_LINE: usize = 2000;
/// `lastRunError` gets the last few stderr lines, this short.
const TAIL_LINES: usize = 3;
const TAIL_CHARS: usize = 300;

/// The run as the program reads it on stdin.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StdinRun<'a> {
    note_path: &'a str,
    title: Option<&'a str>,
    objective: &'a str,
    trigger: &'static str,
    /// Markdown: what the user asked for a manual run; for an event run, the note's criteria,
    /// the event and its payload as a model reads them.
    context: Option<&'a str>,
    /// The event of an event run as data (`null` for other runs): `id`, `source`, `type`,
    /// `createdAt`, `payload` (whole, JSON as JSON), `targetFilePath`.
    event: Option<&'a super::TriggerEvent>,
    body: &'a str,
    now: String,
    local_now: &'a str,
    time_zone: &'a str,
    run_id: &'a str,
    model: Option<&'a str>,
    /// The MCP servers this run may use, so that a script can use them too.
    mcp_servers: Vec<StdinMcpServer<'a>>,
    /// The standing instructions, as the agent gets them (each cut to its budget).
    instructions: &'a [crate::instructions::Instruction],
    /// `live.maxChars`: the body's budget in characters (`null`: none). Longer output fails the
    /// run.
    max_chars: Option<usize>,
    /// The note's memory, newest first; the program may answer `"memory": {"key": "value" | null}`.
    memory: Vec<&'a crate::memory::Entry>,
    /// The skills the note preloads (`live.skills`), with their guidance.
    skills: &'a [crate::skills::Skill],
}

/// An MCP server as the program reads it: how to reach it (a program to start, or a URL) and
/// which tools the note narrows it to (`null`: all). Its `env` is left out: it may hold tokens.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StdinMcpServer<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    tools: Option<&'a [String]>,
}

/// Run the command once. Returns within about [`TERM_GRACE`] of `cancel` or of the timeout.
pub async fn run_command(
    cfg: &CommandConfig,
    req: &RunRequest,
    cancel: CancellationToken,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<RunOutput, ProviderError> {
    let Some((program, args)) = cfg.command.split_first() else {
        return Err(ProviderError::Config("the command provider has an empty `command`".to_owned()));
    };
    if cancel.is_cancelled() {
        return Err(ProviderError::Stopped);
    }
    // Checked first because a missing working directory also fails with NotFound, which would
    // read as "command not found".
    if !req.workspace_root.is_dir() {
        return Err(ProviderError::Io(format!(
            "workspace folder not found: {}",
            req.workspace_root.display()
        )));
    }
    let stdin_json = serde_json::to_vec(&stdin_run(req))
        .map_err(|e| ProviderError::Io(format!("encoding the run: {e}")))?;

    // Held until the program is done: an untrusted folder's program runs in a folder of its own.
    let launch = crate::workspace::launch::prepare(&req.workspace_root, req.trusted)
        .map_err(|e| ProviderError::Io(format!("cannot make a folder for the program to run in: {e}")))?;
    let mut cmd = Command::new(crate::workspace::program_path(program, &req.workspace_root));
    if let Some(path) = launch.path_env() {
        cmd.env("PATH", path);
    }
    cmd.args(args)
        .current_dir(launch.dir())
        .envs(env_vars(req))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own group, so one signal reaches the program and everything it started; dropped
    // half-way (the run's task aborted), the tree is killed, so no program outlives its run.
    let mut child = match ProcessTree::spawn(cmd) {
        Ok(child) => child,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(ProviderError::CommandNotFound(program.clone()));
        }
        Err(e) => return Err(ProviderError::Spawn { program: program.clone(), reason: e.to_string() }),
    };
    let Some(pid) = child.id() else {
        return Err(ProviderError::Io("the command exited before it could be watched".to_owned()));
    };
    events(&RunEvent::new("started", format!("started {program} (pid {pid})")));

    // A task, so a program that never reads stdin cannot block us once the pipe buffer fills.
    let stdin = child.take_stdin();
    let writer = tokio::spawn(async move {
        let Some(mut stdin) = stdin else { return };
        match stdin.write_all(&stdin_json).await {
            // The program may exit (or close stdin) without reading it all: that is its right.
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {}
            Err(e) => tracing::debug!("writing the run to the command's stdin: {e}"),
            Ok(()) => {}
        }
        // Dropping `stdin` closes the pipe so the program sees end-of-file.
    });

    let result = watch(&mut child, cfg.timeout, &cancel, events).await;
    writer.abort();
    let (status, stdout, stderr_tail) = result?;
    let status_text = describe_status(status);
    events(&RunEvent::new("exited", status_text.clone()));
    if !status.success() {
        return Err(ProviderError::Failed { status: status_text, stderr_tail: tail_summary(&stderr_tail) });
    }
    let changes = memory_changes(&stdout);
    let output = within_budget(req, parse_output(stdout)?)?;
    // Only an answer that is used changes the memory: a refused one changes nothing.
    if let Some(changes) = changes {
        apply_memory(req, changes, events).await;
    }
    Ok(output)
}

/// The output, unless the body it makes (the note's title line on top: the output is what goes
/// below it) passes `live.maxChars`. A program cannot be asked to trim as the agent is, so the
/// run fails and the note keeps its text.
fn within_budget(req: &RunRequest, out: RunOutput) -> Result<RunOutput, ProviderError> {
    use crate::note::{body, budget};
    let size = budget::chars(&body::with_title(req.title.as_deref(), &out.body));
    match budget::output_error(req.max_chars, size) {
        Some(why) => Err(ProviderError::InvalidOutput(why)),
        None => Ok(out),
    }
}

/// The `"memory"` member of a JSON answer, when there is one: `Ok` an object of changes,
/// `Err` what it is instead.
fn memory_changes(stdout: &[u8]) -> Option<Result<serde_json::Map<String, serde_json::Value>, String>> {
    let text = std::str::from_utf8(stdout).ok()?.trim();
    // Plain-text output (most programs) is not parsed twice.
    if !text.starts_with('{') || !text.contains("\"memory\"") {
        return None;
    }
    let serde_json::Value::Object(mut map) = serde_json::from_str::<serde_json::Value>(text).ok()? else {
        return None;
    };
    // Only the JSON answer (`"body"` a string) is read as one; other JSON fails the run
    // (`parse_output`), so its memory is never applied.
    if !map.get("body").is_some_and(serde_json::Value::is_string) {
        return None;
    }
    match map.remove("memory")? {
        serde_json::Value::Object(changes) => Some(Ok(changes)),
        serde_json::Value::Null => None,
        _ => Some(Err("`memory` must be an object of \"key\": \"value\" (or null to delete)".to_owned())),
    }
}

/// A program's memory changes, each checked like the agent's tool calls: what is refused is
/// said in the transcript and the log, the rest is written; the run's body lands either way
/// (a bad memory entry is no reason to lose the note's update).
async fn apply_memory(
    req: &RunRequest,
    changes: Result<serde_json::Map<String, serde_json::Value>, String>,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) {
    let mut warn = |message: String| {
        tracing::warn!("refuse memory {}: {message}", req.note_path);
        events(&RunEvent::new("memory", message));
    };
    let changes = match (changes, &req.memory.unreadable) {
        (Err(e), _) => return warn(format!("not applied: {e}")),
        (Ok(_), Some(why)) => return warn(format!("not applied: {why}")),
        (Ok(c), None) => c,
    };
    let mut memory = req.memory.entries.clone();
    for why in memory.apply_changes(&req.memory_author(), &changes, req.now, &req.memory.quotas) {
        warn(format!("refused: {why}"));
    }
    if memory == req.memory.entries {
        return;
    }
    let store = crate::memory::store::MemoryStore::new(&req.workspace_root);
    let note = req.note_path.clone();
    let saved = tokio::task::spawn_blocking(move || store.save(&note, &memory))
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
    if let Err(e) = saved {
        warn(format!("not saved: {e}"));
    }
}

/// Collect stdout and stderr until the program exits and the pipes close, or stop early on
/// cancel, timeout or oversized output (killing the group).
pub(crate) async fn watch(
    child: &mut ProcessTree,
    timeout: Duration,
    cancel: &CancellationToken,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<(ExitStatus, Vec<u8>, Vec<u8>), ProviderError> {
    let mut stdout = child.take_stdout();
    let mut stderr = child.take_stderr();
    let mut out = Vec::new();
    let mut out_chunk = vec![0u8; 64 * 1024];
    let mut err_chunk = vec![0u8; 8 * 1024];
    let mut err_log = StderrLog::default();
    let mut status: Option<ExitStatus> = None;
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut pipe_deadline: Option<Pin<Box<Sleep>>> = None;

    loop {
        if let Some(s) = status
            && stdout.is_none()
            && stderr.is_none()
        {
            err_log.finish(events);
            // Background leftovers that closed their pipes still belong to this run.
            child.kill();
            return Ok((s, out, err_log.into_tail()));
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                events(&RunEvent::new("killed", "stopped: ending the process group"));
                stop_group(child).await;
                return Err(ProviderError::Stopped);
            }
            () = &mut deadline => {
                let message = format!("timed out after {}: ending the process group", format_duration(timeout));
                events(&RunEvent::new("killed", message));
                stop_group(child).await;
                return Err(ProviderError::TimedOut(timeout));
            }
            r = read_opt(&mut stdout, &mut out_chunk) => match r {
                Ok(0) => stdout = None,
                Ok(n) => {
                    if out.len() + n > MAX_STDOUT {
                        events(&RunEvent::new("killed", "output too large: ending the process group"));
                        stop_group(child).await;
                        return Err(ProviderError::OutputTooLarge { limit: MAX_STDOUT });
                    }
                    out.extend_from_slice(&out_chunk[..n]);
                }
                Err(e) => {
                    stop_group(child).await;
                    return Err(ProviderError::Io(format!("reading the command's output: {e}")));
                }
            },
            r = read_opt(&mut stderr, &mut err_chunk) => match r {
                Ok(0) => stderr = None,
                Ok(n) => err_log.push(&err_chunk[..n], events),
                // Stderr is only diagnostics: losing it must not fail the run.
                Err(_) => stderr = None,
            },
            // After the reads: on a loaded machine the program's last output may still be
            // waiting in the pipe when the grace runs out, and it must be read, not dropped
            // ("the command printed nothing" from a program that printed).
            () = sleep_opt(&mut pipe_deadline) => {
                // The program is gone but something it started holds the pipes open: take the
                // output so far and end the leftovers.
                events(&RunEvent::new("killed", "output still open after exit: ending the process group"));
                stdout = None;
                stderr = None;
            }
            r = child.wait(), if status.is_none() => match r {
                Ok(s) => {
                    status = Some(s);
                    pipe_deadline = Some(Box::pin(tokio::time::sleep(PIPE_GRACE)));
                }
                Err(e) => {
                    stop_group(child).await;
                    return Err(ProviderError::Io(format!("waiting for the command: {e}")));
                }
            },
        }
    }
}

async fn read_opt<R: AsyncRead + Unpin>(r: &mut Option<R>, buf: &mut [u8]) -> std::io::Result<usize> {
    match r {
        Some(r) => r.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn sleep_opt(s: &mut Option<Pin<Box<Sleep>>>) {
    match s {
        Some(s) => s.as_mut().await,
        None => std::future::pending().await,
    }
}

/// SIGTERM to the group, SIGKILL after [`TERM_GRACE`], then reap the program.
async fn stop_group(child: &mut ProcessTree) {
    child.terminate();
    let exited = tokio::time::timeout(TERM_GRACE, child.wait()).await.is_ok();
    // Even when the program itself exited on SIGTERM, its children may ignore it.
    child.kill();
    if !exited {
        // SIGKILL cannot be ignored, but a process stuck in the kernel may take a moment; the
        // runtime reaps it later if this gives up.
        let _ = tokio::time::timeout(TERM_GRACE, child.wait()).await;
    }
}

/// Stderr: forwarded line by line as events, and the last [`STDERR_TAIL`] bytes kept.
#[derive(Default)]
struct StderrLog {
    tail: Vec<u8>,
    line: Vec<u8>,
    line_too_long: bool,
    sent: usize,
}

impl StderrLog {
    fn push(&mut self, bytes: &[u8], events: &mut (dyn FnMut(&RunEvent) + Send)) {
        self.tail.extend_from_slice(bytes);
        // Trim in batches rather than on every read.
        if self.tail.len() > 2 * STDERR_TAIL {
            self.tail.drain(..self.tail.len() - STDERR_TAIL);
        }
        for &b in bytes {
            if b == b'\n' {
                self.emit_line(events);
            } else if self.line.len() < MAX_EVENT_LINE {
                self.line.push(b);
            } else {
                self.line_too_long = true;
            }
        }
    }

    fn emit_line(&mut self, events: &mut (dyn FnMut(&RunEvent) + Send)) {
        let mut text = clean_line(&String::from_utf8_lossy(&self.line));
        if self.line_too_long {
            text.push('…');
        }
        self.line.clear();
        self.line_too_long = false;
        if self.sent < MAX_STDERR_EVENTS {
            events(&RunEvent::new("stderr", text));
        } else if self.sent == MAX_STDERR_EVENTS {
            events(&RunEvent::new("stderr", "(further stderr lines not recorded)"));
        }
        self.sent += 1;
    }

    fn finish(&mut self, events: &mut (dyn FnMut(&RunEvent) + Send)) {
        if !self.line.is_empty() {
            self.emit_line(events);
        }
    }

    fn into_tail(mut self) -> Vec<u8> {
        if self.tail.len() > STDERR_TAIL {
            self.tail.drain(..self.tail.len() - STDERR_TAIL);
        }
        self.tail
    }
}

/// The last few non-empty stderr lines on one line, at most [`TAIL_CHARS`] characters
/// (keeping the end, where the error usually is).
pub(crate) fn tail_summary(tail: &[u8]) -> String {
    let text = String::from_utf8_lossy(tail);
    let lines: Vec<String> = text.lines().map(clean_line).filter(|l| !l.is_empty()).collect();
    let joined = lines[lines.len().saturating_sub(TAIL_LINES)..].join(" | ");
    let count = joined.chars().count();
    if count <= TAIL_CHARS {
        return joined;
    }
    let kept: String = joined.chars().skip(count - (TAIL_CHARS - 1)).collect();
    format!("…{kept}")
}

/// Drop terminal escape sequences (CLI tools colour their errors) and control characters, and
/// collapse whitespace: the text ends up in YAML frontmatter and editor UI.
fn clean_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters... final byte in @..~; other escapes: ESC + one char.
            if chars.next_if_eq(&'[').is_some() {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            } else {
                chars.next();
            }
        } else if c.is_whitespace() {
            out.push(' ');
        } else if !c.is_control() {
            out.push(c);
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    crate::platform::killed_by(&status).unwrap_or_else(|| "exited abnormally".to_owned())
}

/// stdout → the new content: plain text, or, when it starts with `{` (after blank space), the
/// JSON `{"body": "...", "summary": "..."}`. Output that starts like JSON is held to it: a
/// program that meant to print JSON and got it wrong (`{"body": "x",}`) fails the run with the
/// parser's line:col instead of writing its raw JSON into the note. Public for the
/// `command_output` fuzz target only.
#[doc(hidden)]
pub fn parse_output(stdout: Vec<u8>) -> Result<RunOutput, ProviderError> {
    let text = String::from_utf8(stdout).map_err(|e| {
        ProviderError::InvalidOutput(format!(
            "output is not valid UTF-8 (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        return parse_json_output(&text);
    }
    // Nothing at all is a broken program (a wrapper whose tool failed but exited 0), not a
    // request to empty the note; `{"body": ""}` says that explicitly.
    if trimmed.is_empty() {
        return Err(ProviderError::InvalidOutput(
            "the command printed nothing; the note was left unchanged".to_owned(),
        ));
    }
    Ok(RunOutput { body: text, summary: None, body_is_below_h1: true })
}

/// The JSON form of a command's output: an object with a string `body` and an optional string
/// (or null) `summary`. Positions are the output's own lines and columns, as an editor shows
/// the program's output.
fn parse_json_output(text: &str) -> Result<RunOutput, ProviderError> {
    use serde_json::Value;
    let invalid = |what: String| {
        ProviderError::InvalidOutput(format!(
            "output starts with `{{` but {what}; print plain text or {{\"body\": \"...\", \"summary\": \"...\"}}"
        ))
    };
    let map = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return Err(invalid("is not a JSON object".to_owned())),
        Err(e) => {
            let (line, column) = (e.line(), e.column());
            let message = e.to_string();
            let reason =
                message.strip_suffix(&format!(" at line {line} column {column}")).unwrap_or(&message);
            return Err(invalid(format!("is not valid JSON: {reason} at {line}:{column}")));
        }
    };
    let Some(Value::String(body)) = map.get("body") else {
        return Err(invalid("has no string `body`".to_owned()));
    };
    let summary = match map.get("summary") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.trim()).filter(|s| !s.is_empty()).map(str::to_owned),
        Some(_) => return Err(invalid("its `summary` is not a string".to_owned())),
    };
    Ok(RunOutput { body: body.clone(), summary, body_is_below_h1: true })
}

fn stdin_run(req: &RunRequest) -> StdinRun<'_> {
    StdinRun {
        note_path: &req.note_path,
        title: req.title.as_deref(),
        objective: &req.objective,
        trigger: req.trigger.as_str(),
        context: req.context.as_deref(),
        event: req.event.as_ref(),
        body: &req.body,
        now: req.now.to_rfc3339_opts(SecondsFormat::Secs, true),
        local_now: &req.local_now,
        time_zone: &req.time_zone,
        run_id: &req.run_id,
        model: req.model.as_deref(),
        mcp_servers: req
            .mcp_servers
            .iter()
            .map(|s| {
                let (command, url) = match &s.config.transport {
                    McpTransport::Stdio { command } => (Some(command.as_slice()), None),
                    McpTransport::Http { url, .. } => (None, Some(url.as_str())),
                };
                StdinMcpServer { name: &s.name, command, url, tools: s.tools.as_deref() }
            })
            .collect(),
        instructions: &req.instructions,
        max_chars: req.max_chars,
        memory: req.memory.entries.newest_first(),
        skills: &req.skills,
    }
}

/// The `LIVENOTE_*` variables. Always all set (empty when absent) so `set -u` scripts work.
fn env_vars(req: &RunRequest) -> Vec<(&'static str, OsString)> {
    let text = |s: &str| OsString::from(env_value(s));
    vec![
        ("LIVENOTE_NOTE_PATH", text(&req.note_path)),
        ("LIVENOTE_TITLE", text(req.title.as_deref().unwrap_or(""))),
        ("LIVENOTE_OBJECTIVE", text(&req.objective)),
        ("LIVENOTE_TRIGGER", text(req.trigger.as_str())),
        ("LIVENOTE_CONTEXT", text(req.context.as_deref().unwrap_or(""))),
        ("LIVENOTE_RUN_ID", text(&req.run_id)),
        ("LIVENOTE_NOW", text(&req.now.to_rfc3339_opts(SecondsFormat::Secs, true))),
        ("LIVENOTE_LOCAL_NOW", text(&req.local_now)),
        ("LIVENOTE_TIME_ZONE", text(&req.time_zone)),
        ("LIVENOTE_MODEL", text(req.model.as_deref().unwrap_or(""))),
        ("LIVENOTE_WORKSPACE", req.workspace_root.clone().into_os_string()),
    ]
}

/// An environment value: no NUL (spawn would fail), at most [`MAX_ENV_VALUE`] bytes.
fn env_value(s: &str) -> String {
    let mut v = s.replace('\0', "");
    if v.len() > MAX_ENV_VALUE {
        let mut cut = MAX_ENV_VALUE;
        while !v.is_char_boundary(cut) {
            cut -= 1;
        }
        v.truncate(cut);
    }
    v
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
