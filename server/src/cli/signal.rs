//! The one way a long-lived command (`run`, `watch`, `lsp`, `mcp`) hears that it should end:
//! Ctrl-C (SIGINT), `systemctl stop` or `kill` (SIGTERM), a closed terminal (SIGHUP). Each is
//! caught so that the command ends through its own shutdown path, which kills the process
//! groups of the providers and MCP servers it started; left to their default action, SIGTERM
//! and SIGHUP ended livenote alone and left those groups running. A port to another platform
//! swaps this function.

/// Wait for the first of SIGINT, SIGTERM or SIGHUP; its name.
pub async fn shutdown() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        tracing::warn!("cannot listen for SIGTERM and SIGHUP; only Ctrl-C ends livenote cleanly");
        let _ = tokio::signal::ctrl_c().await;
        return "SIGINT";
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term.recv() => "SIGTERM",
        _ = hup.recv() => "SIGHUP",
    }
}
