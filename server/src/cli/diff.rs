//! `livenote diff NOTE [RUN]`: what a run changed in the note's body, as a unified diff from
//! the body kept from before the run to the body it left. Line numbers count within the part
//! of the note a run rewrites (below the frontmatter and the `# title` line), since the lines
//! above it may have changed since. Without RUN: the latest run that changed the body.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::runs::history::UndoError;

/// Lines of context around each change.
const CONTEXT: usize = 3;

pub fn run(note: &Path, run: Option<&str>, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    let (engine, path) = super::undo::engine_for(note)?;
    let change = match engine.run_change(&path, run) {
        Ok(c) => c,
        Err(UndoError::Io(e)) => anyhow::bail!("diff {}: {e}", note.display()),
        Err(e) => {
            writeln!(err, "livenote: diff {}: {e}", note.display())?;
            return Ok(1);
        }
    };
    let rel = engine.rel(&path);
    if change.before == change.after {
        writeln!(out, "run {} left the body of {rel} as it was", change.run)?;
        return Ok(0);
    }
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(&change.before, &change.after);
    let before = format!("{rel} (before run {})", change.run);
    let after = format!("{rel} (after run {})", change.run);
    write!(
        out,
        "{}",
        diff.unified_diff().context_radius(CONTEXT).missing_newline_hint(true).header(&before, &after)
    )?;
    Ok(0)
}
