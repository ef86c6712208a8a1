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
mod tests {
    use std::path::Path;
    use std::sync::RwLock;

    use chrono::{DateTime, TimeDelta, Utc};

    use super::*;
    use crate::config::Config;
    use crate::runs::DiskIo;
    use crate::schedule::{ManualClock, Zone};
    use crate::workspace::index::Index;
    use crate::workspace::trust::TrustStore;

    struct IndexSource(RwLock<Index>);

    impl NoteSource for IndexSource {
        fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)> {
            let mut idx = self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner);
            // Tests re-read every note each pass (the real scheduler hears file events).
            let paths: Vec<PathBuf> = idx.live_notes().map(|(p, _, _)| p.clone()).collect();
            for p in &paths {
                idx.refresh(p);
            }
            idx.live_notes().map(|(p, e, _)| (p.clone(), e.clone())).collect()
        }
    }

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_default()
    }

    struct Fixture {
        dir: tempfile::TempDir,
        clock: ManualClock,
        scheduler: Arc<Scheduler>,
        trust: TrustStore,
    }

    fn fixture(command: &str, note: &str) -> Fixture {
        fixture_with(command, note, Arc::new(DiskIo))
    }

    fn fixture_with(command: &str, note: &str, io: Arc<dyn crate::runs::NoteIo>) -> Fixture {
        fixture_in(command, "timeout = \"2s\"\n", &[("n.md", note)], io)
    }

    /// `extra`: more lines of the provider's table, then any other tables.
    fn fixture_in(
        command: &str,
        extra: &str,
        notes: &[(&str, &str)],
        io: Arc<dyn crate::runs::NoteIo>,
    ) -> Fixture {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let config = format!(
            "[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", {command:?}]\n{extra}"
        );
        std::fs::write(root.join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
        for (name, text) in notes {
            std::fs::write(root.join(name), text).unwrap_or_else(|e| panic!("{e}"));
        }
        let clock = ManualClock::new(t("2026-11-23T09:00:30Z"));
        let trust = TrustStore::in_dir(&root.join(".data"));
        let (config, problems) = Config::load_with(Some(&root), None, &|_: &str| None);
        assert!(problems.is_empty(), "{problems:?}");
        let engine = Arc::new(Engine::new(
            &root,
            Arc::new(clock.clone()),
            Zone::Named(chrono_tz::UTC),
            io,
            config,
            Some(trust.clone()),
        ));
        let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
        let scheduler = Arc::new(Scheduler::new(
            engine,
            Arc::new(IndexSource(RwLock::new(index))),
            Arc::new(Notify::new()),
        ));
        Fixture { dir, clock, scheduler, trust }
    }

    const NOTE: &str = "---\nlive:\n  objective: o\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# N\n";

    fn note_text(dir: &Path) -> String {
        let root = dir.canonicalize().unwrap_or_else(|e| panic!("{e}"));
        std::fs::read_to_string(root.join("n.md")).unwrap_or_default()
    }

    async fn settle(f: &Fixture) {
        for _ in 0..300 {
            if f.scheduler.is_idle() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the run did not finish");
    }

    /// A burst of due notes (the soak: 1,000 in one minute) runs at most
    /// `max_concurrent_runs` at a time; the others wait their turn, unlocked and not shown
    /// running, and all run in the end.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_of_due_notes_runs_at_most_max_concurrent_runs_at_once() {
        // Each run marks itself in flight, notes how many are, and blocks until released.
        let command = "cd \"$LIVENOTE_WORKSPACE\" && mkdir -p .probe && : > .probe/$$ && ls .probe | wc -l >> .probe-seen \
                       && while [ ! -e release ]; do sleep 0.02; done; rm -f .probe/$$; echo ran";
        let names: Vec<String> = (0..6).map(|k| format!("n{k}.md")).collect();
        let notes: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), NOTE)).collect();
        let extra = "timeout = \"60s\"\n[scheduler]\nmax_concurrent_runs = 2\n";
        let f = fixture_in(command, extra, &notes, Arc::new(DiskIo));
        let root = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        f.trust.trust(&root).unwrap_or_else(|e| panic!("{e}"));
        let mut memory = Memory::default();
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 6, "every due note is fired");
        let in_flight = || std::fs::read_dir(root.join(".probe")).map(|d| d.count()).unwrap_or(0);
        let mut most = 0;
        // Until two are in flight, then long enough for the other four to have started too.
        for _ in 0..300 {
            most = most.max(in_flight());
            if most >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            most = most.max(in_flight());
            assert!(f.scheduler.engine.registry.running().len() <= 2, "a waiting run shows as running");
            // A later pass does not fire the waiting notes again.
            memory.recently.clear();
            assert!(f.scheduler.pass(&mut memory).fired.is_empty());
        }
        assert_eq!(most, 2, "runs in flight at once");
        std::fs::write(root.join("release"), "").unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..1000 {
            if names
                .iter()
                .all(|n| std::fs::read_to_string(root.join(n)).unwrap_or_default().contains("\nran\n"))
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for n in &names {
            let text = std::fs::read_to_string(root.join(n)).unwrap_or_default();
            assert!(text.contains("\nran\n"), "{n} did not run: {text}");
        }
        let seen = std::fs::read_to_string(root.join(".probe-seen")).unwrap_or_default();
        let seen: Vec<usize> = seen.split_whitespace().filter_map(|n| n.parse().ok()).collect();
        assert_eq!(seen.len(), 6, "{seen:?}");
        assert!(seen.iter().all(|n| *n <= 2), "in flight as each run saw it: {seen:?}");
    }

    /// The index as it was: file events that lag behind a burst of runs.
    struct Frozen(Vec<(PathBuf, Arc<Entry>)>);

    impl NoteSource for Frozen {
        fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)> {
            self.0.clone()
        }
    }

    /// A pass that comes after a run of its own landed, before the index heard of the write,
    /// neither fires the note again nor says it skipped it (the soak logged "skip … not due as
    /// it reads now" after 9,631 of 10,000 runs); a text that is not the run's still is said.
    #[tokio::test]
    async fn a_run_that_just_landed_is_not_skipped_while_the_index_lags() {
        let f = fixture("echo hi", NOTE);
        let root = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        f.trust.trust(&root).unwrap_or_else(|e| panic!("{e}"));
        let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
        let frozen = Frozen(index.live_notes().map(|(p, e, _)| (p.clone(), e.clone())).collect());
        let s =
            Arc::new(Scheduler::new(f.scheduler.engine.clone(), Arc::new(frozen), Arc::new(Notify::new())));
        let mut memory = Memory::default();
        assert_eq!(s.pass(&mut memory).fired.len(), 1);
        for _ in 0..300 {
            if s.is_idle() && note_text(f.dir.path()).contains("hi") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(note_text(f.dir.path()).contains("lastRunSummary: \"Updated: hi\""));
        // Past the pause after a fire: the stale index says due, the note says done.
        memory.recently.clear();
        let pass = s.pass(&mut memory);
        assert!(pass.fired.is_empty(), "{pass:?}");
        assert!(pass.settled.is_empty(), "its own run was taken for unsaved changes: {pass:?}");
        assert_eq!(pass.next, Some(t("2026-11-23T10:00:00.001Z")));
        // Someone else's text (an edit the index has not seen either) is still said.
        let text = note_text(f.dir.path()).replace("# N", "# M");
        std::fs::write(root.join("n.md"), text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.pass(&mut memory).settled.len(), 1);
    }

    /// `[scheduler] host` naming another machine: the due note does not fire here; once it has
    /// waited `failover_after` with no attempt from any machine it is taken over, once, past
    /// the cron's grace, and its transcript says so. The run re-checks the rule under the lock.
    #[tokio::test]
    async fn a_folder_hosted_elsewhere_fires_only_by_failover() {
        let extra =
            "timeout = \"2s\"\n[scheduler]\nhost = \"elsewhere-of-issue-23\"\nfailover_after = \"10m\"\n";
        let f = fixture_in("echo hi", extra, &[("n.md", NOTE)], Arc::new(DiskIo));
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let path = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}")).join("n.md");
        let mut memory = Memory::default();
        let pass = f.scheduler.pass(&mut memory);
        assert!(pass.fired.is_empty(), "{pass:?}");
        assert_eq!(pass.next, Some(t("2026-11-23T09:10:00Z")), "wakes when the wait ends");
        // A scheduled run asked for directly (as a pass elsewhere would) is refused too.
        let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Cron, context: None, event: None };
        let refused = f.scheduler.engine.run(spec, &mut |_| {}).await;
        assert_eq!(refused, Outcome::Skipped("scheduled on elsewhere-of-issue-23".to_owned()));
        f.clock.set(t("2026-11-23T09:10:00Z"));
        let pass = f.scheduler.pass(&mut memory);
        assert_eq!(pass.fired, vec![(path.clone(), "cron")]);
        settle(&f).await;
        let text = note_text(f.dir.path());
        assert!(text.contains("lastRunAt: \"2026-11-23T09:10:00.000Z\""), "{text}");
        let transcripts = f.scheduler.engine.store.transcripts();
        let transcript = std::fs::read_to_string(&transcripts[0]).unwrap_or_default();
        assert!(transcript.contains("\"kind\":\"failover\""), "{transcript}");
        assert!(transcript.contains("in place of elsewhere-of-issue-23"), "{transcript}");
        // Served: not again this occurrence, however long it waits.
        memory.recently.clear();
        f.clock.set(t("2026-11-23T09:50:00Z"));
        assert!(f.scheduler.pass(&mut memory).fired.is_empty());
        // Without `failover_after`, never.
        let g = fixture_in(
            "echo hi",
            "timeout = \"2s\"\n[scheduler]\nhost = \"elsewhere-of-issue-23\"\n",
            &[("n.md", NOTE)],
            Arc::new(DiskIo),
        );
        g.trust.trust(g.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        g.clock.set(t("2026-11-23T11:59:00Z"));
        let pass = g.scheduler.pass(&mut Memory::default());
        assert_eq!((pass.fired.len(), pass.next), (0, None));
    }

    /// Without a host, a `lastRunId` this machine did not make is said once; with a host named
    /// (this machine here), another machine's run is a run by hand or a failover: not said.
    #[tokio::test]
    async fn another_machines_run_is_noticed_only_without_a_host() {
        let ran = NOTE.replace("---\n# N", "  lastRunAt: \"2026-11-23T09:00:10.000Z\"\n---\n# N");
        let foreign = |id: &str| ran.replace("---\n# N", &format!("  lastRunId: {id}\n---\n# N"));
        for hosted in [false, true] {
            let f = fixture("echo hi", &ran);
            f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
            if hosted {
                let me = f.scheduler.engine.machine();
                if let Ok(mut c) = f.scheduler.engine.config.write() {
                    c.scheduler.host = Some(me);
                }
            }
            let mut memory = Memory::default();
            assert!(f.scheduler.pass(&mut memory).fired.is_empty());
            let note = f.dir.path().join("n.md");
            std::fs::write(&note, foreign("01KAQ8XW0000000000000000AA")).unwrap_or_else(|e| panic!("{e}"));
            f.scheduler.pass(&mut memory);
            assert_eq!(memory.said_foreign, !hosted, "hosted: {hosted}");
        }
        // A run of this machine is its own.
        let f = fixture("echo hi", NOTE);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let mut memory = Memory::default();
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&f).await;
        memory.recently.clear();
        f.scheduler.pass(&mut memory);
        assert!(note_text(f.dir.path()).contains("lastRunId"));
        assert!(!memory.said_foreign);
    }

    /// A sync tool's conflict copy of a due note is never fired; the note itself is.
    #[tokio::test]
    async fn a_sync_conflict_copy_never_fires() {
        let copy = "n.sync-conflict-20261123-090000-ABC1234.md";
        let f =
            fixture_in("echo hi", "timeout = \"2s\"\n", &[("n.md", NOTE), (copy, NOTE)], Arc::new(DiskIo));
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let pass = f.scheduler.pass(&mut Memory::default());
        let fired: Vec<String> = pass
            .fired
            .iter()
            .filter_map(|(p, _)| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        assert_eq!(fired, vec!["n.md".to_owned()]);
        settle(&f).await;
    }

    /// A one-shot pass (`livenote tick`) decides as the scheduler does; a dry one fires nothing,
    /// a reporting one sends each fired note's outcome once, and the channel closes when the
    /// runs are over (the caller's wait ends there).
    #[tokio::test]
    async fn a_one_shot_pass_reports_each_run_once_and_a_dry_one_runs_nothing() {
        let f = fixture("echo hi", NOTE);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let root = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let source = || {
            let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
            Arc::new(IndexSource(RwLock::new(index)))
        };
        let engine = f.scheduler.engine.clone();
        let dry = Arc::new(Scheduler::one_shot(engine.clone(), source(), Firing::DryRun));
        let pass = dry.pass(&mut Memory::default());
        assert_eq!(pass.fired, vec![(root.join("n.md"), "cron")]);
        assert!(dry.is_idle());
        assert_eq!(note_text(f.dir.path()), NOTE, "a dry pass wrote");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let once = Arc::new(Scheduler::one_shot(engine.clone(), source(), Firing::Report(tx)));
        assert_eq!(once.pass(&mut Memory::default()).fired.len(), 1);
        drop(once);
        let mut outcomes = Vec::new();
        while let Some(o) = rx.recv().await {
            outcomes.push(o);
        }
        assert!(
            matches!(outcomes.as_slice(), [(p, Outcome::Done { .. })] if *p == root.join("n.md")),
            "{outcomes:?}"
        );
        // Run: a second one-shot pass finds nothing due.
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let again = Arc::new(Scheduler::one_shot(engine, source(), Firing::Report(tx)));
        assert!(again.pass(&mut Memory::default()).fired.is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// One-shot passes (`livenote tick` from a timer that comes late, early, twice at one
        /// instant or hours apart) compose as the rule for an hourly note says, written plainly
        /// here: it runs at the first pass (it never ran), then at a pass that lands within 2
        /// minutes (inclusive) after the latest hour strictly before it, if it has not run since
        /// that hour; never twice for one hour.
        #[test]
        fn one_shot_passes_at_any_instants_run_as_the_rule_says(
            // Seconds between passes: as many within minutes (around an hour's grace) as hours apart.
            steps in proptest::collection::vec(proptest::prop_oneof![0i64..=300, 0i64..=10_800], 1..12),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap_or_else(|e| panic!("{e}"));
            let (ran, expected) = runtime.block_on(async {
                let f = fixture("echo hi", NOTE);
                f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
                let root = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
                let mut now = t("2026-11-23T09:00:30Z");
                let mut last: Option<DateTime<Utc>> = None;
                let (mut ran, mut expected) = (Vec::new(), Vec::new());
                for step in steps {
                    now += TimeDelta::seconds(step);
                    f.clock.set(now);
                    let hour = now.timestamp().div_euclid(3600) * 3600;
                    let hour = if hour == now.timestamp() { hour - 3600 } else { hour };
                    let p = DateTime::from_timestamp(hour, 0).unwrap_or_default();
                    if last.is_none_or(|l| l < p && now - p <= TimeDelta::minutes(2)) {
                        expected.push(now);
                        last = Some(now);
                    }
                    let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
                    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                    let source = Arc::new(IndexSource(RwLock::new(index)));
                    let once = Arc::new(Scheduler::one_shot(f.scheduler.engine.clone(), source, Firing::Report(tx)));
                    let fired = once.pass(&mut Memory::default()).fired.len();
                    drop(once);
                    while let Some((_, outcome)) = rx.recv().await {
                        assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
                        ran.push(now);
                    }
                    assert!(fired <= 1);
                }
                (ran, expected)
            });
            proptest::prop_assert_eq!(ran, expected);
        }
    }

    #[tokio::test]
    async fn untrusted_fires_nothing_and_trust_starts_the_schedule() {
        let f = fixture("echo hi", NOTE);
        let mut memory = Memory::default();
        assert!(f.scheduler.pass(&mut memory).fired.is_empty(), "untrusted workspace fired");
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let pass = f.scheduler.pass(&mut memory);
        assert_eq!(pass.fired.len(), 1);
        assert_eq!(pass.fired[0].1, "cron");
        settle(&f).await;
        let text = note_text(f.dir.path());
        assert!(text.contains("lastRunSummary: \"Updated: hi\""), "{text}");
        assert!(text.ends_with("# N\n\nhi\n") || text.ends_with("# N\nhi\n"), "{text}");
        // Done for this hour: nothing fires until 10:00.
        memory.recently.clear();
        f.clock.set(t("2026-11-23T09:59:59Z"));
        assert!(f.scheduler.pass(&mut memory).fired.is_empty());
        f.clock.set(t("2026-11-23T10:00:00.500Z"));
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&f).await;
    }

    #[tokio::test]
    async fn failure_is_recorded_and_retried_after_the_backoff() {
        let f = fixture("echo broken >&2; exit 3", NOTE);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let mut memory = Memory::default();
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&f).await;
        let text = note_text(f.dir.path());
        assert!(text.contains("lastRunError: \"exited with status 3: broken\""), "{text}");
        assert!(!text.contains("lastRunAt"), "{text}");
        memory.recently.clear();
        // Still inside the backoff: nothing; after it, the failed cycle is retried.
        f.clock.advance(TimeDelta::minutes(4));
        assert!(f.scheduler.pass(&mut memory).fired.is_empty());
        f.clock.advance(TimeDelta::minutes(1));
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&f).await;
    }

    #[tokio::test]
    async fn stop_ends_a_run_within_a_second_and_a_hang_times_out() {
        let f = fixture("sleep 30", NOTE);
        // The provider is the folder's: it runs, even by hand, only in a trusted folder.
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let path = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}")).join("n.md");
        let engine = f.scheduler.engine.clone();
        let run = {
            let engine = engine.clone();
            let path = path.clone();
            tokio::spawn(async move {
                let spec = RunSpec { path, trigger: TriggerKind::Manual, context: None, event: None };
                engine.run(spec, &mut |_| {}).await
            })
        };
        for _ in 0..200 {
            if engine.registry.is_running(&path) && note_text(f.dir.path()).contains("lastRunId") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let asked = std::time::Instant::now();
        assert!(engine.stop(&path));
        let outcome = run.await.unwrap_or_else(|e| panic!("{e}"));
        assert!(asked.elapsed() < Duration::from_secs(1), "stop took {:?}", asked.elapsed());
        assert!(matches!(outcome, Outcome::Stopped { .. }), "{outcome:?}");
        assert!(note_text(f.dir.path()).contains("lastRunError: \"stopped\""));
        // The provider's timeout is 2 s: a hang is killed then.
        let started = std::time::Instant::now();
        let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Manual, context: None, event: None };
        let outcome = engine.run(spec, &mut |_| {}).await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            matches!(&outcome, Outcome::Failed { error, .. } if error == "timed out after 2s"),
            "{outcome:?}"
        );
    }

    #[tokio::test]
    async fn paused_and_invalid_notes_never_fire() {
        let paused = NOTE.replace("  objective: o\n", "  objective: o\n  active: false\n");
        let f = fixture("echo hi", &paused);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert!(f.scheduler.pass(&mut Memory::default()).fired.is_empty());
        let invalid = NOTE.replace("  objective: o\n", "  objective: o\n  active: yes\n");
        let f = fixture("echo hi", &invalid);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert!(f.scheduler.pass(&mut Memory::default()).fired.is_empty());
    }

    #[tokio::test]
    async fn nothing_fires_after_until() {
        // The zone is UTC: the date ends at 2026-11-23T24:00Z.
        let note = NOTE.replace("  objective: o\n", "  objective: o\n  until: 2026-11-23\n");
        let f = fixture("echo hi", &note);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let mut memory = Memory::default();
        // Before the end: the hourly cron fires as usual.
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&f).await;
        memory.recently.clear();
        f.clock.set(t("2026-11-23T23:00:00.500Z"));
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&f).await;
        // From midnight on, no occurrence fires, however long the clock runs.
        for at in ["2026-11-24T00:00:00.500Z", "2026-11-24T01:00:00.500Z", "2026-12-01T09:00:00.500Z"] {
            memory.recently.clear();
            f.clock.set(t(at));
            assert!(f.scheduler.pass(&mut memory).fired.is_empty(), "fired at {at}");
        }
    }

    /// The note open in an editor: its buffer, edited by runs and left unsaved.
    #[derive(Clone)]
    struct Buffer {
        text: Arc<std::sync::Mutex<Option<(String, i32)>>>,
        changes: Arc<tokio::sync::watch::Sender<u64>>,
    }

    impl Buffer {
        fn set(&self, text: &str) {
            let mut b = self.text.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let version = b.as_ref().map_or(1, |(_, v)| v + 1);
            *b = Some((text.to_owned(), version));
            drop(b);
            self.changes.send_modify(|n| *n += 1);
        }

        fn text(&self) -> String {
            let b = self.text.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            b.as_ref().map(|(t, _)| t.clone()).unwrap_or_default()
        }
    }

    impl crate::runs::io::Editor for Buffer {
        fn open(&self, _: &Path) -> Option<(String, i32)> {
            self.text.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
        }

        fn send_edit<'a>(
            &'a self,
            _: &'a Path,
            version: i32,
            _: &'a str,
            edits: &'a [crate::text::TextEdit],
        ) -> crate::runs::io::BoxFuture<'a, Result<bool, String>> {
            Box::pin(async move {
                let current = self.open(Path::new("")).ok_or("closed")?;
                if current.1 != version {
                    return Ok(false);
                }
                self.set(&crate::text::edit::apply(&current.0, edits).map_err(|e| e.to_string())?);
                Ok(true)
            })
        }

        fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
            self.changes.subscribe()
        }
    }

    /// A run into an unsaved buffer leaves the file due: the scheduler decides once that the
    /// note is not due as it reads now, instead of firing and skipping it every pause for the
    /// whole grace window; it runs again when the buffer changes or the next occurrence comes.
    #[tokio::test]
    async fn a_buffer_that_disagrees_with_the_file_is_decided_once() {
        let buffer = Buffer {
            text: Arc::new(std::sync::Mutex::new(None)),
            changes: Arc::new(tokio::sync::watch::channel(0).0),
        };
        let io = Arc::new(crate::runs::io::BufferIo::new(buffer.clone()));
        let f = fixture_with("echo hi", NOTE, io);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        buffer.set(NOTE);
        let mut memory = Memory::default();
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&f).await;
        let ran = buffer.text();
        assert!(ran.contains("lastRunAt"), "{ran}");
        assert_eq!(note_text(f.dir.path()), NOTE, "the run went to the buffer, not the file");
        // Ticks every 2 s through the grace window (the refire pause over each time): the run
        // store's record of the buffer's run counts as the file's stamps would (issue 32 §2), so
        // the note is not due, not even a decision to take.
        let (mut fired, mut settled) = (0, 0);
        for _ in 0..40 {
            f.clock.advance(TimeDelta::seconds(2));
            memory.recently.clear();
            let pass = f.scheduler.pass(&mut memory);
            fired += pass.fired.len();
            settled += pass.settled.len();
            settle(&f).await;
        }
        assert_eq!((fired, settled), (0, 0));
        // The user throws the unsaved run away: the occurrence was attempted all the same.
        buffer.set(NOTE);
        memory.recently.clear();
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 0);
        // The next occurrence is due on disk; the buffer says a run the store does not know of
        // served it (typed, or pasted in): decided once, nothing fired.
        f.clock.set(t("2026-11-23T10:00:00.500Z"));
        buffer.set(&NOTE.replace("  triggers:", "  lastRunAt: \"2026-11-23T10:00:00.200Z\"\n  triggers:"));
        let (mut fired, mut settled) = (0, 0);
        for _ in 0..20 {
            memory.recently.clear();
            let pass = f.scheduler.pass(&mut memory);
            fired += pass.fired.len();
            settled += pass.settled.len();
            settle(&f).await;
            f.clock.advance(TimeDelta::seconds(2));
        }
        assert_eq!((fired, settled), (0, 1));
        // The buffer without it: due again, so the note runs.
        buffer.set(NOTE);
        memory.recently.clear();
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&f).await;
        assert!(buffer.text().contains("lastRunAt: \"2026-11-23T10:00:4"), "{}", buffer.text());
    }

    #[cfg(unix)]
    /// A note the run cannot write stays due (its `lastAttemptAt` cannot be written either):
    /// it is skipped once, not fired and skipped every pause, and tried again as soon as it
    /// changes (a `chmod` counts) or a minute has passed.
    #[tokio::test]
    async fn a_note_that_cannot_be_written_is_skipped_once_until_it_changes() {
        use std::os::unix::fs::PermissionsExt;
        let f = fixture("echo hi", NOTE);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let note = f.dir.path().join("n.md");
        let mode = |m: u32| std::fs::set_permissions(&note, std::fs::Permissions::from_mode(m));
        mode(0o444).unwrap_or_else(|e| panic!("{e}"));
        let mut memory = Memory::default();
        let mut fired = 0;
        for _ in 0..20 {
            memory.recently.clear();
            fired += f.scheduler.pass(&mut memory).fired.len();
            settle(&f).await;
            f.clock.advance(TimeDelta::seconds(2));
        }
        assert_eq!(fired, 1, "fired again while nothing changed");
        assert_eq!(note_text(f.dir.path()), NOTE);
        // Made writable: runs at the next pass.
        mode(0o644).unwrap_or_else(|e| panic!("{e}"));
        memory.recently.clear();
        assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&f).await;
        assert!(note_text(f.dir.path()).contains("lastRunAt"));
        // Unchanged but a minute later: tried again (a full disk may have room by then).
        let g = fixture("echo hi", NOTE);
        g.trust.trust(g.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let note = g.dir.path().join("n.md");
        std::fs::set_permissions(&note, std::fs::Permissions::from_mode(0o444))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut memory = Memory::default();
        assert_eq!(g.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&g).await;
        g.clock.advance(TimeDelta::seconds(30));
        memory.recently.clear();
        let pass = g.scheduler.pass(&mut memory);
        assert!(pass.fired.is_empty());
        assert_eq!(pass.next, Some(t("2026-11-23T09:01:30Z")), "wakes when the pause ends");
        g.clock.advance(TimeDelta::seconds(31));
        memory.recently.clear();
        assert_eq!(g.scheduler.pass(&mut memory).fired.len(), 1);
        settle(&g).await;
    }
}
