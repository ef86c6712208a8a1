//! What a source has seen: `.livenote/sources/NAME.json` (confined like the rest of
//! `.livenote/`, written atomically), and the lock (`NAME.lock`) a poll holds from reading it
//! to writing it back, so a second process (another `watch`, an editor, `livenote sources
//! poll`) never polls the same source at the same time and queues an item twice.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use crate::workspace::confine;
use crate::workspace::state::{existing_state_dir, state_dir};

/// Items remembered per source; the oldest are forgotten first. Enough for a busy feed or a
/// mailbox's recent weeks, small enough to read at every poll.
pub const MAX_SEEN: usize = 5_000;
/// A state file larger than this is not ours.
const MAX_STATE_BYTES: u64 = 16 * 1024 * 1024;
/// An id longer than this is kept as its SHA-256 (a payload used as an id by a script).
const MAX_ID_LEN: usize = 512;

/// The first wait after a failure, doubled at each failure in a row up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: TimeDelta = TimeDelta::minutes(1);
pub const MAX_BACKOFF: TimeDelta = TimeDelta::hours(1);

const SUB: &str = "sources";

/// The state of one source, as saved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceState {
    /// The kind it was saved by: a source whose kind changed starts afresh.
    #[serde(default)]
    pub kind: String,
    /// The last poll that ended, well or not.
    #[serde(default)]
    pub last_poll: Option<DateTime<Utc>>,
    /// The last poll that succeeded: `None` until then (the first poll queues nothing unless
    /// `backfill`).
    #[serde(default)]
    pub last_success: Option<DateTime<Utc>>,
    #[serde(default)]
    pub next_poll: Option<DateTime<Utc>>,
    /// Items recorded since the source was first polled.
    #[serde(default)]
    pub items_seen: u64,
    /// Events queued since the source was first polled.
    #[serde(default)]
    pub events_queued: u64,
    #[serde(default)]
    pub last_error: Option<String>,
    /// Failed polls in a row.
    #[serde(default)]
    pub failures: u32,
    #[serde(default)]
    pub backoff_until: Option<DateTime<Utc>>,
    /// What the kind keeps between polls (an ETag, UIDVALIDITY and the last UID, the previous
    /// calendar digest).
    #[serde(default)]
    pub cursor: serde_json::Value,
    /// `[id, version]`, oldest first.
    #[serde(default)]
    seen: VecDeque<(String, String)>,
    #[serde(skip)]
    index: HashMap<String, String>,
}

impl SourceState {
    fn reindex(&mut self) {
        self.index = self.seen.iter().cloned().collect();
    }

    /// The version last recorded for `id`.
    pub fn seen_version(&self, id: &str) -> Option<&str> {
        self.index.get(&stored_id(id)).map(String::as_str)
    }

    /// Whether `(id, version)` is new: never seen, or seen with another version.
    pub fn is_new(&self, id: &str, version: &str) -> bool {
        self.seen_version(id) != Some(version)
    }

    /// Record `(id, version)` as seen (newest), forgetting the oldest past [`MAX_SEEN`].
    pub fn record(&mut self, id: &str, version: &str) {
        self.record_within(id, version, MAX_SEEN);
    }

    fn record_within(&mut self, id: &str, version: &str, max: usize) {
        let id = stored_id(id);
        if let Some(pos) = self.seen.iter().position(|(i, _)| *i == id) {
            self.seen.remove(pos);
        } else {
            self.items_seen += 1;
        }
        self.seen.push_back((id.clone(), version.to_owned()));
        self.index.insert(id, version.to_owned());
        while self.seen.len() > max {
            if let Some((old, _)) = self.seen.pop_front() {
                self.index.remove(&old);
            }
        }
    }

    pub fn seen_len(&self) -> usize {
        self.seen.len()
    }

    /// A poll that failed with `error`: the wait before the next try (1 minute, doubled at
    /// each failure in a row, at most an hour). Returns whether the error is new (to log it
    /// once per change, not at every try).
    pub fn failed(&mut self, error: &str, now: DateTime<Utc>) -> bool {
        let changed = self.last_error.as_deref() != Some(error);
        self.failures = self.failures.saturating_add(1);
        let backoff = backoff(self.failures);
        self.last_poll = Some(now);
        self.last_error = Some(error.to_owned());
        self.backoff_until = Some(now + backoff);
        self.next_poll = self.backoff_until;
        changed
    }

    /// A poll that succeeded; the next is `every` later (`None`: a webhook, never polled).
    /// Returns the error it recovers from, if any.
    pub fn succeeded(&mut self, now: DateTime<Utc>, every: Option<std::time::Duration>) -> Option<String> {
        self.last_poll = Some(now);
        self.last_success = Some(now);
        self.failures = 0;
        self.backoff_until = None;
        self.next_poll = every.and_then(|e| TimeDelta::from_std(e).ok()).map(|e| now + e);
        self.last_error.take()
    }
}

/// The wait after `failures` failed polls in a row.
pub fn backoff(failures: u32) -> TimeDelta {
    let doublings = failures.saturating_sub(1).min(16);
    let wait = FIRST_BACKOFF * (1i32 << doublings);
    wait.min(MAX_BACKOFF)
}

/// An id as the state keeps it: as given, or its SHA-256 when very long.
fn stored_id(id: &str) -> String {
    if id.len() <= MAX_ID_LEN {
        return id.to_owned();
    }
    crate::workspace::trust::digest_bytes(id.as_bytes())
}

/// `.livenote/sources/NAME.json`.
fn state_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.json"))
}

/// The saved state of `name`: the default when there is none yet. A file that cannot be read
/// as state is an error: the caller decides (a poll starts afresh, which queues nothing).
pub fn load(root: &Path, name: &str) -> std::io::Result<SourceState> {
    let Some(dir) = existing_state_dir(root, SUB)? else { return Ok(SourceState::default()) };
    let path = state_file(&dir, name);
    let bytes = match confine::read_regular(&path, MAX_STATE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SourceState::default()),
        Err(e) => return Err(e),
    };
    let mut state: SourceState = serde_json::from_slice(&bytes).map_err(|e| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", path.display()))
    })?;
    state.reindex();
    Ok(state)
}

/// Save the state of `name` atomically.
pub fn save(root: &Path, name: &str, state: &SourceState) -> Result<(), crate::workspace::write::WriteError> {
    let dir = state_dir(root, SUB).map_err(|source| crate::workspace::write::WriteError::Io {
        path: root.join(".livenote").join(SUB).display().to_string(),
        source,
    })?;
    let text = serde_json::to_string_pretty(state).unwrap_or_default();
    crate::workspace::write::write_atomic(&state_file(&dir, name), &text)
}

/// An exclusive lock on one source, released on drop (and by the OS if the process dies).
#[derive(Debug)]
pub struct SourceLock {
    _file: File,
}

/// Take the source's lock without waiting; `Ok(None)` when another poll holds it.
pub fn try_lock(root: &Path, name: &str) -> std::io::Result<Option<SourceLock>> {
    let dir = state_dir(root, SUB)?;
    let path = dir.join(format!("{name}.lock"));
    let file = confine::open_nofollow(
        &path,
        OpenOptions::new().read(true).write(true).create(true).truncate(false),
    )?;
    match file.try_lock() {
        Ok(()) => Ok(Some(SourceLock { _file: file })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_a_minute_to_an_hour() {
        let mins: Vec<i64> = (1..=9).map(|f| backoff(f).num_minutes()).collect();
        assert_eq!(mins, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }

    #[test]
    fn seen_is_bounded_and_a_changed_version_is_new() {
        let mut s = SourceState::default();
        for i in 0..MAX_SEEN + 10 {
            s.record(&format!("id-{i}"), "v1");
        }
        assert_eq!(s.seen_len(), MAX_SEEN);
        assert!(s.is_new("id-0", "v1"), "the oldest are forgotten");
        assert!(!s.is_new(&format!("id-{}", MAX_SEEN + 9), "v1"));
        assert!(s.is_new(&format!("id-{}", MAX_SEEN + 9), "v2"));
        let long = "x".repeat(MAX_ID_LEN + 1);
        s.record(&long, "v");
        assert!(!s.is_new(&long, "v"));
        let text = serde_json::to_string(&s).unwrap_or_default();
        let mut back: SourceState = serde_json::from_str(&text).unwrap_or_default();
        back.reindex();
        assert!(!back.is_new(&long, "v") && back.is_new("id-0", "v1"));
        assert!(!text.contains(&long), "a long id is kept as its digest");
    }

    proptest::proptest! {
        /// Polls of a few ids with a few versions, against a list of the latest `max` ids
        /// seen: an item is new exactly when the list does not hold it at that version, and a
        /// saved state reads back the same.
        #[test]
        fn seen_matches_a_bounded_list(
            max in 1usize..6,
            steps in proptest::collection::vec((0u8..8, 0u8..3), 0..60),
        ) {
            let mut s = SourceState::default();
            let mut model: VecDeque<(String, String)> = VecDeque::new();
            for (id, version) in steps {
                let (id, version) = (format!("id-{id}"), format!("v{version}"));
                let expected = model.iter().find(|(i, _)| *i == id).is_none_or(|(_, v)| *v != version);
                proptest::prop_assert_eq!(s.is_new(&id, &version), expected);
                model.retain(|(i, _)| *i != id);
                model.push_back((id.clone(), version.clone()));
                while model.len() > max {
                    model.pop_front();
                }
                s.record_within(&id, &version, max);
            }
            let mut back: SourceState =
                serde_json::from_str(&serde_json::to_string(&s).unwrap_or_default()).unwrap_or_default();
            back.reindex();
            for id in 0u8..8 {
                let id = format!("id-{id}");
                let want = model.iter().find(|(i, _)| *i == id).map(|(_, v)| v.as_str());
                proptest::prop_assert_eq!(back.seen_version(&id), want);
            }
        }
    }

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let a = try_lock(dir.path(), "feed").unwrap_or_else(|e| panic!("{e}"));
        assert!(a.is_some());
        assert!(try_lock(dir.path(), "feed").unwrap_or_else(|e| panic!("{e}")).is_none());
        drop(a);
        assert!(try_lock(dir.path(), "feed").unwrap_or_else(|e| panic!("{e}")).is_some());
    }
}
