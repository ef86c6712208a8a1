//! Completion inside a note's frontmatter: the `live` key (scaffolding a whole block, or the
//! whole frontmatter in a note that has none), the keys valid at the cursor's level, and values
//! (`true`/`false`, cron presets, provider names, times, window items).
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
use crate::note::fields::{self, FIELDS, Field, Kind, Level};
use crate::note::frontmatter::{self, Frontmatter};
use crate::note::outline::{KeyLine, LineKind, Outline};
use crate::note::rewrite;
use crate::schedule::{self, CronSchedule, TimeOfDay};

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
}

/// What a new block fires on until the user picks something else: once a day, in the morning.
const DEFAULT_CRON: &str = "0 9 * * *";
const START_TIMES: [&str; 6] = ["07:00", "08:00", "09:00", "12:00", "13:00", "17:00"];
const END_TIMES: [&str; 7] = ["09:00", "10:00", "12:00", "13:00", "17:00", "18:00", "23:59"];

/// Completions at byte `offset` of the note (floored to a character boundary).
pub fn completion<Tz: TimeZone>(ctx: &Ctx<Tz>, offset: usize) -> Vec<CompletionItem> {
    let offset = floor_offset(ctx.text, offset);
    let Some(fm) = frontmatter::locate(ctx.text) else {
        return new_frontmatter(ctx.text, offset).into_iter().collect();
    };
    let Some(spot) = Spot::new(ctx.text, fm, offset) else { return Vec::new() };
    match spot.key() {
        Some(k) if spot.in_value(ctx.text, k) => values(ctx, &spot, k),
        _ => keys(ctx, &spot),
    }
}

/// `offset` clamped to the text and moved back to a character boundary, so that any offset a
/// client sends (even one inside a multibyte character) is safe to slice at.
pub(super) fn floor_offset(text: &str, offset: usize) -> usize {
    let mut o = offset.min(text.len());
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    o
}

/// The cursor's line in the frontmatter.
pub(super) struct Spot {
    pub fm: Frontmatter,
    pub outline: Outline,
    /// Index of the cursor's line in `outline`; `outline.lines.len()` for the empty line after
    /// the last line break of an unterminated frontmatter (the outline has no line there).
    pub line: usize,
    pub line_start: usize,
    /// End of the line's content, before its line ending.
    pub line_end: usize,
    pub offset: usize,
}

impl Spot {
    /// `None` when `offset` (a character boundary) is outside the frontmatter's content.
    pub(super) fn new(text: &str, fm: Frontmatter, offset: usize) -> Option<Spot> {
        if offset < fm.content.start || offset > fm.content.end {
            return None;
        }
        let outline = Outline::parse(text, fm.content.clone());
        let (line, range) = match outline.line_at(offset) {
            Some(i) => (i, outline.lines[i].range.clone()),
            None if fm.close.is_none()
                && offset == fm.content.end
                && (offset == fm.content.start || text[..offset].ends_with('\n')) =>
            {
                (outline.lines.len(), offset..offset)
            }
            // At the start of the closing `---` line.
            None => return None,
        };
        // A cursor between `\r` and `\n` is on no line (no client puts one there).
        if offset > range.end {
            return None;
        }
        Some(Spot { fm, outline, line, line_start: range.start, line_end: range.end, offset })
    }

    pub(super) fn key(&self) -> Option<&KeyLine> {
        self.outline.key(self.line)
    }

    fn kind(&self) -> Option<&LineKind> {
        self.outline.lines.get(self.line).map(|l| &l.kind)
    }

    /// Whether the cursor is after the colon of key line `k`.
    fn in_value(&self, text: &str, k: &KeyLine) -> bool {
        self.offset > k.key.end && text[k.key.end..self.offset].contains(':')
    }

    /// Where a key written at column `col` of the cursor's line would belong.
    pub(super) fn scope(&self, col: usize) -> Scope {
        scope(&self.outline, self.line, col)
    }
}

/// The mapping a key at some column of a line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// Column 0: a top-level key of the frontmatter.
    Top,
    /// A key of the block at `level`. `owner` is the line of the key that opens it (`live:`,
    /// `triggers:`), or for a window the first line of its `- ` item.
    Block { level: Level, owner: usize },
    /// Inside `windows:` but in none of its items: where a new `- ` item goes.
    WindowList,
    /// Anywhere else (the user's own keys, nested deeper than livenote reads).
    Elsewhere,
}

fn scope(o: &Outline, line: usize, col: usize) -> Scope {
    let parents = o.parents_at(line, col);
    let path: Vec<&str> = parents.iter().filter_map(|&i| o.key(i)).map(|k| k.name.as_str()).collect();
    let top = |i: usize| o.key(i).is_some_and(|k| k.col == 0 && k.dash_col.is_none());
    match (path.as_slice(), parents.as_slice()) {
        ([], _) if col == 0 => Scope::Top,
        (["live"], &[live]) if top(live) => Scope::Block { level: Level::Live, owner: live },
        (["live", "triggers"], &[live, t]) if top(live) => Scope::Block { level: Level::Triggers, owner: t },
        (["live", "triggers", "windows"], &[live, _, w]) if top(live) => match item_start(o, w, line, col) {
            Some(item) => Scope::Block { level: Level::Window, owner: item },
            None => Scope::WindowList,
        },
        _ => Scope::Elsewhere,
    }
}

/// The first line of the `windows` item that column `col` of `line` is inside: the nearest
/// line at or above it that opens an item with its dash left of `col`.
fn item_start(o: &Outline, windows: usize, line: usize, col: usize) -> Option<usize> {
    for j in (windows + 1..=line).rev() {
        let dash = match o.lines.get(j).map(|l| &l.kind) {
            Some(LineKind::Key(k)) => k.dash_col,
            Some(LineKind::Item { dash_col }) => Some(*dash_col),
            _ => None,
        };
        if let Some(d) = dash {
            return (d < col).then_some(j);
        }
    }
    None
}

/// The key lines of the `windows` item that starts on line `start`.
fn item_keys(o: &Outline, start: usize) -> Vec<usize> {
    let dash = match o.lines.get(start).map(|l| &l.kind) {
        Some(LineKind::Key(k)) => k.dash_col,
        Some(LineKind::Item { dash_col }) => Some(*dash_col),
        _ => None,
    };
    let Some(dash) = dash else { return Vec::new() };
    let mut key_col = o.key(start).map(|k| k.col);
    let mut out: Vec<usize> = o.key(start).map(|_| start).into_iter().collect();
    for j in start + 1..o.lines.len() {
        let l = &o.lines[j];
        let (indent, dashed) = match &l.kind {
            LineKind::Blank | LineKind::Comment | LineKind::Continuation => continue,
            LineKind::Key(k) => (k.dash_col.unwrap_or(k.col), k.dash_col.is_some()),
            LineKind::Item { dash_col } => (*dash_col, true),
            LineKind::Other => (l.indent, false),
        };
        if indent <= dash {
            break;
        }
        if let LineKind::Key(k) = &l.kind
            && !dashed
            && *key_col.get_or_insert(k.col) == k.col
        {
            out.push(j);
        }
    }
    out
}

/// The value of key `name` in the `windows` item starting on line `item`, unquoted.
pub(super) fn item_value<'t>(text: &'t str, o: &Outline, item: usize, name: &str) -> Option<&'t str> {
    let k = item_keys(o, item).into_iter().filter_map(|j| o.key(j)).find(|k| k.name == name)?;
    Some(unquote(&text[k.value.clone()?]))
}

/// A scalar as written without its quotes (escapes are left alone: cron expressions and times
/// have none).
pub(super) fn unquote(raw: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = raw.strip_prefix(q) {
            return inner.strip_suffix(q).unwrap_or(inner);
        }
    }
    raw
}

/// What a key's value is, in a few words.
pub(super) fn kind_detail(f: &Field) -> String {
    let what = match f.kind {
        Kind::Text => "text",
        Kind::Bool => "true | false",
        Kind::Mapping => "cron, windows, events",
        Kind::List => "list of daily time windows",
        Kind::Cron => "cron expression",
        Kind::Time => "HH:MM local time",
        Kind::Timestamp => "timestamp",
        Kind::ProviderName => "provider name",
    };
    match f {
        f if f.required => format!("{what}, required"),
        f if f.runtime => format!("{what}, written by livenote"),
        _ => what.to_owned(),
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
        (live_block(ctx.text, spot.fm.body_start(), indent_unit(o), spot.fm.newline()), true)
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
    let nl = if text[line_end..].starts_with("\r\n") { "\r\n" } else { "\n" };
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
    let (unit, nl) = (indent_unit(o), spot.fm.newline());
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
        insert_text: window_snippet(col, spot.fm.newline()),
        snippet: true,
        replace: word,
        sort_text: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Values

fn values<Tz: TimeZone>(ctx: &Ctx<Tz>, spot: &Spot, k: &KeyLine) -> Vec<CompletionItem> {
    let Scope::Block { level, owner } = spot.scope(k.col) else { return Vec::new() };
    let Some(field) = fields::field(level, &k.name) else { return Vec::new() };
    let Some(slot) = ValueSlot::at(ctx.text, spot.offset, k) else { return Vec::new() };
    match field.kind {
        Kind::Bool => bools(&slot),
        Kind::Cron => cron_presets(ctx, &slot),
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
        }
    }
}

fn bools(slot: &ValueSlot) -> Vec<CompletionItem> {
    [("true", "runs on its triggers"), ("false", "paused: nothing fires until resumed")]
        .into_iter()
        .map(|(v, d)| slot.item(v, CompletionKind::Value, Some(d.to_owned()), slot.text(v, false)))
        .collect()
}

fn cron_presets<Tz: TimeZone>(ctx: &Ctx<Tz>, slot: &ValueSlot) -> Vec<CompletionItem> {
    schedule::presets()
        .iter()
        .enumerate()
        .map(|(i, (expr, meaning))| CompletionItem {
            documentation: CronSchedule::parse(expr).ok().map(|c| super::hover::next_fires(ctx, &c)),
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
    let Some(body) = nested_value(field, k.col, indent_unit(&spot.outline), spot.fm.newline()) else {
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
pub(super) mod tests {
    use expect_test::{Expect, expect};
    use proptest::prelude::*;

    use super::*;
    use crate::ide::fixture::{cursor, with_ctx};
    use crate::note::Severity;
    use crate::status::RunFacts;

    fn complete(fixture: &str) -> (String, Vec<CompletionItem>) {
        let (text, offset) = cursor(fixture);
        let items = with_ctx(&text, RunFacts::default(), |ctx| completion(ctx, offset));
        (text, items)
    }

    /// One item per line: `label  kind  detail  -> insert_text`, after the text the items
    /// replace (shown per item when it differs from the first's).
    fn render(text: &str, items: &[CompletionItem]) -> String {
        let Some(first) = items.first() else { return "(none)\n".to_owned() };
        let mut out = format!("replaces {:?}\n", &text[first.replace.clone()]);
        for it in items {
            let detail = it.detail.as_deref().unwrap_or("-");
            let insert = it.insert_text.replace('\r', "\\r").replace('\n', "\\n");
            let own = if it.replace == first.replace {
                String::new()
            } else {
                format!("  [replaces {:?}]", &text[it.replace.clone()])
            };
            out.push_str(&format!("{}  {:?}  {detail}  -> {insert}{own}\n", it.label, it.kind));
        }
        out
    }

    fn check(fixture: &str, expect: Expect) {
        let (text, items) = complete(fixture);
        expect.assert_eq(&render(&text, &items));
    }

    /// `text` with `item` applied and its snippet placeholders filled with their defaults.
    fn apply(text: &str, item: &CompletionItem) -> String {
        let insert = if item.snippet { expand_snippet(&item.insert_text) } else { item.insert_text.clone() };
        format!("{}{insert}{}", &text[..item.replace.start], &text[item.replace.end..])
    }

    /// Replaces `${n:default}` by its default and drops `$n`, undoing `\` escapes.
    fn expand_snippet(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.extend(chars.next()),
                '$' if chars.peek() == Some(&'{') => {
                    chars.next();
                    chars.by_ref().take_while(|c| *c != ':').for_each(drop);
                }
                '$' => while chars.next_if(char::is_ascii_digit).is_some() {},
                '}' => {}
                c => out.push(c),
            }
        }
        out
    }

    #[test]
    fn live_scaffold_without_frontmatter() {
        check(
            "$0",
            expect![[r#"
                replaces ""
                live  Snippet  make this note live (adds frontmatter)  -> ---\nlive:\n  objective: ${1:"Keep this note up to date with the latest information on its topic."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"\n---\n
            "#]],
        );
        check(
            "$0# Weather in Paris\n\nSunny.\n",
            expect![[r#"
                replaces ""
                live  Snippet  make this note live (adds frontmatter)  -> ---\nlive:\n  objective: ${1:"Keep this note about \\"Weather in Paris\\" up to date."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"\n---\n
            "#]],
        );
        // A typed prefix on a line of its own keeps that line's break.
        check(
            "liv$0\n# Paris\n",
            expect![[r#"
                replaces "liv"
                live  Snippet  make this note live (adds frontmatter)  -> ---\nlive:\n  objective: ${1:"Keep this note about \\"Paris\\" up to date."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"\n---
            "#]],
        );
        check(
            "---$0",
            expect![[r#"
                replaces "---"
                ---  Snippet  make this note live (adds frontmatter)  -> ---\nlive:\n  objective: ${1:"Keep this note up to date with the latest information on its topic."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"\n---\n
            "#]],
        );
        check(
            "\u{feff}$0# Paris\r\nbody\r\n",
            expect![[r#"
                replaces ""
                live  Snippet  make this note live (adds frontmatter)  -> ---\r\nlive:\r\n  objective: ${1:"Keep this note about \\"Paris\\" up to date."}\r\n  triggers:\r\n    cronExpr: "${2:0 9 * * *}"\r\n---\r\n
            "#]],
        );
        let (text, items) = complete("$0\u{feff}# Paris\n");
        let Some(item) = items.first() else { panic!("no scaffold before a BOM") };
        assert!(apply(&text, item).starts_with("\u{feff}---\nlive:\n"), "{:?}", apply(&text, item));
        check("# Paris\n$0", expect!["(none)\n"]);
        check("Hello$0 world\n", expect!["(none)\n"]);
    }

    #[test]
    fn live_scaffold_at_top_level() {
        check(
            "---\ntitle: x\n$0\n---\n# Weather\n",
            expect![[r#"
                replaces ""
                live  Snippet  make this note live  -> live:\n  objective: ${1:"Keep this note about \\"Weather\\" up to date."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"
            "#]],
        );
        check(
            "---\r\ntags:\r\n    - a\r\nli$0\r\n---\r\n",
            expect![[r#"
                replaces "li"
                live  Snippet  make this note live  -> live:\r\n  objective: ${1:"Keep this note up to date with the latest information on its topic."}\r\n  triggers:\r\n    cronExpr: "${2:0 9 * * *}"
            "#]],
        );
        // Renaming a key: the colon is already there.
        check(
            "---\nlvie$0: x\n---\n",
            expect![[r#"
            replaces "lvie"
            live  Key  make this note live  -> live
        "#]],
        );
        // The indentation of the user's other keys is followed.
        check(
            "---\nmeta:\n    a: 1\nl$0\n---\n",
            expect![[r#"
                replaces "l"
                live  Snippet  make this note live  -> live:\n    objective: ${1:"Keep this note up to date with the latest information on its topic."}\n    triggers:\n        cronExpr: "${2:0 9 * * *}"
            "#]],
        );
        check("---\nlive :$0\n---\n", expect!["(none)\n"]);
        check("---\nlive $0:\n---\n", expect!["(none)\n"]);
        check("---\nlive:\n  objective: x\n$0\n---\n", expect!["(none)\n"]);
        check("---\ntitle: x\n  $0\n---\n", expect!["(none)\n"]);
    }

    #[test]
    fn scaffolds_produce_valid_blocks() {
        let fixtures = [
            "$0",
            "$0# Weather: \"Paris\" $HOME {x}\n\nSunny.\n",
            "$0# Paris\r\nbody\r\n",
            "---\ntitle: x\n$0\n---\n# T\n",
            "---\r\ntitle: x\r\n$0\r\n---\r\n",
            "---\nlive:\n  objective: x\n  $0\n---\n",
            "---\nlive:\n    objective: x\n    $0\n---\n",
            "---\nlive:\n  objective: x\n  triggers: $0\n---\n",
            "---\nlive:\n  objective: x\n  triggers:\n    $0\n---\n",
            "---\nlive:\n  objective: x\n  triggers:\n    windows: $0\n---\n",
            "---\nlive:\n  objective: x\n  triggers:\n    windows:\n      - startTime: \"06:00\"\n        endTime: \"07:00\"\n      $0\n---\n",
        ];
        for fixture in fixtures {
            let (text, items) = complete(fixture);
            let snippets: Vec<_> = items.iter().filter(|i| i.snippet).collect();
            assert!(!snippets.is_empty(), "no snippet for {fixture:?}");
            for item in snippets {
                let applied = apply(&text, item);
                let analysis = crate::ide::fixture::analysis(&applied, &[]);
                let errors: Vec<_> =
                    analysis.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
                assert!(analysis.live.is_some(), "no live block after {:?}:\n{applied}", item.label);
                // Only the keys a half-written block still lacks may be missing.
                assert!(
                    errors.iter().all(|d| d.message.contains("objective")),
                    "{:?} gives errors {errors:?}:\n{applied}",
                    item.label
                );
            }
        }
    }

    #[test]
    fn keys_under_live() {
        check(
            "---\nlive:\n  obj$0",
            expect![[r#"
                replaces "obj"
                objective  Key  text, required  -> objective: 
                active  Key  true | false  -> active: 
                triggers  Key  cron, windows, events  -> triggers:\n    cronExpr: "${1:0 9 * * *}"
                provider  Key  provider name  -> provider: 
                model  Key  text  -> model: 
            "#]],
        );
        // Present keys and runtime fields are not offered.
        check(
            "---\nlive:\n  objective: x\n  $0\n  triggers:\n    cronExpr: \"0 9 * * *\"\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n---\n",
            expect![[r#"
                replaces ""
                active  Key  true | false  -> active: 
                provider  Key  provider name  -> provider: 
                model  Key  text  -> model: 
            "#]],
        );
        // The key being renamed is not "present"; only its name is replaced.
        check(
            "---\nlive:\n  objective: x\n  act$0ve: true\n  model: m\n---\n",
            expect![[r#"
                replaces "actve"
                active  Key  true | false  -> active
                triggers  Key  cron, windows, events  -> triggers
                provider  Key  provider name  -> provider
            "#]],
        );
        // The note's own indentation is followed.
        check(
            "---\nlive:\n    objective: x\n    tr$0\n---\n",
            expect![[r#"
                replaces "tr"
                active  Key  true | false  -> active: 
                triggers  Key  cron, windows, events  -> triggers:\n        cronExpr: "${1:0 9 * * *}"
                provider  Key  provider name  -> provider: 
                model  Key  text  -> model: 
            "#]],
        );
    }

    #[test]
    fn keys_under_triggers_and_windows() {
        check(
            "---\nlive:\n  objective: x\n  triggers:\n    $0\n---\n",
            expect![[r#"
                replaces ""
                cronExpr  Key  cron expression  -> cronExpr: 
                windows  Key  list of daily time windows  -> windows:\n      - startTime: "${1:09:00}"\n        endTime: "${2:12:00}"
                eventMatchCriteria  Key  text  -> eventMatchCriteria: 
            "#]],
        );
        check(
            "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"0 9 * * *\"\n    $0\n---\n",
            expect![[r#"
                replaces ""
                windows  Key  list of daily time windows  -> windows:\n      - startTime: "${1:09:00}"\n        endTime: "${2:12:00}"
                eventMatchCriteria  Key  text  -> eventMatchCriteria: 
            "#]],
        );
        check(
            "---\nlive:\n  triggers:\n    windows:\n      - $0\n---\n",
            expect![[r#"
                replaces ""
                startTime  Key  HH:MM local time, required  -> startTime: 
                endTime  Key  HH:MM local time, required  -> endTime: 
            "#]],
        );
        // Only the keys of the cursor's own item count as present.
        check(
            "---\nlive:\n  triggers:\n    windows:\n      - startTime: \"06:00\"\n        endTime: \"07:00\"\n      - startTime: \"09:00\"\n        e$0\n---\n",
            expect![[r#"
                replaces "e"
                endTime  Key  HH:MM local time, required  -> endTime: 
            "#]],
        );
        // At the items' dash column: a new item.
        check(
            "---\nlive:\n  triggers:\n    windows:\n      - startTime: \"06:00\"\n        endTime: \"07:00\"\n      $0\n---\n",
            expect![[r#"
                replaces ""
                window  Snippet  - startTime: "09:00", endTime: "12:00"  -> - startTime: "${1:09:00}"\n        endTime: "${2:12:00}"
            "#]],
        );
    }

    #[test]
    fn no_keys_where_they_cannot_go() {
        // Deeper than the siblings, inside a block scalar, in comments, under the user's keys.
        check("---\nlive:\n  objective: x\n      $0\n---\n", expect!["(none)\n"]);
        check("---\nlive:\n  objective: |\n    Keep it short.\n\n    $0\n---\n", expect!["(none)\n"]);
        check(
            "---\nlive:\n  objective: |\n    Keep it short.\n  $0\n---\n",
            expect![[r#"
                replaces ""
                active  Key  true | false  -> active: 
                triggers  Key  cron, windows, events  -> triggers:\n    cronExpr: "${1:0 9 * * *}"
                provider  Key  provider name  -> provider: 
                model  Key  text  -> model: 
            "#]],
        );
        check("---\nlive:\n  # a$0\n---\n", expect!["(none)\n"]);
        check("---\ntags:\n  $0\n---\n", expect!["(none)\n"]);
        check("---\nlive:\n  objective: x\n  foo bar$0\n---\n", expect!["(none)\n"]);
        // Outside the frontmatter.
        check("---\nlive:\n  objective: x\n---\n$0", expect!["(none)\n"]);
        check("---$0\nlive:\n  objective: x\n---\n", expect!["(none)\n"]);
        check("---\nlive:\n  objective: x\n$0---\n", expect!["(none)\n"]);
    }

    #[test]
    fn boolean_values() {
        check(
            "---\nlive:\n  active: $0\n---\n",
            expect![[r#"
                replaces ""
                true  Value  runs on its triggers  -> true
                false  Value  paused: nothing fires until resumed  -> false
            "#]],
        );
        check(
            "---\nlive:\n  active:$0",
            expect![[r#"
                replaces ""
                true  Value  runs on its triggers  ->  true
                false  Value  paused: nothing fires until resumed  ->  false
            "#]],
        );
        check(
            "---\r\nlive:\r\n  active: tr$0ue  # c\r\n---\r\n",
            expect![[r#"
                replaces "true"
                true  Value  runs on its triggers  -> true
                false  Value  paused: nothing fires until resumed  -> false
            "#]],
        );
        // In the trailing comment.
        check("---\nlive:\n  active: true # c$0\n---\n", expect!["(none)\n"]);
    }

    #[test]
    fn cron_presets() {
        check(
            "---\nlive:\n  triggers:\n    cronExpr: $0\n---\n",
            expect![[r#"
                replaces ""
                */15 * * * *  Preset  every 15 minutes  -> "*/15 * * * *"
                */30 * * * *  Preset  every 30 minutes  -> "*/30 * * * *"
                0 * * * *  Preset  every hour, on the hour  -> "0 * * * *"
                0 */2 * * *  Preset  every 2 hours  -> "0 */2 * * *"
                0 9-17 * * 1-5  Preset  every hour from 09:00 to 17:00 on weekdays  -> "0 9-17 * * 1-5"
                0 9 * * *  Preset  daily at 09:00  -> "0 9 * * *"
                0 9 * * 1-5  Preset  09:00 on weekdays  -> "0 9 * * 1-5"
                0 8,17 * * *  Preset  08:00 and 17:00 every day  -> "0 8,17 * * *"
                0 9 * * 1  Preset  09:00 on Mondays  -> "0 9 * * 1"
                0 17 * * 5  Preset  17:00 on Fridays  -> "0 17 * * 5"
                0 9 1 * *  Preset  09:00 on the 1st of every month  -> "0 9 1 * *"
                0 0 * * 0  Preset  midnight on Sundays  -> "0 0 * * 0"
            "#]],
        );
        // Inside quotes only the expression is replaced.
        let (text, items) =
            complete("---\nlive:\n  triggers:\n    cronExpr: \"0 9$0 * * *\"  # daily\n---\n");
        let Some(item) = items.iter().find(|i| i.label == "0 9 * * 1-5") else { panic!("no preset") };
        expect![[r#"
            ---
            live:
              triggers:
                cronExpr: "0 9 * * 1-5"  # daily
            ---
        "#]]
        .assert_eq(&apply(&text, item));
        // An unclosed quote gets closed.
        let (text, items) = complete("---\nlive:\n  triggers:\n    cronExpr: '$0\n---\n");
        let Some(item) = items.iter().find(|i| i.label == "0 * * * *") else { panic!("no preset") };
        assert_eq!(apply(&text, item), "---\nlive:\n  triggers:\n    cronExpr: '0 * * * *'\n---\n");
        // An unquoted value is replaced whole, and quoted.
        let (text, items) = complete("---\nlive:\n  triggers:\n    cronExpr: 0 9 *$0\n---\n");
        let Some(item) = items.iter().find(|i| i.label == "0 9 * * *") else { panic!("no preset") };
        assert_eq!(apply(&text, item), "---\nlive:\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n");
        // Each preset documents its next fire times.
        expect![[r#"
            Next:
            - Mon 23 Nov 10:00 CST
            - Mon 23 Nov 11:00 CST
            - Mon 23 Nov 12:00 CST"#]]
        .assert_eq(
            items
                .iter()
                .find(|i| i.label == "0 * * * *")
                .and_then(|i| i.documentation.as_deref())
                .unwrap_or(""),
        );
    }

    #[test]
    fn provider_and_objective_values() {
        check(
            "---\nlive:\n  objective: x\n  provider: cl$0\n---\n",
            expect![[r#"
                replaces "cl"
                local  Provider  configured provider  -> local
                claude  Provider  configured provider  -> claude
            "#]],
        );
        check(
            "---\nlive:\n  objective: $0\n---\n# Tokyo weather 🌤\n",
            expect![[r#"
                replaces ""
                Keep this note about "Tokyo weather 🌤" up to date.  Value  from the note's title  -> "Keep this note about \"Tokyo weather 🌤\" up to date."
            "#]],
        );
        // Nothing for free text, runtime fields or the user's keys.
        check("---\nlive:\n  model: $0\n---\n", expect!["(none)\n"]);
        check("---\nlive:\n  lastRunAt: $0\n---\n", expect!["(none)\n"]);
        check("---\ntitle: $0\nlive:\n  objective: x\n---\n", expect!["(none)\n"]);
    }

    #[test]
    fn window_values() {
        check(
            "---\nlive:\n  triggers:\n    windows:\n      - startTime: $0\n---\n",
            expect![[r#"
                replaces ""
                07:00  Value  -  -> "07:00"
                08:00  Value  -  -> "08:00"
                09:00  Value  -  -> "09:00"
                12:00  Value  -  -> "12:00"
                13:00  Value  -  -> "13:00"
                17:00  Value  -  -> "17:00"
            "#]],
        );
        check(
            "---\nlive:\n  triggers:\n    windows:\n      - startTime: '12:00'\n        endTime: \"$0\"\n---\n",
            expect![[r#"
                replaces ""
                12:00  Value  band 12:00–12:00  -> 12:00
                13:00  Value  band 12:00–13:00  -> 13:00
                17:00  Value  band 12:00–17:00  -> 17:00
                18:00  Value  band 12:00–18:00  -> 18:00
                23:59  Value  band 12:00–23:59  -> 23:59
            "#]],
        );
        check(
            "---\nlive:\n  triggers: $0\n---\n",
            expect![[r#"
                replaces " "
                cronExpr  Snippet  cronExpr: "0 9 * * *"  -> \n    cronExpr: "${1:0 9 * * *}"
            "#]],
        );
        check(
            "---\r\nlive:\r\n  triggers:\r\n    windows:$0\r\n---\r\n",
            expect![[r#"
                replaces ""
                window  Snippet  - startTime: "09:00", endTime: "12:00"  -> \r\n      - startTime: "${1:09:00}"\r\n        endTime: "${2:12:00}"
            "#]],
        );
    }

    #[test]
    fn unicode_before_the_cursor() {
        check(
            "---\ntitle: 東京の天気 🌤\nlive:\n  objective: \"天気を保つ ☀️\"\n  $0\n---\n",
            expect![[r#"
                replaces ""
                active  Key  true | false  -> active: 
                triggers  Key  cron, windows, events  -> triggers:\n    cronExpr: "${1:0 9 * * *}"
                provider  Key  provider name  -> provider: 
                model  Key  text  -> model: 
            "#]],
        );
        check(
            "---\r\ntitle: 東京 🌤\r\nlive:\r\n  objective: 天気\r\n  active: f$0",
            expect![[r#"
                replaces "f"
                true  Value  runs on its triggers  -> true
                false  Value  paused: nothing fires until resumed  -> false
            "#]],
        );
    }

    #[test]
    fn offsets_inside_characters_are_floored() {
        let text = "---\nlive:\n  objective: 天気\n  \n---\n";
        let inside = text.find('天').map_or(0, |i| i + 1);
        with_ctx(text, RunFacts::default(), |ctx| {
            assert_eq!(completion(ctx, inside), completion(ctx, inside - 1));
            assert!(completion(ctx, text.len() + 10).is_empty());
        });
        // Between `\r` and `\n` the cursor is on no line.
        let text = "---\nlive:\r\n  \r\n---\r\n";
        with_ctx(text, RunFacts::default(), |ctx| {
            let Some(cr) = text.find("  \r").map(|i| i + 3) else { panic!("no CR") };
            assert!(completion(ctx, cr).is_empty());
            assert!(!completion(ctx, cr - 1).is_empty());
            assert!(crate::ide::hover::hover(ctx, cr).is_none());
        });
    }

    /// Pieces of frontmatter, half-typed YAML, line endings and multibyte text, so generated
    /// notes reach every branch; arbitrary strings cover the rest.
    pub(in crate::ide) fn arb_note() -> impl Strategy<Value = String> {
        const PIECES: &[&str] = &[
            "---",
            "...",
            "\n",
            "\r\n",
            "\r",
            "\u{feff}",
            "live:",
            "live: ",
            "  ",
            "    ",
            "- ",
            "-",
            "objective: ",
            "objective: |",
            "triggers:",
            "triggers: ",
            "cronExpr: ",
            "\"0 9 * * *\"",
            "*/2 * * * *",
            "0 9 * *",
            "windows:",
            "startTime: ",
            "endTime: ",
            "\"09:00\"",
            "'12:00'",
            "9:00",
            "lastRunAt: ",
            "lastAttemptAt: ",
            "\"2026-11-23T15:02:00Z\"",
            "lastRunError: ",
            "null",
            "active: ",
            "true",
            "provider: ",
            "model: ",
            "title: ",
            "# T",
            "#",
            ":",
            "\"",
            "'",
            "|",
            ">",
            "[",
            "{",
            "é",
            "日本",
            "🎉",
            "x",
        ];
        // Line breaks and indentation come often, so that the pieces form lines and levels.
        let piece = prop_oneof![4 => prop::sample::select(PIECES), 1 => Just("\n"), 1 => Just("\n  "), 1 => Just("\n    ")];
        let body = prop::collection::vec(piece, 0..40).prop_map(|v| v.concat());
        let open = prop::sample::select(&["", "---\n", "---\r\n", "\u{feff}---\n"][..]);
        let close = prop::sample::select(&["", "\n---\n# T\n", "\n---"][..]);
        prop_oneof![
            4 => (open, body, close).prop_map(|(o, b, c)| format!("{o}{b}{c}")),
            1 => any::<String>(),
            1 => any::<String>().prop_map(|s| format!("---\nlive:\n  {s}")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// Any offset into any text: no panic, and every range is a slice of the cursor's line
        /// that contains the (floored) cursor.
        #[test]
        fn never_panics(text in arb_note()) {
            with_ctx(&text, RunFacts::default(), |ctx| {
                for offset in 0..=text.len() + 2 {
                    let at = floor_offset(&text, offset);
                    for item in completion(ctx, offset) {
                        let r = item.replace;
                        prop_assert!(r.start <= at && at <= r.end && r.end <= text.len(), "{r:?} at {at}");
                        prop_assert!(text.get(r.clone()).is_some_and(|s| !s.contains('\n')), "{r:?}");
                    }
                }
                Ok(())
            })?;
        }
    }

    #[test]
    fn documentation_comes_from_the_schema() {
        let (_, items) = complete("---\nlive:\n  triggers:\n    cr$0\n---\n");
        let Some(doc) = items.first().and_then(|i| i.documentation.as_deref()) else { panic!("no doc") };
        assert!(doc.contains("Vixie"), "{doc}");
    }
}
