//! Issue 32 §2: a run into an unsaved buffer counts for every process. The language server runs
//! a due note into the editor's buffer (`workspace/applyEdit`) while the user types; the file
//! still says the occurrence never ran. The run store records the run (`.livenote/attempts/`),
//! and every due check takes it with the file's stamps: the real `livenote tick` on the folder
//! right after fires nothing for the note. The other way round, a record another process wrote
//! reaches the language server through its file event (never read per request) and keeps its
//! scheduler from running the note again.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::harness::TestClient;
use super::utf16_caps;

/// Daily at 10:00 Chicago (16:00Z), ran yesterday: not due at the harness's 09:07.
const DAILY: &str = "---\nlive:\n  objective: the day\n  triggers:\n    cronExpr: \"0 10 * * *\"\n  lastAttemptAt: \"2026-11-22T16:00:01.000Z\"\n  lastRunAt: \"2026-11-22T16:00:04.000Z\"\n---\n# Day\n\nyesterday\n";

const CONFIG: &str = "[agent]\nprovider = \"p\"\n\n[providers.p]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo new body\"]\ntimeout = \"20s\"\n";

fn settings() -> Value {
    json!({"scheduler": {"enabled": true}})
}

/// Transcripts of runs that reached their end.
fn done_runs(root: &Path) -> usize {
    std::fs::read_dir(root.join(".livenote/runs"))
        .map(|r| {
            r.flatten()
                .filter(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("\"kind\":\"done\"")))
                .count()
        })
        .unwrap_or(0)
}

/// `livenote tick` on `root` at `at`, with the test's trust store: its exit code and log.
fn tick(root: &Path, at: &str) -> (Option<i32>, String) {
    let clock = root.join(".data/clock");
    std::fs::write(&clock, at).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["tick", "--clock-file"])
        .arg(&clock)
        .arg(".")
        .current_dir(root)
        .env("LIVENOTE_DATA_DIR", root.join(".data"))
        .env("LIVENOTE_CONFIG_DIR", root.join(".data"))
        .env("LIVENOTE_LOG", "info")
        .env("TZ", "America/Chicago")
        .output()
        .unwrap_or_else(|e| panic!("livenote tick: {e}"));
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

async fn start(root: tempfile::TempDir, watching: bool) -> TestClient {
    std::fs::write(root.path().join(".livenote.toml"), CONFIG).unwrap_or_else(|e| panic!("{e}"));
    let files = [("n.md", DAILY)];
    if watching {
        TestClient::start_trusted_watching(root, &files, utf16_caps(), settings()).await
    } else {
        TestClient::start_in(root, &files, utf16_caps(), settings(), true).await
    }
}

#[tokio::test]
async fn a_run_into_an_unsaved_buffer_counts_for_a_tick_on_the_folder() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = start(root, false).await;
    let uri = c.open("n.md", DAILY).await;
    c.diagnostics(&uri, 1).await;
    // The user types: the buffer is not the file any more, and is not saved.
    let end = DAILY.len();
    c.edit(&uri, end, end, "a thought of mine\n").await;
    // 10:00:30: the note comes due, and the language server runs it into the buffer.
    c.clock.set(
        chrono::DateTime::parse_from_rfc3339("2026-11-23T16:00:30Z").map(|t| t.to_utc()).unwrap_or_default(),
    );
    let mut end = c.progress("end").await;
    while end["message"] != "Updated: new body" {
        end = c.progress("end").await;
    }
    let buffer = c.doc(&uri).text;
    assert!(
        buffer.contains("new body") && buffer.contains("lastRunAt: \"2026-11-23T16:00:30.000Z\""),
        "{buffer}"
    );
    let root = c.root.path().to_path_buf();
    assert_eq!(
        std::fs::read_to_string(root.join("n.md")).unwrap_or_default(),
        DAILY,
        "the file is untouched"
    );
    assert_eq!(done_runs(&root), 1);

    // A tick on the folder right after (a systemd timer): the occurrence was attempted and
    // served on this machine, though the file does not say so yet.
    let (code, log) = tick(&root, "2026-11-23T16:00:40Z");
    assert_eq!(code, Some(0), "{log}");
    assert!(!log.contains("fire n.md"), "{log}");
    assert!(log.contains("0 notes fired"), "{log}");
    assert_eq!(done_runs(&root), 1, "{log}");
    assert_eq!(std::fs::read_to_string(root.join("n.md")).unwrap_or_default(), DAILY);
    // The next occurrence is the tick's again.
    let (_, log) = tick(&root, "2026-11-24T16:00:20Z");
    assert!(log.contains("fire n.md (cron)"), "{log}");
    c.shutdown().await;
}

#[tokio::test]
async fn a_record_another_process_wrote_reaches_the_language_server_by_its_file_event() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = start(root, true).await;
    let root = c.root.path().to_path_buf();
    let note = root.join("n.md");
    // Another editor ran the note into its own buffer at 09:55 (a run by hand), unsaved.
    let disk_again = || {
        livenote::note::analyze(DAILY, &livenote::note::Options::default())
            .live
            .map(|l| livenote::status::DiskStamps::of(&l))
            .unwrap_or_default()
    };
    let disk = disk_again();
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).map(|t| t.to_utc()).unwrap_or_default();
    let other = livenote::runs::attempts::Attempts::new(&root);
    other
        .started(("n.md", &note), "01KAT90000000000000000000A", at("2026-11-23T16:00:02Z"), disk)
        .unwrap_or_else(|e| panic!("{e}"));
    other
        .ended(
            ("n.md", &note),
            "01KAT90000000000000000000A",
            livenote::runs::attempts::End::Ran(at("2026-11-23T16:00:09Z")),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    // Heard through the watcher: the list shows the run, from memory.
    let shown = async |c: &mut TestClient, ran: &str| {
        let mut seen = Value::Null;
        for _ in 0..250 {
            seen = c.request("livenote/listNotes", Value::Null).await;
            if seen["result"][0]["lastRunAt"] == ran {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("{ran} never shown: {seen}");
    };
    shown(&mut c, "2026-11-23T16:00:09.000Z").await;
    // A second run there, once the watcher surely looks: only its file event can tell.
    other
        .started(("n.md", &note), "01KAT90000000000000000000B", at("2026-11-23T16:00:12Z"), disk_again())
        .unwrap_or_else(|e| panic!("{e}"));
    other
        .ended(
            ("n.md", &note),
            "01KAT90000000000000000000B",
            livenote::runs::attempts::End::Ran(at("2026-11-23T16:00:15Z")),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    shown(&mut c, "2026-11-23T16:00:15.000Z").await;
    // 10:00:30: due by the file, served by the other editor's run: nothing starts here.
    c.clock.set(at("2026-11-23T16:00:30Z"));
    tokio::time::sleep(Duration::from_millis(800)).await;
    let started = std::fs::read_dir(root.join(".livenote/runs")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(started, 0, "the scheduler ran the note again");
    c.shutdown().await;
}
