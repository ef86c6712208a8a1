//! IMAP IDLE for the poller: one kept connection per mailbox source that waits on the server
//! and, when it says something changed, asks the poller for a poll now ([`Pokes`]). The poll
//! itself stays [`super::poller::poll_source`]'s, under the source's lock, so what is seen
//! and queued has one home; a watcher only says when (the poller starts the watchers). A server without IDLE, or a connection
//! that fails, leaves the source to its `every`, as before.
//!
//! A mail server is treated with care: however often it reports a change, a watcher asks for
//! at most one poll per `idle_min_gap` (each poll is a login); a change within the gap is
//! polled when the gap ends, with whatever else came meanwhile. A connection that fails is
//! tried again after twice the gap, doubled at each failure in a row: only a connection that
//! waited once on IDLE counts as working, so a server that logs in and then fails is not
//! reconnected to at a steady pace.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::imap::{self, Change, MailSession};
use super::state;
use crate::config::{ImapSourceConfig, SourceConfig, SourceKind};
use crate::runs::Engine;

/// How long one IDLE waits before it is renewed: under the 29 minutes after which RFC 2177
/// lets a server drop an idle client.
const IDLE_WAIT: Duration = Duration::from_secs(25 * 60);
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
    let gap = cfg.idle_min_gap;
    let mut failures: u32 = 0;
    let mut said: Option<String> = None;
    loop {
        let ended = tokio::select! {
            () = stop.cancelled() => return,
            ended = session(&home, &name, &settings, gap, &pokes, &mut failures) => ended,
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
                let wait = retry_wait(gap, failures);
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

/// The wait before connecting again after `failures` failures in a row: twice the gap, doubled
/// at each, at most [`RETRY_MAX`].
fn retry_wait(gap: Duration, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    gap.saturating_mul(2).saturating_mul(1 << doublings).min(RETRY_MAX)
}

/// How long a change reported at `now` waits before its poke, the last poke having been at
/// `last`: nothing once `gap` has passed since.
fn wait_before_poke(last: Option<Instant>, now: Instant, gap: Duration) -> Duration {
    last.map_or(Duration::ZERO, |at| gap.saturating_sub(now.saturating_duration_since(at)))
}

/// One connection: log in, note where the mailbox is, then IDLE until it fails. A change the
/// saved state has not seen yet (mail that came while no connection waited) is a poke too.
async fn session(
    home: &state::Home,
    name: &str,
    settings: &imap::ImapSettings,
    gap: Duration,
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
    let mut last_poke = None;
    if saved.is_some_and(|c| c.uid_validity != now.uid_validity || c.last_uid < now.last_uid) {
        pokes.poke(name);
        last_poke = Some(Instant::now());
    }
    if *failures > 0 {
        tracing::info!("source {name}: IDLE again on {}", settings.server());
    } else {
        tracing::info!("source {name}: waiting for new mail on {} (IDLE)", settings.server());
    }
    loop {
        let change = s.wait_for_change(IDLE_WAIT).await;
        if change.is_ok() {
            // The connection works: a later failure starts the backoff over.
            *failures = 0;
        }
        match change {
            Ok(Change::Changed) => {
                let wait = wait_before_poke(last_poke, Instant::now(), gap);
                tracing::debug!(
                    "source {name}: the server reports a change; polling in {} ms",
                    wait.as_millis()
                );
                // Off IDLE meanwhile: what comes during the wait is in that poll too.
                tokio::time::sleep(wait).await;
                pokes.poke(name);
                last_poke = Some(Instant::now());
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
    fn pokes_keep_the_gap_and_reconnections_back_off() {
        let gap = Duration::from_secs(30);
        let t0 = Instant::now();
        assert_eq!(wait_before_poke(None, t0, gap), Duration::ZERO, "the first change is polled at once");
        let later = |s| t0 + Duration::from_secs(s);
        assert_eq!(wait_before_poke(Some(t0), later(1), gap), Duration::from_secs(29));
        assert_eq!(wait_before_poke(Some(t0), later(30), gap), Duration::ZERO);
        assert_eq!(wait_before_poke(Some(later(5)), t0, gap), gap, "a clock read out of order waits the gap");
        let mins: Vec<u64> = (1..=7).map(|f| retry_wait(gap, f).as_secs() / 60).collect();
        assert_eq!(mins, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(retry_wait(Duration::from_secs(1), 1), Duration::from_secs(2));
        assert_eq!(retry_wait(gap, u32::MAX), RETRY_MAX);
    }

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
