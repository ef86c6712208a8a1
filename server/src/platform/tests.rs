//! The platform layer through its API, on the platform the tests run on: the Unix half here
//! on Linux, the Windows half (`cargo test --target x86_64-pc-windows-gnu`, under Wine or on
//! Windows).

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::*;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

fn temp_file_in(dir: &Path, text: &str) -> tempfile::NamedTempFile {
    let mut t = tempfile::NamedTempFile::new_in(dir).unwrap_or_else(|e| panic!("{e}"));
    t.write_all(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    t
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
    move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
}

#[test]
fn a_regular_file_opens_without_following() {
    let dir = tmp();
    let p = dir.path().join("n.md");
    std::fs::write(&p, "text").unwrap_or_else(|e| panic!("{e}"));
    let mut file = open_nofollow(&p, OpenOptions::new().read(true))
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("a regular file was taken for a link"));
    let mut s = String::new();
    file.read_to_string(&mut s).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s, "text");
    assert!(special_kind(&file.metadata().unwrap_or_else(|e| panic!("{e}")).file_type()).is_none());
}

#[test]
fn a_rename_held_up_is_tried_again_until_it_goes_through_or_the_wait_gives_up() {
    let dir = tmp();
    // A folder with something in it cannot be renamed over on any platform: it stands for a
    // target another program holds, and taking it away stands for that program letting go.
    let target = dir.path().join("note.md");
    std::fs::create_dir(&target).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(target.join("x"), "").unwrap_or_else(|e| panic!("{e}"));
    let mut waits = Vec::new();
    let held = |_: &io::Error, _: &Path| true;
    let r = persist_retrying(temp_file_in(dir.path(), "new"), &target, &held, &mut |n| {
        waits.push(n);
        if n == 1 {
            std::fs::remove_dir_all(&target).unwrap_or_else(|e| panic!("{e}"));
        }
        true
    });
    assert!(r.is_ok(), "{r:?}");
    // The renamed file's handle goes first: Windows keeps an open file's name until it closes.
    drop(r);
    assert_eq!(waits, [0, 1]);
    assert_eq!(read(&target), "new");

    // Giving up returns the temp file, still there, with the last error.
    std::fs::remove_file(&target).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir(&target).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(target.join("x"), "").unwrap_or_else(|e| panic!("{e}"));
    let mut tries = 0;
    let r = persist_retrying(temp_file_in(dir.path(), "newer"), &target, &held, &mut |n| {
        tries += 1;
        n < 3
    });
    let e = r.err().unwrap_or_else(|| panic!("renamed over a full folder"));
    assert_eq!(tries, 4);
    assert_eq!(read(e.file.path()), "newer");

    // An error that is not "held open" is not retried at all.
    let not_held = |_: &io::Error, _: &Path| false;
    let r = persist_retrying(temp_file_in(dir.path(), "x"), &target, &not_held, &mut |_| {
        panic!("waited for an error that does not pass")
    });
    assert!(r.is_err());
}

#[test]
fn persist_replaces_a_file_nobody_holds_at_the_first_try() {
    let dir = tmp();
    let target = dir.path().join("n.md");
    std::fs::write(&target, "old").unwrap_or_else(|e| panic!("{e}"));
    persist(temp_file_in(dir.path(), "new"), &target).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read(&target), "new");
}

#[test]
fn the_metadata_fingerprint_changes_with_the_permissions_not_by_itself() {
    let dir = tmp();
    let p = dir.path().join("n.md");
    std::fs::write(&p, "same").unwrap_or_else(|e| panic!("{e}"));
    let stamp = || {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        hash_metadata(&std::fs::metadata(&p).unwrap_or_else(|e| panic!("{e}")), &mut h);
        std::hash::Hasher::finish(&h)
    };
    let before = stamp();
    assert_eq!(before, stamp());
    let mut perms = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{e}")).permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&p, perms).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(before, stamp(), "a read-only note must count as changed");
}

#[test]
fn a_writable_file_may_be_written_and_a_missing_one_not() {
    let dir = tmp();
    let p = dir.path().join("n.md");
    std::fs::write(&p, "x").unwrap_or_else(|e| panic!("{e}"));
    assert!(may_write(&p));
    assert!(!may_write(&dir.path().join("absent.md")));
}

#[test]
fn an_owner_already_right_is_kept_without_asking() {
    let dir = tmp();
    let p = dir.path().join("n.md");
    std::fs::write(&p, "x").unwrap_or_else(|e| panic!("{e}"));
    let meta = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{e}"));
    let t = temp_file_in(dir.path(), "y");
    let mine = t.as_file().metadata().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(keep_owner(t.as_file(), &mine, &meta), Ok(()));
}

#[test]
fn folders_follow_the_platforms_convention_and_empty_values_count_as_unset() {
    #[cfg(unix)]
    let (vars, config, data, home) = (
        [("HOME", "/home/u"), ("APPDATA", "/ignored")],
        PathBuf::from("/home/u/.config/livenote"),
        PathBuf::from("/home/u/.local/share/livenote"),
        PathBuf::from("/home/u"),
    );
    #[cfg(windows)]
    let (vars, config, data, home) = (
        [("APPDATA", r"C:\Users\u\AppData\Roaming"), ("USERPROFILE", r"C:\Users\u")],
        PathBuf::from(r"C:\Users\u\AppData\Roaming\livenote"),
        PathBuf::from(r"C:\Users\u\AppData\Roaming\livenote\data"),
        PathBuf::from(r"C:\Users\u"),
    );
    let var = env(&vars);
    assert_eq!(default_config_dir(&var), Some(config));
    assert_eq!(default_data_dir(&var), Some(data));
    assert_eq!(home_dir(&var), Some(home));
    let empty = env(&[("HOME", ""), ("APPDATA", ""), ("USERPROFILE", "")]);
    assert_eq!((default_config_dir(&empty), default_data_dir(&empty), home_dir(&empty)), (None, None, None));
}

#[tokio::test]
async fn a_tree_runs_its_program_with_pipes_and_reports_how_it_ended() {
    let mut cmd = tokio::process::Command::new(if cfg!(windows) { "cmd" } else { "sh" });
    cmd.args(if cfg!(windows) { ["/c", "echo hello& exit 3"] } else { ["-c", "echo hello; exit 3"] })
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut tree = ProcessTree::spawn(cmd).unwrap_or_else(|e| panic!("{e}"));
    assert!(tree.id().is_some());
    drop(tree.take_stdin());
    let mut out = String::new();
    let mut stdout = tree.take_stdout().unwrap_or_else(|| panic!("no stdout"));
    tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut out).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.trim_end(), "hello");
    assert!(tree.take_stderr().is_some());
    let status = tree.wait().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status.code(), Some(3));
    assert_eq!(killed_by(&status), None);
    tree.kill();
}

#[tokio::test]
async fn killing_a_tree_ends_the_program_and_what_it_started() {
    // A program that starts a child and waits for it: ending only the program would leave the
    // child running, and `wait` would still return.
    let mut cmd = tokio::process::Command::new(if cfg!(windows) { "cmd" } else { "sh" });
    if cfg!(windows) {
        cmd.args(["/c", "ping -n 60 127.0.0.1 >NUL"]);
    } else {
        cmd.args(["-c", "sleep 60 & echo $!; wait"]);
    }
    cmd.stdout(std::process::Stdio::piped());
    let mut tree = ProcessTree::spawn(cmd).unwrap_or_else(|e| panic!("{e}"));
    #[cfg(unix)]
    let grandchild = {
        use tokio::io::AsyncBufReadExt;
        let stdout = tree.take_stdout().unwrap_or_else(|| panic!("no stdout"));
        let mut line = String::new();
        tokio::io::BufReader::new(stdout).read_line(&mut line).await.unwrap_or_else(|e| panic!("{e}"));
        line.trim().parse::<i32>().unwrap_or_else(|e| panic!("{line:?}: {e}"))
    };
    tree.terminate();
    tree.kill();
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), tree.wait())
        .await
        .unwrap_or_else(|_| panic!("the program outlived its tree's kill"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!status.success());
    #[cfg(unix)]
    {
        assert!(killed_by(&status).is_some_and(|s| s.starts_with("killed by signal")), "{status:?}");
        assert!(unix_tests::wait_gone(grandchild).await, "the background sleep {grandchild} survived");
    }
}

#[cfg(unix)]
mod unix_tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// Gone, or a zombie nobody reaped yet (containers often lack a reaping init).
    fn is_gone(pid: i32) -> bool {
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])));
        !alive || zombie == Some(true)
    }

    pub(super) async fn wait_gone(pid: i32) -> bool {
        for _ in 0..100 {
            if is_gone(pid) {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        false
    }

    #[test]
    fn links_are_not_followed_nor_created_through() {
        let dir = tmp();
        let root = dir.path();
        std::fs::write(root.join("target"), "secret").unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join("target"), root.join("link")).unwrap_or_else(|e| panic!("{e}"));
        assert!(open_nofollow(&root.join("link"), OpenOptions::new().read(true)).is_ok_and(|f| f.is_none()));
        symlink(root.join("new"), root.join("dangling")).unwrap_or_else(|e| panic!("{e}"));
        let opened = open_nofollow(&root.join("dangling"), OpenOptions::new().write(true).create(true));
        assert!(opened.is_ok_and(|f| f.is_none()));
        assert!(!root.join("new").exists());
    }

    #[test]
    fn special_files_are_named_and_a_fifo_never_blocks() {
        let dir = tmp();
        let root = dir.path();
        let fifo = root.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        // Opened without a writer on the other end: a blocking open would hang here.
        let f = open_nofollow(&fifo, OpenOptions::new().read(true))
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("a FIFO taken for a link"));
        let kind =
            |p: &Path| special_kind(&std::fs::metadata(p).unwrap_or_else(|e| panic!("{e}")).file_type());
        assert_eq!(special_kind(&f.metadata().unwrap_or_else(|e| panic!("{e}")).file_type()), Some("a FIFO"));
        assert!(nonblocking(OpenOptions::new().read(true)).open(&fifo).is_ok());
        assert_eq!(kind(Path::new("/dev/null")), Some("a device"));
        let sock = root.join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(kind(&sock), Some("a socket"));
        assert_eq!(kind(root), None);
    }

    #[test]
    fn a_link_loop_is_told_apart_from_a_missing_target() {
        let dir = tmp();
        let root = dir.path();
        symlink(root.join("b"), root.join("a")).unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join("a"), root.join("b")).unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join("absent"), root.join("c")).unwrap_or_else(|e| panic!("{e}"));
        assert!(std::fs::metadata(root.join("a")).is_err_and(|e| is_link_loop(&e)));
        assert!(std::fs::metadata(root.join("c")).is_err_and(|e| !is_link_loop(&e)));
    }

    #[test]
    fn hard_links_are_counted_and_a_new_note_is_0666_less_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        let p = dir.path().join("n.md");
        std::fs::write(&p, "x").unwrap_or_else(|e| panic!("{e}"));
        let count = |p: &Path| link_count(&std::fs::metadata(p).unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(count(&p), Some(1));
        std::fs::hard_link(&p, dir.path().join("other.md")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(count(&p), Some(2));
        assert_eq!(new_file_permissions().map(|p| p.mode()), Some(0o666));
    }

    #[test]
    fn an_append_file_is_created_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        let p = dir.path().join("log");
        let f = private_append(OpenOptions::new().append(true).create(true)).open(&p);
        assert!(f.is_ok());
        let mode = std::fs::metadata(&p).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn nothing_is_held_open_on_unix() {
        let e = io::Error::from_raw_os_error(nix::libc::EBUSY);
        assert!(!imp::is_held_open(&e, Path::new("/")));
    }

    #[test]
    fn a_group_led_by_a_program_is_killed_whole() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let rt = rt.unwrap_or_else(|e| panic!("{e}"));
        rt.block_on(async {
            let mut cmd = tokio::process::Command::new("sh");
            cmd.args(["-c", "sleep 60 & echo $!; wait"]).stdout(std::process::Stdio::piped());
            let mut wrap = Group::command(cmd);
            let mut child = wrap.spawn().unwrap_or_else(|e| panic!("{e}"));
            let group = Group::leader(child.id()).unwrap_or_else(|| panic!("no group"));
            assert_eq!(Some(group.id()), child.id().and_then(|id| i32::try_from(id).ok()));
            let stdout = child.stdout().take().unwrap_or_else(|| panic!("no stdout"));
            let mut line = String::new();
            tokio::io::AsyncBufReadExt::read_line(&mut tokio::io::BufReader::new(stdout), &mut line)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let grandchild = line.trim().parse::<i32>().unwrap_or_else(|e| panic!("{line:?}: {e}"));
            group.kill();
            let _ = child.wait().await;
            assert!(wait_gone(grandchild).await, "the background sleep {grandchild} survived");
        });
    }

    #[test]
    fn dropping_a_tree_before_it_is_killed_kills_its_group() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let rt = rt.unwrap_or_else(|e| panic!("{e}"));
        rt.block_on(async {
            let mut cmd = tokio::process::Command::new("sh");
            cmd.args(["-c", "sleep 60 & echo $!; wait"]).stdout(std::process::Stdio::piped());
            let mut tree = ProcessTree::spawn(cmd).unwrap_or_else(|e| panic!("{e}"));
            let stdout = tree.take_stdout().unwrap_or_else(|| panic!("no stdout"));
            let mut line = String::new();
            tokio::io::AsyncBufReadExt::read_line(&mut tokio::io::BufReader::new(stdout), &mut line)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let grandchild = line.trim().parse::<i32>().unwrap_or_else(|e| panic!("{line:?}: {e}"));
            drop(tree);
            assert!(wait_gone(grandchild).await, "the background sleep {grandchild} survived");
        });
    }
}

#[cfg(windows)]
mod windows_tests {
    use std::os::windows::fs::OpenOptionsExt;

    use super::*;

    #[test]
    fn a_symlink_is_refused_where_one_can_be_made() {
        let dir = tmp();
        let root = dir.path();
        std::fs::write(root.join("target"), "secret").unwrap_or_else(|e| panic!("{e}"));
        // Making a symlink needs Developer Mode or an administrator on Windows, and Wine 8
        // answers success without making one; without a link there is nothing to refuse.
        let made = std::os::windows::fs::symlink_file(root.join("target"), root.join("link"));
        let meta = std::fs::symlink_metadata(root.join("link"));
        if made.is_err() || meta.is_err() {
            tracing::warn!("no symlink here ({made:?}, {meta:?}); nothing to refuse");
            return;
        }
        let opened = open_nofollow(&root.join("link"), OpenOptions::new().read(true));
        assert!(meta.as_ref().is_ok_and(imp::is_reparse_point), "{meta:?}");
        assert!(opened.as_ref().is_ok_and(Option::is_none), "{opened:?}");
    }

    #[test]
    fn a_file_held_without_sharing_is_retried_and_replaced_once_let_go() {
        let dir = tmp();
        let target = dir.path().join("n.md");
        std::fs::write(&target, "old").unwrap_or_else(|e| panic!("{e}"));
        // What a virus scanner or an indexer does: open the file sharing nothing.
        let holder =
            OpenOptions::new().read(true).share_mode(0).open(&target).unwrap_or_else(|e| panic!("{e}"));
        assert!(may_write(&target), "a file held open is writable once let go");
        let mut holder = Some(holder);
        let mut waits = 0;
        let r = persist_retrying(temp_file_in(dir.path(), "new"), &target, &imp::is_held_open, &mut |_| {
            waits += 1;
            holder.take();
            true
        });
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(waits, 1);
        assert_eq!(read(&target), "new");
    }

    #[test]
    fn a_read_only_target_is_not_retried_and_may_not_be_written() {
        let dir = tmp();
        let target = dir.path().join("n.md");
        std::fs::write(&target, "old").unwrap_or_else(|e| panic!("{e}"));
        let mut perms = std::fs::metadata(&target).unwrap_or_else(|e| panic!("{e}")).permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&target, perms).unwrap_or_else(|e| panic!("{e}"));
        assert!(!may_write(&target));
        let denied = io::Error::from_raw_os_error(5);
        assert!(!imp::is_held_open(&denied, &target));
        assert!(imp::is_held_open(&io::Error::from_raw_os_error(32), &target));
        assert!(link_count(&std::fs::metadata(&target).unwrap_or_else(|e| panic!("{e}"))).is_none());
        assert!(new_file_permissions().is_none());
    }

    #[test]
    fn shutdown_listens_for_the_console_events() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let rt = rt.unwrap_or_else(|e| panic!("{e}"));
        rt.block_on(async {
            let mut s = Shutdown::listen();
            assert!(s.handlers_installed());
            let waited = tokio::time::timeout(std::time::Duration::from_millis(10), s.recv()).await;
            assert!(waited.is_err(), "no console event came");
        });
    }
}
