//! Where a run reads the note and applies its edits. On disk: compare-and-swap atomic writes
//! that recompute the edits against the fresh text when another program changed the note.
//! In an editor: [`BufferIo`] sends versioned edits to the open buffer and counts one as
//! applied only once the buffer shows it (an editor's `applied: true` is not proof), else
//! recomputes it against the buffer's current version and sends it again.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::time::Duration;

use crate::text::{TextEdit, edit};
use crate::workspace::read::ReadError;
use crate::workspace::{self, write::WriteError};

/// Computes edits against the note's current text (called again after a conflict).
pub type Compute<'a> = &'a (dyn Fn(&str) -> Result<Vec<TextEdit>, String> + Send + Sync);

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub trait NoteIo: Send + Sync {
    /// The note's current text.
    fn read(&self, path: &Path) -> Result<String, String>;
    /// Apply edits computed from the current text, retrying on a concurrent change. Returns
    /// the note's text with the edits in it (the text as it was when there were none).
    fn apply<'a>(&'a self, path: &'a Path, compute: Compute<'a>) -> BoxFuture<'a, Result<String, String>>;
    /// Whether a run starting now would write `path` straight to the file (an io of editor
    /// buffers whose note is not open): the run then keeps to the file for all its writes,
    /// even if the note opens meanwhile. `false`: the run uses this io as it is.
    fn bypasses_buffers(&self, _path: &Path) -> bool {
        false
    }
    /// Whether a run's writes to `path` go to an editor's buffer, where no other process sees
    /// them until the user saves (the run store then records the run: `runs::attempts`).
    fn edits_buffer(&self, _path: &Path) -> bool {
        false
    }
}

/// The edits `compute` wants on `text`, without those that would write what is already there
/// (rewriting a runtime field with its own value): an empty list means the note already holds
/// the change.
fn effective(text: &str, compute: Compute<'_>) -> Result<Vec<TextEdit>, String> {
    let mut edits = compute(text)?;
    edits.retain(|e| text.get(e.range.clone()) != Some(e.new_text.as_str()));
    Ok(edits)
}

/// Notes on disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiskIo;

/// How often a write is recomputed when the note keeps changing under it.
const ATTEMPTS: usize = 5;

impl DiskIo {
    pub fn apply_sync(path: &Path, compute: Compute<'_>) -> Result<String, String> {
        for _ in 0..ATTEMPTS {
            let text = workspace::read_note(path).map_err(|e| match e {
                // Another program deleted or renamed it: say so, and never create it again.
                ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    "the note was deleted or moved".to_owned()
                }
                e => e.to_string(),
            })?;
            let edits = effective(&text, compute)?;
            if edits.is_empty() {
                return Ok(text);
            }
            let new = edit::apply(&text, &edits).map_err(|e| e.to_string())?;
            match workspace::write::write_if_unchanged(path, &text, &new) {
                Ok(()) => return Ok(new),
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

    fn apply<'a>(&'a self, path: &'a Path, compute: Compute<'a>) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move { Self::apply_sync(path, compute) })
    }
}

/// What [`BufferIo`] needs from an editor: the open buffer of a note, a way to send it a
/// versioned edit, and a signal when any buffer changes. The language server implements it
/// over LSP; tests implement it with editors that misbehave.
pub trait Editor: Send + Sync {
    /// The buffer's text and version, when the note is open.
    fn open(&self, path: &Path) -> Option<(String, i32)>;
    /// Send `edits` of `text` (the buffer at `version`); the editor's answer (`applied`).
    fn send_edit<'a>(
        &'a self,
        path: &'a Path,
        version: i32,
        text: &'a str,
        edits: &'a [TextEdit],
    ) -> BoxFuture<'a, Result<bool, String>>;
    /// Changes its value whenever an open buffer changes.
    fn changes(&self) -> tokio::sync::watch::Receiver<u64>;
}

/// How many times an edit that did not show up in the buffer is recomputed and sent again.
const BUFFER_ATTEMPTS: usize = 8;

/// Notes open in an editor are edited in its buffer (undoable there); others on disk.
pub struct BufferIo<E> {
    pub editor: E,
    /// How long an edit the editor accepted may take to show up in the buffer before it counts
    /// as lost and is sent again (Neovim, for one, answers `applied: true` for an edit it
    /// rejected as stale).
    pub settle: Duration,
}

impl<E: Editor> BufferIo<E> {
    pub fn new(editor: E) -> Self {
        BufferIo { editor, settle: Duration::from_secs(2) }
    }

    /// Whether the buffer shows the edit: it holds the expected text, or the edit computed
    /// afresh on it is empty (the change is there and only the user typed elsewhere).
    fn landed(&self, path: &Path, version: i32, expected: &str, compute: Compute<'_>) -> Option<String> {
        let (text, v) = self.editor.open(path)?;
        if v == version {
            return None;
        }
        (text == expected || effective(&text, compute).is_ok_and(|e| e.is_empty())).then_some(text)
    }
}

impl<E: Editor> NoteIo for BufferIo<E> {
    fn bypasses_buffers(&self, path: &Path) -> bool {
        self.editor.open(path).is_none()
    }

    fn edits_buffer(&self, path: &Path) -> bool {
        self.editor.open(path).is_some()
    }

    fn read(&self, path: &Path) -> Result<String, String> {
        match self.editor.open(path) {
            Some((text, _)) => Ok(text),
            None => DiskIo.read(path),
        }
    }

    fn apply<'a>(&'a self, path: &'a Path, compute: Compute<'a>) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            for attempt in 0..BUFFER_ATTEMPTS {
                let mut changes = self.editor.changes();
                changes.borrow_and_update();
                let Some((text, version)) = self.editor.open(path) else {
                    return DiskIo::apply_sync(path, compute);
                };
                let edits = effective(&text, compute)?;
                if edits.is_empty() {
                    return Ok(text);
                }
                let expected = edit::apply(&text, &edits).map_err(|e| e.to_string())?;
                let applied = self.editor.send_edit(path, version, &text, &edits).await?;
                if applied {
                    let deadline = tokio::time::Instant::now() + self.settle;
                    loop {
                        if let Some(now) = self.landed(path, version, &expected, compute) {
                            return Ok(now);
                        }
                        // Closed by a note closed meanwhile: the next attempt writes the disk.
                        if self.editor.open(path).is_none() {
                            break;
                        }
                        match tokio::time::timeout_at(deadline, changes.changed()).await {
                            Ok(Ok(())) => continue,
                            Ok(Err(_)) | Err(_) => break,
                        }
                    }
                    // How the edit gets there, not news for the user: debug, not the editor's log.
                    tracing::debug!("retry {}: the edit did not show up in the buffer", path.display());
                } else {
                    tracing::debug!("retry {}: the editor rejected the edit as stale", path.display());
                    // Wait for the change that made it stale (or a moment), then recompute.
                    let pause = Duration::from_millis(20 * (attempt as u64 + 1));
                    let _ = tokio::time::timeout(pause, changes.changed()).await;
                }
            }
            Err(format!("the editor did not apply the run's edit; gave up after {BUFFER_ATTEMPTS} attempts"))
        })
    }
}
