//! Hover inside a note's frontmatter: a cron value's meaning and next fire times, a window's
//! band and today's state, a runtime field's meaning and age, any key's documentation, and a
//! summary of the whole block on the `live` key.
//!
//! Like completion, it finds the hovered key on the tolerant outline, so hover keeps working
//! while the YAML is broken; facts that need the validated block (last run, status) come from
//! the analysis when it has one.

use std::ops::Range;

use chrono::{DateTime, TimeZone, Utc};

use super::Ctx;
use super::completion::{Scope, Spot, floor_offset, item_value, kind_detail, unquote};
use super::text::{ago, at_local, until};
use crate::note::fields::{self, Field, Kind, Level};
use crate::note::frontmatter;
use crate::note::model::Live;
use crate::note::outline::KeyLine;
use crate::schedule::due::BACKOFF;
use crate::schedule::window::local_date;
use crate::schedule::{CronSchedule, TimeOfDay, Window};
use crate::status::{self, Status};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hover {
    /// Bytes of the hovered key or value.
    pub range: Range<usize>,
    pub markdown: String,
}

/// The hover at byte `offset` of the note (floored to a character boundary), if any.
pub fn hover<Tz: TimeZone>(ctx: &Ctx<Tz>, offset: usize) -> Option<Hover> {
    let offset = floor_offset(ctx.text, offset);
    let spot = Spot::new(ctx.text, frontmatter::locate(ctx.text)?, offset)?;
    let k = spot.key()?;
    let (range, on_key) = target(k, spot.offset)?;
    let markdown = match spot.scope(k.col) {
        Scope::Top if on_key && k.name == "live" && k.dash_col.is_none() => live_summary(ctx),
        Scope::Block { level, owner } => field_hover(ctx, &spot, level, owner, k, on_key)?,
        _ => return None,
    };
    Some(Hover { range, markdown })
}

/// The hovered part of key line `k` and whether it is the key (else the value). A cursor just
/// after either still hovers it, as editors report the position after a word.
fn target(k: &KeyLine, offset: usize) -> Option<(Range<usize>, bool)> {
    if (k.key.start..=k.key.end).contains(&offset) {
        return Some((k.key.clone(), true));
    }
    let v = k.value.clone()?;
    (v.start..=v.end).contains(&offset).then_some((v, false))
}

fn field_hover<Tz: TimeZone>(
    ctx: &Ctx<Tz>,
    spot: &Spot,
    level: Level,
    owner: usize,
    k: &KeyLine,
    on_key: bool,
) -> Option<String> {
    // Unknown keys get their "did you mean" from the diagnostics; hover has nothing to add.
    let field = fields::field(level, &k.name)?;
    let raw = k.value.as_ref().map(|v| &ctx.text[v.clone()]);
    Some(match field.kind {
        Kind::Time => format!("{}\n\n---\n\n{}", window_hover(ctx, spot, owner), key_doc(field)),
        Kind::Cron if !on_key => cron_hover(ctx, raw?),
        Kind::List if on_key => format!("{}{}", key_doc(field), windows_list(ctx)),
        _ if field.runtime => runtime_hover(ctx, field, raw),
        _ if on_key => key_doc(field),
        _ => return None,
    })
}

/// A key's path, what it holds and its documentation from the JSON Schema.
fn key_doc(f: &Field) -> String {
    let path = match f.level {
        Level::Live => "live",
        Level::Triggers => "live.triggers",
        Level::Window => "live.triggers.windows[]",
    };
    let doc = fields::doc(f.level, f.name).unwrap_or_default();
    format!("`{path}.{}` · {}\n\n{doc}", f.name, kind_detail(f))
}

// ---------------------------------------------------------------------------------------------
// Times

/// A local time with the zone's abbreviation (or offset, for zones without names):
/// "Mon 23 Nov 10:00 CST".
pub(super) fn local_time<Tz: TimeZone>(t: DateTime<Utc>, tz: &Tz) -> String {
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
pub(super) fn next_fires<Tz: TimeZone>(ctx: &Ctx<Tz>, cron: &CronSchedule) -> String {
    let times: Vec<String> =
        std::iter::successors(cron.next_after(ctx.now, ctx.tz), |&t| cron.next_after(t, ctx.tz))
            .take(3)
            .map(|t| format!("- {}", local_time(t, ctx.tz)))
            .collect();
    if times.is_empty() { "It never fires.".to_owned() } else { format!("Next:\n{}", times.join("\n")) }
}

fn cron_hover<Tz: TimeZone>(ctx: &Ctx<Tz>, raw: &str) -> String {
    let cron = match CronSchedule::parse(unquote(raw)) {
        Ok(cron) => cron,
        Err(e) => return format!("**Invalid cron expression:** {}", e.message()),
    };
    let mut md = format!("**{}**\n\n{}", capitalize(&cron.describe()), next_fires(ctx, &cron));
    if cron.fires_more_often_than_every_5_minutes() {
        md.push_str("\n\n⚠️ Fires more often than every 5 minutes, and every fire is an agent run.");
    }
    if ctx.analysis.live.as_ref().is_some_and(|l| !l.active) {
        md.push_str("\n\nThe note is paused: nothing fires until `active: true`.");
    }
    md
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Windows

/// The window of the `- ` item starting on line `item`: its band and today's state.
fn window_hover<Tz: TimeZone>(ctx: &Ctx<Tz>, spot: &Spot, item: usize) -> String {
    let time = |name| item_value(ctx.text, &spot.outline, item, name).map(TimeOfDay::parse);
    match (time("startTime"), time("endTime")) {
        (Some(Ok(s)), Some(Ok(e))) => window_facts(ctx, Window::new(s, e)),
        (Some(Err(e)), _) => format!("`startTime`: {e}"),
        (_, Some(Err(e))) => format!("`endTime`: {e}"),
        _ => "A window needs both `startTime` and `endTime`.".to_owned(),
    }
}

fn window_facts<Tz: TimeZone>(ctx: &Ctx<Tz>, w: Window) -> String {
    let (s, e) = (w.start, w.end);
    if w.is_inverted() {
        return format!(
            "**{s}–{e}** ends before it starts. Windows cannot cross midnight, so this one never \
             fires; split it into {s}–23:59 and 00:00–{e}."
        );
    }
    let band = if s == e {
        format!("**{s}** local, a one-minute band, once a day")
    } else {
        format!("**{s}–{e}** local, once a day")
    };
    format!("{band}\n\nToday: {}", window_today(ctx, w))
}

/// Whether today's cycle of `w` is done, due now, still to open or missed (SPEC 3: a run
/// strictly after today's start time covers the day).
fn window_today<Tz: TimeZone>(ctx: &Ctx<Tz>, w: Window) -> String {
    let live = ctx.analysis.live.as_ref();
    let Some(band) = local_date(ctx.now, ctx.tz).and_then(|d| w.band(d, ctx.tz)) else {
        return "no band today".to_owned();
    };
    let mut s = match live.and_then(|l| l.last_run_at) {
        _ if ctx.now < band.start => format!("opens at {}", w.start),
        Some(r) if r > band.start => format!("done (last run {})", ago(r, ctx.now)),
        _ if band.contains(ctx.now) => format!("due now{}", backoff_note(ctx, live)),
        _ => format!("missed; opens again tomorrow at {}", w.start),
    };
    if live.is_some_and(|l| !l.active) {
        s.push_str(" · the note is paused");
    }
    s
}

/// " · retry in 4 min" while the 5-minute backoff after an attempt holds scheduled runs back.
fn backoff_note<Tz: TimeZone>(ctx: &Ctx<Tz>, live: Option<&Live>) -> String {
    let end = live
        .and_then(|l| l.last_attempt_at)
        .filter(|&a| a <= ctx.now)
        .and_then(|a| a.checked_add_signed(BACKOFF));
    match end {
        Some(end) if ctx.now < end => format!(" · retry in {}", until(end, ctx.now)),
        _ => String::new(),
    }
}

/// Every window of the block with today's state, for the `windows` key.
fn windows_list<Tz: TimeZone>(ctx: &Ctx<Tz>) -> String {
    let Some(live) = ctx.analysis.live.as_ref() else { return String::new() };
    let lines: Vec<String> = live
        .windows
        .iter()
        .map(|entry| match entry.window {
            Some(w) => format!("- {}–{}: {}", w.start, w.end, window_today(ctx, w)),
            None => {
                let show = |t: &Option<String>| t.clone().unwrap_or_else(|| "?".to_owned());
                format!("- {}–{}: invalid, never fires", show(&entry.start_text), show(&entry.end_text))
            }
        })
        .collect();
    if lines.is_empty() { String::new() } else { format!("\n\n---\n\n{}", lines.join("\n")) }
}

// ---------------------------------------------------------------------------------------------
// Runtime fields

fn runtime_hover<Tz: TimeZone>(ctx: &Ctx<Tz>, f: &Field, raw: Option<&str>) -> String {
    let live = ctx.analysis.live.as_ref();
    // Decoded values from the validated block; the raw text when the YAML could not be read.
    let text = |decoded: Option<&String>| {
        decoded.cloned().or_else(|| raw.filter(|r| !is_null(r)).map(|r| unquote(r).to_owned()))
    };
    let fact = match f.name {
        "lastRunAt" | "lastAttemptAt" => timestamp_fact(ctx, f.name, raw),
        "lastRunError" => match text(live.and_then(|l| l.last_run_error.as_ref())) {
            Some(e) => Some(format!("**The latest run failed:**\n\n{}", fenced(&e))),
            None => Some("No error: the latest run succeeded.".to_owned()),
        },
        "lastRunSummary" => text(live.and_then(|l| l.last_run_summary.as_ref())).map(|s| quote_block(&s)),
        "lastRunId" => text(live.and_then(|l| l.last_run_id.as_ref()))
            .map(|id| format!("Run `{id}`; its transcript is in `.livenote/runs/`.")),
        _ => None,
    };
    match fact {
        Some(fact) => format!("{fact}\n\n---\n\n{}", key_doc(f)),
        None => key_doc(f),
    }
}

fn timestamp_fact<Tz: TimeZone>(ctx: &Ctx<Tz>, name: &str, raw: Option<&str>) -> Option<String> {
    let raw = unquote(raw.filter(|r| !is_null(r))?).trim();
    let Ok(t) = DateTime::parse_from_rfc3339(raw) else {
        return Some(format!("`{raw}` is not an RFC 3339 timestamp; livenote treats it as absent."));
    };
    let t = t.with_timezone(&Utc);
    let mut fact = format!("**{}** · {}", ago(t, ctx.now), local_time(t, ctx.tz));
    if name == "lastAttemptAt"
        && let Some(end) = t.checked_add_signed(BACKOFF)
        && t <= ctx.now
        && ctx.now < end
    {
        fact.push_str(&format!(
            "\n\nScheduled runs wait {} more (5-minute backoff after every attempt).",
            until(end, ctx.now)
        ));
    }
    Some(fact)
}

fn is_null(raw: &str) -> bool {
    matches!(raw, "null" | "Null" | "NULL" | "~" | "\"\"" | "''")
}

/// `s` in a fenced code block longer than any backtick run inside it.
fn fenced(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{s}\n{fence}")
}

fn quote_block(s: &str) -> String {
    s.lines().map(|l| format!("> {l}")).collect::<Vec<_>>().join("\n")
}

// ---------------------------------------------------------------------------------------------
// The `live` key

fn live_summary<Tz: TimeZone>(ctx: &Ctx<Tz>) -> String {
    let Some(live) = ctx.analysis.live.as_ref() else {
        return "**Live note** · the block could not be read; fix the errors first.".to_owned();
    };
    let mut parts = vec![format!("**Live note** · {}", status_text(ctx, live)), triggers_text(ctx, live)];
    parts.extend(next_text(ctx, live));
    parts.push(last_run_text(ctx, live));
    parts.join("\n\n")
}

fn status_text<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live) -> String {
    match status::status(live, ctx.facts) {
        Status::Live => "live".to_owned(),
        Status::Running => "updating now…".to_owned(),
        Status::Paused => "paused (`active: false`)".to_owned(),
        Status::Untrusted => "waiting for workspace trust".to_owned(),
        Status::Invalid => "has errors: nothing fires until they are fixed".to_owned(),
        Status::Failed => {
            let reason = live.last_run_error.as_deref().and_then(|e| e.lines().next()).unwrap_or_default();
            format!("the latest run failed: {reason}")
        }
    }
}

fn triggers_text<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live) -> String {
    let mut lines = Vec::new();
    if let Some(c) = &live.cron {
        lines.push(format!("- cron `{}`: {}", c.as_str(), c.describe()));
    }
    for w in live.windows.iter().filter_map(|e| e.window) {
        lines.push(format!("- window {}–{}: {}", w.start, w.end, window_today(ctx, w)));
    }
    if let Some(e) = &live.event_match_criteria {
        lines.push(format!("- events: {e}"));
    }
    if lines.is_empty() {
        "Manual only: no triggers; use *Run now*.".to_owned()
    } else {
        format!("Triggers:\n{}", lines.join("\n"))
    }
}

fn next_text<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live) -> Option<String> {
    let next = status::schedule_view(live, ctx.now, ctx.tz).next_due?;
    Some(if next <= ctx.now {
        "Next run: due now.".to_owned()
    } else {
        format!("Next run: {} ({}).", at_local(next, ctx.now, ctx.tz), local_time(next, ctx.tz))
    })
}

fn last_run_text<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live) -> String {
    let Some(at) = live.last_run_at else { return "Never ran successfully yet.".to_owned() };
    let mut s = format!("Last run: {}.", ago(at, ctx.now));
    if let Some(summary) = &live.last_run_summary {
        s.push_str(&format!("\n\n{}", quote_block(summary)));
    }
    s
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;
    use crate::ide::fixture::{cursor, with_ctx};
    use crate::status::RunFacts;

    fn check_with(facts: RunFacts, fixture: &str, expect: Expect) {
        let (text, offset) = cursor(fixture);
        let hover = with_ctx(&text, facts, |ctx| hover(ctx, offset));
        let actual = match hover {
            Some(h) => format!("{}\n~~~~\n{}\n", &text[h.range], h.markdown),
            None => "(none)\n".to_owned(),
        };
        expect.assert_eq(&actual);
    }

    fn check(fixture: &str, expect: Expect) {
        check_with(RunFacts::default(), fixture, expect);
    }

    /// A note around `triggers` (indented under `triggers:`), with runtime fields `extra`.
    fn note(triggers: &str, extra: &str) -> String {
        let triggers = triggers.lines().map(|l| format!("    {l}\n")).collect::<String>();
        format!(
            "---\ntitle: x\nlive:\n  objective: Keep the weather current.\n  triggers:\n{triggers}{extra}---\n# Weather\n"
        )
    }

    #[test]
    fn cron_values() {
        check(&note("cronExpr: \"0 * *$0 * *\"  # hourly", ""), expect![]);
        check(&note("cronExpr: 0 9 * * 1-5$0", ""), expect![]);
        check(&note("cronExpr: \"*/2 * * * *$0\"", ""), expect![]);
        check(&note("cronExpr: \"0 9 * *$0\"", ""), expect![]);
        check(&note("cronExpr: \"0 9 * * *$0\"", "  active: false\n"), expect![]);
        // The key itself shows its documentation.
        check(&note("cron$0Expr: \"0 9 * * *\"", ""), expect![]);
    }

    #[test]
    fn windows() {
        let w = |start: &str, end: &str| {
            format!("windows:\n  - startTime: \"{start}\"\n    endTime: \"{end}$0\"")
        };
        // Now is 09:07 in Chicago.
        check(&note(&w("09:00", "12:00"), ""), expect![]);
        check(&note(&w("09:00", "12:00"), "  lastRunAt: \"2026-11-23T15:02:00Z\"\n"), expect![]);
        check(&note(&w("09:00", "12:00"), "  lastRunAt: \"2026-11-23T15:00:00Z\"\n"), expect![]);
        check(
            &note(
                &w("09:00", "12:00"),
                "  lastAttemptAt: \"2026-11-23T15:05:00Z\"\n  lastRunError: \"timeout\"\n",
            ),
            expect![],
        );
        check(&note(&w("13:00", "15:00"), ""), expect![]);
        check(&note(&w("06:00", "08:00"), "  active: false\n"), expect![]);
        check(&note(&w("09:07", "09:07"), ""), expect![]);
        check(&note(&w("12:00", "08:00"), ""), expect![]);
        check(&note(&w("9:00", "12:00"), ""), expect![]);
        check(&note("windows:\n  - startTime$0: \"09:00\"", ""), expect![]);
        // Any key or value of the item shows its window.
        check(
            &note(
                "windows:\n  - startTime: \"06:00\"\n    endTime: \"07:00\"\n  - start$0Time: \"13:00\"\n    endTime: \"15:00\"",
                "",
            ),
            expect![],
        );
        // The `windows` key lists every window.
        check(
            &note(
                "win$0dows:\n  - startTime: \"06:00\"\n    endTime: \"07:00\"\n  - startTime: \"09:00\"\n    endTime: \"12:00\"",
                "",
            ),
            expect![],
        );
    }

    #[test]
    fn runtime_fields() {
        check(&note("", "  lastRunAt: \"2026-11-23T15:02:00Z$0\"\n"), expect![]);
        check(&note("", "  lastAtt$0emptAt: \"2026-11-23T15:05:30.123Z\"\n"), expect![]);
        check(&note("", "  lastRunAt: yesterday$0\n"), expect![]);
        check(&note("", "  lastRunError: \"provider `local`: connection refused\"$0\n"), expect![]);
        check(&note("", "  lastRunError$0: null\n"), expect![]);
        check(&note("", "  lastRunSummary$0: \"Updated - 3:00 PM.\"\n"), expect![]);
        check(&note("", "  lastRunId$0: \"01JTX3ABC\"\n"), expect![]);
    }

    #[test]
    fn live_key_summary() {
        let full = "---\nlive$0:\n  objective: x\n  triggers:\n    cronExpr: \"0 * * * *\"\n    windows:\n      - startTime: \"09:00\"\n        endTime: \"12:00\"\n    eventMatchCriteria: \"Emails about Q3\"\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n  lastRunSummary: \"Sunny, 12 °C.\"\n---\n";
        check(full, expect![]);
        check_with(RunFacts { running: true, trusted: Some(true) }, full, expect![]);
        check_with(RunFacts { running: false, trusted: Some(false) }, full, expect![]);
        check("---\nlive$0:\n  objective: x\n  active: false\n---\n", expect![]);
        check(
            "---\nlive$0:\n  objective: x\n  lastRunAt: \"2026-11-22T15:00:00Z\"\n  lastRunError: \"quota exceeded\"\n---\n",
            expect![],
        );
        check("---\nlive$0:\n  active: maybe\n---\n", expect![]);
        check("---\nlive$0: [\n---\n", expect![]);
    }

    #[test]
    fn key_documentation() {
        check(&note("", "  prov$0ider: local\n"), expect![]);
        check("---\nlive:\n  $0objective: x\n---\n", expect![]);
        check("---\nlive:\n  objective: x\n  triggers:\n    eventMatchCriteria$0: mail\n---\n", expect![]);
    }

    #[test]
    fn nothing_elsewhere() {
        check(&note("", "  objective2$0: x\n"), expect![]);
        check("---\ntitle$0: x\nlive:\n  objective: x\n---\n", expect![]);
        check("---\nlive:\n  objective: some$0 text\n---\n", expect![]);
        check("---\nlive:\n  objective: x\n---\n# live$0: x\n", expect![]);
        check("# Title\nlive$0: x\n", expect![]);
        check("---\nlive:\n  active: true  # c$0omment\n---\n", expect![]);
    }

    #[test]
    fn crlf_and_unicode_before_the_cursor() {
        check(
            "---\r\ntitle: 東京の天気 🌤\r\nlive:\r\n  objective: \"天気 ☀️\"\r\n  triggers:\r\n    cronExpr: \"0 9 * * 1-5$0\"\r\n---\r\n",
            expect![],
        );
        check("---\r\n題: 🌤\r\nlive:\r\n  active$0: true\r\n", expect![]);
    }
}
