//! `[mcp.servers.NAME]`: one MCP server read from a layer, merged by name, and finally checked
//! into a usable [`McpServerConfig`] (or the reason it cannot be used).

use super::*;
use crate::config::HeaderFromEnv;

/// One `[mcp.servers.NAME]` as merged so far. `command` and `url` exclude each other: a layer
/// that sets one drops the other's earlier value, so a workspace can point a user's server
/// elsewhere.
pub(super) struct PartialMcpServer {
    pub(super) at: At,
    pub(super) origin: Origin,
    pub(super) command: Option<Set<Vec<String>>>,
    pub(super) url: Option<Set<String>>,
    /// Merged by variable across layers.
    pub(super) env: BTreeMap<String, String>,
    pub(super) events: Option<bool>,
    pub(super) timeout: Option<Duration>,
    /// `bearer_token_env`: the variable whose value is sent as `Authorization: Bearer ...`.
    pub(super) bearer_token_env: Option<Set<String>>,
    /// `headers_env`, merged by header name across layers: header → variable.
    pub(super) headers_env: BTreeMap<String, String>,
    /// Why the latest layer's definition cannot be used, already reported.
    pub(super) broken: Option<String>,
}

/// Whether `name` is an HTTP header name (a token: letters, digits and `!#$%&'*+-.^_`|~`).
fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether `name` may name an MCP server: it becomes part of tool names (`mcp__NAME__tool`)
/// and of `live.tools` entries (`NAME.tool`), so only letters, digits, `_` and `-`.
pub(crate) fn is_mcp_server_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

pub(super) fn apply_mcp_server(acc: &mut Partial, entry: &Entry, cx: &mut Cx<'_>) {
    let name = entry.key.as_str();
    let prefix = format!("mcp.servers.{name}");
    if !is_mcp_server_name(name) {
        let message = format!(
            "`{prefix}`: a server name may hold only letters, digits, `_` and `-` (it becomes part of tool names); ignored"
        );
        cx.report(entry.key_span.clone(), Some(&prefix), message);
        return;
    }
    let Some(fields) = cx.table(&prefix, &entry.node) else { return };
    let at = cx.at(entry.key_span.clone());
    let s = acc.mcp_servers.entry(name.to_owned()).or_insert_with(|| PartialMcpServer {
        at: at.clone(),
        origin: cx.origin,
        command: None,
        url: None,
        env: BTreeMap::new(),
        events: None,
        timeout: None,
        bearer_token_env: None,
        headers_env: BTreeMap::new(),
        broken: None,
    });
    s.at = at;
    s.origin = cx.origin;
    s.broken = None;
    let (mut command, mut url) = (None, None);
    for f in set_entries(fields) {
        let key = format!("{prefix}.{}", f.key);
        let at = cx.at(f.node.span.clone());
        match f.key.as_str() {
            "command" => command = cx.strings(&key, &f.node).map(|v| Set { value: v, at }),
            "url" => url = cx.string(&key, &f.node).map(|v| Set { value: v, at }),
            "env" => {
                let Some(vars) = cx.table(&key, &f.node) else { continue };
                for v in set_entries(vars) {
                    let var_key = format!("{key}.{}", v.key);
                    if !is_env_name(&v.key) {
                        let message =
                            format!("`{var_key}`: not an environment variable name (letters, digits, `_`)");
                        cx.report(v.key_span.clone(), Some(&var_key), message);
                        continue;
                    }
                    // Never echo a value: it may well be a token.
                    if let Some(value) = cx.string(&var_key, &v.node) {
                        if value.contains('\0') {
                            let message = format!("`{var_key}` must not contain a NUL character");
                            cx.report(v.node.span.clone(), Some(&var_key), message);
                            continue;
                        }
                        s.env.insert(v.key.clone(), value);
                    }
                }
            }
            "events" => s.events = cx.boolean(&key, &f.node).or(s.events),
            "bearer_token_env" => {
                let Some(var) = cx.string(&key, &f.node) else { continue };
                if !is_env_name(&var) {
                    let message = format!("`{key}`: not an environment variable name (letters, digits, `_`)");
                    cx.report(f.node.span.clone(), Some(&key), message);
                    continue;
                }
                s.bearer_token_env = Some(Set { value: var, at });
            }
            "headers_env" => {
                let Some(headers) = cx.table(&key, &f.node) else { continue };
                for h in set_entries(headers) {
                    let header_key = format!("{key}.{}", h.key);
                    if !is_header_name(&h.key) {
                        let message = format!("`{header_key}`: not an HTTP header name");
                        cx.report(h.key_span.clone(), Some(&header_key), message);
                        continue;
                    }
                    let Some(var) = cx.string(&header_key, &h.node) else { continue };
                    if !is_env_name(&var) {
                        let message = format!(
                            "`{header_key}` names the environment variable holding the header's value (letters, digits, `_`), not the value"
                        );
                        cx.report(h.node.span.clone(), Some(&header_key), message);
                        continue;
                    }
                    s.headers_env.insert(h.key.clone(), var);
                }
            }
            "timeout" => s.timeout = cx.duration(&key, &f.node).or(s.timeout),
            _ => cx.unknown(&key, f, MCP_SERVER_KEYS),
        }
    }
    match (command, url) {
        (Some(c), Some(u)) => {
            let message =
                format!("`{prefix}` sets both `command` and `url`; set one (a program, or a server's URL)");
            cx.report(u.at.span.clone(), Some(&prefix), message);
            s.broken = Some("both `command` and `url` are set".to_owned());
            s.command = Some(c);
            s.url = None;
        }
        (Some(c), None) => {
            s.command = Some(c);
            s.url = None;
        }
        (None, Some(u)) => {
            s.url = Some(u);
            s.command = None;
        }
        (None, None) => {}
    }
}

/// A usable MCP server, or why not (reported here unless the layer reported it already).
pub(super) fn build_mcp_server(
    name: &str,
    s: PartialMcpServer,
    problems: &mut Vec<ConfigProblem>,
) -> Result<McpServerConfig, String> {
    let prefix = format!("mcp.servers.{name}");
    if let Some(reason) = s.broken {
        return Err(reason);
    }
    let transport = match (s.command, s.url) {
        (Some(c), _) if c.value.first().is_some_and(|p| !p.is_empty()) => {
            McpTransport::Stdio { command: c.value }
        }
        (Some(c), _) => {
            let key = format!("{prefix}.command");
            problems.push(c.at.problem(Some(&key), format!("`{key}` needs a program as its first element")));
            return Err("`command` needs a program as its first element".to_owned());
        }
        (None, Some(u)) => {
            let url = u.value.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                let key = format!("{prefix}.url");
                problems
                    .push(u.at.problem(Some(&key), format!("`{key}` must start with http:// or https://")));
                return Err("`url` must start with http:// or https://".to_owned());
            }
            // The bearer token first, and in place of an `Authorization` in `headers_env`.
            let bearer = s.bearer_token_env.as_ref().map(|var| HeaderFromEnv {
                name: "Authorization".to_owned(),
                var: var.value.clone(),
                bearer: true,
            });
            let others = s
                .headers_env
                .iter()
                .filter(|(name, _)| bearer.is_none() || !name.eq_ignore_ascii_case("authorization"))
                .map(|(name, var)| HeaderFromEnv { name: name.clone(), var: var.clone(), bearer: false });
            let headers: Vec<HeaderFromEnv> = bearer.clone().into_iter().chain(others).collect();
            McpTransport::Http { url: url.to_owned(), headers }
        }
        (None, None) => {
            let reason = "no `command` (e.g. command = [\"uvx\", \"mcp-server-time\"]) or `url`".to_owned();
            problems.push(s.at.problem(Some(&prefix), format!("MCP server `{name}` has {reason}")));
            return Err(reason);
        }
    };
    if matches!(transport, McpTransport::Http { .. }) && !s.env.is_empty() {
        let key = format!("{prefix}.env");
        problems.push(s.at.problem(Some(&key), format!("`{key}` applies only to a `command`; ignored")));
    }
    if matches!(transport, McpTransport::Stdio { .. }) {
        if let Some(var) = &s.bearer_token_env {
            let key = format!("{prefix}.bearer_token_env");
            let message = format!("`{key}` applies only to a `url` server (a program gets `env`); ignored");
            problems.push(var.at.problem(Some(&key), message));
        }
        if !s.headers_env.is_empty() {
            let key = format!("{prefix}.headers_env");
            let message = format!("`{key}` applies only to a `url` server (a program gets `env`); ignored");
            problems.push(s.at.problem(Some(&key), message));
        }
    }
    Ok(McpServerConfig {
        transport,
        env: s.env,
        events: s.events.unwrap_or(false),
        timeout: s.timeout.unwrap_or(DEFAULT_MCP_TIMEOUT),
        origin: s.origin,
    })
}
