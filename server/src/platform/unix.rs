//! The Unix half of [`crate::platform`] (Linux and macOS: nothing here reads `/proc` or uses a
//! Linux-only flag).

use std::ffi::OsString;
use std::fs::{File, FileType, Metadata, OpenOptions};
use std::hash::Hasher;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use nix::libc;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::signal::unix::{SignalKind, signal};

pub(super) fn open_nofollow(path: &Path, opts: &mut OpenOptions) -> io::Result<Option<File>> {
    opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    match opts.open(path) {
        Ok(file) => Ok(Some(file)),
        // O_NOFOLLOW's answer to a link in the last component.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Ok(None),
        Err(e) => Err(e),
    }
}

pub(super) fn nonblocking(opts: &mut OpenOptions) -> &mut OpenOptions {
    opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
}

pub(super) fn private_append(opts: &mut OpenOptions) -> &mut OpenOptions {
    nonblocking(opts).mode(0o600)
}

pub(super) fn special_kind(t: &FileType) -> Option<&'static str> {
    if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_block_device() || t.is_char_device() {
        Some("a device")
    } else {
        None
    }
}

pub(super) fn is_link_loop(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

pub(super) fn link_count(meta: &Metadata) -> Option<u64> {
    Some(meta.nlink())
}

/// `access(2)` with the process's ids, which is what opening the file for writing checks.
pub(super) fn may_write(path: &Path) -> bool {
    nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_ok()
}

pub(super) fn keep_owner(tmp: &File, mine: &Metadata, meta: &Metadata) -> Result<(), super::OwnerNotKept> {
    // Owner first: a chown clears set-id bits, which the caller's mode restores.
    if (mine.uid(), mine.gid()) != (meta.uid(), meta.gid())
        && std::os::unix::fs::fchown(tmp, Some(meta.uid()), Some(meta.gid())).is_err()
    {
        return Err(super::OwnerNotKept { uid: meta.uid(), gid: meta.gid() });
    }
    Ok(())
}

pub(super) fn new_file_permissions() -> Option<std::fs::Permissions> {
    Some(std::fs::Permissions::from_mode(0o666))
}

/// `rename(2)` replaces the file whoever holds it open: nothing is worth a retry.
pub(super) fn is_held_open(_: &io::Error, _: &Path) -> bool {
    false
}

pub(super) fn hash_metadata(meta: &Metadata, h: &mut dyn Hasher) {
    for n in [meta.len(), u64::from(meta.mode()), u64::from(meta.uid()), meta.ino()] {
        h.write_u64(n);
    }
    for t in [meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec()] {
        h.write_i64(t);
    }
}

pub(super) fn killed_by(status: &ExitStatus) -> Option<String> {
    let sig = status.signal()?;
    Some(match Signal::try_from(sig) {
        Ok(name) => format!("killed by signal {sig} ({name})"),
        Err(_) => format!("killed by signal {sig}"),
    })
}

pub(super) fn host_name(_var: &dyn Fn(&str) -> Option<OsString>) -> Option<String> {
    nix::unistd::gethostname().ok().map(|n| n.to_string_lossy().into_owned())
}

pub(super) fn default_config_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    home_dir(var).map(|h| h.join(".config/livenote"))
}

pub(super) fn default_data_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    home_dir(var).map(|h| h.join(".local/share/livenote"))
}

pub(super) fn home_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    var("HOME").map(PathBuf::from)
}

fn signal_group(pgid: Pid, signal: Signal) {
    // ESRCH (nobody left in the group) is the usual, happy case.
    if let Err(e) = killpg(pgid, signal)
        && e != nix::errno::Errno::ESRCH
    {
        tracing::debug!("killpg {pgid} {signal}: {e}");
    }
}

/// A program in a process group of its own (`setpgid(0, 0)` in the child), so that one signal
/// reaches it and everything it started. Dropped before [`ProcessTree::kill`], it kills the
/// group, so a run whose task is aborted leaves no program behind.
pub struct ProcessTree {
    child: Child,
    group: Option<Pid>,
    killed: bool,
}

impl ProcessTree {
    pub fn spawn(mut cmd: Command) -> io::Result<ProcessTree> {
        let child = cmd.process_group(0).kill_on_drop(true).spawn()?;
        let group = child.id().and_then(|id| i32::try_from(id).ok()).map(Pid::from_raw);
        Ok(ProcessTree { child, group, killed: false })
    }

    pub fn id(&self) -> Option<u32> {
        self.group.and_then(|g| u32::try_from(g.as_raw()).ok())
    }

    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Wait for the program itself (not what it left running).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// SIGTERM to the group: the programs may clean up.
    pub fn terminate(&mut self) {
        if let Some(g) = self.group {
            signal_group(g, Signal::SIGTERM);
        }
    }

    /// SIGKILL to the group.
    pub fn kill(&mut self) {
        if let Some(g) = self.group {
            signal_group(g, Signal::SIGKILL);
        }
        self.killed = true;
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        if !self.killed {
            self.kill();
        }
    }
}

/// The process group of a program another library spawns and owns (an MCP server through
/// rmcp), killed from here, synchronously.
#[derive(Debug, Clone, Copy)]
pub struct Group(Pid);

impl Group {
    /// Put the program `cmd` starts into a group of its own, led by it.
    pub fn command(mut cmd: Command) -> process_wrap::tokio::CommandWrap {
        cmd.process_group(0).kill_on_drop(true);
        cmd.into()
    }

    /// The group led by the process `id` started from [`Group::command`].
    pub fn leader(id: Option<u32>) -> Option<Group> {
        id.and_then(|id| i32::try_from(id).ok()).map(|id| Group(Pid::from_raw(id)))
    }

    pub fn id(&self) -> i32 {
        self.0.as_raw()
    }

    /// SIGKILL to the whole group: a hung server would ignore anything gentler.
    pub fn kill(&self) {
        signal_group(self.0, Signal::SIGKILL);
    }
}

/// The signals that end livenote, caught from the moment [`Shutdown::listen`] returns: Ctrl-C
/// (SIGINT), `systemctl stop` or `kill` (SIGTERM), a closed terminal (SIGHUP).
///
/// Listening is split from waiting because a handler installed only when its future is first
/// polled leaves a window: a command that starts a provider and then waits for the first of
/// "the run ended" and "a signal came" may start the program before the handler exists, and a
/// SIGTERM in that window ends livenote by the default action, leaving the program running.
pub struct Shutdown {
    signals: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Shutdown {
    /// Catch SIGINT, SIGTERM and SIGHUP from now on. Called inside the runtime, before the
    /// command starts anything.
    pub fn listen() -> Self {
        let signals = match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            (Ok(int), Ok(term), Ok(hup)) => Some((int, term, hup)),
            _ => {
                tracing::warn!("cannot listen for SIGTERM and SIGHUP; only Ctrl-C ends livenote cleanly");
                None
            }
        };
        Shutdown { signals }
    }

    /// Wait for the first of SIGINT, SIGTERM or SIGHUP; its name.
    pub async fn recv(&mut self) -> &'static str {
        let Some((int, term, hup)) = self.signals.as_mut() else {
            let _ = tokio::signal::ctrl_c().await;
            return "SIGINT";
        };
        tokio::select! {
            _ = int.recv() => "SIGINT",
            _ = term.recv() => "SIGTERM",
            _ = hup.recv() => "SIGHUP",
        }
    }
}
