//! See the suite's header in containment.rs.
//!
//! Issue 12 §5 and the last bullet of §4: undo restores the body from before the latest run
//! that changed it, refuses over later edits (naming the lines) unless `--force`, saves the
//! current body first (so an undo can be undone), restores only from the note's own history
//! (`lastRunId` must be a run id), and `runs/` and `events/done/` are pruned like history.
//! Everything goes through the real binary (`livenote run/undo/history/event/watch`).

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;

use crate::common::{Workspace, command_config, files, tempdir, wait_until, write};

/// The provider prints `next.txt`, or fails (changing nothing) when there is none.
const SCRIPT: &str = "if [ -f next.txt ]; then cat next.txt; else echo 'no next.txt' >&2; exit 1; fi";

const NOTE: &str = "---\nlive:\n  objective: Keep this current\n---\n# Title\n\nold\n";

fn workspace(extra_config: &str) -> Workspace {
    Workspace::with_note(&format!("{}{extra_config}", command_config(SCRIPT)), NOTE)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn livenote(ws: &Workspace, args: &[&str]) -> Output {
    ws.livenote(args).output().unwrap_or_else(|e| panic!("livenote {args:?}: {e}"))
}

/// `livenote run n.md` at `at`; the provider prints `next` (or fails when `None`).
fn run(ws: &Workspace, at: &str, next: Option<&str>) -> Output {
    match next {
        Some(n) => write(&ws.root.join("next.txt"), n),
        None => {
            let _ = std::fs::remove_file(ws.root.join("next.txt"));
        }
    }
    ws.set_clock(at);
    let clock = ws.clock().display().to_string();
    livenote(ws, &["run", "n.md", "--clock-file", &clock])
}

/// The agent's part of the note (below the H1).
fn body(ws: &Workspace) -> String {
    let text = ws.note();
    text[livenote::note::body::agent_region(&text)].to_owned()
}

fn last_run_id(ws: &Workspace) -> String {
    let text = ws.note();
    let analysis = livenote::note::analyze(&text, &livenote::note::Options::default());
    analysis.live.and_then(|l| l.last_run_id).unwrap_or_else(|| panic!("no lastRunId in\n{text}"))
}

#[test]
fn undo_after_a_failed_run_restores_from_before_the_latest_changing_run() {
    let ws = workspace("");
    let ok = run(&ws, "2026-11-23T09:00:00Z", Some("new\n"));
    assert!(ok.status.success(), "{}", stderr(&ok));
    let changing = last_run_id(&ws);
    assert_eq!(body(&ws), "\nnew\n");
    // A failed run: lastRunId now names a run that changed nothing (undo did nothing today).
    let failed = run(&ws, "2026-11-23T09:10:00Z", None);
    assert!(!failed.status.success());
    assert_ne!(last_run_id(&ws), changing);
    assert_eq!(body(&ws), "\nnew\n");

    let undo = livenote(&ws, &["undo", "n.md"]);
    assert!(undo.status.success(), "{}", stderr(&undo));
    assert!(stdout(&undo).contains(&format!("undid run {changing}")), "{}", stdout(&undo));
    assert_eq!(body(&ws), "\nold\n");
}

#[test]
fn undo_with_only_failed_runs_says_there_is_nothing_to_undo() {
    let ws = workspace("");
    assert!(!run(&ws, "2026-11-23T09:00:00Z", None).status.success());
    let before = ws.note();
    let undo = livenote(&ws, &["undo", "n.md"]);
    assert_eq!(undo.status.code(), Some(1), "{}", stderr(&undo));
    assert!(stderr(&undo).contains("nothing to undo"), "{}", stderr(&undo));
    assert_eq!(ws.note(), before);
}

#[test]
fn undo_refuses_over_later_edits_force_restores_and_undo_is_undoable() {
    let ws = workspace("");
    assert!(run(&ws, "2026-11-23T09:00:00Z", Some("new\n")).status.success());
    // The user adds a line after the run (the note is not open in an editor).
    let edited = ws.note().replace("\nnew\n", "\nnew\nmine\n");
    write(&ws.root.join("n.md"), &edited);
    let line = edited.lines().position(|l| l == "mine").map(|i| i + 1).unwrap_or_default();

    let refused = livenote(&ws, &["undo", "n.md"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let msg = stderr(&refused);
    assert!(msg.contains("edited since run"), "{msg}");
    assert!(msg.contains(&format!("line {line}")), "the refusal names line {line}: {msg}");
    assert!(msg.contains("+ mine"), "{msg}");
    assert!(msg.contains("--force"), "{msg}");
    assert_eq!(ws.note(), edited, "a refused undo changes nothing");

    let forced = livenote(&ws, &["undo", "n.md", "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_eq!(body(&ws), "\nold\n");

    // The forced undo saved the body first: undoing it brings the user's line back.
    let redo = livenote(&ws, &["undo", "n.md"]);
    assert!(redo.status.success(), "{}", stderr(&redo));
    assert_eq!(body(&ws), "\nnew\nmine\n");
    assert_eq!(ws.note(), edited);
}

#[test]
fn a_last_run_id_that_is_a_path_is_refused_and_nothing_is_copied() {
    // Today `lastRunId: "/home/me/diary"` makes undo copy `/home/me/diary.md` into the note.
    let elsewhere = tempdir();
    let diary = elsewhere.path().join("diary");
    write(&elsewhere.path().join("diary.md"), "SECRET diary entry\n");
    let ws = workspace("");
    let note = NOTE.replace(
        "  objective: Keep this current\n",
        &format!("  objective: Keep this current\n  lastRunId: {:?}\n", diary.display().to_string()),
    );
    write(&ws.root.join("n.md"), &note);

    let undo = livenote(&ws, &["undo", "n.md"]);
    assert_eq!(undo.status.code(), Some(1), "{}", stderr(&undo));
    assert!(stderr(&undo).contains("not a livenote run id"), "{}", stderr(&undo));
    assert_eq!(ws.note(), note);
    assert!(!ws.note().contains("SECRET"));
    // A relative one is refused alike.
    let note = note.replace(&format!("{:?}", diary.display().to_string()), "\"../../../etc/passwd\"");
    write(&ws.root.join("n.md"), &note);
    let undo = livenote(&ws, &["undo", "n.md", "--force"]);
    assert_eq!(undo.status.code(), Some(1), "{}", stderr(&undo));
    assert_eq!(ws.note(), note);
}

#[test]
fn history_json_lists_every_run_with_its_fields() {
    let ws = workspace("");
    assert!(run(&ws, "2026-11-23T09:00:00Z", Some("new\nline 2\n")).status.success());
    let first = last_run_id(&ws);
    assert!(!run(&ws, "2026-11-23T09:10:00Z", None).status.success());
    let second = last_run_id(&ws);
    assert!(livenote(&ws, &["undo", "n.md"]).status.success());

    let out = livenote(&ws, &["history", "n.md", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let runs: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    let runs = runs.as_array().cloned().unwrap_or_default();
    assert_eq!(runs.len(), 3, "{runs:?}");
    for r in &runs {
        let mut keys: Vec<&str> =
            r.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["host", "id", "linesAdded", "linesRemoved", "outcome", "snapshot", "summary", "time", "trigger"],
            "{r}"
        );
        assert_eq!(r["snapshot"], true, "{r}");
    }
    // Newest first: the undo, the failed run, the run that changed the body.
    let (undo, failed, done) = (&runs[0], &runs[1], &runs[2]);
    assert_eq!(done["id"], first.as_str());
    assert_eq!(done["time"], "2026-11-23T09:00:00.000Z");
    assert_eq!(done["trigger"], "manual");
    assert_eq!(done["outcome"], "done");
    assert_eq!(done["summary"], "Updated: new");
    assert_eq!((done["linesAdded"].as_u64(), done["linesRemoved"].as_u64()), (Some(2), Some(1)), "{done}");

    assert_eq!(failed["id"], second.as_str());
    assert_eq!(failed["time"], "2026-11-23T09:10:00.000Z");
    assert_eq!(failed["outcome"], "failed");
    assert!(failed["summary"].is_string(), "{failed}");
    assert_eq!((failed["linesAdded"].as_u64(), failed["linesRemoved"].as_u64()), (Some(0), Some(0)));

    assert_eq!(undo["trigger"], "undo");
    assert_eq!(undo["outcome"], "done");
    assert!(undo["summary"].as_str().is_some_and(|s| s.starts_with(&format!("Undid run {first}"))), "{undo}");
    assert_eq!((undo["linesAdded"].as_u64(), undo["linesRemoved"].as_u64()), (Some(1), Some(2)), "{undo}");
    assert!(undo["id"].as_str().is_some_and(|id| id > second.as_str()), "{undo}");

    let text = livenote(&ws, &["history", "n.md"]);
    assert!(text.status.success(), "{}", stderr(&text));
    // A header row over the three runs.
    assert_eq!(stdout(&text).lines().count(), 4, "{}", stdout(&text));
    assert!(stdout(&text).starts_with("RUN  "), "{}", stdout(&text));
    assert!(stdout(&text).contains(&first), "{}", stdout(&text));
}

#[test]
fn transcripts_and_done_events_are_pruned_to_keep() {
    let ws = workspace("[history]\nruns_keep = 2\nevents_keep = 2\n");
    let runs_dir = ws.root.join(".livenote/runs");
    // Files livenote did not create there stay, and a symlink is never followed.
    let outside = tempdir();
    let precious = outside.path().join("precious.jsonl");
    write(&precious, "{}\n");
    write(&runs_dir.join("notes.txt"), "mine\n");
    std::os::unix::fs::symlink(&precious, runs_dir.join("00000000000000000000000000.jsonl"))
        .unwrap_or_else(|e| panic!("{e}"));

    let mut ids = Vec::new();
    for (i, at) in ["09:00", "09:10", "09:20", "09:30"].iter().enumerate() {
        let o = run(&ws, &format!("2026-11-23T{at}:00Z"), Some(&format!("run {i}\n")));
        assert!(o.status.success(), "{}", stderr(&o));
        ids.push(last_run_id(&ws));
    }
    let mut kept = vec![
        "00000000000000000000000000.jsonl".to_owned(),
        format!("{}.jsonl", ids[2]),
        format!("{}.jsonl", ids[3]),
        "notes.txt".to_owned(),
    ];
    kept.sort();
    assert_eq!(files(&runs_dir), kept);
    assert_eq!(std::fs::read_to_string(&precious).unwrap_or_default(), "{}\n");

    // Four events, processed by `livenote watch` (no note wants them): two stay in done/.
    for i in 0..4 {
        let mut child = ws
            .livenote(&["event", "--source", "test", "--type", "ping", "."])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        if let Some(mut stdin) = child.stdin.take() {
            let _ = write!(stdin, "event {i}");
        }
        let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success());
    }
    let pending = ws.root.join(".livenote/events/pending");
    let done = ws.root.join(".livenote/events/done");
    let mut created = files(&pending);
    assert_eq!(created.len(), 4);
    created.sort();
    write(&done.join("README"), "mine\n");
    let watcher = ws.watch_clock();
    wait_until("the events to be processed and pruned", 20, || {
        files(&pending).is_empty() && files(&done).len() == 3
    });
    let log = watcher.stop();
    let mut want = vec!["README".to_owned(), created[2].clone(), created[3].clone()];
    want.sort();
    assert_eq!(files(&done), want, "{log:?}");
    assert!(done_dir_is_plain(&done));
}

fn done_dir_is_plain(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
}

/// A run that left no record of its result (killed mid-run, or made by an older livenote):
/// undo cannot tell the run's edits from the user's, so it asks for `--force`.
#[test]
fn undo_after_a_run_without_a_record_needs_force() {
    let ws = workspace("");
    assert!(run(&ws, "2026-11-23T09:00:00Z", Some("new\n")).status.success());
    let history = ws.root.join(".livenote/history");
    let mut removed = 0;
    for dir in std::fs::read_dir(&history).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            if f.path().extension().is_some_and(|e| e == "after") {
                std::fs::remove_file(f.path()).unwrap_or_else(|e| panic!("{e}"));
                removed += 1;
            }
        }
    }
    assert_eq!(removed, 1, "the run recorded what it left");
    let before = ws.note();
    let refused = livenote(&ws, &["undo", "n.md"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("no record"), "{}", stderr(&refused));
    assert_eq!(ws.note(), before);
    let forced = livenote(&ws, &["undo", "n.md", "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_eq!(body(&ws), "\nold\n");
}

/// Issue 14: after an undo the runtime fields describe the body that is there: the summary says
/// the run was undone, while `lastRunAt`/`lastAttemptAt` (the schedule's anchors) and
/// `lastRunId` stay, so the note is not due again at once. The run stays in history, and
/// undoing the undo gives back the very same note.
#[test]
fn undo_marks_the_summary_keeps_the_schedule_and_a_redo_restores_the_note() {
    let note = NOTE.replace(
        "  objective: Keep this current\n",
        "  objective: Keep this current\n  triggers:\n    cronExpr: \"*/5 * * * *\"\n",
    );
    let ws = Workspace::with_note(&command_config(SCRIPT), &note);
    assert!(run(&ws, "2026-11-23T09:00:30Z", Some("new\n")).status.success());
    let ran = ws.note();
    let id = last_run_id(&ws);
    let runtime = |text: &str| -> String {
        text.lines().filter(|l| l.starts_with("  last")).map(|l| format!("{l}\n")).collect()
    };
    let ran_fields = format!(
        "  lastAttemptAt: \"2026-11-23T09:00:30.000Z\"\n  lastRunId: \"{id}\"\n  lastRunAt: \"2026-11-23T09:00:30.000Z\"\n  lastRunSummary: \"Updated: new\"\n  lastRunError: null\n"
    );
    assert_eq!(runtime(&ran), ran_fields);

    let undo = livenote(&ws, &["undo", "n.md"]);
    assert!(undo.status.success(), "{}", stderr(&undo));
    assert_eq!(body(&ws), "\nold\n");
    assert_eq!(runtime(&ws.note()), ran_fields.replace("\"Updated: new\"", "\"Undone: Updated: new\""));
    // Still not due: the 09:00 cycle ran; next is 09:05.
    let list = livenote(&ws, &["list", "--format", "json", "--at", "2026-11-23T09:01:00Z"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let items: Value =
        serde_json::from_str(&stdout(&list)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&list)));
    assert_eq!(items[0]["due"], Value::Null, "{items}");
    assert_eq!(items[0]["nextDue"], "2026-11-23T09:05:00+00:00", "{items}");
    // History: the undo, then the run it undid.
    let history = livenote(&ws, &["history", "n.md", "--format", "json"]);
    let runs: Value = serde_json::from_str(&stdout(&history)).unwrap_or_else(|e| panic!("{e}"));
    let listed: Vec<(&str, &str)> = runs
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (r["id"].as_str().unwrap_or(""), r["trigger"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(listed.len(), 2, "{runs}");
    assert_eq!(listed[0].1, "undo", "{runs}");
    assert_eq!(listed[1], (id.as_str(), "manual"), "{runs}");

    let redo = livenote(&ws, &["undo", "n.md"]);
    assert!(redo.status.success(), "{}", stderr(&redo));
    assert_eq!(ws.note(), ran);
}
