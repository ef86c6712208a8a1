//! `livenote tick [DIR]` through the real binary (issue 23, section 2): one pass for an external
//! scheduler. It fires what is due and processes pending events, waits for those runs and exits
//! 0, 1 when a run failed, 2 when the folder is not trusted; ticks in a row, or beside a
//! running `watch`, run nothing twice; `--dry-run` lists and writes nothing. Time is a clock
//! file (`--clock-file`), never slept on.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::{Workspace, command_config, done_runs, tempdir, wait_until, write};

/// Due at 09:00:30 (its 09:00 occurrence, never run), next at 10:00.
const HOURLY: &str =
    "---\nlive:\n  objective: count\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Count\n\nold body\n";
/// Takes events (and no schedule of its own).
const ON_MAIL: &str = "---\nlive:\n  objective: mail\n  triggers:\n    eventMatchCriteria: mail from the bank\n---\n# Mail\n\nold mail\n";

fn tick(ws: &Workspace, options: &[&str]) -> Output {
    let clock = ws.clock().display().to_string();
    let mut args = vec!["tick", "--clock-file", clock.as_str()];
    args.extend_from_slice(options);
    args.push(".");
    ws.livenote(&args).stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{e}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lines of a tick's log that say what it did with a note: fire, skip, done and failed.
fn run_lines(out: &Output) -> Vec<String> {
    stderr(out)
        .lines()
        .filter_map(|l| {
            let l = l.split_once(" INFO ").or_else(|| l.split_once(" WARN "))?.1;
            ["fire ", "skip ", "done ", "failed "].iter().any(|p| l.starts_with(p)).then(|| l.to_owned())
        })
        .collect()
}

#[test]
fn a_tick_fires_what_is_due_and_a_second_runs_nothing() {
    let dir = tempdir();
    write(&dir.path().join("n.md"), HOURLY);
    // Already ran this hour: not due.
    let ran = HOURLY
        .replace("  objective: count\n", "  objective: count\n  lastRunAt: \"2026-11-23T09:00:10.000Z\"\n");
    write(&dir.path().join("later.md"), &ran);
    let ws = Workspace::in_dir(dir, &command_config("echo new body"));
    ws.set_clock("2026-11-23T09:00:30Z");
    let out = tick(&ws, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(run_lines(&out), ["fire n.md (cron)", "done n.md: Updated: new body"], "{}", stderr(&out));
    assert!(stderr(&out).contains("1 note fired, 0 events processed; runs: 1 done, 0 failed, 0 skipped"));
    assert_eq!(done_runs(&ws.root), 1);
    assert!(ws.note().ends_with("# Count\n\nnew body\n"), "{}", ws.note());
    assert!(ws.note().contains("lastRunAt: \"2026-11-23T09:00:30.000Z\""), "{}", ws.note());
    // The same instant again, and later in the same hour: nothing is due any more.
    for at in ["2026-11-23T09:00:30Z", "2026-11-23T09:01:30Z"] {
        ws.set_clock(at);
        let again = tick(&ws, &[]);
        assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
        assert!(run_lines(&again).is_empty(), "{}", stderr(&again));
        assert_eq!(done_runs(&ws.root), 1, "ran twice at {at}");
    }
    // The next occurrence fires again.
    ws.set_clock("2026-11-23T10:00:20Z");
    let next = tick(&ws, &[]);
    assert_eq!(run_lines(&next).len(), 4, "n.md and later.md: {}", stderr(&next));
    assert_eq!(done_runs(&ws.root), 3);
}

#[test]
fn a_failed_run_exits_1_and_is_retried_after_its_backoff() {
    let ws = Workspace::with_note(&command_config("echo broken >&2; exit 3"), HOURLY);
    ws.set_clock("2026-11-23T09:00:30Z");
    let out = tick(&ws, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let lines = run_lines(&out);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[1].starts_with("failed n.md: exited with status 3: broken (retry at 09:05"), "{lines:?}");
    assert!(ws.note().contains("lastRunError: \"exited with status 3: broken\""), "{}", ws.note());
    // Inside the backoff: nothing fires, and nothing failed this time.
    ws.set_clock("2026-11-23T09:02:00Z");
    let out = tick(&ws, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(run_lines(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn an_untrusted_folder_is_refused_with_exit_2() {
    let dir = tempdir();
    let data = tempdir();
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    write(&root.join("n.md"), HOURLY);
    write(&root.join(".livenote.toml"), &command_config("echo new body"));
    write(&data.path().join("clock"), "2026-11-23T09:00:30Z");
    let clock = data.path().join("clock").display().to_string();
    for dry in [false, true] {
        let mut args = vec!["tick", "--clock-file", clock.as_str()];
        if dry {
            args.push("--dry-run");
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(&args)
            .current_dir(&root)
            .env("LIVENOTE_DATA_DIR", data.path())
            .env("LIVENOTE_CONFIG_DIR", data.path())
            .env_remove("LIVENOTE_LOG")
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let expected = format!(
            "livenote: untrusted {}: this folder is not trusted; its .livenote.toml is ignored and nothing runs on its own until you run `livenote trust {}`\n",
            root.display(),
            root.display()
        );
        assert_eq!(stderr(&out), expected);
        assert_eq!(stdout(&out), "");
    }
    assert_eq!(std::fs::read_to_string(root.join("n.md")).unwrap_or_default(), HOURLY);
    assert!(!root.join(".livenote").exists(), "an untrusted tick wrote state");
}

#[test]
fn pending_events_are_processed_once() {
    let dir = tempdir();
    write(&dir.path().join("mail.md"), ON_MAIL);
    let ws = Workspace::in_dir(dir, &command_config("echo handled"));
    ws.set_clock("2026-11-23T09:00:30Z");
    let queue = |args: &[&str]| {
        let mut child = ws
            .livenote(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        if let Some(mut stdin) = child.stdin.take() {
            std::io::Write::write_all(&mut stdin, b"a letter from the bank")
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).trim().to_owned()
    };
    // One routed by keywords (the provider is a command: keyword routing), one targeted.
    let routed = queue(&["event", "--source", "bank", "--type", "mail.received", "."]);
    let targeted =
        queue(&["event", "--source", "bank", "--type", "mail.received", "--target", "mail.md", "."]);
    let out = tick(&ws, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("0 notes fired, 2 events processed; runs: 2 done"), "{}", stderr(&out));
    let done = ws.root.join(".livenote/events/done");
    for id in [&routed, &targeted] {
        let record = std::fs::read_to_string(done.join(format!("{id}.json"))).unwrap_or_default();
        let record: serde_json::Value = serde_json::from_str(&record).unwrap_or_default();
        assert_eq!(record["candidateFilePaths"], serde_json::json!(["mail.md"]), "{id}: {record}");
        assert_eq!(record["error"], serde_json::Value::Null, "{id}: {record}");
        assert_eq!(record["results"][0]["status"], "done", "{id}: {record}");
    }
    assert!(common::files(&ws.root.join(".livenote/events/pending")).is_empty());
    assert_eq!(done_runs(&ws.root), 2);
    // Processed once: the next tick finds nothing.
    let again = tick(&ws, &[]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stderr(&again).contains("0 notes fired, 0 events processed"), "{}", stderr(&again));
    assert_eq!(done_runs(&ws.root), 2);
}

/// Every file and folder under `dir` with its bytes (a folder: none).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut all = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
                all.insert(p, None);
            } else {
                all.insert(p.clone(), Some(std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    all
}

#[test]
fn dry_run_says_what_would_run_and_writes_nothing() {
    let dir = tempdir();
    write(&dir.path().join("n.md"), HOURLY);
    write(&dir.path().join("mail.md"), ON_MAIL);
    let ws = Workspace::in_dir(dir, &command_config("echo new body"));
    ws.set_clock("2026-11-23T09:00:30Z");
    let mut event = ws
        .livenote(&["event", "--source", "bank", "--type", "mail.received", "--target", "mail.md", "."])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(event.status.success(), "{}", stderr(&event));
    let id = String::from_utf8(std::mem::take(&mut event.stdout)).unwrap_or_default();
    let before = (tree(&ws.root), tree(ws.data.path()));
    let out = tick(&ws, &["--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "would fire n.md (cron)\nwould process event {} (bank mail.received for mail.md)\n",
            id.trim()
        )
    );
    assert!(run_lines(&out).is_empty(), "{}", stderr(&out));
    assert!(before == (tree(&ws.root), tree(ws.data.path())), "--dry-run changed files");
    // What it listed is what a tick runs.
    let real = tick(&ws, &[]);
    assert_eq!(real.status.code(), Some(0), "{}", stderr(&real));
    assert_eq!(done_runs(&ws.root), 2);
    assert_eq!(stdout(&tick(&ws, &["--dry-run"])), "");
}

/// A note whose lock another livenote process holds (a run in `watch` or an editor) is
/// reported as skipped, not run.
#[test]
fn a_note_another_process_runs_is_skipped() {
    let ws = Workspace::with_note(&command_config("echo new body"), HOURLY);
    ws.set_clock("2026-11-23T09:00:30Z");
    let store = livenote::runs::Store::new(&ws.root);
    let lock = store.try_lock("n.md").unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|| panic!("locked"));
    let out = tick(&ws, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        run_lines(&out),
        ["fire n.md (cron)", "skip n.md (running in another livenote process)"],
        "{}",
        stderr(&out)
    );
    assert_eq!(ws.note(), HOURLY);
    drop(lock);
    let out = tick(&ws, &[]);
    assert_eq!(done_runs(&ws.root), 1, "{}", stderr(&out));
}

/// A tick started while `watch` runs the same folder at the same instant: whichever takes the
/// note first runs it; each occurrence runs once.
#[test]
fn a_tick_beside_watch_runs_each_occurrence_once() {
    let minutely = "---\nlive:\n  objective: count\n  triggers:\n    cronExpr: \"* * * * *\"\n  lastRunAt: \"2026-11-23T08:59:10.000Z\"\n---\n# Count\n\nold body\n";
    // Slow enough for the two to overlap.
    let ws = Workspace::with_note(&command_config("sleep 0.3; date +%s%N"), minutely);
    ws.set_clock("2026-11-23T08:59:20Z");
    let watch = ws.watch_clock();
    let mut ticks = Vec::new();
    // The backoff after a run (none after a success) does not apply: one minute apart.
    for (i, t) in ["2026-11-23T09:00:30Z", "2026-11-23T09:01:30Z", "2026-11-23T09:02:30Z"].iter().enumerate()
    {
        ws.set_clock(t);
        let out = tick(&ws, &[]);
        assert!(matches!(out.status.code(), Some(0)), "{}", stderr(&out));
        wait_until(&format!("run {}", i + 1), 20, || done_runs(&ws.root) == i + 1);
        // Give watch every chance to run the occurrence again.
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(done_runs(&ws.root), i + 1, "occurrence {} ran twice:\n{}", i + 1, ws.note());
        ticks.push(run_lines(&out));
    }
    let log = watch.stop();
    let by_watch = log.iter().filter(|l| l.contains("done n.md")).count();
    let by_tick = ticks.iter().flatten().filter(|l| l.starts_with("done n.md")).count();
    assert_eq!(by_watch + by_tick, 3, "watch: {log:#?}\nticks: {ticks:#?}");
}

/// Two ticks started together (two timers, a timer and a CI job on one machine): one runs the
/// note, the other finds it running or run.
#[test]
fn two_ticks_at_once_run_the_note_once() {
    let ws = Workspace::with_note(&command_config("sleep 0.5; echo new body"), HOURLY);
    ws.set_clock("2026-11-23T09:00:30Z");
    let clock = ws.clock().display().to_string();
    let start = || {
        ws.livenote(&["tick", "--clock-file", &clock, "."])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (a, b) = (start(), start());
    let outs = [a, b].map(|c| c.wait_with_output().unwrap_or_else(|e| panic!("{e}")));
    for out in &outs {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    }
    assert_eq!(done_runs(&ws.root), 1, "{}\n{}", stderr(&outs[0]), stderr(&outs[1]));
    let done: usize =
        outs.iter().map(|o| run_lines(o).iter().filter(|l| l.starts_with("done n.md")).count()).sum();
    assert_eq!(done, 1, "{}\n{}", stderr(&outs[0]), stderr(&outs[1]));
    assert!(ws.note().ends_with("# Count\n\nnew body\n"), "{}", ws.note());
}

/// A tick on a machine that is not the folder's `[scheduler] host` fires nothing on its own and
/// says why; once the note has waited `failover_after` with no attempt from any machine, the
/// tick takes it over, once.
#[test]
fn a_tick_off_the_host_fires_only_by_failover() {
    let dir = tempdir();
    write(&dir.path().join("n.md"), HOURLY);
    let config =
        format!("[scheduler]\nhost = \"nas\"\nfailover_after = \"30m\"\n{}", command_config("echo new body"));
    let ws = Workspace::in_dir(dir, &config);
    let tick_as = |me: &str| tick_as(&ws, me);
    ws.set_clock("2026-11-23T09:00:30Z");
    let out = tick_as("laptop");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(run_lines(&out).is_empty(), "{}", stderr(&out));
    assert!(stderr(&out).contains("scheduled on nas"), "{}", stderr(&out));
    assert_eq!(done_runs(&ws.root), 0);
    // Half an hour with no attempt from the host: this machine takes the occurrence over.
    ws.set_clock("2026-11-23T09:31:00Z");
    let out = tick_as("laptop");
    assert_eq!(run_lines(&out), ["fire n.md (cron)", "done n.md: Updated: new body"], "{}", stderr(&out));
    ws.set_clock("2026-11-23T09:40:00Z");
    assert!(run_lines(&tick_as("laptop")).is_empty());
    assert_eq!(done_runs(&ws.root), 1);
}

/// Issue 32 §1: the host ("nas") stopped five weeks ago. An hourly note (`failover_after =
/// "2h"`) and a minutely one (`"1h"`): the current occurrence of neither is ever that old, but no
/// machine attempted them for weeks, so a tick on the laptop takes each over, once per
/// occurrence, and then waits `failover_after` again from the occurrence after its own run.
#[test]
fn a_tick_off_the_host_takes_over_a_frequent_note_the_host_abandoned() {
    let abandoned = |cron: &str| {
        format!(
            "---\nlive:\n  objective: count\n  triggers:\n    cronExpr: \"{cron}\"\n  lastRunAt: \"2026-10-19T09:00:04.000Z\"\n  lastAttemptAt: \"2026-10-19T09:00:01.000Z\"\n---\n# Count\n\nold body\n"
        )
    };
    for (cron, after, quiet, owed) in [
        ("0 * * * *", "2h", "2026-11-23T11:59:00Z", "2026-11-23T12:00:30Z"),
        ("* * * * *", "1h", "2026-11-23T10:00:40Z", "2026-11-23T10:01:30Z"),
    ] {
        let dir = tempdir();
        write(&dir.path().join("n.md"), &abandoned(cron));
        let config = format!(
            "[scheduler]\nhost = \"nas\"\nfailover_after = \"{after}\"\n{}",
            command_config("echo new body")
        );
        let ws = Workspace::in_dir(dir, &config);
        ws.set_clock("2026-11-23T09:00:30Z");
        let out = tick_as(&ws, "laptop");
        assert_eq!(out.status.code(), Some(0), "{cron}: {}", stderr(&out));
        assert_eq!(
            run_lines(&out),
            ["fire n.md (cron)", "done n.md: Updated: new body"],
            "{cron}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("failover n.md: due since 2026-10-19"), "{cron}: {}", stderr(&out));
        // Once per occurrence, and not again until the next has waited `failover_after`.
        for at in ["2026-11-23T09:00:50Z", quiet] {
            ws.set_clock(at);
            let out = tick_as(&ws, "laptop");
            assert!(run_lines(&out).is_empty(), "{cron} at {at}: {}", stderr(&out));
        }
        assert_eq!(done_runs(&ws.root), 1, "{cron}");
        ws.set_clock(owed);
        let out = tick_as(&ws, "laptop");
        assert_eq!(
            run_lines(&out).first().map(String::as_str),
            Some("fire n.md (cron)"),
            "{cron}: {}",
            stderr(&out)
        );
        assert_eq!(done_runs(&ws.root), 2, "{cron}");
    }
}

/// `livenote tick` on the machine named `me` (`LIVENOTE_HOST`).
fn tick_as(ws: &Workspace, me: &str) -> Output {
    let clock = ws.clock().display().to_string();
    ws.livenote(&["tick", "--clock-file", clock.as_str(), "."])
        .env("LIVENOTE_HOST", me)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A schedule that starts late (GitHub Actions runs minutes after the hour): past the 2-minute
/// grace a plain tick skips the occurrence, as the scheduler does; `--catch-up 30m` serves it,
/// once, and not an occurrence older than that.
#[test]
fn catch_up_serves_an_occurrence_the_schedule_reached_late() {
    let dir = tempdir();
    let ran = HOURLY
        .replace("  objective: count\n", "  objective: count\n  lastRunAt: \"2026-11-23T08:00:10.000Z\"\n");
    write(&dir.path().join("n.md"), &ran);
    let ws = Workspace::in_dir(dir, &command_config("echo new body"));
    ws.set_clock("2026-11-23T09:12:00Z");
    assert!(run_lines(&tick(&ws, &[])).is_empty());
    let dry = tick(&ws, &["--dry-run", "--catch-up", "30m"]);
    assert_eq!(stdout(&dry).trim(), "would fire n.md (cron)", "{}", stderr(&dry));
    assert_eq!(done_runs(&ws.root), 0);
    let out = tick(&ws, &["--catch-up", "30m"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(run_lines(&out), ["fire n.md (cron)", "done n.md: Updated: new body"], "{}", stderr(&out));
    assert!(
        stderr(&out).contains("catch up n.md: its occurrence at 2026-11-23T09:00:00"),
        "{}",
        stderr(&out)
    );
    // Served: a second late tick runs nothing.
    ws.set_clock("2026-11-23T09:20:00Z");
    assert!(run_lines(&tick(&ws, &["--catch-up", "30m"])).is_empty());
    // The 10:00 occurrence reached at 10:45 is older than the catch-up: left, as missed.
    ws.set_clock("2026-11-23T10:45:00Z");
    assert!(run_lines(&tick(&ws, &["--catch-up", "30m"])).is_empty());
    assert_eq!(done_runs(&ws.root), 1);
    // A duration that does not parse is a usage error.
    let bad = tick(&ws, &["--catch-up", "soon"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("--catch-up \"soon\""), "{}", stderr(&bad));
}

/// Issue 32 §3: a slow source never costs a scheduled run. A `command` source takes a few
/// seconds, by the end of which the clock says the 2-minute grace of the note's 09:00
/// occurrence has passed; the note was due when the tick started, and runs beside the poll.
#[test]
fn a_slow_source_never_costs_a_scheduled_run() {
    let slow = r#"
[sources.slow]
kind = "command"
command = ["sh", "-c", 'sleep 3; printf 2026-11-23T09:05:00Z > "$SLOW_CLOCK.tmp"; mv "$SLOW_CLOCK.tmp" "$SLOW_CLOCK"; echo "{\"id\": \"1\", \"payload\": {\"title\": \"slow\"}}"']
"#;
    let ws = Workspace::with_note(&format!("{}{slow}", command_config("echo new body")), HOURLY);
    ws.set_clock("2026-11-23T09:00:30Z");
    let clock = ws.clock().display().to_string();
    let out = ws
        .livenote(&["tick", "--clock-file", &clock, "."])
        .env("SLOW_CLOCK", &clock)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(run_lines(&out), ["fire n.md (cron)", "done n.md: Updated: new body"], "{}", stderr(&out));
    assert!(stderr(&out).contains("1 source polled, 1 note fired"), "{}", stderr(&out));
    // Decided, and run, at the tick's instant; the poll ended past the grace.
    assert!(ws.note().contains("lastRunAt: \"2026-11-23T09:00:30.000Z\""), "{}", ws.note());
    assert_eq!(std::fs::read_to_string(ws.clock()).unwrap_or_default(), "2026-11-23T09:05:00Z");
}

/// Daily at 08:00, ran yesterday: the machine sleeps through today's 08:00 and wakes at 09:30.
const DAILY: &str = "---\nlive:\n  objective: the day\n  triggers:\n    cronExpr: \"0 8 * * *\"\n  lastAttemptAt: \"2026-11-22T08:00:01.000Z\"\n  lastRunAt: \"2026-11-22T08:00:04.000Z\"\n---\n# Day\n\nyesterday\n";

/// Issue 32 §3: without `[scheduler] catch_up` (the default) an occurrence slept through is not
/// replayed, but said: `watch` logs it once, `livenote list` names it (text and JSON), and a
/// tick says it too.
#[test]
fn an_occurrence_slept_through_is_said_not_run() {
    let ws = Workspace::with_note(&command_config("echo new body"), DAILY);
    ws.set_clock("2026-11-23T07:59:00Z");
    let mut watch = ws.watch_clock();
    // The machine sleeps; the clock jumps past 08:00 and its grace.
    ws.set_clock("2026-11-23T09:30:00Z");
    watch.wait_for("missed n.md: its occurrence at 08:00 passed while nothing here ran it");
    std::thread::sleep(Duration::from_millis(500));
    ws.set_clock("2026-11-23T09:31:00Z");
    std::thread::sleep(Duration::from_millis(500));
    let log = watch.stop();
    assert_eq!(log.iter().filter(|l| l.contains("missed n.md")).count(), 1, "said once: {log:#?}");
    assert!(log.iter().any(|l| l.contains("next at tomorrow 08:00")), "{log:#?}");
    assert_eq!(done_runs(&ws.root), 0, "{log:#?}");
    let list = |format: &str| {
        let out = ws
            .livenote(&["list", "--format", format, "--at", "2026-11-23T09:30:00Z"])
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let text = list("text");
    assert!(
        text.contains("    missed 2026-11-23T08:00:00+00:00: nothing ran it then (asleep or off)"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&list("json")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json[0]["missed"], "2026-11-23T08:00:00+00:00", "{json}");
    let out = tick(&ws, &[]);
    assert!(run_lines(&out).is_empty(), "{}", stderr(&out));
    assert!(stderr(&out).contains("missed n.md"), "{}", stderr(&out));
    // Past the next occurrence nothing is missed any more.
    let list = ws
        .livenote(&["list", "--format", "json", "--at", "2026-11-24T08:00:30Z"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!stdout(&list).contains("\"missed\""), "{}", stdout(&list));
}

/// Issue 32 §3: `[scheduler] catch_up = "2h"`: `watch` serves an occurrence slept through, once,
/// when it wakes; one slept through by longer than that is said, not run; a tick serves it too.
#[test]
fn catch_up_serves_an_occurrence_slept_through_once() {
    let config = format!("[scheduler]\ncatch_up = \"2h\"\n{}", command_config("echo new body"));
    let ws = Workspace::with_note(&config, DAILY);
    ws.set_clock("2026-11-23T07:59:00Z");
    let mut watch = ws.watch_clock();
    ws.set_clock("2026-11-23T09:30:00Z");
    watch.wait_for("done n.md");
    ws.set_clock("2026-11-23T09:45:00Z");
    std::thread::sleep(Duration::from_millis(600));
    let log = watch.stop();
    assert!(
        log.iter().any(|l| l.contains("catch up n.md: its occurrence at 2026-11-23T08:00:00.000Z was not run (within [scheduler] catch_up)")),
        "{log:#?}"
    );
    assert_eq!(done_runs(&ws.root), 1, "{log:#?}");
    assert!(ws.note().contains("lastRunAt: \"2026-11-23T09:30:00.000Z\""), "{}", ws.note());
    // The next day the machine wakes at 11:00, three hours late: said, not run.
    ws.set_clock("2026-11-24T11:00:00Z");
    let out = tick(&ws, &[]);
    assert!(run_lines(&out).is_empty(), "{}", stderr(&out));
    assert!(stderr(&out).contains("longer ago than the catch-up (2h)"), "{}", stderr(&out));
    // At 09:00 a tick serves it, as `watch` did.
    ws.set_clock("2026-11-24T09:00:00Z");
    let out = tick(&ws, &[]);
    assert_eq!(run_lines(&out), ["fire n.md (cron)", "done n.md: Updated: new body"], "{}", stderr(&out));
    assert_eq!(done_runs(&ws.root), 2);
}

/// Issue 31: a calendar event lasting 99,999,999 weeks from today overflowed a date-time sum:
/// `livenote tick` panicked (exit 101) before it fired the due note. The duration is now a
/// problem of the digest; the tick polls the calendar, fires the note and exits 0.
#[test]
fn a_calendar_event_lasting_past_the_end_of_time_stops_no_tick() {
    let dir = tempdir();
    write(&dir.path().join("n.md"), HOURLY);
    write(
        &dir.path().join("cal.ics"),
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:forever@example.org\r\nSUMMARY:Forever\r\nDTSTART:20261123T100000Z\r\nDURATION:P99999999W\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    );
    let config = format!(
        "{}\n[sources.cal]\nkind = \"ics\"\npath = \"cal.ics\"\nbackfill = true\n",
        command_config("echo new body")
    );
    let ws = Workspace::in_dir(dir, &config);
    ws.set_clock("2026-11-23T09:00:30Z");
    let out = tick(&ws, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(run_lines(&out), ["fire n.md (cron)", "done n.md: Updated: new body"], "{}", stderr(&out));
    assert!(stderr(&out).contains("1 source polled, 1 note fired, 1 event processed"), "{}", stderr(&out));
    assert_eq!(done_runs(&ws.root), 1);
    let done = livenote::events::done_dir(&ws.root);
    let records: Vec<serde_json::Value> = common::files(&done)
        .iter()
        .filter_map(|f| serde_json::from_str(&std::fs::read_to_string(done.join(f)).ok()?).ok())
        .collect();
    let [digest] = records.as_slice() else { panic!("{records:?}") };
    let payload = &digest["payload"];
    assert_eq!(payload["events"][0]["title"], "Forever", "{payload}");
    assert_eq!(
        payload["problems"],
        serde_json::json!(["`Forever`: its DURATION `P99999999W` is not understood"]),
        "{payload}"
    );
}
