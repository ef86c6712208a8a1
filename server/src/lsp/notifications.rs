//! Notifications from the client: documents opened, changed, closed and saved, watched files,
//! configuration, progress cancelled. They change state synchronously, in arrival order;
//! anything that waits on the client is spawned.

use std::sync::Arc;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::config_sync::{client_settings, load_config, reindex_if_excludes_changed, report_config_problems};
use super::documents::Document;
use super::file_events::file_changed;
use super::file_uri::FilePath;
use super::lifecycle::adopt_root;
use super::snapshots::reanalyse_open_documents;
use super::state::State;
use crate::workspace;

fn is_note(uri: &Uri, language_id: Option<&str>) -> bool {
    language_id == Some("markdown") || uri.file_path().is_some_and(|p| workspace::is_markdown(&p))
}

pub fn did_open(client: &Client, state: &Arc<State>, params: DidOpenTextDocumentParams) {
    let doc = params.text_document;
    if !is_note(&doc.uri, Some(&doc.language_id)) {
        return;
    }
    if state.roots.read().map(|r| r.is_empty()).unwrap_or(false) {
        adopt_root(client, state, &doc.uri);
    }
    state.client_uris().document(&doc.uri);
    state.docs().insert(doc.uri.clone(), Document::new(doc.text, doc.version));
    state.doc_changed();
    state.mark_dirty(doc.uri);
}

pub fn did_change(state: &State, params: DidChangeTextDocumentParams) {
    let enc = state.encoding();
    let uri = params.text_document.uri;
    {
        let mut docs = state.docs();
        let Some(doc) = docs.get_mut(&uri) else { return };
        doc.apply(params.content_changes, params.text_document.version, enc);
    }
    state.doc_changed();
    state.mark_dirty(uri);
}

pub fn did_close(state: &State, params: DidCloseTextDocumentParams) {
    let uri = params.text_document.uri;
    if state.docs().remove(&uri).is_some() {
        state.client_uris().closed(&uri);
        state.doc_changed();
        state.mark_dirty(uri);
    }
}

/// `workspace/didRenameFiles`: the editor renamed notes or folders; what livenote keeps of
/// each note (history, transcripts, memory) follows it (`runs::identity`). Done here, before
/// the next message, so that a command on the new name finds the note's history.
pub fn did_rename_files(state: &State, params: RenameFilesParams) {
    for f in params.files {
        let path = |s: &str| s.parse::<Uri>().ok().and_then(|u| u.file_path());
        let (Some(old), Some(new)) = (path(&f.old_uri), path(&f.new_uri)) else { continue };
        // Both names (and, for a folder, what is under them) resolve and keep otherwise now.
        for p in [&old, &new] {
            state.world.forget_canonical(p);
            state.world.forget_memory(p);
            state.world.forget_undo(p);
        }
        // Within one root: a note moved to another folder's root starts fresh there.
        if let Some(engine) = state.engine_for(&new)
            && workspace::is_within(&old, &engine.root)
        {
            engine.renamed(&old, &new);
        }
    }
}

pub fn did_save(client: &Client, state: &Arc<State>, params: DidSaveTextDocumentParams) {
    if let Some(path) = params.text_document.uri.file_path() {
        file_changed(client, state, &path);
    }
}

pub fn did_change_watched_files(client: &Client, state: &Arc<State>, params: DidChangeWatchedFilesParams) {
    for change in params.changes {
        if let Some(path) = change.uri.file_path() {
            file_changed(client, state, &path);
        }
    }
}

/// `workspace/didChangeConfiguration`: reload every root's configuration with the new client
/// layer; the scheduler and event processors read it at their next pass, so wake them.
pub fn did_change_configuration(client: &Client, state: &Arc<State>, params: DidChangeConfigurationParams) {
    let Some(settings) = client_settings(params.settings) else { return };
    if let Ok(mut s) = state.settings.write() {
        *s = settings.clone();
    }
    for engine in state.engines() {
        let (config, problems) = load_config(state, &engine.root, settings.as_ref());
        report_config_problems(client, &problems);
        if let Ok(mut c) = engine.config.write() {
            *c = config;
        }
        super::runs::offer_trust(client, state, &engine);
    }
    // Skill folders and MCP servers may be others now.
    super::snapshots::refresh_world(state);
    tracing::info!("reload configuration from the client's settings");
    reindex_if_excludes_changed(state);
    reanalyse_open_documents(state);
    state.wake.notify_waiters();
    state.wake_events();
    state.refresh_views_and_diagnostics();
}

/// Cancelling a run's progress stops the run.
pub fn progress_cancel(state: &State, params: WorkDoneProgressCancelParams) {
    let path = state.progress_tokens().get(&params.token).cloned();
    if let Some(path) = path {
        super::runs::stop(state, &path);
    }
}
