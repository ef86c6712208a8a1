//! The reference: the seed design's scheduler, a loop that re-reads every note (whole file)
//! every 15 s and decides due-ness, with livenote's own walker, parser and due-ness rules so
//! that only the design differs. The suite runs it as a separate process (this bench binary
//! re-executed with `--reference-poller`) whose CPU and memory it can measure.
//!
//! Child protocol, one line per event on stdout:
//! `cycle <n> <wall_ns> <cpu_ns> <files> <bytes>` after each pass, and
//! `fire <unix_ms> <path>` the first time a pass finds a note due.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};

use livenote::note;
use livenote::schedule::Zone;
use livenote::status;

use crate::procfs;
use crate::vault;

pub const ARG: &str = "--reference-poller";
/// How many notes come due while the reference runs.
const FIRES: usize = 10;

/// The child: `--reference-poller VAULT INTERVAL_MS START_UNIX_MS`. Runs until killed.
pub fn child(args: &[String]) {
    let [vault, interval, start] = args else {
        panic!("usage: {ARG} VAULT INTERVAL_MS START_UNIX_MS");
    };
    let vault = PathBuf::from(vault);
    let interval = Duration::from_millis(interval.parse().unwrap_or_else(|e| panic!("interval: {e}")));
    let start: u64 = start.parse().unwrap_or_else(|e| panic!("start: {e}"));
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    thread::sleep(Duration::from_millis(start.saturating_sub(now_ms)));
    let t0 = Instant::now();
    let mut fired: HashSet<PathBuf> = HashSet::new();
    let mut out = std::io::stdout().lock();
    for n in 0u64.. {
        let at = t0 + interval * n as u32;
        thread::sleep(at.saturating_duration_since(Instant::now()));
        let (wall, cpu) = (Instant::now(), thread_cpu_ns());
        let (files, _) = livenote::workspace::markdown_files(&vault, &[]);
        let mut bytes = 0;
        for f in &files {
            // The seed design reads each note whole.
            let Ok(text) = livenote::workspace::read_note(f) else { continue };
            bytes += text.len();
            let analysis = note::analyze(&text, &note::Options::default());
            let Some(live) = analysis.live else { continue };
            let now = Utc::now();
            let due = status::decision(&live, now, &Zone::Local).is_some_and(|d| d.is_due());
            if due && fired.insert(f.clone()) {
                let _ = writeln!(out, "fire {} {}", now.timestamp_millis(), f.display());
            }
        }
        let _ = writeln!(
            out,
            "cycle {n} {} {} {} {bytes}",
            wall.elapsed().as_nanos(),
            thread_cpu_ns().saturating_sub(cpu),
            files.len()
        );
        let _ = out.flush();
    }
}

fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// Run the reference on `vault` for four intervals plus one pass, with [`FIRES`] notes coming
/// due at evenly spread phases of its cycle; returns its figures as JSON.
pub fn measure(vault_root: &Path, interval: Duration, env: &[(&str, &Path)]) -> Value {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    let iv_ms = interval.as_millis() as i64;
    // Cycle 0 starts half a second past a whole second; note k is due at
    // interval/10 + k * 0.4 * interval after it, so the phases (offset mod interval) are spread
    // evenly over the cycle and the expected latency is interval / 2.
    assert!(
        iv_ms % 10_000 == 5_000,
        "the interval must be 5, 15, 25 ... s so due instants are whole seconds"
    );
    let now = Utc::now();
    let whole = DateTime::from_timestamp(now.timestamp() + 2, 0).unwrap_or(now);
    let start = whole + TimeDelta::milliseconds(500);
    let mut due = Vec::new();
    for k in 0..FIRES {
        let at = start + TimeDelta::milliseconds(iv_ms / 10 + k as i64 * iv_ms * 4 / 10);
        let rel = format!("bench/reference-fire-{k}.md");
        let text = vault::small_note(
            &format!("Reference fire {k}"),
            &vault::cron_at(at),
            Some(&vault::rfc3339(now)),
        );
        vault::write_atomic(&vault_root.join(&rel), &text);
        due.push((vault_root.join(rel), at));
    }
    let mut cmd = Command::new(exe);
    cmd.arg(ARG)
        .arg(vault_root)
        .arg(iv_ms.to_string())
        .arg(start.timestamp_millis().to_string())
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn the reference poller: {e}"));
    let pid = child.id();
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("the reference's stdout is not piped"));
    let (tx, rx) = mpsc::channel::<String>();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let until = |t: DateTime<Utc>| {
        let left = (t - Utc::now()).to_std().unwrap_or(Duration::ZERO);
        thread::sleep(left);
    };
    // The window: from just before cycle 0 to four intervals later (the process is asleep at
    // both ends, between passes).
    until(start - TimeDelta::milliseconds(200));
    let (c0, n0) = (procfs::cpu_ticks(pid), procfs::cpu_by_thread(pid));
    let t0 = Instant::now();
    until(start + TimeDelta::milliseconds(4 * iv_ms) - TimeDelta::milliseconds(200));
    let (c1, n1) = (procfs::cpu_ticks(pid), procfs::cpu_by_thread(pid));
    let window = t0.elapsed();
    // Then wait for the fifth pass, which sees the last note come due.
    let mut cycles = Vec::new();
    let mut fires = Vec::new();
    let deadline = Instant::now() + interval * 2;
    while cycles.len() < 5 && Instant::now() < deadline {
        let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) else { continue };
        let f: Vec<&str> = line.splitn(6, ' ').collect();
        match f.as_slice() {
            ["cycle", _, wall, cpu, files, bytes] => cycles.push(json!({
                "wall_ms": wall.parse::<f64>().unwrap_or(f64::NAN) / 1e6,
                "cpu_ms": cpu.parse::<f64>().unwrap_or(f64::NAN) / 1e6,
                "files": files.parse::<u64>().unwrap_or(0),
                "bytes": bytes.parse::<u64>().unwrap_or(0),
            })),
            ["fire", ms, path @ ..] => fires.push((ms.parse::<i64>().unwrap_or(0), path.join(" "))),
            _ => {}
        }
    }
    let (hwm, rss) = procfs::memory(pid);
    let _ = child.kill();
    let _ = child.wait();
    let hz = procfs::clock_ticks_per_second();
    let cpu_ns = procfs::thread_delta(&n0, &n1) as f64;
    let by_ticks = c1.saturating_sub(c0) as f64 / hz as f64;
    let latencies: Vec<Value> = due
        .iter()
        .map(|(path, at)| {
            let fired = fires.iter().find(|(_, p)| Path::new(p) == path);
            json!(fired.map(|(ms, _)| (*ms - at.timestamp_millis()) as f64 / 1e3))
        })
        .collect();
    json!({
        "interval_s": interval.as_secs_f64(),
        "window_s": window.as_secs_f64(),
        "cycles": cycles,
        "cpu_ms_in_window": cpu_ns / 1e6,
        "cpu_percent": (cpu_ns / 1e9).max(by_ticks) / window.as_secs_f64() * 100.0,
        "hwm_kib": hwm,
        "rss_kib": rss,
        "fire_latency_s": latencies,
    })
}
