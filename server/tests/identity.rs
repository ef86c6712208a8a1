//! Issue 21 §3: a note keeps its identity. What livenote keeps of a note (history, undo,
//! diff, restore, memory) follows it through `mv`; a copy starts fresh and takes nothing from
//! the note it was copied from, even though both carry the same `lastRunId`.

mod common;

use common::{Workspace, command_config};
use serde_json::Value;

/// Each run writes a body naming the run, and remembers the path it ran as.
const SCRIPT: &str = r#"printf '{"body": "body of run %s\\n", "summary": "run %s", "memory": {"ran-as": "%s"}}' "$LIVENOTE_RUN_ID" "$LIVENOTE_RUN_ID" "$LIVENOTE_NOTE_PATH""#;

const NOTE: &str = "---\nlive:\n  objective: count the runs\n---\n# Counter\n\nnothing yet\n";

/// `livenote ARGS`: exit status, stdout, stderr.
fn livenote(ws: &Workspace, args: &[&str]) -> (bool, String, String) {
    let out = ws.livenote(args).output().unwrap_or_else(|e| panic!("livenote {args:?}: {e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// `livenote history NOTE --format json`: the runs' ids and triggers, newest first.
fn runs(ws: &Workspace, note: &str) -> Vec<(String, String)> {
    let (ok, out, err) = livenote(ws, &["history", note, "--format", "json"]);
    assert!(ok, "{err}");
    let runs: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    runs.as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (s("id"), s("trigger"))
        })
        .collect()
}

fn run(ws: &Workspace, note: &str) {
    let (ok, _, err) = livenote(ws, &["run", note]);
    assert!(ok, "livenote run {note}: {err}");
}

fn body(ws: &Workspace, note: &str) -> String {
    let text = std::fs::read_to_string(ws.root.join(note)).unwrap_or_default();
    text.rsplit_once("# Counter\n\n").map(|(_, b)| b.to_owned()).unwrap_or_default()
}

fn mv(ws: &Workspace, from: &str, to: &str) {
    std::fs::rename(ws.root.join(from), ws.root.join(to)).unwrap_or_else(|e| panic!("mv {from} {to}: {e}"));
}

#[test]
fn a_moved_note_keeps_its_history_undo_diff_and_memory() {
    let ws = Workspace::with_note(&command_config(SCRIPT), NOTE);
    run(&ws, "n.md");
    run(&ws, "n.md");
    let before = runs(&ws, "n.md");
    assert_eq!(before.len(), 2, "{before:?}");
    let (second, first) = (before[0].0.clone(), before[1].0.clone());
    mv(&ws, "n.md", "moved.md");

    assert_eq!(runs(&ws, "moved.md"), before, "the history follows the note");
    let (ok, out, err) = livenote(&ws, &["history", "moved.md"]);
    assert!(ok && out.contains(&format!("run {second}")), "{out}{err}");
    let (ok, out, err) = livenote(&ws, &["memory", "moved.md"]);
    assert!(ok && out.contains("in the memory of moved.md") && out.contains("ran-as  "), "{out}{err}");
    assert!(out.contains("n.md"), "the memory the runs saved as n.md: {out}");
    let (ok, out, err) = livenote(&ws, &["diff", "moved.md"]);
    assert!(ok, "{err}");
    assert!(out.contains(&format!("-body of run {first}")), "{out}");
    assert!(out.contains(&format!("+body of run {second}")), "{out}");

    let (ok, out, err) = livenote(&ws, &["undo", "moved.md"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains(&format!("undid run {second} of moved.md")), "{out}");
    assert_eq!(body(&ws, "moved.md"), format!("body of run {first}\n"));
    let after: Vec<String> = runs(&ws, "moved.md").into_iter().map(|(_, t)| t).collect();
    assert_eq!(after, ["undo", "manual", "manual"]);
    // The next run goes on from there, under the new name.
    run(&ws, "moved.md");
    assert_eq!(runs(&ws, "moved.md").len(), 4);
    let (_, out, _) = livenote(&ws, &["memory", "moved.md", "show", "ran-as"]);
    assert!(out.ends_with("\n\nmoved.md\n"), "{out}");
    // Nothing is left under the old name.
    let history = common::files(&ws.root.join(".livenote/history"));
    assert!(history.len() == 1 && history[0].starts_with("moved.md-"), "{history:?}");
}

#[test]
fn a_copy_starts_fresh_and_the_original_keeps_its_state_through_a_later_move() {
    let ws = Workspace::with_note(&command_config(SCRIPT), NOTE);
    run(&ws, "n.md");
    run(&ws, "n.md");
    let original = runs(&ws, "n.md");
    std::fs::copy(ws.root.join("n.md"), ws.root.join("copy.md")).unwrap_or_else(|e| panic!("{e}"));

    // Same `lastRunId` as the original, which is still there: nothing of it is taken.
    let (ok, out, err) = livenote(&ws, &["history", "copy.md"]);
    assert!(ok && out == "no runs of copy.md are recorded\n", "{out}{err}");
    let (ok, out, err) = livenote(&ws, &["undo", "copy.md"]);
    assert!(!ok && err.contains("nothing to undo"), "{out}{err}");
    let (_, out, _) = livenote(&ws, &["memory", "copy.md"]);
    assert_eq!(out, "copy.md has no memory yet\n");
    assert_eq!(runs(&ws, "n.md"), original);

    // The copy's first run is its own; the original's history is untouched.
    run(&ws, "copy.md");
    let copy = runs(&ws, "copy.md");
    assert_eq!(copy.len(), 1, "{copy:?}");
    assert_eq!(runs(&ws, "n.md"), original);

    // Moving the original now: its state follows it, and the copy keeps only its own.
    mv(&ws, "n.md", "moved.md");
    assert_eq!(runs(&ws, "moved.md"), original);
    assert_eq!(runs(&ws, "copy.md"), copy);
    let (_, out, _) = livenote(&ws, &["memory", "moved.md", "show", "ran-as"]);
    assert!(out.ends_with("\n\nn.md\n"), "{out}");
    let (_, out, _) = livenote(&ws, &["memory", "copy.md", "show", "ran-as"]);
    assert!(out.ends_with("\n\ncopy.md\n"), "{out}");
    let (ok, out, err) = livenote(&ws, &["undo", "copy.md"]);
    assert!(ok && out.contains(&format!("undid run {} of copy.md", copy[0].0)), "{out}{err}");
    assert_eq!(body(&ws, "copy.md"), format!("body of run {}\n", original[0].0));
}
