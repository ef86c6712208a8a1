//! Run facts (running, trusted, scheduling off) that lenses, hints, statuses and lists show,
//! looked up once per request.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::state::State;
use crate::status::RunFacts;

/// Run facts (running, trusted, scheduling off) for one request: the engines are taken once,
/// the trust list is read once and each root resolved once, however many notes the request
/// covers.
pub(super) struct FactsCache {
    /// Taken once per request: index-wide requests ask for every note.
    engines: Vec<Arc<crate::runs::Engine>>,
    /// Per engine, in the order of `engines`: the notes its registry runs now (usually none).
    running: Vec<Vec<PathBuf>>,
    roots: Vec<PathBuf>,
    list: Option<crate::workspace::trust::TrustList>,
    /// Per root, keyed by the path's bytes: hashing a `Path` parses its components, and every
    /// note asks.
    answers: std::cell::RefCell<std::collections::HashMap<std::ffi::OsString, bool>>,
    /// Per note folder (its bytes): not inside an untrusted nested folder with its own config.
    nested: std::cell::RefCell<std::collections::HashMap<std::ffi::OsString, bool>>,
    /// Per engine root: the lock files there are, listed once.
    locks:
        std::cell::RefCell<std::collections::HashMap<PathBuf, std::collections::HashSet<std::ffi::OsString>>>,
    /// Where a note held by another process's lock is told, so that its release is noticed.
    foreign: super::lock_watch::ForeignLocks,
}

impl FactsCache {
    pub(super) fn new(state: &State) -> Self {
        let engines = state.engines();
        FactsCache {
            running: engines.iter().map(|e| e.registry.running()).collect(),
            engines,
            roots: state.roots.read().map(|r| r.clone()).unwrap_or_default(),
            list: state.opts.trust.as_ref().map(|t| t.list()),
            answers: Default::default(),
            nested: Default::default(),
            locks: Default::default(),
            foreign: state.foreign_locks.clone(),
        }
    }

    fn trusted(&self, path: Option<&Path>) -> bool {
        let (Some(list), Some(path)) = (&self.list, path) else { return false };
        let root = self
            .roots
            .iter()
            .filter(|r| crate::workspace::is_within(path, r))
            .max_by_key(|r| r.as_os_str().len());
        let Some(root) = root else { return false };
        // Looked up before inserting: index-wide requests ask again for every note, and a hit
        // should not allocate.
        let known = self.answers.borrow().get(root.as_os_str()).copied();
        let root_trusted = known.unwrap_or_else(|| {
            let yes = list.contains(root);
            self.answers.borrow_mut().insert(root.as_os_str().to_owned(), yes);
            yes
        });
        // A folder inside with its own `.livenote.toml` needs its own trust (cached per folder).
        let Some(dir) = path.parent() else { return root_trusted };
        if !root_trusted {
            return false;
        }
        let known = self.nested.borrow().get(dir.as_os_str()).copied();
        known.unwrap_or_else(|| {
            let yes =
                crate::workspace::trust::nested_config_dir(root, path).is_none_or(|d| list.contains(&d));
            self.nested.borrow_mut().insert(dir.as_os_str().to_owned(), yes);
            yes
        })
    }

    pub(super) fn facts(&self, path: Option<&Path>) -> RunFacts {
        let engine = path.and_then(|p| super::state::engine_among(&self.engines, p));
        let registry_runs = |e: &Arc<crate::runs::Engine>, p: &Path| {
            let at = self.engines.iter().position(|x| Arc::ptr_eq(x, e));
            at.and_then(|i| self.running.get(i)).is_some_and(|r| r.iter().any(|r| r == p))
        };
        let running = match (path, &engine) {
            (Some(p), Some(e)) => {
                registry_runs(e, p) || {
                    if !self.locks.borrow().contains_key(&e.root) {
                        self.locks.borrow_mut().insert(e.root.clone(), e.store.lock_names());
                    }
                    let locks = self.locks.borrow();
                    // No lock file at all (a vault that never ran here): nothing to look up.
                    let held = locks
                        .get(&e.root)
                        .is_some_and(|names| !names.is_empty() && e.store.is_locked_among(&e.rel(p), names));
                    if held {
                        self.foreign.watch(p, e);
                    }
                    held
                }
            }
            _ => false,
        };
        let scheduling_off = engine.is_some_and(|e| !e.scheduling_enabled());
        let scheduled_on = engine.and_then(|e| e.scheduled_on()).map(|h| crate::machine::interned(&h));
        RunFacts { running, trusted: Some(self.trusted(path)), scheduling_off, undoable: false, scheduled_on }
    }
}

/// Facts for one path from the client: it counts as inside a root only when its canonical
/// path is (a `..` or a symlink leading out is outside).
pub(super) fn facts(state: &State, path: Option<&Path>) -> RunFacts {
    let inside = path.and_then(|p| state.engine_for(p).map(|_| p));
    FactsCache::new(state).facts(inside)
}

/// The note's agent memory, counted, for *Clear agent memory* and the `live` key's hover:
/// looked up only where it is shown. Outside every workspace folder there is none.
pub(super) fn memory_entries(state: &State, path: Option<&Path>) -> crate::ide::memory::Entries {
    let Some((path, engine)) = path.and_then(|p| state.engine_for(p).map(|e| (p, e))) else { return Ok(0) };
    crate::memory::store::MemoryStore::new(&engine.root).load(&engine.rel(path)).map(|m| m.len())
}
