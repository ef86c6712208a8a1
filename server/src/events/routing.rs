//! Pass 1: which notes an event may concern: the eligible notes, and a [`Router`] (the routing
//! model in batches, or keywords) that picks among them.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::model;
use crate::model::{BoxFuture, Message, ModelClient, Request};
use crate::runs::one_line;
use crate::schedule::Zone;
use crate::workspace::index::Index;

use super::*;

// ---------------------------------------------------------------------------------------------
// Notes that take events

/// A live note that events may update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventNote {
    pub path: PathBuf,
    /// Workspace-relative, `/`-separated: what routing sees and `done/` records.
    pub rel: String,
    pub objective: String,
    /// `eventMatchCriteria`.
    pub criteria: String,
    /// `live.sources`: the event sources the note takes; `None`, every source.
    pub sources: Option<Vec<String>>,
}

/// Where a processor finds the notes, asked again for every event (notes change meanwhile).
pub type NotesFn = Arc<dyn Fn() -> Vec<EventNote> + Send + Sync>;

/// The event-eligible notes of the workspace at `root` at `now`: active, not expired, without
/// errors in `live:`, with non-empty `eventMatchCriteria`. In path order.
pub fn eligible_notes(root: &Path, index: &Index, now: DateTime<Utc>, zone: &Zone) -> Vec<EventNote> {
    index
        .live_notes()
        .filter(|(p, _, live)| {
            live.active
                && !live.has_errors
                && !live.expired(now, zone)
                && index.root_of(p) == Some(root)
                && !crate::note::conflict::is_conflict_copy(p)
        })
        .filter_map(|(p, _, live)| {
            let criteria = live.event_match_criteria.as_deref().map(str::trim).filter(|c| !c.is_empty())?;
            let rel = crate::workspace::NotePath::of_or_whole(root, p).into_string();
            Some(EventNote {
                path: p.clone(),
                rel,
                objective: live.objective.clone().unwrap_or_default(),
                criteria: criteria.to_owned(),
                sources: live.source_names(),
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Pass 1: routing

/// Picks, among a batch of notes, those an event might concern. Returns note paths as given
/// in the batch; the processor drops any path that is not in it.
pub trait Router: Send + Sync {
    fn route<'a>(
        &'a self,
        event: &'a Event,
        batch: &'a [EventNote],
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<String>, String>>;
}

/// The routing model's instructions.
pub const ROUTING_SYSTEM_PROMPT: &str = "\
You sort incoming events for a notes app. Some notes are live: an agent keeps each one up to \
date, and each says in its event match criteria which events should update it.

You get one event and a list of live notes, each with its path, objective and criteria. \
Return the path of every note whose criteria the event could plausibly meet. Lean towards \
including a note: a later step reads the event in full against that note and may still leave \
it alone, while a note you leave out never hears of the event. Leave out notes the event \
clearly has nothing to do with.

Use only paths from the list, spelled exactly as given. Answer with one JSON object and \
nothing else: {\"filePaths\": [\"path/one.md\", \"path/two.md\"]}, or {\"filePaths\": []} \
when no note fits.";

/// The routing model's user message: the event, then the batch of notes.
pub fn routing_prompt(event: &Event, batch: &[EventNote]) -> String {
    let mut s = String::from("## Event\n\n");
    s.push_str(&format!(
        "- source: {}\n- type: {}\n- createdAt: {}\n\n",
        event.source, event.kind, event.created_at
    ));
    s.push_str(&truncate_chars(&event.payload_text(), MAX_ROUTING_PAYLOAD_CHARS));
    s.push_str("\n\n## Live notes\n");
    for n in batch {
        s.push_str(&format!(
            "\n- filePath: {}\n  objective: {}\n  eventMatchCriteria: {}\n",
            n.rel,
            one_line(&n.objective, 400),
            one_line(&n.criteria, 400)
        ));
    }
    s
}

/// Read the routing model's reply: `{"filePaths": [...]}`. A code fence or a sentence around
/// the object is tolerated (some models add one despite JSON mode); anything else is an error.
pub fn parse_routing_output(text: &str) -> Result<Vec<String>, String> {
    let t = text.trim();
    let object = match (t.find('{'), t.rfind('}')) {
        (Some(a), Some(b)) if a < b => &t[a..=b],
        _ => return Err(format!("the routing reply is not a JSON object: {}", one_line(t, 120))),
    };
    let v: Value =
        serde_json::from_str(object).map_err(|e| format!("the routing reply is not valid JSON: {e}"))?;
    let list = v
        .get("filePaths")
        .and_then(Value::as_array)
        .ok_or_else(|| "the routing reply has no `filePaths` list".to_owned())?;
    list.iter()
        .map(|p| p.as_str().map(str::to_owned).ok_or_else(|| format!("`filePaths` holds a non-string: {p}")))
        .collect()
}

/// Routing by a model through structured JSON output.
pub struct ModelRouter {
    pub client: Arc<dyn ModelClient>,
    pub max_tokens: u32,
}

impl ModelRouter {
    pub fn new(client: Arc<dyn ModelClient>) -> Self {
        // Twenty paths fit easily; the bound only stops a model that rambles.
        ModelRouter { client, max_tokens: 1024 }
    }
}

impl Router for ModelRouter {
    fn route<'a>(
        &'a self,
        event: &'a Event,
        batch: &'a [EventNote],
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<String>, String>> {
        Box::pin(async move {
            let messages = [Message::user(routing_prompt(event, batch))];
            let req = Request {
                system: ROUTING_SYSTEM_PROMPT,
                messages: &messages,
                tools: &[],
                max_tokens: self.max_tokens,
                json: true,
            };
            let turn = self.client.complete(req, cancel).await.map_err(|e| e.to_string())?;
            parse_routing_output(&turn.text)
        })
    }
}

/// Routing without a model: a note is a candidate when a significant word of its criteria
/// (or a word with the same stem) appears in the event's source, type or payload. Liberal on
/// purpose, like the model: the event run's own decision (pass 2) weeds out false positives.
/// Used when no `openai`/`anthropic` model client is available for routing.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeywordRouter;

pub(super) const STOPWORDS: &[&str] = &[
    "about",
    "after",
    "all",
    "also",
    "and",
    "any",
    "anything",
    "are",
    "before",
    "but",
    "can",
    "event",
    "events",
    "for",
    "from",
    "has",
    "have",
    "info",
    "information",
    "into",
    "its",
    "mention",
    "mentions",
    "new",
    "news",
    "not",
    "note",
    "notes",
    "our",
    "regarding",
    "related",
    "some",
    "something",
    "that",
    "the",
    "their",
    "them",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "update",
    "updates",
    "was",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "with",
    "you",
    "your",
];

/// Lower-case word stems worth matching on.
pub(super) fn keywords(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| {
            w.chars().count() >= 3 || (w.chars().count() == 2 && w.chars().any(|c| c.is_ascii_digit()))
        })
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// A crude English stem, enough to match "emails" with "email" and "planning" with "plan".
pub(super) fn stem(w: &str) -> String {
    // "boxes" → "box", but "offsites" → "offsite": `es` is a suffix only after a sibilant.
    if let Some(s) = w.strip_suffix("es")
        && ["s", "x", "z", "ch", "sh"].iter().any(|e| s.ends_with(e))
    {
        return s.to_owned();
    }
    for suffix in ["ing", "ies", "ed", "s"] {
        if let Some(s) = w.strip_suffix(suffix)
            && s.chars().count() >= 3
        {
            let s = if suffix == "ies" { format!("{s}y") } else { s.to_owned() };
            // "planning" → "plann" → "plan": undo a doubled final consonant.
            let mut c = s.chars().rev();
            return match (c.next(), c.next()) {
                (Some(a), Some(b)) if a == b && !"aeiou".contains(a) && s.chars().count() > 3 => {
                    s[..s.len() - a.len_utf8()].to_owned()
                }
                _ => s,
            };
        }
    }
    w.to_owned()
}

impl KeywordRouter {
    pub fn matches(event: &Event, note: &EventNote) -> bool {
        let text = format!("{} {} {}", event.source, event.kind, event.payload_text());
        let event_words = keywords(&text);
        keywords(&note.criteria).iter().any(|c| event_words.iter().any(|e| related(c, e)))
    }
}

/// Equal stems, or one a prefix of the other ("creat" and "create"); short stems must be
/// equal, or "pla" would match everything.
pub(super) fn related(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.chars().count() >= 4 && long.starts_with(short))
}

impl Router for KeywordRouter {
    fn route<'a>(
        &'a self,
        event: &'a Event,
        batch: &'a [EventNote],
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<String>, String>> {
        Box::pin(async move {
            Ok(batch.iter().filter(|n| Self::matches(event, n)).map(|n| n.rel.clone()).collect())
        })
    }
}

/// The router for a workspace: the routing model is the default provider's (`[agent]
/// provider`, else the only configured one, else the environment's), since one event is
/// routed across notes that may each name their own provider. With no such `openai` or
/// `anthropic` provider (a `command` provider, none at all, or a missing key), events are
/// routed by [`KeywordRouter`]. Events with `targetFilePath` never need a router.
pub fn router_for(config: &Config) -> Arc<dyn Router> {
    match model_client(config) {
        Ok(client) => Arc::new(ModelRouter::new(client)),
        Err(why) => {
            tracing::info!("routing events by keyword overlap: {why}");
            Arc::new(KeywordRouter)
        }
    }
}

/// A client for the default provider's model, or why there is none.
pub(super) fn model_client(config: &Config) -> Result<Arc<dyn ModelClient>, String> {
    model::default_client(config, "route events")
}
