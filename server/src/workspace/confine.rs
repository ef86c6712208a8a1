//! Confinement on disk (SPEC section 7, docs/security.md): the one place that decides which
//! files livenote opens and which folders it writes into.
//!
//! - [`real_dir`]: a folder under the workspace reached without following any symlink, each
//!   component checked from the workspace root down (created on demand). Everything under
//!   `.livenote/` goes through it, so a committed `.livenote -> ~/elsewhere` or
//!   `.livenote/history/<key> -> ~/.bashrc.d` is refused instead of written through.
//! - [`open_nofollow`]: open a file whose last component must not be a symlink (`O_NOFOLLOW`;
//!   on Windows no reparse point: `FILE_FLAG_OPEN_REPARSE_POINT`), never blocking on a FIFO
//!   (`O_NONBLOCK`), and keep it only if it is a regular file (`crate::platform`).
//! - [`open_regular`]: open a file that may be reached through a symlink (a note, a config, an
//!   ignore file, a file the agent reads) only if it resolves to a regular file: a FIFO, a
//!   device or `/proc/self/fd/0` is refused before it is opened, and checked again after.
//! - [`open_append`]: the same for a file the user named to append to (`--log-file`).
//!
//! Not covered: another local process racing to swap a checked folder for a link between the
//! check and the use. The threat here is what a folder holds when it is cloned or unpacked.

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read};
use std::path::{Component, Path, PathBuf};

use crate::platform;

/// Why a path was refused. Carried inside an `io::Error` (kind `Other`); see [`is_refusal`].
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("refused {0}: it is a symlink, and livenote never follows links in its state folder")]
    Symlink(PathBuf),
    #[error("refused {0}: not a folder")]
    NotDir(PathBuf),
    #[error("refused {0}: not a regular file")]
    NotRegular(PathBuf),
    #[error("refused {0}: not a plain relative path")]
    BadPath(PathBuf),
}

impl From<Refused> for io::Error {
    fn from(r: Refused) -> io::Error {
        io::Error::other(r)
    }
}

/// Whether an error is one of these refusals (a containment violation, not a full disk).
pub fn is_refusal(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Refused>())
}

/// An I/O error that names its path.
fn at(path: &Path, e: io::Error) -> io::Error {
    if is_refusal(&e) {
        return e;
    }
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Whether `path` is a real folder (`Ok(true)`), absent (`Ok(false)`), or refused.
fn check_dir(path: &Path) -> io::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Refused::Symlink(path.to_path_buf()).into()),
        Ok(m) if !m.is_dir() => Err(Refused::NotDir(path.to_path_buf()).into()),
        Ok(_) => Ok(true),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(at(path, e)),
    }
}

/// `root/rel`, where every component of `rel` is a real folder (not a symlink), checked from
/// `root` down; missing ones are created when `create` is set, else `NotFound`. `root` itself
/// is the user's choice and is taken as given.
pub fn real_dir(root: &Path, rel: &Path, create: bool) -> io::Result<PathBuf> {
    let mut path = root.to_path_buf();
    for c in rel.components() {
        let Component::Normal(part) = c else { return Err(Refused::BadPath(rel.to_path_buf()).into()) };
        path.push(part);
        if check_dir(&path)? {
            continue;
        }
        if !create {
            return Err(io::Error::new(ErrorKind::NotFound, format!("{}: no such folder", path.display())));
        }
        // mkdir never follows a link in its last component: a link put there meanwhile makes it
        // fail with "exists", and the check below refuses it.
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                if !check_dir(&path)? {
                    return Err(at(&path, e));
                }
            }
            Err(e) => return Err(at(&path, e)),
        }
    }
    Ok(path)
}

/// Open `path` with `opts`, refusing a symlink as its last component and anything but a
/// regular file (without blocking on a FIFO). Check the folders above with [`real_dir`].
pub fn open_nofollow(path: &Path, opts: &mut OpenOptions) -> io::Result<File> {
    let Some(file) = platform::open_nofollow(path, opts).map_err(|e| at(path, e))? else {
        return Err(Refused::Symlink(path.to_path_buf()).into());
    };
    let meta = file.metadata().map_err(|e| at(path, e))?;
    if !meta.is_file() {
        return Err(Refused::NotRegular(path.to_path_buf()).into());
    }
    Ok(file)
}

/// Open `path` (links followed) for reading, only if it is a regular file: checked before
/// opening (a device or FIFO is never opened) and on the opened file (in case it changed).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let meta = std::fs::metadata(path).map_err(|e| at(path, e))?;
    if !meta.is_file() {
        return Err(Refused::NotRegular(path.to_path_buf()).into());
    }
    let file = platform::nonblocking(OpenOptions::new().read(true)).open(path).map_err(|e| at(path, e))?;
    if !file.metadata().map_err(|e| at(path, e))?.is_file() {
        return Err(Refused::NotRegular(path.to_path_buf()).into());
    }
    Ok(file)
}

/// Open `path` (links followed: the user named it) to append to, created when missing
/// (readable by the user only), only if it is a regular file: a FIFO would block the writer,
/// a device would swallow or spill the log. Checked before opening and on the opened file.
pub fn open_append(path: &Path) -> io::Result<File> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => return Err(Refused::NotRegular(path.to_path_buf()).into()),
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(at(path, e)),
    }
    let file = platform::private_append(OpenOptions::new().append(true).create(true))
        .open(path)
        .map_err(|e| at(path, e))?;
    if !file.metadata().map_err(|e| at(path, e))?.is_file() {
        return Err(Refused::NotRegular(path.to_path_buf()).into());
    }
    Ok(file)
}

/// The bytes of `file`, at most `max` of them (`InvalidData` when there are more).
pub fn read_capped(file: File, path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(|e| at(path, e))?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            ErrorKind::InvalidData,
            format!("{}: larger than {max} bytes", path.display()),
        ));
    }
    Ok(bytes)
}

/// The bytes of a regular file (links followed), at most `max`.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_capped(open_regular(path)?, path, max)
}

/// The names of the regular files (not links, not folders) directly in `dir`, sorted.
pub fn regular_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_file())).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

// Links and FIFOs are made with Unix calls; the Windows side is platform/'s tests.
#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn real_dir_creates_folders_and_refuses_links_at_every_level() {
        let ws = tmp();
        let outside = tmp();
        let root = ws.path();
        let d = real_dir(root, Path::new(".livenote/history/k"), true).unwrap_or_else(|e| panic!("{e}"));
        assert!(d.is_dir());
        // A linked folder at any depth is refused, and nothing is created through it.
        symlink(outside.path(), root.join(".livenote/history/linked")).unwrap_or_else(|e| panic!("{e}"));
        let e = real_dir(root, Path::new(".livenote/history/linked/sub"), true).err();
        assert!(e.as_ref().is_some_and(is_refusal), "{e:?}");
        assert!(std::fs::read_dir(outside.path()).map(|r| r.count()).unwrap_or(1) == 0);
        std::fs::remove_dir_all(root.join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
        symlink(outside.path(), root.join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
        let e = real_dir(root, Path::new(".livenote/locks"), true).err();
        assert!(e.as_ref().is_some_and(is_refusal), "{e:?}");
        assert!(e.is_some_and(|e| e.to_string().contains("symlink")));
        assert!(std::fs::read_dir(outside.path()).map(|r| r.count()).unwrap_or(1) == 0);
        // A file where a folder should be is refused too; `..` never passes.
        std::fs::write(root.join("f"), "x").unwrap_or_else(|e| panic!("{e}"));
        assert!(real_dir(root, Path::new("f/x"), true).is_err_and(|e| is_refusal(&e)));
        assert!(real_dir(root, Path::new("../x"), true).is_err_and(|e| is_refusal(&e)));
        assert!(real_dir(root, Path::new("absent"), false).is_err_and(|e| e.kind() == ErrorKind::NotFound));
    }

    #[test]
    fn nofollow_refuses_links_and_fifos() {
        let ws = tmp();
        let root = ws.path();
        std::fs::write(root.join("target"), "secret").unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join("target"), root.join("link")).unwrap_or_else(|e| panic!("{e}"));
        let e = open_nofollow(&root.join("link"), OpenOptions::new().read(true)).err();
        assert!(e.is_some_and(|e| is_refusal(&e) && e.to_string().contains("symlink")));
        // A dangling link is not created through either.
        symlink(root.join("new"), root.join("dangling")).unwrap_or_else(|e| panic!("{e}"));
        let e = open_nofollow(&root.join("dangling"), OpenOptions::new().write(true).create(true)).err();
        assert!(e.is_some_and(|e| is_refusal(&e)));
        assert!(!root.join("new").exists());
        nix::unistd::mkfifo(&root.join("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        let e = open_nofollow(&root.join("fifo"), OpenOptions::new().read(true)).err();
        assert!(e.is_some_and(|e| is_refusal(&e)));
        assert!(open_nofollow(&root.join("target"), OpenOptions::new().read(true)).is_ok());
    }

    #[test]
    fn open_regular_follows_links_to_files_only() {
        let ws = tmp();
        let root = ws.path();
        std::fs::write(root.join("target"), "text").unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join("target"), root.join("link")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_regular(&root.join("link"), 10).unwrap_or_default(), b"text");
        assert!(read_regular(&root.join("link"), 2).is_err_and(|e| e.kind() == ErrorKind::InvalidData));
        nix::unistd::mkfifo(&root.join("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join("fifo"), root.join("to-fifo")).unwrap_or_else(|e| panic!("{e}"));
        // /dev/fd/0: /proc/self/fd/0 on Linux, the fdesc device on macOS (which has no /proc).
        symlink("/dev/fd/0", root.join("stdin")).unwrap_or_else(|e| panic!("{e}"));
        for p in ["fifo", "to-fifo", "stdin"] {
            let e = open_regular(&root.join(p)).err();
            // The stdin of a test may be /dev/null (a device) or a pipe: refused either way.
            assert!(e.is_some_and(|e| is_refusal(&e)), "{p}");
        }
        assert!(open_regular(root).is_err_and(|e| is_refusal(&e)));
        assert_eq!(regular_files(root), [root.join("target")]);
    }

    #[test]
    fn open_append_creates_or_appends_to_regular_files_only() {
        use std::io::Write;
        let ws = tmp();
        let root = ws.path();
        let log = root.join("log");
        for line in ["one\n", "two\n"] {
            let mut f = open_append(&log).unwrap_or_else(|e| panic!("{e}"));
            f.write_all(line.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), "one\ntwo\n");
        // A link to a regular file is the user's own choice: followed.
        symlink(&log, root.join("link")).unwrap_or_else(|e| panic!("{e}"));
        open_append(&root.join("link"))
            .and_then(|mut f| f.write_all(b"three\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), "one\ntwo\nthree\n");
        nix::unistd::mkfifo(&root.join("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join("fifo"), root.join("to-fifo")).unwrap_or_else(|e| panic!("{e}"));
        for p in ["fifo", "to-fifo", "."] {
            let e = open_append(&root.join(p)).err();
            assert!(e.is_some_and(|e| is_refusal(&e)), "{p}");
        }
        // A missing folder is not created.
        assert!(open_append(&root.join("absent/log")).is_err_and(|e| e.kind() == ErrorKind::NotFound));
    }
}
