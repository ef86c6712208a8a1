//! "Make live…" from one sentence: the prompt that asks the configured model for a `live:`
//! block as JSON, the tolerant reading of its reply, and the edits that write it, checked by
//! the validator on the text they would leave so that nothing invalid is ever written. When
//! there is no model, or its draft cannot be used, the template: the sentence as the
//! objective, manual only. Pure: the model call itself is the edge's (`authoring.rs`).
//!
//! A note that is live already is extended, never replaced (issue 32): the model is shown
//! the current block and asked for the extended one, and a draft whose objective leaves out
//! words of the current objective is not used; the template adds the sentence to the
//! objective and keeps the triggers. [`Change`] says what changed. A draft never starts a run:
//! only the user's `--run`, the editor's explicit choice or the MCP caller's `run` does.
//!
//! Decisions where issue 25 is silent:
//! - A draft for a note that is live already replaces every trigger with the draft's (asked to
//!   repeat the current ones unless the sentence changes when the note runs; the change is
//!   reported); `tools`/`skills` are replaced only when the draft names them.
//! - One `cronExpr` per note: a draft with two cron triggers is not used (the template is
//!   written instead, saying why), rather than one of them silently dropped.
//! - Errors refuse a draft, and so does a tool or skill the workspace does not have (the model
//!   was given the list: such a name is made up); other warnings (a cron every minute) are
//!   written and shown, as for a block typed by hand.

use serde_json::Value;

use super::rewrite::{self, LiveEdits, RewriteError, TriggerEdits};
use super::{Code, Severity, frontmatter};
use crate::text::TextEdit;
use crate::text::edit::apply;

/// The drafting model's instructions.
pub const SYSTEM_PROMPT: &str = "\
You set up live notes in a notes app. A live note's body is kept current by an agent that runs \
on the note's triggers and follows its objective. The user describes in one sentence what a \
note should keep current; you answer with the note's settings.

Answer with one JSON object and nothing else:
{\"objective\": \"...\", \"triggers\": [...], \"tools\": [...], \"skills\": [...]}

- objective: what the note should keep being, for the agent: what to show, from where, how \
fresh, in what layout. Two to four plain sentences, in the user's language.
- triggers: when the agent runs, a list of zero or more of
  {\"cron\": \"MIN HOUR DOM MON DOW\"} a 5-field cron expression in the user's local time \
(Monday = 1, weekdays = 1-5); at most one cron trigger;
  {\"window\": {\"start\": \"HH:MM\", \"end\": \"HH:MM\"}} a daily band of local time, 24-hour, \
end not before start; the note runs once a day inside it;
  {\"event\": \"...\"} which incoming events (emails, feed items, calendar changes) should update \
the note, in words.
  An empty list means the user runs the note by hand.
- tools: only names from the list of available tools, and only when the note needs them; \
omit otherwise.
- skills: only names from the list of available skills, and only when one fits; omit otherwise.

When the note is live already, its current settings come with the request, in the same form. \
Extend them, never replace them: the objective is the current objective word for word with what \
the user wants added; the triggers are the current ones unless the user asks to change when the \
note runs; tools and skills are the current ones plus what the request needs.";

/// What the model is told about the note and what it may name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Setting<'a> {
    /// The user's sentence.
    pub sentence: &'a str,
    /// MCP server names `tools` may name.
    pub tools: &'a [String],
    /// Skill names (with their descriptions) `skills` may name.
    pub skills: &'a [(String, String)],
}

/// The body lines the prompt quotes, and the characters at most.
const FIRST_LINES: usize = 20;
const FIRST_CHARS: usize = 2000;

/// The drafting model's user message: the sentence, the note's title and first lines, and
/// the tools and skills available.
pub fn prompt(text: &str, s: &Setting<'_>) -> String {
    let body_start = frontmatter::locate(text).map_or(frontmatter::bom_len(text), |fm| fm.body_start());
    let body = text.get(body_start..).unwrap_or("");
    let mut first = String::new();
    for line in body.lines().take(FIRST_LINES) {
        if first.chars().count() + line.chars().count() > FIRST_CHARS {
            break;
        }
        first.push_str(line);
        first.push('\n');
    }
    let mut out = format!("## What the user wants\n\n{}\n\n## The note\n\n", s.sentence.trim());
    match frontmatter::title(text, body_start) {
        Some(t) => out.push_str(&format!("Title: {t}\n\n")),
        None => out.push_str("(no title)\n\n"),
    }
    if first.trim().is_empty() {
        out.push_str("(the note is empty)\n");
    } else {
        out.push_str(&format!("First lines:\n\n{first}"));
    }
    if let Some(now) = current(text) {
        out.push_str("\n## The note's live block now (extend it)\n\n");
        out.push_str(&now.as_json());
        out.push('\n');
    }
    out.push_str("\n## Available tools\n\n");
    if s.tools.is_empty() {
        out.push_str("(none: omit `tools`)\n");
    }
    for t in s.tools {
        out.push_str(&format!("- {t}\n"));
    }
    out.push_str("\n## Available skills\n\n");
    if s.skills.is_empty() {
        out.push_str("(none: omit `skills`)\n");
    }
    for (name, description) in s.skills {
        out.push_str(&format!("- {name}: {}\n", crate::text::short::one_line(description, 160)));
    }
    out
}

/// A drafted `live:` block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Draft {
    pub objective: String,
    pub cron: Option<String>,
    /// `(start, end)`, as written.
    pub windows: Vec<(String, String)>,
    pub event: Option<String>,
    pub tools: Option<Vec<String>>,
    pub skills: Option<Vec<String>>,
}

/// Why a draft is not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DraftError {
    #[error("the model's reply is not a JSON object: {0}")]
    NotJson(String),
    #[error("the model's draft {0}")]
    Shape(String),
    #[error("the model's draft would give the note errors: {}", .0.join("; "))]
    Invalid(Vec<String>),
    #[error("{0}")]
    Rewrite(#[from] RewriteError),
}

/// Read the model's reply: one JSON object, with a code fence or a sentence around it
/// tolerated. Keys are read as the prompt asks (`cron`, `window` with `start`/`end`, `event`),
/// and as the note spells them (`cronExpr`, `startTime`/`endTime`, `eventMatchCriteria`).
pub fn parse_reply(reply: &str) -> Result<Draft, DraftError> {
    let t = reply.trim();
    let object = match (t.find('{'), t.rfind('}')) {
        (Some(a), Some(b)) if a < b => &t[a..=b],
        _ => return Err(DraftError::NotJson(crate::text::short::one_line(t, 120))),
    };
    let v: Value = serde_json::from_str(object).map_err(|e| DraftError::NotJson(e.to_string()))?;
    let shape = |m: &str| DraftError::Shape(m.to_owned());
    let objective = v
        .get("objective")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .ok_or_else(|| shape("has no `objective`"))?;
    let mut draft = Draft { objective: objective.to_owned(), ..Draft::default() };
    match v.get("triggers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                add_trigger(&mut draft, item)?;
            }
        }
        // `{"cronExpr": ..., "windows": [...]}`, as the note writes triggers.
        Some(Value::Object(map)) => {
            for (k, value) in map {
                let mut one = serde_json::Map::new();
                match (k.as_str(), value) {
                    ("windows", Value::Array(ws)) => {
                        for w in ws {
                            add_trigger(&mut draft, &serde_json::json!({ "window": w }))?;
                        }
                        continue;
                    }
                    _ => one.insert(k.clone(), value.clone()),
                };
                add_trigger(&mut draft, &Value::Object(one))?;
            }
        }
        Some(_) => return Err(shape("has `triggers` that is not a list")),
    }
    draft.tools = names(&v, "tools")?;
    draft.skills = names(&v, "skills")?;
    // Anything else (a `runNow` of an older prompt, say) is ignored: a draft never starts a run.
    Ok(draft)
}

fn add_trigger(draft: &mut Draft, item: &Value) -> Result<(), DraftError> {
    let shape = |m: String| DraftError::Shape(m);
    let text = |v: &Value| v.as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let Some(map) = item.as_object() else {
        return Err(shape(format!("has a trigger that is not an object: {item}")));
    };
    let mut entries = map.iter().filter(|(_, v)| !v.is_null());
    let (Some((key, value)), None) = (entries.next(), entries.next()) else {
        return Err(shape(format!("has a trigger that is not one of cron, window, event: {item}")));
    };
    match key.as_str() {
        "cron" | "cronExpr" => {
            let cron = text(value).ok_or_else(|| shape(format!("has an empty cron trigger: {item}")))?;
            if draft.cron.is_some() {
                return Err(shape("has two cron triggers; a note has one `cronExpr`".to_owned()));
            }
            draft.cron = Some(cron);
        }
        "window" => {
            let field = |a: &str, b: &str| value.get(a).or_else(|| value.get(b)).and_then(text);
            match (field("start", "startTime"), field("end", "endTime")) {
                (Some(s), Some(e)) => draft.windows.push((s, e)),
                _ => return Err(shape(format!("has a window without a start or an end: {item}"))),
            }
        }
        "event" | "eventMatchCriteria" => {
            let event = text(value).ok_or_else(|| shape(format!("has an empty event trigger: {item}")))?;
            if draft.event.is_some() {
                return Err(shape("has two event triggers; a note has one `eventMatchCriteria`".to_owned()));
            }
            draft.event = Some(event);
        }
        other => return Err(shape(format!("has a trigger of unknown kind `{other}`"))),
    }
    Ok(())
}

/// `tools`/`skills`: a list of names, absent, or null.
fn names(v: &Value, key: &str) -> Result<Option<Vec<String>>, DraftError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| DraftError::Shape(format!("has `{key}` holding a non-string: {i}")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|list| (!list.is_empty()).then_some(list)),
        Some(_) => Err(DraftError::Shape(format!("has `{key}` that is not a list"))),
    }
}

/// The template: the sentence as the objective (the title's default when blank), manual only.
pub fn template(sentence: &str) -> Draft {
    Draft { objective: sentence.trim().to_owned(), ..Draft::default() }
}

/// A live note's block as it is: what a draft extends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Current {
    pub objective: String,
    pub cron: Option<String>,
    pub windows: Vec<(String, String)>,
    pub event: Option<String>,
    pub tools: Option<Vec<String>>,
    pub skills: Option<Vec<String>>,
}

impl Current {
    /// In the form the model answers in, so that it can repeat what it keeps.
    fn as_json(&self) -> String {
        let mut triggers = Vec::new();
        if let Some(c) = &self.cron {
            triggers.push(serde_json::json!({ "cron": c }));
        }
        for (start, end) in &self.windows {
            triggers.push(serde_json::json!({ "window": { "start": start, "end": end } }));
        }
        if let Some(e) = &self.event {
            triggers.push(serde_json::json!({ "event": e }));
        }
        let mut v = serde_json::json!({ "objective": self.objective, "triggers": triggers });
        if let Some(t) = &self.tools {
            v["tools"] = serde_json::json!(t);
        }
        if let Some(s) = &self.skills {
            v["skills"] = serde_json::json!(s);
        }
        v.to_string()
    }

    /// The schedule part, as a draft holds it.
    fn schedule(&self) -> (Option<&str>, &[(String, String)], Option<&str>) {
        (self.cron.as_deref(), &self.windows, self.event.as_deref())
    }
}

/// The live block of `text`, when it has one.
pub fn current(text: &str) -> Option<Current> {
    let live = super::analyze(text, &super::Options::default()).live?;
    let blank = |s: &String| s.trim().is_empty();
    Some(Current {
        objective: live.objective.clone().unwrap_or_default().trim().to_owned(),
        cron: live.cron_expr.as_ref().map(|c| c.value.clone()).filter(|c| !blank(c)),
        windows: live
            .windows
            .iter()
            .filter_map(|w| Some((w.start_text.clone()?, w.end_text.clone()?)))
            .collect(),
        event: live.event_match_criteria.clone().filter(|e| !blank(e)),
        tools: live.tool_names(),
        skills: live.skills.as_ref().map(|_| live.skill_names()),
    })
}

/// The words of `text`, lower-cased, without punctuation: what "word for word" compares.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// Whether `text` says everything `part` says, its words in their order and together.
fn says(text: &str, part: &str) -> bool {
    let (text, part) = (words(text), words(part));
    part.is_empty() || text.windows(part.len()).any(|w| w == part.as_slice())
}

/// `objective` with `sentence` added: the user's words, both kept as typed. A sentence the
/// objective already says adds nothing.
pub fn extend(objective: &str, sentence: &str) -> String {
    let (objective, sentence) = (objective.trim(), sentence.trim());
    if objective.is_empty() {
        return sentence.to_owned();
    }
    if sentence.is_empty() || says(objective, sentence) {
        return objective.to_owned();
    }
    let ends_a_sentence = objective.ends_with(['.', '!', '?', ':', ';', '…']);
    format!("{objective}{} {sentence}", if ends_a_sentence { "" } else { "." })
}

/// What happened to the objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectiveChange {
    /// The note was not live: the objective is new.
    Set,
    /// The current objective, with more said.
    Extended,
    /// The current objective already said it.
    Kept,
}

/// What "Make live…" changed, for the message the user reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub objective: ObjectiveChange,
    /// The note's triggers before, in words ([`describe_triggers`]); `None` for a note that was
    /// not live.
    pub schedule_before: Option<String>,
    /// The triggers written, in words.
    pub schedule: String,
}

impl Change {
    fn of(before: Option<&Current>, draft: &Draft) -> Change {
        let schedule = describe_triggers(draft);
        let Some(before) = before else {
            return Change { objective: ObjectiveChange::Set, schedule_before: None, schedule };
        };
        let objective = if words(&draft.objective) == words(&before.objective) {
            ObjectiveChange::Kept
        } else {
            ObjectiveChange::Extended
        };
        let was = Draft {
            cron: before.cron.clone(),
            windows: before.windows.clone(),
            event: before.event.clone(),
            ..Draft::default()
        };
        Change { objective, schedule_before: Some(describe_triggers(&was)), schedule }
    }

    /// Whether the note was live before.
    pub fn was_live(&self) -> bool {
        self.schedule_before.is_some()
    }

    /// `objective extended, schedule kept (cron "0 7 * * *")`, `objective set, cron "0 8 * * 1"`.
    pub fn describe(&self) -> String {
        let objective = match self.objective {
            ObjectiveChange::Set => "objective set",
            ObjectiveChange::Extended => "objective extended",
            ObjectiveChange::Kept => "objective kept (it says this already)",
        };
        match &self.schedule_before {
            None => format!("{objective}, {}", self.schedule),
            Some(was) if *was == self.schedule => format!("{objective}, schedule kept ({was})"),
            Some(was) => format!("{objective}, schedule changed (was {was}, now {})", self.schedule),
        }
    }
}

/// The edits that write `draft` into `text` (a live note's triggers replaced by the draft's),
/// refused when the result would have errors (with the validator's messages) under `options`.
pub fn edits(text: &str, draft: &Draft, options: &super::Options<'_>) -> Result<Vec<TextEdit>, DraftError> {
    write(text, draft, true, options)
}

fn write(
    text: &str,
    draft: &Draft,
    replace_triggers: bool,
    options: &super::Options<'_>,
) -> Result<Vec<TextEdit>, DraftError> {
    let triggers = if replace_triggers {
        TriggerEdits {
            cron_expr: Some(draft.cron.clone().unwrap_or_default()),
            windows: Some(draft.windows.clone()),
            event_match_criteria: Some(draft.event.clone().unwrap_or_default()),
        }
    } else {
        TriggerEdits::default()
    };
    let wanted = LiveEdits {
        objective: draft.objective.clone(),
        triggers,
        tools: draft.tools.clone(),
        skills: draft.skills.clone(),
    };
    let edits = rewrite::make_live_edits(text, &wanted)?;
    let after = apply(text, &edits).map_err(|_| RewriteError::BadRange)?;
    let errors: Vec<String> = super::analyze(&after, options)
        .diagnostics
        .into_iter()
        .filter(|d| {
            d.severity == Severity::Error
                // The model was offered the workspace's tools and skills: a name outside them
                // is made up, and a run would go without what the draft counted on.
                || (d.code == Code::UnknownTool && draft.tools.is_some())
                || (d.code == Code::UnknownSkill && draft.skills.is_some())
        })
        .map(|d| d.message)
        .collect();
    if !errors.is_empty() {
        return Err(DraftError::Invalid(errors));
    }
    Ok(edits)
}

/// What "Make live…" writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub draft: Draft,
    pub edits: Vec<TextEdit>,
    /// Why the template was written instead of a model's draft; `None` for the model's.
    pub fallback: Option<String>,
    pub change: Change,
}

/// The model's draft when `reply` holds a usable one, else the template with the reason
/// (`reply`'s error: no model, the call failed). Errs only when not even the template can be
/// written (the frontmatter cannot be edited, or the note would have errors anyway). On a live
/// note the draft must keep every word of the objective, and the template adds the sentence to
/// it, keeping the triggers.
pub fn choose(
    text: &str,
    sentence: &str,
    reply: Result<String, String>,
    options: &super::Options<'_>,
) -> Result<Written, DraftError> {
    let before = current(text);
    let why = match reply.map_err(|e| e.to_string()).and_then(|r| {
        let draft = parse_reply(&r).map_err(|e| e.to_string())?;
        if let Some(b) = &before
            && !says(&draft.objective, &b.objective)
        {
            return Err(format!(
                "the model's draft leaves out words of the note's objective (\"{}\")",
                crate::text::short::one_line(&b.objective, 80)
            ));
        }
        let edits = edits(text, &draft, options).map_err(|e| e.to_string())?;
        let change = Change::of(before.as_ref(), &draft);
        Ok(Written { draft, edits, fallback: None, change })
    }) {
        Ok(written) => return Ok(written),
        Err(why) => why,
    };
    // The template extends the objective only: a live note keeps its triggers, tools and skills.
    let draft = match &before {
        Some(b) => {
            let (cron, windows, event) = b.schedule();
            Draft {
                objective: extend(&b.objective, sentence),
                cron: cron.map(str::to_owned),
                windows: windows.to_vec(),
                event: event.map(str::to_owned),
                ..Draft::default()
            }
        }
        None => template(sentence),
    };
    let edits = write(text, &draft, false, options)?;
    let change = Change::of(before.as_ref(), &draft);
    Ok(Written { draft, edits, fallback: Some(why), change })
}

/// The triggers of a draft in words, for a message: `cron "0 8 * * 1", window 09:00–12:00`.
pub fn describe_triggers(d: &Draft) -> String {
    let mut parts = Vec::new();
    if let Some(c) = &d.cron {
        parts.push(format!("cron \"{c}\""));
    }
    for (s, e) in &d.windows {
        parts.push(format!("window {s}–{e}"));
    }
    if let Some(e) = &d.event {
        parts.push(format!("events \"{e}\""));
    }
    if parts.is_empty() { "manual only".to_owned() } else { parts.join(", ") }
}

#[cfg(test)]
#[path = "draft_tests.rs"]
mod tests;
