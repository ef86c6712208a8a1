//! A note's agent memory: a small key/value store the agent keeps across runs (`memory_list`,
//! `memory_show`, `memory_save`, `memory_delete`), a `command` provider's `"memory"` answer,
//! and `livenote memory` all change through here, so the rules are the same everywhere.
//!
//! - Keys match `^[a-z0-9][a-z0-9._-]{0,63}$`.
//! - Quotas live in one place (`[memory] max_keys`, `max_bytes`, [`MemoryConfig`]): a new key
//!   past `max_keys` is refused, updating an existing key never is; content over `max_bytes`
//!   is refused. Deleting an absent key succeeds (idempotent); showing one is an error that
//!   names the keys there are.
//! - The run message carries [`section`]: a table newest first, pinned entries in full.
//! - Outside input writes no lasting rules (issue 32): a run started by an event ([`Author::
//!   Outside`]) may save and delete unpinned entries, each saved one marked with its origin,
//!   but cannot pin an entry, nor change, unpin or delete a pinned one: a pinned entry is read
//!   in full by every later run, and an event's text is anyone's.
//!
//! This file is pure (entries in, entries or text out, the time given); `store.rs` keeps one
//! JSON file per note under `.livenote/memory/`.
//!
//! Dependencies: `config` (the quotas), `text`, `workspace` (store.rs only); nothing above.

pub mod store;

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

pub use crate::config::MemoryConfig;

/// The longest key: 64 characters.
pub const MAX_KEY_LEN: usize = 64;
/// Characters of an entry's preview in the table.
const PREVIEW_CHARS: usize = 80;

/// One remembered fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub key: String,
    pub content: String,
    /// Shown in full in every run's message, not only as a preview.
    #[serde(default)]
    pub pinned: bool,
    /// When it was last saved (RFC 3339 in the file).
    pub updated: DateTime<Utc>,
    /// Set when a run fed from outside saved it (`event run <run id>`): later runs see where it
    /// came from. Cleared when the note's own run or its user saves the key again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// Who changes a memory, for what they may change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Author {
    /// The note's own runs (scheduled, manual) and its user.
    Own,
    /// A run whose input came from outside (an event, from a source or `livenote event`): its
    /// entries are marked with this origin, and pinned ones are out of its reach.
    Outside(String),
}

/// Why a memory change was refused; the text is what the model (or the user) reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    #[error(
        "invalid memory key `{0}`: a key is 1-64 characters of a-z, 0-9, `.`, `_` and `-`, starting with a letter or digit (like `sources` or `last-check.date`)"
    )]
    InvalidKey(String),
    #[error(
        "the content of `{key}` has {bytes} bytes, over the limit of {max} ([memory] max_bytes); save something shorter"
    )]
    TooLarge { key: String, bytes: usize, max: usize },
    #[error(
        "the memory is full ({max} keys, [memory] max_keys): `{key}` is not saved; delete an entry you no longer need, or update an existing key"
    )]
    TooMany { key: String, max: usize },
    #[error("no memory entry `{key}`{}", known_keys(.known))]
    NotFound { key: String, known: Vec<String> },
    #[error(
        "`{key}` is not saved: this run was started by an event, and an event's text never pins memory or changes a pinned entry (pinned entries are read in full by every later run); save it unpinned under another key if it matters"
    )]
    PinnedFromOutside { key: String },
}

fn known_keys(known: &[String]) -> String {
    if known.is_empty() {
        " (the memory is empty)".to_owned()
    } else {
        format!(" (the keys are: {})", known.join(", "))
    }
}

/// Whether `key` is a valid memory key: `^[a-z0-9][a-z0-9._-]{0,63}$`.
pub fn is_valid_key(key: &str) -> bool {
    let b = key.as_bytes();
    let first = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && b.len() <= MAX_KEY_LEN
        && b.first().is_some_and(first)
        && b.iter().all(|c| first(c) || matches!(c, b'.' | b'_' | b'-'))
}

/// `key` checked.
pub fn check_key(key: &str) -> Result<(), MemoryError> {
    if is_valid_key(key) { Ok(()) } else { Err(MemoryError::InvalidKey(key.to_owned())) }
}

/// What a save did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    Created,
    Updated,
}

/// A note's memory: entries by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Memory {
    entries: BTreeMap<String, Entry>,
}

impl Memory {
    /// From stored entries (a later duplicate key wins); keys are checked by the caller.
    pub fn from_entries(entries: impl IntoIterator<Item = Entry>) -> Memory {
        Memory { entries: entries.into_iter().map(|e| (e.key.clone(), e)).collect() }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries by key.
    pub fn by_key(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// Entries newest first (then by key), as the model and `livenote memory` list them:
    /// touching an entry is the sign that it still matters.
    pub fn newest_first(&self) -> Vec<&Entry> {
        let mut v: Vec<&Entry> = self.entries.values().collect();
        v.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.key.cmp(&b.key)));
        v
    }

    pub fn keys(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    /// One entry, or an error naming the keys there are.
    pub fn get(&self, key: &str) -> Result<&Entry, MemoryError> {
        check_key(key)?;
        self.entries.get(key).ok_or_else(|| MemoryError::NotFound { key: key.to_owned(), known: self.keys() })
    }

    /// Insert or update `key` as the note's own run or its user. `pinned`: `None` keeps an
    /// existing entry's flag (false for a new one). Updating an existing key is exempt from the
    /// count cap.
    pub fn save(
        &mut self,
        key: &str,
        content: &str,
        pinned: Option<bool>,
        now: DateTime<Utc>,
        quotas: &MemoryConfig,
    ) -> Result<Saved, MemoryError> {
        self.save_as(&Author::Own, key, content, pinned, now, quotas)
    }

    /// [`Memory::save`] by `author`: from outside, never pinned and never over a pinned entry,
    /// and marked with its origin.
    pub fn save_as(
        &mut self,
        author: &Author,
        key: &str,
        content: &str,
        pinned: Option<bool>,
        now: DateTime<Utc>,
        quotas: &MemoryConfig,
    ) -> Result<Saved, MemoryError> {
        check_key(key)?;
        let origin = match author {
            Author::Own => None,
            Author::Outside(origin) => {
                if pinned == Some(true) || self.entries.get(key).is_some_and(|e| e.pinned) {
                    return Err(MemoryError::PinnedFromOutside { key: key.to_owned() });
                }
                Some(origin.clone())
            }
        };
        if content.len() > quotas.max_bytes {
            return Err(MemoryError::TooLarge {
                key: key.to_owned(),
                bytes: content.len(),
                max: quotas.max_bytes,
            });
        }
        let existing = self.entries.get(key);
        if existing.is_none() && self.entries.len() >= quotas.max_keys {
            return Err(MemoryError::TooMany { key: key.to_owned(), max: quotas.max_keys });
        }
        let saved = if existing.is_some() { Saved::Updated } else { Saved::Created };
        let pinned = pinned.unwrap_or_else(|| existing.is_some_and(|e| e.pinned));
        self.entries.insert(
            key.to_owned(),
            Entry { key: key.to_owned(), content: content.to_owned(), pinned, updated: now, origin },
        );
        Ok(saved)
    }

    /// The memory as `quotas` allow it, and what was left out (`None`: nothing). A memory file can
    /// come with a cloned folder or predate a lowered quota, so a run applies the quotas when
    /// it reads, not only when it saves: entries over `max_bytes` are left out, then, past
    /// `max_keys`, pinned entries are kept before others and newer ones before older.
    pub fn within(&self, quotas: &MemoryConfig) -> (Memory, Option<String>) {
        let (fit, too_large): (Vec<&Entry>, Vec<&Entry>) =
            self.newest_first().into_iter().partition(|e| e.content.len() <= quotas.max_bytes);
        let (mut pinned, others): (Vec<&Entry>, Vec<&Entry>) = fit.into_iter().partition(|e| e.pinned);
        pinned.extend(others);
        let past_count = pinned.split_off(pinned.len().min(quotas.max_keys));
        if too_large.is_empty() && past_count.is_empty() {
            return (self.clone(), None);
        }
        let names = |v: &[&Entry]| {
            let mut s = v.iter().take(5).map(|e| format!("`{}`", e.key)).collect::<Vec<_>>().join(", ");
            if v.len() > 5 {
                s.push_str(&format!(" and {} more", v.len() - 5));
            }
            s
        };
        let mut parts = Vec::new();
        if !too_large.is_empty() {
            parts.push(format!(
                "{} over {} ([memory] max_bytes): {}",
                crate::text::count(too_large.len(), "entry"),
                crate::text::count::bytes(quotas.max_bytes as u64),
                names(&too_large)
            ));
        }
        if !past_count.is_empty() {
            parts.push(format!(
                "{} past the first {} ([memory] max_keys): {}",
                crate::text::count(past_count.len(), "entry"),
                quotas.max_keys,
                names(&past_count)
            ));
        }
        let kept = Memory::from_entries(pinned.into_iter().cloned());
        (kept, Some(format!("left out {}", parts.join("; "))))
    }

    /// Remove `key`; whether it was there. Deleting an absent key is no error.
    pub fn delete(&mut self, key: &str) -> Result<bool, MemoryError> {
        self.delete_as(&Author::Own, key)
    }

    /// [`Memory::delete`] by `author`: from outside, never a pinned entry.
    pub fn delete_as(&mut self, author: &Author, key: &str) -> Result<bool, MemoryError> {
        check_key(key)?;
        if matches!(author, Author::Outside(_)) && self.entries.get(key).is_some_and(|e| e.pinned) {
            return Err(MemoryError::PinnedFromOutside { key: key.to_owned() });
        }
        Ok(self.entries.remove(key).is_some())
    }

    /// Apply a `command` provider's `"memory"` object (`"key": "content"` sets, `null`
    /// deletes) entry by entry: each is checked like a tool call; what was refused comes back
    /// with why, the rest is applied. Pinned flags of updated entries are kept.
    pub fn apply_changes(
        &mut self,
        author: &Author,
        changes: &serde_json::Map<String, serde_json::Value>,
        now: DateTime<Utc>,
        quotas: &MemoryConfig,
    ) -> Vec<String> {
        let mut refused = Vec::new();
        for (key, value) in changes {
            let r = match value {
                serde_json::Value::Null => self.delete_as(author, key).map(|_| ()),
                serde_json::Value::String(s) => self.save_as(author, key, s, None, now, quotas).map(|_| ()),
                other => {
                    refused.push(format!(
                        "`{key}`: the value must be a string (to save) or null (to delete), not {}",
                        json_kind(other)
                    ));
                    continue;
                }
            };
            if let Err(e) = r {
                refused.push(e.to_string());
            }
        }
        refused
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The instant as the file and the table show it: RFC 3339, UTC, seconds.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// An entry's content on one line, short, with `|` escaped so a table cell stays one cell.
pub fn preview(content: &str) -> String {
    crate::text::short::one_line(content, PREVIEW_CHARS).replace('|', "\\|")
}

/// The `## Memory` section of a run's message: a table (key, updated, preview) newest first,
/// then each pinned entry in full; says so when the memory is empty.
pub fn section(memory: &Memory, quotas: &MemoryConfig) -> String {
    let mut s = String::from("## Memory\n\n");
    let limits = format!(
        "at most {} of up to {} each",
        crate::text::count(quotas.max_keys, "entry"),
        crate::text::count::bytes(quotas.max_bytes as u64)
    );
    if memory.is_empty() {
        s.push_str(&format!(
            "Your memory for this note is empty. memory_save keeps a fact for this note's later runs \
             ({limits}); use it for what the note itself should not show (sources that worked, what \
             you already checked)."
        ));
        return s;
    }
    s.push_str(&format!(
        "What you saved in earlier runs of this note ({}, newest first; {limits}). memory_show reads \
         an entry in full; memory_save and memory_delete change them.\n\n",
        crate::text::count(memory.len(), "entry")
    ));
    s.push_str("| Key | Updated | Preview |\n|-----|---------|---------|\n");
    let entries = memory.newest_first();
    for e in &entries {
        let pin = if e.pinned { " (pinned)" } else { "" };
        // An entry an event's run saved says so: what an outside message led to, not a finding.
        let from = if e.origin.is_some() { " (saved by an event run)" } else { "" };
        s.push_str(&format!(
            "| `{}`{pin}{from} | {} | {} |\n",
            e.key,
            timestamp(e.updated),
            preview(&e.content)
        ));
    }
    for e in entries.iter().filter(|e| e.pinned) {
        s.push_str(&format!("\n### `{}` (pinned)\n\n{}\n", e.key, e.content.trim_end()));
    }
    s.truncate(s.trim_end().len());
    s
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
