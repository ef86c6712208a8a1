//! What a note says about where its events come from, checked against the sources its folder
//! configures (`[sources.NAME]`): `live/no-event-source` (criteria but no source at all) and
//! `live/unknown-source` (`live.sources` names one the folder does not have). Pure: the
//! folder's sources come in as [`SourceRef`]s from whoever read the configuration.

use super::diagnostic::{Code, Diagnostic, Severity};
use super::model::Live;
use crate::text::TextEdit;

/// A source of the note's folder, as analysis and the editor show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRef {
    pub name: String,
    /// `feed`, `ics`, `imap`, `webhook`, `command`.
    pub kind: &'static str,
    /// The folder's own `.livenote.toml` names it, and it waits for the folder's trust.
    pub waiting_for_trust: bool,
}

impl SourceRef {
    /// `mail (imap)`, or `mail (imap, once the folder is trusted)`.
    pub fn label(&self) -> String {
        if self.waiting_for_trust {
            format!("{} ({}, once the folder is trusted)", self.name, self.kind)
        } else {
            format!("{} ({})", self.name, self.kind)
        }
    }
}

/// An event routing gave a note, as hover shows it (`events::recent` reads them from
/// `.livenote/events/done/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchedEvent {
    pub id: String,
    pub source: String,
    /// The event's `type`.
    pub kind: String,
    /// RFC 3339: when the event was processed (else created).
    pub at: String,
    /// A line about the payload: its subject or title when it has one.
    pub summary: String,
    /// What the note's run did with it: `done`, `failed`, `stopped`, `skipped`, or `routed`
    /// when no result is recorded.
    pub status: String,
}

/// Whether an event from `source` may reach `live` (`live.sources` absent: every source).
pub fn accepts(sources: Option<&[String]>, source: &str) -> bool {
    sources.is_none_or(|list| list.iter().any(|s| s == source))
}

/// The diagnostics of a note's events against its folder's `sources`.
pub fn source_diagnostics(text: &str, live: Option<&Live>, sources: &[SourceRef]) -> Vec<Diagnostic> {
    let Some(live) = live else { return Vec::new() };
    let mut out = Vec::new();
    if live.event_match_criteria.is_some() && sources.is_empty() {
        out.push(Diagnostic::new(
            Code::NoEventSource,
            Severity::Info,
            live.key_span.clone(),
            "no source sends events here: `eventMatchCriteria` waits for events, and this folder has no `[sources.NAME]` (a feed, a calendar, a mailbox, a webhook, a program; docs/sources.md); `livenote event` can still queue one",
        ));
    }
    for entry in live.sources.iter().flatten() {
        if sources.iter().any(|s| s.name == entry.value) {
            continue;
        }
        let span = if entry.span.is_empty() { live.key_span.clone() } else { entry.span.clone() };
        let near = super::skills::closest_names(&entry.value, sources.iter().map(|s| s.name.as_str()), 3);
        let near: Vec<&str> = near
            .into_iter()
            .filter(|n| {
                crate::text::words::edit_distance(&n.to_lowercase(), &entry.value.to_lowercase()) <= 3
            })
            .collect();
        let known = match sources {
            [] => "this folder configures no source".to_owned(),
            all => format!(
                "this folder's sources are {}",
                all.iter().map(|s| format!("`{}`", s.name)).collect::<Vec<_>>().join(", ")
            ),
        };
        let mut d = Diagnostic::warning(
            Code::UnknownSource,
            span.clone(),
            format!(
                "no source named `{}` ({known}); only events queued with `livenote event --source {}` reach this note",
                entry.value, entry.value
            ),
        );
        // Fixes only where the text under the span is the name itself (never a half-typed list).
        if text.get(span.clone()).is_some_and(|t| t.trim_matches(['"', '\'']) == entry.value) {
            for (i, n) in near.iter().enumerate() {
                d = d.with_fix(
                    format!("Use source `{n}`"),
                    vec![TextEdit::replace(span.clone(), super::tools::entry_yaml(n))],
                    i == 0,
                );
            }
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(names: &[&str]) -> Vec<SourceRef> {
        names
            .iter()
            .map(|n| SourceRef { name: (*n).to_owned(), kind: "feed", waiting_for_trust: false })
            .collect()
    }

    fn diags(text: &str, sources: &[SourceRef]) -> Vec<String> {
        let a = crate::note::analyze(text, &crate::note::Options::default());
        source_diagnostics(text, a.live.as_ref(), sources)
            .iter()
            .map(|d| {
                let fixes: Vec<&str> = d.fixes.iter().map(|f| f.title.as_str()).collect();
                format!("{:?} {:?} {} {:?}", d.code, &text[d.range.clone()], d.message, fixes)
            })
            .collect()
    }

    #[test]
    fn accepts_every_source_without_a_list_and_only_the_listed_with_one() {
        assert!(accepts(None, "mail"));
        let list = vec!["mail".to_owned(), "cal".to_owned()];
        assert!(accepts(Some(&list), "cal"));
        assert!(!accepts(Some(&list), "releases"));
        assert!(!accepts(Some(&[]), "mail"));
    }

    #[test]
    fn criteria_without_a_source_and_names_the_folder_lacks() {
        let text = "---\nlive:\n  objective: x\n  sources: [mial, releases]\n  triggers:\n    eventMatchCriteria: Q3\n---\n";
        expect_test::expect![[r#"
            [
                "UnknownSource \"mial\" no source named `mial` (this folder's sources are `mail`, `calendar`); only events queued with `livenote event --source mial` reach this note [\"Use source `mail`\"]",
                "UnknownSource \"releases\" no source named `releases` (this folder's sources are `mail`, `calendar`); only events queued with `livenote event --source releases` reach this note []",
            ]
        "#]]
        .assert_debug_eq(&diags(text, &refs(&["mail", "calendar"])));
        let none = diags(text, &[]);
        assert_eq!(none.len(), 3, "{none:?}");
        assert!(none[0].starts_with("NoEventSource \"live\""), "{none:?}");
        assert!(none[1].contains("this folder configures no source"), "{none:?}");
    }

    #[test]
    fn known_names_and_notes_without_events_are_quiet() {
        let text = "---\nlive:\n  objective: x\n  sources:\n    - mail\n  triggers:\n    eventMatchCriteria: Q3\n---\n";
        assert_eq!(diags(text, &refs(&["mail"])), Vec::<String>::new());
        assert_eq!(diags("---\nlive:\n  objective: x\n---\n", &[]), Vec::<String>::new());
        assert_eq!(diags("# plain\n", &[]), Vec::<String>::new());
    }
}
