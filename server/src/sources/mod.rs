//! Sources (SPEC "Sources"): producers of events configured under `[sources.NAME]` — feeds,
//! calendars, mailboxes, webhooks, programs — each turning what is new into events of the
//! queue (`events::queue::create_event`), which the usual two-pass routing delivers.
//!
//! An edge module (it runs programs, listens, keeps what each source has seen in the user's
//! data folder): `state.rs` (what each source has seen, its lock), `poller.rs` (one poll, and
//! the loop that polls each source when due inside a root's service), `command.rs` (a program printing JSON
//! lines), `webhook.rs` (an HTTP listener), `imap.rs` (a mailbox over IMAP), `idle.rs`
//! (a kept IMAP connection that waits with IDLE and asks the poller for a poll), `fetch.rs`, `feed.rs`, `ics.rs` (feeds and
//! calendars over HTTP or from a file), `version.rs` (the stable hash of an item's version).

pub mod command;
pub mod feed;
pub mod fetch;
pub mod ics;
pub mod idle;
pub mod imap;
pub mod poller;
pub mod state;
pub mod version;
pub mod webhook;

use serde_json::Value;

/// One thing a source saw. `id` is stable across polls (entry id/link, UIDVALIDITY:UID,
/// `digest:<local date>`); `version` changes when the item changed (a hash of its content),
/// so an edited item is a new event only when it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: String,
    pub version: String,
    /// One line for `livenote sources poll` and the log.
    pub summary: String,
    pub payload: Value,
    /// The event type when the item names its own (a command's line); else the source's.
    pub kind: Option<String>,
}

impl Item {
    /// An item from the `(id, version, summary, payload)` a kind's `to_item` returns.
    pub fn from_parts((id, version, summary, payload): (String, String, String, Value)) -> Item {
        Item { id, version, summary, payload, kind: None }
    }
}

/// The version of an item that has none of its own: the digest of its JSON.
pub fn version_of(payload: &Value) -> String {
    let text = serde_json::to_string(payload).unwrap_or_default();
    crate::workspace::trust::digest_bytes(text.as_bytes())
}
