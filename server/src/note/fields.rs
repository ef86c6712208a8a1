//! The registry of keys a `live:` block may hold, at each level: their kind, whether livenote
//! writes them, their documentation (read from the generated JSON Schema, so docs have one
//! source) and "did you mean" suggestions for keys it does not know.

use std::sync::OnceLock;

/// Where in the block a key sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// Directly under `live:`.
    Live,
    /// Under `live.triggers`.
    Triggers,
    /// In an item of `live.triggers.windows`.
    Window,
}

impl Level {
    pub fn describe(self) -> &'static str {
        match self {
            Level::Live => "`live`",
            Level::Triggers => "`triggers`",
            Level::Window => "a window",
        }
    }

    fn schema_def(self) -> &'static str {
        match self {
            Level::Live => "LiveBlock",
            Level::Triggers => "Triggers",
            Level::Window => "TimeWindow",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text (block scalars welcome).
    Text,
    Bool,
    /// A nested mapping (`triggers`).
    Mapping,
    /// A list of mappings (`windows`).
    List,
    Cron,
    Time,
    /// An RFC 3339 timestamp.
    Timestamp,
    ProviderName,
    /// A list of MCP server names or `server.tool` names.
    ToolList,
    /// A date or an RFC 3339 timestamp (`until`).
    DateOrTimestamp,
    /// A whole number above zero (`maxChars`).
    PositiveInt,
    /// A list of skill names.
    SkillList,
    /// A list of source names (`sources`).
    SourceList,
    /// A whole number, zero included (`failures`).
    Count,
    /// `changes`, `failures`, `all` or `false` (`notify`).
    Notify,
}

#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub level: Level,
    pub kind: Kind,
    /// Written by livenote after runs; users should not edit it.
    pub runtime: bool,
    pub required: bool,
}

const fn f(name: &'static str, level: Level, kind: Kind) -> Field {
    Field { name, level, kind, runtime: false, required: false }
}

const fn rt(name: &'static str, kind: Kind) -> Field {
    Field { name, level: Level::Live, kind, runtime: true, required: false }
}

pub const FIELDS: &[Field] = &[
    Field { name: "objective", level: Level::Live, kind: Kind::Text, runtime: false, required: true },
    f("active", Level::Live, Kind::Bool),
    f("triggers", Level::Live, Kind::Mapping),
    f("provider", Level::Live, Kind::ProviderName),
    f("model", Level::Live, Kind::Text),
    f("tools", Level::Live, Kind::ToolList),
    f("until", Level::Live, Kind::DateOrTimestamp),
    f("maxChars", Level::Live, Kind::PositiveInt),
    f("skills", Level::Live, Kind::SkillList),
    f("sources", Level::Live, Kind::SourceList),
    f("notify", Level::Live, Kind::Notify),
    rt("lastAttemptAt", Kind::Timestamp),
    rt("lastRunAt", Kind::Timestamp),
    rt("lastRunId", Kind::Text),
    rt("lastRunSummary", Kind::Text),
    rt("lastRunError", Kind::Text),
    rt("failures", Kind::Count),
    rt("lastStoppedAt", Kind::Timestamp),
    f("cronExpr", Level::Triggers, Kind::Cron),
    f("windows", Level::Triggers, Kind::List),
    f("eventMatchCriteria", Level::Triggers, Kind::Text),
    Field { name: "startTime", level: Level::Window, kind: Kind::Time, runtime: false, required: true },
    Field { name: "endTime", level: Level::Window, kind: Kind::Time, runtime: false, required: true },
];

pub fn fields(level: Level) -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(move |f| f.level == level)
}

pub fn field(level: Level, name: &str) -> Option<&'static Field> {
    fields(level).find(|f| f.name == name)
}

/// The documentation of a key, from the JSON Schema's descriptions.
pub fn doc(level: Level, name: &str) -> Option<&'static str> {
    static SCHEMA: OnceLock<serde_json::Value> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        serde_json::to_value(schemars::schema_for!(super::model::NoteFrontmatter)).unwrap_or_default()
    });
    schema.get("$defs")?.get(level.schema_def())?.get("properties")?.get(name)?.get("description")?.as_str()
}

/// What to tell the user about a key livenote does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suggestion {
    /// A key at the same level with this name was probably meant.
    Rename(&'static str),
    /// The key belongs at another level.
    Elsewhere(Level, &'static str),
    /// The `once` trigger of the older model.
    RemovedOnce,
    None,
}

/// Common names people reach for, mapped to livenote's.
const ALIASES: &[(&str, Level, &str)] = &[
    ("instruction", Level::Live, "objective"),
    ("instructions", Level::Live, "objective"),
    ("prompt", Level::Live, "objective"),
    ("goal", Level::Live, "objective"),
    ("description", Level::Live, "objective"),
    ("task", Level::Live, "objective"),
    ("enabled", Level::Live, "active"),
    ("schedule", Level::Live, "triggers"),
    ("trigger", Level::Live, "triggers"),
    ("when", Level::Live, "triggers"),
    ("cron", Level::Triggers, "cronExpr"),
    ("schedule", Level::Triggers, "cronExpr"),
    ("expression", Level::Triggers, "cronExpr"),
    ("crontab", Level::Triggers, "cronExpr"),
    ("window", Level::Triggers, "windows"),
    ("event", Level::Triggers, "eventMatchCriteria"),
    ("events", Level::Triggers, "eventMatchCriteria"),
    ("eventCriteria", Level::Triggers, "eventMatchCriteria"),
    ("matchCriteria", Level::Triggers, "eventMatchCriteria"),
    ("start", Level::Window, "startTime"),
    ("from", Level::Window, "startTime"),
    ("begin", Level::Window, "startTime"),
    ("end", Level::Window, "endTime"),
    ("to", Level::Window, "endTime"),
    ("until", Level::Window, "endTime"),
    ("expires", Level::Live, "until"),
    ("expiry", Level::Live, "until"),
    ("endDate", Level::Live, "until"),
    ("budget", Level::Live, "maxChars"),
    ("maxLength", Level::Live, "maxChars"),
    ("maxCharacters", Level::Live, "maxChars"),
    ("charLimit", Level::Live, "maxChars"),
    ("notifications", Level::Live, "notify"),
    ("notification", Level::Live, "notify"),
    ("notifyOn", Level::Live, "notify"),
    ("alert", Level::Live, "notify"),
    ("alerts", Level::Live, "notify"),
];

pub fn suggest(level: Level, unknown: &str) -> Suggestion {
    if unknown == "once" && level != Level::Window {
        return Suggestion::RemovedOnce;
    }
    let norm = normalize(unknown);
    // Exact names of this level, written in another case or with separators.
    if let Some(f) = fields(level).find(|f| normalize(f.name) == norm) {
        return Suggestion::Rename(f.name);
    }
    if let Some((_, _, to)) = ALIASES.iter().find(|(from, l, _)| *l == level && normalize(from) == norm) {
        return Suggestion::Rename(to);
    }
    // A key of another level (e.g. `cronExpr` directly under `live:`).
    if let Some(f) = FIELDS.iter().find(|f| f.level != level && normalize(f.name) == norm) {
        return Suggestion::Elsewhere(f.level, f.name);
    }
    if let Some((_, l, to)) = ALIASES.iter().find(|(from, l, _)| *l != level && normalize(from) == norm) {
        return Suggestion::Elsewhere(*l, to);
    }
    // Typos: the closest name of this level within a small edit distance.
    let best = fields(level)
        .map(|f| (crate::text::words::edit_distance(&norm, &normalize(f.name)), f.name))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((d, name)) if d <= 2 || (d <= 3 && norm.len() >= 8) => Suggestion::Rename(name),
        _ => Suggestion::None,
    }
}

fn normalize(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(suggest(Level::Triggers, "cron"), Suggestion::Rename("cronExpr"));
        assert_eq!(suggest(Level::Triggers, "cron_expr"), Suggestion::Rename("cronExpr"));
        assert_eq!(suggest(Level::Live, "instruction"), Suggestion::Rename("objective"));
        assert_eq!(suggest(Level::Live, "schedule"), Suggestion::Rename("triggers"));
        assert_eq!(suggest(Level::Live, "objectve"), Suggestion::Rename("objective"));
        assert_eq!(suggest(Level::Live, "cronExpr"), Suggestion::Elsewhere(Level::Triggers, "cronExpr"));
        assert_eq!(suggest(Level::Live, "once"), Suggestion::RemovedOnce);
        assert_eq!(suggest(Level::Window, "start"), Suggestion::Rename("startTime"));
        assert_eq!(suggest(Level::Live, "zzzzzz"), Suggestion::None);
    }

    #[test]
    fn every_field_has_documentation() {
        for f in FIELDS {
            assert!(doc(f.level, f.name).is_some_and(|d| d.len() > 10), "{} has no doc", f.name);
        }
    }
}
