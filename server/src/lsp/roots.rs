//! The roots of the language server: one per workspace folder (or the first open note's), and
//! one per folder inside with its own `.livenote.toml` ([`crate::workspace::roots`]), each
//! with its engine and triggers; found when the workspace is indexed, and again when a nested
//! `.livenote.toml` appears or goes.

use std::path::PathBuf;
use std::sync::Arc;

use tower_lsp_server::Client;

use super::config_sync::{load_config, report_config_problems, root_excludes};
use super::snapshots::reanalyse_open_documents;
use super::state::State;
use crate::workspace::{self, index::Index};

/// Put a freshly built index in place. Folders inside with their own `.livenote.toml` are
/// roots of their own ([`workspace::roots`]): those it found become roots with an engine each
/// (their configuration, trust and state); nested roots whose `.livenote.toml` is gone stop
/// being roots (their notes go back to the root around them). The caller starts the new roots'
/// triggers (`runs::start_scheduler`).
pub(super) fn adopt_index(client: &Client, state: &Arc<State>, index: Index) {
    let known = state.roots.read().map(|r| r.clone()).unwrap_or_default();
    let found: Vec<PathBuf> = index.roots().to_vec();
    let nested: Vec<PathBuf> = found.iter().filter(|r| !known.contains(r)).cloned().collect();
    let gone = unrooted(&known);
    if let Ok(mut slot) = state.index.write() {
        *slot = Some(index);
    }
    state.indexed.send_replace(true);
    super::config_sync::apply_backoff_caps(state);
    // The locks held are looked up among the notes the index holds now.
    super::snapshots::refresh_world_and_locks(state);
    if nested.is_empty() && gone.is_empty() {
        return;
    }
    for r in &nested {
        tracing::info!(
            "root {}: a folder with its own .livenote.toml, run with its own configuration",
            r.display()
        );
    }
    for r in &gone {
        tracing::info!("unroot {}: its .livenote.toml is gone", r.display());
    }
    if let Ok(mut roots) = state.roots.write() {
        roots.retain(|r| !gone.contains(r));
        roots.extend(nested);
    }
    if let Ok(mut engines) = state.engines.write() {
        engines.retain(|e| !gone.contains(&e.root));
    }
    if let Ok(mut services) = state.services.write() {
        services.retain(|s| !gone.iter().any(|g| g == s.root()));
    }
    create_engines(client, state);
    // Their own `[scheduler] exclude`, now that their configuration is loaded.
    super::config_sync::reindex_if_excludes_changed(state);
}

/// The roots inside another one that have no `.livenote.toml` of their own any more: a root
/// inside a root stays one only while it has its own configuration.
fn unrooted(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter(|r| roots.iter().any(|o| o != *r && r.starts_with(o)) && !workspace::roots::has_config(r))
        .cloned()
        .collect()
}

/// A `.livenote.toml` appeared in a folder inside a root, or a nested root's went: walk again
/// and adopt the roots found ([`adopt_index`]), with their triggers.
pub(super) fn reroot(client: &Client, state: &Arc<State>) {
    let (client, state) = (client.clone(), state.clone());
    tokio::spawn(async move {
        let mut wanted = root_excludes(&state);
        let gone = unrooted(&wanted.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>());
        wanted.retain(|(r, _)| !gone.contains(r));
        let Ok((index, problems)) = tokio::task::spawn_blocking(move || Index::build_per_root(&wanted)).await
        else {
            return;
        };
        for p in problems {
            tracing::warn!("skip {p}");
        }
        adopt_index(&client, &state, index);
        super::runs::start_scheduler(client.clone(), state.clone()).await;
        state.wake.notify_waiters();
        state.wake_events();
        state.refresh_views_and_diagnostics();
    });
}

/// Whether a changed `path` makes or unmakes a root: a `.livenote.toml` of a folder inside a
/// root that is not a root yet, or of a nested root that has none any more.
pub(super) fn changes_roots(state: &State, path: &std::path::Path) -> bool {
    let Some(dir) = path.parent() else { return false };
    if path.file_name().is_none_or(|n| n != workspace::trust::CONFIG_FILE) {
        return false;
    }
    let roots = state.roots.read().map(|r| r.clone()).unwrap_or_default();
    roots.iter().any(|r| workspace::is_within(dir, r) && !workspace::is_within(r, dir))
        && roots.iter().any(|r| r == dir) != workspace::roots::has_config(dir)
}

/// One run engine per workspace root (with no workspace folder, the root of the first open
/// note: see `adopt_root`; and each folder inside with its own `.livenote.toml`), with that
/// root's configuration. Roots that have one keep it.
pub(super) fn create_engines(client: &Client, state: &Arc<State>) {
    let mut engines = state.engines();
    let roots = state.roots.read().map(|r| r.clone()).unwrap_or_default();
    let settings = state.settings();
    let io: Arc<dyn crate::runs::NoteIo> = Arc::new(super::runs::LspEditor::io(client, state));
    let added: Vec<Arc<crate::runs::Engine>> = roots
        .iter()
        .filter(|root| !engines.iter().any(|e| &e.root == *root))
        .map(|root| {
            let (config, problems) = load_config(state, root, settings.as_ref());
            report_config_problems(client, &problems);
            let engine = crate::runs::Engine::new(
                root,
                state.opts.clock.clone(),
                state.opts.zone,
                io.clone(),
                config,
                state.opts.trust.clone(),
            );
            let observer =
                super::runs::ProgressObserver { client: client.clone(), state: Arc::downgrade(state) };
            if let Ok(mut o) = engine.observer.write() {
                *o = Some(Arc::new(observer));
            }
            if let Ok(mut n) = engine.notify.write() {
                *n = Some(super::notices::hub(client, state));
            }
            Arc::new(engine)
        })
        .collect();
    engines.extend(added);
    if let Ok(mut e) = state.engines.write() {
        *e = engines;
    }
    // What requests know of each root's trust, skills, tools and locks, read once here.
    super::snapshots::refresh_world(state);
    // Documents opened before (the first one roots a folderless client) know no providers yet.
    reanalyse_open_documents(state);
}
