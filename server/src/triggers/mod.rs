//! What makes notes run on their own in one workspace root, wired once for both long-lived
//! processes (`livenote watch`, `livenote lsp`): the scheduler (cron, windows) and the event
//! processor over the root's notes, and what a changed file means for them. The callers keep
//! the index (the language server keeps one for all its roots, with diagnostics) and give the
//! service a view of it; they never start a scheduler or a processor themselves.

pub mod routing;
pub mod service;
pub mod watcher;

pub use routing::{FileEvent, classify};
pub use service::RootService;
