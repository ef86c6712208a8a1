//! The latest events routing gave each note, read from `.livenote/events/done/` for the
//! editor's hover. Kept in memory by the caller and brought up to date when the queue's
//! `done/` changes: [`RecentEvents::update`] reads only the records it has not read yet.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

use crate::note::sources::MatchedEvent;

/// How many events are kept per note (newest first).
pub const PER_NOTE: usize = 3;
/// How many of the newest records a first read looks at.
const FIRST_READ: usize = 100;
/// A record larger than this is skipped (payloads are bounded at 1 MiB; a record holds one).
const MAX_RECORD_BYTES: u64 = 2 * 1024 * 1024;

/// Per note (workspace-relative path), the latest events routing gave it.
#[derive(Debug, Default, Clone)]
pub struct RecentEvents {
    by_note: HashMap<String, Vec<MatchedEvent>>,
    /// Records already read (by file name), so an update reads only the new ones.
    read: HashSet<String>,
}

impl RecentEvents {
    /// The latest events given to the note at `rel`, newest first.
    pub fn for_note(&self, rel: &str) -> &[MatchedEvent] {
        self.by_note.get(rel).map_or(&[], Vec::as_slice)
    }

    /// Read the records of `root`'s `done/` not read yet (at most the newest
    /// [`FIRST_READ`] of them). Returns whether anything changed.
    pub fn update(&mut self, root: &Path) -> bool {
        let files = crate::workspace::confine::regular_files(&super::done_dir(root));
        let mut fresh: Vec<_> = files
            .iter()
            .filter_map(|p| Some((p, p.file_name()?.to_str()?.to_owned())))
            .filter(|(_, name)| name.ends_with(".json") && !self.read.contains(name))
            .collect();
        // Names are ids, which sort in creation order: the newest last.
        fresh.sort_by(|a, b| a.1.cmp(&b.1));
        let skip = fresh.len().saturating_sub(FIRST_READ);
        let mut changed = false;
        for (path, name) in fresh.into_iter().skip(skip) {
            let Ok(bytes) = crate::workspace::confine::read_regular(path, MAX_RECORD_BYTES) else { continue };
            // Unreadable now (a writer still at it): read again at the next update.
            let Ok(record) = serde_json::from_slice::<Value>(&bytes) else { continue };
            self.read.insert(name);
            for (rel, event) in matched(&record) {
                let list = self.by_note.entry(rel).or_default();
                list.retain(|e| e.id != event.id);
                list.push(event);
                list.sort_by(|a, b| b.id.cmp(&a.id));
                list.truncate(PER_NOTE);
                changed = true;
            }
        }
        changed
    }
}

/// The notes one `done/` record was routed to, each with the event as hover shows it.
pub fn matched(record: &Value) -> Vec<(String, MatchedEvent)> {
    let text = |k: &str| record.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let candidates: Vec<&str> = record
        .get("candidateFilePaths")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if candidates.is_empty() || text("id").is_empty() {
        return Vec::new();
    }
    let results: Vec<&Value> =
        record.get("results").and_then(Value::as_array).into_iter().flatten().collect();
    let at = Some(text("processedAt")).filter(|t| !t.is_empty()).unwrap_or_else(|| text("createdAt"));
    candidates
        .into_iter()
        .map(|rel| {
            let status = results
                .iter()
                .find(|r| r.get("filePath").and_then(Value::as_str) == Some(rel))
                .and_then(|r| r.get("status").and_then(Value::as_str))
                .unwrap_or("routed")
                .to_owned();
            let event = MatchedEvent {
                id: text("id"),
                source: text("source"),
                kind: text("type"),
                at: at.clone(),
                summary: summary(record.get("payload")),
                status,
            };
            (rel.to_owned(), event)
        })
        .collect()
}

/// A line about a payload: a subject, title or summary field when it has one, else its text.
fn summary(payload: Option<&Value>) -> String {
    let line = match payload {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(m)) => ["subject", "title", "summary", "name"]
            .iter()
            .find_map(|k| m.get(*k).and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| Value::Object(m.clone()).to_string()),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    crate::text::short::one_line(&line, 80)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(id: &str, candidates: &[&str], payload: Value) -> Value {
        json!({
            "id": id, "source": "mail", "type": "mail.message", "createdAt": "2026-11-03T09:00:00Z",
            "payload": payload, "processedAt": "2026-11-03T09:00:02Z",
            "candidateFilePaths": candidates,
            "results": [{"filePath": candidates.first().copied().unwrap_or(""), "status": "done"}],
        })
    }

    #[test]
    fn each_candidate_gets_the_event_with_its_own_outcome() {
        let r = record("01B", &["q3.md", "all.md"], json!({"subject": "Q3 numbers\nare in", "from": "a"}));
        let got: Vec<String> = matched(&r)
            .iter()
            .map(|(rel, e)| format!("{rel} {} {} {:?} {}", e.id, e.at, e.summary, e.status))
            .collect();
        assert_eq!(
            got,
            [
                "q3.md 01B 2026-11-03T09:00:02Z \"Q3 numbers are in\" done",
                "all.md 01B 2026-11-03T09:00:02Z \"Q3 numbers are in\" routed"
            ]
        );
        assert!(matched(&json!({"id": "x", "candidateFilePaths": []})).is_empty());
        assert!(matched(&json!("not a record")).is_empty());
    }

    #[test]
    fn updates_read_new_records_only_and_keep_the_newest_per_note() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let done = crate::events::done_dir(dir.path());
        std::fs::create_dir_all(&done).unwrap_or_else(|e| panic!("{e}"));
        let put = |id: &str, payload: Value| {
            let text = record(id, &["q3.md"], payload).to_string();
            std::fs::write(done.join(format!("{id}.json")), text).unwrap_or_else(|e| panic!("{e}"));
        };
        for (i, id) in ["01A", "01B", "01C", "01D"].iter().enumerate() {
            put(id, json!(format!("message {i}")));
        }
        std::fs::write(done.join("01E.json"), "{ broken").unwrap_or_else(|e| panic!("{e}"));
        let mut recent = RecentEvents::default();
        assert!(recent.update(dir.path()));
        let ids = |r: &RecentEvents| r.for_note("q3.md").iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&recent), ["01D", "01C", "01B"]);
        assert!(!recent.update(dir.path()), "nothing new");
        put("01F", json!({"title": "newest"}));
        assert!(recent.update(dir.path()));
        assert_eq!(ids(&recent), ["01F", "01D", "01C"]);
        assert_eq!(recent.for_note("q3.md")[0].summary, "newest");
        assert!(recent.for_note("other.md").is_empty());
    }
}
