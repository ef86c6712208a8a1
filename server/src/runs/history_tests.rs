use super::*;

fn bodies(runs: &[(&str, &str, Option<&str>)]) -> Vec<RunBodies> {
    runs.iter()
        .map(|(id, before, after)| RunBodies {
            id: (*id).to_owned(),
            before: (*before).to_owned(),
            after: after.map(str::to_owned),
        })
        .collect()
}

const A: &str = "01KAT5B2X0000000000000000A";
const B: &str = "01KAT5B2X0000000000000000B";
const C: &str = "01KAT5B2X0000000000000000C";

#[test]
fn run_ids_are_ulids_only() {
    assert!(is_run_id(A));
    assert!(is_run_id(&ulid::Ulid::new().to_string()));
    for bad in [
        "/home/me/diary",
        "../../../../home/me/diary",
        "01KAT5",
        "01kat5b2x0000000000000000a",
        "01KAT5B2X000000000000000/A",
        "01KAT5B2X0000000000000000I",
        "81KAT5B2X0000000000000000A",
        "01KAT5B2X0000000000000000AA",
        "",
    ] {
        assert!(!is_run_id(bad), "{bad}");
    }
}

#[test]
fn plan_skips_runs_that_changed_nothing() {
    // A changed x → y; B failed without an edit.
    let runs = bodies(&[(A, "x\n", Some("y\n")), (B, "y\n", Some("y\n"))]);
    assert_eq!(
        plan(&runs, "y\n"),
        Plan::Restore { run: A.to_owned(), restore: "x\n".to_owned(), left: Some("y\n".to_owned()) }
    );
    assert_eq!(plan(&bodies(&[(A, "x\n", Some("x\n"))]), "x\n"), Plan::Nothing);
    assert_eq!(plan(&[], "x\n"), Plan::Nothing);
}

#[test]
fn plan_without_records_derives_and_says_so() {
    // No `.after`: the next snapshot (or the current body) tells whether it changed.
    let runs = bodies(&[(A, "x\n", None), (B, "y\n", None), (C, "y\n", None)]);
    assert_eq!(
        plan(&runs, "y\n"),
        Plan::Restore { run: A.to_owned(), restore: "x\n".to_owned(), left: None }
    );
}

fn note(runtime: &str) -> String {
    format!("---\nlive:\n  objective: x\n{runtime}---\n# T\n\nbody\n")
}

#[test]
fn undo_marks_the_summary_and_a_redo_takes_the_mark_off() {
    let ran =
        note(&format!("  lastRunId: \"{A}\"\n  lastRunSummary: \"Updated: new\"\n  lastRunError: null\n"));
    let undone = vec![(RuntimeField::LastRunSummary, Some("Undone: Updated: new".to_owned()))];
    assert_eq!(undo_fields(&ran, A, false), undone);
    // A later attempt that failed without editing: its error is its own and stays.
    let later =
        note(&format!("  lastRunId: \"{B}\"\n  lastRunSummary: \"Updated: new\"\n  lastRunError: boom\n"));
    assert_eq!(undo_fields(&later, A, false), undone);
    // Redo: the undone run was an undo.
    let marked = note("  lastRunSummary: \"Undone: Updated: new\"\n");
    assert_eq!(
        undo_fields(&marked, C, true),
        [(RuntimeField::LastRunSummary, Some("Updated: new".to_owned()))]
    );
    // Never marked twice; nothing to say without a summary or outside a live note.
    assert_eq!(undo_fields(&marked, C, false), []);
    assert_eq!(undo_fields(&note(""), A, false), []);
    assert_eq!(undo_fields("# plain\n", A, false), []);
}

#[test]
fn undoing_a_failed_run_clears_its_error_and_keeps_the_earlier_summary() {
    // Run B edited the body step by step, then failed: the summary is run A's, which
    // describes the body the undo restores.
    let failed =
        note(&format!("  lastRunId: \"{B}\"\n  lastRunSummary: \"Updated: new\"\n  lastRunError: boom\n"));
    assert_eq!(undo_fields(&failed, B, false), [(RuntimeField::LastRunError, None)]);
}

#[test]
fn edits_are_named_by_note_line() {
    let (places, preview) = describe_edits("a\nb\nc\nd\n", "a\nB\nc\n", 8);
    assert_eq!(places, "line 9, 1 line removed before line 11");
    assert_eq!(preview, vec!["- b", "+ B", "- d"]);
    assert_eq!(line_counts("a\nb\nc\n", "a\nB\nc\nd\n"), (2, 1));
    assert_eq!(line_counts("same\n", "same\n"), (0, 0));
}

fn touch(p: &Path) {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(p, "{}\n").unwrap_or_else(|e| panic!("{e}"));
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[cfg(unix)]
#[test]
fn pruning_transcripts_keeps_the_newest_and_only_deletes_its_own() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = Store::new(dir.path());
    let runs = dir.path().join(".livenote/runs");
    for id in [A, B, C] {
        touch(&runs.join(format!("{id}.jsonl")));
    }
    touch(&runs.join("notes.txt"));
    touch(&runs.join("00000000000000000000000000.jsonl.bak"));
    let outside = dir.path().join("precious.jsonl");
    touch(&outside);
    std::os::unix::fs::symlink(&outside, runs.join("01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl"))
        .unwrap_or_else(|e| panic!("{e}"));
    prune_transcripts(&store, 2);
    assert_eq!(
        names(&runs),
        vec![
            "00000000000000000000000000.jsonl.bak".to_owned(),
            "01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl".to_owned(),
            format!("{B}.jsonl"),
            format!("{C}.jsonl"),
            "notes.txt".to_owned(),
        ]
    );
    assert!(outside.exists());
}

#[cfg(unix)]
#[test]
fn pruning_a_symlinked_runs_folder_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let elsewhere = dir.path().join("elsewhere");
    for id in [A, B, C] {
        touch(&elsewhere.join(format!("{id}.jsonl")));
    }
    std::fs::create_dir_all(dir.path().join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&elsewhere, dir.path().join(".livenote/runs"))
        .unwrap_or_else(|e| panic!("{e}"));
    prune_transcripts(&Store::new(dir.path()), 1);
    assert_eq!(names(&elsewhere).len(), 3);
    // The same for events/done.
    std::fs::create_dir_all(dir.path().join(".livenote/events")).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&elsewhere, dir.path().join(".livenote/events/done"))
        .unwrap_or_else(|e| panic!("{e}"));
    touch(&elsewhere.join("x.json"));
    touch(&elsewhere.join("y.json"));
    prune_done_events(dir.path(), 1);
    assert_eq!(names(&elsewhere).len(), 5);
}

#[test]
fn pruning_done_events_keeps_the_newest_events() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let done = dir.path().join(".livenote/events/done");
    for (i, n) in ["a.json", "b.json", "c.json"].iter().enumerate() {
        touch(&done.join(n));
        let f = std::fs::File::options().write(true).open(done.join(n)).unwrap_or_else(|e| panic!("{e}"));
        let t = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + i as u64);
        f.set_modified(t).unwrap_or_else(|e| panic!("{e}"));
    }
    touch(&done.join(".event-x.tmp"));
    touch(&done.join("README"));
    std::fs::create_dir_all(done.join("sub.json")).unwrap_or_else(|e| panic!("{e}"));
    prune_done_events(dir.path(), 2);
    assert_eq!(names(&done), vec![".event-x.tmp", "README", "b.json", "c.json", "sub.json"]);
}

#[test]
fn runs_and_events_keep_are_configurable() {
    let (config, problems) = crate::config::Config::load_with(None, None, &|_: &str| None);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        (config.history.runs_keep, config.history.events_keep),
        (DEFAULT_RUNS_KEEP, DEFAULT_EVENTS_KEEP)
    );
    let client = json!({"history": {"keep": 3, "runs_keep": 5, "events_keep": 7}});
    let (config, problems) = crate::config::Config::load_with(None, Some(&client), &|_: &str| None);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((config.history.keep, config.history.runs_keep, config.history.events_keep), (3, 5, 7));
    // At least one of each is kept: 0 is refused and the default stays.
    let client = json!({"history": {"runs_keep": 0}});
    let (config, problems) = crate::config::Config::load_with(None, Some(&client), &|_: &str| None);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(config.history.runs_keep, DEFAULT_RUNS_KEEP);
}

#[cfg(unix)]
#[test]
fn a_symlinked_history_folder_is_not_read() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = Store::new(dir.path());
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(elsewhere.join(format!("{A}.md")), "secret\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.path().join(".livenote/history")).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&elsewhere, dir.path().join(".livenote/history").join(Store::key("n.md")))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(snapshot_ids(&store, "n.md").is_empty());
    assert_eq!(read_body(&store, "n.md", A, "md"), None);
}
