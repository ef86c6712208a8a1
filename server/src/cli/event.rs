//! `livenote event --source S --type T [--target NOTE] [--json] [DIR] < payload`: queue an
//! event for the workspace's live notes and print its id. The payload is stdin, as text (or
//! as a JSON value with `--json`), at most 1 MiB. A running `livenote watch` or editor picks
//! the event up; otherwise it waits in `.livenote/events/pending/`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::events::{self, MAX_PAYLOAD_BYTES};
use crate::note;

/// The command's inputs, as parsed by clap.
#[derive(Debug, Clone)]
pub struct Args {
    pub source: String,
    pub kind: String,
    pub target: Option<PathBuf>,
    pub json: bool,
    pub dir: Option<PathBuf>,
}

/// Queue the event; bad input is an error (exit 2 through the caller).
pub fn run(args: Args, input: &mut impl Read, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    let root =
        crate::workspace::given::folder_or_note(&args.dir.clone().unwrap_or_else(|| PathBuf::from(".")))?;
    if args.source.trim().is_empty() || args.kind.trim().is_empty() {
        bail!("--source and --type must not be empty");
    }
    // A folder inside with its own `.livenote.toml` is a root of its own, with its own queue:
    // a target there is queued there; an event for every note goes to every root's queue.
    let (roots, target) = match &args.target {
        Some(t) => {
            let path = target_path(&root, t)?;
            let owner = crate::workspace::roots::owner(&root, &path);
            let rel = target_rel(&owner, t, &path)?;
            (vec![owner], Some(rel))
        }
        None => {
            let (roots, _) = crate::workspace::walk::roots(&root, &|_| Vec::new());
            (roots.into_iter().map(|(r, _)| r).collect(), None)
        }
    };
    let mut bytes = Vec::new();
    // One byte over the cap is enough to know the payload is too large, without reading a
    // runaway stream to its end.
    input
        .take(MAX_PAYLOAD_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .context("read the payload from stdin")?;
    if bytes.len() > MAX_PAYLOAD_BYTES {
        bail!("the payload is larger than {} MiB", MAX_PAYLOAD_BYTES / (1024 * 1024));
    }
    let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("the payload is not UTF-8 text"))?;
    let payload = if args.json {
        serde_json::from_str(&text).context("--json: the payload is not valid JSON")?
    } else {
        serde_json::Value::String(text)
    };
    if let (Some(t), Some(owner)) = (&target, roots.first())
        && let Some(why) = not_eligible(&owner.join(t))
    {
        // Queued anyway: the note may be fixed before the event is processed.
        writeln!(err, "livenote: warning: {t} {why}; the event will not run it")?;
    }
    for r in &roots {
        let event = events::create_event(
            r,
            &args.source,
            &args.kind,
            payload.clone(),
            target.as_deref(),
            crate::schedule::Clock::now(&crate::schedule::SystemClock),
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        writeln!(out, "{}", event.id)?;
    }
    Ok(0)
}

/// `--target`'s note: relative to the workspace if such a file exists there, else to the
/// current folder.
fn target_path(root: &Path, target: &Path) -> Result<PathBuf> {
    let candidate = if target.is_relative() && root.join(target).is_file() {
        root.join(target)
    } else {
        target.to_path_buf()
    };
    // Only a found file is taken from under the workspace: an error names the target as typed.
    crate::workspace::given::note(&candidate).map_err(|e| anyhow::anyhow!("--target {e}"))
}

/// `--target`'s note (`path`) relative to the root that owns it.
fn target_rel(root: &Path, target: &Path, path: &Path) -> Result<String> {
    let rel = crate::workspace::NotePath::of(root, path)
        .ok_or_else(|| anyhow::anyhow!("--target {}: not inside {}", target.display(), root.display()))?;
    Ok(rel.into_string())
}

/// Why a note would not take events, if it would not.
fn not_eligible(path: &Path) -> Option<&'static str> {
    let Ok(head) = crate::workspace::read_frontmatter(path) else { return Some("cannot be read") };
    let analysis = note::analyze(&head, &note::Options::default());
    let Some(live) = analysis.live else { return Some("is not a live note") };
    if live.has_errors {
        Some("has errors in its live: block")
    } else if !live.active {
        Some("is paused")
    } else {
        // A target skips routing: the named note runs without `eventMatchCriteria` too (SPEC 5).
        None
    }
}
