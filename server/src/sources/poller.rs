//! One poll of one source ([`poll_source`]: under the source's lock, what is new since its
//! state becomes events), and the loop that polls a root's sources when due ([`spawn`], inside
//! the root's service: `watch` and the language server alike).

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use futures::FutureExt;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::state::{self, SourceState};
use super::{Item, command, feed, fetch, ics, imap};
use crate::config::{IcsLocation, ImapSourceConfig, SourceConfig, SourceKind};
use crate::runs::Engine;

/// The longest the loop sleeps before it looks at the configuration and the states again.
const MAX_SLEEP: Duration = Duration::from_secs(60);
/// How long a source another process is polling waits before this one looks again.
const BUSY_WAIT: TimeDelta = TimeDelta::seconds(30);

/// What one poll did.
#[derive(Debug, Default)]
pub struct PollReport {
    /// The new items, with the id of the event each became (`None`: a dry run, or the first
    /// poll without `backfill`, which only records them).
    pub new: Vec<(Item, Option<String>)>,
    /// The first poll of the source, without `backfill`: what exists was recorded as seen.
    pub recorded_only: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum PollError {
    /// Another poll of this source (another process) holds its lock.
    #[error("another process is polling it now")]
    Busy,
    /// The source cannot be polled (a webhook listens; a kind this build does not poll).
    #[error("{0}")]
    NotPolled(String),
    /// The poll failed; the state has the error and the backoff.
    #[error("{0}")]
    Failed(String),
    #[error("{0}")]
    State(String),
}

/// Everything a poll needs to know besides the source's configuration.
pub struct PollCx<'a> {
    pub root: &'a Path,
    pub name: &'a str,
    /// Whether the folder is trusted: no source polls into one that is not ([`refusal`]).
    pub trusted: bool,
    /// Where the root's sources keep what they have seen (the user's data folder).
    pub home: &'a state::Home,
    pub now: DateTime<Utc>,
    /// The zone calendars are read in (the engine's).
    pub zone: crate::schedule::Zone,
    /// Report what would be queued; queue nothing, save nothing.
    pub dry_run: bool,
    /// Log a failure each time, not only when its error changed: a one-off pass
    /// (`livenote tick`) whose log is all its user reads.
    pub say_each_failure: bool,
    pub cancel: CancellationToken,
}

/// Poll `cfg` once: fetch its items, queue each new one (never seen, or seen with another
/// version) as an event, and save what was seen. Holds the source's lock throughout, so two
/// processes never queue the same item.
pub async fn poll_source(cfg: &SourceConfig, cx: &PollCx<'_>) -> Result<PollReport, PollError> {
    let name = cx.name;
    // Every caller checks this first; here too, so that no path polls into a folder it must not.
    if let Some(why) = refusal(cfg, cx.root, cx.trusted) {
        return Err(PollError::NotPolled(why.say(cx.root)));
    }
    let _lock = match state::try_lock(cx.home, name) {
        Ok(Some(lock)) => lock,
        Ok(None) => return Err(PollError::Busy),
        Err(e) => return Err(PollError::State(format!("cannot lock the state of `{name}`: {e}"))),
    };
    let made_for = state::made_for(&cfg.kind);
    let mut st = match state::load(cx.home, name) {
        Ok(s) if s.made_for == made_for => s,
        // None yet, or made for another source: a cursor of another mailbox or feed is not
        // believed, so this is a first poll.
        Ok(s) => {
            if !s.made_for.is_empty() {
                tracing::info!(
                    "source {name}: what it reads changed (its kind, address, server, mailbox or program); starting afresh"
                );
            }
            SourceState::default()
        }
        // Starting afresh queues nothing (the first poll records), so a damaged file costs
        // the items that arrive before the next poll, never a flood of old ones.
        Err(e) => {
            tracing::warn!("source {name}: cannot read its state ({e}); starting afresh");
            SourceState::default()
        }
    };
    st.kind = cfg.kind.name().to_owned();
    st.made_for = made_for;
    let fetched = caught(fetch(cfg, cx, &mut st)).await;
    let items = match fetched {
        Ok(items) => items,
        Err(FetchError::NotPolled(why)) => return Err(PollError::NotPolled(why)),
        Err(FetchError::Failed(error)) => {
            if cx.dry_run {
                return Err(PollError::Failed(error));
            }
            let changed = st.failed(&error, cx.now);
            if changed || cx.say_each_failure {
                let retry = state::backoff(st.failures);
                tracing::warn!(
                    "source {name}: poll failed: {error}; retrying in {}",
                    crate::config::format_duration(retry.to_std().unwrap_or_default())
                );
            }
            save(cx.home, name, &st)?;
            return Err(PollError::Failed(error));
        }
    };
    let first = st.last_success.is_none();
    let mut report = PollReport { recorded_only: first && !cfg.backfill, ..PollReport::default() };
    for item in items {
        if !st.is_new(&item.id, &item.version) {
            continue;
        }
        let mut event_id = None;
        if !report.recorded_only && !cx.dry_run {
            let kind = item.kind.as_deref().unwrap_or(&cfg.event_type);
            match crate::events::create_event(cx.root, name, kind, item.payload.clone(), None, cx.now) {
                Ok(event) => {
                    tracing::info!("source {name}: queued {} for {}", event.id, short(&item.summary));
                    st.events_queued += 1;
                    event_id = Some(event.id);
                }
                // Not recorded: the next poll tries it again.
                Err(e) => {
                    tracing::warn!("source {name}: cannot queue {}: {e}", short(&item.id));
                    report.new.push((item, None));
                    continue;
                }
            }
        }
        st.record(&item.id, &item.version);
        report.new.push((item, event_id));
    }
    if cx.dry_run {
        return Ok(report);
    }
    if let Some(was) = st.succeeded(cx.now, cfg.every) {
        tracing::info!("source {name}: polled again after: {was}");
    }
    if report.recorded_only && !report.new.is_empty() {
        tracing::info!(
            "source {name}: first poll recorded {} as seen (backfill is off)",
            crate::text::count(report.new.len(), "item")
        );
    }
    save(cx.home, name, &st)?;
    Ok(report)
}

fn short(s: &str) -> String {
    crate::text::short::one_line(s, 80)
}

fn save(home: &state::Home, name: &str, st: &SourceState) -> Result<(), PollError> {
    state::save(home, name, st)
        .map_err(|e| PollError::State(format!("cannot save the state of `{name}`: {e}")))
}

enum FetchError {
    NotPolled(String),
    Failed(String),
}

/// The items the source has now. `st.cursor` is the kind's own between polls.
async fn fetch(cfg: &SourceConfig, cx: &PollCx<'_>, st: &mut SourceState) -> Result<Vec<Item>, FetchError> {
    match &cfg.kind {
        SourceKind::Command(c) => {
            let p = command::CommandPoll {
                root: cx.root,
                name: cx.name,
                trusted: cx.trusted,
                last_success: st.last_success.map(crate::runs::timestamp),
            };
            command::poll(c, &p, cx.cancel.clone()).await.map_err(FetchError::Failed)
        }
        SourceKind::Webhook(_) => {
            Err(FetchError::NotPolled("a webhook listens for requests; it is not polled".to_owned()))
        }
        SourceKind::Feed { url } => feed_items(url, st).await.map_err(FetchError::Failed),
        SourceKind::Ics { at, horizon } => ics_items(at, *horizon, cx, st).await.map_err(FetchError::Failed),
        SourceKind::Imap(c) => imap_items(c, cfg.backfill, cx, st).await.map_err(FetchError::Failed),
    }
}

/// The validators of the last full answer, kept in the cursor (`ETag`, `Last-Modified`).
fn saved_validators(st: &SourceState) -> fetch::Validators {
    st.cursor.get("validators").cloned().and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default()
}

/// A feed's entries, each an item; nothing when the server says it did not change.
async fn feed_items(url: &str, st: &mut SourceState) -> Result<Vec<Item>, String> {
    let location = fetch::Location::parse(url).map_err(|e| e.to_string())?;
    let fetched = fetch::fetch(&location, &saved_validators(st), fetch::FetchOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let fetch::Fetched::Body { bytes, validators } = fetched else { return Ok(Vec::new()) };
    let base = url.to_owned();
    let parsed = off_thread(move || feed::parse(&bytes, Some(&base))).await?.map_err(|e| e.to_string())?;
    st.cursor = serde_json::json!({ "validators": validators });
    Ok(parsed.entries.iter().map(|e| Item::from_parts(e.to_item())).collect())
}

/// A calendar's digest of today and the next `horizon`: one item a day, whose version changes
/// when an event is added, moved, changed or cancelled.
async fn ics_items(
    at: &IcsLocation,
    horizon: Duration,
    cx: &PollCx<'_>,
    st: &mut SourceState,
) -> Result<Vec<Item>, String> {
    let location = match at {
        IcsLocation::Url(url) => fetch::Location::parse(url).map_err(|e| e.to_string())?,
        IcsLocation::Path(p) if p.is_absolute() => fetch::Location::File(p.clone()),
        IcsLocation::Path(p) => fetch::Location::File(cx.root.join(p)),
    };
    let prev: Option<ics::Digest> =
        st.cursor.get("digest").cloned().and_then(|v| serde_json::from_value(v).ok());
    // A new day needs the whole calendar again, changed or not.
    let validators = if ics::may_ask_if_modified(prev.as_ref(), cx.zone, cx.now) {
        saved_validators(st)
    } else {
        fetch::Validators::default()
    };
    let fetched = fetch::fetch(&location, &validators, fetch::FetchOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let fetch::Fetched::Body { bytes, validators } = fetched else { return Ok(Vec::new()) };
    let (zone, now) = (cx.zone, cx.now);
    let digest =
        off_thread(move || ics::digest(&bytes, zone, now, horizon)).await?.map_err(|e| e.to_string())?;
    if let Some(problem) = digest.over_budget() {
        tracing::warn!("source {}: {problem}", cx.name);
    }
    let changes = ics::changes(prev.as_ref(), &digest);
    let item = Item::from_parts(digest.to_item(&changes));
    st.cursor = serde_json::json!({ "validators": validators, "digest": digest });
    Ok(vec![item])
}

/// A panic in one source's poll (a parser's bug on what a server sent) is that source's
/// failure, with its backoff: it never ends `tick`, `watch` or the language server.
async fn caught<T>(poll: impl Future<Output = Result<T, FetchError>>) -> Result<T, FetchError> {
    AssertUnwindSafe(poll).catch_unwind().await.unwrap_or_else(|_| Err(FetchError::Failed(panicked())))
}

/// `parse` on a thread of the blocking pool: a calendar's expansion or a large feed takes up
/// to seconds of CPU, which on one of the runtime's two workers would hold up every request,
/// webhook and run of the process meanwhile. Its panic is an error.
async fn off_thread<T: Send + 'static>(parse: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    tokio::task::spawn_blocking(parse)
        .await
        .map_err(|e| if e.is_panic() { panicked() } else { format!("the poll was cut short: {e}") })
}

/// A poll's panic as its error. The panic's own message (in the log, where the panic hook
/// wrote it with its place) is not repeated: it may quote what was being read, a mail's or a
/// calendar's text, and the error is kept in `.livenote/sources/`.
fn panicked() -> String {
    "the poll failed on a bug in livenote; the log says where (please report it)".to_owned()
}

/// A mailbox's new messages since the saved cursor (UIDVALIDITY and the last UID).
async fn imap_items(
    c: &ImapSourceConfig,
    backfill: bool,
    cx: &PollCx<'_>,
    st: &mut SourceState,
) -> Result<Vec<Item>, String> {
    let settings = imap::ImapSettings::of(c);
    settings.check().map_err(|e| e.to_string())?;
    let password = settings.password(|n| std::env::var(n).ok()).map_err(|e| e.to_string())?;
    let cursor: Option<imap::Cursor> =
        st.cursor.get("imap").cloned().and_then(|v| serde_json::from_value(v).ok());
    let polled = imap::poll_once(&settings, &password, cursor, backfill).await.map_err(|e| e.to_string())?;
    if let Some(old) = polled.validity_changed_from {
        tracing::warn!(
            "source {}: the mailbox {} was recreated (UIDVALIDITY {old} -> {}); taken as a first poll",
            cx.name,
            c.mailbox,
            polled.cursor.uid_validity
        );
    }
    st.cursor = serde_json::json!({ "imap": polled.cursor });
    Ok(polled.messages.iter().map(|m| Item::from_parts(imap::to_item(m))).collect())
}

/// When `cfg` is next due, from its state: at once when never polled, at the end of a
/// failure's backoff, else `every` after the last poll.
pub fn due_at(cfg: &SourceConfig, st: &SourceState) -> Option<DateTime<Utc>> {
    let every = TimeDelta::from_std(cfg.every?).ok()?;
    if let Some(until) = st.backoff_until {
        return Some(until);
    }
    Some(st.last_poll.map_or(DateTime::<Utc>::MIN_UTC, |t| t + every))
}

/// Why a source does not poll into, or listen for, a workspace root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The folder is not trusted: no source, the user's own included, queues events into it
    /// or listens on its behalf (SPEC 5).
    Untrusted { users: bool },
    /// A source of the user's own file whose `folders` leaves this one out.
    OtherFolders,
}

impl Refusal {
    /// The reason, for a log line or an error (`root` as the folder).
    pub fn say(self, root: &Path) -> String {
        match self {
            Refusal::Untrusted { users: true } => format!(
                "{} is not trusted: no source, your own included, queues events into or listens for a folder you have not trusted (`livenote trust`)",
                root.display()
            ),
            Refusal::Untrusted { users: false } => format!(
                "it comes from the folder's or the editor's settings and {} is not trusted (`livenote trust`)",
                root.display()
            ),
            Refusal::OtherFolders => {
                format!("its `folders` (your own config) does not name {}", root.display())
            }
        }
    }
}

/// Why `cfg` may not poll into (or listen for) `root`, if it may not: the folder must be
/// trusted, whoever defined the source, and a source of the user's own file with `folders`
/// serves only those.
pub fn refusal(cfg: &SourceConfig, root: &Path, trusted: bool) -> Option<Refusal> {
    if !cfg.serves(root, &crate::config::ProcessEnv) {
        return Some(Refusal::OtherFolders);
    }
    (!trusted).then_some(Refusal::Untrusted { users: !cfg.needs_trust() })
}

/// Whether `cfg` may poll into (or listen for) `root` ([`refusal`]).
pub fn may_poll(cfg: &SourceConfig, root: &Path, trusted: bool) -> bool {
    refusal(cfg, root, trusted).is_none()
}

/// Whether `cfg` is polled by this process's loop or pass at all: enabled, with an `every` (a
/// webhook listens instead), and allowed into the folder ([`may_poll`]).
pub fn polls_here(cfg: &SourceConfig, root: &Path, trusted: bool) -> bool {
    cfg.enabled && cfg.every.is_some() && may_poll(cfg, root, trusted)
}

/// The sources of `engine`'s root due at `now`, by name, for a pass that polls once and ends
/// (`livenote tick`): none when another machine is the folder's scheduling host, as under
/// [`spawn`].
pub fn due_now(engine: &Engine, now: DateTime<Utc>) -> Vec<(String, SourceConfig)> {
    if engine.scheduled_on().is_some() {
        return Vec::new();
    }
    let trusted = engine.trusted();
    let home = state::Home::of(engine);
    let sources = engine.config.read().map(|c| c.sources.clone()).unwrap_or_default();
    sources
        .into_iter()
        .filter(|(_, cfg)| polls_here(cfg, &engine.root, trusted))
        .filter(|(name, cfg)| {
            let st = state::load(&home, name).unwrap_or_default();
            due_at(cfg, &st).is_some_and(|due| due <= now)
        })
        .collect()
}

/// Poll each of `due` ([`due_now`]) once, all at once; each name with what its poll did.
pub async fn poll_each(
    engine: &Engine,
    due: Vec<(String, SourceConfig)>,
    cancel: &CancellationToken,
) -> Vec<(String, Result<PollReport, PollError>)> {
    let now = engine.clock.now();
    let trusted = engine.trusted();
    let home = &state::Home::of(engine);
    let polls = due.iter().map(|(name, cfg)| async move {
        let cx = PollCx {
            root: &engine.root,
            name,
            trusted,
            home,
            now,
            zone: engine.zone,
            dry_run: false,
            say_each_failure: true,
            cancel: cancel.clone(),
        };
        (name.clone(), poll_source(cfg, &cx).await)
    });
    futures::future::join_all(polls).await
}

/// Start the root's sources: each polled when due (and webhooks listening) until `stop`.
/// Returns the notifier that makes it look again (the configuration or trust changed).
pub fn spawn(engine: Arc<Engine>, events_wake: Arc<Notify>, stop: CancellationToken) -> Arc<Notify> {
    let wake = Arc::new(Notify::new());
    tokio::spawn(run(engine, events_wake, wake.clone(), stop));
    wake
}

async fn run(engine: Arc<Engine>, events_wake: Arc<Notify>, wake: Arc<Notify>, stop: CancellationToken) {
    let root = engine.root.clone();
    let home = Arc::new(state::Home::of(&engine));
    // Mailboxes whose server offers IDLE are polled when it reports a change, besides `every`.
    let pokes = Arc::new(super::idle::Pokes::new(wake.clone()));
    let mut watchers = super::idle::Watchers::default();
    let mut polls: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    // A source whose poll could not even start (its lock or state refused, another process
    // polling it, a kind this build does not poll) waits here, in memory, rather than being
    // retried at once: its state file, which says when it is due, was not written.
    let held: Arc<std::sync::Mutex<HashMap<String, DateTime<Utc>>>> = Arc::default();
    let mut listeners = super::webhook::Listeners::default();
    let mut said_refused: Vec<(String, Refusal)> = Vec::new();
    let mut said_elsewhere: Option<String> = None;
    loop {
        polls.retain(|_, h| !h.is_finished());
        let mut sources = engine.config.read().map(|c| c.sources.clone()).unwrap_or_default();
        // A folder synced to several machines: its sources poll on the host alone, as its
        // notes fire there, or each machine would queue every item once.
        let elsewhere = engine.scheduled_on();
        if elsewhere != said_elsewhere {
            if let (Some(host), false) = (&elsewhere, sources.is_empty()) {
                tracing::info!("sources {}: polled on {host} ([scheduler] host)", root.display());
            }
            said_elsewhere = elsewhere.clone();
        }
        if elsewhere.is_some() {
            sources.clear();
        }
        let trusted = engine.trusted();
        let now = engine.clock.now();
        let mut next: Option<DateTime<Utc>> = None;
        let mut refused = Vec::new();
        for (name, cfg) in &sources {
            if !cfg.enabled {
                continue;
            }
            if let Some(why) = refusal(cfg, &root, trusted) {
                refused.push((name.clone(), why));
                continue;
            }
            if cfg.every.is_none() || polls.contains_key(name) {
                continue;
            }
            let st = state::load(&home, name).unwrap_or_default();
            let Some(mut due) = due_at(cfg, &st) else { continue };
            // Asked for by its IDLE watcher: now, unless a failure's backoff runs.
            if st.backoff_until.is_none() && pokes.asked(name) {
                due = due.min(now);
            }
            if let Some(until) = held.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(name) {
                due = due.max(*until);
            }
            if due > now {
                next = Some(next.map_or(due, |n| n.min(due)));
                continue;
            }
            pokes.take(name);
            let (engine, home, cfg, name2, wake, events_wake, stop, held) = (
                engine.clone(),
                home.clone(),
                cfg.clone(),
                name.clone(),
                wake.clone(),
                events_wake.clone(),
                stop.clone(),
                held.clone(),
            );
            polls.insert(
                name.clone(),
                tokio::spawn(async move {
                    let cx = PollCx {
                        root: &engine.root,
                        name: &name2,
                        trusted: engine.trusted(),
                        home: &home,
                        now: engine.clock.now(),
                        zone: engine.zone,
                        dry_run: false,
                        say_each_failure: false,
                        cancel: stop,
                    };
                    let hold = match poll_source(&cfg, &cx).await {
                        Ok(r) => {
                            if r.new.iter().any(|(_, id)| id.is_some()) {
                                events_wake.notify_one();
                            }
                            None
                        }
                        Err(PollError::Failed(_)) => None,
                        Err(PollError::Busy) => {
                            tracing::debug!("source {name2}: polled by another process");
                            Some(BUSY_WAIT)
                        }
                        Err(e) => {
                            let held = held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                            if !held.contains_key(&name2) {
                                tracing::warn!("source {name2}: not polled: {e}");
                            }
                            Some(state::MAX_BACKOFF)
                        }
                    };
                    let mut held = held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    match hold {
                        Some(wait) => held.insert(name2.clone(), cx.now + wait),
                        None => held.remove(&name2),
                    };
                    drop(held);
                    wake.notify_one();
                }),
            );
        }
        if refused != said_refused {
            for (name, why) in refused.iter().filter(|r| !said_refused.contains(r)) {
                let webhook = sources.get(name).is_some_and(|c| matches!(c.kind, SourceKind::Webhook(_)));
                let what = match why {
                    Refusal::OtherFolders => "not used here",
                    _ if webhook => "not listening",
                    _ => "not polled",
                };
                // A folder's own source in a folder not trusted is a warning, as before; the
                // user's own sources staying out of a folder is the rule working.
                if matches!(why, Refusal::Untrusted { users: false }) {
                    tracing::warn!("source {name}: {what}: {}", why.say(&root));
                } else {
                    tracing::info!("source {name}: {what}: {}", why.say(&root));
                }
            }
            said_refused = refused;
        }
        let webhooks = sources.iter().filter(|(_, c)| c.enabled && may_poll(c, &root, trusted));
        listeners.sync(&engine, webhooks, &events_wake);
        let mailboxes = sources.iter().filter(|(_, c)| polls_here(c, &root, trusted));
        watchers.sync(&engine, mailboxes, &pokes);
        let mut sleep =
            next.and_then(|n| (n - engine.clock.now()).to_std().ok()).unwrap_or(MAX_SLEEP).min(MAX_SLEEP);
        if let Some(p) = engine.clock.poll_interval() {
            sleep = sleep.min(p);
        }
        tokio::select! {
            () = stop.cancelled() => break,
            () = wake.notified() => {}
            () = tokio::time::sleep(sleep) => {}
        }
    }
    for (_, h) in polls {
        h.abort();
    }
}

#[cfg(test)]
#[path = "poller_tests.rs"]
mod tests;
