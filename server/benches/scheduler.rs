//! Scheduler figures with the real `livenote watch`: how close to their due instant scheduled
//! runs start (fire precision), and the CPU an idle scheduler uses with 1,000 live notes.
//! Run: `cargo bench -p livenote --bench scheduler` (about 80 s). Prints a markdown table.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{DateTime, Timelike, Utc};

fn livenote(ws: &Path, data: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_livenote"));
    c.args(args)
        .current_dir(ws)
        .env("LIVENOTE_DATA_DIR", data)
        .env("LIVENOTE_CONFIG_DIR", data)
        .env("RUST_LOG", "warn")
        .env("TZ", "UTC")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn workspace(notes: &[(String, String)]) -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let config = "[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"true\"]\n";
    std::fs::write(ws.path().join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
    for (name, text) in notes {
        std::fs::write(ws.path().join(name), text).unwrap_or_else(|e| panic!("{e}"));
    }
    let ok = livenote(ws.path(), data.path(), &["trust", "."]).status().is_ok_and(|s| s.success());
    assert!(ok, "trust failed");
    (ws, data)
}

fn note(cron: &str, last_run: DateTime<Utc>) -> String {
    format!(
        "---\nlive:\n  objective: bench\n  triggers:\n    cronExpr: \"{cron}\"\n  lastRunAt: \"{}\"\n---\n# Bench\n",
        last_run.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    )
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    get(11) + get(12) // utime, stime (fields 14 and 15 of the full line)
}

fn kill(mut c: Child) {
    let _ = c.kill();
    let _ = c.wait();
}

/// Notes whose cron (with a seconds field) comes due a few seconds from now; the delay is
/// `lastAttemptAt` (written by the run as it starts) minus the due instant.
fn fire_precision() -> Vec<f64> {
    let now = Utc::now();
    let mut notes = Vec::new();
    let mut due = Vec::new();
    for i in 0..8u32 {
        let at = now + chrono::TimeDelta::seconds(4 + i64::from(i) * 2);
        let at = at.with_nanosecond(0).unwrap_or(at);
        notes.push((
            format!("n{i}.md"),
            note(&format!("{} {} {} * * *", at.second(), at.minute(), at.hour()), now),
        ));
        due.push(at);
    }
    let (ws, data) = workspace(&notes);
    let watch = livenote(ws.path(), data.path(), &["watch", "."]).spawn().unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut delays = vec![None; notes.len()];
    while Instant::now() < deadline && delays.iter().any(Option::is_none) {
        for (i, (name, _)) in notes.iter().enumerate() {
            if delays[i].is_some() {
                continue;
            }
            let text = std::fs::read_to_string(ws.path().join(name)).unwrap_or_default();
            let attempt = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("lastAttemptAt: "))
                .and_then(|v| DateTime::parse_from_rfc3339(v.trim_matches('"')).ok());
            if let Some(a) = attempt {
                delays[i] =
                    Some((a.with_timezone(&Utc) - due[i]).num_microseconds().unwrap_or(0) as f64 / 1e6);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    kill(watch);
    delays.into_iter().flatten().collect()
}

/// CPU of an idle `livenote watch` over a trusted folder of 1,000 live notes that are not due.
fn idle_cpu(seconds: u64) -> (f64, usize) {
    let now = Utc::now();
    let notes: Vec<(String, String)> =
        (0..1000).map(|i| (format!("n{i:04}.md"), note("0 0 1 1 *", now))).collect();
    let (ws, data) = workspace(&notes);
    let watch = livenote(ws.path(), data.path(), &["watch", "."]).spawn().unwrap_or_else(|e| panic!("{e}"));
    let pid = watch.id();
    std::thread::sleep(Duration::from_secs(3)); // indexing and start-up
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(seconds));
    let after = cpu_ticks(pid);
    let rss = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("VmHWM:")
                .map(|v| v.trim().trim_end_matches(" kB").trim().parse::<usize>().unwrap_or(0))
        })
        .unwrap_or(0);
    kill(watch);
    // Linux reports CPU time in clock ticks of 1/100 s.
    let cpu_seconds = (after.saturating_sub(before)) as f64 / 100.0;
    (100.0 * cpu_seconds / seconds as f64, rss)
}

fn main() {
    let mut delays = fire_precision();
    delays.sort_by(f64::total_cmp);
    let median = delays.get(delays.len() / 2).copied().unwrap_or(f64::NAN);
    let max = delays.last().copied().unwrap_or(f64::NAN);
    let (cpu, rss) = idle_cpu(30);
    // A bench's output is its report: stdout is the place for it.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "| what | measured | target |");
    let _ = writeln!(out, "|---|---|---|");
    let _ = writeln!(
        out,
        "| fire precision (lastAttemptAt − due instant), {} notes | median {:.3} s, max {:.3} s | < 1 s |",
        delays.len(),
        median,
        max
    );
    let _ = writeln!(
        out,
        "| idle CPU, `livenote watch` with 1,000 live notes, 30 s | {cpu:.3} % of a core | near 0 |"
    );
    let _ = writeln!(out, "| peak RSS of that watcher | {:.1} MB | — |", rss as f64 / 1024.0);
}
