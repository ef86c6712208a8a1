//! Byte-minimal rewrites of a note: writing runtime fields, "Make live", "Pause/Resume", "Make
//! passive", converting a legacy ```` ```track ```` fence, and the small primitives quick fixes
//! use. Every function is pure and returns `TextEdit`s over the original text that touch only
//! the lines they must, so comments, quoting, key order, other keys and line endings survive.
//!
//! Decisions worth knowing:
//! - Edits work line-wise on the tolerant [`Outline`], not on a re-serialised YAML tree: that is
//!   what keeps every untouched byte intact. The price is that a `live:` block in flow style
//!   (`live: {objective: x}`) cannot be edited and is reported as such.
//! - Runtime strings are always written double-quoted on one line (the spec's rule), `None` as
//!   `null`. Objectives written by "Make live" or a conversion are quoted on one line, or a
//!   literal block (`|`/`|-`) when they span lines and a block represents them exactly.
//! - Comment lines indented deeper than a key, right after its entry, belong to that entry:
//!   they move with it on removal and new keys go after them (so a `# written by livenote
//!   only:` comment stays above the runtime fields). A comment at the key's own column or
//!   less belongs to what follows and is left alone.
//! - New lines take the note's line ending (`text::Eol::of`: the one most of its lines end
//!   with), not that of the line they go next to, so a CRLF note stays CRLF.
//! - A frontmatter with no closing line is refused: everything after `---` would be its YAML
//!   and an edit could not know where the note's body starts.

use std::ops::Range;

use crate::note::frontmatter::{self, Frontmatter, TrackFence};
use crate::note::outline::{KeyLine, LineKind, Outline};
use crate::note::yaml::{self, Kind, Node, Scalar};
use crate::text::{Eol, TextEdit};

mod live_fields;
mod move_trigger;
mod track;
pub use live_fields::{LiveEdits, Schedule, TriggerEdits, make_live_edits, make_live_with, set_schedule};
pub use move_trigger::move_into_triggers;
pub use track::{convert_track_fence, convert_track_fences, convert_track_list, track_list};

/// Why a rewrite cannot be done; the messages are shown to users as they are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    #[error("this note has no frontmatter")]
    NoFrontmatter,
    #[error("the frontmatter has no closing `---` line")]
    UnterminatedFrontmatter,
    #[error(
        "the frontmatter has a carriage return that does not end a line (`\\r` without `\\n`); YAML reads it as a line break, so it cannot be edited safely"
    )]
    LoneCarriageReturn,
    #[error("the frontmatter is not a list of `key: value` lines, so it cannot be edited safely")]
    FrontmatterNotMapping,
    #[error(
        "the frontmatter's lines do not show where its entries start and end (a quoted string or `[...]` spans lines in a way livenote does not follow), so it cannot be edited safely"
    )]
    UnclearLayout,
    #[error("the frontmatter is not valid YAML ({0}); fix it first")]
    InvalidYaml(String),
    #[error("this note is not live (it has no `live:` block)")]
    NotLive,
    #[error("this note is already live")]
    AlreadyLive,
    #[error("`triggers:` already has a `{0}`; keep one of the two and remove the other")]
    AlreadyInTriggers(String),
    #[error("`live:` has two keys for `{0}`; keep one of the two and remove the other")]
    TwiceInLive(String),
    #[error(
        "`triggers:` is not written as indented `key: value` lines (flow style or a plain value); write it that way to edit it"
    )]
    TriggersNotMapping,
    #[error("the frontmatter has more than one `live:` block; remove the extra one first")]
    DuplicateLive,
    #[error(
        "the `live:` block is written in flow style (`{{...}}`); write it as indented `key: value` lines to edit it"
    )]
    FlowStyle,
    #[error("`live:` is not a mapping of `key: value` lines")]
    LiveNotMapping,
    #[error("`{0}` appears more than once in the `live:` block; remove the extra one first")]
    DuplicateKey(String),
    #[error("there is no `key: value` line at this position in the frontmatter")]
    NoKeyAt,
    #[error("the first key of a list item cannot be removed on its own")]
    ListItemKey,
    #[error("a value written in place must be a single line of YAML")]
    MultiLineValue,
    #[error("`{0}` cannot be used as a key name")]
    InvalidKeyName(String),
    #[error("the range is not part of this text")]
    BadRange,
    #[error("the track block cannot be converted: {0}")]
    InvalidTrack(String),
}

/// A field of `live:` that livenote itself writes after runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuntimeField {
    LastAttemptAt,
    LastRunAt,
    LastRunId,
    LastRunSummary,
    LastRunError,
    /// A whole number: written as is, not quoted.
    Failures,
    LastStoppedAt,
}

impl RuntimeField {
    pub const ALL: [RuntimeField; 7] = [
        RuntimeField::LastAttemptAt,
        RuntimeField::LastRunAt,
        RuntimeField::LastRunId,
        RuntimeField::LastRunSummary,
        RuntimeField::LastRunError,
        RuntimeField::Failures,
        RuntimeField::LastStoppedAt,
    ];

    /// The key as written in the note.
    pub fn key(self) -> &'static str {
        match self {
            RuntimeField::LastAttemptAt => "lastAttemptAt",
            RuntimeField::LastRunAt => "lastRunAt",
            RuntimeField::LastRunId => "lastRunId",
            RuntimeField::LastRunSummary => "lastRunSummary",
            RuntimeField::LastRunError => "lastRunError",
            RuntimeField::Failures => "failures",
            RuntimeField::LastStoppedAt => "lastStoppedAt",
        }
    }

    /// The value as YAML: a count as a plain number (a non-number is written quoted, and the
    /// validator then warns), everything else as a double-quoted string.
    fn yaml(self, value: &str) -> String {
        match self {
            RuntimeField::Failures if value.parse::<u64>().is_ok() => value.to_owned(),
            _ => yaml_string(value),
        }
    }
}

/// Set runtime fields of the `live:` block: `Some(s)` is written as a double-quoted string,
/// `None` as `null`. An existing key keeps its line and any trailing comment (a value spanning
/// several lines is replaced whole); missing keys are inserted together, in the order given,
/// after the last entry of `live:` and the comments indented under it, at its children's
/// indentation (2 spaces in an empty block). A field given twice takes its last value.
pub fn set_runtime_fields(
    text: &str,
    fields: &[(RuntimeField, Option<&str>)],
) -> Result<Vec<TextEdit>, RewriteError> {
    let doc = Doc::open(text)?;
    let live = doc.live_block()?;
    let mut wanted: Vec<(RuntimeField, Option<&str>)> = Vec::new();
    for &(field, value) in fields {
        match wanted.iter_mut().find(|(f, _)| *f == field) {
            Some(slot) => slot.1 = value,
            None => wanted.push((field, value)),
        }
    }
    let mut edits = Vec::new();
    let mut missing = String::new();
    for (field, value) in wanted {
        let value = value.map_or_else(|| "null".to_owned(), |v| field.yaml(v));
        match doc.child(&live, field.key())? {
            Some(i) => edits.push(doc.value_edit(i, &value)?),
            None => {
                missing.push_str(&" ".repeat(live.child_col));
                missing.push_str(field.key());
                missing.push_str(": ");
                missing.push_str(&value);
                missing.push_str(doc.nl());
            }
        }
    }
    if !missing.is_empty() {
        edits.push(TextEdit::insert(live.insert_at, missing));
    }
    Ok(edits)
}

/// Add a `live:` block with `objective` (or, when `None` or blank, one derived from the
/// note's title). With no frontmatter, one is created at the very start (after a BOM); with
/// one, `live:` becomes its last top-level key, right before the closing line.
pub fn make_live(text: &str, objective: Option<&str>) -> Result<Vec<TextEdit>, RewriteError> {
    let objective = match objective {
        Some(o) if !o.trim().is_empty() => o.to_owned(),
        _ => {
            let body_start =
                frontmatter::locate(text).map_or(frontmatter::bom_len(text), |fm| fm.body_start());
            default_objective(frontmatter::title(text, body_start))
        }
    };
    let block = NewLive { objective, ..NewLive::default() };
    Ok(vec![insert_live(text, &block)?])
}

/// The objective "Make live" writes when the user gives none.
pub fn default_objective(title: Option<&str>) -> String {
    match title {
        Some(t) => format!("Keep this note about \"{t}\" up to date."),
        None => "Keep this note up to date with the latest information on its topic.".to_owned(),
    }
}

/// Pause (`false`) or resume (`true`) the note: replace the value of `active:` in place, or
/// insert `active:` right after the objective's entry (first in the block when there is no
/// objective) so the flag sits next to what it pauses.
pub fn set_active(text: &str, active: bool) -> Result<Vec<TextEdit>, RewriteError> {
    let doc = Doc::open(text)?;
    let live = doc.live_block()?;
    let value = if active { "true" } else { "false" };
    if let Some(i) = doc.child(&live, "active")? {
        return Ok(vec![doc.value_edit(i, value)?]);
    }
    let at = match doc.child(&live, "objective")? {
        Some(obj) => doc.outline.lines[doc.entry_end(obj)].full.end,
        None => doc.outline.lines[live.line].full.end,
    };
    let line = format!("{}active: {value}{}", " ".repeat(live.child_col), doc.nl());
    Ok(vec![TextEdit::insert(at, line)])
}

/// Remove the `live:` block: its key line through its last nested line, with the comments
/// and blank lines inside it and the comments indented under it right after it; blank lines
/// and comments at the top level that follow are kept (they introduce the next key). When
/// nothing but blank lines would remain, the whole frontmatter goes, delimiters included, so
/// the note is plain markdown again (unless the body starts with a `---` line, which would then
/// open a frontmatter). The body is never touched.
///
/// Works on any form of `live:` (flow style too), since the entry is removed whole.
pub fn make_passive(text: &str) -> Result<Vec<TextEdit>, RewriteError> {
    let doc = Doc::open(text)?;
    doc.check_top_level()?;
    let live = doc.top_live()?.ok_or(RewriteError::NotLive)?;
    let span = doc.removal_span(live);
    let o = &doc.outline;
    let only_blank_left = o
        .lines
        .iter()
        .all(|l| matches!(l.kind, LineKind::Blank) || (l.full.start >= span.start && l.full.end <= span.end));
    // Without its frontmatter the note must not start with a `---` line, or its body would
    // become a (broken) frontmatter; then the emptied delimiters stay.
    let plain = format!("{}{}", &text[..doc.fm.open.start], &text[doc.close.end..]);
    if only_blank_left && frontmatter::locate(&plain).is_none() {
        return Ok(vec![TextEdit::delete(doc.fm.open.start..doc.close.end)]);
    }
    Ok(vec![TextEdit::delete(span)])
}

/// Replace the value of the key on the line containing byte `at` with `new_value`, YAML text
/// written as is (use [`yaml_string`] for strings). A trailing comment on the key line is
/// kept; a value spanning several lines (block scalar, nested block) is replaced whole.
pub fn replace_value(text: &str, at: usize, new_value: &str) -> Result<Vec<TextEdit>, RewriteError> {
    if new_value.contains(['\n', '\r']) || new_value.trim().is_empty() {
        return Err(RewriteError::MultiLineValue);
    }
    let doc = Doc::open(text)?;
    let i = doc.key_line_at(at)?;
    Ok(vec![doc.value_edit(i, new_value)?])
}

/// Rename the key whose text (as written, quotes included) is `key`, as in [`KeyLine::key`],
/// to `new_name`: quoted in the old key's style when the old key was quoted, and quoted
/// whenever YAML would otherwise read the name differently.
pub fn rename_key(text: &str, key: Range<usize>, new_name: &str) -> Result<Vec<TextEdit>, RewriteError> {
    if new_name.is_empty() || !new_name.chars().all(|c| c == '\t' || is_printable(c)) {
        return Err(RewriteError::InvalidKeyName(new_name.to_owned()));
    }
    let doc = Doc::open(text)?;
    let i = doc.key_line_at(key.start)?;
    if doc.outline.key(i).is_none_or(|k| k.key != key) {
        return Err(RewriteError::NoKeyAt);
    }
    let old = &text[key.clone()];
    let written = if old.starts_with('\'') && !new_name.contains(['\'', '\t']) {
        format!("'{new_name}'")
    } else if old.starts_with(['"', '\'']) || !is_plain_key(new_name) {
        yaml_string(new_name)
    } else {
        new_name.to_owned()
    };
    Ok(vec![TextEdit::replace(key, written)])
}

/// Remove the entry whose key is on the line containing byte `at`: the key line through its
/// last nested line, plus comments indented under it right after it.
pub fn remove_entry(text: &str, at: usize) -> Result<Vec<TextEdit>, RewriteError> {
    let doc = Doc::open(text)?;
    let i = doc.key_line_at(at)?;
    if doc.outline.key(i).is_some_and(|k| k.dash_col.is_some()) {
        // Deleting the line would take the `- ` with it and merge the item's other keys
        // into the previous item.
        return Err(RewriteError::ListItemKey);
    }
    Ok(vec![TextEdit::delete(doc.removal_span(i))])
}

/// `s` as a double-quoted, single-line YAML string: `\`, `"` and every character YAML does not
/// print as is (controls, line and paragraph separators, BOM) are escaped; other non-ASCII
/// text stays readable.
pub fn yaml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_printable(c) => out.push(c),
            c if (c as u32) <= 0xff => out.push_str(&format!("\\x{:02X}", c as u32)),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Printable in YAML and safe on a line of its own: no controls, no tab, and none of the
/// characters some parsers treat as line breaks or a byte order mark.
fn is_printable(c: char) -> bool {
    matches!(c, ' '..='~')
        || (c >= '\u{a0}' && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'))
}

/// Whether a key can be written without quotes and read back as the same string.
fn is_plain_key(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !["true", "false", "null"].iter().any(|w| name.eq_ignore_ascii_case(w))
}

/// The value part of an `objective:` line (starting with its space): one quoted line, or a
/// literal block when the text spans lines and a block can represent it exactly.
fn objective_value(s: &str, content_indent: usize, nl: &str) -> String {
    if let Some(block) = literal_block(s, content_indent, nl) {
        return block;
    }
    if s.contains('"') && !s.contains('\'') && s.chars().all(is_printable) {
        // Single quotes need no escapes, so a title in double quotes stays readable.
        return format!(" '{s}'");
    }
    format!(" {}", yaml_string(s))
}

/// ` |` / ` |-` and the indented lines, or `None` when a literal block would not read back
/// as exactly `s`: a single line, a leading space on the first line (needs an indentation
/// indicator), whitespace-only lines, characters that need escapes, or several trailing
/// newlines (needs `|+`, whose trailing blank lines make later edits fragile).
fn literal_block(s: &str, content_indent: usize, nl: &str) -> Option<String> {
    let (content, header) = match s.strip_suffix('\n') {
        Some(c) => (c, "|"),
        None => (s, "|-"),
    };
    if !content.contains('\n')
        || content.ends_with('\n')
        || !content.chars().all(|c| c == '\n' || is_printable(c))
    {
        return None;
    }
    let lines: Vec<&str> = content.split('\n').collect();
    let first = lines.iter().find(|l| !l.is_empty())?;
    if first.starts_with(' ') || lines.iter().any(|l| !l.is_empty() && l.trim().is_empty()) {
        return None;
    }
    let mut out = format!(" {header}");
    for line in lines {
        out.push_str(nl);
        if !line.is_empty() {
            out.push_str(&" ".repeat(content_indent));
            out.push_str(line);
        }
    }
    Some(out)
}

/// A frontmatter with a closing line, and its outline.
struct Doc<'a> {
    text: &'a str,
    fm: Frontmatter,
    close: Range<usize>,
    outline: Outline,
    /// The note's line ending, found when an edit first inserts a line: finding it reads the
    /// whole note, and an edit that only changes a value never needs it.
    eol: std::cell::OnceCell<Eol>,
}

/// Where the `live:` block sits and where its children go.
struct LiveBlock {
    line: usize,
    children: Vec<usize>,
    child_col: usize,
    /// Where new keys are inserted: after the last entry and the comments indented under it.
    insert_at: usize,
}

impl<'a> Doc<'a> {
    fn open(text: &'a str) -> Result<Self, RewriteError> {
        let fm = frontmatter::locate(text).ok_or(RewriteError::NoFrontmatter)?;
        let close = fm.close.clone().ok_or(RewriteError::UnterminatedFrontmatter)?;
        // Edits work on lines ending in `\n`; YAML also breaks lines at a lone `\r`, so the two
        // would disagree on where an entry ends (removing one could take the next with it).
        if text[fm.content.clone()].split("\r\n").any(|s| s.contains('\r')) {
            return Err(RewriteError::LoneCarriageReturn);
        }
        let outline = Outline::parse(text, fm.content.clone());
        let doc = Doc { text, fm, close, outline, eol: std::cell::OnceCell::new() };
        doc.check_outline()?;
        Ok(doc)
    }

    /// Where the YAML parses, the outline must agree with it: every key the outline sees is a
    /// key of the YAML at the same byte, and its value ends within the lines the outline gives
    /// the entry. Otherwise a line the outline reads as `key: value` is inside a value spanning
    /// lines (a quoted string in a flow collection), or a value runs past its entry's lines
    /// (`[a` with `]` on a line of its own), and a line-wise edit would change what YAML reads.
    /// Half-typed YAML is edited line-wise as it is.
    fn check_outline(&self) -> Result<(), RewriteError> {
        let Ok(Some(root)) = yaml::parse(self.text, self.fm.content.clone()) else { return Ok(()) };
        let mut keys = Vec::new();
        yaml_keys(&root, &mut keys);
        keys.sort_unstable();
        for i in 0..self.outline.lines.len() {
            let Some(k) = self.outline.key(i) else { continue };
            let at = keys.partition_point(|&(start, _)| start < k.key.start);
            let entry_end = self.outline.lines[self.entry_end(i)].full.end;
            match keys.get(at) {
                Some(&(start, value_end))
                    if start == k.key.start && value_end.is_none_or(|e| e <= entry_end) => {}
                _ => return Err(RewriteError::UnclearLayout),
            }
        }
        Ok(())
    }

    fn nl(&self) -> &'static str {
        self.eol.get_or_init(|| Eol::of(self.text)).as_str()
    }

    /// Every top-level line must be a plain `key:` or belong to one (a list may sit at the
    /// key's own column), not a flow collection or stray text, or line-wise edits could not
    /// tell where entries end. Top-level keys sit at column 0: a root mapping indented as a
    /// whole is valid YAML, but a `live:` added at column 0 would break it.
    fn check_top_level(&self) -> Result<(), RewriteError> {
        let o = &self.outline;
        let mut covered_until = None;
        for (i, line) in o.lines.iter().enumerate() {
            if matches!(line.kind, LineKind::Blank | LineKind::Comment | LineKind::Continuation) {
                continue;
            }
            match &line.kind {
                LineKind::Key(k) if line.indent == 0 && k.dash_col.is_none() => {
                    covered_until = Some(o.last_line(i))
                }
                _ if covered_until.is_some_and(|c| i <= c) => {}
                _ => return Err(RewriteError::FrontmatterNotMapping),
            }
        }
        Ok(())
    }

    fn top_live(&self) -> Result<Option<usize>, RewriteError> {
        let mut found =
            self.outline.top_level().filter(|&i| self.outline.key(i).is_some_and(|k| k.name == "live"));
        let first = found.next();
        if found.next().is_some() {
            return Err(RewriteError::DuplicateLive);
        }
        Ok(first)
    }

    /// The `live:` block, which must be a block mapping (or empty).
    fn live_block(&self) -> Result<LiveBlock, RewriteError> {
        self.check_top_level()?;
        let line = self.top_live()?.ok_or(RewriteError::NotLive)?;
        let o = &self.outline;
        let Some(key) = o.key(line) else {
            return Err(RewriteError::NotLive);
        };
        if let Some(v) = &key.value {
            return Err(if self.text[v.clone()].starts_with(['{', '[']) {
                RewriteError::FlowStyle
            } else {
                RewriteError::LiveNotMapping
            });
        }
        let last = o.last_line(line);
        let first_content =
            (line + 1..=last).find(|&j| !matches!(o.lines[j].kind, LineKind::Blank | LineKind::Comment));
        let child_col = match first_content {
            None => 2,
            Some(j) => match &o.lines[j].kind {
                LineKind::Key(k) if k.dash_col.is_none() => k.col,
                _ if self.text[o.lines[j].range.clone()].trim_start().starts_with(['{', '[']) => {
                    return Err(RewriteError::FlowStyle);
                }
                _ => return Err(RewriteError::LiveNotMapping),
            },
        };
        let children = o.children(line);
        let end = match children.last() {
            Some(&c) => self.entry_end(c).max(last),
            None => line,
        };
        let end = self.trailing_comments(end, 0);
        Ok(LiveBlock { line, children, child_col, insert_at: o.lines[end].full.end })
    }

    /// The child of `live:` named `name`; two of them is an error, since editing one would
    /// leave the YAML invalid anyway.
    fn child(&self, live: &LiveBlock, name: &str) -> Result<Option<usize>, RewriteError> {
        self.child_in(&live.children, name)
    }

    /// The line among `children` whose key is `name`; two of them is an error.
    fn child_in(&self, children: &[usize], name: &str) -> Result<Option<usize>, RewriteError> {
        let mut found =
            children.iter().copied().filter(|&i| self.outline.key(i).is_some_and(|k| k.name == name));
        let first = found.next();
        if found.next().is_some() {
            return Err(RewriteError::DuplicateKey(name.to_owned()));
        }
        Ok(first)
    }

    fn key_line_at(&self, at: usize) -> Result<usize, RewriteError> {
        let i = self.outline.line_at(at).ok_or(RewriteError::NoKeyAt)?;
        match self.outline.key(i) {
            Some(_) => Ok(i),
            None => Err(RewriteError::NoKeyAt),
        }
    }

    /// The last line of the entry on line `i`, like [`Outline::last_line`], but also over the
    /// blank lines a keep-chomping block scalar (`|+`) ends with: they are part of its value,
    /// and a line inserted before them would change it.
    fn entry_end(&self, i: usize) -> usize {
        let o = &self.outline;
        let last = o.last_line(i);
        let keeps = (i..=last)
            .any(|j| o.key(j).is_some_and(|k| keeps_trailing_blanks(self.text, k) && o.last_line(j) == last));
        if !keeps {
            return last;
        }
        let mut end = last;
        while o.lines.get(end + 1).is_some_and(|l| matches!(l.kind, LineKind::Blank)) {
            end += 1;
        }
        end
    }

    /// Extend `last` over the comment lines indented deeper than `col` that follow it (with
    /// blank lines between them): they are commented-out or annotated parts of the entry.
    fn trailing_comments(&self, last: usize, col: usize) -> usize {
        let mut end = last;
        for (j, line) in self.outline.lines.iter().enumerate().skip(last + 1) {
            match line.kind {
                LineKind::Comment if line.indent > col => end = j,
                LineKind::Blank => {}
                _ => break,
            }
        }
        end
    }

    /// Bytes to delete to remove the entry on line `i`. Blank lines after it stay even when a
    /// `|+` scalar counts them as its own: once the value is gone they are only spacing, and
    /// they may be the user's.
    fn removal_span(&self, i: usize) -> Range<usize> {
        let o = &self.outline;
        let col = o.key(i).map_or(o.lines[i].indent, |k| k.col);
        let end = self.trailing_comments(o.last_line(i), col);
        o.lines[i].full.start..o.lines[end].full.end
    }

    /// Replace the value of the key on line `i` with `new_value`, keeping a trailing comment of
    /// the key line.
    fn value_edit(&self, i: usize, new_value: &str) -> Result<TextEdit, RewriteError> {
        let o = &self.outline;
        let Some(k) = o.key(i) else {
            return Err(RewriteError::NoKeyAt);
        };
        let text = self.text;
        let line = &o.lines[i];
        let last = o.last_line(i);
        let value_end = o.lines[last].range.end;
        match &k.value {
            Some(v) => {
                // Only spaces and tabs are white space to YAML; a form feed after the value is
                // part of it.
                let space = [' ', '\t'];
                let tail = &text[v.end..line.range.end];
                let is_comment = tail.starts_with(space) && tail.trim_start_matches(space).starts_with('#');
                if last == i {
                    // Keep a trailing comment; anything else after the value (invalid YAML
                    // like `"a" b`) goes with it.
                    let end = if is_comment || tail.trim_matches(space).is_empty() {
                        v.end
                    } else {
                        line.range.end
                    };
                    Ok(TextEdit::replace(v.start..end, new_value))
                } else {
                    let comment = if is_comment { tail.trim_end_matches(space) } else { "" };
                    Ok(TextEdit::replace(v.start..value_end, format!("{new_value}{comment}")))
                }
            }
            None => {
                let comment = text[k.value_start..line.range.end].trim_end_matches([' ', '\t']);
                let sep = if text[..k.value_start].ends_with([' ', '\t']) { "" } else { " " };
                let new = if comment.is_empty() {
                    format!("{sep}{new_value}")
                } else {
                    format!("{sep}{new_value} {comment}")
                };
                Ok(TextEdit::replace(k.value_start..value_end, new))
            }
        }
    }
}

/// Where every key of the YAML tree `n` starts, and where its value ends (`None` for a null
/// value, whose position says nothing).
fn yaml_keys(n: &Node, out: &mut Vec<(usize, Option<usize>)>) {
    match &n.kind {
        Kind::Map(entries) => {
            for e in entries {
                out.push((e.key_span.start, (!e.value.is_null()).then_some(e.value.span.end)));
                yaml_keys(&e.value, out);
            }
        }
        Kind::Seq(items) => items.iter().for_each(|i| yaml_keys(i, out)),
        _ => {}
    }
}

/// Whether the key's value is a block scalar with the keep indicator (`|+`, `>2+`, ...).
fn keeps_trailing_blanks(text: &str, k: &KeyLine) -> bool {
    k.value.as_ref().is_some_and(|v| {
        let v = &text[v.clone()];
        v.starts_with(['|', '>']) && v.contains('+')
    })
}

/// The `live:` block a rewrite creates.
#[derive(Debug, Default)]
struct NewLive {
    objective: String,
    active: Option<bool>,
    cron: Option<String>,
    windows: Vec<(String, String)>,
    event: Option<String>,
    /// `tools:` and `skills:`, written as one flow list each when given.
    tools: Option<Vec<String>>,
    skills: Option<Vec<String>>,
    /// Comments (without `# `) about what a conversion dropped.
    notes: Vec<String>,
    runtime: Vec<(RuntimeField, String)>,
}

impl NewLive {
    fn render(&self, nl: &str) -> String {
        let mut out = format!("live:{nl}  objective:{}{nl}", objective_value(&self.objective, 4, nl));
        if let Some(active) = self.active {
            out.push_str(&format!("  active: {active}{nl}"));
        }
        if self.cron.is_some() || !self.windows.is_empty() || self.event.is_some() {
            out.push_str(&format!("  triggers:{nl}"));
            if let Some(cron) = &self.cron {
                out.push_str(&trigger_line(4, TriggerKey::CronExpr, cron, nl));
            }
            if !self.windows.is_empty() {
                out.push_str(&windows_entry(4, &self.windows, nl));
            }
            if let Some(event) = &self.event {
                out.push_str(&trigger_line(4, TriggerKey::EventMatchCriteria, event, nl));
            }
        }
        if let Some(tools) = &self.tools {
            out.push_str(&format!("  tools: {}{nl}", flow_list(tools)));
        }
        if let Some(skills) = &self.skills {
            out.push_str(&format!("  skills: {}{nl}", flow_list(skills)));
        }
        for note in &self.notes {
            // A comment ends at the line's end: anything that could break the line is blanked.
            let note: String = note.chars().map(|c| if is_printable(c) { c } else { ' ' }).collect();
            out.push_str(&format!("  # {note}{nl}"));
        }
        for (field, value) in &self.runtime {
            out.push_str(&format!("  {}: {}{nl}", field.key(), yaml_string(value)));
        }
        out
    }
}

/// The trigger keys written as one quoted line.
#[derive(Debug, Clone, Copy)]
enum TriggerKey {
    CronExpr,
    EventMatchCriteria,
}

impl TriggerKey {
    fn key(self) -> &'static str {
        match self {
            TriggerKey::CronExpr => "cronExpr",
            TriggerKey::EventMatchCriteria => "eventMatchCriteria",
        }
    }
}

/// `cronExpr: "..."` (or `eventMatchCriteria`) at column `col`, with its line ending.
fn trigger_line(col: usize, key: TriggerKey, value: &str, nl: &str) -> String {
    format!("{}{}: {}{nl}", " ".repeat(col), key.key(), yaml_string(value))
}

/// A list of strings as one line of YAML: `["time", "github.list_issues"]`.
fn flow_list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|i| yaml_string(i)).collect();
    format!("[{}]", items.join(", "))
}

/// A `windows:` entry at column `col`: one `- startTime/endTime` item per window.
fn windows_entry(col: usize, windows: &[(String, String)], nl: &str) -> String {
    let (key, item, field) = (" ".repeat(col), " ".repeat(col + 2), " ".repeat(col + 4));
    let mut out = format!("{key}windows:{nl}");
    for (start, end) in windows {
        out.push_str(&format!("{item}- startTime: {}{nl}", yaml_string(start)));
        out.push_str(&format!("{field}endTime: {}{nl}", yaml_string(end)));
    }
    out
}

/// The edit that adds `block` as the note's `live:`, creating the frontmatter if needed.
fn insert_live(text: &str, block: &NewLive) -> Result<TextEdit, RewriteError> {
    let Some(fm) = frontmatter::locate(text) else {
        let nl = Eol::of(text).as_str();
        let at = frontmatter::bom_len(text);
        return Ok(TextEdit::insert(at, format!("---{nl}{}---{nl}", block.render(nl))));
    };
    let doc = Doc::open(text)?;
    doc.check_top_level()?;
    if doc.top_live()?.is_some() {
        return Err(RewriteError::AlreadyLive);
    }
    // The outline is tolerant; appending a key to YAML that does not parse, or to a root that
    // is not a mapping, would make things worse rather than add a block.
    match yaml::parse(text, fm.content.clone()) {
        Err(e) => return Err(RewriteError::InvalidYaml(e.message)),
        Ok(None) => {}
        Ok(Some(root)) => match root.entries() {
            Some(entries) if entries.iter().any(|e| e.key == "live") => {
                return Err(RewriteError::AlreadyLive);
            }
            Some(_) => {}
            None if root.is_null() => {}
            None => return Err(RewriteError::FrontmatterNotMapping),
        },
    }
    Ok(TextEdit::insert(doc.close.start, block.render(doc.nl())))
}

#[cfg(test)]
#[path = "rewrite_tests.rs"]
mod tests;
