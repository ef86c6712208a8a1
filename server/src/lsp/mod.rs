//! The language server (`livenote lsp`): LSP 3.17 over stdio with tower-lsp-server. The only
//! module that knows LSP types. Handlers translate and delegate to `ide::*` over immutable
//! snapshots; document changes are applied synchronously, before any `.await`, so they stay in
//! arrival order; round trips to the client (applyEdit, refreshes, registrations) run in
//! background tasks, never inside a handler.

pub mod convert;
pub mod documents;
mod handlers;
mod runs;
mod server;
mod state;

use std::sync::Arc;

use tower_lsp_server::{ClientSocket, LspService, Server};

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

/// Serve over stdin/stdout until the client says `exit`.
pub async fn run_stdio() {
    let opts = Options {
        clock: Arc::new(SystemClock) as Arc<dyn Clock>,
        zone: Zone::Local,
        watch_files: true,
        trust: crate::workspace::trust::TrustStore::user(),
    };
    let (service, socket) = service(opts);
    // Handlers never wait on the client, so a modest level suffices; it bounds memory under a
    // flood of requests while keeping slow requests from blocking cheap ones.
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket).concurrency_level(32).serve(service).await;
}
