//! The one way a long-lived command (`run`, `watch`, `lsp`, `mcp`) hears that it should end:
//! Ctrl-C (SIGINT), `systemctl stop` or `kill` (SIGTERM), a closed terminal (SIGHUP). Each is
//! caught so that the command ends through its own shutdown path, which kills the process
//! groups of the providers and MCP servers it started; left to their default action, SIGTERM
//! and SIGHUP ended livenote alone and left those groups running. A port to another platform
//! swaps this module.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The signals that end livenote, caught from the moment [`Shutdown::listen`] returns.
///
/// Listening is split from waiting because a handler installed only when its future is first
/// polled leaves a window: a command that starts a provider and then waits for the first of
/// "the run ended" and "a signal came" may start the program before the handler exists, and a
/// SIGTERM in that window ends livenote by the default action, leaving the program running.
pub struct Shutdown {
    signals: Option<(Signal, Signal, Signal)>,
}

impl Shutdown {
    /// Catch SIGINT, SIGTERM and SIGHUP from now on. Called inside the runtime, before the
    /// command starts anything.
    pub fn listen() -> Self {
        let signals = match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            (Ok(int), Ok(term), Ok(hup)) => Some((int, term, hup)),
            _ => {
                tracing::warn!("cannot listen for SIGTERM and SIGHUP; only Ctrl-C ends livenote cleanly");
                None
            }
        };
        Shutdown { signals }
    }

    /// Wait for the first of SIGINT, SIGTERM or SIGHUP; its name.
    pub async fn recv(&mut self) -> &'static str {
        let Some((int, term, hup)) = self.signals.as_mut() else {
            let _ = tokio::signal::ctrl_c().await;
            return "SIGINT";
        };
        tokio::select! {
            _ = int.recv() => "SIGINT",
            _ = term.recv() => "SIGTERM",
            _ = hup.recv() => "SIGHUP",
        }
    }
}
