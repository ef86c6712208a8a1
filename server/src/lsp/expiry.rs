//! Notes crossing their `until`: `live/expired` depends on the instant, not on an edit, so
//! when the clock passes an open or indexed note's `until` (or goes back over it), the note's
//! diagnostics are published again, pull clients are asked to pull again, and lenses and hints
//! are redrawn ("Expired Tue 24 Nov").

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tower_lsp_server::ls_types::Uri;

use super::snapshots::snapshot;
use super::state::State;

/// The longest a real clock is trusted to run without a look: a suspended laptop wakes with
/// a jump that no sleep noticed.
const MAX_SLEEP: Duration = Duration::from_secs(60);

/// Watches the clock for crossings, for the server's life: on a manual clock (tests) every
/// poll interval, on a real one until the next `until` or [`MAX_SLEEP`], whichever is first.
pub(super) async fn watcher(state: Arc<State>) {
    let mut last = state.opts.clock.now();
    loop {
        let wait = match state.opts.clock.poll_interval() {
            Some(poll) => poll,
            None => next_end(&state, last)
                .and_then(|t| (t - last).to_std().ok())
                .map_or(MAX_SLEEP, |d| d.min(MAX_SLEEP))
                // Past the instant itself, so that it counts as crossed.
                .saturating_add(Duration::from_millis(10)),
        };
        tokio::time::sleep(wait).await;
        let now = state.opts.clock.now();
        let crossed = crossed(&state, last, now);
        last = now;
        if crossed.is_empty() {
            continue;
        }
        tracing::debug!("republish {} note(s) whose until passed", crossed.len());
        for uri in crossed {
            state.mark_dirty(uri);
        }
        state.refresh_views_and_diagnostics();
    }
}

/// The `until` instants of the open documents and the indexed notes.
fn ends(state: &State) -> Vec<(Uri, DateTime<Utc>)> {
    let zone = state.opts.zone;
    let mut out = Vec::new();
    let open: Vec<Uri> = state.docs().keys().cloned().collect();
    for uri in &open {
        if let Some(t) = snapshot(state, uri).and_then(|s| s.analysis.live.as_ref()?.until_instant(&zone)) {
            out.push((uri.clone(), t));
        }
    }
    state.with_index(|idx| {
        for (path, _, live) in idx.live_notes() {
            if let Some(t) = live.until_instant(&zone)
                && let Some(uri) = state.uri_for(path)
                && !open.contains(&uri)
            {
                out.push((uri, t));
            }
        }
    });
    out
}

/// The first `until` after `now`.
fn next_end(state: &State, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    ends(state).into_iter().map(|(_, t)| t).filter(|t| *t > now).min()
}

/// The notes whose `until` lies between two looks at the clock (either way: a clock set back
/// un-expires a note).
fn crossed(state: &State, a: DateTime<Utc>, b: DateTime<Utc>) -> HashSet<Uri> {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    if lo == hi {
        return HashSet::new();
    }
    ends(state).into_iter().filter(|(_, t)| lo < *t && *t <= hi).map(|(u, _)| u).collect()
}
