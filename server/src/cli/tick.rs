//! `livenote tick [DIR]`: one pass for an external scheduler (cron, a systemd timer, a CI
//! schedule, a Kubernetes CronJob). It fires what `watch` would fire at the instant it starts
//! (the scheduler's own pass: the same decision of what is due), and beside those runs polls
//! the sources that are due (each once, as `watch`'s loop would now, unless `--no-sources`),
//! then processes the pending events (the event processor's own pass), the sources' new ones
//! among them; a slow source never costs a scheduled run its grace. It waits for those runs
//! and exits: 0, 1 when a run or a source's poll failed, 2 on a usage or trust error. Its log
//! is `watch`'s: one line per fire, skip, done and failed on stderr. What keeps two ticks, or a
//! tick beside `watch` or an editor, from running a note twice is what keeps two `watch`es from
//! it: a run writes `lastAttemptAt` first (or, into an editor's buffer, its record in
//! `.livenote/attempts/`), under the note's lock, and re-checks that the note is due once it
//! holds the lock.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

use super::watch::{
    IndexSource, Saids, build_index, event_notes, not_on_their_own, say_folder, scheduled_elsewhere,
};
use crate::events::{EngineRunner, Event, EventNote, EventRunner, Processor};
use crate::runs::{DiskIo, Engine, Outcome};
use crate::schedule::{Clock, Zone};
use crate::scheduler::{Firing, Memory, Scheduler};
use crate::text::escape::terminal;
use crate::workspace::NotePath;
use crate::workspace::index::Index;
use crate::workspace::trust::TrustStore;

/// What `livenote tick` was asked, besides its folder.
#[derive(Debug, Default)]
pub struct Options<'a> {
    pub dry_run: bool,
    pub catch_up: Option<&'a str>,
    /// Leave the sources unpolled (`--no-sources`).
    pub no_sources: bool,
    pub clock_file: Option<PathBuf>,
}

pub fn run(dir: Option<PathBuf>, opts: Options<'_>) -> Result<u8> {
    let Options { dry_run, catch_up, no_sources, clock_file } = opts;
    let catch_up = catch_up
        .map(|d| {
            let d = crate::config::parse_duration(d).with_context(|| format!("--catch-up {d:?}"))?;
            chrono::TimeDelta::from_std(d).with_context(|| "--catch-up is too long".to_owned())
        })
        .transpose()?;
    let root = crate::workspace::given::folder_or_note(&dir.unwrap_or_else(|| PathBuf::from(".")))?;
    let runtime = super::watch::runtime()?;
    let clock = super::watch::clock(clock_file);
    let code = runtime.block_on(tick(&root, clock, Pass { dry_run, catch_up, sources: !no_sources }));
    // Dropping the runtime ends what a signal left running: the runs' programs (their process
    // groups) with their tasks, as when `watch` stops.
    runtime.shutdown_timeout(Duration::from_secs(2));
    code
}

/// What the runs of one tick came to.
#[derive(Debug, Default)]
struct Tally {
    done: usize,
    failed: usize,
    skipped: usize,
}

impl Tally {
    fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Done { .. } => self.done += 1,
            Outcome::Failed { .. } | Outcome::Stopped { .. } => self.failed += 1,
            Outcome::Skipped(_) => self.skipped += 1,
        }
    }
}

/// What one tick does.
struct Pass {
    dry_run: bool,
    catch_up: Option<chrono::TimeDelta>,
    sources: bool,
}

async fn tick(root: &Path, clock: Arc<dyn Clock>, pass: Pass) -> Result<u8> {
    let Pass { dry_run, catch_up, sources } = pass;
    // Before any run starts: a signal then still ends the runs' programs.
    let mut shutdown = super::signal::Shutdown::listen();
    let said = Saids::default();
    let mut configs = Vec::new();
    let index = build_index(root, &mut configs, &said);
    let index = Arc::new(RwLock::new(index));
    let trust = TrustStore::user();
    // The pass's runs are told together, at its end (or each minute of a long pass).
    let hub = crate::notify::Hub::new(clock.clone(), vec![Arc::new(crate::notify::Desktop)], false);
    let engines: Vec<Arc<Engine>> = configs
        .into_iter()
        .map(|(r, config)| {
            let mut engine =
                Engine::new(&r, clock.clone(), Zone::Local, Arc::new(DiskIo), config, trust.clone());
            engine.catch_up_flag = catch_up;
            super::watch::set_hub(&engine, &hub);
            Arc::new(engine)
        })
        .collect();
    // The folder asked about decides: untrusted, nothing runs and the tick is an error (a
    // timer that runs nothing for months should not look fine); a folder inside it with its own
    // untrusted `.livenote.toml` is said, as `watch` says it, and left out.
    match engines.iter().find(|e| e.root == root) {
        Some(top) => {
            if let Some(why) = not_on_their_own(top) {
                if !top.scheduling_enabled() {
                    // Turned off on purpose: said, and not an error.
                    tracing::warn!("{why}");
                    return Ok(0);
                }
                let _ = writeln!(std::io::stderr(), "livenote: {why}");
                return Ok(2);
            }
        }
        None => anyhow::bail!("{}: no configuration was loaded for the folder", root.display()),
    }
    for engine in engines.iter().filter(|e| e.root != root) {
        say_folder(engine, &said);
    }
    // A tick that fires nothing here because another machine is the host says so.
    for line in engines.iter().filter_map(|e| scheduled_elsewhere(e)) {
        tracing::info!("{line}");
    }
    if dry_run {
        return dry(root, &engines, &index, sources, &mut std::io::stdout().lock());
    }

    hub.start();
    let cancel = CancellationToken::new();
    let (tx, mut rx) = unbounded_channel();
    // What is due is decided now, at the instant the tick starts: a slow source polled beside
    // the runs costs none of them its grace.
    let mut fired = 0;
    for engine in engines.iter().filter(|e| e.unattended_runs()) {
        let source = IndexSource { index: index.clone(), root: engine.root.clone() };
        let scheduler =
            Arc::new(Scheduler::one_shot(engine.clone(), Arc::new(source), Firing::Report(tx.clone())));
        fired += scheduler.pass(&mut Memory::default()).fired.len();
    }
    // Beside those runs: the sources, then the queues, so that what a poll queued is processed
    // in this tick.
    let polls_then_queues = {
        let (engines, index, cancel, tx) = (engines.clone(), index.clone(), cancel.clone(), tx.clone());
        tokio::spawn(async move {
            let polled = if sources { poll_sources(&engines, &cancel).await } else { Polled::default() };
            let events = process_queues(&engines, &index, &tx, &cancel).await;
            (polled, events)
        })
    };
    // The channel closes once every fired run, the polls and every queue's pass have ended:
    // each holds a sender until then.
    drop(tx);
    let mut tally = Tally::default();
    loop {
        tokio::select! {
            got = rx.recv() => match got {
                Some((_, outcome)) => tally.add(&outcome),
                None => break,
            },
            signal = shutdown.recv() => {
                // As `watch` ends: the runs' programs end with the process, their notes keep
                // `lastAttemptAt` and are tried again after the backoff (a Stop would end the
                // occurrence instead).
                cancel.cancel();
                tracing::warn!(
                    "stop ticking {}: {signal}; runs and sources under way are cut short",
                    root.display()
                );
                return Ok(1);
            }
        }
    }
    let (polled, events) = polls_then_queues.await.unwrap_or_default();
    hub.finish().await;
    let sources = match (polled.polled, polled.failed) {
        (0, _) => String::new(),
        (n, 0) => format!("{} polled, ", crate::text::count(n, "source")),
        (n, failed) => format!("{} polled ({failed} failed), ", crate::text::count(n, "source")),
    };
    tracing::info!(
        "tick {}: {sources}{} fired, {} processed; runs: {} done, {} failed, {} skipped",
        root.display(),
        crate::text::count(fired, "note"),
        crate::text::count(events, "event"),
        tally.done,
        tally.failed,
        tally.skipped
    );
    Ok(u8::from(tally.failed > 0 || polled.failed > 0))
}

/// One pass over every root's queue with something in it (the untrusted ones too: their
/// processor says that their events wait), each event run's outcome sent on `tx`; how many
/// events were processed.
async fn process_queues(
    engines: &[Arc<Engine>],
    index: &Arc<RwLock<Index>>,
    tx: &UnboundedSender<(PathBuf, Outcome)>,
    cancel: &CancellationToken,
) -> usize {
    let mut queues = Vec::new();
    for engine in engines.iter().filter(|e| crate::events::has_work(&e.root)) {
        let router = match engine.config.read() {
            Ok(c) => crate::events::router_for(&c),
            Err(_) => Arc::new(crate::events::KeywordRouter),
        };
        let runner = Reporting { inner: EngineRunner::new(engine.clone()), tx: tx.clone() };
        let processor = Processor::new(&engine.root, router, Arc::new(runner), event_notes(engine, index));
        let cancel = cancel.clone();
        queues.push(tokio::spawn(async move { processor.process(&cancel).await.len() }));
    }
    let mut events = 0;
    for q in queues {
        events += q.await.unwrap_or(0);
    }
    events
}

/// What a tick's polls came to.
#[derive(Debug, Default)]
struct Polled {
    polled: usize,
    failed: usize,
}

/// Poll every root's due sources once ([`crate::sources::poller::due_now`]), each line of what
/// they did in the log as `watch` says it; the roots whose notes may not run on their own
/// (untrusted, scheduling off) are left alone, as their notes are.
async fn poll_sources(engines: &[Arc<Engine>], cancel: &CancellationToken) -> Polled {
    use crate::sources::poller::{PollError, due_now, poll_each};
    let mut polled = Polled::default();
    for engine in engines.iter().filter(|e| e.unattended_runs()) {
        let due = due_now(engine, engine.clock.now());
        for (name, result) in poll_each(engine, due, cancel).await {
            polled.polled += 1;
            // What each poll queued, recorded or failed with, poll_source said in the log.
            if let Err(e) = result {
                match e {
                    PollError::Busy => tracing::info!("source {name}: another process is polling it now"),
                    PollError::Failed(_) => polled.failed += 1,
                    e @ (PollError::NotPolled(_) | PollError::State(_)) => {
                        polled.failed += 1;
                        tracing::warn!("source {name}: not polled: {e}");
                    }
                }
            }
        }
    }
    polled
}

/// `--dry-run`: what a tick would fire and which events it would process, one line each on
/// stdout, with nothing locked, claimed or written.
fn dry(
    root: &Path,
    engines: &[Arc<Engine>],
    index: &Arc<RwLock<Index>>,
    sources: bool,
    out: &mut impl Write,
) -> Result<u8> {
    for engine in engines.iter().filter(|e| e.unattended_runs()) {
        let due =
            if sources { crate::sources::poller::due_now(engine, engine.clock.now()) } else { Vec::new() };
        for (name, cfg) in due {
            writeln!(out, "would poll source {} ({})", terminal(&name), cfg.kind.name())?;
        }
        let source = IndexSource { index: index.clone(), root: engine.root.clone() };
        let scheduler = Arc::new(Scheduler::one_shot(engine.clone(), Arc::new(source), Firing::DryRun));
        for (path, kind) in scheduler.pass(&mut Memory::default()).fired {
            writeln!(out, "would fire {} ({kind})", terminal(NotePath::of_or_whole(root, &path).as_str()))?;
        }
        dry_events(root, engine, engine.clock.now(), out)?;
    }
    Ok(0)
}

/// The pending events of `engine`'s root, oldest first, as a tick would take them (routing,
/// which may ask a model, is not done: which notes they reach is the routing's to decide).
fn dry_events(root: &Path, engine: &Engine, now: DateTime<Utc>, out: &mut impl Write) -> Result<()> {
    let pending = crate::events::pending_events(&engine.root);
    if pending.is_empty() {
        return Ok(());
    }
    if let Some(at) = crate::events::next_routing_retry(&engine.root).filter(|at| *at > now) {
        let at = crate::ide::text::at_local(at, now, &engine.zone);
        let queue = NotePath::of_or_whole(root, &engine.root.join(".livenote/events/pending"));
        writeln!(
            out,
            "would process no event of {}: {} wait for a routing retry at {at}",
            terminal(queue.as_str()),
            crate::text::count(pending.len(), "event")
        )?;
        return Ok(());
    }
    for path in pending {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let line = match crate::events::read_event_file(&path) {
            Ok(e) => {
                let target = e.target_file_path.as_deref().map(|t| format!(" for {t}")).unwrap_or_default();
                format!("would process event {} ({} {}{target})", e.id, e.source, e.kind)
            }
            Err((error, _)) => format!("would process event {name} (malformed: {error})"),
        };
        writeln!(out, "{}", terminal(&line))?;
    }
    Ok(())
}

/// The event runs of a tick's queue pass, each outcome also sent to the tick, which waits for
/// them and exits with what they were.
struct Reporting {
    inner: EngineRunner,
    tx: UnboundedSender<(PathBuf, Outcome)>,
}

impl EventRunner for Reporting {
    fn trusted(&self) -> bool {
        self.inner.trusted()
    }

    fn now(&self) -> DateTime<Utc> {
        self.inner.now()
    }

    fn run<'a>(
        &'a self,
        note: &'a EventNote,
        event: &'a Event,
        context: String,
        cancel: CancellationToken,
    ) -> crate::model::BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let outcome = self.inner.run(note, event, context, cancel).await;
            // The tick gone (a signal) has nothing left to count.
            let _ = self.tx.send((note.path.clone(), outcome.clone()));
            outcome
        })
    }

    fn done_keep(&self) -> Option<usize> {
        self.inner.done_keep()
    }

    fn may_run(&self, note: &EventNote) -> bool {
        self.inner.may_run(note)
    }

    fn last_run(&self, run_id: &str) -> Option<crate::cost::LastRun> {
        self.inner.last_run(run_id)
    }

    fn poll_interval(&self) -> Option<Duration> {
        self.inner.poll_interval()
    }
}
