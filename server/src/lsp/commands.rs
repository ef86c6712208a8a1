//! `workspace/executeCommand`: the note's rewrites (sent as a versioned `applyEdit` from a
//! spawned task), Run now, Stop, Undo, trust, and the command forms of the typed requests.

use std::sync::Arc;

use serde_json::{Value, json};
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use super::config_sync::{reload_config, sync_trust};
use super::convert;
use super::errors;
use super::file_uri::FilePath;
use super::snapshots::{current_text, note_options};
use super::state::State;
use crate::ide::commands;
use crate::note::{self, rewrite};
use crate::text::TextEdit;

fn arg_uri(args: &[Value]) -> Result<Uri> {
    args.first()
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<Uri>().ok())
        .ok_or_else(|| Error::invalid_params("the first argument must be the note's URI"))
}

/// The note the first argument names: its URI, path and the engine of its workspace folder.
pub(super) fn arg_note(
    state: &State,
    args: &[Value],
) -> Result<(Uri, std::path::PathBuf, Arc<crate::runs::Engine>)> {
    let uri = arg_uri(args)?;
    let path = uri.file_path().ok_or_else(|| Error::invalid_params("not a file URI"))?;
    let engine = state
        .engine_for(&path)
        .ok_or_else(|| Error::invalid_params("the note is outside the workspace folders"))?;
    Ok((uri, path, engine))
}

pub fn execute_command(
    client: &Client,
    state: &Arc<State>,
    params: ExecuteCommandParams,
) -> Result<Option<Value>> {
    let args = params.arguments;
    match params.command.as_str() {
        // The executeCommand forms of the typed requests, kept for older editor integrations.
        commands::LIST_NOTES => Ok(Some(super::custom::list_notes(state))),
        commands::NOTE_STATUS => {
            let uri = arg_uri(&args)?;
            super::custom::note_status(state, &uri).and_then(to_value).map(Some)
        }
        // `livenote.makeLive URI {describe, run}` (issue 25): a block drafted from a sentence,
        // or the template with a run; the model is asked from a spawned task.
        commands::MAKE_LIVE if args.get(1).is_some_and(Value::is_object) => {
            let (uri, path, engine) = arg_note(state, &args)?;
            let options = args.get(1).cloned().unwrap_or_default();
            let sentence = options.get("describe").and_then(Value::as_str).map(str::trim).unwrap_or_default();
            let run = options.get("run").and_then(Value::as_bool).unwrap_or(false);
            tokio::spawn(make_live(
                client.clone(),
                state.clone(),
                engine,
                uri,
                path,
                sentence.to_owned(),
                run,
            ));
            Ok(None)
        }
        commands::SET_SCHEDULE => {
            let uri = arg_uri(&args)?;
            let schedule =
                args.get(1).and_then(Value::as_str).and_then(rewrite::Schedule::from_id).ok_or_else(
                    || {
                        let ids: Vec<&str> = rewrite::Schedule::ALL.iter().map(|s| s.id()).collect();
                        Error::invalid_params(format!(
                            "livenote.setSchedule takes one of {} as its second argument",
                            ids.join(", ")
                        ))
                    },
                )?;
            let (text, version) = current_text(state, &uri)?;
            let edits = rewrite::set_schedule(&text, schedule).map_err(errors::failed)?;
            spawn_apply(client, state, uri, version, text, edits);
            Ok(None)
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
            .map_err(errors::failed)?;
            spawn_apply(client, state, uri, version, text, edits);
            Ok(None)
        }
        commands::RUN => {
            let (uri, path, engine) = arg_note(state, &args)?;
            if engine.is_running(&path) {
                return Err(errors::failed("the note is already updating"));
            }
            let context = args.get(1).and_then(Value::as_str).map(str::to_owned);
            run_now(client, state, &uri, &path, engine, context);
            Ok(None)
        }
        commands::STOP => {
            let uri = arg_uri(&args)?;
            let path = uri.file_path().ok_or_else(|| Error::invalid_params("not a file URI"))?;
            Ok(Some(super::runs::stop(state, &path)))
        }
        commands::UNDO_LAST_RUN => {
            let (_, path, engine) = arg_note(state, &args)?;
            // Optional second argument: `true` restores even over later edits.
            let force = args.get(1).and_then(Value::as_bool).unwrap_or(false);
            tokio::spawn(super::runs::undo(client.clone(), state.clone(), engine, path, force));
            Ok(None)
        }
        commands::CLEAR_MEMORY => {
            let (_, path, engine) = arg_note(state, &args)?;
            engine.adopt(&path);
            // Under the note's run lock (refused while a run, which may be saving, goes on); a
            // small file removed, so done here rather than in a spawned task.
            let _lock = engine.lock_for_edit(&path).map_err(errors::failed)?;
            let rel = engine.rel(&path);
            let cleared = crate::memory::store::MemoryStore::new(&engine.root)
                .clear(&rel)
                .map_err(|e| errors::failed(format!("clear agent memory: {e}")))?;
            state.world.forget_memory(&path);
            tracing::info!("clear memory {rel}");
            Ok(Some(json!({"cleared": cleared})))
        }
        commands::TRUST_WORKSPACE => {
            let store = state
                .opts
                .trust
                .as_ref()
                .ok_or_else(|| errors::failed("no user data dir to keep the trust store in"))?;
            // Only the workspace folders the editor opened: a URI names one of them, or a note
            // inside one (compared as canonical paths); no argument means all of them.
            let engines: Vec<Arc<crate::runs::Engine>> = match args.first().and_then(Value::as_str) {
                Some(_) => {
                    let uri = arg_uri(&args)?;
                    let path = uri.file_path().ok_or_else(|| Error::invalid_params("not a file URI"))?;
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
                    .map_err(|e| errors::failed(format!("trust {}: {e}", engine.root.display())))?;
                tracing::info!("trust {}", record.path);
                trusted.push(record.path);
                reload_config(client, state, engine);
            }
            Ok(Some(json!(trusted)))
        }
        other => Err(Error::invalid_params(format!("unknown command {other}"))),
    }
}

/// Run now (the command, or what `livenote.ask` was asked for): a run that needs the folder's
/// untrusted `.livenote.toml` asks for trust first.
pub(super) fn run_now(
    client: &Client,
    state: &Arc<State>,
    uri: &Uri,
    path: &std::path::Path,
    engine: Arc<crate::runs::Engine>,
    context: Option<String>,
) {
    sync_trust(client, state, &engine);
    let provider = current_text(state, uri).ok().and_then(|(text, _)| {
        let analysis = note::analyze(&text, &note_options(state, Some(path)));
        analysis.live.and_then(|l| l.provider.map(|p| p.value))
    });
    let ignored = engine
        .config
        .read()
        .ok()
        .and_then(|c| c.needs_ignored_folder(provider.as_deref()).map(|i| (*i).clone()));
    let path = path.to_path_buf();
    match ignored {
        Some(ignored) => {
            super::runs::ask_trust_then_run(client, state, engine, path, context, provider, ignored)
        }
        None => super::runs::spawn_run(client, engine, path, context),
    }
}

/// "Make live…" with a sentence: the model drafts the block (the template without a model, or
/// when its draft would not be valid, saying why), written as one versioned edit through the
/// engine's io (the buffer when the note is open, recomputed if the user typed meanwhile),
/// under the note's run lock; then a run when asked for. A blank sentence: the old template.
async fn make_live(
    client: Client,
    state: Arc<State>,
    engine: Arc<crate::runs::Engine>,
    uri: Uri,
    path: std::path::PathBuf,
    sentence: String,
    run: bool,
) {
    let rel = engine.rel(&path);
    let warn = |message: String| {
        let client = client.clone();
        async move { client.show_message(MessageType::WARNING, message).await }
    };
    let reply = if sentence.is_empty() {
        None
    } else {
        let Ok((text, _)) = current_text(&state, &uri) else {
            return warn(format!("livenote: {rel}: cannot read the note")).await;
        };
        let config = engine.config.read().map(|c| c.clone()).unwrap_or_default();
        let root = engine.root.clone();
        let known_config = config.clone();
        // The skills folders and the MCP tool cache are files: read off the runtime's threads.
        let known =
            tokio::task::spawn_blocking(move || crate::survey::Known::of(&known_config).with_skills(&root))
                .await;
        let Ok(known) = known else {
            tracing::warn!("make live {rel}: the workspace's tools and skills could not be read");
            return warn(format!(
                "livenote: {rel}: not made live: the workspace's tools and skills could not be read"
            ))
            .await;
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let reply = crate::authoring::ask(&config, &known, &text, &sentence, cancel).await;
        Some((reply, known))
    };
    let drafted = std::sync::Mutex::new(None);
    let compute = |text: &str| -> std::result::Result<Vec<TextEdit>, String> {
        let Some((reply, known)) = &reply else {
            return rewrite::make_live(text, None).map_err(|e| e.to_string());
        };
        let written = note::draft::choose(text, &sentence, reply.clone(), &known.options())
            .map_err(|e| e.to_string())?;
        let edits = written.edits.clone();
        if let Ok(mut d) = drafted.lock() {
            *d = Some(written);
        }
        Ok(edits)
    };
    let written = match engine.lock_for_edit(&path) {
        Ok(_lock) => engine.io.apply(&path, &compute).await,
        Err(e) => Err(e),
    };
    if let Err(e) = written {
        tracing::warn!("make live {rel}: {e}");
        return warn(format!("livenote: {rel}: not made live: {e}")).await;
    }
    let drafted = drafted.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    tracing::info!("make live {rel}");
    match &drafted {
        // A live note was extended: say what changed, and why not from a draft if it was not.
        Some(w) if w.change.was_live() => {
            let changes = w.change.describe();
            match &w.fallback {
                Some(why) => {
                    warn(format!(
                        "livenote: {rel}: your sentence was added to the objective ({changes}), not a draft: {why}"
                    ))
                    .await;
                }
                None => {
                    client
                        .show_message(
                            MessageType::INFO,
                            format!("livenote: {rel}: extended from the model's draft: {changes}"),
                        )
                        .await;
                }
            }
        }
        Some(w) => {
            if let Some(why) = &w.fallback {
                warn(format!("livenote: {rel}: made live from the template (your sentence as the objective, manual only): {why}"))
                    .await;
            }
        }
        None => {}
    }
    // Only the editor's explicit choice runs the note: never a draft.
    if run {
        super::runs::spawn_run(&client, engine, path, None);
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
        let edit = convert::document_edit(&uri, version, &text, None, &edits, enc);
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
    serde_json::to_value(v).map_err(errors::internal)
}
