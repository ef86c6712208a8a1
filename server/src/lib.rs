//! livenote: keeps markdown notes live. The library behind the `livenote` binary.
//!
//! Layers, top to bottom (dependencies only point down):
//! - `cli`: the command line (`check`, `list`, ...), the only place that prints.
//! - `runs` → `providers` (command | agent) → `agent` (the loop, its tools, the prompt) →
//!   `run_types` (the run request/outcome contract) → `model` (model clients, HTTP transport,
//!   `client_for`): the run side; each imports only what is below it.
//! - `workspace`: walking folders and reading notes from disk.
//! - `note`: frontmatter, the `live:` model, validation and byte-minimal rewrites (pure).
//! - `schedule`: cron, windows, due/next-due arithmetic over an injected clock (pure).
//! - `text`: offsets, positions and text edits (pure).
//! - `platform`: what differs by operating system (files, processes, signals, folders), below
//!   every edge that touches the system.

pub mod agent;
pub mod ask;
pub mod authoring;
pub mod cli;
pub mod config;
pub mod cost;
pub mod events;
pub mod ide;
pub mod instructions;
pub mod lsp;
pub mod machine;
pub mod mcp;
pub mod mcp_server;
pub mod memory;
pub mod model;
pub mod net;
pub mod note;
pub mod notify;
pub mod platform;
pub mod providers;
pub mod run_types;
pub mod runs;
pub mod schedule;
pub mod scheduler;
pub mod skills;
pub mod sources;
pub mod status;
pub mod survey;
pub mod templates;
pub mod text;
pub mod triggers;
pub mod workspace;
