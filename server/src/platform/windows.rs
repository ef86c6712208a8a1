//! The Windows half of [`crate::platform`]. No `unsafe` here: Windows APIs are reached through
//! std's Windows extensions and `process-wrap`'s Job objects (already in the tree for rmcp).

use std::ffi::OsString;
use std::fs::{File, FileType, Metadata, OpenOptions};
use std::hash::Hasher;
use std::io;
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use process_wrap::tokio::{ChildWrapper, CommandWrap, CreationFlags, JobObject, KillOnDrop};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use windows::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, PROCESS_CREATION_FLAGS};

/// `CreateFileW`: open a reparse point itself instead of what it points to.
const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
/// A symlink, a junction, a mount point or any other reparse point.
const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x0400;
const ERROR_ACCESS_DENIED: i32 = 5;
const ERROR_SHARING_VIOLATION: i32 = 32;
const ERROR_LOCK_VIOLATION: i32 = 33;
/// What following a symlink loop ends in.
const ERROR_CANT_RESOLVE_FILENAME: i32 = 1921;

pub(super) fn is_reparse_point(meta: &Metadata) -> bool {
    meta.file_type().is_symlink() || meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0
}

/// A reparse point is refused before opening (so that a create or truncate never acts through
/// it) and on the opened handle, which `FILE_FLAG_OPEN_REPARSE_POINT` makes the link itself
/// when one was put there meanwhile.
pub(super) fn open_nofollow(path: &Path, opts: &mut OpenOptions) -> io::Result<Option<File>> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| is_reparse_point(&m)) {
        return Ok(None);
    }
    let file = opts.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT).open(path)?;
    if is_reparse_point(&file.metadata()?) {
        return Ok(None);
    }
    Ok(Some(file))
}

/// Windows has no FIFOs or devices among regular files (named pipes live under `\\.\pipe\`),
/// and opening never blocks: nothing to set.
pub(super) fn nonblocking(opts: &mut OpenOptions) -> &mut OpenOptions {
    opts
}

/// The log gets the folder's inherited ACL, which in the user's profile is the user's own.
pub(super) fn private_append(opts: &mut OpenOptions) -> &mut OpenOptions {
    opts
}

pub(super) fn special_kind(_: &FileType) -> Option<&'static str> {
    None
}

pub(super) fn is_link_loop(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_CANT_RESOLVE_FILENAME)
}

/// `Metadata::number_of_links` is unstable, and a file's hard links on NTFS are rare; not
/// checked (docs/security.md).
pub(super) fn link_count(_: &Metadata) -> Option<u64> {
    None
}

/// What opening for writing checks: the read-only attribute and the file's ACL. A file another
/// program holds open without sharing is writable once it lets go; the rename waits for that.
pub(super) fn may_write(path: &Path) -> bool {
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        return false;
    }
    match OpenOptions::new().write(true).open(path) {
        Ok(_) => true,
        Err(e) => matches!(e.raw_os_error(), Some(ERROR_SHARING_VIOLATION | ERROR_LOCK_VIOLATION)),
    }
}

/// A new file is owned by its creator and gets the folder's inherited ACL; who may write the
/// note is the ACL's business, not an owner id to copy.
pub(super) fn keep_owner(_: &File, _: &Metadata, _: &Metadata) -> Result<(), super::OwnerNotKept> {
    Ok(())
}

pub(super) fn new_file_permissions() -> Option<std::fs::Permissions> {
    None
}

/// `MoveFileExW(MOVEFILE_REPLACE_EXISTING)` (std's and tempfile's rename) fails while another
/// program holds the target open without `FILE_SHARE_DELETE`: worth a retry. A read-only
/// target fails the same way (access denied) and never gets better.
pub(super) fn is_held_open(e: &io::Error, path: &Path) -> bool {
    match e.raw_os_error() {
        Some(ERROR_SHARING_VIOLATION | ERROR_LOCK_VIOLATION) => true,
        Some(ERROR_ACCESS_DENIED) => !std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()),
        _ => false,
    }
}

pub(super) fn hash_metadata(meta: &Metadata, h: &mut dyn Hasher) {
    for n in [meta.len(), u64::from(meta.file_attributes()), meta.creation_time(), meta.last_write_time()] {
        h.write_u64(n);
    }
}

/// Windows ends programs with exit codes only.
pub(super) fn killed_by(_: &ExitStatus) -> Option<String> {
    None
}

pub(super) fn host_name(var: &dyn Fn(&str) -> Option<OsString>) -> Option<String> {
    var("COMPUTERNAME").map(|n| n.to_string_lossy().into_owned())
}

pub(super) fn default_config_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    var("APPDATA").map(|d| PathBuf::from(d).join("livenote"))
}

/// Beside the config, as `directories`-style apps keep `config` and `data` apart under one
/// roaming folder.
pub(super) fn default_data_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    default_config_dir(var).map(|d| d.join("data"))
}

pub(super) fn home_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    var("USERPROFILE").map(PathBuf::from)
}

/// In a Job object of its own (assigned while the program is still suspended, so nothing it
/// starts escapes), in a console process group of its own (Ctrl-C in livenote's console is
/// livenote's to handle), without a console window of its own.
fn in_job(cmd: Command) -> CommandWrap {
    let mut wrap = CommandWrap::from(cmd);
    wrap.wrap(CreationFlags(PROCESS_CREATION_FLAGS(CREATE_NEW_PROCESS_GROUP.0 | CREATE_NO_WINDOW.0)))
        .wrap(JobObject)
        .wrap(KillOnDrop);
    wrap
}

/// A program and everything it starts, in one Job object. Dropping it closes the job, which
/// ends whatever is still in it (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`).
pub struct ProcessTree {
    child: Box<dyn ChildWrapper>,
}

impl ProcessTree {
    pub fn spawn(cmd: Command) -> io::Result<ProcessTree> {
        Ok(ProcessTree { child: in_job(cmd).spawn()? })
    }

    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin().take()
    }

    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout().take()
    }

    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr().take()
    }

    /// Wait for the program itself, as on Unix: the job's own wait would also wait for what
    /// it left running, which the caller ends on its own terms.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.inner_mut().wait().await
    }

    /// A program without a console gets no Ctrl-Break: ending the job is the only way.
    pub fn terminate(&mut self) {
        self.kill();
    }

    /// `TerminateJobObject`: every process in the job.
    pub fn kill(&mut self) {
        if let Err(e) = self.child.start_kill() {
            tracing::debug!("terminate job of {:?}: {e}", self.child.id());
        }
    }
}

/// A group killed from outside the child that owns it. On Windows the Job object belongs to
/// the child wrapper (rmcp's transport): ending the transport terminates the job, so there is
/// no group to hold here.
#[derive(Debug, Clone, Copy)]
pub enum Group {}

impl Group {
    /// Put the program `cmd` starts in a Job object of its own, ended when its owner drops it.
    pub fn command(cmd: Command) -> CommandWrap {
        in_job(cmd)
    }

    pub fn leader(_: Option<u32>) -> Option<Group> {
        None
    }

    pub fn id(&self) -> i32 {
        match *self {}
    }

    pub fn kill(&self) {
        match *self {}
    }
}

/// What ends livenote on Windows: Ctrl-C and Ctrl-Break in its console, the console window
/// closed, the user logging off or the system shutting down (tokio's console control
/// handlers). Caught from the moment [`Shutdown::listen`] returns.
pub struct Shutdown {
    handlers: Option<Handlers>,
}

struct Handlers {
    c: tokio::signal::windows::CtrlC,
    brk: tokio::signal::windows::CtrlBreak,
    close: tokio::signal::windows::CtrlClose,
    shutdown: tokio::signal::windows::CtrlShutdown,
    logoff: tokio::signal::windows::CtrlLogoff,
}

impl Shutdown {
    /// Catch the console's control events from now on. Called inside the runtime, before the
    /// command starts anything.
    pub fn listen() -> Self {
        use tokio::signal::windows as w;
        let handlers =
            match (w::ctrl_c(), w::ctrl_break(), w::ctrl_close(), w::ctrl_shutdown(), w::ctrl_logoff()) {
                (Ok(c), Ok(brk), Ok(close), Ok(shutdown), Ok(logoff)) => {
                    Some(Handlers { c, brk, close, shutdown, logoff })
                }
                _ => {
                    tracing::warn!(
                        "cannot listen for console close and shutdown; only Ctrl-C ends livenote cleanly"
                    );
                    None
                }
            };
        Shutdown { handlers }
    }

    #[cfg(test)]
    pub(super) fn handlers_installed(&self) -> bool {
        self.handlers.is_some()
    }

    /// Wait for the first of them; its name.
    pub async fn recv(&mut self) -> &'static str {
        let Some(h) = self.handlers.as_mut() else {
            let _ = tokio::signal::ctrl_c().await;
            return "Ctrl-C";
        };
        tokio::select! {
            _ = h.c.recv() => "Ctrl-C",
            _ = h.brk.recv() => "Ctrl-Break",
            _ = h.close.recv() => "console close",
            _ = h.shutdown.recv() => "system shutdown",
            _ = h.logoff.recv() => "logoff",
        }
    }
}
