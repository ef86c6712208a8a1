//! Runs inside the language server: the scheduler over the workspace index, `Run now` /
//! `Stop` / `Undo last run`, `$/progress` (cancel = Stop), the trust prompt, and a
//! [`NoteIo`] that edits open documents through versioned `workspace/applyEdit` (recomputed
//! and retried when the user typed meanwhile) and closed notes on disk.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::convert;
use super::state::State;
use crate::providers::TriggerKind;
use crate::runs::io::{BoxFuture, Compute};
use crate::runs::{DiskIo, Engine, NoteIo, Outcome, RunSpec};
use crate::scheduler::{NoteSource, Scheduler, log_outcome};
use crate::workspace::index::Entry;

/// How many times an edit rejected as stale is recomputed against the fresh buffer.
const APPLY_ATTEMPTS: usize = 8;

/// Notes open in the editor are edited in the buffer; others on disk.
pub struct LspIo {
    pub client: Client,
    pub state: std::sync::Weak<State>,
}

impl LspIo {
    fn open_text(&self, path: &Path) -> Option<(Uri, String, i32)> {
        let state = self.state.upgrade()?;
        let uri = Uri::from_file_path(path)?;
        let docs = state.docs();
        let d = docs.get(&uri)?;
        Some((uri, d.text(), d.version))
    }
}

impl NoteIo for LspIo {
    fn read(&self, path: &Path) -> Result<String, String> {
        match self.open_text(path) {
            Some((_, text, _)) => Ok(text),
            None => DiskIo.read(path),
        }
    }

    fn apply<'a>(&'a self, path: &'a Path, compute: Compute<'a>) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            for attempt in 0..APPLY_ATTEMPTS {
                let Some((uri, text, version)) = self.open_text(path) else {
                    return DiskIo::apply_sync(path, compute);
                };
                let edits = compute(&text)?;
                if edits.is_empty() {
                    return Ok(());
                }
                let enc = self.state.upgrade().map(|s| s.encoding()).unwrap_or(crate::text::Encoding::Utf16);
                let edit = convert::document_edit(&uri, Some(version), &text, &edits, enc);
                match self.client.apply_edit(edit).await {
                    Ok(r) if r.applied => {
                        // The editor sends didChange before it answers; give a slow one a moment.
                        for _ in 0..50 {
                            if self.open_text(path).is_none_or(|(_, _, v)| v != version) {
                                break;
                            }
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                        return Ok(());
                    }
                    Ok(r) => {
                        tracing::info!(
                            "retry {}: edit rejected ({}), recomputing on the fresh text",
                            path.display(),
                            r.failure_reason.unwrap_or_default()
                        );
                        tokio::time::sleep(Duration::from_millis(20 * (attempt as u64 + 1))).await;
                    }
                    Err(e) => return Err(format!("the editor did not apply the edit: {e}")),
                }
            }
            Err(format!("the editor kept rejecting the edit; gave up after {APPLY_ATTEMPTS} attempts"))
        })
    }
}

/// The index as the scheduler's source of notes.
pub struct StateSource(pub std::sync::Weak<State>);

impl NoteSource for StateSource {
    fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)> {
        let Some(state) = self.0.upgrade() else { return Vec::new() };
        state
            .with_index(|idx| idx.live_notes().map(|(p, e, _)| (p.clone(), e.clone())).collect())
            .unwrap_or_default()
    }
}

/// Start a run in the background, reporting `$/progress`; cancelling the progress stops it.
pub fn spawn_run(
    client: &Client,
    state: &Arc<State>,
    engine: Arc<Engine>,
    path: PathBuf,
    context: Option<String>,
) {
    let (client, state) = (client.clone(), state.clone());
    tokio::spawn(async move {
        let rel = engine.rel(&path);
        let token = NumberOrString::String(format!("livenote/run/{}", ulid::Ulid::new()));
        let progress = client.create_work_done_progress(token.clone()).await.is_ok();
        if progress {
            state.progress_tokens().insert(token.clone(), path.clone());
            send_progress(
                &client,
                &token,
                WorkDoneProgress::Begin(WorkDoneProgressBegin {
                    title: format!("Updating {rel}"),
                    cancellable: Some(true),
                    message: None,
                    percentage: None,
                }),
            )
            .await;
        }
        super::handlers::refresh_views(&client, &state).await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let reporter = {
            let (client, token) = (client.clone(), token.clone());
            tokio::spawn(async move {
                while let Some(msg) = rx.recv().await {
                    if progress {
                        send_progress(
                            &client,
                            &token,
                            WorkDoneProgress::Report(WorkDoneProgressReport {
                                message: Some(msg),
                                cancellable: Some(true),
                                percentage: None,
                            }),
                        )
                        .await;
                    }
                }
            })
        };
        let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Manual, context };
        let mut report = |e: &crate::providers::RunEvent| {
            let _ = tx.send(format!("{}: {}", e.kind, crate::runs::one_line(&e.message, 120)));
        };
        let outcome = engine.run(spec, &mut report).await;
        drop(tx);
        let _ = reporter.await;
        log_outcome(&rel, &outcome);
        if progress {
            let message = match &outcome {
                Outcome::Done { summary, .. } => summary.clone(),
                Outcome::Failed { error, .. } => format!("failed: {error}"),
                Outcome::Stopped { .. } => "stopped".to_owned(),
                Outcome::Skipped(r) => format!("nothing ran: {r}"),
            };
            send_progress(
                &client,
                &token,
                WorkDoneProgress::End(WorkDoneProgressEnd { message: Some(message) }),
            )
            .await;
            state.progress_tokens().remove(&token);
        }
        if let Outcome::Skipped(r) = &outcome {
            client.show_message(MessageType::WARNING, format!("livenote: {rel}: nothing ran: {r}")).await;
        }
        if let Outcome::Failed { error, .. } = &outcome {
            client.show_message(MessageType::ERROR, format!("livenote: {rel}: run failed: {error}")).await;
        }
        super::handlers::refresh_views(&client, &state).await;
    });
}

async fn send_progress(client: &Client, token: &ProgressToken, value: WorkDoneProgress) {
    client
        .send_notification::<notification::Progress>(ProgressParams {
            token: token.clone(),
            value: ProgressParamsValue::WorkDone(value),
        })
        .await;
}

/// Start the scheduler of each workspace root, and ask once for trust when live notes with
/// triggers wait on it.
pub async fn start_scheduler(client: Client, state: Arc<State>) {
    let engines = state.engines();
    for engine in engines {
        offer_trust(&client, &state, &engine);
        // Events: one processor per root, woken by files in .livenote/events/pending/.
        if let Err(e) = crate::events::ensure_dirs(&engine.root) {
            tracing::warn!("events {}: {e}", engine.root.display());
        }
        let weak = Arc::downgrade(&state);
        let root = engine.root.clone();
        let notes: crate::events::NotesFn = Arc::new(move || {
            weak.upgrade()
                .and_then(|s| s.with_index(|i| crate::events::eligible_notes(&root, i)))
                .unwrap_or_default()
        });
        let processor = Arc::new(crate::events::Processor::for_engine(engine.clone(), notes));
        let wake = crate::events::spawn(processor, tokio_util::sync::CancellationToken::new());
        if let Ok(mut w) = state.event_wakes.write() {
            w.push((engine.root.clone(), wake));
        }
        let scheduler = Arc::new(Scheduler {
            engine: engine.clone(),
            source: Arc::new(StateSource(Arc::downgrade(&state))),
            wake: state.wake.clone(),
        });
        tokio::spawn(scheduler.run());
    }
}

/// Ask for trust once per root, when live notes with triggers wait on it and scheduling is on
/// (with scheduling off, e.g. in a workspace the editor does not trust, nothing would run
/// anyway; the question comes when it is turned on).
pub fn offer_trust(client: &Client, state: &Arc<State>, engine: &Arc<Engine>) {
    if engine.trusted() || engine.trust.is_none() || !engine.scheduling_enabled() {
        return;
    }
    let has_scheduled = state
        .with_index(|idx| {
            idx.live_notes().any(|(p, _, l)| {
                p.starts_with(&engine.root) && (l.has_triggers() || l.event_match_criteria.is_some())
            })
        })
        .unwrap_or(false);
    if !has_scheduled || !state.first_trust_question(&engine.root) {
        return;
    }
    let (client, state, engine) = (client.clone(), state.clone(), engine.clone());
    tokio::spawn(async move { ask_trust(&client, &state, &engine).await });
}

async fn ask_trust(client: &Client, state: &Arc<State>, engine: &Arc<Engine>) {
    let allow = MessageActionItem { title: "Allow".to_owned(), properties: Default::default() };
    let not_now = MessageActionItem { title: "Not now".to_owned(), properties: Default::default() };
    let msg = format!(
        "livenote: let live notes in {} run on their schedules and on events? Runs may call paid models or programs named in this workspace's .livenote.toml.",
        engine.root.display()
    );
    let answer = client.show_message_request(MessageType::INFO, msg, Some(vec![allow, not_now])).await;
    if let Ok(Some(item)) = answer
        && item.title == "Allow"
        && let Some(store) = &engine.trust
    {
        match store.trust(&engine.root) {
            Ok(()) => {
                tracing::info!("trust {}", engine.root.display());
                state.wake.notify_waiters();
                state.wake_events();
                super::handlers::refresh_views(client, state).await;
            }
            Err(e) => tracing::warn!("trust {}: {e}", engine.root.display()),
        }
    }
}

/// `livenote.stop`: stop the note's run in this process.
pub fn stop(state: &State, path: &Path) -> serde_json::Value {
    let stopped = state.engine_for(path).is_some_and(|e| e.stop(path));
    json!({ "stopped": stopped })
}

/// `livenote.undoLastRun`: undo; when the body was edited since the run (or livenote cannot
/// tell), ask before restoring anyway (the current body stays in history either way).
pub async fn undo(client: Client, engine: Arc<Engine>, path: PathBuf, force: bool) {
    use crate::runs::history::UndoError;
    let err = match engine.undo_last_run(&path, force).await {
        Ok(_) => return,
        Err(e) => e,
    };
    if matches!(err, UndoError::Edited { .. } | UndoError::Unknown { .. }) {
        let anyway = MessageActionItem { title: "Restore anyway".to_owned(), properties: Default::default() };
        let cancel = MessageActionItem { title: "Cancel".to_owned(), properties: Default::default() };
        let msg = format!("livenote: undo last run: {err}");
        match client.show_message_request(MessageType::WARNING, msg.clone(), Some(vec![anyway, cancel])).await
        {
            Ok(Some(item)) if item.title == "Restore anyway" => {
                if let Err(e) = engine.undo_last_run(&path, true).await {
                    client.show_message(MessageType::WARNING, format!("livenote: undo last run: {e}")).await;
                }
            }
            Ok(_) => {}
            // A client without message requests still hears why nothing happened.
            Err(_) => client.show_message(MessageType::WARNING, msg).await,
        }
        return;
    }
    client.show_message(MessageType::WARNING, format!("livenote: undo last run: {err}")).await;
}
