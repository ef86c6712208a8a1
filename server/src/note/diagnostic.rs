//! Problems found in a note: a byte range, a severity, a stable `live/<name>` code, a message a
//! user understands, and the quick fixes that resolve it.

use std::ops::Range;

use crate::text::TextEdit;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

macro_rules! codes {
    ($($variant:ident => $name:literal: $summary:literal,)*) => {
        /// Every diagnostic livenote reports. The string form is stable: editors, `check --format
        /// json` and docs/diagnostics.md rely on it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => concat!("live/", $name),)* }
            }

            /// One line on what the code means (for docs and `--explain`-style output).
            pub fn summary(self) -> &'static str {
                match self { $(Code::$variant => $summary,)* }
            }

            pub fn parse(s: &str) -> Option<Code> {
                Code::ALL.iter().copied().find(|c| c.as_str() == s)
            }
        }
    };
}

codes! {
    YamlSyntax => "yaml-syntax": "The frontmatter is not valid YAML.",
    DuplicateKey => "duplicate-key": "A key appears twice in the same mapping.",
    DuplicateLive => "duplicate-live": "The frontmatter has two `live:` blocks; a note has one.",
    YamlTooComplex => "yaml-too-complex": "The frontmatter is too large, too deeply nested or expands too many aliases to read safely.",
    UnterminatedFrontmatter => "unterminated-frontmatter": "The frontmatter opened with `---` is never closed.",
    LiveNotMapping => "live-not-mapping": "`live:` must be a mapping of keys.",
    MissingObjective => "missing-objective": "A live note needs a non-empty `objective`.",
    WrongType => "wrong-type": "A value has the wrong type (for example `active: yes`).",
    EmptyValue => "empty-value": "A value that must be non-empty text is blank.",
    UnknownKey => "unknown-key": "A key livenote does not know inside `live:` or `triggers:`.",
    RemovedOnceTrigger => "removed-once-trigger": "The `once` trigger was removed from the live-note model.",
    InvalidCron => "invalid-cron": "`cronExpr` is not a valid cron expression.",
    FrequentCron => "frequent-cron": "The cron fires more often than every 5 minutes; every fire is an agent run.",
    InvalidTime => "invalid-time": "A window time is not a 24-hour `HH:MM` time.",
    IncompleteWindow => "incomplete-window": "A window needs both `startTime` and `endTime`.",
    WindowEndBeforeStart => "window-end-before-start": "A window ends before it starts; windows cannot cross midnight.",
    OverlappingWindows => "overlapping-windows": "Two windows overlap, so one run can satisfy both.",
    UnknownProvider => "unknown-provider": "`provider` names no configured provider.",
    InvalidUntil => "invalid-until": "`until` is neither a date (`2026-02-25`) nor an RFC 3339 time.",
    Expired => "expired": "`until` has passed: the note no longer fires on schedule or on events.",
    InvalidMaxChars => "invalid-max-chars": "`maxChars` is not a whole number above zero.",
    InvalidNotify => "invalid-notify": "`notify` is not one of `changes`, `failures`, `all` or `false`.",
    OverBudget => "over-budget": "The note's body is longer than its `maxChars` budget.",
    UnknownTool => "unknown-tool": "`tools` names an MCP server that is not configured, or a tool its server does not list.",
    LastRunFailed => "last-run-failed": "The latest run failed; the message stays until a run succeeds.",
    RuntimeFieldShape => "runtime-field-shape": "A field livenote writes (`lastRunAt`, ...) has a shape it cannot read; it is ignored.",
    LegacyTrackFence => "legacy-track-fence": "A ```` ```track ```` fence from the older per-block model.",
    LegacyTrackList => "legacy-track-list": "A frontmatter `track:` list from the older per-block model.",
    InstructionsTooLong => "instructions-too-long": "A standing-instructions file is longer than `[agent] instructions_max_chars`; runs get it cut.",
    UnknownSkill => "unknown-skill": "`skills` names a skill that no skills folder (the workspace's, the user's) nor livenote defines.",
    SkillMissingField => "skill-missing-field": "A file in a skills folder lacks the `name` or `description` a skill needs in its frontmatter.",
    DuplicateSkill => "duplicate-skill": "Two skill files of the workspace use the same `name`.",
    SyncConflictCopy => "sync-conflict-copy": "The file is a sync tool's conflict copy of a note (Syncthing, Dropbox, Nextcloud, Seafile); it never runs on its own.",
    NoEventSource => "no-event-source": "`eventMatchCriteria` is set, but no source of the note's folder sends events (`[sources.NAME]`).",
    UnknownSource => "unknown-source": "`sources` names a source the note's folder does not configure; only `livenote event --source NAME` sends its events.",
    SourcesWithoutCriteria => "sources-without-criteria": "`sources` narrows which events reach `eventMatchCriteria`, and the note has none: no event reaches it.",
}

/// An edit that resolves a diagnostic, offered as a quick fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<TextEdit>,
    /// The obvious fix, applied by "fix all" style actions.
    pub preferred: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Byte range in the note.
    pub range: Range<usize>,
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    pub fixes: Vec<Fix>,
}

impl Diagnostic {
    pub fn new(code: Code, severity: Severity, range: Range<usize>, message: impl Into<String>) -> Self {
        Diagnostic { range, severity, code, message: message.into(), fixes: Vec::new() }
    }

    pub fn error(code: Code, range: Range<usize>, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, range, message)
    }

    pub fn warning(code: Code, range: Range<usize>, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Warning, range, message)
    }

    pub fn with_fix(mut self, title: impl Into<String>, edits: Vec<TextEdit>, preferred: bool) -> Self {
        self.fixes.push(Fix { title: title.into(), edits, preferred });
        self
    }
}
