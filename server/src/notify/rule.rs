//! Who is told what (pure): the `live.notify` rule for a run's trigger and outcome, and the one
//! line a notification says, for one note or for a digest of several.

use std::path::PathBuf;

use serde::Serialize;

use crate::note::model::NotifyWhen;
use crate::schedule::TriggerKind;
use crate::text::count::count;
use crate::text::short::one_line;

/// How a run ended, as a notification names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The run changed the body.
    Changed,
    /// The run ended and the body is as it was (an event the agent judged not to matter).
    Unchanged,
    Failed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Changed => "changed",
            Outcome::Unchanged => "unchanged",
            Outcome::Failed => "failed",
        }
    }
}

/// Whether a run of a note whose block says `rule` (`None`: no `notify` key) tells the user.
/// Absent, failures of scheduled and event runs are told: a run by hand has its user watching.
pub fn told(rule: Option<NotifyWhen>, trigger: TriggerKind, outcome: Outcome) -> bool {
    match rule {
        Some(NotifyWhen::Never) => false,
        Some(NotifyWhen::All) => true,
        Some(NotifyWhen::Changes) => outcome == Outcome::Changed,
        Some(NotifyWhen::Failures) => outcome == Outcome::Failed,
        None => trigger != TriggerKind::Manual && outcome == Outcome::Failed,
    }
}

/// A trigger as notifications name it: `schedule` (cron and windows alike), `event`, `manual`.
pub fn trigger_name(trigger: TriggerKind) -> &'static str {
    match trigger {
        TriggerKind::Cron | TriggerKind::Window => "schedule",
        TriggerKind::Event => "event",
        TriggerKind::Manual => "manual",
    }
}

/// One run told of: at most one per note per run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The note's absolute path.
    pub path: PathBuf,
    /// Its name (`workspace::index::note_title`).
    pub title: String,
    pub trigger: TriggerKind,
    pub outcome: Outcome,
    /// The run's summary, or why it failed.
    pub summary: String,
    /// Lines of the body added and removed by the run.
    pub added: usize,
    pub removed: usize,
    pub run_id: String,
}

impl Entry {
    /// The one line said of this run alone: "Weather changed: 3 lines added, 1 removed".
    pub fn message(&self) -> String {
        let title = one_line(&self.title, 80);
        match self.outcome {
            Outcome::Changed => match (self.added, self.removed) {
                (0, 0) => format!("{title} changed"),
                (a, 0) => format!("{title} changed: {} added", count(a, "line")),
                (0, r) => format!("{title} changed: {} removed", count(r, "line")),
                (a, r) => format!("{title} changed: {} added, {r} removed", count(a, "line")),
            },
            Outcome::Unchanged => format!("{title} ran: nothing changed"),
            Outcome::Failed => format!("{title} failed: {}", one_line(&self.summary, 160)),
        }
    }
}

/// What one notification says: one run, or a digest of the runs that ended within a minute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// One line ready to show.
    pub message: String,
    pub digest: bool,
    pub entries: Vec<Entry>,
}

impl Notice {
    /// The notice of `entries` (at least one): the run's own line, or a digest's count.
    pub fn of(entries: Vec<Entry>) -> Notice {
        let message = match entries.as_slice() {
            [one] => one.message(),
            all => digest_line(all),
        };
        Notice { message, digest: entries.len() > 1, entries }
    }

    /// Whether any run it tells of failed (shown as a warning).
    pub fn failed(&self) -> bool {
        self.entries.iter().any(|e| e.outcome == Outcome::Failed)
    }

    /// The lines below the message: the run's summary, or one line per run of a digest.
    pub fn body(&self) -> String {
        const SHOWN: usize = 8;
        match self.entries.as_slice() {
            [one] if one.outcome == Outcome::Failed => String::new(),
            [one] => one_line(&one.summary, 300),
            all => {
                let mut lines: Vec<String> = all.iter().take(SHOWN).map(Entry::message).collect();
                if all.len() > SHOWN {
                    lines.push(format!("and {} more", all.len() - SHOWN));
                }
                lines.join("\n")
            }
        }
    }
}

/// "5 notes changed"; "4 notes: 3 changed, 1 failed" when they ended differently.
fn digest_line(all: &[Entry]) -> String {
    let notes: std::collections::BTreeSet<&PathBuf> = all.iter().map(|e| &e.path).collect();
    let n = count(notes.len(), "note");
    let by = |o: Outcome| all.iter().filter(|e| e.outcome == o).count();
    let parts: Vec<String> = [Outcome::Changed, Outcome::Failed, Outcome::Unchanged]
        .into_iter()
        .filter_map(|o| {
            let k = by(o);
            (k > 0).then(|| format!("{k} {}", o.as_str()))
        })
        .collect();
    match parts.as_slice() {
        [only] if only.ends_with("unchanged") => format!("{n} ran, nothing changed"),
        [only] => format!("{n} {}", only.split_once(' ').map_or("", |(_, o)| o)),
        several => format!("{n}: {}", several.join(", ")),
    }
}

#[cfg(test)]
#[path = "rule_tests.rs"]
mod tests;
