//! What a source has seen, and the lock a poll holds from reading it to writing it back, so a
//! second process (another `watch`, an editor, `livenote sources poll`) never polls the same
//! source at the same time and queues an item twice.
//!
//! Both live in the user's data folder, beside the trust store: `<data>/sources/<folder>/NAME.json`
//! and `NAME.lock`, one folder per workspace root ([`Home`]). Never in the workspace: a folder
//! arrives with a clone, and seen-state livenote did not write must not be believed (a cursor
//! shipped with a clone would make the first poll queue a whole mailbox into it). A state also
//! names what it was made for ([`made_for`]: the kind and its feed, calendar, server, user,
//! mailbox or program): a state made for another source is not believed either.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use crate::config::{IcsLocation, SourceKind};
use crate::workspace::confine;

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

/// The folder of the data folder holding the sources' states.
const SUB: &str = "sources";
/// The longest part of a workspace's own name in the name of its folder of states.
const MAX_FOLDER_NAME: usize = 40;

/// Where one workspace root's sources keep their states and locks:
/// `<data>/sources/<name>-<digest>/`, the name and SHA-256 of the root's canonical path. `dir`
/// is `None` when there is no data folder (no home): nothing can be kept, so nothing polls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    dir: Option<PathBuf>,
    /// The root's canonical path, recorded in each state: a state of another folder (a data
    /// folder copied, a digest that collides) is not believed.
    folder: String,
}

impl Home {
    /// The home of `root`'s sources under the data folder `data` (the trust store's).
    pub fn new(data: Option<&Path>, root: &Path) -> Home {
        let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let folder = canonical.to_string_lossy().into_owned();
        let digest = crate::workspace::trust::digest_bytes(folder.as_bytes());
        let hex = digest.strip_prefix("sha256:").unwrap_or(&digest);
        let name: String = canonical
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .take(MAX_FOLDER_NAME)
            .collect();
        let key = format!("{name}-{}", &hex[..hex.len().min(16)]);
        Home { dir: data.map(|d| d.join(SUB).join(key)), folder }
    }

    /// The home of the engine's root, in the data folder of its trust store (none without one:
    /// an engine without a trust store trusts nothing, so none of its sources polls).
    pub fn of(engine: &crate::runs::Engine) -> Home {
        Home::new(engine.trust.as_ref().map(crate::workspace::trust::TrustStore::dir), &engine.root)
    }

    /// The user's home for `root`: in [`crate::workspace::trust::user_data_dir`].
    pub fn user(root: &Path) -> Home {
        Home::new(crate::workspace::trust::user_data_dir().as_deref(), root)
    }

    /// The folder of the states, if there is a data folder.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn existing_dir(&self) -> Option<&Path> {
        self.dir.as_deref().filter(|d| d.is_dir())
    }

    fn created_dir(&self) -> std::io::Result<&Path> {
        let dir = self.dir.as_deref().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no data folder to keep what sources have seen (set LIVENOTE_DATA_DIR or HOME)",
            )
        })?;
        std::fs::create_dir_all(dir)?;
        Ok(dir)
    }
}

/// What a state is made for: the kind and what it reads (a feed's or calendar's address, a
/// mailbox's server, user and name, a program and its arguments), as a digest (a calendar's
/// address is a secret). A state made for something else starts afresh.
pub fn made_for(kind: &SourceKind) -> String {
    let what = match kind {
        SourceKind::Feed { url } => serde_json::json!(["feed", url]),
        SourceKind::Ics { at: IcsLocation::Url(url), .. } => serde_json::json!(["ics", url]),
        SourceKind::Ics { at: IcsLocation::Path(p), .. } => serde_json::json!(["ics", p.to_string_lossy()]),
        SourceKind::Imap(c) => serde_json::json!(["imap", c.host, c.port, c.username, c.mailbox]),
        // A webhook reads nothing: what it has seen (delivery ids) is its own, wherever it listens.
        SourceKind::Webhook(_) => serde_json::json!(["webhook"]),
        SourceKind::Command(c) => serde_json::json!(["command", c.command]),
    };
    crate::workspace::trust::digest_bytes(what.to_string().as_bytes())
}

/// The state of one source, as saved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceState {
    /// The kind it was saved by.
    #[serde(default)]
    pub kind: String,
    /// What it was made for ([`made_for`]): a state made for another source starts afresh.
    #[serde(default)]
    pub made_for: String,
    /// The workspace root it belongs to (its canonical path; [`Home`]).
    #[serde(default)]
    pub folder: String,
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

/// `NAME.json` in `dir`.
fn state_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.json"))
}

/// The saved state of `name`: the default when there is none yet, or when the one there
/// belongs to another folder. A file that cannot be read as state is an error: the caller
/// decides (a poll starts afresh, which queues nothing).
pub fn load(home: &Home, name: &str) -> std::io::Result<SourceState> {
    let Some(dir) = home.existing_dir() else { return Ok(SourceState::default()) };
    let path = state_file(dir, name);
    let bytes = match confine::read_regular(&path, MAX_STATE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SourceState::default()),
        Err(e) => return Err(e),
    };
    let mut state: SourceState = serde_json::from_slice(&bytes).map_err(|e| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", path.display()))
    })?;
    if state.folder != home.folder {
        return Ok(SourceState::default());
    }
    state.reindex();
    Ok(state)
}

/// Save the state of `name` atomically (recording the folder it belongs to).
pub fn save(home: &Home, name: &str, state: &SourceState) -> Result<(), crate::workspace::write::WriteError> {
    let dir = home.created_dir().map_err(|source| crate::workspace::write::WriteError::Io {
        path: home.dir.as_deref().unwrap_or(Path::new(SUB)).display().to_string(),
        source,
    })?;
    let mut state = state.clone();
    state.folder.clone_from(&home.folder);
    let text = serde_json::to_string_pretty(&state).unwrap_or_default();
    crate::workspace::write::write_atomic(&state_file(dir, name), &text)
}

/// An exclusive lock on one source, released on drop (and by the OS if the process dies).
#[derive(Debug)]
pub struct SourceLock {
    _file: File,
}

/// Take the source's lock without waiting; `Ok(None)` when another poll holds it.
pub fn try_lock(home: &Home, name: &str) -> std::io::Result<Option<SourceLock>> {
    let dir = home.created_dir()?;
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
    fn each_folder_has_its_own_states_in_the_data_folder() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for d in [&a, &b] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        let data = dir.path().join("data");
        let (home_a, home_b) = (Home::new(Some(&data), &a), Home::new(Some(&data), &b));
        assert_ne!(home_a.dir(), home_b.dir());
        assert!(home_a.dir().is_some_and(|d| d.starts_with(data.join("sources"))));
        let mut st = SourceState { last_success: Some(DateTime::<Utc>::MIN_UTC), ..SourceState::default() };
        st.record("m-1", "v");
        save(&home_a, "mail", &st).unwrap_or_else(|e| panic!("{e}"));
        let back = load(&home_a, "mail").unwrap_or_else(|e| panic!("{e}"));
        assert!(!back.is_new("m-1", "v") && back.last_success.is_some());
        assert_eq!(load(&home_b, "mail").unwrap_or_else(|e| panic!("{e}")), SourceState::default());
        // A state file of another folder put in this one's place is not believed.
        let (Some(da), Some(db)) = (home_a.dir(), home_b.dir()) else { panic!("no dirs") };
        std::fs::create_dir_all(db).unwrap_or_else(|e| panic!("{e}"));
        std::fs::copy(da.join("mail.json"), db.join("mail.json")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(load(&home_b, "mail").unwrap_or_else(|e| panic!("{e}")), SourceState::default());
        // Without a data folder nothing is kept, and nothing polls.
        let none = Home::new(None, &a);
        assert_eq!(load(&none, "mail").unwrap_or_else(|e| panic!("{e}")), SourceState::default());
        assert!(try_lock(&none, "mail").is_err() && save(&none, "mail", &st).is_err());
    }

    #[test]
    fn a_state_is_made_for_one_feed_calendar_mailbox_or_program() {
        use crate::config::{CommandConfig, ImapSourceConfig, ImapTls};
        let imap = |mailbox: &str, user: &str| {
            SourceKind::Imap(ImapSourceConfig {
                host: "127.0.0.1".into(),
                port: 143,
                tls: ImapTls::None,
                username: user.into(),
                password_env: "P".into(),
                mailbox: mailbox.into(),
                idle_min_gap: crate::config::DEFAULT_IDLE_MIN_GAP,
            })
        };
        let feed = |url: &str| SourceKind::Feed { url: url.into() };
        let command = |c: &[&str]| {
            SourceKind::Command(CommandConfig {
                command: c.iter().map(|s| (*s).to_owned()).collect(),
                timeout: std::time::Duration::from_secs(60),
            })
        };
        let all = [
            made_for(&imap("INBOX", "me")),
            made_for(&imap("Lists", "me")),
            made_for(&imap("INBOX", "you")),
            made_for(&feed("https://example.org/a.xml")),
            made_for(&feed("https://example.org/b.xml")),
            made_for(&command(&["cat", "a.jsonl"])),
            made_for(&command(&["cat", "b.jsonl"])),
        ];
        let distinct: std::collections::HashSet<&String> = all.iter().collect();
        assert_eq!(distinct.len(), all.len(), "{all:?}");
        assert_eq!(made_for(&imap("INBOX", "me")), all[0], "stable");
        assert!(!all[3].contains("example.org"), "a calendar's address is a secret: kept as a digest");
    }

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::new(Some(&dir.path().join("data")), dir.path());
        let a = try_lock(&home, "feed").unwrap_or_else(|e| panic!("{e}"));
        assert!(a.is_some());
        assert!(try_lock(&home, "feed").unwrap_or_else(|e| panic!("{e}")).is_none());
        drop(a);
        assert!(try_lock(&home, "feed").unwrap_or_else(|e| panic!("{e}")).is_some());
        assert!(!dir.path().join(".livenote").exists(), "nothing is kept in the workspace");
    }
}
