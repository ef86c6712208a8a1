//! The language server (`livenote lsp`): LSP 3.17 over stdio with tower-lsp-server. The only
//! module that knows LSP types. Handlers translate and delegate to `ide::*` over immutable
//! snapshots; document changes are applied synchronously, before any `.await`, so they stay in
//! arrival order; round trips to the client (applyEdit, refreshes, registrations) run in
//! background tasks, never inside a handler.

pub mod convert;
pub mod documents;
mod framing;
mod handlers;
mod runs;
mod server;
mod state;

use std::sync::Arc;

use tower_lsp_server::{ClientSocket, LspService};

pub use server::Backend;
pub use state::Options;

use crate::schedule::{Clock, SystemClock, Zone};

/// Build the service, for stdio or for in-process tests.
pub fn service(opts: Options) -> (LspService<Backend>, ClientSocket) {
    LspService::build(|client| Backend::new(client, opts))
        .custom_method("livenote/documentText", Backend::document_text)
        .custom_method("window/workDoneProgress/cancel", Backend::progress_cancel)
        .finish()
}

/// Serve over stdin/stdout until the client says `exit` (or closes stdin). Returns the exit
/// status: 0 after `shutdown`, 1 otherwise (LSP: `exit` without `shutdown` exits 1).
pub async fn run_stdio() -> u8 {
    let opts = Options {
        clock: Arc::new(SystemClock) as Arc<dyn Clock>,
        zone: Zone::Local,
        watch_files: true,
        trust: crate::workspace::trust::TrustStore::user(),
    };
    serve(tokio::io::stdin(), tokio::io::stdout(), opts).await
}

/// Serve over any byte streams, behind the transport guard (`framing`); returns the exit status
/// as [`run_stdio`] does.
pub async fn serve<I, O>(input: I, output: O, opts: Options) -> u8
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket) = service(opts);
    let shut_down = service.inner().shutdown_flag();
    framing::serve(input, output, service, socket).await;
    if shut_down.load(std::sync::atomic::Ordering::SeqCst) {
        0
    } else {
        tracing::warn!("the client exited without asking the server to shut down first");
        1
    }
}
