//! Cron expressions as SPEC section 3 defines them: 5 fields, or 6 with a leading seconds
//! field, `@hourly`-style nicknames, names, ranges, steps and lists, with Vixie day semantics,
//! evaluated in a local time zone.
//!
//! Evaluation is delegated to `croner`, which already numbers weekdays from Sunday = 0 (7 is
//! also Sunday) and ORs day-of-month with day-of-week when both are restricted. Two things are
//! added on top of it: a lexical check per field (croner replaces names anywhere in the string,
//! so `MON * * * *` would silently mean minute 1), and Vixie's rule that a day field starting
//! with `*` (such as `*/2`) makes the two day fields combine with AND.
//!
//! DST follows croner: a fixed time that falls in a spring-forward gap fires at the first
//! instant after the gap; a fixed time that happens twice fires only on its first pass, while
//! a pattern with a wildcard or step in its time fields fires on both passes.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, Days, NaiveDate, SubsecRound, TimeZone, Utc};
use croner::Cron;
use croner::errors::CronError;
use croner::parser::{CronParser, Seconds, Year};

/// One field of a cron expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CronField {
    Second,
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
}

impl CronField {
    const ALL: [CronField; 6] = [
        CronField::Second,
        CronField::Minute,
        CronField::Hour,
        CronField::DayOfMonth,
        CronField::Month,
        CronField::DayOfWeek,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CronField::Second => "second",
            CronField::Minute => "minute",
            CronField::Hour => "hour",
            CronField::DayOfMonth => "day-of-month",
            CronField::Month => "month",
            CronField::DayOfWeek => "day-of-week",
        }
    }

    fn allowed(self) -> &'static str {
        match self {
            CronField::Second | CronField::Minute => "0-59",
            CronField::Hour => "0-23",
            CronField::DayOfMonth => "1-31",
            CronField::Month => "1-12 or JAN-DEC",
            CronField::DayOfWeek => "0-7 or SUN-SAT",
        }
    }
}

/// Why a cron expression was rejected, worded for the person who wrote it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CronParseError {
    message: String,
    field: Option<CronField>,
    token: Option<usize>,
}

impl CronParseError {
    fn whole(message: impl Into<String>) -> Self {
        CronParseError { message: message.into(), field: None, token: None }
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The field at fault, when the problem is inside one field.
    pub fn field(&self) -> Option<CronField> {
        self.field
    }

    /// Index of the offending whitespace-separated token in the expression as written, so an
    /// editor can underline just that token.
    pub fn token_index(&self) -> Option<usize> {
        self.token
    }
}

/// A parsed cron expression. Cheap to clone: every note that writes the same expression shares
/// one parse (croner's pattern is about 5 KB; a clone per note was 3 MB at 10,000 notes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronSchedule(std::sync::Arc<Parsed>);

#[derive(Debug, PartialEq, Eq)]
struct Parsed {
    source: String,
    // Upper-cased, nickname expanded, seconds first ("0" when the user wrote 5 fields).
    fields: [String; 6],
    cron: Cron,
    too_frequent: bool,
}

const MONTHS: [&str; 12] =
    ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAY_NAMES_PLURAL: [&str; 7] =
    ["Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"];

const PRESETS: [(&str, &str); 12] = [
    ("*/15 * * * *", "every 15 minutes"),
    ("*/30 * * * *", "every 30 minutes"),
    ("0 * * * *", "every hour, on the hour"),
    ("0 */2 * * *", "every 2 hours"),
    ("0 9-17 * * 1-5", "every hour from 09:00 to 17:00 on weekdays"),
    ("0 9 * * *", "daily at 09:00"),
    ("0 9 * * 1-5", "09:00 on weekdays"),
    ("0 8,17 * * *", "08:00 and 17:00 every day"),
    ("0 9 * * 1", "09:00 on Mondays"),
    ("0 17 * * 5", "17:00 on Fridays"),
    ("0 9 1 * *", "09:00 on the 1st of every month"),
    ("0 0 * * 0", "midnight on Sundays"),
];

/// Common schedules with a short meaning, for completion lists.
pub fn presets() -> &'static [(&'static str, &'static str)] {
    &PRESETS
}

/// Parsed expressions by source text. A vault uses a handful of distinct expressions and the
/// language server re-validates on every keystroke, while croner's parse costs ~13 µs; the
/// cache makes validation of a typical block several times cheaper. Bounded: cleared when full.
static CACHE: std::sync::Mutex<
    Option<std::collections::HashMap<String, Result<CronSchedule, CronParseError>>>,
> = std::sync::Mutex::new(None);
const CACHE_CAPACITY: usize = 512;

impl CronSchedule {
    pub fn parse(expr: &str) -> Result<CronSchedule, CronParseError> {
        // A poisoned lock only means another thread panicked mid-insert; the map is still valid.
        let mut guard = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let cache = guard.get_or_insert_with(Default::default);
        if let Some(hit) = cache.get(expr) {
            return hit.clone();
        }
        let parsed = Self::parse_uncached(expr);
        if cache.len() >= CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(expr.to_owned(), parsed.clone());
        parsed
    }

    /// Parse without the cache (what the cache stores).
    pub fn parse_uncached(expr: &str) -> Result<CronSchedule, CronParseError> {
        let source = expr.trim();
        if source.is_empty() {
            return Err(CronParseError::whole("the cron expression is empty"));
        }
        let expanded = if source.starts_with('@') { expand_nickname(source)? } else { source };
        let tokens: Vec<&str> = expanded.split_whitespace().collect();
        let first_field = match tokens.len() {
            5 => 1,
            6 => 0,
            n => {
                return Err(CronParseError::whole(format!(
                    "expected 5 fields (minute hour day-of-month month day-of-week), or 6 with a \
                     leading seconds field, but found {n}"
                )));
            }
        };
        // The seconds field defaults to 0, so a 5-field expression fires on the minute.
        let mut fields: [String; 6] = Default::default();
        fields[0] = "0".to_string();
        for (offset, token) in tokens.iter().enumerate() {
            let field = CronField::ALL[first_field + offset];
            fields[first_field + offset] = normalize_field(field, token, offset)?;
        }
        apply_vixie_star_rule(&mut fields);

        let parser = CronParser::builder().seconds(Seconds::Optional).year(Year::Disallowed).build();
        let cron = parser
            .parse(&fields.join(" "))
            .map_err(|e| explain(&parser, &e, &fields, &tokens, first_field))?;
        check_can_fire(&cron, &tokens, first_field)?;
        let too_frequent = fires_within_five_minutes(&cron);
        Ok(CronSchedule(std::sync::Arc::new(Parsed {
            source: source.to_string(),
            fields,
            cron,
            too_frequent,
        })))
    }

    /// The expression as written (trimmed).
    pub fn as_str(&self) -> &str {
        &self.0.source
    }

    /// The latest occurrence strictly before `t`, evaluated on `tz`'s wall clock.
    pub fn prev_before<Tz: TimeZone>(&self, t: DateTime<Utc>, tz: &Tz) -> Option<DateTime<Utc>> {
        if !searchable(t) {
            return None;
        }
        // croner works in whole seconds and drops the fraction; an occurrence at the floored
        // second is still strictly before a `t` that had a fraction.
        let floored = t.trunc_subsecs(0);
        let inclusive = floored < t;
        let local = floored.with_timezone(tz);
        let found = self.0.cron.find_previous_occurrence(&local, inclusive).ok()?;
        Some(found.to_utc())
    }

    /// The earliest occurrence strictly after `t`, evaluated on `tz`'s wall clock.
    pub fn next_after<Tz: TimeZone>(&self, t: DateTime<Utc>, tz: &Tz) -> Option<DateTime<Utc>> {
        if !searchable(t) {
            return None;
        }
        // Every occurrence is a whole second, so "after the floored second" is "after t".
        let local = t.trunc_subsecs(0).with_timezone(tz);
        let found = self.0.cron.find_next_occurrence(&local, false).ok()?;
        Some(found.to_utc())
    }

    /// Whether two consecutive occurrences can be less than 5 minutes apart (on the wall
    /// clock). Every fire is an agent run, so such a schedule deserves a warning. Computed once
    /// at parse time from the field sets.
    pub fn fires_more_often_than_every_5_minutes(&self) -> bool {
        self.0.too_frequent
    }

    /// A short English description for hover text, such as "at 09:00 on weekdays".
    pub fn describe(&self) -> String {
        self.describe_common().unwrap_or_else(|| {
            let text = self.0.cron.describe();
            lower_first(text.trim().trim_end_matches('.'))
        })
    }

    fn describe_common(&self) -> Option<String> {
        let p = &self.0.cron.pattern;
        if p.matches_dom_and_dow() || p.days.has_modifiers() || p.days_of_week.has_modifiers() {
            return None;
        }
        let [sec, min, hour, _, month, _] = &self.0.fields;
        let minutes = p.minutes.values();
        let (time, fixed) = time_phrase(
            shape(sec, p.seconds.values())?,
            shape(min, minutes.clone())?,
            shape(hour, p.hours.values())?,
            &minutes,
        )?;

        let months = match shape(month, p.months.values())? {
            Shape::Any => None,
            Shape::Values(v) if v.len() == 12 => None,
            Shape::Values(v) => Some(v),
            Shape::Every(_) => return None,
        };
        let dom = p.days.values();
        let dow = p.days_of_week.values();
        let dom_restricted = !p.is_dom_wildcard() && dom.len() < 31;
        let dow_restricted = !p.is_dow_wildcard() && dow.len() < 7;
        // With OR semantics, a day field written out in full (`0-6`, `1-31`) makes every day
        // match, whatever the other field says.
        let every_day = (!dom_restricted && !dow_restricted)
            || (!p.is_dow_wildcard() && dow.len() == 7)
            || (!p.is_dom_wildcard() && dom.len() == 31);

        let mut months_said = false;
        let days = if every_day {
            None
        } else {
            let of_months = || match &months {
                None => Some("every month".to_string()),
                Some(v) if v.len() <= 4 => Some(join_and(&month_names(v))),
                Some(_) => None,
            };
            let dom_part = if dom_restricted && dom.len() <= 5 {
                let ordinals: Vec<String> = dom.iter().map(|&d| ordinal(d)).collect();
                months_said = months.is_some();
                Some(format!("the {} of {}", join_and(&ordinals), of_months()?))
            } else if dom_restricted {
                return None;
            } else {
                None
            };
            let dow_part = dow_restricted.then(|| weekdays_phrase(&dow));
            Some(match (dom_part, dow_part) {
                (Some(d), Some(w)) => format!("on {d} and on {w}"),
                (Some(d), None) => format!("on {d}"),
                (None, Some(w)) => format!("on {w}"),
                (None, None) => return None,
            })
        };

        let month_part = match &months {
            _ if months_said => None,
            None => None,
            Some(v) if is_contiguous(v) && v.len() >= 3 => {
                let names = month_names(v);
                Some(format!("from {} to {}", names.first()?, names.last()?))
            }
            Some(v) if v.len() <= 6 => Some(format!("in {}", join_and(&month_names(v)))),
            Some(_) => return None,
        };

        let mut out = match days {
            None if fixed && month_part.is_none() => format!("daily {time}"),
            None if fixed => format!("{time} every day"),
            None => time,
            Some(days) => format!("{time} {days}"),
        };
        if let Some(m) = month_part {
            out.push(' ');
            out.push_str(&m);
        }
        Some(out)
    }
}

impl FromStr for CronSchedule {
    type Err = CronParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CronSchedule::parse(s)
    }
}

impl fmt::Display for CronSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.source)
    }
}

/// croner only searches years 1 to 5000 and panics converting instants whose local time chrono
/// cannot represent, so instants far outside that range have no occurrences.
fn searchable(t: DateTime<Utc>) -> bool {
    (2..=5000).contains(&t.year())
}

fn expand_nickname(text: &str) -> Result<&'static str, CronParseError> {
    match text.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => Ok("0 0 1 1 *"),
        "@monthly" => Ok("0 0 1 * *"),
        "@weekly" => Ok("0 0 * * 0"),
        "@daily" | "@midnight" => Ok("0 0 * * *"),
        "@hourly" => Ok("0 * * * *"),
        "@reboot" => Err(CronParseError::whole(
            "@reboot is not supported: livenote has no boot event (try @hourly or a window)",
        )),
        _ => Err(CronParseError::whole(format!(
            "unknown nickname `{text}`: use @hourly, @daily, @weekly, @monthly or @yearly"
        ))),
    }
}

/// Checks one field's characters and names, and returns it upper-cased for croner.
fn normalize_field(field: CronField, token: &str, index: usize) -> Result<String, CronParseError> {
    let fail = |reason: String| CronParseError {
        message: format!("{} field `{token}`: {reason}", field.name()),
        field: Some(field),
        token: Some(index),
    };
    let upper = token.to_ascii_uppercase();
    if upper.split(',').any(str::is_empty) {
        return Err(fail("empty entry in the list".to_string()));
    }
    let bytes = upper.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii_alphabetic() {
            let start = i;
            while bytes.get(i).is_some_and(u8::is_ascii_alphabetic) {
                i += 1;
            }
            let word = upper.get(start..i).unwrap_or_default();
            // Upper-casing ASCII keeps byte offsets, so the same slice shows what was written.
            let written = token.get(start..i).unwrap_or(word);
            let known = match field {
                CronField::Month => MONTHS.contains(&word),
                CronField::DayOfWeek => DAYS.contains(&word) || word == "L",
                CronField::DayOfMonth => matches!(word, "L" | "W" | "LW"),
                _ => false,
            };
            if !known {
                return Err(fail(match field {
                    CronField::Month => format!("unknown month `{written}` (use JAN-DEC or 1-12)"),
                    CronField::DayOfWeek => format!("unknown day `{written}` (use SUN-SAT or 0-7)"),
                    _ => format!("`{written}` is not allowed here (use {})", field.allowed()),
                }));
            }
            continue;
        }
        let allowed = match b {
            b'0'..=b'9' | b'*' | b'/' | b',' | b'-' => true,
            b'?' => matches!(field, CronField::DayOfMonth | CronField::DayOfWeek),
            b'#' => field == CronField::DayOfWeek,
            // croner's own marker for "day of month AND day of week".
            b'+' => field == CronField::DayOfWeek && i == 0,
            _ => false,
        };
        if !allowed {
            let ch = upper.get(i..).and_then(|rest| rest.chars().next()).unwrap_or('?');
            return Err(fail(format!("unexpected character `{ch}`")));
        }
        i += 1;
    }
    Ok(upper)
}

/// Vixie cron treats a day field that starts with `*` (even `*/2`) as unrestricted for the
/// OR rule, so the other day field then has to match too. croner only does that for a bare
/// `*`; its `+` prefix on the day-of-week field asks for AND explicitly.
fn apply_vixie_star_rule(fields: &mut [String; 6]) {
    let bare = |f: &str| f == "*" || f == "?";
    let starry = |f: &str| f.starts_with('*') || f.starts_with('?');
    let (dom, dow) = (&fields[3], &fields[5]);
    if !bare(dom) && !bare(dow) && !dow.starts_with('+') && (starry(dom) || starry(dow)) {
        fields[5] = format!("+{dow}");
    }
}

/// Turns a croner error into a message that names the field and says what is wrong with it.
fn explain(
    parser: &CronParser,
    err: &CronError,
    fields: &[String; 6],
    tokens: &[&str],
    first_field: usize,
) -> CronParseError {
    // croner does not say which field failed, so each field is parsed alone among wildcards.
    for (i, field) in CronField::ALL.into_iter().enumerate() {
        if i < first_field {
            continue;
        }
        let mut probe = ["0", "*", "*", "*", "*", "*"];
        probe[i] = &fields[i];
        if let Err(e) = parser.parse(&probe.join(" ")) {
            let token = tokens.get(i - first_field).copied().unwrap_or_default();
            return CronParseError {
                message: format!("{} field `{token}`: {}", field.name(), reason(&e, field)),
                field: Some(field),
                token: Some(i - first_field),
            };
        }
    }
    CronParseError::whole(lower_first(err.to_string().trim_end_matches('.')))
}

fn reason(err: &CronError, field: CronField) -> String {
    let raw = match err {
        CronError::ComponentError(m) | CronError::InvalidPattern(m) => m.as_str(),
        CronError::IllegalCharacters(_) => return "unexpected character".to_string(),
        other => return lower_first(other.to_string().trim_end_matches('.')),
    };
    if raw == "Range out of bounds." || raw == "Range is out of bounds in stepping." {
        format!("range out of bounds or backwards (allowed {})", field.allowed())
    } else if raw.contains("out of bounds") {
        format!("out of range (allowed {})", field.allowed())
    } else if raw == "Step cannot be zero." {
        "a step cannot be 0".to_string()
    } else if let Some(rest) = raw.strip_prefix("Invalid step syntax: ") {
        lower_first(rest.trim_end_matches('.'))
    } else if raw.starts_with("Invalid") {
        "expected a number, a range a-b, a list a,b or a step */n".to_string()
    } else {
        lower_first(raw.trim_end_matches('.'))
    }
}

/// Rejects day-of-month/month combinations that no calendar has (`0 0 30 2 *`), which would
/// otherwise make every search run to croner's year limit.
fn check_can_fire(cron: &Cron, tokens: &[&str], first_field: usize) -> Result<(), CronParseError> {
    let p = &cron.pattern;
    let day_of_month_decides = p.is_dow_wildcard() || p.matches_dom_and_dow();
    if p.is_dom_wildcard() || p.days.has_modifiers() || !day_of_month_decides {
        return Ok(());
    }
    let days = p.days.values();
    let months = p.months.values();
    let longest = |m: u16| match m {
        2 => 29,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if months.iter().any(|&m| days.iter().any(|&d| d <= longest(m))) {
        return Ok(());
    }
    // Day of month is field 3 counting the seconds field.
    let token = 3usize.checked_sub(first_field).filter(|&t| t < tokens.len());
    let days: Vec<String> = days.iter().map(u16::to_string).collect();
    Err(CronParseError {
        message: format!(
            "never fires: there is no day {} in {}",
            join_or(&days),
            join_or(&month_names(&months))
        ),
        field: Some(CronField::DayOfMonth),
        token,
    })
}

fn fires_within_five_minutes(cron: &Cron) -> bool {
    let p = &cron.pattern;
    let seconds = p.seconds.values();
    if seconds.len() > 1 {
        return true;
    }
    let minutes = p.minutes.values();
    let (Some(&first), Some(&last)) = (minutes.first(), minutes.last()) else {
        return false;
    };
    if minutes.windows(2).any(|w| w[1] - w[0] < 5) {
        return true;
    }
    // From the last minute of one hour to the first minute of the next.
    if 60 - last + first >= 5 {
        return false;
    }
    let hours = p.hours.values();
    if hours.windows(2).any(|w| w[1] - w[0] == 1) {
        return true;
    }
    let second = seconds.first().copied().unwrap_or(0);
    hours.first() == Some(&0)
        && hours.last() == Some(&23)
        && consecutive_days_match(cron, first, last, second)
}

/// Whether some day at 23:`last` and the next day at 00:`first` both match. Sampled over one
/// leap year, which is enough for a warning and keeps parsing cheap.
fn consecutive_days_match(cron: &Cron, first: u16, last: u16, second: u16) -> bool {
    let Some(mut day) = NaiveDate::from_ymd_opt(2027, 12, 31) else {
        return false;
    };
    let matches = |date: NaiveDate, hour: u32, minute: u16| {
        date.and_hms_opt(hour, minute.into(), second.into())
            .is_some_and(|t| cron.is_time_matching(&t).unwrap_or(false))
    };
    for _ in 0..367 {
        let Some(next) = day.checked_add_days(Days::new(1)) else {
            return false;
        };
        if matches(day, 23, last) && matches(next, 0, first) {
            return true;
        }
        day = next;
    }
    false
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    Any,
    Every(u16),
    Values(Vec<u16>),
}

fn shape(text: &str, values: Vec<u16>) -> Option<Shape> {
    if text == "*" || text == "?" {
        return Some(Shape::Any);
    }
    if let Some(step) = text.strip_prefix("*/") {
        return step.parse().ok().map(Shape::Every);
    }
    Some(Shape::Values(values))
}

/// Describes the time-of-day part; the flag says whether it names fixed clock times (so that a
/// schedule without day restrictions reads "daily at ...").
fn time_phrase(sec: Shape, min: Shape, hour: Shape, minutes: &[u16]) -> Option<(String, bool)> {
    let s = match (&sec, &min, &hour) {
        (Shape::Values(v), ..) if v.len() == 1 => v[0],
        (Shape::Any, Shape::Any, Shape::Any) => return Some(("every second".into(), false)),
        (Shape::Every(n), Shape::Any, Shape::Any) => return Some((every(*n, "second"), false)),
        _ => return None,
    };
    let on_minute = s == 0;
    let clock = |h: u16, m: u16| {
        if on_minute { format!("{h:02}:{m:02}") } else { format!("{h:02}:{m:02}:{s:02}") }
    };
    let phrase = match (&min, &hour) {
        (Shape::Any, Shape::Any) if on_minute => every(1, "minute"),
        (Shape::Every(n), Shape::Any) if on_minute && divides(*n, 60) => every(*n, "minute"),
        (Shape::Values(ms), Shape::Any) if on_minute => match ms.as_slice() {
            [0] => "every hour".to_string(),
            [m] => format!("at minute {m} of every hour"),
            ms if ms.len() <= 6 => format!("at minutes {} of every hour", join_and(&numbers(ms))),
            _ => return None,
        },
        (Shape::Values(ms), Shape::Every(n)) if on_minute && divides(*n, 24) => match ms.as_slice() {
            [0] => every(*n, "hour"),
            [m] if *n == 1 => format!("at minute {m} of every hour"),
            [m] => format!("every {n} hours at minute {m}"),
            _ => return None,
        },
        (Shape::Values(ms), Shape::Values(hs)) => {
            if let ([m], true) = (ms.as_slice(), hs.len() >= 3 && is_contiguous(hs)) {
                let (first, last) = (hs.first()?, hs.last()?);
                return Some((
                    format!("every hour from {} to {}", clock(*first, *m), clock(*last, *m)),
                    false,
                ));
            }
            if ms.len() * hs.len() > 6 {
                return None;
            }
            let times: Vec<String> =
                hs.iter().flat_map(|&h| ms.iter().map(move |&m| (h, m))).map(|(h, m)| clock(h, m)).collect();
            return Some((format!("at {}", join_and(&times)), true));
        }
        (Shape::Every(_) | Shape::Any, Shape::Values(hs)) if on_minute && is_contiguous(hs) => {
            let n = match min {
                Shape::Every(n) => n,
                _ => 1,
            };
            if hs.len() > 1 && !divides(n, 60) {
                return None;
            }
            let (first, last) = (hs.first()?, hs.last()?);
            let (m0, m1) = (minutes.first()?, minutes.last()?);
            format!("{} from {} to {}", every(n, "minute"), clock(*first, *m0), clock(*last, *m1))
        }
        _ => return None,
    };
    Some((phrase, false))
}

/// Whether steps of `n` repeat evenly across the wrap (so "every n minutes" stays true at :00).
fn divides(n: u16, whole: u16) -> bool {
    n != 0 && whole.is_multiple_of(n)
}

fn every(n: u16, unit: &str) -> String {
    if n == 1 { format!("every {unit}") } else { format!("every {}", crate::text::count(n.into(), unit)) }
}

fn weekdays_phrase(days: &[u16]) -> String {
    match days {
        [1, 2, 3, 4, 5] => "weekdays".to_string(),
        [0, 6] => "weekends".to_string(),
        _ => {
            // Monday first, the way people list a week.
            let mut sorted = days.to_vec();
            sorted.sort_by_key(|d| (d + 6) % 7);
            let names: Vec<String> = sorted
                .iter()
                .filter_map(|&d| DAY_NAMES_PLURAL.get(usize::from(d)))
                .map(|s| s.to_string())
                .collect();
            join_and(&names)
        }
    }
}

fn month_names(months: &[u16]) -> Vec<String> {
    months
        .iter()
        .filter_map(|&m| MONTH_NAMES.get(usize::from(m).wrapping_sub(1)))
        .map(|s| s.to_string())
        .collect()
}

fn numbers(values: &[u16]) -> Vec<String> {
    values.iter().map(u16::to_string).collect()
}

fn ordinal(n: u16) -> String {
    crate::text::count::ordinal(n)
}

fn is_contiguous(values: &[u16]) -> bool {
    !values.is_empty() && values.windows(2).all(|w| w[1] == w[0] + 1)
}

fn join_with(items: &[String], last_sep: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{}{last_sep}{last}", init.join(", ")),
    }
}

fn join_and(items: &[String]) -> String {
    join_with(items, " and ")
}

fn join_or(items: &[String]) -> String {
    join_with(items, " or ")
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
#[path = "cron_tests.rs"]
mod tests;
