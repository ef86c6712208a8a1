//! `<workspace>/.livenote/`, livenote's state folder: its sub-folders reached without following
//! a link (`confine::real_dir`), the folder's own `.gitignore`, and the file-name-safe key of a
//! note that names its per-note files (history, locks, memory). Here, below `runs/` and
//! `memory`, so that both name a note's files the same way.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{STATE_DIR, confine};

/// `<root>/.livenote/<sub>` as a real folder (no link anywhere below the root), created on
/// demand with the folder's own `.gitignore`. Every writer of `.livenote/` goes through here.
pub fn state_dir(root: &Path, sub: &str) -> std::io::Result<PathBuf> {
    let top = confine::real_dir(root, Path::new(STATE_DIR), true)?;
    ensure_gitignore(&top);
    confine::real_dir(&top, Path::new(sub), true)
}

/// `<root>/.livenote/<sub>` if it exists as a real folder; `None` when absent, `Err` when
/// refused (a link, not a folder).
pub fn existing_state_dir(root: &Path, sub: &str) -> std::io::Result<Option<PathBuf>> {
    match confine::real_dir(root, &Path::new(STATE_DIR).join(sub), false) {
        Ok(p) => Ok(Some(p)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Write `.livenote/.gitignore` if nothing is there: created exclusively, never through a
/// link (a link or anything else already there is left alone). Best effort.
fn ensure_gitignore(top: &Path) {
    let path = top.join(".gitignore");
    if std::fs::symlink_metadata(&path).is_ok() {
        return;
    }
    // Run state is machine-local: history, transcripts, locks and events stay out of git.
    let text = "# livenote's run state (history, transcripts, locks)\n*\n";
    let written = confine::open_nofollow(&path, OpenOptions::new().write(true).create_new(true))
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::AlreadyExists
    {
        tracing::warn!("write {}: {e}", path.display());
    }
}

/// A stable file-name-safe key for a note: its workspace-relative path, flattened.
pub fn note_key(rel: &str) -> String {
    let mut k: String = rel
        .chars()
        .map(|c| if c.is_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .collect();
    if k.len() > 120 {
        k.truncate(k.char_indices().nth(100).map_or(k.len(), |(i, _)| i));
    }
    // A short hash keeps keys unique when flattening maps two paths to one string.
    let h =
        rel.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("{k}-{:08x}", h as u32)
}
