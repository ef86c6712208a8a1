use chrono::TimeZone;

use super::*;

fn t(s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 23, 15, 7, s).single().unwrap_or_default()
}

fn live(text: &str) -> Live {
    let analysis = crate::note::analyze(text, &crate::note::Options::default());
    analysis.live.unwrap_or_else(|| panic!("no live block in {text}"))
}

const NEVER_RUN: &str = "---\nlive:\n  objective: o\n  triggers:\n    windows:\n      - startTime: \"00:00\"\n        endTime: \"23:59\"\n---\n";

#[test]
fn a_buffer_run_is_known_to_another_process_until_the_file_says_more() {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let note = ws.path().join("notes/a.md");
    let mine = Attempts::new(ws.path());
    let a = ("notes/a.md", note.as_path());
    mine.started(a, "01KAR0000000000000000000AA", t(0), DiskStamps::default())
        .unwrap_or_else(|e| panic!("{e}"));
    mine.ended(a, "01KAR0000000000000000000AA", End::Ran(t(3))).unwrap_or_else(|e| panic!("{e}"));
    // Another process reads the folder: the run counts for the file that says nothing of it.
    let theirs = Attempts::new(ws.path());
    theirs.load();
    let disk = live(NEVER_RUN);
    let seen = theirs.apply(&note, &disk);
    assert_eq!((seen.last_attempt_at, seen.last_run_at), (Some(t(0)), Some(t(3))));
    // Once the file holds other stamps (the buffer saved), it speaks for itself.
    let saved = live(&NEVER_RUN.replace(
        "  objective: o\n",
        "  objective: o\n  lastRunId: 01KAR0000000000000000000AA\n  lastAttemptAt: \"2026-11-23T15:07:00.000Z\"\n",
    ));
    assert!(matches!(theirs.apply(&note, &saved), std::borrow::Cow::Borrowed(_)));
    // Another note is not concerned.
    assert!(matches!(theirs.apply(&ws.path().join("b.md"), &disk), std::borrow::Cow::Borrowed(_)));
    // A stop, read fresh from the disk as a run's own check does.
    mine.ended(a, "01KAR0000000000000000000AA", End::Stopped(t(9))).unwrap_or_else(|e| panic!("{e}"));
    let read = theirs.read("notes/a.md").unwrap_or_else(|| panic!("no record"));
    assert_eq!(read.stopped_at, Some(t(9)));
    // The end of another run is not this record's.
    mine.ended(a, "01KAR0000000000000000000BB", End::Ran(t(30))).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(theirs.read("notes/a.md").and_then(|a| a.ran_at), Some(t(3)));
    // A vetoed event run leaves no record; a file event tells the other process.
    mine.ended(a, "01KAR0000000000000000000AA", End::Vetoed).unwrap_or_else(|e| panic!("{e}"));
    theirs.refresh(&ws.path().join(".livenote/attempts").join(Attempts::file_name("notes/a.md")));
    assert!(matches!(theirs.apply(&note, &disk), std::borrow::Cow::Borrowed(_)));
}

#[test]
fn a_record_under_another_notes_name_or_unreadable_counts_for_nothing() {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let a = Attempts::new(ws.path());
    let note = ws.path().join("a.md");
    a.started(("a.md", &note), "01KAR0000000000000000000AA", t(0), DiskStamps::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = ws.path().join(".livenote/attempts");
    // The record of a.md copied under b.md's name does not speak for b.md.
    std::fs::copy(dir.join(Attempts::file_name("a.md")), dir.join(Attempts::file_name("b.md")))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join(Attempts::file_name("c.md")), "{not json").unwrap_or_else(|e| panic!("{e}"));
    let other = Attempts::new(ws.path());
    other.load();
    let disk = live(NEVER_RUN);
    assert!(matches!(other.apply(&ws.path().join("a.md"), &disk), std::borrow::Cow::Owned(_)));
    assert!(matches!(other.apply(&ws.path().join("b.md"), &disk), std::borrow::Cow::Borrowed(_)));
    assert!(matches!(other.apply(&ws.path().join("c.md"), &disk), std::borrow::Cow::Borrowed(_)));
    assert_eq!(other.read("c.md"), None);
    // A run on disk removes the record.
    a.remove("a.md").unwrap_or_else(|e| panic!("{e}"));
    assert!(!dir.join(Attempts::file_name("a.md")).exists());
    assert_eq!(other.read("a.md"), None);
}

#[cfg(unix)]
#[test]
fn a_linked_folder_is_refused() {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let elsewhere = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(ws.path().join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(elsewhere.path(), ws.path().join(".livenote/attempts"))
        .unwrap_or_else(|e| panic!("{e}"));
    let a = Attempts::new(ws.path());
    let note = ws.path().join("a.md");
    assert!(a.started(("a.md", &note), "01KAR0000000000000000000AA", t(0), DiskStamps::default()).is_err());
    assert_eq!(std::fs::read_dir(elsewhere.path()).map(|d| d.count()).unwrap_or(0), 0);
}
