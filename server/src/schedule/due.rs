//! The due decision of SPEC section 3 and the instant a note next becomes due, both pure
//! functions of (the note's schedule state, an instant, a time zone).
//!
//! `next_due` does not simulate time; it walks the instants where `due` can switch from false
//! to true (a cron occurrence, the end of the backoff, the start of a window band) and asks
//! `due` at each, so the two functions cannot disagree.

use chrono::{DateTime, Days, TimeDelta, TimeZone, Utc};

use super::cron::CronSchedule;
use super::window::{Band, Window, local_date};

/// How long after a cron occurrence it may still fire (inclusive).
pub const CRON_GRACE: TimeDelta = TimeDelta::minutes(2);
/// How long nothing scheduled fires after a run started (and after a first failure); each
/// further consecutive failure doubles it, up to the cap.
pub const BACKOFF: TimeDelta = TimeDelta::minutes(5);
/// The default cap of the backoff (`[scheduler] max_backoff`). Past it, a failing note is tried
/// at most once per occurrence.
pub const MAX_BACKOFF: TimeDelta = TimeDelta::hours(6);
/// How long after a cron occurrence `next_due` reports it: the occurrence has to be strictly
/// before "now", and a millisecond survives timestamps truncated to milliseconds.
pub const AFTER_OCCURRENCE: TimeDelta = TimeDelta::milliseconds(1);

/// The schedule-relevant part of a note's `live:` block.
#[derive(Debug, Clone, Copy)]
pub struct ScheduleInput<'a> {
    pub active: bool,
    pub cron: Option<&'a CronSchedule>,
    pub windows: &'a [Window],
    /// Successful runs only.
    pub last_run_at: Option<DateTime<Utc>>,
    /// Every run start.
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// `live.until` resolved: from this instant on nothing fires.
    pub until: Option<DateTime<Utc>>,
    /// Consecutive failed attempts since the last success or manual run (`failures`).
    pub failures: u32,
    /// When a run was last stopped; the latest attempt was stopped when this is at or after it.
    pub last_stopped_at: Option<DateTime<Utc>>,
    /// The backoff's cap ([`MAX_BACKOFF`] unless configured).
    pub max_backoff: TimeDelta,
}

/// Which trigger made a note due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DueTrigger {
    /// The cron expression; `occurrence` is `None` when the note never ran successfully.
    Cron { occurrence: Option<DateTime<Utc>> },
    /// The window at `index` in the note's list.
    Window { index: usize },
}

/// The answer to "should this note run now?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Due(DueTrigger),
    NotDue(SkipReason),
}

/// Why a note is not due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// `active: false`.
    Paused,
    /// `live.until` has passed: the note fires no more (since the instant given).
    Expired { since: DateTime<Utc> },
    /// No cron and no windows: the note only runs by hand or on events.
    ManualOnly,
    /// A run started less than five minutes ago. `pending` is what would be due otherwise.
    Backoff { until: DateTime<Utc>, pending: Option<DueTrigger> },
    /// Nothing matches now; one entry per configured trigger kind.
    Waiting { cron: Option<CronSkip>, windows: Option<WindowSkip> },
}

/// Why the cron trigger does not fire now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CronSkip {
    /// A successful run already covers the latest occurrence.
    AlreadyRan { occurrence: DateTime<Utc> },
    /// The latest occurrence passed more than two minutes ago without an attempt; it is
    /// skipped, not replayed.
    Missed { occurrence: DateTime<Utc> },
    /// The expression has no occurrence before now (within croner's search range).
    NoOccurrence,
}

/// Why no window fires now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowSkip {
    /// Now is inside the band of the window at `index` (the first such), but it already ran
    /// after today's start time.
    DoneToday { index: usize },
    /// Now is outside every band (inverted windows have none).
    OutsideBands,
}

impl Decision {
    pub fn is_due(&self) -> bool {
        matches!(self, Decision::Due(_))
    }

    pub fn trigger(&self) -> Option<DueTrigger> {
        match self {
            Decision::Due(t) => Some(*t),
            Decision::NotDue(_) => None,
        }
    }

    /// A one-line summary for logs, e.g. "skip (matched cron, backoff 4m 10s remaining)".
    /// `now` is the instant the decision was made for.
    pub fn summary(&self, now: DateTime<Utc>) -> String {
        match self {
            Decision::Due(t) => format!("due ({})", trigger_text(t)),
            Decision::NotDue(SkipReason::Paused) => "skip (paused)".to_string(),
            Decision::NotDue(SkipReason::Expired { since }) => {
                format!("skip (expired {})", since.to_rfc3339())
            }
            Decision::NotDue(SkipReason::ManualOnly) => "skip (manual only)".to_string(),
            Decision::NotDue(SkipReason::Backoff { until, pending }) => {
                let left = human_duration(*until - now);
                match pending {
                    Some(t) => format!("skip (matched {}, backoff {left} remaining)", trigger_text(t)),
                    None => format!("skip (backoff {left} remaining)"),
                }
            }
            Decision::NotDue(SkipReason::Waiting { cron, windows }) => {
                let mut parts = Vec::new();
                match cron {
                    Some(CronSkip::AlreadyRan { occurrence }) => {
                        parts.push(format!("cron: already ran for {}", occurrence.to_rfc3339()));
                    }
                    Some(CronSkip::Missed { occurrence }) => parts.push(format!(
                        "cron: missed {} by {}, past the 2-minute grace",
                        occurrence.to_rfc3339(),
                        human_duration(now - *occurrence)
                    )),
                    Some(CronSkip::NoOccurrence) => parts.push("cron: no occurrence".to_string()),
                    None => {}
                }
                match windows {
                    Some(WindowSkip::DoneToday { index }) => {
                        parts.push(format!("window {}: done today", index + 1));
                    }
                    Some(WindowSkip::OutsideBands) => parts.push("outside every window".to_string()),
                    None => {}
                }
                format!("skip ({})", parts.join("; "))
            }
        }
    }
}

fn trigger_text(t: &DueTrigger) -> String {
    match t {
        DueTrigger::Cron { occurrence: None } => "cron, never ran".to_string(),
        DueTrigger::Cron { occurrence: Some(p) } => format!("cron {}", p.to_rfc3339()),
        DueTrigger::Window { index } => format!("window {}", index + 1),
    }
}

fn human_duration(d: TimeDelta) -> String {
    let secs = d.num_seconds().max(0);
    match secs {
        0 => "<1s".to_string(),
        1..60 => format!("{secs}s"),
        60..3600 if secs % 60 == 0 => format!("{}m", secs / 60),
        60..3600 => format!("{}m {}s", secs / 60, secs % 60),
        3600..86400 => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d {}h", secs / 86400, secs % 86400 / 3600),
    }
}

/// Decides whether a note is due at `now`, in local time `tz` (SPEC section 3).
pub fn due<Tz: TimeZone>(input: &ScheduleInput, now: DateTime<Utc>, tz: &Tz) -> Decision {
    if !input.active {
        return Decision::NotDue(SkipReason::Paused);
    }
    if let Some(since) = input.until.filter(|&u| now >= u) {
        return Decision::NotDue(SkipReason::Expired { since });
    }
    if input.cron.is_none() && input.windows.is_empty() {
        return Decision::NotDue(SkipReason::ManualOnly);
    }
    let cron = input.cron.map(|c| cron_due(c, input, now, tz));
    let windows = (!input.windows.is_empty()).then(|| window_due(input, now, tz));
    let pending = match (cron, windows) {
        (Some(Ok(t)), _) => Some(t),
        (_, Some(Ok(index))) => Some(DueTrigger::Window { index }),
        _ => None,
    };
    if let Some(until) = backoff_until(input, now) {
        return Decision::NotDue(SkipReason::Backoff { until, pending });
    }
    match pending {
        Some(t) => Decision::Due(t),
        None => Decision::NotDue(SkipReason::Waiting {
            cron: cron.and_then(Result::err),
            windows: windows.and_then(Result::err),
        }),
    }
}

/// [`due`] at an instant a user asks about (`livenote list --at T`): a cron occurrence exactly
/// at `t` counts as firing then, although the scheduler fires it [`AFTER_OCCURRENCE`] later,
/// once it is strictly past. Every other boundary (the grace, a window's end minute, the
/// backoff) stays where [`due`] puts it.
pub fn due_asked<Tz: TimeZone>(input: &ScheduleInput, t: DateTime<Utc>, tz: &Tz) -> Decision {
    let now = due(input, t, tz);
    if now.is_due() || matches!(now, Decision::NotDue(SkipReason::Backoff { .. })) {
        return now;
    }
    match t.checked_add_signed(AFTER_OCCURRENCE).map(|later| due(input, later, tz)) {
        Some(Decision::Due(on @ DueTrigger::Cron { occurrence: Some(p) })) if p == t => Decision::Due(on),
        _ => now,
    }
}

/// The earliest instant at or after `after` at which [`due`] says due, assuming nothing runs
/// in between (`last_run_at` and `last_attempt_at` stay as they are). `None` when paused,
/// manual only, expired, or when nothing can ever fire before `until`. A cron occurrence is reported
/// [`AFTER_OCCURRENCE`] after it, since at the occurrence itself it is not yet strictly
/// before now.
pub fn next_due<Tz: TimeZone>(input: &ScheduleInput, after: DateTime<Utc>, tz: &Tz) -> Option<DateTime<Utc>> {
    if !input.active || (input.cron.is_none() && input.windows.is_empty()) {
        return None;
    }
    if due(input, after, tz).is_due() {
        return Some(after);
    }
    let backoff_end = backoff_end(input);
    let mut t = after;
    // A cron edge is just after an occurrence later than the last run, and a window edge is
    // the start of a band the last run does not cover, so each is due unless the backoff
    // blocks it, and then the backoff end is tried. The walk ends within a few steps; the
    // bound only guards against a bug turning into a hang.
    for _ in 0..64 {
        let mut candidate = [
            backoff_end.filter(|&end| end > t),
            input.cron.and_then(|c| next_cron_edge(c, input, t, tz)),
            next_window_edge(input, t, tz),
        ]
        .into_iter()
        .flatten()
        .min()?;
        if backoff_until(input, candidate).is_some() {
            candidate = backoff_end?;
        }
        // Nothing past `until` is due; walking on would only end at the bound.
        if input.until.is_some_and(|u| candidate >= u) {
            return None;
        }
        if due(input, candidate, tz).is_due() {
            return Some(candidate);
        }
        t = candidate;
    }
    None
}

/// The note's latest occurrence when it passed without a run: nothing (no success, no attempt,
/// from any machine) served it, and it can no longer fire (past a cron occurrence's grace, after
/// a window's band). What the status names ("missed 08:00") and what `[scheduler] catch_up`
/// serves late.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Missed {
    /// The occurrence, or the start of the window's band.
    pub at: DateTime<Utc>,
    /// The last instant it could have fired: the end of the cron's grace, of the window's band.
    pub until: DateTime<Utc>,
    /// The trigger it was of (a cron with its occurrence, or the window).
    pub trigger: DueTrigger,
}

/// The latest occurrence (cron occurrence or window band) that began at or before `now`, when
/// it passed without a run ([`Missed`]). `None` when it is served, still fires (inside its
/// grace or band), when the note is due now or once its backoff ends (a window open while a cron
/// occurrence passed), when it is paused, expired or manual only, and for a note with no
/// `lastRunAt` or `lastAttemptAt` at all: it is due at once (a cron) or was not live then as
/// far as anyone knows (a window).
pub fn missed<Tz: TimeZone>(input: &ScheduleInput, now: DateTime<Utc>, tz: &Tz) -> Option<Missed> {
    // A note that fires now, or once its backoff ends, misses nothing.
    match due(input, now, tz) {
        Decision::NotDue(SkipReason::Waiting { .. }) => {}
        _ => return None,
    }
    let latest_stamp = input.last_run_at.max(input.last_attempt_at)?;
    let cron = input.cron.and_then(|c| c.prev_before(now, tz)).map(|p| Missed {
        at: p,
        until: p + CRON_GRACE,
        trigger: DueTrigger::Cron { occurrence: Some(p) },
    });
    let bands = input.windows.iter().enumerate().flat_map(|(index, w)| {
        bands_around(w, now, tz).filter(|b| b.start <= now).map(move |b| Missed {
            at: b.start,
            until: b.end,
            trigger: DueTrigger::Window { index },
        })
    });
    // The latest to begin; of two beginning together, the one that lasts longer (a band still
    // open is not missed because a cron occurrence at its start is past its grace).
    let last = cron.into_iter().chain(bands).max_by_key(|m| (m.at, m.until))?;
    (now > last.until && latest_stamp < last.at).then_some(last)
}

/// When the backoff after the latest attempt ends, while it holds scheduled runs back at
/// `now`. Only an attempt that has not succeeded backs off (a run in flight, or a failure:
/// `lastAttemptAt` later than `lastRunAt`, or no `lastRunAt`); after a success the cycle
/// anchor already prevents a second run, and a `*/5` note that ran at 10:01:47 fires at
/// 10:05. A stopped attempt ends its occurrence instead and holds nothing back. Every surface
/// (scheduler, status, lens, hints, hover, `list`) asks this.
pub fn backoff_until(input: &ScheduleInput, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let attempt = input.last_attempt_at?;
    let end = backoff_end(input)?;
    (now >= attempt && now < end).then_some(end)
}

/// The end of the backoff of the latest attempt, when that attempt has neither succeeded nor
/// been stopped.
fn backoff_end(input: &ScheduleInput) -> Option<DateTime<Utc>> {
    let attempt = input.last_attempt_at?;
    if succeeded(attempt, input.last_run_at) || stopped(input) {
        return None;
    }
    attempt.checked_add_signed(backoff_wait(input.failures, input.max_backoff).0)
}

/// The wait after `failures` consecutive failures (a run in flight or one that crashed with
/// none recorded waits as after one): 5 min × 2^(n-1), capped at `cap`; and whether the
/// doubling passed the cap, after which a failing note is tried at most once per occurrence.
pub fn backoff_wait(failures: u32, cap: TimeDelta) -> (TimeDelta, bool) {
    let doublings = failures.saturating_sub(1);
    // 2^20 × 5 min is about ten years: anything that large is past every sensible cap.
    let uncapped = (doublings < 20).then(|| BACKOFF * (1i32 << doublings));
    let cap = cap.max(BACKOFF);
    match uncapped {
        Some(w) if w <= cap => (w, false),
        _ => (cap, true),
    }
}

/// Whether the attempt at `attempt` succeeded: a successful run was recorded at or after it.
fn succeeded(attempt: DateTime<Utc>, last_run_at: Option<DateTime<Utc>>) -> bool {
    last_run_at.is_some_and(|r| r >= attempt)
}

/// Whether the latest attempt was stopped (Stop: "not this occurrence").
fn stopped(input: &ScheduleInput) -> bool {
    matches!((input.last_attempt_at, input.last_stopped_at), (Some(a), Some(s)) if s >= a)
}

/// The latest attempt when it ended its occurrence without succeeding: it was stopped, or it
/// failed once the backoff had passed its cap. Its occurrence (cron) or today's band (window)
/// then counts as done, as a success's would, and the next occurrence fires.
fn ended_attempt(input: &ScheduleInput) -> Option<DateTime<Utc>> {
    let attempt = input.last_attempt_at?;
    if succeeded(attempt, input.last_run_at) {
        return None;
    }
    let given_up = input.failures > 0 && backoff_wait(input.failures, input.max_backoff).1;
    (stopped(input) || given_up).then_some(attempt)
}

/// The instant up to which occurrences count as done: the last success, or a later attempt
/// that ended its occurrence.
fn anchor(input: &ScheduleInput) -> Option<DateTime<Utc>> {
    input.last_run_at.max(ended_attempt(input))
}

/// Whether a band starting at `start` is used up: a success strictly after the start (a run
/// exactly at the start belongs to the previous window of a split day), or an attempt that
/// ended its occurrence at or after it (the scheduler starts a window's run at its very start).
fn band_done(input: &ScheduleInput, start: DateTime<Utc>) -> bool {
    input.last_run_at.is_some_and(|r| r > start) || ended_attempt(input).is_some_and(|a| a >= start)
}

fn cron_due<Tz: TimeZone>(
    cron: &CronSchedule,
    input: &ScheduleInput,
    now: DateTime<Utc>,
    tz: &Tz,
) -> Result<DueTrigger, CronSkip> {
    // A note that never ran fills itself promptly instead of waiting for an occurrence.
    let Some(last_run) = anchor(input) else {
        return Ok(DueTrigger::Cron { occurrence: None });
    };
    let occurrence = cron.prev_before(now, tz).ok_or(CronSkip::NoOccurrence)?;
    if last_run >= occurrence {
        return Err(CronSkip::AlreadyRan { occurrence });
    }
    // Once an attempt was made for this occurrence, the grace no longer applies: a failed
    // cycle stays due until the next occurrence, retried after each backoff.
    let attempted = input.last_attempt_at.is_some_and(|a| a >= occurrence);
    if attempted || now - occurrence <= CRON_GRACE {
        Ok(DueTrigger::Cron { occurrence: Some(occurrence) })
    } else {
        Err(CronSkip::Missed { occurrence })
    }
}

fn window_due<Tz: TimeZone>(input: &ScheduleInput, now: DateTime<Utc>, tz: &Tz) -> Result<usize, WindowSkip> {
    let mut done = None;
    for (index, window) in input.windows.iter().enumerate() {
        for band in bands_around(window, now, tz) {
            if !band.contains(now) {
                continue;
            }
            if band_done(input, band.start) {
                done.get_or_insert(index);
            } else {
                return Ok(index);
            }
        }
    }
    Err(done.map_or(WindowSkip::OutsideBands, |index| WindowSkip::DoneToday { index }))
}

/// The bands that can contain `t`: today's, and yesterday's in case a DST gap pushed it past
/// midnight.
fn bands_around<Tz: TimeZone>(window: &Window, t: DateTime<Utc>, tz: &Tz) -> impl Iterator<Item = Band> {
    let today = local_date(t, tz);
    let yesterday = today.and_then(|d| d.checked_sub_days(Days::new(1)));
    [yesterday, today].into_iter().flatten().filter_map(|d| window.band(d, tz))
}

/// The first instant after `t` where the cron trigger turns due, ignoring backoff: just after
/// the first occurrence that is later than the last successful run.
fn next_cron_edge<Tz: TimeZone>(
    cron: &CronSchedule,
    input: &ScheduleInput,
    t: DateTime<Utc>,
    tz: &Tz,
) -> Option<DateTime<Utc>> {
    // Without a successful (or ended) run the cron trigger is due at every instant, so it has
    // no edge.
    let last_run = anchor(input)?;
    let from = t.checked_sub_signed(AFTER_OCCURRENCE)?.max(last_run);
    cron.next_after(from, tz)?.checked_add_signed(AFTER_OCCURRENCE)
}

/// The earliest band start after `t` of any window that the last successful run does not
/// already cover.
fn next_window_edge<Tz: TimeZone>(input: &ScheduleInput, t: DateTime<Utc>, tz: &Tz) -> Option<DateTime<Utc>> {
    // Bands that start before the last run are used up, so the search can begin there; this
    // keeps a last run far in the future (a skewed clock) from costing a day per step.
    let from = anchor(input).map_or(t, |r| r.max(t));
    let first_day = local_date(from, tz)?.checked_sub_days(Days::new(1))?;
    input
        .windows
        .iter()
        .filter_map(|w| {
            // Daily bands: three days always hold the next start, even past a skipped date.
            (0..4)
                .filter_map(|i| first_day.checked_add_days(Days::new(i)))
                .filter_map(|d| w.band(d, tz))
                .map(|b| b.start)
                .find(|&s| s > t && !band_done(input, s))
        })
        .min()
}

#[cfg(test)]
#[path = "due_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "missed_tests.rs"]
mod missed_tests;
