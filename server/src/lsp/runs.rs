//! Runs inside the language server: the scheduler over the workspace index, `Run now` /
//! `Stop` / `Undo last run`, `$/progress` (cancel = Stop), the trust prompt, and the editor
//! side of [`BufferIo`]: open documents edited through versioned `workspace/applyEdit`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::convert;
use super::state::State;
use crate::providers::TriggerKind;
use crate::runs::io::{BoxFuture, BufferIo, Editor};
use crate::runs::{Engine, Outcome, RunObserver, RunSpec, RunWatch};
use crate::scheduler::{NoteSource, log_outcome};
use crate::workspace::index::Entry;

/// The language server as the editor of [`BufferIo`]: open documents and versioned
/// `workspace/applyEdit`.
pub struct LspEditor {
    pub client: Client,
    pub state: std::sync::Weak<State>,
    /// A receiver of `State::doc_changes`, kept so the sender always has one.
    pub changes: tokio::sync::watch::Receiver<u64>,
}

/// Notes open in the editor are edited in the buffer; others on disk.
pub type LspIo = BufferIo<LspEditor>;

/// The `label` of every `workspace/applyEdit` that carries a run's edit (docs/editors.md).
pub const RUN_EDIT_LABEL: &str = "livenote run";

impl LspEditor {
    pub fn io(client: &Client, state: &Arc<State>) -> LspIo {
        BufferIo::new(LspEditor {
            client: client.clone(),
            state: Arc::downgrade(state),
            changes: state.doc_changes.subscribe(),
        })
    }
}

impl Editor for LspEditor {
    fn open(&self, path: &Path) -> Option<(String, i32)> {
        let state = self.state.upgrade()?;
        let uri = state.uri_for(path)?;
        let docs = state.docs();
        let d = docs.get(&uri)?;
        Some((d.text().to_owned(), d.version))
    }

    fn send_edit<'a>(
        &'a self,
        path: &'a Path,
        version: i32,
        text: &'a str,
        edits: &'a [crate::text::TextEdit],
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let state = self.state.upgrade();
            let uri = match &state {
                Some(s) => s.uri_for(path),
                None => super::file_uri::ClientUris::default().uri_for(path),
            }
            .ok_or_else(|| format!("{} is not a file URI", path.display()))?;
            let enc = state.map(|s| s.encoding()).unwrap_or(crate::text::Encoding::Utf16);
            let edit = convert::document_edit(&uri, Some(version), text, None, edits, enc);
            // Labelled, so that an editor can tell a run's edits from the user's own (the
            // Neovim plugin saves a clean buffer after one) and name them in its undo history.
            let params = ApplyWorkspaceEditParams { label: Some(RUN_EDIT_LABEL.to_owned()), edit };
            match self.client.send_request::<request::ApplyWorkspaceEdit>(params).await {
                Ok(r) => Ok(r.applied),
                Err(e) => Err(format!("the editor did not apply the edit: {e}")),
            }
        })
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.clone()
    }
}

/// The index as the scheduler's source of notes.
pub struct StateSource {
    pub state: std::sync::Weak<State>,
    /// The root whose notes these are: not those of a root nested in it, which has its own
    /// scheduler.
    pub root: PathBuf,
}

impl NoteSource for StateSource {
    fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)> {
        let Some(state) = self.state.upgrade() else { return Vec::new() };
        state
            .with_index(|idx| idx.live_notes_of(&self.root).map(|(p, e, _)| (p.clone(), e.clone())).collect())
            .unwrap_or_default()
    }
}

/// Start a run by hand in the background; its `$/progress` comes from [`ProgressObserver`]
/// like every run's. A run that did not happen or failed is also shown as a message.
pub fn spawn_run(client: &Client, engine: Arc<Engine>, path: PathBuf, context: Option<String>) {
    let client = client.clone();
    tokio::spawn(async move {
        let rel = engine.rel(&path);
        tracing::info!("run {rel} (manual)");
        let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Manual, context, event: None };
        let outcome = engine.run(spec, &mut |_| {}).await;
        log_outcome(&rel, &outcome, &|id| engine.last_run(id));
        if let Outcome::Skipped(r) = &outcome {
            client.show_message(MessageType::WARNING, format!("livenote: {rel}: nothing ran: {r}")).await;
        }
        if let Outcome::Failed { error, .. } = &outcome {
            client.show_message(MessageType::ERROR, format!("livenote: {rel}: run failed: {error}")).await;
        }
    });
}

/// Shows every run of an engine (by hand, scheduled or for an event) as `$/progress`: begin
/// "Updating <title>", a report per step, end with the summary or the error. Cancelling the
/// progress stops the run.
pub struct ProgressObserver {
    pub client: Client,
    pub state: std::sync::Weak<State>,
}

enum ProgressMsg {
    Report(String),
    End(String),
}

struct ProgressWatch(tokio::sync::mpsc::UnboundedSender<ProgressMsg>);

impl RunWatch for ProgressWatch {
    fn event(&mut self, e: &crate::providers::RunEvent) {
        let _ = self.0.send(ProgressMsg::Report(format!(
            "{}: {}",
            e.kind,
            crate::runs::one_line(&e.message, 120)
        )));
    }

    fn ended(self: Box<Self>, outcome: &Outcome) {
        let message = match outcome {
            Outcome::Done { summary, .. } => summary.clone(),
            Outcome::Failed { error, .. } => format!("failed: {error}"),
            Outcome::Stopped { .. } => "stopped".to_owned(),
            Outcome::Skipped(r) => format!("nothing ran: {r}"),
        };
        let _ = self.0.send(ProgressMsg::End(message));
    }
}

impl RunObserver for ProgressObserver {
    fn notice(&self, message: &str) {
        let (client, message) = (self.client.clone(), format!("livenote: {message}"));
        tokio::spawn(async move { client.show_message(MessageType::WARNING, message).await });
    }

    fn started(&self, path: &Path, title: &str, _trigger: TriggerKind) -> Box<dyn RunWatch> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let (client, state, path, title) =
            (self.client.clone(), self.state.clone(), path.to_path_buf(), title.to_owned());
        let note = path.clone();
        // The round trips to the client happen here, in a task of their own, never in a handler
        // or in the run.
        tokio::spawn(async move {
            let token = NumberOrString::String(format!("livenote/run/{}", ulid::Ulid::new()));
            let progress = client.create_work_done_progress(token.clone()).await.is_ok();
            if progress {
                if let Some(s) = state.upgrade() {
                    s.progress_tokens().insert(token.clone(), path);
                }
                let begin = WorkDoneProgressBegin {
                    title: format!("Updating {title}"),
                    cancellable: Some(true),
                    message: None,
                    percentage: None,
                };
                send_progress(&client, &token, WorkDoneProgress::Begin(begin)).await;
            }
            if let Some(s) = state.upgrade() {
                s.refresh_views();
            }
            while let Some(msg) = rx.recv().await {
                match msg {
                    ProgressMsg::Report(message) if progress => {
                        let report = WorkDoneProgressReport {
                            message: Some(message),
                            cancellable: Some(true),
                            percentage: None,
                        };
                        send_progress(&client, &token, WorkDoneProgress::Report(report)).await;
                    }
                    ProgressMsg::Report(_) => {}
                    ProgressMsg::End(message) => {
                        if progress {
                            let end = WorkDoneProgressEnd { message: Some(message) };
                            send_progress(&client, &token, WorkDoneProgress::End(end)).await;
                            if let Some(s) = state.upgrade() {
                                s.progress_tokens().remove(&token);
                            }
                        }
                        // The run is over and the note free: "updating…" and the old runtime
                        // fields go, whatever started the run (by hand, a schedule, an event).
                        if let Some(s) = state.upgrade() {
                            super::snapshots::run_ended(&s, &note);
                            s.refresh_views();
                        }
                        break;
                    }
                }
            }
        });
        Box::new(ProgressWatch(tx))
    }
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
        // Started once per root (nested roots found later are started then).
        if state.services.read().is_ok_and(|s| s.iter().any(|s| s.root() == engine.root)) {
            continue;
        }
        offer_trust(&client, &state, &engine);
        // The root's scheduler and event processor, wired as `livenote watch` wires them.
        let weak = Arc::downgrade(&state);
        let root = engine.root.clone();
        let notes: crate::events::NotesFn = Arc::new(move || {
            weak.upgrade()
                .and_then(|s| {
                    let now = s.opts.clock.now();
                    s.with_index(|i| crate::events::eligible_notes(&root, i, now, &s.opts.zone))
                })
                .unwrap_or_default()
        });
        let service = crate::triggers::RootService::start(
            engine.clone(),
            Arc::new(StateSource { state: Arc::downgrade(&state), root: engine.root.clone() }),
            notes,
            state.wake.clone(),
        );
        if let Ok(mut services) = state.services.write() {
            services.push(Arc::new(service));
        }
    }
}

/// Ask for trust once per root, when live notes with triggers wait on it and scheduling is on
/// (with scheduling off, e.g. in a workspace the editor does not trust, nothing would run
/// anyway; the question comes when it is turned on). When nothing waits but the folder's
/// `.livenote.toml` is ignored, say so once instead (window/showMessage, not a question: the
/// user may never want to run anything there; it is a fact about the folder, not about one
/// note, so not a diagnostic or a lens; *Run now* asks when a run needs the file).
pub fn offer_trust(client: &Client, state: &Arc<State>, engine: &Arc<Engine>) {
    let Some(store) = &engine.trust else { return };
    let trust = store.check(&engine.root);
    if trust.is_trusted() {
        return;
    }
    let ignored = engine.config.read().ok().and_then(|c| c.ignored_folder.as_deref().cloned());
    let has_scheduled = engine.scheduling_enabled()
        && state
            .with_index(|idx| {
                idx.live_notes_of(&engine.root)
                    .any(|(_, _, l)| l.has_triggers() || l.event_match_criteria.is_some())
            })
            .unwrap_or(false);
    if !(has_scheduled || ignored.is_some()) || !state.first_trust_question(&engine.root) {
        return;
    }
    let (client, state, engine) = (client.clone(), state.clone(), engine.clone());
    tokio::spawn(async move {
        if has_scheduled {
            ask_trust(&client, &state, &engine, ignored.as_ref()).await;
        } else if let Some(ignored) = ignored {
            let msg = format!(
                "livenote: {} is ignored: {}. Notes are still checked, and Run now uses only your own configuration; to use the folder's, use “Trust workspace” or run `livenote trust {}`.",
                ignored.path.display(),
                ignored.trust.reason(),
                ignored.root.display()
            );
            // Information, not a warning: nothing is wrong, and nothing runs that the user did
            // not ask for.
            client.show_message(MessageType::INFO, msg).await;
        }
    });
}

/// The folder's `.livenote.toml` changed (its configuration was reloaded already): a changed
/// file is untrusted until the user trusts it again, so ask again, saying it changed.
pub fn config_changed(client: &Client, state: &Arc<State>, engine: &Arc<Engine>) {
    let changed =
        engine.config.read().ok().is_some_and(|c| c.ignored_folder.as_ref().is_some_and(|i| i.changed()));
    if changed {
        state.trust_asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&engine.root);
    }
    offer_trust(client, state, engine);
}

/// What trusting the folder means, what its `.livenote.toml` would bring, and last the
/// question itself, without closing punctuation: Neovim shows a request's message as the
/// prompt of its choices followed by ": " (a final "." or "?" would read ".: ").
fn trust_question(engine: &Engine, ignored: Option<&crate::config::IgnoredFolderConfig>) -> String {
    let changed_file = ignored.and_then(|i| match &i.trust {
        crate::workspace::trust::Trust::Changed { file: Some(file), .. } => Some(file.as_str()),
        _ => None,
    });
    let (config, with) = match (ignored, changed_file) {
        // A script the configuration runs changed (a `git pull`): name it, it is what to review.
        (Some(_), Some(file)) => (
            format!(" {file}, which its .livenote.toml runs, CHANGED since you trusted it: review it before you allow."),
            " with its .livenote.toml and the files it runs as they are now",
        ),
        (Some(i), _) if i.changed() => (
            " Its .livenote.toml CHANGED since you trusted it: review it before you allow.".to_owned(),
            " with its .livenote.toml as it is now",
        ),
        (Some(_), _) => (
            " Its .livenote.toml is then used too: it may name programs to run and model endpoints to send your API keys to.".to_owned(),
            " with its .livenote.toml as it is now",
        ),
        (None, _) => (String::new(), ""),
    };
    format!(
        "Once trusted, the folder's live notes run on their schedules and on events, and may call paid models or run programs.{config} Trust {}{with}",
        engine.root.display()
    )
}

/// Trust the root with its `.livenote.toml` as the user was shown it (`ignored`'s digest),
/// then reload its configuration. Shows what went wrong; true when trusted.
async fn grant(
    client: &Client,
    state: &Arc<State>,
    engine: &Arc<Engine>,
    ignored: Option<&crate::config::IgnoredFolderConfig>,
) -> bool {
    let Some(store) = &engine.trust else { return false };
    let result = match ignored {
        Some(i) => store.trust_expecting(&engine.root, Some(&i.digest)),
        None => store.trust(&engine.root),
    };
    match result {
        Ok(record) => {
            tracing::info!("trust {}", record.path);
            super::config_sync::reload_config(client, state, engine);
            true
        }
        Err(e) => {
            tracing::warn!("trust {}: {e}", engine.root.display());
            client.show_message(MessageType::ERROR, format!("livenote: trust: {e}")).await;
            false
        }
    }
}

async fn ask_trust(
    client: &Client,
    state: &Arc<State>,
    engine: &Arc<Engine>,
    ignored: Option<&crate::config::IgnoredFolderConfig>,
) {
    let allow = MessageActionItem { title: "Allow".to_owned(), properties: Default::default() };
    let not_now = MessageActionItem { title: "Not now".to_owned(), properties: Default::default() };
    let msg = format!(
        "livenote: live notes in {} wait for trust. {}",
        engine.root.display(),
        trust_question(engine, ignored)
    );
    let answer = client.show_message_request(MessageType::INFO, msg, Some(vec![allow, not_now])).await;
    if let Ok(Some(item)) = answer
        && item.title == "Allow"
    {
        grant(client, state, engine, ignored).await;
    }
}

/// *Run now* on a note whose run needs the folder's untrusted `.livenote.toml`: ask for
/// trust first (from a background task: the handler never waits on the client); run once
/// trusted, else say why nothing ran.
pub fn ask_trust_then_run(
    client: &Client,
    state: &Arc<State>,
    engine: Arc<Engine>,
    path: PathBuf,
    context: Option<String>,
    provider: Option<String>,
    ignored: crate::config::IgnoredFolderConfig,
) {
    let (client, state) = (client.clone(), state.clone());
    tokio::spawn(async move {
        let rel = engine.rel(&path);
        let error = ignored.run_error(provider.as_deref());
        let allow = MessageActionItem { title: "Allow".to_owned(), properties: Default::default() };
        let not_now = MessageActionItem { title: "Not now".to_owned(), properties: Default::default() };
        let msg = format!(
            "livenote: {rel} needs the folder's configuration: {}. {}",
            ignored.needed_by(provider.as_deref()),
            trust_question(&engine, Some(&ignored))
        );
        let answer = client.show_message_request(MessageType::WARNING, msg, Some(vec![allow, not_now])).await;
        let allowed = matches!(&answer, Ok(Some(item)) if item.title == "Allow");
        if allowed && grant(&client, &state, &engine, Some(&ignored)).await {
            spawn_run(&client, engine, path, context);
        } else if !allowed {
            client.show_message(MessageType::WARNING, format!("livenote: {rel}: nothing ran: {error}")).await;
        }
    });
}

/// `livenote.stop`: stop the note's run in this process.
pub fn stop(state: &State, path: &Path) -> serde_json::Value {
    let stopped = state.engine_for(path).is_some_and(|e| e.stop(path));
    json!({ "stopped": stopped })
}

/// `livenote.undoLastRun`: undo; when the body was edited since the run (or livenote cannot
/// tell), ask before restoring anyway (the current body stays in history either way). Lenses
/// and hints are redrawn once the note is free again.
pub async fn undo(client: Client, state: Arc<State>, engine: Arc<Engine>, path: PathBuf, force: bool) {
    let undone = engine.undo_last_run(&path, force).await;
    // Whatever happened, the history read before may be another now.
    state.world.forget_undo(&path);
    let err = match undone {
        Ok(_) => {
            state.refresh_views();
            return;
        }
        Err(e) => e,
    };
    if let Some(msg) = err.restore_anyway_question() {
        let anyway = MessageActionItem { title: "Restore anyway".to_owned(), properties: Default::default() };
        let cancel = MessageActionItem { title: "Cancel".to_owned(), properties: Default::default() };
        match client.show_message_request(MessageType::WARNING, msg, Some(vec![anyway, cancel])).await {
            Ok(Some(item)) if item.title == "Restore anyway" => match engine.undo_last_run(&path, true).await
            {
                Ok(_) => {
                    state.world.forget_undo(&path);
                    state.refresh_views();
                }
                Err(e) => {
                    client.show_message(MessageType::WARNING, format!("livenote: undo last run: {e}")).await;
                }
            },
            Ok(_) => {}
            // A client without message requests still hears why nothing happened.
            Err(_) => {
                client.show_message(MessageType::WARNING, format!("livenote: undo last run: {err}")).await
            }
        }
        return;
    }
    client.show_message(MessageType::WARNING, format!("livenote: undo last run: {err}")).await;
}
