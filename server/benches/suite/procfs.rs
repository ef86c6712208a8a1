//! What Linux's `/proc` says about a process (CPU, memory, wake-ups) and about the machine.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

/// (VmHWM, VmRSS) in KiB.
pub fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("read /proc/{pid}/status: {e}"));
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Nanoseconds on CPU per thread id, from `/proc/<pid>/task/*/schedstat`.
pub fn cpu_by_thread(pid: u32) -> HashMap<String, u64> {
    per_thread(pid, |t| {
        let stat = std::fs::read_to_string(t.join("schedstat")).ok()?;
        stat.split_whitespace().next()?.parse::<u64>().ok()
    })
}

/// CPU time used since `before` (from [`cpu_by_thread`]) by the threads alive now.
pub fn cpu_since(pid: u32, before: &HashMap<String, u64>) -> Duration {
    Duration::from_nanos(thread_delta(before, &cpu_by_thread(pid)))
}

/// Context switches per thread (by thread id): how often each woke up.
pub fn switches(pid: u32) -> HashMap<String, u64> {
    per_thread(pid, |t| {
        let status = std::fs::read_to_string(t.join("status")).ok()?;
        Some(
            status
                .lines()
                .filter_map(|l| {
                    l.strip_prefix("voluntary_ctxt_switches:")
                        .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"))
                        .and_then(|v| v.trim().parse::<u64>().ok())
                })
                .sum(),
        )
    })
}

fn per_thread(pid: u32, read: impl Fn(&Path) -> Option<u64>) -> HashMap<String, u64> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return HashMap::new();
    };
    tasks
        .flatten()
        .filter_map(|t| Some((t.file_name().to_string_lossy().into_owned(), read(&t.path())?)))
        .collect()
}

/// How much per-thread counters grew, over the threads alive at the end (a thread that exited
/// in between takes its share along; a new thread counts from zero).
pub fn thread_delta(before: &HashMap<String, u64>, after: &HashMap<String, u64>) -> u64 {
    after.iter().map(|(tid, n)| n.saturating_sub(before.get(tid).copied().unwrap_or(0))).sum()
}

/// CPU time (utime + stime, all threads, exited ones included) in clock ticks.
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_else(|e| panic!("read /proc/{pid}/stat: {e}"));
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i - 3).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    tick(14) + tick(15)
}

/// Busy clock ticks of the whole machine (every CPU; user, nice, system, irq, softirq, steal),
/// from the first line of `/proc/stat`.
pub fn machine_busy_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let line = stat.lines().next().unwrap_or_default();
    let f: Vec<u64> = line.split_whitespace().skip(1).map(|v| v.parse().unwrap_or(0)).collect();
    // user nice system idle iowait irq softirq steal ...
    [0, 1, 2, 5, 6, 7].iter().map(|&i| f.get(i).copied().unwrap_or(0)).sum()
}

pub fn clock_ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

/// CPU use of a process left alone for `span`.
pub struct Idle {
    pub seconds: f64,
    /// Of one core, from utime + stime (clock ticks).
    pub percent: f64,
    pub ticks: u64,
    pub hz: u64,
    /// From schedstat over the threads alive at the end: finer than ticks.
    pub cpu: Duration,
    pub wakeups: u64,
}

impl Idle {
    pub fn measure(pid: u32, span: Duration) -> Idle {
        let (c0, s0, n0) = (cpu_ticks(pid), switches(pid), cpu_by_thread(pid));
        thread::sleep(span);
        let (c1, s1, n1) = (cpu_ticks(pid), switches(pid), cpu_by_thread(pid));
        let hz = clock_ticks_per_second();
        let ticks = c1.saturating_sub(c0);
        let cpu = Duration::from_nanos(thread_delta(&n0, &n1));
        // Ticks miss short bursts (a 60 s window may hold 0 ticks and still some work);
        // schedstat's nanoseconds do not. Report the larger of the two.
        let by_ticks = ticks as f64 / hz as f64;
        Idle {
            seconds: span.as_secs_f64(),
            percent: by_ticks.max(cpu.as_secs_f64()) / span.as_secs_f64() * 100.0,
            ticks,
            hz,
            cpu,
            wakeups: thread_delta(&s0, &s1),
        }
    }

    pub fn json(&self) -> Value {
        json!({
            "seconds": self.seconds,
            "cpu_percent": self.percent,
            "cpu_ms": self.cpu.as_secs_f64() * 1e3,
            "ticks": self.ticks,
            "hz": self.hz,
            "wakeups": self.wakeups,
        })
    }
}

/// The 1, 5 and 15-minute load averages.
pub fn loadavg() -> [f64; 3] {
    let l = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut it = l.split_whitespace().map(|v| v.parse::<f64>().unwrap_or(f64::NAN));
    [it.next().unwrap_or(f64::NAN), it.next().unwrap_or(f64::NAN), it.next().unwrap_or(f64::NAN)]
}

/// CPU model, cores, memory, kernel.
pub fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cpus = thread::available_parallelism().map_or(0, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    json!({
        "cpu_model": model,
        "cores": cpus,
        "ram_gib": mem_kib as f64 / 1024.0 / 1024.0,
        "kernel": kernel.trim(),
    })
}

/// The commit of the working tree and whether it has uncommitted changes.
pub fn git(dir: &Path) -> Value {
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let commit = run(&["rev-parse", "HEAD"]);
    let short = run(&["rev-parse", "--short", "HEAD"]);
    let dirty = run(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
    json!({"commit": commit, "short": short, "dirty": dirty})
}
