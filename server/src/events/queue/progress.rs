//! How far an event got: `.livenote/events/progress/<id>.json` holds the candidates routing
//! chose and the result of each candidate that finished, written atomically before the next
//! candidate runs. A processor that died mid-event left it behind; the event, claimed again,
//! is offered only to the candidates it does not list as finished, and routing is not asked
//! again (a model could answer differently the second time).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{open_event, real_queue_dir};
use crate::workspace::write::write_atomic;

/// The largest progress file read back: candidates and their one-line results.
const MAX_PROGRESS_BYTES: u64 = 4 * 1024 * 1024;

/// One event's progress through pass 2.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// The candidates pass 1 chose, in the order they run.
    pub candidates: Vec<String>,
    /// One `done/` result (`filePath`, `runId`, `status`, `message`) per finished candidate.
    pub results: Vec<Value>,
    /// Errors so far: routing's, and those of the finished candidates.
    pub errors: Vec<String>,
}

impl Progress {
    /// Whether `rel` finished in an earlier attempt at this event.
    pub fn finished(&self, rel: &str) -> bool {
        self.results.iter().any(|r| r["filePath"] == rel)
    }
}

/// `<root>/.livenote/events/progress/<id>.json`, when the folder is a real one.
fn progress_path(root: &Path, id: &str) -> Option<PathBuf> {
    // An id names a file in `progress/`, never a path elsewhere.
    if id.is_empty() || id.starts_with('.') || id.contains(['/', '\\']) {
        return None;
    }
    Some(real_queue_dir(root, "progress")?.join(format!("{id}.json")))
}

/// The progress an earlier attempt recorded for event `id`. A file that cannot be read or
/// parsed is reported and taken as no progress: the event then runs as a new one, which is
/// what happened before progress was kept.
pub fn read_progress(root: &Path, id: &str) -> Option<Progress> {
    let path = progress_path(root, id)?;
    let mut bytes = Vec::new();
    match open_event(&path, std::fs::OpenOptions::new().read(true)) {
        Ok(f) => {
            if let Err(e) = f.take(MAX_PROGRESS_BYTES).read_to_end(&mut bytes) {
                tracing::warn!("event {id}: cannot read its progress: {e}; every candidate runs again");
                return None;
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!("event {id}: cannot read its progress: {e}; every candidate runs again");
            return None;
        }
    }
    match serde_json::from_slice(&bytes) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!("event {id}: its progress is unreadable ({e}); every candidate runs again");
            None
        }
    }
}

/// Record `progress` for event `id`, atomically and synced. A failure is logged: the event
/// still goes on, and only a crash before it is done would run its finished candidates again.
pub fn write_progress(root: &Path, id: &str, progress: &Progress) {
    let Some(path) = progress_path(root, id) else {
        tracing::warn!("event {id}: no progress folder; a crash now would run its candidates again");
        return;
    };
    let text = match serde_json::to_string_pretty(progress) {
        Ok(t) => t + "\n",
        Err(e) => {
            tracing::warn!("event {id}: cannot encode its progress: {e}");
            return;
        }
    };
    if let Err(e) = write_atomic(&path, &text) {
        tracing::warn!(
            "event {id}: cannot record its progress: {e}; a crash now would run its candidates again"
        );
    }
}

/// Forget event `id`'s progress (it is done).
pub fn remove_progress(root: &Path, id: &str) {
    let Some(path) = progress_path(root, id) else { return };
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("event {id}: cannot remove its progress: {e}"),
    }
}
