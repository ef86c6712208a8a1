//! Completion inside a note's frontmatter: the `live` key (scaffolding a whole block, or the
//! whole frontmatter in a note that has none), the keys valid at the cursor's level, and values
//! (`true`/`false`, cron presets, provider names, times, window items, and in `tools` the MCP
//! servers and, once a run has listed them, their tools).
//!
//! Everything is placed with the tolerant [`Outline`], never with the YAML parser: completion
//! is asked for while the user types, which is exactly when the YAML is broken. The cursor
//! resolution (`Spot`, `Scope`) is shared with hover.
//!
//! Decisions where SPEC section 2 is silent:
//! - Multi-line inserts carry absolute indentation (the note's own step, else two spaces) and
//!   the note's line ending; the LSP layer must send them with `insertTextMode: asIs`.
//! - A cron preset's label is the expression and its `detail` the meaning; its documentation
//!   lists the next three fire times. Inside quotes the user opened, only the bare value is
//!   inserted (and an unclosed quote is closed); elsewhere times and crons are double-quoted.
//! - Nothing is offered at a column unlike the siblings', inside block scalars or comments,
//!   under the user's own keys, or for free-text and runtime values (`objective:` alone gets the
//!   objective "Make live" would write).
//! - Without frontmatter, the scaffold is offered on the first line while what is typed could
//!   start `---` or `live`; a cursor between `\r` and `\n` gets nothing.

use std::ops::Range;

use chrono::TimeZone;

use super::Ctx;
use super::cursor::{Scope, Spot, floor_offset, item_keys, item_value};
use super::text::kind_detail;
use crate::note::fields::{self, FIELDS, Field, Kind, Level};
use crate::note::frontmatter;
use crate::note::outline::{KeyLine, LineKind, Outline};
use crate::note::rewrite;
use crate::schedule::{self, CronSchedule, TimeOfDay};
use crate::text::Eol;

/// What a completion item is, for the client's icon and grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    /// A key of the `live:` block.
    Key,
    /// A plain value: `true`, a time, an objective.
    Value,
    /// A multi-line structure: the `live` scaffold, a window item.
    Snippet,
    /// A cron preset.
    Preset,
    /// The name of a configured provider.
    Provider,
    /// A configured MCP server (in `tools`: all of its tools).
    McpServer,
    /// One tool of an MCP server (`server.tool`).
    McpTool,
    /// A skill (in `skills`).
    Skill,
    /// A source of the note's folder (in `sources`).
    Source,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionItem {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
    /// Markdown.
    pub documentation: Option<String>,
    /// The text to insert. Lines after the first carry their full indentation and the note's
    /// line ending, so clients must insert it as is (LSP `insertTextMode: asIs`).
    pub insert_text: String,
    /// `insert_text` uses LSP snippet syntax (`$1`, `${1:placeholder}`).
    pub snippet: bool,
    /// Bytes of the text the item replaces (the partial word or value at the cursor). Always on
    /// the cursor's line and containing the cursor, as LSP requires.
    pub replace: Range<usize>,
    pub sort_text: Option<String>,
    /// Documentation worth computing only for the item the user looks at ([`LaterDoc`]);
    /// `documentation` is then `None` until [`CompletionItem::resolve_now`] or the client's
    /// `completionItem/resolve` fills it.
    pub later: Option<LaterDoc>,
}

/// Documentation computed when an item is shown rather than with the list: the LSP's
/// `completionItem/resolve` for clients that ask for documentation so, at once for the others.
/// Each costs schedule arithmetic, and a list has a dozen of them at every keystroke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaterDoc {
    /// The next fire times of a cron expression.
    NextFires(String),
}

impl LaterDoc {
    /// The markdown, at `now` in `tz`.
    pub fn render<Tz: TimeZone>(&self, now: chrono::DateTime<chrono::Utc>, tz: &Tz) -> Option<String> {
        match self {
            LaterDoc::NextFires(expr) => {
                CronSchedule::parse(expr).ok().map(|c| super::text::next_fires_at(now, tz, &c))
            }
        }
    }
}

impl CompletionItem {
    /// Fill `documentation` from `later` now (a client that does not resolve items).
    pub fn resolve_now<Tz: TimeZone>(&mut self, now: chrono::DateTime<chrono::Utc>, tz: &Tz) {
        if let Some(later) = self.later.take() {
            self.documentation = later.render(now, tz);
        }
    }
}

/// What a new block fires on until the user picks something else: once a day, in the morning.
mod entries;
pub(super) use entries::tool_doc;
use entries::{skill_entries, source_entries, tool_entries, tools_inline, tools_item};

const DEFAULT_CRON: &str = "0 9 * * *";
const START_TIMES: [&str; 6] = ["07:00", "08:00", "09:00", "12:00", "13:00", "17:00"];
const END_TIMES: [&str; 7] = ["09:00", "10:00", "12:00", "13:00", "17:00", "18:00", "23:59"];

/// Completions at byte `offset` of the note (floored to a character boundary).
pub fn completion<Tz: TimeZone>(ctx: &Ctx<Tz>, offset: usize) -> Vec<CompletionItem> {
    let offset = floor_offset(ctx.text, offset);
    let Some(fm) = frontmatter::locate(ctx.text) else {
        return new_frontmatter(ctx.text, offset).into_iter().collect();
    };
    let Some(spot) = Spot::new(ctx.text, fm, offset, ctx.analysis.eol(ctx.text)) else { return Vec::new() };
    if let Some(items) = tools_item(ctx, &spot) {
        return items;
    }
    match spot.key() {
        Some(k) if spot.in_value(ctx.text, k) => values(ctx, &spot, k),
        _ => keys(ctx, &spot),
    }
}

// ---------------------------------------------------------------------------------------------
// Keys

fn keys<Tz: TimeZone>(ctx: &Ctx<Tz>, spot: &Spot) -> Vec<CompletionItem> {
    let text = ctx.text;
    let word = match spot.kind() {
        // On a key, the item replaces the key as written (quotes and dashes included).
        Some(LineKind::Key(k)) if k.key.contains(&spot.offset) || k.key.end == spot.offset => k.key.clone(),
        Some(LineKind::Key(_) | LineKind::Comment | LineKind::Continuation) => return Vec::new(),
        _ => word_at(text, spot),
    };
    // Only indentation and `- ` markers may precede a key.
    let before = &text[spot.line_start..word.start];
    if !(before.is_empty() || before.ends_with(' ')) || before.split(' ').any(|t| !t.is_empty() && t != "-") {
        return Vec::new();
    }
    let col = word.start - spot.line_start;
    if in_block_scalar(text, &spot.outline, spot.line, col) {
        return Vec::new();
    }
    let has_colon = spot.key().is_some();
    match spot.scope(col) {
        Scope::Top => live_key(ctx, spot, word, has_colon),
        Scope::Block { level, owner } => level_keys(spot, level, owner, word, has_colon),
        Scope::WindowList if !has_colon => vec![window_item(spot, word)],
        _ => Vec::new(),
    }
}

/// The run of ASCII word characters around the cursor (bytes of multibyte characters are never
/// word characters, so the range stays on character boundaries).
fn word_at(text: &str, spot: &Spot) -> Range<usize> {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    let mut start = spot.offset;
    while start > spot.line_start && is_word(bytes[start - 1]) {
        start -= 1;
    }
    let mut end = spot.offset;
    while end < spot.line_end && is_word(bytes[end]) {
        end += 1;
    }
    start..end
}

/// Whether column `col` of a blank line is inside a `|`/`>` block scalar that started above
/// (such scalars keep their blank lines): there the user is writing text, not keys.
fn in_block_scalar(text: &str, o: &Outline, line: usize, col: usize) -> bool {
    if !matches!(o.lines.get(line).map(|l| &l.kind), Some(LineKind::Blank)) {
        return false;
    }
    for j in (0..line).rev() {
        match &o.lines[j].kind {
            LineKind::Blank | LineKind::Comment | LineKind::Continuation => continue,
            LineKind::Key(k) => {
                let block = k.value.as_ref().is_some_and(|v| text[v.clone()].starts_with(['|', '>']));
                return block && col > k.col;
            }
            _ => return false,
        }
    }
    false
}

/// The indentation step of the note: that of `live:`'s children, else that of the first
/// indented key, else two spaces.
fn indent_unit(o: &Outline) -> usize {
    let live = o.find(&["live"]).and_then(|i| o.children(i).first().and_then(|&c| o.key(c)).map(|k| k.col));
    let any =
        || o.lines.iter().find(|l| matches!(l.kind, LineKind::Key(_)) && l.indent > 0).map(|l| l.indent);
    live.filter(|&c| c > 0).or_else(any).unwrap_or(2)
}

fn live_key<Tz: TimeZone>(
    ctx: &Ctx<Tz>,
    spot: &Spot,
    word: Range<usize>,
    has_colon: bool,
) -> Vec<CompletionItem> {
    let o = &spot.outline;
    if o.top_level().any(|i| i != spot.line && o.key(i).is_some_and(|k| k.name == "live")) {
        return Vec::new();
    }
    let (insert_text, snippet) = if has_colon {
        ("live".to_owned(), false)
    } else {
        (live_block(ctx.text, spot.fm.body_start(), indent_unit(o), spot.nl), true)
    };
    vec![CompletionItem {
        label: "live".to_owned(),
        kind: if has_colon { CompletionKind::Key } else { CompletionKind::Snippet },
        detail: Some("make this note live".to_owned()),
        documentation: Some(LIVE_DOC.to_owned()),
        insert_text,
        snippet,
        replace: word,
        sort_text: None,
        later: None,
    }]
}

const LIVE_DOC: &str = "Makes the note live: a background agent keeps its body in line with the \
    `objective`, on the `triggers` (daily at 09:00 to start with), or when you run it.";

/// A new `live:` block, as a snippet: the objective derived from the title, then a daily
/// cron, each a placeholder to tab through.
fn live_block(text: &str, body_start: usize, unit: usize, nl: &str) -> String {
    let objective = rewrite::default_objective(frontmatter::title(text, body_start));
    let objective = snippet_escape(&rewrite::yaml_string(&objective));
    let (i1, i2) = (" ".repeat(unit), " ".repeat(2 * unit));
    format!(
        "live:{nl}{i1}objective: ${{1:{objective}}}{nl}{i1}triggers:{nl}{i2}cronExpr: \"${{2:{DEFAULT_CRON}}}\""
    )
}

/// `s` as literal text inside a snippet placeholder.
fn snippet_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '$' | '}') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// In a note without frontmatter, on its first line: the whole frontmatter with a `live:`
/// block, when what is typed so far could be the start of `---` or `live`.
fn new_frontmatter(text: &str, offset: usize) -> Option<CompletionItem> {
    let bom = frontmatter::bom_len(text);
    let line_end = text[bom..].find(['\r', '\n']).map_or(text.len(), |i| bom + i);
    if offset > line_end {
        return None;
    }
    // A cursor before a byte order mark replaces it, and the mark is written back first.
    let (start, mark) = if offset < bom { (0, &text[..bom]) } else { (bom, "") };
    let from = offset.max(bom);
    let end =
        from + text[from..line_end].bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'-').count();
    let typed = &text[bom..end];
    if !("---".starts_with(typed) || "live".starts_with(typed)) {
        return None;
    }
    let nl = Eol::of(text).as_str();
    let block = live_block(text, bom, 2, nl);
    // The rest of the first line moves below the frontmatter; a line left empty keeps its own
    // line break, so none is added.
    let tail = if end == line_end && line_end < text.len() { "" } else { nl };
    Some(CompletionItem {
        label: if typed.starts_with('-') { "---" } else { "live" }.to_owned(),
        kind: CompletionKind::Snippet,
        detail: Some("make this note live (adds frontmatter)".to_owned()),
        documentation: Some(LIVE_DOC.to_owned()),
        insert_text: format!("{mark}---{nl}{block}{nl}---{tail}"),
        snippet: true,
        replace: start..end,
        sort_text: None,
        later: None,
    })
}

fn level_keys(
    spot: &Spot,
    level: Level,
    owner: usize,
    word: Range<usize>,
    has_colon: bool,
) -> Vec<CompletionItem> {
    let o = &spot.outline;
    let siblings = if level == Level::Window { item_keys(o, owner) } else { o.children(owner) };
    // The key on the cursor's line is being rewritten, so it does not count as present.
    let siblings: Vec<&KeyLine> =
        siblings.into_iter().filter(|&j| j != spot.line).filter_map(|j| o.key(j)).collect();
    let col = word.start - spot.line_start;
    // A key indented unlike its siblings would not be one of them.
    if siblings.first().is_some_and(|k| k.col != col) {
        return Vec::new();
    }
    let present: Vec<&str> = siblings.iter().map(|k| k.name.as_str()).collect();
    let (unit, nl) = (indent_unit(o), spot.nl);
    fields::fields(level)
        .filter(|f| !f.runtime && !present.contains(&f.name))
        .map(|f| {
            let nested = if has_colon { None } else { nested_value(f, col, unit, nl) };
            let (insert_text, snippet) = match nested {
                Some(body) => (format!("{}:{body}", f.name), true),
                None if has_colon => (f.name.to_owned(), false),
                None => (format!("{}: ", f.name), false),
            };
            CompletionItem {
                label: f.name.to_owned(),
                kind: CompletionKind::Key,
                detail: Some(kind_detail(f)),
                documentation: fields::doc(f.level, f.name).map(str::to_owned),
                insert_text,
                snippet,
                replace: word.clone(),
                sort_text: Some(registry_order(f)),
                later: None,
            }
        })
        .collect()
}

/// Sorts keys as the registry lists them (`objective` first), not alphabetically.
fn registry_order(f: &Field) -> String {
    let i = FIELDS.iter().position(|g| g.name == f.name && g.level == f.level).unwrap_or(FIELDS.len());
    format!("{i:02}")
}

/// The nested structure a `triggers:` or `windows:` key at column `col` opens, as a snippet
/// starting with a line break.
fn nested_value(f: &Field, col: usize, unit: usize, nl: &str) -> Option<String> {
    let indent = " ".repeat(col + unit);
    match f.kind {
        Kind::Mapping => Some(format!("{nl}{indent}cronExpr: \"${{1:{DEFAULT_CRON}}}\"")),
        Kind::List => Some(format!("{nl}{indent}{}", window_snippet(col + unit, nl))),
        _ => None,
    }
}

/// A `- startTime/endTime` item whose dash sits at column `col`, without the first line's
/// indentation.
fn window_snippet(col: usize, nl: &str) -> String {
    let indent = " ".repeat(col + 2);
    format!("- startTime: \"${{1:09:00}}\"{nl}{indent}endTime: \"${{2:12:00}}\"")
}

fn window_item(spot: &Spot, word: Range<usize>) -> CompletionItem {
    let col = word.start - spot.line_start;
    CompletionItem {
        label: "window".to_owned(),
        kind: CompletionKind::Snippet,
        detail: Some("- startTime: \"09:00\", endTime: \"12:00\"".to_owned()),
        documentation: fields::doc(Level::Triggers, "windows").map(str::to_owned),
        insert_text: window_snippet(col, spot.nl),
        snippet: true,
        replace: word,
        sort_text: None,
        later: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Values

fn values<Tz: TimeZone>(ctx: &Ctx<Tz>, spot: &Spot, k: &KeyLine) -> Vec<CompletionItem> {
    let Scope::Block { level, owner } = spot.scope(k.col) else { return Vec::new() };
    let Some(field) = fields::field(level, &k.name) else { return Vec::new() };
    if field.kind == Kind::ToolList {
        return tools_inline(ctx, spot, k, tool_entries);
    }
    if field.kind == Kind::SkillList {
        return tools_inline(ctx, spot, k, skill_entries);
    }
    if field.kind == Kind::SourceList {
        return tools_inline(ctx, spot, k, source_entries);
    }
    let Some(slot) = ValueSlot::at(ctx.text, spot.offset, k) else { return Vec::new() };
    match field.kind {
        Kind::Bool => bools(&slot),
        Kind::Notify => notify_values(&slot),
        Kind::Cron => cron_presets(&slot),
        Kind::ProviderName => providers(ctx, &slot),
        Kind::Time => times(ctx.text, &spot.outline, owner, field, &slot),
        Kind::Mapping | Kind::List if k.value.is_none() => nested_after_colon(ctx.text, spot, k, field),
        Kind::Text if field.name == "objective" && k.value.is_none() => objective(ctx, spot, &slot),
        _ => Vec::new(),
    }
}

/// Where a value goes and how it must be written there.
struct ValueSlot {
    replace: Range<usize>,
    /// The cursor is inside quotes the user opened: insert the bare value.
    quoted: bool,
    /// The opening quote has no closing one yet; the inserted value closes it.
    close: Option<char>,
    /// The cursor is right after the colon: a space must separate the value.
    space: bool,
}

impl ValueSlot {
    fn at(text: &str, offset: usize, k: &KeyLine) -> Option<ValueSlot> {
        let Some(v) = k.value.clone() else {
            // A trailing comment starts where the value would; complete only before it.
            let space = text[..offset].ends_with(':');
            return (offset <= k.value_start).then_some(ValueSlot {
                replace: offset..offset,
                quoted: false,
                close: None,
                space,
            });
        };
        if offset < v.start || offset > v.end {
            return None;
        }
        let raw = &text[v.clone()];
        match raw.chars().next() {
            Some(q @ ('"' | '\'')) if offset > v.start => {
                let closed = raw.len() >= 2 && raw.ends_with(q);
                let end = if closed { v.end - 1 } else { v.end };
                let close = (!closed).then_some(q);
                (offset <= end).then_some(ValueSlot {
                    replace: v.start + 1..end,
                    quoted: true,
                    close,
                    space: false,
                })
            }
            _ => Some(ValueSlot { replace: v, quoted: false, close: None, space: false }),
        }
    }

    /// `value` as it must be inserted here; `quote` asks for double quotes where the user has
    /// not opened any (times and cron expressions read as strings in every YAML version).
    fn text(&self, value: &str, quote: bool) -> String {
        let mut out = String::from(if self.space { " " } else { "" });
        match (self.quoted, quote) {
            (false, true) => out.push_str(&format!("\"{value}\"")),
            _ => out.push_str(value),
        }
        out.extend(self.close);
        out
    }

    fn item(
        &self,
        label: &str,
        kind: CompletionKind,
        detail: Option<String>,
        insert_text: String,
    ) -> CompletionItem {
        CompletionItem {
            label: label.to_owned(),
            kind,
            detail,
            documentation: None,
            insert_text,
            snippet: false,
            replace: self.replace.clone(),
            sort_text: None,
            later: None,
        }
    }
}

fn bools(slot: &ValueSlot) -> Vec<CompletionItem> {
    [("true", "runs on its triggers"), ("false", "paused: nothing fires until resumed")]
        .into_iter()
        .map(|(v, d)| slot.item(v, CompletionKind::Value, Some(d.to_owned()), slot.text(v, false)))
        .collect()
}

fn notify_values(slot: &ValueSlot) -> Vec<CompletionItem> {
    crate::note::model::NotifyWhen::CHOICES
        .iter()
        .enumerate()
        .map(|(i, (v, d))| CompletionItem {
            sort_text: Some(format!("{i:02}")),
            ..slot.item(v, CompletionKind::Value, Some((*d).to_owned()), slot.text(v, false))
        })
        .collect()
}

fn cron_presets(slot: &ValueSlot) -> Vec<CompletionItem> {
    schedule::presets()
        .iter()
        .enumerate()
        .map(|(i, (expr, meaning))| CompletionItem {
            later: Some(LaterDoc::NextFires((*expr).to_owned())),
            sort_text: Some(format!("{i:02}")),
            ..slot.item(expr, CompletionKind::Preset, Some((*meaning).to_owned()), slot.text(expr, true))
        })
        .collect()
}

fn providers<Tz: TimeZone>(ctx: &Ctx<Tz>, slot: &ValueSlot) -> Vec<CompletionItem> {
    let plain = |p: &str| p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    ctx.providers
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| {
            let value = if plain(p) || slot.quoted { p.clone() } else { rewrite::yaml_string(p) };
            slot.item(
                p,
                CompletionKind::Provider,
                Some("configured provider".to_owned()),
                slot.text(&value, false),
            )
        })
        .collect()
}

/// A few round times; for `endTime`, only those not before the item's `startTime`.
fn times(text: &str, o: &Outline, item: usize, field: &Field, slot: &ValueSlot) -> Vec<CompletionItem> {
    let is_end = field.name == "endTime";
    let start = if is_end { item_value(text, o, item, "startTime") } else { None };
    let start = start.and_then(|s| TimeOfDay::parse(s).ok());
    let list: &[&str] = if is_end { &END_TIMES } else { &START_TIMES };
    list.iter()
        .filter(|t| start.is_none_or(|s| TimeOfDay::parse(t).is_ok_and(|t| t >= s)))
        .enumerate()
        .map(|(i, t)| {
            let detail = start.map(|s| format!("band {s}–{t}"));
            CompletionItem {
                sort_text: Some(format!("{i:02}")),
                ..slot.item(t, CompletionKind::Value, detail, slot.text(t, true))
            }
        })
        .collect()
}

/// `triggers:`/`windows:` with the cursor after the colon: the nested structure on the next
/// lines, replacing whatever spaces follow the colon.
fn nested_after_colon(text: &str, spot: &Spot, k: &KeyLine, field: &Field) -> Vec<CompletionItem> {
    let Some(colon) = text[k.key.end..spot.offset].find(':').map(|i| k.key.end + i + 1) else {
        return Vec::new();
    };
    let Some(body) = nested_value(field, k.col, indent_unit(&spot.outline), spot.nl) else {
        return Vec::new();
    };
    let (label, detail) = match field.kind {
        Kind::List => ("window", "- startTime: \"09:00\", endTime: \"12:00\""),
        _ => ("cronExpr", "cronExpr: \"0 9 * * *\""),
    };
    vec![CompletionItem {
        label: label.to_owned(),
        kind: CompletionKind::Snippet,
        detail: Some(detail.to_owned()),
        documentation: fields::doc(field.level, field.name).map(str::to_owned),
        insert_text: body,
        snippet: true,
        replace: colon..spot.offset,
        sort_text: None,
        later: None,
    }]
}

/// The objective "Make live" would write, from the note's title.
fn objective<Tz: TimeZone>(ctx: &Ctx<Tz>, spot: &Spot, slot: &ValueSlot) -> Vec<CompletionItem> {
    let objective = rewrite::default_objective(frontmatter::title(ctx.text, spot.fm.body_start()));
    let value = rewrite::yaml_string(&objective);
    vec![slot.item(
        &objective,
        CompletionKind::Value,
        Some("from the note's title".to_owned()),
        slot.text(&value, false),
    )]
}

#[cfg(test)]
#[path = "completion_tests.rs"]
pub(super) mod tests;
