//! `livenote skills [DIR]`: the skills notes of a workspace may list in `live.skills`, with
//! where each comes from (workspace, user, built-in) and its file; a skill another of the same
//! name shadows is listed too, marked overridden. As a table or as JSON (`--format json`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::Format;
use crate::skills;
use crate::text::escape::terminal;

/// One line of the listing (also the JSON item).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Item<'a> {
    name: &'a str,
    description: &'a str,
    source: &'static str,
    /// Workspace-relative, absolute (the user's) or `built-in:<file>`.
    path: &'a str,
    /// The file of the skill that shadows this one; absent for the skill in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    overridden_by: Option<&'a str>,
}

pub fn run(dir: Option<PathBuf>, format: Format, out: &mut impl Write) -> Result<u8> {
    let root = crate::workspace::given::folder(&dir.unwrap_or_else(|| PathBuf::from(".")))?;
    let config = crate::config::Config::load(Some(&root), None).0;
    let user_dir = skills::user_dir();
    let loaded = skills::load(skills::Sources {
        root: &root,
        dirs: &config.skills.dirs,
        workspace: true,
        user_dir: user_dir.as_deref(),
    });
    for why in &loaded.problems {
        tracing::warn!("skip skill {why}");
    }
    let mut items: Vec<Item<'_>> = loaded
        .skills
        .iter()
        .map(|s| (s, None))
        .chain(loaded.shadowed.iter().map(|(s, by)| (s, Some(by.as_str()))))
        .map(|(s, by)| Item {
            name: &s.name,
            description: &s.description,
            source: s.source.as_str(),
            path: &s.file,
            overridden_by: by,
        })
        .collect();
    // By name, the skill in use before those it shadows.
    items.sort_by(|a, b| (a.name, a.overridden_by.is_some()).cmp(&(b.name, b.overridden_by.is_some())));
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &items)?;
            writeln!(out)?;
        }
        Format::Text => {
            // Names, descriptions and file names come from the folder: terminal escapes in
            // them are shown, never acted on.
            let shown: Vec<_> = items.iter().map(|i| (terminal(i.name), terminal(i.path))).collect();
            let width = shown.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(4).max(4);
            let pw = shown.iter().map(|(_, p)| p.chars().count()).max().unwrap_or(4).max(4);
            writeln!(out, "{:<width$}  {:<9}  {:<pw$}  DESCRIPTION", "NAME", "SOURCE", "PATH")?;
            for (i, (name, path)) in items.iter().zip(&shown) {
                let description = crate::text::short::clip(&terminal(i.description), 80);
                let description = match i.overridden_by {
                    Some(by) => format!("(overridden by {}) {description}", terminal(by)),
                    None => description,
                };
                writeln!(out, "{name:<width$}  {:<9}  {path:<pw$}  {description}", i.source)?;
            }
            let trusted = crate::workspace::trust::TrustStore::user()
                .is_some_and(|t| t.list().check(&root).is_trusted());
            if !trusted && items.iter().any(|i| i.source == skills::Source::Workspace.as_str()) {
                writeln!(
                    out,
                    "\nThis folder is not trusted: runs use only the user's and the built-in skills until you run `livenote trust {}`.",
                    terminal(&root.display().to_string())
                )?;
            }
        }
    }
    Ok(0)
}
