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

/// A parsed cron expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronSchedule {
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
        Ok(CronSchedule { source: source.to_string(), fields, cron, too_frequent })
    }

    /// The expression as written (trimmed).
    pub fn as_str(&self) -> &str {
        &self.source
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
        let found = self.cron.find_previous_occurrence(&local, inclusive).ok()?;
        Some(found.to_utc())
    }

    /// The earliest occurrence strictly after `t`, evaluated on `tz`'s wall clock.
    pub fn next_after<Tz: TimeZone>(&self, t: DateTime<Utc>, tz: &Tz) -> Option<DateTime<Utc>> {
        if !searchable(t) {
            return None;
        }
        // Every occurrence is a whole second, so "after the floored second" is "after t".
        let local = t.trunc_subsecs(0).with_timezone(tz);
        let found = self.cron.find_next_occurrence(&local, false).ok()?;
        Some(found.to_utc())
    }

    /// Whether two consecutive occurrences can be less than 5 minutes apart (on the wall
    /// clock). Every fire is an agent run, so such a schedule deserves a warning. Computed once
    /// at parse time from the field sets.
    pub fn fires_more_often_than_every_5_minutes(&self) -> bool {
        self.too_frequent
    }

    /// A short English description for hover text, such as "at 09:00 on weekdays".
    pub fn describe(&self) -> String {
        self.describe_common().unwrap_or_else(|| {
            let text = self.cron.describe();
            lower_first(text.trim().trim_end_matches('.'))
        })
    }

    fn describe_common(&self) -> Option<String> {
        let p = &self.cron.pattern;
        if p.matches_dom_and_dow() || p.days.has_modifiers() || p.days_of_week.has_modifiers() {
            return None;
        }
        let [sec, min, hour, _, month, _] = &self.fields;
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
        f.write_str(&self.source)
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
    if n == 1 { format!("every {unit}") } else { format!("every {n} {unit}s") }
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
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
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
mod tests {
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
            let want =
                if expr == "@weekly" { "2026-05-10T00:00:00+00:00" } else { "2026-05-10T09:00:00+00:00" };
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
        let got: Vec<String> =
            cases.iter().map(|expr| format!("{expr:<28} {}", cron(expr).describe())).collect();
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
        assert_eq!(
            "0 9 * * 1".parse::<CronSchedule>().map(|c| c.describe()),
            Ok("at 09:00 on Mondays".into())
        );
    }
}
