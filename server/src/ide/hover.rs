//! Hover inside a note's frontmatter: a cron value's meaning and next fire times, a window's
//! band and today's state, a runtime field's meaning and age, an MCP server's or tool's
//! description on an entry of `tools`, any key's documentation, and a summary of the whole
//! block on the `live` key.
//!
//! Like completion, it finds the hovered key on the tolerant outline, so hover keeps working
//! while the YAML is broken; facts that need the validated block (last run, status) come from
//! the analysis when it has one.

use std::ops::Range;

use chrono::{DateTime, TimeZone, Utc};

use super::Ctx;
use super::cursor::{Scope, Spot, floor_offset, item_value, unquote};
use super::text::{ago, at_local, kind_detail, local_time, next_fires, until};
use crate::note::fields::{self, Field, Kind, Level};
use crate::note::frontmatter;
use crate::note::model::Live;
use crate::note::outline::KeyLine;
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
    let spot = Spot::new(ctx.text, frontmatter::locate(ctx.text)?, offset, ctx.analysis.eol(ctx.text))?;
    if let Some(h) = tool_entry(ctx, offset) {
        return Some(h);
    }
    if let Some(h) = skill_entry(ctx, offset) {
        return Some(h);
    }
    let k = spot.key()?;
    let (range, on_key) = target(k, spot.offset)?;
    let markdown = match spot.scope(k.col) {
        Scope::Top if on_key && k.name == "live" && k.dash_col.is_none() => live_summary(ctx),
        Scope::Block { level, owner } => field_hover(ctx, &spot, level, owner, k, on_key)?,
        _ => return None,
    };
    Some(Hover { range, markdown })
}

/// Whether byte `offset` is on the `live` key itself, where [`hover`] shows the block's summary.
pub fn on_live_key<Tz: TimeZone>(ctx: &Ctx<Tz>, offset: usize) -> bool {
    let offset = floor_offset(ctx.text, offset);
    let Some(spot) = frontmatter::locate(ctx.text)
        .and_then(|fm| Spot::new(ctx.text, fm, offset, ctx.analysis.eol(ctx.text)))
    else {
        return false;
    };
    let Some(k) = spot.key() else { return false };
    target(k, spot.offset).is_some_and(|(_, on_key)| {
        on_key && k.name == "live" && k.dash_col.is_none() && matches!(spot.scope(k.col), Scope::Top)
    })
}

/// An entry of `skills` under the cursor: the skill's description and where it comes from.
/// Nothing for a name no source defines (its diagnostic says so).
fn skill_entry<Tz: TimeZone>(ctx: &Ctx<Tz>, offset: usize) -> Option<Hover> {
    let entry = super::definition::skill_at(ctx, offset)?;
    let skill = ctx.skills.get(&entry.value)?;
    let from = match &skill.path {
        Some(path) => format!("{} skill, `{}`", capitalize(skill.source.as_str()), path.display()),
        None => "Built into livenote (`livenote skills` lists every skill)".to_owned(),
    };
    let markdown = format!(
        "**Skill `{}`**\n\n{}\n\n{from}. Runs of this note get its guidance in full.",
        skill.name, skill.description
    );
    Some(Hover { range: entry.span.clone(), markdown })
}

/// An entry of `tools` under the cursor (as the validated block read it): the server and its
/// tools, or the tool's description and arguments. Nothing for a name the configuration does
/// not know (its diagnostic says so).
fn tool_entry<Tz: TimeZone>(ctx: &Ctx<Tz>, offset: usize) -> Option<Hover> {
    let tools = ctx.analysis.live.as_ref()?.tools.as_ref()?;
    let entry = tools.iter().find(|e| e.span.start <= offset && offset <= e.span.end)?;
    let parsed = crate::note::tools::parse_entry(&entry.value);
    let server = ctx.mcp.server(parsed.server)?;
    const UNLISTED: &str = "Its tools are known once a run has started it.";
    let markdown = match (parsed.tool, &server.tools) {
        (None, Some(tools)) => {
            let list: Vec<String> = tools
                .iter()
                .map(|t| {
                    format!(
                        "- `{}`: {}",
                        t.name,
                        t.description.as_deref().and_then(|d| d.lines().next()).unwrap_or("")
                    )
                })
                .collect();
            format!(
                "**MCP server `{}`**: all of its {}\n\n{}",
                server.name,
                crate::text::count(tools.len(), "tool"),
                list.join("\n")
            )
        }
        (None, None) => format!("**MCP server `{}`**: all of its tools\n\n{UNLISTED}", server.name),
        (Some(tool), Some(_)) => {
            let t = server.tool(tool)?;
            format!(
                "**`{}`** · a tool of MCP server `{}`\n\n{}",
                t.name,
                server.name,
                super::completion::tool_doc(t)
            )
        }
        (Some(tool), None) => format!("**`{tool}`** · a tool of MCP server `{}`\n\n{UNLISTED}", server.name),
    };
    Some(Hover { range: entry.span.clone(), markdown })
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
        _ if field.name == "eventMatchCriteria" || field.name == "sources" => {
            format!("{}\n\n{}", key_doc(field), sources_text(ctx))
        }
        Kind::Time => format!("{}\n\n---\n\n{}", window_hover(ctx, spot, owner), key_doc(field)),
        Kind::Cron if !on_key => cron_hover(ctx, raw?),
        Kind::List if on_key => format!("{}{}", key_doc(field), windows_list(ctx)),
        _ if field.runtime => runtime_hover(ctx, field, raw),
        _ if on_key => key_doc(field),
        _ => return None,
    })
}

/// Where the events `eventMatchCriteria` waits for come from: the folder's sources.
fn sources_text<Tz: TimeZone>(ctx: &Ctx<Tz>) -> String {
    let from = match ctx.sources {
        None => "Events come from `livenote event` (outside every folder, no source is configured).".to_owned(),
        Some([]) => "**No source sends events here**: add one under `[sources.NAME]` in .livenote.toml (a feed, a calendar, a mailbox, a webhook, a program; docs/sources.md), or queue events with `livenote event`.".to_owned(),
        Some(all) => format!(
            "Events come from this folder's sources: {}; and from `livenote event`. `livenote sources` shows what each saw last.",
            all.iter().map(|s| format!("`{}`", s.label())).collect::<Vec<_>>().join(", ")
        ),
    };
    match ctx.recent_events {
        [] => from,
        events => {
            let lines: Vec<String> = events
                .iter()
                .map(|e| {
                    let when = DateTime::parse_from_rfc3339(&e.at)
                        .map(|t| at_local(t.with_timezone(&Utc), ctx.now, ctx.tz))
                        .unwrap_or_else(|_| e.at.clone());
                    format!("- {when}: `{}` from `{}`, {}: {}", e.kind, e.source, e.status, e.summary)
                })
                .collect();
            format!("{from}\n\nLatest events routed here:\n{}", lines.join("\n"))
        }
    }
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
                format!("due in {} (backoff after a run that did not succeed)", until(end, ctx.now))
            }
            Some(_) => "missed today: the backoff outlasts the band".to_owned(),
            None => "due now".to_owned(),
        },
        _ => format!("closed today; opens again tomorrow at {}", w.start),
    }
}

/// When the backoff after the latest attempt ends, while it holds scheduled runs back.
fn backoff_end<Tz: TimeZone>(ctx: &Ctx<Tz>, live: Option<&Live>) -> Option<DateTime<Utc>> {
    status::backoff_until(live?, ctx.now, ctx.tz)
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
        "lastRunAt" => timestamp_fact(ctx, f.name, raw).map(|t| with_cost(ctx, t)),
        "lastAttemptAt" => timestamp_fact(ctx, f.name, raw),
        "lastRunError" => match text(live.and_then(|l| l.last_run_error.as_ref())) {
            Some(e) => Some(format!("**The latest run failed:**\n\n{}", fenced(&e))),
            None => Some("No error: the latest run succeeded.".to_owned()),
        },
        "lastRunSummary" => text(live.and_then(|l| l.last_run_summary.as_ref())).map(|s| quote_block(&s)),
        "lastRunId" => text(live.and_then(|l| l.last_run_id.as_ref()))
            .map(|id| format!("Run `{id}`; its transcript is in `.livenote/runs/`.")),
        "failures" => live.map(|l| match retry_text(ctx, l) {
            Some(retry) => {
                format!("**{}** · {retry}.", crate::text::count(l.failures as usize, "consecutive failure"))
            }
            None => crate::text::count(l.failures as usize, "consecutive failure"),
        }),
        "lastStoppedAt" => timestamp_fact(ctx, f.name, raw),
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
    let live = ctx.analysis.live.as_ref().filter(|l| l.last_attempt_at == Some(t));
    if name == "lastAttemptAt"
        && let Some(end) = live.and_then(|l| status::backoff_until(l, ctx.now, ctx.tz))
    {
        fact.push_str(&format!(
            "\n\nScheduled runs wait {} more (backoff after an attempt that did not succeed: 5 minutes, doubling with each consecutive failure).",
            until(end, ctx.now)
        ));
    }
    Some(fact)
}

/// `fact` and, when known, what the latest run (`lastRunId`) did and cost.
fn with_cost<Tz: TimeZone>(ctx: &Ctx<Tz>, fact: String) -> String {
    let Some(run) = ctx.last_run else { return fact };
    let t = &run.totals;
    let which = if run.failed { "The latest attempt (it failed)" } else { "The latest run" };
    let tools = match t.tools_by_name() {
        by_name if by_name.is_empty() => String::new(),
        by_name => format!(" ({by_name})"),
    };
    let g = crate::cost::grouped;
    let n = |n: u64, noun: &str| crate::text::count(usize::try_from(n).unwrap_or(usize::MAX), noun);
    format!(
        "{fact}\n\n{which} (`{}`): {}, {}{tools}, {}; {} tokens: {} input ({} cached), {} output.",
        run.id,
        n(t.model_calls, "model call"),
        n(t.tool_call_count(), "tool call"),
        crate::cost::seconds(t.duration_ms),
        g(t.tokens.total()),
        g(t.tokens.input),
        g(t.tokens.cached),
        g(t.tokens.output),
    )
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
    if let Some(max) = &live.max_chars {
        parts.push(crate::note::budget::status_line(crate::note::budget::body_chars(ctx.text), max.value));
    }
    parts.join("\n\n")
}

fn status_text<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live) -> String {
    match status::status(live, ctx.facts, ctx.now, ctx.tz) {
        Status::Live => "live".to_owned(),
        Status::Running => "updating now…".to_owned(),
        Status::Paused => "paused (`active: false`)".to_owned(),
        Status::Expired => "expired (`until` has passed): nothing fires on schedule or on events".to_owned(),
        Status::Untrusted => "waiting for workspace trust".to_owned(),
        Status::Stopped => "the latest run was stopped (not a failure; the next occurrence runs)".to_owned(),
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

/// "retry at 14:20 (3rd failure)" while the note's latest attempt failed.
fn retry_text<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live) -> Option<String> {
    let next = status::schedule_view(live, ctx.now, ctx.tz).next_due;
    status::Retry::of(live, next).map(|r| r.text(|t| at_local(t, ctx.now, ctx.tz)))
}

fn next_text<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live) -> Option<String> {
    // `[scheduler] host` names another machine: the time is when it runs there.
    let on = ctx
        .facts
        .scheduled_on
        .map(|h| format!(" on {h} (`[scheduler] host`; here it runs only by hand)"))
        .unwrap_or_default();
    if let Some(retry) = retry_text(ctx, live) {
        let trust = if ctx.facts.trusted == Some(false) { ", once the workspace is trusted" } else { "" };
        return Some(format!("Next run: {retry}{on}{trust}."));
    }
    let next = status::schedule_view(live, ctx.now, ctx.tz).next_due?;
    let when = if next <= ctx.now {
        "due now".to_owned()
    } else {
        format!("{} ({})", at_local(next, ctx.now, ctx.tz), local_time(next, ctx.tz))
    };
    let trust = if ctx.facts.trusted == Some(false) { ", once the workspace is trusted" } else { "" };
    Some(format!("Next run: {when}{on}{trust}."))
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
#[path = "hover_tests.rs"]
mod tests;
