//! `.livenote/memory/<note key>.json`: one file per note (named like its history and lock,
//! `workspace::state::note_key`), `{"note": "...", "entries": [...]}`.
//!
//! - Reached without following a link (`workspace::state`, `confine`): a linked `.livenote`
//!   or `memory` folder is refused; only a regular file is read.
//! - Written whole, atomically (`workspace::write::write_atomic`: a synced temp file and a
//!   rename), so a crash leaves the old or the new memory.
//! - A file that cannot be read or parsed is an error that names it, and it is never
//!   overwritten: a write always follows a successful load of the same file. Only
//!   [`MemoryStore::clear`] (the user's `livenote memory NOTE clear`, the editor's *Clear agent
//!   memory*) removes it unread.
//! - Concurrency: writers hold the note's run lock (a run, for its whole length; the CLI and
//!   the editor take it for their edit and refuse while a run goes on), so a load and the
//!   write after it never interleave with another writer's.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Entry, Memory, is_valid_key};
use crate::workspace::{confine, state, write};

/// The folder under `.livenote/`.
const SUB: &str = "memory";
/// A memory file larger than this is not read: 10,000 keys of 1 MiB is past any quota, and
/// a run must not load an unbounded file.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Serialize, Deserialize)]
struct File {
    /// The note, for whoever opens the file.
    #[serde(default)]
    note: String,
    entries: Vec<Entry>,
}

/// The memory files of one workspace.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    root: PathBuf,
}

impl MemoryStore {
    pub fn new(workspace_root: &Path) -> MemoryStore {
        MemoryStore { root: workspace_root.to_path_buf() }
    }

    /// The note's memory file's name in `.livenote/memory/`.
    pub fn file_name(rel: &str) -> String {
        format!("{}.json", state::note_key(rel))
    }

    /// Where the note's memory is (or would be), workspace-relative, for messages.
    pub fn shown_path(rel: &str) -> String {
        format!("{}/{SUB}/{}", crate::workspace::STATE_DIR, Self::file_name(rel))
    }

    /// The note's memory: empty when it has none. An unreadable or invalid file is an error
    /// naming it (see the module documentation).
    pub fn load(&self, rel: &str) -> Result<Memory, String> {
        let shown = Self::shown_path(rel);
        let Some(dir) = state::existing_state_dir(&self.root, SUB).map_err(|e| format!("{shown}: {e}"))?
        else {
            return Ok(Memory::default());
        };
        let path = dir.join(Self::file_name(rel));
        let file = match confine::open_nofollow(&path, OpenOptions::new().read(true)) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Memory::default()),
            Err(e) => return Err(format!("cannot read {shown}: {e}")),
        };
        let bytes = confine::read_capped(file, &path, MAX_FILE_BYTES)
            .map_err(|e| format!("cannot read {shown}: {e}"))?;
        let parsed: File = serde_json::from_slice(&bytes).map_err(|e| {
            format!("{shown} is not a valid memory file ({e}); livenote leaves it as it is: fix it, or clear the memory")
        })?;
        if let Some(bad) = parsed.entries.iter().find(|e| !is_valid_key(&e.key)) {
            return Err(format!(
                "{shown} holds an invalid key `{}`; livenote leaves it as it is: fix it, or clear the memory",
                bad.key
            ));
        }
        Ok(Memory::from_entries(parsed.entries))
    }

    /// Replace the note's memory with `memory`, atomically; an empty memory removes the file.
    pub fn save(&self, rel: &str, memory: &Memory) -> Result<(), String> {
        if memory.is_empty() {
            return self.clear(rel).map(|_| ());
        }
        let shown = Self::shown_path(rel);
        let dir = state::state_dir(&self.root, SUB).map_err(|e| format!("cannot write {shown}: {e}"))?;
        let file = File { note: rel.to_owned(), entries: memory.by_key().cloned().collect() };
        let text = serde_json::to_string_pretty(&file).map_err(|e| format!("cannot write {shown}: {e}"))?;
        write::write_atomic(&dir.join(Self::file_name(rel)), &format!("{text}\n"))
            .map_err(|e| format!("cannot write {shown}: {e}"))
    }

    /// Give the memory of the note `from` to the note `to` (a renamed note keeps its memory,
    /// `runs::identity`): the file is renamed, never copied, and only when `to` has none; then
    /// its `note` is set to `to` when it reads. Whether a memory moved. The caller holds both
    /// notes' run locks.
    pub fn rename(&self, from: &str, to: &str) -> Result<bool, String> {
        let shown = Self::shown_path(from);
        let Some(dir) = state::existing_state_dir(&self.root, SUB).map_err(|e| format!("{shown}: {e}"))?
        else {
            return Ok(false);
        };
        let (old, new) = (dir.join(Self::file_name(from)), dir.join(Self::file_name(to)));
        match std::fs::symlink_metadata(&old) {
            Ok(m) if m.is_file() => {}
            Ok(_) => return Err(format!("{shown} is not a regular file; livenote leaves it as it is")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(format!("{shown}: {e}")),
        }
        if std::fs::symlink_metadata(&new).is_ok() {
            return Err(format!("{} already has a memory; {shown} is left as it is", Self::shown_path(to)));
        }
        std::fs::rename(&old, &new).map_err(|e| format!("cannot move {shown}: {e}"))?;
        // The file names its note for whoever opens it; an unreadable one moves as it is.
        if let Ok(memory) = self.load(to)
            && !memory.is_empty()
        {
            self.save(to, &memory)?;
        }
        Ok(true)
    }

    /// Remove the note's memory file, read or not; whether there was one. Only a regular file
    /// (or a link, which is removed, not followed) is removed.
    pub fn clear(&self, rel: &str) -> Result<bool, String> {
        let shown = Self::shown_path(rel);
        let Some(dir) = state::existing_state_dir(&self.root, SUB).map_err(|e| format!("{shown}: {e}"))?
        else {
            return Ok(false);
        };
        let path = dir.join(Self::file_name(rel));
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("{shown}: {e}")),
            Ok(m) if m.is_file() || m.file_type().is_symlink() => {
                std::fs::remove_file(&path).map_err(|e| format!("cannot remove {shown}: {e}"))?;
                Ok(true)
            }
            Ok(_) => Err(format!("{shown} is not a regular file; livenote leaves it as it is")),
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::memory::MemoryConfig;

    fn t(s: u32) -> chrono::DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 5, 8, 10, 0, s).single().unwrap_or_default()
    }

    #[test]
    fn saves_loads_and_clears() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = MemoryStore::new(ws.path());
        assert_eq!(s.load("notes/a.md"), Ok(Memory::default()));
        let mut m = Memory::default();
        m.save("sources", "bbc.com", Some(true), t(1), &MemoryConfig::default())
            .unwrap_or_else(|e| panic!("{e}"));
        s.save("notes/a.md", &m).unwrap_or_else(|e| panic!("{e}"));
        let file = ws.path().join(MemoryStore::shown_path("notes/a.md"));
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(text.contains("\"updated\": \"2026-05-08T10:00:01Z\""), "{text}");
        assert_eq!(s.load("notes/a.md"), Ok(m.clone()));
        assert_eq!(s.load("notes/b.md"), Ok(Memory::default()));
        assert!(ws.path().join(".livenote/.gitignore").exists());
        assert_eq!(s.clear("notes/a.md"), Ok(true));
        assert_eq!(s.clear("notes/a.md"), Ok(false));
        assert!(!file.exists());
    }

    #[test]
    fn a_corrupt_file_is_an_error_and_stays() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = MemoryStore::new(ws.path());
        let file = ws.path().join(MemoryStore::shown_path("a.md"));
        std::fs::create_dir_all(file.parent().unwrap_or(ws.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&file, "{oops").unwrap_or_else(|e| panic!("{e}"));
        let e = s.load("a.md").err().unwrap_or_default();
        assert!(e.starts_with(".livenote/memory/a.md-") && e.contains("is not a valid memory file"), "{e}");
        std::fs::write(
            &file,
            r#"{"entries":[{"key":"Bad Key","content":"x","updated":"2026-05-08T10:00:00Z"}]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(s.load("a.md").is_err_and(|e| e.contains("invalid key `Bad Key`")));
        assert_eq!(s.clear("a.md"), Ok(true));
    }

    #[cfg(unix)]
    #[test]
    fn nothing_goes_through_a_link() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(ws.path().join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(outside.path(), ws.path().join(".livenote/memory"))
            .unwrap_or_else(|e| panic!("{e}"));
        let s = MemoryStore::new(ws.path());
        let mut m = Memory::default();
        m.save("k", "v", None, t(0), &MemoryConfig::default()).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.save("a.md", &m).is_err_and(|e| e.contains("symlink")));
        assert!(s.load("a.md").is_err());
        assert!(std::fs::read_dir(outside.path()).map(|r| r.count()).unwrap_or(1) == 0);
        // A link as the file itself: not read, and a FIFO-like non-file is never opened.
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = ws.path().join(".livenote/memory");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let target = outside.path().join("x.json");
        std::fs::write(&target, r#"{"entries":[]}"#).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&target, ws.path().join(MemoryStore::shown_path("a.md")))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(MemoryStore::new(ws.path()).load("a.md").is_err_and(|e| e.contains("symlink")));
    }
}
