//! What the server pushes to the client unasked: diagnostics of the documents marked dirty, and
//! requests to redraw lenses and hints.

use std::sync::Arc;

use tower_lsp_server::Client;

use super::snapshots::diagnostics_for;
use super::state::State;

/// Publishes diagnostics for the documents marked dirty, coalescing bursts: a burst of 2,000
/// changes publishes the latest text, in order, without a queue of stale work.
pub(super) async fn publisher(client: Client, state: Arc<State>) {
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
