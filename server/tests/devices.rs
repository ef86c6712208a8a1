//! Issue 23, §3: two devices, one synced folder. Two copies of a folder, each with its own
//! `livenote watch`, its own `LIVENOTE_HOST` and its own data and config folders, kept in sync
//! by a helper that copies a changed note to the other side after a delay, as a sync tool does
//! (a note changed on both sides since the last copy becomes a Syncthing-style conflict copy).
//! Time is each side's clock file, moved by the test; waits poll with deadlines.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{Watcher, Workspace, command_config, done_runs, wait_until};

const HOURLY: &str = "---\nlive:\n  objective: count\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T08:00:10.000Z\"\n---\n# Count\n\nold body\n";

/// How long the helper waits after a change before it copies it (a sync tool's latency).
const SYNC_DELAY: Duration = Duration::from_millis(300);

/// The sync tool: copies `n.md` from the side that changed to the other after
/// [`SYNC_DELAY`]; a note changed on both sides since the last copy is a conflict, written
/// beside the note as Syncthing names it.
struct Sync {
    stop: Arc<AtomicBool>,
    conflicts: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sync {
    fn start(a: &Path, b: &Path) -> Sync {
        let stop = Arc::new(AtomicBool::new(false));
        let conflicts = Arc::new(AtomicUsize::new(0));
        let sides = [a.join("n.md"), b.join("n.md")];
        let (stop2, conflicts2) = (stop.clone(), conflicts.clone());
        let thread = std::thread::spawn(move || {
            let read = |p: &PathBuf| std::fs::read_to_string(p).unwrap_or_default();
            let mut synced = read(&sides[0]);
            // Per side: the text last seen and when it last changed.
            let mut seen: Vec<(String, Instant)> = sides.iter().map(|p| (read(p), Instant::now())).collect();
            while !stop2.load(Ordering::Relaxed) {
                for (i, p) in sides.iter().enumerate() {
                    let now = read(p);
                    if now != seen[i].0 {
                        seen[i] = (now, Instant::now());
                    }
                }
                for i in 0..2 {
                    let other = 1 - i;
                    let (text, since) = seen[i].clone();
                    if text == synced || since.elapsed() < SYNC_DELAY {
                        continue;
                    }
                    if seen[other].0 != synced {
                        // Both changed: the tool keeps one and writes the other beside it.
                        conflicts2.fetch_add(1, Ordering::Relaxed);
                        let copy = sides[other].with_file_name("n.sync-conflict-20261123-090000-TEST.md");
                        let _ = std::fs::write(copy, &seen[other].0);
                    }
                    let tmp = sides[other].with_file_name(".n.md.sync-tmp");
                    if std::fs::write(&tmp, &text).is_ok() {
                        let _ = std::fs::rename(&tmp, &sides[other]);
                    }
                    seen[other] = (text.clone(), Instant::now());
                    synced = text;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Sync { stop, conflicts, thread: Some(thread) }
    }

    fn conflicts(&self) -> usize {
        self.conflicts.load(Ordering::Relaxed)
    }
}

impl Drop for Sync {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A device: its copy of the folder, its data and config folders, its clock.
fn device(config: &str) -> Workspace {
    Workspace::with_note(&format!("{}{config}", command_config("date +%s%N")), HOURLY)
}

fn watch_as(ws: &Workspace, host: &str) -> Watcher {
    let clock = ws.clock().display().to_string();
    ws.watch_env(&["--clock-file", &clock], &[("LIVENOTE_HOST", host)])
}

fn set_clocks(devices: &[&Workspace], at: &str) {
    for d in devices {
        d.set_clock(at);
    }
}

/// Whether both copies of the note read the same and say they ran at `at`.
fn both_ran_at(a: &Workspace, b: &Workspace, at: &str) -> bool {
    let (ta, tb) = (a.note(), b.note());
    ta == tb && ta.contains(&format!("lastRunAt: \"{at}"))
}

fn conflict_copies(root: &Path) -> Vec<String> {
    common::files(root).into_iter().filter(|f| f.contains("sync-conflict")).collect()
}

#[test]
fn with_a_host_one_device_runs_each_occurrence_and_the_other_takes_over_when_it_stops() {
    let host = "[scheduler]\nhost = \"nas\"\nfailover_after = \"10m\"\n";
    let (nas, laptop) = (device(host), device(host));
    set_clocks(&[&nas, &laptop], "2026-11-23T08:59:00Z");
    let sync = Sync::start(&nas.root, &laptop.root);
    let nas_watch = watch_as(&nas, "nas");
    let mut laptop_watch = watch_as(&laptop, "laptop");
    laptop_watch.wait_for("scheduled on nas");
    for (hour, at) in [(1, "2026-11-23T09:00:30"), (2, "2026-11-23T10:00:30")] {
        set_clocks(&[&nas, &laptop], &format!("{at}Z"));
        wait_until(&format!("occurrence {hour} synced"), 20, || both_ran_at(&nas, &laptop, at));
        // Every chance for the laptop to fire the same occurrence too.
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!((done_runs(&nas.root), done_runs(&laptop.root)), (hour, 0), "{}", laptop.note());
    }
    assert_eq!(sync.conflicts(), 0);
    assert!(conflict_copies(&nas.root).is_empty() && conflict_copies(&laptop.root).is_empty());
    let history = nas.livenote(&["history", "n.md", "--format", "json"]).env("LIVENOTE_HOST", "nas").output();
    let history = history.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    assert!(history.contains("\"host\": \"nas\""), "{history}");

    // The host stops. 11:00 comes and goes; ten minutes later the laptop takes over the
    // occurrence nobody attempted, once, and says so.
    let nas_log = nas_watch.stop();
    assert!(!nas_log.iter().any(|l| l.contains("scheduled on")), "{nas_log:#?}");
    set_clocks(&[&laptop], "2026-11-23T11:05:00Z");
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(done_runs(&laptop.root), 0, "took over before failover_after: {}", laptop.note());
    set_clocks(&[&laptop], "2026-11-23T11:10:30Z");
    wait_until("the failover run", 20, || done_runs(&laptop.root) == 1);
    laptop_watch.wait_for("failover n.md");
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(done_runs(&laptop.root), 1, "{}", laptop.note());
    let log = laptop_watch.stop();
    assert!(log.iter().any(|l| l.contains("in place of nas")), "{log:#?}");
    let transcripts = common::files(&laptop.root.join(".livenote/runs"));
    let transcript =
        std::fs::read_to_string(laptop.root.join(".livenote/runs").join(&transcripts[0])).unwrap_or_default();
    assert!(transcript.contains("\"kind\":\"failover\""), "{transcript}");
    assert!(transcript.contains("\"host\":\"laptop\""), "{transcript}");
    wait_until("the failover run synced", 20, || nas.note() == laptop.note());
    assert_eq!(sync.conflicts(), 0);
}

#[test]
fn without_a_host_a_device_that_sees_another_ones_run_says_so_once() {
    let (desk, laptop) = (device(""), device(""));
    set_clocks(&[&desk, &laptop], "2026-11-23T08:59:00Z");
    let _sync = Sync::start(&desk.root, &laptop.root);
    let desk_watch = watch_as(&desk, "desk");
    let mut laptop_watch = watch_as(&laptop, "laptop");
    // Only the desk's clock reaches 09:00: it runs, and the sync brings its run to the laptop.
    set_clocks(&[&desk], "2026-11-23T09:00:30Z");
    wait_until("the desk's run synced", 20, || both_ran_at(&desk, &laptop, "2026-11-23T09:00:30"));
    laptop_watch.wait_for("another machine runs");
    let desk_log = desk_watch.stop();
    assert!(!desk_log.iter().any(|l| l.contains("another machine runs")), "{desk_log:#?}");
    // Once: a second foreign run is not said again.
    set_clocks(&[&desk], "2026-11-23T10:00:30Z");
    let mut again = watch_as(&desk, "desk");
    wait_until("the desk's second run synced", 20, || both_ran_at(&desk, &laptop, "2026-11-23T10:00:30"));
    again.wait_for("done n.md");
    std::thread::sleep(Duration::from_millis(600));
    let log = laptop_watch.stop();
    let said: Vec<&String> = log.iter().filter(|l| l.contains("another machine runs")).collect();
    assert_eq!(said.len(), 1, "{log:#?}");
    assert!(
        said[0].contains("[scheduler] host = \\\"NAME\\\"")
            || said[0].contains("[scheduler] host = \"NAME\"")
    );
    assert_eq!(done_runs(&laptop.root), 0);
}

/// Events queue in `.livenote/events/pending/`, which syncs with the folder: only the host
/// processes them. Elsewhere they wait (and `watch` says for whom); the host runs them.
#[test]
fn events_wait_in_the_queue_for_the_host() {
    let note = "---\nlive:\n  objective: count\n  triggers:\n    eventMatchCriteria: deploys\n---\n# Count\n\nold body\n";
    let ws = Workspace::with_note(
        &format!("{}[scheduler]\nhost = \"nas\"\n", command_config("echo new body")),
        note,
    );
    ws.set_clock("2026-11-23T09:00:30Z");
    let queued = ws
        .livenote(&["event", "--source", "ci", "--type", "deploy", "--target", "n.md"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(queued.status.success(), "{}", String::from_utf8_lossy(&queued.stderr));
    let pending = || common::files(&ws.root.join(".livenote/events/pending")).len();
    assert_eq!(pending(), 1);
    let mut laptop = watch_as(&ws, "laptop");
    laptop.wait_for("for nas to process");
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!((pending(), done_runs(&ws.root)), (1, 0));
    laptop.stop();
    let nas = watch_as(&ws, "nas");
    wait_until("the host's event run", 20, || pending() == 0 && done_runs(&ws.root) == 1);
    nas.stop();
    assert!(ws.note().contains("new body"), "{}", ws.note());
    // Every run records the machine that made it, an undo too.
    let undo = ws.livenote(&["undo", "n.md"]).env("LIVENOTE_HOST", "nas").output();
    let undo = undo.unwrap_or_else(|e| panic!("{e}"));
    assert!(undo.status.success(), "{}", String::from_utf8_lossy(&undo.stderr));
    let history = ws.livenote(&["history", "n.md", "--format", "json"]).output();
    let history = history.unwrap_or_else(|e| panic!("{e}")).stdout;
    let runs: serde_json::Value = serde_json::from_slice(&history).unwrap_or_else(|e| panic!("{e}"));
    let hosts: Vec<(&str, &str)> = runs
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (r["trigger"].as_str().unwrap_or("?"), r["host"].as_str().unwrap_or("?")))
        .collect();
    assert_eq!(hosts, [("undo", "nas"), ("event", "nas")]);
}

/// A sync tool's conflict copy of a note: `livenote check` says what it is and of which note,
/// and `watch` never runs it, though its copied block is due.
#[test]
fn a_conflict_copy_is_named_and_never_run() {
    let ws = device("");
    let copy = "n.sync-conflict-20261123-090000-ABC1234.md";
    common::write(&ws.root.join(copy), HOURLY);
    let check = ws.livenote(&["check", "."]).output().unwrap_or_else(|e| panic!("{e}"));
    let said = String::from_utf8_lossy(&check.stdout).into_owned() + &String::from_utf8_lossy(&check.stderr);
    assert!(
        said.contains("live/sync-conflict-copy")
            && said.contains("sync conflict copy of n.md made by Syncthing")
            && said.contains(copy),
        "{said}"
    );
    ws.set_clock("2026-11-23T09:00:30Z");
    let w = watch_as(&ws, "desk");
    wait_until("the note's run", 20, || done_runs(&ws.root) == 1);
    std::thread::sleep(Duration::from_millis(600));
    let log = w.stop();
    assert_eq!(done_runs(&ws.root), 1, "{log:#?}");
    assert!(!log.iter().any(|l| l.contains("fire n.sync-conflict")), "{log:#?}");
    let copied = std::fs::read_to_string(ws.root.join(copy)).unwrap_or_default();
    assert_eq!(copied, HOURLY);
}

/// A run by hand is the user's choice: it runs on a machine that is not the host, and records
/// that machine.
#[test]
fn a_run_by_hand_runs_on_any_machine() {
    let ws = device("[scheduler]\nhost = \"nas\"\n");
    ws.set_clock("2026-11-23T09:00:30Z");
    let clock = ws.clock().display().to_string();
    let out = ws.livenote(&["run", "n.md", "--clock-file", &clock]).env("LIVENOTE_HOST", "laptop").output();
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(done_runs(&ws.root), 1);
    let history = ws.livenote(&["history", "n.md", "--format", "json"]).output();
    let history = String::from_utf8_lossy(&history.unwrap_or_else(|e| panic!("{e}")).stdout).into_owned();
    assert!(
        history.contains("\"host\": \"laptop\"") && history.contains("\"trigger\": \"manual\""),
        "{history}"
    );
}
