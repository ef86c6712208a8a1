//! `livenote mcp [DIR]`: serve the workspace DIR to chat assistants as an MCP server on
//! stdin/stdout until the client closes stdin. stdout carries the protocol; the log goes to
//! stderr.

use std::io::Write;
use std::path::PathBuf;

pub fn run(dir: Option<PathBuf>) -> u8 {
    let root = match crate::workspace::given::folder(&dir.unwrap_or_else(|| PathBuf::from("."))) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "livenote: {e}");
            return 2;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "livenote: start the async runtime: {e}");
            return 2;
        }
    };
    let served = runtime.block_on(async {
        let mut shutdown = super::signal::Shutdown::listen();
        tokio::select! {
            served = crate::mcp_server::serve_stdio(&root) => served,
            signal = shutdown.recv() => {
                tracing::info!("stop serving: {signal}");
                Ok(())
            }
        }
    });
    let status = match served {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "livenote: mcp: {e:#}");
            1
        }
    };
    // A run still writing its note gets a moment; nothing may hold up the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    status
}
