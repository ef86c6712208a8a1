//! A word when a note changes (issue 33 §2) through the real binary: `livenote tick` and
//! `livenote watch` on a real D-Bus session bus (Debian's `dbus-daemon`, a private bus per test)
//! with a small `org.freedesktop.Notifications` service on it that records what it is sent;
//! `[notify] command` and its JSON; the trust rule of that command is in tests/stdio.rs (a run by hand in an untrusted folder).
//! Time is a clock file.

// A session bus and `sh` programs: Unix only (Windows shows toasts; its build is checked by the
// Windows suite).
#![cfg(unix)]
// A skipped test says so on stdout (shown with --nocapture), as the other suites' do.
#![allow(clippy::print_stdout)]

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Workspace, command_provider, tempdir, wait_until, write};

/// One notification as the service received it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shown {
    app: String,
    summary: String,
    body: String,
}

/// The `org.freedesktop.Notifications` service of the test: it records each `Notify`.
struct Service {
    shown: Arc<Mutex<Vec<Shown>>>,
    next_id: u32,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Service {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &mut self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: std::collections::HashMap<String, zbus::OwnedVariant>,
        _expire_timeout: i32,
    ) -> u32 {
        self.shown.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(Shown {
            app: app_name,
            summary,
            body,
        });
        self.next_id += 1;
        self.next_id
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".to_owned()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        ("livenote-test".to_owned(), "livenote".to_owned(), "1".to_owned(), "1.2".to_owned())
    }

    fn close_notification(&self, _id: u32) {}
}

/// A private session bus (`dbus-daemon --session` on a socket of the test) and the service on
/// it; both end when dropped.
struct Bus {
    _dir: tempfile::TempDir,
    daemon: Child,
    address: String,
    shown: Arc<Mutex<Vec<Shown>>>,
    _runtime: tokio::runtime::Runtime,
    _conn: zbus::Connection,
}

impl Bus {
    /// `None` (after saying why) when there is no `dbus-daemon`: the test is skipped, except on
    /// CI, where tests/e2e/dbus/install.sh provides it.
    fn start() -> Option<Bus> {
        let daemon = std::env::var_os("LIVENOTE_DBUS_DAEMON").map(PathBuf::from).or_else(|| {
            ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"].map(PathBuf::from).into_iter().find(|p| p.exists())
        });
        let Some(daemon) = daemon else {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "no dbus-daemon: run `bash tests/e2e/dbus/install.sh` as root and export its output as LIVENOTE_DBUS_DAEMON"
            );
            println!(
                "skipped: no dbus-daemon (export LIVENOTE_DBUS_DAEMON=\"$(bash tests/e2e/dbus/install.sh)\", as root)"
            );
            return None;
        };
        let dir = tempdir();
        let socket = dir.path().join("bus");
        let address = format!("unix:path={}", socket.display());
        let child = Command::new(&daemon)
            .args(["--session", "--nofork", "--nopidfile", &format!("--address={address}")])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", daemon.display()));
        wait_until("the session bus's socket", 10, || socket.exists());
        let shown = Arc::new(Mutex::new(Vec::new()));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let service = Service { shown: shown.clone(), next_id: 0 };
        let conn = runtime
            .block_on(async {
                zbus::connection::Builder::address(address.as_str())
                    .name("org.freedesktop.Notifications")
                    .serve_at("/org/freedesktop/Notifications", service)
                    .build()
                    .await
            })
            .unwrap_or_else(|e| panic!("serve org.freedesktop.Notifications on {address}: {e}"));
        Some(Bus { _dir: dir, daemon: child, address, shown, _runtime: runtime, _conn: conn })
    }

    fn shown(&self) -> Vec<Shown> {
        self.shown.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// Due at 09:00:30 (its 09:00 occurrence, never run); `extra` goes into the block.
fn hourly(title: &str, extra: &str) -> String {
    format!(
        "---\nlive:\n  objective: keep it fresh\n{extra}  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# {title}\n\nold body\n"
    )
}

/// The folder's configuration: the `sh -c SCRIPT` provider `p` and `notify` (a `[notify]` body).
fn config(script: &str, notify: &str) -> String {
    format!("[agent]\nprovider = \"p\"\n{}\n[notify]\n{notify}\n", command_provider("p", script, "20s"))
}

fn tick(ws: &Workspace, bus: &Bus) -> Output {
    let clock = ws.clock().display().to_string();
    ws.livenote(&["tick", "--clock-file", &clock, "."])
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_tick_whose_run_changes_a_note_shows_one_notification_with_its_title() {
    let Some(bus) = Bus::start() else { return };
    let dir = tempdir();
    write(&dir.path().join("weather.md"), &hourly("Weather", "  notify: changes\n"));
    // `false`: its run changes it too, and nothing is said of it.
    write(&dir.path().join("quiet.md"), &hourly("Quiet", "  notify: false\n"));
    let ws = Workspace::in_dir(dir, &config("printf 'new body\\nsecond line\\n'", "desktop = true"));
    ws.set_clock("2026-11-23T09:00:30Z");
    let out = tick(&ws, &bus);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown = bus.shown();
    assert_eq!(
        shown,
        [Shown {
            app: "livenote".to_owned(),
            summary: "Weather changed: 2 lines added, 1 removed".to_owned(),
            body: "Updated: new body".to_owned(),
        }],
        "{}",
        stderr(&out)
    );
    // The next tick runs nothing and says nothing.
    ws.set_clock("2026-11-23T09:01:30Z");
    let again = tick(&ws, &bus);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(bus.shown().len(), 1, "{:?}", bus.shown());
}

#[test]
fn several_notes_changed_in_one_tick_are_one_digest() {
    let Some(bus) = Bus::start() else { return };
    let dir = tempdir();
    for name in ["alpha", "beta", "gamma"] {
        write(&dir.path().join(format!("{name}.md")), &hourly(name, "  notify: changes\n"));
    }
    // Unchanged by its run: not a change, not said.
    write(
        &dir.path().join("same.md"),
        &hourly("Same", "  notify: changes\n").replace("old body", "new body"),
    );
    let ws = Workspace::in_dir(dir, &config("printf 'new body\\n'", "desktop = true"));
    ws.set_clock("2026-11-23T09:00:30Z");
    let out = tick(&ws, &bus);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown = bus.shown();
    assert_eq!(shown.len(), 1, "{shown:?}\n{}", stderr(&out));
    assert_eq!(shown[0].summary, "3 notes changed");
    let mut lines: Vec<&str> = shown[0].body.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "alpha changed: 1 line added, 1 removed",
            "beta changed: 1 line added, 1 removed",
            "gamma changed: 1 line added, 1 removed"
        ]
    );
}

#[test]
fn a_failure_is_said_by_default_and_desktop_false_shows_nothing() {
    let Some(bus) = Bus::start() else { return };
    // No `notify` key: a scheduled run's failure is said; with `desktop = false`, not on the desktop.
    let ws =
        Workspace::with_note(&config("echo broken >&2; exit 3", "desktop = true"), &hourly("Failing", ""));
    ws.set_clock("2026-11-23T09:00:30Z");
    let out = tick(&ws, &bus);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let shown = bus.shown();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].summary.starts_with("Failing failed: "), "{shown:?}");
    assert!(shown[0].summary.contains("broken"), "{shown:?}");

    let bus = Bus::start().unwrap_or_else(|| panic!("the bus started a moment ago"));
    let off =
        Workspace::with_note(&config("echo broken >&2; exit 3", "desktop = false"), &hourly("Failing", ""));
    off.set_clock("2026-11-23T09:00:30Z");
    let out = tick(&off, &bus);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("notify Failing failed"),
        "told, only not on the desktop: {}",
        stderr(&out)
    );
    assert_eq!(bus.shown(), []);
}

#[test]
fn watch_shows_a_changed_note_then_a_digest_of_the_rest_of_the_minute() {
    let Some(bus) = Bus::start() else { return };
    let dir = tempdir();
    write(&dir.path().join("first.md"), &hourly("First", "  notify: changes\n"));
    let ws = Workspace::in_dir(dir, &config("printf 'new body\\n'", "desktop = true"));
    ws.set_clock("2026-11-23T09:00:30Z");
    let clock = ws.clock().display().to_string();
    let mut w =
        ws.watch_env(&["--clock-file", &clock], &[("DBUS_SESSION_BUS_ADDRESS", bus.address.as_str())]);
    w.wait_for("notify First changed");
    wait_until("the first notification", 20, || bus.shown().len() == 1);
    assert_eq!(bus.shown()[0].summary, "First changed: 1 line added, 1 removed");
    // Two more notes change within the minute: they wait for its end, then come as one.
    write(&ws.root.join("second.md"), &hourly("Second", "  notify: changes\n"));
    write(&ws.root.join("third.md"), &hourly("Third", "  notify: changes\n"));
    wait_until("both runs", 20, || common::done_runs(&ws.root) == 3);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(bus.shown().len(), 1, "held until the minute ends: {:?}", bus.shown());
    ws.set_clock("2026-11-23T09:01:31Z");
    w.wait_for("notify 2 notes changed");
    wait_until("the digest", 20, || bus.shown().len() == 2);
    assert_eq!(bus.shown()[1].summary, "2 notes changed");
    let lines = w.stop();
    assert_eq!(lines.iter().filter(|l| l.contains(" notify ")).count(), 2, "{lines:#?}");
}

#[test]
fn the_command_hook_gets_one_json_object_per_run_told() {
    let Some(bus) = Bus::start() else { return };
    let out_dir = tempdir();
    let got = out_dir.path().join("got.jsonl");
    let hook =
        format!("command = [\"sh\", \"-c\", \"cat >> '{}'; echo >> '{}'\"]", got.display(), got.display());
    let ws =
        Workspace::with_note(&config("printf 'new body\\n'", &hook), &hourly("Weather", "  notify: all\n"));
    ws.set_clock("2026-11-23T09:00:30Z");
    let out = tick(&ws, &bus);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text =
        std::fs::read_to_string(&got).unwrap_or_else(|e| panic!("the hook ran: {e}\n{}", stderr(&out)));
    let objects: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(objects.len(), 1, "{text}");
    let o = &objects[0];
    let run_id = o["runId"].as_str().unwrap_or_default();
    assert!(
        ws.note().contains(&format!("lastRunId: {run_id}"))
            || ws.note().contains(&format!("lastRunId: \"{run_id}\"")),
        "{}",
        ws.note()
    );
    assert_eq!(
        o,
        &serde_json::json!({
            "note": ws.root.join("n.md"),
            "title": "Weather",
            "trigger": "schedule",
            "outcome": "changed",
            "summary": "Updated: new body",
            "added": 1,
            "removed": 1,
            "runId": run_id,
        })
    );
    // `desktop` not set: nothing on the desktop.
    assert_eq!(bus.shown(), []);
}

#[test]
fn a_hook_that_hangs_is_killed_and_logged_and_the_tick_still_ends() {
    let Some(bus) = Bus::start() else { return };
    let ws = Workspace::with_note(
        &config("printf 'new body\\n'", "command = [\"sh\", \"-c\", \"sleep 600\"]"),
        &hourly("Weather", "  notify: changes\n"),
    );
    ws.set_clock("2026-11-23T09:00:30Z");
    let started = std::time::Instant::now();
    let out = tick(&ws, &bus);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    assert!(stderr(&out).contains("notify command"), "{}", stderr(&out));
}

/// An event run is told as `event`; by default (no `notify` key) only its failure would be, so
/// its change is told here because the note asks for `changes`. No desktop: no bus needed.
#[test]
fn an_event_run_is_told_as_an_event() {
    let out_dir = tempdir();
    let got = out_dir.path().join("got.jsonl");
    let hook =
        format!("command = [\"sh\", \"-c\", \"cat >> '{}'; echo >> '{}'\"]", got.display(), got.display());
    let note = "---\nlive:\n  objective: mail\n  notify: changes\n  triggers:\n    eventMatchCriteria: mail from the bank\n---\n# Mail\n\nold mail\n";
    let ws = Workspace::with_note(&config("printf 'handled\\n'", &hook), note);
    ws.set_clock("2026-11-23T09:00:30Z");
    let mut child = ws
        .livenote(&["event", "--source", "bank", "--type", "mail.received", "--target", "n.md", "."])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    if let Some(mut stdin) = child.stdin.take() {
        std::io::Write::write_all(&mut stdin, b"a letter from the bank").unwrap_or_else(|e| panic!("{e}"));
    }
    let queued = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    assert!(queued.status.success(), "{}", stderr(&queued));
    let clock = ws.clock().display().to_string();
    let out = ws
        .livenote(&["tick", "--clock-file", &clock, "."])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text =
        std::fs::read_to_string(&got).unwrap_or_else(|e| panic!("the hook ran: {e}\n{}", stderr(&out)));
    let o: serde_json::Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(
        (&o["trigger"], &o["outcome"], &o["title"]),
        (&serde_json::json!("event"), &serde_json::json!("changed"), &serde_json::json!("Mail")),
        "{o}"
    );
    assert!(stderr(&out).contains("notify Mail changed: 1 line added, 1 removed"), "{}", stderr(&out));
}
