//! The one way a long-lived command (`run`, `watch`, `lsp`, `mcp`) hears that it should end:
//! Ctrl-C (SIGINT), `systemctl stop` or `kill` (SIGTERM), a closed terminal (SIGHUP); on
//! Windows Ctrl-C, Ctrl-Break, a closed console, logoff and shutdown. Each is caught so that
//! the command ends through its own shutdown path, which kills the process groups (Job
//! objects) of the providers and MCP servers it started; left to their default action,
//! SIGTERM and SIGHUP ended livenote alone and left those groups running. The platform's
//! half lives in `crate::platform`.

pub use crate::platform::Shutdown;
