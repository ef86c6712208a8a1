//! What requests know of the disk, held in memory (issue 26; rust-analyzer's
//! `GlobalState::snapshot`): per root its trust, the skills and MCP tools
//! its notes may name and the notes another process's lock holds; the canonical path of each
//! root and of each path a client named; what the latest runs cost, how much each note's
//! agent memory holds and what its history keeps for *Undo last run*. A request reads these and never opens,
//! stats or canonicalises a file. They are filled from the disk when a root appears and
//! refreshed by the file watcher and by the server's own changes (`snapshots::refresh_root`,
//! `file_events`), never by a request. docs/architecture.md says which fact comes from where.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use crate::cost::LastRun;
use crate::note::skills::SkillCatalog;
use crate::note::tools::McpCatalog;
use crate::status::RecordedEnd;

/// One root's facts, as one consistent, owned view: a request takes the `Arc` once.
#[derive(Debug, Default)]
pub struct RootFacts {
    /// Trusted with its configuration and the files it runs as they were at the last look.
    pub trusted: bool,
    /// The skills its notes may name: its own (trusted or not), the user's, livenote's.
    pub skills: Arc<SkillCatalog>,
    /// The MCP servers its notes may name, with the tools the cache knew.
    pub mcp: Arc<McpCatalog>,
    /// Notes whose run lock another process held at the last look.
    pub held: HashSet<PathBuf>,
}

/// Every root's facts, the canonical paths of client paths, and run costs by run id.
#[derive(Default)]
pub struct World {
    roots: RwLock<HashMap<PathBuf, Arc<RootFacts>>>,
    /// A client path → its canonical form (`None`: it could not be resolved), each resolved
    /// once, when first named; forgotten when a file event names the path.
    canonical: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
    /// Per root, a run id → what that run cost (`None`: running, no totals, or pruned).
    last_runs: Mutex<HashMap<PathBuf, HashMap<String, Option<LastRun>>>>,
    /// Per root, a run id → how it ended, when a success or a stop (`None`: running, failed,
    /// or pruned): for a note whose text lost its latest run's end (`status::settled`).
    run_ends: Mutex<HashMap<PathBuf, HashMap<String, Option<RecordedEnd>>>>,
    /// A note → how many entries its agent memory holds (or why it cannot be read).
    memory: Mutex<HashMap<PathBuf, crate::ide::memory::Entries>>,
    /// A note → the bodies its history keeps, as *Undo last run* compares them.
    undo: Mutex<HashMap<PathBuf, Arc<crate::runs::history::UndoHistory>>>,
    /// Per root, the latest events routing gave each note (hover on `eventMatchCriteria`).
    recent_events: Mutex<HashMap<PathBuf, crate::events::recent::RecentEvents>>,
}

fn unpoisoned<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl World {
    /// The facts of `root` (an engine's root as given); `None` before they were first read.
    pub fn root(&self, root: &Path) -> Option<Arc<RootFacts>> {
        self.roots.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(root).cloned()
    }

    pub fn set_root(&self, root: &Path, facts: RootFacts) {
        let mut roots = self.roots.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        roots.insert(root.to_path_buf(), Arc::new(facts));
    }

    /// Keep only the facts of `roots` (a nested root that went is forgotten).
    pub fn retain_roots(&self, roots: &[PathBuf]) {
        let mut all = self.roots.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        all.retain(|r, _| roots.contains(r));
        unpoisoned(&self.last_runs).retain(|r, _| roots.contains(r));
        unpoisoned(&self.run_ends).retain(|r, _| roots.contains(r));
    }

    /// Change one root's facts in place of a copy (a lock seen taken or released).
    pub fn update_root(&self, root: &Path, f: impl FnOnce(&mut RootFacts)) {
        let mut roots = self.roots.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(old) = roots.get(root) else { return };
        let mut facts = RootFacts {
            trusted: old.trusted,
            skills: old.skills.clone(),
            mcp: old.mcp.clone(),
            held: old.held.clone(),
        };
        f(&mut facts);
        roots.insert(root.to_path_buf(), Arc::new(facts));
    }

    /// The canonical form of a client path, resolved with `resolve` the first time it is named.
    pub fn canonical(&self, path: &Path, resolve: impl FnOnce(&Path) -> Option<PathBuf>) -> Option<PathBuf> {
        if let Some(known) = unpoisoned(&self.canonical).get(path) {
            return known.clone();
        }
        let found = resolve(path);
        unpoisoned(&self.canonical).insert(path.to_path_buf(), found.clone());
        found
    }

    /// A file event named `path`: it, and anything under it, may resolve differently now.
    pub fn forget_canonical(&self, path: &Path) {
        unpoisoned(&self.canonical).retain(|p, _| !p.starts_with(path));
    }

    /// What run `id` of `root` cost, read with `read` the first time it is asked for.
    pub fn last_run(&self, root: &Path, id: &str, read: impl FnOnce() -> Option<LastRun>) -> Option<LastRun> {
        if let Some(known) = unpoisoned(&self.last_runs).get(root).and_then(|m| m.get(id)) {
            return known.clone();
        }
        let found = read();
        unpoisoned(&self.last_runs)
            .entry(root.to_path_buf())
            .or_default()
            .insert(id.to_owned(), found.clone());
        found
    }

    /// How run `id` of `root` ended (a success or a stop), read with `read` the first time it is
    /// asked for.
    pub fn run_end(
        &self,
        root: &Path,
        id: &str,
        read: impl FnOnce() -> Option<RecordedEnd>,
    ) -> Option<RecordedEnd> {
        if let Some(known) = unpoisoned(&self.run_ends).get(root).and_then(|m| m.get(id)) {
            return *known;
        }
        let found = read();
        unpoisoned(&self.run_ends).entry(root.to_path_buf()).or_default().insert(id.to_owned(), found);
        found
    }

    /// The latest events routing gave the note at `rel` of `root`, newest first: the root's
    /// `done/` read the first time one is asked for, then only its new records, at
    /// [`World::events_done`].
    pub fn recent_events(&self, root: &Path, rel: &str) -> Vec<crate::note::sources::MatchedEvent> {
        let mut all = unpoisoned(&self.recent_events);
        let recent = all.entry(root.to_path_buf()).or_insert_with(|| {
            let mut r = crate::events::recent::RecentEvents::default();
            r.update(root);
            r
        });
        recent.for_note(rel).to_vec()
    }

    /// A record of `root`'s `done/` was written: read the new ones, when the root's were read.
    pub fn events_done(&self, root: &Path) {
        if let Some(recent) = unpoisoned(&self.recent_events).get_mut(root) {
            recent.update(root);
        }
    }

    /// Run `id`'s transcript changed (its final line written): read again when next asked.
    pub fn forget_run(&self, root: &Path, id: &str) {
        if let Some(m) = unpoisoned(&self.last_runs).get_mut(root) {
            m.remove(id);
        }
        if let Some(m) = unpoisoned(&self.run_ends).get_mut(root) {
            m.remove(id);
        }
    }

    /// How many entries the note at `path` keeps in its agent memory, read with `read` the first
    /// time it is asked for.
    pub fn memory(
        &self,
        path: &Path,
        read: impl FnOnce() -> crate::ide::memory::Entries,
    ) -> crate::ide::memory::Entries {
        if let Some(known) = unpoisoned(&self.memory).get(path) {
            return known.clone();
        }
        let found = read();
        unpoisoned(&self.memory).insert(path.to_path_buf(), found.clone());
        found
    }

    /// Forget what is known of the memory of the notes under `dir` (a memory file changed: a
    /// run saved, the user cleared it).
    pub fn forget_memory(&self, dir: &Path) {
        unpoisoned(&self.memory).retain(|p, _| !p.starts_with(dir));
    }

    /// The history *Undo last run* compares the note at `path` with, read with `read` the first
    /// time it is asked for.
    pub fn undo_history(
        &self,
        path: &Path,
        read: impl FnOnce() -> crate::runs::history::UndoHistory,
    ) -> Arc<crate::runs::history::UndoHistory> {
        if let Some(known) = unpoisoned(&self.undo).get(path) {
            return known.clone();
        }
        let found = Arc::new(read());
        unpoisoned(&self.undo).insert(path.to_path_buf(), found.clone());
        found
    }

    /// Forget the histories of the notes under `dir` (a run recorded one, an undo restored one,
    /// a note was renamed).
    pub fn forget_undo(&self, dir: &Path) {
        unpoisoned(&self.undo).retain(|p, _| !p.starts_with(dir));
    }

    /// Forget every cost of `root` known so far (a note changed its `lastRunId`).
    pub fn forget_runs(&self, root: &Path) {
        unpoisoned(&self.last_runs).remove(root);
        unpoisoned(&self.run_ends).remove(root);
    }
}
