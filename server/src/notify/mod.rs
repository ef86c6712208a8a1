//! A word when a note changes (issue 33 §2): after a run, the `live.notify` rule of the note
//! decides whether the user is told (`rule`), runs that end within a minute of each other are
//! one digest (`digest`), and the process's sinks say it: a desktop notification from `watch`
//! and `tick` (`[notify] desktop`), the editor from the language server (`lsp::runs`), and
//! `[notify] command` for each run told of (`command`). The engine reports every run's end to
//! the process's one [`Hub`] (`runs::Engine::notify`), so every root's notes share one digest.

pub mod command;
pub mod digest;
pub mod rule;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use command::Hook;
pub use digest::Digest;
pub use rule::{Entry, Notice, Outcome, told, trigger_name};

use crate::schedule::Clock;

/// A run told of, with what its folder's configuration asks for it.
#[derive(Debug, Clone)]
pub struct Told {
    pub entry: Entry,
    /// `[notify] desktop` of the note's folder.
    pub desktop: bool,
    /// `[notify] command`, when it may run for this folder.
    pub hook: Option<Hook>,
}

/// Where a process says a notice: the desktop, an editor.
pub trait Sink: Send + Sync {
    /// Say `notice` (of runs whose folders want it on the desktop when `desktop`). The future is
    /// awaited on a task of its own, never by a run.
    fn send(&self, notice: Notice, desktop: bool) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// The desktop: a notification through the system's service (`platform::desktop`).
pub struct Desktop;

impl Sink for Desktop {
    fn send(&self, notice: Notice, desktop: bool) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(async move {
            if !desktop {
                return;
            }
            let shown = tokio::time::timeout(
                command::TIMEOUT,
                crate::platform::desktop::show(&notice.message, &notice.body()),
            )
            .await;
            match shown {
                Ok(Ok(())) => tracing::debug!("notify desktop: {}", notice.message),
                Ok(Err(e)) => tracing::warn!("notify desktop: cannot show a notification: {e}"),
                Err(_) => tracing::warn!("notify desktop: no answer from the notification service"),
            }
        })
    }
}

/// The process's notifications: one digest for every root, its sinks, and the hooks' programs.
pub struct Hub {
    clock: Arc<dyn Clock>,
    digest: Mutex<Digest<Told>>,
    sinks: Vec<Arc<dyn Sink>>,
    /// Sends and hook programs in flight, for [`Hub::finish`] to wait for.
    tasks: TaskTracker,
    /// One hook program at a time: a burst of runs never makes a burst of processes.
    hooks: Arc<Semaphore>,
    wake: tokio::sync::Notify,
}

impl Hub {
    /// `first_at_once`: say the first run of a window at once (`watch`, the language server),
    /// or let it wait for the window's end too (`tick`, which says the pass's runs together).
    pub fn new(clock: Arc<dyn Clock>, sinks: Vec<Arc<dyn Sink>>, first_at_once: bool) -> Arc<Hub> {
        Arc::new(Hub {
            clock,
            digest: Mutex::new(Digest::new(digest::WINDOW, first_at_once)),
            sinks,
            tasks: TaskTracker::new(),
            hooks: Arc::new(Semaphore::new(1)),
            wake: tokio::sync::Notify::new(),
        })
    }

    /// A run told of: its hook started, and its notice said now or at its window's end.
    pub fn report(&self, told: Told) {
        if let Some(hook) = told.hook.clone() {
            let (entry, hooks) = (told.entry.clone(), self.hooks.clone());
            self.tasks.spawn(async move {
                let Ok(_turn) = hooks.acquire_owned().await else { return };
                // Bounded by its timeout; at the process's end its task is dropped with the
                // runtime, and with it the program's process group.
                if let Err(e) = command::run(&hook, &entry, &CancellationToken::new()).await {
                    tracing::warn!("notify command {}: {e}", entry.path.display());
                }
            });
        }
        let now = self.clock.now();
        let (due, at_once) = {
            let mut d = self.digest.lock().unwrap_or_else(PoisonError::into_inner);
            (d.due(now), d.push(now, told))
        };
        for batch in due.into_iter().chain(at_once) {
            self.say(batch);
        }
        self.wake.notify_one();
    }

    /// Say the runs that waited for their window, whenever it ends; runs until the process ends.
    pub fn start(self: &Arc<Self>) {
        let hub = self.clone();
        tokio::spawn(async move {
            loop {
                let next = hub.digest.lock().unwrap_or_else(PoisonError::into_inner).next_due();
                match next {
                    None => hub.wake.notified().await,
                    Some(at) => {
                        // A clock set by a test moves by itself: look again at its pace.
                        let wait = hub
                            .clock
                            .poll_interval()
                            .unwrap_or_else(|| (at - hub.clock.now()).to_std().unwrap_or_default());
                        tokio::select! {
                            () = tokio::time::sleep(wait) => {}
                            () = hub.wake.notified() => {}
                        }
                    }
                }
                let due = hub.digest.lock().unwrap_or_else(PoisonError::into_inner).due(hub.clock.now());
                if let Some(batch) = due {
                    hub.say(batch);
                }
            }
        });
    }

    /// Say whatever still waits and wait for every notice and hook in flight (`tick`'s end,
    /// `watch`'s): each is bounded in time.
    pub async fn finish(&self) {
        let rest = self.digest.lock().unwrap_or_else(PoisonError::into_inner).drain();
        if let Some(batch) = rest {
            self.say(batch);
        }
        self.tasks.close();
        self.tasks.wait().await;
    }

    fn say(&self, batch: Vec<Told>) {
        let desktop = batch.iter().any(|t| t.desktop);
        let notice = Notice::of(batch.into_iter().map(|t| t.entry).collect());
        tracing::info!("notify {}", notice.message);
        for sink in &self.sinks {
            self.tasks.spawn(sink.send(notice.clone(), desktop));
        }
    }
}

#[cfg(test)]
#[path = "hub_tests.rs"]
mod tests;
