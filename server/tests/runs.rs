//! Runs with real processes and real files: several `livenote watch` processes on one folder
//! fire each cycle once, and a run killed with SIGKILL leaves a readable note that is retried
//! after the backoff. Time is a file the test writes (`--clock-file`), never slept on.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{Watcher, Workspace, command_config, done_runs, wait_until};

const MINUTELY: &str = "---\nlive:\n  objective: count\n  triggers:\n    cronExpr: \"* * * * *\"\n  lastRunAt: \"2026-11-23T08:59:10.000Z\"\n---\n# Count\n\nold body\n";

#[test]
fn three_watchers_fire_each_cycle_once() {
    let ws = Workspace::with_note(&command_config("date +%s%N"), MINUTELY);
    ws.set_clock("2026-11-23T08:59:20Z");
    let watchers: Vec<Watcher> = (0..3).map(|_| ws.watch_clock()).collect();
    // Three cycles of a per-minute cron; the 5-minute backoff spaces fires out.
    for (i, t) in ["2026-11-23T09:00:30Z", "2026-11-23T09:06:30Z", "2026-11-23T09:12:30Z"].iter().enumerate()
    {
        ws.set_clock(t);
        wait_until(&format!("run {}", i + 1), 20, || done_runs(&ws.root) == i + 1);
        // Give the other watchers every chance to fire the same cycle again.
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(done_runs(&ws.root), i + 1, "cycle {} fired more than once:\n{}", i + 1, ws.note());
    }
    let logs: Vec<Vec<String>> = watchers.into_iter().map(Watcher::stop).collect();
    let fires: usize = logs.iter().flatten().filter(|l| l.contains("fire n.md")).count();
    assert!(fires >= 3, "{logs:#?}");
    let text = ws.note();
    assert!(text.contains("lastRunAt: \"2026-11-23T09:12:30.000Z\""), "{text}");
}

#[test]
fn kill_9_mid_run_leaves_a_readable_note_retried_after_the_backoff() {
    let note = "---\nlive:\n  objective: slow\n---\n# Slow\n\nold body\n";
    let ws = Workspace::with_note(&command_config("sleep 3; echo new body"), note);
    ws.set_clock("2026-11-23T09:00:00Z");
    let mut run = ws
        .livenote(&["run", "n.md", "--clock-file", &ws.clock().display().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    wait_until("the run to start", 20, || ws.note().contains("lastRunId"));
    // SIGKILL: no cleanup of any kind.
    run.kill().unwrap_or_else(|e| panic!("{e}"));
    let _ = run.wait();
    let text = ws.note();
    let analysis = livenote::note::analyze(&text, &livenote::note::Options::default());
    assert!(!analysis.has_errors(), "{text}");
    assert!(text.ends_with("# Slow\n\nold body\n"), "the body changed:\n{text}");
    assert!(text.contains("lastAttemptAt: \"2026-11-23T09:00:00.000Z\""), "{text}");
    assert!(!text.contains("lastRunAt"), "{text}");
    // Make the note scheduled; within the backoff nothing fires, after it the run happens.
    let scheduled =
        text.replace("  objective: slow\n", "  objective: slow\n  triggers:\n    cronExpr: \"0 * * * *\"\n");
    std::fs::write(ws.root.join("n.md"), &scheduled).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        ws.root.join(".livenote.toml"),
        "[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"echo\", \"new body\"]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // A changed config needs trust again.
    let trusted = ws.livenote(&["trust", "."]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
    ws.set_clock("2026-11-23T09:04:59Z");
    let w = ws.watch_clock();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(done_runs(&ws.root), 0, "fired inside the backoff");
    ws.set_clock("2026-11-23T09:05:00Z");
    wait_until("the retried run", 20, || done_runs(&ws.root) == 1);
    w.stop();
    let text = ws.note();
    assert!(text.ends_with("# Slow\n\nnew body\n"), "{text}");
    assert!(text.contains("lastRunError: null"), "{text}");
}

/// A run held by `livenote watch` can be stopped from elsewhere: `livenote stop NOTE`, and the
/// run engine of another process (what the editor's *Stop* calls). The holder stops as Stop
/// does: `lastRunError: "stopped"`, the body untouched.
#[test]
fn a_run_held_by_watch_is_stopped_from_another_process() {
    let note =
        "---\nlive:\n  objective: slow\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Slow\n\nold body\n";
    let ws = Workspace::with_note(&command_config("sleep 30; echo new body"), note);
    ws.set_clock("2026-11-23T09:00:00Z");
    let w = ws.watch_clock();
    let store = livenote::runs::Store::new(&ws.root);
    wait_until("watch to start the run", 20, || store.is_locked("n.md"));
    let out = ws.livenote(&["stop", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("stopped n.md (run by process "), "{out:?}");
    wait_until("the stop to be recorded", 20, || ws.note().contains("lastRunError: \"stopped\""));
    let text = ws.note();
    assert!(text.ends_with("# Slow\n\nold body\n"), "{text}");
    assert!(!store.is_locked("n.md"));
    // Nothing to stop now.
    let out = ws.livenote(&["stop", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("n.md is not running"), "{out:?}");
    w.stop();
}

/// The editor's *Stop* goes through its own engine, which is not the one running the note:
/// the request reaches the `livenote watch` that is.
#[tokio::test]
async fn stop_from_another_engine_reaches_the_holder() {
    use livenote::runs::{DiskIo, Engine};
    let note =
        "---\nlive:\n  objective: slow\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Slow\n\nold body\n";
    let ws = Workspace::with_note(&command_config("sleep 30; echo new body"), note);
    ws.set_clock("2026-11-23T09:00:00Z");
    let w = ws.watch_clock();
    let store = livenote::runs::Store::new(&ws.root);
    wait_until("watch to start the run", 20, || store.is_locked("n.md"));
    let (config, _) = livenote::config::Config::load_with(Some(&ws.root), None, &|_: &str| None);
    let editor = Engine::new(
        &ws.root,
        std::sync::Arc::new(livenote::schedule::ManualClock::new(chrono::Utc::now())),
        livenote::schedule::Zone::Named(chrono_tz::UTC),
        std::sync::Arc::new(DiskIo),
        config,
        None,
    );
    assert!(editor.is_running(&ws.root.join("n.md")), "the editor sees the run");
    assert!(editor.stop(&ws.root.join("n.md")), "the editor's Stop found the run");
    wait_until("the stop to be recorded", 20, || ws.note().contains("lastRunError: \"stopped\""));
    w.stop();
}

/// A run names the local zone by its IANA name, also when `TZ` is unset (the system's zone),
/// never "local": `LIVENOTE_TIME_ZONE` (and `timeZone` on stdin) of a `command` provider.
#[test]
fn runs_name_the_local_zone_by_its_iana_name() {
    let note = "---\nlive:\n  objective: zone\n---\n# Zone\n\nold body\n";
    let ws = Workspace::with_note(&command_config("echo \"zone=$LIVENOTE_TIME_ZONE\""), note);
    let expected = iana_time_zone::get_timezone().unwrap_or_else(|e| panic!("{e}"));
    let out = ws.livenote(&["run", "n.md"]).env_remove("TZ").output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(ws.note().ends_with(&format!("\nzone={expected}\n")), "{}", ws.note());
    let out =
        ws.livenote(&["run", "n.md"]).env("TZ", "America/Chicago").output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(ws.note().ends_with("\nzone=America/Chicago\n"), "{}", ws.note());
}

/// A folder inside the watched one with its own `.livenote.toml` is a root of its own: `watch`
/// fires its notes with its provider and keeps their runs in its own `.livenote/`; one it does
/// not trust yet fires nothing (and `watch` says so) until it is trusted, whatever the trust of
/// the folder around it.
#[test]
fn watch_runs_a_nested_root_with_its_own_config_and_trust() {
    let dir = common::tempdir();
    let inner = dir.path().join("inner");
    common::write(&inner.join(".livenote.toml"), &command_config("echo inner body"));
    common::write(&inner.join("n.md"), MINUTELY);
    common::write(&dir.path().join("n.md"), MINUTELY);
    let ws = Workspace::in_dir(dir, &command_config("echo outer body"));
    let inner = ws.root.join("inner");
    ws.set_clock("2026-11-23T08:59:20Z");
    let mut w = ws.watch_clock();
    w.wait_for(&format!("untrusted {}", inner.display()));
    ws.set_clock("2026-11-23T09:00:30Z");
    // The outer note runs (so the watcher is firing) ...
    wait_until("the outer run", 20, || ws.note().ends_with("# Count\n\nouter body\n"));
    std::thread::sleep(Duration::from_millis(300));
    // ... the inner one does not, on the outer folder's trust.
    let read = || std::fs::read_to_string(inner.join("n.md")).unwrap_or_default();
    assert!(read().ends_with("# Count\n\nold body\n"), "{}", read());
    let out = ws.livenote(&["trust", "inner"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    wait_until("the inner run", 20, || read().ends_with("# Count\n\ninner body\n"));
    // Each root's run is kept in its own `.livenote/`.
    wait_until("the inner run's record", 20, || done_runs(&inner) == 1);
    let lines = w.stop();
    assert_eq!(done_runs(&ws.root), 1, "{lines:?}");
}

/// A `.livenote.toml` written into a folder while `watch` runs makes it a root of its own from
/// that file event on: its notes then run with its provider once it is trusted.
#[test]
fn watch_adopts_a_nested_root_that_appears() {
    let dir = common::tempdir();
    common::write(&dir.path().join("inner/n.md"), MINUTELY);
    let ws = Workspace::in_dir(dir, &command_config("echo outer body"));
    let inner = ws.root.join("inner");
    ws.set_clock("2026-11-23T08:59:20Z");
    let mut w = ws.watch_clock();
    common::write(&inner.join(".livenote.toml"), &command_config("echo inner body"));
    w.wait_for("reroot ");
    let out = ws.livenote(&["trust", "inner"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    ws.set_clock("2026-11-23T09:00:30Z");
    let read = || std::fs::read_to_string(inner.join("n.md")).unwrap_or_default();
    wait_until("the inner run", 20, || read().ends_with("# Count\n\ninner body\n"));
    wait_until("the inner run's record", 20, || done_runs(&inner) == 1);
    w.stop();
}

/// `livenote list --format json --at AT` in the workspace: the items, parsed.
fn list_at(ws: &Workspace, at: &str) -> Vec<serde_json::Value> {
    let out =
        ws.livenote(&["list", "--format", "json", "--at", at]).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// A failing note backs off exponentially per consecutive failure (5, then 10 minutes ...),
/// `list` says when it retries and how often it failed, and a run by hand that succeeds
/// resets the count (SPEC 3). Time from the clock file.
#[test]
fn consecutive_failures_back_off_exponentially_and_list_shows_the_retry() {
    let note = "---\nlive:\n  objective: flaky\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T08:00:01.000Z\"\n---\n# Flaky\n\nold body\n";
    let ws = Workspace::with_note(
        &command_config("test -e broken && { echo down >&2; exit 3; }; echo fixed"),
        note,
    );
    common::write(&ws.root.join("broken"), "");
    ws.set_clock("2026-11-23T09:00:30Z");
    let w = ws.watch_clock();
    wait_until("the first failure", 20, || ws.note().contains("failures: 1\n"));
    // The first backoff is 5 minutes: the retry at 09:05:30 fails too.
    ws.set_clock("2026-11-23T09:05:31Z");
    wait_until("the second failure", 20, || ws.note().contains("failures: 2\n"));
    // Now 10 minutes: at 09:12 (past the old fixed 5 minutes) nothing fires.
    ws.set_clock("2026-11-23T09:12:00Z");
    std::thread::sleep(Duration::from_millis(600));
    let logs = w.stop();
    assert!(ws.note().contains("failures: 2\n"), "{}\n{logs:#?}", ws.note());
    let items = list_at(&ws, "2026-11-23T09:12:00Z");
    assert_eq!(items[0]["due"], serde_json::Value::Null, "{items:#?}");
    assert_eq!(items[0]["failures"], 2, "{items:#?}");
    assert_eq!(items[0]["retryAt"], "2026-11-23T09:15:31+00:00", "{items:#?}");
    assert_eq!(items[0]["nextDue"], "2026-11-23T09:15:31+00:00", "{items:#?}");
    let text =
        ws.livenote(&["list", "--at", "2026-11-23T09:12:00Z"]).output().unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("retry 2026-11-23T09:15:31+00:00 (2nd failure)"), "{text}");
    // LAST RUN stays in its column beside a retry (issue 34: the retry pushed it out).
    let lines: Vec<&str> = text.lines().collect();
    let column = lines[0].find("LAST RUN").unwrap_or_else(|| panic!("{text}"));
    assert!(lines[1].get(column..).is_some_and(|t| t.starts_with("2026-11-23T08:00:01")), "{text}");
    // A run by hand that succeeds starts the count afresh.
    std::fs::remove_file(ws.root.join("broken")).unwrap_or_else(|e| panic!("{e}"));
    let clock = ws.clock().display().to_string();
    let out =
        ws.livenote(&["run", "n.md", "--clock-file", &clock]).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = ws.note();
    assert!(text.contains("failures: 0\n") && text.contains("lastRunError: null"), "{text}");
    let items = list_at(&ws, "2026-11-23T09:12:00Z");
    assert!(items[0].get("retryAt").is_none() && items[0].get("failures").is_none(), "{items:#?}");
}

/// Stop means "not this occurrence": a stopped scheduled run is not retried after the
/// backoff; the next fire is the next occurrence (SPEC 3).
#[test]
fn a_stopped_run_waits_for_the_next_occurrence() {
    let note = "---\nlive:\n  objective: slow\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T08:00:01.000Z\"\n---\n# Slow\n\nold body\n";
    let ws = Workspace::with_note(&command_config("sleep 30; echo new body"), note);
    ws.set_clock("2026-11-23T09:00:30Z");
    let w = ws.watch_clock();
    let store = livenote::runs::Store::new(&ws.root);
    wait_until("watch to start the run", 20, || store.is_locked("n.md"));
    let out = ws.livenote(&["stop", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    wait_until("the stop to be recorded", 20, || ws.note().contains("lastStoppedAt: "));
    // Past the 5-minute backoff: the stopped occurrence does not fire again.
    ws.set_clock("2026-11-23T09:06:00Z");
    std::thread::sleep(Duration::from_millis(600));
    let logs = w.stop();
    assert!(ws.note().contains("lastAttemptAt: \"2026-11-23T09:00:30.000Z\""), "{}\n{logs:#?}", ws.note());
    assert!(!ws.note().contains("failures:"), "a stop is not a failure: {}", ws.note());
    let items = list_at(&ws, "2026-11-23T09:06:00Z");
    assert_eq!(items[0]["due"], serde_json::Value::Null, "{items:#?}");
    assert_eq!(items[0]["nextDue"], "2026-11-23T10:00:00+00:00", "{items:#?}");
}

/// `livenote run` that is stopped (`livenote stop` from another shell) says so and exits
/// non-zero.
#[test]
fn livenote_run_that_is_stopped_prints_stopped() {
    let ws = Workspace::with_note(
        &command_config("sleep 30; echo new body"),
        "---\nlive:\n  objective: slow\n---\n# Slow\n\nold body\n",
    );
    let run = ws
        .livenote(&["run", "n.md"])
        .env_remove("LIVENOTE_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let store = livenote::runs::Store::new(&ws.root);
    wait_until("the run to start", 20, || store.is_locked("n.md"));
    let out = ws.livenote(&["stop", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr.contains("livenote: stopped"), "{stderr:?}");
}

/// `list --at T` asks about T itself: an occurrence exactly at T fires then, while the last
/// instant of the grace and the last millisecond of a window's end minute still count.
#[test]
fn list_at_counts_the_edges_of_the_grace_and_the_window() {
    let hourly = "---\nlive:\n  objective: h\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T09:00:01.000Z\"\n---\n# H\n";
    let ws = Workspace::with_note(&command_config("echo x"), hourly);
    common::write(
        &ws.root.join("w.md"),
        "---\nlive:\n  objective: w\n  triggers:\n    windows:\n      - startTime: \"09:00\"\n        endTime: \"12:00\"\n  lastRunAt: \"2026-11-22T10:00:00.000Z\"\n---\n# W\n",
    );
    let due =
        |at: &str| -> Vec<serde_json::Value> { list_at(&ws, at).iter().map(|i| i["due"].clone()).collect() };
    // [n.md, w.md]
    assert_eq!(due("2026-11-23T10:00:00Z"), [serde_json::json!("cron"), serde_json::json!("window")]);
    assert_eq!(due("2026-11-23T10:02:00Z"), [serde_json::json!("cron"), serde_json::json!("window")]);
    assert_eq!(due("2026-11-23T10:02:00.001Z"), [serde_json::Value::Null, serde_json::json!("window")]);
    assert_eq!(due("2026-11-23T12:00:59.999Z")[1], "window");
    assert_eq!(due("2026-11-23T12:01:00Z")[1], serde_json::Value::Null);
}

/// `watch` says what happens to a note while it runs, once per change and not once per pass
/// of the scheduler: a failure says when the note is retried (the backoff's end, from the
/// schedule every surface shows), and the note becoming paused, invalid, expired and live
/// again, and the folder untrusted and trusted again, is one line each. The folder's ignored
/// configuration is said once, by the untrusted line.
#[test]
fn watch_says_each_change_of_state_once() {
    let note = "---\nlive:\n  objective: o\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# N\n";
    let ws = Workspace::with_note(&command_config("echo broken >&2; exit 3"), note);
    ws.set_clock("2026-11-23T09:00:30Z");
    let mut w = ws.watch_clock();
    w.wait_for("failed n.md: exited with status 3: broken (retry at 09:05)");
    let edit = |from: &str, to: &str| {
        let text = ws.note();
        assert!(text.contains(from), "{text}");
        std::fs::write(ws.root.join("n.md"), text.replace(from, to)).unwrap_or_else(|e| panic!("{e}"));
    };
    // Each change is waited for, then the scheduler gets many passes (the clock file is read
    // every 50 ms) to repeat it.
    edit("  objective: o\n", "  objective: o\n  active: false\n");
    w.wait_for("paused n.md");
    std::thread::sleep(Duration::from_millis(400));
    edit("  active: false\n", "  active: maybe\n");
    w.wait_for("invalid n.md");
    std::thread::sleep(Duration::from_millis(400));
    edit("  active: maybe\n", "  until: 2026-11-22\n");
    w.wait_for("expired n.md");
    std::thread::sleep(Duration::from_millis(400));
    edit("  until: 2026-11-22\n", "");
    w.wait_for("live n.md");
    std::thread::sleep(Duration::from_millis(400));
    // The folder's configuration changes: untrusted until trusted again.
    let config = ws.root.join(".livenote.toml");
    let changed = format!("{}# changed\n", std::fs::read_to_string(&config).unwrap_or_default());
    std::fs::write(&config, changed).unwrap_or_else(|e| panic!("{e}"));
    w.wait_for("untrusted ");
    std::thread::sleep(Duration::from_millis(400));
    let out = ws.livenote(&["trust", "."]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    w.wait_for(" trusted /");
    std::thread::sleep(Duration::from_millis(400));
    let lines = w.stop();
    let count = |needle: &str| lines.iter().filter(|l| l.contains(needle)).count();
    for needle in [
        "failed n.md",
        "paused n.md",
        "invalid n.md",
        "expired n.md",
        "live n.md",
        "untrusted /",
        " trusted /",
    ] {
        assert_eq!(count(needle), 1, "{needle:?} said {} times: {lines:#?}", count(needle));
    }
    assert_eq!(count(".livenote.toml: ignored"), 0, "said twice: {lines:#?}");
    assert!(lines.iter().any(|l| l.contains("it changed since you trusted this folder")), "{lines:#?}");
}

/// In an untrusted folder `watch` says so once at start, and once more when a `.livenote.toml`
/// appears (it is ignored): not once per file event of its writing.
#[test]
fn watch_says_once_that_an_untrusted_folders_config_is_ignored() {
    let note = "---\nlive:\n  objective: o\n---\n# N\n";
    let ws = Workspace::with_note(&command_config("echo hi"), note);
    let out = ws.livenote(&["untrust", "."]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let config = ws.root.join(".livenote.toml");
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    std::fs::remove_file(&config).unwrap_or_else(|e| panic!("{e}"));
    ws.set_clock("2026-11-23T09:00:30Z");
    let mut w = ws.watch_clock();
    w.wait_for("untrusted /");
    // Written in two steps, as editors and `git` do: several file events.
    std::fs::write(&config, "").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&config, &text).unwrap_or_else(|e| panic!("{e}"));
    w.wait_for(".livenote.toml is ignored");
    std::thread::sleep(Duration::from_millis(600));
    let lines = w.stop();
    let count = |needle: &str| lines.iter().filter(|l| l.contains(needle)).count();
    assert_eq!((count("untrusted /"), count(".livenote.toml is ignored")), (2, 1), "{lines:#?}");
    assert_eq!(count(".livenote.toml: ignored"), 0, "said twice: {lines:#?}");
}

/// `[scheduler] max_backoff` caps the backoff where every surface reads it: a note that failed
/// 8 times (5 min × 2^7 is past both caps) tries again once its occurrence comes after the
/// cap, so `list` says 10:00:30 with a 1-hour cap and 15:00:30 with the default 6 hours, and
/// `watch` fires it when `list` says (SPEC 3).
#[test]
fn a_configured_max_backoff_moves_the_retry_in_list_and_watch() {
    let note = "---\nlive:\n  objective: flaky\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T08:00:01.000Z\"\n  lastAttemptAt: \"2026-11-23T09:00:30.000Z\"\n  lastRunError: down\n  failures: 8\n---\n# Flaky\n\nold body\n";
    let config = command_config("echo fixed");
    let default = Workspace::with_note(&config, note);
    let capped = Workspace::with_note(&format!("{config}\n[scheduler]\nmax_backoff = \"1h\"\n"), note);
    let at = "2026-11-23T09:30:00Z";
    let items = list_at(&default, at);
    assert_eq!(items[0]["failures"], 8, "{items:#?}");
    assert_eq!(items[0]["retryAt"], "2026-11-23T15:00:30+00:00", "{items:#?}");
    let items = list_at(&capped, at);
    assert_eq!(items[0]["retryAt"], "2026-11-23T10:00:30+00:00", "{items:#?}");
    assert_eq!(items[0]["nextDue"], "2026-11-23T10:00:30+00:00", "{items:#?}");
    // The scheduler holds the note back until then, and fires it then.
    capped.set_clock("2026-11-23T10:00:00Z");
    let w = capped.watch_clock();
    std::thread::sleep(Duration::from_millis(600));
    assert!(capped.note().contains("failures: 8\n"), "{}", capped.note());
    capped.set_clock("2026-11-23T10:00:31Z");
    wait_until("the retry after the 1-hour cap", 20, || capped.note().contains("fixed"));
    w.stop();
}

/// Every line ending of `text` as `\r\n` (`true`) or `\n` (`false`), line by line.
fn endings(text: &str) -> Vec<bool> {
    text.match_indices('\n').map(|(i, _)| text[..i].ends_with('\r')).collect()
}

/// A CRLF note (git's `autocrlf` on Windows) stays CRLF through a run whose command prints
/// `\n` lines: the body, the runtime fields, the summary. A note whose endings are mixed takes
/// the one most of its lines have (docs/reliability.md): the run writes no `\n` into a note
/// that is CRLF but for one line.
#[test]
fn a_run_keeps_a_crlf_note_crlf() {
    let ws = Workspace::with_note(
        &command_config("printf 'line one\\nline two\\n\\n## More\\nthree\\n'"),
        "---\r\ntitle: T\r\nlive:\r\n  objective: keep it\r\n---\r\n# T\r\n\r\nold body\r\n",
    );
    // CRLF but for the line under the H1 (a line pasted from elsewhere).
    common::write(
        &ws.root.join("mixed.md"),
        "---\r\nlive:\r\n  objective: keep it\r\n---\r\n# M\r\n\nold body\r\nkept\r\n",
    );
    for note in ["n.md", "mixed.md"] {
        let out = ws.livenote(&["run", note]).output().unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{note}: {}", String::from_utf8_lossy(&out.stderr));
        let text = std::fs::read_to_string(ws.root.join(note)).unwrap_or_else(|e| panic!("{e}"));
        assert!(endings(&text).iter().all(|&crlf| crlf), "{note}: a bare \\n in {text:?}");
        assert!(text.contains("lastRunSummary: \"Updated: line one\"\r\n"), "{text:?}");
        assert!(text.ends_with("\r\nline one\r\nline two\r\n\r\n## More\r\nthree\r\n"), "{text:?}");
    }
}

/// A note run while it was LF and then checked out as CRLF (git `autocrlf`, or an editor's
/// "change line endings") is not "edited since the run": `livenote undo` restores the body
/// from before the run, in CRLF, undoing the undo brings the run's body back, in CRLF, and so
/// does `livenote restore`.
#[test]
fn undo_after_the_note_became_crlf() {
    let ws = Workspace::with_note(
        &command_config("printf 'new body\\n'"),
        "---\nlive:\n  objective: keep it\n---\n# T\n\nold body\n",
    );
    let out = ws.livenote(&["run", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(ws.note().ends_with("# T\n\nnew body\n"), "{:?}", ws.note());
    common::write(&ws.root.join("n.md"), &ws.note().replace('\n', "\r\n"));

    let out = ws.livenote(&["undo", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = ws.note();
    assert!(text.ends_with("# T\r\n\r\nold body\r\n"), "{text:?}");
    assert!(endings(&text).iter().all(|&crlf| crlf), "a bare \\n in {text:?}");

    let out = ws.livenote(&["undo", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = ws.note();
    assert!(text.ends_with("# T\r\n\r\nnew body\r\n"), "{text:?}");
    assert!(endings(&text).iter().all(|&crlf| crlf), "a bare \\n in {text:?}");

    // `livenote restore` of the first run (still the note's `lastRunId`) puts its LF snapshot
    // back in CRLF.
    let run = text.split("lastRunId: \"").nth(1).and_then(|s| s.split('"').next()).unwrap_or_default();
    let out = ws.livenote(&["restore", "n.md", run]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = ws.note();
    assert!(text.ends_with("# T\r\n\r\nold body\r\n"), "{text:?}");
    assert!(endings(&text).iter().all(|&crlf| crlf), "a bare \\n in {text:?}");
}

/// `livenote check` reads a CRLF note as its LF twin: the same diagnostics at the same 1-based
/// lines and columns (a `\r` is no column).
#[test]
fn check_reads_a_crlf_note_as_its_lf_twin() {
    let lf = "---\ntitle: \"😀 T\"\nlive:\n  objective: x\n  active: yes\n  triggers:\n    cron: \"0 9 * * *\"\n---\n# T\n";
    let ws = Workspace::with_note(&command_config("echo x"), lf);
    common::write(&ws.root.join("crlf.md"), &lf.replace('\n', "\r\n"));
    let check = |note: &str| {
        let out = ws
            .livenote(&["check", note])
            .env_remove("LIVENOTE_LOG")
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        String::from_utf8_lossy(&out.stdout).replace(note, "NOTE")
    };
    let (a, b) = (check("n.md"), check("crlf.md"));
    assert!(a.contains("NOTE:5:11") && a.contains("NOTE:7:5"), "{a}");
    assert_eq!(a, b);
}
