//! Applying one layer (a TOML file, or the client's JSON settings) to the settings merged so
//! far: keys, types, unknown keys with "did you mean", problems placed by file, line and
//! column; then the final [`Config`] from the merged layers.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::duration::{format_duration, parse_duration};
use super::resolve::env_providers;
use super::tree::{Entry, Node, Val, describe, from_json, toml_table};
use super::{
    ANTHROPIC_KEY_ENV, AgentConfig, AnthropicConfig, CommandConfig, Config, ConfigProblem,
    DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_COMMAND_TIMEOUT, DEFAULT_MCP_TIMEOUT, DEFAULT_OPENAI_BASE_URL, Env,
    HistoryConfig, McpServerConfig, McpTransport, OPENAI_KEY_ENV, OpenAiConfig, Origin, ProviderConfig,
    ProviderKind, SchedulerConfig, known_list,
};

mod mcp_server;
mod provider;
mod source;

use mcp_server::{PartialMcpServer, apply_mcp_server, build_mcp_server};
use provider::{PartialProvider, apply_provider, build_provider};
use source::{PartialSource, apply_source, build_source};

/// Enough to fix a broken file from the list; more would only bury the first one.
const MAX_SYNTAX_PROBLEMS: usize = 10;

/// One configuration layer, lowest priority first in [`Config::from_layers`].
#[derive(Debug, Clone, Copy)]
pub enum Layer<'a> {
    /// A TOML file's text; `path` is only for messages.
    Toml { text: &'a str, path: &'a Path, origin: Origin },
    /// Client settings: JSON of the same shape (`null` means "not set").
    Json(&'a serde_json::Value),
}

impl Config {
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
        cx.report(None, None, crate::text::count(total - MAX_SYNTAX_PROBLEMS, "more TOML error"));
    }
    None
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
    instructions: Option<Vec<String>>,
    instructions_max_chars: Option<usize>,
    max_tokens: Option<u64>,
    providers: BTreeMap<String, PartialProvider>,
    enabled: Option<bool>,
    exclude: Option<Vec<String>>,
    max_backoff: Option<Duration>,
    max_concurrent_runs: Option<usize>,
    host: Option<String>,
    failover_after: Option<Duration>,
    catch_up: Option<Duration>,
    machine_name: Option<String>,
    keep: Option<usize>,
    runs_keep: Option<usize>,
    events_keep: Option<usize>,
    mcp_servers: BTreeMap<String, PartialMcpServer>,
    memory_max_keys: Option<usize>,
    memory_max_bytes: Option<usize>,
    skill_dirs: Option<Vec<String>>,
    sources: BTreeMap<String, PartialSource>,
    notify_desktop: Option<bool>,
    notify_command: Option<Set<Vec<String>>>,
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

const TOP_KEYS: &[&str] = &[
    "agent",
    "providers",
    "scheduler",
    "history",
    "mcp",
    "memory",
    "skills",
    "machine",
    "sources",
    "notify",
];
const NOTIFY_KEYS: &[&str] = &["desktop", "command"];
const AGENT_KEYS: &[&str] = &[
    "provider",
    "max_steps",
    "timeout",
    "web",
    "max_reply_bytes",
    "max_tool_args_bytes",
    "max_conversation_bytes",
    "instructions",
    "instructions_max_chars",
    "max_tokens",
];
const SCHEDULER_KEYS: &[&str] =
    &["enabled", "exclude", "max_backoff", "max_concurrent_runs", "host", "failover_after", "catch_up"];
const MACHINE_KEYS: &[&str] = &["name"];
const HISTORY_KEYS: &[&str] = &["keep", "runs_keep", "events_keep"];
const MEMORY_KEYS: &[&str] = &["max_keys", "max_bytes"];
const PROVIDER_KEYS: &[&str] = &["kind", "base_url", "model", "api_key_env", "command", "timeout"];
const MCP_KEYS: &[&str] = &["servers"];
const SKILLS_KEYS: &[&str] = &["dirs"];
const MCP_SERVER_KEYS: &[&str] =
    &["command", "url", "env", "events", "timeout", "bearer_token_env", "headers_env"];

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
                        "instructions" => {
                            acc.instructions = cx.strings(&key, &f.node).or(acc.instructions.take());
                        }
                        // From 100 characters (a useful paragraph) to 1 M (beyond that, no bound).
                        "instructions_max_chars" => {
                            if let Some(v) = cx.integer(&key, &f.node, 100, 1_000_000) {
                                acc.instructions_max_chars = usize::try_from(v).ok();
                            }
                        }
                        // From 1000 (one short reply) to 1 G (beyond that, no bound at all).
                        "max_tokens" => {
                            if let Some(v) = cx.integer(&key, &f.node, 1000, 1_000_000_000) {
                                acc.max_tokens = u64::try_from(v).ok();
                            }
                        }
                        _ => cx.unknown(&key, f, AGENT_KEYS),
                    }
                }
            }
            "sources" => {
                let Some(sources) = cx.table("sources", &e.node) else { continue };
                for s in set_entries(sources) {
                    apply_source(acc, s, cx);
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
                        "max_backoff" => {
                            acc.max_backoff = cx
                                .duration(&key, &f.node)
                                .and_then(|d| {
                                    let (min, max) = crate::config::MAX_BACKOFF_RANGE;
                                    if (min..=max).contains(&d) {
                                        return Some(d);
                                    }
                                    let message = format!(
                                        "`{key}` must be between {} and {}",
                                        format_duration(min),
                                        format_duration(max)
                                    );
                                    cx.report(f.node.span.clone(), Some(&key), message);
                                    None
                                })
                                .or(acc.max_backoff);
                        }
                        "max_concurrent_runs" => {
                            if let Some(v) = cx.integer(&key, &f.node, 1, 256) {
                                acc.max_concurrent_runs = usize::try_from(v).ok();
                            }
                        }
                        "host" => {
                            if let Some(v) = cx.string(&key, &f.node) {
                                // "" unsets a host a lower layer named (every machine runs).
                                acc.host = Some(v.trim().to_owned());
                            }
                        }
                        "failover_after" => {
                            acc.failover_after = cx.duration(&key, &f.node).or(acc.failover_after);
                        }
                        "catch_up" => acc.catch_up = cx.duration(&key, &f.node).or(acc.catch_up),
                        _ => cx.unknown(&key, f, SCHEDULER_KEYS),
                    }
                }
            }
            "mcp" => {
                let Some(fields) = cx.table("mcp", &e.node) else { continue };
                for f in set_entries(fields) {
                    match f.key.as_str() {
                        "servers" => {
                            let Some(servers) = cx.table("mcp.servers", &f.node) else { continue };
                            for server in set_entries(servers) {
                                apply_mcp_server(acc, server, cx);
                            }
                        }
                        _ => cx.unknown(&format!("mcp.{}", f.key), f, MCP_KEYS),
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
            "memory" => {
                let Some(fields) = cx.table("memory", &e.node) else { continue };
                for f in set_entries(fields) {
                    let key = format!("memory.{}", f.key);
                    match f.key.as_str() {
                        // 0 turns new entries off; 10,000 entries is past any useful memory.
                        "max_keys" => {
                            if let Some(v) = cx.integer(&key, &f.node, 0, 10_000) {
                                acc.memory_max_keys = usize::try_from(v).ok();
                            }
                        }
                        // A useful sentence at least; 1 MiB at most, since every entry may be sent.
                        "max_bytes" => {
                            if let Some(v) = cx.integer(&key, &f.node, 16, 1 << 20) {
                                acc.memory_max_bytes = usize::try_from(v).ok();
                            }
                        }
                        _ => cx.unknown(&key, f, MEMORY_KEYS),
                    }
                }
            }
            "skills" => {
                let Some(fields) = cx.table("skills", &e.node) else { continue };
                for f in set_entries(fields) {
                    let key = format!("skills.{}", f.key);
                    match f.key.as_str() {
                        "dirs" => acc.skill_dirs = cx.strings(&key, &f.node).or(acc.skill_dirs.take()),
                        _ => cx.unknown(&key, f, SKILLS_KEYS),
                    }
                }
            }
            "notify" => {
                let Some(fields) = cx.table("notify", &e.node) else { continue };
                for f in set_entries(fields) {
                    let key = format!("notify.{}", f.key);
                    match f.key.as_str() {
                        "desktop" => acc.notify_desktop = cx.boolean(&key, &f.node).or(acc.notify_desktop),
                        "command" => match cx.strings(&key, &f.node) {
                            Some(c) if c.first().is_some_and(|p| !p.trim().is_empty()) => {
                                acc.notify_command = Some(Set { value: c, at: cx.at(f.node.span.clone()) });
                            }
                            // `command = []` in a later layer turns an earlier one off.
                            Some(c) if c.is_empty() => acc.notify_command = None,
                            Some(_) => {
                                let message =
                                    "`notify.command` names no program: its first word is empty".to_owned();
                                cx.report(f.node.span.clone(), Some(&key), message);
                            }
                            None => {}
                        },
                        _ => cx.unknown(&key, f, NOTIFY_KEYS),
                    }
                }
            }
            // A folder's file is shared by every machine that syncs it: a machine's name there
            // would name them all.
            "machine" if cx.origin != Origin::User => {
                let message = "`[machine]` belongs in your own config (~/.config/livenote/config.toml), not in a folder's: a synced folder is shared by machines".to_owned();
                cx.report(e.key_span.clone(), Some("machine"), message);
            }
            "machine" => {
                let Some(fields) = cx.table("machine", &e.node) else { continue };
                for f in set_entries(fields) {
                    let key = format!("machine.{}", f.key);
                    match f.key.as_str() {
                        "name" => {
                            if let Some(v) = cx.string(&key, &f.node) {
                                acc.machine_name = Some(v.trim().to_owned()).filter(|v| !v.is_empty());
                            }
                        }
                        _ => cx.unknown(&key, f, MACHINE_KEYS),
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
            instructions: acc.instructions.unwrap_or(defaults.agent.instructions),
            instructions_max_chars: acc
                .instructions_max_chars
                .unwrap_or(defaults.agent.instructions_max_chars),
            max_tokens: acc.max_tokens.unwrap_or(defaults.agent.max_tokens),
        },
        providers: BTreeMap::new(),
        scheduler: SchedulerConfig {
            enabled: acc.enabled.unwrap_or(defaults.scheduler.enabled),
            exclude: acc.exclude.unwrap_or(defaults.scheduler.exclude),
            max_backoff: acc.max_backoff.unwrap_or(defaults.scheduler.max_backoff),
            max_concurrent_runs: acc.max_concurrent_runs.unwrap_or(defaults.scheduler.max_concurrent_runs),
            host: acc.host.filter(|h| !h.is_empty()),
            failover_after: acc.failover_after,
            catch_up: acc.catch_up,
        },
        history: HistoryConfig {
            keep: acc.keep.unwrap_or(defaults.history.keep),
            runs_keep: acc.runs_keep.unwrap_or(defaults.history.runs_keep),
            events_keep: acc.events_keep.unwrap_or(defaults.history.events_keep),
        },
        broken_providers: BTreeMap::new(),
        env_providers,
        ignored_folder: None,
        mcp_servers: BTreeMap::new(),
        broken_mcp_servers: BTreeMap::new(),
        memory: crate::config::MemoryConfig {
            max_keys: acc.memory_max_keys.unwrap_or(defaults.memory.max_keys),
            max_bytes: acc.memory_max_bytes.unwrap_or(defaults.memory.max_bytes),
        },
        skills: crate::config::SkillsConfig { dirs: acc.skill_dirs.unwrap_or(defaults.skills.dirs) },
        machine: crate::config::MachineConfig { name: acc.machine_name },
        sources: BTreeMap::new(),
        broken_sources: BTreeMap::new(),
        notify: crate::config::NotifyConfig {
            desktop: acc.notify_desktop.unwrap_or(false),
            command: acc
                .notify_command
                .map(|Set { value, at }| crate::config::NotifyCommand { command: value, origin: at.origin }),
        },
    };
    for (name, s) in acc.sources {
        match build_source(&name, s, problems) {
            Ok(source) => {
                config.sources.insert(name, source);
            }
            Err(reason) => {
                config.broken_sources.insert(name, reason);
            }
        }
    }
    for (name, s) in acc.mcp_servers {
        match build_mcp_server(&name, s, problems) {
            Ok(server) => {
                config.mcp_servers.insert(name, server);
            }
            Err(reason) => {
                config.broken_mcp_servers.insert(name, reason);
            }
        }
    }
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
#[path = "layer_tests.rs"]
pub(super) mod tests;
