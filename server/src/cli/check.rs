//! `livenote check [PATH...]`: validate notes for humans (`file:line:col: severity code
//! message`) or scripts (`--format json`), exiting 1 when any note has errors.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use super::Format;
use crate::note::{self, Severity};
use crate::text::{Encoding, LineIndex};
use crate::workspace;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub severity: &'static str,
    pub code: &'static str,
    pub message: String,
}

pub fn run(paths: &[PathBuf], format: Format, out: &mut impl Write) -> Result<u8> {
    let default = [PathBuf::from(".")];
    let paths = if paths.is_empty() { &default[..] } else { paths };
    let mut files: Vec<PathBuf> = Vec::new();
    let mut io_failure = false;
    let mut skipped = 0usize;
    for p in paths {
        match workspace::given::existing(p, workspace::given::Want::FolderOrNote) {
            Ok((_, meta)) if meta.is_dir() => {
                let (found, skips) = workspace::markdown_files(p, &[]);
                for s in &skips {
                    tracing::warn!("skip {}", s.shown(shown));
                }
                skipped +=
                    skips.iter().filter(|s| s.path.as_deref().is_some_and(workspace::is_markdown)).count();
                files.extend(found);
            }
            // Named on its own, a FIFO or a device is read below, which says why it is skipped.
            Ok(_) => files.push(p.clone()),
            Err(e) => {
                tracing::error!("{e}");
                io_failure = true;
            }
        }
    }
    let mut items = Vec::new();
    let mut errors = 0usize;
    let mut warnings = 0usize;
    let mut checked = 0usize;
    // `provider:` and `tools:` are checked against the configuration of the note's workspace
    // (and the MCP servers' tool lists as runs last saw them), as the language server does
    // (one load per workspace).
    let mut known: std::collections::HashMap<PathBuf, (Vec<String>, note::tools::McpCatalog)> =
        std::collections::HashMap::new();
    let tool_lists = crate::mcp::cache::ToolCache::user();
    for file in &files {
        let text = match workspace::read_note(file) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!("skip {}", workspace::Skipped::new(file, e).shown(shown));
                skipped += 1;
                continue;
            }
        };
        checked += 1;
        let canonical = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
        let root = workspace::note_root(&canonical);
        let (providers, mcp) = known.entry(root).or_insert_with_key(|root| {
            let config = crate::config::Config::load(Some(root), None).0;
            (config.names_for_notes(), crate::mcp::catalog(&config, tool_lists.as_ref()))
        });
        let opts = note::Options { providers: Some(providers), mcp: Some(mcp), scan_body: true };
        let analysis = note::analyze(&text, &opts);
        let index = LineIndex::new(&text);
        for d in &analysis.diagnostics {
            match d.severity {
                Severity::Error => errors += 1,
                Severity::Warning => warnings += 1,
                _ => {}
            }
            let start = index.position(&text, d.range.start, Encoding::Scalar);
            let end = index.position(&text, d.range.end, Encoding::Scalar);
            items.push(Item {
                path: shown(file),
                line: start.line + 1,
                column: start.col + 1,
                end_line: end.line + 1,
                end_column: end.col + 1,
                severity: d.severity.as_str(),
                code: d.code.as_str(),
                message: d.message.clone(),
            });
        }
    }
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &items)?;
            writeln!(out)?;
        }
        Format::Text => {
            for i in &items {
                writeln!(out, "{}:{}:{}: {} {} {}", i.path, i.line, i.column, i.severity, i.code, i.message)?;
            }
            tracing::info!("{}", summary(checked, skipped, errors, warnings));
        }
    }
    Ok(if io_failure {
        2
    } else if errors > 0 {
        1
    } else {
        0
    })
}

/// "checked 3 notes: 1 error, 0 warnings; skipped 1 file".
fn summary(checked: usize, skipped: usize, errors: usize, warnings: usize) -> String {
    use crate::text::count;
    let mut s = format!(
        "checked {}: {}, {}",
        count(checked, "note"),
        count(errors, "error"),
        count(warnings, "warning")
    );
    if skipped > 0 {
        s.push_str(&format!("; skipped {}", count(skipped, "file")));
    }
    s
}

fn shown(path: &Path) -> String {
    let s = path.display().to_string();
    match s.strip_prefix("./") {
        Some("") => ".".to_owned(),
        Some(rest) => rest.to_owned(),
        None => s,
    }
}
