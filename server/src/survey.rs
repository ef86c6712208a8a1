//! What `livenote list` and `livenote check` find in a workspace, for every surface that shows
//! it (the command line, `livenote mcp`): the live notes with their status, and the
//! diagnostics of notes with their positions. The callers format; nothing here prints.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::note::{self, Diagnostic, Severity};
use crate::status::{self, ListItem};
use crate::text::{Encoding, LineIndex};
use crate::workspace::{self, trust};

/// The live notes of a workspace, as `livenote list` sees them.
#[derive(Debug)]
pub struct Listing {
    pub items: Vec<ListItem>,
    /// Why the folder's `.livenote.toml` is ignored (not trusted), when it has one.
    pub ignored_config: Option<&'static str>,
    /// This machine's name (`crate::machine`), for the notes scheduled on another one.
    pub machine: String,
}

/// Every live note under `root` (each root's `[scheduler] exclude` left out, as the scheduler
/// would), with its status and schedule at `at` in `zone`. A folder inside with its own
/// `.livenote.toml` is a root of its own ([`workspace::roots`]): its notes are listed with
/// its trust, lock and excludes. Reads only frontmatter (and a title heading right below it);
/// paths are relative to `root` (where the user asked), nested roots' notes included. Files
/// that cannot be read are logged and skipped.
pub fn live_notes(root: &Path, at: DateTime<Utc>, zone: &crate::schedule::Zone) -> Listing {
    // A folder's config counts only when trusted, as for runs.
    let exclude_of = |r: &Path| crate::config::Config::load(Some(r), None).0.scheduler.exclude;
    let (roots, errors) = workspace::walk::roots(root, &exclude_of);
    let shown = |p: &Path| shown_in(p, root);
    for s in errors {
        tracing::warn!("skip {}", s.shown(shown));
    }
    let mut items = Vec::new();
    let mut ignored_config = None;
    for (owner, files) in &roots {
        let facts = Facts::of(owner).shown_from(root);
        if owner == root {
            ignored_config = facts.ignored_config;
        }
        for file in files {
            let (text, heading) = match workspace::read_head(file) {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!("skip {}", workspace::Skipped::new(file, e).shown(shown));
                    continue;
                }
            };
            items.extend(facts.item(file, &text, heading.as_deref(), at, zone));
        }
    }
    // In the walk's order (by name, folder by folder), nested roots' notes among the others.
    items.sort_by(|a, b| Path::new(&a.path).cmp(Path::new(&b.path)));
    // `[machine]` counts only in the user's own file: no folder's config is needed.
    let machine =
        crate::machine::name(&crate::config::ProcessEnv, &crate::config::Config::load(None, None).0.machine);
    Listing { items, ignored_config, machine }
}

/// What a note's list item needs from outside the note: whether it runs (its lock) and whether
/// its folder is trusted. Read once per listing.
pub struct Facts {
    root: PathBuf,
    /// Where paths are shown from (the folder the user asked about; the root by default).
    shown_from: PathBuf,
    store: crate::runs::Store,
    trust_list: Option<trust::TrustList>,
    trusted: bool,
    /// Why the folder's `.livenote.toml` is ignored, when it has one and is not trusted.
    pub ignored_config: Option<&'static str>,
    /// The root's `[scheduler] max_backoff`, so the retry shown is the scheduler's.
    max_backoff: chrono::TimeDelta,
    /// `[scheduler] host` when it names another machine than this one.
    scheduled_on: Option<&'static str>,
    /// Runs into an editor's buffer that the files do not show yet, counted as their stamps.
    attempts: crate::runs::attempts::Attempts,
}

impl Facts {
    pub fn of(root: &Path) -> Facts {
        let trust_list = trust::TrustStore::user().map(|t| t.list());
        let trust = trust_list.as_ref().map(|t| t.check(root));
        let trusted = trust.as_ref().is_some_and(|t| t.is_trusted());
        let ignored_config = (!trusted && root.join(trust::CONFIG_FILE).exists())
            .then(|| trust.as_ref().map_or("no trust store", |t| t.reason()));
        // The configuration as a run from here loads it (the folder's file only when trusted).
        let config = crate::config::Config::load(Some(root), None).0;
        let max_backoff = config.scheduler.backoff_cap();
        let me = crate::machine::name(&crate::config::ProcessEnv, &config.machine);
        let scheduled_on = crate::schedule::host::Placement::of(config.scheduler.host.as_deref(), &me)
            .elsewhere()
            .map(crate::machine::interned);
        let attempts = crate::runs::attempts::Attempts::new(root);
        attempts.load();
        Facts {
            attempts,
            root: root.to_path_buf(),
            shown_from: root.to_path_buf(),
            store: crate::runs::Store::new(root),
            trust_list,
            trusted,
            ignored_config,
            max_backoff,
            scheduled_on,
        }
    }

    /// Paths shown relative to `from` (a folder around the root) instead of the root.
    pub fn shown_from(mut self, from: &Path) -> Facts {
        self.shown_from = from.to_path_buf();
        self
    }

    /// The list item of the note at `file` (under the root) whose text (or frontmatter) is
    /// `text` and whose title heading is `heading` (`workspace::index::note_title`); `None`
    /// when it is not live.
    pub fn item(
        &self,
        file: &Path,
        text: &str,
        heading: Option<&str>,
        at: DateTime<Utc>,
        zone: &crate::schedule::Zone,
    ) -> Option<ListItem> {
        let options = note::Options { max_backoff: Some(self.max_backoff), ..note::Options::default() };
        let analysis = note::analyze(text, &options);
        let live = analysis.live?;
        let key = shown_in(file, &self.root);
        let path = shown_in(file, &self.shown_from);
        // A folder inside with its own `.livenote.toml` needs its own trust.
        let trusted = self.trusted
            && trust::nested_config_dir(&self.root, file)
                .is_none_or(|d| self.trust_list.as_ref().is_some_and(|l| l.contains(&d)));
        let facts = status::RunFacts {
            running: self.store.is_locked(&key),
            trusted: Some(trusted),
            scheduled_on: self.scheduled_on,
            ..Default::default()
        };
        let title = workspace::index::note_title(analysis.title, heading, file);
        let live = self.attempts.apply(file, &live).into_owned();
        // A run undone in the editor still ran: its end, from this machine's run store.
        let live = self.store.settle(&live).unwrap_or(live);
        let upcoming = status::Upcoming::asked(&live, at, zone);
        Some(status::list_item_from(path, title, &live, facts, upcoming, at, zone))
    }
}

/// One diagnostic as `livenote check --format json` prints it: 1-based lines and columns
/// counted in characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// The diagnostics of notes, as `livenote check` finds them.
#[derive(Debug, Default)]
pub struct Checked {
    pub items: Vec<Item>,
    pub checked: usize,
    /// Markdown files that could not be read (binary, too large, not UTF-8, ...).
    pub skipped: usize,
    pub errors: usize,
    pub warnings: usize,
    /// A path given does not exist or is not a folder or note (logged).
    pub io_failure: bool,
}

/// What `livenote check` checks a note of a workspace against: the provider names and MCP
/// servers of that workspace's configuration (with the servers' tool lists as runs last saw
/// them; no server is started to check a note).
pub struct Known {
    pub providers: Vec<String>,
    pub mcp: note::tools::McpCatalog,
    /// The `[agent]` settings: which files are standing instructions, and their budget.
    pub agent: crate::config::AgentConfig,
    /// The workspace's `[skills] dirs`.
    pub skill_dirs: Vec<String>,
    /// The skills `live.skills` may name, once [`Known::with_skills`] has read them.
    pub skills: Option<note::skills::SkillCatalog>,
    /// The sources that may send the folder's notes events (`live.sources`, no-event-source).
    pub sources: Vec<note::sources::SourceRef>,
}

impl Known {
    pub fn of(config: &crate::config::Config) -> Known {
        let cache = crate::mcp::cache::ToolCache::user();
        Known {
            providers: config.names_for_notes(),
            mcp: crate::mcp::catalog(config, cache.as_ref()),
            agent: config.agent.clone(),
            skill_dirs: config.skills.dirs.clone(),
            skills: None,
            sources: config.sources_for_notes(),
        }
    }

    /// With the skills of the workspace at `root` (its own, shown whether or not it is
    /// trusted), the user's and livenote's.
    pub fn with_skills(mut self, root: &Path) -> Known {
        let user_dir = crate::skills::user_dir();
        let loaded = crate::skills::load(crate::skills::Sources {
            root,
            dirs: &self.skill_dirs,
            workspace: true,
            user_dir: user_dir.as_deref(),
        });
        self.skills = Some(loaded.catalog());
        self
    }

    /// The options `livenote check` analyses a note with: `provider:` and `tools:` checked
    /// against these, the body scanned.
    pub fn options(&self) -> note::Options<'_> {
        note::Options {
            providers: Some(&self.providers),
            mcp: Some(&self.mcp),
            skills: self.skills.as_ref(),
            scan_body: true,
            max_backoff: None,
        }
    }
}

/// Check notes and folders (each folder walked, gitignore-aware) at the instant `at` in `tz`
/// (for `live/expired`). `shown` writes a file's path for the items and the log.
pub fn check<Tz: chrono::TimeZone>(
    paths: &[PathBuf],
    at: DateTime<Utc>,
    tz: &Tz,
    shown: &dyn Fn(&Path) -> String,
) -> Checked {
    let mut out = Checked::default();
    let mut files: Vec<PathBuf> = Vec::new();
    for p in paths {
        match workspace::given::existing(p, workspace::given::Want::FolderOrNote) {
            Ok((_, meta)) if meta.is_dir() => {
                let (found, skips) = workspace::markdown_files(p, &[]);
                for s in &skips {
                    tracing::warn!("skip {}", s.shown(shown));
                }
                out.skipped +=
                    skips.iter().filter(|s| s.path.as_deref().is_some_and(workspace::is_markdown)).count();
                files.extend(found);
            }
            // Named on its own, a FIFO or a device is read below, which says why it is skipped.
            Ok(_) => files.push(p.clone()),
            Err(e) => {
                tracing::error!("{e}");
                out.io_failure = true;
            }
        }
    }
    // `provider:` and `tools:` are checked against the configuration of the note's workspace,
    // as the language server does (one load per workspace).
    let mut known: HashMap<PathBuf, Known> = HashMap::new();
    for file in &files {
        let text = match workspace::read_note(file) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!("skip {}", workspace::Skipped::new(file, e).shown(shown));
                out.skipped += 1;
                continue;
            }
        };
        out.checked += 1;
        let canonical = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
        let root = workspace::note_root(&canonical);
        let root_of_known = root.clone();
        let known = known.entry(root).or_insert_with_key(|root| {
            Known::of(&crate::config::Config::load(Some(root), None).0).with_skills(root)
        });
        let mut analysis = note::analyze(&text, &known.options());
        let rel = workspace::NotePath::of(&root_of_known, &canonical);
        if rel
            .as_ref()
            .is_some_and(|rel| crate::instructions::is_instructions_file(&known.agent, rel.as_str()))
        {
            analysis
                .diagnostics
                .extend(note::instructions_too_long(&text, known.agent.instructions_max_chars));
        }
        let timed = note::expiry::diagnostics(&text, analysis.live.as_ref(), at, tz);
        analysis.diagnostics.extend(timed);
        let name = canonical.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        analysis.diagnostics.extend(note::conflict::diagnostics(&name, analysis.live.as_ref()));
        analysis.diagnostics.extend(note::sources::source_diagnostics(
            &text,
            analysis.live.as_ref(),
            &known.sources,
        ));
        if let Some(rel) =
            rel.as_ref().filter(|rel| crate::skills::is_skill_file(&known.skill_dirs, rel.as_str()))
        {
            analysis.diagnostics.extend(crate::skills::file_diagnostics(
                &root_of_known,
                &known.skill_dirs,
                rel.as_str(),
                &text,
            ));
        }
        for d in &analysis.diagnostics {
            match d.severity {
                Severity::Error => out.errors += 1,
                Severity::Warning => out.warnings += 1,
                _ => {}
            }
        }
        out.items.extend(items(&shown(file), &text, &analysis.diagnostics));
    }
    out
}

/// The diagnostics of one note's `text` as items naming it `path`.
pub fn items(path: &str, text: &str, diagnostics: &[Diagnostic]) -> Vec<Item> {
    let index = LineIndex::new(text);
    diagnostics
        .iter()
        .map(|d| {
            let start = index.position(text, d.range.start, Encoding::Scalar);
            let end = index.position(text, d.range.end, Encoding::Scalar);
            Item {
                path: path.to_owned(),
                line: start.line + 1,
                column: start.col + 1,
                end_line: end.line + 1,
                end_column: end.col + 1,
                severity: d.severity.as_str(),
                code: d.code.as_str(),
                message: d.message.clone(),
            }
        })
        .collect()
}

/// A path relative to `root` when under it (`.` for the root itself), else as given.
pub fn shown_in(path: &Path, root: &Path) -> String {
    match workspace::NotePath::of(root, path) {
        Some(rel) if rel.as_str().is_empty() => ".".to_owned(),
        Some(rel) => rel.into_string(),
        None => path.display().to_string(),
    }
}
