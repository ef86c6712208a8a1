//! Events (SPEC section 5): a file queue under `<workspace>/.livenote/events/` that any
//! program can feed, consumed strictly in id order and exactly once across processes.
//!
//! Layout: `pending/<id>.json` (dropped by producers, written atomically by
//! [`create_event`]), `processing/<id>.json` (claimed by one processor), `done/<id>.json`
//! (the event enriched with `processedAt`, `candidateFilePaths`, `runIds`, `error`).
//!
//! Exactly once: a processor first takes the queue lock (`events/.lock`, an advisory file lock
//! that the OS releases if the process dies), so one process at a time walks the queue and
//! the order holds across processes. It then claims each event by renaming it from `pending/`
//! into `processing/`: the rename is atomic, and a loser gets "not found" and moves on, which
//! keeps events exactly once even where file locks do not work. The claim is locked while it
//! is processed; an unlocked claim found later belongs to a processor that crashed and goes
//! back to `pending/` (on file systems without locks, once it is older than
//! [`STALE_CLAIM`]). A crash mid-event therefore replays that event: at least once for
//! crashes, exactly once otherwise.
//!
//! Pass 1 picks candidates among active, valid live notes with `eventMatchCriteria`: the note
//! named by `targetFilePath`, or whatever a [`Router`] picks in batches of [`BATCH_SIZE`].
//! A batch that fails sends the event back to `pending/` to be routed again after a backoff
//! ([`routing_backoff`]); it holds the events behind it, up to [`MAX_ROUTING_ATTEMPTS`].
//! Pass 2 is the agent's own decision in an `event` run of each candidate, in order, through
//! an [`EventRunner`] (the run engine in production).

mod processing;
mod queue;
pub mod recent;
mod routing;
mod runner;

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use processing::*;
pub use queue::progress::*;
pub use queue::*;
pub use routing::*;
pub use runner::*;

/// Notes per routing request: enough to route a large workspace in a few calls, small enough
/// for a short prompt that a small model still reads carefully.
pub const BATCH_SIZE: usize = 20;
/// The largest payload `livenote event` and [`create_event`] accept.
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;
/// Event files larger than this are not parsed; they go to `done/` as malformed.
pub const MAX_EVENT_FILE_BYTES: usize = 4 * 1024 * 1024;
/// The largest event file [`create_event`] writes: under [`MAX_EVENT_FILE_BYTES`] with room
/// for what a routing retry adds to it (`requeue_with`), so an event once queued is read back.
pub const MAX_NEW_EVENT_BYTES: usize = MAX_EVENT_FILE_BYTES - 64 * 1024;
/// Where file locks do not work, a claim this old is taken for a crashed processor's.
pub const STALE_CLAIM: Duration = Duration::from_secs(10 * 60);
/// How much of the payload a run's context carries (the agent can read files for more).
pub(super) const MAX_CONTEXT_PAYLOAD_CHARS: usize = 100_000;
/// How much of the payload the routing model sees: enough to tell what the event is about.
pub(super) const MAX_ROUTING_PAYLOAD_CHARS: usize = 6_000;
/// How much of a malformed file's text `done/` keeps under `raw`.
pub(super) const MAX_RAW_CHARS: usize = 64 * 1024;

/// One event, as producers write it. Keys this struct does not know are kept in `extra` and
/// written back to `done/` unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub id: String,
    /// Who produced it (`gmail`, `calendar`, `cli`, ...).
    pub source: String,
    /// What happened (`email.synced`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// RFC 3339.
    pub created_at: String,
    /// A string (markdown, plain text) or any JSON value.
    pub payload: Value,
    /// A workspace-relative note path: skip routing and offer the event to that note alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_file_path: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Event {
    /// The event as a run gets it as data (`RunRequest::event`).
    pub fn for_run(&self) -> crate::providers::TriggerEvent {
        crate::providers::TriggerEvent {
            id: self.id.clone(),
            source: self.source.clone(),
            kind: self.kind.clone(),
            created_at: self.created_at.clone(),
            payload: self.payload.clone(),
            target_file_path: self.target_file_path.clone(),
        }
    }

    /// The payload as text: a string as it is, other JSON pretty-printed.
    pub fn payload_text(&self) -> String {
        match &self.payload {
            Value::String(s) => s.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        }
    }
}

/// Read and check one event file's text.
pub fn parse_event(text: &str) -> Result<Event, String> {
    let event: Event = serde_json::from_str(text).map_err(|e| format!("invalid event: {e}"))?;
    let blank = |s: &str| s.trim().is_empty();
    if blank(&event.id) {
        return Err("invalid event: `id` is empty".to_owned());
    }
    if blank(&event.source) {
        return Err("invalid event: `source` is empty".to_owned());
    }
    if blank(&event.kind) {
        return Err("invalid event: `type` is empty".to_owned());
    }
    if blank(&event.created_at) {
        return Err("invalid event: `createdAt` is empty".to_owned());
    }
    if event.payload.is_null() {
        return Err("invalid event: `payload` is null".to_owned());
    }
    Ok(event)
}

#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The caller's input cannot make an event.
    #[error("{0}")]
    Invalid(String),
    /// The event's file would be larger than the queue reads back ([`MAX_NEW_EVENT_BYTES`]).
    #[error("{0}")]
    TooLarge(String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
}

pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> EventError + '_ {
    move |source| EventError::Io { path: path.display().to_string(), source }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
