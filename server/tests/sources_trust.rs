//! Sources behind the trust line, through the binary (issue 31 §1). A source of the user's own
//! config never polls into a folder that is not trusted (the webhook's side is in
//! `sources.rs`); seen-state a cloned folder ships, or a state made for another source, is never
//! believed: the first poll records what exists and queues nothing, and what a source has seen
//! is kept in the user's data folder across processes; `folders` narrows a user's source to the
//! folders it names; a `.livenote/.gitignore` that ignores nothing is livenote's again once
//! livenote writes there.

mod common;

use std::path::Path;
use std::process::Stdio;

use livenote::events;
use livenote::workspace::state::GITIGNORE;
use serde_json::{Value, json};

use common::{Workspace, command_config, files, tempdir, wait_until, write};

/// `livenote ARGS` in the workspace: (exit code, stdout, stderr).
fn run(ws: &Workspace, args: &[&str]) -> (i32, String, String) {
    let out = ws.livenote(args).stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `livenote sources --format json ARGS`, by name.
fn sources_json(ws: &Workspace, args: &[&str]) -> Value {
    let mut all = vec!["sources", "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = run(ws, &all);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    Value::Object(rows.into_iter().map(|r| (r["name"].as_str().unwrap_or_default().to_owned(), r)).collect())
}

/// Every event queued in the folder, pending or done.
fn queued(root: &Path) -> Vec<Value> {
    [events::pending_dir(root), events::done_dir(root)]
        .iter()
        .flat_map(|dir| files(dir).into_iter().map(move |f| dir.join(f)))
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_default()).unwrap_or(Value::Null))
        .collect()
}

/// Messages as a `command` source prints them, one JSON line each.
fn set_messages(path: &Path, subjects: &[&str]) {
    let text: String = subjects
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}\n", json!({"id": format!("m-{}", i + 1), "payload": {"subject": s}})))
        .collect();
    write(path, &text);
}

/// A `command` source named `name` printing the file `path` (anywhere: the user's mailbox).
fn cat_source(name: &str, path: &Path, more: &str) -> String {
    format!(
        "[sources.{name}]\nkind = \"command\"\ncommand = [\"cat\", {:?}]\n{more}",
        path.display().to_string()
    )
}

const SHIPPED_GITIGNORE: &str = "# the team's: nothing under .livenote/ is ignored\n!*\n";

/// What a cloned folder ships under `.livenote/`: a `.gitignore` that ignores nothing, and a
/// state for `name` that says it was polled before (a cursor at the mailbox's first UID).
fn ship_state(root: &Path, name: &str) -> String {
    write(&root.join(".livenote/.gitignore"), SHIPPED_GITIGNORE);
    let state = json!({
        "kind": "command",
        "lastPoll": "2026-05-01T00:00:00Z",
        "lastSuccess": "2026-05-01T00:00:00Z",
        "cursor": {"imap": {"uidValidity": 777, "lastUid": 0}},
        "seen": []
    })
    .to_string();
    write(&root.join(format!(".livenote/sources/{name}.json")), &state);
    state
}

fn shipped(root: &Path, name: &str) -> String {
    std::fs::read_to_string(root.join(format!(".livenote/sources/{name}.json"))).unwrap_or_default()
}

fn gitignore(root: &Path) -> String {
    std::fs::read_to_string(root.join(".livenote/.gitignore")).unwrap_or_default()
}

/// The reproduction: a mail source in the user's own config, a clone that ships a state
/// claiming an earlier poll. `watch` on the clone polls nothing into it while it is not
/// trusted; once trusted, the shipped state is not believed (a first poll: recorded, nothing
/// queued), only mail that arrives after is queued, and the `.gitignore` is livenote's again.
#[test]
fn your_own_source_never_polls_into_a_clone_and_believes_no_state_it_shipped() {
    let mailbox = tempdir();
    let inbox = mailbox.path().join("inbox.jsonl");
    set_messages(&inbox, &["Payroll for May", "Your doctor's letter", "Widget release 1.0"]);
    let dir = tempdir();
    let note = "---\nlive:\n  objective: Keep widgets current\n  triggers:\n    eventMatchCriteria: \"widget release\"\n---\n# Widget\n";
    write(&dir.path().join("w.md"), note);
    let state = ship_state(dir.path(), "mail");
    let ws = Workspace::in_dir(dir, &command_config("printf 'handled\\n'"));
    assert_eq!(run(&ws, &["untrust", "."]).0, 0);
    write(&ws.data.path().join("config.toml"), &cat_source("mail", &inbox, ""));
    ws.set_clock("2026-05-08T15:00:00Z");
    let mut w = ws.watch_clock();
    w.wait_for("source mail: not polled: ");
    assert!(queued(&ws.root).is_empty(), "{:?}", queued(&ws.root));
    assert_eq!(sources_json(&ws, &[])["mail"]["status"], "untrusted");
    let (code, _, err) = run(&ws, &["sources", "poll", "mail"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not trusted") && err.contains("your own included"), "{err}");
    assert!(queued(&ws.root).is_empty());

    // Trusted: polled now, but the cursor the clone shipped is not believed.
    assert_eq!(run(&ws, &["trust", "."]).0, 0);
    w.wait_for("source mail: first poll recorded 3 items as seen");
    assert!(queued(&ws.root).is_empty(), "{:?}", queued(&ws.root));
    // A new message is queued, alone.
    set_messages(
        &inbox,
        &["Payroll for May", "Your doctor's letter", "Widget release 1.0", "Widget release 1.1"],
    );
    ws.set_clock("2026-05-08T15:05:01Z");
    w.wait_for("source mail: queued");
    wait_until("the event to be processed", 30, || files(&events::done_dir(&ws.root)).len() == 1);
    let logs = w.stop();
    let events = queued(&ws.root);
    assert_eq!(events.len(), 1, "{events:?}\n{logs:#?}");
    assert_eq!(events[0]["payload"]["subject"], "Widget release 1.1", "{}", events[0]);
    // Livenote wrote under .livenote/: its .gitignore is livenote's; the clone's state file is
    // left as shipped, and what the source saw is in the data folder.
    assert_eq!(gitignore(&ws.root), GITIGNORE);
    assert!(logs.iter().any(|l| l.contains(".gitignore: it was not livenote's")), "{logs:#?}");
    assert_eq!(shipped(&ws.root, "mail"), state);
    let kept = ws.source_state("mail").and_then(|p| std::fs::read_to_string(p).ok()).unwrap_or_default();
    assert!(kept.contains("\"m-4\"") && kept.contains("madeFor"), "{kept}");
}

/// A folder's own source in a trusted folder: a shipped state is not believed either, a state
/// livenote wrote is shared by `sources poll` and `tick`, and a state made for another program
/// (the config changed what the source reads) starts afresh instead of being taken for it.
#[test]
fn seen_state_a_folder_ships_or_made_for_another_source_is_a_first_poll() {
    let dir = tempdir();
    let state = ship_state(dir.path(), "feed");
    // What the programs print lives outside the folder (a file inside would be bound by trust).
    let outside = tempdir();
    let (a, b) = (outside.path().join("a.jsonl"), outside.path().join("b.jsonl"));
    let config =
        |file: &Path| format!("{}\n{}", command_config("printf 'handled\\n'"), cat_source("feed", file, ""));
    set_messages(&a, &["one", "two"]);
    let ws = Workspace::in_dir(dir, &config(&a));
    ws.set_clock("2026-05-08T15:00:00Z");
    let clock = ws.clock().display().to_string();
    let (code, out, err) = run(&ws, &["sources", "poll", "feed", "--clock-file", &clock]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "recorded one\nrecorded two\nfirst poll: 2 items recorded as seen, none queued (set `backfill = true` to queue them)\n"
    );
    assert!(queued(&ws.root).is_empty());
    assert_eq!(shipped(&ws.root, "feed"), state, "the clone's file is neither read nor written");
    assert!(ws.source_state("feed").is_some());

    // Another process (a tick) goes on from the state livenote wrote: only the new item.
    set_messages(&a, &["one", "two", "three"]);
    ws.set_clock("2026-05-08T15:05:01Z");
    let (code, _, err) = run(&ws, &["tick", "--clock-file", &clock]);
    assert_eq!(code, 0, "{err}");
    let events = queued(&ws.root);
    assert_eq!(events.len(), 1, "{events:?}\n{err}");
    assert_eq!(events[0]["payload"]["subject"], "three");

    // The same name now reads another program: what was seen of the first is not its cursor.
    write(&ws.root.join(".livenote.toml"), &config(&b));
    assert_eq!(run(&ws, &["trust", "."]).0, 0);
    set_messages(&b, &["one", "two", "three", "four"]);
    ws.set_clock("2026-05-08T15:11:00Z");
    let (code, out, err) = run(&ws, &["sources", "poll", "feed", "--clock-file", &clock]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.ends_with(
            "first poll: 4 items recorded as seen, none queued (set `backfill = true` to queue them)\n"
        ),
        "{out}"
    );
    assert_eq!(queued(&ws.root).len(), 1);
}

/// `folders` in the user's own config: the source serves the folders it names (here from
/// `~/`) and no other, trusted or not.
#[test]
fn your_own_source_with_folders_serves_those_alone() {
    let mailbox = tempdir();
    let inbox = mailbox.path().join("inbox.jsonl");
    set_messages(&inbox, &["hello"]);
    let ws = Workspace::in_dir(tempdir(), "");
    let other = tempdir();
    let other_root = other.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let other_dir = other_root.display().to_string();
    write(&other_root.join(".livenote.toml"), "");
    assert_eq!(run(&ws, &["trust", &other_dir]).0, 0);
    // The workspace as `~/NAME`, with its parent for the home folder.
    let home = ws.root.parent().unwrap_or_else(|| panic!("no parent")).to_path_buf();
    let name = ws.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    write(
        &ws.data.path().join("config.toml"),
        &cat_source("mail", &inbox, &format!("folders = [\"~/{name}\"]\n")),
    );
    let livenote = |args: &[&str]| {
        let mut c = ws.livenote(args);
        c.env("HOME", &home).env("USERPROFILE", &home).stdin(Stdio::null());
        c.output().unwrap_or_else(|e| panic!("{e}"))
    };
    let with_home = |args: &[&str]| {
        let out = livenote(args);
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, err) = with_home(&["sources", "poll", "mail", &other_dir]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("its `folders` (your own config) does not name"), "{err}");
    assert!(queued(&other_root).is_empty() && !other_root.join(".livenote").exists());
    let (code, err) = with_home(&["sources", "poll", "mail"]);
    assert_eq!(code, 0, "{err}");
    let out = livenote(&["sources", "--format", "json", &other_dir]);
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(rows[0]["status"], "other-folders", "{rows}");
    // A folder's file cannot name folders for a source.
    write(&other_root.join(".livenote.toml"), &cat_source("own", &inbox, "folders = [\"/elsewhere\"]\n"));
    assert_eq!(run(&ws, &["trust", &other_dir]).0, 0);
    let (_, _, err) = run(&ws, &["sources", &other_dir]);
    assert!(err.contains("`sources.own.folders` is read only from your own config"), "{err}");
}

/// `.livenote/.gitignore` is livenote's: one a clone shipped that ignores nothing is rewritten
/// when livenote first writes there; a folder in its place makes livenote refuse to write and
/// say why, rather than leave the run state to the next `git add -A`.
#[test]
fn a_gitignore_that_ignores_nothing_is_livenotes_once_livenote_writes() {
    let dir = tempdir();
    write(&dir.path().join(".livenote/.gitignore"), SHIPPED_GITIGNORE);
    let ws = Workspace::in_dir(dir, "");
    assert_eq!(gitignore(&ws.root), SHIPPED_GITIGNORE, "opening the folder writes nothing");
    let (code, _, err) = run(&ws, &["event", "--source", "ci", "--type", "deploy"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(gitignore(&ws.root), GITIGNORE);
    assert_eq!(files(&events::pending_dir(&ws.root)).len(), 1);

    std::fs::remove_dir_all(ws.root.join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(ws.root.join(".livenote/.gitignore/keep")).unwrap_or_else(|e| panic!("{e}"));
    let (code, _, err) = run(&ws, &["event", "--source", "ci", "--type", "deploy"]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains(".gitignore is not livenote's and cannot be rewritten"), "{err}");
    assert!(!events::pending_dir(&ws.root).exists());
}
