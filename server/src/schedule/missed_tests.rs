//! `missed`: the latest occurrence when it passed without a run.

use super::*;
use crate::schedule::window::TimeOfDay;
use chrono_tz::Tz;
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

#[test]
fn an_occurrence_slept_through_is_missed_until_the_next() {
    let c = cron("0 8 * * *");
    let mut input = ScheduleInput {
        active: true,
        cron: Some(&c),
        windows: &[],
        last_run_at: Some(at("2026-11-22T08:00:04Z")),
        last_attempt_at: Some(at("2026-11-22T08:00:01Z")),
        until: None,
        failures: 0,
        last_stopped_at: None,
        max_backoff: MAX_BACKOFF,
    };
    // Inside the grace it is due, not missed; past it, missed, until the next occurrence.
    assert_eq!(missed(&input, at("2026-11-23T08:01:00Z"), &UTC), None);
    let slept = Missed {
        at: at("2026-11-23T08:00:00Z"),
        until: at("2026-11-23T08:02:00Z"),
        trigger: DueTrigger::Cron { occurrence: Some(at("2026-11-23T08:00:00Z")) },
    };
    assert_eq!(missed(&input, at("2026-11-23T09:30:00Z"), &UTC), Some(slept));
    assert_eq!(missed(&input, at("2026-11-24T07:59:00Z"), &UTC), Some(slept));
    assert_eq!(missed(&input, at("2026-11-24T08:00:30Z"), &UTC), None);
    // An attempt (a failed one too) served it.
    input.last_attempt_at = Some(at("2026-11-23T08:00:02Z"));
    assert_eq!(missed(&input, at("2026-11-23T09:30:00Z"), &UTC), None);
    // A note that never ran is due, not missed; a paused one misses nothing.
    input.last_attempt_at = None;
    input.last_run_at = None;
    assert_eq!(missed(&input, at("2026-11-23T09:30:00Z"), &UTC), None);
    input.last_run_at = Some(at("2026-11-22T08:00:04Z"));
    input.active = false;
    assert_eq!(missed(&input, at("2026-11-23T09:30:00Z"), &UTC), None);
}

#[test]
fn a_band_slept_through_is_missed_once_it_closes() {
    let w = windows(&[("08:00", "09:00"), ("12:00", "13:00")]);
    let input = ScheduleInput {
        active: true,
        cron: None,
        windows: &w,
        last_run_at: Some(at("2026-11-22T12:10:00Z")),
        last_attempt_at: Some(at("2026-11-22T12:10:00Z")),
        until: None,
        failures: 0,
        last_stopped_at: None,
        max_backoff: MAX_BACKOFF,
    };
    // Open and not run: due. Closed without a run: missed, until the next band opens.
    assert_eq!(missed(&input, at("2026-11-23T08:30:00Z"), &UTC), None);
    let morning = Missed {
        at: at("2026-11-23T08:00:00Z"),
        // The end minute counts: the band closes at 09:01.
        until: at("2026-11-23T09:01:00Z"),
        trigger: DueTrigger::Window { index: 0 },
    };
    assert_eq!(missed(&input, at("2026-11-23T10:00:00Z"), &UTC), Some(morning));
    assert_eq!(missed(&input, at("2026-11-23T12:30:00Z"), &UTC), None);
    assert_eq!(
        missed(&input, at("2026-11-23T13:01:01Z"), &UTC).map(|m| m.at),
        Some(at("2026-11-23T12:00:00Z"))
    );
}

const CRONS: &[Option<&str>] = &[None, Some("0 8 * * *"), Some("*/15 * * * *"), Some("0 * * * *")];
const WINDOWS: &[&[(&str, &str)]] = &[&[], &[("08:00", "09:00")], &[("08:00", "12:00"), ("12:00", "15:00")]];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// A missed occurrence is one that can no longer fire and that nothing served: never while
    /// the note is due or held back by a backoff, always after the latest stamp, over by the
    /// time it is named.
    #[test]
    fn a_missed_occurrence_is_over_and_unserved(
        which_cron in 0..CRONS.len(),
        which_windows in 0..WINDOWS.len(),
        now_s in 0i64..(3 * 86_400),
        ran in proptest::option::of(-86_400i64..(3 * 86_400)),
        tried in proptest::option::of(-86_400i64..(3 * 86_400)),
        failures in prop_oneof![Just(0u32), 1u32..12],
    ) {
        let base = at("2026-11-22T00:00:00Z");
        let cron = CRONS[which_cron].map(cron);
        let windows = windows(WINDOWS[which_windows]);
        let input = ScheduleInput {
            active: true,
            cron: cron.as_ref(),
            windows: &windows,
            last_run_at: ran.map(|s| base + TimeDelta::seconds(s)),
            last_attempt_at: tried.map(|s| base + TimeDelta::seconds(s)),
            until: None,
            failures,
            last_stopped_at: None,
            max_backoff: MAX_BACKOFF,
        };
        let now = base + TimeDelta::seconds(now_s);
        if let Some(m) = missed(&input, now, &UTC) {
            let waiting = matches!(due(&input, now, &UTC), Decision::NotDue(SkipReason::Waiting { .. }));
            prop_assert!(waiting, "missed {m:?} while not waiting at {now}");
            prop_assert!(m.at <= now && m.until < now, "{m:?} at {now}");
            let latest = input.last_run_at.max(input.last_attempt_at);
            prop_assert!(latest.is_some_and(|s| s < m.at), "{m:?}");
        }
    }
}
