//! End-to-end language server benchmark: drives the real `livenote lsp` binary over stdio with
//! `Content-Length` framed JSON-RPC, like an editor would, and prints a markdown table with the
//! targets beside the measured values.
//!
//! Run: `cargo bench -p livenote --bench lsp` (Cargo builds the binary with the bench profile
//! and passes its path as `CARGO_BIN_EXE_livenote`). Takes about 70 s after the build, 60 s of
//! which is the idle CPU measurement. Needs Linux (`/proc`) and `python3`.
//!
//! What it does:
//! 1. Generates a vault in a temp dir with `python3 scripts/gen_vault.py OUT --notes 10000
//!    --live-ratio 0.1 --seed 1` (10,000 notes of ~1.5 KB, 1,000 live), then writes one more
//!    note in Rust, `big/big-1mb.md`: a `live:` block at the top and a ~1 MiB markdown body.
//! 2. Five times: the "floor" (walk the vault and read every file once with `std::fs`; the page
//!    cache is warm, the vault was just written), then spawn the server and time spawn ->
//!    `initialize` answered and spawn -> indexed (`workspace/executeCommand livenote.listNotes`,
//!    polled every 5 ms, returns all the live notes). Medians are reported.
//! 3. The fifth server is kept: idle CPU over 60 s (utime+stime from `/proc/<pid>/stat`, and
//!    the nanosecond run time of every thread from `/proc/<pid>/task/*/schedstat`) and peak RSS
//!    (`VmHWM`); workspace/symbol and listNotes over the index; then the 1 MB note is opened and
//!    measured with 200 samples each: keystroke (one char inserted in the frontmatter's title) ->
//!    `publishDiagnostics` of that version, completion, hover, codeLens, inlayHint on an
//!    unchanged version, and completion sent right after a keystroke.
//!
//! Latencies are wall time at the client (write of the request -> last byte of the answer
//! read), so on a busy machine their tails include waiting for a CPU. Beside them the table
//! gives the server's own CPU time per operation (schedstat delta over the samples / count),
//! which load barely changes: a p99 far above it is scheduling, not work.
//!
//! The client advertises a typical editor's capabilities (UTF-16 positions, pushed diagnostics
//! since it does not advertise `textDocument.diagnostic`, lens and hint refresh) but not dynamic
//! registration of file watchers, so the server watches the vault itself (`notify`). The server
//! gets `LIVENOTE_DATA_DIR` pointed at a scratch dir: the user's trust list is never read or
//! written, and the vault is untrusted, so nothing runs.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const NOTES: usize = 10_000;
const RUNS: usize = 5;
const SAMPLES: usize = 200;
const IDLE: Duration = Duration::from_secs(60);
/// How long any single answer may take before the bench gives up.
const TIMEOUT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(5);
const BIG_NOTE: &str = "big/big-1mb.md";
const BIG_TITLE: &str = "Big note, 1 MB";

fn main() {
    let started = Instant::now();
    let load_start = loadavg();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_livenote"));
    let vault_dir = tempfile::Builder::new()
        .prefix("livenote-bench-")
        .tempdir()
        .unwrap_or_else(|e| panic!("create a temp dir for the vault: {e}"));
    let vault = vault_dir.path().to_path_buf();
    let data_dir = tempfile::Builder::new()
        .prefix("livenote-bench-data-")
        .tempdir()
        .unwrap_or_else(|e| panic!("create a temp dir for the server's data: {e}"));
    progress(&format!("generating {NOTES} notes into {}", vault.display()));
    generate_vault(manifest, &vault);
    let big_text = big_note();
    let big_path = vault.join(BIG_NOTE);
    std::fs::create_dir_all(big_path.parent().unwrap_or(&vault))
        .unwrap_or_else(|e| panic!("create {}: {e}", big_path.display()));
    std::fs::write(&big_path, &big_text).unwrap_or_else(|e| panic!("write {}: {e}", big_path.display()));
    let expected_live = count_live(&vault);

    // 1-2. Start-up, five times.
    let mut floors = Vec::new();
    let mut inits = Vec::new();
    let mut indexed = Vec::new();
    let mut logged = Vec::new();
    let mut log_at = Vec::new();
    let mut files = (0, 0);
    let mut kept = None;
    for run in 0..RUNS {
        let (floor, n_files, n_bytes) = read_floor(&vault);
        files = (n_files, n_bytes);
        floors.push(floor);
        let mut s = Server::spawn(&bin, data_dir.path());
        let init = s.initialize(&vault);
        let idx = s.wait_indexed(expected_live);
        let log = s.index_log();
        progress(&format!(
            "run {}: floor {:.0} ms, initialize {:.1} ms, indexed {:.0} ms (server log: {})",
            run + 1,
            ms(floor),
            ms(init),
            ms(idx),
            log.map_or("none".to_owned(), |(at, l)| format!("read at {:.0} ms, says {l} ms", ms(at)))
        ));
        inits.push(init);
        indexed.push(idx);
        log_at.extend(log.map(|(at, _)| at));
        logged.extend(log.map(|(_, l)| l));
        if run + 1 == RUNS {
            kept = Some(s);
        } else {
            s.shutdown();
        }
    }
    let Some(mut s) = kept else { panic!("no server left after the start-up runs") };

    // 4. Idle, then memory after indexing. Let the post-index work (diagnostics of notes with
    // problems, the file watcher's set-up) finish first.
    thread::sleep(Duration::from_secs(2));
    let rss_indexed = s.memory();
    progress(&format!("idle for {} s", IDLE.as_secs()));
    let idle = s.idle_cpu(IDLE);

    // Requests that read the index.
    let symbol = s.sample("workspace/symbol", SAMPLES, |_| json!({"query": "budget"}));
    // What a symbol picker sends when it opens: every live note matches.
    let symbol_all = s.sample("workspace/symbol", SAMPLES, |_| json!({"query": ""}));
    let list = s.sample(
        "workspace/executeCommand",
        SAMPLES / 4,
        |_| json!({"command": "livenote.listNotes", "arguments": []}),
    );

    // 3. The 1 MB note.
    progress("1 MB note");
    let uri = file_uri(&big_path);
    let t = Instant::now();
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": big_text}}),
    );
    let open = s.wait_diagnostics(&uri, 1).0 - t;
    let mut version = 1;
    let title_end = position(&big_text, &format!("title: \"{BIG_TITLE}"), BIG_TITLE.len() + 8);
    let mut inserted = 0;
    let mut keystroke = || {
        version += 1;
        let col = title_end.1 + inserted;
        inserted += 1;
        let at = json!({"line": title_end.0, "character": col});
        (
            version,
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": at, "end": at}, "text": "x"}]}),
        )
    };
    let mut typing = Vec::new();
    let mut diag_count = 0;
    let cpu = s.cpu_by_thread();
    for _ in 0..SAMPLES {
        let (v, change) = keystroke();
        let t = Instant::now();
        s.notify("textDocument/didChange", change);
        let (at, diags) = s.wait_diagnostics(&uri, v);
        typing.push(at - t);
        diag_count = diags;
    }
    let typing_cpu = s.cpu_since(&cpu) / SAMPLES as u32;
    let cron = position(&big_text, "    cronExpr: \"", 15);
    let cron_key = position(&big_text, "    cronExpr: \"", 6);
    let doc = json!({"uri": uri});
    let completion = s.sample(
        "textDocument/completion",
        SAMPLES,
        |_| json!({"textDocument": doc, "position": {"line": cron.0, "character": cron.1}}),
    );
    let hover = s.sample(
        "textDocument/hover",
        SAMPLES,
        |_| json!({"textDocument": doc, "position": {"line": cron_key.0, "character": cron_key.1}}),
    );
    let lens = s.sample("textDocument/codeLens", SAMPLES, |_| json!({"textDocument": doc}));
    let hints = s.sample("textDocument/inlayHint", SAMPLES, |_| {
        json!({"textDocument": doc, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 50, "character": 0}}})
    });
    // What an editor does while typing: the keystroke, then completion at once.
    let mut typed_completion = Vec::new();
    let cpu = s.cpu_by_thread();
    for _ in 0..SAMPLES {
        let (v, change) = keystroke();
        let t = Instant::now();
        s.notify("textDocument/didChange", change);
        let (answered, _) = s.request(
            "textDocument/completion",
            json!({"textDocument": doc, "position": {"line": cron.0, "character": cron.1}}),
        );
        typed_completion.push(answered - t);
        s.wait_diagnostics(&uri, v);
    }
    let typed_cpu = s.cpu_since(&cpu) / SAMPLES as u32;
    let rss_big = s.memory();
    s.shutdown();

    let report = Report {
        files,
        expected_live,
        floor: median(&floors),
        init: median(&inits),
        indexed: median(&indexed),
        indexed_all: indexed.clone(),
        logged: median_u64(&logged),
        log_at: (!log_at.is_empty()).then(|| median(&log_at)),
        idle,
        rss_indexed,
        rss_big,
        open,
        typing: Stats::of(&mut typing),
        typing_cpu,
        diag_count,
        requests: vec![
            ("completion", completion),
            ("hover", hover),
            ("codeLens", lens),
            ("inlayHint", hints),
            ("workspace/symbol \"budget\"", symbol),
            ("workspace/symbol \"\"", symbol_all),
            ("executeCommand livenote.listNotes", list),
        ],
        typed_completion: Stats::of(&mut typed_completion),
        typed_cpu,
        elapsed: started.elapsed(),
        load: (load_start, loadavg()),
    };
    report.print();
}

// ---------------------------------------------------------------------------------------------
// The vault

fn generate_vault(manifest: &Path, out: &Path) {
    let script = manifest.join("../scripts/gen_vault.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg(out)
        .args(["--notes", &NOTES.to_string(), "--live-ratio", "0.1", "--seed", "1"])
        .status()
        .unwrap_or_else(|e| panic!("run python3 {}: {e}", script.display()));
    assert!(status.success(), "{} failed: {status}", script.display());
}

/// A live note with a ~1 MiB body of paragraphs, headings, lists and a few code fences.
fn big_note() -> String {
    const WORDS: &[&str] = &[
        "alpha", "beta", "gamma", "delta", "budget", "meeting", "roadmap", "weather", "news", "paper",
        "draft", "review", "garden", "recipe", "travel", "reading", "queue", "inbox", "project", "status",
        "weekly",
    ];
    let mut s = format!(
        "---\ntitle: \"{BIG_TITLE}\"\ntags: [bench, big]\nlive:\n  objective: |\n    Keep a rolling digest of \
         the week's budget news.\n    One summary, then sections freshest first.\n  active: true\n  \
         triggers:\n    cronExpr: \"0 9 * * 1-5\"\n    windows:\n      - startTime: \"09:00\"\n        \
         endTime: \"12:00\"\n  lastAttemptAt: \"2026-11-20T08:00:00.000Z\"\n  lastRunAt: \
         \"2026-11-20T08:00:01.000Z\"\n  lastRunId: \"run-big\"\n  lastRunSummary: \"Updated the digest.\"\n  \
         lastRunError: null\n---\n\n# {BIG_TITLE}\n\n"
    );
    // A fixed linear congruential generator: the same bytes on every run.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut para = 0;
    while s.len() < 1024 * 1024 {
        para += 1;
        if para % 12 == 0 {
            s.push_str(&format!("## Section {para}\n\n"));
        }
        if para % 40 == 0 {
            s.push_str("```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\n");
        }
        if para % 7 == 0 {
            for _ in 0..4 {
                s.push_str(&format!("- {} {}\n", WORDS[next(21) as usize], WORDS[next(21) as usize]));
            }
            s.push('\n');
        }
        for sentence in 0..(2 + next(5)) {
            if sentence > 0 {
                s.push(' ');
            }
            let n = 6 + next(10);
            for w in 0..n {
                let word = WORDS[next(WORDS.len() as u64) as usize];
                if w == 0 {
                    s.push_str(&word[..1].to_uppercase());
                    s.push_str(&word[1..]);
                } else {
                    s.push(' ');
                    s.push_str(word);
                }
            }
            s.push('.');
        }
        s.push_str("\n\n");
    }
    s
}

/// Every file under `dir`, depth first.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
        let kind = entry.file_type().unwrap_or_else(|e| panic!("stat {}: {e}", entry.path().display()));
        if kind.is_dir() {
            walk(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

/// The floor: walk the vault and read every file once. Returns (time, files, bytes).
fn read_floor(vault: &Path) -> (Duration, usize, usize) {
    let t = Instant::now();
    let mut files = Vec::new();
    walk(vault, &mut files);
    let mut bytes = 0;
    for f in &files {
        bytes += std::fs::read(f).unwrap_or_else(|e| panic!("read {}: {e}", f.display())).len();
    }
    (t.elapsed(), files.len(), bytes)
}

/// Notes with a top-level `live:` key in their frontmatter: what listNotes must return.
fn count_live(vault: &Path) -> usize {
    let mut files = Vec::new();
    walk(vault, &mut files);
    files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("read {}: {e}", f.display()));
            let Some(rest) = text.strip_prefix("---\n") else { return false };
            let fm = rest.find("\n---").map_or(rest, |end| &rest[..end]);
            fm.starts_with("live:") || fm.contains("\nlive:")
        })
        .count()
}

/// `file://` URI of an absolute path, percent-encoding what is not unreserved.
fn file_uri(path: &Path) -> String {
    let mut uri = "file://".to_owned();
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// (line, UTF-16 column) of `needle`'s first occurrence plus `delta` columns (ASCII text).
fn position(text: &str, needle: &str, delta: usize) -> (usize, usize) {
    let at = text.find(needle).unwrap_or_else(|| panic!("`{needle}` is not in the note"));
    let line = text[..at].matches('\n').count();
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..at].encode_utf16().count() + delta)
}

// ---------------------------------------------------------------------------------------------
// The client

type Writer = Arc<Mutex<ChildStdin>>;

struct Server {
    child: Child,
    writer: Writer,
    /// Every message from the server, stamped when its last byte was read.
    messages: Receiver<(Instant, Value)>,
    /// Lines of the server's stderr, stamped when read.
    log: Receiver<(Instant, String)>,
    /// Notifications received while waiting for something else.
    backlog: VecDeque<(Instant, Value)>,
    next_id: i64,
    spawned: Instant,
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
/// (refreshes, registrations) with `null` like a permissive editor.
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
    fn spawn(bin: &Path, data_dir: &Path) -> Server {
        let spawned = Instant::now();
        let mut child = Command::new(bin)
            .arg("lsp")
            .env("RUST_LOG", "info")
            // The trust list and other per-user state: a scratch dir, never the user's.
            .env("LIVENOTE_DATA_DIR", data_dir)
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
                if log_tx.send((Instant::now(), line)).is_err() {
                    return;
                }
            }
        });
        Server { child, writer, messages, log, backlog: VecDeque::new(), next_id: 1, spawned }
    }

    fn notify(&self, method: &str, params: Value) {
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
    fn request(&mut self, method: &str, params: Value) -> (Instant, Value) {
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
    fn sample(&mut self, method: &str, n: usize, params: impl Fn(usize) -> Value) -> Sampled {
        let mut times = Vec::with_capacity(n);
        let mut last = Value::Null;
        let cpu = self.cpu_by_thread();
        for i in 0..n {
            let t = Instant::now();
            let (at, result) = self.request(method, params(i));
            times.push(at - t);
            last = result;
        }
        let size = match &last {
            Value::Array(a) => format!("{} items", a.len()),
            Value::Null => "null".to_owned(),
            Value::Object(o) if o.contains_key("contents") => "a hover".to_owned(),
            other => format!("{} bytes", other.to_string().len()),
        };
        let cpu = self.cpu_since(&cpu) / n as u32;
        Sampled { stats: Stats::of(&mut times), size, cpu }
    }

    /// `publishDiagnostics` for `uri` at `version`: when it arrived and how many diagnostics.
    /// Older publications for `uri` are dropped from the backlog.
    fn wait_diagnostics(&mut self, uri: &str, version: i32) -> (Instant, usize) {
        let is_for =
            |m: &Value| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri;
        let found = self.wait_for(&format!("publishDiagnostics for version {version}"), |m| {
            (is_for(m) && m["params"]["version"] == version)
                .then(|| m["params"]["diagnostics"].as_array().map_or(0, Vec::len))
        });
        self.backlog.retain(|(_, m)| !(is_for(m) && m["params"]["version"].as_i64() <= Some(version.into())));
        found
    }

    fn initialize(&mut self, root: &Path) -> Duration {
        let uri = file_uri(root);
        let caps = json!({
            "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true},
                          "codeLens": {"refreshSupport": true}, "inlayHint": {"refreshSupport": true},
                          "symbol": {}, "executeCommand": {}},
            "textDocument": {"synchronization": {"didSave": true}, "completion": {"completionItem": {"snippetSupport": true}},
                             "hover": {"contentFormat": ["markdown", "plaintext"]}, "codeLens": {}, "inlayHint": {},
                             "publishDiagnostics": {"versionSupport": true}}
        });
        let (at, result) = self.request(
            "initialize",
            json!({"processId": std::process::id(), "rootUri": uri, "capabilities": caps,
                   "workspaceFolders": [{"uri": uri, "name": "vault"}]}),
        );
        assert!(result.get("capabilities").is_some(), "initialize answered without capabilities: {result}");
        self.notify("initialized", json!({}));
        at - self.spawned
    }

    /// Poll `livenote.listNotes` until it lists `expected` notes; time since spawn.
    fn wait_indexed(&mut self, expected: usize) -> Duration {
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
    fn index_log(&self) -> Option<(Duration, u64)> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (at, line) = self.log.recv_timeout(left).ok()?;
            if let Some(rest) = line.split("indexed ").nth(1) {
                let ms = rest.split(" in ").nth(1)?.trim_end_matches(" ms").trim();
                return Some((at - self.spawned, ms.parse().ok()?));
            }
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// (VmHWM, VmRSS) in KiB.
    fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .unwrap_or_else(|e| panic!("read /proc/{}/status: {e}", self.pid()));
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or_else(|| panic!("no {name} in /proc/{}/status", self.pid()))
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    /// CPU time used since `before` (from [`Server::cpu_by_thread`]) by the threads alive now.
    fn cpu_since(&self, before: &HashMap<String, u64>) -> Duration {
        Duration::from_nanos(thread_delta(before, &self.cpu_by_thread()))
    }

    /// Nanoseconds on CPU per thread id, from `/proc/<pid>/task/*/schedstat`.
    fn cpu_by_thread(&self) -> HashMap<String, u64> {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.pid())) else {
            return HashMap::new();
        };
        tasks
            .flatten()
            .filter_map(|t| {
                let stat = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
                let ns = stat.split_whitespace().next()?.parse::<u64>().ok()?;
                Some((t.file_name().to_string_lossy().into_owned(), ns))
            })
            .collect()
    }

    /// CPU time (utime + stime, all threads) in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .unwrap_or_else(|e| panic!("read /proc/{}/stat: {e}", self.pid()));
        // Fields after the command name (which may hold spaces) start at field 3 (state).
        let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<&str> = after.split_whitespace().collect();
        let tick = |i: usize| f.get(i - 3).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        tick(14) + tick(15)
    }

    /// Context switches per thread (by thread id): how often each woke up.
    fn switches(&self) -> HashMap<String, u64> {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.pid())) else {
            return HashMap::new();
        };
        tasks
            .flatten()
            .filter_map(|t| {
                let status = std::fs::read_to_string(t.path().join("status")).ok()?;
                let n = status
                    .lines()
                    .filter_map(|l| {
                        l.strip_prefix("voluntary_ctxt_switches:")
                            .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"))
                            .and_then(|v| v.trim().parse::<u64>().ok())
                    })
                    .sum();
                Some((t.file_name().to_string_lossy().into_owned(), n))
            })
            .collect()
    }

    fn idle_cpu(&self, span: Duration) -> Idle {
        let (c0, s0, n0) = (self.cpu_ticks(), self.switches(), self.cpu_by_thread());
        thread::sleep(span);
        let (c1, s1, n1) = (self.cpu_ticks(), self.switches(), self.cpu_by_thread());
        let hz = clock_ticks_per_second();
        let cpu = (c1 - c0) as f64 / hz as f64;
        // Tokio's idle blocking threads (the indexer's) exit meanwhile: per-thread deltas.
        let wakeups = thread_delta(&s0, &s1);
        Idle {
            percent: cpu / span.as_secs_f64() * 100.0,
            ticks: c1 - c0,
            hz,
            wakeups,
            cpu: Duration::from_nanos(thread_delta(&n0, &n1)),
        }
    }

    fn shutdown(mut self) {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        progress("the server did not exit within 5 s of `exit`; killing it");
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

/// How much per-thread counters grew, over the threads alive at the end (a thread that exited
/// in between takes its share along; a new thread counts from zero).
fn thread_delta(before: &HashMap<String, u64>, after: &HashMap<String, u64>) -> u64 {
    after.iter().map(|(tid, n)| n.saturating_sub(before.get(tid).copied().unwrap_or(0))).sum()
}

fn clock_ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

// ---------------------------------------------------------------------------------------------
// Figures

struct Stats {
    p50: Duration,
    p99: Duration,
    max: Duration,
}

impl Stats {
    /// Nearest-rank percentiles.
    fn of(samples: &mut [Duration]) -> Stats {
        samples.sort();
        let rank = |p: f64| samples[((p * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
        Stats { p50: rank(0.50), p99: rank(0.99), max: rank(1.0) }
    }

    fn show(&self) -> String {
        format!("p50 {} · p99 {} · max {}", fmt_ms(self.p50), fmt_ms(self.p99), fmt_ms(self.max))
    }
}

struct Sampled {
    stats: Stats,
    size: String,
    /// The server's CPU time per request (all threads), mean.
    cpu: Duration,
}

struct Idle {
    percent: f64,
    ticks: u64,
    hz: u64,
    wakeups: u64,
    /// From schedstat: finer than ticks.
    cpu: Duration,
}

struct Report {
    files: (usize, usize),
    expected_live: usize,
    floor: Duration,
    init: Duration,
    indexed: Duration,
    indexed_all: Vec<Duration>,
    logged: Option<u64>,
    log_at: Option<Duration>,
    idle: Idle,
    rss_indexed: (u64, u64),
    rss_big: (u64, u64),
    open: Duration,
    typing: Stats,
    typing_cpu: Duration,
    diag_count: usize,
    requests: Vec<(&'static str, Sampled)>,
    typed_completion: Stats,
    typed_cpu: Duration,
    elapsed: Duration,
    /// 1-minute load average at the start and the end of the bench.
    load: (String, String),
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn fmt_ms(d: Duration) -> String {
    let m = ms(d);
    if m < 10.0 { format!("{m:.2} ms") } else { format!("{m:.0} ms") }
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

fn median_u64(v: &[u64]) -> Option<u64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

fn mark(ok: bool) -> &'static str {
    if ok { "✅" } else { "❌" }
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn progress(msg: &str) {
    let _ = writeln!(std::io::stderr(), "lsp bench: {msg}");
}

/// The 1-minute load average: other work on the machine skews every figure.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cpus = thread::available_parallelism().map_or(0, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or("unknown memory".to_owned(), |k| format!("{:.1} GiB RAM", k as f64 / 1024.0 / 1024.0));
    format!("{cpus} CPUs ({model}), {mem}")
}

impl Report {
    fn print(&self) {
        let mut out = String::new();
        let mut row =
            |what: &str, target: &str, measured: String, cpu: Option<Duration>, ok: Option<bool>| {
                let ok = ok.map_or("", mark);
                let cpu = cpu.map_or("—".to_owned(), fmt_ms);
                out.push_str(&format!("| {what} | {target} | {measured} | {cpu} | {ok} |\n"));
            };
        let ms_list =
            |v: &[Duration]| v.iter().map(|d| format!("{:.0}", ms(*d))).collect::<Vec<_>>().join(", ");
        row("spawn → `initialize` answered (median of 5)", "—", fmt_ms(self.init), None, None);
        row(
            &format!(
                "spawn → indexed: `livenote.listNotes` returns all {} live notes (median of 5)",
                self.expected_live
            ),
            "< 300 ms cold",
            format!("{} (runs: {} ms)", fmt_ms(self.indexed), ms_list(&self.indexed_all)),
            None,
            Some(self.indexed < Duration::from_millis(300)),
        );
        row(
            "… spawn → the server's `indexed` log line read on stderr (median; without the last listNotes)",
            "—",
            self.log_at.map_or("not logged".to_owned(), fmt_ms),
            None,
            None,
        );
        row(
            "… the server's own figure, `indexed … in X ms` (walk + read + analyse; median)",
            "—",
            self.logged.map_or("not logged".to_owned(), |m| format!("{m} ms")),
            None,
            None,
        );
        row(
            &format!(
                "floor: walk + read all {} files ({:.1} MB) once with std::fs, page cache warm (median of 5)",
                self.files.0,
                self.files.1 as f64 / 1e6
            ),
            "—",
            fmt_ms(self.floor),
            None,
            None,
        );
        row(
            "1 MB note: keystroke → `publishDiagnostics` of that version (200)",
            "< 10 ms",
            format!("{} ({} diagnostics)", self.typing.show(), self.diag_count),
            Some(self.typing_cpu),
            Some(self.typing.p99 < Duration::from_millis(10)),
        );
        for (name, s) in &self.requests {
            let on = if name.starts_with("workspace") || name.starts_with("execute") {
                "10,001-note index"
            } else {
                "1 MB note, unchanged"
            };
            let n = if name.contains("listNotes") { SAMPLES / 4 } else { SAMPLES };
            row(
                &format!("`{name}` ({on}, {n}; answer: {})", s.size),
                "p99 < 5 ms",
                s.stats.show(),
                Some(s.cpu),
                Some(s.stats.p99 < Duration::from_millis(5)),
            );
        }
        row(
            "1 MB note: keystroke, then `completion` at once → answered (200)",
            "p99 < 5 ms",
            self.typed_completion.show(),
            Some(self.typed_cpu),
            Some(self.typed_completion.p99 < Duration::from_millis(5)),
        );
        row("1 MB note: `didOpen` → first `publishDiagnostics` (1)", "—", fmt_ms(self.open), None, None);
        row(
            &format!("idle CPU over {} s after indexing (no document open)", IDLE.as_secs()),
            "~0",
            format!(
                "{:.3} % of one core ({} ticks at {} Hz; {:.0} µs of CPU in all; {} context switches)",
                self.idle.percent,
                self.idle.ticks,
                self.idle.hz,
                self.idle.cpu.as_secs_f64() * 1e6,
                self.idle.wakeups
            ),
            None,
            Some(self.idle.percent < 0.1),
        );
        row(
            "peak RSS (VmHWM) after indexing",
            "< 50 MB",
            format!("{} (current {})", mib(self.rss_indexed.0), mib(self.rss_indexed.1)),
            None,
            Some(self.rss_indexed.0 * 1024 < 50_000_000),
        );
        row(
            "peak RSS (VmHWM) after the 1 MB note work",
            "< 50 MB",
            format!("{} (current {})", mib(self.rss_big.0), mib(self.rss_big.1)),
            None,
            Some(self.rss_big.0 * 1024 < 50_000_000),
        );
        let header = format!(
            "Machine: {}. Date: {}. Bench wall time: {:.0} s. Load average (1 min): {} at start, {} at end.\n\n\
             | Measurement | Target | Measured (wall, at the client) | Server CPU per op (mean) | |\n\
             |---|---|---|---|---|\n",
            machine(),
            chrono::Utc::now().format("%Y-%m-%d"),
            self.elapsed.as_secs_f64(),
            self.load.0,
            self.load.1
        );
        let stdout = std::io::stdout();
        let mut w = stdout.lock();
        let _ = w
            .write_all(header.as_bytes())
            .and_then(|()| w.write_all(out.as_bytes()))
            .and_then(|()| w.flush());
    }
}
