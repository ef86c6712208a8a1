//! How a run ends when it does not succeed: a failure (counted in `failures`, retried after
//! the backoff) or a Stop (the occurrence is over), and the watch for a stop asked by another
//! process.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Engine {
    /// Record a failure in `lastRunError` and count it in `failures`; the cycle stays unfired
    /// and is retried after the backoff, which doubles with each consecutive failure.
    pub(super) async fn fail(&self, io: &dyn NoteIo, path: &Path, run_id: &str, error: String) -> Outcome {
        let msg = one_line(&error, 300);
        let r = io
            .apply(path, &|t: &str| {
                // Counted from the text the write lands on: the note's lock is held, so no
                // other run moved it since this one started.
                let before = note::analyze(t, &note::Options::default()).live.map_or(0, |l| l.failures);
                let count = before.saturating_add(1).to_string();
                rewrite::set_runtime_fields(
                    t,
                    &[(RuntimeField::LastRunError, Some(&msg)), (RuntimeField::Failures, Some(&count))],
                )
                .map_err(|e| e.to_string())
            })
            .await;
        if let Err(e) = r {
            tracing::warn!("failed {}: cannot record the error: {e}", path.display());
        }
        Outcome::Failed { run_id: run_id.to_owned(), error: msg }
    }

    /// Record a Stop: `lastRunError: "stopped"` and `lastStoppedAt`, which end the occurrence
    /// (SPEC 3: the scheduler does not retry it; the next fire is the next occurrence). Not a
    /// failure: the count and the backoff stay as they were.
    pub(super) async fn stopped(&self, io: &dyn NoteIo, path: &Path, run_id: &str) -> Outcome {
        let stamp = timestamp(self.clock.now());
        let r = io
            .apply(path, &|t: &str| {
                rewrite::set_runtime_fields(
                    t,
                    &[
                        (RuntimeField::LastRunError, Some("stopped")),
                        (RuntimeField::LastStoppedAt, Some(&stamp)),
                    ],
                )
                .map_err(|e| e.to_string())
            })
            .await;
        if let Err(e) = r {
            tracing::warn!("stopped {}: cannot record the stop: {e}", path.display());
        }
        Outcome::Stopped { run_id: run_id.to_owned() }
    }
}

/// How often a run looks for a stop request from another process: a stat, cheap enough, and
/// Stop answers within a fraction of a second.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// Ends the stop watch when the run ends (dropped with the run).
pub(super) struct StopWatch(CancellationToken);

impl Drop for StopWatch {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

pub(super) fn watch_for_stop(store: Store, rel: String, run: CancellationToken) -> StopWatch {
    let done = CancellationToken::new();
    let until = done.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = until.cancelled() => return,
                () = run.cancelled() => return,
                () = tokio::time::sleep(STOP_POLL) => {}
            }
            if store.stop_requested(&rel) {
                store.clear_stop(&rel);
                tracing::info!("stop {rel}: asked by another process");
                run.cancel();
                return;
            }
        }
    });
    StopWatch(done)
}
