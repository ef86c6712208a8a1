use super::*;
use crate::config::Config;
use chrono::{DateTime, Utc};
use serde_json::json;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

fn event(payload: Value) -> Event {
    Event {
        id: "01TEST".to_owned(),
        source: "gmail".to_owned(),
        kind: "email.synced".to_owned(),
        created_at: "2026-05-08T15:00:00.000Z".to_owned(),
        payload,
        target_file_path: None,
        extra: Map::new(),
    }
}

fn note(rel: &str, criteria: &str) -> EventNote {
    EventNote {
        path: PathBuf::from("/w").join(rel),
        rel: rel.to_owned(),
        objective: "o".to_owned(),
        criteria: criteria.to_owned(),
        sources: None,
    }
}

/// Found by the `event_json` fuzz target: serde_json's default float parsing is not
/// correctly rounded, so a number with many digits read from an event came out of `done/`
/// as a different number when read again. `float_roundtrip` (server/Cargo.toml) fixes it.
#[test]
fn numbers_survive_a_round_trip() {
    let text = r#"{"id":"01","source":"s","type":"t","createdAt":"c","payload":{"n":211111111111111111111111111111111111111111111},"x":2.1111111111111108e44}"#;
    let e = parse_event(text).unwrap_or_else(|e| panic!("{e}"));
    let written = serde_json::to_string(&e).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parse_event(&written), Ok(e.clone()));
    assert_eq!(e.payload["n"].as_f64(), Some(2.111111111111111e44));
}

#[test]
fn parses_and_rejects_events() {
    let ok = r#"{"id":"01A","source":"s","type":"t","createdAt":"2026-01-01T00:00:00Z","payload":{"n":1},"x":true}"#;
    let e = parse_event(ok).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(e.payload, json!({"n": 1}));
    assert_eq!(e.extra.get("x"), Some(&json!(true)));
    assert_eq!(e.target_file_path, None);
    let cases = [
        ("not json", "invalid event: expected ident at line 1 column 2"),
        (
            r#"{"id":"01A","type":"t","createdAt":"c","payload":"p"}"#,
            "invalid event: missing field `source` at line 1 column 53",
        ),
        (
            r#"{"id":"01A","source":"s","type":"t","createdAt":"c"}"#,
            "invalid event: missing field `payload` at line 1 column 52",
        ),
        (
            r#"{"id":"01A","source":"s","type":"t","createdAt":"c","payload":null}"#,
            "invalid event: `payload` is null",
        ),
        (
            r#"{"id":" ","source":"s","type":"t","createdAt":"c","payload":"p"}"#,
            "invalid event: `id` is empty",
        ),
        (
            r#"{"id":"01A","source":"s","type":7,"createdAt":"c","payload":"p"}"#,
            "invalid event: invalid type: integer `7`, expected a string at line 1 column 33",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(parse_event(text).err().as_deref(), Some(want), "{text}");
    }
}

#[test]
fn routing_output_is_validated() {
    assert_eq!(
        parse_routing_output(r#"{"filePaths": ["a.md", "b.md"]}"#),
        Ok(vec!["a.md".into(), "b.md".into()])
    );
    assert_eq!(parse_routing_output("```json\n{\"filePaths\": []}\n```"), Ok(vec![]));
    assert!(parse_routing_output("a.md").is_err());
    assert!(parse_routing_output(r#"{"paths": ["a.md"]}"#).is_err());
    assert!(parse_routing_output(r#"{"filePaths": [1]}"#).is_err());
    assert!(parse_routing_output(r#"{"filePaths": ["a.md"}"#).is_err());
}

#[test]
fn routing_prompt_lists_event_and_notes() {
    let p = routing_prompt(
        &event(json!("Subject: Q3 planning")),
        &[note("plans/q3.md", "Emails about Q3 planning")],
    );
    assert!(p.starts_with("## Event\n\n- source: gmail\n- type: email.synced\n"), "{p}");
    assert!(p.contains("Subject: Q3 planning\n\n## Live notes\n\n- filePath: plans/q3.md\n  objective: o\n  eventMatchCriteria: Emails about Q3 planning\n"), "{p}");
}

#[test]
fn keyword_routing_is_liberal_but_not_blind() {
    let e = event(json!("Subject: Planning the Q3 offsite\nFrom: ana@example.com"));
    assert!(KeywordRouter::matches(&e, &note("a.md", "Emails about Q3 planning")));
    assert!(KeywordRouter::matches(&e, &note("a.md", "Offsites")));
    assert!(!KeywordRouter::matches(&e, &note("b.md", "Calendar changes for the dentist")));
    assert!(!KeywordRouter::matches(&e, &note("c.md", "any updates about things")));
    assert!(KeywordRouter::matches(&event(json!({"repo": "livenote"})), &note("d.md", "Livenote releases")));
    assert_eq!(stem("planning"), "plan");
    assert_eq!(stem("emails"), "email");
    assert_eq!(stem("stories"), "story");
    assert_eq!(stem("boxes"), "box");
    assert_eq!(stem("offsites"), "offsite");
}

#[test]
fn context_carries_criteria_and_payload_but_not_the_directive() {
    let c = run_context(&event(json!("the payload")), "Emails about Q3");
    assert!(c.contains("**Event match criteria of this note:** Emails about Q3"), "{c}");
    assert!(c.ends_with("**Payload:**\n\nthe payload"), "{c}");
    // The run's message says what to do with the event, once.
    assert!(!c.contains("leave the note unchanged"), "{c}");
    let long = run_context(&event(json!("x".repeat(MAX_CONTEXT_PAYLOAD_CHARS + 10))), "c");
    assert!(long.contains("… (truncated)"));
}

#[test]
fn ids_sort_in_creation_order() {
    let ids: Vec<String> = (0..200).map(|_| new_id()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
    assert!(ids.iter().all(|i| i.len() == 26));
}

#[test]
fn create_event_writes_pending_atomically() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    let e = create_event(root, "cli", "note.ping", json!("hi"), Some("./notes/a.md"), chrono::Utc::now())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(e.target_file_path.as_deref(), Some("notes/a.md"));
    let files = pending_events(root);
    assert_eq!(files, vec![pending_dir(root).join(format!("{}.json", e.id))]);
    let text = std::fs::read_to_string(&files[0]).unwrap_or_default();
    assert_eq!(parse_event(&text), Ok(e));
    let leftovers: Vec<_> = std::fs::read_dir(events_dir(root))
        .map(|r| r.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert_eq!(leftovers.len(), 4, "no temp file left: {leftovers:?}");
    assert!(root.join(".livenote/.gitignore").exists());
    assert!(matches!(
        create_event(root, " ", "t", json!("p"), None, chrono::Utc::now()),
        Err(EventError::Invalid(_))
    ));
    let big = json!("x".repeat(MAX_PAYLOAD_BYTES + 1));
    assert!(matches!(
        create_event(root, "s", "t", big, None, chrono::Utc::now()),
        Err(EventError::Invalid(_))
    ));
}

/// What is refused is measured as written: a payload under the 1 MiB cap whose escapes make
/// its file more than the queue reads back is refused before anything is written; one with
/// room is written and read back whole.
#[test]
fn an_event_is_measured_as_its_file_holds_it() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    let controls = json!("\u{1}".repeat(1_000_000));
    let refused = create_event(root, "hook", "webhook.post", controls, None, chrono::Utc::now());
    assert!(matches!(&refused, Err(EventError::TooLarge(m)) if m.contains("5.7 MiB as JSON")), "{refused:?}");
    assert!(pending_events(root).is_empty());
    // 600,000 control characters are 3.4 MiB as JSON: under the bound, read back as written.
    let fits = json!("\u{1}".repeat(600_000));
    let e = create_event(root, "hook", "webhook.post", fits.clone(), None, chrono::Utc::now())
        .unwrap_or_else(|e| panic!("{e}"));
    let back = read_event_file(&pending_dir(root).join(format!("{}.json", e.id)));
    assert_eq!(back.map(|b| b.payload), Ok(fits));
}

#[test]
fn exactly_one_claimant_wins() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().to_path_buf();
    ensure_dirs(&root).unwrap_or_else(|e| panic!("{e}"));
    for i in 0..50 {
        std::fs::write(pending_dir(&root).join(format!("{i:03}.json")), "{}")
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let claimed: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    let mut held = Vec::new();
                    while let Ok(Some(c)) = claim_next(&root) {
                        mine.push(id_of(&c.path));
                        // Keep the claims (and their locks) so others see them taken.
                        held.push(c);
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    let mut all: Vec<String> = claimed.into_iter().flatten().collect();
    assert_eq!(all.len(), 50, "every event claimed exactly once");
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 50);
}

/// A claim is read through its own locked handle: on Windows the lock is mandatory, and
/// reading the file by its path, as processing once did, fails with a lock violation (Wine
/// does not enforce that, so this cannot show the old failure there).
#[test]
fn a_claimed_event_is_read_while_its_lock_is_held() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    ensure_dirs(root).unwrap_or_else(|e| panic!("{e}"));
    let text =
        r#"{"id":"01E","source":"s","type":"t","createdAt":"2026-05-08T15:00:00.000Z","payload":{"k":1}}"#;
    std::fs::write(pending_dir(root).join("01E.json"), text).unwrap_or_else(|e| panic!("{e}"));
    let claim = claim_next(root).unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|| panic!("no claim"));
    let event = claim.read().unwrap_or_else(|(e, _)| panic!("{e}"));
    assert_eq!((event.id.as_str(), event.payload["k"].as_i64()), ("01E", Some(1)));
    // Read twice (a retry after routing): from the start again, not from where the first ended.
    assert!(claim.read().is_ok_and(|e| e.id == "01E"));
}

#[test]
fn abandoned_claims_go_back_to_pending() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    ensure_dirs(root).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(processing_dir(root).join("a.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(processing_dir(root).join("b.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(done_dir(root).join("b.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
    // A live claim (locked by its holder) stays put.
    std::fs::write(pending_dir(root).join("c.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
    let held = claim_next(root).unwrap_or_else(|e| panic!("{e}"));
    assert!(held.is_some());
    recover_stale(root, STALE_CLAIM);
    assert_eq!(pending_events(root), vec![pending_dir(root).join("a.json")]);
    assert_eq!(event_files(root, "processing"), vec![processing_dir(root).join("c.json")]);
    drop(held);
    recover_stale(root, STALE_CLAIM);
    assert_eq!(pending_events(root).len(), 2);
}

#[test]
fn routing_uses_the_default_providers_model_when_there_is_one() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let load = |toml: &str| {
        std::fs::write(dir.path().join(".livenote.toml"), toml).unwrap_or_else(|e| panic!("{e}"));
        Config::load_with(Some(dir.path()), None, &|_: &str| None).0
    };
    let local =
        load("[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n");
    assert!(model_client(&local).is_ok());
    let keyless = load(
        "[providers.c]\nkind = \"anthropic\"\nmodel = \"m\"\napi_key_env = \"LIVENOTE_TEST_NO_SUCH_KEY\"\n",
    );
    assert!(model_client(&keyless).is_err());
    let command = load("[providers.p]\nkind = \"command\"\ncommand = [\"true\"]\n");
    assert_eq!(
        model_client(&command).err().as_deref(),
        Some(
            "the default provider `p` is a command provider; to route events with a model, set `[agent] provider` to an `openai` or `anthropic` provider"
        )
    );
    let named = load("[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"true\"]\n");
    assert!(
        model_client(&named)
            .err()
            .is_some_and(|e| e.starts_with("`[agent] provider` is `p`, a command provider; ")),
        "{:?}",
        model_client(&named).err()
    );
    assert_eq!(read_done(dir.path(), "../x"), None);
}

#[test]
fn pending_paths_and_targets() {
    let root = Path::new("/w");
    assert!(is_pending_path(root, Path::new("/w/.livenote/events/pending/01A.json")));
    assert!(!is_pending_path(root, Path::new("/w/.livenote/events/pending/.event-x.tmp")));
    assert!(!is_pending_path(root, Path::new("/w/.livenote/events/done/01A.json")));
    assert_eq!(normalize_target(root, "/w/notes/a.md"), "notes/a.md");
    assert_eq!(normalize_target(root, "././a.md"), "a.md");
}

/// The event run's message states the decision directive once: the context the processor
/// builds carries the facts (criteria, event, payload), the run's message says what to do
/// with them (`agent::prompt`).
#[test]
fn the_event_run_message_states_the_directive_once() {
    use chrono::TimeZone;
    let context = run_context(&event(json!("Q3 planning moved to Tuesday")), "Emails about Q3 planning");
    let req = crate::providers::RunRequest {
        note_path: "q3.md".to_owned(),
        title: Some("Q3".to_owned()),
        objective: "Keep Q3 current".to_owned(),
        trigger: crate::providers::TriggerKind::Event,
        context: Some(context),
        event: None,
        body: "\nold body\n".to_owned(),
        now: chrono::Utc.with_ymd_and_hms(2026, 5, 8, 15, 0, 0).single().unwrap_or_default(),
        local_now: "2026-05-08T15:00:00+00:00".to_owned(),
        time_zone: "UTC".to_owned(),
        workspace_root: PathBuf::from("/w"),
        trusted: true,
        run_id: "01JTX3".to_owned(),
        model: None,
        mcp_servers: Vec::new(),
        instructions: Vec::new(),
        max_chars: None,
        memory: Default::default(),
        skills: Vec::new(),
        skill_catalog: Vec::new(),
    };
    let m = crate::agent::prompt::run_message(&req);
    assert_eq!(m.matches("leave the note unchanged").count(), 1, "{m}");
    assert_eq!(m.to_lowercase().matches("decide whether").count(), 1, "{m}");
    assert!(m.contains("Q3 planning moved to Tuesday") && m.contains("Emails about Q3 planning"), "{m}");
}

/// Runs each note, recording it; cancels `cancel` during the run of `cancel_on` (a shutdown
/// of the processor mid-run), which then ends as stopped.
struct Recording {
    runs: std::sync::Mutex<Vec<String>>,
    cancel_on: Option<(String, CancellationToken)>,
}

impl EventRunner for Recording {
    fn trusted(&self) -> bool {
        true
    }

    fn now(&self) -> DateTime<Utc> {
        DateTime::UNIX_EPOCH
    }

    fn run<'a>(
        &'a self,
        note: &'a EventNote,
        _event: &'a Event,
        _context: String,
        _cancel: CancellationToken,
    ) -> crate::model::BoxFuture<'a, crate::runs::Outcome> {
        Box::pin(async move {
            let mut runs = self.runs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            runs.push(note.rel.clone());
            if let Some((rel, cancel)) = &self.cancel_on
                && *rel == note.rel
            {
                cancel.cancel();
                return crate::runs::Outcome::Stopped { run_id: format!("r{}", runs.len()) };
            }
            crate::runs::Outcome::Done { run_id: format!("r{}", runs.len()), summary: "ok".to_owned() }
        })
    }
}

fn queued(root: &Path, payload: &str) {
    ensure_dirs(root).unwrap_or_else(|e| panic!("{e}"));
    let e = json!({"id": "01P", "source": "s", "type": "t", "createdAt": "c", "payload": payload});
    std::fs::write(pending_dir(root).join("01P.json"), e.to_string()).unwrap_or_else(|e| panic!("{e}"));
}

/// A processor stopped during the second candidate's run records the first as finished; the
/// event comes back and runs the second alone. `done/` has both results and no progress stays.
#[tokio::test]
async fn a_requeued_event_runs_only_the_candidates_that_did_not_finish() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    queued(root, "Q3 offsite at the dentist");
    let notes = || vec![note("a.md", "Q3 planning"), note("b.md", "dentist")];
    let cancel = CancellationToken::new();
    let first = Recording { runs: Default::default(), cancel_on: Some(("b.md".to_owned(), cancel.clone())) };
    let done = process_pending(root, &notes, &KeywordRouter, &first, &cancel).await;
    assert!(done.is_empty());
    assert_eq!(pending_events(root).len(), 1, "the event is back in pending/");
    let progress = read_progress(root, "01P").unwrap_or_else(|| panic!("no progress"));
    assert_eq!(progress.candidates, ["a.md", "b.md"]);
    assert!(progress.finished("a.md") && !progress.finished("b.md"), "{progress:?}");

    let second = Recording { runs: Default::default(), cancel_on: None };
    let done = process_pending(root, &notes, &KeywordRouter, &second, &CancellationToken::new()).await;
    assert_eq!(second.runs.lock().map(|r| r.clone()).unwrap_or_default(), ["b.md"]);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].candidate_file_paths, ["a.md", "b.md"]);
    assert_eq!(done[0].run_ids, ["r1", "r1"]);
    assert_eq!(done[0].error, None);
    assert_eq!(read_progress(root, "01P"), None);
    let record = read_done(root, "01P").unwrap_or_default();
    assert_eq!(record["results"].as_array().map(Vec::len), Some(2), "{record}");
}

/// Progress names the candidates routing chose: routing is not asked again, and a candidate
/// that no longer takes events by then is recorded as skipped rather than run.
#[tokio::test]
async fn recorded_progress_stands_in_for_routing() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    queued(root, "nothing the keywords match");
    let progress = Progress {
        candidates: vec!["a.md".to_owned(), "gone.md".to_owned(), "b.md".to_owned()],
        results: vec![json!({"filePath": "a.md", "runId": "r0", "status": "done", "message": "ok"})],
        errors: Vec::new(),
    };
    write_progress(root, "01P", &progress);
    assert_eq!(read_progress(root, "01P"), Some(progress));
    let notes = || vec![note("a.md", "Q3 planning"), note("b.md", "dentist")];
    let runner = Recording { runs: Default::default(), cancel_on: None };
    let done = process_pending(root, &notes, &KeywordRouter, &runner, &CancellationToken::new()).await;
    assert_eq!(runner.runs.lock().map(|r| r.clone()).unwrap_or_default(), ["b.md"]);
    assert_eq!(done[0].run_ids, ["r0", "r1"]);
    assert_eq!(done[0].error.as_deref(), Some("gone.md: skipped (the note no longer takes events)"));
    // An unreadable progress file is no progress: the event is routed as a new one.
    queued(root, "Q3 again");
    std::fs::write(events_dir(root).join("progress/01P.json"), "{oops").unwrap_or_else(|e| panic!("{e}"));
    let runner = Recording { runs: Default::default(), cancel_on: None };
    process_pending(root, &notes, &KeywordRouter, &runner, &CancellationToken::new()).await;
    assert_eq!(runner.runs.lock().map(|r| r.clone()).unwrap_or_default(), ["a.md"]);
}
