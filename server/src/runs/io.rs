//! Where a run reads the note and applies its edits. On disk: compare-and-swap atomic writes
//! that recompute the edits against the fresh text when another program changed the note.
//! The language server provides its own `NoteIo` for notes open in the editor.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use crate::text::{TextEdit, edit};
use crate::workspace::read::ReadError;
use crate::workspace::{self, write::WriteError};

/// Computes edits against the note's current text (called again after a conflict).
pub type Compute<'a> = &'a (dyn Fn(&str) -> Result<Vec<TextEdit>, String> + Send + Sync);

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub trait NoteIo: Send + Sync {
    /// The note's current text.
    fn read(&self, path: &Path) -> Result<String, String>;
    /// Apply edits computed from the current text, retrying on a concurrent change.
    fn apply<'a>(&'a self, path: &'a Path, compute: Compute<'a>) -> BoxFuture<'a, Result<(), String>>;
}

/// Notes on disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiskIo;

/// How often a write is recomputed when the note keeps changing under it.
const ATTEMPTS: usize = 5;

impl DiskIo {
    pub fn apply_sync(path: &Path, compute: Compute<'_>) -> Result<(), String> {
        for _ in 0..ATTEMPTS {
            let text = workspace::read_note(path).map_err(|e| match e {
                // Another program deleted or renamed it: say so, and never create it again.
                ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    "the note was deleted or moved".to_owned()
                }
                e => e.to_string(),
            })?;
            let edits = compute(&text)?;
            if edits.is_empty() {
                return Ok(());
            }
            let new = edit::apply(&text, &edits).map_err(|e| e.to_string())?;
            match workspace::write::write_if_unchanged(path, &text, &new) {
                Ok(()) => return Ok(()),
                Err(WriteError::Changed) => continue,
                Err(e) => return Err(e.to_string()),
            }
        }
        Err(format!("the note kept changing on disk; gave up after {ATTEMPTS} attempts"))
    }
}

impl NoteIo for DiskIo {
    fn read(&self, path: &Path) -> Result<String, String> {
        workspace::read_note(path).map_err(|e| e.to_string())
    }

    fn apply<'a>(&'a self, path: &'a Path, compute: Compute<'a>) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move { Self::apply_sync(path, compute) })
    }
}
