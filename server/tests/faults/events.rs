//! A flood: 1,000 events dropped into `pending/` at once (some malformed), consumed by two
//! processors racing on the queue. Every event ends in `done/` exactly once, each runs the
//! notes its routing names and no more, in id order, in bounded time.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use livenote::events::{self, EventNote, EventRunner, KeywordRouter, eligible_notes, process_pending};
use livenote::model::BoxFuture;
use livenote::runs::Outcome;
use livenote::workspace::index::Index;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::common::{event_id_in, files};
use crate::{live_note, write};

const EVENTS: usize = 1000;

/// Records (event id, note) per run and succeeds.
#[derive(Default)]
struct Recorder {
    runs: Mutex<Vec<(String, String)>>,
}

impl EventRunner for Recorder {
    fn trusted(&self) -> bool {
        true
    }

    fn now(&self) -> DateTime<Utc> {
        crate::t("2026-11-23T09:00:00Z")
    }

    fn run<'a>(
        &'a self,
        note: &'a EventNote,
        _event: &'a livenote::events::Event,
        context: String,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            runs.push((event_id_in(&context), note.rel.clone()));
            Outcome::Done { run_id: format!("run-{}", runs.len()), summary: "ok".to_owned() }
        })
    }
}

/// Event `i`: what it is and which notes it should run.
fn event(i: usize) -> (String, Option<Value>, Vec<&'static str>) {
    let id = format!("01JV{i:022}");
    let base = |payload: &str, target: Option<&str>| {
        let mut e = json!({"id": id, "source": "flood", "type": "t", "createdAt": "2026-11-23T09:00:00Z", "payload": payload});
        if let Some(t) = target {
            e["targetFilePath"] = json!(t);
        }
        e
    };
    match i % 10 {
        // Malformed: no run, an error in done/.
        0 => (id.clone(), None, vec![]),
        // Targeted at one note: that note only, whatever the payload says.
        1 | 2 => (id.clone(), Some(base("Q3 and dentist both", Some("a.md"))), vec!["a.md"]),
        3 => (id.clone(), Some(base("anything", Some("notes/b.md"))), vec!["notes/b.md"]),
        // Routed by keywords: a.md takes Q3, b.md takes dentist.
        4 | 5 => (id.clone(), Some(base("Q3 planning moved", None)), vec!["a.md"]),
        6 => (id.clone(), Some(base("Dentist on Friday", None)), vec!["notes/b.md"]),
        7 => (id.clone(), Some(base("Q3 offsite at the dentist", None)), vec!["a.md", "notes/b.md"]),
        // Matches nothing: processed, no run.
        _ => (id.clone(), Some(base("weather report", None)), vec![]),
    }
}

#[test]
fn a_thousand_events_at_once_are_each_handled_exactly_once() {
    let dir = crate::tempdir();
    let root: PathBuf = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    write(&root.join("a.md"), &live_note("  triggers:\n    eventMatchCriteria: \"Q3 planning\"\n", "a\n"));
    write(
        &root.join("notes/b.md"),
        &live_note("  triggers:\n    eventMatchCriteria: \"Dentist appointments\"\n", "b\n"),
    );
    write(
        &root.join("paused.md"),
        &live_note("  active: false\n  triggers:\n    eventMatchCriteria: \"Q3 dentist\"\n", "p\n"),
    );
    let pending = events::pending_dir(&root);
    let mut expected: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    // Written newest first, all before any processor starts.
    for i in (0..EVENTS).rev() {
        let (id, e, runs) = event(i);
        let text = e.map_or_else(|| "{\"id\": \"broken".to_owned(), |e| e.to_string());
        write(&pending.join(format!("{id}.json")), &text);
        expected.insert(id, runs);
    }
    let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
    // No note here has `until`, so the instant asked about does not matter.
    let (now, zone) = (chrono::DateTime::<chrono::Utc>::UNIX_EPOCH, livenote::schedule::Zone::Local);
    let notes = move || eligible_notes(&root_of(&index), &index, now, &zone);
    let recorder = Recorder::default();
    let started = Instant::now();
    let counts: Vec<usize> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (root, notes, recorder) = (&root, &notes, &recorder);
                s.spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap_or_else(|e| panic!("{e}"));
                    let mut mine = 0;
                    while !events::pending_events(root).is_empty() {
                        let cancel = CancellationToken::new();
                        mine += rt
                            .block_on(process_pending(root, notes, &KeywordRouter, recorder, &cancel))
                            .len();
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|_| panic!("a processor panicked"))).collect()
    });
    let elapsed = started.elapsed();
    assert_eq!(counts.iter().sum::<usize>(), EVENTS, "{counts:?}");
    assert!(elapsed < Duration::from_secs(40), "1,000 events took {elapsed:?}");
    assert!(files(&pending).is_empty());
    assert!(files(&events::processing_dir(&root)).is_empty());
    let done = files(&events::done_dir(&root));
    assert_eq!(done.len(), EVENTS);

    // Every run happened once, for the notes routing implies, in id order.
    let runs = recorder.runs.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let want: Vec<(String, String)> = expected
        .iter()
        .flat_map(|(id, notes)| notes.iter().map(move |n| (id.clone(), (*n).to_owned())))
        .collect();
    assert_eq!(runs.len(), want.len());
    assert_eq!(runs, want);

    for (id, notes) in &expected {
        let record: Value =
            serde_json::from_str(&crate::read(&events::done_dir(&root).join(format!("{id}.json"))))
                .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(record["id"], json!(id));
        assert_eq!(record["candidateFilePaths"], json!(notes), "{record}");
        assert_eq!(record["runIds"].as_array().map(Vec::len), Some(notes.len()), "{record}");
        let malformed = record.get("raw").is_some();
        assert_eq!(malformed, record["error"].is_string(), "{record}");
    }
}

fn root_of(index: &Index) -> PathBuf {
    index.roots().first().cloned().unwrap_or_default()
}
