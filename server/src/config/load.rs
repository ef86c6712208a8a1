//! Finding and reading the files: the user's config, the folder's `.livenote.toml` behind
//! the trust gate (SPEC 7), and the layers they make with the client settings.

use std::path::{Path, PathBuf};

use super::layer::Layer;
use super::{Config, ConfigProblem, Env, IgnoredFolderConfig, Origin, ProcessEnv};

/// A config file larger than this is certainly not hand-written configuration.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The user's config file: `config.toml` in [`user_config_dir`].
pub fn user_config_path(env: &dyn Env) -> Option<PathBuf> {
    user_config_dir(env).map(|d| d.join("config.toml"))
}

/// The user's livenote folder: `$LIVENOTE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/livenote`, else
/// the platform's (`~/.config/livenote`; `%APPDATA%\livenote` on Windows).
pub fn user_config_dir(env: &dyn Env) -> Option<PathBuf> {
    if let Some(dir) = env.var("LIVENOTE_CONFIG_DIR") {
        return Some(PathBuf::from(dir));
    }
    // The XDG spec says relative values are invalid and must be ignored.
    if let Some(dir) = env.var("XDG_CONFIG_HOME").map(PathBuf::from).filter(|d| d.is_absolute()) {
        return Some(dir.join("livenote"));
    }
    crate::platform::default_config_dir(&|k| env.var(k))
}

/// The workspace's own config file.
pub fn workspace_config_path(root: &Path) -> PathBuf {
    root.join(".livenote.toml")
}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

impl Config {
    /// Load the user file, the workspace's `.livenote.toml` **only when the user trusts the
    /// folder with that content** (the user's trust store), and the client settings, using
    /// the process environment. Never fails.
    pub fn load(
        workspace_root: Option<&Path>,
        client: Option<&serde_json::Value>,
    ) -> (Config, Vec<ConfigProblem>) {
        let store = crate::workspace::trust::TrustStore::user();
        Config::load_gated(workspace_root, client, &ProcessEnv, store.as_ref())
    }

    /// [`Config::load`] for a workspace, its problems logged as warnings (the long-lived
    /// commands: `watch`, `run`, `mcp`).
    pub fn load_logged(workspace_root: &Path) -> Config {
        let (config, problems) = Config::load(Some(workspace_root), None);
        for p in problems {
            tracing::warn!("config {p}");
        }
        config
    }

    /// [`Config::load`] with an explicit environment and trust store (`None`: nothing is
    /// trusted). The folder's file is read once; the bytes whose digest is checked against
    /// the store are the bytes that are parsed. An ignored file is still parsed, only to tell
    /// whether a run would need it ([`Config::needs_ignored_folder`]); nothing in it is used.
    pub fn load_gated(
        workspace_root: Option<&Path>,
        client: Option<&serde_json::Value>,
        env: &dyn Env,
        trust: Option<&crate::workspace::trust::TrustStore>,
    ) -> (Config, Vec<ConfigProblem>) {
        Config::load_impl(workspace_root, client, env, Some(trust))
    }

    /// Load every layer, the folder's `.livenote.toml` included **as if the folder were
    /// trusted**: for callers that already decided it is (and tests). Never fails.
    pub fn load_with(
        workspace_root: Option<&Path>,
        client: Option<&serde_json::Value>,
        env: &dyn Env,
    ) -> (Config, Vec<ConfigProblem>) {
        Config::load_impl(workspace_root, client, env, None)
    }

    /// `gate`: `None` = the folder is trusted by the caller; `Some(store)` = ask the store.
    fn load_impl(
        workspace_root: Option<&Path>,
        client: Option<&serde_json::Value>,
        env: &dyn Env,
        gate: Option<Option<&crate::workspace::trust::TrustStore>>,
    ) -> (Config, Vec<ConfigProblem>) {
        use crate::workspace::trust;
        let mut problems = Vec::new();
        let user = user_config_path(env)
            .and_then(|path| read_config_file(&path, Origin::User, &mut problems).map(|t| (path, t)));
        let mut folder: Option<(PathBuf, String)> = None;
        let mut ignored: Option<(PathBuf, PathBuf, String, trust::Trust, trust::Digest)> = None;
        if let Some(root) = workspace_root {
            let path = workspace_config_path(root);
            match gate {
                None => folder = read_config_file(&path, Origin::Workspace, &mut problems).map(|t| (path, t)),
                Some(store) => match trust::read_config_bytes(root) {
                    Ok(None) => {}
                    Err(e) => problems.push(file_problem(
                        &path,
                        Origin::Workspace,
                        format!("cannot read the file: {e}"),
                    )),
                    Ok(Some(bytes)) => {
                        let digest = Some(trust::digest_bytes(&bytes));
                        let verdict = store
                            .map_or(trust::Trust::Untrusted, |s| s.list().check_content(root, Some(&bytes)));
                        match String::from_utf8(bytes) {
                            Err(e) => problems.push(file_problem(
                                &path,
                                Origin::Workspace,
                                format!(
                                    "not valid UTF-8 (at byte {}); ignored",
                                    e.utf8_error().valid_up_to()
                                ),
                            )),
                            Ok(text) if verdict.is_trusted() => folder = Some((path, text)),
                            Ok(text) => {
                                ignored = Some((root.to_path_buf(), path, text, verdict, digest));
                            }
                        }
                    }
                },
            }
        }
        let user_layer = user.as_ref().map(|(path, text)| Layer::Toml { text, path, origin: Origin::User });
        let folder_layer =
            folder.as_ref().map(|(path, text)| Layer::Toml { text, path, origin: Origin::Workspace });
        let client_layer = client.map(Layer::Json);
        let layers: Vec<Layer<'_>> = [user_layer, folder_layer, client_layer].into_iter().flatten().collect();
        let (mut config, more) = Config::from_layers(&layers, env);
        problems.extend(more);
        if let Some((root, path, text, trust, digest)) = ignored {
            // What the configuration would be with the file: never used to run, only compared.
            let folder_layer = Layer::Toml { text: &text, path: &path, origin: Origin::Workspace };
            let layers: Vec<Layer<'_>> =
                [user_layer, Some(folder_layer), client_layer].into_iter().flatten().collect();
            let (would_be, _) = Config::from_layers(&layers, env);
            let ignored = IgnoredFolderConfig { root, path, trust, digest, would_be };
            problems.push(file_problem(&ignored.path, Origin::Workspace, ignored.problem()));
            config.ignored_folder = Some(Box::new(ignored));
        }
        (config, problems)
    }
}

fn file_problem(path: &Path, origin: Origin, message: String) -> ConfigProblem {
    ConfigProblem {
        origin,
        path: Some(path.to_path_buf()),
        line: None,
        column: None,
        span: None,
        key: None,
        message,
    }
}

/// A missing file is normal (no problem); anything else that stops us reading it is one.
fn read_config_file(path: &Path, origin: Origin, problems: &mut Vec<ConfigProblem>) -> Option<String> {
    let file_problem = |message: String| ConfigProblem {
        origin,
        path: Some(path.to_path_buf()),
        line: None,
        column: None,
        span: None,
        key: None,
        message,
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            problems.push(file_problem(format!("cannot read the file: {e}")));
            return None;
        }
        Ok(m) if !m.is_file() => {
            problems.push(file_problem("not a regular file".to_owned()));
            return None;
        }
        Ok(m) if m.len() > MAX_CONFIG_BYTES => {
            problems.push(file_problem(format!("larger than {} KiB; ignored", MAX_CONFIG_BYTES / 1024)));
            return None;
        }
        Ok(_) => {}
    }
    // Only a regular file is opened (checked again on the open file, never blocking on a FIFO).
    match crate::workspace::confine::read_regular(path, MAX_CONFIG_BYTES) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(file_problem(format!("cannot read the file: {e}")));
            None
        }
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Some(text),
            Err(e) => {
                problems.push(file_problem(format!(
                    "not valid UTF-8 (at byte {}); ignored",
                    e.utf8_error().valid_up_to()
                )));
                None
            }
        },
    }
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
