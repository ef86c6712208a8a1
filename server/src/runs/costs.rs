//! Where a run's totals (`cost::RunTotals`) are kept: on its transcript's final line, the
//! `done` or `failed` record, under `data.totals`; and how they are read back cheaply from
//! that line (the log line when a run ends, the editor's hover of `lastRunAt`).
//!
//! The transcript is the run's one record: `livenote history` reads the totals while it reads
//! the outcome (`history::read_transcript`), and a pruned transcript takes them with it.

use std::io::{Read, Seek, SeekFrom};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::store::is_run_id;
use super::{Engine, Store};
use crate::cost::{LastRun, RunTotals};
use crate::note::model::Live;
use crate::providers::RunEvent;
use crate::status::{self, RecordedEnd};

/// How much of a transcript's end is read to find its final line: the final line is short
/// (an outcome, its one-line message and the totals).
const TAIL_BYTES: u64 = 64 * 1024;

/// The run's end event with its totals (wall time from `start` to `end`), when it counted any.
pub(super) fn costed(
    end: RunEvent,
    mut totals: RunTotals,
    start: DateTime<Utc>,
    end_at: DateTime<Utc>,
) -> RunEvent {
    if totals.is_empty() || !matches!(end.kind.as_str(), "done" | "failed") {
        return end;
    }
    totals.duration_ms = u64::try_from((end_at - start).num_milliseconds()).unwrap_or(0);
    match serde_json::to_value(&totals) {
        Ok(t) => end.with_data(json!({ "totals": t })),
        Err(_) => end,
    }
}

/// The totals in the data of a run's `done`/`failed` event or transcript line, if any.
pub fn totals_of(data: &Value) -> Option<RunTotals> {
    serde_json::from_value(data.get("totals")?.clone()).ok()
}

impl Engine {
    /// What run `run_id` cost, read from the end of its transcript; `None` while it runs, for a
    /// run without totals (a command provider's), or once its transcript was pruned.
    pub fn last_run(&self, run_id: &str) -> Option<LastRun> {
        let v = self.final_record(run_id)?;
        let failed = match v["kind"].as_str()? {
            "done" => false,
            "failed" => true,
            _ => return None,
        };
        Some(LastRun { id: run_id.to_owned(), failed, totals: totals_of(&v["data"])? })
    }

    /// The note as its latest run left it when its text lost the run's end and the store kept
    /// it ([`status::settled`]); `None` otherwise, and always without a lookup for a note whose
    /// text shows how its latest run ended.
    pub fn settle(&self, live: &Live) -> Option<Live> {
        self.store.settle(live)
    }

    /// [`Store::recorded_end`] of this engine's root.
    pub fn recorded_end(&self, run_id: &str) -> Option<RecordedEnd> {
        self.store.recorded_end(run_id)
    }

    /// The final line of run `run_id`'s transcript, parsed.
    fn final_record(&self, run_id: &str) -> Option<Value> {
        self.store.final_record(run_id)
    }
}

impl Store {
    /// How run `run_id` ended, when it succeeded or was stopped, from its transcript's final
    /// line: what `status::settled` needs for a note whose text no longer says it (an undo in
    /// the editor). `None` while it runs, for a failure or a skip, or once pruned.
    pub fn recorded_end(&self, run_id: &str) -> Option<RecordedEnd> {
        let v = self.final_record(run_id)?;
        let at = DateTime::parse_from_rfc3339(v["at"].as_str()?).ok()?.to_utc();
        match (v["kind"].as_str()?, v["message"].as_str()) {
            ("done", _) => Some(RecordedEnd::Done(at)),
            // A stop ends its transcript as a failure whose message is "stopped" (`runs::mod`).
            ("failed", Some("stopped")) => Some(RecordedEnd::Stopped(at)),
            _ => None,
        }
    }

    /// [`status::settled`] with this store's record of the note's latest run, read only for a
    /// note whose text shows that run started and not how it ended.
    pub fn settle(&self, live: &Live) -> Option<Live> {
        status::settled(live, self.recorded_end(status::awaiting_end(live)?)?)
    }

    /// The final line of run `run_id`'s transcript, parsed.
    fn final_record(&self, run_id: &str) -> Option<Value> {
        if !is_run_id(run_id) {
            return None;
        }
        let dir = crate::workspace::confine::real_dir(
            self.root(),
            &std::path::Path::new(super::store::STATE_DIR).join("runs"),
            false,
        )
        .ok()?;
        let path = dir.join(format!("{run_id}.jsonl"));
        let file =
            crate::workspace::confine::open_nofollow(&path, std::fs::OpenOptions::new().read(true)).ok()?;
        serde_json::from_str(&final_line(file)?).ok()
    }
}

/// The last non-empty line of a file, reading only its end.
fn final_line(mut file: std::fs::File) -> Option<String> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let len = meta.len();
    let from = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    text.lines().rev().find(|l| !l.trim().is_empty()).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_go_on_done_and_failed_lines_only_when_counted() {
        let t0 = DateTime::<Utc>::from_timestamp(1_000, 0).unwrap_or_default();
        let t1 = t0 + chrono::TimeDelta::milliseconds(4250);
        let mut totals = RunTotals::default();
        // A command provider's run: nothing counted, nothing added.
        let plain = costed(RunEvent::new("done", "ok"), totals.clone(), t0, t1);
        assert_eq!(plain.data, None);
        totals.observe("usage", Some(&json!({"input": 10, "output": 2})));
        let done = costed(RunEvent::new("done", "ok"), totals.clone(), t0, t1);
        let read = done.data.as_ref().and_then(totals_of);
        assert_eq!(read.map(|t| (t.model_calls, t.tokens.total(), t.duration_ms)), Some((1, 12, 4250)));
        assert_eq!(costed(RunEvent::new("skip", "x"), totals, t0, t1).data, None);
    }

    #[test]
    fn the_final_line_is_read_from_the_end() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("t.jsonl");
        let long = "x".repeat(200_000);
        std::fs::write(
            &path,
            format!("{{\"kind\":\"model\",\"message\":\"{long}\"}}\n{{\"kind\":\"done\"}}\n\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(final_line(file).as_deref(), Some("{\"kind\":\"done\"}"));
    }
}
