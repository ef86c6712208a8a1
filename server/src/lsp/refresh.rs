//! What the server pushes to the client unasked: diagnostics of the documents marked dirty, and
//! requests to redraw lenses and hints (and pulled diagnostics) when what they show changed.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tower_lsp_server::Client;
use tower_lsp_server::ls_types::Uri;

use super::snapshots::{diagnostics_for, snapshot};
use super::state::State;

/// Publishes diagnostics for the documents marked dirty, coalescing bursts: a burst of 2,000
/// changes publishes the latest text, in order, without a queue of stale work. An open note
/// whose runtime fields or `active` changed (a run's edit, the user's) has its lenses and hints
/// redrawn.
pub(super) async fn publisher(client: Client, state: Arc<State>) {
    loop {
        state.dirty_signal.notified().await;
        let pull = state.caps().pull_diagnostics;
        for uri in state.take_dirty() {
            if shown_changed(&state, &uri) {
                state.refresh_views();
            }
            if !pull {
                let (diags, version) = diagnostics_for(&state, &uri);
                client.publish_diagnostics(uri, diags, version).await;
            }
        }
    }
}

/// Whether an open note's runtime fields or `active` differ from what its lenses and hints
/// showed when it was last looked at here (not on first sight: the client draws a new document
/// on its own).
fn shown_changed(state: &State, uri: &Uri) -> bool {
    let Some(snap) = snapshot(state, uri) else { return false };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    if let Some(l) = &snap.analysis.live {
        (l.active, l.last_run_at, l.last_attempt_at, &l.last_run_error, &l.last_run_summary).hash(&mut h);
    }
    let digest = h.finish();
    let mut docs = state.docs();
    let Some(doc) = docs.get_mut(uri) else { return false };
    doc.shown.replace(digest).is_some_and(|before| before != digest)
}

/// Asks the client to redraw lenses and hints, and to pull diagnostics again when they went
/// stale, each time [`State::refresh_views`] is called; a burst of calls makes one round. The
/// round trips happen in this task, never in a handler.
pub(super) async fn refresher(client: Client, state: Arc<State>) {
    loop {
        state.views_signal.notified().await;
        let caps = state.caps();
        if caps.lens_refresh {
            let _ = client.code_lens_refresh().await;
        }
        if caps.hint_refresh {
            let _ = client.inlay_hint_refresh().await;
        }
        if state.diagnostics_stale.swap(false, Ordering::Relaxed)
            && caps.pull_diagnostics
            && caps.diagnostic_refresh
        {
            let _ = client.workspace_diagnostic_refresh().await;
        }
    }
}
