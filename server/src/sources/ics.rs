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
/// Nesting of BEGIN blocks allowed: real calendars nest three deep (VCALENDAR > VEVENT >
/// VALARM); the parser recurses per level.
const MAX_DEPTH: usize = 8;
/// Characters of a title or location.
const MAX_FIELD: usize = 300;
/// Problems reported at most (a calendar with thousands of broken events says so once).
const MAX_PROBLEMS: usize = 10;

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

/// The digest of `bytes` for the local day of `now` in `zone` and the `horizon` after it.
pub fn digest(bytes: &[u8], zone: Zone, now: DateTime<Utc>, horizon: Duration) -> Result<Digest, IcsError> {
    let text = String::from_utf8_lossy(bytes);
    let first = text.trim_start_matches('\u{feff}').trim_start().lines().next().unwrap_or("");
    if !first.trim_end().eq_ignore_ascii_case("BEGIN:VCALENDAR") {
        // Typically a login or error page served with 200 in place of the calendar.
        return Err(IcsError::Malformed(format!(
            "it starts with `{}`, not BEGIN:VCALENDAR",
            one_line(first, 40)
        )));
    }
    let unfolded = icalendar::parser::unfold(&text);
    check_depth(&unfolded)?;
    let roots =
        icalendar::parser::read_components(&unfolded).map_err(|e| IcsError::Malformed(parse_error(&e)))?;
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
    for (masters, overrides) in by_uid.values() {
        let replaced: BTreeSet<String> =
            overrides.iter().filter_map(|o| o.recurrence_id.as_ref().map(When::key)).collect();
        for m in masters {
            for occ in m.occurrences(&window, &mut problems) {
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
    })
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
        if after.contains_key(&key) || old.status == "cancelled" || !ends_after_start(old, now) {
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
            midnight(zone, tomorrow) + TimeDelta::from_std(horizon).unwrap_or(TimeDelta::zero())
        };
        let last = (end - TimeDelta::seconds(1)).with_timezone(&zone).date_naive().max(date);
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
        .or_else(|| zone.from_local_datetime(&(t + TimeDelta::hours(1))).earliest())
        .map(|d| d.with_timezone(&Utc))
        .unwrap_or_else(|| Utc.from_utc_datetime(&t))
}

// ---------------------------------------------------------------------------------------------
// Reading VEVENTs

/// A DTSTART, DTEND, RECURRENCE-ID, RDATE or EXDATE value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum When {
    Date(NaiveDate),
    /// No zone: the same wall-clock time wherever the reader is.
    Floating(NaiveDateTime),
    Utc(DateTime<Utc>),
    Zoned(NaiveDateTime, chrono_tz::Tz),
}

impl When {
    /// How an occurrence is named across polls and matched with its RECURRENCE-ID.
    fn key(&self) -> String {
        match self {
            When::Date(d) => d.to_string(),
            When::Floating(t) => t.format("%Y-%m-%dT%H:%M:%S").to_string(),
            When::Utc(_) | When::Zoned(..) => self.instant(Zone::Named(chrono_tz::UTC)).to_rfc3339(),
        }
    }

    /// The instant, reading dates and floating times in `local`.
    fn instant(&self, local: Zone) -> DateTime<Utc> {
        match self {
            When::Date(d) => midnight(local, *d),
            When::Floating(t) => local_instant(local, *t),
            When::Utc(t) => *t,
            When::Zoned(t, tz) => local_instant(Zone::Named(*tz), *t),
        }
    }

    fn naive(&self) -> NaiveDateTime {
        match self {
            When::Date(d) => d.and_time(NaiveTime::MIN),
            When::Floating(t) | When::Zoned(t, _) => *t,
            When::Utc(t) => t.naive_utc(),
        }
    }

    /// The same kind of value at `t` (an occurrence of a rule expanded in this one's zone).
    fn like(&self, t: NaiveDateTime) -> When {
        match self {
            When::Date(_) => When::Date(t.date()),
            When::Floating(_) => When::Floating(t),
            When::Utc(_) => When::Utc(Utc.from_utc_datetime(&t)),
            When::Zoned(_, tz) => When::Zoned(t, *tz),
        }
    }

    /// The zone rules are expanded in: the event's own, or UTC standing in for wall-clock
    /// time (dates and floating times).
    fn carrier(&self) -> rrule::Tz {
        match self {
            When::Zoned(_, tz) => rrule::Tz::Tz(*tz),
            _ => rrule::Tz::UTC,
        }
    }

    /// `other` (an RDATE or EXDATE, maybe in another zone) as a wall-clock time in this
    /// one's carrier.
    fn in_carrier_of(&self, other: &When) -> NaiveDateTime {
        match (self, other) {
            (When::Zoned(_, tz), When::Utc(_) | When::Zoned(..)) => {
                other.instant(Zone::Named(chrono_tz::UTC)).with_timezone(tz).naive_local()
            }
            (When::Date(start), When::Date(d)) => d.and_time(start.and_time(NaiveTime::MIN).time()),
            (When::Zoned(t, _) | When::Floating(t), When::Date(d)) => d.and_time(t.time()),
            (When::Utc(t), When::Date(d)) => d.and_time(t.time()),
            (When::Utc(_), When::Zoned(..)) => other.instant(Zone::Named(chrono_tz::UTC)).naive_utc(),
            _ => other.naive(),
        }
    }
}

/// One VEVENT as read.
#[derive(Debug)]
struct RawEvent {
    uid: String,
    title: String,
    location: Option<String>,
    status: String,
    start: When,
    end: Option<When>,
    duration: Option<TimeDelta>,
    rrules: Vec<String>,
    rdates: Vec<When>,
    exdates: Vec<When>,
    recurrence_id: Option<When>,
}

/// One occurrence: where it starts and how long it lasts.
struct Occurrence {
    start: When,
    length: TimeDelta,
}

impl RawEvent {
    fn read(c: &Component<'_>, problems: &mut Problems) -> Option<RawEvent> {
        let text = |name: &str| {
            c.properties
                .iter()
                .find(|p| p.name.as_str().eq_ignore_ascii_case(name))
                .map(|p| one_line(p.val.clone().unescape_text().as_str(), MAX_FIELD))
                .filter(|s| !s.is_empty())
        };
        let props = |name: &'static str| {
            c.properties.iter().filter(move |p| p.name.as_str().eq_ignore_ascii_case(name))
        };
        let when = |name: &'static str, problems: &mut Problems| {
            props(name).next().and_then(|p| read_when(p, problems).into_iter().next())
        };
        let start = when("DTSTART", problems)?;
        let title = text("SUMMARY").unwrap_or_else(|| "(no title)".to_owned());
        let uid = text("UID")
            .map(|u| clip(&u, MAX_FIELD))
            .unwrap_or_else(|| format!("hash:{}", hash(&[title.as_str(), start.key().as_str()])));
        let status = match text("STATUS").map(|s| s.to_ascii_uppercase()).as_deref() {
            Some("CANCELLED") => "cancelled",
            Some("TENTATIVE") => "tentative",
            _ => "confirmed",
        };
        let mut rdates = Vec::new();
        for p in props("RDATE") {
            rdates.extend(read_when(p, problems));
        }
        let mut exdates = Vec::new();
        for p in props("EXDATE") {
            exdates.extend(read_when(p, problems));
        }
        Some(RawEvent {
            uid,
            title,
            location: text("LOCATION"),
            status: status.to_owned(),
            end: when("DTEND", problems),
            duration: text("DURATION").and_then(|d| parse_duration(&d)),
            rrules: props("RRULE").map(|p| p.val.as_str().trim().to_owned()).collect(),
            rdates,
            exdates,
            recurrence_id: when("RECURRENCE-ID", problems),
            start,
        })
    }

    fn recurs(&self) -> bool {
        !self.rrules.is_empty() || !self.rdates.is_empty()
    }

    /// DTEND − DTSTART, else DURATION, else a day for an all-day event and nothing for a
    /// timed one (RFC 5545 3.6.1).
    fn length(&self) -> TimeDelta {
        let default = match self.start {
            When::Date(_) => TimeDelta::days(1),
            _ => TimeDelta::zero(),
        };
        let utc = Zone::Named(chrono_tz::UTC);
        let length = match (&self.end, self.duration) {
            (Some(end @ (When::Date(_) | When::Floating(_))), _) => end.naive() - self.start.naive(),
            (Some(end), _) => end.instant(utc) - self.start.instant(utc),
            (None, Some(d)) => d,
            (None, None) => default,
        };
        if length < TimeDelta::zero() { default } else { length }
    }

    /// The occurrences that may meet the window (with a day's margin either side, which
    /// wall-clock times need before they are placed in the local zone).
    fn occurrences(&self, window: &Window, problems: &mut Problems) -> Vec<Occurrence> {
        let length = self.length();
        if !self.recurs() {
            return vec![Occurrence { start: self.start.clone(), length }];
        }
        let carrier = self.start.carrier();
        let Some(dtstart) = carrier.from_local_datetime(&self.start.naive()).earliest() else {
            problems.push(format!("`{}`: its start does not exist in its zone", self.title));
            return Vec::new();
        };
        let mut set = rrule::RRuleSet::new(dtstart);
        for rule in &self.rrules {
            let parsed = rule.parse::<rrule::RRule<rrule::Unvalidated>>().and_then(|r| r.validate(dtstart));
            match parsed {
                Ok(r) => set = set.rrule(r),
                Err(e) => {
                    problems.push(format!(
                        "`{}`: its recurrence rule is not understood ({})",
                        self.title,
                        one_line(&e.to_string(), 120)
                    ));
                    return vec![Occurrence { start: self.start.clone(), length }];
                }
            }
        }
        let in_carrier = |w: &When| carrier.from_local_datetime(&self.start.in_carrier_of(w)).earliest();
        for d in &self.rdates {
            if let Some(t) = in_carrier(d) {
                set = set.rdate(t);
            }
        }
        for d in &self.exdates {
            if let Some(t) = in_carrier(d) {
                set = set.exdate(t);
            }
        }
        let margin = TimeDelta::days(1);
        let after = (window.start - length - margin).with_timezone(&carrier);
        let before = (window.end + margin).with_timezone(&carrier);
        // By hand rather than `all()`, which walks every occurrence from DTSTART to the window
        // without a bound: `FREQ=SECONDLY` from 1990 is a billion steps. `limit()` bounds the
        // search for each next one (a rule that never matches).
        let mut found = Vec::new();
        for (step, t) in set.limit().into_iter().enumerate() {
            if step >= MAX_STEPS || found.len() >= usize::from(MAX_OCCURRENCES) {
                problems.push(format!("`{}`: its recurrence is too dense to expand this far", self.title));
                break;
            }
            if t > before {
                break;
            }
            if t >= after {
                found.push(Occurrence { start: self.start.like(t.naive_local()), length });
            }
        }
        found
    }

    /// The occurrence as a digest event, when it meets the window.
    fn event_at(&self, occ: &Occurrence, instance: Option<String>, window: &Window) -> Option<DigestEvent> {
        let zone = window.zone;
        let (start, end, all_day) = match &occ.start {
            When::Date(d) => {
                let days = occ.length.num_days().max(1);
                let last = d.checked_add_signed(TimeDelta::days(days - 1)).unwrap_or(*d);
                let (from, to) = (midnight(zone, *d), midnight(zone, last.succ_opt().unwrap_or(last)));
                if !window.meets(from, to) {
                    return None;
                }
                (d.to_string(), last.to_string(), true)
            }
            When::Floating(t) => {
                let (from, to) = (local_instant(zone, *t), local_instant(zone, *t + occ.length));
                if !window.meets(from, to) {
                    return None;
                }
                (rfc3339(zone, from), rfc3339(zone, to), false)
            }
            other => {
                let from = other.instant(zone);
                let to = from + occ.length;
                if !window.meets(from, to) {
                    return None;
                }
                (rfc3339(zone, from), rfc3339(zone, to), false)
            }
        };
        Some(DigestEvent {
            uid: self.uid.clone(),
            instance,
            title: self.title.clone(),
            start,
            end,
            all_day,
            location: self.location.clone(),
            status: self.status.clone(),
        })
    }
}

fn rfc3339(zone: Zone, t: DateTime<Utc>) -> String {
    t.with_timezone(&zone).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A date-time property's values (RDATE and EXDATE may list several; a PERIOD counts by its
/// start).
fn read_when(p: &Property<'_>, problems: &mut Problems) -> Vec<When> {
    let param = |key: &str| {
        p.params
            .iter()
            .find(|x| x.key.as_str().eq_ignore_ascii_case(key))
            .and_then(|x| x.val.as_ref())
            .map(|v| v.as_str().trim_matches('"').to_owned())
    };
    let tz = match param("TZID") {
        Some(id) => match zone_named(&id) {
            Some(tz) => Some(tz),
            None => {
                problems
                    .push(format!("unknown time zone `{}`: its times are read as local", one_line(&id, 60)));
                None
            }
        },
        None => None,
    };
    let mut out = Vec::new();
    for value in p.val.as_str().split(',') {
        let value = value.split('/').next().unwrap_or("").trim();
        match parse_when(value, tz) {
            Some(w) => out.push(w),
            None => problems.push(format!("a date `{}` that is not understood", one_line(value, 40))),
        }
    }
    out
}

fn parse_when(value: &str, tz: Option<chrono_tz::Tz>) -> Option<When> {
    if value.len() == 8 {
        return NaiveDate::parse_from_str(value, "%Y%m%d").ok().map(When::Date);
    }
    let (naive, utc) = match value.strip_suffix(['Z', 'z']) {
        Some(v) => (v, true),
        None => (value, false),
    };
    let t = NaiveDateTime::parse_from_str(naive, "%Y%m%dT%H%M%S").ok()?;
    Some(match (utc, tz) {
        (true, _) => When::Utc(Utc.from_utc_datetime(&t)),
        (false, Some(tz)) => When::Zoned(t, tz),
        (false, None) => When::Floating(t),
    })
}

/// An IANA zone for a TZID: the name itself, an IANA-looking tail of it, or a Windows name.
fn zone_named(id: &str) -> Option<chrono_tz::Tz> {
    let id = id.trim();
    if let Ok(tz) = id.parse() {
        return Some(tz);
    }
    let tails = id.char_indices().filter(|(_, c)| *c == '/').map(|(i, _)| &id[i + 1..]);
    if let Some(tz) = tails.filter_map(|t| t.parse().ok()).next() {
        return Some(tz);
    }
    WINDOWS_ZONES.iter().find(|(w, _)| w.eq_ignore_ascii_case(id)).and_then(|(_, iana)| iana.parse().ok())
}

/// The Windows zone names Outlook and Exchange write most, with CLDR's IANA equivalent.
const WINDOWS_ZONES: [(&str, &str); 24] = [
    ("UTC", "UTC"),
    ("GMT Standard Time", "Europe/London"),
    ("W. Europe Standard Time", "Europe/Berlin"),
    ("Central Europe Standard Time", "Europe/Budapest"),
    ("Romance Standard Time", "Europe/Paris"),
    ("Central European Standard Time", "Europe/Warsaw"),
    ("E. Europe Standard Time", "Europe/Chisinau"),
    ("FLE Standard Time", "Europe/Kiev"),
    ("GTB Standard Time", "Europe/Bucharest"),
    ("Russian Standard Time", "Europe/Moscow"),
    ("Eastern Standard Time", "America/New_York"),
    ("Central Standard Time", "America/Chicago"),
    ("Mountain Standard Time", "America/Denver"),
    ("US Mountain Standard Time", "America/Phoenix"),
    ("Pacific Standard Time", "America/Los_Angeles"),
    ("Alaskan Standard Time", "America/Anchorage"),
    ("Hawaiian Standard Time", "Pacific/Honolulu"),
    ("E. South America Standard Time", "America/Sao_Paulo"),
    ("India Standard Time", "Asia/Kolkata"),
    ("China Standard Time", "Asia/Shanghai"),
    ("Tokyo Standard Time", "Asia/Tokyo"),
    ("Singapore Standard Time", "Asia/Singapore"),
    ("AUS Eastern Standard Time", "Australia/Sydney"),
    ("New Zealand Standard Time", "Pacific/Auckland"),
];

/// An RFC 5545 DURATION (`P1D`, `PT1H30M`, `P2W`, `-PT15M`).
fn parse_duration(s: &str) -> Option<TimeDelta> {
    let s = s.trim();
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let s = s.strip_prefix(['P', 'p'])?;
    let mut total = TimeDelta::zero();
    let mut number = String::new();
    let mut in_time = false;
    for c in s.chars() {
        match c.to_ascii_uppercase() {
            'T' => in_time = true,
            d if d.is_ascii_digit() => number.push(d),
            unit => {
                let n: i64 = number.parse().ok()?;
                number.clear();
                total += match (unit, in_time) {
                    ('W', false) => TimeDelta::try_weeks(n)?,
                    ('D', false) => TimeDelta::try_days(n)?,
                    ('H', true) => TimeDelta::try_hours(n)?,
                    ('M', true) => TimeDelta::try_minutes(n)?,
                    ('S', true) => TimeDelta::try_seconds(n)?,
                    _ => return None,
                };
            }
        }
    }
    if !number.is_empty() {
        return None;
    }
    Some(if negative { -total } else { total })
}

/// The parser's first complaint (`0: at line 2, in Satisfy:` over the line, then more) as
/// "cannot be read at line 2: BEGIN:VEVENT".
fn parse_error(e: &str) -> String {
    let mut lines = e.lines().skip_while(|l| !l.contains("at line "));
    let line = lines.next().and_then(|l| l.split("at line ").nth(1)).and_then(|r| r.split(',').next());
    match (line, lines.next()) {
        (Some(line), Some(text)) => one_line(&format!("cannot be read at line {line}: {text}"), 200),
        _ => one_line(e, 200),
    }
}

fn check_depth(text: &str) -> Result<(), IcsError> {
    let mut depth = 0usize;
    for line in text.lines() {
        let line = line.trim_start();
        let starts = |p: &str| line.get(..p.len()).is_some_and(|head| head.eq_ignore_ascii_case(p));
        if starts("BEGIN:") {
            depth += 1;
            if depth > MAX_DEPTH {
                return Err(IcsError::Malformed(format!("BEGIN blocks nested more than {MAX_DEPTH} deep")));
            }
        } else if starts("END:") {
            depth = depth.saturating_sub(1);
        }
    }
    Ok(())
}

/// Problems, each once, at most [`MAX_PROBLEMS`].
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn push(&mut self, p: String) {
        if self.0.len() < MAX_PROBLEMS && !self.0.contains(&p) {
            self.0.push(p);
        }
    }
}

#[cfg(test)]
#[path = "ics_tests.rs"]
mod tests;
