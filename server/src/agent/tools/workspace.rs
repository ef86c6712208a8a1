//! The workspace tools (`list_files`, `read_file`, `search_files`): read-only and confined to
//! the workspace root.

use std::fs;
use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use super::{Caps, ToolError, clip, truncate};
use crate::workspace::{self, PathStyle, ReadError, STATE_DIR};

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

    /// The walk every workspace tool uses, so that they all see the same files
    /// ([`workspace::visible_entries`]). `only_towards`: enter only the folders on the way to
    /// this path.
    fn walk(&self, only_towards: Option<PathBuf>) -> ignore::Walk {
        workspace::visible_entries(&self.root, only_towards)
    }

    /// The workspace-relative, `/`-separated form of a path under the root.
    fn rel(&self, path: &Path) -> Option<String> {
        workspace::NotePath::of(&self.root, path).map(workspace::NotePath::into_string)
    }

    /// Whether a walked entry is a regular file inside the workspace (a symlink counts when
    /// it resolves to a file inside that the walk would show itself: a link to `.env` or into
    /// `.git/` is as hidden as its target).
    fn is_inside_file(&self, entry: &ignore::DirEntry) -> bool {
        match entry.file_type() {
            Some(t) if t.is_file() => true,
            Some(t) if t.is_symlink() => fs::canonicalize(entry.path()).is_ok_and(|c| {
                c.starts_with(&self.root)
                    && !has_state_dir(&self.root, &c)
                    && c.is_file()
                    && workspace::is_visible(&self.root, &c)
            }),
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
                Component::Normal(part)
                    if PathStyle::NATIVE.same_name(&part.to_string_lossy(), STATE_DIR) =>
                {
                    return Err(state_dir_error());
                }
                // On Windows a stream (`a.md:x`), a device (`nul`) or `a.md.` opens another
                // file than the name says.
                Component::Normal(part) if PathStyle::NATIVE.bad_part(&part.to_string_lossy()).is_some() => {
                    return Err(ToolError::new(format!(
                        "`{raw}` has a name Windows reads as something else (a `:`, a device like NUL, or a trailing dot or space); refused"
                    )));
                }
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
        // A link is as visible as what it leads to: the walk above saw only the link's name.
        if canonical != lexical && !workspace::is_visible(&self.root, &canonical) {
            let target = self.rel(&canonical).unwrap_or_default();
            return Err(ToolError::new(format!(
                "`{raw}` is a link to `{target}`, which is not available to the agent (hidden, or ignored by .gitignore or .ignore)"
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

/// Read a file as UTF-8 text ([`workspace::read_text`]), refusing files over `cap` bytes and
/// binary files, in the words the model reads.
fn read_text(path: &Path, cap: u64) -> Result<String, String> {
    workspace::read_text(path, cap).map_err(|e| match e {
        // Only a regular file: a FIFO or device would block the run past its timeout and Stop.
        ReadError::NotRegular(kind) => format!("not a regular file ({kind}); only regular files can be read"),
        ReadError::Io(io) => format!("cannot read: {}", io.kind()),
        ReadError::TooLarge { size, max } => {
            format!("{size} bytes, over the {max} byte limit for reading a file")
        }
        ReadError::Binary(_) => "a binary file; only text files can be read".to_owned(),
        ReadError::NotUtf8(_) => "not UTF-8 text; only text files can be read".to_owned(),
    })
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

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
