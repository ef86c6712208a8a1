//! livenote's own requests, typed, in one place. Editors call these directly; the
//! `workspace/executeCommand` forms (`livenote.listNotes`, `livenote.noteStatus`) answer the
//! same for older integrations. A typed answer is serialised once, straight to the wire,
//! where an executeCommand answer is built as a JSON value and copied again.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, TextDocumentIdentifier, Uri};

use super::file_uri::FilePath;
use super::run_facts::{FactsCache, facts};
use super::snapshots::{current_text, note_options, snapshot};
use super::state::State;
use crate::note;
use crate::runs::history::{RunInfo, UndoError, is_run_id};
use crate::status::{self, ListItem};

/// Every live note of the workspace with its status.
pub const LIST_NOTES: &str = "livenote/listNotes";
/// One note's status, for a status bar.
pub const NOTE_STATUS: &str = "livenote/noteStatus";
/// The server's copy of an open document and its version (tests, bug reports).
pub const DOCUMENT_TEXT: &str = "livenote/documentText";
/// A note's runs, newest first, as `livenote history --format json` lists them.
pub const NOTE_HISTORY: &str = "livenote/noteHistory";
/// The body before and after one run, as `livenote diff` compares them.
pub const RUN_DIFF: &str = "livenote/runDiff";
/// Put back the body from before one run, as `livenote restore` does.
pub const RESTORE_RUN: &str = "livenote/restoreRun";
/// Server → client, to clients that ask for it (`experimental.livenote.notesChanged`): some
/// notes' `listNotes` items changed.
pub const NOTES_CHANGED: &str = "livenote/notesChanged";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NoteStatusParams {
    /// Absent when a client asks without a document (`{}`): the answer is then `null`.
    #[serde(default)]
    pub text_document: Option<TextDocumentIdentifier>,
    /// Anything else: ignored beside a document, refused without one (`{"uri": 3}` is a
    /// mistake to report, not a request for no note).
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
}

/// `livenote/noteStatus`: `{"live": false}` for a passive note, else the `listNotes` item
/// plus `live` and `schedulerEnabled`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum NoteStatus {
    Passive {
        live: bool,
    },
    #[serde(rename_all = "camelCase")]
    Live {
        #[serde(flatten)]
        item: Box<ListItem>,
        live: bool,
        scheduler_enabled: bool,
    },
}

/// Every live note with its status, as `livenote list --format json` prints it: the answer of
/// `livenote/listNotes` and of the `livenote.listNotes` command ([`list_notes_json`], kept for
/// the transport to write as it is).
pub fn list_notes(state: &State) -> serde_json::Value {
    state.raw.answer(list_notes_json(state))
}

/// [`list_notes`] as JSON: each note's item comes from its entry's memo while the note, its
/// run facts and its schedule are unchanged, so a request is mostly a concatenation.
pub fn list_notes_json(state: &State) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 * 1024);
    out.push(b'[');
    let mut first = true;
    each_item(state, |_, json| {
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(json.as_bytes());
    });
    out.push(b']');
    out
}

/// Each live note's path and its `listNotes` item as JSON, in the list's order.
fn each_item(state: &State, mut f: impl FnMut(&std::path::Path, &str)) {
    let now = state.opts.clock.now();
    let zone = state.opts.zone;
    let facts = FactsCache::new(state);
    state.with_index(|idx| {
        for (path, entry, live) in idx.live_notes() {
            // Shown from the folder opened, a nested root's notes included.
            let root = idx.shown_root_of(path);
            let attempted = facts.attempted(path, live);
            let facts = facts.facts(Some(path));
            let item = |live: &crate::note::model::Live, upcoming| {
                let rel = root.and_then(|r| path.strip_prefix(r).ok()).unwrap_or(path);
                let (rel, title) = (rel.display().to_string(), entry.title.clone());
                item_json(&status::list_item_from(rel, title, live, facts, upcoming, now, &zone))
            };
            match attempted {
                std::borrow::Cow::Borrowed(live) => {
                    let upcoming = entry.schedule.upcoming(live, now, &zone);
                    let expired = live.expired(now, &zone);
                    let json = entry.list_item.json(root, facts, upcoming, expired, || item(live, upcoming));
                    f(path, &json);
                }
                // A run into another editor's buffer that the file does not show yet: not what
                // the entry's memos were made from.
                std::borrow::Cow::Owned(live) => {
                    f(path, &item(&live, status::Upcoming::at(&live, now, &zone)))
                }
            }
        }
    });
}

/// What the `livenote/notesChanged` notification compares: each live note's `listNotes`
/// item, by a hash of its JSON (the items are memoised, so this costs a pass over the index),
/// and for a note open in the editor its buffer's runtime fields too: a run, an undo or a
/// restore edits the buffer, not the file the list is read from, and views of the note's runs
/// must still hear of it.
pub type ItemDigests = HashMap<PathBuf, u64>;

/// The digests of every live note's item now.
pub fn item_digests(state: &State) -> ItemDigests {
    let mut open: HashMap<PathBuf, u64> = HashMap::new();
    let uris: Vec<Uri> = state.docs().keys().cloned().collect();
    for uri in uris {
        let (Some(path), Some(snap)) = (uri.file_path(), snapshot(state, &uri)) else { continue };
        let Some(l) = &snap.analysis.live else { continue };
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (l.active, l.last_run_at, l.last_attempt_at, &l.last_run_error, &l.last_run_summary, &l.last_run_id)
            .hash(&mut h);
        open.insert(path, h.finish());
    }
    let mut out = HashMap::new();
    each_item(state, |path, json| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        json.hash(&mut h);
        open.get(path).hash(&mut h);
        out.insert(path.to_path_buf(), h.finish());
    });
    out
}

/// The notes whose item differs between `before` and `now`: changed, new or gone, sorted.
pub fn changed_notes(before: &ItemDigests, now: &ItemDigests) -> Vec<PathBuf> {
    let mut changed: Vec<PathBuf> = now
        .iter()
        .filter(|(p, d)| before.get(*p) != Some(*d))
        .map(|(p, _)| p.clone())
        .chain(before.keys().filter(|p| !now.contains_key(*p)).cloned())
        .collect();
    changed.sort();
    changed
}

/// `livenote/notesChanged`'s parameters: the URIs of the notes whose `listNotes` item changed
/// (a run started or ended, a note was edited, added or removed, trust or the configuration
/// changed); the client asks `livenote/listNotes` (or `livenote/noteHistory`) again.
pub fn notes_changed_params(state: &State, changed: &[PathBuf]) -> serde_json::Value {
    let uris: Vec<String> =
        changed.iter().filter_map(|p| state.uri_for(p)).map(|u| u.as_str().to_owned()).collect();
    serde_json::json!({ "uris": uris })
}

/// An item as the answer has always written it: through a `serde_json::Value`, whose objects
/// keep their keys sorted.
fn item_json(item: &ListItem) -> String {
    serde_json::to_value(item).map(|v| v.to_string()).unwrap_or_else(|e| {
        tracing::error!("cannot serialise a list item: {e}");
        "null".to_owned()
    })
}

/// One note's status, from the open buffer (else the file).
pub fn note_status(state: &State, uri: &Uri) -> Result<NoteStatus> {
    let path = uri.file_path();
    let (snap, from_disk, disk_text);
    let (analysis, text) = match snapshot(state, uri) {
        Some(s) => {
            snap = s;
            (&snap.analysis, snap.text.as_str())
        }
        None => {
            disk_text = current_text(state, uri)?.0;
            from_disk = note::analyze(&disk_text, &note_options(state, path.as_deref()));
            (&from_disk, disk_text.as_str())
        }
    };
    // A run undone in the buffer still ran: its end, from the run store.
    let settled = super::run_facts::settled(state, path.as_deref(), analysis);
    let analysis = settled.as_ref().unwrap_or(analysis);
    let Some(live) = &analysis.live else { return Ok(NoteStatus::Passive { live: false }) };
    let facts = facts(state, path.as_deref());
    let rel = path
        .as_deref()
        .map(|p| match (state.engine_for(p), state.with_index(|i| super::snapshots::rel_path(i, p))) {
            (Some(_), Some(rel)) => rel,
            (Some(engine), None) => engine.rel(p).into_string(),
            (None, _) => p.display().to_string(),
        })
        .unwrap_or_else(|| uri.as_str().to_owned());
    let title = crate::workspace::index::note_title(
        analysis.title.clone(),
        note::frontmatter::body_title(text),
        path.as_deref().unwrap_or(std::path::Path::new(&rel)),
    );
    let item = status::list_item(rel, title, live, facts, state.opts.clock.now(), &state.opts.zone);
    Ok(NoteStatus::Live { item: Box::new(item), live: true, scheduler_enabled: !facts.scheduling_off })
}

/// `livenote/documentText`.
pub fn document_text(state: &State, uri: &Uri) -> Option<serde_json::Value> {
    state.docs().get(uri).map(|d| serde_json::json!({"version": d.version, "text": d.text()}))
}

/// `livenote/notesChanged`, as a notification type.
pub enum NotesChanged {}

impl tower_lsp_server::ls_types::notification::Notification for NotesChanged {
    type Params = serde_json::Value;
    const METHOD: &'static str = NOTES_CHANGED;
}

/// Sends `livenote/notesChanged` when some notes' `listNotes` items changed, checked each time
/// lenses and hints are to be redrawn (a run starting or ending, a note's file changing, trust,
/// the configuration): a burst of changes makes one notification, and nothing changing sends
/// nothing, so a view needs no polling.
pub async fn notes_notifier(client: Client, state: Arc<State>) {
    let mut shown = ItemDigests::new();
    loop {
        state.notes_signal.notified().await;
        let now = item_digests(&state);
        let changed = changed_notes(&shown, &now);
        shown = now;
        if !changed.is_empty() {
            tracing::debug!("notify {} changed", crate::text::count(changed.len(), "note"));
            client.send_notification::<NotesChanged>(notes_changed_params(&state, &changed)).await;
        }
    }
}

/// `livenote/noteHistory`, `livenote/runDiff` and `livenote/restoreRun`: the note, and for the
/// last two the run (`runDiff` without one: the latest run that changed the body, as
/// `livenote diff` without RUN); `force` restores over later edits without asking.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunParams {
    pub uri: Uri,
    #[serde(default)]
    pub run: Option<String>,
    #[serde(default)]
    pub force: bool,
}

/// `livenote/runDiff`'s answer: what `livenote diff` compares.
#[derive(Debug, Serialize)]
pub struct RunDiff {
    pub run: String,
    pub before: String,
    pub after: String,
}

/// The note a request names and the engine of its workspace folder.
fn note_engine(state: &State, uri: &Uri) -> Result<(PathBuf, Arc<crate::runs::Engine>)> {
    let path = uri.file_path().ok_or_else(|| super::errors::bad_params("not a file URI"))?;
    let engine = state
        .engine_for(&path)
        .ok_or_else(|| super::errors::bad_params("the note is outside the workspace folders"))?;
    Ok((path, engine))
}

/// A refusal of the history's: a run id that is not one is the caller's mistake; the rest
/// (no such run kept, nothing recorded, the note updating, a read failing) may change.
fn undo_error(e: UndoError) -> tower_lsp_server::jsonrpc::Error {
    match e {
        UndoError::NotARunId(_) => super::errors::bad_params(e),
        e => super::errors::failed(e),
    }
}

/// `livenote/noteHistory`: the note's runs, newest first (`livenote history --format json`).
pub fn note_history(state: &State, params: &RunParams) -> Result<Vec<RunInfo>> {
    let (path, engine) = note_engine(state, &params.uri)?;
    Ok(engine.history(&path))
}

/// `livenote/runDiff`: the body kept from before the run and the body it left.
pub fn run_diff(state: &State, params: &RunParams) -> Result<RunDiff> {
    let (path, engine) = note_engine(state, &params.uri)?;
    let change = engine.run_change(&path, params.run.as_deref()).map_err(undo_error)?;
    Ok(RunDiff { run: change.run, before: change.before, after: change.after })
}

/// `livenote/restoreRun`: checked here (a run id, kept, the note not updating), then done in
/// a task of its own, since it edits an open note through the client's `applyEdit`; over
/// later edits it asks first, as *Undo last run* does. Answers `null` once started.
pub fn restore_run(client: &Client, state: &Arc<State>, params: RunParams) -> Result<Option<()>> {
    let (path, engine) = note_engine(state, &params.uri)?;
    let run = params.run.ok_or_else(|| {
        super::errors::bad_params("livenote/restoreRun takes {\"uri\": ..., \"run\": RUN_ID}")
    })?;
    if !is_run_id(&run) {
        return Err(undo_error(UndoError::NotARunId(run)));
    }
    if engine.is_running(&path) {
        return Err(undo_error(UndoError::Running));
    }
    engine.adopt(&path);
    let rel = engine.rel(&path);
    if engine.store.snapshot_of(&rel, &run).is_none() {
        return Err(undo_error(UndoError::UnknownRun { note: rel.to_string(), run }));
    }
    tokio::spawn(restore(client.clone(), state.clone(), engine, path, run, params.force));
    Ok(None)
}

async fn restore(
    client: Client,
    state: Arc<State>,
    engine: Arc<crate::runs::Engine>,
    path: PathBuf,
    run: String,
    force: bool,
) {
    let err = match engine.restore_run(&path, &run, force).await {
        Ok(_) => {
            state.refresh_views();
            return;
        }
        Err(e) => e,
    };
    let what = format!("Restore run {run}");
    let Some(question) = err.anyway_question(&what, &format!("run {run}")) else {
        client.show_message(MessageType::WARNING, format!("livenote: {what}: {err}")).await;
        return;
    };
    let anyway = MessageActionItem { title: "Restore anyway".to_owned(), properties: Default::default() };
    let cancel = MessageActionItem { title: "Cancel".to_owned(), properties: Default::default() };
    match client.show_message_request(MessageType::WARNING, question, Some(vec![anyway, cancel])).await {
        Ok(Some(item)) if item.title == "Restore anyway" => match engine.restore_run(&path, &run, true).await
        {
            Ok(_) => state.refresh_views(),
            Err(e) => client.show_message(MessageType::WARNING, format!("livenote: {what}: {e}")).await,
        },
        Ok(_) => {}
        // A client without message requests still hears why nothing happened.
        Err(_) => client.show_message(MessageType::WARNING, format!("livenote: {what}: {err}")).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn digests(entries: &[(u8, u64)]) -> ItemDigests {
        entries.iter().map(|(p, d)| (PathBuf::from(format!("n{p}.md")), *d)).collect()
    }

    proptest! {
        /// A note is reported exactly when it appeared, went, or its digest differs; once each,
        /// sorted.
        #[test]
        fn changed_notes_are_those_that_differ(
            before in proptest::collection::vec((0u8..12, 0u64..3), 0..12),
            now in proptest::collection::vec((0u8..12, 0u64..3), 0..12),
        ) {
            let (before, now) = (digests(&before), digests(&now));
            let changed = changed_notes(&before, &now);
            let mut want: Vec<PathBuf> = before
                .keys()
                .chain(now.keys())
                .filter(|p| before.get(*p) != now.get(*p))
                .cloned()
                .collect();
            want.sort();
            want.dedup();
            prop_assert_eq!(changed, want);
            prop_assert!(changed_notes(&now, &now).is_empty());
        }
    }
}
