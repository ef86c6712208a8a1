//! `livenote list [DIR]`: every live note with its status, what is due and when it fires
//! next, as a table or as JSON (`--format json`, stable for scripts). Reads only frontmatter.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use super::Format;
use crate::note;
use crate::status;
use crate::workspace;

pub fn run(dir: Option<PathBuf>, format: Format, at: Option<&str>, out: &mut impl Write) -> Result<u8> {
    let (at, shown_in) = match at {
        Some(s) => {
            let (at, offset) = parse_at(s)?;
            // The scheduler fires an occurrence the moment after it: "what fires at 08:00"
            // includes the 08:00 occurrence.
            (at + chrono::TimeDelta::milliseconds(1), offset)
        }
        None => (crate::schedule::Clock::now(&crate::schedule::SystemClock), None),
    };
    let root = crate::workspace::given::folder(&dir.unwrap_or_else(|| PathBuf::from(".")))?;
    // What the scheduler would consider: the config's excludes are left out here too (the
    // folder's config counts only when trusted, as for runs).
    let exclude = crate::config::Config::load(Some(&root), None).0.scheduler.exclude;
    let (files, errors) = workspace::markdown_files(&root, &exclude);
    let store = crate::runs::Store::new(&root);
    let trust_list = crate::workspace::trust::TrustStore::user().map(|t| t.list());
    let trust = trust_list.as_ref().map(|t| t.check(&root));
    let trusted = trust.as_ref().is_some_and(|t| t.is_trusted());
    if !trusted && root.join(crate::workspace::trust::CONFIG_FILE).exists() {
        let reason = trust.as_ref().map_or("no trust store", |t| t.reason());
        let _ = writeln!(
            std::io::stderr(),
            "livenote: {}/.livenote.toml is ignored: {reason}; notes run only by hand, with your own configuration, until you run `livenote trust {}`",
            root.display(),
            root.display()
        );
    }
    let shown = |p: &std::path::Path| super::display_path(p, Some(&root));
    for s in errors {
        tracing::warn!("skip {}", s.shown(shown));
    }
    let mut items = Vec::new();
    for file in &files {
        let text = match workspace::read_frontmatter(file) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!("skip {}", workspace::Skipped::new(file, e).shown(shown));
                continue;
            }
        };
        let analysis = note::analyze(&text, &note::Options::default());
        let Some(live) = analysis.live else { continue };
        let path = super::display_path(file, Some(&root));
        // A folder inside with its own `.livenote.toml` needs its own trust.
        let trusted = trusted
            && crate::workspace::trust::nested_config_dir(&root, file)
                .is_none_or(|d| trust_list.as_ref().is_some_and(|l| l.contains(&d)));
        let facts = status::RunFacts {
            running: store.is_locked(&path),
            trusted: Some(trusted),
            ..Default::default()
        };
        let mut item = status::list_item(path, &live, facts, at, &crate::schedule::Zone::Local);
        // Times in the zone the question was asked in.
        if let Some(offset) = shown_in {
            item.next_due = item.next_due.map(|t| in_offset(&t, offset));
        }
        items.push(item);
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

fn table(items: &[status::ListItem], out: &mut impl Write) -> Result<()> {
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
