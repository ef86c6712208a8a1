//! See the suite's header in containment.rs.
//!
//! Section 4 of issue 12: only regular files, only inside. The walk never follows a link out
//! of the workspace; notes, ignore files, events and the agent's reads open only regular files
//! (a FIFO or `/proc/self/fd/0` never blocks); writes keep links, modes, owners and hard
//! links, and never replace a note the user could not write. (Undo's `lastRunId` check is in
//! `undo.rs`.) Tests that need a second user run only as root, which CI's containers are; as
//! another user they return early, since no file of another owner can be made there.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use super::state_dir::{Folder, NOTE, finish, text};
use crate::common::write;

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o644))
        .unwrap_or_else(|e| panic!("{e}"));
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0)
}

#[test]
fn folders_linked_to_the_root_or_a_private_folder_are_not_walked() {
    let f = Folder::new("echo new body", "");
    // `everything -> /` once made `list` spin for minutes; `linked -> ../private` indexed and
    // scheduled a private journal.
    write(&f.outside.join("journal.md"), "---\nlive:\n  objective: private\n---\n# Journal\n");
    symlink("/", f.root.join("everything")).unwrap_or_else(|e| panic!("{e}"));
    symlink(&f.outside, f.root.join("linked")).unwrap_or_else(|e| panic!("{e}"));
    symlink(f.outside.join("journal.md"), f.root.join("journal.md")).unwrap_or_else(|e| panic!("{e}"));
    // A loop inside stays reported.
    std::fs::create_dir_all(f.root.join("a")).unwrap_or_else(|e| panic!("{e}"));
    symlink(&f.root, f.root.join("a/loop")).unwrap_or_else(|e| panic!("{e}"));
    let out = finish(&mut f.livenote(&["list", "--format", "json"]), 30);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("n.md") && !stdout.contains("journal") && !stdout.contains("private"),
        "{stdout}"
    );
    assert!(stderr.contains("outside the workspace"), "{stderr}");
    let out = finish(&mut f.livenote(&["check"]), 30);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("checked 1 note:"), "only n.md is checked: {stderr}");
    assert!(stderr.to_lowercase().contains("loop"), "the loop is reported: {stderr}");
}

#[test]
fn an_ignore_file_linked_to_stdin_or_a_fifo_never_blocks_check_or_list() {
    let f = Folder::new("echo new body", "");
    // /dev/fd/0: /proc/self/fd/0 on Linux, the fdesc device on macOS (which has no /proc).
    symlink("/dev/fd/0", f.root.join(".gitignore")).unwrap_or_else(|e| panic!("{e}"));
    mkfifo(&f.root.join(".ignore"));
    mkfifo(&f.root.join("x.md"));
    write(&f.root.join("sub/.gitignore"), "hidden.md\n");
    write(&f.root.join("sub/hidden.md"), NOTE);
    for args in [&["check"][..], &["list", "--format", "json"][..]] {
        // stdin is a pipe that stays open and silent: reading it would block forever.
        let mut cmd = f.livenote(args);
        cmd.stdin(Stdio::piped());
        let out = finish(&mut cmd, 30);
        let stderr = text(&out.stderr);
        assert!(stderr.contains(".gitignore") && stderr.contains("not a regular file"), "{args:?}: {stderr}");
        assert!(!text(&out.stdout).contains("hidden.md"), "a regular ignore file still counts");
    }
}

#[test]
fn running_a_fifo_named_like_a_note_fails_at_once() {
    let f = Folder::new("echo new body", "");
    mkfifo(&f.root.join("x.md"));
    let out = finish(&mut f.livenote(&["run", "x.md"]), 30);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("x.md is a FIFO, not a note"), "{stderr}");
}

#[test]
fn the_agent_never_opens_a_fifo() {
    let f = Folder::new("echo new body", "");
    mkfifo(&f.root.join("pipe.txt"));
    write(&f.root.join("notes.txt"), "the word\n");
    let (tx, rx) = mpsc::channel();
    let root = f.root.clone();
    // In a thread: on a build that opens the FIFO, the call blocks forever.
    std::thread::spawn(move || {
        let caps = livenote::agent::tools::Caps::default();
        let ws =
            livenote::agent::tools::Workspace::new(&root, "n.md", caps).unwrap_or_else(|e| panic!("{e}"));
        let read = ws.read_file("pipe.txt").map_err(|e| e.to_string());
        let search = ws.search_files("word", None).map_err(|e| e.to_string());
        let _ = tx.send((read, search));
    });
    let (read, search) =
        rx.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("read_file blocked"));
    let read = read.err().unwrap_or_default();
    assert!(read.contains("not a regular file"), "{read}");
    assert!(search.is_ok_and(|s| s.contains("notes.txt:1")));
}

#[test]
fn linked_or_fifo_events_in_pending_are_not_read() {
    let f = Folder::new("echo new body", "");
    let pending = f.root.join(".livenote/events/pending");
    write(&f.outside.join("secret.json"), "{\"id\": \"secret\"}\n");
    std::fs::create_dir_all(&pending).unwrap_or_else(|e| panic!("{e}"));
    symlink(f.outside.join("secret.json"), pending.join("01JAAAAAAAAAAAAAAAAAAAAAAA.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    mkfifo(&pending.join("01JBBBBBBBBBBBBBBBBBBBBBBB.json"));
    write(&pending.join("01JCCCCCCCCCCCCCCCCCCCCCCC.json"), "{}\n");
    let found = livenote::events::pending_events(&f.root);
    assert_eq!(found, [pending.join("01JCCCCCCCCCCCCCCCCCCCCCCC.json")]);
}

#[test]
fn a_symlinked_note_stays_a_link_when_written() {
    let f = Folder::new("echo new body", "");
    write(&f.root.join("notes/real.md"), NOTE);
    let link = f.root.join("link.md");
    symlink("notes/real.md", &link).unwrap_or_else(|e| panic!("{e}"));
    // The disk path every run outside an editor takes (watch, scheduler, events), given the
    // path the walk found: the link's.
    livenote::runs::DiskIo::apply_sync(&link, &|t: &str| {
        let at = t.find("old body").unwrap_or(t.len());
        Ok(vec![livenote::text::TextEdit { range: at..t.len(), new_text: "new body\n".to_owned() }])
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()),
        "the link was replaced"
    );
    let real = std::fs::read_to_string(f.root.join("notes/real.md")).unwrap_or_default();
    assert!(real.ends_with("# Title\n\nnew body\n"), "{real}");
}

#[test]
fn mode_and_owner_are_kept() {
    let f = Folder::new("echo new body", "");
    let n = f.root.join("n.md");
    std::fs::set_permissions(&n, std::fs::Permissions::from_mode(0o640)).unwrap_or_else(|e| panic!("{e}"));
    let other = is_root();
    if other {
        std::os::unix::fs::chown(&n, Some(65534), Some(65534)).unwrap_or_else(|e| panic!("{e}"));
    }
    let out = finish(&mut f.livenote(&["run", "n.md"]), 60);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(f.note().contains("new body"), "{}", f.note());
    assert_eq!(mode(&n), 0o640);
    if other {
        let m = std::fs::metadata(&n).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((m.uid(), m.gid()), (65534, 65534), "the note changed owner");
    }
}

#[test]
fn a_note_with_hard_links_is_refused_not_split() {
    let f = Folder::new("echo new body", "");
    let n = f.root.join("n.md");
    let twin = f.root.join("twin.md");
    std::fs::hard_link(&n, &twin).unwrap_or_else(|e| panic!("{e}"));
    let out = finish(&mut f.livenote(&["run", "n.md"]), 60);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("hard links"), "{stderr}");
    let (a, b) = (std::fs::metadata(&n), std::fs::metadata(&twin));
    assert!(a.is_ok_and(|a| b.is_ok_and(|b| a.ino() == b.ino())), "the note was split from its twin");
    assert_eq!(f.note(), NOTE);
}

#[test]
fn another_users_note_in_a_world_writable_folder_is_never_replaced() {
    if !is_root() {
        // Needs root to make another user's file and to run livenote as a third user.
        return;
    }
    let f = Folder::new("echo new body", "");
    let n = f.root.join("n.md");
    // The folder is writable by all (no sticky bit); the note is user 65533's, 0644.
    std::fs::set_permissions(&f.root, std::fs::Permissions::from_mode(0o777))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(f.data.path(), std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::chown(&n, Some(65533), Some(65533)).unwrap_or_else(|e| panic!("{e}"));
    // livenote as user 65534 (nobody), who may write the folder but not the note.
    let out = finish(f.livenote(&["run", "n.md"]).uid(65534).gid(65534), 60);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not writable by the current user"), "{stderr}");
    let m = std::fs::metadata(&n).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((m.uid(), m.mode() & 0o7777), (65533, 0o644), "the note was replaced");
    assert_eq!(f.note(), NOTE);
}

#[test]
fn init_writes_notes_with_the_usual_mode() {
    let f = Folder::new("echo new body", "");
    let bin = env!("CARGO_BIN_EXE_livenote");
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", "umask 022 && exec \"$0\" init fresh", bin]).current_dir(&f.root);
    let out = finish(&mut cmd, 30);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(mode(&f.root.join("fresh/what-time-is-it.md")), 0o644);
    assert_eq!(mode(&f.root.join("fresh/.livenote.toml")), 0o644);
}
