//! A note's workspace-relative path, always `/`-separated: the one form used for locks and
//! history keys, run requests and transcripts, events' `targetFilePath`, `list` and
//! `listNotes`, and what editors get. Built in one place so that no two of them can disagree
//! on a separator, a `./` or a trailing slash.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct NotePath(String);

impl NotePath {
    /// `path` relative to `root`, when it is under it (no `..`, no root or prefix parts).
    pub fn of(root: &Path, path: &Path) -> Option<NotePath> {
        NotePath::from_relative(path.strip_prefix(root).ok()?)
    }

    /// `path` relative to `root` when under it, else the path as given (a note outside every
    /// root, shown whole).
    pub fn of_or_whole(root: &Path, path: &Path) -> NotePath {
        NotePath::of(root, path).unwrap_or_else(|| NotePath(path.display().to_string()))
    }

    /// A relative path's `/`-separated form; `./` parts dropped, `..` or absolute refused.
    pub fn from_relative(rel: &Path) -> Option<NotePath> {
        let mut parts = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        Some(NotePath(parts.join("/")))
    }

    /// What a user or a program wrote (`./notes/a.md`, `notes\\a.md`, an absolute path under
    /// `root`) as a note path, when it names something inside `root`.
    pub fn parse(root: &Path, written: &str) -> Option<NotePath> {
        let t = written.trim().replace('\\', "/");
        let p = Path::new(&t);
        if p.is_absolute() { NotePath::of(root, p) } else { NotePath::from_relative(p) }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    /// The note's absolute path under `root`.
    pub fn to_path(&self, root: &Path) -> PathBuf {
        self.0.split('/').fold(root.to_path_buf(), |p, part| p.join(part))
    }
}

impl std::ops::Deref for NotePath {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NotePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_form() {
        let root = Path::new("/ws");
        assert_eq!(
            NotePath::of(root, Path::new("/ws/notes/a.md")).map(|p| p.into_string()),
            Some("notes/a.md".into())
        );
        assert_eq!(NotePath::of(root, Path::new("/elsewhere/a.md")), None);
        assert_eq!(NotePath::of_or_whole(root, Path::new("/elsewhere/a.md")).as_str(), "/elsewhere/a.md");
        for (written, want) in [
            ("./notes/a.md", Some("notes/a.md")),
            ("notes\\a.md", Some("notes/a.md")),
            (" /ws/notes/a.md ", Some("notes/a.md")),
            ("../a.md", None),
            ("/etc/passwd", None),
        ] {
            assert_eq!(NotePath::parse(root, written).as_ref().map(NotePath::as_str), want, "{written}");
        }
        let p = NotePath::parse(root, "notes/a.md").unwrap_or_else(|| panic!("parses"));
        assert_eq!(p.to_path(root), PathBuf::from("/ws/notes/a.md"));
    }
}
