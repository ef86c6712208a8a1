//! `livenote run NOTE [--context TEXT]`: one manual run, streaming its progress to stderr.
//! A manual run is the user's consent: it ignores `active` and backoff, and runs even in an
//! untrusted folder, but there with the user's own configuration only. A run that needs the
//! folder's untrusted `.livenote.toml` does not start: it says how to trust the folder.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};

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
        let run = engine.run(spec, &mut show);
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
