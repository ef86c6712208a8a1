//! Where the user's programs start (a `command` provider, a stdio MCP server): in a trusted
//! folder, the workspace, as always; in an untrusted one (a clone), a fresh empty folder of
//! their own, so that what the clone ships (`.npmrc`, `package.json`, `.envrc`, `node_modules`,
//! a `bin/` on a relative PATH) is not picked up by `npx`, `uvx` or a shell. The workspace path
//! comes in `LIVENOTE_WORKSPACE` either way, and PATH loses every entry inside the workspace
//! or relative to the working folder.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where one program runs, and the PATH it gets. Keeps a neutral folder alive until dropped
/// (hold it as long as the program runs); the folder is then removed.
#[derive(Debug)]
pub struct Launch {
    dir: PathBuf,
    path: Option<OsString>,
    _neutral: Option<tempfile::TempDir>,
}

impl Launch {
    /// The working folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The PATH to set when it differs from livenote's own.
    pub fn path_env(&self) -> Option<&OsString> {
        self.path.as_ref()
    }
}

/// How a program runs for the workspace `root`: there when `trusted`, else in a new empty
/// folder (private to the user) with the workspace's PATH entries left out.
pub fn prepare(root: &Path, trusted: bool) -> std::io::Result<Launch> {
    if trusted {
        return Ok(Launch { dir: root.to_path_buf(), path: None, _neutral: None });
    }
    let neutral = tempfile::Builder::new().prefix("livenote-program-").tempdir()?;
    let path = std::env::var_os("PATH").and_then(|p| outside_path(&p, root));
    Ok(Launch { dir: neutral.path().to_path_buf(), path, _neutral: Some(neutral) })
}

/// `path` without entries that are relative (they name the working folder) or inside `root`
/// (as written or resolved); `None` when nothing is left out.
fn outside_path(path: &std::ffi::OsStr, root: &Path) -> Option<OsString> {
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let all: Vec<PathBuf> = std::env::split_paths(path).collect();
    let kept: Vec<&PathBuf> = all
        .iter()
        .filter(|p| {
            let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            p.is_absolute() && !p.starts_with(root) && !real.starts_with(&real_root)
        })
        .collect();
    if kept.len() == all.len() {
        return None;
    }
    // Every entry came from a PATH, so joining them again cannot fail.
    std::env::join_paths(kept).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_programs_run_in_an_empty_folder_without_the_workspace_on_path() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = ws.path();
        let trusted = prepare(root, true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(trusted.dir(), root);
        assert!(trusted.path_env().is_none());
        let l = prepare(root, false).unwrap_or_else(|e| panic!("{e}"));
        let dir = l.dir().to_path_buf();
        assert!(dir.is_dir() && !dir.starts_with(root));
        assert_eq!(std::fs::read_dir(&dir).map(Iterator::count).unwrap_or(1), 0);
        drop(l);
        assert!(!dir.exists(), "the folder goes with the program");

        let bin = root.join("bin");
        std::fs::create_dir(&bin).unwrap_or_else(|e| panic!("{e}"));
        let path =
            std::env::join_paths([bin.as_path(), Path::new("."), Path::new("/usr/bin"), Path::new("")])
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(outside_path(&path, root), Some(OsString::from("/usr/bin")));
        assert_eq!(outside_path(&OsString::from("/usr/bin:/bin"), root), None);
    }
}
