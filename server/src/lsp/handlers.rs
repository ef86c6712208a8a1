//! The LSP handlers: translate parameters, take a snapshot, delegate to `ide::*` or the
//! index, translate back. Notifications mutate state synchronously; anything that waits on the
//! client is spawned.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use super::convert;
use super::documents::{Document, Snapshot};
use super::state::{ClientCaps, State};
use crate::ide::{self, Ctx, commands};
use crate::note::{self, rewrite};
use crate::status::{self, RunFacts};
use crate::text::{Encoding, LineIndex, TextEdit};
use crate::workspace::{self, index::Index};

pub(super) fn note_options() -> note::Options<'static> {
    // Provider names come with configuration; until then the check is skipped.
    note::Options { providers: None, scan_body: true }
}

fn is_note(uri: &Uri, language_id: Option<&str>) -> bool {
    language_id == Some("markdown") || uri.to_file_path().is_some_and(|p| workspace::is_markdown(&p))
}

pub fn initialize(state: &State, params: InitializeParams) -> InitializeResult {
    let caps = &params.capabilities;
    let utf8 = caps
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref())
        .is_some_and(|encs| encs.contains(&PositionEncodingKind::UTF8));
    let ws = caps.workspace.as_ref();
    let client = ClientCaps {
        encoding: Some(if utf8 { Encoding::Utf8 } else { Encoding::Utf16 }),
        pull_diagnostics: caps.text_document.as_ref().is_some_and(|t| t.diagnostic.is_some()),
        lens_refresh: ws.and_then(|w| w.code_lens.as_ref()).and_then(|c| c.refresh_support).unwrap_or(false),
        hint_refresh: ws.and_then(|w| w.inlay_hint.as_ref()).and_then(|c| c.refresh_support).unwrap_or(false),
        diagnostic_refresh: ws
            .and_then(|w| w.diagnostics.as_ref())
            .and_then(|c| c.refresh_support)
            .unwrap_or(false),
        watched_files_registration: ws
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false),
    };
    let pull = client.pull_diagnostics;
    if let Ok(mut c) = state.caps.write() {
        *c = client;
    }
    let mut roots: Vec<PathBuf> = params
        .workspace_folders
        .iter()
        .flatten()
        .filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned()))
        .collect();
    #[allow(deprecated)]
    if roots.is_empty() {
        roots.extend(params.root_uri.as_ref().and_then(|u| u.to_file_path()).map(|p| p.into_owned()));
    }
    if let Ok(mut r) = state.roots.write() {
        *r = roots;
    }
    if let Some(settings) = params.initialization_options.and_then(client_settings)
        && let Ok(mut s) = state.settings.write()
    {
        *s = settings;
    }
    InitializeResult {
        server_info: Some(ServerInfo {
            name: "livenote".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        }),
        capabilities: ServerCapabilities {
            position_encoding: Some(if utf8 {
                PositionEncodingKind::UTF8
            } else {
                PositionEncodingKind::UTF16
            }),
            text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            })),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some(vec![":".to_owned(), " ".to_owned(), "-".to_owned()]),
                ..Default::default()
            }),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![
                    CodeActionKind::QUICKFIX,
                    CodeActionKind::REFACTOR,
                    CodeActionKind::SOURCE,
                ]),
                ..Default::default()
            })),
            code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
            inlay_hint_provider: Some(OneOf::Left(true)),
            workspace_symbol_provider: Some(OneOf::Left(true)),
            execute_command_provider: Some(ExecuteCommandOptions {
                commands: commands::ALL.iter().map(|c| (*c).to_owned()).collect(),
                ..Default::default()
            }),
            diagnostic_provider: pull.then(|| {
                DiagnosticServerCapabilities::Options(DiagnosticOptions {
                    identifier: Some("livenote".to_owned()),
                    inter_file_dependencies: false,
                    workspace_diagnostics: true,
                    ..Default::default()
                })
            }),
            ..Default::default()
        },
        offset_encoding: None,
    }
}

pub fn initialized(client: &Client, state: &Arc<State>) {
    tokio::spawn(publisher(client.clone(), state.clone()));
    tokio::spawn(refresh_ticker(client.clone(), state.clone()));
    // A client with no folder open (VS Code's single-file mode, Neovim outside a project)
    // gets its root from the first note it opens.
    if !state.roots.read().map(|r| r.is_empty()).unwrap_or(true) {
        start_roots(client, state);
    }
}

/// Engines, index, schedulers and file watching for the roots in `state.roots`.
fn start_roots(client: &Client, state: &Arc<State>) {
    create_engines(client, state);
    tokio::spawn(index_workspace(client.clone(), state.clone()));
}

/// With no workspace folder, the first note opened roots the workspace: the nearest folder
/// above it holding `.livenote.toml`, `.livenote/` or `.git`, else the note's own folder.
fn adopt_root(client: &Client, state: &Arc<State>, uri: &Uri) {
    let Some(path) = uri.to_file_path() else { return };
    let root = workspace::note_root(&path);
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    {
        let Ok(mut roots) = state.roots.write() else { return };
        if !roots.is_empty() {
            return;
        }
        roots.push(root.clone());
    }
    tracing::info!("root {} (no workspace folder; from the first open note)", root.display());
    start_roots(client, state);
}

/// Build the index off the async threads, then publish what it found.
async fn index_workspace(client: Client, state: Arc<State>) {
    let roots = root_excludes(&state);
    let started = std::time::Instant::now();
    let built = tokio::task::spawn_blocking(move || Index::build_per_root(&roots)).await;
    let Ok((index, problems)) = built else {
        tracing::error!("index workspace: the indexing task failed");
        return;
    };
    for p in problems {
        tracing::warn!("skip {p}");
    }
    let (notes, live) = (index.len(), index.live_notes().count());
    let with_problems: Vec<PathBuf> =
        index.entries().filter(|(_, e)| !e.diagnostics.is_empty()).map(|(p, _)| p.clone()).collect();
    if let Ok(mut slot) = state.index.write() {
        *slot = Some(index);
    }
    tokio::spawn(super::runs::start_scheduler(client.clone(), state.clone()));
    tracing::info!("indexed {notes} notes ({live} live) in {} ms", started.elapsed().as_millis());
    let caps = state.caps();
    if caps.pull_diagnostics {
        if caps.diagnostic_refresh {
            let _ = client.workspace_diagnostic_refresh().await;
        }
    } else {
        for p in with_problems {
            if let Some(uri) = Uri::from_file_path(&p) {
                state.mark_dirty(uri);
            }
        }
    }
    watch(client, state, caps).await;
}

/// Each root with its engine's `[scheduler] exclude` (none before the engine exists).
fn root_excludes(state: &State) -> Vec<(PathBuf, Vec<String>)> {
    let roots = state.roots.read().map(|r| r.clone()).unwrap_or_default();
    let engines = state.engines();
    roots
        .into_iter()
        .map(|root| {
            let exclude = engines
                .iter()
                .find(|e| e.root == root)
                .and_then(|e| e.config.read().ok().map(|c| c.scheduler.exclude.clone()))
                .unwrap_or_default();
            (root, exclude)
        })
        .collect()
}

/// After a configuration change: when a root's excludes changed, walk again (a note no longer
/// excluded must come back) and swap the index in.
fn reindex_if_excludes_changed(client: &Client, state: &Arc<State>) {
    let wanted = root_excludes(state);
    let same = state
        .with_index(|idx| {
            idx.excludes().len() == wanted.len()
                && idx
                    .excludes()
                    .iter()
                    .zip(&wanted)
                    .all(|(e, (r, g))| e.root() == r && e.globs() == g.as_slice())
        })
        .unwrap_or(true);
    if same {
        return;
    }
    let (client, state) = (client.clone(), state.clone());
    tokio::spawn(async move {
        let Ok((index, problems)) = tokio::task::spawn_blocking(move || Index::build_per_root(&wanted)).await
        else {
            return;
        };
        for p in problems {
            tracing::warn!("skip {p}");
        }
        tracing::info!("reindex: the excludes changed ({} notes)", index.len());
        if let Ok(mut slot) = state.index.write() {
            *slot = Some(index);
        }
        state.wake.notify_waiters();
        state.wake_events();
        refresh_views(&client, &state).await;
    });
}

/// One run engine per workspace root (with no workspace folder, the root of the first open
/// note: see `adopt_root`), with that root's configuration.
fn create_engines(client: &Client, state: &Arc<State>) {
    let roots = state.roots.read().map(|r| r.clone()).unwrap_or_default();
    let settings = state.settings();
    let io: Arc<dyn crate::runs::NoteIo> = Arc::new(super::runs::LspEditor::io(client, state));
    let engines: Vec<Arc<crate::runs::Engine>> = roots
        .iter()
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
            Arc::new(engine)
        })
        .collect();
    if let Ok(mut e) = state.engines.write() {
        *e = engines;
    }
    // Documents opened before (the first one roots a folderless client) know no providers yet.
    reanalyse_open_documents(state);
}

/// A root's configuration: the user's, the folder's `.livenote.toml` only when the user
/// trusts the folder with that content (SPEC 7), the client's settings.
fn load_config(
    state: &State,
    root: &Path,
    settings: Option<&Value>,
) -> (crate::config::Config, Vec<crate::config::ConfigProblem>) {
    crate::config::Config::load_gated(
        Some(root),
        settings,
        &crate::config::ProcessEnv,
        state.opts.trust.as_ref(),
    )
}

/// Reload one engine's configuration (trust granted or withdrawn, its `.livenote.toml`
/// changed), wake the schedulers and event processors, and redraw.
pub fn reload_config(client: &Client, state: &Arc<State>, engine: &Arc<crate::runs::Engine>) {
    let settings = state.settings();
    let (config, problems) = load_config(state, &engine.root, settings.as_ref());
    report_config_problems(client, &problems);
    if let Ok(mut c) = engine.config.write() {
        *c = config;
    }
    tracing::info!("reload configuration {}", engine.root.display());
    reindex_if_excludes_changed(client, state);
    reanalyse_open_documents(state);
    state.wake.notify_waiters();
    state.wake_events();
    let (client, state) = (client.clone(), state.clone());
    tokio::spawn(async move { refresh_views(&client, &state).await });
}

/// Reload the engine's configuration when it was loaded under another trust than the store
/// holds now (trusted or untrusted from a shell, or its `.livenote.toml` appeared): whether
/// the folder's file is used must follow the store.
pub fn sync_trust(client: &Client, state: &Arc<State>, engine: &Arc<crate::runs::Engine>) {
    let Some(store) = &state.opts.trust else { return };
    if !engine.root.join(crate::workspace::trust::CONFIG_FILE).exists() {
        return;
    }
    let uses_file = engine.config.read().is_ok_and(|c| c.ignored_folder.is_none());
    if store.check(&engine.root).is_trusted() != uses_file {
        reload_config(client, state, engine);
    }
}

/// The client's settings for livenote: `None` for "not sent" (`null`), else the settings
/// table, `Some(None)` when it is empty (the user set nothing, or removed the last setting:
/// the client layer is cleared). Clients nest them under `livenote` (VS Code's section
/// convention) or send the table itself.
fn client_settings(value: Value) -> Option<Option<Value>> {
    let value = match value {
        Value::Null => return None,
        Value::Object(mut map) if map.contains_key("livenote") => map.remove("livenote").unwrap_or_default(),
        other => other,
    };
    match &value {
        Value::Object(map) if !map.is_empty() => Some(Some(value)),
        // Lua clients (Neovim) cannot tell an empty table from an empty list and send `{}` as
        // `[]`: that is "no settings" too, not a mistake to warn about at every start.
        Value::Object(_) | Value::Null => Some(None),
        Value::Array(items) if items.is_empty() => Some(None),
        // Any other non-table is reported as a problem by the configuration loader.
        _ => Some(Some(value)),
    }
}

#[cfg(test)]
#[test]
fn client_settings_empty_in_any_encoding_clears_the_layer() {
    use serde_json::json;
    assert_eq!(client_settings(Value::Null), None);
    for empty in
        [json!({}), json!([]), json!({"livenote": {}}), json!({"livenote": []}), json!({"livenote": null})]
    {
        assert_eq!(client_settings(empty.clone()), Some(None), "{empty}");
    }
    assert_eq!(client_settings(json!({"livenote": {"a": 1}})), Some(Some(json!({"a": 1}))));
    // A list with something in it is still a mistake the loader reports.
    assert_eq!(client_settings(json!([1])), Some(Some(json!([1]))));
}

/// Log configuration problems; show the ones in the client's settings to the user, who cannot
/// see the server's log (problems in TOML files are also diagnostics of `livenote check`).
fn report_config_problems(client: &Client, problems: &[crate::config::ConfigProblem]) {
    for p in problems {
        tracing::warn!("config {p}");
    }
    let from_client: Vec<String> = problems
        .iter()
        .filter(|p| p.origin == crate::config::Origin::Client)
        .map(ToString::to_string)
        .collect();
    if !from_client.is_empty() {
        let client = client.clone();
        let msg = format!("livenote settings: {}", from_client.join("; "));
        tokio::spawn(async move { client.show_message(MessageType::WARNING, msg).await });
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
    tracing::info!("reload configuration from the client's settings");
    reindex_if_excludes_changed(client, state);
    reanalyse_open_documents(state);
    state.wake.notify_waiters();
    state.wake_events();
    let (client, state) = (client.clone(), state.clone());
    tokio::spawn(async move { refresh_views(&client, &state).await });
}

/// Keep the index current: through the client's file watcher when it can register one,
/// else through `notify`.
async fn watch(client: Client, state: Arc<State>, caps: ClientCaps) {
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

fn file_changed(client: &Client, state: &Arc<State>, path: &Path) {
    if let Ok(wakes) = state.event_wakes.read()
        && let Some((_, wake)) = wakes.iter().find(|(root, _)| crate::events::is_pending_path(root, path))
    {
        wake.notify_one();
        return;
    }
    if path.file_name().is_some_and(|n| n == crate::workspace::trust::CONFIG_FILE) {
        let engine = state.engines().into_iter().find(|e| path.parent() == Some(e.root.as_path()));
        if let Some(engine) = engine {
            reload_config(client, state, &engine);
            super::runs::config_changed(client, state, &engine);
        }
        return;
    }
    if !workspace::is_markdown(path) {
        return;
    }
    let changed = state.with_index_mut(|idx| idx.refresh(path)).unwrap_or(false);
    if let Some(uri) = Uri::from_file_path(path) {
        let open = state.docs().contains_key(&uri);
        if !open && !state.caps().pull_diagnostics {
            state.mark_dirty(uri);
        }
    }
    if changed {
        state.wake.notify_waiters();
        let (client, state) = (client.clone(), state.clone());
        tokio::spawn(async move { refresh_views(&client, &state).await });
    }
}

pub fn did_open(client: &Client, state: &Arc<State>, params: DidOpenTextDocumentParams) {
    let doc = params.text_document;
    if !is_note(&doc.uri, Some(&doc.language_id)) {
        return;
    }
    if state.roots.read().map(|r| r.is_empty()).unwrap_or(false) {
        adopt_root(client, state, &doc.uri);
    }
    state.docs().insert(doc.uri.clone(), Document::new(&doc.text, doc.version));
    state.doc_changed();
    state.mark_dirty(doc.uri);
}

pub fn did_change(state: &State, params: DidChangeTextDocumentParams) {
    let enc = state.encoding();
    let uri = params.text_document.uri;
    {
        let mut docs = state.docs();
        let Some(doc) = docs.get_mut(&uri) else { return };
        doc.apply(&params.content_changes, params.text_document.version, enc);
    }
    state.doc_changed();
    state.mark_dirty(uri);
}

pub fn did_close(state: &State, params: DidCloseTextDocumentParams) {
    let uri = params.text_document.uri;
    if state.docs().remove(&uri).is_some() {
        state.doc_changed();
        state.mark_dirty(uri);
    }
}

pub fn did_save(client: &Client, state: &Arc<State>, params: DidSaveTextDocumentParams) {
    if let Some(path) = params.text_document.uri.to_file_path() {
        file_changed(client, state, &path);
    }
}

pub fn did_change_watched_files(client: &Client, state: &Arc<State>, params: DidChangeWatchedFilesParams) {
    for change in params.changes {
        if let Some(path) = change.uri.to_file_path() {
            file_changed(client, state, &path);
        }
    }
}

/// Publishes diagnostics for the documents marked dirty, coalescing bursts: a burst of 2,000
/// changes publishes the latest text, in order, without a queue of stale work.
async fn publisher(client: Client, state: Arc<State>) {
    loop {
        state.dirty_signal.notified().await;
        if state.caps().pull_diagnostics {
            state.take_dirty();
            continue;
        }
        for uri in state.take_dirty() {
            let (diags, version) = diagnostics_for(&state, &uri);
            client.publish_diagnostics(uri, diags, version).await;
        }
    }
}

/// The diagnostics of an open document, or of a closed note from the index.
fn diagnostics_for(state: &State, uri: &Uri) -> (Vec<Diagnostic>, Option<i32>) {
    let enc = state.encoding();
    if let Some(snap) = snapshot(state, uri) {
        let diags = convert::diagnostics(&snap.text, &snap.lines, &snap.analysis.diagnostics, enc);
        return (diags, Some(snap.version));
    }
    let Some(path) = uri.to_file_path() else { return (Vec::new(), None) };
    let diags = state
        .with_index(|idx| {
            idx.get(&path).map(|e| {
                let lines = LineIndex::new(&e.head);
                convert::diagnostics(&e.head, &lines, &e.diagnostics, enc)
            })
        })
        .flatten()
        .unwrap_or_default();
    (diags, None)
}

pub(super) fn snapshot(state: &State, uri: &Uri) -> Option<Arc<Snapshot>> {
    let providers = providers_for(state, uri);
    let opts = note::Options { providers: providers.as_deref(), scan_body: true };
    state.docs().get_mut(uri).map(|d| d.snapshot(&opts))
}

/// The provider names a note at `uri` may use (its root's configuration, the folder's own
/// file included even before it is trusted); `None` outside every root: then nothing checks
/// `provider:`.
pub(super) fn providers_for(state: &State, uri: &Uri) -> Option<Vec<String>> {
    let path = uri.to_file_path()?;
    let engine = state.engine_for(&path)?;
    engine.config.read().ok().map(|c| c.names_for_notes())
}

/// The configuration changed (provider names among it): analyses of open documents are
/// computed again and their diagnostics published.
pub(super) fn reanalyse_open_documents(state: &State) {
    let uris: Vec<Uri> = {
        let mut docs = state.docs();
        docs.iter_mut()
            .map(|(u, d)| {
                d.forget_snapshot();
                u.clone()
            })
            .collect()
    };
    for uri in uris {
        state.mark_dirty(uri);
    }
}

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

/// Run an `ide` feature over the document's snapshot.
fn with_ctx<R>(
    state: &State,
    uri: &Uri,
    f: impl FnOnce(&Ctx<'_, crate::schedule::Zone>, &Snapshot) -> R,
) -> Option<R> {
    let snap = snapshot(state, uri)?;
    let zone = state.opts.zone;
    let path = uri.to_file_path();
    let providers = providers_for(state, uri).unwrap_or_default();
    let ctx = Ctx {
        text: &snap.text,
        analysis: &snap.analysis,
        now: state.opts.clock.now(),
        tz: &zone,
        providers: &providers,
        facts: facts(state, path.as_deref()),
    };
    Some(f(&ctx, &snap))
}

pub fn completion(state: &State, params: CompletionParams) -> Option<CompletionResponse> {
    let pos = params.text_document_position;
    let enc = state.encoding();
    let items = with_ctx(state, &pos.text_document.uri, |ctx, snap| {
        let offset = convert::offset(&snap.text, &snap.lines, pos.position, enc);
        ide::completion::completion(ctx, offset)
            .into_iter()
            .map(|c| CompletionItem {
                label: c.label.clone(),
                kind: Some(match c.kind {
                    ide::completion::CompletionKind::Key => CompletionItemKind::PROPERTY,
                    ide::completion::CompletionKind::Value => CompletionItemKind::VALUE,
                    ide::completion::CompletionKind::Snippet => CompletionItemKind::SNIPPET,
                    ide::completion::CompletionKind::Preset => CompletionItemKind::CONSTANT,
                    ide::completion::CompletionKind::Provider => CompletionItemKind::MODULE,
                }),
                detail: c.detail.clone(),
                documentation: c.documentation.clone().map(|d| {
                    Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: d })
                }),
                insert_text_format: Some(if c.snippet {
                    InsertTextFormat::SNIPPET
                } else {
                    InsertTextFormat::PLAIN_TEXT
                }),
                // Inserts already carry their indentation and the note's line ending.
                insert_text_mode: Some(InsertTextMode::AS_IS),
                text_edit: Some(CompletionTextEdit::Edit(tower_lsp_server::ls_types::TextEdit {
                    range: convert::range(&snap.text, &snap.lines, &c.replace, enc),
                    new_text: c.insert_text.clone(),
                })),
                sort_text: c.sort_text.clone(),
                filter_text: Some(c.label.clone()),
                ..Default::default()
            })
            .collect::<Vec<_>>()
    })?;
    Some(CompletionResponse::Array(items))
}

pub fn hover(state: &State, params: HoverParams) -> Option<Hover> {
    let pos = params.text_document_position_params;
    let enc = state.encoding();
    with_ctx(state, &pos.text_document.uri, |ctx, snap| {
        let offset = convert::offset(&snap.text, &snap.lines, pos.position, enc);
        ide::hover::hover(ctx, offset).map(|h| Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: h.markdown }),
            range: Some(convert::range(&snap.text, &snap.lines, &h.range, enc)),
        })
    })
    .flatten()
}

fn lsp_command(uri: &Uri, c: &ide::Command) -> Command {
    let mut args = vec![json!(uri.as_str())];
    args.extend(c.args.iter().cloned());
    Command { title: c.title.clone(), command: c.id.to_owned(), arguments: Some(args) }
}

pub fn code_action(state: &State, params: CodeActionParams) -> Option<CodeActionResponse> {
    let uri = params.text_document.uri;
    let enc = state.encoding();
    let version = state.docs().get(&uri).map(|d| d.version);
    with_ctx(state, &uri, |ctx, snap| {
        // Only here: whether there is something to undo takes a look at the note's history.
        let last_run_id = snap.analysis.live.as_ref().and_then(|l| l.last_run_id.as_deref());
        let undoable = uri
            .to_file_path()
            .is_some_and(|p| state.engine_for(&p).is_some_and(|e| e.can_undo(&p, &snap.text, last_run_id)));
        let ctx = &Ctx { facts: RunFacts { undoable, ..ctx.facts }, ..*ctx };
        let start = convert::offset(&snap.text, &snap.lines, params.range.start, enc);
        let end = convert::offset(&snap.text, &snap.lines, params.range.end, enc).max(start);
        let lsp_diags = convert::diagnostics(&snap.text, &snap.lines, &snap.analysis.diagnostics, enc);
        ide::actions::code_actions(ctx, start..end)
            .into_iter()
            .map(|a| {
                let kind = match a.kind {
                    ide::actions::ActionKind::QuickFix => CodeActionKind::QUICKFIX,
                    ide::actions::ActionKind::Refactor => CodeActionKind::REFACTOR_REWRITE,
                    ide::actions::ActionKind::Source => CodeActionKind::SOURCE,
                };
                let edit = (!a.edits.is_empty())
                    .then(|| convert::document_edit(&uri, version, &snap.text, &a.edits, enc));
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: a.title.clone(),
                    kind: Some(kind),
                    diagnostics: Some(
                        a.diagnostics.iter().filter_map(|&i| lsp_diags.get(i).cloned()).collect(),
                    ),
                    // An action with edits carries them (versioned) and no command: the client
                    // applies the edit itself; running the command too would rewrite twice.
                    command: if edit.is_some() {
                        None
                    } else {
                        a.command.as_ref().map(|c| lsp_command(&uri, c))
                    },
                    edit,
                    is_preferred: Some(a.preferred),
                    disabled: None,
                    data: None,
                })
            })
            .collect()
    })
}

pub fn code_lens(state: &State, params: CodeLensParams) -> Option<Vec<CodeLens>> {
    let uri = params.text_document.uri;
    let enc = state.encoding();
    with_ctx(state, &uri, |ctx, snap| {
        ide::lens::code_lenses(ctx)
            .into_iter()
            .map(|l| CodeLens {
                range: convert::range(&snap.text, &snap.lines, &l.range, enc),
                command: Some(match &l.command {
                    Some(c) => lsp_command(&uri, &ide::Command { title: l.title.clone(), ..c.clone() }),
                    // A lens without a command still needs one to show its title.
                    None => Command { title: l.title.clone(), command: String::new(), arguments: None },
                }),
                data: None,
            })
            .collect()
    })
}

pub fn inlay_hint(state: &State, params: InlayHintParams) -> Option<Vec<InlayHint>> {
    let uri = params.text_document.uri;
    let enc = state.encoding();
    with_ctx(state, &uri, |ctx, snap| {
        let start = convert::offset(&snap.text, &snap.lines, params.range.start, enc);
        let end = convert::offset(&snap.text, &snap.lines, params.range.end, enc).max(start);
        ide::hints::inlay_hints(ctx, start..end)
            .into_iter()
            .map(|h| InlayHint {
                position: convert::position(&snap.text, &snap.lines, h.offset, enc),
                label: InlayHintLabel::String(h.label.clone()),
                kind: None,
                text_edits: None,
                tooltip: h.tooltip.clone().map(InlayHintTooltip::String),
                padding_left: Some(true),
                padding_right: None,
                data: None,
            })
            .collect()
    })
}

/// Live notes whose title or path matches the query as a subsequence, best first.
pub fn symbol(state: &State, params: WorkspaceSymbolParams) -> Option<WorkspaceSymbolResponse> {
    let query = params.query.to_lowercase();
    let now = state.opts.clock.now();
    let zone = state.opts.zone;
    let enc = state.encoding();
    let trust = FactsCache::new(state);
    let found = state.with_index(|idx| {
        // Score everything (cheap), then build symbols for the best 200 only: statuses and
        // next fires cost a schedule computation each.
        let mut scored: Vec<(
            i64,
            &PathBuf,
            &Arc<crate::workspace::index::Entry>,
            &crate::note::model::Live,
        )> = idx
            .live_notes()
            .filter_map(|(path, entry, live)| {
                // An empty query (a picker opening) matches every note alike: no strings to build.
                let score = if query.is_empty() {
                    0
                } else {
                    fuzzy_score(&query, &entry.title.to_lowercase())
                        .max(fuzzy_score(&query, &rel_path(idx, path).to_lowercase()))?
                };
                Some((score, path, entry, live))
            })
            .collect();
        // Best score, then title, then path: a total order, so only the best 200 need sorting.
        type Scored<'a> =
            (i64, &'a PathBuf, &'a Arc<crate::workspace::index::Entry>, &'a crate::note::model::Live);
        let order = |a: &Scored, b: &Scored| {
            b.0.cmp(&a.0).then_with(|| a.2.title.cmp(&b.2.title)).then_with(|| a.1.cmp(b.1))
        };
        if scored.len() > SYMBOLS_MAX {
            scored.select_nth_unstable_by(SYMBOLS_MAX - 1, order);
            scored.truncate(SYMBOLS_MAX);
        }
        scored.sort_unstable_by(order);
        scored
            .into_iter()
            .filter_map(|(_, path, entry, live)| {
                let rel = rel_path(idx, path);
                let uri = Uri::from_file_path(path)?;
                let lines = LineIndex::new(&entry.head);
                let range = convert::range(&entry.head, &lines, &live.key_span, enc);
                let st = status::status(live, trust.facts(Some(path))).as_str();
                let next = entry
                    .schedule
                    .upcoming(live, now, &zone)
                    .next_due
                    .map(|t| {
                        if t <= now {
                            " · due now".to_owned()
                        } else {
                            format!(" · next {}", ide::text::at_local(t, now, &zone))
                        }
                    })
                    .unwrap_or_default();
                #[allow(deprecated)]
                let info = SymbolInformation {
                    name: entry.title.clone(),
                    kind: SymbolKind::FILE,
                    tags: None,
                    deprecated: None,
                    location: Location { uri, range },
                    container_name: Some(format!("{st}{next} · {rel}")),
                };
                Some(info)
            })
            .collect::<Vec<_>>()
    })?;
    Some(WorkspaceSymbolResponse::Flat(found))
}

/// The most workspace symbols answered at once (pickers show the best few anyway).
const SYMBOLS_MAX: usize = 200;

/// A note's path relative to its workspace root, for display.
pub(super) fn rel_path(idx: &crate::workspace::index::Index, path: &Path) -> String {
    idx.root_of(path).and_then(|r| path.strip_prefix(r).ok()).unwrap_or(path).display().to_string()
}

/// Subsequence match score: higher for earlier and contiguous matches; `None` if no match.
fn fuzzy_score(query: &str, candidate: &str) -> Option<i64> {
    if query.is_empty() {
        return Some(0);
    }
    let mut score = 0i64;
    let mut last: Option<usize> = None;
    let mut chars = candidate.char_indices();
    for q in query.chars().filter(|c| !c.is_whitespace()) {
        let (i, _) = chars.by_ref().find(|(_, c)| *c == q)?;
        score += match last {
            Some(l) if i == l + 1 => 10,
            _ => 1,
        };
        if i == 0 {
            score += 5;
        }
        last = Some(i);
    }
    Some(score * 100 - candidate.len() as i64)
}

pub fn document_diagnostic(
    state: &State,
    params: DocumentDiagnosticParams,
) -> DocumentDiagnosticReportResult {
    let (items, _) = diagnostics_for(state, &params.text_document.uri);
    DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(
        RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id: None, items },
        },
    ))
}

/// Diagnostics of every indexed note that is not open (open ones are pulled per document).
pub fn workspace_diagnostic(
    state: &State,
    _params: WorkspaceDiagnosticParams,
) -> WorkspaceDiagnosticReportResult {
    let enc = state.encoding();
    let open: Vec<Uri> = state.docs().keys().cloned().collect();
    let items = state
        .with_index(|idx| {
            idx.entries()
                .filter(|(_, e)| !e.diagnostics.is_empty())
                .filter_map(|(path, e)| {
                    let uri = Uri::from_file_path(path)?;
                    if open.contains(&uri) {
                        return None;
                    }
                    let lines = LineIndex::new(&e.head);
                    Some(WorkspaceDocumentDiagnosticReport::Full(WorkspaceFullDocumentDiagnosticReport {
                        uri,
                        version: None,
                        full_document_diagnostic_report: FullDocumentDiagnosticReport {
                            result_id: None,
                            items: convert::diagnostics(&e.head, &lines, &e.diagnostics, enc),
                        },
                    }))
                })
                .collect()
        })
        .unwrap_or_default();
    WorkspaceDiagnosticReportResult::Report(WorkspaceDiagnosticReport { items })
}

fn arg_uri(args: &[Value]) -> Result<Uri> {
    args.first()
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<Uri>().ok())
        .ok_or_else(|| Error::invalid_params("the first argument must be the note's URI"))
}

/// The note's current text and version: the open document, else the file on disk.
pub(super) fn current_text(state: &State, uri: &Uri) -> Result<(String, Option<i32>)> {
    if let Some(d) = state.docs().get(uri) {
        return Ok((d.text(), Some(d.version)));
    }
    let path = uri.to_file_path().ok_or_else(|| Error::invalid_params("not a file URI"))?;
    let text =
        workspace::read_note(&path).map_err(|e| Error::invalid_params(format!("{}: {e}", path.display())))?;
    Ok((text, None))
}

pub fn execute_command(
    client: &Client,
    state: &Arc<State>,
    params: ExecuteCommandParams,
) -> Result<Option<Value>> {
    let args = params.arguments;
    match params.command.as_str() {
        // The executeCommand forms of the typed requests, kept for older editor integrations.
        commands::LIST_NOTES => to_value(super::custom::list_notes(state)).map(Some),
        commands::NOTE_STATUS => {
            let uri = arg_uri(&args)?;
            super::custom::note_status(state, &uri).and_then(to_value).map(Some)
        }
        commands::MAKE_LIVE | commands::SET_ACTIVE | commands::MAKE_PASSIVE => {
            let uri = arg_uri(&args)?;
            let (text, version) = current_text(state, &uri)?;
            let edits = match params.command.as_str() {
                commands::MAKE_LIVE => rewrite::make_live(&text, None),
                commands::SET_ACTIVE => {
                    let active = args.get(1).and_then(Value::as_bool).ok_or_else(|| {
                        Error::invalid_params("livenote.setActive takes a boolean second argument")
                    })?;
                    rewrite::set_active(&text, active)
                }
                _ => rewrite::make_passive(&text),
            }
            .map_err(|e| Error::invalid_params(e.to_string()))?;
            spawn_apply(client, state, uri, version, text, edits);
            Ok(None)
        }
        commands::RUN => {
            let uri = arg_uri(&args)?;
            let path =
                uri.to_file_path().ok_or_else(|| Error::invalid_params("not a file URI"))?.into_owned();
            let engine = state
                .engine_for(&path)
                .ok_or_else(|| Error::invalid_params("the note is outside the workspace folders"))?;
            if engine.is_running(&path) {
                return Err(Error::invalid_params("the note is already updating"));
            }
            let context = args.get(1).and_then(Value::as_str).map(str::to_owned);
            sync_trust(client, state, &engine);
            // A run that needs the folder's untrusted `.livenote.toml` asks for trust first.
            let provider = current_text(state, &uri).ok().and_then(|(text, _)| {
                let analysis = note::analyze(&text, &note_options());
                analysis.live.and_then(|l| l.provider.map(|p| p.value))
            });
            let ignored = engine
                .config
                .read()
                .ok()
                .and_then(|c| c.needs_ignored_folder(provider.as_deref()).map(|i| (*i).clone()));
            match ignored {
                Some(ignored) => {
                    super::runs::ask_trust_then_run(client, state, engine, path, context, provider, ignored)
                }
                None => super::runs::spawn_run(client, state, engine, path, context),
            }
            Ok(None)
        }
        commands::STOP => {
            let uri = arg_uri(&args)?;
            let path =
                uri.to_file_path().ok_or_else(|| Error::invalid_params("not a file URI"))?.into_owned();
            Ok(Some(super::runs::stop(state, &path)))
        }
        commands::UNDO_LAST_RUN => {
            let uri = arg_uri(&args)?;
            let path =
                uri.to_file_path().ok_or_else(|| Error::invalid_params("not a file URI"))?.into_owned();
            let engine = state
                .engine_for(&path)
                .ok_or_else(|| Error::invalid_params("the note is outside the workspace folders"))?;
            // Optional second argument: `true` restores even over later edits.
            let force = args.get(1).and_then(Value::as_bool).unwrap_or(false);
            let client = client.clone();
            tokio::spawn(super::runs::undo(client, engine, path, force));
            Ok(None)
        }
        commands::TRUST_WORKSPACE => {
            let store = state
                .opts
                .trust
                .as_ref()
                .ok_or_else(|| Error::invalid_params("no user data dir to keep the trust store in"))?;
            // Only the workspace folders the editor opened: a URI names one of them, or a note
            // inside one (compared as canonical paths); no argument means all of them.
            let engines: Vec<Arc<crate::runs::Engine>> = match args.first().and_then(Value::as_str) {
                Some(_) => {
                    let uri = arg_uri(&args)?;
                    let path = uri
                        .to_file_path()
                        .ok_or_else(|| Error::invalid_params("not a file URI"))?
                        .into_owned();
                    let engine = state.engine_for(&path).ok_or_else(|| {
                        Error::invalid_params(format!(
                            "{} is not inside a workspace folder the editor opened; only those can be trusted here (or run `livenote trust DIR`)",
                            path.display()
                        ))
                    })?;
                    vec![engine]
                }
                None => state.engines(),
            };
            let mut trusted = Vec::new();
            for engine in &engines {
                let record = store
                    .trust(&engine.root)
                    .map_err(|e| Error::invalid_params(format!("trust {}: {e}", engine.root.display())))?;
                tracing::info!("trust {}", record.path);
                trusted.push(record.path);
                reload_config(client, state, engine);
            }
            Ok(Some(json!(trusted)))
        }
        other => Err(Error::invalid_params(format!("unknown command {other}"))),
    }
}

/// Send an edit to the client from a background task: awaiting the client's reply inside a
/// handler can deadlock the server (the same reader delivers the reply).
fn spawn_apply(
    client: &Client,
    state: &Arc<State>,
    uri: Uri,
    version: Option<i32>,
    text: String,
    edits: Vec<TextEdit>,
) {
    let client = client.clone();
    let enc = state.encoding();
    tokio::spawn(async move {
        let edit = convert::document_edit(&uri, version, &text, &edits, enc);
        match client.apply_edit(edit).await {
            Ok(r) if r.applied => {}
            Ok(r) => tracing::warn!(
                "apply edit {}: rejected: {}",
                uri.as_str(),
                r.failure_reason.unwrap_or_default()
            ),
            Err(e) => tracing::warn!("apply edit {}: {e}", uri.as_str()),
        }
    });
}

fn to_value(v: impl serde::Serialize) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::invalid_params(e.to_string()))
}

/// Cancelling a run's progress stops the run.
pub fn progress_cancel(state: &State, params: WorkDoneProgressCancelParams) {
    let path = state.progress_tokens().get(&params.token).cloned();
    if let Some(path) = path {
        super::runs::stop(state, &path);
    }
}

/// Ask the client to redraw lenses and hints (they carry times and statuses).
pub async fn refresh_views(client: &Client, state: &State) {
    let caps = state.caps();
    if caps.lens_refresh {
        let _ = client.code_lens_refresh().await;
    }
    if caps.hint_refresh {
        let _ = client.inlay_hint_refresh().await;
    }
}

/// Relative times ("5 min ago", "next 15:00") age: refresh once a minute, on the minute, but
/// only while an open document shows a live block.
async fn refresh_ticker(client: Client, state: Arc<State>) {
    loop {
        let now = state.opts.clock.now();
        let into_minute =
            now.timestamp_subsec_millis() as u64 + (now.timestamp().rem_euclid(60) as u64) * 1000;
        tokio::time::sleep(Duration::from_millis(60_000 - into_minute.min(59_999))).await;
        let shows_live = {
            let uris: Vec<Uri> = state.docs().keys().cloned().collect();
            uris.iter().any(|u| snapshot(&state, u).is_some_and(|s| s.analysis.live.is_some()))
        };
        // Trust granted or withdrawn from a shell takes effect within a minute here (at once
        // where the server watches files itself).
        for engine in state.engines() {
            sync_trust(&client, &state, &engine);
        }
        if shows_live {
            refresh_views(&client, &state).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fuzzy_score;

    #[test]
    fn fuzzy_prefers_contiguous_early_matches() {
        let a = fuzzy_score("chi", "chicago time");
        let b = fuzzy_score("chi", "weekly chart index");
        assert!(a > b, "{a:?} {b:?}");
        assert_eq!(fuzzy_score("xyz", "chicago"), None);
        assert_eq!(fuzzy_score("", "anything"), Some(0));
    }
}
