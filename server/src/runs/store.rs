//! `<workspace>/.livenote/`: body snapshots per note (`history/`, bounded), one JSONL
//! transcript per run (`runs/`), and one lock file per note (`locks/`) that makes a run
//! exclusive across every livenote process on the machine. The folder ignores itself in git.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// An exclusive lock on one note, released on drop (and by the OS if the process dies).
#[derive(Debug)]
pub struct NoteLock {
    _file: File,
}

impl Store {
    pub fn new(workspace_root: &Path) -> Store {
        Store { dir: workspace_root.join(".livenote") }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn ensure(&self, sub: &str) -> std::io::Result<PathBuf> {
        let d = self.dir.join(sub);
        std::fs::create_dir_all(&d)?;
        let ignore = self.dir.join(".gitignore");
        if !ignore.exists() {
            // Run state is machine-local: history, transcripts and locks stay out of git.
            std::fs::write(&ignore, "# livenote's run state (history, transcripts, locks)\n*\n")?;
        }
        Ok(d)
    }

    /// A stable file-name-safe key for a note: its workspace-relative path, flattened.
    pub fn key(rel: &str) -> String {
        let mut k: String = rel
            .chars()
            .map(|c| if c.is_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
            .collect();
        if k.len() > 120 {
            k.truncate(k.char_indices().nth(100).map_or(k.len(), |(i, _)| i));
        }
        // A short hash keeps keys unique when flattening maps two paths to one string.
        let h = rel
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        format!("{k}-{:08x}", h as u32)
    }

    /// Take the note's lock without waiting; `Ok(None)` when another run holds it.
    pub fn try_lock(&self, rel: &str) -> std::io::Result<Option<NoteLock>> {
        let dir = self.ensure("locks")?;
        let file =
            OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(Self::key(rel)))?;
        // std's advisory file lock (flock): held until the file is closed, so a crashed
        // process never leaves a note locked.
        match file.try_lock() {
            Ok(()) => Ok(Some(NoteLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// Whether some process is running the note now (its lock is held).
    pub fn is_locked(&self, rel: &str) -> bool {
        let path = self.dir.join("locks").join(Self::key(rel));
        let Ok(file) = OpenOptions::new().write(true).open(path) else { return false };
        match file.try_lock() {
            Ok(()) => {
                let _ = file.unlock();
                false
            }
            Err(_) => true,
        }
    }

    /// Save the text of a note's body before a run, keeping the newest `keep` snapshots.
    pub fn snapshot(&self, rel: &str, run_id: &str, body: &str, keep: usize) -> std::io::Result<PathBuf> {
        let dir = self.ensure(&format!("history/{}", Self::key(rel)))?;
        let path = dir.join(format!("{run_id}.md"));
        crate::workspace::write::write_atomic(&path, body).map_err(std::io::Error::other)?;
        let mut snaps = self.snapshots(rel);
        while snaps.len() > keep.max(1) {
            let old = snaps.remove(0);
            let _ = std::fs::remove_file(old);
        }
        Ok(path)
    }

    /// Snapshots of a note, oldest first (run ids sort by time).
    pub fn snapshots(&self, rel: &str) -> Vec<PathBuf> {
        let dir = self.dir.join("history").join(Self::key(rel));
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|r| {
                r.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// The body saved before the run `run_id`, if kept.
    pub fn snapshot_of(&self, rel: &str, run_id: &str) -> Option<String> {
        let path = self.dir.join("history").join(Self::key(rel)).join(format!("{run_id}.md"));
        std::fs::read_to_string(path).ok()
    }

    /// Open the transcript of a run for appending.
    pub fn transcript(&self, run_id: &str) -> std::io::Result<Transcript> {
        let dir = self.ensure("runs")?;
        let file = OpenOptions::new().create(true).append(true).open(dir.join(format!("{run_id}.jsonl")))?;
        Ok(Transcript { file })
    }

    /// Every transcript file, oldest first.
    pub fn transcripts(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.dir.join("runs"))
            .map(|r| r.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }
}

/// One JSON object per line: what happened during a run, for the user to read afterwards.
#[derive(Debug)]
pub struct Transcript {
    file: File,
}

impl Transcript {
    pub fn write<T: Serialize>(&mut self, entry: &T) {
        if let Ok(line) = serde_json::to_string(entry) {
            // A transcript is best effort: a full disk must not fail the run itself.
            let _ = writeln!(self.file, "{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_are_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::new(dir.path());
        let a = s.try_lock("notes/a.md").unwrap_or_else(|e| panic!("{e}"));
        assert!(a.is_some());
        assert!(s.is_locked("notes/a.md"));
        assert!(s.try_lock("notes/a.md").unwrap_or_else(|e| panic!("{e}")).is_none());
        drop(a);
        assert!(!s.is_locked("notes/a.md"));
        assert!(s.try_lock("notes/a.md").unwrap_or_else(|e| panic!("{e}")).is_some());
        assert!(dir.path().join(".livenote/.gitignore").exists());
    }

    #[test]
    fn history_is_bounded() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::new(dir.path());
        for i in 0..5 {
            s.snapshot("a.md", &format!("run{i}"), &format!("body {i}"), 3).unwrap_or_else(|e| panic!("{e}"));
        }
        let snaps = s.snapshots("a.md");
        assert_eq!(snaps.len(), 3);
        assert_eq!(s.snapshot_of("a.md", "run4").as_deref(), Some("body 4"));
        assert_eq!(s.snapshot_of("a.md", "run0"), None);
        assert_ne!(Store::key("a/b.md"), Store::key("a_b.md"));
    }
}
