//! Atomic, compare-and-swap writes of notes: the new text goes to a temp file beside the note,
//! is synced, and replaces the note by rename only if the note still holds the text the change
//! was computed from (compared before the temp file is written, and again right before the
//! rename, so what another program writes meanwhile is not lost). A crash leaves either the
//! old or the new file, never a torn one.
//!
//! Writes keep what the user has (SPEC section 7): a symlinked note stays a link and the file
//! it points to gets the new text (the temp file goes beside the target); the note's mode,
//! owner and group are given to the new file, and when they cannot be (another owner, without
//! the rights to chown) the note is refused, never silently handed to the current user. A note
//! with several hard links is refused: a rename would split it, leaving the other names with
//! the old text, and an in-place write could tear it. A note the current user could not write
//! is never replaced through a writable folder. On Windows (`crate::platform`): owners are the
//! ACLs' business and hard links are not counted; a rename over a note another program holds
//! open is retried for a moment.

use std::fs::Metadata;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::confine;
use crate::platform;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Someone (an editor, a sync tool, git) changed the note since it was read.
    #[error("the note changed on disk while livenote was writing it")]
    Changed,
    #[error("write {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error(
        "{path} has {links} hard links; livenote does not replace it, which would leave the other names with the old text (make them symlinks, or edit the note yourself)"
    )]
    HardLinks { path: String, links: u64 },
    #[error("{path} is not writable by the current user; livenote never replaces a file it could not write")]
    NotWritable { path: String },
    #[error(
        "{path} belongs to uid {uid} gid {gid}, which livenote cannot give the new text; it is not replaced (run as that user)"
    )]
    Owner { path: String, uid: u32, gid: u32 },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
    move |source| WriteError::Io { path: path.display().to_string(), source }
}

/// Replace the note at `path` with `new` if it still holds `expected`. When `path` is a
/// symlink, the file it points to is written and the link stays. A read-only note (no write
/// permission bit), one the current user could not write, one with several hard links or one
/// whose owner cannot be kept is refused, as an editor would: the rename would replace it
/// regardless.
pub fn write_if_unchanged(path: &Path, expected: &str, new: &str) -> Result<(), WriteError> {
    let target = std::fs::canonicalize(path).map_err(io(path))?;
    let meta = std::fs::metadata(&target).map_err(io(path))?;
    let shown = || path.display().to_string();
    if !meta.is_file() {
        return Err(io(path)(confine::Refused::NotRegular(path.to_path_buf()).into()));
    }
    if meta.permissions().readonly() {
        return Err(WriteError::Io {
            path: shown(),
            source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "the note is read-only"),
        });
    }
    if let Some(links) = platform::link_count(&meta)
        && links > 1
    {
        return Err(WriteError::HardLinks { path: shown(), links });
    }
    if !may_write(&target) {
        return Err(WriteError::NotWritable { path: shown() });
    }
    if !still_holds(&target, expected).map_err(io(path))? {
        return Err(WriteError::Changed);
    }
    replace_note(&target, new, &meta, expected).map_err(|e| match e {
        WriteError::Io { source, .. } => WriteError::Io { path: shown(), source },
        WriteError::Owner { uid, gid, .. } => WriteError::Owner { path: shown(), uid, gid },
        e => e,
    })
}

/// Whether the regular file `target` holds exactly `expected`.
fn still_holds(target: &Path, expected: &str) -> std::io::Result<bool> {
    let mut current = Vec::with_capacity(expected.len() + 1);
    confine::open_regular(target)?.read_to_end(&mut current)?;
    Ok(current == expected.as_bytes())
}

/// Whether the current user may write the file itself (not just its folder).
fn may_write(path: &Path) -> bool {
    platform::may_write(path)
}

/// The folder of `path`, `.` for a bare name.
fn dir_of(path: &Path) -> PathBuf {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf()
}

/// Replace the regular file `target` (no link: already resolved) by rename, giving the new
/// file `meta`'s owner, group and mode, if it still holds `expected` right before the rename.
fn replace_note(target: &Path, text: &str, meta: &Metadata, expected: &str) -> Result<(), WriteError> {
    let dir = dir_of(target);
    let mut tmp =
        tempfile::Builder::new().prefix(".livenote-").suffix(".tmp").tempfile_in(&dir).map_err(io(target))?;
    // Through the file itself: the temp file's own `Write` would add its (soon deleted) path
    // to the error, which ends up in `lastRunError`.
    tmp.as_file_mut().write_all(text.as_bytes()).map_err(io(target))?;
    let mine = tmp.as_file().metadata().map_err(io(target))?;
    // Owner first: a chown clears set-id bits, which the mode below restores.
    if let Err(platform::OwnerNotKept { uid, gid }) = platform::keep_owner(tmp.as_file(), &mine, meta) {
        return Err(WriteError::Owner { path: target.display().to_string(), uid, gid });
    }
    tmp.as_file().set_permissions(meta.permissions()).map_err(io(target))?;
    tmp.as_file().sync_all().map_err(io(target))?;
    // POSIX has no compare-and-rename: text another program wrote since the caller's compare
    // would be lost to the rename. Writing and syncing the temp file is most of that window
    // (milliseconds), so compare again now, leaving only this read and the rename itself.
    if !still_holds(target, expected).map_err(io(target))? {
        return Err(WriteError::Changed);
    }
    platform::persist(tmp, target)
        .map_err(|e| WriteError::Io { path: target.display().to_string(), source: e.error })?;
    sync_dir(&dir);
    Ok(())
}

/// Sync a folder so a rename in it survives a power cut.
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Write `text` to `path` through a synced temp file and a rename: for livenote's own files
/// (history, events). Whatever is at `path` is replaced, never followed (a link there is
/// replaced by the file); a regular file's permissions are kept, a new file is private (0600).
/// The folder must already be checked (`confine::real_dir`).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), WriteError> {
    let dir = dir_of(path);
    let mut tmp =
        tempfile::Builder::new().prefix(".livenote-").suffix(".tmp").tempfile_in(&dir).map_err(io(path))?;
    tmp.as_file_mut().write_all(text.as_bytes()).map_err(io(path))?;
    tmp.as_file().sync_all().map_err(io(path))?;
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.is_file()
    {
        let _ = tmp.as_file().set_permissions(meta.permissions());
    }
    platform::persist(tmp, path)
        .map_err(|e| WriteError::Io { path: path.display().to_string(), source: e.error })?;
    sync_dir(&dir);
    Ok(())
}

/// Create `path` with `text` atomically, with the usual mode of a new file (0666 less the
/// umask: 0644 under 022), failing with `AlreadyExists` if anything is there (a link too).
pub fn create_new(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = dir_of(path);
    let mut builder = tempfile::Builder::new();
    builder.prefix(".livenote-").suffix(".tmp");
    if let Some(permissions) = platform::new_file_permissions() {
        builder.permissions(permissions);
    }
    let mut tmp = builder.tempfile_in(&dir)?;
    tmp.as_file_mut().write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist_noclobber(path).map_err(|e| e.error)?;
    sync_dir(&dir);
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

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

    #[test]
    fn text_written_after_the_compare_and_before_the_rename_is_kept() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("n.md");
        // Another program appended once `write_if_unchanged` had compared "old": the rename
        // is called off at the second compare, the appended line kept, no temp file left.
        std::fs::write(&p, "old\nappended\n").unwrap_or_else(|e| panic!("{e}"));
        let meta = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(replace_note(&p, "new", &meta, "old\n"), Err(WriteError::Changed)));
        assert_eq!(std::fs::read_to_string(&p).unwrap_or_default(), "old\nappended\n");
        assert_eq!(std::fs::read_dir(dir.path()).map(|r| r.count()).unwrap_or(0), 1);
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0)
    }

    #[test]
    fn a_symlinked_note_stays_a_link_and_its_target_is_written() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let real = dir.path().join("real");
        std::fs::create_dir_all(&real).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(real.join("n.md"), "old").unwrap_or_else(|e| panic!("{e}"));
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink("real/n.md", &link).unwrap_or_else(|e| panic!("{e}"));
        write_if_unchanged(&link, "old", "new").unwrap_or_else(|e| panic!("{e}"));
        assert!(std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()));
        assert_eq!(std::fs::read_to_string(real.join("n.md")).unwrap_or_default(), "new");
        // The temp file went beside the target, and is gone.
        assert_eq!(std::fs::read_dir(&real).map(|r| r.count()).unwrap_or(0), 1);
    }

    #[test]
    fn mode_is_kept_and_hard_links_are_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("n.md");
        std::fs::write(&p, "old").unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640))
            .unwrap_or_else(|e| panic!("{e}"));
        write_if_unchanged(&p, "old", "new").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(&p), 0o640);
        std::fs::hard_link(&p, dir.path().join("other.md")).unwrap_or_else(|e| panic!("{e}"));
        let r = write_if_unchanged(&p, "new", "newer");
        assert!(matches!(r, Err(WriteError::HardLinks { links: 2, .. })), "{r:?}");
        assert_eq!(std::fs::read_to_string(dir.path().join("other.md")).unwrap_or_default(), "new");
        assert_eq!(std::fs::read_to_string(&p).unwrap_or_default(), "new");
    }

    #[test]
    fn owner_is_kept_or_the_note_is_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("n.md");
        std::fs::write(&p, "old").unwrap_or_else(|e| panic!("{e}"));
        // Another owner: root can keep it (chown), anyone else cannot and must refuse.
        if std::os::unix::fs::chown(&p, Some(65534), Some(65534)).is_err() {
            return; // not root: no file of another user can be made here
        }
        write_if_unchanged(&p, "old", "new").unwrap_or_else(|e| panic!("{e}"));
        let m = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((m.uid(), m.gid()), (65534, 65534));
        assert_eq!(std::fs::read_to_string(&p).unwrap_or_default(), "new");
    }

    #[test]
    fn new_files_get_the_usual_mode() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("n.md");
        create_new(&p, "x").unwrap_or_else(|e| panic!("{e}"));
        // 0666 less the umask: group and others can read under any usual umask (022, 002).
        assert_eq!(mode(&p) & 0o644, 0o644, "{:o}", mode(&p));
        assert!(create_new(&p, "y").is_err_and(|e| e.kind() == std::io::ErrorKind::AlreadyExists));
        assert_eq!(std::fs::read_to_string(&p).unwrap_or_default(), "x");
    }

    #[test]
    fn state_files_replace_links_instead_of_following_them() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "keep").unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("state.json");
        std::os::unix::fs::symlink(&outside, &p).unwrap_or_else(|e| panic!("{e}"));
        write_atomic(&p, "new").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&outside).unwrap_or_default(), "keep");
        assert!(std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()));
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
