//! What starts a run: defined once, here, with the one mapping from a due decision to it.
//! Run requests, transcripts, logs, prompts and status all name triggers through this type.

use serde::{Deserialize, Serialize};

use super::DueTrigger;

/// What started a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TriggerKind {
    Manual,
    Cron,
    Window,
    Event,
}

impl TriggerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::Manual => "manual",
            TriggerKind::Cron => "cron",
            TriggerKind::Window => "window",
            TriggerKind::Event => "event",
        }
    }

    /// Scheduled runs (cron, windows) are re-checked under the note's lock and back off after
    /// a failure; manual and event runs do neither.
    pub fn is_scheduled(self) -> bool {
        matches!(self, TriggerKind::Cron | TriggerKind::Window)
    }
}

impl From<DueTrigger> for TriggerKind {
    fn from(t: DueTrigger) -> Self {
        match t {
            DueTrigger::Cron { .. } => TriggerKind::Cron,
            DueTrigger::Window { .. } => TriggerKind::Window,
        }
    }
}
