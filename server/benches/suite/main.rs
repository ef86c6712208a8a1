//! The benchmark suite: one command, every performance figure livenote claims, for vaults of
//! 1,000 / 10,000 / 50,000 notes side by side, in one run.
//!
//! Run: `cargo bench -p livenote --bench suite` (about 10 minutes after the build; Linux only,
//! needs `python3`), or `bash scripts/bench.sh` to also redraw the tables and the plot.
//! It measures the `bench` profile (release + line tables); `--profile dist-bench` measures the
//! shipped build (dist + line tables); the results' `settings.profile` names which.
//! `LIVENOTE_BENCH_BIN=path/to/livenote` measures that binary instead (`target/release/livenote`
//! as `cargo build --release` makes it, `target/dist/livenote`), named so in the results.
//! Results go to `target/bench/results.json` (and a dated copy); a summary goes to stdout.
//!
//! Per vault size (`python3 scripts/gen_vault.py --notes N --live-ratio 0.1 --big 3 --seed 1
//! --ran-at <tomorrow>`, plus the 1 MB note `big/big-1mb.md`, a no-op `command` provider
//! (`cat`) in `.livenote.toml`, and the vault trusted in a scratch data dir):
//! 1. Start-up, 5 times: the floor (walk the vault and read every note once, whole, with
//!    `std::fs` on one thread), then spawn `livenote lsp` and time spawn -> `initialize`
//!    answered, spawn -> indexed (`livenote.listNotes`, polled every 5 ms, returns every live
//!    note), the `indexed` log line, and the server's own figure in it. Then, where the bench
//!    may drop the page cache (root), 3 cold start-ups: floor and spawn -> indexed, each after
//!    `sync` and `drop_caches`.
//! 2. The fifth server stays up: RSS after indexing, then idle CPU over 60 s (nothing is due:
//!    every live note ran "tomorrow"; the scheduler still plans them all).
//! 3. Requests: workspace/symbol and listNotes over the index; on the 1 MB note, keystroke ->
//!    `publishDiagnostics` and completion, hover, codeLens, inlayHint, codeAction,
//!    textDocument/diagnostic, livenote.noteStatus (200 samples each).
//! 4. File change -> fire: a probe note is rewritten on disk (temp file + rename) without
//!    runtime fields, which makes it due at once; the time until the scheduler's run has
//!    written `lastAttemptAt` (the run's first write), seen by the bench polling the file and
//!    by the timestamp itself.
//! 5. Fire precision: 8 notes with second-precise crons a few seconds ahead;
//!    `lastAttemptAt` - due instant.
//! 6. Run overhead: `livenote run NOTE` with the no-op provider, 10 times on a typical note and
//!    on the 1 MB note; the provider's share from the run's own progress lines on stderr
//!    (`provider` -> `exited`).
//! 7. The reference (see `reference.rs`): the seed design's 15 s polling loop, in its own
//!    process, for 4 cycles (+1 to catch the last due note): CPU per pass, average CPU, RSS, and
//!    the latency of 10 notes coming due at evenly spread phases.
//!
//! Once, whatever the size (`mcp.rs`): what an MCP-using run adds, server start once and then
//! each call, with the servers of `LIVENOTE_MCP_VENV` (skipped without it). And (`tokens.rs`)
//! the tokens of a typical refresh with the scripted model making patch edits.
//!
//! Environment knobs (for development; the published figures use the defaults):
//! `LIVENOTE_BENCH_ONLY=mcp` (or `tokens`) measures only that part; `LIVENOTE_BENCH_SIZES=1000,10000` picks sizes; `LIVENOTE_BENCH_QUICK=1` takes fewer samples,
//! idles 5 s and polls the reference every 5 s (figures then are not comparable);
//! `LIVENOTE_BENCH_OUT=path.json` writes the results elsewhere.
//! `LIVENOTE_BENCH_WRAPPER="heaptrack -o FILE"` runs the server under a profiler (its memory
//! figures are then the wrapper's).

mod client;
mod mcp;
mod procfs;
mod reference;
mod tokens;
mod vault;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use chrono::{TimeDelta, Timelike, Utc};
use serde_json::{Value, json};

use client::Server;
use procfs::Idle;

struct Settings {
    sizes: Vec<usize>,
    runs: usize,
    samples: usize,
    idle: Duration,
    reference_interval: Duration,
    big_notes: usize,
    run_samples: usize,
    quick: bool,
}

impl Settings {
    fn from_env() -> Settings {
        let quick = std::env::var_os("LIVENOTE_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0");
        let sizes = std::env::var("LIVENOTE_BENCH_SIZES")
            .ok()
            .map(|s| s.split(',').filter_map(|n| n.trim().replace('_', "").parse().ok()).collect())
            .filter(|v: &Vec<usize>| !v.is_empty())
            .unwrap_or_else(|| vec![1_000, 10_000, 50_000]);
        Settings {
            sizes,
            runs: if quick { 2 } else { 5 },
            samples: if quick { 40 } else { 200 },
            idle: Duration::from_secs(if quick { 5 } else { 60 }),
            reference_interval: Duration::from_secs(if quick { 5 } else { 15 }),
            big_notes: 3,
            run_samples: if quick { 3 } else { 10 },
            quick,
        }
    }
}

pub fn progress(msg: &str) {
    let _ = writeln!(std::io::stderr(), "bench suite: {msg}");
}

/// The cargo profile the measured binary was built with, from the folder cargo put it in:
/// `cargo bench` builds `bench` (release + line tables) into `release/`, `cargo bench --profile
/// dist-bench` (dist + line tables: what ships) into `dist-bench/`.
fn profile_of(bin: &Path) -> String {
    let dir = bin.parent().and_then(|d| d.file_name()).map(|d| d.to_string_lossy().into_owned());
    match dir.as_deref() {
        Some("release") => "bench (release + line tables)".to_owned(),
        Some("dist-bench") => "dist-bench (dist + line tables: what ships)".to_owned(),
        Some(other) => other.to_owned(),
        None => "unknown".to_owned(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == reference::ARG) {
        reference::child(&args[i + 1..]);
        return;
    }
    let settings = Settings::from_env();
    let started = Instant::now();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // LIVENOTE_BENCH_BIN: a binary built elsewhere (`cargo build --release`, `--profile dist`),
    // to compare what people build with what ships without building either twice.
    let given = std::env::var_os("LIVENOTE_BENCH_BIN").filter(|b| !b.is_empty()).map(PathBuf::from);
    let bin = given.clone().unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_livenote")));
    let profile = match &given {
        Some(b) => format!("LIVENOTE_BENCH_BIN={}", b.display()),
        None => profile_of(&bin),
    };
    let load_start = procfs::loadavg();
    let date = Utc::now();
    progress(&format!(
        "profile {}, sizes {:?}, load average {:?}{}",
        profile,
        settings.sizes,
        load_start,
        if settings.quick { ", QUICK mode (figures not comparable)" } else { "" }
    ));
    let only = std::env::var("LIVENOTE_BENCH_ONLY").unwrap_or_default();
    let mut sizes = Vec::new();
    for &n in settings.sizes.iter().filter(|_| only.is_empty()) {
        sizes.push(bench_size(&settings, manifest, &bin, n));
    }
    let mcp = if only.is_empty() || only == "mcp" {
        mcp::bench(&bin, settings.run_samples, manifest)
    } else {
        Value::Null
    };
    let tokens = if only.is_empty() || only == "tokens" { tokens::bench(&bin) } else { Value::Null };
    let results = json!({
        "suite": "livenote benchmark suite (server/benches/suite)",
        "format": 1,
        "date": date.to_rfc3339(),
        "quick": settings.quick,
        "git": procfs::git(manifest),
        "machine": procfs::machine(),
        "load_average": {"start": load_start, "end": procfs::loadavg()},
        "elapsed_s": started.elapsed().as_secs_f64(),
        "settings": {
            "startup_runs": settings.runs,
            "request_samples": settings.samples,
            "idle_s": settings.idle.as_secs_f64(),
            "reference_interval_s": settings.reference_interval.as_secs_f64(),
            "big_notes": settings.big_notes,
            "run_samples": settings.run_samples,
            "live_ratio": 0.1,
            "seed": 1,
            "profile": profile,
        },
        "sizes": sizes,
        "mcp": mcp,
        "tokens": tokens,
    });
    let out = std::env::var_os("LIVENOTE_BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../target/bench/results.json"));
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    }
    let text = serde_json::to_string_pretty(&results).unwrap_or_else(|e| panic!("encode results: {e}"));
    std::fs::write(&out, &text).unwrap_or_else(|e| panic!("write {}: {e}", out.display()));
    let dated = out.with_file_name(format!("results-{}.json", date.format("%Y%m%dT%H%M%SZ")));
    let _ = std::fs::write(&dated, &text);
    progress(&format!("results in {} (and {})", out.display(), dated.display()));
    summary(&results);
}

/// Everything for one vault size.
fn bench_size(settings: &Settings, manifest: &Path, bin: &Path, notes: usize) -> Value {
    let size_started = Instant::now();
    let tmp = tempfile::Builder::new()
        .prefix(&format!("livenote-bench-{notes}-"))
        .tempdir()
        .unwrap_or_else(|e| panic!("create a temp dir for the vault: {e}"));
    let vault = tmp.path().join("vault");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap_or_else(|e| panic!("create {}: {e}", data.display()));
    let env: Vec<(&str, &Path)> = vec![("LIVENOTE_DATA_DIR", &data), ("LIVENOTE_CONFIG_DIR", &data)];

    // Every live note "ran" tomorrow at this hour: nothing is due during the run, but every
    // note has a next fire for the scheduler to plan.
    let ran_at = vault::rfc3339(
        Utc::now()
            .checked_add_signed(TimeDelta::days(1))
            .and_then(|t| t.with_nanosecond(0))
            .unwrap_or_else(Utc::now),
    );
    progress(&format!("{notes} notes: generating into {}", vault.display()));
    let t = Instant::now();
    vault::generate(manifest, &vault, notes, settings.big_notes, &ran_at);
    let big_text = vault::big_note(&ran_at);
    let big_path = vault.join(vault::BIG_NOTE);
    vault::write_atomic(&big_path, &big_text);
    std::fs::write(vault.join(".livenote.toml"), vault::CONFIG).unwrap_or_else(|e| panic!("config: {e}"));
    const PROBES: usize = 7;
    let probe = |k: usize| vault.join(format!("bench/probe-{k}.md"));
    for k in 0..PROBES {
        vault::write_atomic(&probe(k), &vault::small_note(&format!("Probe {k}"), "0 0 1 1 *", Some(&ran_at)));
    }
    let vault = std::fs::canonicalize(&vault).unwrap_or_else(|e| panic!("canonicalize: {e}"));
    let ok = cli(bin, &vault, &env, &["trust", "."]).status().is_ok_and(|s| s.success());
    assert!(ok, "livenote trust failed");
    let expected_live = vault::count_live(&vault);
    let gen_s = t.elapsed().as_secs_f64();

    // 1. Start-up.
    let mut startup = StartupRuns::default();
    let mut kept = None;
    for run in 0..settings.runs {
        let (floor, n_files, n_bytes) = vault::read_floor(&vault);
        startup.files = n_files;
        startup.bytes = n_bytes;
        // What the rest of the machine did meanwhile: other sessions' builds take the second
        // core that the index build uses.
        let (busy0, self0, t0) =
            (procfs::machine_busy_ticks(), procfs::cpu_ticks(std::process::id()), Instant::now());
        let mut s = Server::spawn(bin, &env);
        let init = s.initialize(&vault);
        let idx = s.wait_indexed(expected_live);
        let others = procfs::machine_busy_ticks()
            .saturating_sub(busy0)
            .saturating_sub(procfs::cpu_ticks(std::process::id()).saturating_sub(self0))
            .saturating_sub(procfs::cpu_ticks(s.pid()));
        let others = others as f64 / procfs::clock_ticks_per_second() as f64 / t0.elapsed().as_secs_f64();
        let log = s.index_log();
        progress(&format!(
            "{notes} notes, start {}: floor {:.0} ms, initialize {:.1} ms, indexed {:.0} ms (log: {}; other processes: {others:.2} cores)",
            run + 1,
            ms(floor),
            ms(init),
            ms(idx),
            log.map_or("none".to_owned(), |(at, l)| format!("read at {:.0} ms, says {l} ms", ms(at)))
        ));
        startup.floor.push(ms(floor));
        startup.init.push(ms(init));
        startup.indexed.push(ms(idx));
        startup.others.push(others);
        if let Some((at, own)) = log {
            startup.log_at.push(ms(at));
            startup.server.push(own as f64);
        }
        if run + 1 == settings.runs {
            kept = Some(s);
        } else {
            s.shutdown();
        }
    }
    let Some(mut s) = kept else { panic!("no server left after the start-up runs") };
    let cold = cold_startups(settings, bin, &env, &vault, expected_live, notes);
    let pid = s.pid();

    // 2. Memory after indexing, then idle. Let the post-index work (diagnostics of notes with
    // problems, the watcher's set-up, the scheduler's first pass) finish first.
    thread::sleep(Duration::from_secs(2));
    s.drain_log();
    let mem_indexed = procfs::memory(pid);
    progress(&format!(
        "{notes} notes: RSS {} KiB after indexing; idle for {} s",
        mem_indexed.1,
        settings.idle.as_secs()
    ));
    let idle = Idle::measure(pid, settings.idle);
    s.drain_log();

    // 3. Requests.
    let mut requests = Vec::new();
    let n = settings.samples;
    let list_n = (n / 4).max(10);
    requests.push(req(
        "workspace/symbol \"budget\"",
        "index",
        s.sample("workspace/symbol", n, |_| json!({"query": "budget"})),
    ));
    // What a symbol picker sends when it opens: every live note matches.
    requests.push(req(
        "workspace/symbol \"\"",
        "index",
        s.sample("workspace/symbol", n, |_| json!({"query": ""})),
    ));
    requests.push(req(
        "livenote.listNotes",
        "index",
        s.sample(
            "workspace/executeCommand",
            list_n,
            |_| json!({"command": "livenote.listNotes", "arguments": []}),
        ),
    ));
    // The typed request editors use: serialised once, straight to the wire.
    requests.push(req(
        "livenote/listNotes",
        "index",
        s.sample("livenote/listNotes", list_n, |_| Value::Null),
    ));

    progress(&format!("{notes} notes: the 1 MB note"));
    let uri = vault::file_uri(&big_path);
    let t = Instant::now();
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": big_text}}),
    );
    let open = s.wait_diagnostics(&uri, 1).0 - t;
    let mut version = 1;
    let title_end =
        vault::position(&big_text, &format!("title: \"{}", vault::BIG_TITLE), vault::BIG_TITLE.len() + 8);
    let mut inserted = 0;
    let mut keystroke = || {
        version += 1;
        let col = title_end.1 + inserted;
        inserted += 1;
        let at = json!({"line": title_end.0, "character": col});
        (
            version,
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": at, "end": at}, "text": "x"}]}),
        )
    };
    let mut typing = Vec::new();
    let mut diag_count = 0;
    let cpu = procfs::cpu_by_thread(pid);
    for _ in 0..n {
        let (v, change) = keystroke();
        let t = Instant::now();
        s.notify("textDocument/didChange", change);
        let (at, diags) = s.wait_diagnostics(&uri, v);
        typing.push(at - t);
        diag_count = diags;
    }
    let typing_cpu = procfs::cpu_since(pid, &cpu) / n as u32;
    requests.push(req(
        "keystroke → publishDiagnostics",
        "1 MB note",
        client::Sampled { times: typing, answer: format!("{diag_count} diagnostics"), cpu: typing_cpu },
    ));
    let cron = vault::position(&big_text, "    cronExpr: \"", 15);
    let cron_key = vault::position(&big_text, "    cronExpr: \"", 6);
    let live_line = vault::position(&big_text, "\nlive:", 0).0 + 1;
    let doc = json!({"uri": uri});
    let at_cron = json!({"textDocument": doc, "position": {"line": cron.0, "character": cron.1}});
    requests.push(req(
        "completion",
        "1 MB note",
        s.sample("textDocument/completion", n, |_| at_cron.clone()),
    ));
    requests.push(req(
        "hover",
        "1 MB note",
        s.sample(
            "textDocument/hover",
            n,
            |_| json!({"textDocument": doc, "position": {"line": cron_key.0, "character": cron_key.1}}),
        ),
    ));
    requests.push(req(
        "codeLens",
        "1 MB note",
        s.sample("textDocument/codeLens", n, |_| json!({"textDocument": doc})),
    ));
    requests.push(req(
        "inlayHint",
        "1 MB note",
        s.sample("textDocument/inlayHint", n, |_| {
            json!({"textDocument": doc, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 50, "character": 0}}})
        }),
    ));
    requests.push(req(
        "codeAction",
        "1 MB note",
        s.sample("textDocument/codeAction", n, |_| {
            let at = json!({"line": live_line, "character": 2});
            json!({"textDocument": doc, "range": {"start": at, "end": at}, "context": {"diagnostics": []}})
        }),
    ));
    requests.push(req(
        "textDocument/diagnostic",
        "1 MB note",
        s.sample("textDocument/diagnostic", n, |_| json!({"textDocument": doc})),
    ));
    requests.push(req(
        "livenote.noteStatus",
        "1 MB note",
        s.sample(
            "workspace/executeCommand",
            n,
            |_| json!({"command": "livenote.noteStatus", "arguments": [uri]}),
        ),
    ));
    requests.push(req(
        "livenote/noteStatus",
        "1 MB note",
        s.sample("livenote/noteStatus", n, |_| json!({"textDocument": {"uri": uri}})),
    ));
    // What an editor does while typing: the keystroke, then completion at once.
    let mut typed = Vec::new();
    let cpu = procfs::cpu_by_thread(pid);
    for _ in 0..n {
        let (v, change) = keystroke();
        let t = Instant::now();
        s.notify("textDocument/didChange", change);
        let (answered, _) = s.request("textDocument/completion", at_cron.clone());
        typed.push(answered - t);
        s.wait_diagnostics(&uri, v);
    }
    let typed_cpu = procfs::cpu_since(pid, &cpu) / n as u32;
    requests.push(req(
        "keystroke, then completion",
        "1 MB note",
        client::Sampled { times: typed, answer: "12 items".to_owned(), cpu: typed_cpu },
    ));
    s.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
    let mem_requests = procfs::memory(pid);
    s.drain_log();

    // 4. File change -> the scheduler fires.
    progress(&format!("{notes} notes: file change -> fire"));
    let mut replan_seen = Vec::new();
    let mut replan_stamp = Vec::new();
    for k in 0..PROBES {
        let path = probe(k);
        let text = vault::small_note(&format!("Probe {k}"), "0 0 1 1 *", None);
        let wall = SystemTime::now();
        let t = Instant::now();
        vault::write_atomic(&path, &text);
        let deadline = t + Duration::from_secs(20);
        let attempt = loop {
            if let Some(a) = vault::last_attempt(&path) {
                break Some(a);
            }
            if Instant::now() > deadline {
                break None;
            }
            thread::sleep(Duration::from_millis(1));
        };
        let seen = t.elapsed();
        let Some(attempt) = attempt else {
            progress(&format!("probe {k}: no lastAttemptAt within 20 s"));
            continue;
        };
        let written = chrono::DateTime::<Utc>::from(wall);
        replan_seen.push(ms(seen));
        replan_stamp.push((attempt - written).num_microseconds().unwrap_or(0) as f64 / 1e3);
        // Let the run finish before the next probe.
        let deadline = Instant::now() + Duration::from_secs(20);
        while vault::last_run(&path).is_none() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        thread::sleep(Duration::from_millis(200));
    }

    // 5. Fire precision.
    progress(&format!("{notes} notes: fire precision"));
    let now = Utc::now();
    let base = chrono::DateTime::from_timestamp(now.timestamp() + 3, 0).unwrap_or(now);
    let fires: Vec<(PathBuf, chrono::DateTime<Utc>)> = (0..8)
        .map(|k| {
            let at = base + TimeDelta::seconds(k);
            let path = vault.join(format!("bench/fire-{k}.md"));
            let text =
                vault::small_note(&format!("Fire {k}"), &vault::cron_at(at), Some(&vault::rfc3339(now)));
            vault::write_atomic(&path, &text);
            (path, at)
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut delays: Vec<Option<f64>> = vec![None; fires.len()];
    while Instant::now() < deadline && delays.iter().any(Option::is_none) {
        for (i, (path, at)) in fires.iter().enumerate() {
            if delays[i].is_none()
                && let Some(a) = vault::last_attempt(path)
            {
                delays[i] = Some((a - *at).num_microseconds().unwrap_or(0) as f64 / 1e6);
            }
        }
        thread::sleep(Duration::from_millis(50));
    }
    // Let the last runs finish.
    thread::sleep(Duration::from_millis(500));
    let mem_end = procfs::memory(pid);
    s.shutdown();

    // 6. Run overhead.
    progress(&format!("{notes} notes: livenote run"));
    let typical = vault.join("area-00/topic-00/note-000000.md");
    let run_typical = run_overhead(bin, &vault, &env, &typical, settings.run_samples);
    let run_big = run_overhead(bin, &vault, &env, &big_path, settings.run_samples);

    // 7. The reference.
    progress(&format!(
        "{notes} notes: the polling reference ({} s interval, ~{} s)",
        settings.reference_interval.as_secs(),
        settings.reference_interval.as_secs() * 5 + 3
    ));
    let reference = reference::measure(&vault, settings.reference_interval, &env);

    let result = json!({
        "notes": notes,
        "files": startup.files,
        "bytes": startup.bytes,
        "live": expected_live,
        "generate_s": gen_s,
        "startup": {
            "floor_ms": startup.floor,
            "initialize_ms": startup.init,
            "indexed_ms": startup.indexed,
            "log_line_ms": startup.log_at,
            "server_ms": startup.server,
            "other_processes_cores": startup.others,
        },
        "startup_cold": cold,
        "memory_kib": {
            "indexed": {"hwm": mem_indexed.0, "rss": mem_indexed.1},
            "after_requests": {"hwm": mem_requests.0, "rss": mem_requests.1},
            "end": {"hwm": mem_end.0, "rss": mem_end.1},
        },
        "idle": idle.json(),
        "big_note": {"bytes": big_text.len(), "open_to_diagnostics_ms": ms(open)},
        "requests": requests,
        "replan": {
            "what": "probe note rewritten on disk so it is due now -> lastAttemptAt written by the scheduler's run",
            "seen_ms": replan_seen,
            "stamp_ms": replan_stamp,
        },
        "fire_precision_s": delays,
        "run": {"typical": run_typical, "big": run_big},
        "reference": reference,
        "elapsed_s": size_started.elapsed().as_secs_f64(),
    });
    progress(&format!("{notes} notes: done in {:.0} s", size_started.elapsed().as_secs_f64()));
    result
}

/// Start-ups from disk: the page cache (the vault and the binary) dropped before each floor and
/// each spawn, 3 times each. Only where the bench may write `/proc/sys/vm/drop_caches` (root);
/// otherwise `{"skipped": why}`. The warm runs above are what the targets are judged on, since
/// an editor restarting the server finds the notes it just showed in the cache.
fn cold_startups(
    settings: &Settings,
    bin: &Path,
    env: &[(&str, &Path)],
    vault: &Path,
    expected_live: usize,
    notes: usize,
) -> Value {
    let drop_caches = || -> Result<(), String> {
        let synced = Command::new("sync").status().map_err(|e| format!("sync: {e}"))?;
        if !synced.success() {
            return Err(format!("sync: {synced}"));
        }
        std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| format!("/proc/sys/vm/drop_caches: {e}"))
    };
    if let Err(why) = drop_caches() {
        progress(&format!("{notes} notes: cold start-ups skipped ({why})"));
        return json!({ "skipped": why });
    }
    let (mut floor, mut indexed, mut server) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..settings.runs.min(3) {
        if let Err(why) = drop_caches() {
            return json!({ "skipped": why });
        }
        floor.push(ms(vault::read_floor(vault).0));
        if let Err(why) = drop_caches() {
            return json!({ "skipped": why });
        }
        let mut s = Server::spawn(bin, env);
        s.initialize(vault);
        indexed.push(ms(s.wait_indexed(expected_live)));
        if let Some((_, own)) = s.index_log() {
            server.push(own as f64);
        }
        s.shutdown();
        progress(&format!(
            "{notes} notes, cold start {}: floor {:.0} ms, indexed {:.0} ms",
            run + 1,
            floor.last().copied().unwrap_or_default(),
            indexed.last().copied().unwrap_or_default()
        ));
    }
    json!({ "floor_ms": floor, "indexed_ms": indexed, "server_ms": server })
}

#[derive(Default)]
struct StartupRuns {
    files: usize,
    bytes: usize,
    floor: Vec<f64>,
    init: Vec<f64>,
    indexed: Vec<f64>,
    log_at: Vec<f64>,
    server: Vec<f64>,
    others: Vec<f64>,
}

fn req(name: &str, on: &str, s: client::Sampled) -> Value {
    let mut times = s.times;
    times.sort();
    let rank = |p: f64| ms(times[((p * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1]);
    json!({
        "name": name,
        "on": on,
        "samples": times.len(),
        "p50_ms": rank(0.50),
        "p99_ms": rank(0.99),
        "max_ms": rank(1.0),
        "mean_ms": times.iter().map(|t| ms(*t)).sum::<f64>() / times.len() as f64,
        "cpu_ms": ms(s.cpu),
        "answer": s.answer,
    })
}

/// `livenote` with the bench's environment, in `dir`.
fn cli(bin: &Path, dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args).current_dir(dir).env("LIVENOTE_LOG", "warn").env("TZ", "UTC");
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    c
}

/// `livenote run NOTE`, `samples` times after one warm-up: wall time end to end, and the
/// provider's share: from the run's `provider` progress line to its `exited` line on stderr
/// (building the provider's input, spawning `cat`, feeding it, reading its output).
fn run_overhead(bin: &Path, vault: &Path, env: &[(&str, &Path)], note: &Path, samples: usize) -> Value {
    let mut total = Vec::new();
    let mut provider = Vec::new();
    let arg = note.to_string_lossy().into_owned();
    for i in 0..=samples {
        let mut c = cli(bin, vault, env, &["run", &arg]);
        c.stderr(Stdio::piped());
        let t = Instant::now();
        let mut child = c.spawn().unwrap_or_else(|e| panic!("spawn livenote run: {e}"));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("stderr not piped"));
        let (mut p0, mut p1) = (None, None);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if line.starts_with("provider ") {
                p0 = Some(Instant::now());
            } else if line.starts_with("exited ") {
                p1 = Some(Instant::now());
            }
        }
        let status = child.wait().unwrap_or_else(|e| panic!("wait for livenote run: {e}"));
        let wall = t.elapsed();
        assert!(status.success(), "livenote run {} failed: {status}", note.display());
        if i == 0 {
            continue;
        }
        total.push(ms(wall));
        if let (Some(a), Some(b)) = (p0, p1) {
            provider.push(ms(b - a));
        }
    }
    let size = std::fs::metadata(note).map_or(0, |m| m.len());
    json!({"note_bytes": size, "total_ms": total, "provider_ms": provider})
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(v: &[f64]) -> f64 {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A short table on stdout; `scripts/bench_report.py` makes the full ones from the JSON.
fn summary(r: &Value) {
    let sizes = r["sizes"].as_array().cloned().unwrap_or_default();
    let mut out = String::new();
    let nums = |v: &Value| {
        v.as_array().map(|a| a.iter().filter_map(Value::as_f64).collect::<Vec<_>>()).unwrap_or_default()
    };
    mcp_summary(r, &mut out, &nums);
    for (kind, t) in r["tokens"].as_object().into_iter().flatten() {
        out.push_str(&format!(
            "tokens per run, typical refresh with 2 patches ({kind}): {} input + {} output in {} model calls\n",
            t["tokens"]["input"], t["tokens"]["output"], t["modelCalls"]
        ));
    }
    if sizes.is_empty() {
        let _ = std::io::stdout().lock().write_all(out.as_bytes());
        return;
    }
    let head: Vec<String> = sizes.iter().map(|s| format!("{} notes", s["notes"])).collect();
    out.push_str(&format!("| | {} |\n|---|{}\n", head.join(" | "), "---|".repeat(sizes.len())));
    let mut row = |name: &str, f: &dyn Fn(&Value) -> String| {
        let cells: Vec<String> = sizes.iter().map(f).collect();
        out.push_str(&format!("| {name} | {} |\n", cells.join(" | ")));
    };
    row("floor (ms, median)", &|s| format!("{:.0}", median(&nums(&s["startup"]["floor_ms"]))));
    row("spawn → indexed (ms, median)", &|s| format!("{:.0}", median(&nums(&s["startup"]["indexed_ms"]))));
    row("server's own index figure (ms, median)", &|s| {
        format!("{:.0}", median(&nums(&s["startup"]["server_ms"])))
    });
    row("RSS after indexing (MiB)", &|s| {
        format!("{:.1}", s["memory_kib"]["indexed"]["rss"].as_f64().unwrap_or(0.0) / 1024.0)
    });
    row("idle CPU (% of a core)", &|s| {
        format!("{:.3}", s["idle"]["cpu_percent"].as_f64().unwrap_or(f64::NAN))
    });
    for name in
        ["keystroke → publishDiagnostics", "completion", "workspace/symbol \"\"", "livenote.listNotes"]
    {
        row(&format!("{name} p50 / p99 (ms)"), &|s| {
            s["requests"].as_array().and_then(|a| a.iter().find(|q| q["name"] == name)).map_or(
                "—".to_owned(),
                |q| {
                    format!(
                        "{:.2} / {:.2}",
                        q["p50_ms"].as_f64().unwrap_or(0.0),
                        q["p99_ms"].as_f64().unwrap_or(0.0)
                    )
                },
            )
        });
    }
    row("file change → fire (ms, median)", &|s| format!("{:.0}", median(&nums(&s["replan"]["stamp_ms"]))));
    row("fire precision (s, max)", &|s| {
        format!("{:.3}", nums(&s["fire_precision_s"]).into_iter().fold(f64::NAN, f64::max))
    });
    row("livenote run, typical note (ms, median)", &|s| {
        format!("{:.0}", median(&nums(&s["run"]["typical"]["total_ms"])))
    });
    row("reference: CPU per pass (ms, median)", &|s| {
        let cpu: Vec<f64> = s["reference"]["cycles"]
            .as_array()
            .map(|c| c.iter().filter_map(|c| c["cpu_ms"].as_f64()).collect())
            .unwrap_or_default();
        format!("{:.0}", median(&cpu))
    });
    row("reference: average CPU (%)", &|s| {
        format!("{:.2}", s["reference"]["cpu_percent"].as_f64().unwrap_or(f64::NAN))
    });
    row("reference: fire latency (s, mean)", &|s| {
        let l = nums(&s["reference"]["fire_latency_s"]);
        format!("{:.1}", l.iter().sum::<f64>() / l.len().max(1) as f64)
    });
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
}

/// The MCP figures (`mcp.rs`), when measured.
fn mcp_summary(r: &Value, out: &mut String, nums: &dyn Fn(&Value) -> Vec<f64>) {
    let pool = &r["mcp"]["pool"];
    for server in ["mcp-server-time", "fake echo"] {
        let p = &pool[server];
        if p.is_object() {
            out.push_str(&format!(
                "MCP {server}: start {:.0} ms, reuse {:.3} ms, call {:.2} ms (medians)\n",
                median(&nums(&p["start_ms"])),
                median(&nums(&p["reuse_ms"])),
                median(&nums(&p["call_ms"]))
            ));
        }
    }
    let run = &r["mcp"]["run"];
    if run.is_object() {
        out.push_str(&format!(
            "livenote run with one tool call: read_note {:.0} ms, mcp__time__get_current_time {:.0} ms (medians)\n\n",
            median(&nums(&run["read_note_ms"])),
            median(&nums(&run["mcp_time_ms"]))
        ));
    }
}
