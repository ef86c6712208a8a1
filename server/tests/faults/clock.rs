//! Wall-clock jumps (SPEC section 3): backwards by hours and by a day, forwards by days, and
//! daylight-saving changes of the local zone. The scheduler fires at most once per due cycle,
//! never fires a cycle again after a backward jump, and after a forward jump fires once (when
//! it lands within the 2-minute grace or inside a window band) instead of replaying missed
//! cycles.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use livenote::scheduler::Scheduler;

use crate::{Ws, command_config, live_note, log_lines, pass, settle, t};

/// Each run appends the instant it ran at (`LIVENOTE_NOW`) to `runs.log`.
const LOG_NOW: &str = "echo \"$LIVENOTE_NOW\" >> runs.log; echo updated";

struct Walk {
    ws: Ws,
    scheduler: Arc<Scheduler>,
}

impl Walk {
    fn new(live_lines: &str, start: &str) -> Walk {
        let ws = Ws::new(&command_config(LOG_NOW), start);
        ws.write("n.md", &live_note(live_lines, "old\n"));
        let scheduler = ws.scheduler();
        Walk { ws, scheduler }
    }

    fn zone(mut self, tz: chrono_tz::Tz) -> Walk {
        self.ws.zone = livenote::schedule::Zone::Named(tz);
        self.scheduler = self.ws.scheduler();
        self
    }

    /// Set the clock to `at`, run one pass, wait for what it fired; returns how many fired.
    async fn at(&self, at: DateTime<Utc>) -> usize {
        self.ws.clock.set(at);
        let fired = pass(&self.scheduler);
        if fired > 0 {
            settle(&[&self.scheduler]).await;
        }
        fired
    }

    /// One pass every `step` from `from` through `to` (inclusive); returns how many fired.
    async fn walk(&self, from: DateTime<Utc>, to: DateTime<Utc>, step: TimeDelta) -> usize {
        let mut fired = 0;
        let mut now = from;
        while now <= to {
            fired += self.at(now).await;
            now += step;
        }
        fired
    }

    fn runs(&self) -> Vec<String> {
        log_lines(&self.ws.path("runs.log"))
    }
}

const HOURLY: &str = "  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T09:00:10.000Z\"\n";
const MINUTE: TimeDelta = TimeDelta::minutes(1);

#[tokio::test]
async fn a_backward_jump_never_fires_a_cycle_twice() {
    let w = Walk::new(HOURLY, "2026-11-23T10:00:30Z");
    assert_eq!(w.at(t("2026-11-23T10:00:30Z")).await, 1);
    // Three hours back, then every minute until the clock is past the last run again: the
    // 08:00, 09:00 and 10:00 cycles already ran as far as the note can tell.
    assert_eq!(w.walk(t("2026-11-23T07:00:30Z"), t("2026-11-23T10:59:30Z"), MINUTE).await, 0);
    // A whole day back: the same.
    assert_eq!(w.walk(t("2026-11-22T09:58:00Z"), t("2026-11-22T11:05:00Z"), MINUTE).await, 0);
    // Forward again: the next cycle fires once.
    assert_eq!(w.walk(t("2026-11-23T11:00:05Z"), t("2026-11-23T11:03:05Z"), TimeDelta::seconds(20)).await, 1);
    assert_eq!(w.runs(), ["2026-11-23T10:00:30Z", "2026-11-23T11:00:05Z"]);
}

#[tokio::test]
async fn a_forward_jump_catches_up_once_and_never_replays_missed_cycles() {
    let w = Walk::new(HOURLY, "2026-11-23T10:00:30Z");
    assert_eq!(w.at(t("2026-11-23T10:00:30Z")).await, 1);
    // Three days later, inside the grace of the 10:00 cycle: one run for the 72 missed cycles.
    assert_eq!(w.walk(t("2026-11-26T10:01:00Z"), t("2026-11-26T10:59:00Z"), MINUTE).await, 1);
    // A jump landing past the grace (12:00 missed by 5 minutes) fires nothing; the next
    // cycle does.
    assert_eq!(w.walk(t("2026-11-26T12:05:00Z"), t("2026-11-26T12:59:00Z"), MINUTE).await, 0);
    assert_eq!(w.walk(t("2026-11-26T13:00:00Z"), t("2026-11-26T13:10:00Z"), MINUTE).await, 1);
    assert_eq!(w.runs(), ["2026-11-23T10:00:30Z", "2026-11-26T10:01:00Z", "2026-11-26T13:01:00Z"]);
}

#[tokio::test]
async fn window_bands_fire_once_per_day_across_jumps() {
    let window = "  triggers:\n    windows:\n      - startTime: \"09:00\"\n        endTime: \"12:00\"\n";
    let w = Walk::new(window, "2026-11-23T09:30:00Z");
    assert_eq!(w.walk(t("2026-11-23T09:30:00Z"), t("2026-11-23T12:59:00Z"), TimeDelta::minutes(7)).await, 1);
    // Three days forward into the band: once. Back to before the run, same day, inside the
    // band: it already ran today. Back a whole day: it ran after that day's start too.
    assert_eq!(w.walk(t("2026-11-26T10:30:00Z"), t("2026-11-26T12:59:00Z"), TimeDelta::minutes(7)).await, 1);
    assert_eq!(w.walk(t("2026-11-26T09:00:00Z"), t("2026-11-26T10:29:00Z"), TimeDelta::minutes(7)).await, 0);
    assert_eq!(w.walk(t("2026-11-25T09:00:00Z"), t("2026-11-25T12:59:00Z"), TimeDelta::minutes(7)).await, 0);
    assert_eq!(w.runs(), ["2026-11-23T09:30:00Z", "2026-11-26T10:30:00Z"]);
}

/// US daylight saving in New York: on 2026-11-01 local 01:00-01:59 happens twice (EDT, then
/// EST); on 2026-03-08 local 02:00-02:59 does not happen. A daily 01:30 job runs once on the
/// long day; a daily 02:30 job runs once on the short day (right after the gap, as Vixie cron
/// does) — never twice, never zero times.
#[tokio::test]
async fn daylight_saving_changes_fire_a_daily_job_exactly_once() {
    let fall = "  triggers:\n    cronExpr: \"30 1 * * *\"\n  lastRunAt: \"2026-10-31T05:30:40.000Z\"\n";
    let w = Walk::new(fall, "2026-11-01T03:00:30Z").zone(chrono_tz::America::New_York);
    assert_eq!(w.walk(t("2026-11-01T03:00:30Z"), t("2026-11-01T08:00:30Z"), MINUTE).await, 1);
    assert_eq!(w.runs(), ["2026-11-01T05:30:30Z"], "01:30 EDT, not again at 01:30 EST");

    let spring = "  triggers:\n    cronExpr: \"30 2 * * *\"\n  lastRunAt: \"2026-03-07T07:30:40.000Z\"\n";
    let w = Walk::new(spring, "2026-03-08T05:00:30Z").zone(chrono_tz::America::New_York);
    assert_eq!(w.walk(t("2026-03-08T05:00:30Z"), t("2026-03-08T10:00:30Z"), MINUTE).await, 1);
    assert_eq!(w.runs(), ["2026-03-08T07:00:30Z"], "03:00 EDT, the first minute after the gap");
}
