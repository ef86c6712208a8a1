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
