//! `livenote run NOTE [--context TEXT]`: one manual run, streaming its progress to stderr.
//! A manual run is the user's consent: it ignores `active` and backoff, and runs even in an
//! untrusted folder, but there with the user's own configuration only. A run that needs the
//! folder's untrusted `.livenote.toml` does not start: it says how to trust the folder.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use crate::providers::TriggerKind;
use crate::runs::{DiskIo, Engine, Outcome, RunSpec};
use crate::schedule::Zone;
use crate::workspace::trust::TrustStore;

pub fn run(
    note: PathBuf,
    context: Option<String>,
    dir: Option<PathBuf>,
    clock_file: Option<PathBuf>,
) -> Result<u8> {
    run_as(note, context, dir, clock_file, None)
}

/// `make-live --run`: the first fill of a note made live at `since`, once. A `livenote watch`
/// (or an editor) beside it sees the new block due at once and may fill it first: then this
/// run waits for that one to end and reports it rather than running the note a second time.
/// The note's lock is taken before its `lastAttemptAt` is looked at and kept into the run
/// ([`Engine::run_holding`]), so nothing can start in between.
pub fn fill(
    note: PathBuf,
    dir: Option<PathBuf>,
    clock_file: Option<PathBuf>,
    since: DateTime<Utc>,
) -> Result<u8> {
    run_as(note, None, dir, clock_file, Some(since))
}

fn run_as(
    note: PathBuf,
    context: Option<String>,
    dir: Option<PathBuf>,
    clock_file: Option<PathBuf>,
    fill_since: Option<DateTime<Utc>>,
) -> Result<u8> {
    let path = crate::workspace::given::note(&note)?;
    let root = match dir {
        // A folder inside it with its own `.livenote.toml` is the note's root.
        Some(d) => crate::workspace::roots::owner(
            &crate::workspace::given::folder_or_note(&d).context("--workspace")?,
            &path,
        ),
        None => crate::workspace::note_root(&path),
    };
    let engine = Engine::new(
        &root,
        super::watch::clock(clock_file),
        Zone::Local,
        Arc::new(DiskIo),
        crate::config::Config::load_logged(&root),
        TrustStore::user(),
    );
    if let Some(error) = engine.needs_trust(&path) {
        let _ = writeln!(std::io::stderr(), "livenote: nothing ran: {error}");
        return Ok(1);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    let rel = engine.rel(&path);
    let outcome = runtime.block_on(async {
        let mut shutdown = super::signal::Shutdown::listen();
        let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Manual, context, event: None };
        // The run's steps (provider, process, tool calls) are progress, not news: `-v` shows
        // them; by default only the outcome is printed.
        let mut show = |e: &crate::providers::RunEvent| {
            // The start event names the note for transcripts; here the line names it already.
            let message = match e.message.strip_prefix(rel.as_str()) {
                Some(rest) if e.kind == "start" => rest.trim_start(),
                _ => e.message.as_str(),
            };
            // The end says what the run cost, as the scheduler's line does.
            let cost = e.data.as_ref().and_then(crate::runs::costs::totals_of);
            let cost = cost.map(|t| format!(" ({})", t.brief())).unwrap_or_default();
            tracing::info!("{} {rel}: {message}{cost}", e.kind);
        };
        let run = async {
            match fill_since {
                Some(since) => fill_once(&engine, spec, since, &mut show).await,
                None => engine.run(spec, &mut show).await,
            }
        };
        tokio::select! {
            o = run => o,
            signal = shutdown.recv() => {
                tracing::info!("stop {rel}: {signal}");
                engine.stop(&path);
                Outcome::Stopped { run_id: String::new() }
            }
        }
    });
    let mut out = std::io::stdout().lock();
    match outcome {
        Outcome::Done { summary, .. } => {
            writeln!(out, "{summary}")?;
            Ok(0)
        }
        Outcome::Failed { error, .. } => {
            let _ = writeln!(std::io::stderr(), "livenote: run failed: {error}");
            Ok(1)
        }
        Outcome::Stopped { .. } => {
            let _ = writeln!(std::io::stderr(), "livenote: stopped");
            Ok(1)
        }
        Outcome::Skipped(reason) => {
            let _ = writeln!(std::io::stderr(), "livenote: nothing ran: {reason}");
            Ok(1)
        }
    }
}

/// How often [`fill_once`] looks whether another process's run of the note has ended.
const FILL_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Run the note unless a run started at or after `since` (another process's): then its
/// outcome, once it has ended, as the note records it.
async fn fill_once(
    engine: &Engine,
    spec: RunSpec,
    since: DateTime<Utc>,
    show: &mut (dyn FnMut(&crate::providers::RunEvent) + Send),
) -> Outcome {
    let rel = engine.rel(&spec.path);
    loop {
        let lock = match engine.lock_for_edit(&spec.path) {
            Ok(lock) => lock,
            Err(busy) => {
                tracing::debug!("fill {rel}: {busy}");
                tokio::time::sleep(FILL_POLL).await;
                continue;
            }
        };
        let text = match engine.io.read(&spec.path) {
            Ok(t) => t,
            Err(e) => return Outcome::Skipped(format!("cannot read the note: {e}")),
        };
        let live = crate::note::analyze(&text, &crate::note::Options::default()).live;
        match live.filter(|l| l.last_attempt_at.is_some_and(|a| a >= since)) {
            Some(live) => {
                drop(lock);
                tracing::info!("fill {rel}: another livenote process ran it since it was made live");
                return recorded_outcome(&live);
            }
            None => return engine.run_holding(spec, lock, show).await,
        }
    }
}

/// The outcome of the note's latest run as its runtime fields record it (a run another process
/// made): a success after the attempt, a stop, else the failure.
fn recorded_outcome(live: &crate::note::model::Live) -> Outcome {
    let run_id = live.last_run_id.clone().unwrap_or_default();
    let attempt = live.last_attempt_at;
    if crate::status::latest_attempt_stopped(live) {
        return Outcome::Stopped { run_id };
    }
    match (live.last_run_at, &live.last_run_error) {
        (Some(done), _) if attempt.is_none_or(|a| done >= a) => {
            Outcome::Done { run_id, summary: live.last_run_summary.clone().unwrap_or_default() }
        }
        (_, Some(error)) => Outcome::Failed { run_id, error: error.clone() },
        _ => Outcome::Skipped("another livenote process ran it; its result is not in the note".to_owned()),
    }
}
