//! Helpers shared by the test crates that work on real files and run the `livenote` binary
//! (`events.rs`, `runs.rs`, `faults.rs`). Each `tests/*.rs` file is a crate of its own and
//! includes this module with `mod common;`.

// Every crate that includes this module uses only some of its helpers; the others would be
// reported as dead code in that crate.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

/// Write `text` to `path`, creating its folder first.
pub fn write(path: &Path, text: &str) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// The names in `dir`, sorted, without hidden ones (such as the temp files of atomic writes);
/// none when `dir` does not exist.
pub fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.retain(|n| !n.starts_with('.'));
    v.sort();
    v
}

/// How many runs under `root` finished successfully: their transcripts
/// (`.livenote/runs/*.jsonl`) hold a `done` record.
pub fn done_runs(root: &Path) -> usize {
    std::fs::read_dir(root.join(".livenote/runs"))
        .map(|r| {
            r.flatten()
                .filter(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("\"kind\":\"done\"")))
                .count()
        })
        .unwrap_or(0)
}

/// A `[providers.NAME]` table for a `sh -c SCRIPT` command provider.
pub fn command_provider(name: &str, script: &str, timeout: &str) -> String {
    format!(
        "[providers.{name}]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", {script:?}]\ntimeout = \"{timeout}\"\n"
    )
}

/// A workspace config whose default provider `p` is `sh -c SCRIPT`.
pub fn command_config(script: &str) -> String {
    format!("[agent]\nprovider = \"p\"\n{}", command_provider("p", script, "20s"))
}

/// The event id an event run's context names (`id `...``).
pub fn event_id_in(context: &str) -> String {
    context.split("id `").nth(1).and_then(|s| s.split('`').next()).unwrap_or_default().to_owned()
}

/// Poll `cond` every few milliseconds for up to `secs` seconds (real child processes and real
/// files only, never the schedule).
pub fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("timed out waiting for {what}");
}

/// A folder with a `.livenote.toml`, trusted (`livenote trust .`) in a data folder of its own,
/// for the `livenote` binary to run in.
pub struct Workspace {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    /// `LIVENOTE_DATA_DIR` and `LIVENOTE_CONFIG_DIR` of every command; the clock file too.
    pub data: tempfile::TempDir,
}

impl Workspace {
    /// A workspace with one note, `n.md`.
    pub fn with_note(config: &str, note: &str) -> Workspace {
        let dir = tempdir();
        write(&dir.path().join("n.md"), note);
        Workspace::in_dir(dir, config)
    }

    /// `dir`, with what it holds, as a workspace.
    pub fn in_dir(dir: tempfile::TempDir, config: &str) -> Workspace {
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        write(&root.join(".livenote.toml"), config);
        let ws = Workspace { _dir: dir, root, data: tempdir() };
        let out = ws.livenote(&["trust", "."]).output().unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        ws
    }

    /// `livenote ARGS` in the workspace, logging at info level, in UTC.
    pub fn livenote(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_livenote"));
        c.args(args)
            .current_dir(&self.root)
            .env("LIVENOTE_DATA_DIR", self.data.path())
            .env("LIVENOTE_CONFIG_DIR", self.data.path())
            .env("LIVENOTE_LOG", "info")
            .env("TZ", "UTC");
        c
    }

    /// The file holding what the source `name` of this workspace has seen, once livenote kept
    /// any: in the data folder (`sources/<folder>/NAME.json`), never in the workspace.
    pub fn source_state(&self, name: &str) -> Option<PathBuf> {
        source_state_in(self.data.path(), name)
    }

    /// The text of `n.md` (empty when it cannot be read).
    pub fn note(&self) -> String {
        std::fs::read_to_string(self.root.join("n.md")).unwrap_or_default()
    }

    /// The clock file (`--clock-file`): the time the commands given it take for now.
    pub fn clock(&self) -> PathBuf {
        self.data.path().join("clock")
    }

    /// Set the clock file to the instant `at`, atomically.
    pub fn set_clock(&self, at: &str) {
        let tmp = self.clock().with_extension("tmp");
        write(&tmp, at);
        std::fs::rename(&tmp, self.clock()).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Start `livenote watch OPTIONS .` and wait until it has indexed the folder.
    pub fn watch(&self, options: &[&str]) -> Watcher {
        self.watch_env(options, &[])
    }

    /// [`Workspace::watch`] with variables added to its environment (`LIVENOTE_HOST`).
    pub fn watch_env(&self, options: &[&str], env: &[(&str, &str)]) -> Watcher {
        let mut args = vec!["watch"];
        args.extend_from_slice(options);
        args.push(".");
        let mut command = self.livenote(&args);
        command.envs(env.iter().copied());
        let mut child =
            command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("{e}"));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut w = Watcher { child, lines: rx, seen: Vec::new() };
        w.wait_for("watch ");
        w
    }

    /// `livenote watch --clock-file <clock> .`: a watcher whose time is the clock file.
    pub fn watch_clock(&self) -> Watcher {
        let clock = self.clock().display().to_string();
        self.watch(&["--clock-file", &clock])
    }
}

/// The state file of the source `name` under the data folder `data` (the one workspace whose
/// sources keep their states there), if there is one.
pub fn source_state_in(data: &Path, name: &str) -> Option<PathBuf> {
    let folders = std::fs::read_dir(data.join("sources")).ok()?;
    folders.flatten().map(|f| f.path().join(format!("{name}.json"))).find(|p| p.is_file())
}

/// A running `livenote watch` and the lines of its log (stderr).
pub struct Watcher {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Watcher {
    /// Wait (up to 20 s) for a log line containing `needle`.
    pub fn wait_for(&mut self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_millis(50)) {
                let hit = line.contains(needle);
                self.seen.push(line);
                if hit {
                    return;
                }
            }
        }
        panic!("watcher never logged {needle:?}: {:?}", self.seen)
    }

    /// Kill it; return every line it logged.
    pub fn stop(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let rest: Vec<String> = self.lines.try_iter().collect();
        self.seen.extend(rest);
        std::mem::take(&mut self.seen)
    }
}

/// A test that fails before `stop` leaves no `livenote watch` running behind it.
impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Read a language server's stdout as framed JSON-RPC on a thread of its own; each message
/// arrives on the returned channel. Anything but a frame (a stray print) or a body that is not
/// JSON fails the test: stdout must carry only the protocol.
pub fn read_frames(stdout: std::process::ChildStdout) -> mpsc::Receiver<serde_json::Value> {
    use std::io::Read;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut len = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let Some(v) = line.strip_prefix("Content-Length: ") else {
                    panic!("stdout carried a non-protocol line: {line:?}")
                };
                len = v.parse::<usize>().ok();
            }
            let Some(len) = len else { return };
            let mut body = vec![0; len];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            let v = serde_json::from_slice::<serde_json::Value>(&body)
                .unwrap_or_else(|e| panic!("stdout carried invalid JSON: {e}"));
            if tx.send(v).is_err() {
                return;
            }
        }
    });
    rx
}

/// The processes running now, each as `(pid, process group, state letter)` (`R`, `S`, `Z`...).
/// Linux: read from /proc. Elsewhere (macOS has no /proc): `ps`, which asks the kernel.
#[cfg(target_os = "linux")]
pub fn processes() -> Vec<(i32, i32, char)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its ')'.
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            Some((pid, fields.get(2)?.parse().ok()?, fields.first()?.chars().next()?))
        })
        .collect()
}

/// The processes running now, each as `(pid, process group, state letter)` (`R`, `S`, `Z`...).
/// Linux: read from /proc. Elsewhere (macOS has no /proc): `ps`, which asks the kernel.
#[cfg(not(target_os = "linux"))]
pub fn processes() -> Vec<(i32, i32, char)> {
    let out = Command::new("ps")
        .args(["-A", "-o", "pid=", "-o", "pgid=", "-o", "stat="])
        .output()
        .unwrap_or_else(|e| panic!("ps: {e}"));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?, f.next()?.chars().next()?))
        })
        .collect()
}

/// Whether process `pid` still runs (a zombie waiting for its reaper runs nothing).
pub fn running(pid: i32) -> bool {
    processes().iter().any(|&(p, _, state)| p == pid && state != 'Z')
}

/// Whether any process of group `pgid` still runs (zombies do not count).
pub fn group_running(pgid: i32) -> bool {
    processes().iter().any(|&(_, g, state)| g == pgid && state != 'Z')
}

/// Read a pipe to its end on a thread, so a chatty child never blocks on a full pipe.
pub fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Wait for `child` up to `timeout`; kill it after that (`None`).
pub fn wait_or_kill(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if started.elapsed() < timeout => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Err(e) => panic!("wait for the child process: {e}"),
        }
    }
}

/// `livenote mcp` over stdio, driven by raw JSON-RPC: one message a line each way.
pub struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<serde_json::Value>,
    next: i64,
}

impl Mcp {
    pub fn start(root: &Path, data: &Path) -> Mcp {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(["mcp", "."])
            .current_dir(root)
            .env("LIVENOTE_DATA_DIR", data)
            .env("LIVENOTE_CONFIG_DIR", data)
            .env("TZ", "UTC")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let v = serde_json::from_str::<serde_json::Value>(&line)
                    .unwrap_or_else(|e| panic!("{e}: {line}"));
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let mut mcp = Mcp { child, stdin, lines, next: 1 };
        mcp.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        mcp.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    pub fn send(&mut self, msg: &serde_json::Value) {
        writeln!(self.stdin, "{msg}").unwrap_or_else(|e| panic!("{e}"));
        self.stdin.flush().unwrap_or_else(|e| panic!("{e}"));
    }

    pub fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let id = self.next;
        self.next += 1;
        self.send(&serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.lines.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
            if msg["id"] == id {
                return msg;
            }
        }
    }

    /// A tool call's answer: whether it is a tool error, and its text.
    pub fn call(&mut self, tool: &str, args: serde_json::Value) -> (bool, String) {
        let r = self.request("tools/call", serde_json::json!({"name": tool, "arguments": args}));
        let text = r["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        (r["result"]["isError"] == true, text)
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
