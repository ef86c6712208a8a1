//! Paths the user typed (a command's DIR or NOTE), checked before use. Every error names the
//! path as it was typed and says whether it does not exist or is the wrong kind of thing, so a
//! typo never comes back as a bare "File exists (os error 17)" or an empty name.

use std::fs::{FileType, Metadata};
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// What a command wanted at a path, for the words of its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Folder,
    Note,
    /// A folder, or a note (whose folder is meant).
    FolderOrNote,
}

impl Want {
    fn noun(self) -> &'static str {
        match self {
            Want::Folder => "folder",
            Want::Note => "note",
            Want::FolderOrNote => "file or folder",
        }
    }
}

/// Why a typed path cannot be used. `Display` is one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum GivenError {
    #[error("{shown}: no such {}", .want.noun())]
    Missing { shown: String, want: Want },
    #[error("{shown} is {kind}, not a {}", .want.noun())]
    WrongKind { shown: String, kind: &'static str, want: Want },
    /// A path through a file (`notes.md/x`).
    #[error("{shown}: no such {}: {file} is a file, not a folder", .want.noun())]
    UnderAFile { shown: String, file: String, want: Want },
    /// A symlink that leads nowhere (or in a circle).
    #[error("{shown} is {reason}")]
    BadLink { shown: String, reason: String },
    #[error("{shown}: {reason}")]
    Io { shown: String, reason: String },
    /// A symlink on the way whose target lies outside the workspace of the link's own place.
    #[error(
        "{shown}: {link} is a symlink to {target}, outside {root}; livenote never follows a link out of a workspace (name the note by its own path)"
    )]
    LeavesFolder { shown: String, link: String, target: String, root: String },
}

impl GivenError {
    /// The path does not exist (as opposed to: exists but is the wrong kind, or unreadable).
    pub fn is_missing(&self) -> bool {
        matches!(self, GivenError::Missing { .. })
    }
}

/// What a file type is, in words: "a folder", "a file", "a FIFO", ...
pub fn kind_of(t: FileType) -> &'static str {
    if t.is_dir() {
        "a folder"
    } else if t.is_file() {
        "a file"
    } else if t.is_symlink() {
        "a symlink"
    } else {
        crate::platform::special_kind(&t).unwrap_or("not a regular file")
    }
}

/// Why the symlink at `path` leads to nothing usable ("a symlink to x.md, which does not exist",
/// "a symlink loop"); `None` when `path` is not a symlink or can be followed.
pub fn bad_link(path: &Path) -> Option<String> {
    let to = std::fs::read_link(path).ok()?;
    let e = std::fs::metadata(path).err()?;
    Some(if crate::platform::is_link_loop(&e) {
        "a symlink loop".to_owned()
    } else if e.kind() == ErrorKind::NotFound {
        format!("a symlink to {}, which does not exist", to.display())
    } else {
        format!("a symlink to {} that cannot be followed: {e}", to.display())
    })
}

/// The path as typed, for messages: an empty one is shown as `""` rather than vanishing.
pub fn shown(path: &Path) -> String {
    if path.as_os_str().is_empty() { "\"\"".to_owned() } else { path.display().to_string() }
}

/// The canonical path and what is there (links followed), or why there is nothing usable.
pub fn existing(path: &Path, want: Want) -> Result<(PathBuf, Metadata), GivenError> {
    let shown = shown(path);
    let found = std::fs::canonicalize(path).and_then(|c| std::fs::metadata(&c).map(|m| (c, m)));
    match found {
        Ok(found) => Ok(found),
        Err(_) if let Some(reason) = bad_link(path) => Err(GivenError::BadLink { shown, reason }),
        Err(e) if path.as_os_str().is_empty() || e.kind() == ErrorKind::NotFound => {
            Err(GivenError::Missing { shown, want })
        }
        Err(e) if e.kind() == ErrorKind::NotADirectory => Err(through_a_file(path, shown, want)),
        Err(e) => Err(GivenError::Io { shown, reason: e.to_string() }),
    }
}

/// `notes.md/` or `notes.md/x`: the first part of the path that is not a folder.
fn through_a_file(path: &Path, shown: String, want: Want) -> GivenError {
    let mut prefix = PathBuf::new();
    for part in path.components() {
        prefix.push(part);
        match std::fs::metadata(&prefix) {
            Ok(m) if m.is_dir() => continue,
            // `notes.md/`: the trailing slash asked for a folder.
            Ok(m) if prefix == path => {
                return GivenError::WrongKind { shown, kind: kind_of(m.file_type()), want: Want::Folder };
            }
            Ok(_) => return GivenError::UnderAFile { shown, file: prefix.display().to_string(), want },
            Err(_) => break,
        }
    }
    GivenError::Missing { shown, want }
}

/// An existing folder, canonical. Never its parent.
pub fn folder(path: &Path) -> Result<PathBuf, GivenError> {
    match existing(path, Want::Folder)? {
        (p, m) if m.is_dir() => Ok(p),
        (_, m) => Err(GivenError::WrongKind {
            shown: shown(path),
            kind: kind_of(m.file_type()),
            want: Want::Folder,
        }),
    }
}

/// An existing note (a regular file), canonical. Every command that takes a note path comes
/// here: a symlink on the way out of the note's workspace is refused ([`stays_inside`]).
pub fn note(path: &Path) -> Result<PathBuf, GivenError> {
    match existing(path, Want::Note)? {
        (p, m) if m.is_file() => {
            stays_inside(path)?;
            Ok(p)
        }
        (_, m) => {
            Err(GivenError::WrongKind { shown: shown(path), kind: kind_of(m.file_type()), want: Want::Note })
        }
    }
}

/// The existing folder a new note is to be created in, canonical, refused as [`note`] refuses
/// a link out of the workspace.
pub fn note_folder(path: &Path) -> Result<PathBuf, GivenError> {
    let folder = folder(path)?;
    stays_inside(path)?;
    Ok(folder)
}

/// Refuse a path with a symlink on the way (the note itself, or a folder above it) whose target
/// lies outside the workspace of the link's own place (`note_root` of where the link is: the
/// folder with `.livenote.toml`, `.livenote/` or `.git` above it, else the link's folder), as the
/// walk refuses such a link: a clone's `notes/today.md -> ../../victim.md` never makes a command
/// read, run or rewrite a file outside the clone. Links are followed one at a time, each judged
/// from the real folder it sits in, so a system link (`/var -> /private/var`) is fine.
pub fn stays_inside(path: &Path) -> Result<(), GivenError> {
    let io = |e: std::io::Error| GivenError::Io { shown: shown(path), reason: e.to_string() };
    let mut at = if path.is_absolute() { PathBuf::new() } else { std::fs::canonicalize(".").map_err(io)? };
    for part in path.components() {
        match part {
            Component::Prefix(_) | Component::RootDir => at.push(part.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(name) => {
                let next = at.join(name);
                let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
                if !is_link {
                    at = next;
                    continue;
                }
                let target = std::fs::canonicalize(&next).map_err(io)?;
                let root = super::note_root(&next);
                let root = std::fs::canonicalize(&root).unwrap_or(root);
                if !super::is_within(&target, &root) {
                    return Err(GivenError::LeavesFolder {
                        shown: shown(path),
                        link: next.display().to_string(),
                        target: target.display().to_string(),
                        root: root.display().to_string(),
                    });
                }
                at = target;
            }
        }
    }
    Ok(())
}

/// The folder itself, or the folder of a note, canonical. A path that does not exist is an
/// error, never its parent.
pub fn folder_or_note(path: &Path) -> Result<PathBuf, GivenError> {
    match existing(path, Want::FolderOrNote)? {
        (p, m) if m.is_dir() => Ok(p),
        (p, m) if m.is_file() => Ok(p.parent().map_or_else(|| p.clone(), Path::to_path_buf)),
        (_, m) => Err(GivenError::WrongKind {
            shown: shown(path),
            kind: kind_of(m.file_type()),
            want: Want::FolderOrNote,
        }),
    }
}

/// The folder at `path`, created (with its parents) when missing. A file in the way is an
/// error that names it.
pub fn create_folder(path: &Path) -> Result<(), GivenError> {
    match folder(path) {
        Ok(_) => return Ok(()),
        Err(GivenError::Missing { .. }) => {}
        Err(GivenError::UnderAFile { shown, file, .. }) => {
            return Err(GivenError::Io {
                shown,
                reason: format!("cannot create it: {file} is a file, not a folder"),
            });
        }
        Err(e) => return Err(e),
    }
    std::fs::create_dir_all(path).map_err(|e| match e.kind() {
        ErrorKind::AlreadyExists | ErrorKind::NotADirectory => match folder(path) {
            Err(GivenError::Missing { shown, .. }) => GivenError::Io { shown, reason: e.to_string() },
            Err(e) => e,
            Ok(_) => GivenError::Io { shown: shown(path), reason: e.to_string() },
        },
        _ => GivenError::Io { shown: shown(path), reason: format!("cannot create it: {e}") },
    })
}

// FIFOs and links are made with Unix calls.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn err<T: std::fmt::Debug>(r: Result<T, GivenError>) -> String {
        r.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn errors_name_the_path_as_typed_and_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        std::fs::write(d.join("n.md"), "x").unwrap_or_else(|e| panic!("{e}"));
        nix::unistd::mkfifo(&d.join("f.md"), nix::sys::stat::Mode::from_bits_truncate(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        let at = |rel: &str| d.join(rel);
        let shown = |rel: &str| format!("{}", d.join(rel).display());
        assert_eq!(err(folder(&at("nosuch"))), format!("{}: no such folder", shown("nosuch")));
        assert_eq!(err(folder(&at("n.md"))), format!("{} is a file, not a folder", shown("n.md")));
        assert_eq!(err(folder(&at("n.md/"))), format!("{} is a file, not a folder", shown("n.md/")));
        assert_eq!(
            err(folder(&at("n.md/x"))),
            format!("{}: no such folder: {} is a file, not a folder", shown("n.md/x"), shown("n.md"))
        );
        assert_eq!(err(note(d)), format!("{} is a folder, not a note", d.display()));
        assert_eq!(err(note(&at("f.md"))), format!("{} is a FIFO, not a note", shown("f.md")));
        assert_eq!(err(note(&at("gone.md"))), format!("{}: no such note", shown("gone.md")));
        assert_eq!(err(folder_or_note(&at("x"))), format!("{}: no such file or folder", shown("x")));
        assert_eq!(err(folder_or_note(&at("n.md/"))), format!("{} is a file, not a folder", shown("n.md/")));
        assert_eq!(err(folder(Path::new(""))), "\"\": no such folder");
        std::os::unix::fs::symlink("gone.md", at("link.md")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            err(note(&at("link.md"))),
            format!("{} is a symlink to gone.md, which does not exist", shown("link.md"))
        );
        assert_eq!(folder_or_note(&at("n.md")).ok(), std::fs::canonicalize(d).ok());
        assert!(note(&at("n.md")).is_ok());
        assert_eq!(
            err(create_folder(&at("n.md"))),
            format!("{} is a file, not a folder", shown("n.md")),
            "init on a file"
        );
        assert_eq!(
            err(create_folder(&at("n.md/sub"))),
            format!("{}: cannot create it: {} is a file, not a folder", shown("n.md/sub"), shown("n.md"))
        );
        assert!(create_folder(&at("new/deeper")).is_ok() && at("new/deeper").is_dir());
    }

    /// A link on the way must stay inside the workspace of the place it sits in (issue 32).
    #[test]
    fn a_link_out_of_the_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let top = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let ws = top.join("ws");
        for d in [ws.join(".git"), ws.join("notes/daily"), top.join("away")] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        for f in [top.join("victim.md"), ws.join("notes/daily/today.md"), top.join("away/a.md")] {
            std::fs::write(f, "# x\n").unwrap_or_else(|e| panic!("{e}"));
        }
        let link = |to: &str, at: &str| {
            std::os::unix::fs::symlink(to, ws.join(at)).unwrap_or_else(|e| panic!("{e}"));
        };
        link("../../victim.md", "notes/today.md");
        link("daily/today.md", "notes/alias.md");
        link("../away", "away");
        link("notes/today.md", "chain.md");
        assert!(note(&ws.join("notes/alias.md")).is_ok());
        assert!(note(&ws.join("notes/daily/../alias.md")).is_ok());
        for bad in ["notes/today.md", "away/a.md", "chain.md"] {
            let e = err(note(&ws.join(bad)));
            assert!(
                e.contains("is a symlink to") && e.contains(&format!("outside {}", ws.display())),
                "{bad}: {e}"
            );
        }
        assert!(err(note_folder(&ws.join("away"))).contains("outside"));
        assert!(note_folder(&ws.join("notes")).is_ok());
        // A workspace without a marker: the link's own folder is its bound.
        let plain = top.join("plain");
        std::fs::create_dir_all(plain.join("sub")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("../../victim.md", plain.join("sub/v.md"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            err(note(&plain.join("sub/v.md"))).contains(&format!("outside {}", plain.join("sub").display()))
        );
    }
}
