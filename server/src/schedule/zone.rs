//! The time zone schedules are evaluated in: the process's local zone (`TZ` respected), or a
//! named zone injected by tests, behind one concrete type so the server needs no generics.

use chrono::{FixedOffset, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Zone {
    /// The process's zone (chrono reads `TZ`, else the system zone).
    #[default]
    Local,
    Named(chrono_tz::Tz),
}

/// The offset of a [`Zone`] at some instant. It carries its zone because chrono rebuilds a
/// `DateTime`'s zone from its offset (`TimeZone::from_offset`), and arithmetic done that way
/// must stay in the same zone.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ZoneOffset {
    fixed: FixedOffset,
    zone: Zone,
    /// The zone's abbreviation at that instant ("CST"), when known and short; kept inline so
    /// the offset stays `Copy`.
    abbr: ([u8; 8], u8),
}

impl ZoneOffset {
    fn new(fixed: FixedOffset, zone: Zone, abbr: Option<&str>) -> Self {
        let mut buf = [0u8; 8];
        let len = match abbr {
            Some(a) if a.len() <= 8 && a.is_ascii() => {
                buf[..a.len()].copy_from_slice(a.as_bytes());
                a.len() as u8
            }
            _ => 0,
        };
        ZoneOffset { fixed, zone, abbr: (buf, len) }
    }

    /// "CST", or the numeric offset ("-06:00") when the zone has no abbreviation.
    pub fn abbreviation(&self) -> String {
        let (buf, len) = &self.abbr;
        match std::str::from_utf8(&buf[..usize::from(*len)]) {
            Ok(a) if !a.is_empty() => a.to_owned(),
            _ => self.fixed.to_string(),
        }
    }
}

/// Debug prints the abbreviation: chrono's `Offset` only promises `Debug`, and generic code
/// (hover texts) shows zones through it, as chrono-tz's offsets do.
impl std::fmt::Debug for ZoneOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.abbreviation())
    }
}

impl Offset for ZoneOffset {
    fn fix(&self) -> FixedOffset {
        self.fixed
    }
}

impl Zone {
    /// The zone's IANA name (`Europe/Berlin`) for runs and prompts. The local zone's comes
    /// from `TZ` when it names one (with or without a leading `:`), else from the system
    /// (/etc/localtime); a POSIX `TZ` rule is given as written, and "local" only when the
    /// system says nothing.
    pub fn name(&self) -> String {
        match self {
            Zone::Named(tz) => tz.name().to_owned(),
            Zone::Local => {
                local_name(std::env::var("TZ").ok().as_deref(), iana_time_zone::get_timezone().ok())
            }
        }
    }
}

fn local_name(tz_var: Option<&str>, system: Option<String>) -> String {
    match tz_var.map(|t| t.strip_prefix(':').unwrap_or(t)).filter(|t| !t.is_empty()) {
        Some(t) if t.parse::<chrono_tz::Tz>().is_ok() => t.to_owned(),
        // A path (`:/etc/localtime`) says no more than the system does.
        Some(t) if !t.starts_with('/') => t.to_owned(),
        _ => system.filter(|s| !s.is_empty()).unwrap_or_else(|| "local".to_owned()),
    }
}

impl std::fmt::Display for ZoneOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.fixed.fmt(f)
    }
}

fn map<O: Offset + std::fmt::Debug>(zone: Zone, r: LocalResult<O>) -> LocalResult<ZoneOffset> {
    let z = |o: O| ZoneOffset::new(o.fix(), zone, abbr_of(zone, &o).as_deref());
    match r {
        LocalResult::Single(o) => LocalResult::Single(z(o)),
        LocalResult::Ambiguous(a, b) => LocalResult::Ambiguous(z(a), z(b)),
        LocalResult::None => LocalResult::None,
    }
}

/// A named zone's offsets print their abbreviation through `Debug`; the local zone's print a
/// numeric offset, which is no abbreviation.
fn abbr_of<O: std::fmt::Debug>(zone: Zone, o: &O) -> Option<String> {
    match zone {
        Zone::Named(_) => Some(format!("{o:?}")),
        Zone::Local => None,
    }
}

impl TimeZone for Zone {
    type Offset = ZoneOffset;

    fn from_offset(offset: &ZoneOffset) -> Zone {
        offset.zone
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<ZoneOffset> {
        match self {
            Zone::Local => map(*self, chrono::Local.offset_from_local_date(local)),
            Zone::Named(tz) => map(*self, tz.offset_from_local_date(local)),
        }
    }

    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<ZoneOffset> {
        match self {
            Zone::Local => map(*self, chrono::Local.offset_from_local_datetime(local)),
            Zone::Named(tz) => map(*self, tz.offset_from_local_datetime(local)),
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> ZoneOffset {
        match self {
            Zone::Local => ZoneOffset::new(chrono::Local.offset_from_utc_date(utc).fix(), *self, None),
            Zone::Named(tz) => {
                let o = tz.offset_from_utc_date(utc);
                ZoneOffset::new(o.fix(), *self, abbr_of(*self, &o).as_deref())
            }
        }
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> ZoneOffset {
        match self {
            Zone::Local => ZoneOffset::new(chrono::Local.offset_from_utc_datetime(utc).fix(), *self, None),
            Zone::Named(tz) => {
                let o = tz.offset_from_utc_datetime(utc);
                ZoneOffset::new(o.fix(), *self, abbr_of(*self, &o).as_deref())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn local_names_are_iana_names() {
        use super::local_name;
        let sys = || Some("America/Chicago".to_owned());
        assert_eq!(local_name(None, sys()), "America/Chicago");
        assert_eq!(local_name(Some(""), sys()), "America/Chicago");
        assert_eq!(local_name(Some("Europe/Berlin"), sys()), "Europe/Berlin");
        assert_eq!(local_name(Some(":Europe/Berlin"), sys()), "Europe/Berlin");
        assert_eq!(local_name(Some(":/etc/localtime"), sys()), "America/Chicago");
        assert_eq!(local_name(Some("CET-1CEST"), sys()), "CET-1CEST");
        assert_eq!(local_name(None, None), "local");
    }

    use chrono::{TimeZone, Utc};

    use super::*;

    #[test]
    fn named_zone_follows_dst() {
        let z = Zone::Named(chrono_tz::America::New_York);
        let winter = Utc.with_ymd_and_hms(2026, 1, 10, 12, 0, 0).single().unwrap_or_default();
        let summer = Utc.with_ymd_and_hms(2026, 7, 10, 12, 0, 0).single().unwrap_or_default();
        assert_eq!(winter.with_timezone(&z).format("%H:%M %z").to_string(), "07:00 -0500");
        assert_eq!(summer.with_timezone(&z).format("%H:%M %z").to_string(), "08:00 -0400");
        // Arithmetic that rebuilds the zone from the offset stays in the zone.
        let later = summer.with_timezone(&z) + chrono::TimeDelta::days(180);
        assert_eq!(later.format("%H:%M %z").to_string(), "07:00 -0500");
        let cron = crate::schedule::CronSchedule::parse("0 * * * *").unwrap_or_else(|e| panic!("{e}"));
        let next = cron.next_after(winter, &z).unwrap_or_default();
        assert_eq!(next.with_timezone(&z).format("%H:%M").to_string(), "08:00");
    }
}
