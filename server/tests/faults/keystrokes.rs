//! Issue 26: a keystroke reads memory, not the disk. The real `livenote lsp`, run under
//! `strace -f -e trace=file`, answers a burst of the requests an editor sends while a user
//! types (hover and completion, with code lenses, inlay hints, `livenote/listNotes`, the
//! `live` key's hover and code actions every tenth round) in a trusted workspace with one skill, one note naming it and one past run,
//! then keystrokes in the note (each published diagnostics and a completion). Nothing changes on
//! disk meanwhile, so nothing the burst asks may open, stat, list or
//! canonicalise a file of the workspace, the data folder or the configuration folders.
//!
//! strace is Debian's `strace` (scripts/test.sh installs it); where it is missing the test
//! says so and passes without measuring.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::common::{self, Workspace, write};

const SKILL: &str = "---\nname: weekly-digest\ndescription: Sum up a week of notes.\n---\nGroup by day.\n";
const NOTE: &str = "---\nlive:\n  objective: Keep the news\n  skills: [weekly-digest]\n---\n# News\n\nold\n";

/// How many rounds of hover + completion the burst sends (the measurement).
const ROUNDS: usize = 120;
/// Keystrokes typed after them, each with its diagnostics and a completion.
const KEYSTROKES: usize = 40;

/// `livenote lsp` under strace, spoken to over stdio.
struct Traced {
    child: Child,
    stdin: ChildStdin,
    rx: mpsc::Receiver<Value>,
    backlog: Vec<Value>,
    next_id: i64,
}

impl Traced {
    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
            .unwrap_or_else(|e| panic!("write: {e}"));
        self.stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    /// Wait for a message matching `pred`, acknowledging the server's own requests
    /// (registrations, refreshes) on the way as an editor does.
    fn wait(&mut self, what: &str, mut pred: impl FnMut(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&mut pred) {
            return self.backlog.remove(i);
        }
        loop {
            let msg = self
                .rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
            if pred(&msg) {
                return msg;
            }
            if msg.get("method").is_some() && msg.get("id").is_some() {
                let id = msg["id"].clone();
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
            } else {
                self.backlog.push(msg);
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = self.wait(method, |m| m["id"] == id && m.get("method").is_none());
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        // Notifications that came meanwhile (logs, diagnostics) are not waited for.
        self.backlog.retain(|m| m.get("id").is_some());
        reply
    }
}

/// The position (UTF-16, one line per `\n`) of byte `at` in `text`.
fn position(text: &str, at: usize) -> Value {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let col = before.rsplit('\n').next().unwrap_or("").encode_utf16().count();
    json!({"line": line, "character": col})
}

fn uri(path: &Path) -> String {
    tower_lsp_server::ls_types::Uri::from_file_path(path).map(|u| u.as_str().to_owned()).unwrap_or_default()
}

fn now_secs() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or_default()
}

/// One round of what an editor asks while its user types.
fn round(s: &mut Traced, i: usize, note_uri: &str, text: &str) {
    let hover_at = text.find("lastRunAt").unwrap_or_else(|| panic!("no lastRunAt in {text}"));
    let complete_at = text.find("skills: [").map(|p| p + "skills: [".len()).unwrap_or(0);
    let doc = json!({"uri": note_uri});
    s.request("textDocument/hover", json!({"textDocument": doc, "position": position(text, hover_at + 2)}));
    s.request(
        "textDocument/completion",
        json!({"textDocument": doc, "position": position(text, complete_at)}),
    );
    if i.is_multiple_of(10) {
        s.request("textDocument/codeLens", json!({"textDocument": doc}));
        let end = position(text, text.len());
        s.request(
            "textDocument/inlayHint",
            json!({"textDocument": doc, "range": {"start": {"line": 0, "character": 0}, "end": end}}),
        );
        s.request("livenote/listNotes", Value::Null);
        // The `live` key's hover tells what the note's agent memory holds; code actions whether
        // there is a run to undo.
        s.request("textDocument/hover", json!({"textDocument": doc, "position": position(text, 5)}));
        let at = position(text, 5);
        s.request(
            "textDocument/codeAction",
            json!({"textDocument": doc, "range": {"start": at, "end": at}, "context": {"diagnostics": []}}),
        );
    }
}

/// Wait until strace has recorded no file syscall on `dirs` for `secs` seconds (strace writes
/// its log a line at a time), or 30 seconds have passed.
fn quiet_for(trace: &Path, dirs: &[PathBuf], secs: f64) {
    let until = now_secs() + 30.0;
    loop {
        let log = std::fs::read_to_string(trace).unwrap_or_default();
        let last =
            calls(&log).into_iter().filter(|c| touches(&c.line, dirs)).map(|c| c.at).fold(0.0, f64::max);
        let now = now_secs();
        if now - last >= secs || now > until {
            return;
        }
        std::thread::sleep(Duration::from_secs_f64((secs - (now - last)).clamp(0.05, secs)));
    }
}

/// A file syscall strace recorded: its time (seconds since the epoch) and its line.
struct Call {
    at: f64,
    line: String,
}

/// Parse strace's `-f -ttt` output: `PID SECONDS.MICROS syscall(...) = result`.
fn calls(log: &str) -> Vec<Call> {
    log.lines()
        .filter_map(|l| {
            // strace pads the pid to a width: words are split at runs of spaces.
            let (_pid, rest) = l.trim_start().split_once(' ')?;
            let (at, call) = rest.trim_start().split_once(' ')?;
            Some(Call { at: at.parse::<f64>().ok()?, line: call.to_owned() })
        })
        .collect()
}

/// Whether a recorded call names a path of ours: under one of `dirs`, or relative (to the
/// server's working folder, the workspace, or to a folder it opened).
fn touches(line: &str, dirs: &[PathBuf]) -> bool {
    if line.starts_with("<...") {
        return false;
    }
    let Some(first) = line.split_once('"').map(|(_, rest)| rest) else { return false };
    let path = first.split('"').next().unwrap_or("");
    if path.is_empty() {
        return false;
    }
    !path.starts_with('/') || dirs.iter().any(|d| Path::new(path).starts_with(d))
}

// A skipped test says so on stdout (shown with --nocapture), as the other suites' do.
#[allow(clippy::print_stdout)]
#[test]
fn a_burst_of_requests_touches_no_file() {
    if Command::new("strace").arg("-V").output().is_err() {
        println!("skipped: strace is not installed (Debian `strace`; scripts/test.sh installs it)");
        return;
    }
    // A container without ptrace (seccomp, no CAP_SYS_PTRACE) has strace but cannot trace.
    let traced = Command::new("strace").args(["-f", "-e", "trace=file", "-o", "/dev/null", "true"]).output();
    if let Ok(out) = &traced
        && !out.status.success()
    {
        println!("skipped: strace cannot trace here: {}", String::from_utf8_lossy(&out.stderr).trim());
        return;
    }
    let config =
        format!("{}\n[skills]\ndirs = [\"skills\"]\n", common::command_config("printf 'Fresh news.\\n'"));
    let dir = common::tempdir();
    write(&dir.path().join("skills/digest.md"), SKILL);
    write(&dir.path().join("n.md"), NOTE);
    let ws = Workspace::in_dir(dir, &config);
    let ran = ws.livenote(&["run", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    let text = ws.note();
    assert!(text.contains("lastRunId"), "the run left no runtime fields: {text}");

    let data = ws.data.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    // Beside, not inside, the folders measured: strace writes it all along.
    let logs = common::tempdir();
    let trace = logs.path().join("strace.log");
    let mut child = Command::new("strace")
        .args(["-f", "-ttt", "-e", "trace=file", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_livenote"))
        .arg("lsp")
        .current_dir(&ws.root)
        .env("LIVENOTE_DATA_DIR", &data)
        .env("LIVENOTE_CONFIG_DIR", &data)
        .env("HOME", data.join("home"))
        .env("XDG_CONFIG_HOME", data.join("xdg-config"))
        .env("XDG_DATA_HOME", data.join("xdg-data"))
        .env("TZ", "UTC")
        .env_remove("LIVENOTE_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn strace: {e}"));
    let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let rx = common::read_frames(child.stdout.take().unwrap_or_else(|| panic!("no stdout")));
    let mut s = Traced { child, stdin, rx, backlog: Vec::new(), next_id: 0 };

    let root_uri = uri(&ws.root);
    let note_uri = uri(&ws.root.join("n.md"));
    s.request(
        "initialize",
        json!({"processId": null, "rootUri": root_uri, "capabilities": {
            "workspace": {"workspaceFolders": true}, "general": {"positionEncodings": ["utf-16"]}}}),
    );
    s.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": note_uri, "languageId": "markdown", "version": 1, "text": text}}}));
    s.wait("diagnostics", |m| m["method"] == "textDocument/publishDiagnostics");
    // Warm-up: the index built, the note listed, every request answered once.
    common::wait_until("the note is listed", 20, || {
        s.request("livenote/listNotes", Value::Null)["result"].as_array().is_some_and(|a| !a.is_empty())
    });
    for i in 0..10 {
        round(&mut s, i, &note_uri, &text);
    }

    // Background work is not a request: the start-up passes (the event queue looked at once,
    // the sources' loop, which a loaded machine may run late) are let finish, and the server's
    // minute ticker (relative times, trust and what no watcher announced, read again on the
    // minute) is kept clear of: the burst (well under 10 s) starts early in a minute, once the
    // server has touched none of the measured paths for a second.
    let dirs = [ws.root.clone(), data.clone()];
    loop {
        quiet_for(&trace, &dirs, 1.0);
        let into_minute = now_secs() % 60.0;
        if into_minute <= 45.0 {
            break;
        }
        std::thread::sleep(Duration::from_secs_f64(61.0 - into_minute));
    }
    let from = now_secs();
    for i in 0..ROUNDS {
        round(&mut s, i, &note_uri, &text);
    }
    // Then typing: each keystroke in the body, its diagnostics published, and a completion.
    let mut typed = text.clone();
    for i in 0..KEYSTROKES {
        let version = i32::try_from(i).unwrap_or(0) + 2;
        let at = position(&typed, typed.len());
        typed.push('x');
        s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": note_uri, "version": version},
            "contentChanges": [{"range": {"start": at, "end": at}, "text": "x"}]}}));
        s.wait("diagnostics", |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version
        });
        let complete_at = typed.find("skills: [").map(|p| p + "skills: [".len()).unwrap_or(0);
        s.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": note_uri}, "position": position(&typed, complete_at)}),
        );
    }
    let to = now_secs();

    s.request("shutdown", Value::Null);
    s.send(json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
    common::wait_or_kill(&mut s.child, Duration::from_secs(20));

    let log = std::fs::read_to_string(&trace).unwrap_or_else(|e| panic!("{}: {e}", trace.display()));
    let all = calls(&log);
    // The measurement itself works: starting up, the server read the workspace and its trust.
    let before = all.iter().filter(|c| c.at < from && touches(&c.line, &dirs)).count();
    assert!(
        before > 0,
        "strace recorded no file syscall on our paths at all: {} lines\n{}",
        all.len(),
        log.lines().take(10).collect::<Vec<_>>().join("\n")
    );
    let during: Vec<Call> = all.into_iter().filter(|c| c.at >= from && c.at <= to).collect();
    let ours: Vec<&Call> = during.iter().filter(|c| touches(&c.line, &dirs)).collect();
    if ours.is_empty() {
        return;
    }
    let mut by_call: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_path: BTreeMap<String, usize> = BTreeMap::new();
    for c in &ours {
        let name = c.line.split('(').next().unwrap_or("").to_owned();
        *by_call.entry(name).or_default() += 1;
        let path = c.line.split('"').nth(1).unwrap_or("").to_owned();
        *by_path.entry(path).or_default() += 1;
    }
    let mut paths: Vec<(String, usize)> = by_path.into_iter().collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.1));
    paths.truncate(20);
    panic!(
        "{} file syscalls on workspace and config paths during {ROUNDS} rounds of requests and \
         {KEYSTROKES} keystrokes (nothing changed on disk): {by_call:?}\nmost touched: {paths:#?}\nfirst: {:#?}",
        ours.len(),
        ours.iter().take(5).map(|c| &c.line).collect::<Vec<_>>()
    );
}
