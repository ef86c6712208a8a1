//! File events: the watcher (the client's when it can register one, else `notify`) and what
//! one changed file means (a note, a pending event, a `.livenote.toml`, the trust store).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::config_sync::{reload_config, sync_trust};
use super::refresh::refresh_views;
use super::state::{ClientCaps, State};
use crate::workspace;

/// Keep the index current: through the client's file watcher when it can register one,
/// else through `notify`.
pub(super) async fn watch(client: Client, state: Arc<State>, caps: ClientCaps) {
    if caps.watched_files_registration {
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
                // A changed config is untrusted until trusted again: reload and ask.
                FileSystemWatcher {
                    glob_pattern: GlobPattern::String("**/.livenote.toml".to_owned()),
                    kind: None,
                },
            ],
        };
        let registration = Registration {
            id: "livenote-watch".to_owned(),
            method: "workspace/didChangeWatchedFiles".to_owned(),
            register_options: serde_json::to_value(options).ok(),
        };
        if let Err(e) = client.register_capability(vec![registration]).await {
            tracing::warn!("register file watcher: {e}");
        }
        return;
    }
    if !state.opts.watch_files {
        return;
    }
    let roots = state.roots.read().map(|r| r.clone()).unwrap_or_default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<PathBuf>();
    let watcher = <notify::RecommendedWatcher as notify::Watcher>::new(
        move |res: notify::Result<notify::Event>| {
            // Reads are events too (inotify's open/close); only changes matter, and reacting to
            // our own reads would loop.
            if let Ok(ev) = res
                && !matches!(ev.kind, notify::EventKind::Access(_) | notify::EventKind::Other)
            {
                for p in ev.paths {
                    let _ = tx.send(p);
                }
            }
        },
        // A symlinked folder is not watched through: `everything -> /` would watch the disk.
        notify::Config::default().with_follow_symlinks(false),
    );
    let mut watcher = match watcher {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("watch files: {e}");
            return;
        }
    };
    for root in &roots {
        if let Err(e) = notify::Watcher::watch(&mut watcher, root, notify::RecursiveMode::Recursive) {
            tracing::warn!("watch {}: {e}", root.display());
        }
    }
    // The trust store: trust granted or withdrawn from a shell applies at once.
    let trust_file = state.opts.trust.as_ref().map(|t| t.file());
    if let Some(dir) = trust_file.as_deref().and_then(Path::parent) {
        let _ = std::fs::create_dir_all(dir);
        let _ = notify::Watcher::watch(&mut watcher, dir, notify::RecursiveMode::NonRecursive);
    }
    while let Some(path) = rx.recv().await {
        if trust_file.as_deref() == Some(path.as_path()) {
            for engine in state.engines() {
                sync_trust(&client, &state, &engine);
            }
            continue;
        }
        file_changed(&client, &state, &path);
    }
}

pub(super) fn file_changed(client: &Client, state: &Arc<State>, path: &Path) {
    let Some(service) = state.service_for(path) else {
        // Before the roots' triggers start (indexing), a note still refreshes the index.
        if workspace::is_markdown(path) {
            note_changed(client, state, path);
        }
        return;
    };
    let refresh = |p: &Path| note_changed(client, state, p);
    let reload = || {
        reload_config(client, state, &service.engine);
        super::runs::config_changed(client, state, &service.engine);
    };
    service.on_file(path, &refresh, &reload);
}

/// Re-read a note into the index; publish its diagnostics when it is closed (push clients),
/// and redraw when its frontmatter changed. Whether the scheduler must re-plan.
fn note_changed(client: &Client, state: &Arc<State>, path: &Path) -> bool {
    let changed = state.with_index_mut(|idx| idx.refresh(path)).unwrap_or(false);
    if let Some(uri) = Uri::from_file_path(path) {
        let open = state.docs().contains_key(&uri);
        if !open && !state.caps().pull_diagnostics {
            state.mark_dirty(uri);
        }
    }
    if changed {
        let (client, state) = (client.clone(), state.clone());
        tokio::spawn(async move { refresh_views(&client, &state).await });
    }
    changed
}
