//! `livenote make-live NOTE`: a note made live (created when missing) with the objective and
//! triggers given, or with a block the configured model drafts from `--describe`'s sentence;
//! `livenote mcp`'s `make_live` does the work (`mcp_server::ops`), so both refuse the same
//! things and write the same bytes. On a live note `--describe` extends the block (the
//! objective kept word for word) and says what changed. `--run`, and nothing else, runs the
//! note once afterwards, as `livenote run`, unless a `watch` beside it filled the new block
//! first: the first fill happens once (`run::fill`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::DurationRound;
use serde_json::Value;

use crate::mcp_server::ops::{MakeLive, Workspace};
use crate::note::rewrite::TriggerEdits;

/// What was asked on the command line.
#[derive(Debug)]
pub struct Args {
    pub note: PathBuf,
    pub objective: Option<String>,
    pub cron: Option<String>,
    pub windows: Vec<String>,
    pub event: Option<String>,
    pub describe: Option<String>,
    pub run: bool,
    pub workspace: Option<PathBuf>,
    pub clock_file: Option<PathBuf>,
}

pub fn run(args: Args, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    let (root, file) = locate(&args.note, args.workspace.as_deref())?;
    let rel = crate::workspace::NotePath::of_or_whole(&root, &file);
    let windows = args.windows.iter().map(|w| window(w)).collect::<Result<Vec<_>>>()?;
    let request = MakeLive {
        path: rel.as_str().to_owned(),
        objective: args.objective.clone().unwrap_or_default(),
        triggers: TriggerEdits {
            cron_expr: args.cron.clone(),
            windows: (!windows.is_empty()).then_some(windows),
            event_match_criteria: args.event.clone(),
        },
        describe: args.describe.clone(),
    };
    let clock = super::watch::clock(args.clock_file.clone());
    // Runs that start from now on fill the block written below: `--run` makes at most one.
    // (Truncated to the millisecond, as `lastAttemptAt` is written.)
    let since =
        clock.now().duration_trunc(chrono::TimeDelta::milliseconds(1)).unwrap_or_else(|_| clock.now());
    let ws = Workspace::with_clock(&root, clock);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    let answer = match runtime.block_on(ws.make_live(&request)) {
        Ok(a) => a,
        Err(refusal) => {
            writeln!(err, "livenote: make-live {}: {refusal}", rel)?;
            return Ok(1);
        }
    };
    drop(runtime);
    let created = if answer["created"] == Value::Bool(true) { " (created)" } else { "" };
    let draft = &answer["draft"];
    let changes = draft["changes"].as_str().unwrap_or_default();
    let objective = crate::text::short::one_line(draft["objective"].as_str().unwrap_or_default(), 120);
    match (draft["drafted"].as_bool(), draft["wasLive"].as_bool()) {
        // A live note, extended: say what changed, and the objective it has now.
        (Some(drafted), Some(true)) => {
            if !drafted {
                writeln!(
                    err,
                    "livenote: warning: {rel}: your sentence was added to the objective, not a draft: {}",
                    draft["fallback"].as_str().unwrap_or_default()
                )?;
            }
            let from = if drafted { "the model's draft" } else { "your sentence" };
            writeln!(out, "extended {rel} from {from}: {changes}")?;
            writeln!(out, "  objective: {objective}")?;
        }
        (Some(true), _) => writeln!(
            out,
            "made {rel} live{created} from the model's draft: {objective} ({})",
            draft["triggers"].as_str().unwrap_or_default()
        )?,
        (Some(false), _) => {
            writeln!(
                err,
                "livenote: warning: {rel}: the template was written, not a draft: {}",
                draft["fallback"].as_str().unwrap_or_default()
            )?;
            writeln!(
                out,
                "made {rel} live{created} from the template: your sentence as the objective, manual only"
            )?;
        }
        _ => writeln!(out, "made {rel} live{created}")?,
    }
    for d in answer["diagnostics"].as_array().into_iter().flatten() {
        writeln!(
            out,
            "{rel}:{}:{}: {} {} {}",
            d["line"],
            d["column"],
            d["severity"].as_str().unwrap_or_default(),
            d["code"].as_str().unwrap_or_default(),
            crate::text::escape::terminal(d["message"].as_str().unwrap_or_default())
        )?;
    }
    // Only the user's `--run` runs the note: never a draft, whatever the model answered.
    if args.run {
        out.flush()?;
        return super::run::fill(file, Some(root), args.clock_file, since);
    }
    Ok(0)
}

/// The workspace root and the note's path in it: an existing note as `livenote run` finds it,
/// a missing one by its folder (which must exist).
fn locate(note: &Path, workspace: Option<&Path>) -> Result<(PathBuf, PathBuf)> {
    let file = if note.exists() || note.symlink_metadata().is_ok() {
        crate::workspace::given::note(note)?
    } else {
        let name = note.file_name().with_context(|| format!("{} names no file", note.display()))?;
        let parent = match note.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        crate::workspace::given::note_folder(parent)?.join(name)
    };
    let root = match workspace {
        Some(d) => crate::workspace::given::folder(d).context("--workspace")?,
        None => crate::workspace::note_root(&file),
    };
    Ok((root, file))
}

/// `HH:MM-HH:MM` as `(start, end)`; the times themselves are checked with the note.
fn window(w: &str) -> Result<(String, String)> {
    match w.split_once('-') {
        Some((start, end)) => Ok((start.trim().to_owned(), end.trim().to_owned())),
        None => anyhow::bail!("--window {w}: write a band as HH:MM-HH:MM, e.g. 09:00-12:00"),
    }
}
