//! `[scheduler] exclude`: globs relative to a workspace root, with `.gitignore` semantics
//! (beside `.gitignore`, as the docs say). One matcher per root, used by the walk (as the
//! walker's overrides), by the index when a file event comes in, and so by `list`, the
//! scheduler, the language server's `listNotes` and event routing, which all read the index or
//! the walk. Two matchers with two glob dialects would disagree on `archive/*.md`.

use std::path::{Path, PathBuf};

use ignore::overrides::{Override, OverrideBuilder};

/// The excludes of one root.
#[derive(Debug, Clone)]
pub struct Excludes {
    root: PathBuf,
    globs: Vec<String>,
    matcher: Option<Override>,
}

impl Excludes {
    /// The matcher for `globs` under `root`, and a message per glob that does not parse (it is
    /// left out; the others still apply).
    pub fn new(root: &Path, globs: &[String]) -> (Excludes, Vec<String>) {
        let mut errors = Vec::new();
        let mut builder = OverrideBuilder::new(root);
        let mut kept = Vec::new();
        for glob in globs {
            // An override glob selects; `!` turns it into an exclusion.
            match builder.add(&format!("!{glob}")) {
                Ok(_) => kept.push(glob.clone()),
                Err(e) => errors.push(format!("exclude glob `{glob}`: {e}")),
            }
        }
        let matcher = if kept.is_empty() {
            None
        } else {
            match builder.build() {
                Ok(o) => Some(o),
                Err(e) => {
                    errors.push(format!("exclude globs: {e}"));
                    None
                }
            }
        };
        (Excludes { root: root.to_path_buf(), globs: kept, matcher }, errors)
    }

    pub fn none(root: &Path) -> Excludes {
        Excludes { root: root.to_path_buf(), globs: Vec::new(), matcher: None }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn globs(&self) -> &[String] {
        &self.globs
    }

    /// For the walker: skips what matches, and whole folders that match.
    pub fn overrides(&self) -> Option<Override> {
        self.matcher.clone()
    }

    /// Whether the file at `path` (under the root) is excluded: it, or a folder above it up to
    /// the root, matches, as the walk would have skipped that folder.
    pub fn excludes(&self, path: &Path) -> bool {
        let Some(m) = &self.matcher else { return false };
        let Ok(rel) = path.strip_prefix(&self.root) else { return false };
        if m.matched(rel, false).is_ignore() {
            return true;
        }
        rel.ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .any(|dir| m.matched(dir, true).is_ignore())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(globs: &[&str]) -> Excludes {
        let globs: Vec<String> = globs.iter().map(|g| (*g).to_owned()).collect();
        let (e, errors) = Excludes::new(Path::new("/ws"), &globs);
        assert!(errors.is_empty(), "{errors:?}");
        e
    }

    #[test]
    fn gitignore_semantics_for_files_and_folders() {
        let e = ex(&["archive/**", "drafts", "*.tmp.md", "journal/*.md"]);
        let yes = [
            "/ws/archive/a.md",
            "/ws/archive/deep/b.md",
            "/ws/drafts/x.md",
            "/ws/x/drafts/y.md",
            "/ws/a.tmp.md",
            "/ws/journal/j.md",
        ];
        for p in yes {
            assert!(e.excludes(Path::new(p)), "{p}");
        }
        let no = ["/ws/a.md", "/ws/archived/a.md", "/ws/journal/2026/j.md", "/elsewhere/archive/a.md"];
        for p in no {
            assert!(!e.excludes(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn bad_globs_are_reported_and_the_rest_apply() {
        let (e, errors) = Excludes::new(Path::new("/ws"), &["a/{b".to_owned(), "old/**".to_owned()]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(e.excludes(Path::new("/ws/old/x.md")));
        assert_eq!(e.globs(), ["old/**"]);
    }
}
