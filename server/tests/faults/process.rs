//! Real processes: three `livenote watch` on one folder for 30 minutes of a per-minute cron
//! (time from a clock file), and `livenote run` killed with SIGKILL at different points of a
//! run. Waits are short polls of real child processes, never of the schedule.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{Watcher, Workspace};
use crate::{assert_parses, body_of, command_config, live_note, log_lines, temp_files, wait_until, write};

/// Three `livenote watch` processes (as two editors and a watcher would be), a per-minute cron,
/// the clock stepped minute by minute for 30 minutes. Every run succeeds, so no backoff holds
/// the next minute back: each minute's cycle runs, exactly once.
#[test]
fn three_watch_processes_over_30_minutes_run_each_due_cycle_once() {
    let cron = "  triggers:\n    cronExpr: \"* * * * *\"\n  lastRunAt: \"2026-11-23T08:59:10.000Z\"\n";
    let p = Workspace::with_note(
        &command_config("echo \"$LIVENOTE_NOW\" >> runs.log; echo \"updated at $LIVENOTE_NOW\""),
        &live_note(cron, "old\n"),
    );
    p.set_clock("2026-11-23T08:59:30Z");
    let watchers: Vec<Watcher> = (0..3).map(|_| p.watch_clock()).collect();
    let log = p.root.join("runs.log");
    for m in 0..30 {
        p.set_clock(&format!("2026-11-23T09:{m:02}:20Z"));
        let want = m + 1;
        wait_until(&format!("the run of minute {m}"), 20, || {
            log_lines(&log).len() >= want
                && p.note().contains(&format!("updated at 2026-11-23T09:{m:02}:20Z"))
        });
        // Every watcher polls the clock file every 50 ms: give each a few looks at this minute.
        std::thread::sleep(Duration::from_millis(160));
    }
    let logs: Vec<Vec<String>> = watchers.into_iter().map(Watcher::stop).collect();
    let want: Vec<String> = (0..30).map(|m| format!("2026-11-23T09:{m:02}:20Z")).collect();
    assert_eq!(log_lines(&log), want, "{logs:#?}");
    assert_parses(&p.note());
}

const OLD: &str = "Old body, line one.\nOld body, line two.\n";

/// The new body: about 1 MB, so that writing the note takes a moment.
fn new_body() -> String {
    (0..4000).map(|i| format!("New line {i:04} of the updated body. {}\n", "x".repeat(240))).collect()
}

/// The provider announces its phases in files: `phase-started` once it runs, `phase-printed`
/// once its whole output is printed (the result is written right after it exits).
fn slow_provider() -> &'static str {
    "touch phase-started; cat > /dev/null; sleep ${FAULT_SLEEP:-0.3}; cat new.txt; touch phase-printed"
}

#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// Right after spawning: the process may not even have started.
    Spawn,
    /// Once `lastAttemptAt`/`lastRunId` are in the note (before or as the provider starts).
    Attempt,
    /// While the provider runs.
    Provider,
    /// This many milliseconds after the provider printed its output.
    Printed(u64),
    /// As soon as the temp file of the result's atomic write shows up beside the note.
    Writing,
    /// As soon as the note holds the result (before the transcript is closed and the process
    /// exits).
    Written,
}

/// Spin (no sleeping) until `cond`, for at most 20 s: the moments around a write are short.
fn spin_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

fn has_temp_file(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|r| r.flatten().any(|e| e.file_name().to_string_lossy().starts_with(".livenote-")))
        .unwrap_or(false)
}

/// SIGKILL `livenote run` at a point of the run; then check the note and that the next run
/// goes through. Returns whether the killed run had written its result.
fn kill_at(point: KillAt) -> bool {
    let p = Workspace::with_note(&command_config(slow_provider()), &live_note("", OLD));
    let new = new_body();
    write(&p.root.join("new.txt"), &new);
    let exists = |name: &str| p.root.join(name).exists();
    let note = p.root.join("n.md");
    let has_result = || std::fs::metadata(&note).is_ok_and(|m| m.len() > 100_000);
    let mut child = p
        .livenote(&["run", "n.md"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    match point {
        KillAt::Spawn => {}
        KillAt::Attempt => wait_until("lastRunId", 20, || p.note().contains("lastRunId")),
        KillAt::Provider => {
            wait_until("the provider", 20, || exists("phase-started"));
            std::thread::sleep(Duration::from_millis(50));
        }
        KillAt::Printed(ms) => {
            wait_until("the output", 20, || exists("phase-printed"));
            std::thread::sleep(Duration::from_millis(ms));
        }
        KillAt::Writing => {
            wait_until("the output", 20, || exists("phase-printed"));
            // On a busy machine the write may come and go between two looks: then this is a
            // kill just after the write.
            spin_until("the result's temp file", || has_temp_file(&p.root) || has_result());
        }
        KillAt::Written => spin_until("the result", has_result),
    }
    let _ = child.kill();
    let _ = child.wait();

    let text = p.note();
    let live = assert_parses(&text);
    let body = body_of(&text);
    let wrote = body == format!("\n{new}");
    assert!(wrote || body == format!("\n{OLD}"), "{point:?}: the body is torn:\n{text}");
    if wrote {
        // The result and its runtime fields land in one write, and the body from before the
        // run is in the history under the run's id.
        assert!(live.last_run_at.is_some() && live.last_run_error.is_none(), "{point:?}:\n{text}");
        let id = live.last_run_id.clone().unwrap_or_default();
        let snap = history(&p.root, &id);
        assert_eq!(snap.as_deref(), Some(format!("\n{OLD}").as_str()), "{point:?}: no snapshot of run {id}");
    } else {
        assert_eq!(live.last_run_at, None, "{point:?}");
    }
    // A kill inside an atomic write leaves its hidden temp file (`.livenote-*.tmp`) behind;
    // it is never a note and never read as one.
    for f in temp_files(&p.root) {
        assert!(!f.to_string_lossy().ends_with(".md"), "{}", f.display());
    }
    // Nothing stale blocks the next run (the lock died with the process).
    let out = p.livenote(&["run", "n.md"]).env("FAULT_SLEEP", "0").output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{point:?}: the next run failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = p.note();
    let live = assert_parses(&text);
    assert_eq!(body_of(&text), format!("\n{new}"));
    assert!(live.last_run_error.is_none() && live.last_run_at.is_some());
    wrote
}

/// The saved body of run `id` (history/<note key>/<id>.md).
fn history(root: &Path, id: &str) -> Option<String> {
    let dir = root.join(".livenote/history");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .find_map(|d| std::fs::read_to_string(d.path().join(format!("{id}.md"))).ok())
}

#[test]
fn sigkill_at_any_point_of_a_run_leaves_the_old_or_the_new_note_and_no_stale_lock() {
    let mut points = vec![KillAt::Spawn, KillAt::Attempt, KillAt::Provider];
    points.extend([0, 40, 80, 120, 160].map(KillAt::Printed));
    points.extend([KillAt::Writing, KillAt::Written]);
    let wrote: Vec<(KillAt, bool)> = points.into_iter().map(|p| (p, kill_at(p))).collect();
    // Before the provider has printed, nothing can have been written; once the note holds
    // the result, it stays.
    assert!(wrote.iter().take(3).all(|(_, w)| !w), "{wrote:?}");
    assert!(wrote.last().is_some_and(|(_, w)| *w), "{wrote:?}");
}
