//! What the command line shows of a note's runs, and a new note's first fill, through the real
//! binaries (issue 32, sections 7 and 8): `make-live --run` beside a running `watch` fills the
//! new note once; a stopped run reads "stopped", not "failed"; `list` shows the last summary.

mod common;

use std::io::{Read, Write};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::{Workspace, command_config, done_runs, wait_until};

fn output(ws: &Workspace, args: &[&str]) -> Output {
    ws.livenote(args).env_remove("LIVENOTE_LOG").output().unwrap_or_else(|e| panic!("{e}"))
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The provider's invocations: each appends a line to `runs.log` in the workspace.
fn invocations(ws: &Workspace) -> usize {
    std::fs::read_to_string(ws.root.join("runs.log")).map(|t| t.lines().count()).unwrap_or(0)
}

/// `make-live new.md --cron … --run` beside `watch`: the new block is due at once, and `watch`
/// fills it while `make-live` is still on its way to the run (held here: its stdout is a full
/// pipe, so it waits on its first line, after the write and before the run). The run then
/// finds the note filled since it was made live and reports that run instead of making a
/// second one; before, it ran the note again.
#[test]
fn make_live_run_beside_watch_fills_the_new_note_once() {
    let ws = Workspace::with_note(
        &command_config("echo run >> runs.log; echo filled"),
        "---\nlive:\n  objective: other\n  lastRunAt: \"2026-11-23T08:00:00.000Z\"\n---\n# Other\n",
    );
    ws.set_clock("2026-11-23T09:00:30Z");
    let mut w = ws.watch_clock();
    let (mut reader, writer) = std::io::pipe().unwrap_or_else(|e| panic!("{e}"));
    // Fill the pipe from a thread of its own (its capacity differs by system): once full,
    // `make-live`'s first line blocks until the test reads.
    let mut filler = writer.try_clone().unwrap_or_else(|e| panic!("{e}"));
    let fill = std::thread::spawn(move || {
        let _ = filler.write_all(&vec![0u8; 1 << 20]);
    });
    std::thread::sleep(Duration::from_millis(200));
    let clock = ws.clock().display().to_string();
    let mut make = ws
        .livenote(&["make-live", "new.md", "--objective", "Fill me.", "--cron", "0 * * * *", "--run"])
        .args(["--clock-file", &clock])
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let new = ws.root.join("new.md");
    wait_until("watch to fill the new note", 20, || {
        std::fs::read_to_string(&new).is_ok_and(|t| t.contains("lastRunAt:"))
    });
    w.wait_for("done new.md");
    // Let `make-live` go on.
    let drain = std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = reader.read_to_end(&mut all);
        String::from_utf8_lossy(&all).replace('\0', "")
    });
    let status = make.wait().unwrap_or_else(|e| panic!("{e}"));
    let mut stderr = String::new();
    if let Some(mut e) = make.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let _ = fill.join();
    let said = drain.join().unwrap_or_default();
    // Anything `watch` would still do about it, it does in this time.
    std::thread::sleep(Duration::from_millis(800));
    let logs = w.stop();
    assert_eq!(invocations(&ws), 1, "the new note ran more than once\n{said}\n{stderr}\n{logs:#?}");
    assert_eq!(done_runs(&ws.root), 1, "{logs:#?}");
    assert!(status.success(), "{said}\n{stderr}");
    assert!(said.contains("made new.md live") && said.contains("Updated: filled"), "{said}\n{stderr}");
}

/// A run stopped by hand is "stopped" in `list` (text and JSON) and `history`, not "failed",
/// and `list`'s table shows the last run's summary under its note.
#[test]
fn list_and_history_say_stopped_and_show_the_summary() {
    let ws = Workspace::with_note(
        &command_config("test -e slow && sleep 30; echo new body"),
        "---\nlive:\n  objective: slow\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n# Slow\n\nold body\n",
    );
    common::write(&ws.root.join("done.md"), "---\nlive:\n  objective: quick\n---\n# Quick\n\nold body\n");
    let ran = output(&ws, &["run", "done.md"]);
    assert!(ran.status.success(), "{ran:?}");
    common::write(&ws.root.join("slow"), "");
    let run = ws.livenote(&["run", "n.md"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let mut run = run.unwrap_or_else(|e| panic!("{e}"));
    let store = livenote::runs::Store::new(&ws.root);
    wait_until("the run to start", 20, || store.is_locked("n.md"));
    let stop = output(&ws, &["stop", "n.md"]);
    assert!(stop.status.success(), "{stop:?}");
    let _ = run.wait();
    assert!(ws.note().contains("lastStoppedAt:"), "{}", ws.note());

    let json: serde_json::Value =
        serde_json::from_str(&stdout(&output(&ws, &["list", "--format", "json"]))).unwrap_or_default();
    let status_of = |path: &str| {
        json.as_array().into_iter().flatten().find(|i| i["path"] == path).map(|i| i["status"].clone())
    };
    assert_eq!(status_of("n.md"), Some(serde_json::json!("stopped")), "{json:#}");
    assert_eq!(status_of("done.md"), Some(serde_json::json!("live")), "{json:#}");

    let table = stdout(&output(&ws, &["list"]));
    let rows: Vec<&str> = table.lines().collect();
    let row = |name: &str| rows.iter().position(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{table}"));
    let (done, stopped) = (row("done.md"), row("n.md"));
    assert!(rows[done].contains(" live "), "{table}");
    assert_eq!(rows.get(done + 1).copied(), Some("    summary: Updated: new body"), "{table}");
    assert!(rows[stopped].contains(" stopped "), "{table}");
    assert!(!table.contains("error: stopped"), "the stop is the status, not an error:\n{table}");

    let history = stdout(&output(&ws, &["history", "n.md"]));
    assert!(history.contains("stopped"), "{history}");
}
