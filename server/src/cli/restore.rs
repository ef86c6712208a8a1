//! `livenote restore NOTE RUN [--force]`: put back the body kept from before run RUN (any run
//! `livenote history` marks `snapshot`). Itself undoable: the current body is kept in history
//! first, and `livenote undo` brings it back. Refuses (exit 1) when the body was edited since
//! the latest run left it, naming the lines, unless `--force`, as `livenote undo` does.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::runs::history::UndoError;

pub fn run(note: &Path, run: &str, force: bool, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    let (engine, path) = super::undo::engine_for(note)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    match runtime.block_on(engine.restore_run(&path, run, force)) {
        Ok(done) => {
            writeln!(
                out,
                "restored the body of {} from before run {} (the body before this restore is kept as run {}; `livenote undo` brings it back)",
                engine.rel(&path),
                done.undid,
                done.id
            )?;
            Ok(0)
        }
        Err(UndoError::Io(e)) => anyhow::bail!("restore {}: {e}", note.display()),
        Err(e) => {
            writeln!(err, "livenote: restore {}: {e}", note.display())?;
            Ok(1)
        }
    }
}
