//! Pass 2's runner: how one candidate note runs for an event ([`EventRunner`]; the run engine
//! in production, [`EngineRunner`]), the run's context message, and which notes refuse events.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio_util::sync::CancellationToken;

use crate::model::BoxFuture;
use crate::providers::{RunEvent, TriggerKind};
use crate::runs::{Engine, Outcome, RunSpec};

use super::*;

/// Runs one candidate note for an event.
pub trait EventRunner: Send + Sync {
    /// Events are processed only when notes may run on their own: a trusted workspace with
    /// scheduling enabled. Until then they wait in `pending/`.
    fn trusted(&self) -> bool;
    /// For `processedAt`.
    fn now(&self) -> DateTime<Utc>;
    /// Run `note` for `event`; `context` is the event as the run's message tells it
    /// ([`run_context`]).
    fn run<'a>(
        &'a self,
        note: &'a EventNote,
        event: &'a Event,
        context: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Outcome>;
    /// How many processed events `done/` keeps (`[history] events_keep`); `None`: no pruning.
    fn done_keep(&self) -> Option<usize> {
        None
    }
    /// Whether `note` may run on its own here at all, decided before routing so that no
    /// routing is spent on it: not inside a folder with its own, untrusted `.livenote.toml`.
    fn may_run(&self, _note: &EventNote) -> bool {
        true
    }
    /// What a run it made cost, for the log line (`Engine::last_run`); `None`: not known.
    fn last_run(&self, _run_id: &str) -> Option<crate::cost::LastRun> {
        None
    }
    /// How often a wait for a routing retry looks at [`EventRunner::now`] again: `None` for
    /// real time, `Some` for a clock that jumps (tests; see `Clock::poll_interval`).
    fn poll_interval(&self) -> Option<Duration> {
        None
    }
    /// The machine `[scheduler] host` names when it is not this one: the queue is that
    /// machine's to process (`pending/` syncs with the folder), so events stay pending here.
    fn scheduled_on(&self) -> Option<String> {
        None
    }
}

/// What an event run is told about its event: the note's criteria, the event and its payload
/// (pass 2). What to do with it (decide whether it matters, else leave the note unchanged) is
/// said once, by the run's message for the `event` trigger (`agent::prompt`), not here too.
pub fn run_context(event: &Event, criteria: &str) -> String {
    // A target skips routing: a note without criteria runs because the event named it.
    let criteria = match criteria.trim() {
        "" => "(none: the event names this note as its target)",
        c => c,
    };
    format!(
        "**Event match criteria of this note:** {criteria}\n\n\
**Event:** source `{}`, type `{}`, id `{}`, created {}\n\n\
**Payload:**\n\n{}",
        event.source,
        event.kind,
        event.id,
        event.created_at,
        truncate_chars(&event.payload_text(), MAX_CONTEXT_PAYLOAD_CHARS)
    )
}

/// Event runs through the run engine: `trigger: event`, backoff ignored, trust required.
pub struct EngineRunner {
    pub engine: Arc<Engine>,
    /// How long to wait for a run of the same note (cron, manual, another process) to end
    /// before giving the event up for that note: an event should not be lost to a busy note.
    pub wait_busy: Duration,
}

impl EngineRunner {
    pub fn new(engine: Arc<Engine>) -> Self {
        let timeout = engine.config.read().map(|c| c.agent.timeout).unwrap_or(Duration::from_secs(600));
        EngineRunner { engine, wait_busy: timeout + Duration::from_secs(60) }
    }
}

impl EventRunner for EngineRunner {
    fn trusted(&self) -> bool {
        self.engine.unattended_runs()
    }

    fn now(&self) -> DateTime<Utc> {
        self.engine.clock.now()
    }

    fn done_keep(&self) -> Option<usize> {
        self.engine.config.read().ok().map(|c| c.history.events_keep)
    }

    fn last_run(&self, run_id: &str) -> Option<crate::cost::LastRun> {
        self.engine.last_run(run_id)
    }

    fn poll_interval(&self) -> Option<Duration> {
        self.engine.clock.poll_interval()
    }

    fn may_run(&self, note: &EventNote) -> bool {
        self.engine.untrusted_nested_folder(&note.path).is_none()
    }

    fn scheduled_on(&self) -> Option<String> {
        self.engine.scheduled_on()
    }

    fn run<'a>(
        &'a self,
        note: &'a EventNote,
        event: &'a Event,
        context: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let deadline = Instant::now() + self.wait_busy;
            loop {
                // The engine ignores `active` and `until` (manual runs may run paused or expired
                // notes); an event must not, and the note may have been paused or have expired
                // since it was routed.
                let now = self.engine.clock.now();
                // Only a target brings a note without criteria here (`targeted_note`).
                let targeted = note.criteria.trim().is_empty();
                if let Some(why) = refuses_events(&note.path, now, &self.engine.zone, targeted) {
                    return Outcome::Skipped(why.to_owned());
                }
                if !self.engine.is_running(&note.path) {
                    let spec = RunSpec {
                        path: note.path.clone(),
                        trigger: TriggerKind::Event,
                        context: Some(context.clone()),
                        event: Some(event.for_run()),
                    };
                    let rel = note.rel.as_str();
                    let mut log = |e: &RunEvent| tracing::debug!("{} {rel}: {}", e.kind, e.message);
                    let run = self.engine.run(spec, &mut log);
                    tokio::pin!(run);
                    // The run is polled first so that it is registered before a stop can
                    // reach it; a stopped run is still awaited so it releases its slot.
                    let outcome = tokio::select! {
                        biased;
                        o = &mut run => o,
                        _ = cancel.cancelled() => {
                            self.engine.stop(&note.path);
                            run.await
                        }
                    };
                    // Another run took the note between the check and the lock: wait again.
                    let busy = matches!(outcome, Outcome::Skipped(_)) && self.engine.is_running(&note.path);
                    if !busy || Instant::now() >= deadline {
                        return outcome;
                    }
                } else if Instant::now() >= deadline {
                    return Outcome::Skipped("the note stayed busy with another run".to_owned());
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(250)) => {}
                    _ = cancel.cancelled() => return Outcome::Skipped("stopped".to_owned()),
                }
            }
        })
    }
}

/// Why the note on disk no longer takes events, if it does not.
pub(super) fn refuses_events(
    path: &Path,
    now: DateTime<Utc>,
    zone: &crate::schedule::Zone,
    targeted: bool,
) -> Option<&'static str> {
    let Ok(head) = crate::workspace::read_frontmatter(path) else { return Some("the note cannot be read") };
    let analysis = crate::note::analyze(&head, &crate::note::Options::default());
    match analysis.live {
        None => Some("the note is no longer live"),
        Some(l) if !l.active => Some("the note is paused"),
        Some(l) if l.expired(now, zone) => Some("the note has expired (`until` has passed)"),
        Some(l) if !targeted && l.event_match_criteria.as_deref().is_none_or(|c| c.trim().is_empty()) => {
            Some("the note has no eventMatchCriteria")
        }
        Some(_) => None,
    }
}
