//! `kind = "ics"`: an iCalendar file as a digest of today's and the next `horizon`'s events
//! in the local zone, and what changed in it since the last poll (added, moved, changed,
//! cancelled). Pure: bytes, a zone and an instant in, plain structs out.
//!
//! Decisions worth knowing:
//! - Recurrences (RRULE, RDATE, EXDATE) are expanded by `rrule` in the event's own zone, so a
//!   09:00 Europe/Berlin meeting stays at 09:00 local across a DST change while its UTC time
//!   moves; an instance overridden by a VEVENT with its RECURRENCE-ID is replaced by it.
//! - A TZID that is no IANA name is looked up by its IANA-looking tail
//!   (`/mozilla.org/…/Europe/Berlin`) and in a table of common Windows names (Outlook); failing
//!   that the times are read as floating (local), and the digest says so in `problems`.
//! - All-day events carry dates (`end` is the last day, inclusive); timed events RFC 3339 times
//!   in the local zone.
//! - Time passing is no change: an event that scrolls into the window (the horizon moved on)
//!   is not "added", and one that ends before it is not "cancelled". A one-off event gone from
//!   the window but still in the calendar was moved out of it; a recurring instance gone is
//!   cancelled (an EXDATE, or a deleted occurrence).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, SecondsFormat, TimeDelta, TimeZone, Utc};
use icalendar::parser::{Component, Property};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schedule::Zone;
use crate::sources::version::hash;
use crate::text::count;
use crate::text::short::{clip, one_line};

/// The event type of a calendar digest when the source names none.
pub const DEFAULT_TYPE: &str = "calendar.digest";
/// How often a calendar is polled when the source says nothing: a meeting moved now shows
/// within a quarter of an hour (Google refreshes its secret address about that often).
pub const DEFAULT_EVERY: Duration = Duration::from_secs(15 * 60);
/// The default `horizon`: today and the next two days.
pub const DEFAULT_HORIZON: Duration = Duration::from_secs(2 * 86_400);
/// A longer horizon is cut to this: a digest is about the days ahead, not the year.
pub const MAX_HORIZON: Duration = Duration::from_secs(31 * 86_400);
/// Events in one digest at most (a day this full is no day a note summarises).
pub const MAX_EVENTS: usize = 200;
/// Occurrences of one recurring event looked at, within the window and its margins.
const MAX_OCCURRENCES: u16 = 1_000;
/// Occurrences of one recurring event walked through from its DTSTART at most: a daily event
/// for 270 years, an hourly one for 11.
const MAX_STEPS: usize = 100_000;
/// The longest DURATION read (ten thousand years): with four-digit years, every start plus a
/// length stays within what a date-time can hold.
const MAX_DURATION: TimeDelta = TimeDelta::days(3_652_425);
/// Nesting of BEGIN blocks allowed: real calendars nest three deep (VCALENDAR > VEVENT >
/// VALARM); the parser recurses per level.
const MAX_DEPTH: usize = 8;
/// Characters of a title or location.
const MAX_FIELD: usize = 300;
/// Problems reported at most (a calendar with thousands of broken events says so once).
const MAX_PROBLEMS: usize = 10;

/// What expanding one calendar's recurrences may cost in one poll, over all its events: each
/// event is bounded on its own too ([`MAX_STEPS`]), but two thousand of them from 1990 at
/// `FREQ=SECONDLY` are 200 million steps. Past the budget the events not yet expanded are left
/// out, and the digest says so first among its `problems`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Steps, summed over the calendar's recurring events: each event begun, each occurrence
    /// walked through.
    pub steps: usize,
    pub time: Duration,
}

impl Budget {
    /// A million steps or two seconds (at about 25 µs a step, a debug build reaches the time
    /// first).
    pub const CALENDAR: Budget = Budget { steps: 1_000_000, time: Duration::from_secs(2) };
}

/// Why bytes are not a calendar.
#[derive(Debug, thiserror::Error)]
pub enum IcsError {
    #[error("not an iCalendar file: {0}")]
    Malformed(String),
}

/// One occurrence in the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestEvent {
    pub uid: String,
    /// The original start of a recurring event's occurrence (its RECURRENCE-ID): a date, a
    /// floating time, or an instant in UTC. `None` for a one-off event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    pub title: String,
    /// RFC 3339 in the local zone, or a date (`all_day`).
    pub start: String,
    /// RFC 3339 in the local zone, or the last date, inclusive (`all_day`).
    pub end: String,
    pub all_day: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// `confirmed`, `tentative` or `cancelled`.
    pub status: String,
}

impl DigestEvent {
    fn key(&self) -> String {
        match &self.instance {
            Some(i) => format!("{}|{i}", self.uid),
            None => self.uid.clone(),
        }
    }
}

/// Today's and the next horizon's events, as of one poll.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest {
    /// The local date of the poll: the digest's identity.
    pub date: NaiveDate,
    pub window_start: DateTime<Utc>,
    pub window_end: DateTime<Utc>,
    /// The last local date in the window (all-day events are compared by date).
    pub last_date: NaiveDate,
    /// Sorted by start, then uid.
    pub events: Vec<DigestEvent>,
    /// What could not be read (an unknown zone, a broken rule), at most a few.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// Keys of every one-off event and overriding instance in the calendar, wherever it is:
    /// tells "moved out of the window" from "deleted". Not kept between polls.
    #[serde(skip)]
    known: BTreeSet<String>,
    /// The problem of a spent [`Budget`], also first in `problems`. Not kept between polls.
    #[serde(skip)]
    over_budget: Option<String>,
    /// UIDs of the recurring events the budget left out or cut short: what this digest does not
    /// know. Kept between polls, so that an event read again is not "added", nor one left out
    /// "cancelled".
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    cut: BTreeSet<String>,
}

/// An event whose time changed, with where it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Moved {
    #[serde(flatten)]
    pub event: DigestEvent,
    pub from_start: String,
    pub from_end: String,
    /// The new time lies outside the window (`start`/`end` are then the old ones).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub out_of_window: bool,
}

/// What changed between two digests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    pub added: Vec<DigestEvent>,
    pub moved: Vec<Moved>,
    /// Same time, another title, location or status (tentative ↔ confirmed).
    pub changed: Vec<DigestEvent>,
    pub cancelled: Vec<DigestEvent>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.moved.is_empty() && self.changed.is_empty() && self.cancelled.is_empty()
    }
}

/// The digest of `bytes` for the local day of `now` in `zone` and the `horizon` after it,
/// within [`Budget::CALENDAR`]. CPU-bound for up to the budget's time: call it off the async
/// runtime's workers.
pub fn digest(bytes: &[u8], zone: Zone, now: DateTime<Utc>, horizon: Duration) -> Result<Digest, IcsError> {
    digest_within(bytes, zone, now, horizon, Budget::CALENDAR)
}

/// [`digest`] within `budget`.
pub fn digest_within(
    bytes: &[u8],
    zone: Zone,
    now: DateTime<Utc>,
    horizon: Duration,
    budget: Budget,
) -> Result<Digest, IcsError> {
    let text = String::from_utf8_lossy(bytes);
    let first = text.trim_start_matches('\u{feff}').trim_start().split(['\r', '\n']).next().unwrap_or("");
    if !first.trim_end().eq_ignore_ascii_case("BEGIN:VCALENDAR") {
        // Typically a login or error page served with 200 in place of the calendar.
        return Err(IcsError::Malformed(format!(
            "it starts with `{}`, not BEGIN:VCALENDAR",
            one_line(first, 40)
        )));
    }
    let unfolded = Unfolded::of(text.trim_start_matches('\u{feff}'));
    check_blocks(&unfolded)?;
    let roots = icalendar::parser::read_components(&unfolded.text)
        .map_err(|e| IcsError::Malformed(parse_error(&e, &unfolded)))?;
    let window = Window::of(zone, now, horizon);
    let mut problems = Problems::default();
    let mut raw: Vec<RawEvent> = Vec::new();
    for cal in roots.iter().filter(|c| c.name.as_str().eq_ignore_ascii_case("VCALENDAR")) {
        for c in cal.components.iter().filter(|c| c.name.as_str().eq_ignore_ascii_case("VEVENT")) {
            match RawEvent::read(c, &mut problems) {
                Some(e) => raw.push(e),
                None => problems.push("an event without a readable DTSTART was skipped".to_owned()),
            }
        }
    }
    let mut known = BTreeSet::new();
    let mut by_uid: BTreeMap<&str, (Vec<&RawEvent>, Vec<&RawEvent>)> = BTreeMap::new();
    for e in &raw {
        let (masters, overrides) = by_uid.entry(e.uid.as_str()).or_default();
        match &e.recurrence_id {
            Some(rid) => {
                known.insert(format!("{}|{}", e.uid, rid.key()));
                overrides.push(e);
            }
            None => {
                if !e.recurs() {
                    known.insert(e.uid.clone());
                }
                masters.push(e);
            }
        }
    }
    let mut events = Vec::new();
    let mut spending = Spending::of(budget);
    let mut cut = BTreeSet::new();
    for (masters, overrides) in by_uid.values() {
        let replaced: BTreeSet<String> =
            overrides.iter().filter_map(|o| o.recurrence_id.as_ref().map(When::key)).collect();
        for m in masters {
            let cut_before = spending.cut_short;
            let occurrences = m.occurrences(&window, &mut problems, &mut spending);
            if spending.cut_short > cut_before {
                cut.insert(m.uid.clone());
            }
            for occ in occurrences {
                let instance = m.recurs().then(|| occ.start.key());
                if instance.as_ref().is_some_and(|i| replaced.contains(i)) {
                    continue;
                }
                if let Some(e) = m.event_at(&occ, instance, &window) {
                    events.push(e);
                }
            }
        }
        for o in overrides {
            let occ = Occurrence { start: o.start.clone(), length: o.length() };
            if let Some(e) = o.event_at(&occ, o.recurrence_id.as_ref().map(When::key), &window) {
                events.push(e);
            }
        }
    }
    let over_budget = (spending.cut_short > 0).then(|| {
        format!(
            "the calendar's recurrences are too many to expand in one poll (its budget is {} steps or {} s): {} {} left out or cut short",
            count::grouped(budget.steps),
            budget.time.as_secs_f64(),
            count::grouped(spending.cut_short),
            count::plural(spending.cut_short, "recurring event")
        )
    });
    if let Some(p) = &over_budget {
        problems.first(p.clone());
    }
    events.sort_by(|a, b| (sort_key(a), &a.uid, &a.instance).cmp(&(sort_key(b), &b.uid, &b.instance)));
    events.dedup_by(|a, b| a.key() == b.key());
    if events.len() > MAX_EVENTS {
        problems.push(format!("more than {MAX_EVENTS} events in the window: the rest are left out"));
        events.truncate(MAX_EVENTS);
    }
    Ok(Digest {
        date: window.date,
        window_start: window.start,
        window_end: window.end,
        last_date: window.last,
        events,
        problems: problems.0,
        known,
        over_budget,
        cut,
    })
}

impl Digest {
    /// The problem of a spent [`Budget`] (the poller logs it).
    pub fn over_budget(&self) -> Option<&str> {
        self.over_budget.as_deref()
    }
}

/// Whether the poller may send its validators (and take a 304 as "nothing new"): only on the
/// local day of the last digest. A new day is a new digest from the same bytes, so the first
/// poll after midnight fetches the whole calendar even when it did not change.
pub fn may_ask_if_modified(prev: Option<&Digest>, zone: Zone, now: DateTime<Utc>) -> bool {
    prev.is_some_and(|d| d.date == now.with_timezone(&zone).date_naive())
}

/// Timed events sort by their instant, all-day ones by their date's local midnight (first).
fn sort_key(e: &DigestEvent) -> String {
    match DateTime::parse_from_rfc3339(&e.start) {
        Ok(t) => t.with_timezone(&Utc).to_rfc3339_opts(SecondsFormat::Secs, true),
        Err(_) => format!("{}T00:00:00", e.start),
    }
}

/// What changed from `prev` (the last poll's digest, `None` on the first) to `now`.
pub fn changes(prev: Option<&Digest>, now: &Digest) -> Changes {
    let Some(prev) = prev else {
        return Changes { added: now.events.clone(), ..Changes::default() };
    };
    let before: BTreeMap<String, &DigestEvent> = prev.events.iter().map(|e| (e.key(), e)).collect();
    let after: BTreeMap<String, &DigestEvent> = now.events.iter().map(|e| (e.key(), e)).collect();
    let mut out = Changes::default();
    // In the digests' order (by start), so the changes read in time order too.
    for e in &now.events {
        let key = e.key();
        match before.get(&key) {
            None if e.status == "cancelled" => {}
            // Not read last time (the calendar's budget was spent before it).
            None if prev.cut.contains(&e.uid) => {}
            // In view only because the window moved on: nothing happened to it.
            None if !starts_before_end(e, prev) => {}
            None => out.added.push(e.clone()),
            Some(old) if old.status != "cancelled" && e.status == "cancelled" => {
                out.cancelled.push((*e).clone())
            }
            Some(old) if old.start != e.start || old.end != e.end => out.moved.push(Moved {
                event: e.clone(),
                from_start: old.start.clone(),
                from_end: old.end.clone(),
                out_of_window: false,
            }),
            Some(old) if *old != e => out.changed.push(e.clone()),
            Some(_) => {}
        }
    }
    for old in &prev.events {
        let key = old.key();
        let unread = now.cut.contains(&old.uid);
        if after.contains_key(&key) || old.status == "cancelled" || !ends_after_start(old, now) || unread {
            continue;
        }
        if now.known.contains(&key) {
            out.moved.push(Moved {
                event: old.clone(),
                from_start: old.start.clone(),
                from_end: old.end.clone(),
                out_of_window: true,
            });
        } else {
            out.cancelled.push(DigestEvent { status: "cancelled".to_owned(), ..old.clone() });
        }
    }
    out
}

/// Whether `e` starts before `d`'s window ends: it would have been in view then.
fn starts_before_end(e: &DigestEvent, d: &Digest) -> bool {
    match DateTime::parse_from_rfc3339(&e.start) {
        Ok(s) => s < d.window_end,
        Err(_) => NaiveDate::parse_from_str(&e.start, "%Y-%m-%d").is_ok_and(|s| s <= d.last_date),
    }
}

/// Whether `e` ends after `d`'s window starts: it would still be in view now.
fn ends_after_start(e: &DigestEvent, d: &Digest) -> bool {
    match DateTime::parse_from_rfc3339(&e.end) {
        // An instant (start = end) is in view at the window's very start too.
        Ok(t) => t > d.window_start || (e.start == e.end && t == d.window_start),
        // An all-day event's last date: it ends at the next local midnight.
        Err(_) => NaiveDate::parse_from_str(&e.end, "%Y-%m-%d").is_ok_and(|t| t >= d.date),
    }
}

impl Digest {
    /// The digest as a source item (CONTRACT): id `digest:<local date>`, version = hash of
    /// its events, so a poll that finds the same day queues nothing.
    pub fn to_item(&self, changes: &Changes) -> (String, String, String, Value) {
        let events = serde_json::to_string(&self.events).unwrap_or_default();
        let version = hash(&[&self.date.to_string(), &events]);
        let mut parts = Vec::new();
        for (n, what) in [
            (changes.added.len(), "added"),
            (changes.moved.len(), "moved"),
            (changes.changed.len(), "changed"),
            (changes.cancelled.len(), "cancelled"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        let mut summary = format!("calendar for {}: {}", self.date, count::count(self.events.len(), "event"));
        if !parts.is_empty() {
            summary.push_str(&format!(" ({})", parts.join(", ")));
        }
        let payload = serde_json::json!({
            "date": self.date.to_string(),
            "window": { "start": self.window_start.to_rfc3339_opts(SecondsFormat::Secs, true),
                        "end": self.window_end.to_rfc3339_opts(SecondsFormat::Secs, true) },
            "events": self.events,
            "added": changes.added,
            "moved": changes.moved,
            "changed": changes.changed,
            "cancelled": changes.cancelled,
            "problems": self.problems,
            "text": self.markdown(changes),
        });
        (format!("digest:{}", self.date), version, summary, payload)
    }
}

/// Events listed in the digest's text at most (the JSON keeps them all).
const MAX_TEXT_EVENTS: usize = 50;

impl Digest {
    /// The digest as markdown: what the routing model and the run read first (the design's
    /// calendar digest: counts, the changes, then the days).
    pub fn markdown(&self, changes: &Changes) -> String {
        let mut out = format!("# Calendar for {}\n\n{}", self.date, count::count(self.events.len(), "event"));
        let counts: Vec<String> = [
            (changes.added.len(), "added"),
            (changes.moved.len(), "moved"),
            (changes.changed.len(), "changed"),
            (changes.cancelled.len(), "cancelled"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if !counts.is_empty() {
            out.push_str(&format!("; {}", counts.join(", ")));
        }
        out.push('\n');
        if !changes.is_empty() {
            out.push_str("\n## Changes\n\n");
            for e in &changes.added {
                out.push_str(&format!("- added: {}\n", line(e)));
            }
            for m in &changes.moved {
                let was = format!("{} {}", day_of(&m.from_start), time_of(&m.from_start).unwrap_or_default());
                let now = if m.out_of_window {
                    "a day beyond this digest".to_owned()
                } else {
                    format!("{} {}", day_of(&m.event.start), when(&m.event))
                };
                out.push_str(&format!("- moved: {}: {} → {now}\n", m.event.title, was.trim()));
            }
            for e in &changes.changed {
                out.push_str(&format!("- changed: {}\n", line(e)));
            }
            for e in &changes.cancelled {
                out.push_str(&format!("- cancelled: {}\n", line(e)));
            }
        }
        let mut day = String::new();
        for e in self.events.iter().take(MAX_TEXT_EVENTS) {
            let d = day_of(&e.start);
            if d != day {
                out.push_str(&format!("\n## {d}\n\n"));
                day = d;
            }
            out.push_str(&format!("- {}\n", what(e)));
        }
        if self.events.len() > MAX_TEXT_EVENTS {
            out.push_str(&format!("\n… and {} more\n", self.events.len() - MAX_TEXT_EVENTS));
        }
        out
    }
}

/// `2026-03-28 09:00–09:15 Stand-up @ Room 4 (cancelled)`.
fn line(e: &DigestEvent) -> String {
    format!("{} {}", day_of(&e.start), what(e))
}

/// `09:00–09:15 Stand-up @ Room 4 (cancelled)`, `all day Holiday`.
fn what(e: &DigestEvent) -> String {
    let mut text = format!("{} {}", when(e), e.title);
    if let Some(l) = &e.location {
        text.push_str(&format!(" @ {l}"));
    }
    if e.status != "confirmed" {
        text.push_str(&format!(" ({})", e.status));
    }
    text
}

fn when(e: &DigestEvent) -> String {
    match (time_of(&e.start), time_of(&e.end)) {
        (Some(a), Some(b)) if a == b => a,
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ if e.start == e.end => "all day".to_owned(),
        _ => format!("all day until {}", e.end),
    }
}

fn day_of(t: &str) -> String {
    t.get(..10).unwrap_or(t).to_owned()
}

fn time_of(t: &str) -> Option<String> {
    DateTime::parse_from_rfc3339(t).ok().map(|t| t.format("%H:%M").to_string())
}

// ---------------------------------------------------------------------------------------------
// The window

/// The local day of the poll and the horizon after it, as instants.
struct Window {
    zone: Zone,
    date: NaiveDate,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    last: NaiveDate,
}

impl Window {
    fn of(zone: Zone, now: DateTime<Utc>, horizon: Duration) -> Window {
        let date = now.with_timezone(&zone).date_naive();
        let start = midnight(zone, date);
        let tomorrow = date.succ_opt().unwrap_or(date);
        let horizon = horizon.min(MAX_HORIZON);
        let secs = horizon.as_secs();
        // Whole days count in local days, so a DST change in the horizon moves no boundary.
        let end = if secs.is_multiple_of(86_400) {
            let days = secs / 86_400;
            let last = tomorrow.checked_add_days(chrono::Days::new(days)).unwrap_or(tomorrow);
            midnight(zone, last)
        } else {
            let horizon = TimeDelta::from_std(horizon).unwrap_or(TimeDelta::zero());
            let from = midnight(zone, tomorrow);
            from.checked_add_signed(horizon).unwrap_or(from)
        };
        let last = end
            .checked_sub_signed(TimeDelta::seconds(1))
            .unwrap_or(end)
            .with_timezone(&zone)
            .date_naive()
            .max(date);
        Window { zone, date, start, end, last }
    }

    /// Whether [start, end) meets the window; an instant event only by its start.
    fn meets(&self, start: DateTime<Utc>, end: DateTime<Utc>) -> bool {
        if end <= start {
            return start >= self.start && start < self.end;
        }
        start < self.end && end > self.start
    }
}

/// The first instant of `date` in `zone` (01:00 where midnight is skipped by a DST change).
fn midnight(zone: Zone, date: NaiveDate) -> DateTime<Utc> {
    local_instant(zone, date.and_time(NaiveTime::MIN))
}

/// A wall-clock time in `zone` as an instant: the earlier of two in a fall-back hour, an hour
/// later in a spring-forward gap (as calendars show it).
fn local_instant(zone: Zone, t: NaiveDateTime) -> DateTime<Utc> {
    zone.from_local_datetime(&t)
        .earliest()
        .or_else(|| {
            let later = t.checked_add_signed(TimeDelta::hours(1))?;
            zone.from_local_datetime(&later).earliest()
        })
        .map(|d| d.with_timezone(&Utc))
        .unwrap_or_else(|| Utc.from_utc_datetime(&t))
}

mod read;
use read::*;

#[cfg(test)]
#[path = "ics_tests.rs"]
pub(crate) mod tests;
