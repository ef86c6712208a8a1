//! Which root owns a path. A folder with its own `.livenote.toml` is a root of its own wherever
//! it sits (`livenote init my-notes` inside another workspace makes one): its notes run with its
//! configuration, its `.livenote/` state and its own trust, never with those of a folder
//! around it (SPEC 7: trust does not extend to nested folders with a configuration). Every
//! surface (watch, list, check, the language server, `livenote mcp`, events) asks here.

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

/// The roots a walk of `root` finds: `root` first, then every folder below it with its own
/// `.livenote.toml` (at any depth, outer before inner), each with the notes it owns. Folders
/// the walk skips (hidden, gitignored, excluded by the outer root) are not entered, so a
/// configuration inside them makes no root. `exclude_of` gives a root's `[scheduler]
/// exclude` (its own configuration's).
pub fn walk(
    root: &Path,
    exclude_of: &dyn Fn(&Path) -> Vec<String>,
) -> (Vec<(PathBuf, Vec<PathBuf>)>, Vec<super::Skipped>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(r) = todo.pop() {
        let walked = super::walk::root_files(&r, &exclude_of(&r));
        skipped.extend(walked.skipped);
        // Popped from the end: reversed, so that they come out in name order.
        todo.extend(walked.nested.into_iter().rev());
        out.push((r, walked.files));
    }
    (out, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap_or(p)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, "x").unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn a_folder_with_its_own_config_is_its_own_root() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        for p in [
            "a.md",
            "plain/b.md",
            "inner/.livenote.toml",
            "inner/c.md",
            "inner/deep/d.md",
            "inner/deeper/.livenote.toml",
            "inner/deeper/e.md",
            "other/.livenote.toml",
            ".hidden/.livenote.toml",
        ] {
            write(&root.join(p));
        }
        let (roots, skipped) = walk(root, &|_| Vec::new());
        assert!(skipped.is_empty(), "{skipped:?}");
        let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
        let got: Vec<(String, Vec<String>)> =
            roots.iter().map(|(r, files)| (rel(r), files.iter().map(|f| rel(f)).collect())).collect();
        let want = [
            ("", vec!["a.md", "plain/b.md"]),
            ("inner", vec!["inner/c.md", "inner/deep/d.md"]),
            ("inner/deeper", vec!["inner/deeper/e.md"]),
            ("other", vec![]),
        ];
        let want: Vec<(String, Vec<String>)> =
            want.iter().map(|(r, f)| (r.to_string(), f.iter().map(|s| s.to_string()).collect())).collect();
        assert_eq!(got, want);
        let all: Vec<PathBuf> = roots.into_iter().map(|(r, _)| r).collect();
        assert_eq!(
            owner_among(&all, &root.join("inner/deeper/x/e.md")),
            Some(root.join("inner/deeper").as_path())
        );
        assert_eq!(owner_among(&all, &root.join("inner/deep/d.md")), Some(root.join("inner").as_path()));
        assert_eq!(owner_among(&all, &root.join("plain/b.md")), Some(root));
        assert_eq!(owner(root, &root.join("inner/deeper/e.md")), root.join("inner/deeper"));
        assert_eq!(owner(root, &root.join("plain/b.md")), root);
    }
}
