//! Runs held by another process (`livenote watch`, `livenote run`, another editor): a note
//! whose run lock another process holds shows as updating, and nothing announces the lock's
//! release (the note's own change comes before it). While such notes are shown, their locks are
//! looked at every second; when one is released, lenses and hints are redrawn.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::schedule::Clock;

/// How often a held lock is looked at: the lens stays "updating" at most this long after a run
/// in another process ends.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// The notes seen held by another process's lock, with their root's engine.
#[derive(Clone, Default)]
pub struct ForeignLocks {
    held: Arc<Mutex<HashMap<PathBuf, Arc<crate::runs::Engine>>>>,
    added: Arc<tokio::sync::Notify>,
}

impl ForeignLocks {
    /// `path` shows as updating because of a lock this process does not hold.
    pub(super) fn watch(&self, path: &Path, engine: &Arc<crate::runs::Engine>) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if held.insert(path.to_path_buf(), engine.clone()).is_none() {
            self.added.notify_one();
        }
    }

    /// Forget the notes whose lock is free now; those notes, with their engines.
    fn released(&self) -> Vec<(PathBuf, Arc<crate::runs::Engine>)> {
        let held: Vec<(PathBuf, Arc<crate::runs::Engine>)> = {
            let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            held.iter().map(|(p, e)| (p.clone(), e.clone())).collect()
        };
        let free: Vec<(PathBuf, Arc<crate::runs::Engine>)> =
            held.into_iter().filter(|(p, e)| !e.store.is_locked(&e.rel(p))).collect();
        if free.is_empty() {
            return free;
        }
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        for (p, _) in &free {
            held.remove(p);
        }
        free
    }

    fn is_empty(&self) -> bool {
        self.held.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
    }
}

/// For the server's life: asleep while no note is held elsewhere, else a look every second;
/// `redraw` with the notes whose lock was released.
pub(super) async fn watcher(
    locks: ForeignLocks,
    clock: Arc<dyn Clock>,
    redraw: impl Fn(&[(PathBuf, Arc<crate::runs::Engine>)]),
) {
    loop {
        if locks.is_empty() {
            locks.added.notified().await;
        }
        tokio::time::sleep(clock.poll_interval().unwrap_or(LOOK_EVERY).min(LOOK_EVERY)).await;
        let looked = locks.clone();
        // Opening lock files is blocking I/O.
        let released = tokio::task::spawn_blocking(move || looked.released()).await.unwrap_or_default();
        if !released.is_empty() {
            tracing::debug!("redraw after a run in another process ended");
            redraw(&released);
        }
    }
}
