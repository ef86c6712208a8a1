//! The soak bench (issue 21, "Months, measured"): the real `livenote watch` over 1,000 live
//! notes that fire every minute with a `command` provider, driven through time by its clock
//! file (`watch --clock-file`, the injected clock end-to-end tests use), so 10,000+ runs take
//! minutes, not days. After each simulated minute, once every note's run is done, it samples
//! the watcher's RSS, open file descriptors and threads (from `/proc/<pid>`) and the size of
//! the vault's `.livenote/` folder (bytes and files): each must level off, bounded by the
//! `[history] keep` (body snapshots per note) and `runs_keep` (transcripts) settings.
//!
//! Run: `cargo bench -p livenote --bench soak` (Linux only). Knobs: `LIVENOTE_SOAK_NOTES`
//! (default 1000), `LIVENOTE_SOAK_MINUTES` (default 10, i.e. 10,000 runs),
//! `LIVENOTE_SOAK_OUT=path.json` (default `target/bench/soak.json`). The vault is a temporary
//! folder, deleted at the end.

// The suite's reader of /proc (one home for it); the soak uses only its memory figures.
#[allow(dead_code)]
#[path = "suite/procfs.rs"]
mod procfs;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use serde_json::{Value, json};

/// Each run prints a new body (so every run changes the note and leaves a body snapshot and a
/// history record), reading nothing: the run's JSON on stdin is left unread, which the command
/// provider tolerates. `sh` is the cheapest program that can say something different each time.
/// `[history] keep = 5` (20 by default) so that the per-note snapshot bound is reached within
/// the soak and the state folder's plateau shows; `runs_keep` stays at its default (1,000).
const CONFIG: &str = "[agent]\nprovider = \"tick\"\n\n[history]\nkeep = 5\n\n[providers.tick]\n\
                      kind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo \\\"Tick at $LIVENOTE_NOW.\\\"\"]\n";

/// How long one simulated minute may take before the bench gives up (every note's run done).
const MINUTE_TIMEOUT: Duration = Duration::from_secs(300);

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn note(k: usize, ran_at: &str) -> String {
    format!(
        "---\nlive:\n  objective: Say when it last ticked.\n  triggers:\n    cronExpr: \"* * * * *\"\n  \
         lastRunAt: \"{ran_at}\"\n  lastRunSummary: \"ok\"\n---\n\n# Soak {k}\n\nNot yet.\n"
    )
}

/// Bytes and regular files under `dir`, links not followed.
fn du(dir: &Path) -> (u64, u64) {
    let (mut bytes, mut files) = (0, 0);
    let Ok(entries) = std::fs::read_dir(dir) else { return (0, 0) };
    for e in entries.flatten() {
        let Ok(meta) = e.path().symlink_metadata() else { continue };
        if meta.is_dir() {
            let (b, f) = du(&e.path());
            bytes += b;
            files += f;
        } else {
            bytes += meta.len();
            files += 1;
        }
    }
    (bytes, files)
}

fn count_dir(dir: &str) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or_else(|e| panic!("read {dir}: {e}"))
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported here.
    let notes = env_usize("LIVENOTE_SOAK_NOTES", 1000);
    let minutes = env_usize("LIVENOTE_SOAK_MINUTES", 10);
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_livenote"));
    let out = std::env::var_os("LIVENOTE_SOAK_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../target/bench/soak.json"));

    let tmp = tempfile::Builder::new()
        .prefix("livenote-soak-")
        .tempdir()
        .unwrap_or_else(|e| panic!("create a temp dir: {e}"));
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap_or_else(|e| panic!("create {}: {e}", data.display()));
    let clock_file = tmp.path().join("clock");
    // A fixed start on a minute boundary, half a minute in: no note is due until the clock
    // reaches the next minute.
    let t0: DateTime<Utc> = "2026-01-05T09:00:30Z".parse().unwrap_or_else(|e| panic!("t0: {e}"));
    let ran_at = rfc3339(t0 - TimeDelta::seconds(30));
    for k in 0..notes {
        // 10 folders of notes: a vault has folders; the watcher follows them all.
        let path = vault.join(format!("f{}/soak-{k:04}.md", k % 10));
        std::fs::create_dir_all(path.parent().unwrap_or(&vault)).unwrap_or_else(|e| panic!("mkdir: {e}"));
        std::fs::write(&path, note(k, &ran_at)).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
    std::fs::write(vault.join(".livenote.toml"), CONFIG).unwrap_or_else(|e| panic!("config: {e}"));
    std::fs::write(&clock_file, rfc3339(t0)).unwrap_or_else(|e| panic!("clock: {e}"));
    let vault = std::fs::canonicalize(&vault).unwrap_or_else(|e| panic!("canonicalize: {e}"));
    let cmd = |args: &[&str]| {
        let mut c = Command::new(&bin);
        c.args(args).current_dir(&vault).env("LIVENOTE_DATA_DIR", &data).env("LIVENOTE_CONFIG_DIR", &data);
        c
    };
    let trusted = cmd(&["trust", "."]).stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    assert!(trusted, "livenote trust failed");

    let mut child = cmd(&["watch", "--clock-file"])
        .arg(&clock_file)
        .arg(".")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn livenote watch: {e}"));
    let pid = child.id();
    let (done, failed, skipped) =
        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let reader = {
        let (done, failed, skipped) = (done.clone(), failed.clone(), skipped.clone());
        thread::spawn(move || {
            let mut other = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains(" done ") || line.starts_with("done ") {
                    done.fetch_add(1, Ordering::SeqCst);
                } else if line.contains(" failed ") || line.starts_with("failed ") {
                    failed.fetch_add(1, Ordering::SeqCst);
                    if other.len() < 5 {
                        let _ = writeln!(std::io::stderr(), "  watch: {line}");
                        other.push(line);
                    }
                } else if line.contains(" skip ") || line.starts_with("skip ") {
                    skipped.fetch_add(1, Ordering::SeqCst);
                }
            }
        })
    };

    let state = vault.join(".livenote");
    let sample = |minute: usize, runs: usize, secs: f64| -> Value {
        let (hwm, rss) = procfs::memory(pid);
        let fds = count_dir(&format!("/proc/{pid}/fd"));
        let threads = count_dir(&format!("/proc/{pid}/task"));
        let (bytes, files) = du(&state);
        let row = json!({
            "minute": minute, "runs": runs, "wall_s": secs, "rss_kib": rss, "hwm_kib": hwm,
            "fds": fds, "threads": threads, "state_bytes": bytes, "state_files": files,
            "failed": failed.load(Ordering::SeqCst), "skipped": skipped.load(Ordering::SeqCst),
        });
        let _ = writeln!(
            std::io::stderr(),
            "{minute:>3} min {runs:>6} runs {secs:>6.1} s  RSS {:>6.1} MiB (peak {:>6.1})  fds {fds:>3}  \
             threads {threads:>3}  .livenote/ {:>7.1} MiB in {files:>6} files",
            rss as f64 / 1024.0,
            hwm as f64 / 1024.0,
            bytes as f64 / 1048576.0
        );
        row
    };

    // Let the watcher index and settle before the first sample.
    thread::sleep(Duration::from_secs(2));
    let start = Instant::now();
    let mut rows = vec![sample(0, 0, 0.0)];
    for m in 1..=minutes {
        let now = t0 + TimeDelta::minutes(m as i64);
        std::fs::write(&clock_file, rfc3339(now)).unwrap_or_else(|e| panic!("clock: {e}"));
        let want = m * notes;
        let t = Instant::now();
        while done.load(Ordering::SeqCst) + failed.load(Ordering::SeqCst) < want {
            assert!(
                t.elapsed() < MINUTE_TIMEOUT,
                "minute {m}: only {} of {want} runs ended",
                done.load(Ordering::SeqCst)
            );
            assert!(child.try_wait().ok().flatten().is_none(), "livenote watch exited");
            thread::sleep(Duration::from_millis(20));
        }
        rows.push(sample(m, done.load(Ordering::SeqCst), start.elapsed().as_secs_f64()));
    }
    let total = start.elapsed();
    let _ = Command::new("kill").args(["-INT", &pid.to_string()]).status();
    let _ = child.wait();
    let _ = reader.join();

    // Where the state files are, by folder under `.livenote/`: which bound each one follows.
    let mut by_folder = serde_json::Map::new();
    for e in std::fs::read_dir(&state).into_iter().flatten().flatten() {
        let path = e.path();
        let (_, files) = if path.is_dir() { du(&path) } else { (0, 1) };
        by_folder.insert(e.file_name().to_string_lossy().into_owned(), json!(files));
    }
    let _ = writeln!(std::io::stderr(), ".livenote/ files by folder: {}", Value::Object(by_folder.clone()));

    let runs = done.load(Ordering::SeqCst);
    let result = json!({
        "state_files_by_folder": by_folder,
        "notes": notes, "minutes": minutes, "runs": runs,
        "failed": failed.load(Ordering::SeqCst), "skipped": skipped.load(Ordering::SeqCst),
        "seconds": total.as_secs_f64(), "samples": rows,
    });
    if let Some(dir) = out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(&out, serde_json::to_string_pretty(&result).unwrap_or_default())
        .unwrap_or_else(|e| panic!("write {}: {e}", out.display()));
    let _ = writeln!(
        std::io::stderr(),
        "{runs} runs in {:.0} s ({:.0} runs/s); results in {}",
        total.as_secs_f64(),
        runs as f64 / total.as_secs_f64(),
        out.display()
    );
}
