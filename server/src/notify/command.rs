//! `[notify] command`: a program told of each run as one JSON object on stdin. It is a program
//! from the configuration, so it follows the trust rules of a `command` provider (SPEC 7): the
//! user's own runs; a folder's, or one the editor's settings name, only while the folder is
//! trusted. It runs as providers' programs do (`workspace::launch`, its own process group, the
//! provider's runner: bounded output and time, the group killed), one at a time, and its
//! failure is logged, never said to the run.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::rule::{Entry, trigger_name};
use crate::config::{NotifyConfig, Origin};
use crate::platform::ProcessTree;
use crate::providers::command::{describe_status, tail_summary, watch};
use crate::run_types::RunEvent;

/// How long the program may take before its process group is killed.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The program to run for a note of the folder `root`, with what it may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    pub command: Vec<String>,
    pub root: PathBuf,
    pub trusted: bool,
}

/// The hook `config` names for the folder `root`, if it may run: `Err` says why not.
pub fn hook(config: &NotifyConfig, root: &Path, trusted: bool) -> Result<Option<Hook>, String> {
    let Some(c) = &config.command else { return Ok(None) };
    match c.origin {
        Origin::User => {}
        _ if trusted => {}
        Origin::Workspace => {
            return Err(
                "it comes from this folder's .livenote.toml, which is not trusted as it is now".to_owned()
            );
        }
        Origin::Client => {
            return Err("it is named by the editor's settings and this folder is not trusted".to_owned());
        }
    }
    Ok(Some(Hook { command: c.command.clone(), root: root.to_path_buf(), trusted }))
}

/// The object the program reads: the contract of docs/configuration.md.
pub fn stdin_json(e: &Entry) -> serde_json::Value {
    json!({
        "note": e.path,
        "title": e.title,
        "trigger": trigger_name(e.trigger),
        "outcome": e.outcome,
        "summary": e.summary,
        "added": e.added,
        "removed": e.removed,
        "runId": e.run_id,
    })
}

/// Run the hook once for `entry`. `Err` is one line for the log.
pub async fn run(hook: &Hook, entry: &Entry, cancel: &CancellationToken) -> Result<(), String> {
    let Some((program, args)) = hook.command.split_first() else {
        return Err("`[notify] command` is empty".to_owned());
    };
    let input =
        serde_json::to_vec(&stdin_json(entry)).map_err(|e| format!("encoding the notification: {e}"))?;
    let launch = crate::workspace::launch::prepare(&hook.root, hook.trusted)
        .map_err(|e| format!("cannot make a folder for the program to run in: {e}"))?;
    let mut cmd = Command::new(crate::workspace::program_path(program, &hook.root));
    if let Some(path) = launch.path_env() {
        cmd.env("PATH", path);
    }
    cmd.args(args)
        .current_dir(launch.dir())
        .env("LIVENOTE_WORKSPACE", &hook.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match ProcessTree::spawn(cmd) {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("command not found: {program}"));
        }
        Err(e) => return Err(format!("cannot start {program}: {e}")),
    };
    // A task, so a program that never reads its stdin cannot hold us once the pipe is full.
    let stdin = child.take_stdin();
    let writer = tokio::spawn(async move {
        let Some(mut stdin) = stdin else { return };
        if let Err(e) = stdin.write_all(&input).await
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            tracing::debug!("writing the notification to the command's stdin: {e}");
        }
    });
    let mut log = |e: &RunEvent| tracing::debug!("notify command: {}", e.message);
    let result = watch(&mut child, TIMEOUT, cancel, &mut log).await;
    writer.abort();
    let (status, _stdout, stderr) = result.map_err(|e| e.to_string())?;
    if !status.success() {
        let tail = tail_summary(&stderr);
        let status = describe_status(status);
        return Err(if tail.is_empty() { status } else { format!("{status}: {tail}") });
    }
    Ok(())
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
