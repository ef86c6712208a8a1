//! The runs in progress in this process: one per note, each with the token that stops it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Default)]
pub struct Registry {
    running: Arc<Mutex<HashMap<PathBuf, CancellationToken>>>,
}

impl Registry {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, CancellationToken>> {
        self.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Register a run; `None` when the note already runs here.
    pub fn start(&self, path: &Path) -> Option<CancellationToken> {
        let mut m = self.map();
        if m.contains_key(path) {
            return None;
        }
        let token = CancellationToken::new();
        m.insert(path.to_path_buf(), token.clone());
        Some(token)
    }

    pub fn finish(&self, path: &Path) {
        self.map().remove(path);
    }

    pub fn cancel(&self, path: &Path) -> bool {
        match self.map().get(path) {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    pub fn is_running(&self, path: &Path) -> bool {
        self.map().contains_key(path)
    }

    pub fn running(&self) -> Vec<PathBuf> {
        self.map().keys().cloned().collect()
    }
}
