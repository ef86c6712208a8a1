//! The `command` provider (SPEC 6): any program, run in the workspace root in its own process
//! group. It reads the run as JSON on stdin (and `LIVENOTE_*` variables) and prints the note's
//! new content below its H1, or JSON `{"body": ..., "summary": ...}`.
//!
//! The whole process group is killed on timeout, stop or oversized output, so a shell script's
//! children never outlive the run.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use chrono::SecondsFormat;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

use super::{ProviderError, RunEvent, RunOutput, RunRequest};
use crate::config::{CommandConfig, format_duration};

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
    context: Option<&'a str>,
    body: &'a str,
    now: String,
    local_now: &'a str,
    time_zone: &'a str,
    run_id: &'a str,
    model: Option<&'a str>,
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

    let mut cmd = Command::new(program_path(program, &req.workspace_root));
    cmd.args(args)
        .current_dir(&req.workspace_root)
        .envs(env_vars(req))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so one signal reaches the program and everything it started.
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(ProviderError::CommandNotFound(program.clone()));
        }
        Err(e) => return Err(ProviderError::Spawn { program: program.clone(), reason: e.to_string() }),
    };
    let Some(pgid) = child.id().and_then(|id| i32::try_from(id).ok()).map(Pid::from_raw) else {
        return Err(ProviderError::Io("the command exited before it could be watched".to_owned()));
    };
    let mut guard = GroupGuard { pgid, armed: true };
    events(&RunEvent::new("started", format!("started {program} (pid {pgid})")));

    // A task, so a program that never reads stdin cannot block us once the pipe buffer fills.
    let stdin = child.stdin.take();
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

    let result = watch(&mut child, pgid, cfg.timeout, &cancel, events).await;
    writer.abort();
    guard.armed = false;
    let (status, stdout, stderr_tail) = result?;
    let status_text = describe_status(status);
    events(&RunEvent::new("exited", status_text.clone()));
    if !status.success() {
        return Err(ProviderError::Failed { status: status_text, stderr_tail: tail_summary(&stderr_tail) });
    }
    parse_output(stdout)
}

/// Collect stdout and stderr until the program exits and the pipes close, or stop early on
/// cancel, timeout or oversized output (killing the group).
async fn watch(
    child: &mut Child,
    pgid: Pid,
    timeout: Duration,
    cancel: &CancellationToken,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<(ExitStatus, Vec<u8>, Vec<u8>), ProviderError> {
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
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
            kill_group(pgid, Signal::SIGKILL);
            return Ok((s, out, err_log.into_tail()));
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                events(&RunEvent::new("killed", "stopped: ending the process group"));
                stop_group(child, pgid).await;
                return Err(ProviderError::Stopped);
            }
            () = &mut deadline => {
                let message = format!("timed out after {}: ending the process group", format_duration(timeout));
                events(&RunEvent::new("killed", message));
                stop_group(child, pgid).await;
                return Err(ProviderError::TimedOut(timeout));
            }
            () = sleep_opt(&mut pipe_deadline) => {
                // The program is gone but something it started holds the pipes open: take the
                // output so far and end the leftovers.
                events(&RunEvent::new("killed", "output still open after exit: ending the process group"));
                stdout = None;
                stderr = None;
            }
            r = read_opt(&mut stdout, &mut out_chunk) => match r {
                Ok(0) => stdout = None,
                Ok(n) => {
                    if out.len() + n > MAX_STDOUT {
                        events(&RunEvent::new("killed", "output too large: ending the process group"));
                        stop_group(child, pgid).await;
                        return Err(ProviderError::OutputTooLarge { limit: MAX_STDOUT });
                    }
                    out.extend_from_slice(&out_chunk[..n]);
                }
                Err(e) => {
                    stop_group(child, pgid).await;
                    return Err(ProviderError::Io(format!("reading the command's output: {e}")));
                }
            },
            r = read_opt(&mut stderr, &mut err_chunk) => match r {
                Ok(0) => stderr = None,
                Ok(n) => err_log.push(&err_chunk[..n], events),
                // Stderr is only diagnostics: losing it must not fail the run.
                Err(_) => stderr = None,
            },
            r = child.wait(), if status.is_none() => match r {
                Ok(s) => {
                    status = Some(s);
                    pipe_deadline = Some(Box::pin(tokio::time::sleep(PIPE_GRACE)));
                }
                Err(e) => {
                    stop_group(child, pgid).await;
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
async fn stop_group(child: &mut Child, pgid: Pid) {
    kill_group(pgid, Signal::SIGTERM);
    let exited = tokio::time::timeout(TERM_GRACE, child.wait()).await.is_ok();
    // Even when the program itself exited on SIGTERM, its children may ignore it.
    kill_group(pgid, Signal::SIGKILL);
    if !exited {
        // SIGKILL cannot be ignored, but a process stuck in the kernel may take a moment; the
        // runtime reaps it later if this gives up.
        let _ = tokio::time::timeout(TERM_GRACE, child.wait()).await;
    }
}

fn kill_group(pgid: Pid, signal: Signal) {
    // ESRCH (nobody left in the group) is the usual, happy case.
    if let Err(e) = killpg(pgid, signal)
        && e != nix::errno::Errno::ESRCH
    {
        tracing::debug!("killpg {pgid} {signal}: {e}");
    }
}

/// Kills the group if the run is dropped half-way (e.g. its task is aborted), so no program
/// outlives the run that started it.
struct GroupGuard {
    pgid: Pid,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_group(self.pgid, Signal::SIGKILL);
        }
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
fn tail_summary(tail: &[u8]) -> String {
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

fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    match status.signal() {
        Some(sig) => match Signal::try_from(sig) {
            Ok(name) => format!("killed by signal {sig} ({name})"),
            Err(_) => format!("killed by signal {sig}"),
        },
        None => "exited abnormally".to_owned(),
    }
}

/// stdout → the new content: JSON `{"body": "...", "summary": "..."}` when it clearly is that,
/// plain text otherwise. Public for the `command_output` fuzz target only.
#[doc(hidden)]
pub fn parse_output(stdout: Vec<u8>) -> Result<RunOutput, ProviderError> {
    let text = String::from_utf8(stdout).map_err(|e| {
        ProviderError::InvalidOutput(format!(
            "output is not valid UTF-8 (at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let trimmed = text.trim();
    if trimmed.starts_with('{')
        && let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(trimmed)
        && let Some(serde_json::Value::String(body)) = map.get("body")
    {
        let summary = map
            .get("summary")
            .and_then(serde_json::Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        return Ok(RunOutput { body: body.clone(), summary, body_is_below_h1: true });
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

fn stdin_run(req: &RunRequest) -> StdinRun<'_> {
    StdinRun {
        note_path: &req.note_path,
        title: req.title.as_deref(),
        objective: &req.objective,
        trigger: req.trigger.as_str(),
        context: req.context.as_deref(),
        body: &req.body,
        now: req.now.to_rfc3339_opts(SecondsFormat::Secs, true),
        local_now: &req.local_now,
        time_zone: &req.time_zone,
        run_id: &req.run_id,
        model: req.model.as_deref(),
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

/// A relative path with a slash (`./scripts/agent.sh`) means the workspace's file, whatever
/// the platform's spawn does with relative paths; a bare name is looked up in PATH.
fn program_path(program: &str, root: &Path) -> PathBuf {
    let p = Path::new(program);
    if p.is_relative() && program.contains('/') { root.join(p) } else { p.to_path_buf() }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::providers::TriggerKind;

    fn request(root: &Path) -> RunRequest {
        RunRequest {
            note_path: "notes/weather.md".to_owned(),
            title: Some("Weather".to_owned()),
            objective: "Keep the forecast for Paris current.".to_owned(),
            trigger: TriggerKind::Manual,
            context: Some("look at tomorrow".to_owned()),
            body: "# Weather\n\nSunny.\n".to_owned(),
            now: Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).single().unwrap_or_default(),
            local_now: "2025-03-04T06:06:07+01:00".to_owned(),
            time_zone: "Europe/Paris".to_owned(),
            workspace_root: root.to_path_buf(),
            run_id: "01JTESTRUN".to_owned(),
            model: None,
        }
    }

    fn sh(script: &str, timeout: Duration) -> CommandConfig {
        CommandConfig { command: vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()], timeout }
    }

    fn tempdir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
    }

    /// Run with a fresh token; returns the result and the events seen.
    async fn run(cfg: &CommandConfig, req: &RunRequest) -> (Result<RunOutput, ProviderError>, Vec<RunEvent>) {
        let mut seen = Vec::new();
        let result =
            run_command(cfg, req, CancellationToken::new(), &mut |e: &RunEvent| seen.push(e.clone())).await;
        (result, seen)
    }

    fn ok(result: Result<RunOutput, ProviderError>) -> RunOutput {
        result.unwrap_or_else(|e| panic!("run failed: {e}"))
    }

    /// Gone, or a zombie nobody reaped yet (containers often lack a reaping init): either way
    /// it no longer runs.
    fn is_gone(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => {
                stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
            }
        }
    }

    async fn wait_gone(pid: i32) -> bool {
        for _ in 0..50 {
            if is_gone(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    /// The pid a script wrote to `file`, once it exists.
    async fn read_pid(file: &Path) -> i32 {
        for _ in 0..250 {
            if let Ok(text) = std::fs::read_to_string(file)
                && let Ok(pid) = text.trim().parse()
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("no pid in {}", file.display());
    }

    #[tokio::test]
    async fn plain_output_is_the_new_body() {
        let dir = tempdir();
        let (result, events) =
            run(&sh("printf '## Today\\n\\nSunny.\\n'", Duration::from_secs(10)), &request(dir.path())).await;
        assert_eq!(
            ok(result),
            RunOutput { body: "## Today\n\nSunny.\n".to_owned(), summary: None, body_is_below_h1: true }
        );
        let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["started", "exited"]);
        assert!(events[0].message.starts_with("started sh (pid "), "{:?}", events[0]);
        assert_eq!(events[1].message, "exited with status 0");
    }

    #[tokio::test]
    async fn json_output_gives_body_and_summary() {
        let dir = tempdir();
        let script = r#"printf '  {"body": "Rain at 4pm.\\n", "summary": " Rain later. "}\n'"#;
        let (result, _) = run(&sh(script, Duration::from_secs(10)), &request(dir.path())).await;
        let out = ok(result);
        assert_eq!(out.body, "Rain at 4pm.\n");
        assert_eq!(out.summary.as_deref(), Some("Rain later."));

        // Looks like JSON but has no string `body`: it is plain text.
        for text in [r#"{"text": "x"}"#, r#"{"body": 3}"#, "{not json"] {
            let (result, _) =
                run(&sh(&format!("printf '%s' '{text}'"), Duration::from_secs(10)), &request(dir.path()))
                    .await;
            assert_eq!(ok(result).body, text);
        }
    }

    #[tokio::test]
    async fn failure_carries_status_and_stderr_tail() {
        let dir = tempdir();
        let script =
            "echo one >&2; echo two >&2; printf '\\033[31mthree\\033[0m\\n\\n' >&2; echo four >&2; exit 3";
        let (result, events) = run(&sh(script, Duration::from_secs(10)), &request(dir.path())).await;
        let err = result.err().unwrap_or_else(|| panic!("should fail"));
        assert_eq!(err.to_string(), "exited with status 3: two | three | four");
        let stderr: Vec<&str> =
            events.iter().filter(|e| e.kind == "stderr").map(|e| e.message.as_str()).collect();
        assert_eq!(stderr, ["one", "two", "three", "", "four"]);

        let (result, _) = run(&sh("exit 1", Duration::from_secs(10)), &request(dir.path())).await;
        assert_eq!(result.map_err(|e| e.to_string()), Err("exited with status 1".to_owned()));

        let (result, _) = run(&sh("kill -9 $$", Duration::from_secs(10)), &request(dir.path())).await;
        assert_eq!(result.map_err(|e| e.to_string()), Err("killed by signal 9 (SIGKILL)".to_owned()));
    }

    #[tokio::test]
    async fn long_stderr_is_trimmed_to_one_short_line() {
        let dir = tempdir();
        let script = "i=0; while [ $i -lt 2000 ]; do echo \"line $i $(printf '%0100d' 0)\" >&2; i=$((i+1)); done; exit 2";
        let (result, events) = run(&sh(script, Duration::from_secs(30)), &request(dir.path())).await;
        let msg = result.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.starts_with("exited with status 2: …"), "{msg}");
        assert!(msg.ends_with(&format!("line 1999 {}", "0".repeat(100))), "{msg}");
        assert!(msg.chars().count() <= "exited with status 2: ".len() + TAIL_CHARS, "{msg}");
        let stderr = events.iter().filter(|e| e.kind == "stderr").count();
        assert_eq!(stderr, MAX_STDERR_EVENTS + 1, "capped, with one 'not recorded' line");
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = tempdir();
        let pid_file = dir.path().join("child.pid");
        let script = "sleep 30 & echo $! > child.pid; wait";
        let start = Instant::now();
        let (result, events) = run(&sh(script, Duration::from_millis(300)), &request(dir.path())).await;
        assert_eq!(result.map_err(|e| e.to_string()), Err("timed out after 300ms".to_owned()));
        assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
        assert!(events.iter().any(|e| e.kind == "killed"));
        let grandchild = read_pid(&pid_file).await;
        assert!(wait_gone(grandchild).await, "the background sleep {grandchild} survived");
    }

    #[tokio::test]
    async fn stop_ends_the_command_within_a_second() {
        // The second script ignores SIGTERM (and so does its child): only SIGKILL ends it.
        for script in
            ["sleep 30 & echo $! > child.pid; wait", "trap '' TERM; sleep 30 & echo $! > child.pid; wait"]
        {
            let dir = tempdir();
            let pid_file = dir.path().join("child.pid");
            let cfg = sh(script, Duration::from_secs(60));
            let req = request(dir.path());
            let cancel = CancellationToken::new();
            let token = cancel.clone();
            let task = tokio::spawn(async move {
                let mut sink = |_: &RunEvent| {};
                run_command(&cfg, &req, token, &mut sink).await
            });
            let grandchild = read_pid(&pid_file).await;
            assert!(!is_gone(grandchild));
            let stopped_at = Instant::now();
            cancel.cancel();
            let result = task.await.unwrap_or_else(|e| panic!("join: {e}"));
            let took = stopped_at.elapsed();
            assert_eq!(result, Err(ProviderError::Stopped));
            assert_eq!(ProviderError::Stopped.to_string(), "stopped");
            assert!(took < Duration::from_secs(1), "{script}: took {took:?}");
            assert!(wait_gone(grandchild).await, "{script}: the child sleep {grandchild} survived");
        }
    }

    #[tokio::test]
    async fn a_stopped_token_runs_nothing() {
        let dir = tempdir();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let cfg = sh("touch ran", Duration::from_secs(10));
        let result = run_command(&cfg, &request(dir.path()), cancel, &mut |_: &RunEvent| {}).await;
        assert_eq!(result, Err(ProviderError::Stopped));
        assert!(!dir.path().join("ran").exists());
    }

    #[tokio::test]
    async fn environment_and_working_directory() {
        let dir = tempdir();
        let script = r#"printf '%s|' "$LIVENOTE_NOTE_PATH" "$LIVENOTE_OBJECTIVE" "$LIVENOTE_TRIGGER" "$LIVENOTE_CONTEXT" "$LIVENOTE_RUN_ID" "$LIVENOTE_NOW" "$LIVENOTE_WORKSPACE" "$LIVENOTE_TITLE" "$LIVENOTE_MODEL"; pwd -P"#;
        let (result, _) = run(&sh(script, Duration::from_secs(10)), &request(dir.path())).await;
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let expected = format!(
            "notes/weather.md|Keep the forecast for Paris current.|manual|look at tomorrow|01JTESTRUN|2025-03-04T05:06:07Z|{}|Weather||{}\n",
            dir.path().display(),
            root.display()
        );
        assert_eq!(ok(result).body, expected);
    }

    #[tokio::test]
    async fn stdin_carries_the_run_as_json() {
        let dir = tempdir();
        let mut req = request(dir.path());
        req.trigger = TriggerKind::Event;
        req.model = Some("m1".to_owned());
        req.title = None;
        // A prefix so the echo is not itself mistaken for JSON output.
        let (result, _) = run(&sh("printf 'got:'; cat", Duration::from_secs(10)), &req).await;
        let body = ok(result).body;
        let json = body.strip_prefix("got:").unwrap_or_else(|| panic!("{body}"));
        let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
        assert_eq!(
            v,
            serde_json::json!({
                "notePath": "notes/weather.md",
                "title": null,
                "objective": "Keep the forecast for Paris current.",
                "trigger": "event",
                "context": "look at tomorrow",
                "body": "# Weather\n\nSunny.\n",
                "now": "2025-03-04T05:06:07Z",
                "localNow": "2025-03-04T06:06:07+01:00",
                "timeZone": "Europe/Paris",
                "runId": "01JTESTRUN",
                "model": "m1",
            })
        );
    }

    #[tokio::test]
    async fn a_program_that_ignores_stdin_does_not_block() {
        let dir = tempdir();
        let mut req = request(dir.path());
        req.body = "x".repeat(4 * 1024 * 1024);
        let (result, _) = run(&sh("echo done", Duration::from_secs(10)), &req).await;
        assert_eq!(ok(result).body, "done\n");
    }

    #[tokio::test]
    async fn huge_output_is_an_error_and_ends_the_program() {
        let dir = tempdir();
        let start = Instant::now();
        let (result, _) =
            run(&sh("yes 'all work and no play'", Duration::from_secs(30)), &request(dir.path())).await;
        assert_eq!(result.map_err(|e| e.to_string()), Err("output larger than 8 MiB".to_owned()));
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());

        // Just under the cap is fine.
        let script = format!("head -c {MAX_STDOUT} /dev/zero | tr '\\0' a");
        let (result, _) = run(&sh(&script, Duration::from_secs(30)), &request(dir.path())).await;
        assert_eq!(ok(result).body.len(), MAX_STDOUT);
    }

    #[tokio::test]
    async fn leftover_background_processes_do_not_hold_the_run() {
        let dir = tempdir();
        let pid_file = dir.path().join("child.pid");
        let start = Instant::now();
        let (result, _) = run(
            &sh("echo hi; sleep 30 & echo $! > child.pid", Duration::from_secs(30)),
            &request(dir.path()),
        )
        .await;
        assert_eq!(ok(result).body, "hi\n");
        assert!(start.elapsed() < PIPE_GRACE + Duration::from_secs(2), "{:?}", start.elapsed());
        let leftover = read_pid(&pid_file).await;
        assert!(wait_gone(leftover).await, "the background sleep {leftover} survived");
    }

    #[tokio::test]
    async fn missing_programs_and_bad_setups_are_clear() {
        let dir = tempdir();
        let req = request(dir.path());
        let cfg = CommandConfig {
            command: vec!["livenote-no-such-program".to_owned()],
            timeout: Duration::from_secs(5),
        };
        let (result, _) = run(&cfg, &req).await;
        assert_eq!(
            result.map_err(|e| e.to_string()),
            Err("command not found: livenote-no-such-program".to_owned())
        );

        let cfg = CommandConfig { command: vec!["./missing.sh".to_owned()], timeout: Duration::from_secs(5) };
        let (result, _) = run(&cfg, &req).await;
        assert_eq!(result.map_err(|e| e.to_string()), Err("command not found: ./missing.sh".to_owned()));

        let cfg = CommandConfig { command: vec![], timeout: Duration::from_secs(5) };
        let (result, _) = run(&cfg, &req).await;
        assert!(matches!(result, Err(ProviderError::Config(_))));

        let not_dir = request(&dir.path().join("nope"));
        let (result, _) = run(&sh("true", Duration::from_secs(5)), &not_dir).await;
        assert!(result.is_err_and(|e| e.to_string().starts_with("workspace folder not found: ")));
    }

    #[tokio::test]
    async fn relative_programs_are_the_workspaces_files() {
        let dir = tempdir();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap_or_else(|e| panic!("{e}"));
        let script = dir.path().join("bin/agent.sh");
        std::fs::write(&script, "#!/bin/sh\necho from-script\n").unwrap_or_else(|e| panic!("{e}"));
        let cfg = CommandConfig {
            command: vec!["sh".to_owned(), "bin/agent.sh".to_owned()],
            timeout: Duration::from_secs(5),
        };
        let (result, _) = run(&cfg, &request(dir.path())).await;
        assert_eq!(ok(result).body, "from-script\n");

        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("{e}"));
        let cfg =
            CommandConfig { command: vec!["./bin/agent.sh".to_owned()], timeout: Duration::from_secs(5) };
        let (result, _) = run(&cfg, &request(dir.path())).await;
        assert_eq!(ok(result).body, "from-script\n");
    }

    #[tokio::test]
    async fn invalid_utf8_output_is_refused() {
        let dir = tempdir();
        let (result, _) = run(&sh("printf 'ok\\377'", Duration::from_secs(5)), &request(dir.path())).await;
        assert_eq!(
            result.map_err(|e| e.to_string()),
            Err("output is not valid UTF-8 (at byte 2)".to_owned())
        );
    }

    #[test]
    fn env_values_never_break_spawn() {
        assert_eq!(env_value("a\0b"), "ab");
        let long = "é".repeat(MAX_ENV_VALUE);
        let v = env_value(&long);
        assert!(v.len() <= MAX_ENV_VALUE && v.len() > MAX_ENV_VALUE - 2);
    }

    #[test]
    fn stderr_lines_are_cleaned() {
        assert_eq!(clean_line("\u{1b}[1;31merror:\u{1b}[0m  bad\tthing\r"), "error: bad thing");
        assert_eq!(tail_summary(b"a\n\n  b  \nc\nd\n"), "b | c | d");
        assert_eq!(tail_summary(b""), "");
    }
}
