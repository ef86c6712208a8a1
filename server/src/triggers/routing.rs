//! What one changed path means for a root's triggers. Pure: a path in, a kind out.

use std::path::Path;

/// What a changed file is, for the root it is under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileEvent {
    /// A file in `.livenote/events/pending/`: the event processor has work.
    EventQueue,
    /// The root's own `.livenote.toml`: reload the configuration (a changed file is untrusted
    /// until trusted again).
    FolderConfig,
    /// The user's trust store: trust granted or withdrawn from another process.
    TrustStore,
    /// A markdown note: re-read it into the index.
    Note,
    /// A record of a run into an editor's buffer (`.livenote/attempts/`, `runs::attempts`), or
    /// its folder: read it again, the scheduler re-plans.
    Attempt,
    /// Nothing the triggers care about.
    Other,
}

/// The kind of `path` for the root at `root`; `trust_file` is the user's trust store.
pub fn classify(root: &Path, trust_file: Option<&Path>, path: &Path) -> FileEvent {
    if trust_file == Some(path) {
        FileEvent::TrustStore
    } else if crate::events::is_pending_path(root, path)
        || (path.starts_with(root) && crate::events::pending_dir(root).starts_with(path) && path != root)
    {
        // `pending/` or a folder above it appearing (created on demand by the first producer)
        // counts too: a file renamed into it before a recursive watcher added its watch is
        // found by the pass this wakes.
        FileEvent::EventQueue
    } else if path.starts_with(root.join(crate::workspace::STATE_DIR).join(crate::runs::attempts::SUB)) {
        FileEvent::Attempt
    } else if path == crate::config::workspace_config_path(root) {
        FileEvent::FolderConfig
    } else if crate::workspace::is_markdown(path)
        && path.starts_with(root)
        && !path.components().any(|c| c.as_os_str() == crate::workspace::STATE_DIR)
    {
        FileEvent::Note
    } else {
        FileEvent::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let root = Path::new("/ws");
        let trust = Some(Path::new("/data/trust.json"));
        let k = |p: &str| classify(root, trust, Path::new(p));
        assert_eq!(k("/data/trust.json"), FileEvent::TrustStore);
        assert_eq!(k("/ws/.livenote/events/pending/01A.json"), FileEvent::EventQueue);
        assert_eq!(k("/ws/.livenote/events/pending"), FileEvent::EventQueue);
        assert_eq!(k("/ws/.livenote/events"), FileEvent::EventQueue);
        assert_eq!(k("/ws/.livenote"), FileEvent::EventQueue);
        assert_eq!(k("/ws/.livenote/events/done"), FileEvent::Other);
        assert_eq!(k("/ws"), FileEvent::Other);
        assert_eq!(k("/ws/.livenote.toml"), FileEvent::FolderConfig);
        assert_eq!(k("/ws/sub/.livenote.toml"), FileEvent::Other);
        assert_eq!(k("/ws/notes/a.md"), FileEvent::Note);
        assert_eq!(k("/ws/.livenote/history/x/a.md"), FileEvent::Other);
        assert_eq!(k("/ws/.livenote/attempts/a.md-1234abcd.json"), FileEvent::Attempt);
        assert_eq!(k("/ws/.livenote/attempts"), FileEvent::Attempt);
        assert_eq!(k("/ws/sub/.livenote/attempts/a.json"), FileEvent::Other);
        assert_eq!(k("/elsewhere/a.md"), FileEvent::Other);
        assert_eq!(k("/ws/image.png"), FileEvent::Other);
    }
}
