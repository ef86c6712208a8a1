//! See the suite's header in containment.rs.
//!
//! Issue 21, section 7: the user's own programs and a clone. In an untrusted folder a user's
//! `command` provider starts in a neutral folder, with the workspace in `LIVENOTE_WORKSPACE`
//! and none of the folder's entries on its PATH (a clone's `.npmrc` or `bin/npx` is not picked
//! up). And SIGTERM or SIGHUP to `livenote run`, `watch` or `tick` (`systemctl stop`, a closed
//! terminal) ends the provider's whole process group, as Ctrl-C does.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use crate::common::{Workspace, tempdir, wait_until, write};

const NOTE: &str = "---\nlive:\n  objective: say where you ran\n---\n# N\n\nold body\n";

fn executable(path: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(path, script);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap_or_else(|e| panic!("{e}"));
}

/// A user's `command` provider (the user's config, not the folder's) run by hand in a folder
/// that is not trusted and ships its own `.npmrc`, `bin/hello` and `hello2`, with the user's
/// PATH naming the folder's `bin/` and `.`: the program runs in an empty folder of its own,
/// learns the workspace from `LIVENOTE_WORKSPACE`, and finds none of the folder's programs.
#[test]
fn user_programs_start_outside_an_untrusted_folder() {
    let dir = tempdir();
    let data = tempdir();
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    write(&root.join("n.md"), NOTE);
    write(&root.join(".npmrc"), "registry=http://127.0.0.1:9/\n");
    executable(&root.join("bin/hello"), "#!/bin/sh\necho PWNED-bin\n");
    executable(&root.join("hello2"), "#!/bin/sh\necho PWNED-dot\n");
    let script = "echo \"pwd=$(pwd)\"; echo \"ws=$LIVENOTE_WORKSPACE\"; ls -A; \
                  hello 2>/dev/null || echo no-hello; hello2 2>/dev/null || echo no-hello2";
    write(
        &data.path().join("config.toml"),
        &format!("[agent]\nprovider = \"p\"\n{}", crate::common::command_provider("p", script, "20s")),
    );
    let path = format!("{}:.:{}", root.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["run", "n.md"])
        .current_dir(&root)
        .env("PATH", &path)
        .env("LIVENOTE_DATA_DIR", data.path())
        .env("LIVENOTE_CONFIG_DIR", data.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = std::fs::read_to_string(root.join("n.md")).unwrap_or_default();
    let ran_in = text
        .lines()
        .find_map(|l| l.strip_prefix("pwd="))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no pwd line: {text}"));
    assert!(!ran_in.starts_with(&root), "ran in the clone: {text}");
    assert!(!ran_in.exists(), "the neutral folder is removed after the run: {}", ran_in.display());
    assert!(text.contains(&format!("ws={}\n", root.display())), "{text}");
    assert!(!text.contains(".npmrc") && !text.contains("PWNED"), "{text}");
    assert!(text.contains("no-hello\nno-hello2\n"), "{text}");

    // Once trusted, the folder is the program's working folder again, as it always was.
    let trusted = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["trust", "."])
        .current_dir(&root)
        .env("LIVENOTE_DATA_DIR", data.path())
        .env("LIVENOTE_CONFIG_DIR", data.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["run", "n.md"])
        .current_dir(&root)
        .env("LIVENOTE_DATA_DIR", data.path())
        .env("LIVENOTE_CONFIG_DIR", data.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(root.join("n.md")).unwrap_or_default();
    assert!(text.contains(&format!("pwd={}\n", root.display())) && text.contains(".npmrc"), "{text}");
}

/// Whether process `pid` is still running (a zombie waiting for its reaper counts as ended).
fn running(pid: i32) -> bool {
    crate::common::running(pid)
}

/// The provider: starts a long `sleep` in its process group and records its pid, then waits.
const SLEEPER: &str = "sleep 300 & echo $! > sleeper.pid; wait";

fn sleeper_pid(root: &Path) -> i32 {
    let file = root.join("sleeper.pid");
    wait_until("the provider's child", 20, || {
        std::fs::read_to_string(&file).is_ok_and(|t| t.trim().parse::<i32>().is_ok())
    });
    std::fs::read_to_string(&file).unwrap_or_default().trim().parse().unwrap_or_default()
}

/// Send `signal` to `livenote`, then: it exits, and the provider's child is gone.
fn signal_and_check(mut livenote: Child, sleeper: i32, signal: Signal) {
    assert!(running(sleeper));
    let pid = Pid::from_raw(i32::try_from(livenote.id()).unwrap_or_default());
    kill(pid, signal).unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while livenote.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let exited = livenote.try_wait().ok().flatten().is_some();
    let _ = livenote.kill();
    // The group is killed as livenote ends; a moment for the kernel to deliver it.
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(sleeper) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let outlived = running(sleeper);
    // Whatever happened, the test leaves no sleeper behind.
    let _ = kill(Pid::from_raw(sleeper), Signal::SIGKILL);
    assert!(exited, "livenote did not exit after {signal}");
    assert!(!outlived, "the provider's child {sleeper} outlived livenote after {signal}");
}

fn run_then(signal: Signal) {
    let ws = Workspace::with_note(&crate::common::command_config(SLEEPER), NOTE);
    start_then(&ws, &["run", "n.md"], signal);
}

/// Start `livenote ARGS` in `ws`, wait for its provider's child, then [`signal_and_check`].
fn start_then(ws: &Workspace, args: &[&str], signal: Signal) {
    let child = ws
        .livenote(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let sleeper = sleeper_pid(&ws.root);
    signal_and_check(child, sleeper, signal);
}

#[test]
fn sigterm_to_run_ends_the_providers_group() {
    run_then(Signal::SIGTERM);
}

#[test]
fn sighup_to_run_ends_the_providers_group() {
    run_then(Signal::SIGHUP);
}

fn watch_then(signal: Signal) {
    let cron = "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"* * * * *\"\n  lastRunAt: \"2026-11-23T08:59:10.000Z\"\n---\n# N\n\nold\n";
    let ws = Workspace::with_note(&crate::common::command_config(SLEEPER), cron);
    ws.set_clock("2026-11-23T09:00:20Z");
    let clock = ws.clock().display().to_string();
    start_then(&ws, &["watch", "--clock-file", &clock, "."], signal);
}

#[test]
fn sigterm_to_watch_ends_the_providers_group() {
    watch_then(Signal::SIGTERM);
}

#[test]
fn sighup_to_watch_ends_the_providers_group() {
    watch_then(Signal::SIGHUP);
}

/// `livenote tick` under a systemd timer is stopped with SIGTERM (`systemctl stop`, a shutdown):
/// its runs' programs end with it, as `watch`'s do.
#[test]
fn sigterm_to_tick_ends_the_providers_group() {
    let cron = "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"* * * * *\"\n  lastRunAt: \"2026-11-23T08:59:10.000Z\"\n---\n# N\n\nold\n";
    let ws = Workspace::with_note(&crate::common::command_config(SLEEPER), cron);
    ws.set_clock("2026-11-23T09:00:20Z");
    let clock = ws.clock().display().to_string();
    start_then(&ws, &["tick", "--clock-file", &clock, "."], Signal::SIGTERM);
}

/// `livenote lsp` ends on SIGTERM and SIGHUP too (its runs' groups end with it, as above).
#[test]
fn sigterm_and_sighup_end_the_language_server() {
    for signal in [Signal::SIGTERM, Signal::SIGHUP] {
        let dir = tempdir();
        let mut lsp = Command::new(env!("CARGO_BIN_EXE_livenote"))
            .arg("lsp")
            .current_dir(dir.path())
            .env("LIVENOTE_DATA_DIR", dir.path().join(".data"))
            .env("LIVENOTE_CONFIG_DIR", dir.path().join(".data"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        // Once it answers `initialize` it is serving, its signal handlers in place.
        let stdout = lsp.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let frames = crate::common::read_frames(stdout);
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
            .to_string();
        let mut stdin = lsp.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        write!(stdin, "Content-Length: {}\r\n\r\n{init}", init.len()).unwrap_or_else(|e| panic!("{e}"));
        stdin.flush().unwrap_or_else(|e| panic!("{e}"));
        let answer = frames.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(answer["id"], 1, "{answer}");
        let pid = Pid::from_raw(i32::try_from(lsp.id()).unwrap_or_default());
        kill(pid, signal).unwrap_or_else(|e| panic!("{e}"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while lsp.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let status = lsp.try_wait().ok().flatten();
        drop(stdin);
        let _ = lsp.kill();
        let _ = lsp.wait();
        // Ended by the handler (exit 1), not by the signal's default action.
        assert_eq!(status.and_then(|s| s.code()), Some(1), "{signal}: {status:?}");
    }
}
