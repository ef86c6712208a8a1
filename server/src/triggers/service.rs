//! One root's triggers: its event processor and its scheduler, started together, and the one
//! routing of file events to them. `livenote watch` and the language server both build a
//! [`RootService`] per root and hand it their file events.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::routing::{FileEvent, classify};
use crate::events::{self, NotesFn, Processor};
use crate::runs::Engine;
use crate::scheduler::{NoteSource, Scheduler};

/// The running triggers of one root.
pub struct RootService {
    pub engine: Arc<Engine>,
    /// Wakes the scheduler to re-plan (a note changed, trust or configuration changed).
    pub scheduler_wake: Arc<Notify>,
    /// Wakes the event processor (a file in `pending/`, trust granted).
    pub events_wake: Arc<Notify>,
    /// Wakes the sources' loop (configuration or trust changed).
    pub sources_wake: Arc<Notify>,
    /// Ends the event processor (and an event run in progress, whose event goes back to
    /// `pending/`) when the service is dropped.
    stop: CancellationToken,
}

impl RootService {
    /// Start the root's event processor and scheduler. `source` is the root's notes as the
    /// caller's index has them (the scheduler re-plans when `scheduler_wake` is notified, which
    /// a process with several roots may share); `notes` the notes events may go to. Must run
    /// inside a tokio runtime.
    pub fn start(
        engine: Arc<Engine>,
        source: Arc<dyn NoteSource>,
        notes: NotesFn,
        scheduler_wake: Arc<Notify>,
    ) -> RootService {
        // The queue's folders are not created here: opening a folder keeps nothing in it until
        // something needs keeping (an event queued, a run). Producers create them
        // (`events::create_event`), and the watchers see them appear (`routing::classify`).
        // A linked state folder is still reported at once.
        if let Err(e) = events::check_dirs(&engine.root) {
            tracing::warn!("events {}: {e}", engine.root.display());
        }
        let stop = CancellationToken::new();
        let processor = Arc::new(Processor::for_engine(engine.clone(), notes));
        let events_wake = events::spawn(processor, stop.clone());
        let sources_wake = crate::sources::poller::spawn(engine.clone(), events_wake.clone(), stop.clone());
        let scheduler = Arc::new(Scheduler::new(engine.clone(), source, scheduler_wake.clone()));
        tokio::spawn(scheduler.run());
        RootService { engine, scheduler_wake, events_wake, sources_wake, stop }
    }

    pub fn root(&self) -> &Path {
        &self.engine.root
    }

    /// What `path` is for this root ([`classify`]), with the trust store the engine uses.
    pub fn classify(&self, path: &Path) -> FileEvent {
        // The store as the watcher named it (canonical under FSEvents), for classify's compare.
        let is_store = self.engine.trust.as_ref().is_some_and(|t| t.is_store_file(path));
        let trust_file = is_store.then_some(path);
        match classify(&self.engine.root, trust_file, path) {
            // A program the folder's configuration runs is part of what its trust covers
            // (`git pull` rewrote `scripts/gen.sh`): reload as for the config itself.
            FileEvent::Other if crate::workspace::trust::runs_file(&self.engine.root, path) => {
                FileEvent::FolderConfig
            }
            kind => kind,
        }
    }

    /// Act on one changed path: wake the event processor, reload the configuration
    /// (`reload`, the caller's: its layers differ), or re-read a note (`refresh`, into the
    /// caller's index; `true` when the scheduler must re-plan). Returns what the path was,
    /// and whether a note changed in a way the scheduler cares about.
    pub fn on_file(
        &self,
        path: &Path,
        refresh: &dyn Fn(&Path) -> bool,
        reload: &dyn Fn(),
    ) -> (FileEvent, bool) {
        let kind = self.classify(path);
        let changed = match kind {
            FileEvent::EventQueue => {
                self.events_wake.notify_one();
                false
            }
            FileEvent::FolderConfig | FileEvent::TrustStore => {
                reload();
                self.scheduler_wake.notify_waiters();
                self.scheduler_wake.notify_one();
                self.events_wake.notify_one();
                self.sources_wake.notify_one();
                false
            }
            FileEvent::Note => {
                let changed = refresh(path);
                if changed {
                    self.scheduler_wake.notify_waiters();
                    self.scheduler_wake.notify_one();
                }
                changed
            }
            FileEvent::Attempt => {
                // Another process's run into its editor's buffer: counted from now on.
                self.engine.attempts.refresh(path);
                self.scheduler_wake.notify_one();
                false
            }
            FileEvent::Other => false,
        };
        (kind, changed)
    }
}

impl Drop for RootService {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
