//! The queue on disk: `pending/`, `processing/`, `done/` under `.livenote/events/`, creating
//! events atomically, claiming them by rename under the queue lock, and giving back the claims
//! of a processor that died.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::runs::timestamp;

use std::time::SystemTime;

use super::*;
use crate::workspace::write::write_atomic;

/// How far each event got (its candidates, each finished one's result): part of the queue's
/// files, cleared with the claim that owns it.
pub mod progress;

// ---------------------------------------------------------------------------------------------
// The queue's folders

/// `<root>/.livenote/events`.
pub fn events_dir(root: &Path) -> PathBuf {
    root.join(".livenote").join("events")
}

pub fn pending_dir(root: &Path) -> PathBuf {
    events_dir(root).join("pending")
}

pub fn processing_dir(root: &Path) -> PathBuf {
    events_dir(root).join("processing")
}

pub fn done_dir(root: &Path) -> PathBuf {
    events_dir(root).join("done")
}

/// Create the queue's folders (and `.livenote/.gitignore`, as the run store does), each a
/// real folder: a linked `.livenote`, `events` or `pending/` is refused, never written through.
pub fn ensure_dirs(root: &Path) -> std::io::Result<()> {
    for sub in ["events/pending", "events/processing", "events/done", "events/progress"] {
        crate::runs::store::state_dir(root, sub)?;
    }
    Ok(())
}

/// Check the queue's folders without creating any: `Err` when one that exists is refused (a
/// link, not a folder), so that a linked `.livenote` is reported when a watcher starts rather
/// than at the first event.
pub fn check_dirs(root: &Path) -> std::io::Result<()> {
    for sub in ["events/pending", "events/processing", "events/done", "events/progress"] {
        match crate::workspace::confine::real_dir(
            root,
            &Path::new(crate::workspace::STATE_DIR).join(sub),
            false,
        ) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `.livenote/events/<sub>` when it is a real folder (no link on the way); `None` otherwise.
pub(super) fn real_queue_dir(root: &Path, sub: &str) -> Option<PathBuf> {
    crate::workspace::confine::real_dir(root, &Path::new(".livenote/events").join(sub), false).ok()
}

/// Open an event file of the queue: never through a link, only a regular file, never
/// blocking on a FIFO.
pub(super) fn open_event(path: &Path, opts: &mut OpenOptions) -> std::io::Result<File> {
    crate::workspace::confine::open_nofollow(path, opts)
}

/// Whether a changed path is an event file in `pending/` (for file watchers).
pub fn is_pending_path(root: &Path, path: &Path) -> bool {
    path.parent() == Some(pending_dir(root).as_path()) && is_event_file(path)
}

/// `<name>.json`, not hidden: temp files and editors' swap files are never events.
pub(super) fn is_event_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    !name.starts_with('.') && name.len() > ".json".len() && name.ends_with(".json")
}

/// The event files (regular files only: a link or FIFO is left where it is) of a queue
/// folder, sorted by name: ids are time-based, so this is id order. None when the folder is
/// absent or a link.
pub(super) fn event_files(root: &Path, sub: &str) -> Vec<PathBuf> {
    let Some(dir) = real_queue_dir(root, sub) else { return Vec::new() };
    crate::workspace::confine::regular_files(&dir).into_iter().filter(|p| is_event_file(p)).collect()
}

/// Pending events, oldest first.
pub fn pending_events(root: &Path) -> Vec<PathBuf> {
    event_files(root, "pending")
}

/// Whether a pass over the queue has anything to take: pending events, or claims (an
/// abandoned one goes back to `pending/`).
pub fn has_work(root: &Path) -> bool {
    !event_files(root, "pending").is_empty() || !event_files(root, "processing").is_empty()
}

/// The `done/` record of an event, if processed.
pub fn read_done(root: &Path, id: &str) -> Option<Value> {
    // An id names a file in `done/`, never a path elsewhere.
    if id.is_empty() || id.starts_with('.') || id.contains(['/', '\\']) {
        return None;
    }
    let dir = real_queue_dir(root, "done")?;
    let path = dir.join(format!("{id}.json"));
    let mut text = String::new();
    open_event(&path, OpenOptions::new().read(true)).ok()?.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

pub(super) fn id_of(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Producing

/// One generator per process, so ids created in the same millisecond still sort in creation
/// order.
pub(super) static IDS: Mutex<ulid::Generator> = Mutex::new(ulid::Generator::new());

/// A new sortable, time-based id (a ULID).
pub fn new_id() -> String {
    let mut g = IDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // The generator fails only after 2^80 ids in one millisecond; a plain ULID is fine then.
    g.generate().unwrap_or_else(|_| ulid::Ulid::new()).to_string()
}

/// An event checked and encoded, not yet queued ([`write_event`]): a producer that must answer
/// for it (a webhook) learns first whether it can be queued at all.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub event: Event,
    /// What its file holds.
    text: String,
}

/// Queue an event ([`new_event`], then [`write_event`]). `target` is a workspace-relative
/// note path.
pub fn create_event(
    root: &Path,
    source: &str,
    kind: &str,
    payload: Value,
    target: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Event, EventError> {
    let new = new_event(root, source, kind, payload, target, now)?;
    write_event(root, &new)?;
    Ok(new.event)
}

/// An event with a new id, checked and encoded as its file will hold it: refused when that
/// file would be more than the queue reads back ([`MAX_NEW_EVENT_BYTES`]). The payload is
/// measured as written, escapes and indentation included: a megabyte of control characters
/// is six as JSON.
pub fn new_event(
    root: &Path,
    source: &str,
    kind: &str,
    payload: Value,
    target: Option<&str>,
    now: DateTime<Utc>,
) -> Result<NewEvent, EventError> {
    let source = source.trim();
    let kind = kind.trim();
    if source.is_empty() || kind.is_empty() {
        return Err(EventError::Invalid("an event needs a non-empty source and type".to_owned()));
    }
    if payload.is_null() {
        return Err(EventError::Invalid("an event needs a payload".to_owned()));
    }
    let size = match &payload {
        Value::String(s) => s.len(),
        other => serde_json::to_string(other).map(|s| s.len()).unwrap_or(usize::MAX),
    };
    if size > MAX_PAYLOAD_BYTES {
        return Err(EventError::Invalid(format!(
            "payload larger than {} MiB",
            MAX_PAYLOAD_BYTES / (1024 * 1024)
        )));
    }
    let target = target.map(|t| normalize_target(root, t)).filter(|t| !t.is_empty());
    let event = Event {
        id: new_id(),
        source: source.to_owned(),
        kind: kind.to_owned(),
        created_at: timestamp(now),
        payload,
        target_file_path: target,
        extra: Map::new(),
    };
    let mut text = serde_json::to_string_pretty(&event)
        .map_err(|e| EventError::Invalid(format!("cannot encode the event: {e}")))?;
    text.push('\n');
    if text.len() > MAX_NEW_EVENT_BYTES {
        return Err(EventError::TooLarge(format!(
            "the event would take {:.1} MiB as JSON (escapes and indentation included), more than the {:.1} MiB the queue takes",
            mib(text.len()),
            mib(MAX_NEW_EVENT_BYTES)
        )));
    }
    Ok(NewEvent { event, text })
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Put `new` into the queue: written to a temp file in `events/`, flushed to the disk, then
/// renamed into `pending/`, so a watcher never sees half a file and a queued event survives a
/// crash.
pub fn write_event(root: &Path, new: &NewEvent) -> Result<(), EventError> {
    let dir = events_dir(root);
    ensure_dirs(root).map_err(io_err(&dir))?;
    let dest = pending_dir(root).join(format!("{}.json", new.event.id));
    let mut tmp =
        tempfile::Builder::new().prefix(".event-").suffix(".tmp").tempfile_in(&dir).map_err(io_err(&dir))?;
    tmp.write_all(new.text.as_bytes()).map_err(io_err(&dest))?;
    tmp.as_file().sync_all().map_err(io_err(&dest))?;
    // No clobber: an id is never reused, even if two processes raced to the same one.
    tmp.persist_noclobber(&dest)
        .map_err(|e| EventError::Io { path: dest.display().to_string(), source: e.error })?;
    if let Ok(d) = File::open(pending_dir(root)) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A note path as the queue stores it: workspace-relative, without a leading `./`.
pub fn normalize_target(root: &Path, target: &str) -> String {
    // A target outside the workspace stays as written: it names no note, and the event says so.
    crate::workspace::NotePath::parse(root, target)
        .map_or_else(|| target.trim().replace('\\', "/"), crate::workspace::NotePath::into_string)
}

// ---------------------------------------------------------------------------------------------
// Claiming

/// The queue lock: one processor at a time walks the queue, across processes.
pub(super) struct QueueLock {
    _file: Option<File>,
}

impl QueueLock {
    /// `None` when another processor holds it.
    pub(super) fn acquire(root: &Path) -> Option<QueueLock> {
        let path = events_dir(root).join(".lock");
        let file = match open_event(&path, OpenOptions::new().create(true).truncate(false).write(true)) {
            Ok(f) => f,
            Err(e) => {
                // Claims alone still keep events exactly once; only cross-process order suffers.
                tracing::warn!("events {}: no queue lock: {e}", path.display());
                return Some(QueueLock { _file: None });
            }
        };
        match file.try_lock() {
            Ok(()) => Some(QueueLock { _file: Some(file) }),
            Err(std::fs::TryLockError::WouldBlock) => None,
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::debug!("events {}: file locks unsupported: {e}", path.display());
                Some(QueueLock { _file: None })
            }
        }
    }
}

/// An event claimed by this processor: its file in `processing/`, locked while we hold it.
pub(super) struct Claim {
    name: std::ffi::OsString,
    pub(super) path: PathBuf,
    file: File,
}

impl Claim {
    /// The claimed event, read through the claim's own handle: on Windows the lock is
    /// mandatory and bars every other handle, this process's too, from reading the file.
    pub(super) fn read(&self) -> Result<Event, (String, Option<String>)> {
        let mut file = &self.file;
        let mut bytes = Vec::new();
        let read =
            file.rewind().and_then(|()| file.take(MAX_EVENT_FILE_BYTES as u64 + 1).read_to_end(&mut bytes));
        event_from_bytes(read.map(|_| bytes))
    }
}

/// Claim the oldest pending event. `Ok(None)`: nothing left to claim.
pub(super) fn claim_next(root: &Path) -> std::io::Result<Option<Claim>> {
    for from in pending_events(root) {
        let Some(name) = from.file_name().map(std::ffi::OsStr::to_os_string) else { continue };
        let to = processing_dir(root).join(&name);
        if to.exists() {
            // Same id still held (or abandoned): recovery decides, not a clobbering rename.
            continue;
        }
        if let Some(claim) = try_claim(&from, name, to)? {
            return Ok(Some(claim));
        }
    }
    Ok(None)
}

/// Move `from` (in `pending/`) to `to` (in `processing/`) and lock it. `Ok(None)`: another
/// processor won the race.
pub(super) fn try_claim(
    from: &Path,
    name: std::ffi::OsString,
    to: PathBuf,
) -> std::io::Result<Option<Claim>> {
    match std::fs::rename(from, &to) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    }
    let file = match open_event(&to, OpenOptions::new().read(true).write(true)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        // Where locks are unsupported the claim stays unlocked; its age then tells recovery
        // whether it is abandoned.
        Ok(()) | Err(std::fs::TryLockError::Error(_)) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
    }
    // The claim's age counts from now, not from when the event was created.
    let _ = file.set_modified(SystemTime::now());
    Ok(Some(Claim { name, path: to, file }))
}

/// Put claims of crashed processors back into `pending/` (or drop them when `done/` already
/// has the event: the crash came after it was recorded). Called under the queue lock.
pub(super) fn recover_stale(root: &Path, stale_after: Duration) {
    for path in event_files(root, "processing") {
        let Ok(file) = open_event(&path, OpenOptions::new().read(true).write(true)) else { continue };
        let abandoned = match file.try_lock() {
            // Nobody holds it: its processor died (the OS released the lock).
            Ok(()) => true,
            Err(std::fs::TryLockError::WouldBlock) => false,
            Err(std::fs::TryLockError::Error(_)) => std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .is_some_and(|age| age >= stale_after),
        };
        if !abandoned {
            continue;
        }
        let Some(name) = path.file_name() else { continue };
        let id = id_of(&path);
        if done_dir(root).join(name).exists() {
            progress::remove_progress(root, &id);
            let _ = std::fs::remove_file(&path);
            continue;
        }
        // Its progress stays: the event, claimed again, runs only the candidates that did not
        // finish.
        match std::fs::rename(&path, pending_dir(root).join(name)) {
            Ok(()) => tracing::warn!("event {id}: recovered an abandoned claim; it runs again"),
            Err(e) => tracing::warn!("event {id}: cannot recover the abandoned claim: {e}"),
        }
    }
}

/// Read an event file with a size cap. `Err((error, raw))` when it cannot be used.
pub fn read_event_file(path: &Path) -> Result<Event, (String, Option<String>)> {
    let mut bytes = Vec::new();
    let read = open_event(path, OpenOptions::new().read(true))
        .and_then(|f| f.take(MAX_EVENT_FILE_BYTES as u64 + 1).read_to_end(&mut bytes));
    event_from_bytes(read.map(|_| bytes))
}

/// An event from the bytes read of its file (at most one past the cap).
fn event_from_bytes(read: std::io::Result<Vec<u8>>) -> Result<Event, (String, Option<String>)> {
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(e) => return Err((format!("cannot read the event: {e}"), None)),
    };
    if bytes.len() > MAX_EVENT_FILE_BYTES {
        let raw = truncate_chars(&String::from_utf8_lossy(&bytes), MAX_RAW_CHARS);
        return Err((
            format!("event file larger than {} MiB", MAX_EVENT_FILE_BYTES / (1024 * 1024)),
            Some(raw),
        ));
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let raw = truncate_chars(&String::from_utf8_lossy(e.as_bytes()), MAX_RAW_CHARS);
            return Err(("invalid event: not UTF-8".to_owned(), Some(raw)));
        }
    };
    parse_event(&text).map_err(|e| (e, Some(truncate_chars(&text, MAX_RAW_CHARS))))
}

/// Record the event in `done/`, forget its progress and release the claim, in that order: a
/// crash in between leaves a claim that recovery drops because `done/` has it. If the record
/// cannot be written (a full disk), the claimed file itself moves to `done/` so the queue
/// still moves on.
pub(super) fn finish(root: &Path, claim: &Claim, record: &Value) {
    let dest = done_dir(root).join(&claim.name);
    let text = serde_json::to_string_pretty(record).unwrap_or_default() + "\n";
    match write_atomic(&dest, &text) {
        Ok(()) => {
            progress::remove_progress(root, &id_of(&claim.path));
            if let Err(e) = std::fs::remove_file(&claim.path) {
                tracing::warn!("event {}: cannot remove the claim: {e}", id_of(&claim.path));
            }
        }
        Err(e) => {
            tracing::warn!("event {}: cannot write the done record: {e}", id_of(&claim.path));
            if let Err(e) = std::fs::rename(&claim.path, &dest) {
                tracing::warn!("event {}: cannot move the event to done/: {e}", id_of(&claim.path));
            } else {
                progress::remove_progress(root, &id_of(&claim.path));
            }
        }
    }
}

pub(super) fn requeue(root: &Path, claim: &Claim) {
    if let Err(e) = std::fs::rename(&claim.path, pending_dir(root).join(&claim.name)) {
        tracing::warn!("event {}: cannot put the event back: {e}", id_of(&claim.path));
    }
}

/// Put the event back into `pending/` as `event` says (a routing retry's fields), releasing
/// the claim. The claim stays until the new file is in place, so no other processor takes
/// the id meanwhile (`claim_next` skips an id still in `processing/`).
pub(super) fn requeue_with(root: &Path, claim: &Claim, event: &Event) -> Result<(), String> {
    let text =
        serde_json::to_string_pretty(event).map_err(|e| format!("cannot encode the event: {e}"))? + "\n";
    write_atomic(&pending_dir(root).join(&claim.name), &text).map_err(|e| e.to_string())?;
    if let Err(e) = std::fs::remove_file(&claim.path) {
        tracing::warn!("event {}: cannot remove the claim: {e}", id_of(&claim.path));
    }
    Ok(())
}
