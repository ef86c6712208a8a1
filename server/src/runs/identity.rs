//! A note keeps its identity across a rename (SPEC section 3). What livenote keeps of a note
//! (history, the transcripts that name it, memory) is filed under its path
//! (`workspace::state::note_key`); when the note moves, so does that state, and a copy of a
//! note starts without it.
//!
//! - The editor's rename (`workspace/didRenameFiles`, a file or a folder): [`Engine::renamed`]
//!   moves the state of every note it names at once.
//! - A rename livenote does not hear of (`mv`, `git mv`, another program): a note whose own
//!   history has no snapshot of its `lastRunId` looks for the note that run was of (the run's
//!   transcript names it; else the history folder holding that snapshot, whose marker file
//!   names it). When nothing at that path claims the state any more (no file there, or one
//!   whose `lastRunId` is not a run of that path), the note was moved: its state is adopted
//!   ([`Engine::adopt`]), under both notes' run locks. When the original is still there and
//!   still carries a run of its own, this note is a copy: it starts fresh (no history, no
//!   memory) and its first run is its own. Every reader and writer of a note's state (a run,
//!   undo, restore, diff, history, memory, the editor's undo) asks first; a note with its own
//!   state answers with one file lookup.
//! - The move: the memory file is renamed (kept where it is when the new path already has one),
//!   the transcripts are rewritten to name the new path, then the history files are moved (the
//!   whole folder when the new path has none, else file by file with the `lastRunId` snapshot
//!   last), so that an interrupted move is taken up again by the next look.
//!
//! Everything stays inside `.livenote/` without following a link (`history::real_dir`,
//! `workspace::state`), and only files named as livenote names them are moved.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use super::Engine;
use super::history::{MAX_TRANSCRIPT_BYTES, history_dir, own_files, read_regular, real_dir, start_of};
use super::store::{NOTE_MARKER, NoteLock, Store, is_run_id};
use crate::memory::store::MemoryStore;
use crate::note;
use crate::workspace::{NotePath, state, write};

/// How much of a marker file is read (a path).
const MAX_MARKER_BYTES: u64 = 4096;

impl Engine {
    /// Take over the state of the note this one was moved from, if it was (see the module
    /// documentation). Takes the note's lock for the move; nothing happens while it is held.
    pub fn adopt(&self, path: &Path) {
        let rel = self.rel(path);
        // Without the lock first: nearly every note has its own state, and a copy is told apart
        // by reads alone.
        let Ok(text) = self.io.read(path) else { return };
        if self.moved_from(&rel, &text).is_none() || self.registry.is_running(path) {
            return;
        }
        let _lock = match self.store.try_lock(&rel) {
            Ok(Some(l)) => l,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("adopt {rel}: cannot take the note's lock: {e}");
                return;
            }
        };
        // Read again under the lock: a run may have just written its own `lastRunId`.
        if let Ok(text) = self.io.read(path) {
            self.adopt_locked(&rel, &text);
        }
    }

    /// [`Engine::adopt`] for a caller that holds the note's lock and has just read `text`.
    pub(super) fn adopt_locked(&self, rel: &str, text: &str) {
        let Some(from) = self.moved_from(rel, text) else { return };
        let Some(_from_lock) = self.lock_other(&from, rel) else { return };
        // Under both locks: the original did not run meanwhile.
        if self.moved_from(rel, text).as_deref() != Some(from.as_str()) {
            return;
        }
        let last = last_run_id(text);
        match self.move_state(&from, rel, last.as_deref()) {
            Ok(()) => {
                tracing::info!("adopt {rel}: the history and memory of {from}, which it was moved from")
            }
            Err(e) => tracing::warn!("adopt {rel}: the state of {from}: {e}"),
        }
    }

    /// The editor renamed `from` to `to` (a note or a folder of notes): their state follows.
    /// Nothing is moved for a note while a run of either path holds its lock (the next look
    /// at the note adopts it then).
    pub fn renamed(&self, from: &Path, to: &Path) {
        let (Some(from), Some(to)) = (NotePath::of(&self.root, from), NotePath::of(&self.root, to)) else {
            return;
        };
        if from == to {
            return;
        }
        let mut moves: Vec<(String, String)> = Vec::new();
        if self.has_state(&from) {
            moves.push((from.to_string(), to.to_string()));
        }
        // A folder: every note under it that livenote keeps state for, by the markers.
        let prefix = format!("{from}/");
        let folder = std::fs::symlink_metadata(to.to_path(&self.root)).is_ok_and(|m| m.is_dir());
        for note in if folder { self.kept_notes() } else { Vec::new() } {
            if let Some(rest) = note.strip_prefix(&prefix) {
                moves.push((note.clone(), format!("{to}/{rest}")));
            }
        }
        for (old, new) in moves {
            let Some(_to_lock) = self.lock_other(&new, &new) else { continue };
            let Some(_from_lock) = self.lock_other(&old, &new) else { continue };
            match self.move_state(&old, &new, None) {
                Ok(()) => tracing::info!("rename {new}: its history and memory follow it from {old}"),
                Err(e) => tracing::warn!("rename {new}: the state of {old}: {e}"),
            }
        }
    }

    /// Another note's lock, for a move of its state to `rel`; `None` (logged) when it is held.
    fn lock_other(&self, other: &str, rel: &str) -> Option<NoteLock> {
        match self.store.try_lock(other) {
            Ok(Some(l)) => Some(l),
            Ok(None) => {
                tracing::info!("adopt {rel}: {other} is running; its state stays until it ends");
                None
            }
            Err(e) => {
                tracing::warn!("adopt {rel}: cannot take the lock of {other}: {e}");
                None
            }
        }
    }

    /// The note whose state the note `rel` (with text `text`) takes over: its `lastRunId` is
    /// a run of that note, not of `rel`, and nothing at that note's path claims it any more.
    fn moved_from(&self, rel: &str, text: &str) -> Option<String> {
        let last = last_run_id(text)?;
        if has_snapshot(&self.store, rel, &last) {
            return None;
        }
        let from = self.run_note(&last, rel)?;
        if self.claimed(&from) {
            tracing::debug!("adopt {rel}: {from} still holds its runs; this note is a copy and starts fresh");
            return None;
        }
        Some(from)
    }

    /// The note (other than `rel`) that the run `id` was of: its transcript names it; else
    /// the history folder that holds its snapshot.
    fn run_note(&self, id: &str, rel: &str) -> Option<String> {
        if let Some(note) = transcript_note(&self.store, id)
            && note != rel
            && self.has_state(&note)
        {
            return Some(note);
        }
        // Transcripts are pruned across the workspace; a snapshot is kept per note.
        let top = real_dir(self.store.dir(), &["history"]).ok()??;
        let own = Store::key(rel);
        std::fs::read_dir(&top).ok()?.flatten().find_map(|e| {
            let key = e.file_name().into_string().ok()?;
            if key == own || !e.file_type().is_ok_and(|t| t.is_dir()) {
                return None;
            }
            let snapshot = e.path().join(format!("{id}.md"));
            if !std::fs::symlink_metadata(&snapshot).is_ok_and(|m| m.is_file()) {
                return None;
            }
            marker_note(&e.path()).filter(|n| Store::key(n) == key && n != rel)
        })
    }

    /// Whether a note at `rel` still holds the state kept under its path: the file is there
    /// and its `lastRunId` is a run of `rel`. A file that is there but cannot be read claims
    /// it too (nothing is taken from a note livenote cannot see).
    fn claimed(&self, rel: &str) -> bool {
        let path = NotePath::from_relative(Path::new(rel)).map(|p| p.to_path(&self.root));
        let Some(path) = path else { return true };
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
            Err(_) => return true,
            Ok(_) => {}
        }
        let Ok(text) = self.io.read(&path) else { return true };
        last_run_id(&text).is_some_and(|id| {
            has_snapshot(&self.store, rel, &id) || transcript_note(&self.store, &id).as_deref() == Some(rel)
        })
    }

    /// Whether livenote keeps anything of the note `rel`: a snapshot or a memory file.
    fn has_state(&self, rel: &str) -> bool {
        !super::history::snapshot_ids(&self.store, rel).is_empty()
            || state::existing_state_dir(&self.root, "memory")
                .ok()
                .flatten()
                .is_some_and(|d| std::fs::symlink_metadata(d.join(MemoryStore::file_name(rel))).is_ok())
    }

    /// The notes whose history folders name them (their markers).
    fn kept_notes(&self) -> Vec<String> {
        let Ok(Some(top)) = real_dir(self.store.dir(), &["history"]) else { return Vec::new() };
        let Ok(entries) = std::fs::read_dir(&top) else { return Vec::new() };
        entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                let key = e.file_name().into_string().ok()?;
                marker_note(&e.path()).filter(|n| Store::key(n) == key)
            })
            .collect()
    }

    /// Move what livenote keeps of `from` to `to`; the caller holds both notes' locks. In an
    /// order that the next look takes up again when interrupted (module documentation): the
    /// snapshot of `last` (the note's `lastRunId`; else the newest) goes last.
    fn move_state(&self, from: &str, to: &str, last: Option<&str>) -> Result<(), String> {
        let memory = MemoryStore::new(&self.root);
        if let Err(e) = memory.rename(from, to) {
            tracing::warn!("adopt {to}: memory: {e}");
        }
        rekey_transcripts(&self.store, from, to);
        let Some(old) = history_dir(&self.store, from) else { return Ok(()) };
        let io = |e: std::io::Error| e.to_string();
        let new = match history_dir(&self.store, to) {
            None => {
                let top = state::state_dir(&self.root, "history").map_err(io)?;
                let new = top.join(Store::key(to));
                std::fs::rename(&old, &new).map_err(|e| format!("cannot move {}: {e}", old.display()))?;
                new
            }
            Some(new) => {
                // Both have runs: merged by run id (ids are unique), the snapshot that makes
                // the note's `lastRunId` its own moved last.
                let files = own_files(&old, |n| {
                    n.strip_suffix(".md").or_else(|| n.strip_suffix(".after")).is_some_and(is_run_id)
                });
                let (mut first, mut tail): (Vec<_>, Vec<_>) = (Vec::new(), Vec::new());
                let newest = files.iter().filter_map(|(n, _)| n.strip_suffix(".md")).max().map(str::to_owned);
                let last = last.map(str::to_owned).or(newest);
                for f in files {
                    if last.as_deref().is_some_and(|id| f.0.starts_with(id)) {
                        tail.push(f);
                    } else {
                        first.push(f);
                    }
                }
                for (name, path) in first.into_iter().chain(tail) {
                    let target = new.join(&name);
                    if std::fs::symlink_metadata(&target).is_err() {
                        std::fs::rename(&path, &target).map_err(|e| format!("cannot move {name}: {e}"))?;
                    }
                }
                let _ = std::fs::remove_file(old.join(NOTE_MARKER));
                // Left when something not livenote's is in it.
                let _ = std::fs::remove_dir(&old);
                new
            }
        };
        write::write_atomic(&new.join(NOTE_MARKER), &format!("{to}\n")).map_err(|e| e.to_string())
    }
}

/// The note's `lastRunId`, when it is a run id.
fn last_run_id(text: &str) -> Option<String> {
    let analysis = note::analyze(text, &note::Options::default());
    analysis.live?.last_run_id.filter(|id| is_run_id(id))
}

/// Whether the history of `rel` keeps the body from before run `id`.
fn has_snapshot(store: &Store, rel: &str, id: &str) -> bool {
    history_dir(store, rel)
        .is_some_and(|d| std::fs::symlink_metadata(d.join(format!("{id}.md"))).is_ok_and(|m| m.is_file()))
}

/// The note a run's transcript names (its first line), if the transcript is kept.
fn transcript_note(store: &Store, id: &str) -> Option<String> {
    let dir = real_dir(store.dir(), &["runs"]).ok()??;
    let path = dir.join(format!("{id}.jsonl"));
    if !std::fs::symlink_metadata(&path).ok()?.is_file() {
        return None;
    }
    let file = std::fs::File::open(&path).ok()?;
    let line = BufReader::new(file.take(64 * 1024)).lines().next()?.ok()?;
    let first: Value = serde_json::from_str(&line).ok()?;
    start_of(&first, id).map(|(note, _)| note.to_owned())
}

/// The note a history folder's marker names.
fn marker_note(dir: &Path) -> Option<String> {
    let text = read_regular(&dir.join(NOTE_MARKER), MAX_MARKER_BYTES)?;
    let note = text.trim_end_matches('\n');
    (!note.is_empty() && !note.contains('\n')).then(|| note.to_owned())
}

/// Rewrite the transcripts of `from`'s runs to name `to` (their `start` and `result` lines),
/// each atomically. A transcript too large to read whole is left as it is.
fn rekey_transcripts(store: &Store, from: &str, to: &str) {
    let Ok(Some(dir)) = real_dir(store.dir(), &["runs"]) else { return };
    for (name, path) in own_files(&dir, |n| n.strip_suffix(".jsonl").is_some_and(is_run_id)) {
        let id = name.trim_end_matches(".jsonl");
        if transcript_note(store, id).as_deref() != Some(from) {
            continue;
        }
        if let Err(e) = rekey_transcript(&path, id, from, to) {
            tracing::warn!("adopt {to}: transcript {name}: {e}");
        }
    }
}

fn rekey_transcript(path: &Path, id: &str, from: &str, to: &str) -> Result<(), String> {
    let text = read_regular(path, MAX_TRANSCRIPT_BYTES).ok_or("cannot read it whole")?;
    let mut out = String::with_capacity(text.len() + to.len() * 2);
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let end = &line[line.trim_end_matches('\n').len()..];
        let Ok(mut v) = serde_json::from_str::<Value>(line) else {
            out.push_str(line);
            continue;
        };
        let mut changed = false;
        let start = (i == 0)
            .then(|| start_of(&v, id))
            .flatten()
            .filter(|(note, _)| *note == from)
            .map(|(_, trigger)| format!("{to} trigger={trigger} run={id}"));
        if let Some(message) = start {
            v["message"] = Value::String(message);
            changed = true;
        }
        if v["kind"] == "result" && v["note"] == from {
            v["note"] = Value::String(to.to_owned());
            changed = true;
        }
        match changed.then(|| serde_json::to_string(&v)).transpose() {
            Ok(Some(line)) => {
                out.push_str(&line);
                out.push_str(end);
            }
            _ => out.push_str(line),
        }
    }
    write::write_atomic(path, &out).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::memory::{Memory, MemoryConfig};
    use crate::runs::DiskIo;
    use crate::schedule::{ManualClock, Zone};

    const A: &str = "01KAT5B2X0000000000000000A";
    const B: &str = "01KAT5B2X0000000000000000B";
    const C: &str = "01KAT5B2X0000000000000000C";

    fn engine(root: &Path) -> Engine {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-23T09:00:00Z").map(|t| t.to_utc());
        let clock = ManualClock::new(now.unwrap_or_default());
        let (config, _) = crate::config::Config::load_with(None, None, &|_: &str| None);
        Engine::new(root, Arc::new(clock), Zone::Named(chrono_tz::UTC), Arc::new(DiskIo), config, None)
    }

    fn note(last: &str) -> String {
        format!("---\nlive:\n  objective: x\n  lastRunId: \"{last}\"\n---\n# T\n\nbody\n")
    }

    /// What a run of `rel` keeps: a snapshot, a transcript, a memory entry.
    fn ran(e: &Engine, rel: &str, id: &str, transcript: bool) {
        e.store.snapshot(rel, id, &format!("before {id}\n"), 20).unwrap_or_else(|err| panic!("{err}"));
        if transcript {
            let mut t = e.store.transcript(id).unwrap_or_else(|err| panic!("{err}"));
            t.write(&json!({"at": "2026-11-23T09:00:00Z", "kind": "start", "message": format!("{rel} trigger=manual run={id}")}));
            t.write(&json!({"kind": "result", "note": rel, "added": 1, "removed": 1}));
        }
        let mut m = Memory::default();
        let saved = m.save("ran-as", rel, None, chrono::DateTime::default(), &MemoryConfig::default());
        assert!(saved.is_ok());
        MemoryStore::new(&e.root).save(rel, &m).unwrap_or_else(|err| panic!("{err}"));
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
    }

    fn ids(e: &Engine, rel: &str) -> Vec<String> {
        super::super::history::snapshot_ids(&e.store, rel)
    }

    fn memory_of(e: &Engine, rel: &str) -> String {
        MemoryStore::new(&e.root)
            .load(rel)
            .ok()
            .and_then(|m| m.get("ran-as").ok().map(|x| x.content.clone()))
            .unwrap_or_default()
    }

    #[test]
    fn a_renamed_folder_takes_its_notes_state_along() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let e = engine(dir.path());
        ran(&e, "notes/a.md", A, true);
        ran(&e, "notes/sub/b.md", B, true);
        ran(&e, "notesmore.md", C, true);
        std::fs::create_dir_all(dir.path().join("archive")).unwrap_or_else(|e| panic!("{e}"));
        e.renamed(&dir.path().join("notes"), &dir.path().join("archive"));
        assert_eq!(ids(&e, "archive/a.md"), [A]);
        assert_eq!(ids(&e, "archive/sub/b.md"), [B]);
        assert!(ids(&e, "notes/a.md").is_empty() && ids(&e, "notes/sub/b.md").is_empty());
        assert_eq!(ids(&e, "notesmore.md"), [C], "a sibling that shares the prefix stays");
        assert_eq!(memory_of(&e, "archive/sub/b.md"), "notes/sub/b.md");
        assert_eq!(transcript_note(&e.store, B).as_deref(), Some("archive/sub/b.md"));
        let info = e.history(&dir.path().join("archive/a.md"));
        assert_eq!(info.iter().map(|r| r.lines_added).collect::<Vec<_>>(), [Some(1)]);
    }

    #[test]
    fn a_move_is_found_without_transcripts_and_an_interrupted_one_is_taken_up() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let e = engine(dir.path());
        // The transcripts are pruned: the history folder's marker names the note.
        ran(&e, "a.md", A, false);
        write(dir.path(), "b.md", &note(A));
        e.adopt(&dir.path().join("b.md"));
        assert_eq!(ids(&e, "b.md"), [A]);
        assert_eq!(memory_of(&e, "b.md"), "a.md");
        // Interrupted after the transcripts were rewritten, before the history moved.
        ran(&e, "c.md", B, true);
        rekey_transcripts(&e.store, "c.md", "d.md");
        write(dir.path(), "d.md", &note(B));
        e.adopt(&dir.path().join("d.md"));
        assert_eq!(ids(&e, "d.md"), [B]);
        assert!(ids(&e, "c.md").is_empty());
    }

    #[test]
    fn a_note_moved_onto_a_path_with_state_merges_and_a_copy_takes_nothing() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let e = engine(dir.path());
        // b.md's state is left from a note that was deleted; a.md is then moved there.
        ran(&e, "b.md", A, true);
        ran(&e, "a.md", B, true);
        write(dir.path(), "b.md", &note(B));
        e.adopt(&dir.path().join("b.md"));
        assert_eq!(ids(&e, "b.md"), [A, B]);
        assert!(ids(&e, "a.md").is_empty());
        // b.md's own memory stays; a.md's is left where it was, not overwritten.
        assert_eq!(memory_of(&e, "b.md"), "b.md");
        // A copy of b.md while b.md is there: nothing moves, now or later.
        write(dir.path(), "copy.md", &note(B));
        e.adopt(&dir.path().join("copy.md"));
        assert!(ids(&e, "copy.md").is_empty());
        assert_eq!(ids(&e, "b.md"), [A, B]);
        // Nothing that names a run of its own moves anything.
        write(dir.path(), "x.md", &note(C));
        e.adopt(&dir.path().join("x.md"));
        assert_eq!(ids(&e, "b.md"), [A, B]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Run(usize),
        Copy(usize),
        Move(usize),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            (0usize..8).prop_map(Op::Run),
            (0usize..8).prop_map(Op::Copy),
            (0usize..8).prop_map(Op::Move)
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Runs, copies and moves in any order, each moved note looked at first (as the editor's
        /// rename or the user's next command does): every note's history is exactly the runs
        /// of its own identity, which a copy does not share and a move keeps.
        #[test]
        fn runs_copies_and_moves_match_a_model(ops in proptest::collection::vec(op(), 1..12)) {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let e = engine(dir.path());
            // The model: file -> (its identity, its lastRunId); identity -> its runs.
            let mut files: std::collections::BTreeMap<String, (usize, Option<String>)> = Default::default();
            let mut runs: Vec<Vec<String>> = vec![Vec::new()];
            files.insert("n0.md".to_owned(), (0, None));
            write(dir.path(), "n0.md", "---\nlive:\n  objective: x\n---\n# T\n");
            let (mut names, mut ids_made) = (1, 0);
            for op in ops {
                let pick = |i: usize| files.keys().nth(i % files.len()).cloned().unwrap_or_default();
                match op {
                    Op::Run(i) => {
                        let f = pick(i);
                        // A run adopts first, then keeps its snapshot under the note's name.
                        e.adopt(&dir.path().join(&f));
                        ids_made += 1;
                        let id = format!("01KAT5B2X0000000000000{ids_made:04}");
                        ran(&e, &f, &id, true);
                        write(dir.path(), &f, &note(&id));
                        let entry = files.get_mut(&f).unwrap_or_else(|| panic!("{f}"));
                        runs[entry.0].push(id.clone());
                        entry.1 = Some(id);
                    }
                    Op::Copy(i) => {
                        let f = pick(i);
                        let to = format!("n{names}.md");
                        names += 1;
                        std::fs::copy(dir.path().join(&f), dir.path().join(&to)).unwrap_or_else(|e| panic!("{e}"));
                        let last = files[&f].1.clone();
                        runs.push(Vec::new());
                        files.insert(to, (runs.len() - 1, last));
                    }
                    Op::Move(i) => {
                        let f = pick(i);
                        let to = format!("n{names}.md");
                        names += 1;
                        std::fs::rename(dir.path().join(&f), dir.path().join(&to)).unwrap_or_else(|e| panic!("{e}"));
                        let entry = files.remove(&f).unwrap_or_else(|| panic!("{f}"));
                        files.insert(to.clone(), entry);
                        e.adopt(&dir.path().join(&to));
                    }
                }
                for (f, (identity, _)) in &files {
                    e.adopt(&dir.path().join(f));
                    proptest::prop_assert_eq!(&ids(&e, f), &runs[*identity], "{} after {:?}", f, files);
                }
            }
        }
    }
}
