//! The scheduler: one task that sleeps until the earliest instant a live note becomes due,
//! fires what is due, and re-plans when the notes change (file events, document saves) or
//! trust is granted. It re-checks at least every minute against wall-clock jumps and suspend;
//! it never rescans files on a timer. It reads saved files (through the index), never editor
//! buffers, and a run re-checks due-ness under the note's lock, so several livenote processes
//! on one folder fire each cycle once.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::note::model::Live;
use crate::providers::TriggerKind;
use crate::runs::{Engine, Outcome, RunSpec};
use crate::schedule::{Decision, DueTrigger};
use crate::status;

/// Where the scheduler finds live notes (the workspace index).
pub trait NoteSource: Send + Sync {
    fn live_notes(&self) -> Vec<(PathBuf, Live)>;
}

/// The longest the scheduler sleeps before looking again (clock jumps, suspend).
pub const MAX_SLEEP: Duration = Duration::from_secs(60);
/// A note whose run was skipped (another process has it) is not fired again for this long,
/// so the scheduler does not spin until the index sees the other run's `lastAttemptAt`.
const REFIRE_PAUSE: Duration = Duration::from_secs(2);

pub struct Scheduler {
    pub engine: Arc<Engine>,
    pub source: Arc<dyn NoteSource>,
    /// Notified to re-plan now.
    pub wake: Arc<Notify>,
    pub enabled: bool,
}

/// What the scheduler did in one pass, for logs and tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pass {
    pub fired: Vec<(PathBuf, &'static str)>,
    pub next: Option<chrono::DateTime<chrono::Utc>>,
}

impl Scheduler {
    /// Run until the process ends.
    pub async fn run(self: Arc<Self>) {
        let mut recently: HashMap<PathBuf, Instant> = HashMap::new();
        loop {
            let pass = self.pass(&mut recently);
            let now = self.engine.clock.now();
            let mut wait = pass
                .next
                .map(|n| (n - now).to_std().unwrap_or(Duration::ZERO))
                .unwrap_or(MAX_SLEEP)
                .min(MAX_SLEEP);
            if let Some(poll) = self.engine.clock.poll_interval() {
                wait = wait.min(poll);
            }
            if !recently.is_empty() {
                wait = wait.min(REFIRE_PAUSE);
            }
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.wake.notified() => {}
            }
        }
    }

    /// Fire every note due now; return when to look next.
    pub fn pass(self: &Arc<Self>, recently: &mut HashMap<PathBuf, Instant>) -> Pass {
        let mut pass = Pass::default();
        recently.retain(|_, at| at.elapsed() < REFIRE_PAUSE);
        if !self.enabled || !self.engine.trusted() {
            return pass;
        }
        let now = self.engine.clock.now();
        for (path, live) in self.source.live_notes() {
            if live.has_errors || !live.active || self.engine.registry.is_running(&path) {
                continue;
            }
            let view = status::schedule_view(&live, now, &self.engine.zone);
            match view.decision {
                Some(Decision::Due(trigger)) if !recently.contains_key(&path) => {
                    let Some(token) = self.engine.registry.start(&path) else { continue };
                    let kind = match trigger {
                        DueTrigger::Cron { .. } => TriggerKind::Cron,
                        DueTrigger::Window { .. } => TriggerKind::Window,
                    };
                    let rel = self.engine.rel(&path);
                    tracing::info!("fire {rel} ({})", kind.as_str());
                    recently.insert(path.clone(), Instant::now());
                    pass.fired.push((path.clone(), kind.as_str()));
                    let me = self.clone();
                    tokio::spawn(async move {
                        let spec = RunSpec { path: path.clone(), trigger: kind, context: None };
                        let outcome = me.engine.run_registered(spec, token, &mut |_| {}).await;
                        log_outcome(&rel, &outcome);
                        me.wake.notify_one();
                    });
                }
                Some(Decision::Due(_)) => {}
                _ => {
                    if let Some(n) = view.next_due.filter(|n| *n > now) {
                        pass.next = Some(pass.next.map_or(n, |p| p.min(n)));
                    }
                }
            }
        }
        pass
    }
}

/// One log line per outcome, the note path second.
pub fn log_outcome(rel: &str, outcome: &Outcome) {
    match outcome {
        Outcome::Done { summary, .. } => tracing::info!("done {rel}: {summary}"),
        Outcome::Failed { error, .. } => tracing::warn!("failed {rel}: {error}"),
        Outcome::Stopped { .. } => tracing::warn!("failed {rel}: stopped"),
        Outcome::Skipped(reason) => tracing::info!("skip {rel} ({reason})"),
    }
}
