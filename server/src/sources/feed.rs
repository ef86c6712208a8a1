//! `kind = "feed"`: RSS 0.9x/1.0/2.0, Atom and JSON Feed bytes (through `feed-rs`) as plain
//! entries, each with a stable identity and a version that changes only when the entry does.
//!
//! Decisions worth knowing:
//! - An entry's id is the feed's own (RSS `guid`, Atom `id`, JSON Feed `id`), else its link,
//!   else a hash of its title and date: never feed-rs's fallback, which is a random UUID when an
//!   entry has neither link nor title and would make every poll see it as new.
//! - The version hashes what a reader sees (title, summary, content, link, updated), so a feed
//!   that rewrites its `lastBuildDate` or reorders entries queues nothing, and an entry edited
//!   in place queues a new event.
//! - Markup is turned into text (`text::html`) and every field is bounded: a feed is someone
//!   else's file, and each entry ends up in a model's context.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::sources::version::hash;
use crate::text::html::html_to_text;
use crate::text::short::{clip, one_line};

/// The event type of a feed entry when the source names none.
pub const DEFAULT_TYPE: &str = "feed.entry";
/// How often a feed is polled when the source says nothing: feeds change a few times a day,
/// and a conditional GET that finds nothing new costs a 304.
pub const DEFAULT_EVERY: std::time::Duration = std::time::Duration::from_secs(30 * 60);
/// Entries read from one feed at most (feeds list newest first; older ones were seen before).
pub const MAX_ENTRIES: usize = 500;
/// Characters of an entry's title and of each author.
const MAX_TITLE: usize = 300;
/// Characters of an entry's summary and of its content, as text.
pub const MAX_TEXT: usize = 4_000;
/// Characters of a link (a longer one is no link a person follows).
const MAX_LINK: usize = 2_048;
/// Authors of one entry at most.
const MAX_AUTHORS: usize = 20;

/// A feed as the poller needs it: its title and its newest entries, in the feed's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Feed {
    pub title: Option<String>,
    pub entries: Vec<Entry>,
}

/// One entry, as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub id: String,
    /// The title of the feed the entry came from, for events that mention it.
    pub feed: Option<String>,
    pub title: Option<String>,
    pub link: Option<String>,
    pub published: Option<DateTime<Utc>>,
    pub updated: Option<DateTime<Utc>>,
    /// The summary (RSS `description`, Atom `summary`), else the start of the content.
    pub summary: Option<String>,
    /// The full content (RSS `content:encoded`, Atom `content`) when there is one.
    pub content: Option<String>,
    pub authors: Vec<String>,
}

/// Why bytes are not a feed.
#[derive(Debug, thiserror::Error)]
pub enum FeedError {
    #[error("not a feed (RSS, Atom or JSON Feed): {0}")]
    Malformed(String),
}

/// Parses a feed. `base` (the feed's URL) resolves relative links in XML feeds.
pub fn parse(bytes: &[u8], base: Option<&str>) -> Result<Feed, FeedError> {
    let parser = feed_rs::parser::Builder::new()
        .base_uri(base)
        // Empty means "none": identity is decided below, where the entry's date is known.
        .id_generator(|_, _, _| String::new())
        .build();
    let parsed = parser.parse(bytes).map_err(|e| FeedError::Malformed(one_line(&e.to_string(), 300)))?;
    let title = parsed.title.as_ref().map(|t| clip(&text_of(t), MAX_TITLE)).filter(|t| !t.is_empty());
    let entries = parsed.entries.into_iter().take(MAX_ENTRIES).map(|e| entry(e, title.as_deref())).collect();
    Ok(Feed { title, entries })
}

fn entry(e: feed_rs::model::Entry, feed: Option<&str>) -> Entry {
    let title = e.title.as_ref().map(|t| one_line(&text_of(t), MAX_TITLE)).filter(|t| !t.is_empty());
    let link = e
        .links
        .iter()
        .find(|l| l.rel.as_deref().is_none_or(|r| r == "alternate"))
        .or(e.links.first())
        .map(|l| l.href.trim())
        .filter(|l| !l.is_empty() && l.len() <= MAX_LINK)
        .map(str::to_owned);
    let content = e
        .content
        .as_ref()
        .and_then(|c| c.body.as_deref().map(|body| as_text(body, c.content_type.subty().as_str())))
        .filter(|c| !c.is_empty());
    let summary = e
        .summary
        .as_ref()
        .map(text_of)
        .filter(|s| !s.is_empty())
        .or_else(|| content.clone())
        .map(|s| clip(&s, MAX_TEXT));
    let authors = e
        .authors
        .iter()
        .filter_map(|p| {
            // RSS writes `email (Name)`; feed-rs keeps the parentheses on the name.
            let name = p.name.as_deref().unwrap_or("").trim().trim_start_matches('(').trim_end_matches(')');
            let name = one_line(name, MAX_TITLE);
            match (&p.email, name.is_empty()) {
                (_, false) => Some(name),
                (Some(email), true) => Some(one_line(email, MAX_TITLE)),
                (None, true) => None,
            }
        })
        .take(MAX_AUTHORS)
        .collect();
    let id = match e.id.trim() {
        "" => link.clone().unwrap_or_else(|| {
            let published = e.published.or(e.updated).map(|d| d.to_rfc3339()).unwrap_or_default();
            format!("hash:{}", hash(&[title.as_deref().unwrap_or(""), &published]))
        }),
        id => clip(id, MAX_LINK),
    };
    Entry {
        id,
        feed: feed.map(str::to_owned),
        title,
        link,
        published: e.published.or(e.updated),
        updated: e.updated,
        summary,
        content: content.map(|c| clip(&c, MAX_TEXT)),
        authors,
    }
}

fn text_of(t: &feed_rs::model::Text) -> String {
    as_text(&t.content, t.content_type.subty().as_str())
}

/// Markup as text; other text with its whitespace folded the way HTML would show it.
fn as_text(body: &str, subtype: &str) -> String {
    if subtype.contains("html") {
        html_to_text(body)
    } else {
        body.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    }
    .trim()
    .to_owned()
}

impl Entry {
    /// What changes when a reader would see a change.
    pub fn version(&self) -> String {
        let updated = self.updated.map(|d| d.to_rfc3339()).unwrap_or_default();
        hash(&[
            self.title.as_deref().unwrap_or(""),
            self.summary.as_deref().unwrap_or(""),
            self.content.as_deref().unwrap_or(""),
            self.link.as_deref().unwrap_or(""),
            &updated,
        ])
    }

    /// The entry as a source item (CONTRACT: id, version, summary, payload).
    pub fn to_item(&self) -> (String, String, String, Value) {
        let title = self.title.as_deref().or(self.link.as_deref()).unwrap_or("(untitled)");
        let summary = match &self.feed {
            Some(feed) => one_line(&format!("{feed}: {title}"), 200),
            None => one_line(title, 200),
        };
        let time = |d: &Option<DateTime<Utc>>| d.map(|d| d.to_rfc3339_opts(SecondsFormat::Secs, true));
        let payload = serde_json::json!({
            "feed": self.feed,
            "id": self.id,
            "title": self.title,
            "link": self.link,
            "published": time(&self.published),
            "updated": time(&self.updated),
            "summary": self.summary,
            "content": self.content,
            "authors": self.authors,
        });
        (self.id.clone(), self.version(), summary, payload)
    }
}

#[cfg(test)]
#[path = "feed_tests.rs"]
mod tests;
