//! `livenote.ask [noteUri, sentence]` (issue 33): the conversation of `crate::ask` about the
//! note as the editor shows it (its buffer, unsaved changes included), answered with
//! `{reply, changed, actions, noModel}`. The model calls are the handler's own work, not client
//! round trips; the changes reach the editor afterwards as one versioned `workspace/applyEdit`
//! through the engine's io, from a spawned task, and only once that edit is applied does a run,
//! stop or undo the sentence asked for happen. Without a model: `noModel`, and a reply naming
//! the editor's own commands for what the sentence seems to want.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{MessageType, Uri};

use super::errors;
use super::snapshots::current_text;
use super::state::State;
use crate::ask::{self, Effect, Material};
use crate::mcp_server::changes::{self, Change};
use crate::runs::Engine;

pub async fn execute(client: &Client, state: &Arc<State>, args: &[Value]) -> Result<Option<Value>> {
    let (uri, path, engine) = super::commands::arg_note(state, args)?;
    let sentence = args.get(1).and_then(Value::as_str).map(str::trim).unwrap_or_default().to_owned();
    if sentence.is_empty() {
        return Err(Error::invalid_params("livenote.ask needs a sentence"));
    }
    let (text, _) = current_text(state, &uri)?;
    let config = engine.config.read().map(|c| c.clone()).unwrap_or_default();
    let live = crate::note::analyze(&text, &crate::note::Options::default()).live.is_some();
    let client_model = match crate::model::default_client(&config, "answer livenote.ask") {
        Ok(c) => c,
        Err(why) => {
            let commands = ask::intent::editor_commands(&sentence, live);
            return Ok(Some(json!({
                "reply": ask::no_model(&why, &commands),
                "changed": false,
                "actions": [],
                "noModel": true,
            })));
        }
    };
    // The skills folders, the MCP tool cache and the note's history are files: read off the
    // runtime's threads.
    let (root, read_engine, read_path) = (engine.root.clone(), engine.clone(), path.clone());
    let read = tokio::task::spawn_blocking(move || {
        let known = crate::survey::Known::of(&config).with_skills(&root);
        let history: Vec<Value> = read_engine
            .history(&read_path)
            .iter()
            .take(20)
            .filter_map(|r| serde_json::to_value(r).ok())
            .collect();
        (known, history)
    })
    .await;
    let (known, history) = read.map_err(|e| errors::internal(format!("read the note's setting: {e}")))?;
    let status = super::custom::note_status(state, &uri)
        .ok()
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(Value::Null);
    let material = Material {
        path: engine.rel(&path).as_str().to_owned(),
        text,
        status,
        history,
        now: engine.clock.now().with_timezone(&engine.zone).format("%Y-%m-%d %H:%M (%A)").to_string(),
        zone: engine.zone.name(),
        host: engine.machine(),
    };
    let answer =
        ask::converse(client_model.as_ref(), &material, &sentence, known.options(), CancellationToken::new())
            .await
            .map_err(errors::failed)?;
    for r in &answer.refused {
        tracing::warn!("ask {}: {r}", material.path);
    }
    // Checked here on the text the model saw, so that `changed` is what the edit will do; the
    // task checks again on the buffer as it is then.
    let changed = match changes::checked(&material.text, &answer.changes, &known.options()) {
        Ok((edits, _)) => !edits.is_empty(),
        Err(e) => return Err(errors::failed(format!("not done: {e}"))),
    };
    tracing::info!("ask {}: {}", material.path, answer.actions.join(", "));
    tokio::spawn(carry_out(
        client.clone(),
        state.clone(),
        engine,
        uri,
        path,
        answer.changes,
        answer.effects,
        known,
    ));
    Ok(Some(json!({
        "reply": answer.reply,
        "changed": changed,
        "actions": answer.actions,
        "noModel": false,
    })))
}

/// The changes as one edit through the engine's io (the buffer when the note is open,
/// recomputed on what the user typed meanwhile), under the note's lock; then the effects.
#[allow(clippy::too_many_arguments)]
async fn carry_out(
    client: Client,
    state: Arc<State>,
    engine: Arc<Engine>,
    uri: Uri,
    path: PathBuf,
    changes: Vec<Change>,
    effects: Vec<Effect>,
    known: crate::survey::Known,
) {
    let rel = engine.rel(&path);
    if !changes.is_empty() {
        let compute = |text: &str| changes::checked(text, &changes, &known.options()).map(|(edits, _)| edits);
        let written = match engine.lock_for_edit(&path) {
            Ok(_lock) => engine.io.apply(&path, &compute).await,
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            tracing::warn!("ask {rel}: {e}");
            client.show_message(MessageType::WARNING, format!("livenote: {rel}: not changed: {e}")).await;
            return;
        }
        state.refresh_views();
    }
    for effect in effects {
        match effect {
            Effect::Run { context } if engine.is_running(&path) => {
                tracing::info!(
                    "ask {rel}: not run{}: it is updating already",
                    context.map(|_| " with context").unwrap_or_default()
                );
            }
            Effect::Run { context } => {
                super::commands::run_now(&client, &state, &uri, &path, engine.clone(), context)
            }
            Effect::Stop => {
                super::runs::stop(&state, &path);
            }
            Effect::Undo => {
                super::runs::undo(client.clone(), state.clone(), engine.clone(), path.clone(), false).await
            }
        }
    }
}
