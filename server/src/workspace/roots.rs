//! Which root owns a path. A folder with its own `.livenote.toml` is a root of its own wherever
//! it sits (`livenote init my-notes` inside another workspace makes one): its notes run with its
//! configuration, its `.livenote/` state and its own trust, never with those of a folder
//! around it (SPEC 7: trust does not extend to nested folders with a configuration). Every
//! surface (watch, list, check, the language server, `livenote mcp`, events) asks here; the
//! walk that finds them is `walk::roots`.

use std::path::{Path, PathBuf};

use super::path_style::PathStyle;
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
    owner_among_in(PathStyle::NATIVE, roots, path)
}

/// [`owner_among`] for paths of `style`: on Windows `c:\notes\sub\a.md` is owned by
/// `C:\Notes\Sub`.
pub fn owner_among_in<'a>(style: PathStyle, roots: &'a [PathBuf], path: &Path) -> Option<&'a Path> {
    let holds = |r: &PathBuf| match style {
        PathStyle::Unix => super::is_within(path, r),
        PathStyle::Windows => style.is_within(&path.to_string_lossy(), &r.to_string_lossy()),
    };
    roots
        .iter()
        .filter(|r| holds(r))
        .max_by_key(|r| match style {
            PathStyle::Unix => r.as_os_str().len(),
            // `\\?\C:\Notes` is no deeper than `C:\Notes\Sub`.
            PathStyle::Windows => style.split(&r.to_string_lossy()).parts.len(),
        })
        .map(PathBuf::as_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deepest_root_owns_a_path_in_either_style() {
        let roots: Vec<PathBuf> =
            [r"C:\Notes", r"C:\Notes\Sub", r"D:\Notes\Sub\Deeper"].map(PathBuf::from).to_vec();
        let w = |p: &str| {
            owner_among_in(PathStyle::Windows, &roots, Path::new(p)).map(|r| r.to_string_lossy().into_owned())
        };
        assert_eq!(w(r"c:\notes\sub\a.md"), Some(r"C:\Notes\Sub".into()));
        assert_eq!(w(r"\\?\C:\NOTES\a.md"), Some(r"C:\Notes".into()));
        assert_eq!(w(r"C:\NotesX\a.md"), None);
        let roots: Vec<PathBuf> = ["/ws", "/ws/sub", "/ws/sub-x"].map(PathBuf::from).to_vec();
        let u = |p: &str| owner_among_in(PathStyle::Unix, &roots, Path::new(p)).map(Path::to_path_buf);
        assert_eq!(u("/ws/sub/a.md"), Some(PathBuf::from("/ws/sub")));
        assert_eq!(u("/ws/sub-x/a.md"), Some(PathBuf::from("/ws/sub-x")));
        assert_eq!(u("/ws/Sub/a.md"), Some(PathBuf::from("/ws")));
        assert_eq!(u("/elsewhere/a.md"), None);
    }
}
