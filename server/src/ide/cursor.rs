//! The cursor's place in a note's frontmatter, shared by completion and hover (as taplo's
//! `Query::at`): the line it is on, the mapping a key there belongs to, and the `windows`
//! item around it. Built on the tolerant line outline, so half-typed YAML has a place too.

use crate::note::fields::Level;
use crate::note::frontmatter::Frontmatter;
use crate::note::outline::{KeyLine, LineKind, Outline};
use crate::text::Eol;

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
    /// The note's line ending, for the lines a completion inserts.
    pub nl: &'static str,
}

impl Spot {
    /// `None` when `offset` (a character boundary) is outside the frontmatter's content.
    /// `eol` is the note's line ending (`Analysis::eol`), what a completion inserts.
    pub(super) fn new(text: &str, fm: Frontmatter, offset: usize, eol: Eol) -> Option<Spot> {
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
        let nl = eol.as_str();
        Some(Spot { fm, outline, line, line_start: range.start, line_end: range.end, offset, nl })
    }

    pub(super) fn key(&self) -> Option<&KeyLine> {
        self.outline.key(self.line)
    }

    pub(super) fn kind(&self) -> Option<&LineKind> {
        self.outline.lines.get(self.line).map(|l| &l.kind)
    }

    /// Whether the cursor is after the colon of key line `k`.
    pub(super) fn in_value(&self, text: &str, k: &KeyLine) -> bool {
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

pub(super) fn scope(o: &Outline, line: usize, col: usize) -> Scope {
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
pub(super) fn item_start(o: &Outline, windows: usize, line: usize, col: usize) -> Option<usize> {
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
pub(super) fn item_keys(o: &Outline, start: usize) -> Vec<usize> {
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
