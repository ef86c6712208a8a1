//! The TOML configuration of SPEC section 6: agent limits, providers, scheduler and history,
//! layered user file → workspace `.livenote.toml` → client settings.
//!
//! Loading never fails: every broken file, unknown key or bad value becomes a [`ConfigProblem`]
//! (with file, line and column when there is a file) and the rest still loads. API keys are
//! never read from configuration, only the *name* of the environment variable holding one.
//!
//! This file holds the configuration's types; the work is split by job, each file using only
//! the ones below it: `load.rs` (find and read the files: the user's config, the folder's
//! `.livenote.toml` behind the trust gate) → `layer.rs` (apply one TOML/JSON layer: keys,
//! types, unknown keys with "did you mean", problems with positions; then the final config)
//! → `tree.rs` (the source-neutral value tree both formats are read into), `duration.rs`,
//! `resolve.rs` (which provider a note runs with, and the names a note may use).

mod duration;
mod layer;
mod load;
mod resolve;
mod tree;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use duration::{DurationError, format_duration, parse_duration};
pub use layer::Layer;
pub use load::{user_config_dir, user_config_path, workspace_config_path};

/// Where the OpenAI-compatible provider points when `base_url` is not given.
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Model of the implicit `openai` provider (SPEC 6: used when only `OPENAI_API_KEY` is set).
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1-mini";
/// Where the Anthropic provider points when `base_url` is not given.
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// Model of the implicit `anthropic` provider; the small tier, like the OpenAI default.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-haiku-4-5";
pub const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";
pub const ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// How long an MCP server may take to start, and each of its tool calls, unless
/// `[mcp.servers.NAME] timeout` says otherwise.
pub const DEFAULT_MCP_TIMEOUT: Duration = Duration::from_secs(30);
/// Transcripts kept (all notes together) and processed events kept in `events/done/`, unless
/// `[history] runs_keep` / `events_keep` say otherwise.
pub const DEFAULT_RUNS_KEEP: usize = 1000;
pub const DEFAULT_EVENTS_KEEP: usize = 1000;

const NO_PROVIDER_HELP: &str = "add [providers.NAME] to .livenote.toml or ~/.config/livenote/config.toml, \
     or set OPENAI_API_KEY / ANTHROPIC_API_KEY (see docs/providers.md)";

// ---------------------------------------------------------------------------------------------
// The configuration
// ---------------------------------------------------------------------------------------------

/// The merged configuration. `Default` is "no config at all".
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    pub agent: AgentConfig,
    /// Usable providers by name.
    pub providers: BTreeMap<String, ProviderConfig>,
    pub scheduler: SchedulerConfig,
    pub history: HistoryConfig,
    /// Providers that are defined but unusable (no `kind`, no `model`, ...), with the reason.
    /// Kept apart so a note naming one gets "misconfigured: ..." rather than "unknown".
    pub broken_providers: BTreeMap<String, String>,
    /// The implicit `openai` / `anthropic` providers, present when their usual key variable is
    /// set. They stand in when nothing is configured and stay reachable by name unless a
    /// configured provider of the same name shadows them.
    pub env_providers: BTreeMap<String, ProviderConfig>,
    /// The folder's `.livenote.toml` when it exists but is not used because the folder is not
    /// trusted with that content (SPEC 7). `None` when it is used, or there is none.
    pub ignored_folder: Option<Box<IgnoredFolderConfig>>,
    /// Usable MCP servers (`[mcp.servers.NAME]`) by name: their tools are offered to model runs.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// MCP servers that are defined but unusable (no `command`, ...), with the reason; their
    /// names still count as known in `live.tools`.
    pub broken_mcp_servers: BTreeMap<String, String>,
    /// `[memory]`: the quotas of each note's agent memory.
    pub memory: MemoryConfig,
    pub skills: SkillsConfig,
    /// `[machine]`: read from the user's own file only (a synced folder is shared by machines).
    pub machine: MachineConfig,
    /// Usable sources (`[sources.NAME]`) by name: producers of events (`crate::sources`).
    pub sources: BTreeMap<String, SourceConfig>,
    /// Sources that are defined but unusable (no `kind`, no `url`, ...), with the reason.
    pub broken_sources: BTreeMap<String, String>,
    /// `[notify]`: how the user is told that a run ended (`crate::notify`).
    pub notify: NotifyConfig,
}

/// `[notify]`: desktop notifications from `watch` and `tick`, and a program told of each one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NotifyConfig {
    /// `desktop = true`: `watch` and `tick` show a desktop notification (the language server
    /// tells the editor instead).
    pub desktop: bool,
    /// `command = ["prog", "arg"]`: run with one JSON object on stdin per notification.
    pub command: Option<NotifyCommand>,
}

/// `[notify] command`: a program from the configuration, run as a provider's is (trust rules
/// of SPEC 7: a folder's only while the folder is trusted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyCommand {
    /// Program and arguments, never a shell line.
    pub command: Vec<String>,
    /// Which file named it: a folder's or the editor's runs only in a trusted folder.
    pub origin: Origin,
}

/// `[machine]` in the user's config: what this machine is called (`crate::machine`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MachineConfig {
    pub name: Option<String>,
}

/// A folder's `.livenote.toml` that is not used: the folder is not trusted with its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredFolderConfig {
    /// The folder.
    pub root: PathBuf,
    /// Its `.livenote.toml`.
    pub path: PathBuf,
    /// Why it is not used (never trusted, changed since, trusted by an older livenote).
    pub trust: crate::workspace::trust::Trust,
    /// The digest of the bytes that were read: what trusting the folder now would approve.
    pub digest: crate::workspace::trust::Digest,
    /// The configuration as it would be with the file. Only compared, never run.
    would_be: Config,
}

impl IgnoredFolderConfig {
    /// Whether it changed since the user trusted the folder (rather than never trusted).
    pub fn changed(&self) -> bool {
        matches!(self.trust, crate::workspace::trust::Trust::Changed { .. })
    }

    /// The names of the sources the file defines, which do not poll while it is ignored.
    pub fn source_names(&self) -> Vec<String> {
        self.would_be.sources.keys().chain(self.would_be.broken_sources.keys()).cloned().collect()
    }

    /// For the file's problem list: "ignored: <why>; ...".
    pub fn problem(&self) -> String {
        format!(
            "ignored: {}; livenote uses only your own configuration here until you trust the folder (`livenote trust {}`)",
            self.trust.reason(),
            self.root.display()
        )
    }

    /// Why a run cannot start without the file.
    pub fn run_error(&self, provider: Option<&str>) -> String {
        format!("{}; review it, then run `livenote trust {}`", self.needed_by(provider), self.root.display())
    }

    /// "this note's provider `p` comes from <file>, which is not used: <why>": what a run
    /// needs from the file, for [`Self::run_error`] and the editor's question.
    pub fn needed_by(&self, provider: Option<&str>) -> String {
        let what = match provider {
            Some(p) => format!("this note's provider `{p}` comes from {}", self.path.display()),
            None => format!("this note's provider comes from {}", self.path.display()),
        };
        format!("{what}, which is not used: {}", self.trust.reason())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentConfig {
    /// Default provider for notes without `provider:`.
    pub provider: Option<String>,
    /// Tool calls per run.
    pub max_steps: u32,
    /// Wall-clock limit of a model run.
    pub timeout: Duration,
    /// Offer `fetch_url` to the agent.
    pub web: bool,
    /// Bytes of one model reply (as streamed); more fails the run.
    pub max_reply_bytes: usize,
    /// Bytes of one tool call's arguments; more fails the run.
    pub max_tool_args_bytes: usize,
    /// Bytes of a run's whole conversation (messages, tool calls, tool results); more fails the run.
    pub max_conversation_bytes: usize,
    /// Workspace-relative files of standing instructions, beside `AGENTS.md`.
    pub instructions: Vec<String>,
    /// Characters of one instructions file sent to the model; the rest is cut.
    pub instructions_max_chars: usize,
    /// Input plus output tokens over a run's model calls, as the provider reports them.
    pub max_tokens: u64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            provider: None,
            max_steps: 25,
            timeout: Duration::from_secs(600),
            web: false,
            max_reply_bytes: 4 * MIB,
            max_tool_args_bytes: MIB,
            max_conversation_bytes: 16 * MIB,
            instructions: Vec::new(),
            instructions_max_chars: 8000,
            // 25 steps re-sending a conversation of ~15k tokens each: a long note and a few
            // file reads, while capping the cost of a run that goes wrong.
            max_tokens: 400_000,
        }
    }
}

const MIB: usize = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerConfig {
    pub enabled: bool,
    /// Globs relative to the workspace root, beside .gitignore.
    pub exclude: Vec<String>,
    /// The cap of a failing note's backoff (`max_backoff`, SPEC 3): past it, at most one try
    /// per occurrence.
    pub max_backoff: Duration,
    /// Scheduled runs of one root that go on at once; the rest wait their turn (1,000 notes
    /// due in the same minute started 1,000 processes together). Manual runs are not counted.
    pub max_concurrent_runs: usize,
    /// `host`: the one machine (`crate::machine::name`) that fires scheduled and event runs
    /// of the folder; `None`: every machine that has it open.
    pub host: Option<String>,
    /// `failover_after`: how long a note may stay due with no attempt from any machine
    /// before a machine other than `host` runs it.
    pub failover_after: Option<Duration>,
    /// `catch_up`: an occurrence missed while the machine slept or was off (past a cron's
    /// grace, after a window's band) that ended less than this ago is run late, once, by
    /// `watch`, the editor and `tick`; `None` (the default): missed occurrences are not
    /// replayed (SPEC 3), only named in the log and the note's status.
    pub catch_up: Option<Duration>,
}

/// The range `[scheduler] max_backoff` accepts: no shorter than the first wait (5 minutes,
/// or the doubling would never start), no longer than a week (beyond that a failing note
/// looks abandoned).
pub const MAX_BACKOFF_RANGE: (Duration, Duration) =
    (Duration::from_secs(5 * 60), Duration::from_secs(7 * 24 * 3600));

impl SchedulerConfig {
    /// `max_backoff` as the schedule counts it.
    pub fn backoff_cap(&self) -> chrono::TimeDelta {
        chrono::TimeDelta::from_std(self.max_backoff).unwrap_or(crate::schedule::due::MAX_BACKOFF)
    }
}

/// [`SchedulerConfig::max_concurrent_runs`] when unset: a few runs overlap (a slow provider
/// does not hold the others up) without a burst of due notes starting them all at once.
pub const DEFAULT_MAX_CONCURRENT_RUNS: usize = 4;

impl Default for SchedulerConfig {
    fn default() -> Self {
        let max_backoff = crate::schedule::due::MAX_BACKOFF.to_std().unwrap_or(Duration::from_secs(6 * 3600));
        SchedulerConfig {
            enabled: true,
            exclude: Vec::new(),
            max_backoff,
            max_concurrent_runs: DEFAULT_MAX_CONCURRENT_RUNS,
            host: None,
            failover_after: None,
            catch_up: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryConfig {
    /// Body snapshots kept per note.
    pub keep: usize,
    /// Run transcripts (`.livenote/runs/`) kept, all notes together.
    pub runs_keep: usize,
    /// Processed events (`.livenote/events/done/`) kept.
    pub events_keep: usize,
}

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig { keep: 20, runs_keep: DEFAULT_RUNS_KEEP, events_keep: DEFAULT_EVENTS_KEEP }
    }
}

/// `[memory]`: the quotas of a note's agent memory (`memory`), the one place they are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Entries a note's memory may hold; updating an existing key is exempt.
    pub max_keys: usize,
    /// Bytes of one entry's content.
    pub max_bytes: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig { max_keys: 50, max_bytes: 4096 }
    }
}

/// `[skills]`: where the workspace keeps its skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillsConfig {
    /// Workspace-relative folders of skill files.
    pub dirs: Vec<String>,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig { dirs: vec!["skills".to_owned()] }
    }
}

/// Which layer defined something. Trust decisions depend on it (SPEC 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The user's own config file, or the implicit providers from the user's environment.
    User,
    /// The workspace's `.livenote.toml`: arrives with a cloned folder.
    Workspace,
    /// The editor's initializationOptions / settings.
    Client,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::User => "user",
            Origin::Workspace => "workspace",
            Origin::Client => "client",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// The latest layer that set any key of this provider: a workspace tweaking a user's
    /// provider makes it a workspace provider, because that tweak may be what runs.
    pub origin: Origin,
}

impl ProviderConfig {
    /// `openai`, `anthropic` or `command`.
    pub fn kind_name(&self) -> &'static str {
        self.kind.name()
    }

    /// The configured model, for model providers.
    pub fn model(&self) -> Option<&str> {
        match &self.kind {
            ProviderKind::OpenAi(c) => Some(&c.model),
            ProviderKind::Anthropic(c) => Some(&c.model),
            ProviderKind::Command(_) => None,
        }
    }

    /// Whether this provider runs a program that the user did not write into their own
    /// config. Client settings count too: editors read workspace settings from the repository
    /// (e.g. `.vscode/settings.json`), so they may come with a cloned folder.
    pub fn needs_trust(&self) -> bool {
        matches!(self.kind, ProviderKind::Command(_)) && self.origin != Origin::User
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderKind {
    OpenAi(OpenAiConfig),
    Anthropic(AnthropicConfig),
    Command(CommandConfig),
}

impl ProviderKind {
    pub fn name(&self) -> &'static str {
        match self {
            ProviderKind::OpenAi(_) => "openai",
            ProviderKind::Anthropic(_) => "anthropic",
            ProviderKind::Command(_) => "command",
        }
    }
}

/// Any OpenAI-compatible chat-completions endpoint with tool calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    pub base_url: String,
    pub model: String,
    /// Name of the variable holding the key; `None` for local servers that need none.
    /// Defaults to `OPENAI_API_KEY` only when `base_url` is the public API too.
    pub api_key_env: Option<String>,
}

/// The Anthropic Messages API with tool use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnthropicConfig {
    pub base_url: String,
    pub model: String,
    /// Name of the variable holding the key (the API always wants one): default
    /// `ANTHROPIC_API_KEY`.
    pub api_key_env: String,
}

/// Any program; see `providers::command`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandConfig {
    /// Program and arguments, never a shell line (use `["sh", "-c", "..."]` for that).
    pub command: Vec<String>,
    pub timeout: Duration,
}

/// `[mcp.servers.NAME]`: a Model Context Protocol server whose tools model runs may call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct McpServerConfig {
    pub transport: McpTransport,
    /// Variables added to the server's environment (a program's only).
    pub env: BTreeMap<String, String>,
    /// Offered to event runs too. Off by default: an event's payload is text from outside, and
    /// a prompt injection in it must not reach tools with side effects.
    pub events: bool,
    /// Limit of each tool call, and of starting the server (at least [`MIN_MCP_START`]).
    pub timeout: Duration,
    /// The latest layer that set any of its keys (as for providers).
    pub origin: Origin,
}

/// The least a server is given to start and list its tools, whatever its `timeout`: a server
/// in Python or started through `npx` takes seconds on a cold or busy machine, and a `timeout`
/// chosen for its calls (`"2s"`) must not cost a run the server's tools.
pub const MIN_MCP_START: Duration = Duration::from_secs(20);

impl McpServerConfig {
    /// How long the server may take to start, and then to list its tools.
    pub fn start_timeout(&self) -> Duration {
        self.timeout.max(MIN_MCP_START)
    }

    /// Whether it is something the user did not write into their own config: a folder's
    /// `.livenote.toml` or the editor's settings (which may come with a cloned folder). Such a
    /// server starts only as providers from there run: in a trusted folder (SPEC 7).
    pub fn needs_trust(&self) -> bool {
        self.origin != Origin::User
    }
}

/// How livenote talks to an MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum McpTransport {
    /// A program (and its arguments) speaking MCP on its stdin and stdout; started by livenote
    /// in the workspace folder, in a process group of its own.
    Stdio { command: Vec<String> },
    /// A server already running, reached over streamable HTTP. `headers`: sent with every
    /// request, each value read from an environment variable when livenote connects (a token
    /// is never in a config file, a log line or an error).
    Http { url: String, headers: Vec<HeaderFromEnv> },
}

/// An HTTP header whose value comes from an environment variable: `[mcp.servers.NAME]
/// bearer_token_env = "VAR"` (`Authorization: Bearer $VAR`) or `headers_env = { "X-Api-Key" =
/// "VAR" }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HeaderFromEnv {
    /// The header's name, as written.
    pub name: String,
    /// The variable holding its value.
    pub var: String,
    /// The value is sent as `Bearer <value>` (`bearer_token_env`).
    pub bearer: bool,
}

// ---------------------------------------------------------------------------------------------
// Sources
// ---------------------------------------------------------------------------------------------

/// `[sources.NAME]`: something outside the notes that livenote polls (or listens to) and
/// turns into events (`crate::sources`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceConfig {
    pub kind: SourceKind,
    /// How often it is polled (`every`); `None` for a webhook, which listens.
    pub every: Option<Duration>,
    pub enabled: bool,
    /// Whether the first poll queues what already exists (else it only records it as seen).
    pub backfill: bool,
    /// The `type` of its events.
    pub event_type: String,
    /// The latest layer that set any of its keys. Every source polls into (and listens for)
    /// a trusted folder only; this says whose configuration it is, for the messages.
    pub origin: Origin,
    /// `folders`, from the user's own file only: the workspace roots it serves, as written
    /// (absolute, or from `~/`); empty = every trusted folder.
    pub folders: Vec<PathBuf>,
}

impl SourceConfig {
    /// Whether it is something the user did not write into their own config (SPEC 7).
    pub fn needs_trust(&self) -> bool {
        self.origin != Origin::User
    }

    /// Whether it serves the workspace root `root` (canonical): every folder when `folders`
    /// is empty, else only those it names (each compared by its canonical path; `~/` is the
    /// home folder of `env`).
    pub fn serves(&self, root: &Path, env: &dyn Env) -> bool {
        if self.folders.is_empty() {
            return true;
        }
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let home = || crate::platform::home_dir(&|k| env.var(k));
        self.folders.iter().any(|f| {
            let f = match f.strip_prefix("~") {
                Ok(rest) => match home() {
                    Some(h) => h.join(rest),
                    None => return false,
                },
                Err(_) => f.clone(),
            };
            f.is_absolute() && std::fs::canonicalize(&f).unwrap_or(f) == root
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    Feed {
        url: String,
    },
    Ics {
        at: IcsLocation,
        horizon: Duration,
    },
    Imap(ImapSourceConfig),
    Webhook(WebhookSourceConfig),
    /// A program printing events as JSON lines; the `command` provider's shape.
    Command(CommandConfig),
}

impl SourceKind {
    pub fn name(&self) -> &'static str {
        match self {
            SourceKind::Feed { .. } => "feed",
            SourceKind::Ics { .. } => "ics",
            SourceKind::Imap(_) => "imap",
            SourceKind::Webhook(_) => "webhook",
            SourceKind::Command(_) => "command",
        }
    }
}

/// Where a calendar is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IcsLocation {
    Url(String),
    /// A file, relative to the workspace when not absolute.
    Path(PathBuf),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImapTls {
    Implicit,
    StartTls,
    /// Plain text: only to a loopback address.
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImapSourceConfig {
    pub host: String,
    pub port: u16,
    pub tls: ImapTls,
    pub username: String,
    /// The variable holding the password (never the password itself).
    pub password_env: String,
    pub mailbox: String,
    /// The least time between two polls the server's IDLE asks for (`idle_min_gap`); a
    /// reconnection waits twice this at first.
    pub idle_min_gap: Duration,
}

/// `idle_min_gap` when it is not set.
pub const DEFAULT_IDLE_MIN_GAP: Duration = Duration::from_secs(30);
/// The least `idle_min_gap` taken: a folder's file must not turn a mailbox's IDLE into a
/// stream of logins.
pub const MIN_IDLE_MIN_GAP: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookSourceConfig {
    /// Loopback unless the user's own file says otherwise.
    pub listen: std::net::SocketAddr,
    /// The URL path POSTs go to (`/hooks/github`).
    pub path: String,
    /// The variable holding the bearer token requests must carry.
    pub token_env: Option<String>,
    /// The variable holding GitHub's webhook secret (`X-Hub-Signature-256`).
    pub secret_env: Option<String>,
}

/// The poll interval of each kind when `every` is not set.
pub fn default_every(kind: &str) -> Option<Duration> {
    match kind {
        "feed" | "ics" => Some(Duration::from_secs(15 * 60)),
        "imap" | "command" => Some(Duration::from_secs(5 * 60)),
        _ => None,
    }
}

/// The event type of each kind when `type` is not set.
pub fn default_event_type(kind: &str) -> &'static str {
    match kind {
        "feed" => "feed.entry",
        "ics" => "calendar.digest",
        "imap" => "mail.message",
        "webhook" => "webhook.post",
        _ => "command.event",
    }
}

// ---------------------------------------------------------------------------------------------
// Problems and errors
// ---------------------------------------------------------------------------------------------

/// Something wrong in one layer. The layer still loaded as far as it could.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub origin: Origin,
    /// The file; `None` for client settings.
    pub path: Option<PathBuf>,
    /// 1-based line and column (in characters), when the problem has a place in a file.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Byte range in the file, for editor diagnostics.
    pub span: Option<Range<usize>>,
    /// The dotted key concerned (`agent.timeout`), when there is one.
    pub key: Option<String>,
    /// One line, self-contained, never quoting a value that might be a secret.
    pub message: String,
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.line, self.column) {
            (Some(p), Some(l), Some(c)) => write!(f, "{}:{l}:{c}: {}", p.display(), self.message),
            (Some(p), _, _) => write!(f, "{}: {}", p.display(), self.message),
            (None, _, _) => write!(f, "{} settings: {}", self.origin.as_str(), self.message),
        }
    }
}

/// Why a run cannot pick a provider. `Display` goes into `lastRunError`: one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("no provider configured: {NO_PROVIDER_HELP}")]
    NoProvider,
    #[error("unknown provider `{name}` ({})", known_list(.known))]
    UnknownProvider { name: String, known: Vec<String> },
    #[error("provider `{name}` is misconfigured: {reason}")]
    BrokenProvider { name: String, reason: String },
    #[error(
        "several providers are configured ({}) and none is the default: set `provider` under [agent] or in the note",
        .names.join(", ")
    )]
    AmbiguousProvider { names: Vec<String> },
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        format!("none is configured: {NO_PROVIDER_HELP}")
    } else {
        format!("known: {}", known.join(", "))
    }
}

// ---------------------------------------------------------------------------------------------
// Environment
// ---------------------------------------------------------------------------------------------

/// Read access to environment variables, so tests can pass their own (Rust 2024 makes
/// `set_var` unsafe, and the process environment is shared between tests anyway).
pub trait Env {
    /// The variable's value; empty counts as unset.
    fn var(&self, name: &str) -> Option<OsString>;
}

/// The process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name).filter(|v| !v.is_empty())
    }
}

impl<F: Fn(&str) -> Option<OsString>> Env for F {
    fn var(&self, name: &str) -> Option<OsString> {
        self(name).filter(|v| !v.is_empty())
    }
}
