//! What a run hands to whatever produces a note's new content, and what it gets back: the
//! contract between the run engine (`runs/`) and the producers (`providers/`: a command, or
//! the agent in `agent/`). It sits below all of them so that the agent and the providers that
//! dispatch to it share these types without importing each other.
//!
//! Dependencies: `config` (durations in messages), `instructions` (what a run is told to
//! follow), `model` (a model client's [`ModelError`]
//! becomes a [`ProviderError`] with the same text) and `mcp` (the servers a run may use);
//! nothing above.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

pub use crate::model::BoxFuture;

use crate::config::format_duration;
use crate::model::ModelError;

/// What started a run (defined with the schedule, which decides cron and window runs).
pub use crate::schedule::TriggerKind;

/// Everything a provider gets for one run (SPEC 4).
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// Workspace-relative, `/`-separated.
    pub note_path: String,
    pub title: Option<String>,
    pub objective: String,
    pub trigger: TriggerKind,
    /// Manual context text, or the event's criteria and payload.
    pub context: Option<String>,
    /// The event an `event` run is for, as data; `None` for other runs.
    pub event: Option<TriggerEvent>,
    /// The note body below the frontmatter.
    pub body: String,
    pub now: DateTime<Utc>,
    /// RFC 3339 with the local offset.
    pub local_now: String,
    /// IANA name (or "local" when unknown).
    pub time_zone: String,
    pub workspace_root: PathBuf,
    /// Whether the workspace is trusted: the user's programs (a `command` provider, stdio MCP
    /// servers) start in it only then, else in a neutral folder (`workspace::launch`).
    pub trusted: bool,
    pub run_id: String,
    pub model: Option<String>,
    /// The MCP servers this run may use, and which of their tools (`mcp::select`: the
    /// configuration, the note's `live.tools`, event runs, trust).
    pub mcp_servers: Vec<crate::mcp::Selected>,
    /// The standing instructions (`instructions::load`): the workspace's files when trusted,
    /// the user's own, each within its budget.
    pub instructions: Vec<crate::instructions::Instruction>,
    /// `live.maxChars`: the body's budget in characters (`note::budget`), when set.
    pub max_chars: Option<usize>,
    /// The note's agent memory as the run starts (`memory`), loaded by the engine.
    pub memory: RunMemory,
    /// The skills the note lists in `live.skills` (`skills::Loaded::for_run`), with their
    /// guidance: the run message carries them in full.
    pub skills: Vec<crate::skills::Skill>,
    /// Every other skill: the run message lists each in one line, and `load_skill` answers
    /// with its guidance.
    pub skill_catalog: Vec<crate::skills::Skill>,
}

/// The event an `event` run is for, as data: what a `command` provider's program reads as
/// `event` beside `context`, which has the same event as Markdown for a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TriggerEvent {
    pub id: String,
    pub source: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// RFC 3339.
    pub created_at: String,
    /// As the event holds it: JSON stays JSON, a string stays a string, whole.
    pub payload: serde_json::Value,
    /// The note the event named (`null` when routing chose it).
    pub target_file_path: Option<String>,
}

impl RunRequest {
    /// Who this run is to the note's memory: a run an event started brings outside text (an
    /// email, a feed item, anything `livenote event` was given), and writes no lasting rules.
    pub fn memory_author(&self) -> crate::memory::Author {
        match self.trigger {
            TriggerKind::Event => crate::memory::Author::Outside(format!("event run {}", self.run_id)),
            _ => crate::memory::Author::Own,
        }
    }
}

/// A note's memory as a run gets it.
#[derive(Debug, Clone, Default)]
pub struct RunMemory {
    pub entries: crate::memory::Memory,
    pub quotas: crate::memory::MemoryConfig,
    /// Why the note's memory file could not be read: the run goes on without it, and nothing
    /// writes over the file (the memory tools and a command's `"memory"` are refused).
    pub unreadable: Option<String>,
    /// What the `[memory]` quotas left out of the file as read (`memory::Memory::within`).
    pub left_out: Option<String>,
}

/// What a provider produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutput {
    /// The new content, as the provider gave it.
    pub body: String,
    /// For `lastRunSummary`.
    pub summary: Option<String>,
    /// `true` when `body` is the content below the H1 (the H1 line stays), `false` when it is
    /// the whole body.
    pub body_is_below_h1: bool,
}

/// Why a run produced nothing. `Display` is what goes into `lastRunError`: one short line,
/// never a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The user (or shutdown) stopped the run.
    #[error("stopped")]
    Stopped,
    #[error("timed out after {}", format_duration(*.0))]
    TimedOut(Duration),
    #[error("command not found: {0}")]
    CommandNotFound(String),
    #[error("cannot start {program}: {reason}")]
    Spawn { program: String, reason: String },
    /// The program failed; `status` is e.g. "exited with status 2" or "killed by signal 9
    /// (SIGKILL)", `stderr_tail` its last stderr lines on one line (may be empty).
    #[error("{status}{}", if stderr_tail.is_empty() { String::new() } else { format!(": {stderr_tail}") })]
    Failed { status: String, stderr_tail: String },
    #[error("output larger than {} MiB", limit / (1024 * 1024))]
    OutputTooLarge { limit: usize },
    /// A model's reply or a run's conversation went past an `[agent]` byte bound.
    #[error("{0}")]
    TooLarge(String),
    /// The output could not be used (e.g. not UTF-8).
    #[error("{0}")]
    InvalidOutput(String),
    /// Talking to the program (or service) failed.
    #[error("{0}")]
    Io(String),
    /// No usable provider, or the provider may not run here (untrusted, misconfigured).
    #[error("{0}")]
    Config(String),
    /// The provider kind exists in configuration but not in this build yet.
    #[error("{0}")]
    Unavailable(String),
}

impl From<ModelError> for ProviderError {
    /// The same one-line text: a model client's error reads in `lastRunError` as it always did.
    fn from(e: ModelError) -> Self {
        match e {
            ModelError::Stopped => ProviderError::Stopped,
            ModelError::TimedOut(d) => ProviderError::TimedOut(d),
            ModelError::ContextOverflow => ProviderError::Io(e.to_string()),
            ModelError::TooLarge(m) => ProviderError::TooLarge(m),
            ModelError::InvalidOutput(m) => ProviderError::InvalidOutput(m),
            ModelError::Io(m) => ProviderError::Io(m),
            ModelError::Config(m) => ProviderError::Config(m),
            ModelError::NotAModel => ProviderError::Config(e.to_string()),
        }
    }
}

/// One step of a run, for transcripts (`runs/<id>.jsonl`) and progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunEvent {
    /// A short tag: "started", "stderr", "exited", "killed", ... (the engine adds its own,
    /// like "start" and "done").
    pub kind: String,
    pub message: String,
    /// Structured details for the transcript (an MCP call's server, tool, arguments, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl RunEvent {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        RunEvent { kind: kind.into(), message: message.into(), data: None }
    }

    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// How the run engine answered one intermediate body of a model run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditReply {
    /// The step is in the note. `Some`: the note's agent region as it now reads (with what the
    /// user typed elsewhere meanwhile), which the agent continues from; `None`: as sent.
    Applied(Option<String>),
    /// The step was not written, and the model is told why (a tool error) so that it can
    /// re-read and try again: the user changed the text it replaces meanwhile. `body`: the
    /// region as it now reads, when known.
    Refused { message: String, body: Option<String> },
    /// The note cannot be written (deleted, disk full, the editor gone): the run cannot go on.
    Failed(String),
}

/// Where a model run's intermediate bodies go, one at a time: the engine applies each to the
/// note relative to the text the previous one produced, and answers before the next.
pub trait EditSink: Send {
    fn apply<'a>(&'a mut self, body: &'a str) -> BoxFuture<'a, EditReply>;
}

/// A closure that only watches the bodies go by (tests, callers that apply nothing).
impl<F: FnMut(&str) + Send> EditSink for F {
    fn apply<'a>(&'a mut self, body: &'a str) -> BoxFuture<'a, EditReply> {
        self(body);
        Box::pin(std::future::ready(EditReply::Applied(None)))
    }
}
