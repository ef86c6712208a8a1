//! `<workspace>/.livenote/`: body snapshots per note (`history/`, bounded), one JSONL
//! transcript per run (`runs/`), and one lock file per note (`locks/`) that makes a run
//! exclusive across every livenote process on the machine. The folder ignores itself in git.
//!
//! Nothing here is followed through a symlink (SPEC section 7): every folder is reached with
//! `confine::real_dir` from the workspace root down (a linked `.livenote`, `history/<key>` or
//! `locks` is refused with an error that says so), files are opened with `O_NOFOLLOW`, and
//! pruning deletes only regular files named like the snapshots livenote writes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::workspace::confine;

/// The state folder's name, under the workspace root.
pub const STATE_DIR: &str = ".livenote";

/// The file in `history/<key>/` that names the note the folder is of (workspace-relative).
pub const NOTE_MARKER: &str = "note.path";

#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    dir: PathBuf,
}

/// An exclusive lock on one note, released on drop (and by the OS if the process dies).
#[derive(Debug)]
pub struct NoteLock {
    _file: File,
}

/// `<root>/.livenote/<sub>` as a real folder, created on demand (`workspace::state`).
pub fn state_dir(root: &Path, sub: &str) -> std::io::Result<PathBuf> {
    crate::workspace::state::state_dir(root, sub)
}

/// Whether `name` is a run id (a ULID: 26 characters of Crockford's base 32), the only names
/// livenote gives snapshots and transcripts.
pub fn is_run_id(name: &str) -> bool {
    name.len() == 26
        && name.bytes().all(|b| b.is_ascii_digit() || (b.is_ascii_uppercase() && !b"ILOU".contains(&b)))
}

/// How long [`Store::try_lock`] asks again for a lock held for an instant.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(100);
/// How long [`Store::is_locked`] asks again before telling a lock is held: longer than a
/// probe holds it, far shorter than a run does.
const PROBE_PATIENCE: std::time::Duration = std::time::Duration::from_millis(10);

/// Taken by each [`Store::is_locked`] probe of this process for its instant.
static PROBING: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Store {
    pub fn new(workspace_root: &Path) -> Store {
        Store { root: workspace_root.to_path_buf(), dir: workspace_root.join(STATE_DIR) }
    }

    /// The workspace root the store belongs to.
    pub(super) fn root(&self) -> &Path {
        &self.root
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn ensure(&self, sub: &str) -> std::io::Result<PathBuf> {
        state_dir(&self.root, sub)
    }

    /// `.livenote/<sub>` if it exists as a real folder; `None` when absent or refused.
    fn existing(&self, sub: &str) -> Option<PathBuf> {
        confine::real_dir(&self.root, &Path::new(STATE_DIR).join(sub), false).ok()
    }

    /// A stable file-name-safe key for a note: its workspace-relative path, flattened
    /// (`workspace::state::note_key`).
    pub fn key(rel: &str) -> String {
        crate::workspace::state::note_key(rel)
    }

    /// Take the note's lock without waiting; `Ok(None)` when another run holds it.
    pub fn try_lock(&self, rel: &str) -> std::io::Result<Option<NoteLock>> {
        let dir = self.ensure("locks")?;
        let file = confine::open_nofollow(
            &dir.join(Self::key(rel)),
            OpenOptions::new().create(true).truncate(false).write(true),
        )?;
        // std's advisory file lock (flock): held until the file is closed, so a crashed
        // process never leaves a note locked.
        let deadline = std::time::Instant::now() + LOCK_PATIENCE;
        loop {
            match file.try_lock() {
                Ok(()) => {
                    // Who holds it, for `livenote stop` and bug reports; the lock is what counts.
                    let mut f = &file;
                    let _ = file.set_len(0).and_then(|()| writeln!(f, "{}", std::process::id()));
                    // A stop request left from an earlier run is not for this one.
                    self.clear_stop(rel);
                    return Ok(Some(NoteLock { _file: file }));
                }
                // Held for an instant by a probe (`is_locked`, which takes the lock to tell: a
                // lens, `list`, the scheduler), or by a program a run started in that instant
                // until its exec closes the inherited descriptor: asked again for a moment, so
                // a run or a rename is not refused for it. A run holds it for seconds.
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
    }

    /// Ask whichever livenote process runs the note to stop it (`livenote stop`, the editor's
    /// *Stop* on a run another process holds): a `<key>.stop` file beside its lock, which the
    /// holder watches for. `Ok(None)` when no process runs the note; else the holder's pid
    /// when the lock says it.
    pub fn request_stop(&self, rel: &str) -> std::io::Result<Option<Option<u32>>> {
        if !self.is_locked(rel) {
            return Ok(None);
        }
        let dir = self.ensure("locks")?;
        let stop = dir.join(format!("{}.stop", Self::key(rel)));
        match confine::open_nofollow(&stop, OpenOptions::new().write(true).create_new(true)) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let holder = confine::open_nofollow(&dir.join(Self::key(rel)), OpenOptions::new().read(true))
            .ok()
            .and_then(|mut f| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut f, &mut text).ok()?;
                text.trim().parse::<u32>().ok()
            });
        Ok(Some(holder))
    }

    /// Whether a stop was requested for the note's run ([`Store::request_stop`]).
    pub fn stop_requested(&self, rel: &str) -> bool {
        let Some(dir) = self.existing("locks") else { return false };
        std::fs::symlink_metadata(dir.join(format!("{}.stop", Self::key(rel)))).is_ok_and(|m| m.is_file())
    }

    /// Forget a stop request (taken, or stale). Only a regular file is removed.
    pub fn clear_stop(&self, rel: &str) {
        let Some(dir) = self.existing("locks") else { return };
        let stop = dir.join(format!("{}.stop", Self::key(rel)));
        if std::fs::symlink_metadata(&stop).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(stop);
        }
    }

    /// Whether some process is running the note now (its lock is held). Creates nothing.
    /// The names of the lock files there are (a note has one once it ran), listed once so an
    /// index-wide request probes only those instead of opening a lock per note.
    pub fn lock_names(&self) -> std::collections::HashSet<std::ffi::OsString> {
        let Some(dir) = self.existing("locks") else { return Default::default() };
        std::fs::read_dir(dir).map(|r| r.flatten().map(|e| e.file_name()).collect()).unwrap_or_default()
    }

    /// [`Store::is_locked`] for a note whose lock file is not among `names` ([`Store::lock_names`]):
    /// not locked, without asking the filesystem.
    pub fn is_locked_among(&self, rel: &str, names: &std::collections::HashSet<std::ffi::OsString>) -> bool {
        names.contains(std::ffi::OsStr::new(&Self::key(rel))) && self.is_locked(rel)
    }

    pub fn is_locked(&self, rel: &str) -> bool {
        let Some(dir) = self.existing("locks") else { return false };
        // Probes of this process take turns: two taking the lock to tell at once would each
        // see the other's instant as a run (a lens showing "updating" for nothing).
        let _turn = PROBING.lock().unwrap_or_else(|p| p.into_inner());
        let Ok(file) = confine::open_nofollow(&dir.join(Self::key(rel)), OpenOptions::new().write(true))
        else {
            return false;
        };
        // Another process's probe holds it for an instant too: asked again for a moment.
        let deadline = std::time::Instant::now() + PROBE_PATIENCE;
        loop {
            match file.try_lock() {
                Ok(()) => {
                    let _ = file.unlock();
                    return false;
                }
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(_) => return true,
            }
        }
    }

    /// Save the text of a note's body before a run, keeping the newest `keep` snapshots. A
    /// linked `.livenote`, `history` or `history/<key>` is refused (`confine::is_refusal`).
    pub fn snapshot(&self, rel: &str, run_id: &str, body: &str, keep: usize) -> std::io::Result<PathBuf> {
        if !is_run_id(run_id) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{run_id:?} is not a run id"),
            ));
        }
        let dir = self.ensure(&format!("history/{}", Self::key(rel)))?;
        // Which note the folder is of (its key is one-way), so that a renamed note finds the
        // state it left behind (`runs::identity`). Written once, best effort.
        let marker = dir.join(NOTE_MARKER);
        if std::fs::symlink_metadata(&marker).is_err()
            && let Err(e) = crate::workspace::write::write_atomic(&marker, &format!("{rel}\n"))
        {
            tracing::warn!("write {}: {e}", marker.display());
        }
        let path = dir.join(format!("{run_id}.md"));
        crate::workspace::write::write_atomic(&path, body).map_err(std::io::Error::other)?;
        let mut snaps = self.snapshots(rel);
        while snaps.len() > keep.max(1) {
            let old = snaps.remove(0);
            if let Err(e) = std::fs::remove_file(&old) {
                tracing::warn!("prune {}: {e}", old.display());
            }
        }
        Ok(path)
    }

    /// Snapshots of a note, oldest first (run ids sort by time): only regular files named
    /// `<run id>.md` in a real `history/<key>` folder, so pruning never touches anything else.
    pub fn snapshots(&self, rel: &str) -> Vec<PathBuf> {
        let Some(dir) = self.existing(&format!("history/{}", Self::key(rel))) else { return Vec::new() };
        confine::regular_files(&dir)
            .into_iter()
            .filter(|p| {
                p.extension().is_some_and(|e| e == "md")
                    && p.file_stem().and_then(|s| s.to_str()).is_some_and(is_run_id)
            })
            .collect()
    }

    /// The body saved before the run `run_id`, if kept.
    pub fn snapshot_of(&self, rel: &str, run_id: &str) -> Option<String> {
        if !is_run_id(run_id) {
            return None;
        }
        let dir = self.existing(&format!("history/{}", Self::key(rel)))?;
        let path = dir.join(format!("{run_id}.md"));
        let file = confine::open_nofollow(&path, OpenOptions::new().read(true)).ok()?;
        let bytes = confine::read_capped(file, &path, crate::workspace::read::MAX_NOTE_BYTES).ok()?;
        String::from_utf8(bytes).ok()
    }

    /// Open the transcript of a run for appending.
    pub fn transcript(&self, run_id: &str) -> std::io::Result<Transcript> {
        if !is_run_id(run_id) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{run_id:?} is not a run id"),
            ));
        }
        let dir = self.ensure("runs")?;
        let file = confine::open_nofollow(
            &dir.join(format!("{run_id}.jsonl")),
            OpenOptions::new().create(true).append(true),
        )?;
        Ok(Transcript { file })
    }

    /// Every transcript file (regular files only), oldest first.
    pub fn transcripts(&self) -> Vec<PathBuf> {
        self.existing("runs").map(|d| confine::regular_files(&d)).unwrap_or_default()
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

    /// A probe (`is_locked`) or a program starting in that instant holds the lock for a moment:
    /// a run or a rename asking then is not refused (a rename in the editor once kept its
    /// history under the old name for it).
    #[test]
    fn a_lock_held_for_an_instant_is_still_taken() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::new(dir.path());
        let held = s.try_lock("a.md").unwrap_or_else(|e| panic!("{e}"));
        assert!(held.is_some());
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(1));
            drop(held);
        });
        assert!(s.try_lock("a.md").unwrap_or_else(|e| panic!("{e}")).is_some());
        let _ = release.join();
    }

    /// Probes take the lock for an instant to tell: many at once (the index's refresh, the
    /// watcher catching up, a lens) never see each other as a run.
    #[test]
    fn probes_at_once_never_see_each_other_as_a_run() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = std::sync::Arc::new(Store::new(dir.path()));
        drop(s.try_lock("a.md").unwrap_or_else(|e| panic!("{e}")));
        let probes: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || (0..500).filter(|_| s.is_locked("a.md")).count())
            })
            .collect();
        let seen: usize = probes.into_iter().map(|p| p.join().unwrap_or(usize::MAX)).sum();
        assert_eq!(seen, 0, "a free lock was seen held {seen} times");
        let held = s.try_lock("a.md").unwrap_or_else(|e| panic!("{e}"));
        assert!(held.is_some());
        assert!(s.is_locked("a.md"));
    }

    #[test]
    fn history_is_bounded() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::new(dir.path());
        let id = |i: usize| format!("01K000000000000000000000{i:02}");
        for i in 0..5 {
            s.snapshot("a.md", &id(i), &format!("body {i}"), 3).unwrap_or_else(|e| panic!("{e}"));
        }
        let snaps = s.snapshots("a.md");
        assert_eq!(snaps.len(), 3);
        assert_eq!(s.snapshot_of("a.md", &id(4)).as_deref(), Some("body 4"));
        assert_eq!(s.snapshot_of("a.md", &id(0)), None);
        assert_eq!(s.snapshot_of("a.md", "../../../etc/passwd"), None);
        assert_ne!(Store::key("a/b.md"), Store::key("a_b.md"));
    }

    #[cfg(unix)] // only the Unix-only tests use it
    fn outside_files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .map(|r| r.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    #[cfg(unix)]
    #[test]
    fn nothing_is_written_or_pruned_through_a_link() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::new(ws.path());
        let id = "01K00000000000000000000001";
        // A folder of the user's files, some named like snapshots.
        for n in ["01K00000000000000000000000.md", "diary.md"] {
            std::fs::write(outside.path().join(n), "mine").unwrap_or_else(|e| panic!("{e}"));
        }
        let key_dir = ws.path().join(".livenote/history").join(Store::key("a.md"));
        std::fs::create_dir_all(ws.path().join(".livenote/history")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(outside.path(), &key_dir).unwrap_or_else(|e| panic!("{e}"));
        let e = s.snapshot("a.md", id, "body", 1).err();
        assert!(e.as_ref().is_some_and(confine::is_refusal), "{e:?}");
        assert!(s.snapshots("a.md").is_empty());
        assert_eq!(s.snapshot_of("a.md", "01K00000000000000000000000"), None);
        assert_eq!(outside_files(outside.path()), ["01K00000000000000000000000.md", "diary.md"]);
        // Locks and transcripts through a linked folder: refused, nothing created.
        std::os::unix::fs::symlink(outside.path(), ws.path().join(".livenote/locks"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(outside.path(), ws.path().join(".livenote/runs"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(s.try_lock("a.md").is_err_and(|e| confine::is_refusal(&e)));
        assert!(!s.is_locked("a.md"));
        assert!(s.transcript(id).is_err_and(|e| confine::is_refusal(&e)));
        assert!(s.transcripts().is_empty());
        assert_eq!(outside_files(outside.path()), ["01K00000000000000000000000.md", "diary.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn pruning_deletes_only_snapshots() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::new(ws.path());
        let dir = ws.path().join(".livenote/history").join(Store::key("a.md"));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        // Things livenote did not write: a note, a link named like a snapshot, a folder.
        std::fs::write(dir.join("a-note.md"), "mine").unwrap_or_else(|e| panic!("{e}"));
        let target = ws.path().join("target.md");
        std::fs::write(&target, "mine").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&target, dir.join("00000000000000000000000000.md"))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.join("01000000000000000000000000.md")).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..3 {
            s.snapshot("a.md", &format!("01K000000000000000000000{i:02}"), "b", 1)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(
            outside_files(&dir),
            [
                "00000000000000000000000000.md",
                "01000000000000000000000000.md",
                "01K00000000000000000000002.md",
                "a-note.md",
                NOTE_MARKER
            ]
        );
        assert!(target.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_state_folder_or_gitignore_is_never_written_through() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(outside.path(), ws.path().join(".livenote"))
            .unwrap_or_else(|e| panic!("{e}"));
        let s = Store::new(ws.path());
        assert!(s.try_lock("a.md").is_err_and(|e| confine::is_refusal(&e)));
        assert!(state_dir(ws.path(), "events").is_err_and(|e| confine::is_refusal(&e)));
        assert!(outside_files(outside.path()).is_empty());
        // `.livenote/.gitignore` dangling to a file elsewhere: the link is replaced by livenote's
        // file, and nothing is created where it pointed.
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(ws.path().join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
        let elsewhere = outside.path().join(".gitignore");
        std::os::unix::fs::symlink(&elsewhere, ws.path().join(".livenote/.gitignore"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(Store::new(ws.path()).try_lock("a.md").is_ok_and(|l| l.is_some()));
        assert!(!elsewhere.exists());
        let gitignore = std::fs::symlink_metadata(ws.path().join(".livenote/.gitignore"));
        assert!(gitignore.is_ok_and(|m| m.is_file()));
        assert!(is_run_id("01KAZ3V1Q9X8Y7W6T5S4R3P2N0") && !is_run_id("01KAZ3V1Q9X8Y7W6T5S4R3P2NI"));
        assert!(!is_run_id("/home/me/diary") && !is_run_id("run1"));
    }
}
