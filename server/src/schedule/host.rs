//! Several machines, one folder (SPEC 3, "several machines"): which machine fires a folder's
//! scheduled and event runs, and when another may take a note over. Pure: names, instants and
//! a note's schedule in, a verdict out.
//!
//! - `[scheduler] host` names the one machine that fires; without it every machine may.
//! - Names compare without case and surrounding blanks (host names are case-less in DNS).
//! - `failover_after`: "if no machine attempted this note for that long while it was due, run
//!   it here". A machine that is not the host runs the note's current occurrence (the latest
//!   cron occurrence, or the start of today's window band it is in) when nothing (no success,
//!   no attempt, from any machine: the synced `lastRunAt`/`lastAttemptAt`) served it, and the
//!   earliest occurrence after the latest of those stamps began longer ago than that. Judged
//!   from that earliest occurrence, not the current one: a note that fires more often than
//!   `failover_after` (hourly, every minute) fails over too, where the age of its current
//!   occurrence never reaches the delay. One failover run per occurrence: its own
//!   `lastAttemptAt` serves it, and the next takeover waits `failover_after` again from the
//!   occurrence after it (while the host is away a note runs about once per `failover_after`).
//!   A note no machine ever attempted has no such stamp: it waits from its current occurrence
//!   (when it became live is not known; the host fills a new note as soon as it sees it).

use chrono::{DateTime, Days, TimeDelta, TimeZone, Utc};

use super::due::ScheduleInput;
use super::window::{Window, local_date};

/// Where a folder's unattended runs happen, as seen from one machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement<'a> {
    /// No host is named, or this machine is it.
    Here,
    /// Another machine is the host: runs here only by hand or by failover.
    Elsewhere(&'a str),
}

impl<'a> Placement<'a> {
    /// `host`: `[scheduler] host`; `me`: this machine's name (`crate::machine::name`).
    pub fn of(host: Option<&'a str>, me: &str) -> Placement<'a> {
        match host.map(str::trim).filter(|h| !h.is_empty()) {
            Some(h) if !same_machine(h, me) => Placement::Elsewhere(h),
            _ => Placement::Here,
        }
    }

    pub fn elsewhere(self) -> Option<&'a str> {
        match self {
            Placement::Here => None,
            Placement::Elsewhere(h) => Some(h),
        }
    }
}

/// Whether two machine names name the same machine.
pub fn same_machine(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// The start of the note's current occurrence (the latest cron occurrence, or the start of
/// today's window band it is in) when nothing (no success, no attempt, from any machine)
/// happened since. `None` when paused, expired, manual only, or served.
pub fn owed_since<Tz: TimeZone>(input: &ScheduleInput, now: DateTime<Utc>, tz: &Tz) -> Option<DateTime<Utc>> {
    if !input.active || input.until.is_some_and(|u| now >= u) {
        return None;
    }
    let cron = input.cron.and_then(|c| c.prev_before(now, tz));
    let band = local_date(now, tz).and_then(|date| {
        input
            .windows
            .iter()
            .filter_map(|w| w.band(date, tz))
            .filter(|b| b.contains(now))
            .map(|b| b.start)
            .min()
    });
    // The most recent start is the occurrence a run now would serve.
    let since = match (cron, band) {
        (Some(c), Some(b)) => c.max(b),
        (c, b) => c.or(b)?,
    };
    (latest_stamp(input) < Some(since)).then_some(since)
}

/// The instant the note has waited since with no attempt from any machine, while its current
/// occurrence is unserved ([`owed_since`]): the earliest occurrence (cron occurrence or window
/// band start) after the latest success or attempt; the current occurrence when the note has
/// neither.
pub fn waiting_since<Tz: TimeZone>(
    input: &ScheduleInput,
    now: DateTime<Utc>,
    tz: &Tz,
) -> Option<DateTime<Utc>> {
    let current = owed_since(input, now, tz)?;
    let Some(latest) = latest_stamp(input) else { return Some(current) };
    let cron = input.cron.and_then(|c| c.next_after(latest, tz));
    let band = first_band_after(input.windows, latest, tz);
    // The current occurrence is one after the stamp, so the earliest is never later.
    Some([cron, band].into_iter().flatten().fold(current, DateTime::min))
}

/// Whether a machine that is not the host may run the note now: it has waited at least
/// `after` ([`waiting_since`]). Returns the instant it has waited since.
pub fn failover_due<Tz: TimeZone>(
    input: &ScheduleInput,
    after: TimeDelta,
    now: DateTime<Utc>,
    tz: &Tz,
) -> Option<DateTime<Utc>> {
    waiting_since(input, now, tz).filter(|since| now - *since >= after)
}

/// The latest success or attempt, from any machine.
fn latest_stamp(input: &ScheduleInput) -> Option<DateTime<Utc>> {
    input.last_run_at.max(input.last_attempt_at)
}

/// The earliest start of any window's band strictly after `t`.
fn first_band_after<Tz: TimeZone>(windows: &[Window], t: DateTime<Utc>, tz: &Tz) -> Option<DateTime<Utc>> {
    let first_day = local_date(t, tz)?.checked_sub_days(Days::new(1))?;
    windows
        .iter()
        .filter_map(|w| {
            // Daily bands: four days hold the next start, even past a date a DST gap skips.
            (0..4)
                .filter_map(|i| first_day.checked_add_days(Days::new(i)))
                .filter_map(|d| w.band(d, tz))
                .map(|b| b.start)
                .find(|&s| s > t)
        })
        .min()
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use proptest::prelude::*;

    use super::*;
    use crate::schedule::{CronSchedule, TimeOfDay, Window};

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn input<'a>(cron: Option<&'a CronSchedule>, windows: &'a [Window]) -> ScheduleInput<'a> {
        ScheduleInput {
            active: true,
            cron,
            windows,
            last_run_at: None,
            last_attempt_at: None,
            until: None,
            failures: 0,
            last_stopped_at: None,
            max_backoff: crate::schedule::due::MAX_BACKOFF,
        }
    }

    #[test]
    fn the_host_is_whoever_the_folder_names_without_case() {
        assert_eq!(Placement::of(None, "laptop"), Placement::Here);
        assert_eq!(Placement::of(Some("  "), "laptop"), Placement::Here);
        assert_eq!(Placement::of(Some("NAS"), "nas"), Placement::Here);
        assert_eq!(Placement::of(Some(" nas "), "laptop"), Placement::Elsewhere("nas"));
        assert_eq!(Placement::of(Some("nas"), "laptop").elsewhere(), Some("nas"));
    }

    #[test]
    fn a_daily_note_missed_by_the_host_fails_over_after_the_delay_once() {
        let cron = CronSchedule::parse("0 7 * * *").unwrap_or_else(|e| panic!("{e}"));
        let mut i = input(Some(&cron), &[]);
        i.last_run_at = Some(t("2026-11-22T07:00:05Z"));
        i.last_attempt_at = i.last_run_at;
        let after = TimeDelta::hours(2);
        // 07:00 came, nobody ran it: waiting since then, failing over from 09:00 on.
        assert_eq!(waiting_since(&i, t("2026-11-23T08:00:00Z"), &Utc), Some(t("2026-11-23T07:00:00Z")));
        assert_eq!(failover_due(&i, after, t("2026-11-23T08:59:59Z"), &Utc), None);
        assert_eq!(failover_due(&i, after, t("2026-11-23T09:00:00Z"), &Utc), Some(t("2026-11-23T07:00:00Z")));
        // An attempt from any machine (a failed one too) serves the occurrence.
        i.last_attempt_at = Some(t("2026-11-23T07:01:00Z"));
        assert_eq!(failover_due(&i, after, t("2026-11-23T10:00:00Z"), &Utc), None);
        // Paused or expired notes never wait.
        i.last_attempt_at = i.last_run_at;
        i.active = false;
        assert_eq!(waiting_since(&i, t("2026-11-23T10:00:00Z"), &Utc), None);
        i.active = true;
        i.until = Some(t("2026-11-23T09:30:00Z"));
        assert_eq!(waiting_since(&i, t("2026-11-23T10:00:00Z"), &Utc), None);
    }

    #[test]
    fn a_window_waits_from_its_start_while_the_band_lasts() {
        let w = [Window::new(
            TimeOfDay::new(8, 0).unwrap_or_else(|| panic!("8:00")),
            TimeOfDay::new(12, 0).unwrap_or_else(|| panic!("12:00")),
        )];
        let i = input(None, &w);
        assert_eq!(waiting_since(&i, t("2026-11-23T09:00:00Z"), &Utc), Some(t("2026-11-23T08:00:00Z")));
        // Outside the band nothing is owed (a missed window is not replayed).
        assert_eq!(waiting_since(&i, t("2026-11-23T13:00:00Z"), &Utc), None);
        // No trigger, nothing to wait for.
        assert_eq!(waiting_since(&input(None, &[]), t("2026-11-23T09:00:00Z"), &Utc), None);
    }

    #[test]
    fn an_hourly_note_the_host_abandoned_fails_over_from_the_first_occurrence_it_missed() {
        // Issue 32: hourly, `failover_after = 2h`, last attempted five weeks ago. The current
        // occurrence is never two hours old; the first one after the attempt is five weeks old.
        let cron = CronSchedule::parse("0 * * * *").unwrap_or_else(|e| panic!("{e}"));
        let mut i = input(Some(&cron), &[]);
        i.last_attempt_at = Some(t("2026-10-19T09:00:04Z"));
        i.last_run_at = Some(t("2026-10-19T09:00:09Z"));
        let after = TimeDelta::hours(2);
        let now = t("2026-11-23T09:00:30Z");
        assert_eq!(owed_since(&i, now, &Utc), Some(t("2026-11-23T09:00:00Z")));
        assert_eq!(failover_due(&i, after, now, &Utc), Some(t("2026-10-19T10:00:00Z")));
        // The takeover's own attempt serves the occurrence; the next waits two hours from the
        // occurrence after it.
        i.last_attempt_at = Some(t("2026-11-23T09:00:31Z"));
        assert_eq!(failover_due(&i, after, t("2026-11-23T10:00:30Z"), &Utc), None);
        assert_eq!(waiting_since(&i, t("2026-11-23T10:00:30Z"), &Utc), Some(t("2026-11-23T10:00:00Z")));
        assert_eq!(failover_due(&i, after, t("2026-11-23T12:00:30Z"), &Utc), Some(t("2026-11-23T10:00:00Z")));
        // A host that runs it every hour is never taken over.
        i.last_attempt_at = Some(t("2026-11-23T11:00:02Z"));
        i.last_run_at = i.last_attempt_at;
        assert_eq!(failover_due(&i, after, t("2026-11-23T12:01:00Z"), &Utc), None);
    }

    #[test]
    fn a_window_the_host_abandoned_fails_over_from_the_first_band_it_missed() {
        let w = [Window::new(
            TimeOfDay::new(8, 0).unwrap_or_else(|| panic!("8:00")),
            TimeOfDay::new(12, 0).unwrap_or_else(|| panic!("12:00")),
        )];
        let mut i = input(None, &w);
        let after = TimeDelta::hours(2);
        // Ran yesterday: today's band has waited half an hour, not two.
        i.last_attempt_at = Some(t("2026-11-22T08:00:05Z"));
        assert_eq!(waiting_since(&i, t("2026-11-23T08:30:00Z"), &Utc), Some(t("2026-11-23T08:00:00Z")));
        assert_eq!(failover_due(&i, after, t("2026-11-23T08:30:00Z"), &Utc), None);
        assert_eq!(failover_due(&i, after, t("2026-11-23T10:00:00Z"), &Utc), Some(t("2026-11-23T08:00:00Z")));
        // Ran last week: the first band after it began days ago, so the band now fails over at once.
        i.last_attempt_at = Some(t("2026-11-16T09:00:00Z"));
        assert_eq!(failover_due(&i, after, t("2026-11-23T08:00:30Z"), &Utc), Some(t("2026-11-17T08:00:00Z")));
        // Outside the band nothing is owed.
        assert_eq!(failover_due(&i, after, t("2026-11-23T12:30:00Z"), &Utc), None);
    }

    /// Cron expressions whose occurrences fall every `period` seconds from midnight UTC.
    const PERIODIC: &[(&str, i64)] = &[
        ("* * * * *", 60),
        ("*/5 * * * *", 300),
        ("*/20 * * * *", 1200),
        ("0 * * * *", 3600),
        ("0 */3 * * *", 10_800),
        ("0 0 * * *", 86_400),
    ];

    proptest! {
        /// Against the model: with occurrences every `period` from `base`, failover is due exactly
        /// when neither stamp reaches the latest occurrence and the first occurrence after the
        /// latest stamp (the current one without stamps) is at least `after` old; frequent crons
        /// (every minute, every five) fail over as a daily one does.
        #[test]
        fn failover_matches_the_model(
            which in 0..PERIODIC.len(),
            now_s in 0i64..(30 * 86_400),
            ran in proptest::option::of(0i64..(30 * 86_400)),
            tried in proptest::option::of(0i64..(30 * 86_400)),
            after_s in prop_oneof![0i64..7200, 0i64..(10 * 86_400)],
        ) {
            let (expr, period) = PERIODIC[which];
            let cron = CronSchedule::parse(expr).unwrap_or_else(|e| panic!("{e}"));
            let base = t("2026-11-01T00:00:00Z");
            let at = |s: i64| base + TimeDelta::seconds(s);
            let now = at(now_s) + TimeDelta::milliseconds(1);
            let mut i = input(Some(&cron), &[]);
            i.last_run_at = ran.map(at);
            i.last_attempt_at = tried.map(at);
            let current = at(now_s / period * period);
            let latest = ran.max(tried);
            let served = latest.is_some_and(|l| at(l) >= current);
            let first = latest.map_or(current, |l| at((l / period + 1) * period));
            let expected = (!served && now - first >= TimeDelta::seconds(after_s)).then_some(first);
            prop_assert_eq!(failover_due(&i, TimeDelta::seconds(after_s), now, &Utc), expected);
        }
    }
}
