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
    format!("{band}\n\n{}.", capitalize(&window_today(ctx, w)))
}

/// Today's cycle of `w`, in the words of the inlay hints: "opens at 13:00", "due now",
/// "due in 3 min" (held back by the backoff), "done today" (a successful run landed in the band
/// after its start, as the scheduler counts), "closed today", "missed today".
fn window_today<Tz: TimeZone>(ctx: &Ctx<Tz>, w: Window) -> String {
    let live = ctx.analysis.live.as_ref();
    // The scheduler skips such notes, so any schedule state would be false.
    match live {
        Some(l) if l.has_errors => return "nothing fires until the errors are fixed".to_owned(),
        Some(l) if !l.active => return "paused: nothing fires on schedule".to_owned(),
        _ => {}
    }
    let Some(band) = local_date(ctx.now, ctx.tz).and_then(|d| w.band(d, ctx.tz)) else {
        return "no band today".to_owned();
    };
    let last_run = live.and_then(|l| l.last_run_at);
    let done = |r: DateTime<Utc>| format!("done today (last run {})", ago(r, ctx.now));
    match last_run {
        _ if ctx.now < band.start => format!("opens at {}", w.start),
        Some(r) if r > band.start && (band.contains(ctx.now) || r < band.end) => done(r),
        _ if band.contains(ctx.now) => match backoff_end(ctx, live) {
            Some(end) if end < band.end => {
                format!("due in {} (5-minute backoff after a run starts)", until(end, ctx.now))
            }
            Some(_) => "missed today: the backoff outlasts the band".to_owned(),
            None => "due now".to_owned(),
        },
        _ => format!("closed today; opens again tomorrow at {}", w.start),
    }
}

/// When the 5-minute backoff after the latest attempt ends, while it holds scheduled runs back.
fn backoff_end<Tz: TimeZone>(ctx: &Ctx<Tz>, live: Option<&Live>) -> Option<DateTime<Utc>> {
    let attempt = live?.last_attempt_at.filter(|&a| a <= ctx.now)?;
    attempt.checked_add_signed(BACKOFF).filter(|&end| ctx.now < end)
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
        && let Some(end) = t.checked_add_signed(BACKOFF).filter(|&end| t <= ctx.now && ctx.now < end)
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
    let when = if next <= ctx.now {
        "due now".to_owned()
    } else {
        format!("{} ({})", at_local(next, ctx.now, ctx.tz), local_time(next, ctx.tz))
    };
    let trust = if ctx.facts.trusted == Some(false) { ", once the workspace is trusted" } else { "" };
    Some(format!("Next run: {when}{trust}."))
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
    use proptest::prelude::*;

    use super::*;
    use crate::ide::completion::tests::arb_note;
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
        check(
            &note("cronExpr: \"0 * *$0 * *\"  # hourly", ""),
            expect![[r#"
            "0 * * * *"
            ~~~~
            **Every hour**

            Next:
            - Mon 23 Nov 10:00 CST
            - Mon 23 Nov 11:00 CST
            - Mon 23 Nov 12:00 CST
        "#]],
        );
        check(
            &note("cronExpr: 0 9 * * 1-5$0", ""),
            expect![[r#"
            0 9 * * 1-5
            ~~~~
            **At 09:00 on weekdays**

            Next:
            - Tue 24 Nov 09:00 CST
            - Wed 25 Nov 09:00 CST
            - Thu 26 Nov 09:00 CST
        "#]],
        );
        check(
            &note("cronExpr: \"*/2 * * * *$0\"", ""),
            expect![[r#"
            "*/2 * * * *"
            ~~~~
            **Every 2 minutes**

            Next:
            - Mon 23 Nov 09:08 CST
            - Mon 23 Nov 09:10 CST
            - Mon 23 Nov 09:12 CST

            ⚠️ Fires more often than every 5 minutes, and every fire is an agent run.
        "#]],
        );
        check(
            &note("cronExpr: \"0 9 * *$0\"", ""),
            expect![[r#"
            "0 9 * *"
            ~~~~
            **Invalid cron expression:** expected 5 fields (minute hour day-of-month month day-of-week), or 6 with a leading seconds field, but found 4
        "#]],
        );
        check(
            &note("cronExpr: \"0 9 * * *$0\"", "  active: false\n"),
            expect![[r#"
            "0 9 * * *"
            ~~~~
            **Daily at 09:00**

            Next:
            - Tue 24 Nov 09:00 CST
            - Wed 25 Nov 09:00 CST
            - Thu 26 Nov 09:00 CST

            The note is paused: nothing fires until `active: true`.
        "#]],
        );
        // The key itself shows its documentation.
        check(
            &note("cron$0Expr: \"0 9 * * *\"", ""),
            expect![[r#"
            cronExpr
            ~~~~
            `live.triggers.cronExpr` · cron expression

            A cron expression in local time: 5 fields (minute hour day-of-month month day-of-week),
            an optional leading seconds field, or a nickname such as `@hourly`. Vixie semantics:
            0 and 7 are Sunday; day-of-month and day-of-week combine with OR. A missed time is
            skipped after a 2-minute grace, not replayed.
        "#]],
        );
    }

    #[test]
    fn windows() {
        let w = |start: &str, end: &str| {
            format!("windows:\n  - startTime: \"{start}\"\n    endTime: \"{end}$0\"")
        };
        // Now is 09:07 in Chicago.
        check(
            &note(&w("09:00", "12:00"), ""),
            expect![[r#"
            "12:00"
            ~~~~
            **09:00–12:00** local, once a day

            Due now.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("09:00", "12:00"), "  lastRunAt: \"2026-11-23T15:02:00Z\"\n"),
            expect![[r#"
            "12:00"
            ~~~~
            **09:00–12:00** local, once a day

            Done today (last run 5 min ago).

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("09:00", "12:00"), "  lastRunAt: \"2026-11-23T15:00:00Z\"\n"),
            expect![[r#"
            "12:00"
            ~~~~
            **09:00–12:00** local, once a day

            Due now.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(
                &w("09:00", "12:00"),
                "  lastAttemptAt: \"2026-11-23T15:05:00Z\"\n  lastRunError: \"timeout\"\n",
            ),
            expect![[r#"
                "12:00"
                ~~~~
                **09:00–12:00** local, once a day

                Due in 3 min (5-minute backoff after a run starts).

                ---

                `live.triggers.windows[].endTime` · HH:MM local time, required

                End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
            "#]],
        );
        check(
            &note(&w("09:00", "09:08"), "  lastAttemptAt: \"2026-11-23T15:05:00Z\"\n"),
            expect![[r#"
            "09:08"
            ~~~~
            **09:00–09:08** local, once a day

            Missed today: the backoff outlasts the band.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("06:00", "08:00"), "  lastRunAt: \"2026-11-23T13:30:00Z\"\n"),
            expect![[r#"
            "08:00"
            ~~~~
            **06:00–08:00** local, once a day

            Done today (last run 1 h ago).

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("06:00", "08:00"), "  lastRunAt: \"2026-11-23T15:02:00Z\"\n"),
            expect![[r#"
            "08:00"
            ~~~~
            **06:00–08:00** local, once a day

            Closed today; opens again tomorrow at 06:00.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("09:00", "12:00"), "  active: 3\n"),
            expect![[r#"
            "12:00"
            ~~~~
            **09:00–12:00** local, once a day

            Nothing fires until the errors are fixed.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("13:00", "15:00"), ""),
            expect![[r#"
            "15:00"
            ~~~~
            **13:00–15:00** local, once a day

            Opens at 13:00.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("06:00", "08:00"), "  active: false\n"),
            expect![[r#"
            "08:00"
            ~~~~
            **06:00–08:00** local, once a day

            Paused: nothing fires on schedule.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("09:07", "09:07"), ""),
            expect![[r#"
            "09:07"
            ~~~~
            **09:07** local, a one-minute band, once a day

            Due now.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("12:00", "08:00"), ""),
            expect![[r#"
            "08:00"
            ~~~~
            **12:00–08:00** ends before it starts. Windows cannot cross midnight, so this one never fires; split it into 12:00–23:59 and 00:00–08:00.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note(&w("9:00", "12:00"), ""),
            expect![[r#"
            "12:00"
            ~~~~
            `startTime`: write the hour with two digits: "09:00"

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
        );
        check(
            &note("windows:\n  - startTime$0: \"09:00\"", ""),
            expect![[r#"
            startTime
            ~~~~
            A window needs both `startTime` and `endTime`.

            ---

            `live.triggers.windows[].startTime` · HH:MM local time, required

            Start of the band, 24-hour `HH:MM` local time.
        "#]],
        );
        // Any key or value of the item shows its window.
        check(
            &note(
                "windows:\n  - startTime: \"06:00\"\n    endTime: \"07:00\"\n  - start$0Time: \"13:00\"\n    endTime: \"15:00\"",
                "",
            ),
            expect![[r#"
                startTime
                ~~~~
                **13:00–15:00** local, once a day

                Opens at 13:00.

                ---

                `live.triggers.windows[].startTime` · HH:MM local time, required

                Start of the band, 24-hour `HH:MM` local time.
            "#]],
        );
        // The `windows` key lists every window.
        check(
            &note(
                "win$0dows:\n  - startTime: \"06:00\"\n    endTime: \"07:00\"\n  - startTime: \"09:00\"\n    endTime: \"12:00\"",
                "",
            ),
            expect![[r#"
                windows
                ~~~~
                `live.triggers.windows` · list of daily time windows

                Time-of-day bands; each fires at most once a day, as soon as possible inside its band.

                ---

                - 06:00–07:00: closed today; opens again tomorrow at 06:00
                - 09:00–12:00: due now
            "#]],
        );
    }

    #[test]
    fn runtime_fields() {
        check(
            &note("", "  lastRunAt: \"2026-11-23T15:02:00Z$0\"\n"),
            expect![[r#"
            "2026-11-23T15:02:00Z"
            ~~~~
            **5 min ago** · Mon 23 Nov 09:02 CST

            ---

            `live.lastRunAt` · timestamp, written by livenote

            Written by livenote: when the latest successful run started. Anchors every trigger's
            cycle.
        "#]],
        );
        check(
            &note("", "  lastAtt$0emptAt: \"2026-11-23T15:05:30.123Z\"\n"),
            expect![[r#"
            lastAttemptAt
            ~~~~
            **1 min ago** · Mon 23 Nov 09:05 CST

            Scheduled runs wait 4 min more (5-minute backoff after every attempt).

            ---

            `live.lastAttemptAt` · timestamp, written by livenote

            Written by livenote: when the latest run started (every run). Drives the 5-minute
            retry backoff.
        "#]],
        );
        check(
            &note("", "  lastRunAt: yesterday$0\n"),
            expect![[r#"
            yesterday
            ~~~~
            `yesterday` is not an RFC 3339 timestamp; livenote treats it as absent.

            ---

            `live.lastRunAt` · timestamp, written by livenote

            Written by livenote: when the latest successful run started. Anchors every trigger's
            cycle.
        "#]],
        );
        check(
            &note("", "  lastRunError: \"provider `local`: connection refused\"$0\n"),
            expect![[r#"
            "provider `local`: connection refused"
            ~~~~
            **The latest run failed:**

            ```text
            provider `local`: connection refused
            ```

            ---

            `live.lastRunError` · text, written by livenote

            Written by livenote: why the latest run failed; cleared when a run succeeds.
        "#]],
        );
        check(
            &note("", "  lastRunError$0: null\n"),
            expect![[r#"
            lastRunError
            ~~~~
            No error: the latest run succeeded.

            ---

            `live.lastRunError` · text, written by livenote

            Written by livenote: why the latest run failed; cleared when a run succeeds.
        "#]],
        );
        check(
            &note("", "  lastRunSummary$0: \"Updated - 3:00 PM.\"\n"),
            expect![[r#"
            lastRunSummary
            ~~~~
            > Updated - 3:00 PM.

            ---

            `live.lastRunSummary` · text, written by livenote

            Written by livenote: the agent's summary of the latest successful run.
        "#]],
        );
        check(
            &note("", "  lastRunId$0: \"01JTX3ABC\"\n"),
            expect![[r#"
            lastRunId
            ~~~~
            Run `01JTX3ABC`; its transcript is in `.livenote/runs/`.

            ---

            `live.lastRunId` · text, written by livenote

            Written by livenote: the id of the latest run (sortable, time-based); its transcript is
            in `.livenote/runs/`.
        "#]],
        );
    }

    #[test]
    fn live_key_summary() {
        let full = "---\nlive$0:\n  objective: x\n  triggers:\n    cronExpr: \"0 * * * *\"\n    windows:\n      - startTime: \"09:00\"\n        endTime: \"12:00\"\n    eventMatchCriteria: \"Emails about Q3\"\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n  lastRunSummary: \"Sunny, 12 °C.\"\n---\n";
        check(
            full,
            expect![[r#"
            live
            ~~~~
            **Live note** · live

            Triggers:
            - cron `0 * * * *`: every hour
            - window 09:00–12:00: done today (last run 5 min ago)
            - events: Emails about Q3

            Next run: 10:00 (Mon 23 Nov 10:00 CST).

            Last run: 5 min ago.

            > Sunny, 12 °C.
        "#]],
        );
        check_with(
            RunFacts { running: true, trusted: Some(true), scheduling_off: false, undoable: false },
            full,
            expect![[r#"
            live
            ~~~~
            **Live note** · updating now…

            Triggers:
            - cron `0 * * * *`: every hour
            - window 09:00–12:00: done today (last run 5 min ago)
            - events: Emails about Q3

            Next run: 10:00 (Mon 23 Nov 10:00 CST).

            Last run: 5 min ago.

            > Sunny, 12 °C.
        "#]],
        );
        check_with(
            RunFacts { running: false, trusted: Some(false), scheduling_off: false, undoable: false },
            full,
            expect![[r#"
            live
            ~~~~
            **Live note** · waiting for workspace trust

            Triggers:
            - cron `0 * * * *`: every hour
            - window 09:00–12:00: done today (last run 5 min ago)
            - events: Emails about Q3

            Next run: 10:00 (Mon 23 Nov 10:00 CST), once the workspace is trusted.

            Last run: 5 min ago.

            > Sunny, 12 °C.
        "#]],
        );
        check(
            "---\nlive$0:\n  objective: x\n  active: false\n---\n",
            expect![[r#"
            live
            ~~~~
            **Live note** · paused (`active: false`)

            Manual only: no triggers; use *Run now*.

            Never ran successfully yet.
        "#]],
        );
        check(
            "---\nlive$0:\n  objective: x\n  lastRunAt: \"2026-11-22T15:00:00Z\"\n  lastRunError: \"quota exceeded\"\n---\n",
            expect![[r#"
                live
                ~~~~
                **Live note** · the latest run failed: quota exceeded

                Manual only: no triggers; use *Run now*.

                Last run: yesterday.
            "#]],
        );
        check(
            "---\nlive$0:\n  active: maybe\n---\n",
            expect![[r#"
            live
            ~~~~
            **Live note** · has errors: nothing fires until they are fixed

            Manual only: no triggers; use *Run now*.

            Never ran successfully yet.
        "#]],
        );
        check(
            "---\nlive$0: [\n---\n",
            expect![[r#"
            live
            ~~~~
            **Live note** · has errors: nothing fires until they are fixed

            Manual only: no triggers; use *Run now*.

            Never ran successfully yet.
        "#]],
        );
    }

    #[test]
    fn key_documentation() {
        check(
            &note("", "  prov$0ider: local\n"),
            expect![[r#"
            provider
            ~~~~
            `live.provider` · provider name

            Name of a configured provider (see `[providers.*]` in config); empty means the default.
        "#]],
        );
        check(
            "---\nlive:\n  $0objective: x\n---\n",
            expect![[r#"
            objective
            ~~~~
            `live.objective` · text, required

            What the note should keep being, in plain words. The agent reads it on every run and
            keeps the body below the title in line with it.
        "#]],
        );
        check(
            "---\nlive:\n  objective: x\n  triggers:\n    eventMatchCriteria$0: mail\n---\n",
            expect![[r#"
            eventMatchCriteria
            ~~~~
            `live.triggers.eventMatchCriteria` · text

            Which incoming events should update the note, in plain words
            (e.g. "Emails about Q3 planning").
        "#]],
        );
    }

    #[test]
    fn nothing_elsewhere() {
        check(
            &note("", "  objective2$0: x\n"),
            expect![[r#"
            (none)
        "#]],
        );
        check(
            "---\ntitle$0: x\nlive:\n  objective: x\n---\n",
            expect![[r#"
            (none)
        "#]],
        );
        check(
            "---\nlive:\n  objective: some$0 text\n---\n",
            expect![[r#"
            (none)
        "#]],
        );
        check(
            "---\nlive:\n  objective: x\n---\n# live$0: x\n",
            expect![[r#"
            (none)
        "#]],
        );
        check(
            "# Title\nlive$0: x\n",
            expect![[r#"
            (none)
        "#]],
        );
        check(
            "---\nlive:\n  active: true  # c$0omment\n---\n",
            expect![[r#"
            (none)
        "#]],
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// Any offset into any text: no panic, and a hover covers the (floored) cursor.
        #[test]
        fn never_panics(text in arb_note()) {
            with_ctx(&text, RunFacts::default(), |ctx| {
                for offset in 0..=text.len() + 2 {
                    let at = floor_offset(&text, offset);
                    if let Some(h) = hover(ctx, offset) {
                        let r = h.range;
                        prop_assert!(r.start <= at && at <= r.end && text.get(r.clone()).is_some(), "{r:?} at {at}");
                    }
                }
                Ok(())
            })?;
        }
    }

    #[test]
    fn crlf_and_unicode_before_the_cursor() {
        check(
            "---\r\ntitle: 東京の天気 🌤\r\nlive:\r\n  objective: \"天気 ☀️\"\r\n  triggers:\r\n    cronExpr: \"0 9 * * 1-5$0\"\r\n---\r\n",
            expect![[r#"
                "0 9 * * 1-5"
                ~~~~
                **At 09:00 on weekdays**

                Next:
                - Tue 24 Nov 09:00 CST
                - Wed 25 Nov 09:00 CST
                - Thu 26 Nov 09:00 CST
            "#]],
        );
        check(
            "---\r\n題: 🌤\r\nlive:\r\n  active$0: true\r\n",
            expect![[r#"
            active
            ~~~~
            `live.active` · true | false

            `false` pauses the note: nothing fires on schedule or on events. A paused note can
            still be run by hand.
        "#]],
        );
    }
}
