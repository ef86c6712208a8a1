//! Events (SPEC section 5): a file queue under `<workspace>/.livenote/events/` that any
//! program can feed, consumed strictly in id order and exactly once across processes.
//!
//! Layout: `pending/<id>.json` (dropped by producers, written atomically by
//! [`create_event`]), `processing/<id>.json` (claimed by one processor), `done/<id>.json`
//! (the event enriched with `processedAt`, `candidateFilePaths`, `runIds`, `error`).
//!
//! Exactly once: a processor first takes the queue lock (`events/.lock`, an advisory file lock
//! that the OS releases if the process dies), so one process at a time walks the queue and
//! the order holds across processes. It then claims each event by renaming it from `pending/`
//! into `processing/`: the rename is atomic, and a loser gets "not found" and moves on, which
//! keeps events exactly once even where file locks do not work. The claim is locked while it
//! is processed; an unlocked claim found later belongs to a processor that crashed and goes
//! back to `pending/` (on file systems without locks, once it is older than
//! [`STALE_CLAIM`]). A crash mid-event therefore replays that event: at least once for
//! crashes, exactly once otherwise.
//!
//! Pass 1 picks candidates among active, valid live notes with `eventMatchCriteria`: the note
//! named by `targetFilePath`, or whatever a [`Router`] picks in batches of [`BATCH_SIZE`].
//! Pass 2 is the agent's own decision in an `event` run of each candidate, in order, through
//! an [`EventRunner`] (the run engine in production).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ProcessEnv};
use crate::model::http::HttpOptions;
use crate::model::{self, ModelError};
use crate::model::{BoxFuture, Message, ModelClient, Request};
use crate::providers::{RunEvent, TriggerKind};
use crate::runs::{Engine, Outcome, RunSpec, one_line, timestamp};
use crate::scheduler::log_outcome;
use crate::workspace::index::Index;
use crate::workspace::write::write_atomic;

/// Notes per routing request: enough to route a large workspace in a few calls, small enough
/// for a short prompt that a small model still reads carefully.
pub const BATCH_SIZE: usize = 20;
/// The largest payload `livenote event` and [`create_event`] accept.
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;
/// Event files larger than this are not parsed; they go to `done/` as malformed.
pub const MAX_EVENT_FILE_BYTES: usize = 4 * 1024 * 1024;
/// Where file locks do not work, a claim this old is taken for a crashed processor's.
pub const STALE_CLAIM: Duration = Duration::from_secs(10 * 60);
/// How much of the payload a run's context carries (the agent can read files for more).
const MAX_CONTEXT_PAYLOAD_CHARS: usize = 100_000;
/// How much of the payload the routing model sees: enough to tell what the event is about.
const MAX_ROUTING_PAYLOAD_CHARS: usize = 6_000;
/// How much of a malformed file's text `done/` keeps under `raw`.
const MAX_RAW_CHARS: usize = 64 * 1024;

/// One event, as producers write it. Keys this struct does not know are kept in `extra` and
/// written back to `done/` unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub id: String,
    /// Who produced it (`gmail`, `calendar`, `cli`, ...).
    pub source: String,
    /// What happened (`email.synced`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// RFC 3339.
    pub created_at: String,
    /// A string (markdown, plain text) or any JSON value.
    pub payload: Value,
    /// A workspace-relative note path: skip routing and offer the event to that note alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_file_path: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Event {
    /// The payload as text: a string as it is, other JSON pretty-printed.
    pub fn payload_text(&self) -> String {
        match &self.payload {
            Value::String(s) => s.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        }
    }
}

/// Read and check one event file's text.
pub fn parse_event(text: &str) -> Result<Event, String> {
    let event: Event = serde_json::from_str(text).map_err(|e| format!("invalid event: {e}"))?;
    let blank = |s: &str| s.trim().is_empty();
    if blank(&event.id) {
        return Err("invalid event: `id` is empty".to_owned());
    }
    if blank(&event.source) {
        return Err("invalid event: `source` is empty".to_owned());
    }
    if blank(&event.kind) {
        return Err("invalid event: `type` is empty".to_owned());
    }
    if blank(&event.created_at) {
        return Err("invalid event: `createdAt` is empty".to_owned());
    }
    if event.payload.is_null() {
        return Err("invalid event: `payload` is null".to_owned());
    }
    Ok(event)
}

#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The caller's input cannot make an event.
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> EventError + '_ {
    move |source| EventError::Io { path: path.display().to_string(), source }
}

// ---------------------------------------------------------------------------------------------
// The queue's folders

/// `<root>/.livenote/events`.
pub fn events_dir(root: &Path) -> PathBuf {
    root.join(".livenote").join("events")
}

pub fn pending_dir(root: &Path) -> PathBuf {
    events_dir(root).join("pending")
}

pub fn processing_dir(root: &Path) -> PathBuf {
    events_dir(root).join("processing")
}

pub fn done_dir(root: &Path) -> PathBuf {
    events_dir(root).join("done")
}

/// Create the queue's folders (and `.livenote/.gitignore`, as the run store does), each a
/// real folder: a linked `.livenote`, `events` or `pending/` is refused, never written through.
pub fn ensure_dirs(root: &Path) -> std::io::Result<()> {
    for sub in ["events/pending", "events/processing", "events/done"] {
        crate::runs::store::state_dir(root, sub)?;
    }
    Ok(())
}

/// `.livenote/events/<sub>` when it is a real folder (no link on the way); `None` otherwise.
fn real_queue_dir(root: &Path, sub: &str) -> Option<PathBuf> {
    crate::workspace::confine::real_dir(root, &Path::new(".livenote/events").join(sub), false).ok()
}

/// Open an event file of the queue: never through a link, only a regular file, never
/// blocking on a FIFO.
fn open_event(path: &Path, opts: &mut OpenOptions) -> std::io::Result<File> {
    crate::workspace::confine::open_nofollow(path, opts)
}

/// Whether a changed path is an event file in `pending/` (for file watchers).
pub fn is_pending_path(root: &Path, path: &Path) -> bool {
    path.parent() == Some(pending_dir(root).as_path()) && is_event_file(path)
}

/// `<name>.json`, not hidden: temp files and editors' swap files are never events.
fn is_event_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    !name.starts_with('.') && name.len() > ".json".len() && name.ends_with(".json")
}

/// The event files (regular files only: a link or FIFO is left where it is) of a queue
/// folder, sorted by name: ids are time-based, so this is id order. None when the folder is
/// absent or a link.
fn event_files(root: &Path, sub: &str) -> Vec<PathBuf> {
    let Some(dir) = real_queue_dir(root, sub) else { return Vec::new() };
    crate::workspace::confine::regular_files(&dir).into_iter().filter(|p| is_event_file(p)).collect()
}

/// Pending events, oldest first.
pub fn pending_events(root: &Path) -> Vec<PathBuf> {
    event_files(root, "pending")
}

/// The `done/` record of an event, if processed.
pub fn read_done(root: &Path, id: &str) -> Option<Value> {
    // An id names a file in `done/`, never a path elsewhere.
    if id.is_empty() || id.starts_with('.') || id.contains(['/', '\\']) {
        return None;
    }
    let dir = real_queue_dir(root, "done")?;
    let path = dir.join(format!("{id}.json"));
    let mut text = String::new();
    open_event(&path, OpenOptions::new().read(true)).ok()?.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

fn id_of(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Producing

/// One generator per process, so ids created in the same millisecond still sort in creation
/// order.
static IDS: Mutex<ulid::Generator> = Mutex::new(ulid::Generator::new());

/// A new sortable, time-based id (a ULID).
pub fn new_id() -> String {
    let mut g = IDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // The generator fails only after 2^80 ids in one millisecond; a plain ULID is fine then.
    g.generate().unwrap_or_else(|_| ulid::Ulid::new()).to_string()
}

/// Queue an event: written to a temp file in `events/`, then renamed into `pending/`, so a
/// watcher never sees half a file. `target` is a workspace-relative note path.
pub fn create_event(
    root: &Path,
    source: &str,
    kind: &str,
    payload: Value,
    target: Option<&str>,
) -> Result<Event, EventError> {
    let source = source.trim();
    let kind = kind.trim();
    if source.is_empty() || kind.is_empty() {
        return Err(EventError::Invalid("an event needs a non-empty source and type".to_owned()));
    }
    if payload.is_null() {
        return Err(EventError::Invalid("an event needs a payload".to_owned()));
    }
    let size = match &payload {
        Value::String(s) => s.len(),
        other => serde_json::to_string(other).map(|s| s.len()).unwrap_or(usize::MAX),
    };
    if size > MAX_PAYLOAD_BYTES {
        return Err(EventError::Invalid(format!(
            "payload larger than {} MiB",
            MAX_PAYLOAD_BYTES / (1024 * 1024)
        )));
    }
    let target = target.map(|t| normalize_target(root, t)).filter(|t| !t.is_empty());
    let event = Event {
        id: new_id(),
        source: source.to_owned(),
        kind: kind.to_owned(),
        created_at: timestamp(Utc::now()),
        payload,
        target_file_path: target,
        extra: Map::new(),
    };
    let text = serde_json::to_string_pretty(&event)
        .map_err(|e| EventError::Invalid(format!("cannot encode the event: {e}")))?;
    let dir = events_dir(root);
    ensure_dirs(root).map_err(io_err(&dir))?;
    let dest = pending_dir(root).join(format!("{}.json", event.id));
    let mut tmp =
        tempfile::Builder::new().prefix(".event-").suffix(".tmp").tempfile_in(&dir).map_err(io_err(&dir))?;
    tmp.write_all(text.as_bytes()).map_err(io_err(&dest))?;
    tmp.write_all(b"\n").map_err(io_err(&dest))?;
    tmp.as_file().sync_all().map_err(io_err(&dest))?;
    // No clobber: an id is never reused, even if two processes raced to the same one.
    tmp.persist_noclobber(&dest)
        .map_err(|e| EventError::Io { path: dest.display().to_string(), source: e.error })?;
    if let Ok(d) = File::open(pending_dir(root)) {
        let _ = d.sync_all();
    }
    Ok(event)
}

/// A note path as the queue stores it: workspace-relative, without a leading `./`.
pub fn normalize_target(root: &Path, target: &str) -> String {
    let t = target.trim();
    let p = Path::new(t);
    let rel = if p.is_absolute() { p.strip_prefix(root).unwrap_or(p) } else { p };
    let s = rel.to_string_lossy().replace('\\', "/");
    let mut s = s.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    s.to_owned()
}

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
}

/// Where a processor finds the notes, asked again for every event (notes change meanwhile).
pub type NotesFn = Arc<dyn Fn() -> Vec<EventNote> + Send + Sync>;

/// The event-eligible notes of the workspace at `root`: active, without errors in `live:`,
/// with non-empty `eventMatchCriteria`. In path order.
pub fn eligible_notes(root: &Path, index: &Index) -> Vec<EventNote> {
    index
        .live_notes()
        .filter(|(p, _, live)| live.active && !live.has_errors && p.starts_with(root))
        .filter_map(|(p, _, live)| {
            let criteria = live.event_match_criteria.as_deref().map(str::trim).filter(|c| !c.is_empty())?;
            let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/");
            Some(EventNote {
                path: p.clone(),
                rel,
                objective: live.objective.clone().unwrap_or_default(),
                criteria: criteria.to_owned(),
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

const STOPWORDS: &[&str] = &[
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
fn keywords(text: &str) -> HashSet<String> {
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
fn stem(w: &str) -> String {
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
fn related(a: &str, b: &str) -> bool {
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
fn model_client(config: &Config) -> Result<Arc<dyn ModelClient>, String> {
    let (name, provider) = config.resolve_provider(None).map_err(|e| e.to_string())?;
    match model::client_for(&provider, None, &ProcessEnv, HttpOptions::default()) {
        Ok(client) => Ok(Arc::from(client)),
        Err(ModelError::NotAModel) => Err(format!("provider `{name}` is a command, not a model")),
        Err(e) => Err(format!("provider `{name}`: {e}")),
    }
}

// ---------------------------------------------------------------------------------------------
// Pass 2: event runs

/// Runs one candidate note for an event.
pub trait EventRunner: Send + Sync {
    /// Events are processed only when notes may run on their own: a trusted workspace with
    /// scheduling enabled. Until then they wait in `pending/`.
    fn trusted(&self) -> bool;
    /// For `processedAt`.
    fn now(&self) -> DateTime<Utc>;
    fn run<'a>(
        &'a self,
        note: &'a EventNote,
        context: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Outcome>;
    /// How many processed events `done/` keeps (`[history] events_keep`); `None`: no pruning.
    fn done_keep(&self) -> Option<usize> {
        None
    }
}

/// What an event run is told: the note's criteria, the event and its payload, and that it
/// should leave the note alone unless the event really matters (pass 2).
pub fn run_context(event: &Event, criteria: &str) -> String {
    format!(
        "This run was triggered by an incoming event that a quick first pass picked as possibly \
relevant to this note.\n\n\
**Event match criteria of this note:** {criteria}\n\n\
**Event:** source `{}`, type `{}`, id `{}`, created {}\n\n\
**Payload:**\n\n{}\n\n\
First decide whether this event genuinely matters for the note's objective and its criteria. \
If it does not, leave the note unchanged and say so in one sentence. If it does, integrate what \
is new with small edits.",
        event.source,
        event.kind,
        event.id,
        event.created_at,
        truncate_chars(&event.payload_text(), MAX_CONTEXT_PAYLOAD_CHARS)
    )
}

/// Event runs through the run engine: `trigger: event`, backoff ignored, trust required.
pub struct EngineRunner {
    pub engine: Arc<Engine>,
    /// How long to wait for a run of the same note (cron, manual, another process) to end
    /// before giving the event up for that note: an event should not be lost to a busy note.
    pub wait_busy: Duration,
}

impl EngineRunner {
    pub fn new(engine: Arc<Engine>) -> Self {
        let timeout = engine.config.read().map(|c| c.agent.timeout).unwrap_or(Duration::from_secs(600));
        EngineRunner { engine, wait_busy: timeout + Duration::from_secs(60) }
    }
}

impl EventRunner for EngineRunner {
    fn trusted(&self) -> bool {
        self.engine.unattended_runs()
    }

    fn now(&self) -> DateTime<Utc> {
        self.engine.clock.now()
    }

    fn done_keep(&self) -> Option<usize> {
        self.engine.config.read().ok().map(|c| c.history.events_keep)
    }

    fn run<'a>(
        &'a self,
        note: &'a EventNote,
        context: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let deadline = Instant::now() + self.wait_busy;
            loop {
                // The engine ignores `active` (manual runs may run paused notes); an event must
                // not, and the note may have been paused since it was routed.
                if let Some(why) = refuses_events(&note.path) {
                    return Outcome::Skipped(why.to_owned());
                }
                if !self.engine.is_running(&note.path) {
                    let spec = RunSpec {
                        path: note.path.clone(),
                        trigger: TriggerKind::Event,
                        context: Some(context.clone()),
                    };
                    let rel = note.rel.as_str();
                    let mut log = |e: &RunEvent| tracing::debug!("{} {rel}: {}", e.kind, e.message);
                    let run = self.engine.run(spec, &mut log);
                    tokio::pin!(run);
                    // The run is polled first so that it is registered before a stop can
                    // reach it; a stopped run is still awaited so it releases its slot.
                    let outcome = tokio::select! {
                        biased;
                        o = &mut run => o,
                        _ = cancel.cancelled() => {
                            self.engine.stop(&note.path);
                            run.await
                        }
                    };
                    // Another run took the note between the check and the lock: wait again.
                    let busy = matches!(outcome, Outcome::Skipped(_)) && self.engine.is_running(&note.path);
                    if !busy || Instant::now() >= deadline {
                        return outcome;
                    }
                } else if Instant::now() >= deadline {
                    return Outcome::Skipped("the note stayed busy with another run".to_owned());
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(250)) => {}
                    _ = cancel.cancelled() => return Outcome::Skipped("stopped".to_owned()),
                }
            }
        })
    }
}

/// Why the note on disk no longer takes events, if it does not.
fn refuses_events(path: &Path) -> Option<&'static str> {
    let Ok(head) = crate::workspace::read_frontmatter(path) else { return Some("the note cannot be read") };
    let analysis = crate::note::analyze(&head, &crate::note::Options::default());
    match analysis.live {
        None => Some("the note is no longer live"),
        Some(l) if !l.active => Some("the note is paused"),
        Some(l) if l.event_match_criteria.as_deref().is_none_or(|c| c.trim().is_empty()) => {
            Some("the note has no eventMatchCriteria")
        }
        Some(_) => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Processing

/// What happened to one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    pub id: String,
    pub candidate_file_paths: Vec<String>,
    pub run_ids: Vec<String>,
    pub error: Option<String>,
}

/// The queue lock: one processor at a time walks the queue, across processes.
struct QueueLock {
    _file: Option<File>,
}

impl QueueLock {
    /// `None` when another processor holds it.
    fn acquire(root: &Path) -> Option<QueueLock> {
        let path = events_dir(root).join(".lock");
        let file = match open_event(&path, OpenOptions::new().create(true).truncate(false).write(true)) {
            Ok(f) => f,
            Err(e) => {
                // Claims alone still keep events exactly once; only cross-process order suffers.
                tracing::warn!("events {}: no queue lock: {e}", path.display());
                return Some(QueueLock { _file: None });
            }
        };
        match file.try_lock() {
            Ok(()) => Some(QueueLock { _file: Some(file) }),
            Err(std::fs::TryLockError::WouldBlock) => None,
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::debug!("events {}: file locks unsupported: {e}", path.display());
                Some(QueueLock { _file: None })
            }
        }
    }
}

/// An event claimed by this processor: its file in `processing/`, locked while we hold it.
struct Claim {
    name: std::ffi::OsString,
    path: PathBuf,
    _file: File,
}

/// Claim the oldest pending event. `Ok(None)`: nothing left to claim.
fn claim_next(root: &Path) -> std::io::Result<Option<Claim>> {
    for from in pending_events(root) {
        let Some(name) = from.file_name().map(std::ffi::OsStr::to_os_string) else { continue };
        let to = processing_dir(root).join(&name);
        if to.exists() {
            // Same id still held (or abandoned): recovery decides, not a clobbering rename.
            continue;
        }
        if let Some(claim) = try_claim(&from, name, to)? {
            return Ok(Some(claim));
        }
    }
    Ok(None)
}

/// Move `from` (in `pending/`) to `to` (in `processing/`) and lock it. `Ok(None)`: another
/// processor won the race.
fn try_claim(from: &Path, name: std::ffi::OsString, to: PathBuf) -> std::io::Result<Option<Claim>> {
    match std::fs::rename(from, &to) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    }
    let file = match open_event(&to, OpenOptions::new().read(true).write(true)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        // Where locks are unsupported the claim stays unlocked; its age then tells recovery
        // whether it is abandoned.
        Ok(()) | Err(std::fs::TryLockError::Error(_)) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
    }
    // The claim's age counts from now, not from when the event was created.
    let _ = file.set_modified(SystemTime::now());
    Ok(Some(Claim { name, path: to, _file: file }))
}

/// Put claims of crashed processors back into `pending/` (or drop them when `done/` already
/// has the event: the crash came after it was recorded). Called under the queue lock.
fn recover_stale(root: &Path, stale_after: Duration) {
    for path in event_files(root, "processing") {
        let Ok(file) = open_event(&path, OpenOptions::new().read(true).write(true)) else { continue };
        let abandoned = match file.try_lock() {
            // Nobody holds it: its processor died (the OS released the lock).
            Ok(()) => true,
            Err(std::fs::TryLockError::WouldBlock) => false,
            Err(std::fs::TryLockError::Error(_)) => std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .is_some_and(|age| age >= stale_after),
        };
        if !abandoned {
            continue;
        }
        let Some(name) = path.file_name() else { continue };
        let id = id_of(&path);
        if done_dir(root).join(name).exists() {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        match std::fs::rename(&path, pending_dir(root).join(name)) {
            Ok(()) => tracing::warn!("event {id}: recovered an abandoned claim; it runs again"),
            Err(e) => tracing::warn!("event {id}: cannot recover the abandoned claim: {e}"),
        }
    }
}

/// Read an event file with a size cap. `Err((error, raw))` when it cannot be used.
fn read_event_file(path: &Path) -> Result<Event, (String, Option<String>)> {
    let mut bytes = Vec::new();
    let read = open_event(path, OpenOptions::new().read(true))
        .and_then(|f| f.take(MAX_EVENT_FILE_BYTES as u64 + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return Err((format!("cannot read the event: {e}"), None));
    }
    if bytes.len() > MAX_EVENT_FILE_BYTES {
        let raw = truncate_chars(&String::from_utf8_lossy(&bytes), MAX_RAW_CHARS);
        return Err((
            format!("event file larger than {} MiB", MAX_EVENT_FILE_BYTES / (1024 * 1024)),
            Some(raw),
        ));
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let raw = truncate_chars(&String::from_utf8_lossy(e.as_bytes()), MAX_RAW_CHARS);
            return Err(("invalid event: not UTF-8".to_owned(), Some(raw)));
        }
    };
    parse_event(&text).map_err(|e| (e, Some(truncate_chars(&text, MAX_RAW_CHARS))))
}

/// Process every pending event, oldest first, until none is left; returns what was done.
/// Does nothing in an untrusted workspace (events stay pending) or while another processor
/// holds the queue (it picks up what arrives meanwhile). Never fails: problems end up in the
/// events' `error` or in the log.
pub async fn process_pending(
    root: &Path,
    notes: &(dyn Fn() -> Vec<EventNote> + Send + Sync),
    router: &dyn Router,
    runner: &dyn EventRunner,
    cancel: &CancellationToken,
) -> Vec<Processed> {
    let mut processed = Vec::new();
    if !runner.trusted() {
        tracing::debug!("events {}: workspace not trusted; events stay pending", root.display());
        return processed;
    }
    if let Err(e) = ensure_dirs(root) {
        tracing::warn!("events {}: {e}", events_dir(root).display());
        return processed;
    }
    loop {
        let Some(queue) = QueueLock::acquire(root) else { return processed };
        recover_stale(root, STALE_CLAIM);
        loop {
            if cancel.is_cancelled() || !runner.trusted() {
                return processed;
            }
            let claim = match claim_next(root) {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => {
                    // Skipping would break the order; the next pass tries again.
                    tracing::warn!("events {}: cannot claim an event: {e}", root.display());
                    return processed;
                }
            };
            match process_claim(root, claim, notes, router, runner, cancel).await {
                Some(p) => processed.push(p),
                None => return processed,
            }
        }
        if let Some(keep) = runner.done_keep() {
            crate::runs::history::prune_done_events(root, keep);
        }
        drop(queue);
        // Another processor that found the queue locked left what arrived to us: look again
        // now that the lock is free.
        if pending_events(root).is_empty() {
            return processed;
        }
    }
}

/// Route, run and record one claimed event. `None` when cancelled: the event goes back to
/// `pending/` and is processed again later.
async fn process_claim(
    root: &Path,
    claim: Claim,
    notes: &(dyn Fn() -> Vec<EventNote> + Send + Sync),
    router: &dyn Router,
    runner: &dyn EventRunner,
    cancel: &CancellationToken,
) -> Option<Processed> {
    let id = id_of(&claim.path);
    let mut record = Map::new();
    let mut result =
        Processed { id: id.clone(), candidate_file_paths: Vec::new(), run_ids: Vec::new(), error: None };
    match read_event_file(&claim.path) {
        Err((error, raw)) => {
            tracing::warn!("event {id}: malformed: {error}");
            record.insert("id".to_owned(), json!(id));
            if let Some(raw) = raw {
                record.insert("raw".to_owned(), json!(raw));
            }
            result.error = Some(error);
        }
        Ok(event) => {
            tracing::info!("event {id}: received source={} type={}", event.source, event.kind);
            let notes = notes();
            let (candidates, mut errors) = candidates(root, &event, &notes, router, cancel).await;
            if cancel.is_cancelled() {
                requeue(root, &claim);
                return None;
            }
            let rels: Vec<&str> = candidates.iter().map(|n| n.rel.as_str()).collect();
            tracing::info!("event {id}: dispatching to {} candidates: {}", rels.len(), rels.join(", "));
            let mut results = Vec::new();
            for note in &candidates {
                let outcome = runner.run(note, run_context(&event, &note.criteria), cancel.clone()).await;
                log_outcome(&note.rel, &outcome);
                let (run_id, status, message) = match &outcome {
                    Outcome::Done { run_id, summary } => (Some(run_id), "done", summary.clone()),
                    Outcome::Failed { run_id, error } => {
                        errors.push(format!("{}: {error}", note.rel));
                        (Some(run_id), "failed", error.clone())
                    }
                    Outcome::Stopped { run_id } => {
                        errors.push(format!("{}: stopped", note.rel));
                        (Some(run_id), "stopped", "stopped".to_owned())
                    }
                    Outcome::Skipped(reason) => {
                        errors.push(format!("{}: skipped ({reason})", note.rel));
                        (None, "skipped", reason.clone())
                    }
                };
                if let Some(r) = run_id.filter(|r| !r.is_empty()) {
                    result.run_ids.push(r.clone());
                }
                results.push(
                    json!({"filePath": note.rel, "runId": run_id, "status": status, "message": message}),
                );
                if cancel.is_cancelled() {
                    requeue(root, &claim);
                    return None;
                }
            }
            tracing::info!(
                "event {id}: processed ok={} errors={}",
                results.iter().filter(|r| r["status"] == "done").count(),
                errors.len()
            );
            if let Ok(Value::Object(m)) = serde_json::to_value(&event) {
                record = m;
            }
            record.insert("results".to_owned(), Value::Array(results));
            result.candidate_file_paths = rels.iter().map(|s| (*s).to_owned()).collect();
            result.error = (!errors.is_empty()).then(|| errors.join("; "));
        }
    }
    record.insert("processedAt".to_owned(), json!(timestamp(runner.now())));
    record.insert("candidateFilePaths".to_owned(), json!(result.candidate_file_paths));
    record.insert("runIds".to_owned(), json!(result.run_ids));
    record.insert("error".to_owned(), json!(result.error));
    finish(root, &claim, &Value::Object(record));
    Some(result)
}

/// Pass 1: the candidates among `notes`, in their order, and routing errors.
async fn candidates<'n>(
    root: &Path,
    event: &Event,
    notes: &'n [EventNote],
    router: &dyn Router,
    cancel: &CancellationToken,
) -> (Vec<&'n EventNote>, Vec<String>) {
    if let Some(target) = &event.target_file_path {
        let target = normalize_target(root, target);
        return match notes.iter().find(|n| n.rel == target) {
            Some(n) => (vec![n], Vec::new()),
            None => (
                Vec::new(),
                vec![format!(
                    "targetFilePath `{target}` is not an active, valid live note with eventMatchCriteria"
                )],
            ),
        };
    }
    if notes.is_empty() {
        return (Vec::new(), Vec::new());
    }
    tracing::info!("event {}: routing against {} live notes", event.id, notes.len());
    let batches = notes.len().div_ceil(BATCH_SIZE);
    let mut picked: HashSet<&str> = HashSet::new();
    let mut errors = Vec::new();
    for (i, batch) in notes.chunks(BATCH_SIZE).enumerate() {
        if cancel.is_cancelled() {
            break;
        }
        match router.route(event, batch, cancel.clone()).await {
            Ok(paths) => {
                for p in paths {
                    let p = normalize_target(root, &p);
                    // Only notes of this batch count: anything else is the model inventing.
                    match batch.iter().find(|n| n.rel == p) {
                        Some(n) => {
                            picked.insert(n.rel.as_str());
                        }
                        None => tracing::debug!("event {}: routing named an unknown note {p:?}", event.id),
                    }
                }
            }
            Err(e) => {
                let e = format!("routing batch {}/{batches} failed: {}", i + 1, one_line(&e, 300));
                tracing::warn!("event {}: {e}", event.id);
                errors.push(e);
            }
        }
    }
    (notes.iter().filter(|n| picked.contains(n.rel.as_str())).collect(), errors)
}

/// Record the event in `done/` and release the claim. If the record cannot be written (a
/// full disk), the claimed file itself moves to `done/` so the queue still moves on.
fn finish(root: &Path, claim: &Claim, record: &Value) {
    let dest = done_dir(root).join(&claim.name);
    let text = serde_json::to_string_pretty(record).unwrap_or_default() + "\n";
    match write_atomic(&dest, &text) {
        Ok(()) => {
            if let Err(e) = std::fs::remove_file(&claim.path) {
                tracing::warn!("event {}: cannot remove the claim: {e}", id_of(&claim.path));
            }
        }
        Err(e) => {
            tracing::warn!("event {}: cannot write the done record: {e}", id_of(&claim.path));
            if let Err(e) = std::fs::rename(&claim.path, &dest) {
                tracing::warn!("event {}: cannot move the event to done/: {e}", id_of(&claim.path));
            }
        }
    }
}

fn requeue(root: &Path, claim: &Claim) {
    if let Err(e) = std::fs::rename(&claim.path, pending_dir(root).join(&claim.name)) {
        tracing::warn!("event {}: cannot put the event back: {e}", id_of(&claim.path));
    }
}

fn truncate_chars(s: &str, max: usize) -> String {
    match crate::text::short::prefix_chars(s, max) {
        Some(shown) => format!("{shown}\n… (truncated)"),
        None => s.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// A processor for a long-lived process

/// One workspace's event processor: passes are serialized, so one processor runs per process
/// (the queue lock extends that across processes).
pub struct Processor {
    pub root: PathBuf,
    pub router: Arc<dyn Router>,
    pub runner: Arc<dyn EventRunner>,
    pub notes: NotesFn,
    gate: tokio::sync::Mutex<()>,
    warned_untrusted: AtomicBool,
}

impl Processor {
    pub fn new(root: &Path, router: Arc<dyn Router>, runner: Arc<dyn EventRunner>, notes: NotesFn) -> Self {
        Processor {
            root: root.to_path_buf(),
            router,
            runner,
            notes,
            gate: tokio::sync::Mutex::new(()),
            warned_untrusted: AtomicBool::new(false),
        }
    }

    /// The processor of an engine's workspace: event runs through the engine, routing as
    /// [`router_for`] decides from its configuration.
    pub fn for_engine(engine: Arc<Engine>, notes: NotesFn) -> Self {
        let router = match engine.config.read() {
            Ok(c) => router_for(&c),
            Err(_) => Arc::new(KeywordRouter),
        };
        let root = engine.root.clone();
        Processor::new(&root, router, Arc::new(EngineRunner::new(engine)), notes)
    }

    /// One pass over the queue (waits for a pass in progress in this process first).
    pub async fn process(&self, cancel: &CancellationToken) -> Vec<Processed> {
        let _gate = self.gate.lock().await;
        if !self.runner.trusted() {
            let waiting = pending_events(&self.root).len();
            if waiting > 0 && !self.warned_untrusted.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "hold {}: {waiting} event(s) wait in .livenote/events/pending until the workspace is trusted (`livenote trust`) and scheduling is enabled",
                    self.root.display()
                );
            }
            return Vec::new();
        }
        self.warned_untrusted.store(false, Ordering::Relaxed);
        process_pending(&self.root, &*self.notes, &*self.router, &*self.runner, cancel).await
    }
}

/// Start the background task that runs a pass at once and then whenever the returned
/// `Notify` is notified (file events in `pending/`, trust granted). Notifications that come
/// during a pass coalesce into one more pass. `cancel` ends the task (and stops an event run
/// in progress; its event goes back to `pending/`). Must be called inside a tokio runtime.
pub fn spawn(processor: Arc<Processor>, cancel: CancellationToken) -> Arc<Notify> {
    let wake = Arc::new(Notify::new());
    // The start-up pass: events that arrived while nothing was watching.
    wake.notify_one();
    let w = wake.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = w.notified() => {}
                _ = cancel.cancelled() => return,
            }
            let (p, c) = (processor.clone(), cancel.clone());
            // Each pass in its own task: even a panic cannot end the loop.
            if let Err(e) = tokio::spawn(async move { p.process(&c).await }).await {
                tracing::warn!("events {}: a pass failed: {e}", processor.root.display());
            }
        }
    });
    wake
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(payload: Value) -> Event {
        Event {
            id: "01TEST".to_owned(),
            source: "gmail".to_owned(),
            kind: "email.synced".to_owned(),
            created_at: "2026-05-08T15:00:00.000Z".to_owned(),
            payload,
            target_file_path: None,
            extra: Map::new(),
        }
    }

    fn note(rel: &str, criteria: &str) -> EventNote {
        EventNote {
            path: PathBuf::from("/w").join(rel),
            rel: rel.to_owned(),
            objective: "o".to_owned(),
            criteria: criteria.to_owned(),
        }
    }

    /// Found by the `event_json` fuzz target: serde_json's default float parsing is not
    /// correctly rounded, so a number with many digits read from an event came out of `done/`
    /// as a different number when read again. `float_roundtrip` (server/Cargo.toml) fixes it.
    #[test]
    fn numbers_survive_a_round_trip() {
        let text = r#"{"id":"01","source":"s","type":"t","createdAt":"c","payload":{"n":211111111111111111111111111111111111111111111},"x":2.1111111111111108e44}"#;
        let e = parse_event(text).unwrap_or_else(|e| panic!("{e}"));
        let written = serde_json::to_string(&e).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parse_event(&written), Ok(e.clone()));
        assert_eq!(e.payload["n"].as_f64(), Some(2.111111111111111e44));
    }

    #[test]
    fn parses_and_rejects_events() {
        let ok = r#"{"id":"01A","source":"s","type":"t","createdAt":"2026-01-01T00:00:00Z","payload":{"n":1},"x":true}"#;
        let e = parse_event(ok).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.payload, json!({"n": 1}));
        assert_eq!(e.extra.get("x"), Some(&json!(true)));
        assert_eq!(e.target_file_path, None);
        let cases = [
            ("not json", "invalid event: expected ident at line 1 column 2"),
            (
                r#"{"id":"01A","type":"t","createdAt":"c","payload":"p"}"#,
                "invalid event: missing field `source` at line 1 column 53",
            ),
            (
                r#"{"id":"01A","source":"s","type":"t","createdAt":"c"}"#,
                "invalid event: missing field `payload` at line 1 column 52",
            ),
            (
                r#"{"id":"01A","source":"s","type":"t","createdAt":"c","payload":null}"#,
                "invalid event: `payload` is null",
            ),
            (
                r#"{"id":" ","source":"s","type":"t","createdAt":"c","payload":"p"}"#,
                "invalid event: `id` is empty",
            ),
            (
                r#"{"id":"01A","source":"s","type":7,"createdAt":"c","payload":"p"}"#,
                "invalid event: invalid type: integer `7`, expected a string at line 1 column 33",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse_event(text).err().as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn routing_output_is_validated() {
        assert_eq!(
            parse_routing_output(r#"{"filePaths": ["a.md", "b.md"]}"#),
            Ok(vec!["a.md".into(), "b.md".into()])
        );
        assert_eq!(parse_routing_output("```json\n{\"filePaths\": []}\n```"), Ok(vec![]));
        assert!(parse_routing_output("a.md").is_err());
        assert!(parse_routing_output(r#"{"paths": ["a.md"]}"#).is_err());
        assert!(parse_routing_output(r#"{"filePaths": [1]}"#).is_err());
        assert!(parse_routing_output(r#"{"filePaths": ["a.md"}"#).is_err());
    }

    #[test]
    fn routing_prompt_lists_event_and_notes() {
        let p = routing_prompt(
            &event(json!("Subject: Q3 planning")),
            &[note("plans/q3.md", "Emails about Q3 planning")],
        );
        assert!(p.starts_with("## Event\n\n- source: gmail\n- type: email.synced\n"), "{p}");
        assert!(p.contains("Subject: Q3 planning\n\n## Live notes\n\n- filePath: plans/q3.md\n  objective: o\n  eventMatchCriteria: Emails about Q3 planning\n"), "{p}");
    }

    #[test]
    fn keyword_routing_is_liberal_but_not_blind() {
        let e = event(json!("Subject: Planning the Q3 offsite\nFrom: ana@example.com"));
        assert!(KeywordRouter::matches(&e, &note("a.md", "Emails about Q3 planning")));
        assert!(KeywordRouter::matches(&e, &note("a.md", "Offsites")));
        assert!(!KeywordRouter::matches(&e, &note("b.md", "Calendar changes for the dentist")));
        assert!(!KeywordRouter::matches(&e, &note("c.md", "any updates about things")));
        assert!(KeywordRouter::matches(
            &event(json!({"repo": "livenote"})),
            &note("d.md", "Livenote releases")
        ));
        assert_eq!(stem("planning"), "plan");
        assert_eq!(stem("emails"), "email");
        assert_eq!(stem("stories"), "story");
        assert_eq!(stem("boxes"), "box");
        assert_eq!(stem("offsites"), "offsite");
    }

    #[test]
    fn context_carries_criteria_payload_and_the_directive() {
        let c = run_context(&event(json!("the payload")), "Emails about Q3");
        assert!(c.contains("**Event match criteria of this note:** Emails about Q3"), "{c}");
        assert!(c.contains("**Payload:**\n\nthe payload\n"), "{c}");
        assert!(c.contains("leave the note unchanged"), "{c}");
        let long = run_context(&event(json!("x".repeat(MAX_CONTEXT_PAYLOAD_CHARS + 10))), "c");
        assert!(long.contains("… (truncated)"));
    }

    #[test]
    fn ids_sort_in_creation_order() {
        let ids: Vec<String> = (0..200).map(|_| new_id()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
        assert!(ids.iter().all(|i| i.len() == 26));
    }

    #[test]
    fn create_event_writes_pending_atomically() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        let e = create_event(root, "cli", "note.ping", json!("hi"), Some("./notes/a.md"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.target_file_path.as_deref(), Some("notes/a.md"));
        let files = pending_events(root);
        assert_eq!(files, vec![pending_dir(root).join(format!("{}.json", e.id))]);
        let text = std::fs::read_to_string(&files[0]).unwrap_or_default();
        assert_eq!(parse_event(&text), Ok(e));
        let leftovers: Vec<_> = std::fs::read_dir(events_dir(root))
            .map(|r| r.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert_eq!(leftovers.len(), 3, "no temp file left: {leftovers:?}");
        assert!(root.join(".livenote/.gitignore").exists());
        assert!(matches!(create_event(root, " ", "t", json!("p"), None), Err(EventError::Invalid(_))));
        let big = json!("x".repeat(MAX_PAYLOAD_BYTES + 1));
        assert!(matches!(create_event(root, "s", "t", big, None), Err(EventError::Invalid(_))));
    }

    #[test]
    fn exactly_one_claimant_wins() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().to_path_buf();
        ensure_dirs(&root).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..50 {
            std::fs::write(pending_dir(&root).join(format!("{i:03}.json")), "{}")
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let claimed: Vec<Vec<String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        let mut held = Vec::new();
                        while let Ok(Some(c)) = claim_next(&root) {
                            mine.push(id_of(&c.path));
                            // Keep the claims (and their locks) so others see them taken.
                            held.push(c);
                        }
                        mine
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
        });
        let mut all: Vec<String> = claimed.into_iter().flatten().collect();
        assert_eq!(all.len(), 50, "every event claimed exactly once");
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 50);
    }

    #[test]
    fn abandoned_claims_go_back_to_pending() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        ensure_dirs(root).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(processing_dir(root).join("a.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(processing_dir(root).join("b.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(done_dir(root).join("b.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
        // A live claim (locked by its holder) stays put.
        std::fs::write(pending_dir(root).join("c.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
        let held = claim_next(root).unwrap_or_else(|e| panic!("{e}"));
        assert!(held.is_some());
        recover_stale(root, STALE_CLAIM);
        assert_eq!(pending_events(root), vec![pending_dir(root).join("a.json")]);
        assert_eq!(event_files(root, "processing"), vec![processing_dir(root).join("c.json")]);
        drop(held);
        recover_stale(root, STALE_CLAIM);
        assert_eq!(pending_events(root).len(), 2);
    }

    #[test]
    fn routing_uses_the_default_providers_model_when_there_is_one() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let load = |toml: &str| {
            std::fs::write(dir.path().join(".livenote.toml"), toml).unwrap_or_else(|e| panic!("{e}"));
            Config::load_with(Some(dir.path()), None, &|_: &str| None).0
        };
        let local = load(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
        );
        assert!(model_client(&local).is_ok());
        let keyless = load(
            "[providers.c]\nkind = \"anthropic\"\nmodel = \"m\"\napi_key_env = \"LIVENOTE_TEST_NO_SUCH_KEY\"\n",
        );
        assert!(model_client(&keyless).is_err());
        let command = load("[providers.p]\nkind = \"command\"\ncommand = [\"true\"]\n");
        assert_eq!(model_client(&command).err().as_deref(), Some("provider `p` is a command, not a model"));
        assert_eq!(read_done(dir.path(), "../x"), None);
    }

    #[test]
    fn pending_paths_and_targets() {
        let root = Path::new("/w");
        assert!(is_pending_path(root, Path::new("/w/.livenote/events/pending/01A.json")));
        assert!(!is_pending_path(root, Path::new("/w/.livenote/events/pending/.event-x.tmp")));
        assert!(!is_pending_path(root, Path::new("/w/.livenote/events/done/01A.json")));
        assert_eq!(normalize_target(root, "/w/notes/a.md"), "notes/a.md");
        assert_eq!(normalize_target(root, "././a.md"), "a.md");
    }
}
