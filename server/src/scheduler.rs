//! The scheduler: one task that sleeps until the earliest instant a live note becomes due,
//! fires what is due, and re-plans when the notes change (file events, document saves) or
//! trust is granted. It re-checks at least every minute against wall-clock jumps and suspend;
//! it never rescans files on a timer. It plans from saved files (through the index); before it
//! fires a note it checks the text the run would edit (an editor's buffer with unsaved changes
//! may say a run already happened), and a run re-checks due-ness under the note's lock, so
//! several livenote processes on one folder fire each cycle once.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::Notify;

use crate::note;
use crate::providers::TriggerKind;
use crate::runs::{Engine, Outcome, RunSpec};
use crate::status;
use crate::workspace::index::Entry;

/// Where the scheduler finds live notes (the workspace index): every note with a `live:`
/// block, as its index entry (shared, so a pass copies no block, and each entry's schedule memo
/// spares the pass the cron searches of notes that are not due yet).
pub trait NoteSource: Send + Sync {
    fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)>;
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
    /// Notes whose scheduled run was skipped (a read-only note, one another user owns, a full
    /// disk): written by the run's task, read by the passes. Without it such a note stays due
    /// (its `lastAttemptAt` could not be written) and was fired and skipped every
    /// [`REFIRE_PAUSE`] for its whole grace window.
    skipped: std::sync::Mutex<HashMap<PathBuf, Skipped>>,
    /// Fired notes waiting for a [`RunSlots`] slot: not fired again meanwhile, and not yet
    /// running (no lock, no registry entry, so a manual run or another process may take them).
    queued: std::sync::Mutex<HashSet<PathBuf>>,
    slots: RunSlots,
    /// The text each of this scheduler's runs left in its note (a hash): until the index hears
    /// of that write (file events lag behind a burst of runs), the note is due in the index
    /// and not as it reads, which is no news to say ("skip … not due as it reads now" followed
    /// 9,631 of the soak's 10,000 runs).
    landed: std::sync::Mutex<HashMap<PathBuf, u64>>,
    firing: Firing,
}

/// What a pass does with a due note. A long-lived process's scheduler runs it and logs how it
/// ended; a one-shot pass (`livenote tick`) also hands each outcome to its caller, which waits
/// for them and exits with what they were, or only says what it would fire (`--dry-run`).
#[derive(Default)]
pub enum Firing {
    #[default]
    Run,
    /// Run, and send each fired note's outcome here (exactly one per fired note).
    Report(tokio::sync::mpsc::UnboundedSender<(PathBuf, Outcome)>),
    /// Fire nothing: the pass lists what it would fire, and nothing is locked or written.
    DryRun,
}

/// The cap on this root's scheduled runs that go on at once (`[scheduler]
/// max_concurrent_runs`, read when a slot is asked for, so a config reload applies to the
/// next run): a run waits for a slot before it takes its note's lock, so a waiting run looks
/// to every process like a run not yet started.
#[derive(Default)]
struct RunSlots {
    busy: std::sync::Mutex<usize>,
    freed: Notify,
}

/// A slot of [`RunSlots`], given back when dropped (the run ended, or its task was dropped).
struct Slot<'a>(&'a RunSlots);

impl RunSlots {
    async fn acquire(&self, limit: &(dyn Fn() -> usize + Sync)) -> Slot<'_> {
        loop {
            // Registered before the check, so a slot freed between the check and the wait
            // still wakes this one.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut busy = self.busy.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if *busy < limit().max(1) {
                    *busy += 1;
                    return Slot(self);
                }
            }
            freed.await;
        }
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut busy = self.0.busy.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *busy = busy.saturating_sub(1);
        drop(busy);
        self.0.freed.notify_waiters();
    }
}

/// How long a skipped note waits when nothing about it changes: a full disk or a permission
/// fixed elsewhere (a parent folder) is then noticed within a minute.
const SKIP_PAUSE: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

/// A note's scheduled run was skipped while the note was in this state.
#[derive(Debug)]
pub struct Skipped {
    /// [`Scheduler::stamp`] of the note when the run was skipped.
    stamp: u64,
    /// When to try again even if the note has not changed.
    until: DateTime<Utc>,
}

/// What the scheduler did in one pass, for logs and tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pass {
    pub fired: Vec<(PathBuf, &'static str)>,
    /// Notes due on disk found not due as they read now (an unsaved buffer), decided this pass.
    pub settled: Vec<PathBuf>,
    pub next: Option<DateTime<Utc>>,
}

/// What the scheduler remembers from one pass to the next.
#[derive(Debug, Default)]
pub struct Memory {
    /// Notes fired within [`REFIRE_PAUSE`].
    recently: HashMap<PathBuf, Instant>,
    /// Notes due on disk but not as they read now: the decision holds while that text does,
    /// until the instant it becomes due. Without it the scheduler fired such a note and the run
    /// skipped it ("no longer due") every [`REFIRE_PAUSE`] for the whole grace window.
    settled: HashMap<PathBuf, Settled>,
    /// Each note's state as the last pass saw it, to log its changes (not every pass); `None`
    /// until the first pass with runs allowed, which records without logging.
    states: Option<HashMap<PathBuf, NoteState>>,
    /// Each note's `lastRunId` as the last pass saw it: a new one that this machine did not
    /// make is another machine's run ([`Scheduler::foreign_run`]).
    run_ids: HashMap<PathBuf, Option<String>>,
    /// Another machine's run was said (once per scheduler: once per folder and process).
    said_foreign: bool,
    /// The missed occurrence said of each note ([`Scheduler::missed`]), said once.
    said_missed: HashMap<PathBuf, DateTime<Utc>>,
}

/// What a log line says of a note's state: [`status::status`] without what the run lines say
/// already (running, failed) or the folder's line (untrusted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoteState {
    Invalid,
    Expired,
    Paused,
    Live,
}

impl NoteState {
    fn of(live: &note::model::Live, now: DateTime<Utc>, zone: &crate::schedule::Zone) -> NoteState {
        match status::status(live, status::RunFacts::default(), now, zone) {
            status::Status::Invalid => NoteState::Invalid,
            status::Status::Expired => NoteState::Expired,
            status::Status::Paused => NoteState::Paused,
            _ => NoteState::Live,
        }
    }

    /// The line for a note that changed into this state (`was`: `None` for a note new since the
    /// last pass, which says nothing when it is live: its runs will).
    fn log(self, rel: &str, was: Option<NoteState>) {
        match (self, was) {
            (NoteState::Invalid, _) => tracing::warn!(
                "invalid {rel}: its live block has errors (`livenote check` shows them); it does not run until they are fixed"
            ),
            (NoteState::Expired, _) => {
                tracing::info!("expired {rel}: `until` has passed; it no longer runs on its own")
            }
            (NoteState::Paused, _) => tracing::info!("paused {rel}: `active: false`; it runs only by hand"),
            (NoteState::Live, Some(_)) => tracing::info!("live {rel}: it runs on its own again"),
            (NoteState::Live, None) => {}
        }
    }
}

#[derive(Debug)]
struct Settled {
    /// A hash of the text the decision was taken on.
    text: u64,
    /// When that text becomes due (its next occurrence, the end of its backoff).
    until: Option<DateTime<Utc>>,
}

impl Settled {
    fn holds(&self, text: u64, now: DateTime<Utc>) -> bool {
        self.text == text && self.until.is_none_or(|u| now < u)
    }
}

fn text_hash(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl Scheduler {
    pub fn new(engine: Arc<Engine>, source: Arc<dyn NoteSource>, wake: Arc<Notify>) -> Self {
        Scheduler {
            engine,
            source,
            wake,
            skipped: Default::default(),
            queued: Default::default(),
            slots: RunSlots::default(),
            landed: Default::default(),
            firing: Firing::Run,
        }
    }

    /// A scheduler for one pass ([`Scheduler::pass`]) by a caller that does not stay (`livenote
    /// tick`): the same decision of what is due, its runs' outcomes reported or, dry, not run.
    pub fn one_shot(engine: Arc<Engine>, source: Arc<dyn NoteSource>, firing: Firing) -> Self {
        Scheduler { firing, ..Scheduler::new(engine, source, Arc::new(Notify::new())) }
    }

    /// Run until the process ends.
    pub async fn run(self: Arc<Self>) {
        let mut memory = Memory::default();
        loop {
            let pass = self.pass(&mut memory);
            let now = self.engine.clock.now();
            let mut wait = pass
                .next
                .map(|n| (n - now).to_std().unwrap_or(Duration::ZERO))
                .unwrap_or(MAX_SLEEP)
                .min(MAX_SLEEP);
            if let Some(poll) = self.engine.clock.poll_interval() {
                wait = wait.min(poll);
            }
            if !memory.recently.is_empty() {
                wait = wait.min(REFIRE_PAUSE);
            }
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.wake.notified() => {}
            }
        }
    }

    /// Fire every note due now; return when to look next.
    pub fn pass(self: &Arc<Self>, memory: &mut Memory) -> Pass {
        let mut pass = Pass::default();
        memory.recently.retain(|_, at| at.elapsed() < REFIRE_PAUSE);
        if !self.engine.unattended_runs() {
            // The folder's own line says nothing runs; states are recorded afresh after it.
            memory.states = None;
            return pass;
        }
        let now = self.engine.clock.now();
        let notes = self.source.live_notes();
        // `[scheduler] host` names another machine: notes here run only by failover.
        let elsewhere = self.engine.scheduled_on();
        let failover_after = elsewhere.as_ref().and_then(|_| self.engine.failover_after());
        // With a host named (here or elsewhere), other machines' runs are by hand or failover:
        // nothing to warn about.
        let hosted = self.engine.config.read().is_ok_and(|c| c.scheduler.host.is_some());
        let mut before = memory.states.take();
        let mut states = HashMap::with_capacity(notes.len());
        for (path, entry) in notes {
            let Some(on_disk) = &entry.live else { continue };
            // A run of this machine into an editor's buffer counts as the file's own stamps do.
            let attempted = self.engine.attempted(&path, on_disk);
            let live = attempted.as_ref();
            let state = NoteState::of(live, now, &self.engine.zone);
            if let Some(before) = &mut before {
                let was = before.remove(&path);
                if was != Some(state) {
                    state.log(&self.engine.rel(&path), was);
                }
            }
            states.insert(path.clone(), state);
            if !hosted && !memory.said_foreign {
                self.foreign_run(&path, live, memory);
            }
            if live.has_errors
                || !live.active
                || self.engine.registry.is_running(&path)
                || self.is_queued(&path)
                || note::conflict::is_conflict_copy(&path)
            {
                continue;
            }
            if elsewhere.is_some() {
                if let Some(after) = failover_after {
                    self.failover(path, live, after, memory, &mut pass);
                }
                continue;
            }
            let upcoming = match &attempted {
                std::borrow::Cow::Borrowed(l) => entry.schedule.upcoming(l, now, &self.engine.zone),
                // The record is not the file the memo was made from.
                std::borrow::Cow::Owned(l) => status::Upcoming::at(l, now, &self.engine.zone),
            };
            match upcoming.due {
                // Inside a folder with its own, untrusted `.livenote.toml`: the root's trust
                // does not extend there (`livenote list` shows it untrusted).
                Some(_) if self.engine.untrusted_nested_folder(&path).is_some() => {
                    tracing::debug!(
                        "not firing {}: inside an untrusted folder with its own config",
                        path.display()
                    );
                }
                Some(trigger) if !memory.recently.contains_key(&path) => {
                    if let Some(until) = self.still_skipped(&path, now) {
                        pass.next = Some(pass.next.map_or(until, |p| p.min(until)));
                        continue;
                    }
                    if !self.due_as_it_reads(&path, now, memory, &mut pass) {
                        continue;
                    }
                    self.fire(path, TriggerKind::from(trigger), memory, &mut pass);
                }
                Some(_) => {}
                None => {
                    memory.settled.remove(&path);
                    self.landed().remove(&path);
                    if let Some(n) = upcoming.next_due.filter(|n| *n > now) {
                        pass.next = Some(pass.next.map_or(n, |p| p.min(n)));
                    }
                    if let Some(missed) = upcoming.missed {
                        self.missed(path, missed, upcoming.next_due, memory, &mut pass);
                    }
                }
            }
        }
        memory.states = Some(states);
        pass
    }

    /// Fire one note: counted as fired, queued for a run slot, run, its outcome logged.
    fn fire(self: &Arc<Self>, path: PathBuf, kind: TriggerKind, memory: &mut Memory, pass: &mut Pass) {
        let rel = self.engine.rel(&path);
        // The caller says what a dry run would fire.
        if matches!(self.firing, Firing::DryRun) {
            pass.fired.push((path, kind.as_str()));
            return;
        }
        tracing::info!("fire {rel} ({})", kind.as_str());
        memory.recently.insert(path.clone(), Instant::now());
        pass.fired.push((path.clone(), kind.as_str()));
        self.set_queued(&path, true);
        let me = self.clone();
        tokio::spawn(async move {
            let limit = || me.max_concurrent_runs();
            let slot = me.slots.acquire(&limit).await;
            // Registered before it leaves the queue, so that it is never seen as
            // neither waiting nor running (`is_idle`).
            let token = me.engine.registry.start(&path);
            me.set_queued(&path, false);
            // A manual run that started while this one waited has the note.
            let Some(token) = token else {
                tracing::debug!("not running {rel}: a run of it started while it waited");
                me.report(&path, Outcome::Skipped("a run of it started while it waited".to_owned()));
                me.wake.notify_one();
                return;
            };
            let spec = RunSpec { path: path.clone(), trigger: kind, context: None, event: None };
            let outcome = me.engine.run_registered(spec, token, &mut |_| {}).await;
            drop(slot);
            // Only a run that reached the file: one left in an unsaved buffer
            // keeps the file due, which the index will not stop saying.
            if !matches!(outcome, Outcome::Skipped(_))
                && let Ok(text) = me.engine.io.read(&path)
                && std::fs::read_to_string(&path).is_ok_and(|disk| disk == text)
            {
                me.landed().insert(path.clone(), text_hash(&text));
            }
            match &outcome {
                // A one-shot pass does not try again: the next one looks afresh.
                Outcome::Skipped(reason) if matches!(me.firing, Firing::Report(_)) => {
                    tracing::info!("skip {rel} ({reason})");
                }
                Outcome::Skipped(reason) => {
                    tracing::info!(
                        "skip {rel} ({reason}; not tried again until the note changes, or for a minute)"
                    );
                    me.remember_skip(&path);
                }
                Outcome::Failed { .. } | Outcome::Stopped { .. } => {
                    let retry = me.retry_text(&path);
                    log_outcome_retrying(&rel, &outcome, &|id| me.engine.last_run(id), Some(&retry));
                }
                Outcome::Done { .. } => log_outcome(&rel, &outcome, &|id| me.engine.last_run(id)),
            }
            me.report(&path, outcome);
            me.wake.notify_one();
        });
    }

    /// Without `[scheduler] host`: a `lastRunId` new since the last pass that this machine did
    /// not make means another machine runs the folder too (a synced folder open on two
    /// devices fires every note twice). Said once, in the log and to the editor.
    fn foreign_run(&self, path: &Path, live: &note::model::Live, memory: &mut Memory) {
        // Compared first: the passes of a large folder look at no file for a note whose id
        // did not change.
        match memory.run_ids.get(path) {
            Some(before) if *before == live.last_run_id => return,
            Some(_) => {}
            None => {
                memory.run_ids.insert(path.to_path_buf(), live.last_run_id.clone());
                return;
            }
        }
        // Its own run in progress writes the id before its transcript: left as it was, and
        // looked at again once the run ends.
        if self.engine.registry.is_running(path) || self.engine.store.is_locked(&self.engine.rel(path)) {
            return;
        }
        memory.run_ids.insert(path.to_path_buf(), live.last_run_id.clone());
        let Some(id) = &live.last_run_id else { return };
        if self.engine.made_here(id) {
            return;
        }
        memory.said_foreign = true;
        let rel = self.engine.rel(path);
        let attempt = live.last_attempt_at.map(crate::runs::timestamp).unwrap_or_else(|| "?".to_owned());
        let message = format!(
            "another machine runs {}: {rel} got run {id} (at {attempt}) that this machine ({}) did not make, so notes may run twice; name the one machine that runs them with `[scheduler] host = \"NAME\"` in .livenote.toml",
            self.engine.root.display(),
            self.engine.machine()
        );
        tracing::warn!("{message}");
        if let Some(o) = self.engine.observer.read().ok().and_then(|o| o.clone()) {
            o.notice(&message);
        }
    }

    /// A note whose latest occurrence passed without a run ([`status::missed`]: the machine
    /// asleep or off, nothing running). Within the catch-up ([`Engine::missed_within`]: `tick
    /// --catch-up`, `[scheduler] catch_up`) it is fired once, late (a failed catch-up is retried
    /// by the usual rule, after backoff); otherwise it is said once per occurrence, as the
    /// note's status names it ("missed 08:00"), and not replayed (SPEC 3).
    fn missed(
        self: &Arc<Self>,
        path: PathBuf,
        missed: crate::schedule::Missed,
        next: Option<DateTime<Utc>>,
        memory: &mut Memory,
        pass: &mut Pass,
    ) {
        let now = self.engine.clock.now();
        let zone = &self.engine.zone;
        let catch_up = self.engine.catch_up();
        if catch_up.is_none_or(|within| now - missed.until > within) {
            if memory.said_missed.get(&path) == Some(&missed.at) {
                return;
            }
            let rel = self.engine.rel(&path);
            memory.said_missed.insert(path, missed.at);
            let at = crate::ide::text::at_local(missed.at, now, zone);
            let next = next.map(|n| format!("; next at {}", crate::ide::text::at_local(n, now, zone)));
            let why = match catch_up {
                None => " (`[scheduler] catch_up` runs a missed occurrence late)".to_owned(),
                Some(within) => format!(
                    ", longer ago than the catch-up ({})",
                    crate::config::format_duration(within.to_std().unwrap_or_default())
                ),
            };
            tracing::info!(
                "missed {rel}: its occurrence at {at} passed while nothing here ran it (the machine asleep or off, no livenote running){}{why}",
                next.unwrap_or_default()
            );
            return;
        }
        if memory.recently.contains_key(&path)
            || self.engine.untrusted_nested_folder(&path).is_some()
            || self.still_skipped(&path, now).is_some()
        {
            return;
        }
        // The text the run would edit: an unsaved buffer or another machine may have served it.
        let served = self.engine.io.read(&path).ok().is_none_or(|text| {
            let analysis = note::analyze(&text, &self.engine.schedule_options());
            analysis
                .live
                .as_ref()
                .is_none_or(|l| self.engine.missed_within(&self.engine.attempted(&path, l), now).is_none())
        });
        if served {
            return;
        }
        let how = if self.engine.catch_up_flag.is_some() { "--catch-up" } else { "[scheduler] catch_up" };
        tracing::info!(
            "catch up {}: its occurrence at {} was not run (within {how})",
            self.engine.rel(&path),
            crate::runs::timestamp(missed.at)
        );
        memory.said_missed.remove(&path);
        self.fire(path, TriggerKind::from(missed.trigger), memory, pass);
    }

    /// A note of a folder whose host is another machine: fired only as a failover (it waited
    /// `after`, the folder's `failover_after`, with no attempt from any machine), else left to
    /// the host; the pass wakes when the wait would end.
    fn failover(
        self: &Arc<Self>,
        path: PathBuf,
        live: &note::model::Live,
        after: chrono::TimeDelta,
        memory: &mut Memory,
        pass: &mut Pass,
    ) {
        let now = self.engine.clock.now();
        let Some(since) = status::failover_due(live, chrono::TimeDelta::zero(), now, &self.engine.zone)
        else {
            return;
        };
        let owed = since + after;
        if owed > now {
            pass.next = Some(pass.next.map_or(owed, |p| p.min(owed)));
            return;
        }
        if memory.recently.contains_key(&path) || self.engine.untrusted_nested_folder(&path).is_some() {
            return;
        }
        if let Some(until) = self.still_skipped(&path, now) {
            pass.next = Some(pass.next.map_or(until, |p| p.min(until)));
            return;
        }
        // The text the run would edit, as for any fire: an unsaved buffer may have run it.
        let served = self.engine.io.read(&path).ok().is_none_or(|text| {
            let analysis = note::analyze(&text, &self.engine.schedule_options());
            analysis.live.as_ref().is_none_or(|l| {
                status::failover_due(&self.engine.attempted(&path, l), after, now, &self.engine.zone)
                    .is_none()
            })
        });
        if served {
            return;
        }
        let kind = if live.cron.is_some() { TriggerKind::Cron } else { TriggerKind::Window };
        self.fire(path, kind, memory, pass);
    }

    /// Hand a fired note's outcome to a one-shot caller ([`Firing::Report`]).
    fn report(&self, path: &Path, outcome: Outcome) {
        if let Firing::Report(tx) = &self.firing {
            // The caller gone (it was stopped) has nothing left to tell.
            let _ = tx.send((path.to_path_buf(), outcome));
        }
    }

    fn landed(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, u64>> {
        self.landed.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn max_concurrent_runs(&self) -> usize {
        self.engine
            .config
            .read()
            .map(|c| c.scheduler.max_concurrent_runs)
            .unwrap_or(crate::config::DEFAULT_MAX_CONCURRENT_RUNS)
    }

    /// Whether nothing this scheduler fired is still waiting for a slot or running: a run
    /// queued for a slot is not yet in the registry, so the registry alone says "idle" too soon.
    pub fn is_idle(&self) -> bool {
        let queued = self.queued.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_empty();
        queued && self.engine.registry.running().is_empty()
    }

    fn is_queued(&self, path: &Path) -> bool {
        self.queued.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(path)
    }

    fn set_queued(&self, path: &Path, queued: bool) {
        let mut set = self.queued.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if queued {
            set.insert(path.to_path_buf());
        } else {
            set.remove(path);
        }
    }

    /// When a note whose run just failed runs again, as its log line says it: "retry at 14:20"
    /// in local time, from the schedule every surface shows ([`status::schedule_view`]: the
    /// backoff, the next occurrence, `until`), as the note reads now.
    fn retry_text(&self, path: &Path) -> String {
        let now = self.engine.clock.now();
        let zone = &self.engine.zone;
        let next = self.engine.io.read(path).ok().and_then(|text| {
            let analysis = note::analyze(&text, &self.engine.schedule_options());
            analysis.live.as_ref().and_then(|live| status::schedule_view(live, now, zone).next_due)
        });
        match next {
            Some(t) => format!("retry at {}", crate::ide::text::at_local(t, now, zone)),
            None => "not retried on its own".to_owned(),
        }
    }

    /// What the scheduler compares to tell whether a skipped note changed: the text its run
    /// would edit (the buffer when open) and the file's metadata (a `chmod` changes no byte).
    fn stamp(&self, path: &Path) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.engine.io.read(path).ok().hash(&mut h);
        if let Ok(meta) = std::fs::metadata(path) {
            crate::platform::hash_metadata(&meta, &mut h);
        }
        h.finish()
    }

    fn remember_skip(&self, path: &Path) {
        let skip = Skipped { stamp: self.stamp(path), until: self.engine.clock.now() + SKIP_PAUSE };
        self.skipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(path.to_path_buf(), skip);
    }

    /// Until when a note whose run was skipped waits, if it has not changed since.
    fn still_skipped(&self, path: &Path, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let mut skipped = self.skipped.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let until = skipped.get(path)?.until;
        if now < until && skipped.get(path).is_some_and(|s| s.stamp == self.stamp(path)) {
            return Some(until);
        }
        skipped.remove(path);
        None
    }

    /// Whether a note due on disk is due in the text its run would edit (the editor's buffer
    /// when it is open there). When it is not, the run would only skip it, so the scheduler
    /// says so once and looks again when that text changes or becomes due.
    fn due_as_it_reads(&self, path: &Path, now: DateTime<Utc>, memory: &mut Memory, pass: &mut Pass) -> bool {
        let text = match self.engine.io.read(path) {
            Ok(t) => t,
            Err(e) => {
                tracing::debug!("not firing {}: {e}", path.display());
                return false;
            }
        };
        let hash = text_hash(&text);
        if let Some(settled) = memory.settled.get(path)
            && settled.holds(hash, now)
        {
            if let Some(u) = settled.until {
                pass.next = Some(pass.next.map_or(u, |p| p.min(u)));
            }
            return false;
        }
        let ours = self.landed().remove(path) == Some(hash);
        let analysis = note::analyze(&text, &self.engine.schedule_options());
        let view = analysis.live.as_ref().map(|live| {
            // A run of this machine into a buffer counts (the run store's record), and a run
            // the editor's undo took back out of the text still did its occurrence.
            let attempted = self.engine.attempted(path, live);
            let settled = self.engine.settle(&attempted);
            status::schedule_view(settled.as_ref().unwrap_or(&attempted), now, &self.engine.zone)
        });
        if view.as_ref().is_some_and(|v| v.due().is_some()) {
            memory.settled.remove(path);
            return true;
        }
        let until = view.and_then(|v| v.next_due).filter(|u| *u > now);
        memory.settled.insert(path.to_path_buf(), Settled { text: hash, until });
        if ours {
            tracing::debug!("not firing {}: its run just landed, not yet in the index", path.display());
        } else {
            tracing::info!(
                "skip {} (not due as it reads now, e.g. with unsaved changes; not tried again until they change)",
                self.engine.rel(path)
            );
            pass.settled.push(path.to_path_buf());
        }
        if let Some(u) = until {
            pass.next = Some(pass.next.map_or(u, |p| p.min(u)));
        }
        false
    }
}

/// One log line per outcome, the note path second; a run that counted what it did (a model
/// run) says so at the end: "done notes/a.md: Updated (3 model calls, 12,345 tokens, ...)".
/// `last_run` looks a run's totals up (`Engine::last_run`).
pub fn log_outcome(rel: &str, outcome: &Outcome, last_run: &dyn Fn(&str) -> Option<crate::cost::LastRun>) {
    log_outcome_retrying(rel, outcome, last_run, None);
}

/// [`log_outcome`], a failure saying when the note is tried again ("retry at 14:20"), so a
/// user reading the log knows what happens next without looking at the note.
pub fn log_outcome_retrying(
    rel: &str,
    outcome: &Outcome,
    last_run: &dyn Fn(&str) -> Option<crate::cost::LastRun>,
    retry: Option<&str>,
) {
    let cost = |id: &str| last_run(id).map(|r| format!(" ({})", r.totals.brief())).unwrap_or_default();
    let retry = retry.map(|r| format!(" ({r})")).unwrap_or_default();
    match outcome {
        Outcome::Done { summary, run_id } => tracing::info!("done {rel}: {summary}{}", cost(run_id)),
        Outcome::Failed { error, run_id } => tracing::warn!("failed {rel}: {error}{}{retry}", cost(run_id)),
        Outcome::Stopped { .. } => tracing::warn!("failed {rel}: stopped{retry}"),
        Outcome::Skipped(reason) => tracing::info!("skip {rel} ({reason})"),
    }
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
