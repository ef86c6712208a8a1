//! Several machines, one folder (SPEC 3, "several machines"): which machine fires a folder's
//! scheduled and event runs, and when another may take a note over. Pure: names, instants and
//! a note's schedule in, a verdict out.
//!
//! - `[scheduler] host` names the one machine that fires; without it every machine may.
//! - Names compare without case and surrounding blanks (host names are case-less in DNS).
//! - `failover_after`: a machine that is not the host runs a note whose current occurrence
//!   (the latest cron occurrence, or the start of today's window band it is in) began longer
//!   ago than that, with neither a success nor an attempt since, from any machine (the synced
//!   `lastRunAt`/`lastAttemptAt`). One failover run per occurrence: its own `lastAttemptAt`
//!   ends the overdue state, so a failing takeover is not retried until the next occurrence.

use chrono::{DateTime, TimeDelta, TimeZone, Utc};

use super::due::ScheduleInput;
use super::window::local_date;

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

/// The start of the note's current occurrence when nothing (no success, no attempt, from any
/// machine) happened since: the instant from which it has been waiting. `None` when paused,
/// expired, manual only, or served.
pub fn waiting_since<Tz: TimeZone>(
    input: &ScheduleInput,
    now: DateTime<Utc>,
    tz: &Tz,
) -> Option<DateTime<Utc>> {
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
    let served = |t: Option<DateTime<Utc>>| t.is_some_and(|t| t >= since);
    (!served(input.last_run_at) && !served(input.last_attempt_at)).then_some(since)
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

    proptest! {
        /// Against the model: failover is due exactly when the latest hourly occurrence is at
        /// least `after` old and neither stamp reaches it.
        #[test]
        fn failover_matches_the_model(
            now_s in 0i64..(30 * 86_400),
            ran in proptest::option::of(0i64..(30 * 86_400)),
            tried in proptest::option::of(0i64..(30 * 86_400)),
            after_s in 0i64..7200,
        ) {
            let cron = CronSchedule::parse("0 * * * *").unwrap_or_else(|e| panic!("{e}"));
            let base = t("2026-11-01T00:00:00Z");
            let at = |s: i64| base + TimeDelta::seconds(s);
            let now = at(now_s) + TimeDelta::milliseconds(1);
            let mut i = input(Some(&cron), &[]);
            i.last_run_at = ran.map(at);
            i.last_attempt_at = tried.map(at);
            let occurrence = base + TimeDelta::hours((now - base).num_seconds() / 3600);
            let served = [i.last_run_at, i.last_attempt_at].iter().flatten().any(|t| *t >= occurrence);
            let expected = (!served && now - occurrence >= TimeDelta::seconds(after_s)).then_some(occurrence);
            prop_assert_eq!(failover_due(&i, TimeDelta::seconds(after_s), now, &Utc), expected);
        }
    }
}
