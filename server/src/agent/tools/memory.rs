//! The memory tools (`memory_list`, `memory_show`, `memory_save`, `memory_delete`): the note's
//! key/value memory across runs (`crate::memory`), with its key rules and quotas; a refused
//! change is a tool error the model can act on, never a failed run.
//!
//! A change is written at once, atomically (`memory::store`), not at the end of the run: the
//! run holds the note's lock, so nothing else writes the file meanwhile, and a fact the model
//! saved before a later step failed (a limit, a timeout) is still true and still worth
//! keeping. What the model is told was saved is what the next run reads.
//!
//! In a run started by an event the tools work for unpinned entries only (`memory::Author`):
//! pinning, or changing or deleting a pinned entry, is a tool error, and nothing is written.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolError, parse_args};
use crate::memory::store::MemoryStore;
use crate::memory::{Author, Memory, MemoryConfig, Saved, timestamp};
use crate::model::ToolSpec;
use crate::run_types::RunRequest;

pub const MEMORY_LIST: &str = "memory_list";
pub const MEMORY_SHOW: &str = "memory_show";
pub const MEMORY_SAVE: &str = "memory_save";
pub const MEMORY_DELETE: &str = "memory_delete";

/// Whether `name` is one of these tools.
pub fn is_memory_tool(name: &str) -> bool {
    [MEMORY_LIST, MEMORY_SHOW, MEMORY_SAVE, MEMORY_DELETE].contains(&name)
}

/// One run's view of the note's memory: what the file holds (kept in step with each write).
pub struct MemoryTools {
    store: MemoryStore,
    note: String,
    memory: Memory,
    quotas: MemoryConfig,
    unreadable: Option<String>,
    /// Entries saved in this run are stamped with the run's time (time is the engine's).
    now: DateTime<Utc>,
    /// An event's run: its saves are marked, and pinned entries are out of its reach.
    author: Author,
}

#[derive(Debug, Deserialize)]
struct KeyArgs {
    key: String,
}

#[derive(Debug, Deserialize)]
struct SaveArgs {
    key: String,
    content: String,
    #[serde(default)]
    pinned: Option<bool>,
}

impl MemoryTools {
    pub fn new(req: &RunRequest) -> MemoryTools {
        MemoryTools {
            store: MemoryStore::new(&req.workspace_root),
            note: req.note_path.clone(),
            memory: req.memory.entries.clone(),
            quotas: req.memory.quotas,
            unreadable: req.memory.unreadable.clone(),
            now: req.now,
            author: req.memory_author(),
        }
    }

    /// Run one memory tool call.
    pub async fn call(&mut self, name: &str, args: &Value) -> Result<String, ToolError> {
        if let Some(why) = &self.unreadable {
            return Err(ToolError::new(format!("the note's memory is not available in this run: {why}")));
        }
        match name {
            MEMORY_LIST => Ok(crate::memory::section(&self.memory, &self.quotas)),
            MEMORY_SHOW => {
                let a: KeyArgs = parse_args(name, args)?;
                let e = self.memory.get(&a.key).map_err(|e| ToolError::new(e.to_string()))?;
                let pin = if e.pinned { ", pinned" } else { "" };
                Ok(format!("`{}` (updated {}{pin}):\n\n{}", e.key, timestamp(e.updated), e.content))
            }
            MEMORY_SAVE => {
                let a: SaveArgs = parse_args(name, args)?;
                let mut next = self.memory.clone();
                let saved = next
                    .save_as(&self.author, &a.key, &a.content, a.pinned, self.now, &self.quotas)
                    .map_err(|e| ToolError::new(e.to_string()))?;
                self.write(next).await?;
                let what = match saved {
                    Saved::Created => "saved new entry",
                    Saved::Updated => "updated",
                };
                Ok(format!(
                    "{what} `{}` ({} of at most {} in the memory)",
                    a.key,
                    crate::text::count(self.memory.len(), "entry"),
                    self.quotas.max_keys
                ))
            }
            MEMORY_DELETE => {
                let a: KeyArgs = parse_args(name, args)?;
                let mut next = self.memory.clone();
                if !next.delete_as(&self.author, &a.key).map_err(|e| ToolError::new(e.to_string()))? {
                    return Ok(format!("`{}` was not in the memory; nothing to delete", a.key));
                }
                self.write(next).await?;
                Ok(format!("deleted `{}`", a.key))
            }
            other => Err(ToolError::new(format!("unknown memory tool `{other}`"))),
        }
    }

    /// Write `next` as the note's memory, then keep it: on failure the memory stays as it was.
    async fn write(&mut self, next: Memory) -> Result<(), ToolError> {
        let (store, note, copy) = (self.store.clone(), self.note.clone(), next.clone());
        tokio::task::spawn_blocking(move || store.save(&note, &copy))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
            .map_err(|e| ToolError::new(format!("the memory was not saved: {e}")))?;
        self.memory = next;
        Ok(())
    }
}

/// The memory tools' specs.
pub fn specs() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, parameters: Value| ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    };
    let key = json!({"type": "string", "description": "The key: 1-64 characters of a-z, 0-9, `.`, `_`, `-`, like `sources`."});
    vec![
        spec(
            MEMORY_LIST,
            "List this note's memory: facts kept across its runs (key, when updated, a preview), newest first.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
        spec(
            MEMORY_SHOW,
            "Show one memory entry in full.",
            json!({"type": "object", "properties": {"key": key}, "required": ["key"], "additionalProperties": false}),
        ),
        spec(
            MEMORY_SAVE,
            "Save a fact in this note's memory for its later runs (what the note itself should not show: sources that worked, what you already checked). Saving an existing key replaces it. `pinned: true` shows the entry in full in every run's message (not in a run started by an event: such a run cannot pin, nor change a pinned entry).",
            json!({
                "type": "object",
                "properties": {
                    "key": key,
                    "content": {"type": "string", "description": "The fact, short."},
                    "pinned": {"type": "boolean", "description": "Show it in full in every run's message (default: as it was, else false)."}
                },
                "required": ["key", "content"],
                "additionalProperties": false
            }),
        ),
        spec(
            MEMORY_DELETE,
            "Delete a memory entry that no longer holds (deleting an absent key is fine).",
            json!({"type": "object", "properties": {"key": key}, "required": ["key"], "additionalProperties": false}),
        ),
    ]
}
