//! `.livenote/attempts/<note key>.json`: the run of a note this machine started into an
//! editor's buffer ([`crate::status::Attempt`]). Such a run writes `lastAttemptAt` and its result
//! into the buffer, and the file says nothing of it until the user saves; every other process
//! on the machine (`watch`, `tick`, another editor, `list`) reads this record and counts the
//! attempt (SPEC 3). A run on disk needs none: its file says it, under the note's lock, before
//! the run does anything else; such a run removes a record left from an earlier buffer run.
//!
//! - Written whole, atomically (`workspace::write::write_atomic`), under the note's run lock:
//!   when the run starts (the attempt, and the stamps the file held then) and when it ends (its
//!   success or stop). One file per note, named like its lock, history and memory
//!   (`workspace::state::note_key`); the file names its note, and a file whose name is not its
//!   note's key is ignored.
//! - Reached without following a link (`workspace::state`, `confine`); only a regular file of at
//!   most [`MAX_FILE_BYTES`] is read; one that cannot be read or parsed counts as absent.
//! - Kept in memory per process ([`Attempts`]): read when the engine starts, again for one note
//!   when a file event names its record, and from the disk by a run's own check under the lock.
//!   A request (a keystroke's lens) reads memory only (issue 26).

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::note::model::Live;
use crate::status::{Attempt, DiskStamps};
use crate::workspace::{NotePath, confine, state, write};

/// The folder under `.livenote/`.
pub const SUB: &str = "attempts";
/// A record is a few hundred bytes; anything much larger is not one.
const MAX_FILE_BYTES: u64 = 64 * 1024;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    /// The note, workspace-relative.
    note: String,
    run_id: String,
    attempt_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ran_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stopped_at: Option<DateTime<Utc>>,
    /// The note's stamps on disk when the run started.
    #[serde(default)]
    disk: Disk,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Disk {
    last_run_id: Option<String>,
    last_attempt_at: Option<DateTime<Utc>>,
    last_run_at: Option<DateTime<Utc>>,
}

impl File {
    fn attempt(&self) -> Attempt {
        Attempt {
            attempt_at: self.attempt_at,
            ran_at: self.ran_at,
            stopped_at: self.stopped_at,
            disk: DiskStamps {
                last_run_id: self.disk.last_run_id.clone(),
                last_attempt_at: self.disk.last_attempt_at,
                last_run_at: self.disk.last_run_at,
            },
        }
    }
}

/// How a buffer run ended, for its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Succeeded at this instant (its `lastRunAt`).
    Ran(DateTime<Utc>),
    /// Stopped at this instant.
    Stopped(DateTime<Utc>),
    /// Failed: the attempt stands (the backoff counts from it).
    Failed,
    /// An event run that changed nothing: as if it never started (its `lastAttemptAt` is put
    /// back), so the record goes.
    Vetoed,
}

/// The records of one root, as this process knows them.
#[derive(Debug)]
pub struct Attempts {
    root: PathBuf,
    known: Mutex<Known>,
}

#[derive(Debug, Default)]
struct Known {
    /// A note's absolute path → its record.
    by_note: HashMap<PathBuf, Attempt>,
    /// A record's file name → the note it is of, to forget it when the file goes.
    by_name: HashMap<String, PathBuf>,
}

impl Attempts {
    /// The records of `root`, none read yet ([`Attempts::load`]).
    pub fn new(root: &Path) -> Attempts {
        Attempts { root: root.to_path_buf(), known: Mutex::default() }
    }

    fn known(&self) -> MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The note's record file's name in `.livenote/attempts/`.
    pub fn file_name(rel: &str) -> String {
        format!("{}.json", state::note_key(rel))
    }

    /// Read every record, in place of what was known (a process starting, `.livenote/`
    /// appearing).
    pub fn load(&self) {
        let mut known = Known::default();
        if let Ok(Some(dir)) = state::existing_state_dir(&self.root, SUB)
            && let Ok(entries) = std::fs::read_dir(&dir)
        {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some((note, attempt)) = self.read_file(&dir, &name) {
                    known.by_name.insert(name, note.clone());
                    known.by_note.insert(note, attempt);
                }
            }
        }
        *self.known() = known;
    }

    /// A file event named `path`: read the record it is again (or forget it, gone), or every
    /// record when it is the folder itself. Anything else is left alone.
    pub fn refresh(&self, path: &Path) {
        let dir = self.root.join(crate::workspace::STATE_DIR).join(SUB);
        if path == dir || dir.starts_with(path) {
            self.load();
            return;
        }
        let Some(name) =
            path.strip_prefix(&dir).ok().filter(|p| p.components().count() == 1).and_then(|p| p.to_str())
        else {
            return;
        };
        let found = match state::existing_state_dir(&self.root, SUB) {
            Ok(Some(dir)) => self.read_file(&dir, name),
            _ => None,
        };
        let mut known = self.known();
        if let Some(note) = known.by_name.remove(name) {
            known.by_note.remove(&note);
        }
        if let Some((note, attempt)) = found {
            known.by_name.insert(name.to_owned(), note.clone());
            known.by_note.insert(note, attempt);
        }
    }

    /// The note's block as the due checks take it ([`crate::status::with_attempt`]), with the
    /// record known in memory. Reads nothing.
    pub fn apply<'a>(&self, path: &Path, live: &'a Live) -> std::borrow::Cow<'a, Live> {
        let known = self.known();
        crate::status::with_attempt(live, known.by_note.get(path))
    }

    /// The note's record read from the disk now (a run's check under the note's lock), and
    /// remembered.
    pub fn read(&self, rel: &str) -> Option<Attempt> {
        let name = Self::file_name(rel);
        self.refresh(&self.root.join(crate::workspace::STATE_DIR).join(SUB).join(&name));
        let known = self.known();
        known.by_name.get(&name).and_then(|p| known.by_note.get(p).cloned())
    }

    /// A run of the note at `rel` (`note` in full) started into an editor's buffer at `at`;
    /// `disk` is the note as its file holds it now. The caller holds the note's lock.
    pub fn started(
        &self,
        (rel, note): (&str, &Path),
        run_id: &str,
        at: DateTime<Utc>,
        disk: DiskStamps,
    ) -> std::io::Result<()> {
        let file = File {
            note: rel.to_owned(),
            run_id: run_id.to_owned(),
            attempt_at: at,
            ran_at: None,
            stopped_at: None,
            disk: Disk {
                last_run_id: disk.last_run_id,
                last_attempt_at: disk.last_attempt_at,
                last_run_at: disk.last_run_at,
            },
        };
        self.save(rel, note, &file)
    }

    /// The buffer run `run_id` of the note at `rel` (`note` in full) ended. The caller holds the
    /// note's lock.
    pub fn ended(&self, (rel, note): (&str, &Path), run_id: &str, end: End) -> std::io::Result<()> {
        let Some(dir) = state::existing_state_dir(&self.root, SUB)? else { return Ok(()) };
        let name = Self::file_name(rel);
        let Some(mut file) = read_record(&dir.join(&name)).filter(|f| f.run_id == run_id) else {
            return Ok(());
        };
        match end {
            End::Ran(at) => file.ran_at = Some(at),
            End::Stopped(at) => file.stopped_at = Some(at),
            End::Failed => return Ok(()),
            End::Vetoed => return self.remove(rel),
        }
        self.save(rel, note, &file)
    }

    /// Remove the note's record, if it has one (a run on disk speaks for itself). The caller
    /// holds the note's lock.
    pub fn remove(&self, rel: &str) -> std::io::Result<()> {
        let name = Self::file_name(rel);
        let path = match state::existing_state_dir(&self.root, SUB)? {
            Some(dir) => dir.join(&name),
            None => return Ok(()),
        };
        let gone = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() || m.file_type().is_symlink() => std::fs::remove_file(&path),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        };
        let mut known = self.known();
        if let Some(note) = known.by_name.remove(&name) {
            known.by_note.remove(&note);
        }
        gone
    }

    fn save(&self, rel: &str, note: &Path, file: &File) -> std::io::Result<()> {
        let dir = state::state_dir(&self.root, SUB)?;
        let name = Self::file_name(rel);
        let text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
        write::write_atomic(&dir.join(&name), &format!("{text}\n")).map_err(std::io::Error::other)?;
        let mut known = self.known();
        known.by_name.insert(name, note.to_path_buf());
        known.by_note.insert(note.to_path_buf(), file.attempt());
        Ok(())
    }

    /// The record in `dir` named `name`, with the note it is of; `None` when it is not a
    /// record of the note its name says.
    fn read_file(&self, dir: &Path, name: &str) -> Option<(PathBuf, Attempt)> {
        let file = read_record(&dir.join(name))?;
        let rel = NotePath::from_relative(Path::new(&file.note))?;
        (Self::file_name(rel.as_str()) == name).then(|| (rel.to_path(&self.root), file.attempt()))
    }
}

/// A record file, when it is a regular file that parses.
fn read_record(path: &Path) -> Option<File> {
    let f = confine::open_nofollow(path, OpenOptions::new().read(true)).ok()?;
    let bytes = confine::read_capped(f, path, MAX_FILE_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

impl super::Engine {
    /// A run of the note at `rel` (`path`) started at `at`, its first fields written: into a
    /// buffer (`buffered`), recorded for every other process with the stamps its file holds
    /// now; on disk, any record of an earlier buffer run goes (the file speaks for itself). A
    /// record that cannot be written is said; the run goes on (the lock still keeps every
    /// other run of the note out while it lasts).
    pub(super) fn record_start(
        &self,
        rel: &str,
        path: &Path,
        run_id: &str,
        at: DateTime<Utc>,
        buffered: bool,
    ) {
        let done = if buffered {
            let disk = crate::workspace::read_note(path)
                .ok()
                .and_then(|text| crate::note::analyze(&text, &crate::note::Options::default()).live)
                .map(|live| DiskStamps::of(&live))
                .unwrap_or_default();
            self.attempts.started((rel, path), run_id, at, disk)
        } else {
            self.attempts.remove(rel)
        };
        if let Err(e) = done {
            tracing::warn!("record run {run_id} of {rel} in .livenote/{SUB}: {e}");
        }
    }
}

#[cfg(test)]
#[path = "attempts_tests.rs"]
mod tests;
