//! The agent's tools (SPEC section 4): patch-style edits of the note body held in memory, and
//! read-only, confined access to the workspace.
//!
//! - The note tools (`read_note`, `edit_note`, `replace_section`, `append_to_note`) work on the
//!   **body**, the text below the frontmatter, kept in a [`NoteBody`]. The frontmatter is never
//!   in it, so no tool can touch it (text copied from it is simply "not found"). The run loop
//!   hands every changed body to the engine, which applies it to the note as it happens.
//! - The workspace tools (`list_files`, `read_file`, `search_files`) go through a
//!   [`Workspace`]: paths are relative to its root, `..` and absolute paths are refused, a
//!   symlink must resolve inside the root, `.livenote/` is off limits, and a file is visible
//!   only if the gitignore-aware walk of `list_files` would list it (hidden paths, `.git/` and
//!   ignored files are not). Files over [`Caps::max_file_bytes`] and binary files are refused,
//!   and every listing, search and output is capped.
//! - `fetch_url` goes through a [`Fetcher`] so tests never touch the network: [`HttpFetcher`]
//!   is the real one (http(s) only, public addresses only, size and time caps, HTML turned
//!   into text), [`NoFetcher`] refuses. The run loop offers the tool only when enabled and
//!   never in `event` runs.
//!
//! A failing tool never fails the run: its error is the tool result the model sees
//! (`is_error: true`), worded so that the model can correct itself.

use std::fmt;
use std::fs::{self, File};
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::model::{BoxFuture, ToolCall, ToolSpec};
use crate::note::frontmatter;

pub const READ_NOTE: &str = "read_note";
pub const EDIT_NOTE: &str = "edit_note";
pub const REPLACE_SECTION: &str = "replace_section";
pub const APPEND_TO_NOTE: &str = "append_to_note";
pub const LIST_FILES: &str = "list_files";
pub const READ_FILE: &str = "read_file";
pub const SEARCH_FILES: &str = "search_files";
pub const FETCH_URL: &str = "fetch_url";

/// The folder of livenote's own state (history, transcripts, events, locks).
const STATE_DIR: &str = ".livenote";

/// A tool failure, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

impl ToolError {
    fn new(msg: impl Into<String>) -> Self {
        ToolError(msg.into())
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToolError {}

/// Size and count limits of the tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caps {
    /// Files larger than this are refused by `read_file` and skipped by `search_files`.
    pub max_file_bytes: u64,
    /// Paths `list_files` shows at most.
    pub max_files: usize,
    /// Matching lines `search_files` shows at most.
    pub max_matches: usize,
    /// Bytes of any workspace or web tool result (longer output is cut, with a note saying so).
    pub max_output: usize,
    /// Bytes of the note `read_note` shows at most (a huge note is cut, with a note saying so).
    pub max_note_read: usize,
    /// Entries a walk visits at most, so a huge tree cannot stall a run.
    pub max_walk_entries: usize,
    /// Bytes `search_files` reads at most in all.
    pub max_search_bytes: u64,
    /// The body may not grow beyond this (or beyond its size at the start, if larger): a model
    /// stuck appending cannot bloat the note.
    pub max_body_bytes: usize,
    /// Bytes a web page may have.
    pub fetch_max_bytes: usize,
    /// How long a fetch may take.
    pub fetch_timeout: Duration,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            max_file_bytes: 256 * 1024,
            max_files: 200,
            max_matches: 50,
            max_output: 64 * 1024,
            max_note_read: 256 * 1024,
            max_walk_entries: 20_000,
            max_search_bytes: 32 * 1024 * 1024,
            max_body_bytes: 1024 * 1024,
            fetch_max_bytes: 512 * 1024,
            fetch_timeout: Duration::from_secs(20),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The note body

/// The note body being edited: the text below the frontmatter, with the note's line ending.
#[derive(Debug, Clone)]
pub struct NoteBody {
    text: String,
    newline: &'static str,
    max_bytes: usize,
    /// Counts the changes, so the caller can tell whether a call edited the body.
    revision: u64,
}

impl NoteBody {
    pub fn new(text: String, caps: &Caps) -> Self {
        let newline = match text.find('\n') {
            Some(i) if text[..i].ends_with('\r') => "\r\n",
            _ => "\n",
        };
        let max_bytes = caps.max_body_bytes.max(text.len());
        NoteBody { text, newline, max_bytes, revision: 0 }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn into_text(self) -> String {
        self.text
    }

    /// Take `text` as the body, without the tools' checks: it is the note as it stands.
    pub fn sync(&mut self, text: String) {
        if text != self.text {
            self.max_bytes = self.max_bytes.max(text.len());
            self.text = text;
        }
    }

    /// How many times the body changed so far.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// `read_note`: the body as it is now (cut at `max` bytes for a huge note).
    pub fn read(&self, max: usize) -> String {
        if self.text.trim().is_empty() {
            return "(the note body is empty)".to_owned();
        }
        truncate(&self.text, max, "the note")
    }

    /// `edit_note`: replace the one place where `old_text` occurs with `new_text`.
    pub fn edit(&mut self, old_text: &str, new_text: &str) -> Result<String, ToolError> {
        if old_text.is_empty() {
            return Err(ToolError::new(
                "old_text is empty; copy the exact text to replace from read_note (to add at the end, use append_to_note)",
            ));
        }
        if old_text == new_text {
            return Err(ToolError::new("old_text and new_text are the same; nothing would change"));
        }
        // The model often sends `\n` for a note written with CRLF: try its text as given, then
        // with the note's line ending.
        let converted = to_newline(old_text, self.newline);
        let (old, count, at) = [old_text, converted.as_str()]
            .into_iter()
            .map(|o| {
                let (count, at) = occurrences(&self.text, o);
                (o, count, at)
            })
            .find(|(_, count, _)| *count > 0)
            .unwrap_or((old_text, 0, 0));
        match count {
            0 => {
                let trimmed = old_text.trim();
                let hint = if !trimmed.is_empty() && trimmed != old_text && self.text.contains(trimmed) {
                    " (it occurs without its leading/trailing whitespace; copy the text exactly)"
                } else {
                    ""
                };
                Err(ToolError::new(format!("old_text not found; read_note to see the current text{hint}")))
            }
            1 => {
                let new = to_newline(new_text, self.newline);
                let mut text = String::with_capacity(self.text.len() + new.len());
                text.push_str(&self.text[..at]);
                text.push_str(&new);
                text.push_str(&self.text[at + old.len()..]);
                self.commit(text)?;
                Ok(format!("Edited: {} line(s) replaced by {} line(s).", line_count(old), line_count(&new)))
            }
            n => {
                let n = if n >= MAX_COUNTED { format!("{n} or more") } else { n.to_string() };
                Err(ToolError::new(format!(
                    "old_text matches {n} places; include more context so that it matches exactly one"
                )))
            }
        }
    }

    /// `replace_section`: replace what is under a heading (`## Weather`; a bare `Weather`
    /// means `## Weather`) up to the next heading of the same or a higher level; a section
    /// that does not exist is added at the end.
    pub fn replace_section(&mut self, heading: &str, content: &str) -> Result<String, ToolError> {
        let (level, title) = parse_heading_arg(heading)?;
        let marks = "#".repeat(level);
        let body = section_body(content, level, &title);
        let nl = self.newline;
        let all = headings(&self.text);
        let mut found: Vec<usize> =
            (0..all.len()).filter(|&i| all[i].level == level && all[i].title == title).collect();
        if found.is_empty() {
            found = (0..all.len())
                .filter(|&i| all[i].level == level && all[i].title.to_lowercase() == title.to_lowercase())
                .collect();
        }
        match found.as_slice() {
            [] => {
                let mut text = self.text.clone();
                if !text.is_empty() {
                    if !text.ends_with('\n') {
                        text.push_str(nl);
                    }
                    if !text.ends_with(&format!("{nl}{nl}")) && !text.trim().is_empty() {
                        text.push_str(nl);
                    }
                }
                text.push_str(&format!("{marks} {title}{nl}"));
                if !body.is_empty() {
                    text.push_str(nl);
                    text.push_str(&to_newline(&body, nl));
                    text.push_str(nl);
                }
                self.commit(text)?;
                Ok(format!("Added the section `{marks} {title}` at the end of the note."))
            }
            [i] => {
                let h = &all[*i];
                let end = all[i + 1..].iter().find(|n| n.level <= level).map_or(self.text.len(), |n| n.start);
                let last = end == self.text.len();
                let mut repl = String::new();
                if h.end == h.text_end {
                    repl.push_str(nl); // the heading was the last line, without a line ending
                }
                if !body.is_empty() {
                    repl.push_str(nl);
                    repl.push_str(&to_newline(&body, nl));
                    repl.push_str(nl);
                }
                if !last {
                    repl.push_str(nl);
                }
                let old_lines = line_count(&self.text[h.end..end]);
                let text = format!("{}{}{}", &self.text[..h.end], repl, &self.text[end..]);
                let changed = text != self.text;
                self.commit(text)?;
                Ok(if changed {
                    format!(
                        "Replaced the content of `{marks} {}` ({old_lines} line(s) before, {} now).",
                        h.title,
                        line_count(&body)
                    )
                } else {
                    format!("`{marks} {}` already had that content; nothing changed.", h.title)
                })
            }
            many => Err(ToolError::new(format!(
                "the heading `{marks} {title}` appears {} times; use edit_note to change one of them",
                many.len()
            ))),
        }
    }

    /// `append_to_note`: add `text` on a new line at the end of the body.
    pub fn append(&mut self, text: &str) -> Result<String, ToolError> {
        if text.trim().is_empty() {
            return Err(ToolError::new("text is empty; nothing to append"));
        }
        let nl = self.newline;
        let mut new = self.text.clone();
        if !new.is_empty() && !new.ends_with('\n') {
            new.push_str(nl);
        }
        new.push_str(&to_newline(text, nl));
        if !new.ends_with('\n') {
            new.push_str(nl);
        }
        self.commit(new)?;
        Ok(format!("Appended {} line(s) at the end of the note.", line_count(text)))
    }

    /// Accept a new body unless it breaks a rule the tools enforce.
    fn commit(&mut self, new: String) -> Result<(), ToolError> {
        if frontmatter::title(&self.text, 0).is_some() && frontmatter::title(&new, 0).is_none() {
            return Err(ToolError::new(
                "that change would remove the note's `# ` title line (the H1); keep it and change only the text below it",
            ));
        }
        if new.len() > self.max_bytes {
            return Err(ToolError::new(format!(
                "that change would make the note {} bytes, over the {} byte limit; keep the note terse",
                new.len(),
                self.max_bytes
            )));
        }
        if new != self.text {
            self.text = new;
            self.revision += 1;
        }
        Ok(())
    }
}

/// Occurrences are counted up to this: enough to say "many" without scanning a huge body.
const MAX_COUNTED: usize = 100;

/// How many times `needle` occurs in `hay` (overlapping occurrences count: "aa" occurs twice in
/// "aaa", which is ambiguous too), up to [`MAX_COUNTED`], and where the first one starts.
fn occurrences(hay: &str, needle: &str) -> (usize, usize) {
    let mut count = 0;
    let mut first = 0;
    let mut from = 0;
    while count < MAX_COUNTED {
        let Some(i) = hay.get(from..).and_then(|rest| rest.find(needle)) else { break };
        let at = from + i;
        if count == 0 {
            first = at;
        }
        count += 1;
        // Step one character, so that overlapping occurrences are found too.
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
    }
    (count, first)
}

fn to_newline(text: &str, nl: &str) -> String {
    let lf = text.replace("\r\n", "\n");
    if nl == "\n" { lf } else { lf.replace('\n', nl) }
}

fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// A markdown ATX heading line of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Heading {
    level: usize,
    title: String,
    /// Start of the line.
    start: usize,
    /// End of the line's text (before its line ending).
    text_end: usize,
    /// End of the line, after its line ending.
    end: usize,
}

/// The ATX headings of `text` outside fenced code blocks.
fn headings(text: &str) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut pos = 0;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let content = text[pos..end].trim_end_matches(['\n', '\r']);
        let trimmed = content.trim_start_matches(' ');
        if content.len() - trimmed.len() <= 3 {
            if let Some((c, n)) = fence_marker(trimmed) {
                match fence {
                    None => fence = Some((c, n)),
                    Some((fc, fnn)) if fc == c && n >= fnn && trimmed[n..].trim().is_empty() => fence = None,
                    Some(_) => {}
                }
            } else if fence.is_none()
                && let Some((level, title)) = atx(trimmed)
            {
                out.push(Heading {
                    level,
                    title: title.to_owned(),
                    start: pos,
                    text_end: pos + content.len(),
                    end,
                });
            }
        }
        pos = end;
    }
    out
}

/// A code fence opener or closer: its character and length.
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let c = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = line.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

/// An ATX heading: its level and its text (closing `#`s removed).
fn atx(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let mut title = rest.trim();
    let without_closing = title.trim_end_matches('#');
    if without_closing.is_empty() || without_closing.ends_with([' ', '\t']) {
        title = without_closing.trim();
    }
    Some((level, title))
}

/// The `heading` argument of `replace_section`: `## Weather`, `### Notes` or a bare `Weather`
/// (a `##` section, the default layout's unit).
fn parse_heading_arg(heading: &str) -> Result<(usize, String), ToolError> {
    let h = heading.trim();
    if h.is_empty() {
        return Err(ToolError::new("heading is empty; give a section heading like `## Weather`"));
    }
    if h.contains('\n') {
        return Err(ToolError::new("heading must be a single line, like `## Weather`"));
    }
    let (level, title) = if h.starts_with('#') {
        atx(h).ok_or_else(|| {
            ToolError::new(format!("`{h}` is not a markdown heading; write it like `## Weather`"))
        })?
    } else {
        (2, h)
    };
    if title.is_empty() {
        return Err(ToolError::new("the heading has no text; give one like `## Weather`"));
    }
    if level == 1 {
        return Err(ToolError::new(
            "replace_section works on `##` (or deeper) sections; the `# ` title line stays (use edit_note for text right below it)",
        ));
    }
    Ok((level, title.to_owned()))
}

/// The content to put under a heading, with `\n` line endings: without leading and trailing
/// blank lines, and without a first line repeating the heading itself (models often include
/// it).
fn section_body(content: &str, level: usize, title: &str) -> String {
    let lf = content.replace("\r\n", "\n");
    let mut lines: Vec<&str> = lf.split('\n').collect();
    let skip_blank = |lines: &mut Vec<&str>| {
        let n = lines.iter().take_while(|l| l.trim().is_empty()).count();
        lines.drain(..n);
    };
    skip_blank(&mut lines);
    if lines
        .first()
        .and_then(|l| atx(l.trim_start()))
        .is_some_and(|(lv, t)| lv == level && t.to_lowercase() == title.to_lowercase())
    {
        lines.remove(0);
        skip_blank(&mut lines);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

// ---------------------------------------------------------------------------------------------
// The workspace

/// The read-only view of the workspace the tools get.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// Canonical.
    root: PathBuf,
    /// The note being edited (canonical), which the file tools leave to `read_note`: reading
    /// it as a file would show its frontmatter and a stale body.
    note: Option<PathBuf>,
    caps: Caps,
}

impl Workspace {
    /// `note_path` is the note's workspace-relative path.
    pub fn new(root: &Path, note_path: &str, caps: Caps) -> Result<Workspace, ToolError> {
        let root = fs::canonicalize(root)
            .map_err(|e| ToolError::new(format!("cannot open the workspace {}: {e}", root.display())))?;
        let note = fs::canonicalize(root.join(note_path)).ok();
        Ok(Workspace { root, note, caps })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn caps(&self) -> &Caps {
        &self.caps
    }

    /// The walk every workspace tool uses, so that they all see the same files: .gitignore
    /// (even outside git), .ignore and git excludes honoured, hidden paths skipped, symlinked
    /// folders not entered (no loops, no escape), `.livenote/` and `.git/` skipped outright.
    /// `only_towards`: enter only the folders on the way to this path.
    fn walk(&self, only_towards: Option<PathBuf>) -> ignore::Walk {
        let mut b = WalkBuilder::new(&self.root);
        b.follow_links(false).require_git(false).hidden(true).sort_by_file_name(|a, b| a.cmp(b));
        b.filter_entry(move |e| {
            let name = e.file_name();
            if name == STATE_DIR || name == ".git" {
                return false;
            }
            only_towards.as_ref().is_none_or(|t| t.starts_with(e.path()))
        });
        b.build()
    }

    /// The workspace-relative, `/`-separated form of a path under the root.
    fn rel(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let parts: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        Some(parts.join("/"))
    }

    /// Whether a walked entry is a regular file inside the workspace (a symlink counts when
    /// it resolves to a file inside).
    fn is_inside_file(&self, entry: &ignore::DirEntry) -> bool {
        match entry.file_type() {
            Some(t) if t.is_file() => true,
            Some(t) if t.is_symlink() => fs::canonicalize(entry.path())
                .is_ok_and(|c| c.starts_with(&self.root) && !has_state_dir(&self.root, &c) && c.is_file()),
            _ => false,
        }
    }

    /// Resolve a path the model gave to a readable file, or say why not.
    fn resolve(&self, raw: &str) -> Result<PathBuf, ToolError> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(ToolError::new("path is empty; give a path relative to the workspace root"));
        }
        let path = Path::new(raw);
        if path.is_absolute() || path.has_root() || raw.starts_with(['/', '\\']) {
            return Err(ToolError::new(format!(
                "`{raw}` is an absolute path; only paths relative to the workspace root are allowed (like notes/todo.md)"
            )));
        }
        let mut rel = PathBuf::new();
        for c in path.components() {
            match c {
                Component::CurDir => {}
                Component::Normal(part) if part == STATE_DIR => return Err(state_dir_error()),
                Component::Normal(part) => rel.push(part),
                Component::ParentDir => {
                    return Err(ToolError::new(format!(
                        "`{raw}`: `..` is not allowed; paths stay inside the workspace"
                    )));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(ToolError::new(format!(
                        "`{raw}` is an absolute path; only paths relative to the workspace root are allowed"
                    )));
                }
            }
        }
        if rel.as_os_str().is_empty() {
            return Err(ToolError::new("that is the workspace root; use list_files to see its files"));
        }
        let lexical = self.root.join(&rel);
        if fs::symlink_metadata(&lexical).is_err() {
            return Err(ToolError::new(format!("no such file: `{raw}`; use list_files to see what exists")));
        }
        let canonical =
            fs::canonicalize(&lexical).map_err(|e| ToolError::new(format!("cannot resolve `{raw}`: {e}")))?;
        if !canonical.starts_with(&self.root) {
            return Err(ToolError::new(format!("`{raw}` points outside the workspace; refused")));
        }
        if has_state_dir(&self.root, &canonical) {
            return Err(state_dir_error());
        }
        if self.note.as_ref() == Some(&canonical) {
            return Err(ToolError::new(
                "that is the note you are updating; use read_note (its frontmatter is not part of your job)",
            ));
        }
        if canonical.is_dir() {
            return Err(ToolError::new(format!(
                "`{raw}` is a folder; use list_files with a glob like `{}/**`",
                raw.trim_end_matches('/')
            )));
        }
        let visible = self.walk(Some(lexical.clone())).flatten().any(|e| e.path() == lexical);
        if !visible {
            return Err(ToolError::new(format!(
                "`{raw}` is not available to the agent (ignored by .gitignore or .ignore, hidden, or behind a symlinked folder)"
            )));
        }
        Ok(canonical)
    }

    /// `list_files`: workspace files matching `glob` (all files when `None`), sorted.
    pub fn list_files(&self, glob: Option<&str>) -> Result<String, ToolError> {
        let filter = PathFilter::new(glob)?;
        let mut shown = Vec::new();
        let mut total = 0usize;
        let mut cut_walk = false;
        for (visited, entry) in self.walk(None).flatten().enumerate() {
            if visited >= self.caps.max_walk_entries {
                cut_walk = true;
                break;
            }
            if !self.is_inside_file(&entry) {
                continue;
            }
            let Some(rel) = self.rel(entry.path()) else { continue };
            if !filter.matches(&rel) {
                continue;
            }
            total += 1;
            if shown.len() < self.caps.max_files {
                shown.push(rel);
            }
        }
        if shown.is_empty() {
            return Ok(match glob {
                Some(g) => format!("No files match `{g}`."),
                None => "The workspace has no files the agent can see.".to_owned(),
            });
        }
        let mut out = shown.join("\n");
        if total > shown.len() {
            out.push_str(&format!("\n… and {} more; narrow the glob", total - shown.len()));
        }
        if cut_walk {
            out.push_str(&format!("\n(stopped after visiting {} entries)", self.caps.max_walk_entries));
        }
        Ok(truncate(&out, self.caps.max_output, "the listing"))
    }

    /// `read_file`: a text file of the workspace.
    pub fn read_file(&self, path: &str) -> Result<String, ToolError> {
        let canonical = self.resolve(path)?;
        let cap = self.caps.max_file_bytes;
        let text =
            read_text(&canonical, cap).map_err(|e| ToolError::new(format!("`{}`: {e}", path.trim())))?;
        if text.is_empty() {
            return Ok(format!("(`{}` is empty)", path.trim()));
        }
        Ok(truncate(&text, self.caps.max_output, "the file"))
    }

    /// `search_files`: lines containing `query` (case-insensitive), as `path:line: text`.
    pub fn search_files(&self, query: &str, glob: Option<&str>) -> Result<String, ToolError> {
        if query.trim().is_empty() {
            return Err(ToolError::new("query is empty; give some words to look for"));
        }
        if query.len() > 500 || query.contains('\n') {
            return Err(ToolError::new("query must be a single line of at most 500 bytes"));
        }
        let needle = query.to_lowercase();
        let filter = PathFilter::new(glob)?;
        let mut out = String::new();
        let mut matches = 0usize;
        let mut read_bytes = 0u64;
        let mut stopped = None;
        'files: for (visited, entry) in self.walk(None).flatten().enumerate() {
            if visited >= self.caps.max_walk_entries {
                stopped = Some(format!("stopped after visiting {} entries", self.caps.max_walk_entries));
                break;
            }
            if !self.is_inside_file(&entry) {
                continue;
            }
            let Some(rel) = self.rel(entry.path()) else { continue };
            if !filter.matches(&rel) {
                continue;
            }
            let Ok(canonical) = fs::canonicalize(entry.path()) else { continue };
            if self.note.as_ref() == Some(&canonical) {
                continue;
            }
            let size = entry.metadata().map_or(0, |m| m.len());
            if size > self.caps.max_file_bytes {
                continue;
            }
            if read_bytes + size > self.caps.max_search_bytes {
                stopped = Some("stopped: searched as much as one call may".to_owned());
                break;
            }
            read_bytes += size;
            let Ok(text) = read_text(&canonical, self.caps.max_file_bytes) else { continue };
            for (n, line) in text.lines().enumerate() {
                if !line.to_lowercase().contains(&needle) {
                    continue;
                }
                if matches >= self.caps.max_matches {
                    stopped = Some(format!(
                        "stopped at {} matches; narrow the query or give a glob",
                        self.caps.max_matches
                    ));
                    break 'files;
                }
                matches += 1;
                out.push_str(&format!("{rel}:{}: {}\n", n + 1, clip(line.trim(), 200)));
            }
        }
        if matches == 0 {
            let mut none = format!("No matches for `{query}`.");
            if let Some(s) = stopped {
                none.push_str(&format!(" ({s})"));
            }
            return Ok(none);
        }
        if let Some(s) = stopped {
            out.push_str(&format!("({s})\n"));
        }
        Ok(truncate(out.trim_end(), self.caps.max_output, "the results"))
    }
}

fn state_dir_error() -> ToolError {
    ToolError::new("livenote's own state under .livenote/ is off limits")
}

fn has_state_dir(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rel| rel.components().any(|c| c.as_os_str() == STATE_DIR))
}

/// Read a file as UTF-8 text, refusing files over `cap` bytes and binary files.
fn read_text(path: &Path, cap: u64) -> Result<String, String> {
    let file = File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let size = file.metadata().map_err(|e| format!("cannot read: {e}"))?.len();
    if size > cap {
        return Err(format!("{size} bytes, over the {cap} byte limit for reading a file"));
    }
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(format!("over the {cap} byte limit for reading a file"));
    }
    if memchr::memchr(0, &bytes).is_some() {
        return Err("a binary file; only text files can be read".to_owned());
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text; only text files can be read".to_owned())
}

/// Which workspace-relative paths a `glob` argument selects. A pattern without `/` matches
/// file names in any folder (like .gitignore), so `*.md` finds every note; one with `/`
/// matches whole paths, where `*` stays within a folder and `**` crosses folders.
struct PathFilter {
    matcher: Option<GlobMatcher>,
    name_only: bool,
}

impl PathFilter {
    fn new(glob: Option<&str>) -> Result<PathFilter, ToolError> {
        let Some(raw) = glob.map(str::trim).filter(|g| !g.is_empty()) else {
            return Ok(PathFilter { matcher: None, name_only: false });
        };
        let pattern = raw.trim_start_matches("./").trim_start_matches('/');
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::new(format!("bad glob `{raw}`: {e}")))?
            .compile_matcher();
        Ok(PathFilter { matcher: Some(matcher), name_only: !pattern.contains('/') })
    }

    fn matches(&self, rel: &str) -> bool {
        let Some(m) = &self.matcher else { return true };
        if self.name_only { m.is_match(rel.rsplit('/').next().unwrap_or(rel)) } else { m.is_match(rel) }
    }
}

/// At most `max` bytes of `text` (cut at a character boundary), saying so when cut.
fn truncate(text: &str, max: usize, what: &str) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[… {what} is cut here: showing {end} of {} bytes]", &text[..end], text.len())
}

/// At most `max` characters of one line.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

// ---------------------------------------------------------------------------------------------
// The web

/// Fetches a web page as text. Implementations honour `max_bytes`, `timeout` and `cancel`,
/// follow redirects only to http(s) URLs that pass [`check_url`] (and refuse hosts that
/// resolve to local or private addresses), and return a short error message otherwise.
pub trait Fetcher: Send + Sync {
    fn fetch<'a>(
        &'a self,
        url: &'a str,
        max_bytes: usize,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// A fetcher that never fetches: for runs and tests that must stay off the network. It
/// answers that fetching is not available.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFetcher;

impl Fetcher for NoFetcher {
    fn fetch<'a>(
        &'a self,
        _url: &'a str,
        _max_bytes: usize,
        _timeout: Duration,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async { Err("fetch_url is not available in this build".to_owned()) })
    }
}

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 5;

/// The real fetcher, over HTTP(S) with reqwest. Every hop (redirects are followed by hand, at
/// most [`MAX_REDIRECTS`]) passes [`check_url`], and its host must resolve only to public
/// addresses, which the connection is then pinned to: a page cannot make livenote reach the
/// user's router, a cloud metadata service or a local dev server. (Through a proxy set in the
/// environment, the proxy resolves names.) HTML comes back as plain text; other types than
/// text, JSON and XML are refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpFetcher {
    /// Reach loopback and private addresses too: only for tests against a local server.
    allow_private: bool,
}

impl Fetcher for HttpFetcher {
    fn fetch<'a>(
        &'a self,
        url: &'a str,
        max_bytes: usize,
        timeout: Duration,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            tokio::select! {
                biased;
                () = cancel.cancelled() => Err("stopped".to_owned()),
                r = tokio::time::timeout(timeout, http_fetch(url, max_bytes, timeout, self.allow_private)) => {
                    r.unwrap_or_else(|_| Err("the fetch timed out".to_owned()))
                }
            }
        })
    }
}

async fn http_fetch(
    url: &str,
    max_bytes: usize,
    timeout: Duration,
    allow_private: bool,
) -> Result<String, String> {
    let mut url = reqwest::Url::parse(url.trim()).map_err(|e| format!("invalid URL: {e}"))?;
    for _ in 0..=MAX_REDIRECTS {
        check_url_with(url.as_str(), allow_private).map_err(|e| e.0)?;
        let client = pinned_client(&url, timeout, allow_private).await?;
        let mut response = client.get(url.clone()).send().await.map_err(|e| fetch_error(&e))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| format!("HTTP {status} without a Location"))?;
            url = url.join(location).map_err(|e| format!("bad redirect: {e}"))?;
            continue;
        }
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("text/plain")
            .to_ascii_lowercase();
        let textual = content_type.starts_with("text/")
            || ["json", "xml", "javascript"].iter().any(|t| content_type.contains(t));
        if !textual {
            return Err(format!("not a text page ({content_type})"));
        }
        let mut bytes = Vec::new();
        let mut cut = false;
        while let Some(chunk) = response.chunk().await.map_err(|e| fetch_error(&e))? {
            let room = max_bytes.saturating_sub(bytes.len());
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() > room {
                cut = true;
                break;
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut text = if content_type.contains("html") { html_to_text(&text) } else { text.into_owned() };
        if cut {
            text.push_str(&format!("\n[… the page is longer than {max_bytes} bytes and was cut]"));
        }
        return Ok(text);
    }
    Err(format!("more than {MAX_REDIRECTS} redirects"))
}

/// A client that reaches `url`'s host only at the public addresses it resolves to now.
async fn pinned_client(
    url: &reqwest::Url,
    timeout: Duration,
    allow_private: bool,
) -> Result<reqwest::Client, String> {
    let builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .timeout(timeout)
        .user_agent(concat!("livenote/", env!("CARGO_PKG_VERSION"), " (fetch_url)"));
    // `domain()` is `None` for an IP literal, which `check_url` has already judged.
    let builder = match (url.domain(), url.host_str()) {
        (Some(domain), _) => {
            let port = url.port_or_known_default().unwrap_or(443);
            let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((domain, port))
                .await
                .map_err(|e| format!("cannot resolve {domain}: {e}"))?
                .collect();
            if addrs.is_empty() {
                return Err(format!("cannot resolve {domain}"));
            }
            if !allow_private && addrs.iter().any(|a| !is_public(a.ip())) {
                return Err("local and private network addresses are refused".to_owned());
            }
            builder.resolve_to_addrs(domain, &addrs)
        }
        (None, Some(_)) => builder,
        (None, None) => return Err("the URL has no host".to_owned()),
    };
    builder.build().map_err(|e| format!("cannot set up the HTTP client: {e}"))
}

/// One short line for a failed request (reqwest's messages can repeat the whole URL).
fn fetch_error(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else if e.is_body() || e.is_decode() {
        "the response broke off"
    } else {
        "the request failed"
    };
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    format!("{kind}: {}", clip(&cause.to_string(), 200))
}

/// The readable text of an HTML page: scripts, styles and comments dropped, block elements on
/// their own lines, list items as `- `, entities decoded, whitespace collapsed. Rough, but a
/// model reads it far better than markup, and it fits many more words into the output cap.
fn html_to_text(html: &str) -> String {
    const SKIP: [&str; 6] = ["script", "style", "noscript", "template", "svg", "head"];
    const BLOCK: [&str; 22] = [
        "p",
        "div",
        "br",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "ul",
        "ol",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "pre",
        "hr",
        "title",
        "main",
    ];
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() / 2);
    let mut pos = 0;
    while pos < html.len() {
        let Some(lt) = html[pos..].find('<').map(|i| pos + i) else {
            push_flowing(&mut out, &html[pos..]);
            break;
        };
        push_flowing(&mut out, &html[pos..lt]);
        if lower[lt..].starts_with("<!--") {
            pos = lower[lt..].find("-->").map_or(html.len(), |i| lt + i + 3);
            continue;
        }
        let Some(gt) = html[lt..].find('>').map(|i| lt + i) else { break };
        let tag = &lower[lt + 1..gt];
        let closing = tag.starts_with('/');
        let name: String =
            tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        pos = gt + 1;
        if !closing && SKIP.contains(&name.as_str()) && !tag.ends_with('/') {
            let end = format!("</{name}");
            pos = lower[pos..]
                .find(&end)
                .and_then(|i| lower[pos + i..].find('>').map(|j| pos + i + j + 1))
                .unwrap_or(html.len());
        } else if name == "li" && !closing {
            out.push_str("\n- ");
        } else if BLOCK.contains(&name.as_str()) {
            out.push('\n');
        }
    }
    let decoded = decode_entities(&out);
    let mut text = String::with_capacity(decoded.len());
    let mut blank = 0;
    for line in decoded.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            blank += 1;
            if blank > 1 || text.is_empty() {
                continue;
            }
        } else {
            blank = 0;
        }
        text.push_str(&line);
        text.push('\n');
    }
    text.trim_end().to_owned()
}

/// HTML text where line breaks are only whitespace: lines come from the tags.
fn push_flowing(out: &mut String, text: &str) {
    out.extend(text.chars().map(|c| if c.is_whitespace() { ' ' } else { c }));
}

fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let entity = rest.find(';').filter(|&i| i <= 10).map(|i| &rest[1..i]);
        let decoded = entity.and_then(|e| match e {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            _ => {
                let n = e.strip_prefix('#')?;
                let code = match n.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                    None => n.parse().ok()?,
                };
                char::from_u32(code)
            }
        });
        match (decoded, entity) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &rest[e.len() + 2..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether `url` may be fetched: http(s) only, no credentials, no local or private hosts
/// (by name or literal address; a real fetcher must also check where the name resolves).
pub fn check_url(url: &str) -> Result<(), ToolError> {
    check_url_with(url, false)
}

fn check_url_with(url: &str, allow_private: bool) -> Result<(), ToolError> {
    let url = url.trim();
    if url.len() > 2048 {
        return Err(ToolError::new("the URL is longer than 2048 bytes"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ToolError::new("the URL contains spaces or control characters"));
    }
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
        .ok_or_else(|| ToolError::new("only http:// and https:// URLs can be fetched"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(ToolError::new("URLs with credentials are refused"));
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    };
    if host.is_empty() {
        return Err(ToolError::new("the URL has no host"));
    }
    let local_name = host == "localhost"
        || [".localhost", ".local", ".internal", ".localdomain"].iter().any(|s| host.ends_with(s));
    if !allow_private && (local_name || host.parse::<IpAddr>().is_ok_and(|ip| !is_public(ip))) {
        return Err(ToolError::new("local and private network addresses are refused"));
    }
    Ok(())
}

fn is_public(ip: IpAddr) -> bool {
    fn v4(ip: Ipv4Addr) -> bool {
        let [a, b, c, _] = ip.octets();
        !(ip.is_loopback()
            || ip.is_private()
            || ip.is_link_local()
            || ip.is_unspecified()
            || ip.is_broadcast()
            || ip.is_documentation()
            || ip.is_multicast()
            || a == 0
            // 240.0.0.0/4, reserved.
            || a >= 240
            // 100.64.0.0/10, carrier-grade NAT.
            || (a == 100 && (b & 0xc0) == 64)
            // 192.0.0.0/24, protocol assignments; 198.18.0.0/15, benchmarking.
            || (a == 192 && b == 0 && c == 0)
            || (a == 198 && (b & 0xfe) == 18))
    }
    /// The IPv4 address in two segments.
    fn embedded(hi: u16, lo: u16) -> Ipv4Addr {
        Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))
    }
    // An address that carries an IPv4 address reaches that address (through the kernel, a
    // NAT64 gateway or a relay), so it is judged by it; reserved ranges are never public.
    fn v6(ip: Ipv6Addr) -> bool {
        match ip.segments() {
            // ::ffff:a.b.c.d, IPv4-mapped.
            [0, 0, 0, 0, 0, 0xffff, hi, lo] => v4(embedded(hi, lo)),
            // ::/96: unspecified, loopback and the deprecated IPv4-compatible `::a.b.c.d`.
            [0, 0, 0, 0, 0, 0, _, _] => false,
            // ::ffff:0:a.b.c.d, IPv4-translated (RFC 6145).
            [0, 0, 0, 0, 0xffff, 0, hi, lo] => v4(embedded(hi, lo)),
            // 64:ff9b::/96, the NAT64 well-known prefix (RFC 6052).
            [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => v4(embedded(hi, lo)),
            // The rest of 64:ff9b::/32, including 64:ff9b:1::/48 (local-use NAT64, RFC 8215).
            [0x64, 0xff9b, ..] => false,
            // 2002::/16, 6to4: the IPv4 address follows the prefix.
            [0x2002, hi, lo, ..] => v4(embedded(hi, lo)),
            // 2001::/32, Teredo: the server's address, then the client's (inverted) at the end.
            [0x2001, 0, shi, slo, _, _, chi, clo] => v4(embedded(shi, slo)) && v4(embedded(!chi, !clo)),
            // 2001:db8::/32, documentation.
            [0x2001, 0x0db8, ..] => false,
            // 100::/64, discard-only.
            [0x0100, 0, 0, 0, ..] => false,
            [first, ..] => {
                // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast.
                !((first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80
                    || (first & 0xffc0) == 0xfec0
                    || (first & 0xff00) == 0xff00)
            }
        }
    }
    match ip {
        IpAddr::V4(ip) => v4(ip),
        IpAddr::V6(ip) => v6(ip),
    }
}

// ---------------------------------------------------------------------------------------------
// Dispatch

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// What the model reads.
    pub content: String,
    pub is_error: bool,
    /// The call changed the note body.
    pub edited: bool,
}

/// The tools of one run: the note body being edited, the workspace and, when offered,
/// `fetch_url`.
pub struct Toolbox<'f> {
    note: NoteBody,
    workspace: Workspace,
    fetcher: Option<&'f dyn Fetcher>,
}

impl<'f> Toolbox<'f> {
    /// `fetcher`: `Some` to offer `fetch_url` (the caller decides: enabled, and not an event
    /// run).
    pub fn new(workspace: Workspace, body: String, fetcher: Option<&'f dyn Fetcher>) -> Self {
        let note = NoteBody::new(body, workspace.caps());
        Toolbox { note, workspace, fetcher }
    }

    /// The current body.
    pub fn body(&self) -> &str {
        self.note.text()
    }

    pub fn into_body(self) -> String {
        self.note.into_text()
    }

    /// Continue from `body`: the note as it now reads, after the engine applied the latest
    /// step (and whatever the user typed meanwhile).
    pub fn sync_body(&mut self, body: String) {
        self.note.sync(body);
    }

    /// The tools offered to the model.
    pub fn specs(&self) -> Vec<ToolSpec> {
        specs(self.fetcher.is_some())
    }

    /// Run one tool call. Never fails: errors become error results for the model.
    pub async fn call(&mut self, call: &ToolCall, cancel: &CancellationToken) -> ToolOutput {
        let before = self.note.revision();
        let result = self.dispatch(call, cancel).await;
        let edited = self.note.revision() != before;
        match result {
            Ok(content) => ToolOutput { content, is_error: false, edited },
            Err(e) => ToolOutput { content: e.0, is_error: true, edited: false },
        }
    }

    async fn dispatch(&mut self, call: &ToolCall, cancel: &CancellationToken) -> Result<String, ToolError> {
        let name = call.name.as_str();
        let args = &call.arguments;
        match name {
            READ_NOTE => Ok(self.note.read(self.workspace.caps().max_note_read)),
            EDIT_NOTE => {
                let a: EditArgs = parse_args(name, args)?;
                self.note.edit(&a.old_text, &a.new_text)
            }
            REPLACE_SECTION => {
                let a: SectionArgs = parse_args(name, args)?;
                self.note.replace_section(&a.heading, &a.content)
            }
            APPEND_TO_NOTE => {
                let a: AppendArgs = parse_args(name, args)?;
                self.note.append(&a.text)
            }
            LIST_FILES => {
                let a: ListArgs = parse_args(name, args)?;
                self.blocking(move |ws| ws.list_files(a.glob.as_deref())).await
            }
            READ_FILE => {
                let a: ReadArgs = parse_args(name, args)?;
                self.blocking(move |ws| ws.read_file(&a.path)).await
            }
            SEARCH_FILES => {
                let a: SearchArgs = parse_args(name, args)?;
                self.blocking(move |ws| ws.search_files(&a.query, a.glob.as_deref())).await
            }
            FETCH_URL if self.fetcher.is_some() => {
                let a: FetchArgs = parse_args(name, args)?;
                self.fetch(&a.url, cancel).await
            }
            other => {
                let known: Vec<String> = self.specs().into_iter().map(|s| s.name).collect();
                Err(ToolError::new(format!("unknown tool `{other}`; the tools are: {}", known.join(", "))))
            }
        }
    }

    /// Workspace tools read files and walk folders: off the async threads.
    async fn blocking(
        &self,
        f: impl FnOnce(&Workspace) -> Result<String, ToolError> + Send + 'static,
    ) -> Result<String, ToolError> {
        let ws = self.workspace.clone();
        tokio::task::spawn_blocking(move || f(&ws))
            .await
            .unwrap_or_else(|e| Err(ToolError::new(format!("the tool failed: {e}"))))
    }

    async fn fetch(&self, url: &str, cancel: &CancellationToken) -> Result<String, ToolError> {
        check_url(url)?;
        let Some(fetcher) = self.fetcher else {
            return Err(ToolError::new("fetch_url is not available in this run"));
        };
        let caps = self.workspace.caps();
        let fetched = tokio::time::timeout(
            caps.fetch_timeout,
            fetcher.fetch(url.trim(), caps.fetch_max_bytes, caps.fetch_timeout, cancel.clone()),
        )
        .await
        .map_err(|_| ToolError::new("the fetch timed out"))?
        .map_err(ToolError)?;
        Ok(truncate(&fetched, caps.max_output, "the page"))
    }
}

#[derive(Debug, Deserialize)]
struct EditArgs {
    old_text: String,
    new_text: String,
}

#[derive(Debug, Deserialize)]
struct SectionArgs {
    heading: String,
    content: String,
}

#[derive(Debug, Deserialize)]
struct AppendArgs {
    text: String,
}

#[derive(Debug, Deserialize)]
struct ListArgs {
    #[serde(default)]
    glob: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ReadArgs {
    path: String,
}

#[derive(Debug, Deserialize)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    glob: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FetchArgs {
    url: String,
}

/// The arguments of a call. Unknown fields are ignored (models add some); a JSON object sent
/// as a string is accepted; anything else is an error the model can act on.
fn parse_args<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, ToolError> {
    let value = match args {
        Value::Null => json!({}),
        Value::String(s) => serde_json::from_str::<Value>(s).map_err(|e| {
            ToolError::new(format!("the arguments of {tool} are not valid JSON ({e}); send a JSON object"))
        })?,
        other => other.clone(),
    };
    if !value.is_object() {
        return Err(ToolError::new(format!("the arguments of {tool} must be a JSON object")));
    }
    serde_json::from_value(value).map_err(|e| ToolError::new(format!("bad arguments for {tool}: {e}")))
}

/// The tool specs, with `fetch_url` when `web`.
pub fn specs(web: bool) -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, parameters: Value| ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    };
    let mut specs = vec![
        spec(
            READ_NOTE,
            "Read the note's current body (everything below its frontmatter, starting with the `# ` title). Call it first, and again whenever you need to see the result of your edits.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
        spec(
            EDIT_NOTE,
            "Replace one passage of the note body. `old_text` must occur exactly once in the body: copy it exactly from read_note, with enough surrounding text to be unique. `new_text` replaces it (empty to delete it). The `# ` title line must stay.",
            json!({
                "type": "object",
                "properties": {
                    "old_text": {"type": "string", "description": "The exact text to replace; it must occur exactly once in the body."},
                    "new_text": {"type": "string", "description": "The replacement text."}
                },
                "required": ["old_text", "new_text"],
                "additionalProperties": false
            }),
        ),
        spec(
            REPLACE_SECTION,
            "Replace everything under a heading, up to the next heading of the same or a higher level. `heading` is like `## Weather` (a bare `Weather` means `## Weather`). A missing section is added at the end of the note.",
            json!({
                "type": "object",
                "properties": {
                    "heading": {"type": "string", "description": "The section heading, like `## Weather` or `### Details`."},
                    "content": {"type": "string", "description": "The new content below the heading, without the heading line."}
                },
                "required": ["heading", "content"],
                "additionalProperties": false
            }),
        ),
        spec(
            APPEND_TO_NOTE,
            "Add text on a new line at the end of the note body. Start it with an empty line to begin a new paragraph or section.",
            json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The markdown to add."}},
                "required": ["text"],
                "additionalProperties": false
            }),
        ),
        spec(
            LIST_FILES,
            "List the workspace's files (read-only; .gitignored and hidden files are not shown). `glob` selects them: a pattern without `/` matches file names in any folder (`*.md`), one with `/` matches paths from the workspace root (`notes/**/*.md`).",
            json!({
                "type": "object",
                "properties": {"glob": {"type": "string", "description": "Optional glob, like `*.md` or `projects/**`."}},
                "additionalProperties": false
            }),
        ),
        spec(
            READ_FILE,
            "Read a text file of the workspace (read-only). `path` is relative to the workspace root, like `notes/todo.md`.",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "Path relative to the workspace root."}},
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        spec(
            SEARCH_FILES,
            "Find lines containing some text (case-insensitive, literal) in the workspace's text files. Answers `path:line: text`. `glob` narrows the files, as in list_files.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The text to look for."},
                    "glob": {"type": "string", "description": "Optional glob to narrow the files."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        ),
    ];
    if web {
        specs.push(spec(
            FETCH_URL,
            "Fetch a web page (http or https) and return its text, cut at a size limit.",
            json!({
                "type": "object",
                "properties": {"url": {"type": "string", "description": "An http:// or https:// URL."}},
                "required": ["url"],
                "additionalProperties": false
            }),
        ));
    }
    specs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> NoteBody {
        NoteBody::new(text.to_owned(), &Caps::default())
    }

    fn err<T: fmt::Debug>(r: Result<T, ToolError>) -> String {
        match r {
            Err(e) => e.0,
            Ok(v) => panic!("expected an error, got {v:?}"),
        }
    }

    #[test]
    fn edit_needs_exactly_one_match() {
        let mut b = body("# T\n\n- a\n- a\n- b\n");
        assert_eq!(
            err(b.edit("- a", "- c")),
            "old_text matches 2 places; include more context so that it matches exactly one"
        );
        assert_eq!(err(b.edit("- z", "- c")), "old_text not found; read_note to see the current text");
        assert_eq!(
            err(b.edit("", "x")),
            "old_text is empty; copy the exact text to replace from read_note (to add at the end, use append_to_note)"
        );
        assert!(b.edit("- a\n- b", "- a\n- c").is_ok());
        assert_eq!(b.text(), "# T\n\n- a\n- a\n- c\n");
        // Overlapping occurrences are ambiguous too.
        let mut b = body("aaa");
        assert!(err(b.edit("aa", "b")).starts_with("old_text matches 2 places"));
    }

    #[test]
    fn edit_hints_at_whitespace_and_keeps_crlf() {
        let mut b = body("# T\r\n\r\nOld line\r\nnext\r\n");
        assert_eq!(
            err(b.edit(" Old line ", "x")),
            "old_text not found; read_note to see the current text (it occurs without its leading/trailing whitespace; copy the text exactly)"
        );
        assert!(b.edit("Old line\nnext", "New line\nafter").is_ok());
        assert_eq!(b.text(), "# T\r\n\r\nNew line\r\nafter\r\n");
    }

    #[test]
    fn edits_keep_the_h1() {
        let mut b = body("# Title\n\ntext\n");
        assert!(err(b.edit("# Title\n", "")).contains("remove the note's `# ` title line"));
        assert_eq!(b.text(), "# Title\n\ntext\n");
        // Renaming it is the objective's call.
        assert!(b.edit("# Title", "# New title").is_ok());
        // A body without an H1 may stay without one.
        let mut b = body("just text\n");
        assert!(b.edit("just", "only").is_ok());
    }

    #[test]
    fn replace_section_replaces_up_to_the_next_peer() {
        let mut b = body("# T\n\nSummary.\n\n## Weather\n\nRain.\n\n### Detail\n\nwet\n\n## News\n\nNone.\n");
        let msg = b.replace_section("Weather", "## Weather\n\nSun.\n\n").map_err(|e| e.0);
        assert_eq!(msg.as_deref(), Ok("Replaced the content of `## Weather` (7 line(s) before, 1 now)."));
        assert_eq!(b.text(), "# T\n\nSummary.\n\n## Weather\n\nSun.\n\n## News\n\nNone.\n");
        // The last section, and case-insensitive matching.
        assert!(b.replace_section("## news", "- quiet").is_ok());
        assert_eq!(b.text(), "# T\n\nSummary.\n\n## Weather\n\nSun.\n\n## News\n\n- quiet\n");
        // Missing: added at the end.
        assert!(b.replace_section("### Later", "soon").is_ok());
        assert_eq!(
            b.text(),
            "# T\n\nSummary.\n\n## Weather\n\nSun.\n\n## News\n\n- quiet\n\n### Later\n\nsoon\n"
        );
        assert!(err(b.replace_section("# T", "x")).contains("the `# ` title line stays"));
    }

    #[test]
    fn replace_section_ignores_code_fences_and_refuses_duplicates() {
        let mut b = body("# T\n\n## A\n\n```\n## B\n```\n\n## A\n");
        assert_eq!(
            err(b.replace_section("A", "x")),
            "the heading `## A` appears 2 times; use edit_note to change one of them"
        );
        let mut b = body("# T\n\n## A\n\n```\n## B\n```\n\n## C\nc");
        assert!(b.replace_section("A", "new").is_ok());
        assert_eq!(b.text(), "# T\n\n## A\n\nnew\n\n## C\nc");
        assert!(b.replace_section("C", "cc").is_ok());
        assert_eq!(b.text(), "# T\n\n## A\n\nnew\n\n## C\n\ncc\n");
        // A heading at the very end without a line ending.
        let mut b = body("# T\n\n## A");
        assert!(b.replace_section("A", "x").is_ok());
        assert_eq!(b.text(), "# T\n\n## A\n\nx\n");
    }

    #[test]
    fn append_adds_a_line() {
        let mut b = body("# T\n\nend");
        assert!(b.append("- one").is_ok());
        assert_eq!(b.text(), "# T\n\nend\n- one\n");
        assert_eq!(err(b.append("  \n")), "text is empty; nothing to append");
    }

    #[test]
    fn the_body_cannot_grow_without_bound() {
        let caps = Caps { max_body_bytes: 20, ..Caps::default() };
        let mut b = NoteBody::new("# T\n".to_owned(), &caps);
        assert!(err(b.append(&"x".repeat(30))).contains("over the 20 byte limit"));
    }

    #[test]
    fn urls_are_checked() {
        assert!(check_url("https://example.com/a?b#c").is_ok());
        assert!(check_url("http://93.184.216.34:8080/").is_ok());
        for (url, msg) in [
            ("file:///etc/passwd", "only http:// and https:// URLs can be fetched"),
            ("ftp://example.com", "only http:// and https:// URLs can be fetched"),
            ("http://localhost:8080/", "local and private network addresses are refused"),
            ("http://127.0.0.1/", "local and private network addresses are refused"),
            ("http://169.254.169.254/latest/meta-data", "local and private network addresses are refused"),
            ("http://[::1]/", "local and private network addresses are refused"),
            ("http://10.1.2.3/", "local and private network addresses are refused"),
            ("https://user:pw@example.com/", "URLs with credentials are refused"),
            ("https:///x", "the URL has no host"),
            ("https://exa mple.com", "the URL contains spaces or control characters"),
        ] {
            assert_eq!(err(check_url(url)), msg, "{url}");
        }
    }

    #[test]
    fn addresses_that_carry_a_local_ipv4_address_are_refused() {
        let refused = "local and private network addresses are refused";
        for host in [
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "[::ffff:10.0.0.1]",
            "[::ffff:169.254.169.254]",
            "[::127.0.0.1]",
            "[::7f00:1]",
            "[::8.8.8.8]",
            "[::]",
            "[::ffff:0:127.0.0.1]",
            "[64:ff9b::127.0.0.1]",
            "[64:ff9b::7f00:1]",
            "[64:ff9b::a9fe:a9fe]",
            "[64:ff9b:1::8.8.8.8]",
            "[64:ff9b:1:2::1]",
            "[2002:7f00:1::1]",
            "[2002:c0a8:101::]",
            "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
            "[2001:0:7f00:1::]",
            "[2001:db8::1]",
            "[fc00::1]",
            "[fd12:3456::1]",
            "[fe80::1]",
            "[fec0::1]",
            "[ff02::1]",
            "[100::1]",
            "224.0.0.1",
            "240.0.0.1",
            "100.64.0.1",
            "198.18.0.1",
            "192.0.0.8",
        ] {
            assert_eq!(err(check_url(&format!("http://{host}/"))), refused, "{host}");
        }
        for host in [
            "[2606:4700:4700::1111]",
            "[::ffff:8.8.8.8]",
            "[64:ff9b::8.8.8.8]",
            "[2002:808:808::1]",
            "[2001:0:4136:e378:8000:63bf:f7f7:f7f7]",
            "8.8.8.8",
        ] {
            assert!(check_url(&format!("https://{host}/")).is_ok(), "{host}");
        }
    }

    #[test]
    fn arguments_are_parsed_leniently() {
        let a: EditArgs = parse_args("edit_note", &json!(r#"{"old_text": "a", "new_text": "b"}"#))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((a.old_text.as_str(), a.new_text.as_str()), ("a", "b"));
        let e = err(parse_args::<EditArgs>("edit_note", &json!({"old_text": "a"})));
        assert_eq!(e, "bad arguments for edit_note: missing field `new_text`");
        let e = err(parse_args::<EditArgs>("edit_note", &json!("{oops")));
        assert!(e.starts_with("the arguments of edit_note are not valid JSON"), "{e}");
    }

    #[test]
    fn globs_match_names_or_paths() {
        let names = PathFilter::new(Some("*.md")).unwrap_or_else(|e| panic!("{e}"));
        assert!(names.matches("a/b/c.md") && !names.matches("a/b.txt"));
        let paths = PathFilter::new(Some("notes/*.md")).unwrap_or_else(|e| panic!("{e}"));
        assert!(paths.matches("notes/a.md") && !paths.matches("notes/x/a.md"));
        let deep = PathFilter::new(Some("./notes/**")).unwrap_or_else(|e| panic!("{e}"));
        assert!(deep.matches("notes/x/a.md"));
        assert!(err(PathFilter::new(Some("a[")).map(|_| ())).starts_with("bad glob `a[`"));
    }

    /// A workspace with a note, ordinary files, livenote state, an ignored file, a big file, a
    /// binary file and symlinks in and out; and a folder outside it.
    fn fixture() -> (tempfile::TempDir, tempfile::TempDir) {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let put = |root: &Path, rel: &str, bytes: &[u8]| {
            let p = root.join(rel);
            if let Some(parent) = p.parent() {
                fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
            }
            fs::write(p, bytes).unwrap_or_else(|e| panic!("{e}"));
        };
        let root = ws.path();
        put(root, "notes/live.md", b"---\nlive:\n  objective: x\n---\n# Live\n\nQ3 plans\n");
        put(root, "notes/q3.md", b"# Q3\n\nQ3 planning moved to Friday.\nbudget: tbd\n");
        put(root, "notes/deep/older.md", b"q3 retro\n");
        put(root, "todo.txt", b"buy milk\n");
        put(root, ".gitignore", b"secret.txt\nbuild/\n");
        put(root, "secret.txt", b"Q3 password\n");
        put(root, "build/out.txt", b"Q3 build\n");
        put(root, ".hidden/notes.md", b"Q3 hidden\n");
        put(root, ".livenote/runs/r.jsonl", b"{\"kind\":\"start\"} Q3\n");
        put(root, "big.txt", &vec![b'a'; 300 * 1024]);
        put(root, "blob.bin", b"Q3\0\x01\x02");
        put(outside.path(), "passwd", b"root:x:0:0 Q3\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(outside.path().join("passwd"), root.join("escape.txt")).unwrap_or_else(|e| panic!("{e}"));
            symlink(outside.path(), root.join("outdir")).unwrap_or_else(|e| panic!("{e}"));
            symlink(root.join("notes/q3.md"), root.join("alias.md")).unwrap_or_else(|e| panic!("{e}"));
            symlink(root.join(".livenote/runs/r.jsonl"), root.join("state.txt"))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        (ws, outside)
    }

    fn open(root: &Path) -> Workspace {
        Workspace::new(root, "notes/live.md", Caps::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Every file of the tree, with its bytes, to show the tools wrote nothing.
    fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                let meta = fs::symlink_metadata(&p).unwrap_or_else(|e| panic!("{e}"));
                if meta.is_dir() {
                    stack.push(p);
                } else if meta.is_file() {
                    out.push((p.clone(), fs::read(&p).unwrap_or_default()));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn read_file_stays_inside_the_workspace() {
        let (ws, outside) = fixture();
        let before = (snapshot(ws.path()), snapshot(outside.path()));
        let w = open(ws.path());
        assert_eq!(
            w.read_file("notes/q3.md").map_err(|e| e.0),
            Ok("# Q3\n\nQ3 planning moved to Friday.\nbudget: tbd\n".to_owned())
        );
        assert_eq!(w.read_file("./notes//deep/older.md").map_err(|e| e.0), Ok("q3 retro\n".to_owned()));
        let refused = [
            ("../x", "`../x`: `..` is not allowed; paths stay inside the workspace"),
            (
                "notes/../todo.txt",
                "`notes/../todo.txt`: `..` is not allowed; paths stay inside the workspace",
            ),
            (
                "/etc/passwd",
                "`/etc/passwd` is an absolute path; only paths relative to the workspace root are allowed (like notes/todo.md)",
            ),
            (".livenote/runs/r.jsonl", "livenote's own state under .livenote/ is off limits"),
            ("notes/.livenote/x", "livenote's own state under .livenote/ is off limits"),
            ("big.txt", "`big.txt`: 307200 bytes, over the 262144 byte limit for reading a file"),
            ("blob.bin", "`blob.bin`: a binary file; only text files can be read"),
            (
                "secret.txt",
                "`secret.txt` is not available to the agent (ignored by .gitignore or .ignore, hidden, or behind a symlinked folder)",
            ),
            (
                "build/out.txt",
                "`build/out.txt` is not available to the agent (ignored by .gitignore or .ignore, hidden, or behind a symlinked folder)",
            ),
            (
                ".hidden/notes.md",
                "`.hidden/notes.md` is not available to the agent (ignored by .gitignore or .ignore, hidden, or behind a symlinked folder)",
            ),
            (
                "notes/live.md",
                "that is the note you are updating; use read_note (its frontmatter is not part of your job)",
            ),
            ("notes", "`notes` is a folder; use list_files with a glob like `notes/**`"),
            ("missing.md", "no such file: `missing.md`; use list_files to see what exists"),
            ("", "path is empty; give a path relative to the workspace root"),
        ];
        for (path, msg) in refused {
            assert_eq!(err(w.read_file(path)), msg, "{path}");
        }
        #[cfg(unix)]
        {
            assert_eq!(err(w.read_file("escape.txt")), "`escape.txt` points outside the workspace; refused");
            assert_eq!(
                err(w.read_file("outdir/passwd")),
                "`outdir/passwd` points outside the workspace; refused"
            );
            assert_eq!(err(w.read_file("state.txt")), "livenote's own state under .livenote/ is off limits");
            assert_eq!(w.read_file("alias.md").map(|t| t.len()).map_err(|e| e.0), Ok(47));
        }
        assert_eq!((snapshot(ws.path()), snapshot(outside.path())), before);
    }

    #[test]
    fn list_files_honours_gitignore_and_caps() {
        let (ws, _outside) = fixture();
        let w = open(ws.path());
        let all = w.list_files(None).unwrap_or_else(|e| panic!("{e}"));
        let expected = if cfg!(unix) {
            "alias.md\nbig.txt\nblob.bin\nnotes/deep/older.md\nnotes/live.md\nnotes/q3.md\ntodo.txt"
        } else {
            "big.txt\nblob.bin\nnotes/deep/older.md\nnotes/live.md\nnotes/q3.md\ntodo.txt"
        };
        assert_eq!(all, expected);
        assert_eq!(
            w.list_files(Some("*.md")).map(|s| s.lines().count()).map_err(|e| e.0),
            Ok(if cfg!(unix) { 4 } else { 3 })
        );
        assert_eq!(
            w.list_files(Some("notes/*.md")).map_err(|e| e.0),
            Ok("notes/live.md\nnotes/q3.md".to_owned())
        );
        assert_eq!(w.list_files(Some("*.rs")).map_err(|e| e.0), Ok("No files match `*.rs`.".to_owned()));
        let capped = Workspace::new(ws.path(), "notes/live.md", Caps { max_files: 2, ..Caps::default() })
            .unwrap_or_else(|e| panic!("{e}"));
        let listed = capped.list_files(Some("notes/**")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(listed, "notes/deep/older.md\nnotes/live.md\n… and 1 more; narrow the glob");
    }

    #[test]
    fn search_files_finds_lines_in_visible_text_files() {
        let (ws, _outside) = fixture();
        let w = open(ws.path());
        let found = w.search_files("q3", Some("notes/**")).unwrap_or_else(|e| panic!("{e}"));
        // Not the note being updated, nor ignored, hidden, state, binary or outside files.
        assert_eq!(
            found,
            "notes/deep/older.md:1: q3 retro\nnotes/q3.md:1: # Q3\nnotes/q3.md:3: Q3 planning moved to Friday."
        );
        let everywhere = w.search_files("Q3", None).unwrap_or_else(|e| panic!("{e}"));
        for refused in ["secret", "build", "hidden", "jsonl", "blob", "root:x", "Live"] {
            assert!(!everywhere.contains(refused), "{refused} in {everywhere}");
        }
        assert_eq!(
            w.search_files("nowhere to be found", None).map_err(|e| e.0),
            Ok("No matches for `nowhere to be found`.".to_owned())
        );
        assert_eq!(err(w.search_files(" ", None)), "query is empty; give some words to look for");
        let capped = Workspace::new(ws.path(), "notes/live.md", Caps { max_matches: 1, ..Caps::default() })
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            capped.search_files("q3", Some("notes/**")).map_err(|e| e.0),
            Ok("notes/deep/older.md:1: q3 retro\n(stopped at 1 matches; narrow the query or give a glob)"
                .to_owned())
        );
    }

    #[test]
    fn html_becomes_text() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body><!-- c --><h1>Q3 &amp; more</h1>\
            <script>var x = '<p>';</script><p>Planning   moved\n to <b>Friday</b>.</p><ul><li>one</li><li>two&#x21;</li></ul>\
            <p>a &lt; b &unknown; &#9731;</p></body></html>";
        assert_eq!(
            html_to_text(html),
            "Q3 & more\n\nPlanning moved to Friday.\n\n- one\n- two!\n\na < b &unknown; ☃"
        );
    }

    /// A one-shot HTTP server on loopback answering each connection with the next canned
    /// response; it returns its address.
    async fn serve(responses: Vec<String>) -> std::net::SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            for response in responses {
                let Ok((mut socket, _)) = listener.accept().await else { return };
                let mut buf = vec![0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            }
        });
        addr
    }

    fn http(status: &str, headers: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    #[tokio::test]
    async fn http_fetcher_follows_redirects_caps_and_converts() {
        let local = HttpFetcher { allow_private: true };
        let fetch = |url: String, max: usize| async move {
            local.fetch(&url, max, Duration::from_secs(5), CancellationToken::new()).await
        };
        let addr = serve(vec![
            http("302 Found", "Location: /page\r\n", ""),
            http(
                "200 OK",
                "Content-Type: text/html; charset=utf-8\r\n",
                "<p>Hello &amp; welcome</p><script>x</script>",
            ),
        ])
        .await;
        assert_eq!(fetch(format!("http://{addr}/start"), 1000).await, Ok("Hello & welcome".to_owned()));

        let addr = serve(vec![http("200 OK", "Content-Type: text/plain\r\n", &"x".repeat(100))]).await;
        assert_eq!(
            fetch(format!("http://{addr}/"), 10).await,
            Ok("xxxxxxxxxx\n[… the page is longer than 10 bytes and was cut]".to_owned())
        );

        let addr = serve(vec![
            http("404 Not Found", "", "nope"),
            http("200 OK", "Content-Type: image/png\r\n", "PNG"),
        ])
        .await;
        assert_eq!(fetch(format!("http://{addr}/"), 100).await, Err("HTTP 404 Not Found".to_owned()));
        assert_eq!(
            fetch(format!("http://{addr}/"), 100).await,
            Err("not a text page (image/png)".to_owned())
        );

        // Without the test switch, loopback is refused before any connection (every redirect
        // hop goes through the same check).
        let strict = HttpFetcher::default();
        let r = strict
            .fetch(&format!("http://{addr}/"), 100, Duration::from_secs(5), CancellationToken::new())
            .await;
        assert_eq!(r, Err("local and private network addresses are refused".to_owned()));
    }
}
