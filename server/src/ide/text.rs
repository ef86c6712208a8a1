//! Short human texts shared by lenses, hints, hovers and completion: times ("5 min ago",
//! "next 15:00", the next fires of a cron) and what a key's value is.

use chrono::{DateTime, TimeZone, Utc};

use super::Ctx;
use crate::note::fields::{Field, Kind};
use crate::schedule::CronSchedule;

/// How long ago `t` was, relative to `now`: "just now", "5 min ago", "3 h ago", "2 days ago".
/// A time in the future (clock skew) reads "just now".
pub fn ago(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (now - t).num_seconds();
    match secs {
        s if s < 60 => "just now".to_owned(),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h ago", s / 3600),
        s if s < 2 * 86_400 => "yesterday".to_owned(),
        s => format!("{} days ago", s / 86_400),
    }
}

/// A future instant in local time, as short as is unambiguous: "15:00" today, "tomorrow 09:00",
/// "Mon 09:00" within a week, "24 Nov 09:00" after that; of the past, "yesterday 08:00".
pub fn at_local<Tz: TimeZone>(t: DateTime<Utc>, now: DateTime<Utc>, tz: &Tz) -> String {
    // Naive local times format without requiring the zone's offset to be displayable.
    let local = t.with_timezone(tz).naive_local();
    let today = now.with_timezone(tz).date_naive();
    let day = local.date();
    let hm = local.format("%H:%M");
    let days = (day - today).num_days();
    match days {
        0 => hm.to_string(),
        1 => format!("tomorrow {hm}"),
        // A past instant: an occurrence missed last night.
        -1 => format!("yesterday {hm}"),
        2..=6 => format!("{} {hm}", local.format("%a")),
        _ => format!("{} {hm}", local.format("%-d %b")),
    }
}

/// The end `until` sets, as lenses and hints name it: "Wed 25 Feb" for a date (the note runs
/// through that day), "Wed 25 Feb 18:00" for an instant, in local time.
pub fn until_text<Tz: TimeZone>(until: &crate::schedule::Until, tz: &Tz) -> String {
    match until {
        crate::schedule::Until::Date(d) => d.format("%a %-d %b").to_string(),
        crate::schedule::Until::Instant(t) => {
            t.with_timezone(tz).naive_local().format("%a %-d %b %H:%M").to_string()
        }
    }
}

/// A duration until `t`: "in 4 min", "in 30 s".
pub fn until(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (t - now).num_seconds().max(0);
    if secs < 60 { format!("{secs} s") } else { format!("{} min", (secs + 59) / 60) }
}

/// A local time with the zone's abbreviation (or offset, for zones without names):
/// "Mon 23 Nov 10:00 CST".
pub fn local_time<Tz: TimeZone>(t: DateTime<Utc>, tz: &Tz) -> String {
    let local = t.with_timezone(tz);
    // `Offset` only promises `Debug`; zone databases print their abbreviation through it and
    // fixed offsets print `+01:00`, which is what a hover should show either way.
    let zone = match format!("{:?}", local.offset()) {
        z if z == "Z" => "UTC".to_owned(),
        z => z,
    };
    format!("{} {zone}", local.naive_local().format("%a %-d %b %H:%M"))
}

/// The next three occurrences of `cron` after now, as a markdown list.
pub fn next_fires<Tz: TimeZone>(ctx: &Ctx<Tz>, cron: &CronSchedule) -> String {
    next_fires_at(ctx.now, ctx.tz, cron)
}

/// [`next_fires`] at `now` in `tz`, without a note (a completion item resolved later).
pub fn next_fires_at<Tz: TimeZone>(now: DateTime<Utc>, tz: &Tz, cron: &CronSchedule) -> String {
    let times: Vec<String> = std::iter::successors(cron.next_after(now, tz), |&t| cron.next_after(t, tz))
        .take(3)
        .map(|t| format!("- {}", local_time(t, tz)))
        .collect();
    if times.is_empty() { "It never fires.".to_owned() } else { format!("Next:\n{}", times.join("\n")) }
}

/// What a key's value is, in a few words.
pub fn kind_detail(f: &Field) -> String {
    let what = match f.kind {
        Kind::Text => "text",
        Kind::Bool => "true | false",
        Kind::Mapping => "cron, windows, events",
        Kind::List => "list of daily time windows",
        Kind::Cron => "cron expression",
        Kind::Time => "HH:MM local time",
        Kind::Timestamp => "timestamp",
        Kind::ProviderName => "provider name",
        Kind::ToolList => "list of MCP servers or server.tool",
        Kind::DateOrTimestamp => "date or timestamp",
        Kind::PositiveInt => "characters, a whole number",
        Kind::SkillList => "list of skill names",
        Kind::SourceList => "list of source names",
        Kind::Count => "a whole number",
        Kind::Notify => "changes | failures | all | false",
    };
    match f {
        f if f.required => format!("{what}, required"),
        f if f.runtime => format!("{what}, written by livenote"),
        _ => what.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_default()
    }

    #[test]
    fn relative_texts() {
        let now = t("2026-11-23T15:07:00Z");
        assert_eq!(ago(t("2026-11-23T15:06:30Z"), now), "just now");
        assert_eq!(ago(t("2026-11-23T15:02:00Z"), now), "5 min ago");
        assert_eq!(ago(t("2026-11-23T12:00:00Z"), now), "3 h ago");
        assert_eq!(ago(t("2026-11-22T12:00:00Z"), now), "yesterday");
        assert_eq!(ago(t("2026-11-01T12:00:00Z"), now), "22 days ago");
        let tz = chrono_tz::America::Chicago;
        assert_eq!(at_local(t("2026-11-23T21:00:00Z"), now, &tz), "15:00");
        assert_eq!(at_local(t("2026-11-24T15:00:00Z"), now, &tz), "tomorrow 09:00");
        assert_eq!(at_local(t("2026-11-27T15:00:00Z"), now, &tz), "Fri 09:00");
        assert_eq!(at_local(t("2026-12-07T15:00:00Z"), now, &tz), "7 Dec 09:00");
        assert_eq!(until(t("2026-11-23T15:10:30Z"), now), "4 min");
    }
}
