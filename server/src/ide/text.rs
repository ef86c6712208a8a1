//! Short human texts for times, shared by lenses, hints and hovers: "5 min ago", "next 15:00",
//! "every hour".

use chrono::{DateTime, TimeZone, Utc};

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
/// "Mon 09:00" within a week, "24 Nov 09:00" after that.
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
        2..=6 => format!("{} {hm}", local.format("%a")),
        _ => format!("{} {hm}", local.format("%-d %b")),
    }
}

/// A duration until `t`: "in 4 min", "in 30 s".
pub fn until(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (t - now).num_seconds().max(0);
    if secs < 60 { format!("{secs} s") } else { format!("{} min", (secs + 59) / 60) }
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
