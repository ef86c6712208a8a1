use super::*;
use chrono_tz::America::{Chicago, New_York};
use chrono_tz::Asia::Kolkata;
use expect_test::expect;

fn cron(expr: &str) -> CronSchedule {
    match CronSchedule::parse(expr) {
        Ok(c) => c,
        Err(e) => panic!("{expr:?} should parse: {e}"),
    }
}

fn at(s: &str) -> DateTime<Utc> {
    match DateTime::parse_from_rfc3339(s) {
        Ok(t) => t.to_utc(),
        Err(e) => panic!("bad test timestamp {s}: {e}"),
    }
}

/// The next `n` occurrences after `from`, as local RFC 3339 strings in `tz`.
fn next_n<Tz: TimeZone>(expr: &str, from: &str, tz: &Tz, n: usize) -> Vec<String>
where
    Tz::Offset: fmt::Display,
{
    let c = cron(expr);
    let mut t = at(from);
    let mut out = Vec::new();
    for _ in 0..n {
        let Some(next) = c.next_after(t, tz) else {
            break;
        };
        out.push(next.with_timezone(tz).to_rfc3339());
        t = next;
    }
    out
}

#[test]
fn accepts_the_documented_syntax() {
    for expr in [
        "0 * * * *",
        "*/5 * * * *",
        "0 9 * * 1-5",
        "0 9 * * MON-FRI",
        "0 9 * * mon,wed,fri",
        "0 9 1 jan *",
        "0 9 * JAN-MAR SUN",
        "30 8-18/2 * * *",
        "0 0 1,15 * *",
        "*/10 * * * * *",
        "0 0 9 * * 1",
        "@hourly",
        "@DAILY",
        "@midnight",
        "@weekly",
        "@monthly",
        "@yearly",
        "@annually",
        "  0 9 * * *  ",
        "0 9 ? * 1",
        "0 0 L * *",
        "0 9 * * 5#2",
        "0 9 * * 0-7",
    ] {
        assert!(CronSchedule::parse(expr).is_ok(), "{expr:?} should parse");
    }
}

#[test]
fn rejections_explain_themselves() {
    let cases = [
        "",
        "* * * *",
        "1 2 3 4 5 6 7",
        "@reboot",
        "@fortnightly",
        "60 * * * *",
        "0 24 * * *",
        "0 9 32 * *",
        "0 9 * 13 *",
        "0 9 * * 8",
        "0 9 * * SUNDAY",
        "MON * * * *",
        "0 9 * JANUARY *",
        "0 9 * * FOO",
        "0 9 * * 1;2",
        "0 9,,10 * * *",
        "*/0 * * * *",
        "5/10 * * * *",
        "30-10 * * * *",
        "0 0 30 2 *",
        "0 0 31 4,6 *",
        "61 0 9 * * *",
        "a b c d e",
    ];
    let got: Vec<String> = cases
        .iter()
        .map(|expr| match CronSchedule::parse(expr) {
            Ok(_) => format!("{expr:?} => accepted"),
            Err(e) => format!(
                "{expr:?} => {} [{:?} token {:?}]",
                e,
                e.field().map(CronField::name),
                e.token_index()
            ),
        })
        .collect();
    expect![[r#"
            "" => the cron expression is empty [None token None]
            "* * * *" => expected 5 fields (minute hour day-of-month month day-of-week), or 6 with a leading seconds field, but found 4 [None token None]
            "1 2 3 4 5 6 7" => expected 5 fields (minute hour day-of-month month day-of-week), or 6 with a leading seconds field, but found 7 [None token None]
            "@reboot" => @reboot is not supported: livenote has no boot event (try @hourly or a window) [None token None]
            "@fortnightly" => unknown nickname `@fortnightly`: use @hourly, @daily, @weekly, @monthly or @yearly [None token None]
            "60 * * * *" => minute field `60`: out of range (allowed 0-59) [Some("minute") token Some(0)]
            "0 24 * * *" => hour field `24`: out of range (allowed 0-23) [Some("hour") token Some(1)]
            "0 9 32 * *" => day-of-month field `32`: out of range (allowed 1-31) [Some("day-of-month") token Some(2)]
            "0 9 * 13 *" => month field `13`: out of range (allowed 1-12 or JAN-DEC) [Some("month") token Some(3)]
            "0 9 * * 8" => day-of-week field `8`: out of range (allowed 0-7 or SUN-SAT) [Some("day-of-week") token Some(4)]
            "0 9 * * SUNDAY" => day-of-week field `SUNDAY`: unknown day `SUNDAY` (use SUN-SAT or 0-7) [Some("day-of-week") token Some(4)]
            "MON * * * *" => minute field `MON`: `MON` is not allowed here (use 0-59) [Some("minute") token Some(0)]
            "0 9 * JANUARY *" => month field `JANUARY`: unknown month `JANUARY` (use JAN-DEC or 1-12) [Some("month") token Some(3)]
            "0 9 * * FOO" => day-of-week field `FOO`: unknown day `FOO` (use SUN-SAT or 0-7) [Some("day-of-week") token Some(4)]
            "0 9 * * 1;2" => day-of-week field `1;2`: unexpected character `;` [Some("day-of-week") token Some(4)]
            "0 9,,10 * * *" => hour field `9,,10`: empty entry in the list [Some("hour") token Some(1)]
            "*/0 * * * *" => minute field `*/0`: a step cannot be 0 [Some("minute") token Some(0)]
            "5/10 * * * *" => minute field `5/10`: single number steps like "5/10" are not allowed. Use "*/10" for wildcard steps or "X-Y/10" for range steps [Some("minute") token Some(0)]
            "30-10 * * * *" => minute field `30-10`: range out of bounds or backwards (allowed 0-59) [Some("minute") token Some(0)]
            "0 0 30 2 *" => never fires: there is no day 30 in February [Some("day-of-month") token Some(2)]
            "0 0 31 4,6 *" => never fires: there is no day 31 in April or June [Some("day-of-month") token Some(2)]
            "61 0 9 * * *" => second field `61`: out of range (allowed 0-59) [Some("second") token Some(0)]
            "a b c d e" => minute field `a`: `a` is not allowed here (use 0-59) [Some("minute") token Some(0)]"#]]
        .assert_eq(&got.join("\n"));
}

#[test]
fn zero_seven_and_sun_are_sunday_and_one_is_monday() {
    // 2026-05-08 is a Friday; the following Sunday is the 10th, Monday the 11th.
    let from = "2026-05-08T12:00:00Z";
    for expr in ["0 9 * * 0", "0 9 * * 7", "0 9 * * SUN", "0 9 * * sun", "@weekly"] {
        let next = next_n(expr, from, &Utc, 1);
        let want = if expr == "@weekly" { "2026-05-10T00:00:00+00:00" } else { "2026-05-10T09:00:00+00:00" };
        assert_eq!(next, [want], "{expr}");
    }
    assert_eq!(next_n("0 9 * * 1", from, &Utc, 1), ["2026-05-11T09:00:00+00:00"]);
    assert_eq!(next_n("0 9 * * MON", from, &Utc, 1), ["2026-05-11T09:00:00+00:00"]);
    assert_eq!(
        next_n("0 9 * * 5-7", from, &Utc, 3),
        ["2026-05-09T09:00:00+00:00", "2026-05-10T09:00:00+00:00", "2026-05-15T09:00:00+00:00"]
    );
    let monday = cron("0 9 * * 1").next_after(at(from), &Utc);
    assert_eq!(monday.map(|t| t.weekday()), Some(chrono::Weekday::Mon));
}

#[test]
fn day_of_month_or_day_of_week() {
    // 2026-03-13 is a Friday; 2026-02-13 too. Fires on the 13th and on every Friday.
    expect![[r#"
            [
                "2026-02-06T09:00:00+00:00",
                "2026-02-13T09:00:00+00:00",
                "2026-02-20T09:00:00+00:00",
                "2026-02-27T09:00:00+00:00",
                "2026-03-06T09:00:00+00:00",
                "2026-03-13T09:00:00+00:00",
                "2026-03-20T09:00:00+00:00",
                "2026-03-27T09:00:00+00:00",
                "2026-04-03T09:00:00+00:00",
                "2026-04-10T09:00:00+00:00",
                "2026-04-13T09:00:00+00:00",
            ]
        "#]]
    .assert_debug_eq(&next_n("0 9 13 * 5", "2026-02-01T00:00:00Z", &Utc, 11));
}

#[test]
fn vixie_star_rule_makes_stepped_day_fields_and() {
    // Vixie: `*/2` in day-of-month starts with `*`, so the weekday must match as well:
    // odd days that are Mondays. 2026-06-01 is a Monday.
    assert_eq!(
        next_n("0 9 */2 * 1", "2026-05-31T00:00:00Z", &Utc, 3),
        ["2026-06-01T09:00:00+00:00", "2026-06-15T09:00:00+00:00", "2026-06-29T09:00:00+00:00"]
    );
}

#[test]
fn nicknames_and_seconds() {
    let from = "2026-05-08T10:20:00Z";
    assert_eq!(next_n("@hourly", from, &Utc, 1), ["2026-05-08T11:00:00+00:00"]);
    assert_eq!(next_n("@daily", from, &Utc, 1), ["2026-05-09T00:00:00+00:00"]);
    assert_eq!(next_n("@monthly", from, &Utc, 1), ["2026-06-01T00:00:00+00:00"]);
    assert_eq!(next_n("@yearly", from, &Utc, 1), ["2027-01-01T00:00:00+00:00"]);
    assert_eq!(
        next_n("*/20 * * * * *", from, &Utc, 3),
        ["2026-05-08T10:20:20+00:00", "2026-05-08T10:20:40+00:00", "2026-05-08T10:21:00+00:00"]
    );
    assert_eq!(next_n("30 0 9 * * *", from, &Utc, 1), ["2026-05-09T09:00:30+00:00"]);
}

#[test]
fn strictly_before_and_after() {
    let c = cron("0 * * * *");
    let on = at("2026-05-08T10:00:00Z");
    assert_eq!(c.prev_before(on, &Utc), Some(at("2026-05-08T09:00:00Z")));
    assert_eq!(c.next_after(on, &Utc), Some(at("2026-05-08T11:00:00Z")));
    let just_after = at("2026-05-08T10:00:00.001Z");
    assert_eq!(c.prev_before(just_after, &Utc), Some(on));
    assert_eq!(c.next_after(just_after, &Utc), Some(at("2026-05-08T11:00:00Z")));
    let just_before = at("2026-05-08T09:59:59.999Z");
    assert_eq!(c.next_after(just_before, &Utc), Some(on));
    assert_eq!(c.prev_before(just_before, &Utc), Some(at("2026-05-08T09:00:00Z")));
}

#[test]
fn evaluates_in_local_time() {
    let from = "2026-05-08T00:00:00Z";
    assert_eq!(next_n("0 9 * * *", from, &Chicago, 1), ["2026-05-08T09:00:00-05:00"]);
    assert_eq!(next_n("0 9 * * *", from, &Kolkata, 1), ["2026-05-08T09:00:00+05:30"]);
    assert_eq!(cron("0 9 * * *").prev_before(at(from), &Kolkata), Some(at("2026-05-07T09:00:00+05:30")));
}

#[test]
fn dst_follows_croner() {
    // Spring forward (02:00 EST -> 03:00 EDT): a fixed 02:30 fires right after the gap.
    assert_eq!(
        next_n("30 2 * * *", "2026-03-07T12:00:00Z", &New_York, 3),
        ["2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"]
    );
    // Fall back (02:00 EDT -> 01:00 EST): a fixed 01:30 fires once, an hourly job twice.
    assert_eq!(
        next_n("30 1 * * *", "2026-10-31T12:00:00Z", &New_York, 2),
        ["2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"]
    );
    assert_eq!(
        next_n("0 * * * *", "2026-11-01T04:30:00Z", &New_York, 3),
        ["2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00"]
    );
    let c = cron("0 * * * *");
    assert_eq!(
        c.prev_before(at("2026-11-01T01:30:00-05:00"), &New_York),
        Some(at("2026-11-01T01:00:00-05:00"))
    );
    assert_eq!(
        c.prev_before(at("2026-11-01T01:00:00-05:00"), &New_York),
        Some(at("2026-11-01T01:00:00-04:00"))
    );
}

#[test]
fn too_frequent_detection() {
    let cases = [
        ("*/5 * * * *", false),
        ("*/2 9 * * 1", true),
        ("* * * * *", true),
        ("*/4 * * * *", true),
        ("*/7 * * * *", true), // :56 then :00 is 4 minutes
        ("*/10 * * * *", false),
        ("0,30 * * * *", false),
        ("0,3 * * * *", true),
        ("58 * * * *", false),
        ("0,58 9,10 * * *", true), // 09:58 then 10:00
        ("0,58 9,11 * * *", false),
        ("58,0 23,0 * * *", true),  // 23:58 then 00:00 the next day
        ("0,58 0,23 * * 1", false), // Monday 23:58, but Tuesday never fires
        ("0,58 0,23 * * 1,2", true),
        ("*/10 * * * * *", true),
        ("0,30 * * * * *", true),
        ("0 */5 * * * *", false),
        ("30 0 9 * * *", false),
        ("@hourly", false),
        ("0 9 * * 1-5", false),
    ];
    for (expr, want) in cases {
        assert_eq!(cron(expr).fires_more_often_than_every_5_minutes(), want, "{expr}");
    }
}

#[test]
fn too_frequent_is_cheap() {
    let c = cron("0,58 0,23 * * 1");
    let start = std::time::Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(c.fires_more_often_than_every_5_minutes());
    }
    assert!(start.elapsed() < std::time::Duration::from_millis(50));
}

#[test]
fn descriptions() {
    let cases = [
        "* * * * *",
        "*/15 * * * *",
        "*/7 * * * *",
        "0 * * * *",
        "30 * * * *",
        "0,30 * * * *",
        "0 */2 * * *",
        "30 */6 * * *",
        "0 9 * * *",
        "0 0 * * *",
        "0 9 * * 1-5",
        "0 9 * * MON-FRI",
        "0 10 * * 6,0",
        "0 9 * * 1",
        "0 9 * * 1,3,5",
        "0 9 * * 0",
        "0 8,17 * * *",
        "30 8,12,17 * * 1-5",
        "0 9-17 * * 1-5",
        "*/15 9-17 * * 1-5",
        "*/2 9 * * 1",
        "* 9 * * *",
        "0 9 1 * *",
        "0 9 1,15 * *",
        "0 9 13 * 5",
        "0 9 1 1 *",
        "0 9 * 1,7 *",
        "0 9 * 3-10 1",
        "0 9 1-31 * 1",
        "0 9 * * * *",
        "*/10 * * * * *",
        "30 0 9 * * *",
        "@hourly",
        "@daily",
        "@weekly",
        "@monthly",
        "@yearly",
        "0 0 L * *",
        "0 9 * * 5#2",
        "0 9 */2 * 1",
        "5,10,15,20,25,50,55 * * * *",
    ];
    let got: Vec<String> = cases.iter().map(|expr| format!("{expr:<28} {}", cron(expr).describe())).collect();
    expect![[r#"
            * * * * *                    every minute
            */15 * * * *                 every 15 minutes
            */7 * * * *                  at every 7 minutes
            0 * * * *                    every hour
            30 * * * *                   at minute 30 of every hour
            0,30 * * * *                 at minutes 0 and 30 of every hour
            0 */2 * * *                  every 2 hours
            30 */6 * * *                 every 6 hours at minute 30
            0 9 * * *                    daily at 09:00
            0 0 * * *                    daily at 00:00
            0 9 * * 1-5                  at 09:00 on weekdays
            0 9 * * MON-FRI              at 09:00 on weekdays
            0 10 * * 6,0                 at 10:00 on weekends
            0 9 * * 1                    at 09:00 on Mondays
            0 9 * * 1,3,5                at 09:00 on Mondays, Wednesdays and Fridays
            0 9 * * 0                    at 09:00 on Sundays
            0 8,17 * * *                 daily at 08:00 and 17:00
            30 8,12,17 * * 1-5           at 08:30, 12:30 and 17:30 on weekdays
            0 9-17 * * 1-5               every hour from 09:00 to 17:00 on weekdays
            */15 9-17 * * 1-5            every 15 minutes from 09:00 to 17:45 on weekdays
            */2 9 * * 1                  every 2 minutes from 09:00 to 09:58 on Mondays
            * 9 * * *                    every minute from 09:00 to 09:59
            0 9 1 * *                    at 09:00 on the 1st of every month
            0 9 1,15 * *                 at 09:00 on the 1st and 15th of every month
            0 9 13 * 5                   at 09:00 on the 13th of every month and on Fridays
            0 9 1 1 *                    at 09:00 on the 1st of January
            0 9 * 1,7 *                  at 09:00 every day in January and July
            0 9 * 3-10 1                 at 09:00 on Mondays from March to October
            0 9 1-31 * 1                 daily at 09:00
            0 9 * * * *                  at minute 9 of every hour
            */10 * * * * *               every 10 seconds
            30 0 9 * * *                 daily at 09:00:30
            @hourly                      every hour
            @daily                       daily at 00:00
            @weekly                      at 00:00 on Sundays
            @monthly                     at 00:00 on the 1st of every month
            @yearly                      at 00:00 on the 1st of January
            0 0 L * *                    at 00:00, on the last day of the month
            0 9 * * 5#2                  at 09:00, on the 2nd Friday of the month
            0 9 */2 * 1                  at 09:00, on day 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, and 31 (if it is also Monday)
            5,10,15,20,25,50,55 * * * *  at minute 5, 10, 15, 20, 25, 50, and 55 past every hour
        "#]]
        .assert_eq(&(got.join("\n") + "\n"));
}

#[test]
fn presets_parse_and_match_their_meaning() {
    let presets = presets();
    assert!((8..=12).contains(&presets.len()));
    for (expr, meaning) in presets {
        let c = cron(expr);
        assert!(!c.fires_more_often_than_every_5_minutes(), "{expr}");
        assert!(!meaning.is_empty());
    }
}

#[test]
fn display_keeps_the_source() {
    let c = cron("  0 9 * * mon-fri ");
    assert_eq!(c.to_string(), "0 9 * * mon-fri");
    assert_eq!(c.as_str(), "0 9 * * mon-fri");
    assert_eq!("0 9 * * 1".parse::<CronSchedule>().map(|c| c.describe()), Ok("at 09:00 on Mondays".into()));
}
