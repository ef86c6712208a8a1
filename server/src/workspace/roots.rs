//! Which root owns a path. A folder with its own `.livenote.toml` is a root of its own wherever
//! it sits (`livenote init my-notes` inside another workspace makes one): its notes run with its
//! configuration, its `.livenote/` state and its own trust, never with those of a folder
//! around it (SPEC 7: trust does not extend to nested folders with a configuration). Every
//! surface (watch, list, check, the language server, `livenote mcp`, events) asks here; the
//! walk that finds them is `walk::roots`.

use std::path::{Path, PathBuf};

use super::trust::CONFIG_FILE;

/// Whether `dir` has a `.livenote.toml` of its own, and so is a root.
pub fn has_config(dir: &Path) -> bool {
    dir.join(CONFIG_FILE).exists()
}

/// The root owning `path` in the workspace `root`: the nearest folder between them with its own
/// `.livenote.toml`, else `root` itself.
pub fn owner(root: &Path, path: &Path) -> PathBuf {
    super::trust::nested_config_dir(root, path).unwrap_or_else(|| root.to_path_buf())
}

/// The root among `roots` (a process's roots, nested ones included) owning `path`: the
/// deepest that holds it.
pub fn owner_among<'a>(roots: &'a [PathBuf], path: &Path) -> Option<&'a Path> {
    roots
        .iter()
        .filter(|r| super::is_within(path, r))
        .max_by_key(|r| r.as_os_str().len())
        .map(PathBuf::as_path)
}
