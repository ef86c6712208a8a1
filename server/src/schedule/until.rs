//! `live.until`: the end of a note's life, written as a date (the end of that day in local
//! time) or as an RFC 3339 instant. Pure; the zone is injected.

use chrono::{DateTime, NaiveDate, TimeDelta, TimeZone, Utc};

use super::window::{Edge, local_date, local_to_utc};

/// When a note stops firing, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// A calendar date: the note fires up to the end of that day in the local zone.
    Date(NaiveDate),
    /// An exact instant.
    Instant(DateTime<Utc>),
}

/// What a malformed value is told, with the accepted forms.
pub const FORMS: &str =
    "a date like 2026-02-25 (the end of that day) or an RFC 3339 time like \"2026-02-25T18:00:00Z\"";

impl Until {
    pub fn parse(s: &str) -> Option<Until> {
        let s = s.trim();
        if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
            return Some(Until::Date(d));
        }
        DateTime::parse_from_rfc3339(s).ok().map(|t| Until::Instant(t.to_utc()))
    }

    /// The first instant at which the note no longer fires: for a date, the local midnight
    /// that ends it (on a day whose midnight falls in a DST gap, the instant of the jump).
    /// `None` only at the edges of chrono's range, where the note never expires.
    pub fn instant<Tz: TimeZone>(&self, tz: &Tz) -> Option<DateTime<Utc>> {
        match self {
            Until::Instant(t) => Some(*t),
            Until::Date(d) => {
                let next = d.checked_add_signed(TimeDelta::days(1))?;
                local_to_utc(tz, next.and_hms_opt(0, 0, 0)?, Edge::Start)
            }
        }
    }

    /// Whether the note has expired at `at`.
    pub fn passed<Tz: TimeZone>(&self, at: DateTime<Utc>, tz: &Tz) -> bool {
        self.instant(tz).is_some_and(|end| at >= end)
    }

    /// The last local day on which the note may fire (for "until Wed 25 Feb").
    pub fn last_day<Tz: TimeZone>(&self, tz: &Tz) -> Option<NaiveDate> {
        match self {
            Until::Date(d) => Some(*d),
            Until::Instant(t) => local_date(*t, tz),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|t| t.to_utc()).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn a_date_ends_at_the_local_midnight_after_it() {
        let berlin = chrono_tz::Europe::Berlin;
        let u = Until::parse("2026-02-25").unwrap_or_else(|| panic!("date"));
        assert_eq!(u.instant(&berlin), Some(t("2026-02-25T23:00:00Z")));
        assert!(!u.passed(t("2026-02-25T22:59:59Z"), &berlin));
        assert!(u.passed(t("2026-02-25T23:00:00Z"), &berlin));
        assert_eq!(u.last_day(&berlin), NaiveDate::from_ymd_opt(2026, 2, 25));
    }

    #[test]
    fn a_midnight_in_a_dst_gap_ends_at_the_jump() {
        // Santiago springs forward from 00:00 to 01:00 on 2026-09-06.
        let santiago = chrono_tz::America::Santiago;
        let u = Until::Date(NaiveDate::from_ymd_opt(2026, 9, 5).unwrap_or_default());
        assert_eq!(u.instant(&santiago), Some(t("2026-09-06T04:00:00Z")));
    }

    #[test]
    fn an_instant_is_taken_as_written() {
        let u = Until::parse(" 2026-02-25T18:00:00+01:00 ").unwrap_or_else(|| panic!("instant"));
        assert_eq!(u, Until::Instant(t("2026-02-25T17:00:00Z")));
        assert!(u.passed(t("2026-02-25T17:00:00Z"), &Utc));
    }

    #[test]
    fn other_shapes_do_not_parse() {
        for bad in ["25 Feb", "2026-02-30", "tomorrow", "2026-02-25 18:00", ""] {
            assert_eq!(Until::parse(bad), None, "{bad}");
        }
    }
}
