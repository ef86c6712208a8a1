//! `livenote undo NOTE [--force]`: restore the body from before the latest run that changed it.
//! Refuses (exit 1) when the body was edited since that run, naming the lines, unless
//! `--force`; the current body is saved in history first, so an undo can itself be undone.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::runs::history::UndoError;
use crate::runs::{DiskIo, Engine};
use crate::schedule::Zone;
use crate::workspace::trust::TrustStore;

/// The engine of the workspace a note belongs to (as `livenote run` finds it).
pub fn engine_for(note: &Path) -> Result<(Engine, PathBuf)> {
    let path = crate::workspace::given::note(note)?;
    let root = crate::workspace::note_root(&path);
    let config = crate::config::Config::load_logged(&root);
    let engine = Engine::new(
        &root,
        super::watch::clock(None),
        Zone::Local,
        Arc::new(DiskIo),
        config,
        TrustStore::user(),
    );
    Ok((engine, path))
}

pub fn run(note: &Path, force: bool, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    let (engine, path) = engine_for(note)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    match runtime.block_on(engine.undo_last_run(&path, force)) {
        Ok(done) => {
            writeln!(
                out,
                "undid run {} of {} (the body before this undo is kept as run {}; `livenote undo` again restores it)",
                done.undid,
                engine.rel(&path),
                done.id
            )?;
            Ok(0)
        }
        Err(UndoError::Io(e)) => anyhow::bail!("undo {}: {e}", note.display()),
        Err(e) => {
            writeln!(err, "livenote: undo {}: {e}", note.display())?;
            Ok(1)
        }
    }
}
