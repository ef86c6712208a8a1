//! A live note's status and schedule at an instant: what the CLI lists and, later, what lenses
//! and hints show. Pure over the validated block, an instant and a time zone.

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::Serialize;

use crate::note::model::Live;
use crate::schedule::{self, Decision, DueTrigger, ScheduleInput, Window};

/// The status of a live note, most urgent first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The block has errors; nothing fires until they are fixed.
    Invalid,
    /// A run is in progress.
    Running,
    /// `active: false`.
    Paused,
    /// The workspace is not trusted; nothing fires on its own.
    Untrusted,
    /// The latest run failed (`lastRunError`); retried after the backoff.
    Failed,
    /// Live and healthy.
    Live,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Invalid => "invalid",
            Status::Running => "running",
            Status::Paused => "paused",
            Status::Untrusted => "untrusted",
            Status::Failed => "failed",
            Status::Live => "live",
        }
    }
}

/// Facts from outside the note that change its status.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunFacts {
    pub running: bool,
    /// `None` when trust is not considered (e.g. `livenote list`).
    pub trusted: Option<bool>,
    /// `[scheduler] enabled = false` (or the editor turned scheduling off): the note runs
    /// only by hand, whatever its triggers say.
    pub scheduling_off: bool,
}

pub fn status(live: &Live, facts: RunFacts) -> Status {
    if facts.running {
        Status::Running
    } else if live.has_errors {
        Status::Invalid
    } else if !live.active {
        Status::Paused
    } else if facts.trusted == Some(false) {
        Status::Untrusted
    } else if live.last_run_error.is_some() {
        Status::Failed
    } else {
        Status::Live
    }
}

/// What the scheduler would do with a note at an instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleView {
    /// The decision at the instant (`None` for invalid notes, which are never considered).
    pub decision: Option<Decision>,
    /// The next instant the note is due at or after the instant.
    pub next_due: Option<DateTime<Utc>>,
}

impl ScheduleView {
    pub fn due(&self) -> Option<DueTrigger> {
        self.decision.as_ref().and_then(Decision::trigger)
    }
}

pub fn schedule_view<Tz: TimeZone>(live: &Live, at: DateTime<Utc>, tz: &Tz) -> ScheduleView {
    if live.has_errors {
        return ScheduleView { decision: None, next_due: None };
    }
    let windows: Vec<Window> = live.valid_windows();
    let input = ScheduleInput {
        active: live.active,
        cron: live.cron.as_ref(),
        windows: &windows,
        last_run_at: live.last_run_at,
        last_attempt_at: live.last_attempt_at,
    };
    ScheduleView {
        decision: Some(schedule::due(&input, at, tz)),
        next_due: schedule::next_due(&input, at, tz),
    }
}

/// The trigger kind as the JSON output names it.
pub fn trigger_name(t: DueTrigger) -> &'static str {
    match t {
        DueTrigger::Cron { .. } => "cron",
        DueTrigger::Window { .. } => "window",
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListItem {
    pub path: String,
    pub active: bool,
    pub status: &'static str,
    pub triggers: Triggers,
    pub due: Option<&'static str>,
    pub next_due: Option<String>,
    pub last_run_at: Option<String>,
    pub last_attempt_at: Option<String>,
    pub last_run_error: Option<String>,
}

/// The triggers as written in the note.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Triggers {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cron_expr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows: Option<Vec<WindowItem>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_match_criteria: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowItem {
    pub start_time: Option<String>,
    pub end_time: Option<String>,
}

/// One live note as `livenote list --format json` and `livenote.listNotes` show it.
pub fn list_item<Tz: TimeZone>(
    path: String,
    live: &Live,
    facts: RunFacts,
    at: DateTime<Utc>,
    tz: &Tz,
) -> ListItem {
    let view = schedule_view(live, at, tz);
    let triggers = Triggers {
        cron_expr: live.cron_expr.as_ref().map(|c| c.value.clone()),
        windows: (!live.windows.is_empty()).then(|| {
            live.windows
                .iter()
                .map(|w| WindowItem { start_time: w.start_text.clone(), end_time: w.end_text.clone() })
                .collect()
        }),
        event_match_criteria: live.event_match_criteria.clone(),
    };
    ListItem {
        path,
        active: live.active,
        status: status(live, facts).as_str(),
        triggers,
        due: view.due().map(trigger_name),
        next_due: view
            .next_due
            .map(|t| t.with_timezone(tz).fixed_offset().to_rfc3339_opts(SecondsFormat::Secs, false)),
        last_run_at: live.last_run_at.map(utc),
        last_attempt_at: live.last_attempt_at.map(utc),
        last_run_error: live.last_run_error.clone(),
    }
}

fn utc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}
