//! `kind = "command"`: a program that prints events as JSON lines, one per line:
//! `{"id": "...", "type": "...", "payload": ...}` (`type` optional, `version` optional: by
//! default the payload's digest, so an item printed again unchanged is not new). It runs as
//! the `command` provider's programs do (`workspace::launch`, its own process group, the
//! provider's runner: bounded output, timeout, the group killed).

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::Item;
use crate::config::CommandConfig;
use crate::platform::ProcessTree;
use crate::providers::command::{describe_status, tail_summary, watch};
use crate::run_types::RunEvent;

/// How much of a bad line an error quotes.
const QUOTE_CHARS: usize = 80;

/// What the program knows of the poll, beside the workspace.
pub struct CommandPoll<'a> {
    pub root: &'a Path,
    pub name: &'a str,
    pub trusted: bool,
    /// The last successful poll (RFC 3339), for programs that ask "what is new since".
    pub last_success: Option<String>,
}

/// Run the program once and read its events. `Err` is one line for `livenote sources`.
pub async fn poll(
    cfg: &CommandConfig,
    p: &CommandPoll<'_>,
    cancel: CancellationToken,
) -> Result<Vec<Item>, String> {
    let Some((program, args)) = cfg.command.split_first() else {
        return Err("the source has an empty `command`".to_owned());
    };
    let launch = crate::workspace::launch::prepare(p.root, p.trusted)
        .map_err(|e| format!("cannot make a folder for the program to run in: {e}"))?;
    let mut cmd = Command::new(crate::workspace::program_path(program, p.root));
    if let Some(path) = launch.path_env() {
        cmd.env("PATH", path);
    }
    cmd.args(args)
        .current_dir(launch.dir())
        .env("LIVENOTE_WORKSPACE", p.root)
        .env("LIVENOTE_SOURCE", p.name)
        .env("LIVENOTE_LAST_POLL", p.last_success.as_deref().unwrap_or(""))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match ProcessTree::spawn(cmd) {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("command not found: {program}"));
        }
        Err(e) => return Err(format!("cannot start {program}: {e}")),
    };
    let name = p.name.to_owned();
    let mut log = move |e: &RunEvent| tracing::debug!("source {name}: {}", e.message);
    let (status, stdout, stderr) =
        watch(&mut child, cfg.timeout, &cancel, &mut log).await.map_err(|e| e.to_string())?;
    if !status.success() {
        let tail = tail_summary(&stderr);
        let status = describe_status(status);
        return Err(if tail.is_empty() { status } else { format!("{status}: {tail}") });
    }
    parse_lines(&stdout)
}

/// The events of the program's output: every non-empty line one event. A line that is not
/// one fails the poll (nothing is queued), with its number: a half-read output would record
/// some items as seen and lose the rest.
pub fn parse_lines(stdout: &[u8]) -> Result<Vec<Item>, String> {
    let text = std::str::from_utf8(stdout)
        .map_err(|e| format!("output is not UTF-8 (at byte {})", e.valid_up_to()))?;
    let mut items = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let bad =
            |why: &str| format!("line {}: {why}: {}", n + 1, crate::text::short::one_line(line, QUOTE_CHARS));
        let Ok(Value::Object(mut obj)) = serde_json::from_str::<Value>(line) else {
            return Err(bad("not a JSON object"));
        };
        let id = match obj.remove("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => s,
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(bad("no `id`")),
        };
        let payload = match obj.remove("payload") {
            Some(Value::Null) | None => return Err(bad("no `payload`")),
            Some(v) => v,
        };
        let kind = match obj.remove("type") {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            None | Some(Value::Null) => None,
            Some(_) => return Err(bad("`type` must be a string")),
        };
        let version = match obj.remove("version") {
            Some(Value::String(s)) => s,
            Some(Value::Null) | None => super::version_of(&payload),
            Some(other) => other.to_string(),
        };
        let summary = match &payload {
            Value::String(s) => s.clone(),
            other => other
                .get("title")
                .or_else(|| other.get("subject"))
                .and_then(Value::as_str)
                .map_or_else(|| id.clone(), str::to_owned),
        };
        items.push(Item { id, version, summary, payload, kind });
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_items_and_a_bad_line_fails_the_poll() {
        let out = b"{\"id\":\"a\",\"payload\":{\"title\":\"Hello\"}}\n\n{\"id\":7,\"type\":\"x.y\",\"payload\":\"text\"}\n";
        let items = parse_lines(out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(items.len(), 2);
        assert_eq!(
            (items[0].id.as_str(), items[0].summary.as_str(), items[0].kind.as_deref()),
            ("a", "Hello", None)
        );
        assert_eq!((items[1].id.as_str(), items[1].kind.as_deref()), ("7", Some("x.y")));
        let again = parse_lines(b"{\"payload\":{\"title\":\"Hello\"},\"id\":\"a\"}").unwrap_or_default();
        assert_eq!(again[0].version, items[0].version, "the same payload is the same version");
        for (bad, want) in [
            (&b"{\"id\":\"a\",\"payload\":1}\nnot json"[..], "line 2: not a JSON object: not json"),
            (b"{\"payload\":1}", "line 1: no `id`"),
            (b"{\"id\":\"a\"}", "line 1: no `payload`"),
            (b"{\"id\":\"a\",\"payload\":1,\"type\":3}", "`type` must be a string"),
            (b"\xff", "not UTF-8"),
        ] {
            let e = parse_lines(bad).err().unwrap_or_default();
            assert!(e.contains(want), "{e}");
        }
    }
}
