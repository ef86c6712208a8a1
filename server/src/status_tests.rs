use chrono::TimeDelta;
use chrono_tz::Tz;
use proptest::prelude::*;

use super::*;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.to_utc()).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn live(
    cron: Option<&str>,
    windows: &[(&str, &str)],
    ran: Option<DateTime<Utc>>,
    tried: Option<DateTime<Utc>>,
) -> Live {
    let mut text = String::from("---\nlive:\n  objective: o\n  triggers:\n");
    if let Some(c) = cron {
        text += &format!("    cronExpr: \"{c}\"\n");
    }
    if !windows.is_empty() {
        text += "    windows:\n";
        for (a, b) in windows {
            text += &format!("      - startTime: \"{a}\"\n        endTime: \"{b}\"\n");
        }
    }
    let stamp = |t: DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Millis, true);
    if let Some(r) = ran {
        text += &format!("  lastRunAt: \"{}\"\n", stamp(r));
    }
    if let Some(a) = tried {
        text += &format!("  lastAttemptAt: \"{}\"\n", stamp(a));
    }
    text += "---\n";
    let analysis = crate::note::analyze(
        &text,
        &crate::note::Options {
            providers: None,
            mcp: None,
            skills: None,
            scan_body: false,
            max_backoff: None,
        },
    );
    analysis.live.unwrap_or_else(|| panic!("no live block in {text}"))
}

#[test]
fn the_memo_is_reused_inside_its_quiet_span_only() {
    let tz = chrono_tz::UTC;
    let l = live(Some("0 * * * *"), &[], Some(t("2026-11-23T09:00:10Z")), Some(t("2026-11-23T09:00:00Z")));
    let memo = ScheduleMemo::default();
    let from = |m: &ScheduleMemo| m.0.lock().ok().and_then(|q| q.map(|q| q.from));
    let next = Some(t("2026-11-23T10:00:00.001Z"));
    let quiet = Upcoming { due: None, next_due: next, missed: None };
    assert_eq!(memo.upcoming(&l, t("2026-11-23T09:10:00Z"), &tz), quiet);
    // Later in the span: the same answer, not recomputed.
    assert_eq!(memo.upcoming(&l, t("2026-11-23T09:59:59Z"), &tz), quiet);
    assert_eq!(from(&memo), Some(t("2026-11-23T09:10:00Z")));
    // At the next due instant: due, and nothing is remembered.
    let at = t("2026-11-23T10:00:00.001Z");
    assert!(memo.upcoming(&l, at, &tz).due.is_some());
    assert_eq!(from(&memo), None);
    // A clock set back before the span recomputes.
    memo.upcoming(&l, t("2026-11-23T09:30:00Z"), &tz);
    memo.upcoming(&l, t("2026-11-23T09:20:00Z"), &tz);
    assert_eq!(from(&memo), Some(t("2026-11-23T09:20:00Z")));
}

#[test]
fn a_run_into_a_buffer_counts_while_the_file_holds_what_it_held() {
    use std::borrow::Cow;
    let tz = chrono_tz::UTC;
    let at = t("2026-11-23T09:01:00Z");
    let disk = live(Some("0 * * * *"), &[], None, None);
    let ran = Attempt {
        attempt_at: t("2026-11-23T09:00:30Z"),
        ran_at: Some(t("2026-11-23T09:00:40Z")),
        stopped_at: None,
        disk: DiskStamps::default(),
    };
    assert!(schedule_view(&disk, at, &tz).due().is_some(), "never run on disk");
    let seen = with_attempt(&disk, Some(&ran));
    assert_eq!((seen.last_attempt_at, seen.last_run_at), (Some(ran.attempt_at), ran.ran_at));
    assert_eq!(schedule_view(&seen, at, &tz).due(), None, "served by the buffer's run");
    // In flight (no end yet): held back as any run in flight is.
    let running = Attempt { ran_at: None, ..ran.clone() };
    let decision = schedule_view(&with_attempt(&disk, Some(&running)), at, &tz).decision;
    assert!(matches!(decision, Some(Decision::NotDue(schedule::SkipReason::Backoff { .. }))), "{decision:?}");
    // The file says more than it did when the run started (saved, run elsewhere): it speaks.
    let saved =
        live(Some("0 * * * *"), &[], Some(t("2026-11-23T09:00:40Z")), Some(t("2026-11-23T09:00:30Z")));
    assert!(matches!(with_attempt(&saved, Some(&ran)), Cow::Borrowed(_)));
    // A record that adds nothing later than the file's own stamps changes nothing.
    let older =
        Attempt { attempt_at: t("2026-11-23T08:00:00Z"), ran_at: None, disk: DiskStamps::of(&saved), ..ran };
    assert!(matches!(with_attempt(&saved, Some(&older)), Cow::Borrowed(_)));
    assert!(matches!(with_attempt(&disk, None), Cow::Borrowed(_)));
}

#[test]
fn the_item_memo_is_remade_when_anything_it_shows_changes() {
    let memo = ItemMemo::default();
    let made = std::cell::Cell::new(0);
    let make = || {
        made.set(made.get() + 1);
        format!("item {}", made.get())
    };
    let root = Some(Path::new("/vault"));
    let facts = RunFacts { trusted: Some(true), ..RunFacts::default() };
    let quiet = Upcoming { due: None, next_due: Some(t("2026-11-23T10:00:00Z")), missed: None };
    assert_eq!(&*memo.json(root, facts, quiet, false, make), "item 1");
    // The same inputs: the same bytes, not made again.
    assert_eq!(&*memo.json(root, facts, quiet, false, make), "item 1");
    assert_eq!(made.get(), 1);
    // A run starts, trust goes, scheduling is turned off, the note comes due, the root
    // changes: each makes the item again.
    let running = RunFacts { running: true, ..facts };
    assert_eq!(&*memo.json(root, running, quiet, false, make), "item 2");
    assert_eq!(&*memo.json(root, facts, quiet, false, make), "item 3");
    let untrusted = RunFacts { trusted: Some(false), ..facts };
    assert_eq!(&*memo.json(root, untrusted, quiet, false, make), "item 4");
    let off = RunFacts { scheduling_off: true, ..facts };
    assert_eq!(&*memo.json(root, off, quiet, false, make), "item 5");
    let due = Upcoming {
        due: Some(DueTrigger::Window { index: 0 }),
        next_due: Some(t("2026-11-23T10:00:00Z")),
        missed: None,
    };
    assert_eq!(&*memo.json(root, off, due, false, make), "item 6");
    assert_eq!(&*memo.json(Some(Path::new("/vault/sub")), off, due, false, make), "item 7");
    assert_eq!(&*memo.json(Some(Path::new("/vault/sub")), off, due, false, make), "item 7");
    // `until` passes while nothing is due.
    assert_eq!(&*memo.json(Some(Path::new("/vault/sub")), off, due, true, make), "item 8");
}

#[test]
fn a_run_undone_in_the_text_is_settled_from_its_recorded_end() {
    let tz = chrono_tz::UTC;
    let ran = t("2026-11-23T08:00:05Z");
    let attempt = t("2026-11-23T09:00:30Z");
    let mut l = live(Some("0 * * * *"), &[], Some(ran), Some(attempt));
    l.last_run_id = Some("01KAT5B2X0000000000000000A".to_owned());
    let at = t("2026-11-23T09:01:00Z");
    // As the text reads: an attempt without a result holds the occurrence back for the
    // backoff, then retries it.
    assert!(matches!(
        schedule_view(&l, at, &tz).decision,
        Some(Decision::NotDue(schedule::SkipReason::Backoff { pending: Some(_), .. }))
    ));
    assert_eq!(awaiting_end(&l), Some("01KAT5B2X0000000000000000A"));
    let end = t("2026-11-23T09:00:31Z");
    let done = settled(&l, RecordedEnd::Done(end)).unwrap_or_else(|| panic!("not settled"));
    assert_eq!(done.last_run_at, Some(end));
    assert_eq!(status(&done, RunFacts::TRUSTED, at, &tz), Status::Live);
    assert_eq!(
        schedule_view(&done, at, &tz).next_due,
        Some(t("2026-11-23T10:00:00.001Z")),
        "the occurrence is done: next is the next one"
    );
    let stopped = settled(&l, RecordedEnd::Stopped(end)).unwrap_or_else(|| panic!("not settled"));
    assert_eq!(status(&stopped, RunFacts::TRUSTED, at, &tz), Status::Stopped);
    assert_eq!(schedule_view(&stopped, at, &tz).next_due, Some(t("2026-11-23T10:00:00.001Z")));
    // A note whose text shows how its latest run ended needs nothing.
    assert_eq!(awaiting_end(&done), None);
    assert!(settled(&done, RecordedEnd::Done(end)).is_none());
    // Nor does one without a run id (nothing to look up).
    let mut anonymous = l.clone();
    anonymous.last_run_id = None;
    assert_eq!(awaiting_end(&anonymous), None);
}

const CRONS: &[Option<&str>] = &[
    None,
    Some("0 * * * *"),
    Some("*/15 9-17 * * 1-5"),
    Some("30 2 * * *"),
    Some("0 9 * * 1"),
    Some("0 0 29 2 *"),
];
const WINDOWS: &[&[(&str, &str)]] =
    &[&[], &[("09:00", "12:00")], &[("22:00", "02:00")], &[("08:00", "12:00"), ("12:00", "15:00")]];
const ZONES: &[Tz] = &[chrono_tz::UTC, chrono_tz::America::New_York, chrono_tz::Asia::Kolkata];

proptest! {
    /// Whatever the schedule and however the clock moves (forward by up to a day and a half,
    /// or back by up to two hours), the memo answers exactly what computing afresh does.
    #[test]
    fn the_memo_always_agrees_with_computing_afresh(
        cron in 0..CRONS.len(),
        windows in 0..WINDOWS.len(),
        zone in 0..ZONES.len(),
        ran in proptest::option::of(-3 * 86_400i64..86_400),
        tried in proptest::option::of(-3 * 86_400i64..86_400),
        steps in proptest::collection::vec(-7_200i64..129_600, 1..40),
    ) {
        let base = t("2026-03-07T11:17:23.250Z");
        let l = live(
            CRONS[cron],
            WINDOWS[windows],
            ran.map(|s| base + TimeDelta::seconds(s)),
            tried.map(|s| base + TimeDelta::seconds(s)),
        );
        let tz = &ZONES[zone];
        let memo = ScheduleMemo::default();
        let mut now = base;
        for step in steps {
            now += TimeDelta::seconds(step);
            prop_assert_eq!(memo.upcoming(&l, now, tz), Upcoming::at(&l, now, tz), "at {}", now);
        }
    }
}
