//! `livenote sources [DIR]`: each source of a workspace with its kind, last poll, items seen,
//! next poll and last error (`--format json` for scripts); `livenote sources poll NAME [DIR]
//! [--dry-run]`: poll one now, one line per queued (or would-be) event.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, bail};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::Format;
use crate::config::{Config, SourceKind};
use crate::sources::poller::{PollCx, PollError, Refusal, due_at, poll_source, refusal};
use crate::sources::state;
use crate::text::escape::terminal;

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Poll the source NAME once now: one line per event queued (with `--dry-run`, that would
    /// be queued: nothing is queued or recorded).
    Poll {
        /// The source (`[sources.NAME]`).
        name: String,
        /// The workspace folder (default: the current folder).
        dir: Option<PathBuf>,
        /// Print what would be queued; queue and record nothing.
        #[arg(long)]
        dry_run: bool,
        /// Read "now" from this file (RFC 3339), for end-to-end tests.
        #[arg(long, hide = true)]
        clock_file: Option<PathBuf>,
    },
}

/// One source as listed (also the JSON item).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    name: String,
    /// `feed`, `ics`, `imap`, `webhook`, `command`; `null` for a source that cannot be used.
    kind: Option<&'static str>,
    /// `new` (polled when due, not polled yet), `polled`, `listens`, `disabled`, `untrusted` (the folder is not trusted: no source polls
    /// into it), `other-folders` (a source of the user's own file whose `folders` leaves this
    /// one out), `elsewhere` (`[scheduler] host` names another machine), `broken`
    /// (misconfigured: see `lastError`).
    status: &'static str,
    last_poll: Option<String>,
    items_seen: u64,
    events_queued: u64,
    next_poll: Option<String>,
    last_error: Option<String>,
    failures: u32,
}

fn time(t: Option<DateTime<Utc>>) -> Option<String> {
    t.map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
}

pub fn list(dir: Option<PathBuf>, format: Format, out: &mut impl Write) -> Result<u8> {
    let root = crate::workspace::given::folder(&dir.unwrap_or_else(|| PathBuf::from(".")))?;
    let (config, problems) = Config::load(Some(&root), None);
    for p in problems.iter().filter(|p| p.key.as_deref().is_some_and(|k| k.starts_with("sources"))) {
        tracing::warn!("config {p}");
    }
    let trusted = trusted(&root);
    let home = state::Home::user(&root);
    let me = crate::machine::name(&crate::config::ProcessEnv, &config.machine);
    let elsewhere = crate::schedule::host::Placement::of(config.scheduler.host.as_deref(), &me).elsewhere();
    let mut rows = Vec::new();
    for (name, cfg) in &config.sources {
        let st = state::load(&home, name).unwrap_or_else(|e| {
            tracing::warn!("source {name}: cannot read its state: {e}");
            state::SourceState::default()
        });
        let refused = refusal(cfg, &root, trusted);
        let status = match &cfg.kind {
            _ if !cfg.enabled => "disabled",
            _ if refused == Some(Refusal::OtherFolders) => "other-folders",
            _ if refused.is_some() => "untrusted",
            _ if elsewhere.is_some() => "elsewhere",
            SourceKind::Webhook(_) => "listens",
            // Not "polled" before it has been: its first poll is due now.
            _ if st.last_poll.is_none() && st.failures == 0 => "new",
            _ => "polled",
        };
        let polls = matches!(status, "polled" | "new");
        let next = if polls { due_at(cfg, &st).filter(|t| *t > DateTime::<Utc>::MIN_UTC) } else { None };
        rows.push(Row {
            name: name.clone(),
            kind: Some(cfg.kind.name()),
            status,
            last_poll: time(st.last_poll),
            items_seen: st.items_seen,
            events_queued: st.events_queued,
            next_poll: time(next).or_else(|| polls.then(|| "now".to_owned())),
            last_error: st.last_error.clone(),
            failures: st.failures,
        });
    }
    for (name, reason) in &config.broken_sources {
        rows.push(Row {
            name: name.clone(),
            kind: None,
            status: "broken",
            last_poll: None,
            items_seen: 0,
            events_queued: 0,
            next_poll: None,
            last_error: Some(format!("misconfigured: {reason}")),
            failures: 0,
        });
    }
    if let Some(ignored) = &config.ignored_folder {
        for name in ignored.source_names() {
            rows.push(Row {
                name,
                kind: None,
                status: "untrusted",
                last_poll: None,
                items_seen: 0,
                events_queued: 0,
                next_poll: None,
                last_error: Some(ignored.problem()),
                failures: 0,
            });
        }
    }
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &rows)?;
            writeln!(out)?;
        }
        Format::Text if rows.is_empty() => {
            writeln!(
                out,
                "no sources: add [sources.NAME] to .livenote.toml or your config (see docs/sources.md)"
            )?;
        }
        Format::Text => {
            let names: Vec<String> = rows.iter().map(|r| terminal(&r.name).into_owned()).collect();
            let w = names.iter().map(|n| n.chars().count()).max().unwrap_or(4).max(4);
            let dash = || "-".to_owned();
            let sw = rows.iter().map(|r| r.status.len()).max().unwrap_or(0).max(9);
            writeln!(
                out,
                "{:<w$}  {:<7}  {:<sw$}  {:<20}  {:>5}  {:<20}  LAST ERROR",
                "NAME", "KIND", "STATUS", "LAST POLL", "SEEN", "NEXT POLL"
            )?;
            for (r, name) in rows.iter().zip(&names) {
                let error = r
                    .last_error
                    .as_deref()
                    .map_or_else(dash, |e| crate::text::short::clip(&terminal(e), 120));
                writeln!(
                    out,
                    "{name:<w$}  {:<7}  {:<sw$}  {:<20}  {:>5}  {:<20}  {error}",
                    r.kind.unwrap_or("-"),
                    r.status,
                    r.last_poll.clone().unwrap_or_else(dash),
                    r.items_seen,
                    r.next_poll.clone().unwrap_or_else(dash),
                )?;
            }
        }
    }
    Ok(0)
}

fn trusted(root: &std::path::Path) -> bool {
    crate::workspace::trust::TrustStore::user().is_some_and(|t| t.is_trusted(root))
}

pub fn poll(
    name: &str,
    dir: Option<PathBuf>,
    dry_run: bool,
    clock_file: Option<PathBuf>,
    out: &mut impl Write,
) -> Result<u8> {
    let root = crate::workspace::given::folder(&dir.unwrap_or_else(|| PathBuf::from(".")))?;
    let (config, _) = Config::load(Some(&root), None);
    let Some(cfg) = config.sources.get(name) else {
        if let Some(reason) = config.broken_sources.get(name) {
            bail!("source `{name}` is misconfigured: {reason}");
        }
        if let Some(ignored) =
            config.ignored_folder.as_ref().filter(|i| i.source_names().iter().any(|n| n == name))
        {
            bail!(
                "source `{name}` comes from {}, which is not used: {}",
                ignored.path.display(),
                ignored.trust.reason()
            );
        }
        let known: Vec<&str> = config.sources.keys().map(String::as_str).collect();
        bail!(
            "no source `{name}` (known: {})",
            if known.is_empty() { "none".to_owned() } else { known.join(", ") }
        );
    };
    let trusted = trusted(&root);
    if let Some(why) = refusal(cfg, &root, trusted) {
        bail!("source `{name}` is not polled here: {}", why.say(&root));
    }
    let home = state::Home::user(&root);
    let clock = super::watch::clock(clock_file);
    let runtime = super::watch::runtime()?;
    let cx = PollCx {
        root: &root,
        name,
        trusted,
        home: &home,
        now: clock.now(),
        zone: crate::schedule::Zone::Local,
        dry_run,
        // Said below, on stderr, each time.
        say_each_failure: false,
        cancel: tokio_util::sync::CancellationToken::new(),
    };
    let report = match runtime.block_on(poll_source(cfg, &cx)) {
        Ok(r) => r,
        Err(e @ (PollError::Failed(_) | PollError::Busy)) => {
            writeln!(std::io::stderr(), "livenote: source `{name}`: {e}")?;
            return Ok(1);
        }
        Err(e) => bail!("source `{name}`: {e}"),
    };
    for (item, event_id) in &report.new {
        let what = crate::text::short::one_line(&terminal(&item.summary), 100);
        let kind = item.kind.as_deref().unwrap_or(&cfg.event_type);
        match event_id {
            Some(id) => writeln!(out, "queued {id} {kind} {what}")?,
            None if dry_run && !report.recorded_only => writeln!(out, "would queue {kind} {what}")?,
            None => writeln!(out, "recorded {what}")?,
        }
    }
    if report.recorded_only && !report.new.is_empty() {
        let what = if dry_run { "would be recorded" } else { "recorded" };
        writeln!(
            out,
            "first poll: {} {what} as seen, none queued (set `backfill = true` to queue them)",
            crate::text::count(report.new.len(), "item")
        )?;
    }
    Ok(0)
}
