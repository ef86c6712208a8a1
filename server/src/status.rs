//! A live note's status and schedule at an instant: what the CLI lists and, later, what lenses
//! and hints show. Pure over the validated block, an instant and a time zone.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::Serialize;

use crate::note::model::Live;
use crate::schedule::{self, Decision, DueTrigger, Missed, ScheduleInput, Window};

/// The status of a live note, most urgent first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The block has errors; nothing fires until they are fixed.
    Invalid,
    /// A run is in progress.
    Running,
    /// `live.until` has passed: nothing fires any more.
    Expired,
    /// `active: false`.
    Paused,
    /// The workspace is not trusted; nothing fires on its own.
    Untrusted,
    /// The latest run was stopped (*Stop*, `livenote stop`): not a failure, and its occurrence
    /// is over; the next one fires as usual.
    Stopped,
    /// The latest run failed (`lastRunError`); retried after the backoff.
    Failed,
    /// Live and healthy.
    Live,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Invalid => "invalid",
            Status::Running => "running",
            Status::Expired => "expired",
            Status::Paused => "paused",
            Status::Untrusted => "untrusted",
            Status::Stopped => "stopped",
            Status::Failed => "failed",
            Status::Live => "live",
        }
    }
}

/// Facts from outside the note that change its status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunFacts {
    pub running: bool,
    /// `None` when trust is not considered (e.g. `livenote list`).
    pub trusted: Option<bool>,
    /// `[scheduler] enabled = false` (or the editor turned scheduling off): the note runs
    /// only by hand, whatever its triggers say.
    pub scheduling_off: bool,
    /// *Undo last run* has something to restore (the note's history holds a run that changed
    /// the body). Looked up only where it is shown (code actions); false elsewhere.
    pub undoable: bool,
    /// The machine `[scheduler] host` names when it is not this one: scheduled and event runs
    /// happen there ("scheduled on nas"); here the note runs by hand. Interned
    /// (`crate::machine::interned`) so the facts stay `Copy`.
    pub scheduled_on: Option<&'static str>,
}

impl RunFacts {
    /// A note in a trusted folder, not running, scheduled here: what most views start from.
    pub const TRUSTED: RunFacts = RunFacts {
        running: false,
        trusted: Some(true),
        scheduling_off: false,
        undoable: false,
        scheduled_on: None,
    };
}

/// The status at an instant (`until` is a date in `tz`'s calendar).
pub fn status<Tz: TimeZone>(live: &Live, facts: RunFacts, at: DateTime<Utc>, tz: &Tz) -> Status {
    if facts.running {
        Status::Running
    } else if live.has_errors {
        Status::Invalid
    } else if live.expired(at, tz) {
        Status::Expired
    } else if !live.active {
        Status::Paused
    } else if facts.trusted == Some(false) {
        Status::Untrusted
    } else if latest_attempt_stopped(live) {
        Status::Stopped
    } else if live.last_run_error.is_some() {
        Status::Failed
    } else {
        Status::Live
    }
}

/// Whether the note's latest attempt was stopped: `lastStoppedAt` at or after `lastAttemptAt`
/// (the stop writes both `lastRunError: "stopped"` and `lastStoppedAt`; the schedule reads the
/// same pair, `schedule::due`'s `stopped`).
pub fn latest_attempt_stopped(live: &Live) -> bool {
    live.last_stopped_at.is_some_and(|s| live.last_attempt_at.is_none_or(|a| s >= a))
}

/// How this machine's run store recorded the end of a run (its transcript's final line,
/// `runs::costs`): what [`settled`] needs when the note's text no longer says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordedEnd {
    /// The run succeeded; its end.
    Done(DateTime<Utc>),
    /// The run was stopped; its end.
    Stopped(DateTime<Utc>),
}

/// The note's latest run (`lastRunId`) when its text shows no success and no stop at or after
/// `lastAttemptAt`: a run in flight, a failure, a crashed run, or a run whose result the
/// editor's undo took back out of the buffer. Only such a note is looked up in the run store
/// ([`settled`]).
pub fn awaiting_end(live: &Live) -> Option<&str> {
    let attempt = live.last_attempt_at?;
    let ended = live.last_run_at.is_some_and(|r| r >= attempt) || latest_attempt_stopped(live);
    (!ended).then_some(live.last_run_id.as_deref()?)
}

/// The note as its latest run left it, when its text shows the run started but not how it
/// ended ([`awaiting_end`]) and the run store recorded the end: `u` in the editor after a run
/// takes the result's fields out of the buffer (and `:w` out of the file) but not
/// `lastAttemptAt`, which the run wrote first. The run happened all the same: its occurrence is
/// done, it is no failure, and nothing is retried. A success counts from its recorded end
/// (`lastRunError` and `failures` cleared, as the run wrote them), a stop likewise. `None`
/// when the text says how the run ended already; a failure needs nothing (the backoff after
/// an attempt without a result is the failure's).
pub fn settled(live: &Live, end: RecordedEnd) -> Option<Live> {
    let attempt = live.last_attempt_at?;
    awaiting_end(live)?;
    let mut settled = live.clone();
    match end {
        RecordedEnd::Done(at) => {
            settled.last_run_at = Some(at.max(attempt));
            settled.last_run_error = None;
            settled.failures = 0;
        }
        RecordedEnd::Stopped(at) => {
            settled.last_stopped_at = Some(at.max(attempt));
            settled.last_run_error = Some("stopped".to_owned());
        }
    }
    Some(settled)
}

/// What the scheduler would do with a note at an instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleView {
    /// The decision at the instant (`None` for invalid notes, which are never considered).
    pub decision: Option<Decision>,
    /// The next instant the note is due at or after the instant.
    pub next_due: Option<DateTime<Utc>>,
}

impl ScheduleView {
    pub fn due(&self) -> Option<DueTrigger> {
        self.decision.as_ref().and_then(Decision::trigger)
    }
}

/// The one answer every surface gives (lens, hints, hover, `list`, `livenote/listNotes`, the
/// scheduler's plan): `schedule::due` and `schedule::next_due` over the note's block.
pub fn schedule_view<Tz: TimeZone>(live: &Live, at: DateTime<Utc>, tz: &Tz) -> ScheduleView {
    view(live, Scope::All, at, tz)
}

/// [`schedule_view`] of the cron trigger alone (the windows left out): what the cron's own hint
/// says. The backoff and the grace count as for the note, so on a note without windows it is
/// the note's view, and the hint's "next" is the lens's and `list`'s.
pub fn cron_view<Tz: TimeZone>(live: &Live, at: DateTime<Utc>, tz: &Tz) -> ScheduleView {
    view(live, Scope::CronOnly, at, tz)
}

#[derive(Clone, Copy)]
enum Scope {
    All,
    CronOnly,
}

fn view<Tz: TimeZone>(live: &Live, scope: Scope, at: DateTime<Utc>, tz: &Tz) -> ScheduleView {
    if live.has_errors {
        return ScheduleView { decision: None, next_due: None };
    }
    with_input(live, scope, tz, |input| ScheduleView {
        decision: Some(schedule::due(input, at, tz)),
        next_due: schedule::next_due(input, at, tz),
    })
}

/// Whether the scheduler would fire the note at an instant (`None` for invalid notes, which
/// are never considered); the decision alone, without the next due instant.
pub fn decision<Tz: TimeZone>(live: &Live, at: DateTime<Utc>, tz: &Tz) -> Option<Decision> {
    (!live.has_errors).then(|| with_input(live, Scope::All, tz, |input| schedule::due(input, at, tz)))
}

fn with_input<Tz: TimeZone, R>(live: &Live, scope: Scope, tz: &Tz, f: impl FnOnce(&ScheduleInput) -> R) -> R {
    let windows: Vec<Window> = match scope {
        Scope::All => live.valid_windows(),
        Scope::CronOnly => Vec::new(),
    };
    f(&ScheduleInput {
        active: live.active,
        cron: live.cron.as_ref(),
        windows: &windows,
        last_run_at: live.last_run_at,
        last_attempt_at: live.last_attempt_at,
        until: live.until_instant(tz),
        failures: live.failures,
        last_stopped_at: live.last_stopped_at,
        max_backoff: live.max_backoff.unwrap_or(schedule::due::MAX_BACKOFF),
    })
}

/// A run of the note that this machine started into an editor's buffer, as the run store keeps
/// it (`runs::attempts`): SPEC 3, an attempt made by any process on this machine counts for
/// every other, even while its result sits in an unsaved buffer and the file says nothing of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub attempt_at: DateTime<Utc>,
    /// When it succeeded (its `lastRunAt`).
    pub ran_at: Option<DateTime<Utc>>,
    /// When it was stopped (its `lastStoppedAt`).
    pub stopped_at: Option<DateTime<Utc>>,
    /// The stamps the file held when the run started. While it still holds them the run's
    /// result has not reached it (the buffer is unsaved), and the record counts; once the file
    /// says anything else (the buffer saved, another run, the user's edit, a new note at the same
    /// path) the file speaks for itself.
    pub disk: DiskStamps,
}

/// A note's run stamps as its file holds them: what [`Attempt::disk`] compares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStamps {
    pub last_run_id: Option<String>,
    pub last_attempt_at: Option<DateTime<Utc>>,
    pub last_run_at: Option<DateTime<Utc>>,
}

impl DiskStamps {
    pub fn of(live: &Live) -> DiskStamps {
        DiskStamps {
            last_run_id: live.last_run_id.clone(),
            last_attempt_at: live.last_attempt_at,
            last_run_at: live.last_run_at,
        }
    }

    fn held_by(&self, live: &Live) -> bool {
        self.last_run_id == live.last_run_id
            && self.last_attempt_at == live.last_attempt_at
            && self.last_run_at == live.last_run_at
    }
}

/// The note's block as every due check takes it: each of `lastAttemptAt`, `lastRunAt` and
/// `lastStoppedAt` the later of the note's and the run store's record ([`Attempt`]), when the
/// record is news to the text (see [`Attempt::disk`]). Borrowed when it adds nothing.
pub fn with_attempt<'a>(live: &'a Live, attempt: Option<&Attempt>) -> std::borrow::Cow<'a, Live> {
    use std::borrow::Cow;
    let Some(a) = attempt.filter(|a| a.disk.held_by(live)) else { return Cow::Borrowed(live) };
    let later = |mine: Option<DateTime<Utc>>, theirs: Option<DateTime<Utc>>| {
        theirs.filter(|t| mine.is_none_or(|m| *t > m))
    };
    let (tried, ran, stopped) = (
        later(live.last_attempt_at, Some(a.attempt_at)),
        later(live.last_run_at, a.ran_at),
        later(live.last_stopped_at, a.stopped_at),
    );
    if tried.is_none() && ran.is_none() && stopped.is_none() {
        return Cow::Borrowed(live);
    }
    let mut l = live.clone();
    l.last_attempt_at = tried.or(l.last_attempt_at);
    l.last_stopped_at = stopped.or(l.last_stopped_at);
    if let Some(ran) = ran {
        l.last_run_at = Some(ran);
        // Its success is the latest word: the failures before it are over.
        if l.last_attempt_at.is_none_or(|t| ran >= t) {
            l.last_run_error = None;
            l.failures = 0;
        }
    }
    Cow::Owned(l)
}

/// Whether a machine other than the folder's host may take the note over at `at`
/// ([`schedule::host::failover_due`] over the note's block): the instant it has waited since.
pub fn failover_due<Tz: TimeZone>(
    live: &Live,
    after: chrono::TimeDelta,
    at: DateTime<Utc>,
    tz: &Tz,
) -> Option<DateTime<Utc>> {
    if live.has_errors {
        return None;
    }
    with_input(live, Scope::All, tz, |input| schedule::host::failover_due(input, after, at, tz))
}

/// When the backoff after the note's latest attempt ends, while it holds scheduled runs back
/// at `at` ([`schedule::due::backoff_until`] over the note's block).
pub fn backoff_until<Tz: TimeZone>(live: &Live, at: DateTime<Utc>, tz: &Tz) -> Option<DateTime<Utc>> {
    with_input(live, Scope::All, tz, |input| schedule::due::backoff_until(input, at))
}

/// A failing note's next scheduled try: "retry at 14:20 (3rd failure)".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// The next fire (`next_due`): after the backoff, or the next occurrence once the backoff
    /// passed its cap.
    pub at: DateTime<Utc>,
    /// Consecutive failures so far.
    pub failures: u32,
}

impl Retry {
    /// `Some` while the note's latest attempt failed (not a success, not stopped, not still
    /// running) and something will fire again; `next_due` is the note's, from [`Upcoming`].
    pub fn of(live: &Live, next_due: Option<DateTime<Utc>>) -> Option<Retry> {
        let attempt = live.last_attempt_at?;
        let settled = live.last_run_at.is_some_and(|r| r >= attempt)
            || live.last_stopped_at.is_some_and(|s| s >= attempt);
        (live.failures > 0 && !settled && !live.has_errors)
            .then_some(())
            .and(next_due)
            .map(|at| Retry { at, failures: live.failures })
    }

    /// "retry at 14:20 (3rd failure)", the time as `local` renders it.
    pub fn text(&self, local: impl FnOnce(DateTime<Utc>) -> String) -> String {
        format!("retry at {} ({} failure)", local(self.at), crate::text::count::ordinal(self.failures))
    }
}

/// The note's latest occurrence when it passed without a run ([`schedule::missed`] over the
/// note's block): "missed 08:00". `None` for invalid notes.
pub fn missed<Tz: TimeZone>(live: &Live, at: DateTime<Utc>, tz: &Tz) -> Option<Missed> {
    if live.has_errors {
        return None;
    }
    with_input(live, Scope::All, tz, |input| schedule::missed(input, at, tz))
}

/// What status surfaces show of a note's schedule at an instant: the trigger that makes it due
/// then, if any, when it is next due, and the occurrence it missed when it is not due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upcoming {
    pub due: Option<DueTrigger>,
    pub next_due: Option<DateTime<Utc>>,
    pub missed: Option<Missed>,
}

impl Upcoming {
    pub fn at<Tz: TimeZone>(live: &Live, at: DateTime<Utc>, tz: &Tz) -> Upcoming {
        let view = schedule_view(live, at, tz);
        let due = view.due();
        let missed = if due.is_none() { missed(live, at, tz) } else { None };
        Upcoming { due, next_due: view.next_due, missed }
    }

    /// [`Upcoming::at`] for an instant a user asks about (`livenote list --at`): a cron
    /// occurrence exactly then counts as due ([`schedule::due_asked`]).
    pub fn asked<Tz: TimeZone>(live: &Live, at: DateTime<Utc>, tz: &Tz) -> Upcoming {
        let mut up = Upcoming::at(live, at, tz);
        if up.due.is_none() && !live.has_errors {
            up.due = with_input(live, Scope::All, tz, |input| schedule::due_asked(input, at, tz).trigger());
            if up.due.is_some() {
                up.missed = None;
            }
        }
        up
    }
}

/// A note's [`Upcoming`] remembered between requests, for one unchanged `live:` block and one
/// time zone (the owner drops it with the block: the workspace index keeps one per entry and
/// replaces the entry when its note changes).
///
/// `next_due` computed at `t0` is the first instant at or after `t0` at which the note is due,
/// so at every instant from `t0` up to (not including) it the note is not due and its next due
/// instant is the same. Index-wide requests (`livenote.listNotes`, workspace symbols) reuse it
/// inside that span instead of searching cron occurrences again for every note, which was
/// most of their cost. Due notes are not remembered (their next due instant is "now"), nor is
/// anything across a clock set back before `t0`.
#[derive(Debug, Default)]
pub struct ScheduleMemo(Mutex<Option<Quiet>>);

/// A span of instants in which the note is not due: from `from` to `next_due` (exclusive;
/// `None`: for ever), cut short at `ends` (see [`quiet_end`]); `missed` holds all along it.
#[derive(Debug, Clone, Copy)]
struct Quiet {
    from: DateTime<Utc>,
    next_due: Option<DateTime<Utc>>,
    ends: Option<DateTime<Utc>>,
    missed: Option<Missed>,
}

impl Quiet {
    fn covers(&self, at: DateTime<Utc>) -> bool {
        self.from <= at && self.next_due.is_none_or(|n| at < n) && self.ends.is_none_or(|e| at < e)
    }
}

/// Where a quiet span from `from` may stop answering the same [`Missed`]: where a backoff
/// ends, a stamp written ahead of the clock is reached, or `until` passes. Between those
/// instants no occurrence begins unserved without making the note due, so what it missed
/// stays what it was.
fn quiet_end<Tz: TimeZone>(live: &Live, from: DateTime<Utc>, tz: &Tz) -> Option<DateTime<Utc>> {
    let ahead = |t: Option<DateTime<Utc>>| t.filter(|t| *t > from);
    [
        backoff_until(live, from, tz),
        ahead(live.last_attempt_at),
        ahead(live.last_run_at),
        ahead(live.last_stopped_at),
        ahead(live.until_instant(tz)),
    ]
    .into_iter()
    .flatten()
    .min()
}

impl ScheduleMemo {
    /// [`Upcoming::at`], from the memo when it covers `at`.
    pub fn upcoming<Tz: TimeZone>(&self, live: &Live, at: DateTime<Utc>, tz: &Tz) -> Upcoming {
        // A poisoned lock only means another thread panicked while holding it; the value is a
        // plain copy and still valid.
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(quiet) = *slot
            && quiet.covers(at)
        {
            return Upcoming { due: None, next_due: quiet.next_due, missed: quiet.missed };
        }
        let up = Upcoming::at(live, at, tz);
        *slot = up.due.is_none().then(|| Quiet {
            from: at,
            next_due: up.next_due,
            ends: quiet_end(live, at, tz),
            missed: up.missed,
        });
        up
    }
}

impl Clone for ScheduleMemo {
    fn clone(&self) -> Self {
        ScheduleMemo(Mutex::new(*self.0.lock().unwrap_or_else(PoisonError::into_inner)))
    }
}

/// A note's list item serialised, remembered between index-wide requests for one unchanged
/// `live:` block and one time zone (as [`ScheduleMemo`], the workspace index keeps one per
/// entry and drops it with the entry when the note changes).
///
/// The item is a function of the block, the note's path relative to its root, the run facts
/// and the [`Upcoming`] at the instant asked about; the memo keeps the bytes with the last three
/// and answers them again while all three are the same. A run starting or ending, trust or
/// scheduling changing, or the clock passing the next due instant (which changes what the
/// schedule memo answers) makes the next request serialise the item afresh.
#[derive(Debug, Default)]
pub struct ItemMemo(Mutex<Option<(ItemKey, Arc<str>)>>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct ItemKey {
    root: Option<PathBuf>,
    facts: RunFacts,
    upcoming: Upcoming,
    /// Whether `until` had passed: it changes the status while the schedule stays quiet.
    expired: bool,
}

impl ItemMemo {
    /// The item's JSON for these inputs: the remembered bytes when they were made from the
    /// same ones, else `make()`'s, remembered.
    pub fn json(
        &self,
        root: Option<&Path>,
        facts: RunFacts,
        upcoming: Upcoming,
        expired: bool,
        make: impl FnOnce() -> String,
    ) -> Arc<str> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((key, json)) = &*slot
            && key.facts == facts
            && key.upcoming == upcoming
            && key.expired == expired
            && key.root.as_deref().map(Path::as_os_str) == root.map(Path::as_os_str)
        {
            return Arc::clone(json);
        }
        let json: Arc<str> = make().into();
        *slot = Some((
            ItemKey { root: root.map(Path::to_path_buf), facts, upcoming, expired },
            Arc::clone(&json),
        ));
        json
    }
}

impl Clone for ItemMemo {
    fn clone(&self) -> Self {
        ItemMemo(Mutex::new(self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()))
    }
}

/// The trigger kind as the JSON output names it.
pub fn trigger_name(t: DueTrigger) -> &'static str {
    crate::schedule::TriggerKind::from(t).as_str()
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListItem {
    pub path: String,
    /// `title:` from the frontmatter, else the file name without extension.
    pub title: String,
    pub active: bool,
    pub status: &'static str,
    pub triggers: Triggers,
    pub due: Option<&'static str>,
    pub next_due: Option<String>,
    pub last_run_at: Option<String>,
    pub last_run_summary: Option<String>,
    pub last_attempt_at: Option<String>,
    /// The first instant the note no longer fires at (`live.until` resolved), local time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    pub last_run_error: Option<String>,
    /// Consecutive failed runs since the last success or run by hand; left out when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub failures: u32,
    /// When a failing note is tried next (local time); left out unless the latest attempt
    /// failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_at: Option<String>,
    /// The machine the note's scheduled and event runs happen on, when the folder's
    /// `[scheduler] host` names another one than this; left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled_on: Option<String>,
    /// The latest occurrence when it passed without a run (the machine asleep or off, nothing
    /// running), local time, until the next one; left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missed: Option<String>,
}

/// The triggers as written in the note.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Triggers {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cron_expr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows: Option<Vec<WindowItem>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_match_criteria: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowItem {
    pub start_time: Option<String>,
    pub end_time: Option<String>,
}

/// One live note as `livenote list --format json` and `livenote.listNotes` show it.
pub fn list_item<Tz: TimeZone>(
    path: String,
    title: String,
    live: &Live,
    facts: RunFacts,
    at: DateTime<Utc>,
    tz: &Tz,
) -> ListItem {
    list_item_from(path, title, live, facts, Upcoming::at(live, at, tz), at, tz)
}

/// [`list_item`] with the schedule already known (e.g. from a [`ScheduleMemo`]).
pub fn list_item_from<Tz: TimeZone>(
    path: String,
    title: String,
    live: &Live,
    facts: RunFacts,
    upcoming: Upcoming,
    at: DateTime<Utc>,
    tz: &Tz,
) -> ListItem {
    let triggers = Triggers {
        cron_expr: live.cron_expr.as_ref().map(|c| c.value.clone()),
        windows: (!live.windows.is_empty()).then(|| {
            live.windows
                .iter()
                .map(|w| WindowItem { start_time: w.start_text.clone(), end_time: w.end_text.clone() })
                .collect()
        }),
        event_match_criteria: live.event_match_criteria.clone(),
    };
    ListItem {
        path,
        title,
        active: live.active,
        status: status(live, facts, at, tz).as_str(),
        triggers,
        due: upcoming.due.map(trigger_name),
        next_due: upcoming
            .next_due
            .map(|t| t.with_timezone(tz).fixed_offset().to_rfc3339_opts(SecondsFormat::Secs, false)),
        last_run_at: live.last_run_at.map(utc),
        last_run_summary: live.last_run_summary.clone(),
        last_attempt_at: live.last_attempt_at.map(utc),
        until: live
            .until_instant(tz)
            .map(|t| t.with_timezone(tz).fixed_offset().to_rfc3339_opts(SecondsFormat::Secs, false)),
        last_run_error: live.last_run_error.clone(),
        failures: live.failures,
        retry_at: Retry::of(live, upcoming.next_due)
            .map(|r| r.at.with_timezone(tz).fixed_offset().to_rfc3339_opts(SecondsFormat::Secs, false)),
        scheduled_on: facts.scheduled_on.map(str::to_owned),
        missed: upcoming
            .missed
            .map(|m| m.at.with_timezone(tz).fixed_offset().to_rfc3339_opts(SecondsFormat::Secs, false)),
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn utc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
