//! Editor features as pure functions: completion, hover, code actions, code lenses, inlay
//! hints and the status texts they share. Each takes a [`Ctx`] (the note's text and analysis,
//! the instant, the time zone, configuration and run facts) and a byte offset or range, and
//! returns plain structs with byte ranges. No LSP types: `lsp/` translates.

pub mod actions;
pub mod completion;
pub mod cursor;
pub mod definition;
pub mod hints;
pub mod hover;
pub mod lens;
pub mod memory;
pub mod text;

use chrono::{DateTime, TimeZone, Utc};

use crate::note::Analysis;
use crate::status::RunFacts;

/// Everything a feature may consult about one note.
pub struct Ctx<'a, Tz: TimeZone> {
    pub text: &'a str,
    pub analysis: &'a Analysis,
    pub now: DateTime<Utc>,
    pub tz: &'a Tz,
    /// Names of the configured providers (for completion and checks).
    pub providers: &'a [String],
    /// The MCP servers `live.tools` may name, with their tools when known.
    pub mcp: &'a crate::note::tools::McpCatalog,
    pub facts: RunFacts,
    /// What the note's latest run (`lastRunId`) cost, when known; looked up only for hover.
    pub last_run: Option<&'a crate::cost::LastRun>,
    /// The skills `live.skills` may name (completion, hover).
    pub skills: &'a crate::note::skills::SkillCatalog,
    /// The sources of the note's folder that may queue events for it (hover on
    /// `eventMatchCriteria`, completion of `sources`); `None` outside every folder.
    pub sources: Option<&'a [crate::note::sources::SourceRef]>,
    /// The latest events routing gave the note, newest first; looked up only for hover.
    pub recent_events: &'a [crate::note::sources::MatchedEvent],
}

/// Command ids, shared by code actions, lenses and `workspace/executeCommand`. Each takes the
/// document URI as its first argument.
pub mod commands {
    pub const MAKE_LIVE: &str = "livenote.makeLive";
    pub const RUN: &str = "livenote.run";
    pub const STOP: &str = "livenote.stop";
    pub const SET_ACTIVE: &str = "livenote.setActive";
    pub const MAKE_PASSIVE: &str = "livenote.makePassive";
    pub const UNDO_LAST_RUN: &str = "livenote.undoLastRun";
    pub const LIST_NOTES: &str = "livenote.listNotes";
    pub const TRUST_WORKSPACE: &str = "livenote.trustWorkspace";
    /// One note's status (for a status bar); returns JSON, edits nothing.
    pub const NOTE_STATUS: &str = "livenote.noteStatus";
    /// Delete the note's agent memory (`.livenote/memory/`).
    pub const CLEAR_MEMORY: &str = "livenote.clearMemory";
    /// Replace a live note's schedule with a preset (`rewrite::Schedule::id`, second argument).
    pub const SET_SCHEDULE: &str = "livenote.setSchedule";
    /// `[noteUri, sentence]`: the configured model acts on the sentence (`crate::ask`).
    pub const ASK: &str = "livenote.ask";
    pub const ALL: &[&str] = &[
        MAKE_LIVE,
        RUN,
        STOP,
        SET_ACTIVE,
        MAKE_PASSIVE,
        UNDO_LAST_RUN,
        LIST_NOTES,
        TRUST_WORKSPACE,
        NOTE_STATUS,
        CLEAR_MEMORY,
        SET_SCHEDULE,
        ASK,
    ];
}

/// A command to run (a lens's click or an action's effect). `args` come after the document
/// URI, which the LSP layer prepends.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub title: String,
    pub id: &'static str,
    pub args: Vec<serde_json::Value>,
}

#[cfg(test)]
pub(crate) mod fixture {
    //! Test fixtures: `$0` marks the cursor; a fixed instant and zone make times stable.

    use chrono::{DateTime, Utc};

    use super::Ctx;
    use crate::note::tools::{McpCatalog, McpServerInfo, McpToolInfo};
    use crate::note::{self, Analysis};
    use crate::status::RunFacts;

    /// Split a fixture into its text and the cursor offset (`$0`, removed).
    pub fn cursor(fixture: &str) -> (String, usize) {
        let Some(at) = fixture.find("$0") else { panic!("fixture has no $0 cursor") };
        (fixture.replacen("$0", "", 1), at)
    }

    /// 2026-11-23 (a Monday) 15:07:00 UTC, 09:07 in Chicago.
    pub fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-23T15:07:00Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default()
    }

    pub fn analysis(text: &str, providers: &[String]) -> Analysis {
        let skills = skills();
        note::analyze(
            text,
            &note::Options {
                providers: Some(providers),
                mcp: Some(&mcp()),
                skills: Some(&skills),
                scan_body: true,
                max_backoff: None,
            },
        )
    }

    /// A workspace skill with its file, and livenote's own.
    pub fn skills() -> crate::note::skills::SkillCatalog {
        use crate::note::skills::{SkillCatalog, SkillInfo, Source};
        SkillCatalog {
            skills: vec![
                SkillInfo {
                    name: "weekly-digest".to_owned(),
                    description: "Sum up a week of notes, grouped by day.".to_owned(),
                    source: Source::Workspace,
                    path: Some(std::path::PathBuf::from("/w/skills/digest.md")),
                },
                SkillInfo {
                    name: "writing-live-notes".to_owned(),
                    description: "How to write a good live note.".to_owned(),
                    source: Source::BuiltIn,
                    path: None,
                },
            ],
        }
    }

    /// `time` with two tools listed by a run, `github` not listed yet.
    pub fn mcp() -> McpCatalog {
        let tool = |name: &str, description: &str, params: &[&str]| McpToolInfo {
            name: name.to_owned(),
            description: Some(description.to_owned()),
            params: params.iter().map(|p| p.to_string()).collect(),
        };
        McpCatalog {
            servers: vec![
                McpServerInfo { name: "github".to_owned(), tools: None },
                McpServerInfo {
                    name: "time".to_owned(),
                    tools: Some(vec![
                        tool("get_current_time", "Get current time in a specific timezone", &["timezone"]),
                        tool(
                            "convert_time",
                            "Convert time between timezones",
                            &["source_timezone", "time", "target_timezone"],
                        ),
                    ]),
                },
            ],
        }
    }

    /// Run `f` with a context over `text` in America/Chicago at [`now`].
    pub fn with_ctx<R>(text: &str, facts: RunFacts, f: impl FnOnce(&Ctx<'_, chrono_tz::Tz>) -> R) -> R {
        let providers = vec!["local".to_owned(), "claude".to_owned()];
        let analysis = analysis(text, &providers);
        let tz = chrono_tz::America::Chicago;
        let mcp = mcp();
        let skills = skills();
        let source = |name: &str, kind| crate::note::sources::SourceRef {
            name: name.to_owned(),
            kind,
            waiting_for_trust: false,
        };
        let sources = [source("mail", "imap"), source("releases", "feed")];
        let ctx = Ctx {
            text,
            analysis: &analysis,
            now: now(),
            tz: &tz,
            providers: &providers,
            mcp: &mcp,
            facts,
            last_run: None,
            skills: &skills,
            sources: Some(&sources),
            recent_events: &[],
        };
        f(&ctx)
    }
}
