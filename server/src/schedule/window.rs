//! Daily time windows (`startTime`/`endTime` in local time) and the band of instants each one
//! covers on a given date.
//!
//! DST policy for bands, chosen so that a window still fires once on every calendar day:
//! - a local time that happens twice (fall back) opens the band at its first occurrence and
//!   closes it after the last occurrence of the end minute, so the band covers both passes;
//! - a start time that never happens (spring forward) opens the band at the jump, the first
//!   instant after the gap (like croner does for a fixed-time cron);
//! - an end time that never happens is read with the offset in effect before the jump, i.e.
//!   shifted later by the length of the gap (02:30 in a 02:00→03:00 gap becomes 03:30), so a
//!   window inside the gap keeps at least its usual length.

use std::fmt;
use std::str::FromStr;

use chrono::{
    DateTime, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeDelta, TimeZone, Utc,
};

/// A minute of the day, `00:00` through `23:59`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeOfDay {
    pub hour: u8,
    pub minute: u8,
}

/// Why a `HH:MM` string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeOfDayError {
    #[error("expected a 24-hour time written HH:MM, like \"09:00\"")]
    Malformed,
    #[error("{text} is not a time of day: hours run 00-23 and minutes 00-59")]
    OutOfRange { text: String },
    /// A single-digit hour that is otherwise valid; `fixed` is the same time zero-padded.
    #[error("write the hour with two digits: \"{fixed}\"")]
    NeedsZeroPad { fixed: String },
}

impl TimeOfDay {
    pub const MIDNIGHT: TimeOfDay = TimeOfDay { hour: 0, minute: 0 };
    pub const LAST_MINUTE: TimeOfDay = TimeOfDay { hour: 23, minute: 59 };

    pub fn new(hour: u8, minute: u8) -> Option<TimeOfDay> {
        (hour < 24 && minute < 60).then_some(TimeOfDay { hour, minute })
    }

    /// Parses strict `HH:MM`: exactly two ASCII digits, a colon, two ASCII digits. A one-digit
    /// hour is reported as [`TimeOfDayError::NeedsZeroPad`] so an editor can offer the fix.
    pub fn parse(text: &str) -> Result<TimeOfDay, TimeOfDayError> {
        let bytes = text.as_bytes();
        let digit = |b: u8| b.is_ascii_digit().then(|| b - b'0');
        let parsed = match bytes {
            [h1, h2, b':', m1, m2] => {
                let (Some(h1), Some(h2), Some(m1), Some(m2)) =
                    (digit(*h1), digit(*h2), digit(*m1), digit(*m2))
                else {
                    return Err(TimeOfDayError::Malformed);
                };
                (h1 * 10 + h2, m1 * 10 + m2, false)
            }
            [h, b':', m1, m2] => {
                let (Some(h), Some(m1), Some(m2)) = (digit(*h), digit(*m1), digit(*m2)) else {
                    return Err(TimeOfDayError::Malformed);
                };
                (h, m1 * 10 + m2, true)
            }
            _ => return Err(TimeOfDayError::Malformed),
        };
        let (hour, minute, short_hour) = parsed;
        match TimeOfDay::new(hour, minute) {
            None => Err(TimeOfDayError::OutOfRange { text: text.to_string() }),
            Some(t) if short_hour => Err(TimeOfDayError::NeedsZeroPad { fixed: t.to_string() }),
            Some(t) => Ok(t),
        }
    }

    pub fn minutes_since_midnight(self) -> u16 {
        u16::from(self.hour) * 60 + u16::from(self.minute)
    }

    pub fn to_naive_time(self) -> NaiveTime {
        NaiveTime::from_hms_opt(self.hour.into(), self.minute.into(), 0).unwrap_or(NaiveTime::MIN)
    }
}

impl FromStr for TimeOfDay {
    type Err = TimeOfDayError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TimeOfDay::parse(s)
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.hour, self.minute)
    }
}

/// A daily window: due once a day somewhere from `start`:00 through `end`:59 local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Window {
    pub start: TimeOfDay,
    pub end: TimeOfDay,
}

/// The instants one window covers on one date: `start <= t < end`, where `end` is the first
/// instant after the window's last minute (its `endTime`:59.999…).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Band {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

impl Band {
    pub fn contains(&self, t: DateTime<Utc>) -> bool {
        self.start <= t && t < self.end
    }
}

impl Window {
    pub fn new(start: TimeOfDay, end: TimeOfDay) -> Window {
        Window { start, end }
    }

    /// Windows cannot cross midnight, so an end before the start is an error the validator
    /// reports; such a window never fires. `start == end` is a valid one-minute window.
    pub fn is_inverted(&self) -> bool {
        self.end < self.start
    }

    /// Whether the two windows compete for the same minutes, so that a run for one can use up
    /// the other's day. Windows that only touch (one ends in the minute the other starts, like
    /// 08:00-12:00 and 12:00-15:00) are the documented way to split a day and do not count;
    /// identical windows do. Inverted windows overlap nothing.
    pub fn overlaps(&self, other: &Window) -> bool {
        if self.is_inverted() || other.is_inverted() {
            return false;
        }
        let first = self.start.max(other.start);
        let last = self.end.min(other.end);
        if first > last {
            return false;
        }
        let touching_only = first == last && (self.end == other.start || other.end == self.start);
        !touching_only || self == other
    }

    /// The band of this window on local `date` in `tz` (see the module docs for DST), or `None`
    /// for an inverted window or a date chrono cannot represent.
    pub fn band<Tz: TimeZone>(&self, date: NaiveDate, tz: &Tz) -> Option<Band> {
        if self.is_inverted() {
            return None;
        }
        let start = local_to_utc(tz, date.and_time(self.start.to_naive_time()), Edge::Start)?;
        let end_minute = local_to_utc(tz, date.and_time(self.end.to_naive_time()), Edge::End)?;
        let end = end_minute.checked_add_signed(TimeDelta::minutes(1))?;
        Some(Band { start, end })
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}

/// The local calendar date of `t` in `tz`, or `None` at the edges of chrono's range (where
/// `DateTime::date_naive` would panic).
pub(crate) fn local_date<Tz: TimeZone>(t: DateTime<Utc>, tz: &Tz) -> Option<NaiveDate> {
    let offset = tz.offset_from_utc_datetime(&t.naive_utc()).fix();
    Some(t.naive_utc().checked_add_offset(offset)?.date())
}

/// Which end of a band a local time is resolved for; see the module docs for the DST policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edge {
    Start,
    End,
}

pub(crate) fn local_to_utc<Tz: TimeZone>(tz: &Tz, local: NaiveDateTime, edge: Edge) -> Option<DateTime<Utc>> {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(t) => Some(t.to_utc()),
        LocalResult::Ambiguous(first, last) => Some(match edge {
            Edge::Start => first.to_utc(),
            Edge::End => last.to_utc(),
        }),
        LocalResult::None => {
            // A day before the gap is safely on the old offset: no zone changes its offset
            // twice within a day.
            let probe = local.checked_sub_signed(TimeDelta::days(1))?;
            let before = tz.offset_from_utc_datetime(&probe).fix();
            let shifted =
                local.checked_sub_signed(TimeDelta::seconds(before.local_minus_utc().into()))?.and_utc();
            match edge {
                Edge::End => Some(shifted),
                Edge::Start => Some(jump_instant(tz, shifted, before)),
            }
        }
    }
}

/// The instant a spring-forward jump happens, given an instant `after_jump` on the new offset
/// that lies less than one gap length past it.
fn jump_instant<Tz: TimeZone>(tz: &Tz, after_jump: DateTime<Utc>, before: FixedOffset) -> DateTime<Utc> {
    let offset_at = |secs: i64| {
        DateTime::<Utc>::from_timestamp(secs, 0).map(|t| tz.offset_from_utc_datetime(&t.naive_utc()).fix())
    };
    let mut hi = after_jump.timestamp();
    let gap = match offset_at(hi) {
        Some(after) => i64::from(after.local_minus_utc() - before.local_minus_utc()),
        None => return after_jump,
    };
    let mut lo = hi - gap;
    if gap <= 0 || offset_at(lo) != Some(before) {
        return after_jump;
    }
    // Offsets change on whole seconds; bisect between the old offset (lo) and the new (hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if offset_at(mid) == Some(before) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    DateTime::<Utc>::from_timestamp(hi, 0).unwrap_or(after_jump)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono_tz::America::New_York;
    use chrono_tz::Australia::Lord_Howe;

    fn tod(s: &str) -> TimeOfDay {
        match TimeOfDay::parse(s) {
            Ok(t) => t,
            Err(e) => panic!("bad test time {s}: {e}"),
        }
    }

    fn win(a: &str, b: &str) -> Window {
        Window::new(tod(a), tod(b))
    }

    fn at(s: &str) -> DateTime<Utc> {
        match DateTime::parse_from_rfc3339(s) {
            Ok(t) => t.to_utc(),
            Err(e) => panic!("bad test timestamp {s}: {e}"),
        }
    }

    fn date(s: &str) -> NaiveDate {
        match NaiveDate::parse_from_str(s, "%Y-%m-%d") {
            Ok(d) => d,
            Err(e) => panic!("bad test date {s}: {e}"),
        }
    }

    #[test]
    fn parses_strict_hh_mm() {
        use TimeOfDayError::*;
        let cases: &[(&str, Result<TimeOfDay, TimeOfDayError>)] = &[
            ("09:00", Ok(TimeOfDay { hour: 9, minute: 0 })),
            ("00:00", Ok(TimeOfDay::MIDNIGHT)),
            ("23:59", Ok(TimeOfDay::LAST_MINUTE)),
            ("12:30", Ok(TimeOfDay { hour: 12, minute: 30 })),
            ("9:00", Err(NeedsZeroPad { fixed: "09:00".into() })),
            ("7:45", Err(NeedsZeroPad { fixed: "07:45".into() })),
            ("24:00", Err(OutOfRange { text: "24:00".into() })),
            ("12:60", Err(OutOfRange { text: "12:60".into() })),
            ("9:60", Err(OutOfRange { text: "9:60".into() })),
            ("ab:cd", Err(Malformed)),
            ("", Err(Malformed)),
            ("0900", Err(Malformed)),
            ("09:0", Err(Malformed)),
            ("9:5", Err(Malformed)),
            ("09:00:00", Err(Malformed)),
            (" 09:00", Err(Malformed)),
            ("09:00 ", Err(Malformed)),
            ("09.00", Err(Malformed)),
            ("-9:00", Err(Malformed)),
            ("０９:００", Err(Malformed)),
            ("009:00", Err(Malformed)),
        ];
        for (text, want) in cases {
            assert_eq!(&TimeOfDay::parse(text), want, "parsing {text:?}");
        }
    }

    #[test]
    fn error_messages_are_actionable() {
        assert_eq!(
            TimeOfDay::parse("9:00").map_err(|e| e.to_string()),
            Err("write the hour with two digits: \"09:00\"".to_string())
        );
        assert_eq!(
            TimeOfDay::parse("24:00").map_err(|e| e.to_string()),
            Err("24:00 is not a time of day: hours run 00-23 and minutes 00-59".to_string())
        );
        assert_eq!(tod("07:05").to_string(), "07:05");
        assert_eq!(win("08:00", "12:00").to_string(), "08:00-12:00");
    }

    #[test]
    fn inverted_and_one_minute_windows() {
        assert!(win("12:00", "08:00").is_inverted());
        assert!(!win("09:00", "09:00").is_inverted());
        assert!(!win("00:00", "23:59").is_inverted());
        assert_eq!(win("12:00", "08:00").band(date("2026-05-08"), &Utc), None);
    }

    #[test]
    fn overlap_rules() {
        let cases = [
            (("08:00", "12:00"), ("12:00", "15:00"), false), // adjacent: the documented split
            (("08:00", "12:00"), ("10:00", "14:00"), true),
            (("08:00", "15:00"), ("10:00", "10:00"), true), // a one-minute window inside
            (("08:00", "09:00"), ("09:00", "09:00"), false), // touching at the end minute
            (("09:00", "09:00"), ("09:00", "09:00"), true), // identical
            (("08:00", "09:00"), ("09:01", "10:00"), false),
            (("08:00", "12:00"), ("08:00", "09:00"), true),
            (("12:00", "08:00"), ("00:00", "23:59"), false), // inverted overlaps nothing
        ];
        for ((a1, a2), (b1, b2), want) in cases {
            let (a, b) = (win(a1, a2), win(b1, b2));
            assert_eq!(a.overlaps(&b), want, "{a} vs {b}");
            assert_eq!(b.overlaps(&a), want, "{b} vs {a}");
        }
    }

    #[test]
    fn band_includes_the_end_minute() {
        let band = win("09:00", "12:00").band(date("2026-05-08"), &Utc);
        let band = band.unwrap_or_else(|| panic!("no band"));
        assert_eq!(band.start, at("2026-05-08T09:00:00Z"));
        assert_eq!(band.end, at("2026-05-08T12:01:00Z"));
        assert!(band.contains(at("2026-05-08T12:00:59.999Z")));
        assert!(!band.contains(at("2026-05-08T12:01:00Z")));
        assert!(!band.contains(at("2026-05-08T08:59:59.999Z")));
    }

    #[test]
    fn band_in_a_spring_forward_gap_is_shifted_by_the_gap() {
        // New York jumps from 02:00 EST to 03:00 EDT on 2026-03-08.
        let d = date("2026-03-08");
        let inside = win("02:00", "02:30").band(d, &New_York).unwrap_or_else(|| panic!());
        assert_eq!(inside.start, at("2026-03-08T03:00:00-04:00"));
        assert_eq!(inside.end, at("2026-03-08T03:31:00-04:00"));
        let straddling = win("02:30", "03:10").band(d, &New_York).unwrap_or_else(|| panic!());
        assert_eq!(straddling.start, at("2026-03-08T03:00:00-04:00"));
        assert_eq!(straddling.end, at("2026-03-08T03:11:00-04:00"));
        let short = win("02:10", "02:20").band(d, &New_York).unwrap_or_else(|| panic!());
        assert_eq!(short.start, at("2026-03-08T03:00:00-04:00"));
        assert_eq!(short.end, at("2026-03-08T03:21:00-04:00"));
        let across = win("01:30", "02:15").band(d, &New_York).unwrap_or_else(|| panic!());
        assert_eq!(across.start, at("2026-03-08T01:30:00-05:00"));
        assert_eq!(across.end, at("2026-03-08T03:16:00-04:00"));
    }

    #[test]
    fn band_in_a_fall_back_fold_covers_both_passes() {
        // New York goes from 02:00 EDT back to 01:00 EST on 2026-11-01.
        let d = date("2026-11-01");
        let band = win("01:00", "01:30").band(d, &New_York).unwrap_or_else(|| panic!());
        assert_eq!(band.start, at("2026-11-01T01:00:00-04:00"));
        assert_eq!(band.end, at("2026-11-01T01:31:00-05:00"));
    }

    #[test]
    fn lord_howe_half_hour_shifts() {
        // Lord Howe goes from 02:00 +11:00 back to 01:30 +10:30 on 2026-04-05, and jumps from
        // 02:00 +10:30 to 02:30 +11:00 on 2026-10-04.
        let fold = win("01:30", "01:45").band(date("2026-04-05"), &Lord_Howe);
        let fold = fold.unwrap_or_else(|| panic!());
        assert_eq!(fold.start, at("2026-04-05T01:30:00+11:00"));
        assert_eq!(fold.end, at("2026-04-05T01:46:00+10:30"));
        let gap = win("02:00", "02:10").band(date("2026-10-04"), &Lord_Howe);
        let gap = gap.unwrap_or_else(|| panic!());
        assert_eq!(gap.start, at("2026-10-04T02:30:00+11:00"));
        assert_eq!(gap.end, at("2026-10-04T02:41:00+11:00"));
    }
}
