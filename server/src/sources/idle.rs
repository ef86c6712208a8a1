//! IMAP IDLE for the poller: one kept connection per mailbox source that waits on the server
//! and, when it says something changed, asks the poller for a poll now ([`Pokes`]). The poll
//! itself stays [`super::poller::poll_source`]'s, under the source's lock, so what is seen
//! and queued has one home; a watcher only says when (the poller starts the watchers). A server without IDLE, or a connection
//! that fails, leaves the source to its `every`, as before.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::imap::{self, Change, MailSession};
use super::state;
use crate::config::{ImapSourceConfig, SourceConfig, SourceKind};
use crate::runs::Engine;

/// How long one IDLE waits before it is renewed: under the 29 minutes after which RFC 2177
/// lets a server drop an idle client.
const IDLE_WAIT: Duration = Duration::from_secs(25 * 60);
/// The first wait before connecting again after a failure; doubled at each failure in a row.
const RETRY_FIRST: Duration = Duration::from_secs(60);
/// The longest wait before connecting again.
const RETRY_MAX: Duration = Duration::from_secs(30 * 60);

/// The sources a watcher asked to poll now, and the poller's wake-up.
pub struct Pokes {
    names: Mutex<HashSet<String>>,
    wake: Arc<Notify>,
}

impl Pokes {
    pub fn new(wake: Arc<Notify>) -> Pokes {
        Pokes { names: Mutex::default(), wake }
    }

    /// Ask for a poll of `name` now.
    pub fn poke(&self, name: &str) {
        self.names.lock().unwrap_or_else(PoisonError::into_inner).insert(name.to_owned());
        self.wake.notify_one();
    }

    /// Whether a poll of `name` was asked for; the request is used up.
    pub fn take(&self, name: &str) -> bool {
        self.names.lock().unwrap_or_else(PoisonError::into_inner).remove(name)
    }

    /// Whether a poll of `name` was asked for, leaving the request in place.
    pub fn asked(&self, name: &str) -> bool {
        self.names.lock().unwrap_or_else(PoisonError::into_inner).contains(name)
    }
}

/// The IDLE watchers of one root, by source name, each with the configuration it runs with.
#[derive(Default)]
pub struct Watchers {
    running: HashMap<String, (ImapSourceConfig, CancellationToken)>,
}

impl Watchers {
    /// Watch each mailbox of `sources` (and only those): a new or changed one is (re)started,
    /// one no longer there stopped.
    pub fn sync<'a>(
        &mut self,
        engine: &Arc<Engine>,
        sources: impl Iterator<Item = (&'a String, &'a SourceConfig)>,
        pokes: &Arc<Pokes>,
    ) {
        let wanted: HashMap<&String, &ImapSourceConfig> = sources
            .filter_map(|(n, c)| match &c.kind {
                SourceKind::Imap(i) => Some((n, i)),
                _ => None,
            })
            .collect();
        self.running.retain(|name, (cfg, stop)| {
            let keep = wanted.get(name).is_some_and(|w| *w == cfg);
            if !keep {
                stop.cancel();
            }
            keep
        });
        for (name, cfg) in wanted {
            if self.running.contains_key(name) {
                continue;
            }
            let stop = CancellationToken::new();
            tokio::spawn(watch(engine.clone(), name.clone(), cfg.clone(), pokes.clone(), stop.clone()));
            self.running.insert(name.clone(), (cfg.clone(), stop));
        }
    }
}

impl Drop for Watchers {
    fn drop(&mut self) {
        for (_, stop) in self.running.values() {
            stop.cancel();
        }
    }
}

/// Why a watcher's connection ended.
enum Ended {
    /// The server does not offer IDLE: the source is polled every `every`.
    NoIdle,
    Failed(String),
}

/// One mailbox's watcher: connect, wait, poke; connect again after a failure, backing off.
async fn watch(
    engine: Arc<Engine>,
    name: String,
    cfg: ImapSourceConfig,
    pokes: Arc<Pokes>,
    stop: CancellationToken,
) {
    let settings = imap::ImapSettings::of(&cfg);
    let home = state::Home::of(&engine);
    let mut failures: u32 = 0;
    let mut said: Option<String> = None;
    loop {
        let ended = tokio::select! {
            () = stop.cancelled() => return,
            ended = session(&home, &name, &settings, &pokes, &mut failures) => ended,
        };
        match ended {
            Ended::NoIdle => {
                tracing::info!(
                    "source {name}: {} does not offer IDLE; polled every `every`",
                    settings.server()
                );
                return;
            }
            Ended::Failed(e) => {
                failures = failures.saturating_add(1);
                let wait = RETRY_FIRST.saturating_mul(1 << failures.min(6).saturating_sub(1)).min(RETRY_MAX);
                // Once per change of error: a server down for a night is one line, not hundreds.
                if said.as_deref() != Some(e.as_str()) {
                    tracing::warn!(
                        "source {name}: IDLE stopped: {e}; polled every `every` meanwhile, connecting again in {} s",
                        wait.as_secs()
                    );
                    said = Some(e);
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
}

/// One connection: log in, note where the mailbox is, then IDLE until it fails. A change the
/// saved state has not seen yet (mail that came while no connection waited) is a poke too.
async fn session(
    home: &state::Home,
    name: &str,
    settings: &imap::ImapSettings,
    pokes: &Pokes,
    failures: &mut u32,
) -> Ended {
    let password = match settings.password(|n| std::env::var(n).ok()) {
        Ok(p) => p,
        Err(e) => return Ended::Failed(e.to_string()),
    };
    let mut s = match MailSession::connect(settings, &password).await {
        Ok(s) => s,
        Err(e) => return Ended::Failed(e.to_string()),
    };
    if !s.supports_idle() {
        s.logout().await;
        return Ended::NoIdle;
    }
    // No cursor: EXAMINE and the highest UID, nothing fetched.
    let now = match s.poll(None, false).await {
        Ok(p) => p.cursor,
        Err(e) => return Ended::Failed(e.to_string()),
    };
    let saved: Option<imap::Cursor> = state::load(home, name)
        .ok()
        .and_then(|st| st.cursor.get("imap").cloned())
        .and_then(|v| serde_json::from_value(v).ok());
    if saved.is_some_and(|c| c.uid_validity != now.uid_validity || c.last_uid < now.last_uid) {
        pokes.poke(name);
    }
    if *failures > 0 {
        tracing::info!("source {name}: IDLE again on {}", settings.server());
    } else {
        tracing::info!("source {name}: waiting for new mail on {} (IDLE)", settings.server());
    }
    *failures = 0;
    loop {
        match s.wait_for_change(IDLE_WAIT).await {
            Ok(Change::Changed) => {
                tracing::debug!("source {name}: the server reports a change");
                pokes.poke(name);
            }
            Ok(Change::Quiet) => {}
            Err(e) => return Ended::Failed(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poke_wakes_the_poller_and_is_used_once() {
        let wake = Arc::new(Notify::new());
        let pokes = Pokes::new(wake.clone());
        assert!(!pokes.take("mail"));
        pokes.poke("mail");
        pokes.poke("mail");
        assert!(pokes.asked("mail"));
        assert!(pokes.take("mail"));
        assert!(!pokes.take("mail"), "two pokes before a poll are one poll");
        // The wake-up is stored for the poller's next wait.
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build();
        let Ok(rt) = rt else { panic!("runtime") };
        rt.block_on(async {
            let woke = tokio::time::timeout(Duration::from_secs(5), wake.notified()).await;
            assert!(woke.is_ok());
        });
    }
}
