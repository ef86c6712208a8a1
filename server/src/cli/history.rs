//! `livenote history NOTE [--format json]`: the note's runs, newest first: id, time, trigger,
//! outcome, summary, lines added/removed, and whether the body from before the run is kept
//! (what `livenote undo` restores from); under a model run, what it cost (tokens, model and
//! tool calls, wall time).

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use super::Format;

pub fn run(note: &Path, format: Format, out: &mut impl Write) -> Result<u8> {
    let (engine, path) = super::undo::engine_for(note)?;
    let runs = engine.history(&path);
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &runs)?;
            writeln!(out)?;
        }
        Format::Text => {
            // Columns as wide as their widest value, so the header sits over them.
            let id_width = runs.iter().map(|r| r.id.len()).max().unwrap_or(0).max(3);
            let time_width =
                runs.iter().map(|r| r.time.as_deref().map_or(1, str::len)).max().unwrap_or(0).max(4);
            if runs.is_empty() {
                writeln!(out, "no runs of {} are recorded", engine.rel(&path))?;
            } else {
                writeln!(
                    out,
                    "{:<id_width$}  {:<time_width$}  {:<7} {:<10} {:<9} {:<8}  SUMMARY",
                    "RUN", "TIME", "TRIGGER", "OUTCOME", "LINES", "SNAPSHOT"
                )?;
            }
            for r in &runs {
                let lines = match (r.lines_added, r.lines_removed) {
                    (Some(a), Some(d)) => format!("+{a} -{d}"),
                    _ => "?".to_owned(),
                };
                writeln!(
                    out,
                    "{:<id_width$}  {:<time_width$}  {:<7} {:<10} {:<9} {:<8}  {}",
                    r.id,
                    r.time.as_deref().unwrap_or("?"),
                    r.trigger.as_deref().unwrap_or("?"),
                    r.outcome,
                    lines,
                    if r.snapshot { "snapshot" } else { "-" },
                    r.summary.as_deref().unwrap_or("")
                )?;
                // A model run's cost on a line of its own, under the run.
                if let Some(t) = &r.totals {
                    let tools = match t.tools_by_name() {
                        by_name if by_name.is_empty() => String::new(),
                        by_name => format!(" [{by_name}]"),
                    };
                    writeln!(
                        out,
                        "    {}{tools}; input {}, output {}",
                        t.brief(),
                        crate::cost::grouped(t.tokens.input),
                        crate::cost::grouped(t.tokens.output)
                    )?;
                }
            }
        }
    }
    Ok(0)
}
