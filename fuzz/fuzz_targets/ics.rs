//! Fuzz the calendar reader (server/src/sources/ics.rs and ics/read.rs): `digest_within` on
//! arbitrary bytes, then `changes` and the item and markdown built from a digest.
//!
//! Input: byte 0 picks the zone the calendar is read in, byte 1 the horizon (0–40 days), byte 2
//! the day of the poll (days after 2026-01-01, around both DST changes); the rest is the
//! calendar file (any bytes: the reader takes them as lossy UTF-8).
//!
//! Checked: nothing panics (issue 31: an overflowing `DURATION` ended `livenote tick`); a digest
//! has at most 200 events and 10 problems, sorted by start, each start and end an RFC 3339
//! time or a date with the end not before the start; a digest compared with itself has no
//! changes, and with none every event is added; line endings do not matter (the same text
//! with every CRLF and lone CR made LF gives the same digest, or the same error).
#![no_main]

use std::time::Duration;

use chrono::{DateTime, NaiveDate, TimeDelta, TimeZone, Utc};
use libfuzzer_sys::fuzz_target;
use livenote::schedule::zone::Zone;
use livenote::sources::ics::{Budget, Digest, changes, digest_within};

const ZONES: [Zone; 6] = [
    Zone::Named(chrono_tz::UTC),
    Zone::Named(chrono_tz::Europe::Berlin),
    Zone::Named(chrono_tz::America::New_York),
    Zone::Named(chrono_tz::Pacific::Chatham),
    Zone::Named(chrono_tz::Asia::Kolkata),
    Zone::Named(chrono_tz::Pacific::Kiritimati),
];

/// Small, and in steps only: each input runs in milliseconds (in CI's unoptimised build too)
/// and alike on every run.
const BUDGET: Budget = Budget { steps: 5_000, time: Duration::from_secs(3_600) };

fuzz_target!(|data: &[u8]| {
    let [zone, horizon, day, calendar @ ..] = data else { return };
    let zone = ZONES[usize::from(*zone) % ZONES.len()];
    let horizon = Duration::from_secs(u64::from(*horizon % 41) * 86_400);
    let now = Utc.with_ymd_and_hms(2026, 1, 1, 12, 0, 0).unwrap() + TimeDelta::days(i64::from(*day));
    let read = digest_within(calendar, zone, now, horizon, BUDGET);
    if let Ok(d) = &read {
        check(d);
    }
    // Line endings: the reader takes CRLF, LF and a lone CR alike.
    let text = String::from_utf8_lossy(calendar);
    let lf = text.replace("\r\n", "\n").replace('\r', "\n");
    if lf != text {
        let again = digest_within(lf.as_bytes(), zone, now, horizon, BUDGET);
        assert_eq!(shown(&read), shown(&again), "LF only reads otherwise");
    }
});

fn shown(r: &Result<Digest, livenote::sources::ics::IcsError>) -> Result<String, String> {
    match r {
        Ok(d) => Ok(serde_json::to_string(d).unwrap_or_else(|e| panic!("{e}"))),
        Err(e) => Err(e.to_string()),
    }
}

fn check(d: &Digest) {
    assert!(d.events.len() <= 200, "{} events", d.events.len());
    assert!(d.problems.len() <= 10, "{:?}", d.problems);
    let mut last: Option<DateTime<Utc>> = None;
    for e in &d.events {
        let (start, end) = (instant(&e.start, e.all_day), instant(&e.end, e.all_day));
        assert!(end >= start || e.all_day, "{e:?} ends before it starts");
        if !e.all_day {
            assert!(last.is_none_or(|l| l <= start), "{e:?} out of order");
            last = Some(start);
        }
    }
    assert!(changes(Some(d), d).is_empty(), "a digest changed from itself");
    let first = changes(None, d);
    assert_eq!(first.added.len(), d.events.len());
    let (id, version, summary, payload) = d.to_item(&first);
    assert_eq!(id, format!("digest:{}", d.date));
    assert!(!version.is_empty() && !summary.contains('\n'));
    assert!(payload["text"].as_str().is_some_and(|t| t.starts_with("# Calendar for ")));
    // The poller keeps the digest in the source's state and reads it back at the next poll.
    let kept: Digest = serde_json::from_value(serde_json::to_value(d).unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("the kept digest is not read back: {e}"));
    assert_eq!(kept.events, d.events);
}

fn instant(t: &str, all_day: bool) -> DateTime<Utc> {
    if all_day {
        let d = NaiveDate::parse_from_str(t, "%Y-%m-%d").unwrap_or_else(|e| panic!("{t:?}: {e}"));
        return Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default());
    }
    DateTime::parse_from_rfc3339(t).unwrap_or_else(|e| panic!("{t:?}: {e}")).with_timezone(&Utc)
}
