//! MCP servers as tools for model runs (issue 15, part 1): the client side of the Model
//! Context Protocol, on the official Rust SDK (`rmcp`).
//!
//! An edge below `agent/` (which offers a run's MCP tools to the model) and above `config/`:
//! - `select.rs`: which servers and tools one run may use (pure: configuration, `live.tools`,
//!   event runs, trust);
//! - `names.rs`: the model's names for them, `mcp__<server>__<tool>` (pure);
//! - `content.rs`: a tool result as text for the model (pure);
//! - `client.rs`: one connection (a program in its own process group, its stderr into the
//!   log; streamable HTTP in `http.rs`);
//! - `pool.rs`: the servers this process runs, reused, restarted, stopped when idle, killed at
//!   exit;
//! - `session.rs`: one run's tools and calls;
//! - `cache.rs`: the latest tool list of each server, for the editor and `livenote check`.

pub mod cache;
pub mod client;
pub mod content;
mod http;
pub mod names;
pub mod pool;
pub mod select;
pub mod session;

pub use pool::Pool;
pub use select::{Selected, Selection, select};
pub use session::{CallOutcome, CallRecord, Session, SessionTool};

/// What a note may name in `live.tools`: the servers of `config` (see
/// [`Config::mcp_servers_for_notes`]) with the tools the cache remembers. Reads only the
/// cache: the editor and `livenote check` never start a server.
pub fn catalog(
    config: &crate::config::Config,
    cache: Option<&cache::ToolCache>,
) -> crate::note::tools::McpCatalog {
    use crate::note::tools::{McpCatalog, McpServerInfo, McpToolInfo, schema_params};
    let servers = config
        .mcp_servers_for_notes()
        .into_iter()
        .map(|(name, cfg)| McpServerInfo {
            name: name.to_owned(),
            tools: cfg.zip(cache).and_then(|(cfg, cache)| cache.load(cfg)).map(|tools| {
                tools
                    .into_iter()
                    .map(|t| McpToolInfo {
                        params: schema_params(&t.input_schema),
                        name: t.name,
                        description: t.description,
                    })
                    .collect()
            }),
        })
        .collect();
    McpCatalog { servers }
}

/// Kill every MCP server this process started (at exit).
pub fn shutdown() {
    Pool::global().shutdown();
}
