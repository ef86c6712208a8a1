//! `livenote list [DIR]`: every live note with its status, what is due and when it fires
//! next, as a table or as JSON (`--format json`, stable for scripts). Reads only frontmatter.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use super::Format;
use crate::status;
use crate::survey;
use crate::text::escape::terminal;

pub fn run(dir: Option<PathBuf>, format: Format, at: Option<&str>, out: &mut impl Write) -> Result<u8> {
    let (at, shown_in) = match at {
        // "What fires at 08:00" includes the 08:00 occurrence: `survey` asks at the instant
        // itself (`schedule::due_asked`), so the grace and a window's end keep their edges.
        Some(s) => parse_at(s)?,
        None => (crate::schedule::Clock::now(&crate::schedule::SystemClock), None),
    };
    let root = crate::workspace::given::folder(&dir.unwrap_or_else(|| PathBuf::from(".")))?;
    let listing = survey::live_notes(&root, at, &crate::schedule::Zone::Local);
    if let Some(reason) = listing.ignored_config {
        let _ = writeln!(
            std::io::stderr(),
            "livenote: {}/.livenote.toml is ignored: {reason}; notes run only by hand, with your own configuration, until you run `livenote trust {}`",
            terminal(&root.display().to_string()),
            terminal(&root.display().to_string())
        );
    }
    let mut items = listing.items;
    // Times in the zone the question was asked in.
    if let Some(offset) = shown_in {
        for item in &mut items {
            item.next_due = item.next_due.take().map(|t| in_offset(&t, offset));
            item.retry_at = item.retry_at.take().map(|t| in_offset(&t, offset));
            item.missed = item.missed.take().map(|t| in_offset(&t, offset));
        }
    }
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &items)?;
            writeln!(out)?;
        }
        Format::Text => table(&items, shown_in, &listing.machine, out)?,
    }
    Ok(0)
}

/// The longest `lastRunError` the table shows, on a line under its note (the JSON has it whole).
const ERROR_CHARS: usize = 100;
/// The longest `lastRunSummary` the table shows, likewise.
const SUMMARY_CHARS: usize = 100;

/// NEXT and LAST RUN in one format: to the second, in the zone the question was asked in
/// (`--at`'s offset), else the local one.
fn table(
    items: &[status::ListItem],
    shown_in: Option<chrono::FixedOffset>,
    machine: &str,
    out: &mut impl Write,
) -> Result<()> {
    let when = |t: &str| match shown_in {
        Some(offset) => in_offset(t, offset),
        None => in_local(t),
    };
    // A file name can hold terminal escapes: shown, never acted on.
    let paths: Vec<_> = items.iter().map(|i| terminal(&i.path)).collect();
    let width = paths.iter().map(|p| p.chars().count()).max().unwrap_or(4).max(4);
    // A failing note's next fire is its retry: say so, with the count. The column is as wide
    // as its longest entry, so LAST RUN stays in its own column beside a retry.
    let nexts: Vec<String> = items
        .iter()
        .map(|i| match &i.retry_at {
            Some(at) => format!("retry {} ({} failure)", when(at), crate::text::count::ordinal(i.failures)),
            None => i.next_due.as_deref().map_or_else(|| "-".to_owned(), when),
        })
        .collect();
    let next_width = nexts.iter().map(|n| n.chars().count()).max().unwrap_or(0).max(25);
    writeln!(out, "{:<width$}  {:<9}  {:<6}  {:<next_width$}  LAST RUN", "NOTE", "STATUS", "DUE", "NEXT")?;
    for ((i, path), next) in items.iter().zip(&paths).zip(&nexts) {
        writeln!(
            out,
            "{:<width$}  {:<9}  {:<6}  {:<next_width$}  {}",
            path,
            i.status,
            i.due.unwrap_or("-"),
            next,
            i.last_run_at.as_deref().map_or_else(|| "never".to_owned(), when),
        )?;
        // What the latest successful run left, in its own words: the table's answer to "what
        // does this note say now" without opening it (the JSON has it whole).
        if let Some(summary) = i.last_run_summary.as_deref().filter(|s| !s.trim().is_empty()) {
            writeln!(
                out,
                "    summary: {}",
                terminal(&crate::text::short::one_line(summary, SUMMARY_CHARS))
            )?;
        }
        // Why the latest run failed, where the user looks: not only in the note or the JSON. A
        // stopped run's "stopped" is its status already.
        if let Some(error) =
            i.last_run_error.as_ref().filter(|_| i.status != status::Status::Stopped.as_str())
        {
            writeln!(out, "    error: {}", terminal(&crate::text::short::one_line(error, ERROR_CHARS)))?;
        }
        // Its latest occurrence passed without a run: said, as `[scheduler] catch_up` is off
        // or it is older than that.
        if let Some(missed) = &i.missed {
            writeln!(out, "    missed {}: nothing ran it then (asleep or off)", when(missed))?;
        }
        // `[scheduler] host` names another machine: the times above are when it fires there.
        if let Some(host) = &i.scheduled_on {
            writeln!(
                out,
                "    scheduled on {}: runs here ({}) only by hand",
                terminal(host),
                terminal(machine)
            )?;
        }
    }
    if items.is_empty() {
        writeln!(out, "(no live notes)")?;
    }
    Ok(())
}

/// `--at`: an RFC 3339 instant (and its offset, to show times in), or a date-time without an
/// offset in the local zone (`2026-11-25T08:00`, seconds optional, `T` or a space).
fn parse_at(s: &str) -> Result<(DateTime<Utc>, Option<chrono::FixedOffset>)> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s.trim()) {
        return Ok((t.with_timezone(&Utc), Some(*t.offset())));
    }
    let naive = ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| chrono::NaiveDateTime::parse_from_str(s.trim(), f).ok())
        .with_context(|| {
            format!("--at {s:?} is not a time: give 2026-11-24T08:00 (local) or 2026-11-24T08:00:00+01:00")
        })?;
    let local = chrono::TimeZone::from_local_datetime(&crate::schedule::Zone::Local, &naive)
        .earliest()
        .with_context(|| format!("--at {s:?} does not exist in the local zone (a daylight saving gap)"))?;
    Ok((local.with_timezone(&Utc), None))
}

/// An RFC 3339 time re-written in `offset` (left as it is if it does not parse).
fn in_offset(t: &str, offset: chrono::FixedOffset) -> String {
    DateTime::parse_from_rfc3339(t)
        .map(|t| t.with_timezone(&offset).to_rfc3339_opts(chrono::SecondsFormat::Secs, false))
        .unwrap_or_else(|_| t.to_owned())
}

/// An RFC 3339 time re-written in the local zone, to the second (left as it is if it does not
/// parse).
fn in_local(t: &str) -> String {
    DateTime::parse_from_rfc3339(t)
        .map(|t| {
            t.with_timezone(&crate::schedule::Zone::Local)
                .fixed_offset()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
        })
        .unwrap_or_else(|_| t.to_owned())
}
