//! A note's workspace-relative path, always `/`-separated: the one form used for locks and
//! history keys, run requests and transcripts, events' `targetFilePath`, `list` and
//! `listNotes`, and what editors get. Built in one place so that no two of them can disagree
//! on a separator, a `./` or a trailing slash.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::path_style::{Head, PathStyle};

/// Compared, ordered and hashed the way this machine compares file names: on Windows
/// `Notes/A.md` and `notes/a.md` are one note (one lock, one history); shown as spelled.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct NotePath(String);

impl NotePath {
    /// `path` relative to `root`, when it is under it (no `..`, no root or prefix parts).
    pub fn of(root: &Path, path: &Path) -> Option<NotePath> {
        NotePath::of_in(PathStyle::NATIVE, root, path)
    }

    /// [`NotePath::of`] for paths of `style` (on Windows, `C:\Notes\a.md` is under
    /// `c:\notes`).
    pub fn of_in(style: PathStyle, root: &Path, path: &Path) -> Option<NotePath> {
        match style {
            PathStyle::Unix => NotePath::from_relative(path.strip_prefix(root).ok()?),
            PathStyle::Windows => {
                let parts = style
                    .relative(&root.to_string_lossy(), &path.to_string_lossy())?
                    .iter()
                    .map(|p| (*p).to_owned())
                    .collect::<Vec<_>>();
                NotePath::from_parts(style, &parts)
            }
        }
    }

    /// Names already split: `..` refused.
    fn from_parts<S: AsRef<str>>(style: PathStyle, parts: &[S]) -> Option<NotePath> {
        if parts.iter().any(|p| style.bad_part(p.as_ref()) == Some(super::path_style::BadPart::Parent)) {
            return None;
        }
        Some(NotePath(parts.iter().map(AsRef::as_ref).collect::<Vec<_>>().join("/")))
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
        NotePath::parse_in(PathStyle::NATIVE, root, written)
    }

    /// [`NotePath::parse`] for paths of `style`: on Windows `C:\ws\a.md`, `c:/WS/a.md` and
    /// `\\server\share\ws\a.md` are absolute, `\a.md` and `C:a.md` never inside.
    pub fn parse_in(style: PathStyle, root: &Path, written: &str) -> Option<NotePath> {
        match style {
            PathStyle::Unix => {
                let t = written.trim().replace('\\', "/");
                let p = Path::new(&t);
                if p.is_absolute() { NotePath::of_in(style, root, p) } else { NotePath::from_relative(p) }
            }
            PathStyle::Windows => {
                let t = written.trim();
                let split = style.split(t);
                match split.head {
                    Head::Relative => NotePath::from_parts(style, &split.parts),
                    Head::DriveRoot(_) | Head::Unc { .. } => NotePath::of_in(style, root, Path::new(t)),
                    Head::Root | Head::Drive(_) | Head::Device(_) => None,
                }
            }
        }
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

impl PartialEq for NotePath {
    fn eq(&self, other: &Self) -> bool {
        PathStyle::NATIVE.fold(&self.0) == PathStyle::NATIVE.fold(&other.0)
    }
}

impl Eq for NotePath {}

impl Hash for NotePath {
    fn hash<H: Hasher>(&self, state: &mut H) {
        PathStyle::NATIVE.fold(&self.0).hash(state);
    }
}

impl PartialOrd for NotePath {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NotePath {
    fn cmp(&self, other: &Self) -> Ordering {
        PathStyle::NATIVE.fold(&self.0).cmp(&PathStyle::NATIVE.fold(&other.0))
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

    #[test]
    fn one_note_whatever_its_case_where_the_file_system_says_so() {
        let (a, b) = (
            NotePath::from_relative(Path::new("Notes/A.md")),
            NotePath::from_relative(Path::new("notes/a.md")),
        );
        let (Some(a), Some(b)) = (a, b) else { panic!("both parse") };
        let windows = PathStyle::NATIVE == PathStyle::Windows;
        assert_eq!(a == b, windows);
        assert_eq!(
            std::collections::HashSet::from([a.clone(), b.clone()]).len(),
            if windows { 1 } else { 2 }
        );
        assert_eq!(a.as_str(), "Notes/A.md", "shown as spelled");
    }

    #[test]
    fn windows_paths() {
        let w = PathStyle::Windows;
        let root = Path::new(r"C:\Users\Me\Notes");
        let of = |p: &str| NotePath::of_in(w, root, Path::new(p)).map(NotePath::into_string);
        assert_eq!(of(r"C:\Users\Me\Notes\sub\A.md"), Some("sub/A.md".into()));
        assert_eq!(of(r"c:\users\me\notes\sub\A.md"), Some("sub/A.md".into()), "case");
        assert_eq!(of(r"\\?\C:\Users\Me\Notes\a.md"), Some("a.md".into()));
        assert_eq!(of(r"C:\Users\Me\NotesX\a.md"), None);
        assert_eq!(of(r"D:\Users\Me\Notes\a.md"), None);
        assert_eq!(of(r"C:\Users\Me\Notes\..\a.md"), None);
        assert_eq!(NotePath::of_in(PathStyle::Unix, root, Path::new(r"c:\users\me\notes\a.md")), None);
        for (written, want) in [
            (r"notes\a.md", Some("notes/a.md")),
            (r".\notes/a.md", Some("notes/a.md")),
            (r" C:\Users\Me\Notes\notes\a.md ", Some("notes/a.md")),
            ("c:/users/me/notes/a.md", Some("a.md")),
            (r"..\a.md", None),
            (r"notes\..\..\a.md", None),
            (r"C:\Windows\a.md", None),
            (r"\a.md", None),
            ("C:a.md", None),
            (r"\\server\share\a.md", None),
        ] {
            assert_eq!(
                NotePath::parse_in(w, root, written).as_ref().map(NotePath::as_str),
                want,
                "{written}"
            );
        }
        let share = Path::new(r"\\server\share\ws");
        assert_eq!(
            NotePath::parse_in(w, share, r"\\SERVER\Share\ws\a.md").map(NotePath::into_string),
            Some("a.md".into())
        );
    }
}
