//! The TOML configuration of SPEC section 6: agent limits, providers, scheduler and history,
//! layered user file → workspace `.livenote.toml` → client settings.
//!
//! Loading never fails: every broken file, unknown key or bad value becomes a [`ConfigProblem`]
//! (with file, line and column when there is a file) and the rest still loads. API keys are
//! never read from configuration, only the *name* of the environment variable holding one.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

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

/// A config file larger than this is certainly not hand-written configuration.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// Enough to fix a broken file from the list; more would only bury the first one.
const MAX_SYNTAX_PROBLEMS: usize = 10;

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

    /// For the file's problem list: "ignored: <why>; ...".
    fn problem(&self) -> String {
        format!(
            "ignored: {}; livenote uses only your own configuration here until you trust the folder (`livenote trust {}`)",
            self.trust.reason(),
            self.root.display()
        )
    }

    /// One line for the user: the file is not used, why, and how to trust.
    pub fn message(&self) -> String {
        format!("{}: {}", self.path.display(), self.problem())
    }

    /// Why a run cannot start without the file.
    pub fn run_error(&self, provider: Option<&str>) -> String {
        let what = match provider {
            Some(p) => format!("this note's provider `{p}` comes from {}", self.path.display()),
            None => format!("this note's provider comes from {}", self.path.display()),
        };
        format!(
            "{what}, which is not used: {}; review it, then run `livenote trust {}`",
            self.trust.reason(),
            self.root.display()
        )
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
        }
    }
}

const MIB: usize = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerConfig {
    pub enabled: bool,
    /// Globs relative to the workspace root, beside .gitignore.
    pub exclude: Vec<String>,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig { enabled: true, exclude: Vec::new() }
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
        HistoryConfig {
            keep: 20,
            runs_keep: crate::runs::history::DEFAULT_RUNS_KEEP,
            events_keep: crate::runs::history::DEFAULT_EVENTS_KEEP,
        }
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

/// The user's config file: `$LIVENOTE_CONFIG_DIR/config.toml`, else
/// `$XDG_CONFIG_HOME/livenote/config.toml`, else `~/.config/livenote/config.toml`.
pub fn user_config_path(env: &dyn Env) -> Option<PathBuf> {
    if let Some(dir) = env.var("LIVENOTE_CONFIG_DIR") {
        return Some(PathBuf::from(dir).join("config.toml"));
    }
    // The XDG spec says relative values are invalid and must be ignored.
    if let Some(dir) = env.var("XDG_CONFIG_HOME").map(PathBuf::from).filter(|d| d.is_absolute()) {
        return Some(dir.join("livenote/config.toml"));
    }
    env.var("HOME").map(|h| PathBuf::from(h).join(".config/livenote/config.toml"))
}

/// The workspace's own config file.
pub fn workspace_config_path(root: &Path) -> PathBuf {
    root.join(".livenote.toml")
}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

/// One configuration layer, lowest priority first in [`Config::from_layers`].
#[derive(Debug, Clone, Copy)]
pub enum Layer<'a> {
    /// A TOML file's text; `path` is only for messages.
    Toml { text: &'a str, path: &'a Path, origin: Origin },
    /// Client settings: JSON of the same shape (`null` means "not set").
    Json(&'a serde_json::Value),
}

impl Config {
    /// Load the user file, the workspace's `.livenote.toml` **only when the user trusts the
    /// folder with that content** (the user's trust store), and the client settings, using
    /// the process environment. Never fails.
    pub fn load(
        workspace_root: Option<&Path>,
        client: Option<&serde_json::Value>,
    ) -> (Config, Vec<ConfigProblem>) {
        let store = crate::workspace::trust::TrustStore::user();
        Config::load_gated(workspace_root, client, &ProcessEnv, store.as_ref())
    }

    /// [`Config::load`] with an explicit environment and trust store (`None`: nothing is
    /// trusted). The folder's file is read once; the bytes whose digest is checked against
    /// the store are the bytes that are parsed. An ignored file is still parsed, only to tell
    /// whether a run would need it ([`Config::needs_ignored_folder`]); nothing in it is used.
    pub fn load_gated(
        workspace_root: Option<&Path>,
        client: Option<&serde_json::Value>,
        env: &dyn Env,
        trust: Option<&crate::workspace::trust::TrustStore>,
    ) -> (Config, Vec<ConfigProblem>) {
        Config::load_impl(workspace_root, client, env, Some(trust))
    }

    /// Load every layer, the folder's `.livenote.toml` included **as if the folder were
    /// trusted**: for callers that already decided it is (and tests). Never fails.
    pub fn load_with(
        workspace_root: Option<&Path>,
        client: Option<&serde_json::Value>,
        env: &dyn Env,
    ) -> (Config, Vec<ConfigProblem>) {
        Config::load_impl(workspace_root, client, env, None)
    }

    /// `gate`: `None` = the folder is trusted by the caller; `Some(store)` = ask the store.
    fn load_impl(
        workspace_root: Option<&Path>,
        client: Option<&serde_json::Value>,
        env: &dyn Env,
        gate: Option<Option<&crate::workspace::trust::TrustStore>>,
    ) -> (Config, Vec<ConfigProblem>) {
        use crate::workspace::trust;
        let mut problems = Vec::new();
        let user = user_config_path(env)
            .and_then(|path| read_config_file(&path, Origin::User, &mut problems).map(|t| (path, t)));
        let mut folder: Option<(PathBuf, String)> = None;
        let mut ignored: Option<(PathBuf, PathBuf, String, trust::Trust, trust::Digest)> = None;
        if let Some(root) = workspace_root {
            let path = workspace_config_path(root);
            match gate {
                None => folder = read_config_file(&path, Origin::Workspace, &mut problems).map(|t| (path, t)),
                Some(store) => match trust::read_config_bytes(root) {
                    Ok(None) => {}
                    Err(e) => problems.push(file_problem(
                        &path,
                        Origin::Workspace,
                        format!("cannot read the file: {e}"),
                    )),
                    Ok(Some(bytes)) => {
                        let digest = Some(trust::digest_bytes(&bytes));
                        let verdict =
                            store.map_or(trust::Trust::Untrusted, |s| s.list().check_content(root, &digest));
                        match String::from_utf8(bytes) {
                            Err(e) => problems.push(file_problem(
                                &path,
                                Origin::Workspace,
                                format!(
                                    "not valid UTF-8 (at byte {}); ignored",
                                    e.utf8_error().valid_up_to()
                                ),
                            )),
                            Ok(text) if verdict.is_trusted() => folder = Some((path, text)),
                            Ok(text) => {
                                ignored = Some((root.to_path_buf(), path, text, verdict, digest));
                            }
                        }
                    }
                },
            }
        }
        let user_layer = user.as_ref().map(|(path, text)| Layer::Toml { text, path, origin: Origin::User });
        let folder_layer =
            folder.as_ref().map(|(path, text)| Layer::Toml { text, path, origin: Origin::Workspace });
        let client_layer = client.map(Layer::Json);
        let layers: Vec<Layer<'_>> = [user_layer, folder_layer, client_layer].into_iter().flatten().collect();
        let (mut config, more) = Config::from_layers(&layers, env);
        problems.extend(more);
        if let Some((root, path, text, trust, digest)) = ignored {
            // What the configuration would be with the file: never used to run, only compared.
            let folder_layer = Layer::Toml { text: &text, path: &path, origin: Origin::Workspace };
            let layers: Vec<Layer<'_>> =
                [user_layer, Some(folder_layer), client_layer].into_iter().flatten().collect();
            let (would_be, _) = Config::from_layers(&layers, env);
            let ignored = IgnoredFolderConfig { root, path, trust, digest, would_be };
            problems.push(file_problem(&ignored.path, Origin::Workspace, ignored.problem()));
            config.ignored_folder = Some(Box::new(ignored));
        }
        (config, problems)
    }

    /// The folder's ignored `.livenote.toml` when a run of a note naming `note_provider`
    /// would need it: the provider the run would pick, or its settings, differ with the file
    /// (the note names a provider only that file defines, the file sets the default provider,
    /// or it redefines the provider). Such a run must not start until the folder is trusted;
    /// a run that does not need it runs with the user's own configuration.
    pub fn needs_ignored_folder(&self, note_provider: Option<&str>) -> Option<&IgnoredFolderConfig> {
        let ignored = self.ignored_folder.as_deref()?;
        let with_file = ignored.would_be.resolve_provider(note_provider);
        match (self.resolve_provider(note_provider), with_file) {
            (_, Err(_)) => None,
            (Ok((name, p)), Ok((n, q))) if name == n && p.kind == q.kind => None,
            _ => Some(ignored),
        }
    }

    /// Merge layers (later ones override keys; providers merge by name) over the defaults.
    pub fn from_layers(layers: &[Layer<'_>], env: &dyn Env) -> (Config, Vec<ConfigProblem>) {
        let mut problems = Vec::new();
        let mut acc = Partial::default();
        for layer in layers {
            match *layer {
                Layer::Toml { text, path, origin } => {
                    let mut cx = Cx { origin, path: Some(path), text, problems: &mut problems };
                    if let Some(root) = parse_toml(text, &mut cx) {
                        apply_layer(&mut acc, &root, &mut cx);
                    }
                }
                Layer::Json(value) => {
                    let mut cx = Cx { origin: Origin::Client, path: None, text: "", problems: &mut problems };
                    apply_layer(&mut acc, &from_json(value), &mut cx);
                }
            }
        }
        let config = finish(acc, env_providers(env), &mut problems);
        (config, problems)
    }

    /// Every provider name a note may use (configured, misconfigured or implied by the
    /// environment), sorted: for validating `provider:`.
    /// The provider names a note may name without a diagnostic: those usable here, the
    /// built-in `openai` and `anthropic`, and those the folder's ignored `.livenote.toml`
    /// defines (its note is valid; running it asks for trust first).
    pub fn names_for_notes(&self) -> Vec<String> {
        let mut names: Vec<String> = self.provider_names().into_iter().map(str::to_owned).collect();
        // The built-in providers are names livenote always knows: without their key variable a
        // run says how to set it, which beats a validation error that depends on the shell.
        names.extend(["openai".to_owned(), "anthropic".to_owned()]);
        if let Some(ignored) = &self.ignored_folder {
            names.extend(ignored.would_be.provider_names().into_iter().map(str::to_owned));
        }
        names.sort_unstable();
        names.dedup();
        names
    }

    pub fn provider_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .providers
            .keys()
            .chain(self.broken_providers.keys())
            .chain(self.env_providers.keys())
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The provider for notes without `provider:`; see [`Config::resolve_provider`].
    pub fn default_provider(&self) -> Option<(String, ProviderConfig)> {
        self.resolve_provider(None).ok()
    }

    /// The provider a note runs with: the note's `provider:`, else `[agent] provider`, else the
    /// only configured provider, else (nothing configured) `openai` when `OPENAI_API_KEY` is
    /// set, else `anthropic` when `ANTHROPIC_API_KEY` is set.
    pub fn resolve_provider(
        &self,
        note_provider: Option<&str>,
    ) -> Result<(String, ProviderConfig), ConfigError> {
        if let Some(name) = note_provider.or(self.agent.provider.as_deref()) {
            return self.lookup(name);
        }
        let configured: Vec<&String> = self.providers.keys().chain(self.broken_providers.keys()).collect();
        match configured.as_slice() {
            [] => ["openai", "anthropic"]
                .into_iter()
                .find_map(|n| self.env_providers.get(n).map(|p| (n.to_owned(), p.clone())))
                .ok_or(ConfigError::NoProvider),
            [only] => self.lookup(only),
            several => {
                let mut names: Vec<String> = several.iter().map(|n| n.to_string()).collect();
                names.sort_unstable();
                Err(ConfigError::AmbiguousProvider { names })
            }
        }
    }

    fn lookup(&self, name: &str) -> Result<(String, ProviderConfig), ConfigError> {
        if let Some(p) = self.providers.get(name).or_else(|| {
            // A broken definition shadows the environment's provider of the same name: the
            // user meant their own.
            if self.broken_providers.contains_key(name) { None } else { self.env_providers.get(name) }
        }) {
            return Ok((name.to_owned(), p.clone()));
        }
        if let Some(reason) = self.broken_providers.get(name) {
            return Err(ConfigError::BrokenProvider { name: name.to_owned(), reason: reason.clone() });
        }
        Err(ConfigError::UnknownProvider {
            name: name.to_owned(),
            known: self.provider_names().into_iter().map(str::to_owned).collect(),
        })
    }
}

/// The implicit providers from the usual key variables (SPEC 6: "with no config").
fn env_providers(env: &dyn Env) -> BTreeMap<String, ProviderConfig> {
    let mut out = BTreeMap::new();
    if env.var(OPENAI_KEY_ENV).is_some() {
        let kind = ProviderKind::OpenAi(OpenAiConfig {
            base_url: DEFAULT_OPENAI_BASE_URL.to_owned(),
            model: DEFAULT_OPENAI_MODEL.to_owned(),
            api_key_env: Some(OPENAI_KEY_ENV.to_owned()),
        });
        out.insert("openai".to_owned(), ProviderConfig { kind, origin: Origin::User });
    }
    if env.var(ANTHROPIC_KEY_ENV).is_some() {
        let kind = ProviderKind::Anthropic(AnthropicConfig {
            base_url: DEFAULT_ANTHROPIC_BASE_URL.to_owned(),
            model: DEFAULT_ANTHROPIC_MODEL.to_owned(),
            api_key_env: ANTHROPIC_KEY_ENV.to_owned(),
        });
        out.insert("anthropic".to_owned(), ProviderConfig { kind, origin: Origin::User });
    }
    out
}

fn file_problem(path: &Path, origin: Origin, message: String) -> ConfigProblem {
    ConfigProblem {
        origin,
        path: Some(path.to_path_buf()),
        line: None,
        column: None,
        span: None,
        key: None,
        message,
    }
}

/// A missing file is normal (no problem); anything else that stops us reading it is one.
fn read_config_file(path: &Path, origin: Origin, problems: &mut Vec<ConfigProblem>) -> Option<String> {
    let file_problem = |message: String| ConfigProblem {
        origin,
        path: Some(path.to_path_buf()),
        line: None,
        column: None,
        span: None,
        key: None,
        message,
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            problems.push(file_problem(format!("cannot read the file: {e}")));
            return None;
        }
        Ok(m) if !m.is_file() => {
            problems.push(file_problem("not a regular file".to_owned()));
            return None;
        }
        Ok(m) if m.len() > MAX_CONFIG_BYTES => {
            problems.push(file_problem(format!("larger than {} KiB; ignored", MAX_CONFIG_BYTES / 1024)));
            return None;
        }
        Ok(_) => {}
    }
    // Only a regular file is opened (checked again on the open file, never blocking on a FIFO).
    match crate::workspace::confine::read_regular(path, MAX_CONFIG_BYTES) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(file_problem(format!("cannot read the file: {e}")));
            None
        }
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Some(text),
            Err(e) => {
                problems.push(file_problem(format!(
                    "not valid UTF-8 (at byte {}); ignored",
                    e.utf8_error().valid_up_to()
                )));
                None
            }
        },
    }
}

// ---------------------------------------------------------------------------------------------
// A source-neutral value tree, so TOML (with spans) and JSON (without) share one reader
// ---------------------------------------------------------------------------------------------

struct Node {
    val: Val,
    span: Option<Range<usize>>,
}

enum Val {
    Null,
    Bool(bool),
    /// `None` when out of the i64 range.
    Int(Option<i64>),
    Float,
    Str(String),
    Array(Vec<Node>),
    Table(Vec<Entry>),
    Datetime,
}

struct Entry {
    key: String,
    key_span: Option<Range<usize>>,
    node: Node,
}

fn describe(val: &Val) -> &'static str {
    match val {
        Val::Null => "null",
        Val::Bool(_) => "a boolean",
        Val::Int(_) => "an integer",
        Val::Float => "a float",
        Val::Str(_) => "a string",
        Val::Array(_) => "an array",
        Val::Table(_) => "a table",
        Val::Datetime => "a date-time",
    }
}

/// Parse a whole file. A file with syntax errors is ignored entirely (after reporting every
/// error): a half-recovered file could turn `command = ["rm", "-rf" "x"]` into something
/// else, and running a guess is worse than running nothing.
fn parse_toml(text: &str, cx: &mut Cx<'_>) -> Option<Node> {
    let (table, errors) = toml::de::DeTable::parse_recoverable(text);
    if errors.is_empty() {
        return Some(Node { span: Some(table.span()), val: Val::Table(toml_table(table.get_ref())) });
    }
    let total = errors.len();
    for e in errors.iter().take(MAX_SYNTAX_PROBLEMS) {
        let message = format!("invalid TOML: {}; the file is ignored until fixed", one_line(e.message()));
        cx.report(e.span(), None, message);
    }
    if total > MAX_SYNTAX_PROBLEMS {
        cx.report(None, None, format!("{} more TOML errors", total - MAX_SYNTAX_PROBLEMS));
    }
    None
}

fn toml_table(t: &toml::de::DeTable<'_>) -> Vec<Entry> {
    t.iter()
        .map(|(k, v)| Entry { key: k.get_ref().to_string(), key_span: Some(k.span()), node: toml_node(v) })
        .collect()
}

fn toml_node(v: &toml::Spanned<toml::de::DeValue<'_>>) -> Node {
    use toml::de::DeValue;
    let val = match v.get_ref() {
        DeValue::String(s) => Val::Str(s.to_string()),
        DeValue::Integer(i) => Val::Int(i64::from_str_radix(i.as_str(), i.radix()).ok()),
        DeValue::Float(_) => Val::Float,
        DeValue::Boolean(b) => Val::Bool(*b),
        DeValue::Datetime(_) => Val::Datetime,
        DeValue::Array(a) => Val::Array(a.iter().map(toml_node).collect()),
        DeValue::Table(t) => Val::Table(toml_table(t)),
    };
    Node { val, span: Some(v.span()) }
}

fn from_json(v: &serde_json::Value) -> Node {
    use serde_json::Value;
    let val = match v {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) if n.is_i64() || n.is_u64() => Val::Int(n.as_i64()),
        Value::Number(_) => Val::Float,
        Value::String(s) => Val::Str(s.clone()),
        Value::Array(a) => Val::Array(a.iter().map(from_json).collect()),
        Value::Object(o) => Val::Table(
            o.iter().map(|(k, v)| Entry { key: k.clone(), key_span: None, node: from_json(v) }).collect(),
        ),
    };
    Node { val, span: None }
}

// ---------------------------------------------------------------------------------------------
// Reading one layer into the accumulated partial configuration
// ---------------------------------------------------------------------------------------------

/// Where a setting came from, to place problems found only after merging.
#[derive(Debug, Clone)]
struct At {
    origin: Origin,
    path: Option<PathBuf>,
    span: Option<Range<usize>>,
    line_col: Option<(usize, usize)>,
}

impl At {
    fn problem(&self, key: Option<&str>, message: String) -> ConfigProblem {
        ConfigProblem {
            origin: self.origin,
            path: self.path.clone(),
            line: self.line_col.map(|(l, _)| l),
            column: self.line_col.map(|(_, c)| c),
            span: self.span.clone(),
            key: key.map(str::to_owned),
            message,
        }
    }
}

#[derive(Debug, Clone)]
struct Set<T> {
    value: T,
    at: At,
}

/// Everything set so far; `None` = not set by any layer yet.
#[derive(Default)]
struct Partial {
    provider: Option<Set<String>>,
    max_steps: Option<u32>,
    timeout: Option<Duration>,
    web: Option<bool>,
    max_reply_bytes: Option<usize>,
    max_tool_args_bytes: Option<usize>,
    max_conversation_bytes: Option<usize>,
    providers: BTreeMap<String, PartialProvider>,
    enabled: Option<bool>,
    exclude: Option<Vec<String>>,
    keep: Option<usize>,
    runs_keep: Option<usize>,
    events_keep: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KindTag {
    OpenAi,
    Anthropic,
    Command,
    Unknown,
}

struct PartialProvider {
    /// The latest definition (its key in the file), for "missing `model`" and the like.
    at: At,
    origin: Origin,
    kind: Option<KindTag>,
    base_url: Option<Set<String>>,
    model: Option<Set<String>>,
    api_key_env: Option<Set<String>>,
    command: Option<Set<Vec<String>>>,
    timeout: Option<Set<Duration>>,
}

impl PartialProvider {
    fn new(at: At) -> Self {
        PartialProvider {
            origin: at.origin,
            at,
            kind: None,
            base_url: None,
            model: None,
            api_key_env: None,
            command: None,
            timeout: None,
        }
    }
}

/// The layer being read and where its problems go.
struct Cx<'a> {
    origin: Origin,
    path: Option<&'a Path>,
    /// The file's text, to turn byte spans into lines and columns ("" for JSON).
    text: &'a str,
    problems: &'a mut Vec<ConfigProblem>,
}

impl Cx<'_> {
    fn at(&self, span: Option<Range<usize>>) -> At {
        let line_col = span.as_ref().map(|s| line_col(self.text, s.start));
        At { origin: self.origin, path: self.path.map(Path::to_path_buf), span, line_col }
    }

    fn report(&mut self, span: Option<Range<usize>>, key: Option<&str>, message: String) {
        let problem = self.at(span).problem(key, message);
        self.problems.push(problem);
    }

    fn unknown(&mut self, key: &str, entry: &Entry, known: &[&str]) {
        let hint = suggest(&entry.key, known).map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default();
        self.report(entry.key_span.clone(), Some(key), format!("unknown key `{key}`{hint}"));
    }

    fn wrong_type(&mut self, key: &str, node: &Node, expected: &str) {
        let message = format!("`{key}` must be {expected}, not {}", describe(&node.val));
        self.report(node.span.clone(), Some(key), message);
    }

    fn table<'n>(&mut self, key: &str, node: &'n Node) -> Option<&'n [Entry]> {
        match &node.val {
            Val::Table(entries) => Some(entries),
            _ => {
                self.wrong_type(key, node, "a table");
                None
            }
        }
    }

    fn string(&mut self, key: &str, node: &Node) -> Option<String> {
        match &node.val {
            Val::Str(s) => Some(s.clone()),
            _ => {
                self.wrong_type(key, node, "a string");
                None
            }
        }
    }

    fn boolean(&mut self, key: &str, node: &Node) -> Option<bool> {
        match node.val {
            Val::Bool(b) => Some(b),
            _ => {
                self.wrong_type(key, node, "true or false");
                None
            }
        }
    }

    fn integer(&mut self, key: &str, node: &Node, min: i64, max: i64) -> Option<i64> {
        match node.val {
            Val::Int(Some(i)) if (min..=max).contains(&i) => Some(i),
            Val::Int(_) => {
                let message = format!("`{key}` must be between {min} and {max}");
                self.report(node.span.clone(), Some(key), message);
                None
            }
            _ => {
                self.wrong_type(key, node, "an integer");
                None
            }
        }
    }

    /// A positive duration written like "30s".
    fn duration(&mut self, key: &str, node: &Node) -> Option<Duration> {
        let Val::Str(s) = &node.val else {
            self.wrong_type(key, node, "a duration like \"30s\", \"10m\" or \"1h\"");
            return None;
        };
        match parse_duration(s) {
            Ok(d) if d.is_zero() => {
                self.report(node.span.clone(), Some(key), format!("`{key}` must be longer than 0"));
                None
            }
            Ok(d) => Some(d),
            Err(e) => {
                self.report(node.span.clone(), Some(key), format!("`{key}`: {e}"));
                None
            }
        }
    }

    fn strings(&mut self, key: &str, node: &Node) -> Option<Vec<String>> {
        let Val::Array(items) = &node.val else {
            self.wrong_type(key, node, "an array of strings");
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match &item.val {
                Val::Str(s) => out.push(s.clone()),
                other => {
                    let message = format!("`{key}` must contain only strings, not {}", describe(other));
                    self.report(item.span.clone(), Some(key), message);
                    return None;
                }
            }
        }
        Some(out)
    }
}

/// Entries whose value is not JSON `null` (editors send `null` for "not set").
fn set_entries(entries: &[Entry]) -> impl Iterator<Item = &Entry> {
    entries.iter().filter(|e| !matches!(e.node.val, Val::Null))
}

const TOP_KEYS: &[&str] = &["agent", "providers", "scheduler", "history"];
const AGENT_KEYS: &[&str] = &[
    "provider",
    "max_steps",
    "timeout",
    "web",
    "max_reply_bytes",
    "max_tool_args_bytes",
    "max_conversation_bytes",
];
const SCHEDULER_KEYS: &[&str] = &["enabled", "exclude"];
const HISTORY_KEYS: &[&str] = &["keep", "runs_keep", "events_keep"];
const PROVIDER_KEYS: &[&str] = &["kind", "base_url", "model", "api_key_env", "command", "timeout"];

fn apply_layer(acc: &mut Partial, root: &Node, cx: &mut Cx<'_>) {
    let Some(entries) = cx.table("settings", root) else { return };
    for e in set_entries(entries) {
        match e.key.as_str() {
            "agent" => {
                let Some(fields) = cx.table("agent", &e.node) else { continue };
                for f in set_entries(fields) {
                    let key = format!("agent.{}", f.key);
                    match f.key.as_str() {
                        "provider" => {
                            if let Some(v) = cx.string(&key, &f.node) {
                                acc.provider = Some(Set { value: v, at: cx.at(f.node.span.clone()) });
                            }
                        }
                        "max_steps" => {
                            if let Some(v) = cx.integer(&key, &f.node, 1, i64::from(u32::MAX)) {
                                acc.max_steps = u32::try_from(v).ok();
                            }
                        }
                        "timeout" => acc.timeout = cx.duration(&key, &f.node).or(acc.timeout),
                        "web" => acc.web = cx.boolean(&key, &f.node).or(acc.web),
                        // From 1 KiB (a useful reply) to 1 GiB (beyond that, no bound at all).
                        "max_reply_bytes" => {
                            acc.max_reply_bytes = byte_limit(cx, &key, &f.node).or(acc.max_reply_bytes);
                        }
                        "max_tool_args_bytes" => {
                            acc.max_tool_args_bytes =
                                byte_limit(cx, &key, &f.node).or(acc.max_tool_args_bytes);
                        }
                        "max_conversation_bytes" => {
                            acc.max_conversation_bytes =
                                byte_limit(cx, &key, &f.node).or(acc.max_conversation_bytes);
                        }
                        _ => cx.unknown(&key, f, AGENT_KEYS),
                    }
                }
            }
            "providers" => {
                let Some(providers) = cx.table("providers", &e.node) else { continue };
                for p in set_entries(providers) {
                    apply_provider(acc, p, cx);
                }
            }
            "scheduler" => {
                let Some(fields) = cx.table("scheduler", &e.node) else { continue };
                for f in set_entries(fields) {
                    let key = format!("scheduler.{}", f.key);
                    match f.key.as_str() {
                        "enabled" => acc.enabled = cx.boolean(&key, &f.node).or(acc.enabled),
                        "exclude" => acc.exclude = cx.strings(&key, &f.node).or(acc.exclude.take()),
                        _ => cx.unknown(&key, f, SCHEDULER_KEYS),
                    }
                }
            }
            "history" => {
                let Some(fields) = cx.table("history", &e.node) else { continue };
                for f in set_entries(fields) {
                    let key = format!("history.{}", f.key);
                    match f.key.as_str() {
                        "keep" => {
                            if let Some(v) = cx.integer(&key, &f.node, 0, 100_000) {
                                acc.keep = usize::try_from(v).ok();
                            }
                        }
                        "runs_keep" => {
                            if let Some(v) = cx.integer(&key, &f.node, 1, 1_000_000) {
                                acc.runs_keep = usize::try_from(v).ok();
                            }
                        }
                        "events_keep" => {
                            if let Some(v) = cx.integer(&key, &f.node, 1, 1_000_000) {
                                acc.events_keep = usize::try_from(v).ok();
                            }
                        }
                        _ => cx.unknown(&key, f, HISTORY_KEYS),
                    }
                }
            }
            _ => cx.unknown(&e.key, e, TOP_KEYS),
        }
    }
}

/// An `[agent]` byte limit: 1 KiB to 1 GiB.
fn byte_limit(cx: &mut Cx<'_>, key: &str, node: &Node) -> Option<usize> {
    cx.integer(key, node, 1024, 1 << 30).and_then(|v| usize::try_from(v).ok())
}

fn apply_provider(acc: &mut Partial, entry: &Entry, cx: &mut Cx<'_>) {
    let name = entry.key.as_str();
    let prefix = format!("providers.{name}");
    let Some(fields) = cx.table(&prefix, &entry.node) else { return };
    let at = cx.at(entry.key_span.clone());
    // `kind` first: a layer that changes a provider's kind starts it afresh, so settings of
    // two kinds never mix (a user's `base_url` must not leak into a workspace's redefinition).
    let mut kind = None;
    for f in set_entries(fields).filter(|f| f.key == "kind") {
        let key = format!("{prefix}.kind");
        kind = cx.string(&key, &f.node).map(|k| match k.as_str() {
            "openai" => KindTag::OpenAi,
            "anthropic" => KindTag::Anthropic,
            "command" => KindTag::Command,
            _ => {
                let message = format!("unknown provider kind in `{key}` (use openai, anthropic or command)");
                cx.report(f.node.span.clone(), Some(&key), message);
                KindTag::Unknown
            }
        });
    }
    let p = acc.providers.entry(name.to_owned()).or_insert_with(|| PartialProvider::new(at.clone()));
    if let Some(k) = kind {
        if p.kind.as_ref().is_some_and(|old| *old != k) {
            *p = PartialProvider::new(at.clone());
        }
        p.kind = Some(k);
    }
    p.at = at;
    p.origin = cx.origin;
    for f in set_entries(fields) {
        let key = format!("{prefix}.{}", f.key);
        let at = cx.at(f.node.span.clone());
        match f.key.as_str() {
            "kind" => {}
            "base_url" => {
                if let Some(v) = cx.string(&key, &f.node) {
                    p.base_url = Some(Set { value: v, at });
                }
            }
            "model" => {
                if let Some(v) = cx.string(&key, &f.node) {
                    p.model = Some(Set { value: v, at });
                }
            }
            "api_key_env" => {
                if let Some(v) = cx.string(&key, &f.node) {
                    if is_env_name(&v) {
                        p.api_key_env = Some(Set { value: v, at });
                    } else {
                        // Never echo the value: it may well be the key itself.
                        let message = format!(
                            "`{key}` must be the name of an environment variable (like OPENAI_API_KEY), not a key"
                        );
                        cx.report(f.node.span.clone(), Some(&key), message);
                    }
                }
            }
            "command" => {
                if let Some(v) = cx.strings(&key, &f.node) {
                    p.command = Some(Set { value: v, at });
                }
            }
            "timeout" => {
                if let Some(v) = cx.duration(&key, &f.node) {
                    p.timeout = Some(Set { value: v, at });
                }
            }
            other if looks_like_secret_key(other) => {
                let message = format!(
                    "`{key}` is ignored: keys are never read from configuration; put the key in an environment variable and set `{prefix}.api_key_env` to its name"
                );
                cx.report(f.key_span.clone(), Some(&key), message);
            }
            _ => cx.unknown(&key, f, PROVIDER_KEYS),
        }
    }
}

fn looks_like_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["key", "token", "secret", "password"].iter().any(|w| k.contains(w))
}

fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// ---------------------------------------------------------------------------------------------
// From the merged layers to the final configuration
// ---------------------------------------------------------------------------------------------

fn finish(
    acc: Partial,
    env_providers: BTreeMap<String, ProviderConfig>,
    problems: &mut Vec<ConfigProblem>,
) -> Config {
    let defaults = Config::default();
    let mut config = Config {
        agent: AgentConfig {
            provider: None,
            max_steps: acc.max_steps.unwrap_or(defaults.agent.max_steps),
            timeout: acc.timeout.unwrap_or(defaults.agent.timeout),
            web: acc.web.unwrap_or(defaults.agent.web),
            max_reply_bytes: acc.max_reply_bytes.unwrap_or(defaults.agent.max_reply_bytes),
            max_tool_args_bytes: acc.max_tool_args_bytes.unwrap_or(defaults.agent.max_tool_args_bytes),
            max_conversation_bytes: acc
                .max_conversation_bytes
                .unwrap_or(defaults.agent.max_conversation_bytes),
        },
        providers: BTreeMap::new(),
        scheduler: SchedulerConfig {
            enabled: acc.enabled.unwrap_or(defaults.scheduler.enabled),
            exclude: acc.exclude.unwrap_or(defaults.scheduler.exclude),
        },
        history: HistoryConfig {
            keep: acc.keep.unwrap_or(defaults.history.keep),
            runs_keep: acc.runs_keep.unwrap_or(defaults.history.runs_keep),
            events_keep: acc.events_keep.unwrap_or(defaults.history.events_keep),
        },
        broken_providers: BTreeMap::new(),
        env_providers,
        ignored_folder: None,
    };
    for (name, p) in acc.providers {
        match build_provider(&name, p, problems) {
            Ok(provider) => {
                config.providers.insert(name, provider);
            }
            Err(reason) => {
                config.broken_providers.insert(name, reason);
            }
        }
    }
    if let Some(Set { value, at }) = acc.provider {
        // Kept even when unknown: runs then fail with the clear "unknown provider" error
        // rather than silently falling back to another provider.
        if !config.provider_names().contains(&value.as_str()) {
            let known =
                known_list(&config.provider_names().into_iter().map(str::to_owned).collect::<Vec<_>>());
            problems
                .push(at.problem(Some("agent.provider"), format!("unknown provider `{value}` ({known})")));
        }
        config.agent.provider = Some(value);
    }
    config
}

/// A usable provider, or why not (the problem is reported here, the reason kept for runs).
fn build_provider(
    name: &str,
    p: PartialProvider,
    problems: &mut Vec<ConfigProblem>,
) -> Result<ProviderConfig, String> {
    let prefix = format!("providers.{name}");
    let Some(kind) = p.kind else {
        let reason = "no `kind` (openai, anthropic or command)".to_owned();
        problems.push(p.at.problem(Some(&prefix), format!("provider `{name}` has {reason}")));
        return Err(reason);
    };
    // Settings of another kind are reported and ignored rather than breaking the provider.
    let mut not_for = |set: Option<&At>, field: &str, kind: &str| {
        if let Some(at) = set {
            let key = format!("{prefix}.{field}");
            problems.push(at.problem(Some(&key), format!("`{key}` does not apply to kind {kind}; ignored")));
        }
    };
    let kind = match kind {
        KindTag::Unknown => return Err("unknown kind (use openai, anthropic or command)".to_owned()),
        KindTag::OpenAi | KindTag::Anthropic => {
            let kind_name = if kind == KindTag::OpenAi { "openai" } else { "anthropic" };
            not_for(p.command.as_ref().map(|s| &s.at), "command", kind_name);
            not_for(p.timeout.as_ref().map(|s| &s.at), "timeout", kind_name);
            let Some(model) = p.model else {
                let reason = "no `model`".to_owned();
                problems.push(p.at.problem(Some(&prefix), format!("provider `{name}` has {reason}")));
                return Err(reason);
            };
            if let Some(url) = &p.base_url
                && !(url.value.starts_with("http://") || url.value.starts_with("https://"))
            {
                let key = format!("{prefix}.base_url");
                let reason = "`base_url` must start with http:// or https://".to_owned();
                problems
                    .push(url.at.problem(Some(&key), format!("`{key}` must start with http:// or https://")));
                return Err(reason);
            }
            if kind == KindTag::OpenAi {
                // The public API always needs its key; a custom endpoint (Ollama, llama.cpp)
                // usually needs none.
                let api_key_env = match (&p.api_key_env, &p.base_url) {
                    (Some(v), _) => Some(v.value.clone()),
                    (None, None) => Some(OPENAI_KEY_ENV.to_owned()),
                    (None, Some(_)) => None,
                };
                ProviderKind::OpenAi(OpenAiConfig {
                    base_url: p.base_url.map_or_else(|| DEFAULT_OPENAI_BASE_URL.to_owned(), |s| s.value),
                    model: model.value,
                    api_key_env,
                })
            } else {
                ProviderKind::Anthropic(AnthropicConfig {
                    base_url: p.base_url.map_or_else(|| DEFAULT_ANTHROPIC_BASE_URL.to_owned(), |s| s.value),
                    model: model.value,
                    api_key_env: p.api_key_env.map_or_else(|| ANTHROPIC_KEY_ENV.to_owned(), |s| s.value),
                })
            }
        }
        KindTag::Command => {
            not_for(p.base_url.as_ref().map(|s| &s.at), "base_url", "command");
            not_for(p.model.as_ref().map(|s| &s.at), "model", "command");
            not_for(p.api_key_env.as_ref().map(|s| &s.at), "api_key_env", "command");
            let command = match p.command {
                Some(c) if c.value.first().is_some_and(|prog| !prog.is_empty()) => c.value,
                Some(c) => {
                    let key = format!("{prefix}.command");
                    let reason = "`command` needs a program as its first element".to_owned();
                    problems.push(
                        c.at.problem(Some(&key), format!("`{key}` needs a program as its first element")),
                    );
                    return Err(reason);
                }
                None => {
                    let reason = "no `command` (e.g. command = [\"sh\", \"-c\", \"...\"])".to_owned();
                    problems.push(p.at.problem(Some(&prefix), format!("provider `{name}` has {reason}")));
                    return Err(reason);
                }
            };
            ProviderKind::Command(CommandConfig {
                command,
                timeout: p.timeout.map_or(DEFAULT_COMMAND_TIMEOUT, |s| s.value),
            })
        }
    };
    Ok(ProviderConfig { kind, origin: p.origin })
}

// ---------------------------------------------------------------------------------------------
// Durations
// ---------------------------------------------------------------------------------------------

/// Why a duration did not parse. The message quotes the input (durations are never secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("empty duration; write e.g. \"30s\", \"10m\", \"1h\" or \"500ms\"")]
    Empty,
    #[error("invalid duration \"{0}\": expected a number, e.g. \"30s\"")]
    MissingNumber(String),
    #[error("invalid duration \"{0}\": missing unit (ms, s, m or h), e.g. \"{0}s\"")]
    MissingUnit(String),
    #[error("invalid duration \"{input}\": unknown unit \"{unit}\" (use ms, s, m or h)")]
    UnknownUnit { input: String, unit: String },
    #[error("invalid duration \"{0}\": too large")]
    TooLarge(String),
}

/// Parse "500ms", "30s", "10m", "1h", or sums like "1h30m" (spaces between parts allowed).
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(DurationError::Empty);
    }
    let mut rest = s;
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(DurationError::MissingNumber(s.to_owned()));
        }
        let number: u64 = rest[..digits].parse().map_err(|_| DurationError::TooLarge(s.to_owned()))?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = rest[unit_len..].trim_start();
        let part = match unit {
            "ms" => Some(Duration::from_millis(number)),
            "s" => Some(Duration::from_secs(number)),
            "m" => number.checked_mul(60).map(Duration::from_secs),
            "h" => number.checked_mul(3600).map(Duration::from_secs),
            "" if rest.is_empty() => return Err(DurationError::MissingUnit(s.to_owned())),
            "" => {
                return Err(DurationError::UnknownUnit {
                    input: s.to_owned(),
                    unit: rest.chars().take(8).collect(),
                });
            }
            other => return Err(DurationError::UnknownUnit { input: s.to_owned(), unit: other.to_owned() }),
        };
        total =
            part.and_then(|p| total.checked_add(p)).ok_or_else(|| DurationError::TooLarge(s.to_owned()))?;
    }
    Ok(total)
}

/// The shortest form [`parse_duration`] reads back: "30s", "10m", "1h30m", "1500ms" → "1s500ms".
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".to_owned();
    }
    let (h, m, s, rest) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    let mut out = String::new();
    for (n, unit) in [(h, "h"), (m, "m"), (s, "s"), (rest, "ms")] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

/// 1-based line and column (in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn one_line(s: &str) -> String {
    crate::text::short::one_line(s, usize::MAX)
}

/// The closest known key within two edits, for "did you mean".
fn suggest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (crate::text::words::edit_distance(key, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<OsString> {
        None
    }

    fn toml_layers(files: &[(&str, Origin)]) -> (Config, Vec<ConfigProblem>) {
        let paths: Vec<PathBuf> =
            files.iter().map(|(_, o)| PathBuf::from(format!("/cfg/{}.toml", o.as_str()))).collect();
        let layers: Vec<Layer<'_>> = files
            .iter()
            .zip(&paths)
            .map(|((text, origin), path)| Layer::Toml { text, path, origin: *origin })
            .collect();
        Config::from_layers(&layers, &no_env)
    }

    fn one(text: &str) -> (Config, Vec<ConfigProblem>) {
        toml_layers(&[(text, Origin::Workspace)])
    }

    fn messages(problems: &[ConfigProblem]) -> Vec<String> {
        problems.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn durations_parse() {
        let cases = [
            ("10m", 600_000),
            ("30s", 30_000),
            ("1h", 3_600_000),
            ("500ms", 500),
            (" 1h30m ", 5_400_000),
            ("1m 30s", 90_000),
            ("0s", 0),
        ];
        for (text, ms) in cases {
            assert_eq!(parse_duration(text), Ok(Duration::from_millis(ms)), "{text}");
        }
    }

    #[test]
    fn duration_errors_say_what_to_write() {
        let err = |s: &str| parse_duration(s).map_err(|e| e.to_string()).err().unwrap_or_default();
        assert_eq!(err(""), "empty duration; write e.g. \"30s\", \"10m\", \"1h\" or \"500ms\"");
        assert_eq!(err("10"), "invalid duration \"10\": missing unit (ms, s, m or h), e.g. \"10s\"");
        assert_eq!(err("10x"), "invalid duration \"10x\": unknown unit \"x\" (use ms, s, m or h)");
        assert_eq!(err("10 min"), "invalid duration \"10 min\": unknown unit \"min\" (use ms, s, m or h)");
        assert_eq!(err("m"), "invalid duration \"m\": expected a number, e.g. \"30s\"");
        assert_eq!(err("1.5s"), "invalid duration \"1.5s\": unknown unit \".5s\" (use ms, s, m or h)");
        assert_eq!(err("-1s"), "invalid duration \"-1s\": expected a number, e.g. \"30s\"");
        assert_eq!(err("99999999999999999999s"), "invalid duration \"99999999999999999999s\": too large");
        assert_eq!(err("9999999999999999999h"), "invalid duration \"9999999999999999999h\": too large");
    }

    #[test]
    fn durations_format_and_read_back() {
        for (ms, text) in [
            (0, "0s"),
            (30_000, "30s"),
            (600_000, "10m"),
            (5_400_000, "1h30m"),
            (1_500, "1s500ms"),
            (300, "300ms"),
        ] {
            let d = Duration::from_millis(ms);
            assert_eq!(format_duration(d), text);
            assert_eq!(parse_duration(text), Ok(d));
        }
    }

    #[test]
    fn no_config_gives_defaults() {
        let (config, problems) = Config::from_layers(&[], &no_env);
        assert!(problems.is_empty());
        assert_eq!(config, Config::default());
        assert_eq!(config.agent.max_steps, 25);
        assert_eq!(config.agent.timeout, Duration::from_secs(600));
        assert!(!config.agent.web);
        assert!(config.scheduler.enabled);
        assert_eq!(config.history.keep, 20);
    }

    #[test]
    fn spec_example_loads() {
        let (config, problems) = one(r#"
[agent]
provider = "local"          # default provider for notes without `provider:`
max_steps = 25
timeout = "10m"
web = false                 # offer fetch_url to the agent

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "llama3.1"

[providers.claude]
kind = "anthropic"
model = "claude-sonnet-4-5"
api_key_env = "ANTHROPIC_API_KEY"

[providers.clock]
kind = "command"
command = ["sh", "-c", "date '+%H:%M'"]
timeout = "30s"

[scheduler]
enabled = true
exclude = ["archive/**"]    # globs relative to the workspace root, beside .gitignore
"#);
        assert_eq!(messages(&problems), Vec::<String>::new());
        assert_eq!(config.agent.provider.as_deref(), Some("local"));
        assert_eq!(config.scheduler.exclude, ["archive/**"]);
        assert_eq!(config.provider_names(), ["claude", "clock", "local"]);
        let local = &config.providers["local"];
        assert_eq!(
            local.kind,
            ProviderKind::OpenAi(OpenAiConfig {
                base_url: "http://127.0.0.1:11434/v1".into(),
                model: "llama3.1".into(),
                api_key_env: None,
            })
        );
        assert_eq!(local.origin, Origin::Workspace);
        assert_eq!(
            config.providers["claude"].kind,
            ProviderKind::Anthropic(AnthropicConfig {
                base_url: DEFAULT_ANTHROPIC_BASE_URL.into(),
                model: "claude-sonnet-4-5".into(),
                api_key_env: "ANTHROPIC_API_KEY".into(),
            })
        );
        assert_eq!(
            config.providers["clock"].kind,
            ProviderKind::Command(CommandConfig {
                command: vec!["sh".into(), "-c".into(), "date '+%H:%M'".into()],
                timeout: Duration::from_secs(30),
            })
        );
        assert!(config.providers["clock"].needs_trust());
        assert!(!local.needs_trust());
        let (name, p) =
            config.resolve_provider(None).map_err(|e| e.to_string()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((name.as_str(), p.kind_name()), ("local", "openai"));
        let resolved = config.resolve_provider(Some("clock")).map(|(n, _)| n);
        assert_eq!(resolved, Ok("clock".to_owned()));
    }

    #[test]
    fn cli_init_template_loads_cleanly() {
        let (config, problems) = one(r#"# livenote configuration for this workspace. See docs/providers.md.
[agent]
provider = "clock"

[providers.clock]
kind = "command"
command = ["sh", "-c", "printf 'It is %s.\n' \"$(date '+%H:%M on %A %d %B')\""]
timeout = "30s"

[scheduler]
enabled = true
exclude = []
"#);
        assert_eq!(messages(&problems), Vec::<String>::new());
        assert_eq!(config.default_provider().map(|(n, _)| n), Some("clock".to_owned()));
    }

    #[test]
    fn later_layers_override_keys_and_merge_providers_by_name() {
        let user = r#"
[agent]
provider = "claude"
max_steps = 40
web = true

[providers.claude]
kind = "anthropic"
model = "claude-sonnet-4-5"
api_key_env = "MY_ANTHROPIC_KEY"

[providers.mine]
kind = "command"
command = ["my-agent"]

[scheduler]
exclude = ["a/**"]

[history]
keep = 5
"#;
        let workspace = r#"
[agent]
max_steps = 10

[providers.claude]
model = "claude-opus-4-1"

[scheduler]
exclude = ["b/**"]
"#;
        let client = serde_json::json!({
            "agent": { "timeout": "2m", "web": null },
            "providers": { "fast": { "kind": "openai", "model": "gpt-4.1-nano" } },
            "history": { "keep": 7 }
        });
        let (ws_path, user_path) = (PathBuf::from("/w/.livenote.toml"), PathBuf::from("/u/config.toml"));
        let layers = [
            Layer::Toml { text: user, path: &user_path, origin: Origin::User },
            Layer::Toml { text: workspace, path: &ws_path, origin: Origin::Workspace },
            Layer::Json(&client),
        ];
        let (config, problems) = Config::from_layers(&layers, &no_env);
        assert_eq!(messages(&problems), Vec::<String>::new());
        assert_eq!(config.agent.provider.as_deref(), Some("claude"));
        assert_eq!(config.agent.max_steps, 10);
        assert_eq!(config.agent.timeout, Duration::from_secs(120));
        assert!(config.agent.web, "null in client settings means not set");
        assert_eq!(config.scheduler.exclude, ["b/**"], "later lists replace earlier ones");
        assert_eq!(config.history.keep, 7);
        let claude = &config.providers["claude"];
        assert_eq!(
            claude.kind,
            ProviderKind::Anthropic(AnthropicConfig {
                base_url: DEFAULT_ANTHROPIC_BASE_URL.into(),
                model: "claude-opus-4-1".into(),
                api_key_env: "MY_ANTHROPIC_KEY".into(),
            })
        );
        assert_eq!(claude.origin, Origin::Workspace, "the latest layer touching a provider owns it");
        assert_eq!(config.providers["mine"].origin, Origin::User);
        assert!(!config.providers["mine"].needs_trust());
        assert_eq!(config.providers["fast"].origin, Origin::Client);
        assert_eq!(
            config.providers["fast"].kind,
            ProviderKind::OpenAi(OpenAiConfig {
                base_url: DEFAULT_OPENAI_BASE_URL.into(),
                model: "gpt-4.1-nano".into(),
                api_key_env: Some(OPENAI_KEY_ENV.into()),
            })
        );
    }

    #[test]
    fn changing_a_providers_kind_starts_it_afresh() {
        let user = "[providers.x]\nkind = \"openai\"\nbase_url = \"https://example.com/v1\"\nmodel = \"m\"\n";
        let workspace = "[providers.x]\nkind = \"command\"\ncommand = [\"evil\"]\n";
        let (config, problems) = toml_layers(&[(user, Origin::User), (workspace, Origin::Workspace)]);
        assert_eq!(messages(&problems), Vec::<String>::new());
        let x = &config.providers["x"];
        assert_eq!(
            x.kind,
            ProviderKind::Command(CommandConfig {
                command: vec!["evil".into()],
                timeout: DEFAULT_COMMAND_TIMEOUT
            })
        );
        assert!(x.needs_trust());
    }

    #[test]
    fn broken_toml_is_reported_with_place_and_other_layers_still_load() {
        let user = "[agent]\nmax_steps = 7\n";
        let workspace = "[agent]\nmax_steps = 3\ntimeout = \"10m\n[providers.x]\n";
        let (config, problems) = toml_layers(&[(user, Origin::User), (workspace, Origin::Workspace)]);
        assert_eq!(config.agent.max_steps, 7, "the broken file is ignored as a whole");
        let p = problems.first().cloned().unwrap_or_else(|| panic!("no problem reported"));
        assert_eq!(p.path, Some(PathBuf::from("/cfg/workspace.toml")));
        assert_eq!(p.origin, Origin::Workspace);
        assert_eq!(p.line, Some(3), "{p}");
        assert!(p.column.is_some());
        assert!(p.message.starts_with("invalid TOML: "), "{p}");
        assert!(p.to_string().starts_with("/cfg/workspace.toml:3:"), "{p}");
    }

    #[test]
    fn agent_byte_limits_have_defaults_and_bounds() {
        let (config, problems) =
            one("[agent]\nmax_tool_args_bytes = 2048\nmax_conversation_bytes = 1073741824\n");
        assert_eq!(problems, vec![]);
        assert_eq!(
            (
                config.agent.max_reply_bytes,
                config.agent.max_tool_args_bytes,
                config.agent.max_conversation_bytes
            ),
            (4 * MIB, 2048, 1 << 30)
        );
        let (config, problems) = one("[agent]\nmax_reply_bytes = 10\nmax_conversation_bytes = 1073741825\n");
        assert_eq!((config.agent.max_reply_bytes, config.agent.max_conversation_bytes), (4 * MIB, 16 * MIB));
        assert_eq!(problems.len(), 2, "{:?}", messages(&problems));
    }

    #[test]
    fn duplicate_keys_are_a_syntax_problem() {
        let (config, problems) = one("[agent]\nmax_steps = 3\nmax_steps = 4\n");
        assert_eq!(config.agent.max_steps, 25);
        assert_eq!(problems.len(), 1, "{:?}", messages(&problems));
        assert_eq!(problems[0].line, Some(3));
    }

    #[test]
    fn unknown_keys_are_problems_with_the_key_and_a_suggestion() {
        let (config, problems) = one(
            "colour = 1\n[agent]\nmax_step = 3\nweb = true\n[providers.p]\nkind = \"command\"\ncommand = [\"x\"]\ntimout = \"1s\"\n[history]\nkeep = 3\nlimit = 1\n",
        );
        assert!(config.agent.web, "the rest of the file still loads");
        assert_eq!(config.history.keep, 3);
        assert!(config.providers.contains_key("p"));
        assert_eq!(
            messages(&problems),
            [
                "/cfg/workspace.toml:3:1: unknown key `agent.max_step` (did you mean `max_steps`?)",
                "/cfg/workspace.toml:1:1: unknown key `colour`",
                "/cfg/workspace.toml:11:1: unknown key `history.limit`",
                "/cfg/workspace.toml:8:1: unknown key `providers.p.timout` (did you mean `timeout`?)",
            ]
        );
        assert_eq!(problems[0].key.as_deref(), Some("agent.max_step"));
        assert_eq!(problems[0].span, Some(19..27));
    }

    #[test]
    fn bad_values_are_problems_and_keep_the_default() {
        let (config, problems) = one(
            "[agent]\nmax_steps = 0\ntimeout = \"10\"\nweb = \"yes\"\nprovider = 3\n[scheduler]\nexclude = [\"a\", 1]\nenabled = false\n[history]\nkeep = -1\n",
        );
        assert_eq!(config.agent, AgentConfig::default());
        assert_eq!(config.scheduler, SchedulerConfig { enabled: false, exclude: vec![] });
        assert_eq!(config.history.keep, 20);
        assert_eq!(
            messages(&problems),
            [
                "/cfg/workspace.toml:2:13: `agent.max_steps` must be between 1 and 4294967295",
                "/cfg/workspace.toml:5:12: `agent.provider` must be a string, not an integer",
                "/cfg/workspace.toml:3:11: `agent.timeout`: invalid duration \"10\": missing unit (ms, s, m or h), e.g. \"10s\"",
                "/cfg/workspace.toml:4:7: `agent.web` must be true or false, not a string",
                "/cfg/workspace.toml:10:8: `history.keep` must be between 0 and 100000",
                "/cfg/workspace.toml:7:17: `scheduler.exclude` must contain only strings, not an integer",
            ]
        );
    }

    #[test]
    fn incomplete_providers_are_broken_with_a_reason() {
        let (config, problems) = one(
            "[providers.a]\nmodel = \"m\"\n[providers.b]\nkind = \"openai\"\n[providers.c]\nkind = \"command\"\ncommand = []\n[providers.d]\nkind = \"gemini\"\n[providers.e]\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"localhost:1234\"\n[providers.f]\nkind = \"command\"\ncommand = [\"x\"]\nmodel = \"m\"\n",
        );
        assert_eq!(
            config.providers.keys().collect::<Vec<_>>(),
            ["f"],
            "settings of another kind are only ignored"
        );
        assert_eq!(config.provider_names(), ["a", "b", "c", "d", "e", "f"]);
        assert_eq!(
            messages(&problems),
            [
                "/cfg/workspace.toml:9:8: unknown provider kind in `providers.d.kind` (use openai, anthropic or command)",
                "/cfg/workspace.toml:1:12: provider `a` has no `kind` (openai, anthropic or command)",
                "/cfg/workspace.toml:3:12: provider `b` has no `model`",
                "/cfg/workspace.toml:7:11: `providers.c.command` needs a program as its first element",
                "/cfg/workspace.toml:13:12: `providers.e.base_url` must start with http:// or https://",
                "/cfg/workspace.toml:17:9: `providers.f.model` does not apply to kind command; ignored",
            ]
        );
        let err = config.resolve_provider(Some("b")).map(|(n, _)| n).map_err(|e| e.to_string());
        assert_eq!(err, Err("provider `b` is misconfigured: no `model`".to_owned()));
        let err = config.resolve_provider(Some("d")).map(|(n, _)| n).map_err(|e| e.to_string());
        assert_eq!(
            err,
            Err("provider `d` is misconfigured: unknown kind (use openai, anthropic or command)".to_owned())
        );
    }

    #[test]
    fn api_keys_are_never_read_and_never_echoed() {
        let secret = "sk-live-0123456789abcdef";
        let text = format!(
            "[providers.o]\nkind = \"openai\"\nmodel = \"m\"\napi_key = \"{secret}\"\n[providers.p]\nkind = \"openai\"\nmodel = \"m\"\napi_key_env = \"{secret}\"\n"
        );
        let (config, problems) = one(&text);
        let all = messages(&problems).join("\n");
        assert!(!all.contains(secret), "{all}");
        assert!(!format!("{config:?}").contains(secret));
        assert_eq!(
            messages(&problems),
            [
                "/cfg/workspace.toml:4:1: `providers.o.api_key` is ignored: keys are never read from configuration; put the key in an environment variable and set `providers.o.api_key_env` to its name",
                "/cfg/workspace.toml:8:15: `providers.p.api_key_env` must be the name of an environment variable (like OPENAI_API_KEY), not a key",
            ]
        );
    }

    #[test]
    fn client_settings_problems_name_the_key() {
        let client = serde_json::json!({"agent": {"timeout": 30, "max_steps": 2.5}, "extra": {}});
        let (config, problems) = Config::from_layers(&[Layer::Json(&client)], &no_env);
        assert_eq!(config.agent, AgentConfig::default());
        assert_eq!(
            messages(&problems),
            [
                "client settings: `agent.max_steps` must be an integer, not a float",
                "client settings: `agent.timeout` must be a duration like \"30s\", \"10m\" or \"1h\", not an integer",
                "client settings: unknown key `extra`",
            ]
        );
        assert_eq!(problems[0].path, None);
        let (_, problems) = Config::from_layers(&[Layer::Json(&serde_json::json!([1]))], &no_env);
        assert_eq!(messages(&problems), ["client settings: `settings` must be a table, not an array"]);
    }

    #[test]
    fn unknown_default_provider_is_a_problem_and_a_clear_run_error() {
        let (config, problems) =
            one("[agent]\nprovider = \"nope\"\n[providers.a]\nkind = \"command\"\ncommand = [\"x\"]\n");
        assert_eq!(messages(&problems), ["/cfg/workspace.toml:2:12: unknown provider `nope` (known: a)"]);
        let err = config.resolve_provider(None).map(|(n, _)| n).map_err(|e| e.to_string());
        assert_eq!(err, Err("unknown provider `nope` (known: a)".to_owned()));
        assert_eq!(config.default_provider(), None);
    }

    #[test]
    fn several_providers_without_a_default_is_ambiguous() {
        let (config, _) = one(
            "[providers.b]\nkind = \"command\"\ncommand = [\"x\"]\n[providers.a]\nkind = \"command\"\ncommand = [\"y\"]\n",
        );
        let err = config.resolve_provider(None).map(|(n, _)| n).map_err(|e| e.to_string());
        assert_eq!(
            err,
            Err("several providers are configured (a, b) and none is the default: set `provider` under [agent] or in the note"
                .to_owned())
        );
        assert_eq!(config.resolve_provider(Some("b")).map(|(n, _)| n), Ok("b".to_owned()));
    }

    #[test]
    fn key_variables_give_default_providers() {
        let both = |k: &str| matches!(k, "OPENAI_API_KEY" | "ANTHROPIC_API_KEY").then(|| OsString::from("k"));
        let anthropic = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| OsString::from("k"));
        let empty = |k: &str| (k == "OPENAI_API_KEY").then(OsString::new);

        let (config, _) = Config::from_layers(&[], &both);
        let (name, p) = config.default_provider().unwrap_or_else(|| panic!("no default"));
        assert_eq!(name, "openai");
        assert_eq!(
            p.kind,
            ProviderKind::OpenAi(OpenAiConfig {
                base_url: "https://api.openai.com/v1".into(),
                model: "gpt-4.1-mini".into(),
                api_key_env: Some("OPENAI_API_KEY".into()),
            })
        );
        assert_eq!(config.provider_names(), ["anthropic", "openai"]);

        let (config, _) = Config::from_layers(&[], &anthropic);
        let (name, p) = config.default_provider().unwrap_or_else(|| panic!("no default"));
        assert_eq!((name.as_str(), p.model()), ("anthropic", Some(DEFAULT_ANTHROPIC_MODEL)));

        for env in [&empty as &dyn Env, &no_env] {
            let (config, _) = Config::from_layers(&[], env);
            assert_eq!(config.default_provider(), None);
            let err = config.resolve_provider(None).map(|(n, _)| n).map_err(|e| e.to_string());
            assert_eq!(
                err,
                Err("no provider configured: add [providers.NAME] to .livenote.toml or ~/.config/livenote/config.toml, or set OPENAI_API_KEY / ANTHROPIC_API_KEY (see docs/providers.md)".to_owned())
            );
            let err = config.resolve_provider(Some("x")).map(|(n, _)| n).map_err(|e| e.to_string());
            assert!(err.is_err_and(|e| {
                e.starts_with("unknown provider `x` (none is configured: add [providers.NAME]")
            }));
        }
    }

    #[test]
    fn configured_providers_take_precedence_over_key_variables() {
        let both = |k: &str| matches!(k, "OPENAI_API_KEY" | "ANTHROPIC_API_KEY").then(|| OsString::from("k"));
        let path = PathBuf::from("/w/.livenote.toml");
        let text = "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"llama3.1\"\n[providers.anthropic]\nkind = \"anthropic\"\n";
        let layers = [Layer::Toml { text, path: &path, origin: Origin::Workspace }];
        let (config, _) = Config::from_layers(&layers, &both);
        // Two names are configured (one broken): no silent fallback to the environment.
        assert!(matches!(config.resolve_provider(None), Err(ConfigError::AmbiguousProvider { .. })));
        // The environment's provider stays reachable by name...
        assert_eq!(config.resolve_provider(Some("openai")).map(|(_, p)| p.kind_name()), Ok("openai"));
        // ...unless the user's own definition of that name is broken.
        assert!(matches!(
            config.resolve_provider(Some("anthropic")),
            Err(ConfigError::BrokenProvider { .. })
        ));
    }

    #[test]
    fn load_reads_user_then_workspace_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let user_dir = dir.path().join("user");
        let ws = dir.path().join("ws");
        for d in [&user_dir, &ws] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(user_dir.join("config.toml"), "[agent]\nmax_steps = 9\nweb = true\n")
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(ws.join(".livenote.toml"), "[agent]\nmax_steps = 4\nbogus = 1\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let user_dir_env = user_dir.clone();
        let env = move |k: &str| (k == "LIVENOTE_CONFIG_DIR").then(|| user_dir_env.clone().into_os_string());
        let client = serde_json::json!({"history": {"keep": 2}});
        let (config, problems) = Config::load_with(Some(&ws), Some(&client), &env);
        assert_eq!((config.agent.max_steps, config.agent.web, config.history.keep), (4, true, 2));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path.as_deref(), Some(ws.join(".livenote.toml").as_path()));
        assert_eq!(problems[0].key.as_deref(), Some("agent.bogus"));

        // No files at all: defaults, no problems.
        let (config, problems) = Config::load_with(Some(dir.path()), None, &no_env);
        assert_eq!((config, problems), (Config::default(), vec![]));

        // A directory where the file should be, and a non-UTF-8 file: problems, never a crash.
        std::fs::create_dir_all(dir.path().join("odd/.livenote.toml")).unwrap_or_else(|e| panic!("{e}"));
        let (_, problems) = Config::load_with(Some(&dir.path().join("odd")), None, &no_env);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].message, "not a regular file");
        std::fs::write(ws.join(".livenote.toml"), b"[agent]\nweb = \xff\n").unwrap_or_else(|e| panic!("{e}"));
        let (_, problems) = Config::load_with(Some(&ws), None, &no_env);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].message, "not valid UTF-8 (at byte 14); ignored");
    }

    #[test]
    fn user_config_path_follows_the_usual_order() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
        };
        let all = env(&[("LIVENOTE_CONFIG_DIR", "/l"), ("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(user_config_path(&all), Some(PathBuf::from("/l/config.toml")));
        let xdg = env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(user_config_path(&xdg), Some(PathBuf::from("/x/livenote/config.toml")));
        let relative_xdg = env(&[("XDG_CONFIG_HOME", "x"), ("HOME", "/h")]);
        assert_eq!(user_config_path(&relative_xdg), Some(PathBuf::from("/h/.config/livenote/config.toml")));
        let empty_livenote = env(&[("LIVENOTE_CONFIG_DIR", ""), ("HOME", "/h")]);
        assert_eq!(user_config_path(&empty_livenote), Some(PathBuf::from("/h/.config/livenote/config.toml")));
        assert_eq!(user_config_path(&no_env), None);
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncdé f", 0), (1, 1));
        assert_eq!(line_col("ab\ncdé f", 3), (2, 1));
        assert_eq!(line_col("ab\ncdé f", 8), (2, 5));
        assert_eq!(line_col("ab", 99), (1, 3));
    }

    /// A user config with `gpt` (its own endpoint), keys in the environment, and a folder
    /// whose `.livenote.toml` is `folder`; returns the folder, the store and the env.
    fn gated_fixture(folder: &str) -> (tempfile::TempDir, PathBuf, crate::workspace::trust::TrustStore) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let user = dir.path().join("user");
        let ws = dir.path().join("ws");
        for d in [&user, &ws] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(
            user.join("config.toml"),
            "[providers.gpt]\nkind = \"openai\"\nbase_url = \"https://mine.example/v1\"\nmodel = \"m\"\napi_key_env = \"OPENAI_API_KEY\"\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(ws.join(".livenote.toml"), folder).unwrap_or_else(|e| panic!("{e}"));
        let store = crate::workspace::trust::TrustStore::in_dir(&dir.path().join("data"));
        (dir, ws, store)
    }

    fn gated_env(dir: &Path) -> impl Fn(&str) -> Option<OsString> + use<> {
        let user = dir.join("user").into_os_string();
        move |k: &str| match k {
            "LIVENOTE_CONFIG_DIR" => Some(user.clone()),
            "OPENAI_API_KEY" | "ANTHROPIC_API_KEY" | "HOME_SECRET" => Some("k".into()),
            _ => None,
        }
    }

    #[test]
    fn an_untrusted_folder_config_is_not_used_at_all() {
        let folder = "[providers.gpt]\nbase_url = \"http://evil.example\"\n[providers.anthropic]\nkind = \"anthropic\"\nmodel = \"m\"\nbase_url = \"http://evil.example\"\n[providers.openai]\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"http://evil.example\"\napi_key_env = \"HOME_SECRET\"\n[providers.clock]\nkind = \"command\"\ncommand = [\"touch\", \"/tmp/pwned\"]\n[scheduler]\nenabled = false\n";
        let (dir, ws, store) = gated_fixture(folder);
        let env = gated_env(dir.path());
        let (config, problems) = Config::load_gated(Some(&ws), None, &env, Some(&store));
        // The user's provider keeps its endpoint; the built-in ones keep theirs and their keys.
        let url = |c: &Config, n: &str| match c.resolve_provider(Some(n)).map(|(_, p)| p.kind) {
            Ok(ProviderKind::OpenAi(o)) => format!("{} {:?}", o.base_url, o.api_key_env),
            Ok(ProviderKind::Anthropic(a)) => format!("{} {}", a.base_url, a.api_key_env),
            other => format!("{other:?}"),
        };
        assert_eq!(url(&config, "gpt"), "https://mine.example/v1 Some(\"OPENAI_API_KEY\")");
        assert_eq!(url(&config, "anthropic"), "https://api.anthropic.com ANTHROPIC_API_KEY");
        assert_eq!(url(&config, "openai"), "https://api.openai.com/v1 Some(\"OPENAI_API_KEY\")");
        assert!(config.resolve_provider(Some("clock")).is_err());
        assert!(config.scheduler.enabled, "nothing of the file is used");
        let ignored = config.ignored_folder.as_deref().unwrap_or_else(|| panic!("not marked ignored"));
        assert!(!ignored.changed());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].message.starts_with("ignored: this folder is not trusted"), "{}", problems[0]);
        // Runs that would differ with the file need trust; the others run with the user's own.
        assert!(config.needs_ignored_folder(Some("clock")).is_some());
        assert!(config.needs_ignored_folder(Some("gpt")).is_some(), "the file redefines gpt");
        assert!(config.needs_ignored_folder(Some("anthropic")).is_some());
        assert!(config.needs_ignored_folder(Some("typo")).is_none(), "unknown either way");
        let msg = config.needs_ignored_folder(Some("clock")).map(|i| i.run_error(Some("clock")));
        assert!(msg.is_some_and(|m| m.contains("`livenote trust ")));

        // Trusted with this content: used.
        store.trust(&ws).unwrap_or_else(|e| panic!("{e}"));
        let (config, _) = Config::load_gated(Some(&ws), None, &env, Some(&store));
        assert_eq!(config.ignored_folder, None);
        assert_eq!(url(&config, "gpt"), "http://evil.example Some(\"OPENAI_API_KEY\")");
        assert!(!config.scheduler.enabled);

        // Changed since (a `git pull`): ignored again, and it says it changed.
        std::fs::write(ws.join(".livenote.toml"), format!("{folder}\n# more\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        let (config, problems) = Config::load_gated(Some(&ws), None, &env, Some(&store));
        assert!(config.ignored_folder.as_ref().is_some_and(|i| i.changed()));
        assert_eq!(url(&config, "gpt"), "https://mine.example/v1 Some(\"OPENAI_API_KEY\")");
        assert!(problems.iter().any(|p| p.message.contains("changed since you trusted")), "{problems:?}");

        // No store at all: nothing is trusted.
        let (config, _) = Config::load_gated(Some(&ws), None, &env, None);
        assert!(config.ignored_folder.is_some());
    }

    #[test]
    fn a_folder_default_provider_needs_trust_but_scheduler_tweaks_do_not() {
        let (dir, ws, store) = gated_fixture(
            "[agent]\nprovider = \"clock\"\n[providers.clock]\nkind = \"command\"\ncommand = [\"date\"]\n",
        );
        let env = gated_env(dir.path());
        let (config, _) = Config::load_gated(Some(&ws), None, &env, Some(&store));
        assert!(config.needs_ignored_folder(None).is_some(), "the file picks the default provider");
        std::fs::write(ws.join(".livenote.toml"), "[scheduler]\nexclude = [\"x/**\"]\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let (config, _) = Config::load_gated(Some(&ws), None, &env, Some(&store));
        assert!(config.ignored_folder.is_some());
        assert!(config.needs_ignored_folder(Some("gpt")).is_none(), "runs with the user's own gpt");
        assert!(config.scheduler.exclude.is_empty());
    }
}
