//! Start-up: `initialize` (capabilities, roots, client settings), `initialized` (the background
//! tasks), the run engine of each root, the first index build, and the minute ticker.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::config_sync::{client_settings, root_excludes, sync_trust};
use super::file_events::{watch, watch_trust_store};
use super::file_uri::FilePath;
use super::refresh::{publisher, refresher};
use super::snapshots::snapshot;
use super::state::{ClientCaps, State};
use crate::ide::commands;
use crate::text::Encoding;
use crate::workspace::{self, index::Index};

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
        code_lens: caps.text_document.as_ref().is_some_and(|t| t.code_lens.is_some()),
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
        notes_changed: caps
            .experimental
            .as_ref()
            .and_then(|e| e.pointer("/livenote/notesChanged"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
        ask: caps
            .experimental
            .as_ref()
            .and_then(|e| e.pointer("/livenote/ask"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
        notify: caps
            .experimental
            .as_ref()
            .and_then(|e| e.pointer("/livenote/notify"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
        resolves_documentation: caps
            .text_document
            .as_ref()
            .and_then(|t| t.completion.as_ref())
            .and_then(|c| c.completion_item.as_ref())
            .and_then(|i| i.resolve_support.as_ref())
            .is_some_and(|r| r.properties.iter().any(|p| p == "documentation")),
    };
    let pull = client.pull_diagnostics;
    if let Ok(mut c) = state.caps.write() {
        *c = client;
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    for f in params.workspace_folders.iter().flatten() {
        state.client_uris().folder(&f.uri);
        roots.extend(f.uri.file_path());
    }
    #[allow(deprecated)]
    if roots.is_empty()
        && let Some(uri) = params.root_uri.as_ref()
    {
        state.client_uris().folder(uri);
        roots.extend(uri.file_path());
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
                // The cron presets' next fire times, for clients that resolve documentation.
                resolve_provider: Some(true),
                ..Default::default()
            }),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            definition_provider: Some(OneOf::Left(true)),
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
            // A renamed note keeps its history and memory (`runs::identity`); a folder's notes too.
            workspace: Some(WorkspaceServerCapabilities {
                workspace_folders: None,
                file_operations: Some(WorkspaceFileOperationsServerCapabilities {
                    did_rename: Some(FileOperationRegistrationOptions {
                        filters: [
                            ("**/*.{md,markdown}", FileOperationPatternKind::File),
                            ("**", FileOperationPatternKind::Folder),
                        ]
                        .into_iter()
                        .map(|(glob, kind)| FileOperationFilter {
                            scheme: Some("file".to_owned()),
                            pattern: FileOperationPattern {
                                glob: glob.to_owned(),
                                matches: Some(kind),
                                options: None,
                            },
                        })
                        .collect(),
                    }),
                    ..Default::default()
                }),
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
    tokio::spawn(refresher(client.clone(), state.clone()));
    if state.caps().notes_changed {
        tokio::spawn(super::custom::notes_notifier(client.clone(), state.clone()));
    }
    watch_trust_store(client, state);
    super::file_events::watch_user_folders(state);
    tokio::spawn(refresh_ticker(client.clone(), state.clone()));
    tokio::spawn(super::expiry::watcher(state.clone()));
    let redraw = state.clone();
    tokio::spawn(super::lock_watch::watcher(
        state.foreign_locks.clone(),
        state.opts.clock.clone(),
        move |free: &[(std::path::PathBuf, Arc<crate::runs::Engine>)]| {
            for (path, engine) in free {
                redraw.world.update_root(&engine.root, |f| {
                    f.held.remove(path);
                });
            }
            redraw.refresh_views();
        },
    ));
    // A client with no folder open (VS Code's single-file mode, Neovim outside a project)
    // gets its root from the first note it opens.
    if !state.roots.read().map(|r| r.is_empty()).unwrap_or(true) {
        start_roots(client, state);
    }
}

/// Engines, index, schedulers and file watching for the roots in `state.roots`.
fn start_roots(client: &Client, state: &Arc<State>) {
    super::roots::create_engines(client, state);
    tokio::spawn(index_workspace(client.clone(), state.clone()));
}

/// With no workspace folder, the first note opened roots the workspace: the nearest folder
/// above it holding `.livenote.toml`, `.livenote/` or `.git`, else the note's own folder.
pub(super) fn adopt_root(client: &Client, state: &Arc<State>, uri: &Uri) {
    let Some(path) = uri.file_path() else { return };
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
    super::roots::adopt_index(&client, &state, index);
    // The notes are known now: views that listed none before indexing list them.
    state.refresh_views();
    tokio::spawn(super::runs::start_scheduler(client.clone(), state.clone()));
    tracing::info!(
        "indexed {} ({live} live) in {} ms",
        crate::text::count(notes, "note"),
        started.elapsed().as_millis()
    );
    let caps = state.caps();
    if caps.pull_diagnostics {
        if caps.diagnostic_refresh {
            let _ = client.workspace_diagnostic_refresh().await;
        }
    } else {
        for p in with_problems {
            if let Some(uri) = state.uri_for(&p) {
                state.mark_dirty(uri);
            }
        }
    }
    watch(client, state, caps).await;
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
        // What no watcher may have announced (a file a configuration runs, under a client's
        // watcher that does not look there) is read again here, once a minute.
        super::snapshots::refresh_world(&state);
        if shows_live {
            state.refresh_views();
        }
    }
}
