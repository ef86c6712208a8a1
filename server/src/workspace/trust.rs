//! The list of trusted workspaces, in the user's data dir. A freshly cloned folder of notes
//! must not spend money or run programs by itself: scheduled and event runs start only in a
//! trusted workspace (SPEC section 7). One canonical path per line; a folder inside a trusted
//! one is trusted too.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

impl TrustStore {
    /// The store in `dir` (tests and `LIVENOTE_DATA_DIR` point it elsewhere).
    pub fn in_dir(dir: &Path) -> TrustStore {
        TrustStore { file: dir.join("trusted-workspaces") }
    }

    /// The user's store: `$LIVENOTE_DATA_DIR`, else `$XDG_DATA_HOME/livenote`, else
    /// `~/.local/share/livenote`. `None` when no home can be found.
    pub fn user() -> Option<TrustStore> {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = env("LIVENOTE_DATA_DIR")
            .or_else(|| env("XDG_DATA_HOME").map(|d| d.join("livenote")))
            .or_else(|| env("HOME").map(|h| h.join(".local/share/livenote")))?;
        Some(TrustStore::in_dir(&dir))
    }

    /// The file holding the list (watched so trust takes effect without a restart).
    pub fn file(&self) -> &Path {
        &self.file
    }

    fn entries(&self) -> Vec<PathBuf> {
        std::fs::read_to_string(&self.file)
            .map(|s| s.lines().filter(|l| !l.trim().is_empty()).map(PathBuf::from).collect())
            .unwrap_or_default()
    }

    pub fn is_trusted(&self, root: &Path) -> bool {
        self.list().contains(root)
    }

    /// The list as read now, for answering many questions with one read.
    pub fn list(&self) -> TrustList {
        TrustList { entries: self.entries() }
    }

    /// Add `root`, written atomically (temp file + rename) so a crash never loses the list.
    pub fn trust(&self, root: &Path) -> std::io::Result<()> {
        let root = canonical(root);
        let mut entries = self.entries();
        if entries.iter().any(|t| root.starts_with(t)) {
            return Ok(());
        }
        entries.push(root);
        let dir = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        for e in &entries {
            writeln!(tmp, "{}", e.display())?;
        }
        tmp.as_file().sync_all()?;
        tmp.persist(&self.file).map_err(|e| e.error)?;
        Ok(())
    }
}

/// A snapshot of the trust list.
#[derive(Debug, Clone, Default)]
pub struct TrustList {
    entries: Vec<PathBuf>,
}

impl TrustList {
    pub fn contains(&self, root: &Path) -> bool {
        let root = canonical(root);
        self.entries.iter().any(|t| root.starts_with(t))
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusting_covers_subfolders_and_persists() {
        let data = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let sub = ws.path().join("notes");
        std::fs::create_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
        let store = TrustStore::in_dir(&data.path().join("livenote"));
        assert!(!store.is_trusted(ws.path()));
        store.trust(ws.path()).unwrap_or_else(|e| panic!("{e}"));
        store.trust(ws.path()).unwrap_or_else(|e| panic!("{e}"));
        assert!(store.is_trusted(&sub));
        let again = TrustStore::in_dir(&data.path().join("livenote"));
        assert!(again.is_trusted(ws.path()));
        assert_eq!(again.entries().len(), 1);
    }
}
