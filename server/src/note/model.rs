//! The `live:` block: the serde/schemars types that are the source of the JSON Schema
//! (docs/live-note.schema.json) and of every key's documentation, and the validated, typed
//! view of a note that the scheduler, the CLI and the language server use.

use std::ops::Range;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schedule::Until;
use crate::schedule::cron::CronSchedule;
use crate::schedule::window::Window;

/// The frontmatter of a markdown note. Only `live` is livenote's; every other key is the
/// user's and is never touched.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "livenote frontmatter", extend("additionalProperties" = true))]
pub struct NoteFrontmatter {
    /// Makes the note live: a background agent keeps its body up to date.
    pub live: Option<LiveBlock>,
}

/// A live note's block: what the note should keep being, when the agent runs, and the
/// runtime fields livenote writes back after each run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LiveBlock {
    /// What the note should keep being, in plain words. The agent reads it on every run and
    /// keeps the body below the title in line with it.
    #[schemars(length(min = 1))]
    pub objective: String,
    /// `false` pauses the note: nothing fires on schedule or on events. A paused note can
    /// still be run by hand.
    #[serde(default = "default_true")]
    pub active: bool,
    /// When the agent runs. Absent or empty means manual only.
    pub triggers: Option<Triggers>,
    /// Name of a configured provider (see `[providers.*]` in config); empty means the default.
    pub provider: Option<String>,
    /// Model name, overriding the provider's; empty means the provider's default.
    pub model: Option<String>,
    /// The MCP tools the agent may use (`[mcp.servers.NAME]` in config): server names (all of
    /// that server's tools) or `server.tool` for one tool, like `[time, "github.list_issues"]`.
    /// Absent: every configured server's tools; an empty list: none.
    pub tools: Option<Vec<String>>,
    /// When the note stops firing: a date like `2026-02-25` (the end of that day, local time)
    /// or an RFC 3339 time like `2026-02-25T18:00:00Z`. After it, no schedule or event runs the
    /// note (a run by hand still does).
    #[schemars(extend("anyOf" = [{"format": "date"}, {"format": "date-time"}]))]
    pub until: Option<String>,
    /// The body's budget, in characters (Unicode scalar values) of everything below the
    /// frontmatter, title line included. A run is told the budget and the current size; an
    /// agent edit that would pass it is refused (the agent trims older sections instead), a
    /// `command` provider's longer output fails the run, and a note over it gets a warning.
    #[schemars(range(min = 1))]
    pub max_chars: Option<u64>,
    /// Skills whose guidance every run of the note gets in full, by name, like
    /// `[weekly-digest]`: the workspace's `skills/` folder, the user's
    /// `~/.config/livenote/skills/`, or livenote's own (`livenote skills` lists them). Other
    /// skills are listed to the agent, which can load one when it needs it.
    pub skills: Option<Vec<String>>,
    /// The sources (`[sources.NAME]` in the configuration, or `livenote event --source NAME`)
    /// whose events may update the note, like `[mail, calendar]`. Absent: every source. Only
    /// narrows which events `eventMatchCriteria` is weighed against; it queues nothing itself.
    pub sources: Option<Vec<String>>,
    /// Who is told when a run ends: `changes` (a run changed the body), `failures` (a run
    /// failed), `all` (every run), or `false` (never). Absent: failures of scheduled and event
    /// runs. Desktop notifications come from `watch` and `tick` when `[notify] desktop = true`;
    /// an editor shows them itself; `[notify] command` gets each one as JSON. Several notes
    /// within a minute are one digest ("5 notes changed").
    #[schemars(extend("anyOf" = [{"enum": ["changes", "failures", "all"]}, {"const": false}, {"type": "null"}]))]
    pub notify: Option<serde_json::Value>,
    /// Written by livenote: when the latest run started (every run). Drives the 5-minute
    /// retry backoff.
    #[schemars(extend("format" = "date-time"))]
    pub last_attempt_at: Option<String>,
    /// Written by livenote: when the latest successful run ended (the moment its result was
    /// written). Anchors every trigger's cycle.
    #[schemars(extend("format" = "date-time"))]
    pub last_run_at: Option<String>,
    /// Written by livenote: the id of the latest run (sortable, time-based); its transcript is
    /// in `.livenote/runs/`.
    pub last_run_id: Option<String>,
    /// Written by livenote: the agent's summary of the latest successful run.
    pub last_run_summary: Option<String>,
    /// Written by livenote: why the latest run failed; cleared when a run succeeds.
    pub last_run_error: Option<String>,
    /// Written by livenote: consecutive failed runs since the last success (0 after a success
    /// or a run by hand). Each failure doubles the wait before the next scheduled try: 5, 10,
    /// 20, 40 minutes ... up to `[scheduler] max_backoff`.
    #[schemars(range(min = 0))]
    pub failures: Option<u64>,
    /// Written by livenote: when a run was last stopped. A stopped run is not retried; the
    /// note next fires at its next occurrence.
    #[schemars(extend("format" = "date-time"))]
    pub last_stopped_at: Option<String>,
}

/// `live.notify`: which ends of the note's runs the user is told of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NotifyWhen {
    /// A run changed the body.
    Changes,
    /// A run failed.
    Failures,
    /// Every run that ended (changed, unchanged or failed).
    All,
    /// `false`: never.
    Never,
}

impl NotifyWhen {
    /// The values as written in a note, with what each means (completion, messages).
    pub const CHOICES: &[(&str, &str)] = &[
        ("changes", "tell when a run changed the body"),
        ("failures", "tell when a run failed"),
        ("all", "tell after every run"),
        ("false", "never tell"),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NotifyWhen::Changes => "changes",
            NotifyWhen::Failures => "failures",
            NotifyWhen::All => "all",
            NotifyWhen::Never => "false",
        }
    }

    pub fn parse(s: &str) -> Option<NotifyWhen> {
        match s {
            "changes" => Some(NotifyWhen::Changes),
            "failures" => Some(NotifyWhen::Failures),
            "all" => Some(NotifyWhen::All),
            _ => None,
        }
    }
}

fn default_true() -> bool {
    true
}

/// When the agent runs. Each field is optional and independent; mix freely.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Triggers {
    /// A cron expression in local time: 5 fields (minute hour day-of-month month day-of-week),
    /// an optional leading seconds field, or a nickname such as `@hourly`. Vixie semantics:
    /// 0 and 7 are Sunday; day-of-month and day-of-week combine with OR. A missed time is
    /// skipped after a 2-minute grace, not replayed.
    pub cron_expr: Option<String>,
    /// Time-of-day bands; each fires at most once a day, as soon as possible inside its band.
    pub windows: Option<Vec<TimeWindow>>,
    /// Which incoming events should update the note, in plain words
    /// (e.g. "Emails about Q3 planning").
    #[schemars(length(min = 1))]
    pub event_match_criteria: Option<String>,
}

/// A daily band of local time. Windows cannot cross midnight; split such a band in two.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimeWindow {
    /// Start of the band, 24-hour `HH:MM` local time.
    #[schemars(pattern(r"^([01][0-9]|2[0-3]):[0-5][0-9]$"))]
    pub start_time: String,
    /// End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
    #[schemars(pattern(r"^([01][0-9]|2[0-3]):[0-5][0-9]$"))]
    pub end_time: String,
}

/// The JSON Schema of the frontmatter, pretty-printed with a trailing newline.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(NoteFrontmatter);
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}

/// A value with the byte range where the note wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Range<usize>,
}

/// One window as written, with what could be read of it.
#[derive(Debug, Clone)]
pub struct WindowEntry {
    /// The window when both times parse.
    pub window: Option<Window>,
    /// The list item (its mapping).
    pub span: Range<usize>,
    /// The times as written (for listings), when they are strings.
    pub start_text: Option<String>,
    pub end_text: Option<String>,
}

/// The validated, typed view of a `live:` block. Present whenever the note has a `live:` key,
/// even an invalid one; `has_errors` says whether the scheduler may consider it.
#[derive(Debug, Clone)]
pub struct Live {
    /// The `live` key itself (where block-level diagnostics, lenses and actions sit).
    pub key_span: Range<usize>,
    pub objective: Option<String>,
    pub active: bool,
    /// `active` as written, if present.
    pub active_span: Option<Range<usize>>,
    pub cron_expr: Option<Spanned<String>>,
    pub cron: Option<CronSchedule>,
    pub windows: Vec<WindowEntry>,
    pub event_match_criteria: Option<String>,
    pub provider: Option<Spanned<String>>,
    pub model: Option<String>,
    /// `tools` as written: each entry with its place; `None` when absent.
    pub tools: Option<Vec<Spanned<String>>>,
    /// `until` when it parses, with the place of its value.
    pub until: Option<Spanned<Until>>,
    /// `maxChars` when it is a positive integer, with the place of its value.
    pub max_chars: Option<Spanned<usize>>,
    /// `skills` as written: each name with its place; `None` when absent.
    pub skills: Option<Vec<Spanned<String>>>,
    /// `sources` as written: each name with its place; `None` when absent (every source).
    pub sources: Option<Vec<Spanned<String>>>,
    /// `notify` when it reads as one of its values; `None` when absent (the default rule).
    pub notify: Option<Spanned<NotifyWhen>>,
    pub last_attempt_at: Option<DateTime<Utc>>,
    pub last_run_at: Option<DateTime<Utc>>,
    pub last_run_id: Option<String>,
    pub last_run_summary: Option<String>,
    pub last_run_error: Option<String>,
    /// `failures`: consecutive failed runs (0 when absent or unreadable).
    pub failures: u32,
    pub last_stopped_at: Option<DateTime<Utc>>,
    /// The cap of the backoff, from the configuration of the note's root (`[scheduler]
    /// max_backoff`), never from the note: `None` (the default cap) until the caller that
    /// knows the configuration passes it in [`crate::note::Options`].
    pub max_backoff: Option<chrono::TimeDelta>,
    /// Spans of the runtime fields as written, by key.
    pub runtime_spans: Vec<(&'static str, Range<usize>)>,
    /// Whether any error-severity diagnostic concerns the block.
    pub has_errors: bool,
}

impl Live {
    /// The windows that parsed, in list order.
    pub fn valid_windows(&self) -> Vec<Window> {
        self.windows.iter().filter_map(|w| w.window).collect()
    }

    pub fn has_triggers(&self) -> bool {
        self.cron.is_some() || self.windows.iter().any(|w| w.window.is_some())
    }

    /// The entries of `tools` (`None` when absent: every configured MCP server).
    pub fn tool_names(&self) -> Option<Vec<String>> {
        self.tools.as_ref().map(|t| t.iter().map(|e| e.value.clone()).collect())
    }

    /// The names `skills` lists (none when absent).
    pub fn skill_names(&self) -> Vec<String> {
        self.skills.iter().flatten().map(|e| e.value.clone()).collect()
    }

    /// The names `sources` lists; `None` when absent (every source's events may reach it).
    pub fn source_names(&self) -> Option<Vec<String>> {
        self.sources.as_ref().map(|s| s.iter().map(|e| e.value.clone()).collect())
    }

    /// The first instant the note no longer fires at, in `tz`.
    pub fn until_instant<Tz: chrono::TimeZone>(&self, tz: &Tz) -> Option<DateTime<Utc>> {
        self.until.as_ref().and_then(|u| u.value.instant(tz))
    }

    /// Whether `until` has passed at `at`.
    pub fn expired<Tz: chrono::TimeZone>(&self, at: DateTime<Utc>, tz: &Tz) -> bool {
        self.until.as_ref().is_some_and(|u| u.value.passed(at, tz))
    }

    /// The span of a runtime field as written.
    pub fn runtime_span(&self, key: &str) -> Option<Range<usize>> {
        self.runtime_spans.iter().find(|(k, _)| *k == key).map(|(_, s)| s.clone())
    }
}

#[cfg(test)]
mod tests {
    /// docs/live-note.schema.json is generated from the types above; a stale copy is rewritten
    /// and the test fails, so the fresh file gets committed.
    #[test]
    fn checked_in_schema_is_fresh() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/live-note.schema.json");
        let fresh = super::json_schema();
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current != fresh {
            std::fs::write(&path, &fresh).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
            panic!("docs/live-note.schema.json was stale and has been regenerated; commit it");
        }
    }

    #[test]
    fn schema_describes_the_block() {
        let schema: serde_json::Value =
            serde_json::from_str(&super::json_schema()).unwrap_or_else(|e| panic!("{e}"));
        let live = &schema["$defs"]["LiveBlock"];
        assert_eq!(live["required"], serde_json::json!(["objective"]));
        assert_eq!(live["additionalProperties"], serde_json::json!(false));
        assert!(schema["$defs"]["TimeWindow"]["properties"]["startTime"]["pattern"].is_string());
    }
}
