//! livenote's own requests, typed, in one place. Editors call these directly; the
//! `workspace/executeCommand` forms (`livenote.listNotes`, `livenote.noteStatus`) answer the
//! same for older integrations. A typed answer is serialised once, straight to the wire,
//! where an executeCommand answer is built as a JSON value and copied again.

use serde::{Deserialize, Serialize};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{TextDocumentIdentifier, Uri};

use super::file_uri::FilePath;
use super::run_facts::{FactsCache, facts};
use super::snapshots::{current_text, note_options, snapshot};
use super::state::State;
use crate::note;
use crate::status::{self, ListItem};

/// Every live note of the workspace with its status.
pub const LIST_NOTES: &str = "livenote/listNotes";
/// One note's status, for a status bar.
pub const NOTE_STATUS: &str = "livenote/noteStatus";
/// The server's copy of an open document and its version (tests, bug reports).
pub const DOCUMENT_TEXT: &str = "livenote/documentText";

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
    let now = state.opts.clock.now();
    let zone = state.opts.zone;
    let facts = FactsCache::new(state);
    state
        .with_index(|idx| {
            let mut out = Vec::with_capacity(64 * 1024);
            out.push(b'[');
            for (i, (path, entry, live)) in idx.live_notes().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                // Shown from the folder opened, a nested root's notes included.
                let root = idx.shown_root_of(path);
                let f = facts.facts(Some(path));
                let upcoming = entry.schedule.upcoming(live, now, &zone);
                let expired = live.expired(now, &zone);
                let json = entry.list_item.json(root, f, upcoming, expired, || {
                    let rel = root.and_then(|r| path.strip_prefix(r).ok()).unwrap_or(path);
                    let (rel, title) = (rel.display().to_string(), entry.title.clone());
                    let item = status::list_item_from(rel, title, live, f, upcoming, now, &zone);
                    item_json(&item)
                });
                out.extend_from_slice(json.as_bytes());
            }
            out.push(b']');
            out
        })
        .unwrap_or_else(|| b"[]".to_vec())
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
