use super::*;
use crate::schedule::clock::{Clock, ManualClock};
use crate::schedule::window::TimeOfDay;
use chrono_tz::America::{Chicago, New_York};
use chrono_tz::Asia::Kolkata;
use chrono_tz::Australia::Lord_Howe;
use chrono_tz::Europe::London;
use chrono_tz::Tz;
use expect_test::expect;
use proptest::prelude::*;

const UTC: Tz = chrono_tz::UTC;

fn at(s: &str) -> DateTime<Utc> {
    match DateTime::parse_from_rfc3339(s) {
        Ok(t) => t.to_utc(),
        Err(e) => panic!("bad test timestamp {s}: {e}"),
    }
}

fn cron(expr: &str) -> CronSchedule {
    match CronSchedule::parse(expr) {
        Ok(c) => c,
        Err(e) => panic!("{expr:?} should parse: {e}"),
    }
}

fn windows(list: &[(&str, &str)]) -> Vec<Window> {
    list.iter()
        .map(|(a, b)| match (TimeOfDay::parse(a), TimeOfDay::parse(b)) {
            (Ok(a), Ok(b)) => Window::new(a, b),
            _ => panic!("bad test window {a}-{b}"),
        })
        .collect()
}

/// A compact, zone-local rendering of a decision for the vector table.
fn code(d: &Decision, tz: &Tz) -> String {
    let local = |t: &DateTime<Utc>| t.with_timezone(tz).to_rfc3339();
    let trigger = |t: &DueTrigger| match t {
        DueTrigger::Cron { occurrence: None } => "cron(never ran)".to_string(),
        DueTrigger::Cron { occurrence: Some(p) } => format!("cron@{}", local(p)),
        DueTrigger::Window { index } => format!("window#{index}"),
    };
    match d {
        Decision::Due(t) => format!("due {}", trigger(t)),
        Decision::NotDue(SkipReason::Paused) => "paused".to_string(),
        Decision::NotDue(SkipReason::ManualOnly) => "manual-only".to_string(),
        Decision::NotDue(SkipReason::Expired { since }) => format!("expired since {}", local(since)),
        Decision::NotDue(SkipReason::Backoff { until, pending }) => format!(
            "backoff until {} pending {}",
            local(until),
            pending.as_ref().map_or("none".to_string(), trigger)
        ),
        Decision::NotDue(SkipReason::Waiting { cron, windows }) => {
            let cron = match cron {
                Some(CronSkip::AlreadyRan { occurrence }) => {
                    format!(" cron=ran@{}", local(occurrence))
                }
                Some(CronSkip::Missed { occurrence }) => {
                    format!(" cron=missed@{}", local(occurrence))
                }
                Some(CronSkip::NoOccurrence) => " cron=none".to_string(),
                None => String::new(),
            };
            let windows = match windows {
                Some(WindowSkip::DoneToday { index }) => format!(" windows=done#{index}"),
                Some(WindowSkip::OutsideBands) => " windows=outside".to_string(),
                None => String::new(),
            };
            format!("wait{cron}{windows}")
        }
    }
}

#[derive(Clone, Copy)]
struct Vector {
    name: &'static str,
    tz: Tz,
    active: bool,
    cron: Option<&'static str>,
    windows: &'static [(&'static str, &'static str)],
    last_run: Option<&'static str>,
    last_attempt: Option<&'static str>,
    failures: u32,
    stopped: Option<&'static str>,
    now: &'static str,
    want: &'static str,
}

const V: Vector = Vector {
    name: "",
    tz: UTC,
    active: true,
    cron: None,
    windows: &[],
    last_run: None,
    last_attempt: None,
    failures: 0,
    stopped: None,
    now: "",
    want: "",
};

const HOURLY: Option<&str> = Some("0 * * * *");
const EVERY_5: Option<&str> = Some("*/5 * * * *");
const MORNING: &[(&str, &str)] = &[("09:00", "12:00")];
const SPLIT_DAY: &[(&str, &str)] = &[("08:00", "12:00"), ("12:00", "15:00")];

#[rustfmt::skip]
    const VECTORS: &[Vector] = &[
        // cron, never ran
        Vector { name: "cron never ran is due now", cron: HOURLY, now: "2026-05-08T10:17:00Z", want: "due cron(never ran)", ..V },
        Vector { name: "never ran, but a first attempt failed a minute ago", cron: HOURLY, last_attempt: Some("2026-05-08T10:16:00Z"), now: "2026-05-08T10:17:00Z", want: "backoff until 2026-05-08T10:21:00+00:00 pending cron(never ran)", ..V },
        Vector { name: "never ran, retried after the backoff", cron: HOURLY, last_attempt: Some("2026-05-08T10:12:00Z"), now: "2026-05-08T10:17:00Z", want: "due cron(never ran)", ..V },
        // grace
        Vector { name: "inside the grace", cron: HOURLY, last_run: Some("2026-05-08T09:00:01Z"), now: "2026-05-08T10:00:30Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "grace is inclusive at +2:00", cron: HOURLY, last_run: Some("2026-05-08T09:00:01Z"), now: "2026-05-08T10:02:00Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "grace is over at +2:00.001", cron: HOURLY, last_run: Some("2026-05-08T09:00:01Z"), now: "2026-05-08T10:02:00.001Z", want: "wait cron=missed@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "grace is over at +2:01", cron: HOURLY, last_run: Some("2026-05-08T09:00:01Z"), now: "2026-05-08T10:02:01Z", want: "wait cron=missed@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "a run that landed exactly on the occurrence covers it", cron: HOURLY, last_run: Some("2026-05-08T10:00:00Z"), now: "2026-05-08T10:00:30Z", want: "wait cron=ran@2026-05-08T10:00:00+00:00", ..V },
        // strictly before now
        Vector { name: "now on an occurrence: p is the previous one (already ran)", cron: HOURLY, last_run: Some("2026-05-08T09:00:01Z"), now: "2026-05-08T10:00:00Z", want: "wait cron=ran@2026-05-08T09:00:00+00:00", ..V },
        Vector { name: "now on an occurrence: p is the previous one (missed)", cron: HOURLY, last_run: Some("2026-05-08T08:00:01Z"), now: "2026-05-08T10:00:00Z", want: "wait cron=missed@2026-05-08T09:00:00+00:00", ..V },
        Vector { name: "now on an occurrence: the previous, attempted one is still due", cron: HOURLY, last_run: Some("2026-05-08T08:00:01Z"), last_attempt: Some("2026-05-08T09:00:02Z"), now: "2026-05-08T10:00:00Z", want: "due cron@2026-05-08T09:00:00+00:00", ..V },
        // a failed cycle
        Vector { name: "failed cycle in backoff", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), now: "2026-05-08T10:03:00Z", want: "backoff until 2026-05-08T10:05:10+00:00 pending cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "failed cycle retried when the backoff ends", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), now: "2026-05-08T10:05:10Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "failed cycle still due later in the cycle", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), now: "2026-05-08T10:47:00Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "failed cycle due up to the next occurrence itself", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), now: "2026-05-08T11:00:00Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "after a failed cycle the next occurrence has its own grace", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), now: "2026-05-08T11:00:30Z", want: "due cron@2026-05-08T11:00:00+00:00", ..V },
        Vector { name: "after a failed cycle the next occurrence can be missed", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), now: "2026-05-08T11:03:00Z", want: "wait cron=missed@2026-05-08T11:00:00+00:00", ..V },
        Vector { name: "missed occurrences are skipped, not replayed", cron: HOURLY, last_run: Some("2026-05-08T07:00:05Z"), now: "2026-05-08T10:30:00Z", want: "wait cron=missed@2026-05-08T10:00:00+00:00", ..V },
        // backoff
        Vector { name: "backoff blocks at 4:59", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:00Z"), now: "2026-05-08T10:04:59Z", want: "backoff until 2026-05-08T10:05:00+00:00 pending cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "backoff is over at exactly 5:00", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:00Z"), now: "2026-05-08T10:05:00Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "backoff blocks at 0:00 (the attempt instant)", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:30Z"), now: "2026-05-08T10:00:30Z", want: "backoff until 2026-05-08T10:05:30+00:00 pending cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "a future lastAttemptAt does not block", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:10:00Z"), now: "2026-05-08T10:00:30Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "a success ends the backoff: nothing pending, nothing held", cron: HOURLY, last_run: Some("2026-05-08T10:00:03Z"), last_attempt: Some("2026-05-08T10:00:00Z"), now: "2026-05-08T10:03:00Z", want: "wait cron=ran@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "a failed attempt after a success backs off with nothing pending", cron: HOURLY, last_run: Some("2026-05-08T10:00:03Z"), last_attempt: Some("2026-05-08T10:01:00Z"), now: "2026-05-08T10:03:00Z", want: "backoff until 2026-05-08T10:06:00+00:00 pending none", ..V },
        // SPEC 3: after a success no backoff applies; a */5 note that ran at 10:01:47 fires at 10:05
        Vector { name: "*/5 after a success at :01:47 fires at :05", cron: EVERY_5, last_run: Some("2026-05-08T10:01:48Z"), last_attempt: Some("2026-05-08T10:01:47Z"), now: "2026-05-08T10:05:00.001Z", want: "due cron@2026-05-08T10:05:00+00:00", ..V },
        Vector { name: "*/5 after a failure at :01:47 still backs off", cron: EVERY_5, last_run: Some("2026-05-08T09:55:01Z"), last_attempt: Some("2026-05-08T10:01:47Z"), now: "2026-05-08T10:05:00.001Z", want: "backoff until 2026-05-08T10:06:47+00:00 pending cron@2026-05-08T10:05:00+00:00", ..V },
        Vector { name: "backoff blocks windows too", windows: MORNING, last_attempt: Some("2026-05-08T08:58:00Z"), now: "2026-05-08T09:01:00Z", want: "backoff until 2026-05-08T09:03:00+00:00 pending window#0", ..V },
        // exponential backoff (SPEC 3): 5 min × 2^(n-1) after the n-th consecutive failure, capped
        Vector { name: "third failure waits 20 minutes", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), failures: 3, now: "2026-05-08T10:15:00Z", want: "backoff until 2026-05-08T10:20:10+00:00 pending cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "third failure retried after 20 minutes", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), failures: 3, now: "2026-05-08T10:20:10Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "a backoff longer than the cycle skips occurrences", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), failures: 5, now: "2026-05-08T11:01:00Z", want: "backoff until 2026-05-08T11:20:10+00:00 pending cron@2026-05-08T11:00:00+00:00", ..V },
        Vector { name: "seventh failure: 320 minutes, under the 6h cap", cron: Some("0 9 * * *"), last_run: Some("2026-05-07T09:00:05Z"), last_attempt: Some("2026-05-08T09:00:10Z"), failures: 7, now: "2026-05-08T14:20:10Z", want: "due cron@2026-05-08T09:00:00+00:00", ..V },
        Vector { name: "past the cap: the occurrence is not retried", cron: Some("0 9 * * *"), last_run: Some("2026-05-07T09:00:05Z"), last_attempt: Some("2026-05-08T09:00:10Z"), failures: 8, now: "2026-05-08T15:30:00Z", want: "wait cron=ran@2026-05-08T09:00:00+00:00", ..V },
        Vector { name: "past the cap: the next occurrence is tried once", cron: Some("0 9 * * *"), last_run: Some("2026-05-07T09:00:05Z"), last_attempt: Some("2026-05-08T09:00:10Z"), failures: 9, now: "2026-05-09T09:00:30Z", want: "due cron@2026-05-09T09:00:00+00:00", ..V },
        Vector { name: "past the cap: the cap still holds back", cron: HOURLY, last_run: Some("2026-05-07T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), failures: 8, now: "2026-05-08T11:00:30Z", want: "backoff until 2026-05-08T16:00:10+00:00 pending cron@2026-05-08T11:00:00+00:00", ..V },
        Vector { name: "past the cap: a window is done for the day", windows: &[("09:00", "18:00")], last_attempt: Some("2026-05-08T09:00:00Z"), failures: 8, now: "2026-05-08T15:30:00Z", want: "wait windows=done#0", ..V },
        Vector { name: "a huge count does not overflow", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), failures: u32::MAX, now: "2026-05-08T10:30:00Z", want: "backoff until 2026-05-08T16:00:10+00:00 pending none", ..V },
        Vector { name: "a success wins over a stale count", cron: HOURLY, last_run: Some("2026-05-08T10:00:13Z"), last_attempt: Some("2026-05-08T10:00:10Z"), failures: 4, now: "2026-05-08T11:00:30Z", want: "due cron@2026-05-08T11:00:00+00:00", ..V },
        // Stop ends the occurrence (SPEC 3)
        Vector { name: "stopped: not retried in its occurrence, no backoff", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), stopped: Some("2026-05-08T10:01:00Z"), now: "2026-05-08T10:07:00Z", want: "wait cron=ran@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "stopped: the next occurrence fires", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), stopped: Some("2026-05-08T10:01:00Z"), now: "2026-05-08T11:00:30Z", want: "due cron@2026-05-08T11:00:00+00:00", ..V },
        Vector { name: "stopped before it ever ran: waits for the next occurrence", cron: HOURLY, last_attempt: Some("2026-05-08T10:16:00Z"), stopped: Some("2026-05-08T10:16:30Z"), now: "2026-05-08T10:30:00Z", want: "wait cron=ran@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "an older stop does not cover a later failure", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), stopped: Some("2026-05-08T09:30:00Z"), now: "2026-05-08T10:03:00Z", want: "backoff until 2026-05-08T10:05:10+00:00 pending cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "stopped at a window's very start: done for the day", windows: MORNING, last_attempt: Some("2026-05-08T09:00:00Z"), stopped: Some("2026-05-08T09:01:00Z"), now: "2026-05-08T09:10:00Z", want: "wait windows=done#0", ..V },
        // windows to the minute
        Vector { name: "before the band", windows: MORNING, now: "2026-05-08T08:59:59.999Z", want: "wait windows=outside", ..V },
        Vector { name: "band opens at startTime:00", windows: MORNING, now: "2026-05-08T09:00:00Z", want: "due window#0", ..V },
        Vector { name: "the end minute is inside (endTime:59)", windows: MORNING, now: "2026-05-08T12:00:59Z", want: "due window#0", ..V },
        Vector { name: "the minute after the end is outside", windows: MORNING, now: "2026-05-08T12:01:00Z", want: "wait windows=outside", ..V },
        Vector { name: "a run exactly at startTime does not count", windows: MORNING, last_run: Some("2026-05-08T09:00:00Z"), now: "2026-05-08T09:30:00Z", want: "due window#0", ..V },
        Vector { name: "a run just after startTime does", windows: MORNING, last_run: Some("2026-05-08T09:00:00.001Z"), now: "2026-05-08T09:30:00Z", want: "wait windows=done#0", ..V },
        Vector { name: "yesterday's run does not count today", windows: MORNING, last_run: Some("2026-05-07T10:00:00Z"), now: "2026-05-08T09:30:00Z", want: "due window#0", ..V },
        Vector { name: "no grace: a window can fire late in its band", windows: MORNING, last_run: Some("2026-05-07T10:00:00Z"), now: "2026-05-08T11:59:00Z", want: "due window#0", ..V },
        Vector { name: "adjacent windows: the second fires at its start", windows: SPLIT_DAY, last_run: Some("2026-05-08T08:00:30Z"), now: "2026-05-08T12:00:00Z", want: "due window#1", ..V },
        Vector { name: "adjacent windows: the first is done before noon", windows: SPLIT_DAY, last_run: Some("2026-05-08T08:00:30Z"), now: "2026-05-08T11:00:00Z", want: "wait windows=done#0", ..V },
        Vector { name: "adjacent windows: both done", windows: SPLIT_DAY, last_run: Some("2026-05-08T12:00:10Z"), now: "2026-05-08T13:00:00Z", want: "wait windows=done#1", ..V },
        Vector { name: "one-minute window, inside", windows: &[("09:00", "09:00")], now: "2026-05-08T09:00:59Z", want: "due window#0", ..V },
        Vector { name: "one-minute window, after", windows: &[("09:00", "09:00")], now: "2026-05-08T09:01:00Z", want: "wait windows=outside", ..V },
        Vector { name: "an inverted window never fires", windows: &[("12:00", "08:00")], now: "2026-05-08T10:00:00Z", want: "wait windows=outside", ..V },
        Vector { name: "windows in list order", windows: &[("13:00", "14:00"), ("09:00", "12:00"), ("10:00", "11:00")], now: "2026-05-08T10:30:00Z", want: "due window#1", ..V },
        // cron before windows
        Vector { name: "cron is named before a matching window", cron: HOURLY, windows: MORNING, last_run: Some("2026-05-07T20:00:05Z"), now: "2026-05-08T10:01:00Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "a window fires when the cron occurrence was missed", cron: HOURLY, windows: MORNING, last_run: Some("2026-05-07T20:00:05Z"), now: "2026-05-08T10:30:00Z", want: "due window#0", ..V },
        Vector { name: "neither matches", cron: HOURLY, windows: MORNING, last_run: Some("2026-05-08T09:10:00Z"), now: "2026-05-08T09:30:00Z", want: "wait cron=ran@2026-05-08T09:00:00+00:00 windows=done#0", ..V },
        // day-of-week numbering and DOM/DOW OR
        Vector { name: "1 is Monday", cron: Some("0 9 * * 1"), last_run: Some("2026-05-04T09:00:05Z"), now: "2026-05-11T09:01:00Z", want: "due cron@2026-05-11T09:00:00+00:00", ..V },
        Vector { name: "0 is Sunday", cron: Some("0 9 * * 0"), last_run: Some("2026-05-03T09:00:05Z"), now: "2026-05-10T09:00:30Z", want: "due cron@2026-05-10T09:00:00+00:00", ..V },
        Vector { name: "7 is Sunday", cron: Some("0 9 * * 7"), last_run: Some("2026-05-03T09:00:05Z"), now: "2026-05-10T09:00:30Z", want: "due cron@2026-05-10T09:00:00+00:00", ..V },
        Vector { name: "SUN is Sunday", cron: Some("0 9 * * SUN"), last_run: Some("2026-05-03T09:00:05Z"), now: "2026-05-10T09:00:30Z", want: "due cron@2026-05-10T09:00:00+00:00", ..V },
        Vector { name: "Sunday cron on a Saturday", cron: Some("0 9 * * 0"), last_run: Some("2026-05-03T09:00:05Z"), now: "2026-05-09T09:00:30Z", want: "wait cron=ran@2026-05-03T09:00:00+00:00", ..V },
        Vector { name: "DOM/DOW OR: the 13th (a Wednesday)", cron: Some("0 9 13 * 5"), last_run: Some("2026-05-08T09:00:05Z"), now: "2026-05-13T09:01:00Z", want: "due cron@2026-05-13T09:00:00+00:00", ..V },
        Vector { name: "DOM/DOW OR: a Friday", cron: Some("0 9 13 * 5"), last_run: Some("2026-05-13T09:00:05Z"), now: "2026-05-15T09:01:00Z", want: "due cron@2026-05-15T09:00:00+00:00", ..V },
        Vector { name: "DOM/DOW OR: neither", cron: Some("0 9 13 * 5"), last_run: Some("2026-05-13T09:00:05Z"), now: "2026-05-14T09:01:00Z", want: "wait cron=ran@2026-05-13T09:00:00+00:00", ..V },
        // nicknames and seconds
        Vector { name: "@hourly", cron: Some("@hourly"), last_run: Some("2026-05-08T09:00:05Z"), now: "2026-05-08T10:01:59Z", want: "due cron@2026-05-08T10:00:00+00:00", ..V },
        Vector { name: "@daily", cron: Some("@daily"), last_run: Some("2026-05-07T00:00:05Z"), now: "2026-05-08T00:01:00Z", want: "due cron@2026-05-08T00:00:00+00:00", ..V },
        Vector { name: "6-field seconds", cron: Some("*/30 * * * * *"), last_run: Some("2026-05-08T10:00:00.500Z"), now: "2026-05-08T10:00:31Z", want: "due cron@2026-05-08T10:00:30+00:00", ..V },
        Vector { name: "6-field seconds, now on an occurrence", cron: Some("*/30 * * * * *"), last_run: Some("2026-05-08T10:00:00.500Z"), now: "2026-05-08T10:00:30Z", want: "wait cron=ran@2026-05-08T10:00:00+00:00", ..V },
        // named zones
        Vector { name: "Chicago local 09:00", tz: Chicago, cron: Some("0 9 * * *"), last_run: Some("2026-05-07T09:00:05-05:00"), now: "2026-05-08T09:01:00-05:00", want: "due cron@2026-05-08T09:00:00-05:00", ..V },
        Vector { name: "Chicago: 09:00 UTC is not 09:00 local", tz: Chicago, cron: Some("0 9 * * *"), last_run: Some("2026-05-07T09:00:05-05:00"), now: "2026-05-08T09:01:00Z", want: "wait cron=ran@2026-05-07T09:00:00-05:00", ..V },
        Vector { name: "Kolkata window inside", tz: Kolkata, windows: &[("09:00", "10:00")], now: "2026-05-08T09:30:00+05:30", want: "due window#0", ..V },
        Vector { name: "Kolkata window: 09:30 UTC is 15:00 local", tz: Kolkata, windows: &[("09:00", "10:00")], now: "2026-05-08T09:30:00Z", want: "wait windows=outside", ..V },
        Vector { name: "Lord Howe half-hour offset", tz: Lord_Howe, cron: Some("0 9 * * *"), last_run: Some("2026-05-07T09:00:05+10:30"), now: "2026-05-08T09:01:00+10:30", want: "due cron@2026-05-08T09:00:00+10:30", ..V },
        Vector { name: "Lord Howe window on the fold day, second pass", tz: Lord_Howe, windows: &[("01:30", "01:45")], last_run: Some("2026-04-04T01:40:00+11:00"), now: "2026-04-05T01:40:00+10:30", want: "due window#0", ..V },
        // DST in New York
        Vector { name: "spring forward: 02:30 cron fires after the gap", tz: New_York, cron: Some("30 2 * * *"), last_run: Some("2026-03-07T02:30:05-05:00"), now: "2026-03-08T03:01:00-04:00", want: "due cron@2026-03-08T03:00:00-04:00", ..V },
        Vector { name: "spring forward: and has the usual grace", tz: New_York, cron: Some("30 2 * * *"), last_run: Some("2026-03-07T02:30:05-05:00"), now: "2026-03-08T03:03:00-04:00", want: "wait cron=missed@2026-03-08T03:00:00-04:00", ..V },
        Vector { name: "spring forward: window inside the gap is shifted", tz: New_York, windows: &[("02:00", "02:30")], now: "2026-03-08T03:15:00-04:00", want: "due window#0", ..V },
        Vector { name: "spring forward: shifted window keeps its length", tz: New_York, windows: &[("02:00", "02:30")], now: "2026-03-08T03:31:00-04:00", want: "wait windows=outside", ..V },
        Vector { name: "spring forward: a window straddling the gap opens at the jump", tz: New_York, windows: &[("02:30", "03:10")], now: "2026-03-08T03:00:00-04:00", want: "due window#0", ..V },
        Vector { name: "spring forward: before the gap", tz: New_York, windows: &[("02:00", "02:30")], now: "2026-03-08T01:59:59-05:00", want: "wait windows=outside", ..V },
        Vector { name: "fall back: fixed 01:30 fires on the first pass", tz: New_York, cron: Some("30 1 * * *"), last_run: Some("2026-10-31T01:30:05-04:00"), now: "2026-11-01T01:31:00-04:00", want: "due cron@2026-11-01T01:30:00-04:00", ..V },
        Vector { name: "fall back: but not again on the second pass", tz: New_York, cron: Some("30 1 * * *"), last_run: Some("2026-11-01T01:30:05-04:00"), now: "2026-11-01T01:31:00-05:00", want: "wait cron=ran@2026-11-01T01:30:00-04:00", ..V },
        Vector { name: "fall back: hourly fires on both passes", tz: New_York, cron: HOURLY, last_run: Some("2026-11-01T01:00:05-04:00"), now: "2026-11-01T01:00:30-05:00", want: "due cron@2026-11-01T01:00:00-05:00", ..V },
        Vector { name: "fall back: window covers the second pass", tz: New_York, windows: &[("01:00", "01:30")], last_run: Some("2026-10-31T01:10:00-04:00"), now: "2026-11-01T01:20:00-05:00", want: "due window#0", ..V },
        Vector { name: "fall back: but fires once", tz: New_York, windows: &[("01:00", "01:30")], last_run: Some("2026-11-01T01:05:00-04:00"), now: "2026-11-01T01:20:00-05:00", want: "wait windows=done#0", ..V },
        // paused and manual
        Vector { name: "paused beats a never-ran cron", active: false, cron: HOURLY, now: "2026-05-08T10:17:00Z", want: "paused", ..V },
        Vector { name: "paused inside a window", active: false, windows: MORNING, now: "2026-05-08T10:17:00Z", want: "paused", ..V },
        Vector { name: "manual only", now: "2026-05-08T10:17:00Z", want: "manual-only", ..V },
        Vector { name: "manual only ignores backoff", last_attempt: Some("2026-05-08T10:16:00Z"), now: "2026-05-08T10:17:00Z", want: "manual-only", ..V },
    ];

#[test]
fn schedule_vectors() {
    assert!(VECTORS.len() >= 45);
    let mut failures = Vec::new();
    for v in VECTORS {
        let cron = v.cron.map(cron);
        let windows = windows(v.windows);
        let input = ScheduleInput {
            active: v.active,
            cron: cron.as_ref(),
            windows: &windows,
            last_run_at: v.last_run.map(at),
            last_attempt_at: v.last_attempt.map(at),
            until: None,
            failures: v.failures,
            last_stopped_at: v.stopped.map(at),
            max_backoff: MAX_BACKOFF,
        };
        let got = code(&due(&input, at(v.now), &v.tz), &v.tz);
        if got != v.want {
            failures.push(format!("{}\n    want: {}\n     got: {}", v.name, v.want, got));
        }
        // Whatever is due now, next_due from now must say "now".
        let next = next_due(&input, at(v.now), &v.tz);
        if got.starts_with("due") && next != Some(at(v.now)) {
            failures.push(format!("{}: due now but next_due = {next:?}", v.name));
        }
    }
    assert!(failures.is_empty(), "{} vector(s) failed:\n{}", failures.len(), failures.join("\n"));
}

struct NextCase {
    name: &'static str,
    tz: Tz,
    active: bool,
    cron: Option<&'static str>,
    windows: &'static [(&'static str, &'static str)],
    last_run: Option<&'static str>,
    last_attempt: Option<&'static str>,
    failures: u32,
    stopped: Option<&'static str>,
    after: &'static str,
    want: Option<&'static str>,
}

const N: NextCase = NextCase {
    name: "",
    tz: UTC,
    active: true,
    cron: None,
    windows: &[],
    last_run: None,
    last_attempt: None,
    failures: 0,
    stopped: None,
    after: "",
    want: None,
};

#[rustfmt::skip]
    const NEXT_CASES: &[NextCase] = &[
        NextCase { name: "just after the next occurrence", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), after: "2026-05-08T09:30:00Z", want: Some("2026-05-08T10:00:00.001Z"), ..N },
        NextCase { name: "from exactly an occurrence", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), after: "2026-05-08T10:00:00Z", want: Some("2026-05-08T10:00:00.001Z"), ..N },
        NextCase { name: "never ran: now", cron: HOURLY, after: "2026-05-08T09:30:00Z", want: Some("2026-05-08T09:30:00Z"), ..N },
        NextCase { name: "never ran, in backoff: its end", cron: HOURLY, last_attempt: Some("2026-05-08T09:29:00Z"), after: "2026-05-08T09:30:00Z", want: Some("2026-05-08T09:34:00Z"), ..N },
        NextCase { name: "*/5 after a success at :01:47: the :05 occurrence", cron: EVERY_5, last_run: Some("2026-05-08T10:01:48Z"), last_attempt: Some("2026-05-08T10:01:47Z"), after: "2026-05-08T10:02:00Z", want: Some("2026-05-08T10:05:00.001Z"), ..N },
        NextCase { name: "failed cycle: the end of the backoff", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), after: "2026-05-08T10:01:00Z", want: Some("2026-05-08T10:05:10Z"), ..N },
        NextCase { name: "grace swallowed by a manual attempt's backoff", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T09:59:00Z"), after: "2026-05-08T10:00:30Z", want: Some("2026-05-08T11:00:00.001Z"), ..N },
        NextCase { name: "second failure: ten minutes after the attempt", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), failures: 2, after: "2026-05-08T10:01:00Z", want: Some("2026-05-08T10:10:10Z"), ..N },
        NextCase { name: "stopped: the next occurrence", cron: HOURLY, last_run: Some("2026-05-08T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), stopped: Some("2026-05-08T10:00:40Z"), after: "2026-05-08T10:02:00Z", want: Some("2026-05-08T11:00:00.001Z"), ..N },
        NextCase { name: "past the cap: the next day's occurrence", cron: Some("0 9 * * *"), last_run: Some("2026-05-07T09:00:05Z"), last_attempt: Some("2026-05-08T09:00:10Z"), failures: 8, after: "2026-05-08T09:01:00Z", want: Some("2026-05-09T09:00:00.001Z"), ..N },
        NextCase { name: "past the cap, hourly: the end of the cap, inside an occurrence's grace", cron: HOURLY, last_run: Some("2026-05-07T09:00:05Z"), last_attempt: Some("2026-05-08T10:00:10Z"), failures: 8, after: "2026-05-08T10:01:00Z", want: Some("2026-05-08T16:00:10Z"), ..N },
        NextCase { name: "window opens", windows: MORNING, last_run: Some("2026-05-07T10:00:00Z"), after: "2026-05-08T07:00:00Z", want: Some("2026-05-08T09:00:00Z"), ..N },
        NextCase { name: "window done today: tomorrow", windows: MORNING, last_run: Some("2026-05-08T09:10:00Z"), after: "2026-05-08T10:00:00Z", want: Some("2026-05-09T09:00:00Z"), ..N },
        NextCase { name: "adjacent window next", windows: SPLIT_DAY, last_run: Some("2026-05-08T08:00:30Z"), after: "2026-05-08T08:01:00Z", want: Some("2026-05-08T12:00:00Z"), ..N },
        NextCase { name: "window opening inside a backoff", windows: MORNING, last_attempt: Some("2026-05-08T08:58:00Z"), after: "2026-05-08T08:58:30Z", want: Some("2026-05-08T09:03:00Z"), ..N },
        NextCase { name: "the earlier of cron and window", cron: Some("0 10 * * *"), windows: MORNING, last_run: Some("2026-05-08T09:00:10Z"), after: "2026-05-08T09:30:00Z", want: Some("2026-05-08T10:00:00.001Z"), ..N },
        NextCase { name: "spring-forward window", tz: New_York, windows: &[("02:00", "02:30")], last_run: Some("2026-03-07T02:10:00-05:00"), after: "2026-03-08T00:00:00-05:00", want: Some("2026-03-08T03:00:00-04:00"), ..N },
        NextCase { name: "spring-forward cron", tz: New_York, cron: Some("30 2 * * *"), last_run: Some("2026-03-07T02:30:05-05:00"), after: "2026-03-08T00:00:00-05:00", want: Some("2026-03-08T03:00:00.001-04:00"), ..N },
        NextCase { name: "fall-back hourly, second pass", tz: New_York, cron: HOURLY, last_run: Some("2026-11-01T01:00:05-04:00"), after: "2026-11-01T01:30:00-04:00", want: Some("2026-11-01T01:00:00.001-05:00"), ..N },
        NextCase { name: "a last run in the future (skewed clock)", windows: MORNING, last_run: Some("2027-01-01T00:00:00Z"), after: "2026-05-08T07:00:00Z", want: Some("2027-01-01T09:00:00Z"), ..N },
        NextCase { name: "paused", active: false, cron: HOURLY, after: "2026-05-08T07:00:00Z", want: None, ..N },
        NextCase { name: "manual only", after: "2026-05-08T07:00:00Z", want: None, ..N },
        NextCase { name: "only inverted windows", windows: &[("12:00", "08:00")], after: "2026-05-08T07:00:00Z", want: None, ..N },
    ];

#[test]
fn next_due_cases() {
    let mut failures = Vec::new();
    for c in NEXT_CASES {
        let cron = c.cron.map(cron);
        let windows = windows(c.windows);
        let input = ScheduleInput {
            active: c.active,
            cron: cron.as_ref(),
            windows: &windows,
            last_run_at: c.last_run.map(at),
            last_attempt_at: c.last_attempt.map(at),
            until: None,
            failures: c.failures,
            last_stopped_at: c.stopped.map(at),
            max_backoff: MAX_BACKOFF,
        };
        let got = next_due(&input, at(c.after), &c.tz);
        if got != c.want.map(at) {
            failures.push(format!("{}: want {:?}, got {got:?}", c.name, c.want));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn summaries_for_logs() {
    let now = at("2026-05-08T10:00:50Z");
    let p = at("2026-05-08T10:00:00Z");
    let lines = [
        Decision::Due(DueTrigger::Cron { occurrence: Some(p) }),
        Decision::Due(DueTrigger::Cron { occurrence: None }),
        Decision::Due(DueTrigger::Window { index: 1 }),
        Decision::NotDue(SkipReason::Paused),
        Decision::NotDue(SkipReason::ManualOnly),
        Decision::NotDue(SkipReason::Backoff {
            until: at("2026-05-08T10:05:00Z"),
            pending: Some(DueTrigger::Cron { occurrence: Some(p) }),
        }),
        Decision::NotDue(SkipReason::Backoff { until: at("2026-05-08T10:01:00Z"), pending: None }),
        Decision::NotDue(SkipReason::Waiting {
            cron: Some(CronSkip::Missed { occurrence: at("2026-05-08T09:00:00Z") }),
            windows: Some(WindowSkip::DoneToday { index: 0 }),
        }),
        Decision::NotDue(SkipReason::Waiting {
            cron: Some(CronSkip::AlreadyRan { occurrence: p }),
            windows: None,
        }),
        Decision::NotDue(SkipReason::Waiting { cron: None, windows: Some(WindowSkip::OutsideBands) }),
    ];
    let got: Vec<String> = lines.iter().map(|d| d.summary(now)).collect();
    expect![[r#"
            due (cron 2026-05-08T10:00:00+00:00)
            due (cron, never ran)
            due (window 2)
            skip (paused)
            skip (manual only)
            skip (matched cron 2026-05-08T10:00:00+00:00, backoff 4m 10s remaining)
            skip (backoff 10s remaining)
            skip (cron: missed 2026-05-08T09:00:00+00:00 by 1h 0m, past the 2-minute grace; window 1: done today)
            skip (cron: already ran for 2026-05-08T10:00:00+00:00)
            skip (outside every window)"#]]
        .assert_eq(&got.join("\n"));
}

/// Drives `next_due`/`due` the way the scheduler will: sleep until the next due instant,
/// run, record the outcome, repeat.
fn simulate(
    input: &ScheduleInput,
    tz: &Tz,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
    fails: impl Fn(usize) -> bool,
) -> Vec<String> {
    let clock = ManualClock::new(from);
    let mut state = *input;
    let mut log = Vec::new();
    while let Some(next) = next_due(&state, clock.now(), tz) {
        if next >= until || log.len() > 200 {
            break;
        }
        clock.set(next);
        let decision = due(&state, clock.now(), tz);
        let Some(trigger) = decision.trigger() else {
            log.push(format!(
                "{}: woke but {}",
                next.with_timezone(tz).format("%a %H:%M:%S%.3f"),
                decision.summary(next)
            ));
            break;
        };
        let failed = fails(log.len());
        state.last_attempt_at = Some(clock.now());
        clock.advance(TimeDelta::seconds(3));
        if failed {
            state.failures += 1;
        } else {
            state.last_run_at = Some(clock.now());
            state.failures = 0;
        }
        let what = match trigger {
            DueTrigger::Cron { occurrence: None } => "cron (never ran)".to_string(),
            DueTrigger::Cron { occurrence: Some(p) } => {
                format!("cron {}", p.with_timezone(tz).format("%H:%M"))
            }
            DueTrigger::Window { index } => format!("window #{index}"),
        };
        log.push(format!(
            "{} {what}{}",
            next.with_timezone(tz).format("%a %H:%M:%S%.3f"),
            if failed { " FAILED" } else { "" }
        ));
    }
    log
}

#[test]
fn simulated_daily_failures_back_off_then_try_once_a_day() {
    let c = cron("0 9 * * *");
    let input = ScheduleInput {
        active: true,
        cron: Some(&c),
        windows: &[],
        last_run_at: Some(at("2026-05-07T09:00:05Z")),
        last_attempt_at: Some(at("2026-05-07T09:00:02Z")),
        until: None,
        failures: 0,
        last_stopped_at: None,
        max_backoff: MAX_BACKOFF,
    };
    // Always failing: 5, 10, 20 ... 320 min, then past the 6-hour cap one try per occurrence,
    // instead of one every 5 minutes (288 a day).
    let log = simulate(&input, &UTC, at("2026-05-08T08:30:00Z"), at("2026-05-10T12:00:00Z"), |_| true);
    expect![[r#"
        Fri 09:00:00.001 cron 09:00 FAILED
        Fri 09:05:00.001 cron 09:00 FAILED
        Fri 09:15:00.001 cron 09:00 FAILED
        Fri 09:35:00.001 cron 09:00 FAILED
        Fri 10:15:00.001 cron 09:00 FAILED
        Fri 11:35:00.001 cron 09:00 FAILED
        Fri 14:15:00.001 cron 09:00 FAILED
        Fri 19:35:00.001 cron 09:00 FAILED
        Sat 09:00:00.001 cron 09:00 FAILED
        Sun 09:00:00.001 cron 09:00 FAILED"#]]
    .assert_eq(&log.join("\n"));
}

#[test]
fn simulated_stop_waits_for_the_next_occurrence() {
    let c = cron("0 * * * *");
    let input = ScheduleInput {
        active: true,
        cron: Some(&c),
        windows: &[],
        last_run_at: Some(at("2026-05-08T09:00:05Z")),
        last_attempt_at: Some(at("2026-05-08T10:00:00.001Z")),
        until: None,
        failures: 2,
        last_stopped_at: Some(at("2026-05-08T10:00:30Z")),
        max_backoff: MAX_BACKOFF,
    };
    assert!(!due(&input, at("2026-05-08T10:30:00Z"), &UTC).is_due());
    assert_eq!(next_due(&input, at("2026-05-08T10:00:31Z"), &UTC), Some(at("2026-05-08T11:00:00.001Z")));
}

#[test]
fn simulated_day_with_cron_and_split_windows() {
    let c = cron("0 */4 * * *");
    let w = windows(SPLIT_DAY);
    let input = ScheduleInput {
        active: true,
        cron: Some(&c),
        windows: &w,
        last_run_at: None,
        last_attempt_at: None,
        until: None,
        failures: 0,
        last_stopped_at: None,
        max_backoff: MAX_BACKOFF,
    };
    // The third run fails: it is retried after the backoff, within its cycle.
    let log =
        simulate(&input, &Chicago, at("2026-05-08T06:30:00-05:00"), at("2026-05-09T08:30:00-05:00"), |n| {
            n == 2
        });
    expect![[r#"
            Fri 06:30:00.000 cron (never ran)
            Fri 08:00:00.000 window #0
            Fri 12:00:00.000 window #1 FAILED
            Fri 12:05:00.000 cron 12:00
            Fri 16:00:00.001 cron 16:00
            Fri 20:00:00.001 cron 20:00
            Sat 00:00:00.001 cron 00:00
            Sat 04:00:00.001 cron 04:00
            Sat 08:00:00.000 window #0"#]]
    .assert_eq(&log.join("\n"));
}

#[test]
fn simulated_failures_retry_after_backoff_until_the_next_occurrence() {
    let c = cron("0 * * * *");
    let input = ScheduleInput {
        active: true,
        cron: Some(&c),
        windows: &[],
        last_run_at: Some(at("2026-05-08T08:00:05Z")),
        last_attempt_at: Some(at("2026-05-08T08:00:02Z")),
        until: None,
        failures: 0,
        last_stopped_at: None,
        max_backoff: MAX_BACKOFF,
    };
    // Each consecutive failure doubles the wait (5, 10, 20, 40 min ...): a wait longer than
    // the cycle skips occurrences; a success starts the count afresh.
    let log = simulate(&input, &UTC, at("2026-05-08T08:30:00Z"), at("2026-05-08T16:30:00Z"), |n| {
        (0..6).contains(&n)
    });
    expect![[r#"
        Fri 09:00:00.001 cron 09:00 FAILED
        Fri 09:05:00.001 cron 09:00 FAILED
        Fri 09:15:00.001 cron 09:00 FAILED
        Fri 09:35:00.001 cron 09:00 FAILED
        Fri 11:00:00.001 cron 11:00 FAILED
        Fri 13:00:00.001 cron 13:00 FAILED
        Fri 16:00:00.001 cron 16:00"#]]
    .assert_eq(&log.join("\n"));
}

fn zones() -> Vec<Tz> {
    vec![UTC, New_York, Chicago, Kolkata, Lord_Howe, London]
}

const PATTERNS: &[&str] = &[
    "0 * * * *",
    "*/7 * * * *",
    "30 2 * * *",
    "30 1 * * *",
    "0 9 13 * 5",
    "0 9 * * 1-5",
    "*/20 * * * * *",
    "15 */3 * * *",
    "0 0 1 * *",
    "45 23 * * 6",
];

// Anchors near DST changes in the zones above, and one quiet day.
const ANCHORS: &[&str] = &[
    "2026-03-08T07:00:00Z",
    "2026-11-01T06:00:00Z",
    "2026-04-04T15:00:00Z",
    "2026-10-03T15:30:00Z",
    "2026-03-29T01:00:00Z",
    "2026-05-08T12:00:00Z",
];

#[derive(Debug, Clone)]
struct Case {
    tz: Tz,
    active: bool,
    cron: Option<&'static str>,
    windows: Vec<Window>,
    now: DateTime<Utc>,
    last_run: Option<DateTime<Utc>>,
    last_attempt: Option<DateTime<Utc>>,
    failures: u32,
    stopped: Option<DateTime<Utc>>,
    max_backoff: TimeDelta,
}

fn offset_ms(range: std::ops::Range<i64>) -> impl Strategy<Value = TimeDelta> {
    range.prop_map(TimeDelta::milliseconds)
}

fn case() -> impl Strategy<Value = Case> {
    // Hours are biased towards 00-03, where the DST changes of the anchors happen.
    let hour = || prop_oneof![0u8..24, 0u8..4];
    let window = (hour(), 0u8..60, hour(), 0u8..60).prop_map(|(h1, m1, h2, m2)| {
        let start = TimeOfDay::new(h1, m1).unwrap_or(TimeOfDay::MIDNIGHT);
        let end = TimeOfDay::new(h2, m2).unwrap_or(TimeOfDay::MIDNIGHT);
        Window::new(start, end)
    });
    const DAY: i64 = 86_400_000;
    (
        prop::sample::select(zones()),
        prop::bool::weighted(0.9),
        prop::option::weighted(0.7, prop::sample::select(PATTERNS)),
        prop::collection::vec(window, 0..3),
        prop::sample::select(ANCHORS),
        offset_ms(-2 * DAY..2 * DAY),
        prop::option::weighted(0.8, offset_ms(-2 * DAY..DAY / 24)),
        prop::option::weighted(
            0.6,
            prop_oneof![offset_ms(-DAY / 48..DAY / 96), offset_ms(-2 * DAY..DAY / 24)],
        ),
        any::<(bool, bool)>(),
        (
            prop_oneof![Just(0u32), 1u32..12, Just(u32::MAX)],
            prop::option::weighted(0.3, offset_ms(-DAY / 48..DAY / 96)),
            prop_oneof![Just(MAX_BACKOFF), (0i64..48).prop_map(|h| TimeDelta::minutes(h * 30))],
        ),
    )
        .prop_map(
            |(
                tz,
                active,
                cron,
                windows,
                anchor,
                shift,
                run,
                attempt,
                (snap_now, snap_runs),
                (failures, stopped, max_backoff),
            )| {
                // Snapping to whole minutes and seconds lands on occurrences and band edges,
                // where the strict and inclusive comparisons matter.
                let snap = |t: DateTime<Utc>, unit: i64| {
                    DateTime::<Utc>::from_timestamp_millis(t.timestamp_millis().div_euclid(unit) * unit)
                        .unwrap_or(t)
                };
                let now = at(anchor) + shift;
                let now = if snap_now { snap(now, 60_000) } else { now };
                let near = |d: TimeDelta| {
                    if snap_runs { snap(now + d, 1_000) } else { now + d }
                };
                Case {
                    tz,
                    active,
                    cron,
                    windows,
                    now,
                    last_run: run.map(near),
                    last_attempt: attempt.map(near),
                    failures,
                    stopped: stopped.map(near),
                    max_backoff,
                }
            },
        )
}

proptest! {
    // No regression files: they would land outside this module's directory.
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn next_due_is_due_and_nothing_before_it_is(c in case()) {
        let cron = c.cron.map(cron);
        let input = ScheduleInput {
            active: c.active,
            cron: cron.as_ref(),
            windows: &c.windows,
            last_run_at: c.last_run,
            last_attempt_at: c.last_attempt,
            until: None,
            failures: c.failures,
            last_stopped_at: c.stopped,
            max_backoff: c.max_backoff,
        };
        let t = c.now;
        match next_due(&input, t, &c.tz) {
            Some(n) => {
                prop_assert!(n >= t);
                prop_assert!(due(&input, n, &c.tz).is_due(), "next_due {n} is not due");
                // Exact: a millisecond earlier it was not due yet.
                let just_before = n - TimeDelta::milliseconds(1);
                if just_before >= t {
                    prop_assert!(!due(&input, just_before, &c.tz).is_due(), "already due at {just_before}");
                }
                let span = (n - t).num_minutes();
                let step = (span / 400 + 1).max(1);
                let mut s = t;
                while s < n {
                    let d = due(&input, s, &c.tz);
                    prop_assert!(!d.is_due(), "due at {s} before next_due {n}: {d:?}");
                    s += TimeDelta::minutes(step);
                }
            }
            None => {
                for k in 0..200 {
                    let s = t + TimeDelta::minutes(k * 13);
                    prop_assert!(!due(&input, s, &c.tz).is_due(), "due at {s} but next_due is None");
                }
            }
        }
    }

    #[test]
    fn never_panics(
        tz in prop::sample::select(zones()),
        active in any::<bool>(),
        cron_index in any::<prop::sample::Index>(),
        has_cron in any::<bool>(),
        raw_windows in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()), 0..4),
        now in any::<i64>(),
        run in prop::option::of(any::<i64>()),
        attempt in prop::option::of(any::<i64>()),
    ) {
        let cron = has_cron.then(|| cron(cron_index.get::<&str>(PATTERNS)));
        let windows: Vec<Window> = raw_windows
            .iter()
            .map(|&(h1, m1, h2, m2)| Window::new(
                TimeOfDay { hour: h1 % 24, minute: m1 % 60 },
                TimeOfDay { hour: h2 % 24, minute: m2 % 60 },
            ))
            .collect();
        // Any instant from year 1 to year 9999 in milliseconds, and the extremes.
        let span = 253_402_300_799_000i64 + 62_135_596_800_000;
        let instant = |x: i64| {
            DateTime::<Utc>::from_timestamp_millis(x.rem_euclid(span) - 62_135_596_800_000)
                .unwrap_or(DateTime::<Utc>::MAX_UTC)
        };
        let input = ScheduleInput {
            active,
            cron: cron.as_ref(),
            windows: &windows,
            last_run_at: run.map(instant),
            last_attempt_at: attempt.map(instant),
            until: None,
            failures: 0,
            last_stopped_at: None,
            max_backoff: MAX_BACKOFF,
        };
        let now = instant(now);
        let _ = due(&input, now, &tz);
        let _ = next_due(&input, now, &tz);
    }
}

#[test]
fn extreme_instants_do_not_panic() {
    let c = cron("0 * * * *");
    let w = windows(MORNING);
    for t in [DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC, DateTime::<Utc>::UNIX_EPOCH] {
        let input = ScheduleInput {
            active: true,
            cron: Some(&c),
            windows: &w,
            last_run_at: Some(t),
            last_attempt_at: Some(t),
            until: None,
            failures: 0,
            last_stopped_at: None,
            max_backoff: MAX_BACKOFF,
        };
        let _ = due(&input, t, &New_York);
        let _ = next_due(&input, t, &New_York);
    }
}

#[test]
fn nothing_is_due_from_until_on() {
    let c = cron("0 * * * *");
    let until = at("2026-05-08T12:00:00Z");
    let input = ScheduleInput {
        active: true,
        cron: Some(&c),
        windows: &[],
        last_run_at: Some(at("2026-05-08T10:00:05Z")),
        last_attempt_at: Some(at("2026-05-08T10:00:00Z")),
        until: Some(until),
        failures: 0,
        last_stopped_at: None,
        max_backoff: MAX_BACKOFF,
    };
    // Before: the 11:00 occurrence is next; the 12:00 one is at `until` and never fires.
    assert_eq!(next_due(&input, at("2026-05-08T10:30:00Z"), &Utc), Some(at("2026-05-08T11:00:00.001Z")));
    let ran = ScheduleInput { last_run_at: Some(at("2026-05-08T11:00:05Z")), ..input };
    assert_eq!(next_due(&ran, at("2026-05-08T11:30:00Z"), &Utc), None);
    assert_eq!(due(&input, until, &Utc), Decision::NotDue(SkipReason::Expired { since: until }));
    assert_eq!(next_due(&input, until, &Utc), None);
}
