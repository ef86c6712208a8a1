//! Walking a folder for markdown notes with the `ignore` crate: `.gitignore` (even outside a
//! git repository), `.ignore` and hidden folders are honoured, `.livenote/` is skipped, user
//! excludes are globs relative to the root, and symlink loops are reported, not followed.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;

use super::STATE_DIR;

/// Whether a path names a markdown note.
pub fn is_markdown(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"))
}

/// Every markdown file under `root`, sorted by path; walk errors (unreadable folders, symlink
/// loops) come back as messages beside the files.
pub fn markdown_files(root: &Path, exclude: &[String]) -> (Vec<PathBuf>, Vec<String>) {
    let mut errors = Vec::new();
    let mut builder = WalkBuilder::new(root);
    builder.follow_links(true).require_git(false).sort_by_file_name(|a, b| a.cmp(b));
    builder.filter_entry(|e| e.file_name() != STATE_DIR);
    if !exclude.is_empty() {
        let mut ob = OverrideBuilder::new(root);
        for glob in exclude {
            if let Err(e) = ob.add(&format!("!{glob}")) {
                errors.push(format!("exclude glob `{glob}`: {e}"));
            }
        }
        match ob.build() {
            Ok(o) => {
                builder.overrides(o);
            }
            Err(e) => errors.push(format!("exclude globs: {e}")),
        }
    }
    let mut files = Vec::new();
    for entry in builder.build() {
        match entry {
            Ok(e) => {
                if e.file_type().is_some_and(|t| t.is_file()) && is_markdown(e.path()) {
                    files.push(e.into_path());
                }
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    (files, errors)
}

/// Every entry under `root` that a confined reader (the agent's workspace tools) may see, in
/// name order: .gitignore (even outside git), .ignore and git excludes honoured, hidden paths
/// skipped, symlinked folders not entered (no loops, no escape), `.livenote/` and `.git/`
/// skipped outright. `only_towards`: enter only the folders on the way to this path.
pub fn visible_entries(root: &Path, only_towards: Option<PathBuf>) -> ignore::Walk {
    let mut b = WalkBuilder::new(root);
    b.follow_links(false).require_git(false).hidden(true).sort_by_file_name(|a, b| a.cmp(b));
    b.filter_entry(move |e| {
        let name = e.file_name();
        if name == STATE_DIR || name == ".git" {
            return false;
        }
        only_towards.as_ref().is_none_or(|t| t.starts_with(e.path()))
    });
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honours_gitignore_livenote_and_excludes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        for p in [
            "a.md",
            "b.markdown",
            "c.txt",
            "ignored/x.md",
            ".livenote/history/h.md",
            "archive/old.md",
            "sub/d.MD",
        ] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(&path, "x").unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap_or_else(|e| panic!("{e}"));
        let (files, errors) = markdown_files(root, &["archive/**".to_owned()]);
        let rel: Vec<String> =
            files.iter().map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string()).collect();
        assert_eq!(rel, ["a.md", "b.markdown", "sub/d.MD"]);
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_reported_not_followed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        std::fs::create_dir_all(root.join("a")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("a/n.md"), "x").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(root, root.join("a/loop")).unwrap_or_else(|e| panic!("{e}"));
        let (files, errors) = markdown_files(root, &[]);
        assert_eq!(files.len(), 1);
        assert_eq!(errors.len(), 1, "{errors:?}");
    }
}
