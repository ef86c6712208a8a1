//! A disk that fills up or refuses writes: the run fails with a clear error, the note keeps
//! every byte, no temp file stays behind.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use livenote::runs::io::{BoxFuture, Compute};
use livenote::runs::{DiskIo, NoteIo, Outcome};

use crate::{Ws, assert_parses, body_of, command_config, live_note, run_manual, temp_files};

/// The notes on disk, except that chosen writes fail the way a full disk does (ENOSPC) without
/// touching the file: `fails(n)` for the n-th write of the run (1-based).
struct FullDisk {
    writes: AtomicUsize,
    fails: fn(usize) -> bool,
}

impl FullDisk {
    fn new(fails: fn(usize) -> bool) -> Arc<FullDisk> {
        Arc::new(FullDisk { writes: AtomicUsize::new(0), fails })
    }
}

fn enospc(path: &Path) -> String {
    format!("write {}: {}", path.display(), std::io::Error::from_raw_os_error(28))
}

impl NoteIo for FullDisk {
    fn read(&self, path: &Path) -> Result<String, String> {
        DiskIo.read(path)
    }

    fn apply<'a>(&'a self, path: &'a Path, compute: Compute<'a>) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
            if (self.fails)(n) {
                // The edit is still computed, as the real write would, so a failure in it shows.
                let text = DiskIo.read(path)?;
                compute(&text)?;
                return Err(enospc(path));
            }
            DiskIo::apply_sync(path, compute)
        })
    }
}

const OLD_BODY: &str = "Old content, line one.\nLine two.\n";

fn workspace() -> Ws {
    let ws = Ws::new(&command_config("printf 'New content.\\n'"), "2026-11-23T09:00:00Z");
    ws.write("n.md", &live_note("", OLD_BODY));
    ws
}

#[tokio::test]
async fn disk_full_from_the_start_skips_the_run_and_keeps_the_note() {
    let ws = workspace();
    let before = ws.read("n.md");
    let engine = ws.engine_with(FullDisk::new(|_| true));
    let outcome = run_manual(&engine, &ws.path("n.md")).await;
    let want = format!("cannot write the note: {}", enospc(&ws.path("n.md")));
    assert_eq!(outcome, Outcome::Skipped(want));
    assert_eq!(ws.read("n.md"), before, "the note changed");
    assert!(engine.store.transcripts().is_empty(), "a run that never started left a transcript");
    assert!(!engine.store.is_locked("n.md"), "the lock was not released");
    assert_eq!(temp_files(&ws.root), Vec::<std::path::PathBuf>::new());
}

#[tokio::test]
async fn disk_full_at_the_result_records_the_error_and_keeps_the_body() {
    let ws = workspace();
    // Write 1 (lastAttemptAt) works, write 2 (the result) hits a full disk, write 3 (the error)
    // works again (something freed space).
    let engine = ws.engine_with(FullDisk::new(|n| n == 2));
    let outcome = run_manual(&engine, &ws.path("n.md")).await;
    let want = format!("cannot write the result: {}", enospc(&ws.path("n.md")));
    let Outcome::Failed { run_id, error } = outcome else { panic!("{outcome:?}") };
    assert_eq!(error, want);
    let text = ws.read("n.md");
    let live = assert_parses(&text);
    assert_eq!(body_of(&text), format!("\n{OLD_BODY}"), "{text}");
    assert_eq!(live.last_run_error.as_deref(), Some(want.as_str()));
    assert_eq!(live.last_run_id.as_deref(), Some(run_id.as_str()));
    assert_eq!(live.last_run_at, None, "a failed run must not count as done");
    // The body from before the run is saved, so nothing is lost either way.
    assert_eq!(engine.store.snapshot_of("n.md", &run_id).as_deref(), Some(body_of(&text)));
    assert!(!engine.store.is_locked("n.md"));
    assert!(temp_files(&ws.root).is_empty());
}

#[tokio::test]
async fn disk_full_for_the_rest_of_the_run_fails_it_without_a_trace_in_the_note() {
    let ws = workspace();
    let engine = ws.engine_with(FullDisk::new(|n| n >= 2));
    let outcome = run_manual(&engine, &ws.path("n.md")).await;
    let Outcome::Failed { run_id, error } = outcome else { panic!("{outcome:?}") };
    assert!(
        error.starts_with("cannot write the result: write ") && error.ends_with("(os error 28)"),
        "{error}"
    );
    let text = ws.read("n.md");
    let live = assert_parses(&text);
    assert_eq!(body_of(&text), format!("\n{OLD_BODY}"));
    // The error could not be written; the note shows the attempt (so the backoff applies) and
    // the transcript has the reason.
    assert_eq!(live.last_run_error, None);
    assert_eq!(live.last_run_id.as_deref(), Some(run_id.as_str()));
    let transcript = std::fs::read_to_string(ws.root.join(format!(".livenote/runs/{run_id}.jsonl")))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(transcript.contains("\"kind\":\"failed\"") && transcript.contains("os error 28"), "{transcript}");
    // Space is back: the next run works.
    let engine = ws.engine();
    let outcome = run_manual(&engine, &ws.path("n.md")).await;
    assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
    assert_eq!(body_of(&ws.read("n.md")), "\nNew content.\n");
}

/// A read-only note (`chmod a-w`) is not replaced: the run fails before the provider starts,
/// with the reason, and the file keeps its bytes and its mode.
#[tokio::test]
async fn a_read_only_note_is_not_written() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    let path = ws.path("n.md");
    let before = ws.read("n.md");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap_or_else(|e| panic!("{e}"));
    let engine = ws.engine();
    let outcome = run_manual(&engine, &path).await;
    let Outcome::Skipped(reason) = &outcome else { panic!("{outcome:?}") };
    assert!(reason.starts_with("cannot write the note: ") && reason.contains("read-only"), "{reason}");
    assert_eq!(ws.read("n.md"), before);
    let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
    assert_eq!(mode, 0o444);
    assert!(temp_files(&ws.root).is_empty());
    // Writable again: the run goes through.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(run_manual(&engine, &path).await, Outcome::Done { .. }));
}

/// A folder that refuses new files (read-only, or full): the temp file cannot be created, the
/// run fails cleanly. Root ignores folder permissions, so as root only the outcome's shape is
/// checked.
#[tokio::test]
async fn a_read_only_folder_fails_the_run_cleanly() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    // The note lives in a sub-folder; `.livenote/` (locks, history) stays writable.
    let text = ws.read("n.md");
    ws.write("ro/n.md", &text);
    let dir = ws.path("ro");
    let path = dir.join("n.md");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap_or_else(|e| panic!("{e}"));
    let enforced = std::fs::File::create(dir.join("probe")).is_err();
    let engine = ws.engine();
    let outcome = run_manual(&engine, &path).await;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap_or_else(|e| panic!("{e}"));
    if enforced {
        let Outcome::Skipped(reason) = &outcome else { panic!("{outcome:?}") };
        assert!(
            reason.starts_with("cannot write the note: write ") && reason.contains("ermission denied"),
            "{reason}"
        );
        assert_eq!(read_string(&path), text);
    } else {
        let _ = std::fs::remove_file(dir.join("probe"));
        assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
    }
    assert_parses(&read_string(&path));
    assert!(temp_files(&ws.root).is_empty());
}

fn read_string(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{e}"))
}

/// A real write failure from the kernel: `livenote run` under `ulimit -f` (files beyond 4 KiB
/// cannot be written, EFBIG), with a provider whose result does not fit. The first write
/// (`lastAttemptAt`) fits, the result does not; the error is recorded in the note.
#[test]
fn a_real_write_error_fails_the_run_and_is_recorded() {
    let big = "A line of the new body that makes the note too large to write.\n".repeat(200);
    let ws = Ws::new(&command_config(&format!("printf '%s' '{big}'")), "2026-11-23T09:00:00Z");
    ws.write("n.md", &live_note("", OLD_BODY));
    let data = crate::tempdir();
    // The provider is the folder's: trusted in this run's own trust store too.
    livenote::workspace::trust::TrustStore::in_dir(data.path())
        .trust(&ws.root)
        .unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new("sh")
        .args(["-c", "ulimit -f 8; trap '' XFSZ; exec \"$0\" run n.md", env!("CARGO_BIN_EXE_livenote")])
        .current_dir(&ws.root)
        .env("LIVENOTE_DATA_DIR", data.path())
        .env("LIVENOTE_CONFIG_DIR", data.path())
        .env("TZ", "UTC")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let path = ws.path("n.md");
    let want = format!("cannot write the result: write {}: File too large (os error 27)", path.display());
    assert!(stderr.contains(&format!("livenote: run failed: {want}")), "{stderr}");
    let text = ws.read("n.md");
    let live = assert_parses(&text);
    assert_eq!(body_of(&text), format!("\n{OLD_BODY}"));
    assert_eq!(live.last_run_error.as_deref(), Some(want.as_str()));
    assert!(temp_files(&ws.root).is_empty(), "{:?}", temp_files(&ws.root));

    // A note already larger than the limit: not even the first write fits; nothing runs and
    // the note keeps every byte.
    let huge = live_note("", &big);
    ws.write("n.md", &huge);
    let out = Command::new("sh")
        .args(["-c", "ulimit -f 8; trap '' XFSZ; exec \"$0\" run n.md", env!("CARGO_BIN_EXE_livenote")])
        .current_dir(&ws.root)
        .env("LIVENOTE_DATA_DIR", data.path())
        .env("LIVENOTE_CONFIG_DIR", data.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("livenote: nothing ran: cannot write the note: write ")
            && stderr.contains("File too large"),
        "{stderr}"
    );
    assert_eq!(ws.read("n.md"), huge);
    assert!(temp_files(&ws.root).is_empty());
}
