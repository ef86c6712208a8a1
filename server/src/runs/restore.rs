//! Putting a kept body back: the one path that undo (`livenote undo`, *Undo last run*) and
//! `livenote restore NOTE RUN` share, and what a run changed (`livenote diff NOTE [RUN]`).
//!
//! A restore is a run of its own (trigger `undo` or `restore`): the current body is
//! snapshotted first, so `livenote undo` afterwards brings the body from before the restore
//! back. Both refuse over text changed since livenote last wrote the note (unless forced), and
//! both keep the runtime fields truthful about the body they put back (`history::undo_fields`).

use std::path::Path;

use serde_json::json;

use super::history::{
    RestoreCommand, RunBodies, UNDO_TRIGGER, UNDONE, UndoError, Undone, bad_last_run_id, describe_edits,
    first_body_line, is_run_id, run_trigger, undo_fields,
};
use super::store::NoteLock;
use super::{Engine, timestamp};
use crate::note::body::agent_region;
use crate::note::rewrite::{self, RuntimeField};
use crate::note::{self};
use crate::text::eol::same_lines;

/// The trigger recorded for `livenote restore`.
pub const RESTORE_TRIGGER: &str = "restore";

/// A note held for a restore: its lock, its text, its body, and its kept runs (oldest first).
pub(super) struct Locked {
    _lock: NoteLock,
    pub text: String,
    /// The agent region as it reads now.
    pub current: String,
    pub runs: Vec<RunBodies>,
}

/// What a run changed: the body before it and the body it left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunChange {
    pub run: String,
    pub before: String,
    pub after: String,
}

impl Engine {
    /// Take the note's lock and read it, for a restore.
    pub(super) fn lock_for_restore(&self, path: &Path, rel: &str) -> Result<Locked, UndoError> {
        if self.registry.is_running(path) {
            return Err(UndoError::Running);
        }
        let lock = match self.store.try_lock(rel) {
            Ok(Some(l)) => l,
            Ok(None) => return Err(UndoError::Running),
            Err(e) => return Err(UndoError::Io(format!("cannot take the note's lock: {e}"))),
        };
        let text = self.io.read(path).map_err(|e| UndoError::Io(format!("cannot read the note: {e}")))?;
        if let Some(bad) = bad_last_run_id(&text) {
            return Err(UndoError::BadRunId(bad));
        }
        self.adopt_locked(rel, &text);
        let current = text[agent_region(&text)].to_owned();
        let runs = self.bodies(rel);
        Ok(Locked { _lock: lock, text, current, runs })
    }

    /// Write `restore` (the body kept from before run `run`) as the note's body, as a run of its
    /// own with `trigger`, after saving the current body (so that it can be undone). `message`
    /// ends its transcript.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn put_back(
        &self,
        path: &Path,
        rel: &str,
        locked: &Locked,
        run: &str,
        restore: &str,
        trigger: &str,
        message: &str,
    ) -> Result<Undone, UndoError> {
        let current = &locked.current;
        // A run of its own, after every run of the note.
        let now = self.clock.now();
        let mut id = ulid::Ulid::from_datetime(now.into());
        if let Some(last) = locked.runs.last().and_then(|r| ulid::Ulid::from_string(&r.id).ok())
            && id <= last
        {
            id = last.increment().unwrap_or(id);
        }
        let id = id.to_string();
        // First, so that this can be undone: without this copy, nothing is changed.
        let keep = self.config.read().map(|c| c.history.keep).unwrap_or(20);
        self.store
            .snapshot(rel, &id, current, keep)
            .map_err(|e| UndoError::Io(format!("cannot save the current body first: {e}")))?;
        let mut transcript = self.store.transcript(&id).ok();
        // The machine, as every run's start records it (`history`'s `host`).
        if let Some(t) = transcript.as_mut() {
            let message = format!("{rel} trigger={trigger} run={id}");
            let data = json!({ "host": self.machine() });
            t.write(&json!({"at": timestamp(self.clock.now()), "kind": "start", "message": message, "data": data}));
        }
        let mut log = |kind: &str, message: &str| {
            if let Some(t) = transcript.as_mut() {
                t.write(&json!({"at": timestamp(self.clock.now()), "kind": kind, "message": message}));
            }
        };
        // Putting back the body from before an undo or a restore redoes what it took away;
        // with its transcript pruned, the summary's mark says so.
        let redo = match run_trigger(&self.store, rel, run) {
            Some(t) => t == UNDO_TRIGGER || t == RESTORE_TRIGGER,
            None => note::analyze(&locked.text, &note::Options::default())
                .live
                .and_then(|l| l.last_run_summary)
                .is_some_and(|s| s.starts_with(UNDONE)),
        };
        let applied = self
            .io
            .apply(path, &|t: &str| {
                if t[agent_region(t)] != **current {
                    return Err("the note changed while restoring; try again".to_owned());
                }
                let mut edits = note::body::replace_region_edits(t, restore);
                let fields = undo_fields(t, run, redo);
                if !fields.is_empty() {
                    let fields: Vec<(RuntimeField, Option<&str>)> =
                        fields.iter().map(|(f, v)| (*f, v.as_deref())).collect();
                    edits.extend(rewrite::set_runtime_fields(t, &fields).map_err(|e| e.to_string())?);
                }
                Ok(edits)
            })
            .await;
        if let Err(e) = applied {
            self.record_result(rel, &id, current);
            log("failed", &e);
            return Err(UndoError::Io(format!("cannot write the note: {e}")));
        }
        let after =
            self.io.read(path).map(|t| t[agent_region(&t)].to_owned()).unwrap_or_else(|_| restore.to_owned());
        self.record_result(rel, &id, &after);
        log("done", message);
        Ok(Undone { undid: run.to_owned(), id })
    }

    /// Restore the body kept from before run `run` (`livenote restore NOTE RUN`). Refuses when
    /// the body was edited since the latest run left it, unless `force`, as undo does.
    pub async fn restore_run(&self, path: &Path, run: &str, force: bool) -> Result<Undone, UndoError> {
        let rel = self.rel(path);
        if !is_run_id(run) {
            return Err(UndoError::NotARunId(run.to_owned()));
        }
        let locked = self.lock_for_restore(path, &rel)?;
        if note::analyze(&locked.text, &note::Options::default()).live.is_none() && locked.runs.is_empty() {
            return Err(UndoError::NotLive(rel.to_string()));
        }
        let Some(kept) = locked.runs.iter().find(|r| r.id == run) else {
            return Err(UndoError::UnknownRun { note: rel.to_string(), run: run.to_owned() });
        };
        if same_lines(&kept.before, &locked.current) {
            return Err(UndoError::Nothing(format!("the body already reads as it did before run {run}")));
        }
        // Text changed since livenote last wrote the body is the user's: not overwritten unasked.
        if let Some(latest) = locked.runs.last() {
            match &latest.after {
                Some(left) if !same_lines(left, &locked.current) && !force => {
                    let (places, preview) =
                        describe_edits(left, &locked.current, first_body_line(&locked.text));
                    return Err(UndoError::Edited {
                        run: latest.id.clone(),
                        places,
                        preview,
                        command: RestoreCommand::Restore,
                    });
                }
                None if !force => {
                    return Err(UndoError::Unknown {
                        run: latest.id.clone(),
                        command: RestoreCommand::Restore,
                    });
                }
                _ => {}
            }
        }
        let restore = kept.before.clone();
        let message = format!("Restored the body from before run {run}");
        let done = self.put_back(path, &rel, &locked, run, &restore, RESTORE_TRIGGER, &message).await?;
        tracing::info!("restore {rel}: the body from before run {run} (restore run {})", done.id);
        Ok(done)
    }

    /// What run `run` changed, or (`None`) the latest run that changed the body: the body kept
    /// from before it and the body it left. Reads only; takes no lock.
    pub fn run_change(&self, path: &Path, run: Option<&str>) -> Result<RunChange, UndoError> {
        let rel = self.rel(path);
        if let Some(run) = run.filter(|r| !is_run_id(r)) {
            return Err(UndoError::NotARunId(run.to_owned()));
        }
        self.adopt(path);
        let text = self.io.read(path).map_err(|e| UndoError::Io(format!("cannot read the note: {e}")))?;
        let runs = self.bodies(&rel);
        if note::analyze(&text, &note::Options::default()).live.is_none() && runs.is_empty() {
            return Err(UndoError::NotLive(rel.to_string()));
        }
        let unrecorded = |id: &str| {
            UndoError::Nothing(format!(
                "livenote has no record of what run {id} left (it was interrupted or made by an older version)"
            ))
        };
        let r = match run {
            Some(run) => runs
                .iter()
                .find(|r| r.id == run)
                .ok_or_else(|| UndoError::UnknownRun { note: rel.to_string(), run: run.to_owned() })?,
            None => runs
                .iter()
                .rev()
                .find(|r| r.after.as_ref().is_some_and(|a| *a != r.before))
                .ok_or_else(|| UndoError::Nothing("no kept run changed the body".to_owned()))?,
        };
        let after = r.after.clone().ok_or_else(|| unrecorded(&r.id))?;
        Ok(RunChange { run: r.id.clone(), before: r.before.clone(), after })
    }
}
