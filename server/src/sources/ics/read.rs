//! Reading an iCalendar file: each VEVENT's date-times in their own zone (TZID, IANA or
//! Windows names), durations, and the expansion of RRULE/RDATE/EXDATE into occurrences, with
//! what could not be read collected as problems. `ics` builds the digest from these.

use super::*;

// ---------------------------------------------------------------------------------------------
// Reading VEVENTs

/// A DTSTART, DTEND, RECURRENCE-ID, RDATE or EXDATE value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum When {
    Date(NaiveDate),
    /// No zone: the same wall-clock time wherever the reader is.
    Floating(NaiveDateTime),
    Utc(DateTime<Utc>),
    Zoned(NaiveDateTime, chrono_tz::Tz),
}

impl When {
    /// How an occurrence is named across polls and matched with its RECURRENCE-ID.
    pub(super) fn key(&self) -> String {
        match self {
            When::Date(d) => d.to_string(),
            When::Floating(t) => t.format("%Y-%m-%dT%H:%M:%S").to_string(),
            When::Utc(_) | When::Zoned(..) => self.instant(Zone::Named(chrono_tz::UTC)).to_rfc3339(),
        }
    }

    /// The instant, reading dates and floating times in `local`.
    pub(super) fn instant(&self, local: Zone) -> DateTime<Utc> {
        match self {
            When::Date(d) => midnight(local, *d),
            When::Floating(t) => local_instant(local, *t),
            When::Utc(t) => *t,
            When::Zoned(t, tz) => local_instant(Zone::Named(*tz), *t),
        }
    }

    pub(super) fn naive(&self) -> NaiveDateTime {
        match self {
            When::Date(d) => d.and_time(NaiveTime::MIN),
            When::Floating(t) | When::Zoned(t, _) => *t,
            When::Utc(t) => t.naive_utc(),
        }
    }

    /// The same kind of value at `t` (an occurrence of a rule expanded in this one's zone).
    pub(super) fn like(&self, t: NaiveDateTime) -> When {
        match self {
            When::Date(_) => When::Date(t.date()),
            When::Floating(_) => When::Floating(t),
            When::Utc(_) => When::Utc(Utc.from_utc_datetime(&t)),
            When::Zoned(_, tz) => When::Zoned(t, *tz),
        }
    }

    /// The zone rules are expanded in: the event's own, or UTC standing in for wall-clock
    /// time (dates and floating times).
    pub(super) fn carrier(&self) -> rrule::Tz {
        match self {
            When::Zoned(_, tz) => rrule::Tz::Tz(*tz),
            _ => rrule::Tz::UTC,
        }
    }

    /// `other` (an RDATE or EXDATE, maybe in another zone) as a wall-clock time in this
    /// one's carrier.
    pub(super) fn in_carrier_of(&self, other: &When) -> NaiveDateTime {
        match (self, other) {
            (When::Zoned(_, tz), When::Utc(_) | When::Zoned(..)) => {
                other.instant(Zone::Named(chrono_tz::UTC)).with_timezone(tz).naive_local()
            }
            (When::Date(start), When::Date(d)) => d.and_time(start.and_time(NaiveTime::MIN).time()),
            (When::Zoned(t, _) | When::Floating(t), When::Date(d)) => d.and_time(t.time()),
            (When::Utc(t), When::Date(d)) => d.and_time(t.time()),
            (When::Utc(_), When::Zoned(..)) => other.instant(Zone::Named(chrono_tz::UTC)).naive_utc(),
            _ => other.naive(),
        }
    }
}

/// One VEVENT as read.
#[derive(Debug)]
pub(super) struct RawEvent {
    pub(super) uid: String,
    pub(super) title: String,
    pub(super) location: Option<String>,
    pub(super) status: String,
    pub(super) start: When,
    pub(super) end: Option<When>,
    pub(super) duration: Option<TimeDelta>,
    pub(super) rrules: Vec<String>,
    pub(super) rdates: Vec<When>,
    pub(super) exdates: Vec<When>,
    pub(super) recurrence_id: Option<When>,
}

/// One occurrence: where it starts and how long it lasts.
pub(super) struct Occurrence {
    pub(super) start: When,
    pub(super) length: TimeDelta,
}

impl RawEvent {
    pub(super) fn read(c: &Component<'_>, problems: &mut Problems) -> Option<RawEvent> {
        let text = |name: &str| {
            c.properties
                .iter()
                .find(|p| p.name.as_str().eq_ignore_ascii_case(name))
                .map(|p| one_line(p.val.clone().unescape_text().as_str(), MAX_FIELD))
                .filter(|s| !s.is_empty())
        };
        let props = |name: &'static str| {
            c.properties.iter().filter(move |p| p.name.as_str().eq_ignore_ascii_case(name))
        };
        let when = |name: &'static str, problems: &mut Problems| {
            props(name).next().and_then(|p| read_when(p, problems).into_iter().next())
        };
        let start = when("DTSTART", problems)?;
        let title = text("SUMMARY").unwrap_or_else(|| "(no title)".to_owned());
        let duration = text("DURATION").and_then(|d| {
            let parsed = parse_duration(&d);
            if parsed.is_none() {
                problems.push(format!("`{title}`: its DURATION `{}` is not understood", one_line(&d, 40)));
            }
            parsed
        });
        let uid = text("UID")
            .map(|u| clip(&u, MAX_FIELD))
            .unwrap_or_else(|| format!("hash:{}", hash(&[title.as_str(), start.key().as_str()])));
        let status = match text("STATUS").map(|s| s.to_ascii_uppercase()).as_deref() {
            Some("CANCELLED") => "cancelled",
            Some("TENTATIVE") => "tentative",
            _ => "confirmed",
        };
        let mut rdates = Vec::new();
        for p in props("RDATE") {
            rdates.extend(read_when(p, problems));
        }
        let mut exdates = Vec::new();
        for p in props("EXDATE") {
            exdates.extend(read_when(p, problems));
        }
        Some(RawEvent {
            uid,
            title,
            location: text("LOCATION"),
            status: status.to_owned(),
            end: when("DTEND", problems),
            duration,
            rrules: props("RRULE").map(|p| p.val.as_str().trim().to_owned()).collect(),
            rdates,
            exdates,
            recurrence_id: when("RECURRENCE-ID", problems),
            start,
        })
    }

    pub(super) fn recurs(&self) -> bool {
        !self.rrules.is_empty() || !self.rdates.is_empty()
    }

    /// DTEND − DTSTART, else DURATION, else a day for an all-day event and nothing for a
    /// timed one (RFC 5545 3.6.1).
    pub(super) fn length(&self) -> TimeDelta {
        let default = match self.start {
            When::Date(_) => TimeDelta::days(1),
            _ => TimeDelta::zero(),
        };
        let utc = Zone::Named(chrono_tz::UTC);
        let length = match (&self.end, self.duration) {
            (Some(end @ (When::Date(_) | When::Floating(_))), _) => end.naive() - self.start.naive(),
            (Some(end), _) => end.instant(utc) - self.start.instant(utc),
            (None, Some(d)) => d,
            (None, None) => default,
        };
        if length < TimeDelta::zero() { default } else { length }
    }

    /// The occurrences that may meet the window (with a day's margin either side, which
    /// wall-clock times need before they are placed in the local zone).
    /// Each occurrence walked through is a step of `spending`, the calendar's budget: once it
    /// is spent, a recurring event gets the occurrences found so far and no more.
    pub(super) fn occurrences(
        &self,
        window: &Window,
        problems: &mut Problems,
        spending: &mut Spending,
    ) -> Vec<Occurrence> {
        let length = self.length();
        if !self.recurs() {
            return vec![Occurrence { start: self.start.clone(), length }];
        }
        let carrier = self.start.carrier();
        let Some(dtstart) = carrier.from_local_datetime(&self.start.naive()).earliest() else {
            problems.push(format!("`{}`: its start does not exist in its zone", self.title));
            return Vec::new();
        };
        let mut set = rrule::RRuleSet::new(dtstart);
        for rule in &self.rrules {
            // RFC 5545's rules are ASCII; `rrule` slices a BYDAY value by bytes and panicked
            // on `-1SUÅ` (found by the `ics` fuzz target).
            let parsed = if rule.is_ascii() {
                rule.parse::<rrule::RRule<rrule::Unvalidated>>()
                    .and_then(|r| r.validate(dtstart))
                    .map_err(|e| e.to_string())
            } else {
                Err("it is not ASCII".to_owned())
            };
            match parsed {
                Ok(r) => set = set.rrule(r),
                Err(e) => {
                    problems.push(format!(
                        "`{}`: its recurrence rule is not understood ({})",
                        self.title,
                        one_line(&e, 120)
                    ));
                    return vec![Occurrence { start: self.start.clone(), length }];
                }
            }
        }
        let in_carrier = |w: &When| carrier.from_local_datetime(&self.start.in_carrier_of(w)).earliest();
        for d in &self.rdates {
            if let Some(t) = in_carrier(d) {
                set = set.rdate(t);
            }
        }
        for d in &self.exdates {
            if let Some(t) = in_carrier(d) {
                set = set.exdate(t);
            }
        }
        // A step of its own for each recurring event: a rule that never matches yields nothing,
        // after a search that may take a second, and its steps alone would not count it.
        if !spending.step() {
            spending.cut_short += 1;
            return Vec::new();
        }
        let margin = TimeDelta::days(1);
        // Checked: a length of thousands of years reaches past what a date-time can hold.
        let after = window
            .start
            .checked_sub_signed(length)
            .and_then(|t| t.checked_sub_signed(margin))
            .unwrap_or(DateTime::<Utc>::MIN_UTC)
            .with_timezone(&carrier);
        let before =
            window.end.checked_add_signed(margin).unwrap_or(DateTime::<Utc>::MAX_UTC).with_timezone(&carrier);
        // By hand rather than `all()`, which walks every occurrence from DTSTART to the window
        // without a bound: `FREQ=SECONDLY` from 1990 is a billion steps. `limit()` bounds the
        // search for each next one (a rule that never matches).
        let mut found = Vec::new();
        for (step, t) in set.limit().into_iter().enumerate() {
            if step >= MAX_STEPS || found.len() >= usize::from(MAX_OCCURRENCES) {
                problems.push(format!("`{}`: its recurrence is too dense to expand this far", self.title));
                break;
            }
            if !spending.step() {
                spending.cut_short += 1;
                break;
            }
            if t > before {
                break;
            }
            if t >= after {
                found.push(Occurrence { start: self.start.like(t.naive_local()), length });
            }
        }
        found
    }

    /// The occurrence as a digest event, when it meets the window.
    pub(super) fn event_at(
        &self,
        occ: &Occurrence,
        instance: Option<String>,
        window: &Window,
    ) -> Option<DigestEvent> {
        let zone = window.zone;
        let (start, end, all_day) = match &occ.start {
            When::Date(d) => {
                let days = occ.length.num_days().max(1);
                let last = TimeDelta::try_days(days - 1).and_then(|n| d.checked_add_signed(n)).unwrap_or(*d);
                let (from, to) = (midnight(zone, *d), midnight(zone, last.succ_opt().unwrap_or(last)));
                if !window.meets(from, to) {
                    return None;
                }
                (shown_date(*d).to_string(), shown_date(last).to_string(), true)
            }
            When::Floating(t) => {
                let end = t.checked_add_signed(occ.length).unwrap_or(*t);
                let (from, to) = (local_instant(zone, *t), local_instant(zone, end));
                if !window.meets(from, to) {
                    return None;
                }
                (rfc3339(zone, from), rfc3339(zone, to), false)
            }
            other => {
                let from = other.instant(zone);
                let to = from.checked_add_signed(occ.length).unwrap_or(from);
                if !window.meets(from, to) {
                    return None;
                }
                (rfc3339(zone, from), rfc3339(zone, to), false)
            }
        };
        Some(DigestEvent {
            uid: self.uid.clone(),
            instance,
            title: self.title.clone(),
            start,
            end,
            all_day,
            location: self.location.clone(),
            status: self.status.clone(),
        })
    }
}

/// `t` as the digest shows it: RFC 3339 in the local zone, within [`shown_instant`]'s years.
pub(super) fn rfc3339(zone: Zone, t: DateTime<Utc>) -> String {
    shown_instant(t).with_timezone(&zone).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// RFC 3339 has four-digit years, and livenote reads a digest's times back (to sort them, and
/// to tell what changed): an instant is shown between the start of year 1 and the end of 9999,
/// a day inside either end so that no zone's offset takes it out: an event lasting into year
/// 10000 or beyond ends on 30 December 9999 (found by the `ics` fuzz target: its end read
/// `+10000-01-01T13:44:59+13:45`, which no RFC 3339 reader takes).
fn shown_instant(t: DateTime<Utc>) -> DateTime<Utc> {
    let day =
        |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default().and_time(NaiveTime::MIN).and_utc();
    t.clamp(day(1, 1, 2), day(9_999, 12, 30))
}

/// A date as the digest shows it: within the years of [`shown_instant`].
fn shown_date(d: NaiveDate) -> NaiveDate {
    let day = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd).unwrap_or_default();
    d.clamp(day(1, 1, 1), day(9_999, 12, 31))
}

/// A date-time property's values (RDATE and EXDATE may list several; a PERIOD counts by its
/// start).
pub(super) fn read_when(p: &Property<'_>, problems: &mut Problems) -> Vec<When> {
    let param = |key: &str| {
        p.params
            .iter()
            .find(|x| x.key.as_str().eq_ignore_ascii_case(key))
            .and_then(|x| x.val.as_ref())
            .map(|v| v.as_str().trim_matches('"').to_owned())
    };
    let tz = match param("TZID") {
        Some(id) => match zone_named(&id) {
            Some(tz) => Some(tz),
            None => {
                problems
                    .push(format!("unknown time zone `{}`: its times are read as local", one_line(&id, 60)));
                None
            }
        },
        None => None,
    };
    let mut out = Vec::new();
    for value in p.val.as_str().split(',') {
        let value = value.split('/').next().unwrap_or("").trim();
        match parse_when(value, tz) {
            Some(w) => out.push(w),
            None => problems.push(format!("a date `{}` that is not understood", one_line(value, 40))),
        }
    }
    out
}

/// RFC 5545's forms only (`20260310`, `20260310T100000`, `20260310T100000Z`): chrono alone also
/// takes a signed year of six digits, and arithmetic on an instant near the edge of what it
/// can hold overflows. Four-digit years and durations of at most [`MAX_DURATION`] keep every
/// sum in range.
pub(super) fn parse_when(value: &str, tz: Option<chrono_tz::Tz>) -> Option<When> {
    let digits = |s: Option<&str>| s.is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()));
    if value.len() == 8 {
        if !digits(Some(value)) {
            return None;
        }
        return NaiveDate::parse_from_str(value, "%Y%m%d").ok().map(When::Date);
    }
    let (naive, utc) = match value.strip_suffix(['Z', 'z']) {
        Some(v) => (v, true),
        None => (value, false),
    };
    if naive.len() != 15 || !digits(naive.get(..8)) || !digits(naive.get(9..)) {
        return None;
    }
    let t = NaiveDateTime::parse_from_str(naive, "%Y%m%dT%H%M%S").ok()?;
    Some(match (utc, tz) {
        (true, _) => When::Utc(Utc.from_utc_datetime(&t)),
        (false, Some(tz)) => When::Zoned(t, tz),
        (false, None) => When::Floating(t),
    })
}

/// An IANA zone for a TZID: the name itself, an IANA-looking tail of it, or a Windows name.
pub(super) fn zone_named(id: &str) -> Option<chrono_tz::Tz> {
    let id = id.trim();
    if let Ok(tz) = id.parse() {
        return Some(tz);
    }
    let tails = id.char_indices().filter(|(_, c)| *c == '/').map(|(i, _)| &id[i + 1..]);
    if let Some(tz) = tails.filter_map(|t| t.parse().ok()).next() {
        return Some(tz);
    }
    WINDOWS_ZONES.iter().find(|(w, _)| w.eq_ignore_ascii_case(id)).and_then(|(_, iana)| iana.parse().ok())
}

/// The Windows zone names Outlook and Exchange write most, with CLDR's IANA equivalent.
pub(super) const WINDOWS_ZONES: [(&str, &str); 24] = [
    ("UTC", "UTC"),
    ("GMT Standard Time", "Europe/London"),
    ("W. Europe Standard Time", "Europe/Berlin"),
    ("Central Europe Standard Time", "Europe/Budapest"),
    ("Romance Standard Time", "Europe/Paris"),
    ("Central European Standard Time", "Europe/Warsaw"),
    ("E. Europe Standard Time", "Europe/Chisinau"),
    ("FLE Standard Time", "Europe/Kiev"),
    ("GTB Standard Time", "Europe/Bucharest"),
    ("Russian Standard Time", "Europe/Moscow"),
    ("Eastern Standard Time", "America/New_York"),
    ("Central Standard Time", "America/Chicago"),
    ("Mountain Standard Time", "America/Denver"),
    ("US Mountain Standard Time", "America/Phoenix"),
    ("Pacific Standard Time", "America/Los_Angeles"),
    ("Alaskan Standard Time", "America/Anchorage"),
    ("Hawaiian Standard Time", "Pacific/Honolulu"),
    ("E. South America Standard Time", "America/Sao_Paulo"),
    ("India Standard Time", "Asia/Kolkata"),
    ("China Standard Time", "Asia/Shanghai"),
    ("Tokyo Standard Time", "Asia/Tokyo"),
    ("Singapore Standard Time", "Asia/Singapore"),
    ("AUS Eastern Standard Time", "Australia/Sydney"),
    ("New Zealand Standard Time", "Pacific/Auckland"),
];

/// An RFC 5545 DURATION (`P1D`, `PT1H30M`, `P2W`, `-PT15M`).
pub(super) fn parse_duration(s: &str) -> Option<TimeDelta> {
    let s = s.trim();
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let s = s.strip_prefix(['P', 'p'])?;
    let mut total = TimeDelta::zero();
    let mut number = String::new();
    let mut in_time = false;
    for c in s.chars() {
        match c.to_ascii_uppercase() {
            'T' => in_time = true,
            d if d.is_ascii_digit() => number.push(d),
            unit => {
                let n: i64 = number.parse().ok()?;
                number.clear();
                let part = match (unit, in_time) {
                    ('W', false) => TimeDelta::try_weeks(n)?,
                    ('D', false) => TimeDelta::try_days(n)?,
                    ('H', true) => TimeDelta::try_hours(n)?,
                    ('M', true) => TimeDelta::try_minutes(n)?,
                    ('S', true) => TimeDelta::try_seconds(n)?,
                    _ => return None,
                };
                total = total.checked_add(&part)?;
            }
        }
    }
    if !number.is_empty() || total > MAX_DURATION {
        return None;
    }
    Some(if negative { -total } else { total })
}

// ---------------------------------------------------------------------------------------------
// Lines

/// A calendar's text as the parser reads it: every line ending CRLF, folded lines joined, with
/// the line of the file each line starts at (for errors that name it).
pub(super) struct Unfolded {
    pub(super) text: String,
    /// `lines[i]`: the file's line number (1-based) of line `i + 1` of `text`.
    lines: Vec<usize>,
}

impl Unfolded {
    /// Real calendars mix LF and CRLF (exports edited by hand, feeds concatenated), and a lone
    /// CR ends a line in old Mac exports: the parser reads a value up to the next CRLF, so one
    /// LF line would swallow the lines after it. Every line ends in CRLF here, which also
    /// keeps that search short. Blank lines carry nothing and are dropped.
    pub(super) fn of(text: &str) -> Unfolded {
        let mut out = String::with_capacity(text.len() + text.len() / 16);
        let mut lines = Vec::new();
        let physical = text.split('\n').flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'));
        for (i, line) in physical.enumerate() {
            match line.strip_prefix([' ', '\t']) {
                // A continuation (RFC 5545 3.1): the line break and the one blank go.
                Some(rest) if !lines.is_empty() => {
                    out.truncate(out.len() - 2);
                    out.push_str(rest);
                }
                _ if line.is_empty() => continue,
                _ => {
                    out.push_str(line);
                    lines.push(i + 1);
                }
            }
            out.push_str("\r\n");
        }
        Unfolded { text: out, lines }
    }

    /// The file's line number of line `n` (1-based) of the text.
    fn line_of(&self, n: usize) -> usize {
        n.checked_sub(1).and_then(|i| self.lines.get(i)).copied().unwrap_or(n)
    }

    fn numbered(&self) -> impl Iterator<Item = (usize, &str)> {
        self.text.split("\r\n").zip(self.lines.iter().copied()).map(|(l, n)| (n, l))
    }
}

/// The parser's first complaint (`0: at line 2, in Satisfy:` over the line, then more) as
/// "cannot be read at line 2: BEGIN:VEVENT", the line counted in the file.
pub(super) fn parse_error(e: &str, unfolded: &Unfolded) -> String {
    let mut lines = e.lines().skip_while(|l| !l.contains("at line "));
    let line = lines
        .next()
        .and_then(|l| l.split("at line ").nth(1))
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.trim().parse::<usize>().ok());
    match (line, lines.next()) {
        (Some(line), Some(text)) => {
            one_line(&format!("cannot be read at line {}: {text}", unfolded.line_of(line)), 200)
        }
        _ => one_line(e, 200),
    }
}

/// BEGIN and END lines pair up, at most [`MAX_DEPTH`] deep. Checked before the parser, which
/// recurses per level and, on a block left open or closed by another name, names where it gave
/// up rather than the line that is wrong.
pub(super) fn check_blocks(unfolded: &Unfolded) -> Result<(), IcsError> {
    let mut open: Vec<(&str, usize)> = Vec::new();
    let bad = |s: String| Err(IcsError::Malformed(one_line(&s, 200)));
    for (n, line) in unfolded.numbered() {
        let name = |p: &str| {
            line.get(..p.len()).filter(|head| head.eq_ignore_ascii_case(p)).and_then(|_| line.get(p.len()..))
        };
        if let Some(begun) = name("BEGIN:") {
            open.push((begun, n));
            if open.len() > MAX_DEPTH {
                return bad(format!("BEGIN blocks nested more than {MAX_DEPTH} deep at line {n}"));
            }
        } else if let Some(ended) = name("END:") {
            match open.pop() {
                Some((begun, _)) if begun == ended => {}
                Some((begun, at)) => {
                    return bad(format!("line {n}: END:{ended} does not close BEGIN:{begun} of line {at}"));
                }
                None => return bad(format!("line {n}: END:{ended} closes no BEGIN")),
            }
        }
    }
    match open.last() {
        Some((begun, at)) => bad(format!("line {at}: BEGIN:{begun} is never closed (no END:{begun})")),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// The budget

/// What is left of one calendar's [`Budget`] while its recurrences are expanded.
pub(super) struct Spending {
    steps_left: usize,
    until: Option<std::time::Instant>,
    spent: bool,
    /// Recurring events left out, or cut short, because the budget was spent.
    pub(super) cut_short: usize,
}

impl Spending {
    pub(super) fn of(budget: Budget) -> Spending {
        Spending {
            steps_left: budget.steps,
            until: std::time::Instant::now().checked_add(budget.time),
            spent: false,
            cut_short: 0,
        }
    }

    /// One step (an event begun, an occurrence walked through); false once the budget is
    /// spent. The clock is read at each: reading it costs a tenth of a step, and one step of a
    /// rule that never matches (`FREQ=MONTHLY;BYDAY=-1SU;BYSETPOS=2`) is `rrule`'s whole
    /// search, 100,000 periods, so the time is overrun by at most one such search.
    pub(super) fn step(&mut self) -> bool {
        if self.spent {
            return false;
        }
        let late = self.until.is_some_and(|u| std::time::Instant::now() >= u);
        if self.steps_left == 0 || late {
            self.spent = true;
            return false;
        }
        self.steps_left -= 1;
        true
    }
}

/// Problems, each once, at most [`MAX_PROBLEMS`].
#[derive(Default)]
pub(super) struct Problems(pub(super) Vec<String>);

impl Problems {
    pub(super) fn push(&mut self, p: String) {
        if self.0.len() < MAX_PROBLEMS && !self.0.contains(&p) {
            self.0.push(p);
        }
    }

    /// `p` ahead of the others, however many there are: what matters most about the digest.
    pub(super) fn first(&mut self, p: String) {
        self.0.insert(0, p);
        self.0.truncate(MAX_PROBLEMS);
    }
}
