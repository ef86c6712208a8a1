//! Another program deletes, renames or rewrites the note while a run is "thinking" (the
//! provider script does it, as a sync tool or `git checkout` would): livenote never recreates
//! the note, never overwrites the other program's bytes, releases the lock, and does not panic.

use std::sync::atomic::{AtomicUsize, Ordering};

use livenote::note::rewrite::{RuntimeField, set_runtime_fields};
use livenote::runs::{DiskIo, Outcome};

use crate::{Ws, assert_parses, body_of, command_provider, live_note, run_manual, temp_files};

const OLD_BODY: &str = "Line one.\nLine two.\nLine three.\n";

/// Providers: `p` prints `.agent.txt`; `deleter` deletes the note first, `renamer` moves it to
/// `moved.md`, `syncer` rewrites it in place with `.other.md` (like a sync tool), `checkout`
/// replaces it atomically with `.other.md` (like git).
fn workspace() -> Ws {
    let config = [
        "[agent]\nprovider = \"p\"\n".to_owned(),
        command_provider("p", "cat .agent.txt", "20s"),
        command_provider("deleter", "rm \"$LIVENOTE_NOTE_PATH\"; cat .agent.txt", "20s"),
        command_provider(
            "renamer",
            "if [ \"$LIVENOTE_NOTE_PATH\" = n.md ]; then mv n.md moved.md; fi; cat .agent.txt",
            "20s",
        ),
        command_provider("syncer", "cat .other.md > \"$LIVENOTE_NOTE_PATH\"; cat .agent.txt", "20s"),
        command_provider(
            "checkout",
            "cp .other.md .checkout.tmp && mv .checkout.tmp \"$LIVENOTE_NOTE_PATH\"; cat .agent.txt",
            "20s",
        ),
    ]
    .concat();
    let ws = Ws::new(&config, "2026-11-23T09:00:00Z");
    ws.write(".agent.txt", "Line one, updated by the agent.\nLine two.\nLine three.\n");
    ws
}

#[tokio::test]
async fn a_note_deleted_mid_run_is_not_recreated() {
    let ws = workspace();
    ws.write("n.md", &live_note("  provider: deleter\n", OLD_BODY));
    let engine = ws.engine();
    let outcome = run_manual(&engine, &ws.path("n.md")).await;
    let Outcome::Failed { error, .. } = &outcome else { panic!("{outcome:?}") };
    assert_eq!(error, "cannot write the result: the note was deleted or moved");
    assert!(!ws.path("n.md").exists(), "the deleted note was recreated");
    assert!(temp_files(&ws.root).is_empty());
    assert!(!engine.store.is_locked("n.md"), "the lock was not released");
    // A new note at the same path runs normally (nothing stale blocks it).
    ws.write("n.md", &live_note("", OLD_BODY));
    let outcome = run_manual(&engine, &ws.path("n.md")).await;
    assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
    assert!(body_of(&ws.read("n.md")).starts_with("\nLine one, updated by the agent."));
}

#[tokio::test]
async fn a_note_renamed_mid_run_fails_cleanly_and_runs_under_its_new_name() {
    let ws = workspace();
    ws.write("n.md", &live_note("  provider: renamer\n", OLD_BODY));
    let engine = ws.engine();
    let outcome = run_manual(&engine, &ws.path("n.md")).await;
    let Outcome::Failed { run_id, error } = &outcome else { panic!("{outcome:?}") };
    assert_eq!(error, "cannot write the result: the note was deleted or moved");
    assert!(!ws.path("n.md").exists(), "a note was recreated at the old path");
    let moved = ws.read("moved.md");
    let live = assert_parses(&moved);
    assert_eq!(body_of(&moved), format!("\n{OLD_BODY}"), "the renamed note's body changed");
    // It carries the attempt (written before the rename), not a result.
    assert_eq!(live.last_run_id.as_deref(), Some(run_id.as_str()));
    assert_eq!(live.last_run_at, None);
    assert!(!engine.store.is_locked("n.md"));
    // The renamed note runs under its new name; the old name's lock does not matter.
    let outcome = run_manual(&engine, &ws.path("moved.md")).await;
    assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
    let moved = ws.read("moved.md");
    assert!(body_of(&moved).starts_with("\nLine one, updated by the agent."), "{moved}");
    assert_eq!(assert_parses(&moved).last_run_error, None);
    assert!(!ws.path("n.md").exists());
    assert!(temp_files(&ws.root).is_empty());
}

/// The run's note text at start; `other` replaces it mid-run through `provider`. Returns the
/// outcome and the final text.
async fn rewritten(provider: &str, other: &str) -> (Outcome, String, Ws) {
    let ws = workspace();
    ws.write("n.md", &live_note(&format!("  provider: {provider}\n"), OLD_BODY));
    ws.write(".other.md", other);
    let engine = ws.engine();
    let outcome = run_manual(&engine, &ws.path("n.md")).await;
    assert!(!engine.store.is_locked("n.md"));
    assert!(temp_files(&ws.root).is_empty());
    let text = ws.read("n.md");
    (outcome, text, ws)
}

/// Drop the lines livenote writes (runtime fields) to compare with what the other program wrote.
fn without_runtime_fields(text: &str) -> String {
    text.lines()
        .filter(|l| {
            !["lastAttemptAt", "lastRunAt", "lastRunId", "lastRunSummary", "lastRunError"]
                .iter()
                .any(|k| l.trim_start().starts_with(&format!("{k}:")))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[tokio::test]
async fn a_sync_tool_appending_mid_run_keeps_its_text_and_the_agents_change_lands() {
    let other = live_note("  provider: syncer\n", &format!("{OLD_BODY}\nAdded on my phone.\n"));
    let (outcome, text, _ws) = rewritten("syncer", &other).await;
    assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
    assert_parses(&text);
    assert_eq!(
        body_of(&text),
        "\nLine one, updated by the agent.\nLine two.\nLine three.\n\nAdded on my phone.\n",
        "{text}"
    );
}

#[tokio::test]
async fn a_sync_tool_changing_the_same_line_wins_over_the_agent() {
    let other = live_note("  provider: syncer\n", "Line one, edited on my phone.\nLine two.\nLine three.\n");
    let (outcome, text, _ws) = rewritten("syncer", &other).await;
    // The agent's hunk no longer finds its lines: it is skipped, the phone's edit stays. The
    // run still counts as done (the conflict is logged), so the cycle is not retried.
    assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
    let live = assert_parses(&text);
    assert_eq!(body_of(&text), "\nLine one, edited on my phone.\nLine two.\nLine three.\n", "{text}");
    assert!(live.last_run_at.is_some());
    assert_eq!(without_runtime_fields(&text), without_runtime_fields(&other));
}

#[tokio::test]
async fn a_checkout_replacing_the_note_keeps_every_byte_but_the_runtime_fields() {
    // Another version of the note: a comment, another key, a new objective, no runtime fields,
    // and a different body the agent's change cannot be placed in.
    let other = "---\n# checked out from main\ntags: [work]\nlive:\n  objective: \"A different objective\" # keep\n  provider: checkout\n---\n# Title\n\nSomething else entirely.\nNothing in common.\n";
    let (outcome, text, _ws) = rewritten("checkout", other).await;
    assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
    let live = assert_parses(&text);
    assert_eq!(without_runtime_fields(&text), other, "the checked-out bytes changed:\n{text}");
    assert!(live.last_run_at.is_some() && live.last_run_error.is_none(), "{text}");
}

#[tokio::test]
async fn a_note_made_passive_mid_run_is_left_exactly_as_the_other_program_wrote_it() {
    let other = "---\ntitle: not live any more\n---\n# Title\n\nPlain note now.\n";
    let (outcome, text, _ws) = rewritten("syncer", other).await;
    let Outcome::Failed { error, .. } = &outcome else { panic!("{outcome:?}") };
    assert_eq!(error, "cannot write the result: this note is not live (it has no `live:` block)");
    assert_eq!(text, other);
}

#[tokio::test]
async fn a_note_rewritten_with_broken_yaml_mid_run_keeps_the_broken_bytes() {
    let other = "---\nlive:\n  objective: [unclosed\n  provider: syncer\n---\n# Title\n\nBody.\n";
    let (outcome, text, _ws) = rewritten("syncer", other).await;
    // Runtime fields are line edits that work on half-typed YAML too (as quick fixes do), so
    // the run completes; the other program's lines, broken one included, stay as written and
    // the agent's change, which no longer fits the body, is skipped.
    assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
    assert_eq!(without_runtime_fields(&text), other, "{text}");
}

/// The compare-and-swap itself: another program writes between livenote's read and its write
/// (the compute step is exactly that moment). The write is recomputed on the fresh text; a
/// note that never stops changing is given up on, holding the other program's last bytes.
#[test]
fn a_write_racing_another_program_is_recomputed_never_blind() {
    let dir = crate::tempdir();
    let path = dir.path().join("n.md");
    let note = live_note("", OLD_BODY);
    crate::write(&path, &note);
    let other = note.replace("Line two.", "Line two, from the other program.");
    let calls = AtomicUsize::new(0);
    let summary = |t: &str| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            crate::write(&path, &other);
        }
        set_runtime_fields(t, &[(RuntimeField::LastRunSummary, Some("ok"))]).map_err(|e| e.to_string())
    };
    DiskIo::apply_sync(&path, &summary).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(calls.load(Ordering::SeqCst), 2, "the edit was not recomputed");
    let text = crate::read(&path);
    assert_eq!(text, other.replace("---\n# Title", "  lastRunSummary: \"ok\"\n---\n# Title"));

    let n = AtomicUsize::new(0);
    let last = std::sync::Mutex::new(String::new());
    let always = |t: &str| {
        let k = n.fetch_add(1, Ordering::SeqCst);
        let v = note.replace("Line two.", &format!("Line two, version {k}."));
        crate::write(&path, &v);
        *last.lock().unwrap_or_else(|e| e.into_inner()) = v;
        // Not "ok" again: a write of what the note already holds is no write at all.
        set_runtime_fields(t, &[(RuntimeField::LastRunSummary, Some("ok, again"))]).map_err(|e| e.to_string())
    };
    let r = DiskIo::apply_sync(&path, &always);
    assert_eq!(r, Err("the note kept changing on disk; gave up after 5 attempts".to_owned()));
    assert_eq!(crate::read(&path), *last.lock().unwrap_or_else(|e| e.into_inner()));
    assert!(temp_files(dir.path()).is_empty());
}
