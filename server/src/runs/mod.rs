//! Runs: one update of one live note, end to end (SPEC section 3's run flow). Take the note's
//! lock → write `lastAttemptAt` and `lastRunId` first → snapshot the body into history →
//! run the provider → apply its content as minimal edits → write `lastRunAt`,
//! `lastRunSummary` and clear `lastRunError` (or write `lastRunError`) → release.
//! Edits go through a [`NoteIo`]: the file on disk (atomic, compare-and-swap) or, in the
//! language server, the open editor buffer.

pub mod attempts;
pub mod costs;
pub mod history;
pub mod identity;
pub mod io;
pub mod registry;
pub mod restore;
pub mod store;
pub mod summary;

mod ending;
mod provider_call;

use ending::watch_for_stop;
use provider_call::{CONFLICT, Steps};

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use costs::costed;
pub use io::{DiskIo, NoteIo};
pub use registry::Registry;
pub use store::Store;

use crate::config::Config;
use crate::note::body::{Patch, agent_region};
use crate::note::rewrite::{self, RuntimeField};
use crate::note::{self, frontmatter};
use crate::providers::{self, RunEvent, RunRequest, TriggerKind};
use crate::schedule::{self, Clock, Zone};
use crate::status;
use crate::text::{TextEdit, count};
use crate::workspace::trust::TrustStore;

/// What to run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Absolute path of the note.
    pub path: PathBuf,
    pub trigger: TriggerKind,
    /// Manual context text, or the event's criteria and payload.
    pub context: Option<String>,
    /// The event of an `event` run, as data (`RunRequest::event`).
    pub event: Option<providers::TriggerEvent>,
}

impl RunSpec {
    /// Scheduled runs re-check that the note is still due under the lock; manual and event
    /// runs do not (they ignore backoff, and manual runs ignore `active`).
    fn scheduled(&self) -> bool {
        self.trigger.is_scheduled()
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done {
        run_id: String,
        summary: String,
    },
    Failed {
        run_id: String,
        error: String,
    },
    Stopped {
        run_id: String,
    },
    /// Nothing ran (already running elsewhere, no longer due, invalid, ...).
    Skipped(String),
}

/// Everything a run needs from its surroundings.
pub struct Engine {
    pub root: PathBuf,
    pub clock: Arc<dyn Clock>,
    pub zone: Zone,
    pub io: Arc<dyn NoteIo>,
    pub config: Arc<RwLock<Config>>,
    pub trust: Option<TrustStore>,
    pub registry: Registry,
    pub store: Store,
    /// This machine's runs into editor buffers (`attempts`), as every due check counts them.
    pub attempts: attempts::Attempts,
    /// Told of every run that starts and ends (the language server shows `$/progress`).
    pub observer: RwLock<Option<Arc<dyn RunObserver>>>,
    /// The process's notifications (`watch`, `tick`, the language server): told of every
    /// run's end, whatever started it; `None` where nobody is told (`livenote run`, MCP).
    pub notify: RwLock<Option<Arc<crate::notify::Hub>>>,
    /// `livenote tick --catch-up`, in place of `[scheduler] catch_up` ([`Engine::catch_up`]).
    pub catch_up_flag: Option<chrono::TimeDelta>,
    /// Run ids: time-based from the engine's clock, and still in creation order when two runs
    /// start in the same millisecond (a frozen test clock, a burst of events).
    ids: std::sync::Mutex<ulid::Generator>,
}

/// Watches the runs of an engine, whatever started them (by hand, a schedule, an event).
pub trait RunObserver: Send + Sync {
    /// A run of `path` started (its lock is held). `title` is the note's name
    /// (`workspace::index::note_title`).
    /// The watch is ended once the run is over and the note's lock released.
    fn started(&self, path: &Path, title: &str, trigger: TriggerKind) -> Box<dyn RunWatch>;

    /// Something the user should see once, not only in a log (the language server shows it
    /// as a message): e.g. that another machine runs the folder's notes.
    fn notice(&self, _message: &str) {}
}

/// One run's progress, as it goes.
pub trait RunWatch: Send {
    fn event(&mut self, event: &RunEvent);
    fn ended(self: Box<Self>, outcome: &Outcome);
}

impl Engine {
    pub fn new(
        root: &Path,
        clock: Arc<dyn Clock>,
        zone: Zone,
        io: Arc<dyn NoteIo>,
        config: Config,
        trust: Option<TrustStore>,
    ) -> Self {
        Engine {
            root: root.to_path_buf(),
            clock,
            zone,
            io,
            config: Arc::new(RwLock::new(config)),
            trust,
            registry: Registry::default(),
            store: Store::new(root),
            attempts: {
                let a = attempts::Attempts::new(root);
                a.load();
                a
            },
            observer: RwLock::new(None),
            notify: RwLock::new(None),
            catch_up_flag: None,
            ids: std::sync::Mutex::new(ulid::Generator::new()),
        }
    }

    /// How late a missed occurrence may still run: `livenote tick --catch-up`, else
    /// `[scheduler] catch_up` (read at each use: a config reload applies at once); `None`: a
    /// missed occurrence is not replayed (SPEC 3).
    pub fn catch_up(&self) -> Option<chrono::TimeDelta> {
        self.catch_up_flag.or_else(|| {
            let within = self.config.read().ok()?.scheduler.catch_up?;
            chrono::TimeDelta::from_std(within).ok()
        })
    }

    /// The occurrence a scheduled run at `now` may still serve late ([`Engine::catch_up`]): it
    /// was missed (nothing, from any machine, served it: [`status::missed`]) and its time to
    /// fire ended no longer than the catch-up ago.
    pub fn missed_within(&self, live: &note::model::Live, now: DateTime<Utc>) -> Option<schedule::Missed> {
        let within = self.catch_up()?;
        status::missed(live, now, &self.zone).filter(|m| now - m.until <= within)
    }

    /// The note's block as the due checks take it: with this machine's record of a run into an
    /// editor's buffer that the file does not show yet ([`attempts`], SPEC 3). From memory.
    pub fn attempted<'a>(
        &self,
        path: &Path,
        live: &'a note::model::Live,
    ) -> std::borrow::Cow<'a, note::model::Live> {
        self.attempts.apply(path, live)
    }

    pub fn rel(&self, path: &Path) -> crate::workspace::NotePath {
        crate::workspace::NotePath::of_or_whole(&self.root, path)
    }

    pub fn trusted(&self) -> bool {
        self.trust.as_ref().is_some_and(|t| t.is_trusted(&self.root))
    }

    /// The folder between the root and `path` that has its own `.livenote.toml` and is not
    /// trusted itself: notes there never run on their own on the root's trust (SPEC 7).
    pub fn untrusted_nested_folder(&self, path: &Path) -> Option<PathBuf> {
        let dir = crate::workspace::trust::nested_config_dir(&self.root, path)?;
        (!self.trust.as_ref().is_some_and(|t| t.is_trusted(&dir))).then_some(dir)
    }

    /// `[scheduler] enabled`, read at each use: the client can turn it off and on while the
    /// server runs (VS Code does for an untrusted workspace).
    pub fn scheduling_enabled(&self) -> bool {
        self.config.read().map(|c| c.scheduler.enabled).unwrap_or(true)
    }

    /// Whether notes may run on their own (schedules, events): a trusted workspace with
    /// scheduling enabled. Manual runs need neither.
    pub fn unattended_runs(&self) -> bool {
        self.scheduling_enabled() && self.trusted()
    }

    /// This machine's name (`crate::machine`), from the environment and the user's `[machine]`.
    pub fn machine(&self) -> String {
        let config = self.config.read().map(|c| c.machine.clone()).unwrap_or_default();
        crate::machine::name(&crate::config::ProcessEnv, &config)
    }

    /// The machine `[scheduler] host` names, when it is not this one: scheduled and event runs
    /// of the folder happen there (SPEC 3, several machines), here only by hand or failover.
    pub fn scheduled_on(&self) -> Option<String> {
        let host = self.config.read().ok()?.scheduler.host.clone()?;
        schedule::host::Placement::of(Some(&host), &self.machine()).elsewhere().map(str::to_owned)
    }

    /// `[scheduler] failover_after` as the schedule counts it.
    pub fn failover_after(&self) -> Option<chrono::TimeDelta> {
        let after = self.config.read().ok()?.scheduler.failover_after?;
        chrono::TimeDelta::from_std(after).ok()
    }

    /// The scheduler's rule for a folder with a host elsewhere, the one place it is applied
    /// to a note: `Ok(None)` when this machine fires it as usual, `Ok(Some((host, since)))`
    /// when it takes over from `host` a note waiting since `since` (`failover_after`), `Err(host)`
    /// when it leaves the note to `host`.
    pub fn placement_of(
        &self,
        live: &note::model::Live,
        now: DateTime<Utc>,
    ) -> Result<Option<(String, DateTime<Utc>)>, String> {
        let Some(host) = self.scheduled_on() else { return Ok(None) };
        match self.failover_after().and_then(|after| status::failover_due(live, after, now, &self.zone)) {
            Some(since) => Ok(Some((host, since))),
            None => Err(host),
        }
    }

    fn new_run_id(&self, now: DateTime<Utc>) -> String {
        let mut ids = self.ids.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Fails only after 2^80 ids in one millisecond; a plain id is fine then.
        ids.generate_from_datetime(now.into())
            .unwrap_or_else(|_| ulid::Ulid::from_datetime(now.into()))
            .to_string()
    }

    /// Stop the note's run if one is in progress in this process.
    /// Stop the note's run: in this process directly, in another livenote process (a
    /// `livenote watch`, another editor) through a stop request it watches for. Whether a run
    /// was found to stop.
    pub fn stop(&self, path: &Path) -> bool {
        if self.registry.cancel(path) {
            return true;
        }
        match self.store.request_stop(&self.rel(path)) {
            Ok(found) => found.is_some(),
            Err(e) => {
                tracing::warn!("stop {}: cannot ask the running process: {e}", path.display());
                false
            }
        }
    }

    pub fn is_running(&self, path: &Path) -> bool {
        self.registry.is_running(path) || self.store.is_locked(&self.rel(path))
    }

    /// Take the note's lock for an edit of its frontmatter made outside a run (`livenote mcp`'s
    /// `make_live`, `set_active`, `make_passive`): held while the edit is computed and written,
    /// so that it never lands between a run's reads and writes of the same block. Refused while
    /// a run of the note goes on, here or in another livenote process.
    pub fn lock_for_edit(&self, path: &Path) -> Result<store::NoteLock, String> {
        const BUSY: &str = "the note is updating; wait for its run to end (or stop it) and try again";
        if self.registry.is_running(path) {
            return Err(BUSY.to_owned());
        }
        match self.store.try_lock(&self.rel(path)) {
            Ok(Some(lock)) => Ok(lock),
            Ok(None) => Err(BUSY.to_owned()),
            Err(e) => Err(format!("cannot take the note's lock: {e}")),
        }
    }

    /// The options the engine analyses a note with to decide whether it is due: the root's
    /// `[scheduler] max_backoff` ([`crate::note::Options::max_backoff`]).
    pub fn schedule_options(&self) -> note::Options<'static> {
        let max_backoff = self.config.read().ok().map(|c| c.scheduler.backoff_cap());
        note::Options { max_backoff, ..note::Options::default() }
    }

    /// Why a manual run of the note cannot start before the folder is trusted: it would need
    /// the folder's ignored `.livenote.toml`. Checked before the run touches the note (`livenote
    /// run`, `livenote mcp`); `None` when it may run.
    pub fn needs_trust(&self, path: &Path) -> Option<String> {
        let config = self.config.read().ok()?;
        config.ignored_folder.as_ref()?;
        let text = self.io.read(path).ok()?;
        let analysis = note::analyze(&text, &note::Options::default());
        let provider = analysis.live.as_ref().and_then(|l| l.provider.as_ref()).map(|p| p.value.as_str());
        config.needs_ignored_folder(provider).map(|ignored| ignored.run_error(provider))
    }

    /// Run a note once. `on_event` sees progress (for logs, transcripts and `$/progress`).
    pub async fn run(&self, spec: RunSpec, on_event: &mut (dyn FnMut(&RunEvent) + Send)) -> Outcome {
        let Some(cancel) = self.registry.start(&spec.path) else {
            return Outcome::Skipped("already running".to_owned());
        };
        self.run_registered(spec, cancel, on_event).await
    }

    /// [`Engine::run`] under a lock of the note the caller took ([`Engine::lock_for_edit`]) and
    /// looked at the note under: nothing else can run the note between that look and the run
    /// (`make-live --run` fills a new note once, whoever comes first: `cli::run::fill`).
    pub async fn run_holding(
        &self,
        spec: RunSpec,
        lock: store::NoteLock,
        on_event: &mut (dyn FnMut(&RunEvent) + Send),
    ) -> Outcome {
        let Some(cancel) = self.registry.start(&spec.path) else {
            return Outcome::Skipped("already running".to_owned());
        };
        self.run_with(spec, Some(lock), cancel, on_event).await
    }

    /// Run a note whose slot the caller already took with `registry.start` (the scheduler
    /// reserves it before spawning, so it never fires the same note twice).
    pub async fn run_registered(
        &self,
        spec: RunSpec,
        cancel: CancellationToken,
        on_event: &mut (dyn FnMut(&RunEvent) + Send),
    ) -> Outcome {
        self.run_with(spec, None, cancel, on_event).await
    }

    /// A registered run, under `held` when the caller holds the note's lock already.
    async fn run_with(
        &self,
        spec: RunSpec,
        held: Option<store::NoteLock>,
        cancel: CancellationToken,
        on_event: &mut (dyn FnMut(&RunEvent) + Send),
    ) -> Outcome {
        let rel = self.rel(&spec.path);
        if spec.trigger != TriggerKind::Manual
            && let Some(dir) = self.untrusted_nested_folder(&spec.path)
        {
            self.registry.finish(&spec.path);
            return Outcome::Skipped(format!(
                "{} has its own .livenote.toml and is not trusted (the trust of {} does not extend to it): run `livenote trust {}`",
                dir.display(),
                self.root.display(),
                dir.display()
            ));
        }
        let mut watch = None;
        let outcome = self.run_locked(&spec, &rel, held, cancel, on_event, &mut watch).await;
        self.registry.finish(&spec.path);
        // Once the note is free again (its lock released, no longer registered): what the
        // observer shows next (an editor's lenses and hints) no longer reads "updating".
        if let Some(w) = watch {
            w.ended(&outcome);
        }
        outcome
    }

    /// The run under the note's lock; `watch` receives the observer's watch once the run
    /// starts, for the caller to end.
    async fn run_locked(
        &self,
        spec: &RunSpec,
        rel: &str,
        held: Option<store::NoteLock>,
        cancel: CancellationToken,
        on_event: &mut (dyn FnMut(&RunEvent) + Send),
        watch: &mut Option<Box<dyn RunWatch>>,
    ) -> Outcome {
        let _lock = match held.map_or_else(|| self.store.try_lock(rel), |l| Ok(Some(l))) {
            Ok(Some(l)) => l,
            Ok(None) => return Outcome::Skipped("running in another livenote process".to_owned()),
            Err(e) => return Outcome::Skipped(format!("cannot take the note's lock: {e}")),
        };
        // Another process may ask this run to stop (`livenote stop`, Stop in an editor that
        // does not run it): a file beside the lock, looked for while the run goes on.
        let _stop_watch = watch_for_stop(self.store.clone(), rel.to_owned(), cancel.clone());
        // Every read and write of this run goes to one place, chosen now: the buffer when the
        // note is open in this editor, else the disk, even if the note opens meanwhile (a
        // window reloading, an editor that sends `didOpen` late). A run whose first fields went
        // to disk and whose result went to a buffer that never had them left the two apart,
        // the buffer unsavable ("the content of the file is newer").
        let io: Arc<dyn NoteIo> =
            if self.io.bypasses_buffers(&spec.path) { Arc::new(DiskIo) } else { self.io.clone() };
        let io = io.as_ref();
        // Re-read under the lock: another process may have just run the note.
        let text = match io.read(&spec.path) {
            Ok(t) => t,
            Err(e) => return Outcome::Skipped(format!("cannot read the note: {e}")),
        };
        // A note moved since its last run takes its history and memory along (`identity`).
        self.adopt_locked(rel, &text);
        let analysis = note::analyze(&text, &self.schedule_options());
        let Some(live) = analysis.live.as_ref() else {
            return Outcome::Skipped("the note is not live".to_owned());
        };
        if live.has_errors {
            return Outcome::Skipped("the live block has errors; fix them first".to_owned());
        }
        let now = self.clock.now();
        // Whether this run's writes go to an editor's buffer, which no other process sees until
        // the user saves: the run store then records it (`attempts`).
        let buffered = io.edits_buffer(&spec.path);
        // A failover run is owed by its wait, not by the grace of an occurrence (the host had
        // that), so it is checked in place of `due`.
        let mut failover = None;
        if spec.scheduled() {
            // A run of this machine into a buffer counts as the file's own stamps do; read
            // afresh, under the lock its writer held.
            let record = self.attempts.read(rel);
            let checked = status::with_attempt(live, record.as_ref());
            let checked = checked.as_ref();
            match self.placement_of(checked, now) {
                Err(host) => return Outcome::Skipped(format!("scheduled on {host}")),
                Ok(Some(taken)) => failover = Some(taken),
                Ok(None) => {
                    // A run the editor's undo took back out of the note still did its occurrence.
                    let settled = self.settle(checked);
                    let view = status::schedule_view(settled.as_ref().unwrap_or(checked), now, &self.zone);
                    if !view.decision.as_ref().is_some_and(schedule::Decision::is_due)
                        && self.missed_within(checked, now).is_none()
                    {
                        return Outcome::Skipped("no longer due".to_owned());
                    }
                }
            }
        }
        let run_id = self.new_run_id(now);
        let stamp = timestamp(now);
        // A run by hand starts the failure count afresh (SPEC 3): if it fails, it is the first.
        let reset = spec.trigger == TriggerKind::Manual && live.failures > 0;
        let mut start_fields = vec![
            (RuntimeField::LastAttemptAt, Some(stamp.as_str())),
            (RuntimeField::LastRunId, Some(&run_id)),
        ];
        if reset {
            start_fields.push((RuntimeField::Failures, Some("0")));
        }
        // First, so any later failure (even resolving the provider) is covered by the backoff.
        let started = io
            .apply(&spec.path, &|t: &str| {
                rewrite::set_runtime_fields(t, &start_fields).map_err(|e| e.to_string())
            })
            .await;
        // Whether `failures` is still above zero in the note: a success then sets it back.
        let failing = live.failures > 0 && !reset;
        let started = match started {
            Ok(t) => Some(t),
            Err(e) => return Outcome::Skipped(format!("cannot write the note: {e}")),
        };
        self.record_start(rel, &spec.path, &run_id, now, buffered);
        let mut transcript = self.store.transcript(&run_id).ok();
        let log = |event: &RunEvent, transcript: &mut Option<store::Transcript>| {
            if let Some(t) = transcript.as_mut() {
                let mut line =
                    json!({"at": timestamp(self.clock.now()), "kind": event.kind, "message": event.message});
                if let Some(data) = &event.data {
                    line["data"] = data.clone();
                }
                t.write(&line);
            }
        };
        let machine = self.machine();
        let start_event =
            RunEvent::new("start", format!("{rel} trigger={} run={run_id}", spec.trigger.as_str()))
                .with_data(json!({ "host": machine }));
        log(&start_event, &mut transcript);
        on_event(&start_event);
        if let Some((host, since)) = &failover {
            let message = format!(
                "due since {} with no attempt from any machine: {machine} runs it in place of {host} ([scheduler] failover_after)",
                timestamp(*since)
            );
            tracing::info!("failover {rel}: {message}");
            let event = RunEvent::new("failover", message);
            log(&event, &mut transcript);
            on_event(&event);
        }
        *watch = self.observer.read().ok().and_then(|o| o.clone()).map(|o| {
            let title = crate::workspace::index::note_title(
                analysis.title.clone(),
                frontmatter::body_title(&text),
                &spec.path,
            );
            o.started(&spec.path, &title, spec.trigger)
        });
        let on_event = &mut |e: &RunEvent| {
            if let Some(w) = watch.as_mut() {
                w.event(e);
            }
            on_event(e);
        };

        let text = started.unwrap_or(text);
        let region = agent_region(&text);
        let base_body = text[region.clone()].to_owned();
        let keep = self.config.read().map(|c| c.history.keep).unwrap_or(20);
        if let Err(e) = self.store.snapshot(rel, &run_id, &base_body, keep) {
            // A linked state folder is an attack, not a full disk: nothing more is written.
            if crate::workspace::confine::is_refusal(&e) {
                tracing::warn!("snapshot {rel}: {e}");
                let outcome =
                    self.fail(io, &spec.path, &run_id, format!("cannot save the body's snapshot: {e}")).await;
                if let Outcome::Failed { error, .. } = &outcome {
                    let end = RunEvent::new("failed", error.clone());
                    log(&end, &mut transcript);
                    on_event(&end);
                }
                return outcome;
            }
            tracing::warn!("snapshot {rel}: {e}");
        }
        // How the run ended, for its record when it went to a buffer.
        let mut record_end = attempts::End::Failed;
        // What the run did and cost, added up from its events (`cost`), for its final line.
        let mut totals = crate::cost::RunTotals::default();
        let mut forward = |e: &RunEvent| {
            totals.observe(&e.kind, e.data.as_ref());
            log(e, &mut transcript);
            on_event(e);
        };
        // Model agents edit step by step; each step lands in the note (the user watches it
        // change) before the model takes the next, relative to the text the previous step
        // produced. A command provider gives one result, applied below the same way.
        let mut steps = Steps { io, path: &spec.path, base: text.clone() };
        let result =
            self.call_provider(spec, rel, &text, live, &run_id, now, cancel, &mut steps, &mut forward).await;
        let base = steps.base;
        // The note as the run's last write left it, when that write was the result.
        let mut left: Option<String> = None;
        let outcome = match result {
            // A NUL byte would make the note a binary file that livenote (and many editors)
            // no longer reads: nothing of such output is written.
            Ok(output) if output.body.contains('\0') => {
                let at = output.body.find('\0').unwrap_or_default();
                let error =
                    format!("output contains a NUL byte (at byte {at}): binary data cannot go into a note");
                self.fail(io, &spec.path, &run_id, error).await
            }
            Ok(output) => {
                let patch = Patch::compute(&base, &output.body);
                // An event run that leaves the body as it was: the agent decided the event does
                // not matter. The note's cycle and its last useful summary stay as they were,
                // and so does `lastAttemptAt`, so no backoff starts (SPEC 3); history and the
                // transcript keep the outcome.
                let vetoed = spec.trigger == TriggerKind::Event
                    && patch.is_empty()
                    && base[agent_region(&base)] == text[agent_region(&text)];
                // Without a summary from the provider, the new content says what the note now
                // holds, which beats a generic "Updated.".
                let summary = output
                    .summary
                    .clone()
                    .filter(|s| !s.trim().is_empty())
                    .unwrap_or_else(|| summary::of_body(&output.body));
                let summary = one_line(&summary, 200);
                let done_at = self.clock.now().trunc_subsecs(3);
                let done = timestamp(done_at);
                record_end = if vetoed { attempts::End::Vetoed } else { attempts::End::Ran(done_at) };
                // One result (a command provider's, or a model's last word after its steps
                // landed): what the user changed meanwhile wins line by line, the rest lands,
                // and what did not is said in the summary rather than dropped in silence.
                let conflicts = std::sync::atomic::AtomicUsize::new(0);
                let applied = io
                    .apply(&spec.path, &|t: &str| {
                        let r = patch.apply_to(t);
                        conflicts.store(r.conflicts, std::sync::atomic::Ordering::Relaxed);
                        let summary = match r.conflicts {
                            0 => summary.clone(),
                            n => one_line(
                                &format!("{summary} ({} not applied: {CONFLICT})", count(n, "change")),
                                300,
                            ),
                        };
                        let mut edits: Vec<TextEdit> = r.edits;
                        if vetoed {
                            let before = live.last_attempt_at.map(timestamp);
                            edits.extend(
                                rewrite::set_runtime_fields(
                                    t,
                                    &[(RuntimeField::LastAttemptAt, before.as_deref())],
                                )
                                .map_err(|e| e.to_string())?,
                            );
                            return Ok(edits);
                        }
                        let mut fields = vec![
                            (RuntimeField::LastRunAt, Some(done.as_str())),
                            (RuntimeField::LastRunSummary, Some(&summary)),
                            (RuntimeField::LastRunError, None),
                        ];
                        if failing {
                            fields.push((RuntimeField::Failures, Some("0")));
                        }
                        edits.extend(rewrite::set_runtime_fields(t, &fields).map_err(|e| e.to_string())?);
                        Ok(edits)
                    })
                    .await;
                match applied {
                    Ok(t) => {
                        left = Some(t);
                        let c = conflicts.load(std::sync::atomic::Ordering::Relaxed);
                        if c > 0 {
                            tracing::warn!(
                                "done {rel}: {c} change(s) not applied, the note was edited there meanwhile"
                            );
                        }
                        Outcome::Done { run_id: run_id.clone(), summary }
                    }
                    Err(e) => {
                        self.fail(io, &spec.path, &run_id, format!("cannot write the result: {e}")).await
                    }
                }
            }
            Err(providers::ProviderError::Stopped) => self.stopped(io, &spec.path, &run_id).await,
            Err(e) => self.fail(io, &spec.path, &run_id, e.to_string()).await,
        };
        if buffered {
            let end = match &outcome {
                Outcome::Done { .. } => record_end,
                Outcome::Stopped { .. } => attempts::End::Stopped(self.clock.now()),
                _ => attempts::End::Failed,
            };
            if let Err(e) = self.attempts.ended((rel, &spec.path), &run_id, end) {
                tracing::warn!("record the end of run {run_id} of {rel}: {e}");
            }
        }
        // For undo and `livenote history` (runs/history.rs): what the run left.
        // (The text of the result's own write when there was one: a keystroke right after it
        // is the user's, not the run's.)
        let after = left.or_else(|| io.read(&spec.path).ok());
        if let Some(t) = &after {
            self.record_result(rel, &run_id, &t[agent_region(t)]);
        }
        let title = crate::workspace::index::note_title(
            analysis.title.clone(),
            frontmatter::body_title(&text),
            &spec.path,
        );
        let after_body = after.as_deref().map(|t| &t[agent_region(t)]);
        self.tell(spec, live.notify.as_ref().map(|n| n.value), title, &outcome, &base_body, after_body);
        let end = match &outcome {
            Outcome::Done { summary, .. } => RunEvent::new("done", summary.clone()),
            Outcome::Failed { error, .. } => RunEvent::new("failed", error.clone()),
            Outcome::Stopped { .. } => RunEvent::new("failed", "stopped".to_owned()),
            Outcome::Skipped(r) => RunEvent::new("skip", r.clone()),
        };
        let end = costed(end, totals, now, self.clock.now());
        log(&end, &mut transcript);
        on_event(&end);
        outcome
    }
}

impl Engine {
    /// The run's end to the process's notifications, when the note's `notify` rule tells it:
    /// the one place every run's outcome passes (scheduled, event and manual alike).
    fn tell(
        &self,
        spec: &RunSpec,
        rule: Option<note::model::NotifyWhen>,
        title: String,
        outcome: &Outcome,
        before: &str,
        after: Option<&str>,
    ) {
        let Some(hub) = self.notify.read().ok().and_then(|n| n.clone()) else { return };
        let (told, run_id, summary) = match outcome {
            Outcome::Done { run_id, summary } if after.is_some_and(|a| a != before) => {
                (crate::notify::Outcome::Changed, run_id, summary)
            }
            Outcome::Done { run_id, summary } => (crate::notify::Outcome::Unchanged, run_id, summary),
            Outcome::Failed { run_id, error } => (crate::notify::Outcome::Failed, run_id, error),
            // A stop is the user's own doing, a skip no run at all.
            Outcome::Stopped { .. } | Outcome::Skipped(_) => return,
        };
        if !crate::notify::told(rule, spec.trigger, told) {
            return;
        }
        let (added, removed) = match (told, after) {
            (crate::notify::Outcome::Changed, Some(after)) => history::line_counts(before, after),
            _ => (0, 0),
        };
        let config = self.config.read().map(|c| c.notify.clone()).unwrap_or_default();
        let hook = crate::notify::command::hook(&config, &self.root, self.trusted()).unwrap_or_else(|why| {
            tracing::warn!("notify {}: `[notify] command` not run: {why}", self.rel(&spec.path));
            None
        });
        let entry = crate::notify::Entry {
            path: spec.path.clone(),
            title,
            trigger: spec.trigger,
            outcome: told,
            summary: summary.clone(),
            added,
            removed,
            run_id: run_id.clone(),
        };
        hub.report(crate::notify::Told { entry, desktop: config.desktop, hook });
    }
}

/// RFC 3339 in UTC with milliseconds, as the runtime fields are written.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// One line, at most `max` characters, for runtime fields and logs.
pub use crate::text::short::one_line;
