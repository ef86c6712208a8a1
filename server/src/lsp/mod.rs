//! The language server (`livenote lsp`): LSP 3.17 over stdio with tower-lsp-server. The only
//! module that knows LSP types. Handlers translate and delegate to `ide::*` over immutable
//! snapshots; document changes are applied synchronously, before any `.await`, so they stay in
//! arrival order; round trips to the client (applyEdit, refreshes, registrations) run in
//! background tasks, never inside a handler.
//!
//! Files form layers and import only from layers after their own (`scripts/import-graph.py`
//! lists any cycle): `server`; `notifications`; `lifecycle`, `commands`; `file_events`; `runs`,
//! `custom`, `requests`; `config_sync`; `refresh`; `snapshots`, `run_facts`; `state`; `world`;
//! `documents`, `convert`, `file_uri`, `raw_results`; `log`.

mod ask;
mod commands;
mod config_sync;
pub mod convert;
pub mod custom;
pub mod documents;
mod errors;
mod expiry;
mod file_events;
pub mod file_uri;
mod framing;
mod lifecycle;
mod lock_watch;
pub mod log;
mod notices;
mod notifications;
mod raw_results;
mod refresh;
mod requests;
mod roots;
mod run_facts;
mod runs;
mod server;
mod snapshots;
mod state;
mod world;

use std::sync::Arc;

use tower_lsp_server::{ClientSocket, LspService};

pub use server::Backend;
pub use state::Options;

use crate::schedule::{Clock, SystemClock, Zone};

/// Build the service, for stdio or for in-process tests.
pub fn service(opts: Options) -> (LspService<Backend>, ClientSocket) {
    LspService::build(|client| Backend::new(client, opts))
        .custom_method(custom::DOCUMENT_TEXT, Backend::document_text)
        .custom_method(custom::LIST_NOTES, Backend::list_notes)
        .custom_method(custom::NOTE_STATUS, Backend::note_status)
        .custom_method(custom::NOTE_HISTORY, Backend::note_history)
        .custom_method(custom::RUN_DIFF, Backend::run_diff)
        .custom_method(custom::RESTORE_RUN, Backend::restore_run)
        .custom_method("window/workDoneProgress/cancel", Backend::progress_cancel)
        .finish()
}

/// Serve over stdin/stdout until the client says `exit` (or closes stdin). Returns the exit
/// status: 0 after `shutdown`, 1 otherwise (LSP: `exit` without `shutdown` exits 1). `log`:
/// the log lines to send the client as `window/logMessage`.
pub async fn run_stdio(log: Option<log::ClientLog>) -> u8 {
    let opts = Options {
        clock: Arc::new(SystemClock) as Arc<dyn Clock>,
        zone: Zone::Local,
        watch_files: true,
        trust: crate::workspace::trust::TrustStore::user(),
        mcp_tools: crate::mcp::cache::ToolCache::user().map(Arc::new),
        user_dir: crate::skills::user_dir(),
    };
    serve(stdin_pipe(), tokio::io::stdout(), opts, log).await
}

/// Stdin through a thread of its own: tokio's `stdin()` reads in the runtime's blocking pool,
/// where a read that waits for the client would hold up the runtime's shutdown after `exit`.
fn stdin_pipe() -> tokio::io::DuplexStream {
    use std::io::Read;
    use tokio::io::AsyncWriteExt;
    let (mut tx, rx) = tokio::io::duplex(64 * 1024);
    let handle = tokio::runtime::Handle::current();
    let reader = move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::error!("reading stdin: {e}");
                    break;
                }
            };
            // Fails once the server has stopped reading: nothing more to do.
            if handle.block_on(tx.write_all(&buf[..n])).is_err() {
                return;
            }
        }
        let _ = handle.block_on(tx.shutdown());
    };
    // Without the thread the pipe's other end is dropped: the server sees the input end.
    if let Err(e) = std::thread::Builder::new().name("lsp-stdin".to_owned()).spawn(reader) {
        tracing::error!("cannot start the stdin reader: {e}");
    }
    rx
}

/// Serve over any byte streams, behind the transport guard (`framing`); returns the exit status
/// as [`run_stdio`] does.
pub async fn serve<I, O>(input: I, output: O, opts: Options, log: Option<log::ClientLog>) -> u8
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket) = service(opts);
    if let Some(log) = log {
        log.forward(service.inner().client.clone());
    }
    let shut_down = service.inner().shutdown_flag();
    framing::serve(input, output, service, socket).await;
    if shut_down.load(std::sync::atomic::Ordering::SeqCst) {
        0
    } else {
        tracing::warn!(
            "the client ended the session (exit or end of input) without asking for shutdown first: status 1"
        );
        1
    }
}
