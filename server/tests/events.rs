//! The event queue end to end: events dropped into `.livenote/events/pending/` are routed to
//! the right live notes, run, and recorded in `done/`; malformed events never stop the loop;
//! the order is the id order; racing processors (threads and `livenote watch` processes)
//! handle each event once; `livenote event` queues from a shell.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use livenote::events::{
    self, Event, EventNote, EventRunner, KeywordRouter, ModelRouter, Processed, Router, eligible_notes,
    process_pending,
};
use livenote::model::ModelError;
use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use livenote::model::{BoxFuture, ModelClient, Request, Turn, Usage};
use livenote::runs::Outcome;
use livenote::workspace::index::Index;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use common::{Watcher, Workspace, command_config, event_id_in, files, tempdir, wait_until, write};

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|e| panic!("{e}"))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A live note; `criteria` becomes `eventMatchCriteria`, `more` extra lines inside `live:`.
fn note(title: &str, criteria: Option<&str>, more: &str) -> String {
    let triggers =
        criteria.map(|c| format!("  triggers:\n    eventMatchCriteria: \"{c}\"\n")).unwrap_or_default();
    format!("---\nlive:\n  objective: Keep {title} current\n{more}{triggers}---\n# {title}\n\nold body\n")
}

/// Drop an event the way an outside program does: a JSON file in `pending/`.
fn drop_event(root: &Path, id: &str, payload: Value, target: Option<&str>) {
    let mut e = json!({
        "id": id,
        "source": "gmail",
        "type": "email.synced",
        "createdAt": "2026-05-08T15:00:00.000Z",
        "payload": payload,
        "threadId": "t-1",
    });
    if let Some(t) = target {
        e["targetFilePath"] = json!(t);
    }
    write(&events::pending_dir(root).join(format!("{id}.json")), &e.to_string());
}

fn notes_of(root: &Path) -> Vec<EventNote> {
    let (index, _) = Index::build(&[root.to_path_buf()], &[]);
    let now = chrono::DateTime::parse_from_rfc3339("2026-05-08T15:01:00Z").unwrap_or_default().to_utc();
    eligible_notes(root, &index, now, &livenote::schedule::Zone::Named(chrono_tz::UTC))
}

/// Picks notes whose criteria's first word appears in the payload, and always names a note
/// that does not exist (which must be dropped).
#[derive(Default)]
struct FakeRouter {
    batches: Mutex<Vec<usize>>,
}

impl Router for FakeRouter {
    fn route<'a>(
        &'a self,
        event: &'a Event,
        batch: &'a [EventNote],
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<String>, String>> {
        self.batches.lock().unwrap_or_else(|e| e.into_inner()).push(batch.len());
        let payload = event.payload_text().to_lowercase();
        let mut picked: Vec<String> = batch
            .iter()
            .filter(|n| n.criteria.split(' ').next().is_some_and(|w| payload.contains(&w.to_lowercase())))
            .map(|n| n.rel.clone())
            .collect();
        picked.push("ghost.md".to_owned());
        Box::pin(async move { Ok(picked) })
    }
}

/// Records every run (event id, note, context) and succeeds.
struct FakeRunner {
    trusted: AtomicBool,
    runs: Mutex<Vec<(String, String, String)>>,
    counter: AtomicUsize,
    delay: Duration,
    /// "Now", settable: routing retries wait on it.
    now: Mutex<DateTime<Utc>>,
}

impl FakeRunner {
    fn new() -> Self {
        FakeRunner {
            trusted: AtomicBool::new(true),
            runs: Mutex::new(Vec::new()),
            counter: AtomicUsize::new(0),
            delay: Duration::ZERO,
            now: Mutex::new(
                DateTime::parse_from_rfc3339("2026-05-08T15:01:00Z")
                    .map(|t| t.with_timezone(&Utc))
                    .unwrap_or_default(),
            ),
        }
    }

    fn runs(&self) -> Vec<(String, String, String)> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl EventRunner for FakeRunner {
    fn trusted(&self) -> bool {
        self.trusted.load(Ordering::SeqCst)
    }

    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn run<'a>(
        &'a self,
        note: &'a EventNote,
        _event: &'a livenote::events::Event,
        context: String,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            let n = self.counter.fetch_add(1, Ordering::SeqCst);
            self.runs.lock().unwrap_or_else(|e| e.into_inner()).push((
                event_id_in(&context),
                note.rel.clone(),
                context,
            ));
            if note.rel == "fails.md" {
                return Outcome::Failed { run_id: format!("run-{n}"), error: "boom".to_owned() };
            }
            Outcome::Done { run_id: format!("run-{n}"), summary: "ok".to_owned() }
        })
    }
}

async fn process(root: &Path, router: &dyn Router, runner: &dyn EventRunner) -> Vec<Processed> {
    let root_owned = root.to_path_buf();
    let notes = move || notes_of(&root_owned);
    process_pending(root, &notes, router, runner, &CancellationToken::new()).await
}

/// Notes a.md and b.md take events; the others do not (paused, expired, no criteria, invalid).
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempdir();
    let root = canonical(dir.path());
    write(&root.join("a.md"), &note("Q3", Some("Q3 planning emails"), ""));
    write(&root.join("notes/b.md"), &note("Dentist", Some("Dentist appointments"), ""));
    write(&root.join("paused.md"), &note("Paused", Some("Q3 anything"), "  active: false\n"));
    write(&root.join("ended.md"), &note("Ended", Some("Q3 planning too"), "  until: 2026-05-07\n"));
    write(&root.join("manual.md"), &note("Manual", None, ""));
    write(&root.join("invalid.md"), &note("Invalid", Some("Q3 too"), "  active: yes\n"));
    (dir, root)
}

#[tokio::test]
async fn an_event_is_routed_to_the_right_note_run_and_recorded() {
    let (_dir, root) = workspace();
    let eligible: Vec<String> = notes_of(&root).into_iter().map(|n| n.rel).collect();
    assert_eq!(eligible, ["a.md", "notes/b.md"]);
    drop_event(&root, "01JV0000000000000000000001", json!("Re: Q3 planning offsite"), None);
    let (router, runner) = (FakeRouter::default(), FakeRunner::new());
    let processed = process(&root, &router, &runner).await;
    assert_eq!(
        processed,
        vec![Processed {
            id: "01JV0000000000000000000001".to_owned(),
            candidate_file_paths: vec!["a.md".to_owned()],
            run_ids: vec!["run-0".to_owned()],
            error: None,
        }]
    );
    assert_eq!(*router.batches.lock().unwrap_or_else(|e| e.into_inner()), [2]);
    let runs = runner.runs();
    assert_eq!(runs.len(), 1);
    let (id, rel, context) = &runs[0];
    assert_eq!((id.as_str(), rel.as_str()), ("01JV0000000000000000000001", "a.md"));
    assert!(context.contains("**Event match criteria of this note:** Q3 planning emails"), "{context}");
    assert!(context.contains("Re: Q3 planning offsite"), "{context}");
    // What to do with the event is the run message's to say, once (agent::prompt).
    assert!(!context.contains("leave the note unchanged"), "{context}");
    assert_eq!(files(&events::pending_dir(&root)), Vec::<String>::new());
    assert_eq!(files(&events::processing_dir(&root)), Vec::<String>::new());
    let done = read_json(&events::done_dir(&root).join("01JV0000000000000000000001.json"));
    assert_eq!(done["source"], "gmail");
    assert_eq!(done["type"], "email.synced");
    assert_eq!(done["payload"], "Re: Q3 planning offsite");
    assert_eq!(done["threadId"], "t-1", "unknown keys survive");
    assert_eq!(done["processedAt"], "2026-05-08T15:01:00.000Z");
    assert_eq!(done["candidateFilePaths"], json!(["a.md"]));
    assert_eq!(done["runIds"], json!(["run-0"]));
    assert_eq!(done["error"], Value::Null);
    assert_eq!(
        done["results"],
        json!([{"filePath": "a.md", "runId": "run-0", "status": "done", "message": "ok"}])
    );
}

#[tokio::test]
async fn a_target_skips_routing_and_must_be_eligible() {
    let (_dir, root) = workspace();
    write(&root.join("fails.md"), &note("Fails", Some("Anything"), ""));
    drop_event(&root, "01JV0000000000000000000001", json!({"any": "thing"}), Some("notes/b.md"));
    drop_event(&root, "01JV0000000000000000000002", json!("x"), Some("paused.md"));
    drop_event(&root, "01JV0000000000000000000003", json!("x"), Some("./fails.md"));
    let (router, runner) = (FakeRouter::default(), FakeRunner::new());
    let processed = process(&root, &router, &runner).await;
    assert!(router.batches.lock().unwrap_or_else(|e| e.into_inner()).is_empty(), "the router was asked");
    let summary: Vec<(Vec<String>, Option<String>)> =
        processed.into_iter().map(|p| (p.candidate_file_paths, p.error)).collect();
    assert_eq!(
        summary,
        vec![
            (vec!["notes/b.md".to_owned()], None),
            (vec![], Some("targetFilePath `paused.md` is not an active, valid live note".to_owned())),
            (vec!["fails.md".to_owned()], Some("fails.md: boom".to_owned())),
        ]
    );
    let done = read_json(&events::done_dir(&root).join("01JV0000000000000000000003.json"));
    assert_eq!(done["runIds"], json!(["run-1"]), "a failed run is still recorded");
    assert_eq!(done["results"][0]["status"], "failed");
}

#[tokio::test]
async fn a_malformed_event_goes_to_done_and_the_next_is_still_processed() {
    let (_dir, root) = workspace();
    let pending = events::pending_dir(&root);
    write(&pending.join("01JV0000000000000000000001.json"), "not json {");
    write(&pending.join("01JV0000000000000000000002.json"), r#"{"id": "x", "source": "s", "type": "t"}"#);
    std::fs::write(pending.join("01JV0000000000000000000003.json"), b"\xff\xfe{}")
        .unwrap_or_else(|e| panic!("{e}"));
    drop_event(&root, "01JV0000000000000000000004", json!("Dentist moved to Friday"), None);
    write(&pending.join(".partial.json.tmp"), "{");
    write(&pending.join("README.txt"), "not an event");
    let (router, runner) = (FakeRouter::default(), FakeRunner::new());
    let processed = process(&root, &router, &runner).await;
    let errors: Vec<Option<String>> = processed.iter().map(|p| p.error.clone()).collect();
    assert_eq!(
        errors,
        [
            Some("invalid event: expected ident at line 1 column 2".to_owned()),
            Some("invalid event: missing field `createdAt` at line 1 column 39".to_owned()),
            Some("invalid event: not UTF-8".to_owned()),
            None,
        ]
    );
    let done = events::done_dir(&root);
    let first = read_json(&done.join("01JV0000000000000000000001.json"));
    assert_eq!(first["raw"], "not json {");
    assert_eq!(first["id"], "01JV0000000000000000000001");
    assert_eq!(first["candidateFilePaths"], json!([]));
    assert_eq!(first["runIds"], json!([]));
    assert!(first["processedAt"].is_string());
    assert_eq!(runner.runs().iter().map(|r| r.1.as_str()).collect::<Vec<_>>(), ["notes/b.md"]);
    // Temp files and other files are never events.
    assert_eq!(files(&pending), ["README.txt"]);
    assert!(pending.join(".partial.json.tmp").exists());
}

#[tokio::test]
async fn events_are_handled_in_id_order() {
    let (_dir, root) = workspace();
    // Written newest first: the file name (the id) decides, not when the file appeared.
    let ids: Vec<String> = (0..30).map(|i| format!("01JV00000000000000000000{i:02}")).collect();
    for id in ids.iter().rev() {
        drop_event(&root, id, json!("Q3"), Some("a.md"));
    }
    let runner = FakeRunner::new();
    let processed = process(&root, &FakeRouter::default(), &runner).await;
    let order: Vec<String> = processed.iter().map(|p| p.id.clone()).collect();
    assert_eq!(order, ids);
    let ran: Vec<String> = runner.runs().into_iter().map(|r| r.0).collect();
    assert_eq!(ran, ids);
    // Ids from `create_event` sort in creation order too.
    let made: Vec<String> = (0..20)
        .map(|i| {
            events::create_event(&root, "cli", "tick", json!(i), Some("a.md"), chrono::Utc::now())
                .unwrap_or_else(|e| panic!("{e}"))
                .id
        })
        .collect();
    let runner = FakeRunner::new();
    process(&root, &FakeRouter::default(), &runner).await;
    let payloads: Vec<String> = runner.runs().into_iter().map(|r| r.0).collect();
    assert_eq!(payloads, made);
}

#[tokio::test]
async fn untrusted_workspaces_keep_their_events_pending() {
    let (_dir, root) = workspace();
    drop_event(&root, "01JV0000000000000000000001", json!("Q3"), None);
    let runner = FakeRunner::new();
    runner.trusted.store(false, Ordering::SeqCst);
    assert!(process(&root, &FakeRouter::default(), &runner).await.is_empty());
    assert_eq!(files(&events::pending_dir(&root)), ["01JV0000000000000000000001.json"]);
    runner.trusted.store(true, Ordering::SeqCst);
    assert_eq!(process(&root, &FakeRouter::default(), &runner).await.len(), 1);
    assert!(files(&events::pending_dir(&root)).is_empty());
}

/// Stops the processor (as a shutdown would) during its first run.
struct StoppingRunner(CancellationToken);

impl EventRunner for StoppingRunner {
    fn trusted(&self) -> bool {
        true
    }

    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn run<'a>(
        &'a self,
        _note: &'a EventNote,
        _event: &'a livenote::events::Event,
        _context: String,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Outcome> {
        self.0.cancel();
        Box::pin(async { Outcome::Stopped { run_id: "r".to_owned() } })
    }
}

#[tokio::test]
async fn a_stopped_processor_puts_the_event_back() {
    let (_dir, root) = workspace();
    drop_event(&root, "01JV0000000000000000000001", json!("Q3"), Some("a.md"));
    let cancel = CancellationToken::new();
    let root_owned = root.clone();
    let notes = move || notes_of(&root_owned);
    let runner = StoppingRunner(cancel.clone());
    assert!(process_pending(&root, &notes, &KeywordRouter, &runner, &cancel).await.is_empty());
    assert_eq!(files(&events::pending_dir(&root)), ["01JV0000000000000000000001.json"]);
    assert!(files(&events::processing_dir(&root)).is_empty());
    assert!(files(&events::done_dir(&root)).is_empty());
}

/// A model that answers each routing call from a script, recording the requests.
struct ScriptedModel {
    replies: Mutex<Vec<String>>,
    seen: Mutex<Vec<(String, bool, String)>>,
}

impl ModelClient for ScriptedModel {
    fn complete<'a>(
        &'a self,
        req: Request<'a>,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Turn, ModelError>> {
        let user = req.messages.first().map(|m| m.content.clone()).unwrap_or_default();
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).push((req.system.to_owned(), req.json, user));
        let mut replies = self.replies.lock().unwrap_or_else(|e| e.into_inner());
        let text = if replies.is_empty() { String::new() } else { replies.remove(0) };
        Box::pin(async move {
            Ok(Turn {
                text,
                tool_calls: Vec::new(),
                usage: Usage::default(),
                stop_reason: Some("stop".to_owned()),
            })
        })
    }
}

#[tokio::test]
async fn the_model_router_works_in_batches_of_20_and_retries_after_a_bad_reply() {
    let dir = tempdir();
    let root = canonical(dir.path());
    for i in 0..25 {
        write(&root.join(format!("n{i:02}.md")), &note(&format!("N{i}"), Some("Budget news"), ""));
    }
    let id = "01JV0000000000000000000001";
    drop_event(&root, id, json!("Budget approved"), None);
    let model = Arc::new(ScriptedModel {
        replies: Mutex::new(vec![
            "Sure! Here are the notes: n03.md".to_owned(),
            r#"{"filePaths": ["n22.md", "n03.md", "nope.md", "n21.md"]}"#.to_owned(),
        ]),
        seen: Mutex::new(Vec::new()),
    });
    let router = ModelRouter::new(model.clone());
    let runner = FakeRunner::new();
    // A batch failed: nothing runs, the event waits in `pending/` for a retry.
    assert!(process(&root, &router, &runner).await.is_empty());
    assert!(runner.runs().is_empty());
    let waiting = read_json(&events::pending_dir(&root).join(format!("{id}.json")));
    assert_eq!(waiting["routingAttempts"], 1, "{waiting}");
    assert_eq!(waiting["routingRetryAt"], "2026-05-08T15:02:00.000Z", "{waiting}");
    let error = waiting["routingError"].as_str().unwrap_or_default();
    assert!(error.starts_with("routing batch 1/2 failed: the routing reply is not a JSON object"), "{error}");
    let seen = model.seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|(system, json, _)| *json && system == events::ROUTING_SYSTEM_PROMPT));
    assert_eq!(seen[0].2.matches("- filePath: ").count(), 20);
    assert_eq!(seen[1].2.matches("- filePath: ").count(), 5);
    assert!(seen[1].2.contains("## Event\n\n- source: gmail\n- type: email.synced\n"), "{}", seen[1].2);
    // Before the retry time nothing is asked again.
    assert!(process(&root, &router, &runner).await.is_empty());
    assert_eq!(model.seen.lock().unwrap_or_else(|e| e.into_inner()).len(), 2);
    *runner.now.lock().unwrap_or_else(|e| e.into_inner()) += chrono::TimeDelta::minutes(1);
    model.replies.lock().unwrap_or_else(|e| e.into_inner()).extend([
        r#"{"filePaths": ["n03.md"]}"#.to_owned(),
        r#"{"filePaths": ["n22.md", "n03.md", "nope.md", "n21.md"]}"#.to_owned(),
    ]);
    let processed = process(&root, &router, &runner).await;
    assert_eq!(processed.len(), 1);
    // n03.md was in the first batch: the second batch's reply cannot pick it.
    assert_eq!(processed[0].candidate_file_paths, ["n03.md", "n21.md", "n22.md"]);
    assert_eq!(processed[0].error, None);
    assert_eq!(runner.runs().len(), 3);
    assert!(events::pending_events(&root).is_empty());
}

/// A queue lock that is taken for a moment (a program started in that instant shares the lock
/// file until it has started) does not end the pass: it processes the queue once the lock is
/// free. Giving up at once left an event waiting for the next wake-up (seen in CI as a routing
/// retry that was not tried).
#[tokio::test]
async fn a_queue_lock_taken_for_a_moment_does_not_skip_the_pass() {
    let (_dir, root) = workspace();
    drop_event(&root, "01JV0000000000000000000001", json!("Re: Q3 planning offsite"), None);
    let lock = events::events_dir(&root).join(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .unwrap_or_else(|e| panic!("{e}"));
    file.try_lock().unwrap_or_else(|e| panic!("{e}"));
    let holder = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(40));
        drop(file);
    });
    let (router, runner) = (FakeRouter::default(), FakeRunner::new());
    let processed = process(&root, &router, &runner).await;
    let _ = holder.join();
    assert_eq!(processed.len(), 1, "the pass gave up on a lock that was let go");
    assert_eq!(runner.runs().len(), 1);
}

/// After its last attempt a routing failure goes to `done/` with the error: the queue never
/// sticks behind one event.
#[tokio::test]
async fn routing_that_keeps_failing_gives_up_after_its_attempts() {
    let dir = tempdir();
    let root = canonical(dir.path());
    write(&root.join("a.md"), &note("Q3", Some("Q3 planning emails"), ""));
    let id = "01JV0000000000000000000001";
    drop_event(&root, id, json!("Q3"), None);
    drop_event(&root, "01JV0000000000000000000002", json!("Q3 again"), Some("a.md"));
    let model = Arc::new(ScriptedModel { replies: Mutex::new(Vec::new()), seen: Mutex::new(Vec::new()) });
    let router = ModelRouter::new(model.clone());
    let runner = FakeRunner::new();
    let mut waits = Vec::new();
    for _ in 1..events::MAX_ROUTING_ATTEMPTS {
        assert!(process(&root, &router, &runner).await.is_empty());
        // Strict order: the event behind it waits too.
        assert_eq!(events::pending_events(&root).len(), 2);
        let waiting = read_json(&events::pending_dir(&root).join(format!("{id}.json")));
        let at = DateTime::parse_from_rfc3339(waiting["routingRetryAt"].as_str().unwrap_or_default())
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default();
        let mut now = runner.now.lock().unwrap_or_else(|e| e.into_inner());
        waits.push((at - *now).num_minutes());
        *now = at;
    }
    assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
    let processed = process(&root, &router, &runner).await;
    assert_eq!(processed.len(), 2);
    let record = read_json(&events::done_dir(&root).join(format!("{id}.json")));
    assert_eq!(record["routingAttempts"], events::MAX_ROUTING_ATTEMPTS, "{record}");
    assert!(record["error"].as_str().is_some_and(|e| e.contains("routing batch 1/1 failed")), "{record}");
    assert_eq!(processed[1].candidate_file_paths, ["a.md"]);
    assert_eq!(model.seen.lock().unwrap_or_else(|e| e.into_inner()).len(), 8);
}

#[test]
fn two_processors_racing_on_one_queue_handle_each_event_once() {
    let (_dir, root) = workspace();
    let runner = Arc::new(FakeRunner { delay: Duration::from_millis(2), ..FakeRunner::new() });
    let total = 60;
    let producing = Arc::new(AtomicBool::new(true));
    let mut made = Vec::new();
    std::thread::scope(|s| {
        let processors: Vec<_> = (0..2)
            .map(|_| {
                let (root, runner, producing) = (root.clone(), runner.clone(), producing.clone());
                s.spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap_or_else(|e| panic!("{e}"));
                    let mut mine = 0;
                    // Like a watcher woken by every new file: pass after pass until the
                    // producer is done and the queue is empty.
                    loop {
                        let idle = !producing.load(Ordering::SeqCst);
                        mine += rt.block_on(process(&root, &KeywordRouter, &*runner)).len();
                        if idle && events::pending_events(&root).is_empty() {
                            return mine;
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                })
            })
            .collect();
        for i in 0..total {
            let target = if i % 2 == 0 { Some("a.md") } else { None };
            let e = events::create_event(
                &root,
                "cli",
                "tick",
                json!(format!("Dentist {i}")),
                target,
                chrono::Utc::now(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            made.push(e.id);
        }
        producing.store(false, Ordering::SeqCst);
        let counts: Vec<usize> = processors.into_iter().map(|h| h.join().unwrap_or(0)).collect();
        assert_eq!(counts.iter().sum::<usize>(), total, "{counts:?}");
    });
    let ran: Vec<String> = runner.runs().into_iter().map(|r| r.0).collect();
    // Each event ran exactly once, and in id order even across the two processors.
    assert_eq!(ran, made);
    assert_eq!(files(&events::done_dir(&root)).len(), total);
    assert!(files(&events::processing_dir(&root)).is_empty());
}

// ---------------------------------------------------------------------------------------------
// With the real run engine and a `command` provider.

const ECHO_CONTEXT: &str = r#"printf '%s\n' "trigger: $LIVENOTE_TRIGGER" "$LIVENOTE_CONTEXT""#;

#[tokio::test]
async fn the_engine_runs_the_note_with_the_event_as_context() {
    use livenote::config::Config;
    use livenote::runs::{DiskIo, Engine};
    use livenote::schedule::{SystemClock, Zone};
    use livenote::workspace::trust::TrustStore;

    let (_dir, root) = workspace();
    let data = tempdir();
    write(&root.join(".livenote.toml"), &command_config(ECHO_CONTEXT));
    // A cloned folder inside, with its own configuration: the root's trust does not reach it,
    // so its note, which the event matches too, is not even offered to routing.
    write(&root.join("vendor/.livenote.toml"), &command_config("echo pwned > pwned.txt"));
    write(&root.join("vendor/q3.md"), &note("Vendor Q3", Some("Q3 planning anything"), ""));
    let (config, problems) = Config::load_with(Some(&root), None, &|_: &str| None);
    assert!(problems.is_empty(), "{problems:?}");
    let trust = TrustStore::in_dir(data.path());
    let engine = Arc::new(Engine::new(
        &root,
        Arc::new(SystemClock),
        Zone::Named(chrono_tz::UTC),
        Arc::new(DiskIo),
        config,
        Some(trust.clone()),
    ));
    let runner = events::EngineRunner::new(engine.clone());
    drop_event(&root, "01JV0000000000000000000001", json!("Subject: Q3 planning moved to Tuesday"), None);
    // Untrusted: nothing runs, nothing is spent.
    assert!(process(&root, &KeywordRouter, &runner).await.is_empty());
    trust.trust(&root).unwrap_or_else(|e| panic!("{e}"));
    let processed = process(&root, &KeywordRouter, &runner).await;
    assert_eq!(processed.len(), 1, "{processed:?}");
    assert_eq!(processed[0].candidate_file_paths, ["a.md"]);
    assert_eq!(processed[0].error, None);
    let vendor = std::fs::read_to_string(root.join("vendor/q3.md")).unwrap_or_default();
    assert!(!vendor.contains("lastAttemptAt") && !root.join("vendor/pwned.txt").exists(), "{vendor}");
    let text = std::fs::read_to_string(root.join("a.md")).unwrap_or_default();
    assert!(text.contains("trigger: event\n"), "{text}");
    assert!(text.contains("**Event match criteria of this note:** Q3 planning emails"), "{text}");
    assert!(text.contains("Subject: Q3 planning moved to Tuesday"), "{text}");
    assert!(!text.contains("old body"), "{text}");
    let run_id = &processed[0].run_ids[0];
    assert!(text.contains(&format!("lastRunId: \"{run_id}\"")), "{text}");
    let done = read_json(&events::done_dir(&root).join("01JV0000000000000000000001.json"));
    assert_eq!(done["runIds"], json!([run_id]));
    assert!(root.join(format!(".livenote/runs/{run_id}.jsonl")).exists());
    // A note paused after routing is not run.
    let paused = EventNote {
        path: root.join("paused.md"),
        rel: "paused.md".to_owned(),
        objective: String::new(),
        criteria: "Q3 anything".to_owned(),
        sources: None,
    };
    let done_event = events::parse_event(&serde_json::to_string(&done).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = runner.run(&paused, &done_event, "context".to_owned(), CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Skipped("the note is paused".to_owned()));
    // Nor is one whose `until` passed after routing (2026-05-07, before the system clock).
    let ended = EventNote { path: root.join("ended.md"), rel: "ended.md".to_owned(), ..paused };
    let outcome = runner.run(&ended, &done_event, "context".to_owned(), CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Skipped("the note has expired (`until` has passed)".to_owned()));
    // The other notes were not touched.
    let b = std::fs::read_to_string(root.join("notes/b.md")).unwrap_or_default();
    assert!(b.ends_with("old body\n") && !b.contains("lastRunId"), "{b}");
}

// ---------------------------------------------------------------------------------------------
// The binary: `livenote event` and `livenote watch`.

/// The notes of [`workspace`] with a `command` provider running `command`, for the binary.
fn cli(command: &str) -> Workspace {
    let (dir, _) = workspace();
    Workspace::in_dir(dir, &command_config(command))
}

/// `livenote event ARGS < stdin`: (exit code, stdout, stderr).
fn event(cli: &Workspace, args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut all = vec!["event"];
    all.extend_from_slice(args);
    let mut child = cli
        .livenote(&all)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    if let Some(mut input) = child.stdin.take() {
        // The command may stop reading early (too large): a broken pipe is fine then.
        let _ = input.write_all(stdin);
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn livenote_event_queues_from_a_shell_and_rejects_bad_input() {
    let cli = cli(ECHO_CONTEXT);
    let (code, out, err) =
        event(&cli, &["--source", "shell", "--type", "note.ping", "--target", "notes/b.md"], b"hello");
    assert_eq!(code, 0, "{err}");
    let id = out.trim();
    assert_eq!(id.len(), 26, "{out:?}");
    let pending = read_json(&events::pending_dir(&cli.root).join(format!("{id}.json")));
    assert_eq!(pending["source"], "shell");
    assert_eq!(pending["type"], "note.ping");
    assert_eq!(pending["payload"], "hello");
    assert_eq!(pending["targetFilePath"], "notes/b.md");
    let (code, out, _) = event(&cli, &["--source", "s", "--type", "t", "--json", "."], br#"{"n": [1, 2]}"#);
    assert_eq!(code, 0);
    let second = read_json(&events::pending_dir(&cli.root).join(format!("{}.json", out.trim())));
    assert_eq!(second["payload"], json!({"n": [1, 2]}));
    assert!(out.trim() > id, "ids sort in creation order");
    // A target that cannot take events is queued with a warning.
    let (code, _, err) = event(&cli, &["--source", "s", "--type", "t", "--target", "paused.md"], b"x");
    assert_eq!(code, 0);
    assert!(err.contains("paused.md is paused"), "{err}");
    let bad: [(&[&str], &[u8], &str); 6] = [
        (&["--source", "s", "--type", "t", "--json"], b"{oops", "--json: the payload is not valid JSON"),
        (&["--source", "s", "--type", "t"], &[0xff, 0xfe], "not UTF-8"),
        (&["--source", "", "--type", "t"], b"x", "must not be empty"),
        (&["--source", "s", "--type", "t", "--target", "missing.md"], b"x", "no such note"),
        (&["--source", "s", "--type", "t", "--target", "/etc/hostname"], b"x", "not inside"),
        (&["--source", "s", "--type", "t", "no-such-dir"], b"x", "no-such-dir: no such file or folder"),
    ];
    for (args, stdin, want) in bad {
        let (code, out, err) = event(&cli, args, stdin);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let huge = vec![b'x'; events::MAX_PAYLOAD_BYTES + 1];
    let (code, _, err) = event(&cli, &["--source", "s", "--type", "t"], &huge);
    assert_eq!(code, 2);
    assert!(err.contains("larger than 1 MiB"), "{err}");
    let (code, _, _) = event(&cli, &["--type", "t"], b"x");
    assert_eq!(code, 2, "a missing --source is a usage error");
    assert_eq!(files(&events::pending_dir(&cli.root)).len(), 3);
}

#[test]
fn livenote_watch_consumes_events_from_livenote_event() {
    let cli = cli(ECHO_CONTEXT);
    // Queued before the watcher starts: the start-up pass handles it.
    let (code, before, err) =
        event(&cli, &["--source", "gmail", "--type", "email.synced"], b"Q3 planning: budget approved");
    assert_eq!(code, 0, "{err}");
    let mut w = cli.watch(&[]);
    let done = |id: &str| events::done_dir(&cli.root).join(format!("{}.json", id.trim()));
    wait_until("the queued event", 30, || done(&before).exists());
    // Queued while it watches: the file event wakes the processor.
    let (code, after, _) =
        event(&cli, &["--source", "cal", "--type", "x", "--target", "notes/b.md"], b"Dentist at 3pm");
    assert_eq!(code, 0);
    wait_until("the new event", 30, || done(&after).exists());
    w.wait_for("processed ok=1");
    let logs = w.stop();
    let first = read_json(&done(&before));
    assert_eq!(first["candidateFilePaths"], json!(["a.md"]), "{logs:#?}");
    assert_eq!(first["error"], Value::Null, "{first}");
    let second = read_json(&done(&after));
    assert_eq!(second["candidateFilePaths"], json!(["notes/b.md"]));
    let b = std::fs::read_to_string(cli.root.join("notes/b.md")).unwrap_or_default();
    assert!(b.contains("Dentist at 3pm") && b.contains("trigger: event"), "{b}");
    assert!(
        logs.iter().any(|l| l.contains(&format!("event {}: received source=gmail", before.trim()))),
        "{logs:#?}"
    );
}

#[test]
fn two_watch_processes_handle_each_event_once() {
    let cli = cli(ECHO_CONTEXT);
    let mut ids = Vec::new();
    for i in 0..4 {
        let (code, out, err) = event(
            &cli,
            &["--source", "s", "--type", "t", "--target", "a.md"],
            format!("early {i}").as_bytes(),
        );
        assert_eq!(code, 0, "{err}");
        ids.push(out.trim().to_owned());
    }
    let watchers = [cli.watch(&[]), cli.watch(&[])];
    for i in 0..8 {
        let target = if i % 2 == 0 { "a.md" } else { "notes/b.md" };
        let (code, out, err) = event(
            &cli,
            &["--source", "s", "--type", "t", "--target", target],
            format!("late {i}").as_bytes(),
        );
        assert_eq!(code, 0, "{err}");
        ids.push(out.trim().to_owned());
    }
    let done_dir = events::done_dir(&cli.root);
    wait_until("every event", 30, || files(&done_dir).len() == ids.len());
    // Give a duplicate every chance to show up.
    std::thread::sleep(Duration::from_millis(500));
    let logs: Vec<Vec<String>> = watchers.into_iter().map(Watcher::stop).collect();
    assert_eq!(files(&done_dir).len(), ids.len());
    let mut run_ids = Vec::new();
    for id in &ids {
        let done = read_json(&done_dir.join(format!("{id}.json")));
        assert_eq!(done["error"], Value::Null, "{done}");
        let runs = done["runIds"].as_array().cloned().unwrap_or_default();
        assert_eq!(runs.len(), 1, "{done}");
        run_ids.extend(runs);
    }
    let transcripts = files(&cli.root.join(".livenote/runs"));
    assert_eq!(transcripts.len(), ids.len(), "one run per event: {transcripts:?}\n{logs:#?}");
    let received = logs.iter().flatten().filter(|l| l.contains(": received source=")).count();
    assert_eq!(received, ids.len(), "{logs:#?}");
    assert!(files(&events::pending_dir(&cli.root)).is_empty());
    assert!(files(&events::processing_dir(&cli.root)).is_empty());
}

/// A target skips routing: `livenote event --target` on a live note without
/// `eventMatchCriteria` runs that note (SPEC 5), where it used to be queued and then dropped
/// with "no candidate note".
#[test]
fn a_target_runs_a_live_note_without_criteria() {
    let cli = cli(ECHO_CONTEXT);
    let (code, id, err) =
        event(&cli, &["--source", "shell", "--type", "ping", "--target", "manual.md"], b"hello");
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("eventMatchCriteria"), "no warning for a target without criteria: {err}");
    let w = cli.watch(&[]);
    let done = events::done_dir(&cli.root).join(format!("{}.json", id.trim()));
    wait_until("the event", 30, || done.exists());
    let logs = w.stop();
    let record = read_json(&done);
    assert_eq!(record["candidateFilePaths"], json!(["manual.md"]), "{record}\n{logs:#?}");
    assert_eq!(record["error"], Value::Null, "{record}");
    let text = std::fs::read_to_string(cli.root.join("manual.md")).unwrap_or_default();
    assert!(text.contains("trigger: event\n") && text.contains("hello"), "{text}");
    assert!(text.contains("(none: the event names this note as its target)"), "{text}");
    // Routing still ignores it: an event without a target does not reach it.
    let paused = std::fs::read_to_string(cli.root.join("paused.md")).unwrap_or_default();
    assert!(!paused.contains("lastRunId"), "{paused}");
}

/// An event run that changes nothing (the agent decided the event does not matter) leaves
/// `lastRunAt`, `lastRunSummary` and `lastAttemptAt` as they were: a window's cycle is not
/// used up and no backoff starts; the run is in history (SPEC 3).
#[test]
fn an_event_run_that_changes_nothing_keeps_the_notes_cycle() {
    let dir = tempdir();
    let runtime = "  lastAttemptAt: \"2026-05-08T08:00:00.000Z\"\n  lastRunAt: \"2026-05-08T08:00:02.000Z\"\n  lastRunSummary: \"Useful summary\"\n  triggers:\n    eventMatchCriteria: \"Q3 planning\"\n";
    write(
        &dir.path().join("a.md"),
        &format!("---\nlive:\n  objective: Keep Q3 current\n{runtime}---\n# Q3\n\nold body\n"),
    );
    // The provider leaves the body exactly as it was and says why.
    let cli = Workspace::in_dir(
        dir,
        &command_config(
            r#"printf '{"body": "old body\\n", "summary": "Not relevant: a lunch invitation."}'"#,
        ),
    );
    let (code, id, err) = event(&cli, &["--source", "mail", "--type", "x", "--target", "a.md"], b"Lunch?");
    assert_eq!(code, 0, "{err}");
    let mut w = cli.watch(&[]);
    let done = events::done_dir(&cli.root).join(format!("{}.json", id.trim()));
    wait_until("the event", 30, || done.exists());
    w.wait_for("processed ok=1");
    let logs = w.stop();
    let record = read_json(&done);
    let run_id = record["runIds"][0].as_str().unwrap_or_default().to_owned();
    assert!(!run_id.is_empty(), "{record}\n{logs:#?}");
    let text = std::fs::read_to_string(cli.root.join("a.md")).unwrap_or_default();
    assert!(text.contains(runtime), "the cycle moved:\n{text}");
    assert!(text.ends_with("# Q3\n\nold body\n"), "{text}");
    assert!(text.contains(&format!("lastRunId: \"{run_id}\"")), "{text}");
    assert!(cli.root.join(format!(".livenote/runs/{run_id}.jsonl")).exists());
}

/// A routing batch that fails (a model error) keeps the event pending and retries it after a
/// backoff on the injected clock; once routing answers, the candidate runs and the event lands
/// in `done/` with its run (SPEC 5). It used to go to `done/` at once, its notes never told.
#[test]
fn a_failed_routing_batch_keeps_the_event_pending_and_retries_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let model = runtime.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![
            // Not retried by the HTTP client: the first routing attempt fails outright.
            ScriptedReply::Status(400, None),
            ScriptedReply::Text(r#"{"filePaths": ["a.md"]}"#.to_owned()),
            ScriptedReply::Text("The budget news belongs in Q3; nothing else to change.".to_owned()),
        ],
    ));
    let (dir, root) = workspace();
    let config = format!(
        "[agent]\nprovider = \"m\"\n\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n",
        model.base_url()
    );
    let cli = Workspace::in_dir(dir, &config);
    cli.set_clock("2026-05-08T15:00:00Z");
    let id = "01JV0000000000000000000001";
    drop_event(&root, id, json!("Q3 planning: budget approved"), None);
    let mut w = cli.watch_clock();
    w.wait_for(&format!("event {id}: routing retries at 2026-05-08T15:01:00"));
    let pending = events::pending_dir(&root).join(format!("{id}.json"));
    let waiting = read_json(&pending);
    assert_eq!(waiting["routingAttempts"], 1, "{waiting}");
    assert!(
        waiting["routingError"].as_str().is_some_and(|e| e.contains("routing batch 1/1 failed")),
        "{waiting}"
    );
    assert_eq!(waiting["threadId"], "t-1", "the producer's own keys stay");
    assert!(files(&events::done_dir(&root)).is_empty());
    assert_eq!(model.requests().len(), 1);
    // Past the backoff: routed again, run, done.
    cli.set_clock("2026-05-08T15:01:05Z");
    let done = events::done_dir(&root).join(format!("{id}.json"));
    wait_until("the retried event", 30, || done.exists());
    w.wait_for("processed ok=1");
    let logs = w.stop();
    let record = read_json(&done);
    assert_eq!(record["candidateFilePaths"], json!(["a.md"]), "{record}\n{logs:#?}");
    assert_eq!(record["error"], Value::Null, "{record}");
    assert_eq!(record["runIds"].as_array().map(Vec::len), Some(1), "{record}");
    assert_eq!(record["routingAttempts"], 1, "{record}");
    assert!(record.get("routingRetryAt").is_none() && record.get("routingError").is_none(), "{record}");
    assert!(!pending.exists());
    assert_eq!(model.requests().len(), 3, "two routing calls and the run");
}

/// Issue 23: a sync tool's conflict copy of a note is never offered an event, though it
/// carries the note's criteria.
#[test]
fn conflict_copies_get_no_events() {
    let (_dir, root) = workspace();
    let copied = note("Q3", Some("Q3 planning emails"), "");
    write(&root.join("a.sync-conflict-20261123-090000-ABC1234.md"), &copied);
    write(&root.join("a (conflicted copy 2026-11-23).md"), &copied);
    let eligible: Vec<String> = notes_of(&root).into_iter().map(|n| n.rel).collect();
    assert_eq!(eligible, ["a.md", "notes/b.md"]);
}

/// Issue 24: `live.sources` narrows which events a note is weighed against. Two notes wait for
/// the same words; the one listing `gmail` gets the gmail event, the one listing `releases`
/// is not even offered to routing, and a target still reaches a note whose list leaves the
/// event's source out.
#[test]
fn live_sources_narrows_the_events_a_note_takes() {
    let cli = cli(ECHO_CONTEXT);
    write(&cli.root.join("mail.md"), &note("Mail", Some("Q3 planning emails"), "  sources: [gmail]\n"));
    write(&cli.root.join("feeds.md"), &note("Feeds", Some("Q3 planning emails"), "  sources: [releases]\n"));
    let (code, id, err) =
        event(&cli, &["--source", "gmail", "--type", "email.synced"], b"Q3 planning: budget");
    assert_eq!(code, 0, "{err}");
    let (code, targeted, err) =
        event(&cli, &["--source", "gmail", "--type", "ping", "--target", "feeds.md"], b"Q3 by hand");
    assert_eq!(code, 0, "{err}");
    let out = cli.livenote(&["tick", "."]).stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{e}"));
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{log}");
    let done = |id: &str| read_json(&events::done_dir(&cli.root).join(format!("{}.json", id.trim())));
    let first = done(&id);
    // a.md lists no sources: every source's events may reach it.
    assert_eq!(first["candidateFilePaths"], json!(["a.md", "mail.md"]), "{first}\n{log}");
    assert!(log.contains("not offered to 1 note whose `sources` leave out gmail: feeds.md"), "{log}");
    assert_eq!(done(&targeted)["candidateFilePaths"], json!(["feeds.md"]), "{log}");
    let feeds = std::fs::read_to_string(cli.root.join("feeds.md")).unwrap_or_default();
    assert!(feeds.contains("Q3 by hand") && !feeds.contains("budget"), "{feeds}");
}

/// Issue 31: a `command` provider gets the event of an event run as data, `event` on stdin
/// (its payload whole, JSON as JSON), beside `context`, the Markdown a model reads; a run that
/// is not for an event has `"event": null`.
#[test]
fn a_command_provider_reads_the_event_as_data() {
    // The note's new body: a marker, then the run as the program read it on stdin.
    let cli = cli("printf 'stdin:\\n'; cat");
    let payload = json!({"subject": "Dentist moved to 4pm", "attendees": ["a@example.com"], "n": 3});
    let (code, id, err) = event(
        &cli,
        &["--source", "cal", "--type", "calendar.changed", "--target", "notes/b.md", "--json"],
        payload.to_string().as_bytes(),
    );
    assert_eq!(code, 0, "{err}");
    let id = id.trim().to_owned();
    let out = cli.livenote(&["tick", "."]).stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{e}"));
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{log}");
    let stdin_of_last_run = || {
        let b = std::fs::read_to_string(cli.root.join("notes/b.md")).unwrap_or_default();
        let json = b.split("stdin:\n").nth(1).unwrap_or_default().trim().to_owned();
        serde_json::from_str::<Value>(&json).unwrap_or_else(|e| panic!("{e}: {b}\n{log}"))
    };
    let run = stdin_of_last_run();
    assert_eq!(run["trigger"], "event");
    let created = run["event"]["createdAt"].as_str().unwrap_or_default().to_owned();
    assert!(created.starts_with("20"), "{run}");
    assert_eq!(
        run["event"],
        json!({
            "id": id,
            "source": "cal",
            "type": "calendar.changed",
            "createdAt": created,
            "payload": payload,
            "targetFilePath": "notes/b.md",
        })
    );
    let context = run["context"].as_str().unwrap_or_default();
    assert!(context.contains(&format!("id `{id}`")) && context.contains("**Payload:**"), "{context}");
    // A manual run has no event.
    let out = cli.livenote(&["run", "notes/b.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = stdin_of_last_run();
    assert_eq!((run["trigger"].as_str(), &run["event"]), (Some("manual"), &Value::Null), "{run}");
}

/// Issue 32 §4: `watch` killed with SIGKILL while the second of an event's two candidates
/// runs. Restarted, it offers the event only to the candidate that did not finish: a.md ran
/// once, b.md ran to the end once. The whole event used to be replayed, a.md's run too.
#[cfg(unix)]
#[test]
fn a_crash_mid_event_never_reruns_a_candidate_that_finished() {
    // b.md's run waits for `release`, announcing its process group in `b.pid` first.
    let script = r#"echo "start $LIVENOTE_NOTE_PATH" >> runs.log
if [ "$LIVENOTE_NOTE_PATH" = notes/b.md ]; then
  echo $$ > b.pid
  while [ ! -e release ]; do sleep 0.05; done
fi
echo "end $LIVENOTE_NOTE_PATH" >> runs.log
printf '%s\n' "trigger: $LIVENOTE_TRIGGER" "$LIVENOTE_CONTEXT""#;
    let cli = cli(script);
    let (code, id, err) =
        event(&cli, &["--source", "gmail", "--type", "email.synced"], b"Q3 planning at the dentist");
    assert_eq!(code, 0, "{err}");
    let id = id.trim().to_owned();
    let w = cli.watch(&[]);
    let pid_file = cli.root.join("b.pid");
    wait_until("b.md's run", 30, || std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')));
    let first = w.stop();
    // The provider runs in a process group of its own and outlives a killed watcher: end it
    // too, as the machine's crash would.
    let pgid = std::fs::read_to_string(&pid_file).unwrap_or_default().trim().to_owned();
    let killed = std::process::Command::new("kill")
        .args(["-9", "--", &format!("-{pgid}")])
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(killed.success(), "kill -9 -{pgid}");
    let pgid: i32 = pgid.parse().unwrap_or_else(|e| panic!("{pgid:?}: {e}"));
    wait_until("the provider's end", 10, || !common::group_running(pgid));
    let log = cli.root.join("runs.log");
    let lines = || std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(lines(), "start a.md\nend a.md\nstart notes/b.md\n", "{first:#?}");
    let done = events::done_dir(&cli.root).join(format!("{id}.json"));
    assert!(!done.exists());

    write(&cli.root.join("release"), "");
    let mut w = cli.watch(&[]);
    let progress = events::events_dir(&cli.root).join("progress");
    // Done, its progress forgotten and its claim released, in that order.
    wait_until("the event", 30, || {
        done.exists() && files(&progress).is_empty() && files(&events::processing_dir(&cli.root)).is_empty()
    });
    w.wait_for("processed ok=2");
    let second = w.stop();
    assert_eq!(
        lines(),
        "start a.md\nend a.md\nstart notes/b.md\nstart notes/b.md\nend notes/b.md\n",
        "{second:#?}"
    );
    assert!(
        second.iter().any(|l| l.contains(&format!(
            "event {id}: resumed: 1 of 2 candidates finished before; offered to the rest: notes/b.md"
        ))),
        "{second:#?}"
    );
    let record = read_json(&done);
    assert_eq!(record["candidateFilePaths"], json!(["a.md", "notes/b.md"]), "{record}");
    assert_eq!(record["error"], Value::Null, "{record}");
    assert_eq!(record["runIds"].as_array().map(Vec::len), Some(2), "{record}");
    assert_eq!(record["results"][0]["filePath"], "a.md", "{record}");
    assert_eq!(record["results"][1]["status"], "done", "{record}");
    // a.md holds the event once, from its one run.
    let a = std::fs::read_to_string(cli.root.join("a.md")).unwrap_or_default();
    assert_eq!(a.matches("Q3 planning at the dentist").count(), 1, "{a}");
}
