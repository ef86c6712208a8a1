//! File events: the workspace's watcher (the client's when it can register one, else
//! `notify`), the trust store's (`notify`, from `initialized` on), and what one changed file
//! means (a note, a pending event, a `.livenote.toml`, the trust store).

use std::path::Path;
use std::sync::Arc;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::config_sync::{reload_config, sync_trust};
use super::state::{ClientCaps, State};
use crate::triggers::watcher::Seen;
use crate::workspace;

/// Keep the index current: through the client's file watcher when it can register one,
/// else through `notify`.
pub(super) async fn watch(client: Client, state: Arc<State>, caps: ClientCaps) {
    if caps.watched_files_registration && register_watcher(&client).await {
        caught_up(&state);
        return;
    }
    if !state.opts.watch_files {
        return;
    }
    let roots = state.roots.read().map(|r| r.clone()).unwrap_or_default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Seen>();
    let Some(mut watcher) = watcher(tx) else { return };
    // A nested root is watched through the root around it.
    for root in roots.iter().filter(|r| !roots.iter().any(|o| o != *r && r.starts_with(o))) {
        if let Err(e) = notify::Watcher::watch(&mut watcher, root, notify::RecursiveMode::Recursive) {
            tracing::warn!("watch {}: {e}", root.display());
        }
    }
    caught_up(&state);
    while let Some(seen) = rx.recv().await {
        match seen {
            // Changes were lost (FSEvents coalescing, a full inotify queue): walk every root
            // again, as for a new nested root.
            Seen::Rescan => {
                crate::triggers::watcher::drain(&mut rx);
                super::roots::reroot(&client, &state);
            }
            // A trust store inside a root is [`watch_trust_store`]'s.
            Seen::Changed(path) if !state.opts.trust.as_ref().is_some_and(|t| t.is_store_file(&path)) => {
                file_changed(&client, &state, &path);
            }
            Seen::Changed(_) => {}
        }
    }
}

/// The watcher is on: what changed between the roots' facts being read and now (a lock taken
/// while the workspace was indexed) announced nothing, so they are read once more.
fn caught_up(state: &State) {
    super::snapshots::refresh_world_and_locks(state);
    state.refresh_views();
}

/// Watch the trust store (in the user's data folder, where no client's watcher looks): trust
/// granted or withdrawn from a shell applies at once. Set up before it returns, so that a
/// change made after the client's `initialized` is seen.
pub(super) fn watch_trust_store(client: &Client, state: &Arc<State>) {
    let Some(file) = state.opts.trust.as_ref().map(|t| t.file()) else { return };
    let Some(dir) = file.parent().filter(|_| state.opts.watch_files) else { return };
    let _ = std::fs::create_dir_all(dir);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Seen>();
    let Some(mut watcher) = watcher(tx) else { return };
    if let Err(e) = notify::Watcher::watch(&mut watcher, dir, notify::RecursiveMode::NonRecursive) {
        tracing::warn!("watch {}: {e}", dir.display());
        return;
    }
    let (client, state) = (client.clone(), state.clone());
    tokio::spawn(async move {
        let _watcher = watcher;
        while let Some(seen) = rx.recv().await {
            let is_store = match &seen {
                Seen::Rescan => {
                    crate::triggers::watcher::drain(&mut rx);
                    true
                }
                Seen::Changed(path) => state.opts.trust.as_ref().is_some_and(|t| t.is_store_file(path)),
            };
            if is_store {
                trust_changed(&client, &state);
            }
        }
    });
}

/// The shared `notify` watcher ([`crate::triggers::watcher`]), or `None` after saying why.
fn watcher(tx: tokio::sync::mpsc::UnboundedSender<Seen>) -> Option<notify::RecommendedWatcher> {
    crate::triggers::watcher::watcher(tx).map_err(|e| tracing::warn!("watch files: {e}")).ok()
}

/// Ask the client to watch the workspace's notes, pending events and `.livenote.toml` files;
/// whether it will.
async fn register_watcher(client: &Client) -> bool {
    let options = DidChangeWatchedFilesRegistrationOptions {
        watchers: vec![
            FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/*.{md,markdown}".to_owned()),
                kind: None,
            },
            FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/.livenote/events/pending/*.json".to_owned()),
                kind: None,
            },
            // Events processed (here or by `watch`): hover lists those routed to a note.
            FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/.livenote/events/done/*.json".to_owned()),
                kind: None,
            },
            // A changed config is untrusted until trusted again: reload and ask.
            FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/.livenote.toml".to_owned()),
                kind: None,
            },
            // What requests know from memory (`world`): run locks taken and released by other
            // processes' runs, the transcripts holding what runs cost.
            FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/.livenote/locks/*".to_owned()),
                kind: None,
            },
            FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/.livenote/runs/*.jsonl".to_owned()),
                kind: None,
            },
            FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/.livenote/memory/*".to_owned()),
                kind: None,
            },
            FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/.livenote/history/**".to_owned()),
                kind: None,
            },
            // Runs into another editor's buffer, which every due check counts.
            FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/.livenote/attempts/*".to_owned()),
                kind: None,
            },
        ],
    };
    let registration = Registration {
        id: "livenote-watch".to_owned(),
        method: "workspace/didChangeWatchedFiles".to_owned(),
        register_options: serde_json::to_value(options).ok(),
    };
    match client.register_capability(vec![registration]).await {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("register file watcher: {e}");
            false
        }
    }
}

/// The trust store changed (`livenote trust` or `untrust` in a shell): each root's
/// configuration follows it, the schedulers re-plan, and every live note's lenses and hints
/// show the new trust, whether or not its folder has a `.livenote.toml`.
fn trust_changed(client: &Client, state: &Arc<State>) {
    for engine in state.engines() {
        sync_trust(client, state, &engine);
    }
    super::snapshots::refresh_world(state);
    state.wake.notify_waiters();
    state.wake_events();
    state.refresh_views();
}

pub(super) fn file_changed(client: &Client, state: &Arc<State>, path: &Path) {
    state.world.forget_canonical(path);
    // A skill added, renamed or described anew, a file the configuration runs changed: open
    // notes' `live.skills` and `live.tools` are checked again, lenses show the trust now.
    if world_changed(state, path) {
        super::snapshots::reanalyse_open_documents(state);
        state.refresh_views();
    }
    super::snapshots::recent_events_changed(state, path);
    if super::roots::changes_roots(state, path) {
        super::roots::reroot(client, state);
        return;
    }
    let Some(service) = state.service_for(path) else {
        // Before the roots' triggers start (indexing), a note still refreshes the index.
        if workspace::is_markdown(path) {
            note_changed(state, path);
        }
        return;
    };
    let refresh = |p: &Path| note_changed(state, p);
    let reload = || {
        reload_config(client, state, &service.engine);
        super::runs::config_changed(client, state, &service.engine);
    };
    service.on_file(path, &refresh, &reload);
}

/// What a changed `path` changes of what requests know ([`super::world`]): a lock file, a
/// transcript, a note (its lock: another process's run writes it right after taking the lock),
/// else (a skill file, a folder, the configuration or a file it runs) the root's facts read
/// again. Whether the root's facts were.
fn world_changed(state: &Arc<State>, path: &Path) -> bool {
    let engines = state.engines();
    let Some(engine) = super::state::engine_among(&engines, path) else { return false };
    if let Ok(inside) = path.strip_prefix(engine.root.join(workspace::STATE_DIR)) {
        let mut parts = inside.components().map(|c| c.as_os_str().to_string_lossy());
        match (parts.next().as_deref(), parts.next()) {
            (Some("locks"), Some(name)) => super::snapshots::refresh_lock_file(state, engine, &name),
            (Some("locks"), None) => super::snapshots::refresh_locks(state, engine),
            (Some("runs"), Some(file)) => match file.strip_suffix(".jsonl") {
                Some(id) => state.world.forget_run(&engine.root, id),
                None => state.world.forget_runs(&engine.root),
            },
            (Some("runs"), None) => state.world.forget_runs(&engine.root),
            (Some("memory"), _) => state.world.forget_memory(&engine.root),
            (Some("history"), _) => state.world.forget_undo(&engine.root),
            // `.livenote/` itself appearing: what was created inside it before the watcher
            // looked there announces nothing of its own.
            (None, _) => {
                super::snapshots::refresh_locks(state, engine);
                engine.attempts.load();
                state.world.forget_runs(&engine.root);
                state.world.forget_memory(&engine.root);
                state.world.forget_undo(&engine.root);
            }
            _ => {}
        }
        return false;
    }
    if workspace::is_markdown(path) && !super::snapshots::is_skill_file(state, path) {
        super::snapshots::refresh_lock(state, path);
        state.world.forget_runs(&engine.root);
        return false;
    }
    if !affects_root_facts(engine, path) {
        return false;
    }
    super::snapshots::refresh_root(state, engine);
    true
}

/// Whether a changed `path` (not a note) can change its root's trust, skills or tools: the
/// folder's `.livenote.toml`, anything in a skills folder, a file the configuration runs. Other
/// files (`.git/`, an editor's swap files) cost nothing more than this look.
fn affects_root_facts(engine: &crate::runs::Engine, path: &Path) -> bool {
    let root = &engine.root;
    if path == crate::config::workspace_config_path(root) {
        return true;
    }
    let in_skills = engine.config.read().is_ok_and(|c| {
        c.skills.dirs.iter().any(|d| path.starts_with(root.join(d)) || root.join(d).starts_with(path))
    });
    in_skills || workspace::trust::runs_file(root, path)
}

/// Watch what requests know from outside the workspace: the MCP tool lists in the data folder
/// (a run of `watch` lists a server's tools) and the user's skills folder; a change under
/// either reads every root's facts again, other files there (the trust store, logs) are not
/// looked at here.
pub(super) fn watch_user_folders(state: &Arc<State>) {
    if !state.opts.watch_files {
        return;
    }
    // The tool lists' folder is made, as the trust store's is: a run's first list lands there.
    let tools = state.opts.mcp_tools.as_ref().map(|c| c.dir().to_path_buf());
    if let Some(dir) = &tools {
        let _ = std::fs::create_dir_all(dir);
    }
    let skills = state.opts.user_dir.as_ref().map(|d| d.join(crate::skills::USER_DIR));
    let wanted: Vec<std::path::PathBuf> = [tools, skills].into_iter().flatten().collect();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Seen>();
    let Some(mut watcher) = watcher(tx) else { return };
    for dir in &wanted {
        watch_or_parent(&mut watcher, dir);
    }
    let state = state.clone();
    tokio::spawn(async move {
        while let Some(seen) = rx.recv().await {
            let hit = match &seen {
                Seen::Rescan => true,
                Seen::Changed(path) => wanted.iter().any(|d| path.starts_with(d)),
            };
            if !hit {
                continue;
            }
            crate::triggers::watcher::drain(&mut rx);
            // The user's skills folder may have just been made (its parent was watched).
            for dir in &wanted {
                watch_or_parent(&mut watcher, dir);
            }
            super::snapshots::refresh_world(&state);
            super::snapshots::reanalyse_open_documents(&state);
            state.refresh_views();
        }
    });
}

/// Watch `dir` (recursively), or, while it does not exist, its parent (not recursively: where
/// it would appear). Watching a path twice is harmless.
fn watch_or_parent(watcher: &mut notify::RecommendedWatcher, dir: &Path) {
    let result = if dir.is_dir() {
        notify::Watcher::watch(watcher, dir, notify::RecursiveMode::Recursive)
    } else if let Some(parent) = dir.parent().filter(|p| p.is_dir()) {
        notify::Watcher::watch(watcher, parent, notify::RecursiveMode::NonRecursive)
    } else {
        Ok(())
    };
    if let Err(e) = result {
        tracing::warn!("watch {}: {e}", dir.display());
    }
}

/// Re-read a note into the index; publish its diagnostics when it is closed (push clients),
/// and redraw when its frontmatter changed. Whether the scheduler must re-plan.
fn note_changed(state: &Arc<State>, path: &Path) -> bool {
    let changed = state.with_index_mut(|idx| idx.refresh(path)).unwrap_or(false);
    if let Some(uri) = state.uri_for(path) {
        let open = state.docs().contains_key(&uri);
        if !open && !state.caps().pull_diagnostics {
            state.mark_dirty(uri);
        }
    }
    if changed {
        state.refresh_views_and_diagnostics();
    }
    changed
}
