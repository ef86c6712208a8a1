//! A minimal editor: drives `livenote lsp` over stdio with `Content-Length` framed JSON-RPC.
//!
//! The client advertises a typical editor's capabilities (UTF-16 positions, pushed diagnostics
//! since it does not advertise `textDocument.diagnostic`, lens and hint refresh) but not dynamic
//! registration of file watchers, so the server watches the vault itself (`notify`).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::procfs;
use crate::vault::file_uri;

/// How long any single answer may take before the bench gives up.
pub const TIMEOUT: Duration = Duration::from_secs(60);
/// How often `wait_indexed` asks `livenote.listNotes`.
const POLL: Duration = Duration::from_millis(5);

type Writer = Arc<Mutex<ChildStdin>>;

pub struct Server {
    child: Child,
    writer: Writer,
    /// Every message from the server, stamped when its last byte was read.
    messages: Receiver<(Instant, Value)>,
    /// Lines of the server's stderr, stamped when read.
    log: Receiver<(Instant, String)>,
    /// Notifications received while waiting for something else.
    backlog: VecDeque<(Instant, Value)>,
    next_id: i64,
    pub spawned: Instant,
    /// The `initialize` answer's `capabilities`.
    pub capabilities: Value,
}

/// Latencies of one kind of request.
pub struct Sampled {
    pub times: Vec<Duration>,
    /// What the last answer was, in a few words ("12 items").
    pub answer: String,
    /// The server's CPU time per request (all threads), mean.
    pub cpu: Duration,
}

fn write_frame(writer: &Writer, msg: &Value) {
    let body = msg.to_string();
    let mut w = writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let frame = format!("Content-Length: {}\r\n\r\n", body.len());
    w.write_all(frame.as_bytes())
        .and_then(|()| w.write_all(body.as_bytes()))
        .and_then(|()| w.flush())
        .unwrap_or_else(|e| panic!("write to the server: {e}"));
}

/// Read framed messages until the server closes stdout; answer the server's own requests
/// (refreshes, registrations, trust questions) with `null` like a permissive editor.
fn read_loop(stdout: impl Read, writer: Writer, tx: mpsc::Sender<(Instant, Value)>) {
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    loop {
        let mut len = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = v.parse::<usize>().ok();
            }
        }
        let Some(len) = len else { return };
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let at = Instant::now();
        let Ok(msg) = serde_json::from_slice::<Value>(&body) else { continue };
        if msg.get("method").is_some() && msg.get("id").is_some() {
            write_frame(&writer, &json!({"jsonrpc": "2.0", "id": msg["id"], "result": null}));
            continue;
        }
        if tx.send((at, msg)).is_err() {
            return;
        }
    }
}

impl Server {
    /// Start `livenote lsp` with the bench's environment (scratch data and config dirs, UTC).
    pub fn spawn(bin: &Path, env: &[(&str, &Path)]) -> Server {
        let spawned = Instant::now();
        // `LIVENOTE_BENCH_WRAPPER="heaptrack -o FILE"`: the server runs under a profiler
        // (the memory figures are then the wrapper's, not the server's).
        let wrapper = std::env::var("LIVENOTE_BENCH_WRAPPER").unwrap_or_default();
        let mut words = wrapper.split_whitespace();
        let mut cmd = match words.next() {
            Some(program) => {
                let mut c = Command::new(program);
                c.args(words).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.arg("lsp").env("LIVENOTE_LOG", "info").env("TZ", "UTC");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {} lsp: {e}", bin.display()));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("the server's stdin is not piped"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("the server's stdout is not piped"));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("the server's stderr is not piped"));
        let writer = Arc::new(Mutex::new(stdin));
        let (tx, messages) = mpsc::channel();
        let w = writer.clone();
        thread::spawn(move || read_loop(stdout, w, tx));
        let (log_tx, log) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                // Once the bench stops listening, keep draining so the server never blocks.
                let _ = log_tx.send((Instant::now(), line));
            }
        });
        Server {
            child,
            writer,
            messages,
            log,
            backlog: VecDeque::new(),
            next_id: 1,
            spawned,
            capabilities: Value::Null,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn notify(&self, method: &str, params: Value) {
        write_frame(&self.writer, &json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message that `pick` accepts, looking at the backlog first. Notifications that
    /// do not match are kept in the backlog (a later wait may want them: diagnostics can come
    /// before the answer to a request sent after the change); unmatched answers are dropped.
    fn wait_for<R>(&mut self, what: &str, mut pick: impl FnMut(&Value) -> Option<R>) -> (Instant, R) {
        if let Some(i) = self.backlog.iter().position(|(_, m)| pick(m).is_some())
            && let Some((at, m)) = self.backlog.remove(i)
            && let Some(r) = pick(&m)
        {
            return (at, r);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok((at, msg)) => {
                    if let Some(r) = pick(&msg) {
                        return (at, r);
                    }
                    if msg.get("method").is_some() {
                        if self.backlog.len() >= 10_000 {
                            self.backlog.pop_front();
                        }
                        self.backlog.push_back((at, msg));
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no {what} within {} s", TIMEOUT.as_secs()),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server closed stdout while waiting for {what}")
                }
            }
        }
    }

    /// Send a request; returns when its answer arrived and the answer.
    pub fn request(&mut self, method: &str, params: Value) -> (Instant, Value) {
        let id = self.next_id;
        self.next_id += 1;
        write_frame(&self.writer, &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let (at, msg) = self.wait_for(method, |m| (m["id"] == id).then(|| m.clone()));
        if let Some(err) = msg.get("error") {
            panic!("{method} failed: {err}");
        }
        (at, msg["result"].clone())
    }

    /// Latency of `n` requests sent one after another; the size of the last answer.
    pub fn sample(&mut self, method: &str, n: usize, params: impl Fn(usize) -> Value) -> Sampled {
        let mut times = Vec::with_capacity(n);
        let mut last = Value::Null;
        let cpu = procfs::cpu_by_thread(self.pid());
        for i in 0..n {
            let t = Instant::now();
            let (at, result) = self.request(method, params(i));
            times.push(at - t);
            last = result;
        }
        let cpu = procfs::cpu_since(self.pid(), &cpu) / n as u32;
        Sampled { times, answer: describe(&last), cpu }
    }

    /// `publishDiagnostics` for `uri` at `version`: when it arrived and how many diagnostics.
    /// Older publications for `uri` are dropped from the backlog.
    pub fn wait_diagnostics(&mut self, uri: &str, version: i32) -> (Instant, usize) {
        let is_for =
            |m: &Value| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri;
        let found = self.wait_for(&format!("publishDiagnostics for version {version}"), |m| {
            (is_for(m) && m["params"]["version"] == version)
                .then(|| m["params"]["diagnostics"].as_array().map_or(0, Vec::len))
        });
        self.backlog.retain(|(_, m)| !(is_for(m) && m["params"]["version"].as_i64() <= Some(version.into())));
        found
    }

    /// `initialize` + `initialized`; the time from spawn to the answer.
    pub fn initialize(&mut self, root: &Path) -> Duration {
        let uri = file_uri(root);
        let caps = json!({
            "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true},
                          "codeLens": {"refreshSupport": true}, "inlayHint": {"refreshSupport": true},
                          "symbol": {}, "executeCommand": {}},
            "textDocument": {"synchronization": {"didSave": true}, "completion": {"completionItem": {"snippetSupport": true,
                                 // As VS Code asks: documentation when an item is shown.
                                 "resolveSupport": {"properties": ["documentation", "detail", "additionalTextEdits"]}}},
                             "hover": {"contentFormat": ["markdown", "plaintext"]}, "codeLens": {}, "inlayHint": {},
                             "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "refactor", "source"]}}},
                             "publishDiagnostics": {"versionSupport": true}}
        });
        let (at, result) = self.request(
            "initialize",
            json!({"processId": std::process::id(), "rootUri": uri, "capabilities": caps,
                   "workspaceFolders": [{"uri": uri, "name": "vault"}]}),
        );
        self.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        assert!(!self.capabilities.is_null(), "initialize answered without capabilities: {result}");
        self.notify("initialized", json!({}));
        at - self.spawned
    }

    /// Poll `livenote.listNotes` until it lists `expected` notes; time since spawn.
    pub fn wait_indexed(&mut self, expected: usize) -> Duration {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let (at, result) = self.request(
                "workspace/executeCommand",
                json!({"command": "livenote.listNotes", "arguments": []}),
            );
            let n = result.as_array().map_or(0, Vec::len);
            if n == expected {
                return at - self.spawned;
            }
            assert!(
                Instant::now() < deadline,
                "listNotes still returns {n} notes, not {expected}, {} s after spawn",
                self.spawned.elapsed().as_secs()
            );
            thread::sleep(POLL);
        }
    }

    /// The `indexed N notes (K live) in X ms` line of the server's log: the time since spawn
    /// when it was read, and the server's own figure.
    pub fn index_log(&self) -> Option<(Duration, u64)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (at, line) = self.log.recv_timeout(left).ok()?;
            if let Some(rest) = line.split("indexed ").nth(1) {
                let ms = rest.split(" in ").nth(1)?.trim_end_matches(" ms").trim();
                return Some((at - self.spawned, ms.parse().ok()?));
            }
        }
    }

    /// Throw away the log lines received so far (the channel would otherwise grow).
    pub fn drain_log(&self) {
        while self.log.try_recv().is_ok() {}
    }

    pub fn shutdown(mut self) {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        crate::progress("the server did not exit within 5 s of `exit`; killing it");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("{} items", a.len()),
        Value::Null => "null".to_owned(),
        Value::Object(o) if o.contains_key("contents") => "a hover".to_owned(),
        Value::Object(o) if o.contains_key("items") => {
            format!("{} items", o["items"].as_array().map_or(0, Vec::len))
        }
        other => format!("{} bytes", other.to_string().len()),
    }
}
