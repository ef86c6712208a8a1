//! The server's shared state: open documents, the workspace index, what the client can do,
//! and the channel that feeds the diagnostics publisher. Locks are std mutexes held briefly
//! and never across an `.await`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use tower_lsp_server::ls_types::Uri;

use super::documents::Document;
use crate::schedule::{Clock, Zone};
use crate::text::Encoding;
use crate::workspace::index::Index;

/// How the server is set up (tests inject a manual clock and a named zone).
#[derive(Clone)]
pub struct Options {
    pub clock: Arc<dyn Clock>,
    pub zone: Zone,
    /// Watch files with `notify` when the client cannot; tests turn it off.
    pub watch_files: bool,
    /// Where trusted workspaces are listed; `None` when no data dir exists (nothing trusted).
    pub trust: Option<crate::workspace::trust::TrustStore>,
    /// The MCP servers' tool lists as runs last saw them (`live.tools` completion, hover and
    /// checks); `None` when no data dir exists. Never a server started for them.
    pub mcp_tools: Option<Arc<crate::mcp::cache::ToolCache>>,
    /// The user's livenote folder, whose `skills/` notes may name; `None`: no user skills.
    pub user_dir: Option<std::path::PathBuf>,
}

/// What the client said it supports, fixed at `initialize`.
#[derive(Debug, Clone, Default)]
pub struct ClientCaps {
    pub encoding: Option<Encoding>,
    /// The client pulls diagnostics (`textDocument/diagnostic`); then none are pushed.
    pub pull_diagnostics: bool,
    /// The client draws code lenses (`textDocument.codeLens`): the status lens is shown, and
    /// the inlay hints leave the same status out (`ide::hints::Shown`).
    pub code_lens: bool,
    pub lens_refresh: bool,
    pub hint_refresh: bool,
    pub diagnostic_refresh: bool,
    pub watched_files_registration: bool,
    /// The client asked for `livenote/notesChanged` (`experimental.livenote.notesChanged`).
    pub notes_changed: bool,
    /// The client can prompt for a sentence (`experimental.livenote.ask`): it is offered the
    /// "Ask livenote…" code action.
    pub ask: bool,
    /// The client shows `livenote/notify` (`experimental.livenote.notify`); others get
    /// `window/showMessage`.
    pub notify: bool,
    /// The client resolves a completion item's documentation when it shows the item
    /// (`completionItem.resolveSupport` names `documentation`): costly documentation is left
    /// to `completionItem/resolve`.
    pub resolves_documentation: bool,
}

pub struct State {
    pub opts: Options,
    pub caps: RwLock<ClientCaps>,
    pub roots: RwLock<Vec<PathBuf>>,
    pub docs: Mutex<HashMap<Uri, Document>>,
    pub index: RwLock<Option<Index>>,
    /// Documents whose diagnostics must be (re)published; drained by the publisher task.
    pub dirty: Mutex<HashSet<Uri>>,
    pub dirty_signal: tokio::sync::Notify,
    /// One run engine per workspace root, created at `initialized`.
    pub engines: RwLock<Vec<Arc<crate::runs::Engine>>>,
    /// Wakes the schedulers to re-plan (index changed, trust granted, a run ended).
    pub wake: Arc<tokio::sync::Notify>,
    /// Per workspace root: wakes its event processor (a file appeared in events/pending/).
    pub services: RwLock<Vec<Arc<crate::triggers::RootService>>>,
    /// `$/progress` tokens of runs in progress, so cancelling one stops its run.
    pub progress: Mutex<HashMap<tower_lsp_server::ls_types::ProgressToken, PathBuf>>,
    /// The client's settings: the top configuration layer (SPEC 6), JSON shaped like the TOML.
    /// From `initializationOptions`, replaced by `workspace/didChangeConfiguration`.
    pub settings: RwLock<Option<serde_json::Value>>,
    /// Roots the trust question was asked for in this session (it is asked once).
    pub trust_asked: Mutex<HashSet<PathBuf>>,
    /// Counts changes of open documents (open, change, close): a run's edit waits on it until
    /// the buffer shows the edit.
    pub doc_changes: tokio::sync::watch::Sender<u64>,
    /// Answers written to the client as serialised (under the stdio transport).
    pub raw: super::raw_results::RawResults,
    /// Wakes the refresher: lenses and hints are to be redrawn (`refresh::refresher`).
    pub views_signal: tokio::sync::Notify,
    /// Wakes the `livenote/notesChanged` notifier with every `views_signal` (`custom`).
    pub notes_signal: tokio::sync::Notify,
    /// With `views_signal`: pulled diagnostics are to be asked for again too.
    pub diagnostics_stale: std::sync::atomic::AtomicBool,
    /// Notes shown as updating because another process holds their run lock
    /// (`lock_watch`), whose release no file event announces.
    pub foreign_locks: super::lock_watch::ForeignLocks,
    /// The client's own spelling of the URIs it gave (documents, workspace folders), given
    /// back for the same paths: an editor matches documents by the URI's text.
    pub client_uris: Mutex<super::file_uri::ClientUris>,
    /// What requests know of the disk, in memory (`world`): refreshed by file events and by
    /// the server's own changes, never read from the disk by a request.
    pub world: super::world::World,
    /// True once the workspace's first index is built: `workspace/symbol` asked before waits
    /// for it rather than answering nothing.
    pub indexed: tokio::sync::watch::Sender<bool>,
    /// The process's notifications (`notices::hub`), made with the first engine.
    pub notify: std::sync::OnceLock<Arc<crate::notify::Hub>>,
}

impl State {
    pub fn new(opts: Options) -> Self {
        State {
            opts,
            caps: RwLock::new(ClientCaps::default()),
            roots: RwLock::new(Vec::new()),
            docs: Mutex::new(HashMap::new()),
            index: RwLock::new(None),
            dirty: Mutex::new(HashSet::new()),
            dirty_signal: tokio::sync::Notify::new(),
            engines: RwLock::new(Vec::new()),
            wake: Arc::new(tokio::sync::Notify::new()),
            progress: Mutex::new(HashMap::new()),
            services: RwLock::new(Vec::new()),
            settings: RwLock::new(None),
            trust_asked: Mutex::new(HashSet::new()),
            doc_changes: tokio::sync::watch::Sender::new(0),
            raw: Default::default(),
            views_signal: tokio::sync::Notify::new(),
            notes_signal: tokio::sync::Notify::new(),
            diagnostics_stale: std::sync::atomic::AtomicBool::new(false),
            foreign_locks: Default::default(),
            client_uris: Mutex::new(Default::default()),
            world: Default::default(),
            indexed: tokio::sync::watch::Sender::new(false),
            notify: std::sync::OnceLock::new(),
        }
    }

    /// What lenses and hints show changed (trust, a note's runtime fields, a run starting or
    /// ending, the time): the client is asked to redraw them, from the refresher's task, once
    /// for a burst.
    pub fn refresh_views(&self) {
        self.views_signal.notify_one();
        self.notes_signal.notify_one();
    }

    /// [`State::refresh_views`], and a client that pulls diagnostics pulls them again (what a
    /// closed note or the configuration says changed).
    pub fn refresh_views_and_diagnostics(&self) {
        self.diagnostics_stale.store(true, std::sync::atomic::Ordering::Relaxed);
        self.refresh_views();
    }

    /// An open document changed: wake the runs waiting for their edits to show up.
    pub fn doc_changed(&self) {
        self.doc_changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub fn encoding(&self) -> Encoding {
        self.caps().encoding.unwrap_or(Encoding::Utf16)
    }

    /// True the first time it is called for `root`.
    pub fn first_trust_question(&self, root: &std::path::Path) -> bool {
        self.trust_asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(root.to_path_buf())
    }

    pub fn settings(&self) -> Option<serde_json::Value> {
        self.settings.read().map(|s| s.clone()).unwrap_or_default()
    }

    pub fn caps(&self) -> ClientCaps {
        self.caps.read().map(|c| c.clone()).unwrap_or_default()
    }

    /// Poisoning only means a handler panicked while holding the lock; the data is still
    /// usable and the server must keep serving.
    pub fn docs(&self) -> MutexGuard<'_, HashMap<Uri, Document>> {
        self.docs.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn client_uris(&self) -> MutexGuard<'_, super::file_uri::ClientUris> {
        self.client_uris.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `path`'s URI, in the client's spelling when it gave one for it or a folder above it.
    pub fn uri_for(&self, path: &std::path::Path) -> Option<Uri> {
        self.client_uris().uri_for(path)
    }

    pub fn mark_dirty(&self, uri: Uri) {
        self.dirty.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(uri);
        self.dirty_signal.notify_one();
    }

    pub fn take_dirty(&self) -> Vec<Uri> {
        self.dirty.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain().collect()
    }

    /// Wake every event processor (trust granted, or a pending event may have arrived).
    pub fn wake_events(&self) {
        if let Ok(services) = self.services.read() {
            for s in services.iter() {
                s.events_wake.notify_one();
            }
        }
    }

    /// The triggers of the root that holds `path` (the longest match).
    pub fn service_for(&self, path: &std::path::Path) -> Option<Arc<crate::triggers::RootService>> {
        let services = self.services.read().ok()?;
        services
            .iter()
            .filter(|s| path.starts_with(s.root()))
            .max_by_key(|s| s.root().as_os_str().len())
            .cloned()
    }

    pub fn engines(&self) -> Vec<Arc<crate::runs::Engine>> {
        self.engines.read().map(|e| e.clone()).unwrap_or_default()
    }

    /// The engine of the workspace root holding `path` (the longest matching root), for a
    /// path that came from the client: compared as canonical paths, so `..` or a symlink that
    /// leads out of the root is outside it. Each path is resolved once, when first named
    /// ([`super::world::World::canonical`]); a file event naming it has it resolved again.
    pub fn engine_for(&self, path: &std::path::Path) -> Option<Arc<crate::runs::Engine>> {
        use std::path::Component;
        if path.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)) {
            return None;
        }
        let canonical = self.world.canonical(path, canonical_path)?;
        self.engines()
            .into_iter()
            .filter_map(|e| self.world.canonical(&e.root, |r| std::fs::canonicalize(r).ok()).map(|r| (e, r)))
            .filter(|(_, r)| crate::workspace::is_within(&canonical, r))
            .max_by_key(|(_, r)| r.as_os_str().len())
            .map(|(e, _)| e)
    }

    pub fn progress_tokens(
        &self,
    ) -> MutexGuard<'_, HashMap<tower_lsp_server::ls_types::ProgressToken, PathBuf>> {
        self.progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn with_index<R>(&self, f: impl FnOnce(&Index) -> R) -> Option<R> {
        let guard = self.index.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        guard.as_ref().map(f)
    }

    pub fn with_index_mut<R>(&self, f: impl FnOnce(&mut Index) -> R) -> Option<R> {
        let mut guard = self.index.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        guard.as_mut().map(f)
    }
}

/// `path` with every symlink resolved; for a file that does not exist (yet), its folder's
/// canonical path and its name. `None` when neither exists.
pub fn canonical_path(path: &std::path::Path) -> Option<PathBuf> {
    match std::fs::canonicalize(path) {
        Ok(p) => Some(p),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let name = path.file_name()?;
            Some(std::fs::canonicalize(path.parent()?).ok()?.join(name))
        }
        Err(_) => None,
    }
}

/// The engine of the workspace root holding `path` among `engines` (the longest matching root),
/// for paths from the index (already under a root).
pub fn engine_among<'a>(
    engines: &'a [Arc<crate::runs::Engine>],
    path: &std::path::Path,
) -> Option<&'a Arc<crate::runs::Engine>> {
    engines
        .iter()
        .filter(|e| crate::workspace::is_within(path, &e.root))
        .max_by_key(|e| e.root.as_os_str().len())
}
