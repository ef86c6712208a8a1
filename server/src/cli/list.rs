//! `livenote list [DIR]`: every live note with its status, what is due and when it fires
//! next, as a table or as JSON (`--format json`, stable for scripts). Reads only frontmatter.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use chrono::{DateTime, Local, SecondsFormat, Utc};
use serde::Serialize;

use super::Format;
use crate::note::{self, model::Live};
use crate::status::{self, RunFacts};
use crate::workspace;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    pub path: String,
    pub active: bool,
    pub status: &'static str,
    pub triggers: Triggers,
    pub due: Option<&'static str>,
    pub next_due: Option<String>,
    pub last_run_at: Option<String>,
    pub last_attempt_at: Option<String>,
    pub last_run_error: Option<String>,
}

/// The triggers as written in the note.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Triggers {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cron_expr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows: Option<Vec<WindowItem>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_match_criteria: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowItem {
    pub start_time: Option<String>,
    pub end_time: Option<String>,
}

pub fn run(dir: Option<PathBuf>, format: Format, at: Option<&str>, out: &mut impl Write) -> Result<u8> {
    let at: DateTime<Utc> = match at {
        Some(s) => DateTime::parse_from_rfc3339(s)
            .with_context(|| format!("--at {s:?} is not an RFC 3339 time (e.g. 2026-11-23T09:00:00+01:00)"))?
            .with_timezone(&Utc),
        None => crate::schedule::Clock::now(&crate::schedule::SystemClock),
    };
    let root = dir.unwrap_or_else(|| PathBuf::from("."));
    if !root.is_dir() {
        anyhow::bail!("{} is not a folder", root.display());
    }
    let (files, errors) = workspace::markdown_files(&root, &[]);
    for e in errors {
        tracing::warn!("skip {e}");
    }
    let mut items = Vec::new();
    for file in &files {
        let text = match workspace::read_frontmatter(file) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!("skip {}: {e}", file.display());
                continue;
            }
        };
        let analysis = note::analyze(&text, &note::Options::default());
        let Some(live) = analysis.live else { continue };
        let path = super::display_path(file, Some(&root));
        items.push(item(path, &live, at));
    }
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &items)?;
            writeln!(out)?;
        }
        Format::Text => table(&items, out)?,
    }
    Ok(0)
}

fn item(path: String, live: &Live, at: DateTime<Utc>) -> Item {
    let view = status::schedule_view(live, at, &Local);
    let triggers = Triggers {
        cron_expr: live.cron_expr.as_ref().map(|c| c.value.clone()),
        windows: (!live.windows.is_empty()).then(|| {
            live.windows
                .iter()
                .map(|w| WindowItem { start_time: w.start_text.clone(), end_time: w.end_text.clone() })
                .collect()
        }),
        event_match_criteria: live.event_match_criteria.clone(),
    };
    Item {
        path,
        active: live.active,
        status: status::status(live, RunFacts::default()).as_str(),
        triggers,
        due: view.due().map(status::trigger_name),
        next_due: view.next_due.map(|t| t.with_timezone(&Local).to_rfc3339_opts(SecondsFormat::Secs, false)),
        last_run_at: live.last_run_at.map(utc),
        last_attempt_at: live.last_attempt_at.map(utc),
        last_run_error: live.last_run_error.clone(),
    }
}

fn utc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn table(items: &[Item], out: &mut impl Write) -> Result<()> {
    let width = items.iter().map(|i| i.path.len()).max().unwrap_or(4).max(4);
    writeln!(out, "{:<width$}  {:<9}  {:<6}  {:<25}  LAST RUN", "NOTE", "STATUS", "DUE", "NEXT")?;
    for i in items {
        writeln!(
            out,
            "{:<width$}  {:<9}  {:<6}  {:<25}  {}",
            i.path,
            i.status,
            i.due.unwrap_or("-"),
            i.next_due.as_deref().unwrap_or("-"),
            i.last_run_at.as_deref().unwrap_or("never"),
        )?;
    }
    if items.is_empty() {
        writeln!(out, "(no live notes)")?;
    }
    Ok(())
}
