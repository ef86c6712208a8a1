//! `livenote memory NOTE [show KEY | rm KEY | clear] [--format json]`: the agent's memory of a
//! live note (facts it keeps across runs). Without a subcommand, the entries newest first.
//!
//! `rm` and `clear` take the note's run lock, so they never land in the middle of a run (which
//! holds it and may be saving); while one goes on they are refused. `rm` of an absent key
//! succeeds (as the agent's `memory_delete`); `show` of one is exit 1. A note without a `live:`
//! block is refused unless it still has a memory (left from when it was live), which can then
//! be read and cleared.

use std::io::Write;
use std::path::Path;

use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::json;

use super::Format;
use crate::memory::store::MemoryStore;
use crate::memory::{Memory, timestamp};

/// What to do with the memory (nothing: list it).
#[derive(Debug, Clone, Subcommand)]
pub enum Action {
    /// Print one entry in full.
    Show {
        /// The entry's key.
        key: String,
    },
    /// Delete one entry (nothing to do when it is absent).
    Rm {
        /// The entry's key.
        key: String,
    },
    /// Delete the note's whole memory (also when its file cannot be read).
    Clear,
}

pub fn run(
    note: &Path,
    action: Option<Action>,
    format: Format,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Result<u8> {
    let (engine, path) = super::undo::engine_for(note)?;
    // A note moved since its last run: its memory follows it first.
    engine.adopt(&path);
    let rel = engine.rel(&path).into_string();
    let store = MemoryStore::new(&engine.root);
    let shown = note.display();
    let text = crate::workspace::read_note(&path).map_err(|e| anyhow::anyhow!("memory {shown}: {e}"))?;
    let live = crate::note::analyze(&text, &crate::note::Options::default()).live.is_some();
    let failed = |err: &mut dyn Write, message: String| -> Result<u8> {
        writeln!(err, "livenote: memory {shown}: {message}")?;
        Ok(1)
    };
    if let Some(Action::Clear) = action {
        if !live && !has_file(&store, &rel) {
            bail!("{shown} is not a live note (no `live:` block in its frontmatter)");
        }
        let _lock = match engine.lock_for_edit(&path) {
            Ok(l) => l,
            Err(e) => return failed(err, e),
        };
        let cleared = match store.clear(&rel) {
            Ok(c) => c,
            Err(e) => return failed(err, e),
        };
        match format {
            Format::Json => writeln!(out, "{}", json!({"note": rel, "cleared": cleared}))?,
            Format::Text if cleared => writeln!(out, "cleared the memory of {rel}")?,
            Format::Text => writeln!(out, "{rel} has no memory; nothing to clear")?,
        }
        return Ok(0);
    }
    let memory = match store.load(&rel) {
        Ok(m) => m,
        Err(e) => return failed(err, e),
    };
    if !live && memory.is_empty() {
        bail!("{shown} is not a live note (no `live:` block in its frontmatter)");
    }
    match action {
        None | Some(Action::Clear) => list(&rel, &memory, format, out)?,
        Some(Action::Show { key }) => {
            let entry = match memory.get(&key) {
                Ok(e) => e,
                Err(e) => return failed(err, e.to_string()),
            };
            match format {
                Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(entry)?)?,
                Format::Text => {
                    let pin = if entry.pinned { ", pinned" } else { "" };
                    let from = entry.origin.as_ref().map(|o| format!(", saved by {o}")).unwrap_or_default();
                    writeln!(
                        out,
                        "{} (updated {}{pin}{from})\n\n{}",
                        entry.key,
                        timestamp(entry.updated),
                        entry.content
                    )?;
                }
            }
        }
        Some(Action::Rm { key }) => {
            let _lock = match engine.lock_for_edit(&path) {
                Ok(l) => l,
                Err(e) => return failed(err, e),
            };
            // Read again under the lock: a run may have saved since.
            let mut memory = match store.load(&rel) {
                Ok(m) => m,
                Err(e) => return failed(err, e),
            };
            let deleted = match memory.delete(&key) {
                Ok(d) => d,
                Err(e) => return failed(err, e.to_string()),
            };
            if deleted && let Err(e) = store.save(&rel, &memory) {
                return failed(err, e);
            }
            match format {
                Format::Json => writeln!(out, "{}", json!({"note": rel, "key": key, "deleted": deleted}))?,
                Format::Text if deleted => writeln!(out, "deleted `{key}` from the memory of {rel}")?,
                Format::Text => writeln!(out, "`{key}` is not in the memory of {rel}; nothing to delete")?,
            }
        }
    }
    Ok(0)
}

/// Whether the note has a memory file at all (readable or not).
fn has_file(store: &MemoryStore, rel: &str) -> bool {
    !matches!(store.load(rel), Ok(m) if m.is_empty())
}

fn list(rel: &str, memory: &Memory, format: Format, out: &mut impl Write) -> Result<()> {
    let entries = memory.newest_first();
    if let Format::Json = format {
        writeln!(out, "{}", serde_json::to_string_pretty(&json!({"note": rel, "entries": entries}))?)?;
        return Ok(());
    }
    if entries.is_empty() {
        writeln!(out, "{rel} has no memory yet")?;
        return Ok(());
    }
    writeln!(out, "{} in the memory of {rel}, newest first:", crate::text::count(entries.len(), "entry"))?;
    let width = entries.iter().map(|e| e.key.len()).max().unwrap_or(0);
    for e in entries {
        let pin = if e.pinned { "[pinned] " } else { "" };
        let from = e.origin.as_ref().map(|o| format!("[saved by {o}] ")).unwrap_or_default();
        let preview = crate::text::short::one_line(&e.content, 80);
        writeln!(out, "{:<width$}  {}  {pin}{from}{preview}", e.key, timestamp(e.updated))?;
    }
    Ok(())
}
