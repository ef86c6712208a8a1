//! Atomic, compare-and-swap writes of notes: the new text goes to a temp file beside the note,
//! is synced, and replaces the note by rename only if the note still holds the text the change
//! was computed from. A crash leaves either the old or the new file, never a torn one.

use std::io::Write;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Someone (an editor, a sync tool, git) changed the note since it was read.
    #[error("the note changed on disk while livenote was writing it")]
    Changed,
    #[error("write {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
    move |source| WriteError::Io { path: path.display().to_string(), source }
}

/// Replace the note at `path` with `new` if it still holds `expected`. A read-only note
/// (no write permission bit) is refused, as an editor would: the rename would replace it
/// regardless of its mode.
pub fn write_if_unchanged(path: &Path, expected: &str, new: &str) -> Result<(), WriteError> {
    let meta = std::fs::metadata(path).map_err(io(path))?;
    if meta.permissions().readonly() {
        return Err(WriteError::Io {
            path: path.display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "the note is read-only"),
        });
    }
    let current = std::fs::read(path).map_err(io(path))?;
    if current != expected.as_bytes() {
        return Err(WriteError::Changed);
    }
    write_atomic(path, new)
}

/// Write `text` to `path` through a synced temp file and a rename, keeping the permissions.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), WriteError> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp =
        tempfile::Builder::new().prefix(".livenote-").suffix(".tmp").tempfile_in(dir).map_err(io(path))?;
    // Through the file itself: the temp file's own `Write` would add its (soon deleted) path
    // to the error, which ends up in `lastRunError`.
    tmp.as_file_mut().write_all(text.as_bytes()).map_err(io(path))?;
    tmp.as_file().sync_all().map_err(io(path))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path).map_err(|e| WriteError::Io { path: path.display().to_string(), source: e.error })?;
    // Sync the folder so the rename itself survives a power cut.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_only_unchanged_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("n.md");
        std::fs::write(&p, "old").unwrap_or_else(|e| panic!("{e}"));
        write_if_unchanged(&p, "old", "new").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&p).unwrap_or_default(), "new");
        assert!(matches!(write_if_unchanged(&p, "old", "newer"), Err(WriteError::Changed)));
        assert_eq!(std::fs::read_to_string(&p).unwrap_or_default(), "new");
        let leftovers = std::fs::read_dir(dir.path()).map(|r| r.count()).unwrap_or(0);
        assert_eq!(leftovers, 1, "no temp files left behind");
    }

    #[cfg(unix)]
    #[test]
    fn read_only_folder_fails_cleanly() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("n.md");
        std::fs::write(&p, "old").unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o500));
        let r = write_if_unchanged(&p, "old", "new");
        let _ = std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700));
        // Root ignores permissions; elsewhere the write must fail and leave the note intact.
        if r.is_err() {
            assert_eq!(std::fs::read_to_string(&p).unwrap_or_default(), "old");
        }
    }
}
