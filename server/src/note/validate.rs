//! Validation of a note: every rule of SPEC section 1 as a diagnostic with an exact range, a
//! stable code and, where the fix is obvious, a quick fix. Never fails: an invalid note yields
//! diagnostics and as much of the model as could be read.

mod budget;
mod notify;
mod references;
mod schedule_fields;
mod skills;

use std::ops::Range;

use chrono::{DateTime, Utc};

use super::diagnostic::{Code, Diagnostic, Severity};
use super::fields::{self, Level, Suggestion};
use super::frontmatter::{self, Frontmatter};
use super::model::{Live, Spanned, WindowEntry};
use super::outline::Outline;
use super::yaml::{self, Entry, Kind, Node, Scalar, YamlErrorKind};
use crate::schedule::Until;
use crate::schedule::cron::CronSchedule;
use crate::schedule::window::{TimeOfDay, TimeOfDayError, Window};
use crate::text::TextEdit;

/// What validation may consult beyond the note itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// Names of the configured providers; `None` skips the `provider` check.
    pub providers: Option<&'a [String]>,
    /// The configured MCP servers (and their tools, when known); `None` skips checking the
    /// entries of `tools` against them.
    pub mcp: Option<&'a super::tools::McpCatalog>,
    /// The skills `live.skills` may name; `None` skips checking its entries against them.
    pub skills: Option<&'a super::skills::SkillCatalog>,
    /// Also scan the body (for legacy ```` ```track ```` fences). The frontmatter checks never
    /// read the body.
    pub scan_body: bool,
    /// The backoff's cap from the note's root configuration, copied into [`Live::max_backoff`]
    /// so every schedule computed from the block uses it; `None` for the default.
    pub max_backoff: Option<chrono::TimeDelta>,
}

/// Everything known about one note.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub frontmatter: Option<Frontmatter>,
    /// The `live:` block, when the frontmatter has one (even an invalid one).
    pub live: Option<Live>,
    pub diagnostics: Vec<Diagnostic>,
    /// The frontmatter's top-level `title:` when it is a string (so the workspace index does
    /// not parse the frontmatter a second time for it).
    pub title: Option<String>,
    /// The note's line ending ([`Analysis::eol`]), found when first asked for.
    eol: std::sync::OnceLock<crate::text::Eol>,
}

impl Analysis {
    /// The line ending of `text`, the note this analysis is of (`text::Eol::of`): what
    /// completions insert. Finding it reads the whole note, so it is found once per analysed
    /// version, and only when a request needs it (never at a keystroke).
    pub fn eol(&self, text: &str) -> crate::text::Eol {
        *self.eol.get_or_init(|| crate::text::Eol::of(text))
    }

    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }
}

/// The warning on a standing-instructions file (`instructions::workspace_files`) over its
/// budget of `max` characters, on the part runs do not get.
pub fn instructions_too_long(text: &str, max: usize) -> Option<Diagnostic> {
    let text = text.trim_end();
    let (start, _) = text.char_indices().nth(max)?;
    let chars = max + text[start..].chars().count();
    Some(Diagnostic::warning(
        Code::InstructionsTooLong,
        start..text.len(),
        format!(
            "standing instructions of {chars} characters, over the budget of {max} ([agent] instructions_max_chars): runs get only the first {max}, cut with a marker"
        ),
    ))
}

pub fn analyze(text: &str, opts: &Options) -> Analysis {
    let mut cx = Cx { text, diags: Vec::new(), outline: None, fm_content: 0..0, title: None };
    let fm = frontmatter::locate(text);
    let live = fm.as_ref().and_then(|fm| {
        cx.fm_content = fm.content.clone();
        cx.frontmatter(fm, opts)
    });
    if opts.scan_body {
        let body_start = fm.as_ref().map_or(0, Frontmatter::body_start);
        let fences = frontmatter::track_fences(text, body_start);
        // Every fence merges into the one block: each hint's fix converts them all (one that
        // cannot be read leaves the others to their own fixes).
        let all = (live.is_none() && fences.len() > 1)
            .then(|| super::rewrite::convert_track_fences(text).ok())
            .flatten();
        for fence in fences {
            let mut d = Diagnostic::new(
                Code::LegacyTrackFence,
                Severity::Hint,
                fence.open_line.clone(),
                "a ```track fence from the older per-block model; livenote uses one `live:` block in the frontmatter",
            );
            if let Some(edits) = &all {
                d = d.with_fix("Convert to live note", edits.clone(), true);
            } else if live.is_none()
                && let Ok(edits) = super::rewrite::convert_track_fence(text, &fence)
            {
                d = d.with_fix("Convert to live note", edits, true);
            }
            cx.diags.push(d);
        }
    }
    if let Some((key, _)) = super::rewrite::track_list(text) {
        let mut d = Diagnostic::new(
            Code::LegacyTrackList,
            Severity::Hint,
            key,
            "a `track:` list from the older per-block model; livenote uses one `live:` block in the frontmatter",
        );
        if live.is_none()
            && let Ok(edits) = super::rewrite::convert_track_list(text)
        {
            d = d.with_fix("Convert to live note", edits, true);
        }
        cx.diags.push(d);
    }
    // Only with the whole text: a caller that read just the frontmatter knows no body size.
    if opts.scan_body
        && let Some(d) = live.as_ref().and_then(|l| budget::over_budget(text, l))
    {
        cx.diags.push(d);
    }
    let mut diagnostics = cx.diags;
    diagnostics.sort_by_key(|d| (d.range.start, d.range.end));
    let has_errors = diagnostics.iter().any(|d| d.severity == Severity::Error);
    let live = live.map(|mut l| {
        l.has_errors = has_errors;
        l
    });
    Analysis { frontmatter: fm, live, diagnostics, title: cx.title, eol: std::sync::OnceLock::new() }
}

struct Cx<'a> {
    text: &'a str,
    diags: Vec<Diagnostic>,
    outline: Option<Outline>,
    fm_content: Range<usize>,
    title: Option<String>,
}

impl<'a> Cx<'a> {
    fn outline(&mut self) -> &Outline {
        let (text, content) = (self.text, self.fm_content.clone());
        self.outline.get_or_insert_with(|| Outline::parse(text, content))
    }

    fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// The byte range of the whole entry (key line through nested lines) whose key starts at
    /// `key_start`, for fixes that remove it.
    fn entry_extent(&mut self, key_start: usize) -> Option<Range<usize>> {
        let o = self.outline();
        let i = o.line_at(key_start)?;
        Some(o.extent(i))
    }

    /// A non-empty range for zero-width positions, so editors can underline something.
    fn widen(&self, r: Range<usize>) -> Range<usize> {
        if !r.is_empty() {
            return r;
        }
        let rest = &self.text[r.start.min(self.text.len())..];
        match rest.chars().next() {
            Some(c) if c != '\n' && c != '\r' => r.start..r.start + c.len_utf8(),
            _ => r,
        }
    }

    fn frontmatter(&mut self, fm: &Frontmatter, opts: &Options) -> Option<Live> {
        let open_line = fm.open.start..fm.open.start + 3;
        if fm.close.is_none() {
            let has_live = self.outline().find(&["live"]).is_some();
            let severity = if has_live { Severity::Error } else { Severity::Warning };
            self.push(Diagnostic::new(
                Code::UnterminatedFrontmatter,
                severity,
                open_line,
                "frontmatter is not closed: add a line `---` after it",
            ));
            return None;
        }
        let root = match yaml::parse(self.text, fm.content.clone()) {
            Ok(root) => root,
            Err(e) => {
                self.yaml_error(e);
                // Keep a block (with errors) so lenses stay put while the user types.
                let key = {
                    let o = self.outline();
                    let i = o.find(&["live"])?;
                    o.key(i)?.key.clone()
                };
                return Some(empty_live(key));
            }
        };
        let root = root?;
        self.title = root.get("title").and_then(|t| t.value.as_str()).map(str::to_owned);
        let entry = root.get("live")?;
        Some(self.live(entry, opts))
    }

    fn yaml_error(&mut self, e: yaml::YamlError) {
        let span = self.widen(e.span.clone());
        match e.kind {
            YamlErrorKind::DuplicateKey => {
                let line_start = self.text[..e.span.start].rfind('\n').map_or(0, |i| i + 1);
                let is_top_live = line_start == e.span.start
                    && self.text[e.span.clone()].trim_matches(['"', '\'']) == "live";
                if is_top_live {
                    let mut d = Diagnostic::error(
                        Code::DuplicateLive,
                        span,
                        "`live:` appears twice; a note has one live block (merge the objectives into one)",
                    );
                    if let Some(extent) = self.entry_extent(e.span.start) {
                        d = d.with_fix(
                            "Remove this second `live:` block",
                            vec![TextEdit::delete(extent)],
                            false,
                        );
                    }
                    self.push(d);
                } else {
                    let key = self.text[e.span.clone()].to_owned();
                    self.push(Diagnostic::error(
                        Code::DuplicateKey,
                        span,
                        format!("duplicate key `{key}`: YAML keys must be unique in a mapping"),
                    ));
                }
            }
            YamlErrorKind::Syntax => self.push(Diagnostic::error(
                Code::YamlSyntax,
                span,
                format!("YAML syntax error: {}", e.message),
            )),
            YamlErrorKind::AliasLimit | YamlErrorKind::TooDeep | YamlErrorKind::TooLarge => {
                let message = match e.kind {
                    YamlErrorKind::AliasLimit => format!(
                        "YAML aliases expand to too many nodes (limit {}); livenote stops reading here",
                        yaml::ALIAS_LIMIT
                    ),
                    _ => e.message.clone(),
                };
                self.push(Diagnostic::error(Code::YamlTooComplex, span, message))
            }
        }
    }

    fn unknown_key(&mut self, level: Level, e: &Entry) {
        let span = e.key_span.clone();
        let d = match fields::suggest(level, &e.key) {
            Suggestion::RemovedOnce => {
                let mut d = Diagnostic::warning(
                    Code::RemovedOnceTrigger,
                    span,
                    "the `once` trigger was removed: a live note keeps being up to date; use `Run now` for a one-off update",
                );
                if let Some(extent) = self.entry_extent(e.key_span.start) {
                    d = d.with_fix("Remove `once`", vec![TextEdit::delete(extent)], true);
                }
                d
            }
            Suggestion::Rename(to) => Diagnostic::warning(
                Code::UnknownKey,
                span.clone(),
                format!("unknown key `{}` in {}; did you mean `{to}`?", e.key, level.describe()),
            )
            .with_fix(format!("Rename to `{to}`"), vec![TextEdit::replace(span, to)], true),
            Suggestion::Elsewhere(l, to) => {
                let mut message = format!(
                    "unknown key `{}` in {}; `{to}` belongs in {}",
                    e.key,
                    level.describe(),
                    l.describe()
                );
                // A trigger written directly under `live:` moves into `triggers:`; when it
                // cannot (the key is there already), the message says why there is no fix.
                let moved = (level == Level::Live && l == Level::Triggers)
                    .then(|| super::rewrite::move_into_triggers(self.text, e.key_span.start, to));
                if let Some(Err(
                    err @ (super::rewrite::RewriteError::AlreadyInTriggers(_)
                    | super::rewrite::RewriteError::TwiceInLive(_)),
                )) = &moved
                {
                    message.push_str(&format!(" ({err})"));
                }
                let d = Diagnostic::warning(Code::UnknownKey, span, message);
                match moved {
                    Some(Ok(edits)) => d.with_fix(format!("Move into `triggers:` as `{to}`"), edits, true),
                    _ => d,
                }
            }
            Suggestion::None => {
                let known: Vec<&str> = fields::fields(level).filter(|f| !f.runtime).map(|f| f.name).collect();
                Diagnostic::warning(
                    Code::UnknownKey,
                    span,
                    format!(
                        "unknown key `{}` in {}; expected one of {}",
                        e.key,
                        level.describe(),
                        known.join(", ")
                    ),
                )
            }
        };
        self.push(d);
    }

    fn wrong_type(&mut self, key: &str, node: &Node, expected: &str) {
        let span = self.widen(node.span.clone());
        self.push(Diagnostic::error(
            Code::WrongType,
            span,
            format!("`{key}` must be {expected}, found {}", node.type_name()),
        ));
    }

    /// A string value; null counts as absent; anything else is reported.
    fn opt_str(&mut self, e: &Entry, expected: &str) -> Option<String> {
        match &e.value.kind {
            Kind::Scalar(Scalar::Str(s)) => Some(s.clone()),
            Kind::Scalar(Scalar::Null) => None,
            _ => {
                self.wrong_type(&e.key, &e.value, expected);
                None
            }
        }
    }

    fn live(&mut self, entry: &Entry, opts: &Options) -> Live {
        let mut live = empty_live(entry.key_span.clone());
        let mut sources_key = None;
        live.max_backoff = opts.max_backoff;
        let map = match &entry.value.kind {
            Kind::Map(m) => m.as_slice(),
            Kind::Scalar(Scalar::Null) => &[],
            _ => {
                self.push(Diagnostic::error(
                    Code::LiveNotMapping,
                    entry.key_span.clone(),
                    format!(
                        "`live` must be a mapping with at least an `objective`, found {}",
                        entry.value.type_name()
                    ),
                ));
                return live;
            }
        };
        for e in map {
            match e.key.as_str() {
                "objective" => match &e.value.kind {
                    Kind::Scalar(Scalar::Str(s)) if !s.trim().is_empty() => live.objective = Some(s.clone()),
                    Kind::Scalar(Scalar::Str(_) | Scalar::Null) => {
                        let span = self.widen(e.value.span.clone());
                        let span = if span.is_empty() { e.key_span.clone() } else { span };
                        self.push(Diagnostic::error(
                            Code::MissingObjective,
                            span,
                            "`objective` is empty: say in plain words what this note should keep being",
                        ));
                        live.objective = Some(String::new());
                    }
                    _ => {
                        self.wrong_type("objective", &e.value, "text");
                        live.objective = Some(String::new());
                    }
                },
                "active" => {
                    live.active_span = Some(e.value.span.clone());
                    match &e.value.kind {
                        Kind::Scalar(Scalar::Bool(b)) => live.active = *b,
                        Kind::Scalar(Scalar::Str(s)) => {
                            let want = match s.to_ascii_lowercase().as_str() {
                                "yes" | "on" | "y" | "true" => Some("true"),
                                "no" | "off" | "n" | "false" => Some("false"),
                                _ => None,
                            };
                            let span = self.widen(e.value.span.clone());
                            let mut d = Diagnostic::error(
                                Code::WrongType,
                                span.clone(),
                                format!(
                                    "`active` must be true or false, found the string {s:?} (YAML 1.2 reads `yes`/`no` as text)"
                                ),
                            );
                            if let Some(w) = want {
                                d = d.with_fix(
                                    format!("Change to `{w}`"),
                                    vec![TextEdit::replace(span, w)],
                                    true,
                                );
                            }
                            self.push(d);
                        }
                        _ => self.wrong_type("active", &e.value, "true or false"),
                    }
                }
                "triggers" => match &e.value.kind {
                    Kind::Map(m) => self.triggers(m, &mut live),
                    Kind::Scalar(Scalar::Null) => {}
                    _ => self.wrong_type(
                        "triggers",
                        &e.value,
                        "a mapping (cronExpr, windows, eventMatchCriteria)",
                    ),
                },
                "provider" => {
                    if let Some(p) = self.opt_str(e, "a provider name")
                        && !p.trim().is_empty()
                    {
                        self.check_provider(&p, &e.value, opts);
                        live.provider = Some(Spanned { value: p, span: e.value.span.clone() });
                    }
                }
                "model" => {
                    live.model = self.opt_str(e, "a model name").filter(|m| !m.trim().is_empty());
                }
                "tools" => live.tools = self.tools(e, opts),
                "until" => live.until = self.until(e),
                "maxChars" => live.max_chars = self.max_chars(e),
                "notify" => live.notify = self.notify(e),
                "skills" => live.skills = self.skills(e, opts),
                "sources" => {
                    live.sources = self.name_list(
                        e,
                        "a list of source names, like [mail, calendar]",
                        "name a source (`livenote sources` lists them)",
                        "a source name, as text",
                    );
                    sources_key = Some(e.key_span.clone());
                }
                "lastAttemptAt" | "lastRunAt" | "lastStoppedAt" => {
                    let ts = self.timestamp(e);
                    live.runtime_spans.push((field_name(&e.key), e.value.span.clone()));
                    match e.key.as_str() {
                        "lastAttemptAt" => live.last_attempt_at = ts,
                        "lastRunAt" => live.last_run_at = ts,
                        _ => live.last_stopped_at = ts,
                    }
                }
                "failures" => {
                    live.runtime_spans.push((field_name(&e.key), e.value.span.clone()));
                    match &e.value.kind {
                        Kind::Scalar(Scalar::Int(n)) if *n >= 0 => {
                            live.failures = u32::try_from(*n).unwrap_or(u32::MAX);
                        }
                        Kind::Scalar(Scalar::Null) => {}
                        _ => {
                            let span = self.widen(e.value.span.clone());
                            self.push(Diagnostic::warning(
                                Code::RuntimeFieldShape,
                                span,
                                "`failures` is written by livenote and should be a whole number; this value is ignored",
                            ));
                        }
                    }
                }
                "lastRunId" | "lastRunSummary" | "lastRunError" => {
                    live.runtime_spans.push((field_name(&e.key), e.value.span.clone()));
                    let v = match &e.value.kind {
                        Kind::Scalar(Scalar::Str(s)) => Some(s.clone()),
                        Kind::Scalar(Scalar::Null) => None,
                        _ => {
                            let span = self.widen(e.value.span.clone());
                            self.push(Diagnostic::warning(
                                Code::RuntimeFieldShape,
                                span,
                                format!(
                                    "`{}` is written by livenote and should be text; this value is ignored",
                                    e.key
                                ),
                            ));
                            None
                        }
                    };
                    match e.key.as_str() {
                        "lastRunId" => live.last_run_id = v,
                        "lastRunSummary" => live.last_run_summary = v,
                        _ => live.last_run_error = v.filter(|s| !s.trim().is_empty()),
                    }
                }
                _ => self.unknown_key(Level::Live, e),
            }
        }
        if live.objective.is_none() {
            self.push(Diagnostic::error(
                Code::MissingObjective,
                entry.key_span.clone(),
                "a live note needs an `objective`: what the note should keep being, in plain words",
            ));
        }
        if let Some(key) = sources_key.filter(|_| live.event_match_criteria.is_none()) {
            self.push(Diagnostic::warning(
                Code::SourcesWithoutCriteria,
                key,
                "`sources` narrows which events reach the note, and it has no `triggers.eventMatchCriteria`: no event reaches it; add the criteria, or remove `sources`",
            ));
        }
        if let Some(err) = &live.last_run_error {
            self.push(Diagnostic::warning(
                Code::LastRunFailed,
                entry.key_span.clone(),
                format!("the latest run failed: {err}"),
            ));
        }
        live
    }
}

/// Keep the user's quoting style when replacing a scalar.
fn requote(written: &str, new: &str) -> String {
    match written.chars().next() {
        Some('\'') => format!("'{new}'"),
        Some('"') => format!("\"{new}\""),
        _ => new.to_owned(),
    }
}

fn field_name(key: &str) -> &'static str {
    fields::field(Level::Live, key).map_or("", |f| f.name)
}

fn empty_live(key_span: Range<usize>) -> Live {
    Live {
        key_span,
        objective: None,
        active: true,
        active_span: None,
        cron_expr: None,
        cron: None,
        windows: Vec::new(),
        event_match_criteria: None,
        provider: None,
        model: None,
        tools: None,
        until: None,
        max_chars: None,
        notify: None,
        skills: None,
        sources: None,
        last_attempt_at: None,
        last_run_at: None,
        last_run_id: None,
        last_run_summary: None,
        last_run_error: None,
        failures: 0,
        last_stopped_at: None,
        max_backoff: None,
        runtime_spans: Vec::new(),
        has_errors: true,
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
