//! The Windows build, end to end, under Wine: `livenote.exe` cross-built for
//! `x86_64-pc-windows-gnu` and run as a Windows user runs it, on folders Wine shows as `Z:\...`:
//! - `check .` on a folder with a valid and an invalid note (messages, exit codes);
//! - `list --format json --at ...`;
//! - `run` before and after `trust .`, with a provider `command = ["cmd", "/c", "echo ..."]`, on a
//!   note with CRLF line endings, which it keeps;
//! - `lsp` over stdio, once on a `file:///Z:/...` root and once on the form VS Code sends on
//!   Windows, `file:///z%3A/...`: diagnostics, completion (keys, and the provider names of the
//!   folder's trusted `.livenote.toml`), the root's notes, shutdown + exit with status 0.
//!
//! `bash tests/e2e/windows/install.sh` installs Wine 8 with its prefix and prints the settings;
//! scripts/test.sh then builds `cargo build --target x86_64-pc-windows-gnu --bin livenote` and
//! runs this with them. Read from the environment:
//! `LIVENOTE_WINE` (the wine64 loader), `LIVENOTE_WINEPREFIX` (default `<repo>/target/wine`),
//! `LIVENOTE_WINDOWS_EXE` (default `<repo>/target/x86_64-pc-windows-gnu/debug/livenote.exe`).
//! With neither `LIVENOTE_WINE` nor `LIVENOTE_WINDOWS_EXE` set each test says it is skipped and
//! passes (a developer's `cargo test` without Wine); with one set, anything missing fails it.

// The skip notice is this test's output, shown with `--nocapture`.
#![allow(clippy::print_stdout)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A backstop per command: Wine starts a process in about a second, more on a busy machine.
const TIMEOUT: Duration = Duration::from_secs(120);

fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// Wine and the Windows build it runs.
struct Wine {
    wine: PathBuf,
    prefix: PathBuf,
    exe: PathBuf,
}

/// Wine and the Windows binary, or `None` (said on stdout) when the suite is not asked for.
fn wine_or_skip(test: &str) -> Option<Wine> {
    let (wine, exe) = (env_path("LIVENOTE_WINE"), env_path("LIVENOTE_WINDOWS_EXE"));
    if wine.is_none() && exe.is_none() {
        println!(
            "skipped: {test}: LIVENOTE_WINE is not set (the Windows suite runs under Wine: \
             `bash tests/e2e/windows/install.sh` prints the settings, scripts/test.sh sets them)"
        );
        return None;
    }
    let root = repo_root();
    let Some(wine) = wine else {
        panic!(
            "LIVENOTE_WINDOWS_EXE is set but LIVENOTE_WINE is not: run `bash tests/e2e/windows/install.sh`"
        )
    };
    let exe = exe.unwrap_or_else(|| root.join("target/x86_64-pc-windows-gnu/debug/livenote.exe"));
    let prefix = env_path("LIVENOTE_WINEPREFIX").unwrap_or_else(|| root.join("target/wine"));
    assert!(wine.is_file(), "LIVENOTE_WINE={} does not exist", wine.display());
    assert!(
        exe.is_file(),
        "no Windows build at {}: `cargo build --target x86_64-pc-windows-gnu --bin livenote` (or set \
         LIVENOTE_WINDOWS_EXE)",
        exe.display()
    );
    assert!(
        prefix.join("drive_c/windows/system32/bcryptprimitives.dll").is_file(),
        "the Wine prefix {} lacks the stand-in bcryptprimitives.dll: run `bash tests/e2e/windows/install.sh`",
        prefix.display()
    );
    Some(Wine { wine, prefix, exe })
}

/// How Windows programs under Wine see the Unix path `p`: drive `Z:` is `/`.
fn win_path(p: &Path) -> String {
    format!("Z:{}", p.display().to_string().replace('/', "\\"))
}

/// `file:///Z:/...`, the URI of `p` as Windows programs name it under Wine.
fn drive_uri(p: &Path) -> String {
    format!("file:///Z:{}", p.display())
}

/// `file:///z%3A/...`: the same file as VS Code on Windows sends it (lower-case drive letter,
/// the colon percent-encoded).
fn vscode_uri(p: &Path) -> String {
    format!("file:///z%3A{}", p.display())
}

/// A file URI as Windows tells files apart, for comparing two spellings of one file: an
/// editor matches `file:///z%3A/a` and `file:///Z:/A` to the same document, so a server may
/// publish either.
fn windows_uri_key(uri: &str) -> String {
    uri.to_lowercase().replace("%3a", ":")
}

/// What one `livenote.exe` command printed and how it ended.
struct Output {
    shown: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Output {
    fn report(&self) -> String {
        format!(
            "$ {} -> {:?}\n--- stdout\n{}--- stderr\n{}---",
            self.shown, self.code, self.stdout, self.stderr
        )
    }

    fn assert_code(&self, code: i32) -> &Output {
        assert_eq!(self.code, Some(code), "expected exit status {code}\n{}", self.report());
        self
    }
}

/// A folder for `livenote.exe` to work in, with a data folder of its own (trust store, user
/// config), both outside the folder.
struct Folder {
    wine: Wine,
    _dir: tempfile::TempDir,
    root: PathBuf,
    data: tempfile::TempDir,
}

impl Folder {
    fn new(wine: Wine) -> Folder {
        let dir = common::tempdir();
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        Folder { wine, _dir: dir, root, data: common::tempdir() }
    }

    fn write(&self, rel: &str, text: &str) {
        common::write(&self.root.join(rel), text);
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    /// `wine64 livenote.exe ARGS`, started in the folder, as a Windows user would.
    fn command(&self, args: &[&str]) -> Command {
        let data = win_path(self.data.path());
        let mut c = Command::new(&self.wine.wine);
        c.arg(&self.wine.exe)
            .args(args)
            .current_dir(&self.root)
            .env("WINEPREFIX", &self.wine.prefix)
            .env("WINEDEBUG", "-all")
            .env("LIVENOTE_DATA_DIR", &data)
            .env("LIVENOTE_CONFIG_DIR", &data)
            .env("TZ", "UTC")
            .env_remove("LIVENOTE_LOG")
            .env_remove("RUST_LOG");
        c
    }

    fn livenote(&self, args: &[&str]) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", self.wine.wine.display()));
        let (stdout, stderr) = (common::drain(child.stdout.take()), common::drain(child.stderr.take()));
        let status = common::wait_or_kill(&mut child, TIMEOUT);
        Output {
            shown: format!("livenote.exe {}", args.join(" ")),
            code: status.and_then(|s| s.code()),
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        }
    }
}

const GOOD: &str = "---\nlive:\n  objective: keep a greeting\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T07:30:00.000Z\"\n---\n# Greeting\n\nold\n";
/// Two errors, on lines 3 and 5 (1-based).
const BAD: &str = "---\nlive:\n  objective: 3\n  triggers:\n    cronExpr: \"bad cron\"\n---\n# Broken\n";

#[test]
fn check_reports_the_invalid_note_and_exits_1() {
    let Some(wine) = wine_or_skip("check") else { return };
    let f = Folder::new(wine);
    f.write("good.md", GOOD);
    let clean = f.livenote(&["check", "."]);
    clean.assert_code(0);
    assert_eq!(clean.stdout, "", "check prints nothing on success\n{}", clean.report());

    f.write("notes/bad.md", BAD);
    let out = f.livenote(&["check", "."]);
    out.assert_code(1);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.report());
    assert!(lines[0].starts_with("notes/bad.md:3:14: error live/wrong-type "), "{}", out.report());
    assert!(lines[1].starts_with("notes/bad.md:5:15: error live/invalid-cron "), "{}", out.report());
    assert!(!out.stdout.contains("good.md"), "{}", out.report());
}

#[test]
fn list_json_shows_each_live_note() {
    let Some(wine) = wine_or_skip("list --format json") else { return };
    let f = Folder::new(wine);
    f.write("good.md", GOOD);
    f.write("notes/bad.md", BAD);
    f.write("plain.md", "# Not live\n");
    let at = "2026-11-23T08:10:00Z";
    let out = f.livenote(&["list", "--format", "json", "--at", at, "."]);
    out.assert_code(0);
    let items: Vec<Value> = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not a JSON array: {e}\n{}", out.report()));
    let brief: Vec<(&str, &str, &str)> = items
        .iter()
        .map(|i| {
            (
                i["path"].as_str().unwrap_or("?"),
                i["title"].as_str().unwrap_or("?"),
                i["status"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    assert_eq!(
        brief,
        [("good.md", "Greeting", "untrusted"), ("notes/bad.md", "Broken", "invalid")],
        "{}",
        out.report()
    );
    let good = &items[0];
    assert_eq!(good["triggers"], json!({"cronExpr": "0 * * * *"}), "{}", out.report());
    assert_eq!(good["lastRunAt"], "2026-11-23T07:30:00.000Z", "{}", out.report());
    // The next hourly fire after 08:10: 09:00 in any zone a whole number of hours from UTC,
    // earlier in the others, so only its bounds are the zone's business.
    let at = chrono::DateTime::parse_from_rfc3339(at).unwrap_or_else(|e| panic!("{e}"));
    let next = good["nextDue"]
        .as_str()
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .unwrap_or_else(|| panic!("nextDue is not RFC3339\n{}", out.report()));
    assert!(next > at && next <= at + chrono::Duration::hours(1), "{}", out.report());
}

/// `trust .` under Wine, its exit code and message.
fn trust(f: &Folder) {
    let out = f.livenote(&["trust", "."]);
    out.assert_code(0);
    assert!(out.stdout.contains("trusted "), "{}", out.report());
}

#[test]
fn run_with_a_cmd_provider_needs_trust_and_keeps_crlf() {
    let Some(wine) = wine_or_skip("run with cmd /c") else { return };
    let f = Folder::new(wine);
    f.write(
        ".livenote.toml",
        "[agent]\nprovider = \"win\"\n[providers.win]\nkind = \"command\"\ncommand = [\"cmd\", \"/c\", \"echo hello from cmd\"]\ntimeout = \"60s\"\n",
    );
    let note = "---\r\ntitle: Greeting\r\nlive:\r\n  objective: keep a greeting\r\n---\r\n# Greeting\r\n\r\nold body\r\n";
    f.write("n.md", note);

    // Untrusted: the folder's provider is not used, nothing runs.
    let refused = f.livenote(&["run", "n.md"]);
    refused.assert_code(1);
    assert!(refused.stderr.contains("not trusted"), "{}", refused.report());
    assert_eq!(f.read("n.md"), note, "an untrusted run changed the note");

    trust(&f);
    let out = f.livenote(&["run", "n.md"]);
    out.assert_code(0);
    assert!(out.stdout.contains("hello from cmd"), "{}", out.report());
    let text = f.read("n.md");
    assert!(text.contains("hello from cmd"), "the body is not cmd's output:\n{text:?}\n{}", out.report());
    assert!(!text.contains("old body"), "{text:?}");
    assert!(text.contains("lastRunError: null"), "{text:?}");
    assert!(text.contains("lastRunSummary: \"Updated: hello from cmd\""), "{text:?}");
    // Every line of a CRLF note still ends in CRLF, the agent's new lines included.
    let bare_lf: Vec<&str> = text.split_inclusive('\n').filter(|l| !l.ends_with("\r\n")).collect();
    assert!(bare_lf.is_empty(), "lines lost their CR: {bare_lf:?}\nwhole note: {text:?}");
}

/// `livenote.exe lsp` under Wine, spoken to over its stdio.
struct Server {
    child: Child,
    stdin: ChildStdin,
    rx: mpsc::Receiver<Value>,
    backlog: Vec<Value>,
    stderr: JoinHandle<String>,
}

impl Server {
    fn start(f: &Folder) -> Server {
        let mut child = f
            .command(&["lsp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start wine: {e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let stderr = common::drain(child.stderr.take());
        Server { child, stdin, rx: common::read_frames(stdout), backlog: Vec::new(), stderr }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
            .unwrap_or_else(|e| panic!("write: {e}"));
        self.stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = self.wait(method, |m| m["id"] == id && m.get("method").is_none());
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        reply
    }

    /// Wait for a message matching `pred`, acknowledging the server's requests on the way as an
    /// editor does.
    fn wait(&mut self, what: &str, mut pred: impl FnMut(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&mut pred) {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(msg) = self.rx.recv_timeout(left) else {
                panic!("timed out waiting for {what}; seen: {:#?}", self.backlog)
            };
            if pred(&msg) {
                return msg;
            }
            if msg.get("method").is_some() && msg.get("id").is_some() {
                self.send(json!({"jsonrpc": "2.0", "id": msg["id"].clone(), "result": null}));
            } else {
                self.backlog.push(msg);
            }
        }
    }

    /// shutdown, exit: the process's exit status and its stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        self.request(9999, "shutdown", Value::Null);
        self.send(json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
        let status = common::wait_or_kill(&mut self.child, TIMEOUT);
        drop(self.stdin);
        (status.and_then(|s| s.code()), self.stderr.join().unwrap_or_default())
    }
}

/// The labels of a completion reply (a list or a CompletionList).
fn labels(reply: &Value) -> Vec<String> {
    let items = reply["result"].get("items").unwrap_or(&reply["result"]);
    items.as_array().into_iter().flatten().filter_map(|i| i["label"].as_str().map(str::to_owned)).collect()
}

/// The language server on a folder whose URIs are made by `uri`: the root's notes listed,
/// diagnostics of an opened note, completion of keys and of the trusted folder's provider
/// names, shutdown and exit 0.
fn lsp_on_root(test: &str, uri: fn(&Path) -> String) {
    let Some(wine) = wine_or_skip(test) else { return };
    let f = Folder::new(wine);
    f.write(
        ".livenote.toml",
        "[providers.winprov]\nkind = \"command\"\ncommand = [\"cmd\", \"/c\", \"echo hi\"]\n",
    );
    f.write("good.md", GOOD);
    // Trusted by the CLI as `Z:\...`; the server must find that trust for its root however
    // the editor spelled it.
    trust(&f);

    let mut s = Server::start(&f);
    let root_uri = uri(&f.root);
    let init = s.request(
        1,
        "initialize",
        json!({
        "processId": null, "rootUri": root_uri,
        "workspaceFolders": [{"uri": root_uri, "name": "ws"}],
        "capabilities": {"workspace": {"workspaceFolders": true}}}),
    );
    assert!(init["result"]["capabilities"]["completionProvider"].is_object(), "{init}");
    s.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));

    // The root's notes, once indexed.
    let mut listed = Value::Null;
    for id in 100..400 {
        listed = s.request(id, "livenote/listNotes", Value::Null);
        if listed["result"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(listed["result"][0]["path"], "good.md", "{listed}");

    // A note with a problem gets its diagnostics.
    let note_uri = uri(&f.root.join("notes").join("bad.md"));
    f.write("notes/bad.md", BAD);
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": note_uri, "languageId": "markdown", "version": 1, "text": BAD}}}));
    let d = s.wait("diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 1
    });
    let published = d["params"]["uri"].as_str().unwrap_or_default();
    assert_eq!(windows_uri_key(published), windows_uri_key(&note_uri), "{d}");
    let codes: Vec<&str> = d["params"]["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["live/wrong-type", "live/invalid-cron"], "{d}");

    // Completion inside `live:`: its keys on a new line, the configured providers as a value.
    let text = "---\nlive:\n  objective: x\n  provider: \n  \n---\n# Draft\n";
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": note_uri, "version": 2}, "contentChanges": [{"text": text}]}}));
    let keys = s.request(
        2,
        "textDocument/completion",
        json!({
        "textDocument": {"uri": note_uri}, "position": {"line": 4, "character": 2}}),
    );
    let keys = labels(&keys);
    assert!(keys.iter().any(|l| l == "triggers"), "{keys:?}");
    let providers = s.request(
        3,
        "textDocument/completion",
        json!({
        "textDocument": {"uri": note_uri}, "position": {"line": 3, "character": 12}}),
    );
    let providers = labels(&providers);
    assert!(
        providers.iter().any(|l| l == "winprov"),
        "the trusted folder's provider is not offered: {providers:?}"
    );

    let (code, stderr) = s.finish();
    assert_eq!(code, Some(0), "livenote.exe lsp did not exit 0 after shutdown + exit\n--- stderr\n{stderr}");
}

#[test]
fn lsp_on_a_drive_letter_root() {
    lsp_on_root("lsp on file:///Z:/", drive_uri);
}

#[test]
fn lsp_on_a_vscode_style_root() {
    lsp_on_root("lsp on file:///z%3A/", vscode_uri);
}
