//! Inlay hints in the `live:` block, so that clients without code lenses (Helix) see a live
//! note's status too: what a cron value means and when it fires next, each window's state
//! today, how old the latest run is, that the note is paused, and when a failed cycle is
//! retried.
//!
//! Decisions where SPEC section 2 is silent:
//! - A hint sits right after the value it explains; the LSP layer should pad it on the left.
//! - Values that did not validate get no hint (their diagnostics speak), and on an invalid
//!   note only the facts survive (a cron's meaning, `lastRunAt`'s age, "paused"): the
//!   scheduler ignores invalid notes, so "next 10:00" or "due now" would be false.
//! - On a paused or expired note cron and window hints drop their schedule part for the same
//!   reason (an expired note's "opens 14:00" would promise a run that never comes; its `until`
//!   hint says "ended").
//! - A cron or window that is due but held back by the backoff reads "due in 3 min"; a cron
//!   whose latest occurrence passed without a run (the machine asleep or off) reads "missed
//!   08:00" before its next time, until the next occurrence.
//! - Windows: "opens 13:00" before today's band, "due now" inside it, "due in 3 min" inside it
//!   during a backoff that ends before the band does, "done today" once a successful run landed
//!   in it (after its start, as the scheduler counts), "closed today" after it without one, and
//!   "missed today" when a backoff outlasts the band.
//! - "retry in 4 min" appears only when the backoff holds back a cycle that is due and that
//!   fires when the backoff ends (after a successful run nothing is pending, so there is nothing
//!   to retry; a cron occurrence whose grace ends first is missed).
//! - A cron's "next 10:00" is when the cron next makes the note due ([`status::cron_view`]), the
//!   instant the lens, hover and `list` name for a note without windows.
//! - Statuses with no value of their own go at the end of the `live:` line: "updating…",
//!   "waiting for trust", "failed 2 min ago" (the message is the tooltip), "stopped 2 min
//!   ago". They are for clients without code lenses (Helix): a client that shows the status
//!   lens on that line gets none of them ([`Shown::lens`]), since Neovim draws lenses and hints
//!   side by side at the end of the line ("waiting for trust Waiting for trust").

use std::ops::Range;

use chrono::{DateTime, TimeZone, Utc};

use super::Ctx;
use super::text::{ago, at_local, until};
use crate::note::model::Live;
use crate::schedule::window::local_date;
use crate::schedule::{Decision, SkipReason, Window, WindowSkip};
use crate::status::{self, ScheduleView, Status};

/// A hint shown inline at `offset`, right after the value it follows.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    /// Byte offset: the end of the value the hint follows.
    pub offset: usize,
    pub label: String,
    pub tooltip: Option<String>,
}

/// What the client shows besides hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// The client draws code lenses (it declared `textDocument.codeLens`), so the status lens
    /// on the `live:` line says what the status hints there would.
    pub lens: bool,
}

/// The hints whose offset lies in `range` (inclusive at both ends, so a hint at the end of
/// the last visible line is shown), in text order. Offsets of `range` inside a character are
/// moved to its start.
pub fn inlay_hints<Tz: TimeZone>(ctx: &Ctx<Tz>, range: Range<usize>, shown: Shown) -> Vec<Hint> {
    let Some(live) = &ctx.analysis.live else { return Vec::new() };
    let range = floor_range(ctx.text, range);
    let view = status::schedule_view(live, ctx.now, ctx.tz);
    // Whether the scheduler considers the note at all (it ignores invalid, paused and expired
    // notes: an expired note's windows never open again, so they get no hint).
    let scheduled = !live.has_errors && live.active && !live.expired(ctx.now, ctx.tz);
    let mut hints = Vec::new();
    let mut push = |offset: usize, label: String, tooltip: Option<String>| {
        if range.start <= offset && offset <= range.end {
            hints.push(Hint { offset, label, tooltip });
        }
    };

    let live_line_end = line_end(ctx.text, live.key_span.end);
    let state = status::status(live, ctx.facts, ctx.now, ctx.tz);
    match state {
        // The status lens on the same line says it.
        _ if shown.lens => {}
        Status::Running => push(live_line_end, "updating…".to_owned(), None),
        Status::Untrusted => push(
            live_line_end,
            "waiting for trust".to_owned(),
            Some(
                "Scheduled and event runs start only in a trusted workspace; `livenote trust` allows them."
                    .to_owned(),
            ),
        ),
        Status::Failed => {
            let mut label = match live.last_attempt_at {
                Some(t) => format!("failed {}", ago(t, ctx.now)),
                None => "failed".to_owned(),
            };
            if let Some(r) = status::Retry::of(live, view.next_due).filter(|_| !ctx.facts.scheduling_off) {
                label.push_str(" · ");
                label.push_str(&r.text(|t| at_local(t, ctx.now, ctx.tz)));
            }
            if let Some(host) = ctx.facts.scheduled_on {
                label.push_str(&format!(" · scheduled on {host}"));
            }
            push(live_line_end, label, live.last_run_error.clone());
        }
        Status::Live if !ctx.facts.scheduling_off => {
            if let Some(host) = ctx.facts.scheduled_on {
                let tip = format!(
                    "`[scheduler] host` names {host}: scheduled and event runs happen there; Run now still runs it here."
                );
                push(live_line_end, format!("scheduled on {host}"), Some(tip));
            }
        }
        Status::Stopped => {
            let label = match live.last_stopped_at {
                Some(t) => format!("stopped {}", ago(t, ctx.now)),
                None => "stopped".to_owned(),
            };
            let tip = "Stopped by hand: not a failure; the next occurrence runs as usual.";
            push(live_line_end, label, Some(tip.to_owned()));
        }
        Status::Invalid | Status::Expired | Status::Paused | Status::Live => {}
    }

    if let Some(u) = &live.until {
        let day = super::text::until_text(&u.value, ctx.tz);
        let label =
            if live.expired(ctx.now, ctx.tz) { format!("ended {day}") } else { format!("until {day}") };
        push(line_end(ctx.text, u.span.end), label, None);
    }

    if let (Some(expr), Some(cron)) = (&live.cron_expr, &live.cron) {
        let mut label = cron.describe();
        if scheduled {
            // When the cron next fires, as the lens and `list` say it (not merely its next
            // occurrence: a backoff can hold one back past its grace).
            let cron_view = status::cron_view(live, ctx.now, ctx.tz);
            let when = match (&cron_view.decision, cron_view.next_due) {
                (Some(Decision::Due(_)), _) => Some("due now".to_owned()),
                // A cycle held back by the backoff fires when it ends.
                (
                    Some(Decision::NotDue(SkipReason::Backoff { until: end, pending: Some(_) })),
                    Some(next),
                ) if next == *end => Some(format!("due in {}", until(next, ctx.now))),
                (_, Some(next)) => Some(format!("next {}", at_local(next, ctx.now, ctx.tz))),
                (_, None) => None,
            };
            // The cron's latest occurrence passed without a run (asleep, off), until the next.
            let missed = status::missed(live, ctx.now, ctx.tz)
                .filter(|m| matches!(m.trigger, crate::schedule::DueTrigger::Cron { .. }))
                .map(|m| format!("missed {}", at_local(m.at, ctx.now, ctx.tz)));
            for part in missed.into_iter().chain(when) {
                label.push_str(" · ");
                label.push_str(&part);
            }
        }
        push(expr.span.end, label, cron_tooltip(ctx, cron));
    }

    if scheduled {
        for entry in &live.windows {
            let Some(window) = entry.window else { continue };
            if let Some(label) = window_state(ctx, live, &view, window) {
                let tooltip = format!(
                    "Runs once a day, as soon as possible from {} through {} (local time).",
                    window.start, window.end
                );
                push(entry.span.end, label, Some(tooltip));
            }
        }
    }

    if let (Some(t), Some(span)) = (live.last_run_at, live.runtime_span("lastRunAt")) {
        let local = t.with_timezone(ctx.tz).naive_local().format("%a %-d %b %Y %H:%M");
        push(span.end, ago(t, ctx.now), Some(format!("Latest successful run, ended: {local} (local time)")));
    }

    if !live.active
        && let Some(span) = &live.active_span
    {
        push(
            span.end,
            "paused".to_owned(),
            Some("Nothing runs on schedule or on events; Run now still works.".to_owned()),
        );
    }

    // Only while the held-back cycle does fire when the backoff ends (it may be missed by then).
    if let Some(Decision::NotDue(SkipReason::Backoff { until: end, pending: Some(_) })) = &view.decision
        && view.next_due == Some(*end)
    {
        let at = live.runtime_span("lastAttemptAt").map_or(live_line_end, |s| s.end);
        let why = "The latest run did not succeed; scheduled runs wait 5 minutes after it, doubling with each consecutive failure.";
        push(at, format!("retry in {}", until(*end, ctx.now)), Some(why.to_owned()));
    }

    hints.sort_by_key(|h| h.offset);
    hints
}

/// A window's state today, as its hint says it; `None` when its band cannot be computed.
fn window_state<Tz: TimeZone>(ctx: &Ctx<Tz>, live: &Live, view: &ScheduleView, w: Window) -> Option<String> {
    let now = ctx.now;
    let band = w.band(local_date(now, ctx.tz)?, ctx.tz)?;
    if now < band.start {
        return Some(format!("opens {}", at_local(band.start, now, ctx.tz)));
    }
    let last_run = live.last_run_at;
    if band.contains(now) {
        // Inside the band the scheduler's rule decides: a run after today's start covers it,
        // and so does a stopped attempt (or one that failed past the backoff's cap).
        let ended = matches!(
            view.decision,
            Some(Decision::NotDue(SkipReason::Waiting { windows: Some(WindowSkip::DoneToday { .. }), .. }))
        );
        if ended || last_run.is_some_and(|r| r > band.start) {
            return Some("done today".to_owned());
        }
        return Some(match &view.decision {
            Some(Decision::NotDue(SkipReason::Backoff { until: end, .. })) if *end < band.end => {
                format!("due in {}", until(*end, now))
            }
            Some(Decision::NotDue(SkipReason::Backoff { .. })) => "missed today".to_owned(),
            _ => "due now".to_owned(),
        });
    }
    // After the band only a run inside it means today's cycle was done.
    let ran_inside = last_run.is_some_and(|r| r > band.start && r < band.end);
    Some(if ran_inside { "done today" } else { "closed today" }.to_owned())
}

/// The next three fire times, for a cron hint's tooltip.
fn cron_tooltip<Tz: TimeZone>(ctx: &Ctx<Tz>, cron: &crate::schedule::CronSchedule) -> Option<String> {
    let mut times: Vec<DateTime<Utc>> = Vec::new();
    let mut t = ctx.now;
    while times.len() < 3 {
        let Some(next) = cron.next_after(t, ctx.tz) else { break };
        times.push(next);
        t = next;
    }
    if times.is_empty() {
        return None;
    }
    let list: Vec<String> = times.iter().map(|&t| at_local(t, ctx.now, ctx.tz)).collect();
    Some(format!("Next fire times (local): {}", list.join(", ")))
}

/// The end of the line holding `offset`, before its line ending and trailing blanks.
fn line_end(text: &str, offset: usize) -> usize {
    let offset = text.floor_char_boundary(offset);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    offset + text[offset..end].trim_end().len()
}

/// `range` clamped to the text, ordered, with both ends moved back to a character boundary.
fn floor_range(text: &str, range: Range<usize>) -> Range<usize> {
    let a = text.floor_char_boundary(range.start);
    let b = text.floor_char_boundary(range.end);
    a.min(b)..a.max(b)
}

#[cfg(test)]
#[path = "hints_tests.rs"]
mod tests;
