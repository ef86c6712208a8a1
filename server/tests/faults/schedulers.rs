//! Two editors and a watcher on one folder, in one process: three engines (each with its own
//! registry, as separate processes have) and three schedulers on a shared manual clock, one of
//! them with a lagging index. Cross-engine exclusion is the note's lock file and the re-check
//! of `lastAttemptAt` under it. Each due cycle runs exactly once.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::TimeDelta;
use livenote::scheduler::Scheduler;
use tokio::sync::Notify;

use crate::common::done_runs;
use crate::{FreshSource, Ws, command_config, live_note, log_lines, pass, settle, t};

const LOG_NOW: &str = "echo \"$LIVENOTE_NOW\" >> runs.log; echo \"updated at $LIVENOTE_NOW\"";

/// Two "editors" that hear every file change and a "watcher" whose index lags (refreshed
/// every third look), each over its own engine.
fn three(ws: &Ws) -> [Arc<Scheduler>; 3] {
    let make = |every: usize| {
        Arc::new(Scheduler::new(
            ws.engine(),
            Arc::new(FreshSource::new(&ws.root, every)),
            Arc::new(Notify::new()),
        ))
    };
    [make(1), make(1), make(3)]
}

/// Walk `minutes` minutes from `start`, with passes of all three schedulers (in a rotating
/// order) at :05, :30 and :55 of every minute; returns how many times any of them fired.
async fn walk(ws: &Ws, s: &[Arc<Scheduler>; 3], start: &str, minutes: i64) -> usize {
    let mut fired = 0;
    for m in 0..minutes {
        for sec in [5, 30, 55] {
            ws.clock.set(t(start) + TimeDelta::minutes(m) + TimeDelta::seconds(sec));
            for k in 0..3 {
                fired += pass(&s[(m as usize + k) % 3]);
            }
            settle(&[&s[0], &s[1], &s[2]]).await;
        }
    }
    fired
}

/// A per-minute cron for 30 minutes. Every run succeeds, so no backoff applies (SPEC 3: it
/// holds only after an attempt that did not succeed) and each minute's cycle runs, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_schedulers_on_a_per_minute_cron_for_30_minutes_run_each_due_cycle_once() {
    let ws = Ws::new(&command_config(LOG_NOW), "2026-11-23T09:00:00Z");
    let cron = "  triggers:\n    cronExpr: \"* * * * *\"\n  lastRunAt: \"2026-11-23T08:59:10.000Z\"\n";
    ws.write("n.md", &live_note(cron, "old\n"));
    let s = three(&ws);
    let fired = walk(&ws, &s, "2026-11-23T09:00:00Z", 30).await;
    let runs = log_lines(&ws.path("runs.log"));
    let want: Vec<String> = (0..30).map(|m| format!("2026-11-23T09:{m:02}:05Z")).collect();
    assert_eq!(runs, want, "fired {fired} times");
    assert_eq!(done_runs(&ws.root), 30);
    // The lagging scheduler fired on stale data at least once; the lock and the re-check
    // under it turned those fires into skips.
    assert!(fired > runs.len(), "fired {fired} times for {} runs", runs.len());
}

/// Thirty five-minute cycles (150 minutes): exactly 30 runs, one per cycle, none twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_schedulers_run_thirty_cycles_exactly_thirty_times() {
    let ws = Ws::new(&command_config(LOG_NOW), "2026-11-23T09:00:00Z");
    let cron = "  triggers:\n    cronExpr: \"*/5 * * * *\"\n  lastRunAt: \"2026-11-23T08:55:10.000Z\"\n";
    ws.write("n.md", &live_note(cron, "old\n"));
    let s = three(&ws);
    walk(&ws, &s, "2026-11-23T09:00:00Z", 150).await;
    let runs = log_lines(&ws.path("runs.log"));
    let distinct: BTreeSet<&String> = runs.iter().collect();
    assert_eq!(runs.len(), 30, "{runs:#?}");
    assert_eq!(distinct.len(), 30, "a cycle ran twice: {runs:#?}");
    let want: Vec<String> = (0..30)
        .map(|k| {
            (t("2026-11-23T09:00:05Z") + TimeDelta::minutes(5 * k)).format("%Y-%m-%dT%H:%M:%SZ").to_string()
        })
        .collect();
    assert_eq!(runs, want);
    assert_eq!(done_runs(&ws.root), 30);
}
