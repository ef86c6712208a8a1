//! What differs by operating system, in one place: the rest of livenote calls these functions
//! and types and never names `std::os::unix`, `nix` or a Windows API itself. `unix.rs` and
//! `windows.rs` hold the two halves behind `cfg`; this file is the API and its documentation.
//!
//! - Files: open without following a link in the last component ([`open_nofollow`]), open
//!   without blocking on a FIFO ([`nonblocking`]), what kind of special file a path is
//!   ([`special_kind`]), hard links ([`link_count`]), whether the user may write a file
//!   ([`may_write`]), keeping a file's owner ([`keep_owner`]), replacing a file by rename
//!   ([`persist`], retried on Windows while another program holds the file open), a fingerprint
//!   of a file's metadata ([`hash_metadata`]).
//! - Processes: a program with everything it starts, ended as one ([`ProcessTree`]: a process
//!   group on Unix, a Job object on Windows), and how a program ended ([`killed_by`]).
//! - Signals: what asks a long-lived command to end ([`Shutdown`]: SIGINT/SIGTERM/SIGHUP, or
//!   Ctrl-C, Ctrl-Break, console close and system shutdown).
//! - Desktop notifications ([`desktop::show`]).
//! - Folders: the user's config, data and home folders by the platform's convention
//!   ([`default_config_dir`], [`default_data_dir`], [`home_dir`]).
//!
//! docs/security.md says what each containment check means on each platform.

use std::ffi::OsString;
use std::fs::{File, FileType, Metadata, OpenOptions};
use std::hash::Hasher;
use std::io;
use std::path::{Path, PathBuf};

pub mod desktop;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

pub use imp::{Group, ProcessTree, Shutdown};

/// Open `path` with `opts` unless its last component is a symlink (on Windows: any reparse
/// point, junctions included): `Ok(None)` then. Never blocks on a FIFO. The caller checks that
/// the result is a regular file.
pub fn open_nofollow(path: &Path, opts: &mut OpenOptions) -> io::Result<Option<File>> {
    imp::open_nofollow(path, opts)
}

/// Set `opts` so that opening never blocks (a FIFO on Unix) nor makes a terminal livenote's
/// controlling one. Nothing to do on Windows, where no such file sits among regular ones.
pub fn nonblocking(opts: &mut OpenOptions) -> &mut OpenOptions {
    imp::nonblocking(opts)
}

/// [`nonblocking`], and a file created through `opts` is readable by the user only (a log).
pub fn private_append(opts: &mut OpenOptions) -> &mut OpenOptions {
    imp::private_append(opts)
}

/// The platform's name for a file that is neither a folder, a regular file nor a link:
/// "a FIFO", "a socket", "a device"; `None` when it has none.
pub fn special_kind(t: &FileType) -> Option<&'static str> {
    imp::special_kind(t)
}

/// Whether following a link failed because the links go round in a circle.
pub fn is_link_loop(e: &io::Error) -> bool {
    imp::is_link_loop(e)
}

/// How many names the file has, where the platform tells it cheaply (`None` on Windows, where
/// std does not report it on stable Rust).
pub fn link_count(meta: &Metadata) -> Option<u64> {
    imp::link_count(meta)
}

/// Whether the current user may write the file itself, as opening it for writing would check.
pub fn may_write(path: &Path) -> bool {
    imp::may_write(path)
}

/// The owner a replaced file must keep and could not be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerNotKept {
    pub uid: u32,
    pub gid: u32,
}

/// Give `tmp` (whose metadata is `mine`) the owner and group of `meta` (the file it
/// replaces). Unix: `fchown` when they differ, an error when that is not allowed. Windows:
/// nothing to do, a new file gets the folder's inherited ACL and the profile's ACLs decide
/// who may write there.
pub fn keep_owner(tmp: &File, mine: &Metadata, meta: &Metadata) -> Result<(), OwnerNotKept> {
    imp::keep_owner(tmp, mine, meta)
}

/// The permissions of a new note: 0666 less the umask on Unix; `None`: the platform's default.
pub fn new_file_permissions() -> Option<std::fs::Permissions> {
    imp::new_file_permissions()
}

/// Replace `path` with the temp file by rename. On Windows a rename fails while another
/// program (a virus scanner, an indexer, a sync tool) holds `path` open without sharing
/// delete; that is retried for a bounded time before giving up.
pub fn persist(tmp: tempfile::NamedTempFile, path: &Path) -> Result<File, tempfile::PersistError> {
    let mut delay = PERSIST_FIRST_WAIT;
    persist_retrying(tmp, path, &imp::is_held_open, &mut |attempt| {
        if attempt >= PERSIST_RETRIES {
            return false;
        }
        tracing::debug!("retry rename {}: held open by another program", path.display());
        std::thread::sleep(delay);
        delay = (delay * 2).min(PERSIST_MAX_WAIT);
        true
    })
}

/// How often a rename over a file another program holds open is tried again, and the waits
/// between: about 1.5 s in all, longer than a virus scanner's look at a small file.
const PERSIST_RETRIES: u32 = 8;
const PERSIST_FIRST_WAIT: std::time::Duration = std::time::Duration::from_millis(10);
const PERSIST_MAX_WAIT: std::time::Duration = std::time::Duration::from_millis(400);

/// [`persist`] with what counts as "held open" and the wait between tries given: `wait(n)`
/// before try `n + 2`, `false` to give up.
fn persist_retrying(
    mut tmp: tempfile::NamedTempFile,
    path: &Path,
    held_open: &dyn Fn(&io::Error, &Path) -> bool,
    wait: &mut dyn FnMut(u32) -> bool,
) -> Result<File, tempfile::PersistError> {
    let mut attempt = 0;
    loop {
        match tmp.persist(path) {
            Ok(file) => return Ok(file),
            Err(e) if held_open(&e.error, path) && wait(attempt) => {
                tmp = e.file;
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Feed what tells a file's metadata apart (size, permissions, owner, identity, times) to `h`:
/// a `chmod` or a rewrite with the same bytes changes it.
pub fn hash_metadata(meta: &Metadata, h: &mut dyn Hasher) {
    imp::hash_metadata(meta, h)
}

/// "killed by signal 9 (SIGKILL)" for a program a signal ended; `None` for an exit code (and
/// always on Windows, which has no signals).
pub fn killed_by(status: &std::process::ExitStatus) -> Option<String> {
    imp::killed_by(status)
}

/// The platform's default for the user's livenote config folder, from the environment
/// `var` (an empty value counts as unset): `$HOME/.config/livenote` on Unix,
/// `%APPDATA%\livenote` on Windows.
pub fn default_config_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    imp::default_config_dir(&|k| var(k).filter(|v| !v.is_empty()))
}

/// The platform's default for the user's livenote data folder (trust store, caches):
/// `$HOME/.local/share/livenote` on Unix, `%APPDATA%\livenote\data` on Windows.
pub fn default_data_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    imp::default_data_dir(&|k| var(k).filter(|v| !v.is_empty()))
}

/// The user's home folder: `$HOME` on Unix, `%USERPROFILE%` on Windows.
pub fn home_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    imp::home_dir(&|k| var(k).filter(|v| !v.is_empty()))
}

/// The system's name for this machine (`gethostname` on Unix, `%COMPUTERNAME%` on Windows);
/// `None` when it cannot be read or is empty.
pub fn host_name(var: &dyn Fn(&str) -> Option<OsString>) -> Option<String> {
    imp::host_name(&|k| var(k).filter(|v| !v.is_empty())).filter(|n| !n.trim().is_empty())
}

#[cfg(test)]
mod tests;
