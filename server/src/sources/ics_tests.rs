use chrono::{DateTime, TimeZone, Utc};
use expect_test::{Expect, expect};

use super::*;

const BERLIN: Zone = Zone::Named(chrono_tz::Europe::Berlin);
const STANDUP: &str = include_str!("../../tests/fixtures/sources/berlin-standup.ics");

fn at(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap()
}

/// A calendar of `events` (VEVENT bodies, one property a line).
fn cal(events: &[&str]) -> String {
    let mut out = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n");
    for e in events {
        out.push_str("BEGIN:VEVENT\r\n");
        for line in e.trim().lines() {
            out.push_str(line.trim());
            out.push_str("\r\n");
        }
        out.push_str("END:VEVENT\r\n");
    }
    out.push_str("END:VCALENDAR\r\n");
    out
}

fn render(d: &Digest) -> String {
    let mut out = format!("{} [{} .. {})\n", d.date, d.window_start.to_rfc3339(), d.window_end.to_rfc3339());
    for e in &d.events {
        out.push_str(&format!("{} .. {}  {}", e.start, e.end, e.title));
        if e.status != "confirmed" {
            out.push_str(&format!(" [{}]", e.status));
        }
        if let Some(l) = &e.location {
            out.push_str(&format!(" @ {l}"));
        }
        out.push('\n');
    }
    for p in &d.problems {
        out.push_str(&format!("problem: {p}\n"));
    }
    out
}

/// The calendar's budget in steps, without its time: what a test expects does not depend on
/// how busy the machine is.
const STEPS_ONLY: Budget = Budget { steps: Budget::CALENDAR.steps, time: Duration::from_secs(3_600) };

#[track_caller]
fn check(ics: &str, zone: Zone, now: DateTime<Utc>, expect: Expect) {
    let d = digest_within(ics.as_bytes(), zone, now, DEFAULT_HORIZON, STEPS_ONLY).unwrap();
    expect.assert_eq(&render(&d));
}

/// `n` events repeating every second since 1990: the hostile calendar of issue 31 (2,000 of
/// them are 250 KB).
pub(crate) fn every_second_since_1990(n: usize) -> String {
    let bodies: Vec<String> = (0..n)
        .map(|i| format!("UID:s{i:04}\nSUMMARY:Tick {i}\nDTSTART:19900101T000000Z\nRRULE:FREQ=SECONDLY"))
        .collect();
    cal(&bodies.iter().map(String::as_str).collect::<Vec<_>>())
}

fn render_changes(c: &Changes) -> String {
    let mut out = String::new();
    for e in &c.added {
        out.push_str(&format!("added {} {}\n", e.start, e.title));
    }
    for m in &c.moved {
        let to = if m.out_of_window { "out of the window".to_owned() } else { m.event.start.clone() };
        out.push_str(&format!("moved {} {} -> {to}\n", m.event.title, m.from_start));
    }
    for e in &c.changed {
        out.push_str(&format!("changed {} {}\n", e.start, e.title));
    }
    for e in &c.cancelled {
        out.push_str(&format!("cancelled {} {}\n", e.start, e.title));
    }
    out
}

#[test]
fn a_daily_meeting_stays_at_nine_local_across_the_spring_dst_change() {
    // Sunday 29 March 2026: Berlin goes from +01:00 to +02:00.
    check(
        STANDUP,
        BERLIN,
        at(2026, 3, 28, 12),
        expect![[r#"
            2026-03-28 [2026-03-27T23:00:00+00:00 .. 2026-03-30T22:00:00+00:00)
            2026-03-28T09:00:00+01:00 .. 2026-03-28T09:15:00+01:00  Stand-up @ Room 4, second floor
            2026-03-29T09:00:00+02:00 .. 2026-03-29T09:15:00+02:00  Stand-up @ Room 4, second floor
            2026-03-30T09:00:00+02:00 .. 2026-03-30T09:15:00+02:00  Stand-up @ Room 4, second floor
        "#]],
    );
}

#[test]
fn read_in_utc_the_same_meeting_moves_an_hour_at_each_dst_change() {
    let utc = Zone::Named(chrono_tz::UTC);
    check(
        STANDUP,
        utc,
        at(2026, 3, 28, 12),
        expect![[r#"
            2026-03-28 [2026-03-28T00:00:00+00:00 .. 2026-03-31T00:00:00+00:00)
            2026-03-28T08:00:00Z .. 2026-03-28T08:15:00Z  Stand-up @ Room 4, second floor
            2026-03-29T07:00:00Z .. 2026-03-29T07:15:00Z  Stand-up @ Room 4, second floor
            2026-03-30T07:00:00Z .. 2026-03-30T07:15:00Z  Stand-up @ Room 4, second floor
        "#]],
    );
    // Sunday 25 October 2026: back to +01:00.
    check(
        STANDUP,
        utc,
        at(2026, 10, 24, 12),
        expect![[r#"
            2026-10-24 [2026-10-24T00:00:00+00:00 .. 2026-10-27T00:00:00+00:00)
            2026-10-24T07:00:00Z .. 2026-10-24T07:15:00Z  Stand-up @ Room 4, second floor
            2026-10-25T08:00:00Z .. 2026-10-25T08:15:00Z  Stand-up @ Room 4, second floor
            2026-10-26T08:00:00Z .. 2026-10-26T08:15:00Z  Stand-up @ Room 4, second floor
        "#]],
    );
}

const DAILY_REVIEW: &str = "
    UID:review@example.org
    SUMMARY:Review
    DTSTART;TZID=Europe/Berlin:20260105T140000
    DURATION:PT1H
    RRULE:FREQ=DAILY;COUNT=100
    EXDATE;TZID=Europe/Berlin:20260311T140000
";

#[test]
fn exdates_and_overrides_replace_single_occurrences() {
    let ics = cal(&[
        DAILY_REVIEW,
        // The 10th, moved to 16:00.
        "UID:review@example.org
         RECURRENCE-ID;TZID=Europe/Berlin:20260310T140000
         SUMMARY:Review (late)
         DTSTART;TZID=Europe/Berlin:20260310T160000
         DTEND;TZID=Europe/Berlin:20260310T170000",
        // The 12th, cancelled.
        "UID:review@example.org
         RECURRENCE-ID:20260312T130000Z
         SUMMARY:Review
         STATUS:CANCELLED
         DTSTART;TZID=Europe/Berlin:20260312T140000
         DTEND;TZID=Europe/Berlin:20260312T150000",
    ]);
    check(
        &ics,
        BERLIN,
        at(2026, 3, 10, 6),
        expect![[r#"
            2026-03-10 [2026-03-09T23:00:00+00:00 .. 2026-03-12T23:00:00+00:00)
            2026-03-10T16:00:00+01:00 .. 2026-03-10T17:00:00+01:00  Review (late)
            2026-03-12T14:00:00+01:00 .. 2026-03-12T15:00:00+01:00  Review [cancelled]
        "#]],
    );
}

#[test]
fn all_day_floating_and_windows_zoned_events() {
    let ics = cal(&[
        "UID:holiday
         SUMMARY:Holiday
         DTSTART;VALUE=DATE:20260401
         DTEND;VALUE=DATE:20260403",
        "UID:call
         SUMMARY:Call
         DTSTART:20260402T180000
         DTEND:20260402T183000",
        "UID:outlook
         SUMMARY:Sync
         DTSTART;TZID=\"Eastern Standard Time\":20260401T090000
         DTEND;TZID=\"Eastern Standard Time\":20260401T093000",
        "UID:odd
         SUMMARY:Odd zone
         DTSTART;TZID=Mars/Olympus:20260401T120000",
    ]);
    check(
        &ics,
        BERLIN,
        at(2026, 4, 1, 8),
        expect![[r#"
            2026-04-01 [2026-03-31T22:00:00+00:00 .. 2026-04-03T22:00:00+00:00)
            2026-04-01 .. 2026-04-02  Holiday
            2026-04-01T12:00:00+02:00 .. 2026-04-01T12:00:00+02:00  Odd zone
            2026-04-01T15:00:00+02:00 .. 2026-04-01T15:30:00+02:00  Sync
            2026-04-02T18:00:00+02:00 .. 2026-04-02T18:30:00+02:00  Call
            problem: unknown time zone `Mars/Olympus`: its times are read as local
        "#]],
    );
}

#[test]
fn changes_tell_added_moved_changed_and_cancelled_from_time_passing() {
    let before = cal(&[
        "UID:a\nSUMMARY:Dentist\nDTSTART:20260310T080000Z\nDTEND:20260310T090000Z",
        "UID:b\nSUMMARY:Lunch\nDTSTART:20260310T110000Z\nDTEND:20260310T120000Z",
        "UID:c\nSUMMARY:Gym\nDTSTART:20260311T170000Z\nDTEND:20260311T180000Z",
        "UID:d\nSUMMARY:Board\nDTSTART:20260312T090000Z\nDTEND:20260312T100000Z",
        DAILY_REVIEW,
    ]);
    let after = cal(&[
        // a: moved an hour later; b: deleted; c: renamed; d: moved to next month; e: new.
        "UID:a\nSUMMARY:Dentist\nDTSTART:20260310T090000Z\nDTEND:20260310T100000Z",
        "UID:c\nSUMMARY:Gym (legs)\nDTSTART:20260311T170000Z\nDTEND:20260311T180000Z",
        "UID:d\nSUMMARY:Board\nDTSTART:20260412T090000Z\nDTEND:20260412T100000Z",
        "UID:e\nSUMMARY:Coffee\nDTSTART:20260311T100000Z\nDTEND:20260311T103000Z",
        &DAILY_REVIEW.replace(
            "EXDATE;TZID=Europe/Berlin:20260311T140000",
            "EXDATE;TZID=Europe/Berlin:20260310T140000",
        ),
    ]);
    let now = at(2026, 3, 10, 6);
    let zone = Zone::Named(chrono_tz::UTC);
    let prev = digest(before.as_bytes(), zone, now, DEFAULT_HORIZON).unwrap();
    let next = digest(after.as_bytes(), zone, now, DEFAULT_HORIZON).unwrap();
    expect![[r#"
        added 2026-03-11T10:00:00Z Coffee
        added 2026-03-11T13:00:00Z Review
        moved Dentist 2026-03-10T08:00:00Z -> 2026-03-10T09:00:00Z
        moved Board 2026-03-12T09:00:00Z -> out of the window
        changed 2026-03-11T17:00:00Z Gym (legs)
        cancelled 2026-03-10T11:00:00Z Lunch
        cancelled 2026-03-10T13:00:00Z Review
    "#]]
    .assert_eq(&render_changes(&changes(Some(&prev), &next)));

    // The same calendar a day later: tomorrow's events were in view, the new last day's
    // come into view, yesterday's leave it; none of that is a change.
    let tomorrow = digest(after.as_bytes(), zone, at(2026, 3, 11, 6), DEFAULT_HORIZON).unwrap();
    assert_eq!(render_changes(&changes(Some(&next), &tomorrow)), "");
    assert_eq!(changes(Some(&next), &next), Changes::default());
}

#[test]
fn the_item_is_one_per_local_day_and_its_version_follows_the_events() {
    let now = at(2026, 3, 28, 12);
    let d = digest(STANDUP.as_bytes(), BERLIN, now, DEFAULT_HORIZON).unwrap();
    let (id, version, summary, payload) = d.to_item(&changes(None, &d));
    assert_eq!(id, "digest:2026-03-28");
    assert_eq!(summary, "calendar for 2026-03-28: 3 events (3 added)");
    // A poll an hour later finds the same day: same item, same version.
    let later = digest(STANDUP.as_bytes(), BERLIN, at(2026, 3, 28, 13), DEFAULT_HORIZON).unwrap();
    assert_eq!(later.to_item(&Changes::default()).1, version);
    let moved = STANDUP.replace("T091500", "T093000");
    let longer = digest(moved.as_bytes(), BERLIN, now, DEFAULT_HORIZON).unwrap();
    assert_ne!(longer.to_item(&Changes::default()).1, version);
    expect![[r#"
        {
          "date": "2026-03-28",
          "end": "2026-03-28T09:15:00+01:00",
          "events": 3,
          "instance": "2026-03-28T08:00:00+00:00",
          "start": "2026-03-28T09:00:00+01:00",
          "uid": "standup@example.org",
          "window": {
            "end": "2026-03-30T22:00:00Z",
            "start": "2026-03-27T23:00:00Z"
          }
        }"#]]
    .assert_eq(
        &serde_json::to_string_pretty(&serde_json::json!({
            "date": payload["date"],
            "window": payload["window"],
            "events": payload["events"].as_array().map(Vec::len),
            "start": payload["events"][0]["start"],
            "end": payload["events"][0]["end"],
            "uid": payload["events"][0]["uid"],
            "instance": payload["events"][0]["instance"],
        }))
        .unwrap(),
    );
    // The digest survives the seen-file round trip (the next poll compares with it).
    let back: Digest = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
    assert_eq!(back.events, d.events);
}

#[test]
fn the_digest_reads_as_markdown() {
    let before = cal(&[
        "UID:a\nSUMMARY:Dentist\nDTSTART:20260310T080000Z\nDTEND:20260310T090000Z",
        "UID:b\nSUMMARY:Lunch\nLOCATION:Canteen\nDTSTART:20260310T110000Z\nDTEND:20260310T120000Z",
    ]);
    let after = cal(&[
        "UID:a\nSUMMARY:Dentist\nDTSTART:20260310T090000Z\nDTEND:20260310T100000Z",
        "UID:b\nSUMMARY:Lunch\nLOCATION:Canteen\nSTATUS:CANCELLED\nDTSTART:20260310T110000Z\nDTEND:20260310T120000Z",
        "UID:h\nSUMMARY:Holiday\nDTSTART;VALUE=DATE:20260311",
        "UID:e\nSUMMARY:Coffee\nDTSTART:20260311T100000Z\nDTEND:20260311T103000Z",
    ]);
    let (now, zone) = (at(2026, 3, 10, 6), Zone::Named(chrono_tz::UTC));
    let prev = digest(before.as_bytes(), zone, now, DEFAULT_HORIZON).unwrap();
    let next = digest(after.as_bytes(), zone, now, DEFAULT_HORIZON).unwrap();
    let changes = changes(Some(&prev), &next);
    expect![[r#"
        # Calendar for 2026-03-10

        4 events; 2 added, 1 moved, 1 cancelled

        ## Changes

        - added: 2026-03-11 all day Holiday
        - added: 2026-03-11 10:00–10:30 Coffee
        - moved: Dentist: 2026-03-10 08:00 → 2026-03-10 09:00–10:00
        - cancelled: 2026-03-10 11:00–12:00 Lunch @ Canteen (cancelled)

        ## 2026-03-10

        - 09:00–10:00 Dentist
        - 11:00–12:00 Lunch @ Canteen (cancelled)

        ## 2026-03-11

        - all day Holiday
        - 10:00–10:30 Coffee
    "#]]
    .assert_eq(&next.markdown(&changes));
    assert_eq!(next.to_item(&changes).3["text"], next.markdown(&changes));
}

#[test]
fn a_304_stands_for_the_same_local_day_only() {
    let d = digest(STANDUP.as_bytes(), BERLIN, at(2026, 3, 28, 12), DEFAULT_HORIZON).unwrap();
    assert!(may_ask_if_modified(Some(&d), BERLIN, at(2026, 3, 28, 22)));
    // 23:00 UTC is midnight of the 29th in Berlin.
    assert!(!may_ask_if_modified(Some(&d), BERLIN, at(2026, 3, 28, 23)));
    assert!(!may_ask_if_modified(None, BERLIN, at(2026, 3, 28, 12)));
}

#[test]
fn the_horizon_counts_local_days_and_is_bounded() {
    let end = |h: u64| {
        digest(STANDUP.as_bytes(), BERLIN, at(2026, 3, 28, 12), Duration::from_secs(h)).unwrap().window_end
    };
    // Today and the next day: the DST change on the 29th makes that day 23 hours long.
    assert_eq!(end(86_400), at(2026, 3, 29, 22));
    assert_eq!(end(0), at(2026, 3, 28, 23));
    assert_eq!(end(6 * 3_600), at(2026, 3, 29, 5));
    assert_eq!(end(10 * 365 * 86_400), end(31 * 86_400));
}

#[test]
fn malformed_calendars_are_clear_errors() {
    let e = |bytes: &str| {
        digest(bytes.as_bytes(), BERLIN, at(2026, 3, 28, 12), DEFAULT_HORIZON).unwrap_err().to_string()
    };
    assert_eq!(
        e("<html>nope</html>"),
        "not an iCalendar file: it starts with `<html>nope</html>`, not BEGIN:VCALENDAR"
    );
    expect!["not an iCalendar file: line 2: BEGIN:VEVENT is never closed (no END:VEVENT)"]
        .assert_eq(&e("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\n"));
    let deep = format!("BEGIN:VCALENDAR\r\n{}", "BEGIN:X\r\n".repeat(100_000));
    assert_eq!(e(&deep), "not an iCalendar file: BEGIN blocks nested more than 8 deep at line 9");
}

/// The stand-up calendar with LF and CRLF taking turns, a folded line split across both.
fn mixed_endings() -> String {
    STANDUP
        .replace("LOCATION:Room 4\\, second floor\r\n", "LOCATION:Room 4\\, sec\n ond floor\r\n")
        .split_inclusive("\r\n")
        .enumerate()
        .map(|(i, l)| if i % 2 == 0 { l.replace("\r\n", "\n") } else { l.to_owned() })
        .collect()
}

#[test]
fn lf_crlf_mixed_and_cr_line_endings_read_alike() {
    let read = |text: &str| {
        digest(text.as_bytes(), BERLIN, at(2026, 3, 28, 12), DEFAULT_HORIZON)
            .map(|d| render(&d))
            .unwrap_or_else(|e| e.to_string())
    };
    let want = read(STANDUP);
    assert!(want.contains("Stand-up @ Room 4, second floor"), "{want}");
    let mixed = mixed_endings();
    assert!(mixed.matches("\r\n").count() * 3 > mixed.matches('\n').count(), "{mixed}");
    assert!(mixed.matches("\r\n").count() * 3 < mixed.matches('\n').count() * 2, "{mixed}");
    for (what, text) in [
        ("LF", STANDUP.replace("\r\n", "\n")),
        ("mixed", mixed_endings()),
        ("CR", STANDUP.replace("\r\n", "\r")),
        (
            "blank lines and no final line break",
            STANDUP.replace("END:VALARM\r\n", "END:VALARM\n\n\r\n").trim_end().to_owned(),
        ),
    ] {
        assert_eq!(read(&text), want, "{what}");
    }
}

#[test]
fn a_calendar_that_cannot_be_read_names_the_line_that_is_wrong() {
    let e = |text: &str| {
        digest(text.as_bytes(), BERLIN, at(2026, 3, 28, 12), DEFAULT_HORIZON).unwrap_err().to_string()
    };
    // Lines are counted in the file: the folded ones before count too.
    let folded = "BEGIN:VCALENDAR\nX-LONG:a\r\n b\n c\nBEGIN:VEVENT\nDTSTART:20260328T100000Z\nEND:VTODO\nEND:VCALENDAR\n";
    expect!["not an iCalendar file: line 7: END:VTODO does not close BEGIN:VEVENT of line 5"]
        .assert_eq(&e(folded));
    expect!["not an iCalendar file: line 3: END:VEVENT closes no BEGIN"]
        .assert_eq(&e("BEGIN:VCALENDAR\nEND:VCALENDAR\nEND:VEVENT\n"));
    expect![[r#"not an iCalendar file: cannot be read at line 5: X-B;ALTREP="cid:x"y:z"#]]
        .assert_eq(&e("BEGIN:VCALENDAR\r\nX-A:1\n 2\r\n 3\nX-B;ALTREP=\"cid:x\"y:z\nEND:VCALENDAR\n"));
}

#[test]
fn durations_and_dates_at_the_edge_of_time_are_problems_not_panics() {
    // Each of these overflowed a date-time sum, or may: issue 31 (`livenote tick` exited 101).
    // An end past the year 9999 is shown as 30 December 9999, which RFC 3339 can write.
    let ics = cal(&[
        "UID:a\nSUMMARY:Forever\nDTSTART:20260310T100000Z\nDURATION:P99999999W",
        "UID:b\nSUMMARY:Far end\nDTSTART:20260310T110000Z\nDTEND:99991231T235959Z\nRRULE:FREQ=DAILY;COUNT=2",
        "UID:c\nSUMMARY:Six-digit year\nDTSTART:+2621430101T000000",
        "UID:d\nSUMMARY:Long ago\nDTSTART;VALUE=DATE:00000101\nRRULE:FREQ=YEARLY\nDURATION:-P9999999999D",
        "UID:e\nSUMMARY:Floating forever\nDTSTART:20260311T100000\nDURATION:P3652425DT1S",
    ]);
    check(
        &ics,
        Zone::Named(chrono_tz::UTC),
        at(2026, 3, 10, 6),
        expect![[r#"
            2026-03-10 [2026-03-10T00:00:00+00:00 .. 2026-03-13T00:00:00+00:00)
            2026-03-10T10:00:00Z .. 2026-03-10T10:00:00Z  Forever
            2026-03-10T11:00:00Z .. 9999-12-30T00:00:00Z  Far end
            2026-03-11T10:00:00Z .. 2026-03-11T10:00:00Z  Floating forever
            2026-03-11T11:00:00Z .. 9999-12-30T00:00:00Z  Far end
            problem: `Forever`: its DURATION `P99999999W` is not understood
            problem: a date `+2621430101T000000` that is not understood
            problem: an event without a readable DTSTART was skipped
            problem: `Long ago`: its DURATION `-P9999999999D` is not understood
            problem: `Floating forever`: its DURATION `P3652425DT1S` is not understood
        "#]],
    );
}

#[test]
fn a_calendar_past_its_budget_leaves_the_rest_out_and_says_so_first() {
    let mut bodies: Vec<String> = (0..12)
        .map(|i| format!("UID:s{i:02}\nSUMMARY:Tick {i}\nDTSTART:19900101T000000Z\nRRULE:FREQ=SECONDLY"))
        .collect();
    // Expanded before the dense ones (in the order of their UIDs), and a one-off event, which
    // costs nothing.
    bodies.push("UID:a-daily\nSUMMARY:Daily\nDTSTART:20260301T090000Z\nRRULE:FREQ=DAILY".to_owned());
    bodies.push("UID:z-once\nSUMMARY:Once\nDTSTART:20260311T100000Z".to_owned());
    let ics = cal(&bodies.iter().map(String::as_str).collect::<Vec<_>>());
    let read = |budget| {
        let d = digest_within(
            ics.as_bytes(),
            Zone::Named(chrono_tz::UTC),
            at(2026, 3, 10, 6),
            DEFAULT_HORIZON,
            budget,
        )
        .unwrap();
        (render(&d), d.over_budget().map(str::to_owned))
    };
    let (text, over) = read(Budget { steps: 1_000, time: Duration::from_secs(3_600) });
    expect![[r#"
        2026-03-10 [2026-03-10T00:00:00+00:00 .. 2026-03-13T00:00:00+00:00)
        2026-03-10T09:00:00Z .. 2026-03-10T09:00:00Z  Daily
        2026-03-11T09:00:00Z .. 2026-03-11T09:00:00Z  Daily
        2026-03-11T10:00:00Z .. 2026-03-11T10:00:00Z  Once
        2026-03-12T09:00:00Z .. 2026-03-12T09:00:00Z  Daily
        problem: the calendar's recurrences are too many to expand in one poll (its budget is 1,000 steps or 3600 s): 12 recurring events left out or cut short
    "#]]
    .assert_eq(&text);
    assert!(over.is_some_and(|p| text.contains(&p)));
    // Out of time before the first step: every recurring event is left out, the one-off is not.
    let (text, _) = read(Budget { steps: 1_000, time: Duration::ZERO });
    expect![[r#"
        2026-03-10 [2026-03-10T00:00:00+00:00 .. 2026-03-13T00:00:00+00:00)
        2026-03-11T10:00:00Z .. 2026-03-11T10:00:00Z  Once
        problem: the calendar's recurrences are too many to expand in one poll (its budget is 1,000 steps or 0 s): 13 recurring events left out or cut short
    "#]]
    .assert_eq(&text);
}

#[test]
fn broken_events_are_skipped_with_a_problem() {
    let ics = cal(&[
        "UID:x\nSUMMARY:No start",
        "UID:y\nSUMMARY:Bad rule\nDTSTART:20260328T100000Z\nRRULE:FREQ=SOMETIMES",
        "UID:z\nSUMMARY:Fine\nDTSTART:20260328T110000Z",
    ]);
    check(
        &ics,
        Zone::Named(chrono_tz::UTC),
        at(2026, 3, 28, 6),
        expect![[r#"
            2026-03-28 [2026-03-28T00:00:00+00:00 .. 2026-03-31T00:00:00+00:00)
            2026-03-28T10:00:00Z .. 2026-03-28T10:00:00Z  Bad rule
            2026-03-28T11:00:00Z .. 2026-03-28T11:00:00Z  Fine
            problem: an event without a readable DTSTART was skipped
            problem: `Bad rule`: its recurrence rule is not understood (RRule parsing error: `SOMETIMES` is not a valid frequency.)
        "#]],
    );
}

/// A rule that never matches costs `rrule`'s whole search (100,000 months here) in one step:
/// the steps cannot bound such a calendar, its time does (at most one search over it).
#[test]
fn rules_that_never_match_are_bounded_by_the_calendars_time() {
    let bodies: Vec<String> = (0..200)
        .map(|i| {
            format!("UID:n{i:03}\nSUMMARY:Never {i}\nDTSTART:20260101T090000Z\nRRULE:FREQ=MONTHLY;BYDAY=-1SU;BYSETPOS=2")
        })
        .collect();
    let ics = cal(&bodies.iter().map(String::as_str).collect::<Vec<_>>());
    let budget = Budget { steps: Budget::CALENDAR.steps, time: Duration::from_millis(300) };
    let started = std::time::Instant::now();
    let d = digest_within(
        ics.as_bytes(),
        Zone::Named(chrono_tz::UTC),
        at(2026, 3, 10, 6),
        DEFAULT_HORIZON,
        budget,
    )
    .unwrap();
    let took = started.elapsed();
    assert!(d.over_budget().is_some_and(|p| p.contains("or 0.3 s)")), "{:?}", d.problems);
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// A poll past the budget does not know the events it left out: they are neither cancelled
/// then nor added when a later poll reads them again (and the digest that says so survives
/// the source's state file).
#[test]
fn events_the_budget_left_out_are_neither_cancelled_nor_added() {
    let ics = cal(&[
        "UID:a-once\nSUMMARY:Once\nDTSTART:20260311T100000Z",
        "UID:b-daily\nSUMMARY:Daily\nDTSTART:20260301T090000Z\nRRULE:FREQ=DAILY",
    ]);
    let read = |time| {
        let budget = Budget { steps: 1_000, time };
        digest_within(
            ics.as_bytes(),
            Zone::Named(chrono_tz::UTC),
            at(2026, 3, 10, 6),
            DEFAULT_HORIZON,
            budget,
        )
        .unwrap()
    };
    let full = read(Duration::from_secs(3_600));
    let cut = read(Duration::ZERO);
    assert_eq!((full.events.len(), cut.events.len()), (4, 1));
    let kept: Digest = serde_json::from_value(serde_json::to_value(&cut).unwrap()).unwrap();
    for (from, to) in [(&full, &cut), (&kept, &full), (&cut, &full)] {
        assert_eq!(render_changes(&changes(Some(from), to)), "");
    }
    // Out of the window for real, it is cancelled as before.
    let gone = digest(
        cal(&["UID:a-once\nSUMMARY:Once\nDTSTART:20260311T100000Z"]).as_bytes(),
        Zone::Named(chrono_tz::UTC),
        at(2026, 3, 10, 6),
        DEFAULT_HORIZON,
    )
    .unwrap();
    assert_eq!(render_changes(&changes(Some(&full), &gone)).lines().count(), 3);
}

#[test]
fn a_rule_that_is_not_ascii_is_a_problem_not_a_panic() {
    // `rrule` sliced `-1SUÅ` inside the Å and panicked (found by the `ics` fuzz target).
    let ics = cal(&["UID:r\nSUMMARY:Last Sunday\nDTSTART:20260301T090000Z\nRRULE:FREQ=MONTHLY;BYDAY=-1SUÅ"]);
    check(
        &ics,
        Zone::Named(chrono_tz::UTC),
        at(2026, 3, 1, 6),
        expect![[r#"
            2026-03-01 [2026-03-01T00:00:00+00:00 .. 2026-03-04T00:00:00+00:00)
            2026-03-01T09:00:00Z .. 2026-03-01T09:00:00Z  Last Sunday
            problem: `Last Sunday`: its recurrence rule is not understood (it is not ASCII)
        "#]],
    );
}

#[test]
fn durations_read_rfc5545() {
    assert_eq!(parse_duration("PT1H30M"), Some(TimeDelta::minutes(90)));
    assert_eq!(parse_duration("P1W"), Some(TimeDelta::days(7)));
    assert_eq!(parse_duration("-PT15M"), Some(TimeDelta::minutes(-15)));
    assert_eq!(parse_duration("P1DT2H"), Some(TimeDelta::hours(26)));
    assert_eq!(parse_duration("PT"), Some(TimeDelta::zero()));
    assert_eq!(parse_duration("1H"), None);
    assert_eq!(parse_duration("P1"), None);
    assert_eq!(parse_duration("P99999999999999999D"), None);
    // Each part in range, the sum not: it overflowed.
    assert_eq!(parse_duration("P106751991167DT1000000000000S"), None);
    assert_eq!(parse_duration("P99999999W"), None);
    assert_eq!(parse_duration("P3652425D"), Some(MAX_DURATION));
}

mod model {
    //! `changes` against a simple model: one-off events in a fixed window, compared by uid.

    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    /// (start as hours from the window's start, may be outside; length in hours; title; cancelled)
    type Ev = (i64, i64, u8, bool);

    fn calendar(events: &BTreeMap<u8, Ev>) -> String {
        let base = at(2026, 3, 10, 0);
        let stamp = |t: DateTime<Utc>| t.format("%Y%m%dT%H%M%SZ").to_string();
        let bodies: Vec<String> = events
            .iter()
            .map(|(uid, (start, len, title, cancelled))| {
                let s = base + TimeDelta::hours(*start);
                let status = if *cancelled { "\nSTATUS:CANCELLED" } else { "" };
                format!(
                    "UID:u{uid}\nSUMMARY:t{title}\nDTSTART:{}\nDTEND:{}{status}",
                    stamp(s),
                    stamp(s + TimeDelta::hours(*len))
                )
            })
            .collect();
        cal(&bodies.iter().map(String::as_str).collect::<Vec<_>>())
    }

    fn events() -> impl Strategy<Value = BTreeMap<u8, Ev>> {
        prop::collection::btree_map(0u8..8, (-30i64..100, 0i64..4, 0u8..3, prop::bool::weighted(0.2)), 0..8)
    }

    fn names(es: &[DigestEvent]) -> Vec<String> {
        let mut v: Vec<String> = es.iter().map(|e| e.uid.clone()).collect();
        v.sort();
        v
    }

    proptest! {
        #[test]
        fn changes_match_the_model(before in events(), after in events()) {
            let (now, zone) = (at(2026, 3, 10, 6), Zone::Named(chrono_tz::UTC));
            let prev = digest(calendar(&before).as_bytes(), zone, now, DEFAULT_HORIZON).unwrap();
            let next = digest(calendar(&after).as_bytes(), zone, now, DEFAULT_HORIZON).unwrap();
            // The window is [0 h, 72 h): an event is in view when it meets it.
            let seen = |(start, len, ..): &Ev| if *len == 0 { (0..72).contains(start) } else { *start < 72 && start + len > 0 };
            let (mut added, mut moved, mut changed, mut cancelled) = (vec![], vec![], vec![], vec![]);
            for (uid, e) in after.iter().filter(|(_, e)| seen(e)) {
                match before.get(uid).filter(|b| seen(b)) {
                    None if !e.3 => added.push(format!("u{uid}")),
                    None => {}
                    Some(b) if !b.3 && e.3 => cancelled.push(format!("u{uid}")),
                    Some(b) if (b.0, b.1) != (e.0, e.1) => moved.push(format!("u{uid}")),
                    Some(b) if b != e => changed.push(format!("u{uid}")),
                    Some(_) => {}
                }
            }
            for (uid, _) in before.iter().filter(|(_, b)| seen(b) && !b.3) {
                match after.get(uid) {
                    Some(e) if seen(e) => {}
                    Some(_) => moved.push(format!("u{uid}")),
                    None => cancelled.push(format!("u{uid}")),
                }
            }
            for v in [&mut added, &mut moved, &mut changed, &mut cancelled] {
                v.sort();
            }
            let c = changes(Some(&prev), &next);
            let moved_got = {
                let mut v: Vec<String> = c.moved.iter().map(|m| m.event.uid.clone()).collect();
                v.sort();
                v
            };
            prop_assert_eq!(names(&c.added), added);
            prop_assert_eq!(moved_got, moved);
            prop_assert_eq!(names(&c.changed), changed);
            prop_assert_eq!(names(&c.cancelled), cancelled);
            prop_assert_eq!(changes(Some(&next), &next), Changes::default());
        }

        #[test]
        fn any_calendar_text_is_a_digest_or_an_error(lines in prop::collection::vec(prop::sample::select(vec![
            "BEGIN:VEVENT", "END:VEVENT", "BEGIN:VALARM", "END:VALARM", "UID:x", "SUMMARY:a\\, b",
            "DTSTART:20260310T100000Z", "DTSTART;TZID=Europe/Berlin:20260310T100000", "DTSTART;VALUE=DATE:20260310",
            "DTSTART:garbage", "DTEND:20260309T100000Z", "DURATION:PT1H", "DURATION:P", "RRULE:FREQ=DAILY",
            "RRULE:FREQ=HOURLY;INTERVAL=1", "RRULE:FREQ=DAILY;UNTIL=20260301T000000Z", "RRULE:BYDAY=XX",
            "EXDATE:20260311T100000Z", "RDATE;VALUE=PERIOD:20260312T100000Z/PT1H", "RECURRENCE-ID:20260311T100000Z",
            "STATUS:CANCELLED", "X-Ünïcödé:☃", ":", "", "BEGIN:", "END:VCALENDAR",
        ]), 0..40)) {
            let text = format!("BEGIN:VCALENDAR\r\n{}\r\nEND:VCALENDAR\r\n", lines.join("\r\n"));
            if let Ok(d) = digest(text.as_bytes(), BERLIN, at(2026, 3, 10, 6), DEFAULT_HORIZON) {
                prop_assert!(d.events.len() <= MAX_EVENTS);
                prop_assert!(d.problems.len() <= MAX_PROBLEMS);
            }
        }
    }
}

#[test]
fn a_huge_calendar_is_cut_to_the_digest_bound() {
    let bodies: Vec<String> = (0..5_000)
        .map(|i| {
            format!(
                "UID:e{i}\nSUMMARY:Event {i}\nDTSTART:202603{:02}T{:02}0000Z\nDURATION:PT30M",
                1 + i % 28,
                i % 24
            )
        })
        .collect();
    let ics = cal(&bodies.iter().map(String::as_str).collect::<Vec<_>>());
    let d = digest(ics.as_bytes(), Zone::Named(chrono_tz::UTC), at(2026, 3, 10, 6), DEFAULT_HORIZON).unwrap();
    assert_eq!(d.events.len(), MAX_EVENTS);
    assert_eq!(d.problems, [format!("more than {MAX_EVENTS} events in the window: the rest are left out")]);
    assert!(d.events.windows(2).all(|w| w[0].start <= w[1].start));
}

#[test]
fn a_dense_rule_from_long_ago_is_cut_off_not_expanded_for_ever() {
    let ics = cal(&[
        "UID:s\nSUMMARY:Every second\nDTSTART:19900101T000000Z\nRRULE:FREQ=SECONDLY",
        "UID:n\nSUMMARY:Never\nDTSTART:20260101T000000Z\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31",
        "UID:d\nSUMMARY:Daily since 1980\nDTSTART:19800310T100000Z\nRRULE:FREQ=DAILY",
    ]);
    check(
        &ics,
        Zone::Named(chrono_tz::UTC),
        at(2026, 3, 10, 6),
        expect![[r#"
            2026-03-10 [2026-03-10T00:00:00+00:00 .. 2026-03-13T00:00:00+00:00)
            2026-03-10T10:00:00Z .. 2026-03-10T10:00:00Z  Daily since 1980
            2026-03-11T10:00:00Z .. 2026-03-11T10:00:00Z  Daily since 1980
            2026-03-12T10:00:00Z .. 2026-03-12T10:00:00Z  Daily since 1980
            problem: `Every second`: its recurrence is too dense to expand this far
        "#]],
    );
}

#[test]
fn exdates_and_rdates_in_another_zone_meet_the_rule_in_its_own() {
    let ics = cal(&[&DAILY_REVIEW
        .replace("EXDATE;TZID=Europe/Berlin:20260311T140000", "EXDATE:20260311T130000Z")
        .replace("DURATION:PT1H", "DURATION:PT1H\nRDATE;TZID=America/New_York:20260312T040000")]);
    check(
        &ics,
        BERLIN,
        at(2026, 3, 10, 6),
        expect![[r#"
            2026-03-10 [2026-03-09T23:00:00+00:00 .. 2026-03-12T23:00:00+00:00)
            2026-03-10T14:00:00+01:00 .. 2026-03-10T15:00:00+01:00  Review
            2026-03-12T09:00:00+01:00 .. 2026-03-12T10:00:00+01:00  Review
            2026-03-12T14:00:00+01:00 .. 2026-03-12T15:00:00+01:00  Review
        "#]],
    );
}
