//! `<workspace>/.livenote/`, livenote's state folder: its sub-folders reached without following
//! a link (`confine::real_dir`), the folder's own `.gitignore`, and the file-name-safe key of a
//! note that names its per-note files (history, locks, memory). Here, below `runs/` and
//! `memory`, so that both name a note's files the same way.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{STATE_DIR, confine};

/// `<root>/.livenote/<sub>` as a real folder (no link anywhere below the root), created on
/// demand with the folder's own `.gitignore`. Every writer of `.livenote/` goes through here.
/// Refused (nothing is written) when `.livenote/.gitignore` is not livenote's and cannot be
/// made so: what livenote keeps there would reach the repository at the next `git add -A`.
pub fn state_dir(root: &Path, sub: &str) -> std::io::Result<PathBuf> {
    let top = confine::real_dir(root, Path::new(STATE_DIR), true)?;
    ensure_gitignore(&top)?;
    confine::real_dir(&top, Path::new(sub), true)
}

/// `<root>/.livenote/<sub>` if it exists as a real folder; `None` when absent, `Err` when
/// refused (a link, not a folder).
pub fn existing_state_dir(root: &Path, sub: &str) -> std::io::Result<Option<PathBuf>> {
    match confine::real_dir(root, &Path::new(STATE_DIR).join(sub), false) {
        Ok(p) => Ok(Some(p)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `.livenote/.gitignore` as livenote writes it: everything under `.livenote/` stays out of
/// git (run state is machine-local: history, transcripts, events, locks, memory).
pub const GITIGNORE: &str = "# livenote's run state (history, transcripts, events, locks): never committed.\n# livenote writes this file, and puts it back when it says anything else.\n*\n";

/// What livenote wrote before [`GITIGNORE`]: livenote's too (it ignores everything).
const GITIGNORE_BEFORE: &str = "# livenote's run state (history, transcripts, locks)\n*\n";

/// Whether `bytes` are a `.gitignore` livenote wrote.
fn is_ours(bytes: &[u8]) -> bool {
    bytes == GITIGNORE.as_bytes() || bytes == GITIGNORE_BEFORE.as_bytes()
}

/// The largest `.gitignore` read to compare with [`GITIGNORE`]; anything larger is not ours.
const MAX_GITIGNORE_BYTES: u64 = 64 * 1024;

/// Make `.livenote/.gitignore` livenote's: created when missing (exclusively, never through a
/// link); anything else there (another text, one that ignores nothing, a link, which is
/// replaced and never followed) is replaced atomically by [`GITIGNORE`]. An error when that
/// cannot be done (a folder in its place, a file that cannot be replaced).
fn ensure_gitignore(top: &Path) -> std::io::Result<()> {
    let path = top.join(".gitignore");
    match confine::read_regular(&path, MAX_GITIGNORE_BYTES) {
        Ok(bytes) if is_ours(&bytes) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let created = confine::open_nofollow(&path, OpenOptions::new().write(true).create_new(true))
                .and_then(|mut f| f.write_all(GITIGNORE.as_bytes()));
            match created {
                Ok(()) => return Ok(()),
                // Another process was first: it wrote ours, or something to compare again.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(refused(&path, &e.to_string())),
            }
            if confine::read_regular(&path, MAX_GITIGNORE_BYTES).is_ok_and(|b| is_ours(&b)) {
                return Ok(());
            }
        }
        _ => {}
    }
    super::write::write_atomic(&path, GITIGNORE).map_err(|e| refused(&path, &e.to_string()))?;
    tracing::warn!(
        "{}: it was not livenote's (it did not keep the run state out of git); rewritten",
        path.display()
    );
    Ok(())
}

fn refused(path: &Path, why: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!(
            "{} is not livenote's and cannot be rewritten ({why}): nothing is written under .livenote/ until it is removed, or the run state could be committed",
            path.display()
        ),
    )
}

/// A stable file-name-safe key for a note: its workspace-relative path, flattened.
pub fn note_key(rel: &str) -> String {
    let mut k: String = rel
        .chars()
        .map(|c| if c.is_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .collect();
    if k.len() > 120 {
        k.truncate(k.char_indices().nth(100).map_or(k.len(), |(i, _)| i));
    }
    // A short hash keeps keys unique when flattening maps two paths to one string.
    let h =
        rel.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("{k}-{:08x}", h as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> tempfile::TempDir {
        tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
    }

    fn gitignore(root: &Path) -> String {
        std::fs::read_to_string(root.join(".livenote/.gitignore")).unwrap_or_default()
    }

    #[test]
    fn the_gitignore_is_livenotes_whatever_a_clone_shipped() {
        // Missing: created.
        let d = ws();
        state_dir(d.path(), "events").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(gitignore(d.path()), GITIGNORE);
        // One that ignores nothing (or anything else): rewritten.
        std::fs::write(d.path().join(".livenote/.gitignore"), "# keep it all\n!*\n")
            .unwrap_or_else(|e| panic!("{e}"));
        state_dir(d.path(), "events").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(gitignore(d.path()), GITIGNORE);
        // What an earlier livenote wrote is livenote's: left as it is.
        std::fs::write(d.path().join(".livenote/.gitignore"), GITIGNORE_BEFORE)
            .unwrap_or_else(|e| panic!("{e}"));
        state_dir(d.path(), "runs").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(gitignore(d.path()), GITIGNORE_BEFORE);
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_gitignore_is_replaced_never_followed_and_a_folder_there_refuses_every_write() {
        let d = ws();
        let outside = ws();
        std::fs::create_dir_all(d.path().join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
        let target = outside.path().join(".gitignore");
        std::fs::write(&target, "outside\n").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&target, d.path().join(".livenote/.gitignore"))
            .unwrap_or_else(|e| panic!("{e}"));
        state_dir(d.path(), "events").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(gitignore(d.path()), GITIGNORE);
        let meta = std::fs::symlink_metadata(d.path().join(".livenote/.gitignore"));
        assert!(meta.is_ok_and(|m| m.is_file()), "the link itself was replaced");
        assert_eq!(std::fs::read_to_string(&target).unwrap_or_default(), "outside\n");
        // A folder named `.gitignore`: git ignores nothing there, so nothing is written.
        let d = ws();
        std::fs::create_dir_all(d.path().join(".livenote/.gitignore/x")).unwrap_or_else(|e| panic!("{e}"));
        let e = state_dir(d.path(), "events").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains(".gitignore is not livenote's and cannot be rewritten"), "{e}");
        assert!(!d.path().join(".livenote/events").exists());
    }
}
