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
//! - MCP tools (`mcp__<server>__<tool>`, `mcp.rs`) come from the MCP servers the run may use,
//!   through its `mcp::Session`; the run loop starts the session before the first turn.
//!
//! A failing tool never fails the run: its error is the tool result the model sees
//! (`is_error: true`), worded so that the model can correct itself.

mod mcp;
mod memory;
mod note;
mod skills;
mod web;
mod workspace;

use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub use memory::{MEMORY_DELETE, MEMORY_LIST, MEMORY_SAVE, MEMORY_SHOW, MemoryTools};
pub use note::NoteBody;
pub use web::{Fetcher, HttpFetcher, NoFetcher, check_url};
pub use workspace::Workspace;

use crate::model::{ToolCall, ToolSpec};

pub const READ_NOTE: &str = "read_note";
pub const EDIT_NOTE: &str = "edit_note";
pub const REPLACE_SECTION: &str = "replace_section";
pub const APPEND_TO_NOTE: &str = "append_to_note";
pub const LIST_FILES: &str = "list_files";
pub const READ_FILE: &str = "read_file";
pub const SEARCH_FILES: &str = "search_files";
pub const FETCH_URL: &str = "fetch_url";
pub const LOAD_SKILL: &str = "load_skill";

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

/// At most `max` bytes of `text` (cut at a character boundary), saying so when cut.
fn truncate(text: &str, max: usize, what: &str) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let shown = crate::text::short::prefix_bytes(text, max);
    format!("{shown}\n[… {what} is cut here: showing {} of {} bytes]", shown.len(), text.len())
}

/// At most `max` characters of one line.
pub(crate) use crate::text::short::clip;

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
    /// What the transcript records of the call beyond its result (an MCP call's details).
    pub event: Option<crate::run_types::RunEvent>,
}

/// The tools of one run: the note body being edited, the workspace and, when offered,
/// `fetch_url`.
pub struct Toolbox<'f> {
    note: NoteBody,
    workspace: Workspace,
    fetcher: Option<&'f dyn Fetcher>,
    mcp: Option<&'f crate::mcp::Session>,
    memory: Option<MemoryTools>,
    /// The run's skills `load_skill` answers with; empty: the tool is not offered.
    skills: Vec<&'f crate::skills::Skill>,
}

impl<'f> Toolbox<'f> {
    /// `fetcher`: `Some` to offer `fetch_url` (the caller decides: enabled, and not an event
    /// run).
    pub fn new(workspace: Workspace, body: String, fetcher: Option<&'f dyn Fetcher>) -> Self {
        let note = NoteBody::new(body, workspace.caps());
        Toolbox { note, workspace, fetcher, mcp: None, memory: None, skills: Vec::new() }
    }

    /// Hold the note's edits to its budget (`live.maxChars`).
    pub fn with_budget(mut self, max_chars: Option<usize>) -> Self {
        self.note = self.note.with_budget(max_chars);
        self
    }

    /// Offer the session's MCP tools too.
    pub fn with_mcp(mut self, session: &'f crate::mcp::Session) -> Self {
        self.mcp = Some(session);
        self
    }

    /// Offer the note's memory tools too.
    pub fn with_memory(mut self, memory: MemoryTools) -> Self {
        self.memory = Some(memory);
        self
    }

    /// Offer `load_skill` over these skills (the run's preloaded and catalog ones).
    pub fn with_skills(mut self, skills: impl IntoIterator<Item = &'f crate::skills::Skill>) -> Self {
        self.skills = skills.into_iter().collect();
        self
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
        let mut all = specs(self.fetcher.is_some());
        if let Some(session) = self.mcp {
            all.extend(mcp::specs(session));
        }
        if self.memory.is_some() {
            all.extend(memory::specs());
        }
        if !self.skills.is_empty() {
            all.push(skills::spec());
        }
        all
    }

    /// Run one tool call. Never fails: errors become error results for the model.
    pub async fn call(&mut self, call: &ToolCall, cancel: &CancellationToken) -> ToolOutput {
        if let Some(session) = self.mcp
            && let Some((result, event)) =
                mcp::call(session, &call.name, &call.arguments, self.workspace.caps().max_output).await
        {
            let (content, is_error) = match result {
                Ok(content) => (content, false),
                Err(e) => (e.0, true),
            };
            return ToolOutput { content, is_error, edited: false, event: Some(event) };
        }
        let before = self.note.revision();
        let result = self.dispatch(call, cancel).await;
        let edited = self.note.revision() != before;
        match result {
            Ok(content) => ToolOutput { content, is_error: false, edited, event: None },
            Err(e) => ToolOutput { content: e.0, is_error: true, edited: false, event: None },
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
            n if memory::is_memory_tool(n) && self.memory.is_some() => match self.memory.as_mut() {
                Some(m) => m.call(n, args).await,
                None => Err(ToolError::new("the memory tools are not available in this run")),
            },
            FETCH_URL if self.fetcher.is_some() => {
                let a: FetchArgs = parse_args(name, args)?;
                self.fetch(&a.url, cancel).await
            }
            LOAD_SKILL if !self.skills.is_empty() => {
                skills::load(&self.skills, args, self.workspace.caps().max_output)
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
    let value = Value::Object(object_args(tool, args)?);
    serde_json::from_value(value).map_err(|e| ToolError::new(format!("bad arguments for {tool}: {e}")))
}

/// The arguments of a call as a JSON object: `null` is none, a JSON object sent as a string is
/// accepted.
fn object_args(tool: &str, args: &Value) -> Result<serde_json::Map<String, Value>, ToolError> {
    let value = match args {
        Value::Null => json!({}),
        Value::String(s) => serde_json::from_str::<Value>(s).map_err(|e| {
            ToolError::new(format!("the arguments of {tool} are not valid JSON ({e}); send a JSON object"))
        })?,
        other => other.clone(),
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ToolError::new(format!("the arguments of {tool} must be a JSON object"))),
    }
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

    fn err<T: fmt::Debug>(r: Result<T, ToolError>) -> String {
        match r {
            Err(e) => e.0,
            Ok(v) => panic!("expected an error, got {v:?}"),
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
}
