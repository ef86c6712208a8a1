//! A note's run history, undo, and the pruning of transcripts and processed events.
//!
//! What livenote keeps per run (under `<workspace>/.livenote/`):
//! - `history/<key>/<run-id>.md`: the body before the run (written by [`Store::snapshot`],
//!   newest `[history] keep` per note);
//! - `history/<key>/<run-id>.after`: the body the run left ([`Engine::record_result`], called
//!   by the engine when a run ends, whatever its outcome); pruned with its `.md`;
//! - `runs/<run-id>.jsonl`: the transcript (`start`, the run's events, a `result` record with
//!   the lines added and removed, then `done`/`failed`/`skip`); newest `[history] runs_keep`
//!   across all notes.
//!
//! Undo (`livenote undo`, the editor's *Undo last run*) restores the body from before the
//! latest run that changed it, found from the snapshots: a run changed the body when what it
//! left differs from what it started from (failed runs that edited nothing are skipped). It
//! refuses when the body was edited since that run (naming the lines), unless forced, and when
//! livenote has no record of what the run left (a run from an older version or one that was
//! killed), since it then cannot tell the run's edits from the user's. Undo is a run of its
//! own (trigger `undo`): the current body is snapshotted first, so undoing an undo redoes.
//!
//! Undo keeps the runtime fields truthful about the restored body ([`undo_fields`]):
//! `lastRunSummary` says that the run was undone (`Undone: <its summary>`; a redo takes the
//! mark off again), and a `lastRunError` of the undone run goes with its edits. `lastRunAt`
//! and `lastAttemptAt` stay: they anchor the schedule, and rewinding them would fire the note
//! again at once. `lastRunId` stays too: that run is still the latest attempt.
//!
//! Run ids are ULIDs (26 Crockford base32 characters); nothing that is not one is ever used in
//! a path, so a `lastRunId` from a cloned folder cannot name a file elsewhere. Pruning deletes
//! only regular files whose names livenote gives them and never follows symlinks.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};

use super::{Engine, Store, timestamp};
use crate::note::rewrite::RuntimeField;
use crate::note::{self, body::agent_region};
use crate::text::count;
use crate::text::eol::same_lines;

pub use crate::config::{DEFAULT_EVENTS_KEEP, DEFAULT_RUNS_KEEP};

/// The trigger recorded for an undo.
pub const UNDO_TRIGGER: &str = "undo";

/// Bodies larger than this are not read back from history (notes are capped far below).
const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;
/// How much of a transcript `history` reads.
pub(super) const MAX_TRANSCRIPT_BYTES: u64 = 8 * 1024 * 1024;
/// How many changed lines an undo refusal quotes.
const PREVIEW_LINES: usize = 8;

/// Whether `s` has the shape of a run id: a ULID, 26 characters of Crockford's base32 in upper
/// case, the first at most `7` (the ids the engine writes).
pub fn is_run_id(s: &str) -> bool {
    s.len() == 26
        && s.as_bytes()[0] <= b'7'
        && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'A'..=b'H' | b'J' | b'K' | b'M' | b'N' | b'P'..=b'T' | b'V'..=b'Z'))
}

/// When a run started, from its id.
pub fn run_time(id: &str) -> Option<DateTime<Utc>> {
    let u = ulid::Ulid::from_string(id).ok()?;
    Some(DateTime::<Utc>::from(u.datetime()))
}

// ---------------------------------------------------------------------------------------------
// Files, never through a symlink

/// `dir` joined with `parts`, provided that `dir` and every folder on the way that exists is a
/// real folder (not a symlink). `Ok(None)` when one does not exist yet.
pub(super) fn real_dir(dir: &Path, parts: &[&str]) -> std::io::Result<Option<PathBuf>> {
    let mut p = dir.to_path_buf();
    let check = |p: &Path| -> std::io::Result<bool> {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => Err(std::io::Error::other(format!(
                "{} is a symlink; livenote does not follow symlinks in its state folder",
                p.display()
            ))),
            Ok(m) if m.is_dir() => Ok(true),
            Ok(_) => Err(std::io::Error::other(format!("{} is not a folder", p.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    };
    if !check(&p)? {
        return Ok(None);
    }
    for part in parts {
        p.push(part);
        if !check(&p)? {
            return Ok(None);
        }
    }
    Ok(Some(p))
}

/// The text of a regular file (never a symlink, FIFO or device), up to `max` bytes.
pub(super) fn read_regular(path: &Path, max: u64) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    let mut s = String::new();
    std::fs::File::open(path).ok()?.take(max).read_to_string(&mut s).ok()?;
    Some(s)
}

/// Regular files directly in `dir` whose names `keep_name` recognises, sorted by name.
pub(super) fn own_files(dir: &Path, keep_name: impl Fn(&str) -> bool) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| {
                    let name = e.file_name().to_str()?.to_owned();
                    keep_name(&name).then(|| (name, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub(super) fn history_dir(store: &Store, rel: &str) -> Option<PathBuf> {
    match real_dir(store.dir(), &["history", &Store::key(rel)]) {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!("history {rel}: {e}");
            None
        }
    }
}

/// The ids of the runs of a note that have a body snapshot, oldest first.
pub(super) fn snapshot_ids(store: &Store, rel: &str) -> Vec<String> {
    let Some(dir) = history_dir(store, rel) else { return Vec::new() };
    own_files(&dir, |n| n.strip_suffix(".md").is_some_and(is_run_id))
        .into_iter()
        .filter_map(|(n, _)| n.strip_suffix(".md").map(str::to_owned))
        .collect()
}

pub(super) fn read_body(store: &Store, rel: &str, id: &str, ext: &str) -> Option<String> {
    if !is_run_id(id) {
        return None;
    }
    let dir = history_dir(store, rel)?;
    read_regular(&dir.join(format!("{id}.{ext}")), MAX_BODY_BYTES)
}

// ---------------------------------------------------------------------------------------------
// Diffs

/// Lines added and removed from `old` to `new`.
pub fn line_counts(old: &str, new: &str) -> (usize, usize) {
    let diff = similar::TextDiff::configure().timeout(Duration::from_millis(300)).diff_lines(old, new);
    diff.ops()
        .iter()
        .filter(|op| op.tag() != similar::DiffTag::Equal)
        .fold((0, 0), |(a, r), op| (a + op.new_range().len(), r + op.old_range().len()))
}

/// Which lines of the note differ between `left` (what a run left) and `now` (the current
/// body, which starts at line `first_line` of the note): line numbers of the current note, and
/// a short `-`/`+` preview.
pub fn describe_edits(left: &str, now: &str, first_line: usize) -> (String, Vec<String>) {
    let diff = similar::TextDiff::configure().timeout(Duration::from_millis(300)).diff_lines(left, now);
    let old: Vec<&str> = left.split_inclusive('\n').collect();
    let new: Vec<&str> = now.split_inclusive('\n').collect();
    let mut places = Vec::new();
    let mut preview = Vec::new();
    for op in diff.ops() {
        if op.tag() == similar::DiffTag::Equal {
            continue;
        }
        let (o, n) = (op.old_range(), op.new_range());
        let at = first_line + n.start;
        places.push(match n.len() {
            0 => format!("{} removed before line {at}", count(o.len(), "line")),
            1 => format!("line {at}"),
            k => format!("lines {at}-{}", at + k - 1),
        });
        for l in old.get(o).unwrap_or_default() {
            preview.push(format!("- {}", l.trim_end_matches(['\n', '\r'])));
        }
        for l in new.get(n).unwrap_or_default() {
            preview.push(format!("+ {}", l.trim_end_matches(['\n', '\r'])));
        }
    }
    if preview.len() > PREVIEW_LINES {
        let more = preview.len() - PREVIEW_LINES;
        preview.truncate(PREVIEW_LINES);
        preview.push(format!("… and {}", count(more, "more line")));
    }
    (places.join(", "), preview)
}

/// 1-based line of the note where its agent region starts.
pub(super) fn first_body_line(text: &str) -> usize {
    let start = agent_region(text).start;
    text[..start].matches('\n').count() + 1
}

// ---------------------------------------------------------------------------------------------
// Undo, as a pure decision over the history

/// One run as undo sees it: the body before it and, when recorded, the body it left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunBodies {
    pub id: String,
    pub before: String,
    pub after: Option<String>,
}

/// What undo would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Restore `restore` (the body from before run `run`). `left` is what that run left when
    /// recorded; `None` means livenote cannot tell the run's edits from later ones.
    Restore {
        run: String,
        restore: String,
        left: Option<String>,
    },
    Nothing,
}

/// The latest run (of `runs`, oldest first) that changed the body. A run without a record of
/// what it left counts as changing when the body after it (the next run's snapshot, or the
/// current body for the last run) differs from its snapshot.
/// A note's history as *Undo last run* reads it ([`Engine::undo_history`]).
#[derive(Debug, Default)]
pub struct UndoHistory(Vec<RunBodies>);

impl UndoHistory {
    /// Whether *Undo last run* has something to do on the note whose current text is `text`
    /// and whose `lastRunId` is `last_run_id`.
    pub fn can_undo(&self, text: &str, last_run_id: Option<&str>) -> bool {
        if last_run_id.is_some_and(|id| !is_run_id(id)) {
            return false;
        }
        matches!(plan(&self.0, &text[agent_region(text)]), Plan::Restore { .. })
    }
}

pub fn plan(runs: &[RunBodies], current: &str) -> Plan {
    for (i, r) in runs.iter().enumerate().rev() {
        // Line endings alone are no change: restoring them would write the note's own again.
        let changed = match &r.after {
            Some(after) => !same_lines(after, &r.before),
            None => {
                let next = runs.get(i + 1).map_or(current, |n| n.before.as_str());
                !same_lines(next, &r.before)
            }
        };
        if changed {
            return Plan::Restore { run: r.id.clone(), restore: r.before.clone(), left: r.after.clone() };
        }
    }
    Plan::Nothing
}

impl UndoError {
    /// The question an editor asks before restoring anyway, when undo can be forced: no CLI
    /// advice beside the editor's own buttons, and no final punctuation (Neovim shows a
    /// request's message as a prompt followed by ": ").
    pub fn restore_anyway_question(&self) -> Option<String> {
        self.anyway_question("Undo last run", "that run")
    }

    /// [`UndoError::restore_anyway_question`] for another action (`what`, e.g. "Restore run
    /// X") putting back the body from before `which` run.
    pub fn anyway_question(&self, what: &str, which: &str) -> Option<String> {
        let why = match self {
            UndoError::Edited { places, .. } => format!("the body was edited since the last run ({places})"),
            UndoError::Unknown { .. } => {
                "livenote has no record of what the last run left, so it cannot tell its edits from later ones"
                    .to_owned()
            }
            _ => return None,
        };
        Some(format!(
            "{what}: {why}. The current body is kept in history either way. Restore the body from before {which} anyway"
        ))
    }
}

/// Why undo did nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UndoError {
    #[error("nothing to undo: {0}")]
    Nothing(String),
    #[error(
        "the body was edited since run {run} ({places}); `livenote {} --force` restores the body from before {} anyway (the current body is kept in history)\n{}",
        command.name(), command.what(), preview.join("\n")
    )]
    Edited { run: String, places: String, preview: Vec<String>, command: RestoreCommand },
    #[error(
        "livenote has no record of what run {run} left (it was interrupted or made by an older version), so it cannot tell its edits from later ones; `livenote {} --force` restores the body from before {} anyway (the current body is kept in history)",
        command.name(), command.what()
    )]
    Unknown { run: String, command: RestoreCommand },
    #[error("`{0}` is not a run id (26 letters and digits, as `livenote history` lists them)")]
    NotARunId(String),
    #[error(
        "{note} has no kept snapshot of run {run}; `livenote history {note}` lists its runs and which can be restored"
    )]
    UnknownRun { note: String, run: String },
    #[error("{0} is not a live note (no `live:` block in its frontmatter)")]
    NotLive(String),
    #[error(
        "lastRunId `{0}` is not a livenote run id; refusing to undo (the note's own history is used only by run id)"
    )]
    BadRunId(String),
    #[error("the note is updating; stop the run first")]
    Running,
    #[error("{0}")]
    Io(String),
}

/// Which command refused, for the advice in [`UndoError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreCommand {
    Undo,
    Restore,
}

impl RestoreCommand {
    fn name(self) -> &'static str {
        match self {
            RestoreCommand::Undo => "undo",
            RestoreCommand::Restore => "restore",
        }
    }

    fn what(self) -> &'static str {
        match self {
            RestoreCommand::Undo => "that run",
            RestoreCommand::Restore => "the run you named",
        }
    }
}

/// How an undo's `lastRunSummary` says that the body it describes was undone.
pub const UNDONE: &str = "Undone: ";

/// The runtime fields an undo of run `run` writes into the note `text`, with the body from
/// before that run (`redo`: `run` was itself an undo). Nothing outside a live note.
///
/// - Undoing a run that failed (its error is the note's `lastRunError`, its id `lastRunId`):
///   the error goes with its edits; `lastRunSummary` is an earlier run's, describing the body
///   restored, and stays. (`lastAttemptAt` stays as well, so the failed cycle is still retried
///   after the backoff.)
/// - Undoing any other run: `lastRunSummary` describes the text that run (or a later one that
///   changed nothing) left, so it is marked `Undone: `.
/// - Redoing: the mark comes off.
pub fn undo_fields(text: &str, run: &str, redo: bool) -> Vec<(RuntimeField, Option<String>)> {
    let analysis = note::analyze(text, &note::Options::default());
    let Some(live) = analysis.live else { return Vec::new() };
    let summary = live.last_run_summary.as_deref();
    if redo {
        return match summary.and_then(|s| s.strip_prefix(UNDONE)) {
            Some(s) => vec![(RuntimeField::LastRunSummary, Some(s.to_owned()))],
            None => Vec::new(),
        };
    }
    if live.last_run_error.is_some() && live.last_run_id.as_deref() == Some(run) {
        return vec![(RuntimeField::LastRunError, None)];
    }
    match summary {
        Some(s) if !s.starts_with(UNDONE) => {
            vec![(RuntimeField::LastRunSummary, Some(super::one_line(&format!("{UNDONE}{s}"), 300)))]
        }
        _ => Vec::new(),
    }
}

/// The trigger run `id` of the note `rel` had, from its transcript (`None` once pruned).
pub(super) fn run_trigger(store: &Store, rel: &str, id: &str) -> Option<String> {
    let dir = real_dir(store.dir(), &["runs"]).ok()??;
    read_transcript(&dir.join(format!("{id}.jsonl")), id, rel)?.trigger
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Undone {
    /// The run whose changes were undone.
    pub undid: String,
    /// The undo's own run id (its snapshot holds the body from before the undo).
    pub id: String,
}

// ---------------------------------------------------------------------------------------------
// The engine's side

impl Engine {
    /// Record what a run left: the body after it (for undo) and, in its transcript, the lines
    /// it added and removed (for `livenote history`); then prune old transcripts. Called by the
    /// run engine once a run that took its snapshot has ended, whatever the outcome, with the
    /// note's agent region as it is now. Best effort: a failure is logged, never fails a run.
    pub fn record_result(&self, rel: &str, run_id: &str, body_after: &str) {
        if let Err(e) = self.try_record_result(rel, run_id, body_after) {
            tracing::warn!("history {rel}: cannot record the result of run {run_id}: {e}");
        }
        let keep = self.config.read().map(|c| c.history.runs_keep).unwrap_or(DEFAULT_RUNS_KEEP);
        prune_transcripts(&self.store, keep);
    }

    fn try_record_result(&self, rel: &str, run_id: &str, body_after: &str) -> std::io::Result<()> {
        if !is_run_id(run_id) {
            return Err(std::io::Error::other(format!("`{run_id}` is not a run id")));
        }
        let before = read_body(&self.store, rel, run_id, "md");
        // Unknown (null) when the snapshot is missing: history then shows `?`, not `+0 -0`.
        let counts = before.as_deref().map(|b| line_counts(b, body_after));
        let (added, removed) = (counts.map(|c| c.0), counts.map(|c| c.1));
        let changed = before.as_deref().map(|b| b != body_after);
        if let Some(dir) = history_dir(&self.store, rel)
            && before.is_some()
        {
            crate::workspace::write::write_atomic(&dir.join(format!("{run_id}.after")), body_after)
                .map_err(std::io::Error::other)?;
            // `.after` files whose snapshot was pruned go too.
            let kept: std::collections::HashSet<String> =
                snapshot_ids(&self.store, rel).into_iter().collect();
            for (name, path) in own_files(&dir, |n| n.strip_suffix(".after").is_some_and(is_run_id)) {
                if name.strip_suffix(".after").is_some_and(|id| !kept.contains(id)) {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        if let Some(dir) = real_dir(self.store.dir(), &["runs"])? {
            let path = dir.join(format!("{run_id}.jsonl"));
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                let mut f = OpenOptions::new().append(true).open(path)?;
                let line = json!({
                    "at": timestamp(self.clock.now()),
                    "kind": "result",
                    "message": counts.map_or_else(|| "?".to_owned(), |(a, r)| format!("+{a} -{r}")),
                    "note": rel,
                    "changed": changed,
                    "added": added,
                    "removed": removed,
                });
                writeln!(f, "{line}")?;
            }
        }
        Ok(())
    }

    /// Whether *Undo last run* has something to do on the note whose current text is `text`
    /// and whose `lastRunId` is `last_run_id` (from the analysis the caller already has).
    pub fn can_undo(&self, path: &Path, text: &str, last_run_id: Option<&str>) -> bool {
        self.undo_history(path).can_undo(text, last_run_id)
    }

    /// The bodies *Undo last run* compares a note with, read from its history, for a caller
    /// that keeps them until the history changes (the language server's code actions).
    pub fn undo_history(&self, path: &Path) -> UndoHistory {
        self.adopt(path);
        UndoHistory(self.bodies(&self.rel(path)))
    }

    pub(super) fn bodies(&self, rel: &str) -> Vec<RunBodies> {
        snapshot_ids(&self.store, rel)
            .into_iter()
            .filter_map(|id| {
                let before = read_body(&self.store, rel, &id, "md")?;
                let after = read_body(&self.store, rel, &id, "after");
                Some(RunBodies { id, before, after })
            })
            .collect()
    }

    /// Restore the body from before the latest run that changed it (`Undo last run`,
    /// `livenote undo`). See the module documentation.
    pub async fn undo_last_run(&self, path: &Path, force: bool) -> Result<Undone, UndoError> {
        let rel = self.rel(path);
        let locked = self.lock_for_restore(path, &rel)?;
        let Plan::Restore { run, restore, left } = plan(&locked.runs, &locked.current) else {
            let why = if locked.runs.is_empty() {
                "no run of this note has a saved body".to_owned()
            } else {
                "no kept run changed the body".to_owned()
            };
            return Err(UndoError::Nothing(why));
        };
        match &left {
            // A body git's `autocrlf` or an editor converted is still the one the run left.
            Some(left) if !same_lines(left, &locked.current) && !force => {
                let (places, preview) = describe_edits(left, &locked.current, first_body_line(&locked.text));
                return Err(UndoError::Edited { run, places, preview, command: RestoreCommand::Undo });
            }
            None if !force => return Err(UndoError::Unknown { run, command: RestoreCommand::Undo }),
            _ => {}
        }
        let message = format!("Undid run {run}: restored the body from before it");
        let done = self.put_back(path, &rel, &locked, &run, &restore, UNDO_TRIGGER, &message).await?;
        tracing::info!("undo {rel}: undid run {run} (undo run {})", done.id);
        Ok(done)
    }

    /// Whether run `id` was made on this machine, as the folder's `.livenote/runs/` tells: its
    /// transcript is here and names no other machine. A run of another machine that shares the
    /// folder through a sync tool has none here (or, when `.livenote/` syncs too, names that
    /// machine).
    pub fn made_here(&self, id: &str) -> bool {
        if !is_run_id(id) {
            return false;
        }
        let Ok(Some(dir)) = real_dir(self.store.dir(), &["runs"]) else { return false };
        let path = dir.join(format!("{id}.jsonl"));
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return false;
        }
        let first = std::fs::File::open(&path)
            .ok()
            .and_then(|f| BufReader::new(f.take(MAX_TRANSCRIPT_BYTES)).lines().next().and_then(Result::ok));
        let host = first
            .and_then(|l| serde_json::from_str::<Value>(&l).ok())
            .and_then(|v| v["data"]["host"].as_str().map(str::to_owned));
        host.is_none_or(|h| crate::schedule::host::same_machine(&h, &self.machine()))
    }

    /// The runs of a note, newest first, for `livenote history`.
    pub fn history(&self, path: &Path) -> Vec<RunInfo> {
        self.adopt(path);
        let rel = self.rel(path);
        let snaps: std::collections::HashSet<String> = snapshot_ids(&self.store, &rel).into_iter().collect();
        let mut runs: std::collections::BTreeMap<String, RunInfo> = std::collections::BTreeMap::new();
        if let Ok(Some(dir)) = real_dir(self.store.dir(), &["runs"]) {
            for (name, p) in own_files(&dir, |n| n.strip_suffix(".jsonl").is_some_and(is_run_id)) {
                let id = name.trim_end_matches(".jsonl");
                if let Some(info) = read_transcript(&p, id, &rel) {
                    runs.insert(id.to_owned(), info);
                }
            }
        }
        for id in &snaps {
            runs.entry(id.clone()).or_insert_with(|| RunInfo::unknown(id));
        }
        let newest = runs.keys().next_back().cloned();
        let locked = self.store.is_locked(&rel);
        for (id, r) in &mut runs {
            r.snapshot = snaps.contains(id);
            if r.outcome == "unfinished" && locked && Some(id) == newest.as_ref() {
                r.outcome = "running".to_owned();
            }
        }
        runs.into_values().rev().collect()
    }
}

/// The note's `lastRunId` when it is present and not a run id.
pub(super) fn bad_last_run_id(text: &str) -> Option<String> {
    let analysis = note::analyze(text, &note::Options::default());
    let id = analysis.live.as_ref()?.last_run_id.clone()?;
    (!is_run_id(&id)).then_some(id)
}

// ---------------------------------------------------------------------------------------------
// History listing

/// One run of a note, as `livenote history` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    pub id: String,
    /// RFC 3339: when the run started.
    pub time: Option<String>,
    /// `manual`, `cron`, `window`, `event`, `undo`, or null when its transcript is gone.
    pub trigger: Option<String>,
    /// `done`, `failed`, `stopped`, `skipped`, `running`, `unfinished` (no end recorded: the
    /// process died), or `unknown` (transcript pruned).
    pub outcome: String,
    /// The run's summary, or its error.
    pub summary: Option<String>,
    pub lines_added: Option<usize>,
    pub lines_removed: Option<usize>,
    /// Whether the body from before the run is kept (the run can be undone from it).
    pub snapshot: bool,
    /// What the run did and cost (`tokens`, `modelCalls`, `toolCalls`, `durationMs`), when
    /// its final line recorded it (model runs; absent for a command provider's).
    #[serde(flatten)]
    pub totals: Option<crate::cost::RunTotals>,
    /// The machine that made the run (`crate::machine`), when its transcript says (runs
    /// recorded before livenote kept it do not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl RunInfo {
    fn unknown(id: &str) -> RunInfo {
        RunInfo {
            id: id.to_owned(),
            time: run_time(id).map(timestamp),
            trigger: None,
            outcome: "unknown".to_owned(),
            summary: None,
            lines_added: None,
            lines_removed: None,
            snapshot: false,
            totals: None,
            host: None,
        }
    }
}

/// The note and trigger a transcript's first line (`start`: `{rel} trigger={trigger}
/// run={id}`) names, when it is the start of run `id`.
pub(super) fn start_of<'a>(first: &'a Value, id: &str) -> Option<(&'a str, &'a str)> {
    if first["kind"] != "start" {
        return None;
    }
    let message = first["message"].as_str()?;
    let (note, rest) = message.rsplit_once(" trigger=")?;
    let (trigger, run) = rest.split_once(" run=")?;
    (run == id).then_some((note, trigger))
}

/// The run a transcript records, if it is a run of `rel`.
fn read_transcript(path: &Path, id: &str, rel: &str) -> Option<RunInfo> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let mut lines = BufReader::new(file.take(MAX_TRANSCRIPT_BYTES)).lines().map_while(Result::ok);
    let first: Value = serde_json::from_str(&lines.next()?).ok()?;
    let (note, trigger) = start_of(&first, id)?;
    if note != rel {
        return None;
    }
    let mut info = RunInfo::unknown(id);
    info.time = first["at"].as_str().map(str::to_owned).or(info.time);
    info.trigger = Some(trigger.to_owned());
    info.host = first["data"]["host"].as_str().map(str::to_owned);
    info.outcome = "unfinished".to_owned();
    for line in lines {
        let Ok(v) = serde_json::from_str::<Value>(&line) else { continue };
        let message = v["message"].as_str().map(str::to_owned);
        match v["kind"].as_str() {
            Some("result") => {
                info.lines_added = v["added"].as_u64().and_then(|n| usize::try_from(n).ok());
                info.lines_removed = v["removed"].as_u64().and_then(|n| usize::try_from(n).ok());
            }
            Some("done") => {
                info.outcome = "done".to_owned();
                info.summary = message;
                info.totals = super::costs::totals_of(&v["data"]);
            }
            Some("failed") => {
                info.outcome =
                    if message.as_deref() == Some("stopped") { "stopped" } else { "failed" }.to_owned();
                info.summary = message;
                info.totals = super::costs::totals_of(&v["data"]);
            }
            Some("skip") => {
                info.outcome = "skipped".to_owned();
                info.summary = message;
            }
            _ => {}
        }
    }
    Some(info)
}

// ---------------------------------------------------------------------------------------------
// Pruning

/// Keep the newest `keep` (at least 1) transcripts, `runs/<run-id>.jsonl`; other files there
/// are left alone.
pub fn prune_transcripts(store: &Store, keep: usize) {
    let dir = match real_dir(store.dir(), &["runs"]) {
        Ok(Some(d)) => d,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!("prune transcripts: {e}");
            return;
        }
    };
    let files = own_files(&dir, |n| n.strip_suffix(".jsonl").is_some_and(is_run_id));
    let excess = files.len().saturating_sub(keep.max(1));
    for (_, p) in files.into_iter().take(excess) {
        if let Err(e) = std::fs::remove_file(&p) {
            tracing::warn!("prune transcripts: {}: {e}", p.display());
        }
    }
}

/// Keep the newest `keep` (at least 1) processed events in `events/done/`: the regular files
/// named `<id>.json` (not hidden), oldest by modification time then name; other files there are
/// left alone.
pub fn prune_done_events(root: &Path, keep: usize) {
    let dir = match real_dir(root, &[".livenote", "events", "done"]) {
        Ok(Some(d)) => d,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!("prune events: {e}");
            return;
        }
    };
    let mut files: Vec<(std::time::SystemTime, String, PathBuf)> =
        own_files(&dir, |n| !n.starts_with('.') && n.len() > ".json".len() && n.ends_with(".json"))
            .into_iter()
            .map(|(n, p)| {
                let t = std::fs::symlink_metadata(&p)
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
                (t, n, p)
            })
            .collect();
    files.sort();
    let excess = files.len().saturating_sub(keep.max(1));
    for (_, _, p) in files.into_iter().take(excess) {
        if let Err(e) = std::fs::remove_file(&p) {
            tracing::warn!("prune events: {}: {e}", p.display());
        }
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
