//! The tool lists of MCP servers as their latest `tools/list` gave them, kept in the user's
//! data folder (`<data>/mcp-tools/<key>.json`, one file per server configuration) so that the
//! editor and `livenote check` know tool names and descriptions without starting a server
//! (the editor never starts one). Written after each successful listing in a run; the key is
//! a digest of what makes the server (its command or URL, and its environment), so a changed
//! configuration has no list until it runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::config::{McpServerConfig, McpTransport};

/// A list file larger than this is not one livenote wrote; ignored.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
const FORMAT_VERSION: u32 = 1;

/// One tool as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    #[serde(default)]
    pub input_schema: Value,
}

/// A tool as its server listed it, as kept (its description, else its title).
pub fn listed(t: &rmcp::model::Tool) -> CachedTool {
    CachedTool {
        name: t.name.to_string(),
        description: t.description.as_ref().map(ToString::to_string).or_else(|| t.title.clone()),
        input_schema: Value::Object((*t.input_schema).clone()),
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListFile {
    version: u32,
    /// The server's name where it was listed (for people reading the folder).
    server: String,
    listed_at: String,
    tools: Vec<CachedTool>,
}

/// The folder of tool lists. Reads are memoised by file modification time: the editor asks at
/// every keystroke of a note with `live.tools`.
#[derive(Debug)]
pub struct ToolCache {
    dir: PathBuf,
    memo: Mutex<HashMap<String, (SystemTime, Vec<CachedTool>)>>,
}

impl ToolCache {
    /// The lists under `data_dir` (tests point it at a folder of their own).
    pub fn in_dir(data_dir: &Path) -> ToolCache {
        ToolCache { dir: data_dir.join("mcp-tools"), memo: Mutex::default() }
    }

    /// The user's lists ([`crate::workspace::trust::user_data_dir`]); `None` without a home.
    pub fn user() -> Option<ToolCache> {
        crate::workspace::trust::user_data_dir().map(|d| ToolCache::in_dir(&d))
    }

    /// The folder of the lists (watched by the language server: a run lists a server's tools).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, cfg: &McpServerConfig) -> PathBuf {
        self.dir.join(format!("{}.json", key(cfg)))
    }

    /// The tools the server with this configuration listed last, if it ever did.
    pub fn load(&self, cfg: &McpServerConfig) -> Option<Vec<CachedTool>> {
        let path = self.path(cfg);
        let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
        let k = key(cfg);
        if let Ok(memo) = self.memo.lock()
            && let Some((at, tools)) = memo.get(&k)
            && *at == modified
        {
            return Some(tools.clone());
        }
        let bytes = crate::workspace::confine::read_regular(&path, MAX_FILE_BYTES).ok()?;
        let file: ListFile = match serde_json::from_slice(&bytes) {
            Ok(f) => f,
            Err(e) => {
                tracing::debug!("read {}: {e}", path.display());
                return None;
            }
        };
        if file.version != FORMAT_VERSION {
            return None;
        }
        if let Ok(mut memo) = self.memo.lock() {
            memo.insert(k, (modified, file.tools.clone()));
        }
        Some(file.tools)
    }

    /// Keep `tools` as the list of the server `name` with this configuration.
    pub fn store(
        &self,
        name: &str,
        cfg: &McpServerConfig,
        tools: &[CachedTool],
        at: DateTime<Utc>,
    ) -> std::io::Result<()> {
        let file = ListFile {
            version: FORMAT_VERSION,
            server: name.to_owned(),
            listed_at: at.to_rfc3339_opts(SecondsFormat::Secs, true),
            tools: tools.to_vec(),
        };
        let text = serde_json::to_string_pretty(&file).map_err(std::io::Error::other)?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(std::io::Error::other(format!(
                "the tool list is larger than {MAX_FILE_BYTES} bytes"
            )));
        }
        if self.load(cfg).as_deref() == Some(tools) {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir)?;
        crate::workspace::write::write_atomic(&self.path(cfg), &text).map_err(std::io::Error::other)
    }
}

/// A digest of what makes a server: its command or URL and its environment (not its name,
/// `events` or `timeout`, which do not change its tools).
pub fn key(cfg: &McpServerConfig) -> String {
    let what = match &cfg.transport {
        McpTransport::Stdio { command } => json!({"command": command, "env": cfg.env}),
        McpTransport::Http { url, .. } => json!({"url": url}),
    };
    let digest = crate::workspace::trust::digest_bytes(what.to_string().as_bytes());
    digest.trim_start_matches("sha256:").chars().take(32).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::*;
    use crate::config::Origin;

    fn server(command: &[&str]) -> McpServerConfig {
        McpServerConfig {
            transport: McpTransport::Stdio { command: command.iter().map(|s| s.to_string()).collect() },
            env: BTreeMap::new(),
            events: false,
            timeout: Duration::from_secs(30),
            origin: Origin::User,
        }
    }

    #[test]
    fn lists_are_kept_per_configuration() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cache = ToolCache::in_dir(dir.path());
        let time = server(&["mcp-server-time"]);
        assert_eq!(cache.load(&time), None);
        let tools = vec![CachedTool {
            name: "get_current_time".into(),
            description: Some("Get current time".into()),
            input_schema: json!({"type": "object"}),
        }];
        cache.store("time", &time, &tools, DateTime::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cache.load(&time), Some(tools.clone()));
        // Another cache over the same folder (another process) reads it too.
        assert_eq!(ToolCache::in_dir(dir.path()).load(&time), Some(tools));
        // What the server is changes the key; when and how it is offered does not.
        assert_eq!(cache.load(&server(&["mcp-server-time", "--local-timezone", "UTC"])), None);
        let mut events = time.clone();
        events.events = true;
        events.timeout = Duration::from_secs(5);
        assert_eq!(key(&events), key(&time));
        let mut env = time.clone();
        env.env.insert("TZ".into(), "UTC".into());
        assert_ne!(key(&env), key(&time));
        // A damaged file is no list.
        std::fs::write(cache.path(&time), "{").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ToolCache::in_dir(dir.path()).load(&time), None);
    }
}
