//! Run facts (running, trusted, scheduling off) that lenses, hints, statuses and lists show,
//! taken from memory once per request.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::state::State;
use crate::status::RunFacts;

/// Run facts (running, trusted, scheduling off) for one request: the engines and each root's
/// facts in the world ([`super::world::RootFacts`]: trust, locks held) are taken once, however
/// many notes the request covers. Nothing here reads the disk.
pub(super) struct FactsCache {
    /// Taken once per request: index-wide requests ask for every note.
    engines: Vec<Arc<crate::runs::Engine>>,
    /// Per engine, in the order of `engines`: the notes its registry runs now (usually none).
    running: Vec<Vec<PathBuf>>,
    /// Per engine, in the order of `engines`: its root's facts (`None` before first read).
    world: Vec<Option<Arc<super::world::RootFacts>>>,
    roots: Vec<PathBuf>,
    /// No trust store (no data folder): nothing is trusted.
    has_store: bool,
    /// Where a note held by another process's lock is told, so that its release is noticed.
    foreign: super::lock_watch::ForeignLocks,
}

impl FactsCache {
    pub(super) fn new(state: &State) -> Self {
        let engines = state.engines();
        FactsCache {
            running: engines.iter().map(|e| e.registry.running()).collect(),
            world: engines.iter().map(|e| state.world.root(&e.root)).collect(),
            engines,
            roots: state.roots.read().map(|r| r.clone()).unwrap_or_default(),
            has_store: state.opts.trust.is_some(),
            foreign: state.foreign_locks.clone(),
        }
    }

    /// The world's facts of the root `root`.
    fn root_facts(&self, root: &Path) -> Option<&Arc<super::world::RootFacts>> {
        let at = self.engines.iter().position(|e| e.root == root)?;
        self.world.get(at)?.as_ref()
    }

    /// Whether the deepest root holding `path` is trusted: a folder inside with its own
    /// `.livenote.toml` is a root of its own, trusted only by its own entry.
    fn trusted(&self, path: Option<&Path>) -> bool {
        let Some(path) = path.filter(|_| self.has_store) else { return false };
        let root = self
            .roots
            .iter()
            .filter(|r| crate::workspace::is_within(path, r))
            .max_by_key(|r| r.as_os_str().len());
        root.and_then(|r| self.root_facts(r)).is_some_and(|f| f.trusted)
    }

    /// The note's block with its root's record of a run into an editor's buffer that its file
    /// does not show yet (`runs::attempts`, kept in memory): what the due checks count.
    pub(super) fn attempted<'a>(
        &self,
        path: &Path,
        live: &'a crate::note::model::Live,
    ) -> std::borrow::Cow<'a, crate::note::model::Live> {
        match super::state::engine_among(&self.engines, path) {
            Some(engine) => engine.attempted(path, live),
            None => std::borrow::Cow::Borrowed(live),
        }
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
                    let held = self.root_facts(&e.root).is_some_and(|f| f.held.contains(p));
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
/// looked up only where it is shown, and then kept. Outside every workspace folder there is none.
pub(super) fn memory_entries(state: &State, path: Option<&Path>) -> crate::ide::memory::Entries {
    let Some((path, engine)) = path.and_then(|p| state.engine_for(p).map(|e| (p, e))) else { return Ok(0) };
    // Read once per note, then from memory until a memory file's event or a run's end.
    state.world.memory(path, || {
        crate::memory::store::MemoryStore::new(&engine.root).load(&engine.rel(path)).map(|m| m.len())
    })
}

/// The note's analysis with its latest run's end put back, when its text lost it and this
/// machine's run store kept it (`status::settled`: `u` in the editor after a run takes the
/// result's fields out of the buffer but not `lastAttemptAt`); `None` when nothing changes.
/// From memory: a run's end is read once per run id ([`super::world::World::run_end`]), and
/// only for a note whose text shows its latest run started and not ended.
pub(super) fn settled(
    state: &State,
    path: Option<&Path>,
    analysis: &crate::note::Analysis,
) -> Option<crate::note::Analysis> {
    let live = analysis.live.as_ref()?;
    let id = crate::status::awaiting_end(live)?;
    let engine = state.engine_for(path?)?;
    let end = state.world.run_end(&engine.root, id, || engine.recorded_end(id))?;
    let mut settled = analysis.clone();
    settled.live = Some(crate::status::settled(live, end)?);
    Some(settled)
}
