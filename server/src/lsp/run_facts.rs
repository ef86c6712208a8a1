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
    roots: Vec<PathBuf>,
    list: Option<crate::workspace::trust::TrustList>,
    answers: std::cell::RefCell<std::collections::HashMap<PathBuf, bool>>,
    /// Per note folder: not inside an untrusted nested folder with its own config.
    nested: std::cell::RefCell<std::collections::HashMap<PathBuf, bool>>,
    /// Per engine root: the lock files there are, listed once.
    locks:
        std::cell::RefCell<std::collections::HashMap<PathBuf, std::collections::HashSet<std::ffi::OsString>>>,
}

impl FactsCache {
    pub(super) fn new(state: &State) -> Self {
        FactsCache {
            engines: state.engines(),
            roots: state.roots.read().map(|r| r.clone()).unwrap_or_default(),
            list: state.opts.trust.as_ref().map(|t| t.list()),
            answers: Default::default(),
            nested: Default::default(),
            locks: Default::default(),
        }
    }

    fn trusted(&self, path: Option<&Path>) -> bool {
        let (Some(list), Some(path)) = (&self.list, path) else { return false };
        let root =
            self.roots.iter().filter(|r| path.starts_with(r)).max_by_key(|r| r.as_os_str().len()).cloned();
        let Some(root) = root else { return false };
        let root_trusted =
            *self.answers.borrow_mut().entry(root.clone()).or_insert_with(|| list.contains(&root));
        // A folder inside with its own `.livenote.toml` needs its own trust (cached per folder).
        let Some(dir) = path.parent() else { return root_trusted };
        root_trusted
            && *self.nested.borrow_mut().entry(dir.to_path_buf()).or_insert_with(|| {
                crate::workspace::trust::nested_config_dir(&root, path).is_none_or(|d| list.contains(&d))
            })
    }

    pub(super) fn facts(&self, path: Option<&Path>) -> RunFacts {
        let engine = path.and_then(|p| super::state::engine_among(&self.engines, p));
        let running = match (path, &engine) {
            (Some(p), Some(e)) => {
                e.registry.is_running(p) || {
                    let mut locks = self.locks.borrow_mut();
                    let names = locks.entry(e.root.clone()).or_insert_with(|| e.store.lock_names());
                    e.store.is_locked_among(&e.rel(p), names)
                }
            }
            _ => false,
        };
        let scheduling_off = engine.is_some_and(|e| !e.scheduling_enabled());
        RunFacts { running, trusted: Some(self.trusted(path)), scheduling_off, undoable: false }
    }
}

/// Facts for one path from the client: it counts as inside a root only when its canonical
/// path is (a `..` or a symlink leading out is outside).
pub(super) fn facts(state: &State, path: Option<&Path>) -> RunFacts {
    let inside = path.and_then(|p| state.engine_for(p).map(|_| p));
    FactsCache::new(state).facts(inside)
}
