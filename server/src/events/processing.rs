//! Pass 2 and the loop: each claimed event runs its candidate notes as `event` runs through an
//! [`EventRunner`] (the run engine in production), then goes to `done/` enriched; the
//! [`Processor`] serialises passes for a long-lived process.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::runs::{Engine, Outcome, one_line, timestamp};
use crate::scheduler::log_outcome;

use super::*;

// ---------------------------------------------------------------------------------------------
// Processing

/// What happened to one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    pub id: String,
    pub candidate_file_paths: Vec<String>,
    pub run_ids: Vec<String>,
    pub error: Option<String>,
}

/// Process every pending event, oldest first, until none is left; returns what was done.
/// Does nothing in an untrusted workspace (events stay pending) or while another processor
/// holds the queue (it picks up what arrives meanwhile). Never fails: problems end up in the
/// events' `error` or in the log.
pub async fn process_pending(
    root: &Path,
    notes: &(dyn Fn() -> Vec<EventNote> + Send + Sync),
    router: &dyn Router,
    runner: &dyn EventRunner,
    cancel: &CancellationToken,
) -> Vec<Processed> {
    let mut processed = Vec::new();
    if !runner.trusted() {
        tracing::debug!("events {}: workspace not trusted; events stay pending", root.display());
        return processed;
    }
    if let Some(host) = runner.scheduled_on() {
        tracing::debug!("events {}: scheduled on {host}; events stay pending for it", root.display());
        return processed;
    }
    // No queue yet (nothing was ever queued here): nothing to do, and nothing to create.
    if super::queue::real_queue_dir(root, "pending").is_none()
        && super::queue::real_queue_dir(root, "processing").is_none()
    {
        return processed;
    }
    if let Err(e) = ensure_dirs(root) {
        tracing::warn!("events {}: {e}", events_dir(root).display());
        return processed;
    }
    loop {
        let Some(queue) = acquire_queue(root).await else { return processed };
        recover_stale(root, STALE_CLAIM);
        loop {
            if cancel.is_cancelled() || !runner.trusted() {
                return processed;
            }
            // Looked at before claiming: a claim and its return would be file events in
            // `pending/`, waking the processor again and again while the head waits.
            if next_routing_retry(root).is_some_and(|at| at > runner.now()) {
                return processed;
            }
            let claim = match claim_next(root) {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => {
                    // Skipping would break the order; the next pass tries again.
                    tracing::warn!("events {}: cannot claim an event: {e}", root.display());
                    return processed;
                }
            };
            match process_claim(root, claim, notes, router, runner, cancel).await {
                Some(p) => processed.push(p),
                None => return processed,
            }
        }
        if let Some(keep) = runner.done_keep() {
            crate::runs::history::prune_done_events(root, keep);
        }
        drop(queue);
        // Another processor that found the queue locked left what arrived to us: look again
        // now that the lock is free.
        if pending_events(root).is_empty() {
            return processed;
        }
    }
}

/// Route, run and record one claimed event. `None` when cancelled: the event goes back to
/// `pending/` and is processed again later.
pub(super) async fn process_claim(
    root: &Path,
    claim: Claim,
    notes: &(dyn Fn() -> Vec<EventNote> + Send + Sync),
    router: &dyn Router,
    runner: &dyn EventRunner,
    cancel: &CancellationToken,
) -> Option<Processed> {
    let id = id_of(&claim.path);
    let mut record = Map::new();
    let mut result =
        Processed { id: id.clone(), candidate_file_paths: Vec::new(), run_ids: Vec::new(), error: None };
    match claim.read() {
        Err((error, raw)) => {
            tracing::warn!("event {id}: malformed: {error}");
            record.insert("id".to_owned(), json!(id));
            if let Some(raw) = raw {
                record.insert("raw".to_owned(), json!(raw));
            }
            result.error = Some(error);
        }
        Ok(mut event) => {
            // Strict order: an event waiting to retry its routing holds the ones behind it.
            if let Some(at) = routing_retry_at(&event)
                && at > runner.now()
            {
                requeue(root, &claim);
                return None;
            }
            tracing::info!("event {id}: received source={} type={}", event.source, event.kind);
            // A note inside an untrusted nested folder would be refused its run: not offered. A
            // note whose `live.sources` leaves out the event's source is not offered either: the
            // routing model is not asked about it (a target, below, still reaches it).
            let (mut notes, narrowed): (Vec<EventNote>, Vec<EventNote>) = notes()
                .into_iter()
                .filter(|n| runner.may_run(n))
                .partition(|n| crate::note::sources::accepts(n.sources.as_deref(), &event.source));
            if !narrowed.is_empty() {
                let rels: Vec<&str> = narrowed.iter().map(|n| n.rel.as_str()).collect();
                tracing::info!(
                    "event {id}: not offered to {} whose `sources` leave out {}: {}",
                    crate::text::count(rels.len(), "note"),
                    event.source,
                    rels.join(", ")
                );
            }
            if let Some(n) = event.target_file_path.as_deref().and_then(|t| targeted_note(root, t))
                && runner.may_run(&n)
                && !notes.iter().any(|e| e.rel == n.rel)
            {
                notes.push(n);
            }
            // An earlier attempt that died mid-event recorded the candidates and those that
            // finished: they are not asked or run again.
            let resumed = read_progress(root, &id);
            let (rels, mut progress) = match resumed {
                Some(progress) => {
                    let left: Vec<&str> = progress
                        .candidates
                        .iter()
                        .map(String::as_str)
                        .filter(|r| !progress.finished(r))
                        .collect();
                    tracing::info!(
                        "event {id}: resumed: {} of {} finished before; offered to the rest: {}",
                        progress.results.len(),
                        crate::text::count(progress.candidates.len(), "candidate"),
                        if left.is_empty() { "none".to_owned() } else { left.join(", ") }
                    );
                    (progress.candidates.clone(), progress)
                }
                None => {
                    let Routed { candidates, errors, routing_failed } =
                        candidates(root, &event, &notes, router, cancel).await;
                    if cancel.is_cancelled() {
                        requeue(root, &claim);
                        return None;
                    }
                    if routing_failed && retry_routing(root, &claim, &mut event, &errors, runner.now()) {
                        return None;
                    }
                    let rels: Vec<String> = candidates.iter().map(|n| n.rel.clone()).collect();
                    match rels.as_slice() {
                        [] => tracing::info!("event {id}: no candidate note"),
                        _ => tracing::info!(
                            "event {id}: dispatching to {}: {}",
                            crate::text::count(rels.len(), "candidate"),
                            rels.join(", ")
                        ),
                    }
                    let progress = Progress { candidates: rels.clone(), results: Vec::new(), errors };
                    if !rels.is_empty() {
                        write_progress(root, &id, &progress);
                    }
                    (rels, progress)
                }
            };
            for rel in &rels {
                if progress.finished(rel) {
                    continue;
                }
                let (run_id, status, message) = match notes.iter().find(|n| &n.rel == rel) {
                    Some(note) => {
                        let outcome = runner
                            .run(note, &event, run_context(&event, &note.criteria), cancel.clone())
                            .await;
                        // A run ended by this processor's shutdown did not finish: the event
                        // comes back for it.
                        let shut_down = matches!(outcome, Outcome::Stopped { .. } | Outcome::Skipped(_));
                        if cancel.is_cancelled() && shut_down {
                            requeue(root, &claim);
                            return None;
                        }
                        log_outcome(&note.rel, &outcome, &|id| runner.last_run(id));
                        match outcome {
                            Outcome::Done { run_id, summary } => (Some(run_id), "done", summary),
                            Outcome::Failed { run_id, error } => (Some(run_id), "failed", error),
                            Outcome::Stopped { run_id } => (Some(run_id), "stopped", "stopped".to_owned()),
                            Outcome::Skipped(reason) => (None, "skipped", reason),
                        }
                    }
                    // Routed in an earlier attempt, and no longer takes events (paused,
                    // deleted, no longer valid) by the time the event came back.
                    None => (None, "skipped", "the note no longer takes events".to_owned()),
                };
                match status {
                    "done" => {}
                    "stopped" => progress.errors.push(format!("{rel}: stopped")),
                    "skipped" => progress.errors.push(format!("{rel}: skipped ({message})")),
                    _ => progress.errors.push(format!("{rel}: {message}")),
                }
                progress
                    .results
                    .push(json!({"filePath": rel, "runId": run_id, "status": status, "message": message}));
                // Recorded before the next candidate runs: a crash from here on never runs
                // this one again for this event.
                write_progress(root, &id, &progress);
                if cancel.is_cancelled() {
                    requeue(root, &claim);
                    return None;
                }
            }
            let Progress { results, errors, .. } = progress;
            result.run_ids = results
                .iter()
                .filter_map(|r| r["runId"].as_str().filter(|r| !r.is_empty()).map(str::to_owned))
                .collect();
            tracing::info!(
                "event {id}: processed ok={} errors={}",
                results.iter().filter(|r| r["status"] == "done").count(),
                errors.len()
            );
            if let Ok(Value::Object(m)) = serde_json::to_value(&event) {
                record = m;
            }
            // Only the attempts stay: the event is done, nothing waits for a retry any more.
            record.remove(ROUTING_RETRY_AT);
            record.remove(ROUTING_ERROR);
            record.insert("results".to_owned(), Value::Array(results));
            result.candidate_file_paths = rels;
            result.error = (!errors.is_empty()).then(|| errors.join("; "));
        }
    }
    record.insert("processedAt".to_owned(), json!(timestamp(runner.now())));
    record.insert("candidateFilePaths".to_owned(), json!(result.candidate_file_paths));
    record.insert("runIds".to_owned(), json!(result.run_ids));
    record.insert("error".to_owned(), json!(result.error));
    finish(root, &claim, &Value::Object(record));
    Some(result)
}

/// The live note an event names as its target when it takes no events on its own (no
/// `eventMatchCriteria`, so not among the eligible notes): a target skips routing, and the
/// named live note runs (SPEC 5). Paused or invalid notes are not; `until` is checked when it
/// runs, as for every event run.
fn targeted_note(root: &Path, target: &str) -> Option<EventNote> {
    let rel = crate::workspace::NotePath::parse(root, target)?;
    let path = rel.to_path(root);
    let head = crate::workspace::read_frontmatter(&path).ok()?;
    let live = crate::note::analyze(&head, &crate::note::Options::default()).live?;
    let sources = live.source_names();
    (live.active && !live.has_errors).then(|| EventNote {
        path,
        rel: rel.into_string(),
        objective: live.objective.unwrap_or_default(),
        sources,
        criteria: live.event_match_criteria.unwrap_or_default(),
    })
}

/// What pass 1 found for one event.
pub(super) struct Routed<'n> {
    /// The candidates among the notes offered, in their order.
    pub candidates: Vec<&'n EventNote>,
    pub errors: Vec<String>,
    /// Whether a routing batch failed: its notes have not decided yet.
    pub routing_failed: bool,
}

/// Pass 1: the candidates among `notes`, in their order, and routing errors.
pub(super) async fn candidates<'n>(
    root: &Path,
    event: &Event,
    notes: &'n [EventNote],
    router: &dyn Router,
    cancel: &CancellationToken,
) -> Routed<'n> {
    if let Some(target) = &event.target_file_path {
        let target = normalize_target(root, target);
        let (candidates, errors) = match notes.iter().find(|n| n.rel == target) {
            Some(n) => (vec![n], Vec::new()),
            None => {
                (Vec::new(), vec![format!("targetFilePath `{target}` is not an active, valid live note")])
            }
        };
        return Routed { candidates, errors, routing_failed: false };
    }
    if notes.is_empty() {
        return Routed { candidates: Vec::new(), errors: Vec::new(), routing_failed: false };
    }
    tracing::info!("event {}: routing against {}", event.id, crate::text::count(notes.len(), "live note"));
    let batches = notes.len().div_ceil(BATCH_SIZE);
    let mut picked: HashSet<&str> = HashSet::new();
    let mut errors = Vec::new();
    for (i, batch) in notes.chunks(BATCH_SIZE).enumerate() {
        if cancel.is_cancelled() {
            break;
        }
        match router.route(event, batch, cancel.clone()).await {
            Ok(paths) => {
                for p in paths {
                    let p = normalize_target(root, &p);
                    // Only notes of this batch count: anything else is the model inventing.
                    match batch.iter().find(|n| n.rel == p) {
                        Some(n) => {
                            picked.insert(n.rel.as_str());
                        }
                        None => tracing::debug!("event {}: routing named an unknown note {p:?}", event.id),
                    }
                }
            }
            Err(e) => {
                let e = format!("routing batch {}/{batches} failed: {}", i + 1, one_line(&e, 300));
                tracing::warn!("event {}: {e}", event.id);
                errors.push(e);
            }
        }
    }
    Routed {
        candidates: notes.iter().filter(|n| picked.contains(n.rel.as_str())).collect(),
        routing_failed: !errors.is_empty(),
        errors,
    }
}

// ---------------------------------------------------------------------------------------------
// Routing retries

/// The event file's count of routing attempts that failed.
pub const ROUTING_ATTEMPTS: &str = "routingAttempts";
/// When the event's routing is tried again (RFC 3339).
/// How long a pass keeps asking for a queue lock that is taken: long enough to outlast a
/// lock that only looks taken, short enough that a pass never waits behind another processor.
const QUEUE_LOCK_PATIENCE: Duration = Duration::from_millis(250);

/// The queue lock, asked for again for a moment when taken. A lock file's lock belongs to the
/// open file, and a program this process starts in that instant (a provider, an MCP server)
/// shares the open file until it has started: for that moment the lock looks taken although
/// its holder let go. Giving up at once left the queue waiting for the next wake-up, which
/// may be hours away (a routing retry's time).
async fn acquire_queue(root: &Path) -> Option<QueueLock> {
    let deadline = Instant::now() + QUEUE_LOCK_PATIENCE;
    loop {
        if let Some(lock) = QueueLock::acquire(root) {
            return Some(lock);
        }
        if Instant::now() >= deadline {
            tracing::debug!("events {}: the queue is another processor's", root.display());
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

pub const ROUTING_RETRY_AT: &str = "routingRetryAt";
/// Why its last routing failed.
pub const ROUTING_ERROR: &str = "routingError";
/// Routing attempts in all before the event goes to `done/` with the error: with the waits of
/// [`routing_backoff`] (1, 2, 4, 8, 16, 30, 30 min) about an hour and a half of a model
/// outage, while the events behind it wait.
pub const MAX_ROUTING_ATTEMPTS: u32 = 8;

/// The wait after the `failures`-th routing failure in a row: 1 min doubled each time, at most
/// 30 min.
pub fn routing_backoff(failures: u32) -> chrono::TimeDelta {
    let minutes = 1i64 << failures.saturating_sub(1).min(5);
    chrono::TimeDelta::minutes(minutes.min(30))
}

/// When a pending event's routing is to be tried again, if it waits.
pub fn routing_retry_at(event: &Event) -> Option<DateTime<Utc>> {
    let at = event.extra.get(ROUTING_RETRY_AT)?.as_str()?;
    DateTime::parse_from_rfc3339(at).ok().map(|t| t.with_timezone(&Utc))
}

/// The earliest instant the head of the queue waits for (a routing retry), so that a
/// processor wakes up then without a file event.
pub fn next_routing_retry(root: &Path) -> Option<DateTime<Utc>> {
    let head = pending_events(root).into_iter().next()?;
    read_event_file(&head).ok().as_ref().and_then(routing_retry_at)
}

/// After a routing batch failed: put the event back into `pending/` with its attempts, the
/// error and when to try again, unless it has had its attempts (then `false`: it goes to
/// `done/` with the error). Nothing has run for it yet, so a retry routes every note again.
fn retry_routing(
    root: &Path,
    claim: &Claim,
    event: &mut Event,
    errors: &[String],
    now: DateTime<Utc>,
) -> bool {
    let attempts = event.extra.get(ROUTING_ATTEMPTS).and_then(Value::as_u64).unwrap_or(0);
    let attempts = u32::try_from(attempts).unwrap_or(u32::MAX).saturating_add(1);
    event.extra.insert(ROUTING_ATTEMPTS.to_owned(), json!(attempts));
    if attempts >= MAX_ROUTING_ATTEMPTS {
        tracing::warn!("event {}: routing failed {attempts} times; giving up", event.id);
        return false;
    }
    let at = now + routing_backoff(attempts);
    event.extra.insert(ROUTING_RETRY_AT.to_owned(), json!(timestamp(at)));
    event.extra.insert(ROUTING_ERROR.to_owned(), json!(errors.join("; ")));
    match requeue_with(root, claim, event) {
        Ok(()) => {
            tracing::info!(
                "event {}: routing retries at {} (attempt {attempts} of {MAX_ROUTING_ATTEMPTS} failed)",
                event.id,
                timestamp(at)
            );
            true
        }
        Err(e) => {
            // A retry that cannot be recorded would come back at once, again and again.
            tracing::warn!("event {}: cannot record the routing retry: {e}", event.id);
            false
        }
    }
}

pub(super) fn truncate_chars(s: &str, max: usize) -> String {
    match crate::text::short::prefix_chars(s, max) {
        Some(shown) => format!("{shown}\n… (truncated)"),
        None => s.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// A processor for a long-lived process

/// One workspace's event processor: passes are serialized, so one processor runs per process
/// (the queue lock extends that across processes).
pub struct Processor {
    pub root: PathBuf,
    pub router: Arc<dyn Router>,
    pub runner: Arc<dyn EventRunner>,
    pub notes: NotesFn,
    gate: tokio::sync::Mutex<()>,
    warned_untrusted: AtomicBool,
    /// The queue was said to wait for the folder's host (said once until that changes).
    warned_host: AtomicBool,
}

impl Processor {
    pub fn new(root: &Path, router: Arc<dyn Router>, runner: Arc<dyn EventRunner>, notes: NotesFn) -> Self {
        Processor {
            root: root.to_path_buf(),
            router,
            runner,
            notes,
            gate: tokio::sync::Mutex::new(()),
            warned_untrusted: AtomicBool::new(false),
            warned_host: AtomicBool::new(false),
        }
    }

    /// The processor of an engine's workspace: event runs through the engine, routing as
    /// [`router_for`] decides from its configuration.
    pub fn for_engine(engine: Arc<Engine>, notes: NotesFn) -> Self {
        let router = match engine.config.read() {
            Ok(c) => router_for(&c),
            Err(_) => Arc::new(KeywordRouter),
        };
        let root = engine.root.clone();
        Processor::new(&root, router, Arc::new(EngineRunner::new(engine)), notes)
    }

    /// One pass over the queue (waits for a pass in progress in this process first).
    pub async fn process(&self, cancel: &CancellationToken) -> Vec<Processed> {
        let _gate = self.gate.lock().await;
        if !self.runner.trusted() {
            let waiting = pending_events(&self.root).len();
            if waiting > 0 && !self.warned_untrusted.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "hold {}: {} {} in .livenote/events/pending until the workspace is trusted (`livenote trust`) and scheduling is enabled",
                    self.root.display(),
                    crate::text::count(waiting, "event"),
                    if waiting == 1 { "waits" } else { "wait" }
                );
            }
            return Vec::new();
        }
        self.warned_untrusted.store(false, Ordering::Relaxed);
        if let Some(host) = self.runner.scheduled_on() {
            let waiting = pending_events(&self.root).len();
            if waiting > 0 && !self.warned_host.swap(true, Ordering::Relaxed) {
                tracing::info!(
                    "hold {}: {} in .livenote/events/pending, for {host} to process (`[scheduler] host`)",
                    self.root.display(),
                    crate::text::count(waiting, "event"),
                );
            }
            return Vec::new();
        }
        self.warned_host.store(false, Ordering::Relaxed);
        process_pending(&self.root, &*self.notes, &*self.router, &*self.runner, cancel).await
    }
}

/// Start the background task that runs a pass at once and then whenever the returned
/// `Notify` is notified (file events in `pending/`, trust granted). Notifications that come
/// during a pass coalesce into one more pass. `cancel` ends the task (and stops an event run
/// in progress; its event goes back to `pending/`). Must be called inside a tokio runtime.
pub fn spawn(processor: Arc<Processor>, cancel: CancellationToken) -> Arc<Notify> {
    let wake = Arc::new(Notify::new());
    // The start-up pass: events that arrived while nothing was watching.
    wake.notify_one();
    let w = wake.clone();
    tokio::spawn(async move {
        // The head of the queue waiting for a routing retry wakes the processor then.
        let mut retry: Option<DateTime<Utc>> = None;
        loop {
            let wait = retry.map(|at| {
                let runner = &processor.runner;
                let left = (at - runner.now()).to_std().unwrap_or(Duration::ZERO);
                match runner.poll_interval() {
                    // A clock that jumps: look again as often as it asks.
                    Some(poll) => left.min(poll).max(Duration::from_millis(10)),
                    // At least a second: another process may hold the queue past the retry
                    // time, and looking again at once would spin.
                    None => left.max(Duration::from_secs(1)),
                }
            });
            tokio::select! {
                _ = w.notified() => {}
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(wait.unwrap_or(Duration::ZERO)), if wait.is_some() => {}
            }
            let (p, c) = (processor.clone(), cancel.clone());
            // Each pass in its own task: even a panic cannot end the loop.
            if let Err(e) = tokio::spawn(async move { p.process(&c).await }).await {
                tracing::warn!("events {}: a pass failed: {e}", processor.root.display());
            }
            retry = processor.runner.trusted().then(|| next_routing_retry(&processor.root)).flatten();
        }
    });
    wake
}
