//! A tolerant, indentation-aware outline of the frontmatter, line by line. Unlike the YAML
//! parser it never fails: half-typed YAML still yields keys with exact positions, which is
//! what completion needs while the user types and what rewrites need to place their edits.

use std::ops::Range;

/// What YAML counts as white space inside a line. Other Unicode white space (a form feed, a
/// no-break space) is text to YAML, so the outline must not trim it either.
const YAML_SPACE: [char; 2] = [' ', '\t'];

/// One line of the frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The line without its line ending.
    pub range: Range<usize>,
    /// The line with its line ending.
    pub full: Range<usize>,
    /// Leading spaces.
    pub indent: usize,
    pub kind: LineKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind {
    Blank,
    Comment,
    /// `key: value`, possibly after `- ` list markers.
    Key(KeyLine),
    /// `- value` (a list item that is not a mapping).
    Item {
        dash_col: usize,
    },
    /// Part of a multi-line scalar that started on an earlier line.
    Continuation,
    /// Anything else (flow collections, stray text).
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLine {
    pub name: String,
    /// The key as written (quotes included).
    pub key: Range<usize>,
    /// Column of the key (after any `- ` markers); siblings share it.
    pub col: usize,
    /// Column of the first `- ` marker when the key opens a list item.
    pub dash_col: Option<usize>,
    /// The inline value as written, without a trailing comment; `None` when empty.
    pub value: Option<Range<usize>>,
    /// Where a value would start (just after `: `, or at the line's end).
    pub value_start: usize,
}

impl KeyLine {
    fn opens_block_scalar(&self, text: &str) -> bool {
        self.value.as_ref().is_some_and(|v| text[v.clone()].starts_with(['|', '>']))
    }
}

/// The outline of `text[content]`.
#[derive(Debug, Clone, Default)]
pub struct Outline {
    pub lines: Vec<Line>,
}

impl Outline {
    pub fn parse(text: &str, content: Range<usize>) -> Outline {
        let mut lines = Vec::new();
        let mut pos = content.start;
        // (indent a continuation must exceed, or None for a quoted scalar waiting for its quote)
        let mut scalar: Option<ScalarState> = None;
        while pos < content.end {
            let nl = memchr::memchr(b'\n', &text.as_bytes()[pos..content.end]).map(|i| pos + i);
            let full_end = nl.map_or(content.end, |i| i + 1);
            let mut end = nl.unwrap_or(content.end);
            if end > pos && text.as_bytes()[end - 1] == b'\r' {
                end -= 1;
            }
            let s = &text[pos..end];
            let indent = s.len() - s.trim_start_matches(' ').len();
            let rest = s[indent..].trim_end_matches(YAML_SPACE);
            let kind = match scalar {
                // Blank lines inside a block scalar keep it open but are not its content's end.
                Some(ScalarState::Block { .. }) if rest.is_empty() => LineKind::Blank,
                Some(ScalarState::Block { parent_col }) if indent > parent_col => LineKind::Continuation,
                Some(ScalarState::Quoted { quote }) => {
                    if closes_quote(s, quote) {
                        scalar = None;
                    }
                    LineKind::Continuation
                }
                _ => {
                    scalar = None;
                    classify(pos, s, indent)
                }
            };
            if let LineKind::Key(k) = &kind {
                if k.opens_block_scalar(text) {
                    scalar = Some(ScalarState::Block { parent_col: k.col });
                } else if let Some(v) = &k.value {
                    let vt = &text[v.clone()];
                    if let Some(q @ ('"' | '\'')) = vt.chars().next()
                        && !closes_quote(&vt[1..], q)
                    {
                        scalar = Some(ScalarState::Quoted { quote: q });
                    }
                }
            }
            lines.push(Line { range: pos..end, full: pos..full_end, indent, kind });
            pos = full_end;
        }
        Outline { lines }
    }

    pub fn key(&self, i: usize) -> Option<&KeyLine> {
        match &self.lines.get(i)?.kind {
            LineKind::Key(k) => Some(k),
            _ => None,
        }
    }

    /// Column that nested content of line `i` must exceed.
    fn col(&self, i: usize) -> usize {
        match &self.lines[i].kind {
            LineKind::Key(k) => k.col,
            LineKind::Item { dash_col } => *dash_col,
            _ => self.lines[i].indent,
        }
    }

    fn is_content(&self, i: usize) -> bool {
        !matches!(self.lines[i].kind, LineKind::Blank | LineKind::Comment | LineKind::Continuation)
    }

    /// Index of the last line that belongs to the entry on line `i` (its nested keys, list
    /// items and multi-line values), not counting trailing blank or comment lines.
    pub fn last_line(&self, i: usize) -> usize {
        let col = self.col(i);
        let has_inline_value = self.key(i).is_some_and(|k| k.value.is_some());
        let mut last = i;
        for j in i + 1..self.lines.len() {
            let line = &self.lines[j];
            match &line.kind {
                LineKind::Blank | LineKind::Comment => continue,
                LineKind::Continuation => last = j,
                // A list at the same column as its key (`windows:\n- a`) still belongs to it.
                LineKind::Key(KeyLine { dash_col: Some(d), .. }) | LineKind::Item { dash_col: d }
                    if *d == col && !has_inline_value && self.key(i).is_some() =>
                {
                    last = j
                }
                _ if line.indent > col => last = j,
                _ => break,
            }
        }
        last
    }

    /// Byte range of the entry on line `i`: from its line start to the end (with line ending)
    /// of its last line.
    pub fn extent(&self, i: usize) -> Range<usize> {
        self.lines[i].full.start..self.lines[self.last_line(i)].full.end
    }

    /// Key lines that are direct children of the key on line `i` (for `- ` items, the keys of
    /// every item), in order.
    pub fn children(&self, i: usize) -> Vec<usize> {
        let last = self.last_line(i);
        let mut out = Vec::new();
        let mut child_col = None;
        for j in i + 1..=last {
            if !self.is_content(j) {
                continue;
            }
            let c = match &self.lines[j].kind {
                LineKind::Key(k) => k.col,
                _ => continue,
            };
            let want = *child_col.get_or_insert(c);
            if c == want {
                out.push(j);
            }
        }
        out
    }

    /// Top-level key lines (column 0, not list items).
    pub fn top_level(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.lines.len()).filter(
            |&i| matches!(&self.lines[i].kind, LineKind::Key(k) if k.col == 0 && k.dash_col.is_none()),
        )
    }

    /// Find a key by path from the top (`["live", "triggers", "cronExpr"]`).
    pub fn find(&self, path: &[&str]) -> Option<usize> {
        let (first, rest) = path.split_first()?;
        let mut cur = self.top_level().find(|&i| self.key(i).is_some_and(|k| k.name == *first))?;
        for name in rest {
            cur = self.children(cur).into_iter().find(|&j| self.key(j).is_some_and(|k| k.name == *name))?;
        }
        Some(cur)
    }

    /// Index of the line containing `offset` (a line's end counts as inside it).
    pub fn line_at(&self, offset: usize) -> Option<usize> {
        let i = self.lines.partition_point(|l| l.full.end <= offset);
        if i < self.lines.len() && self.lines[i].full.start <= offset {
            Some(i)
        } else if i > 0 && self.lines[i - 1].full.end == offset && !self.lines[i - 1].full.is_empty() {
            // The end of the text without a final newline.
            let prev = &self.lines[i - 1];
            (prev.range.end == prev.full.end).then_some(i - 1)
        } else {
            None
        }
    }

    /// The key path enclosing column `col` on line `i`: the keys of every less-indented line
    /// above it that opens a mapping. Used for "which level is the cursor at".
    pub fn parents_at(&self, i: usize, col: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut limit = col;
        for j in (0..i).rev() {
            if !self.is_content(j) {
                continue;
            }
            match &self.lines[j].kind {
                LineKind::Key(k) if k.col < limit => {
                    if k.value.is_none() {
                        out.push(j);
                    }
                    limit = k.dash_col.unwrap_or(k.col);
                    if limit == 0 && k.col == 0 {
                        break;
                    }
                }
                LineKind::Item { dash_col } if *dash_col < limit => limit = *dash_col,
                _ => {}
            }
            if limit == 0 {
                break;
            }
        }
        out.reverse();
        out
    }
}

#[derive(Debug, Clone, Copy)]
enum ScalarState {
    Block { parent_col: usize },
    Quoted { quote: char },
}

/// Whether `s` contains the closing `quote` of a string opened earlier.
fn closes_quote(s: &str, quote: char) -> bool {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if quote == '"' && c == '\\' {
            chars.next();
        } else if c == quote {
            if quote == '\'' && chars.peek() == Some(&'\'') {
                chars.next();
            } else {
                return true;
            }
        }
    }
    false
}

fn classify(line_start: usize, s: &str, indent: usize) -> LineKind {
    let rest = s[indent..].trim_end_matches(YAML_SPACE);
    if rest.is_empty() {
        return LineKind::Blank;
    }
    // Tabs may separate a comment from the indentation (` \t# c` is a comment line in YAML).
    if rest.trim_start_matches('\t').starts_with('#') {
        return LineKind::Comment;
    }
    let mut col = indent;
    let mut dash_col = None;
    loop {
        let r = &s[col..];
        if r == "-" || r.starts_with("- ") || r.starts_with("-\t") {
            dash_col.get_or_insert(col);
            col += 1;
            col += s[col..].len() - s[col..].trim_start_matches([' ', '\t']).len();
            if col >= s.trim_end_matches(YAML_SPACE).len() {
                return LineKind::Item { dash_col: dash_col.unwrap_or(indent) };
            }
        } else {
            break;
        }
    }
    match parse_key(&s[col..]) {
        Some((name, key_len, value_off)) => {
            let key = line_start + col..line_start + col + key_len;
            let after = &s[col + value_off..];
            let lead = after.len() - after.trim_start_matches([' ', '\t']).len();
            let value_start = line_start + col + value_off + lead;
            let v = &after[lead..];
            let value = if v.is_empty() || v.starts_with('#') {
                None
            } else {
                Some(value_start..value_start + value_len(v))
            };
            LineKind::Key(KeyLine { name, key, col, dash_col, value, value_start })
        }
        None if dash_col.is_some() => LineKind::Item { dash_col: dash_col.unwrap_or(indent) },
        None => LineKind::Other,
    }
}

/// `key: ...` at the start of `s`: (key name, key length as written, offset after the colon).
fn parse_key(s: &str) -> Option<(String, usize, usize)> {
    let first = s.chars().next()?;
    if matches!(first, '[' | '{' | '#' | '&' | '*' | '!' | '|' | '>' | '%' | '@' | '`') {
        return None;
    }
    if first == '"' || first == '\'' {
        let close = s[1..].find(first)? + 1;
        let after = &s[close + 1..];
        let colon = after.strip_prefix(':')?;
        if !(colon.is_empty() || colon.starts_with([' ', '\t'])) {
            return None;
        }
        return Some((s[1..close].to_owned(), close + 1, close + 2));
    }
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b':' if i + 1 == bytes.len() || bytes[i + 1] == b' ' || bytes[i + 1] == b'\t' => {
                // Only spaces and tabs separate a key from its colon in YAML; `live\u{b}:` is
                // not `live:`.
                let name = s[..i].trim_end_matches([' ', '\t']);
                if name.is_empty() {
                    return None;
                }
                return Some((name.to_owned(), name.len(), i + 1));
            }
            b'#' if i > 0 && (bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') => return None,
            _ => i += 1,
        }
    }
    None
}

/// Length of an inline value as written: a quoted string to its closing quote, otherwise up
/// to a ` #` comment, trimmed.
fn value_len(v: &str) -> usize {
    if let Some(q @ ('"' | '\'')) = v.chars().next() {
        let mut chars = v[1..].char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if q == '"' && c == '\\' {
                chars.next();
            } else if c == q {
                if q == '\'' && chars.peek().is_some_and(|&(_, n)| n == '\'') {
                    chars.next();
                } else {
                    return i + 2;
                }
            }
        }
        return v.trim_end_matches(YAML_SPACE).len();
    }
    let cut = v.find(" #").or_else(|| v.find("\t#")).unwrap_or(v.len());
    v[..cut].trim_end_matches(YAML_SPACE).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: &str = "title: x # c
live:
  objective: |
    Keep this: short.
    - not a list

  active: true
  triggers:
    cronExpr: \"0 * * * *\"  # hourly
    windows:
    - startTime: \"09:00\"
      endTime: '12:00'
    - startTime: 13:00
  lastRunError: null
tags: [a, b]
";

    fn names(o: &Outline, idx: &[usize]) -> Vec<String> {
        idx.iter().filter_map(|&i| o.key(i).map(|k| k.name.clone())).collect()
    }

    #[test]
    fn structure_of_a_live_block() {
        let o = Outline::parse(NOTE, 0..NOTE.len());
        let live = o.find(&["live"]).unwrap_or(usize::MAX);
        assert_eq!(names(&o, &o.children(live)), ["objective", "active", "triggers", "lastRunError"]);
        let trig = o.find(&["live", "triggers"]).unwrap_or(usize::MAX);
        assert_eq!(names(&o, &o.children(trig)), ["cronExpr", "windows"]);
        let win = o.find(&["live", "triggers", "windows"]).unwrap_or(usize::MAX);
        assert_eq!(names(&o, &o.children(win)), ["startTime", "endTime", "startTime"]);
        let cron = o.key(o.find(&["live", "triggers", "cronExpr"]).unwrap_or(usize::MAX));
        let v = cron.and_then(|k| k.value.clone()).unwrap_or_default();
        assert_eq!(&NOTE[v], "\"0 * * * *\"");
        assert_eq!(
            &NOTE[o.extent(live)],
            &NOTE[NOTE.find("live:").unwrap_or(0)..NOTE.find("tags").unwrap_or(0)]
        );
        let obj = o.find(&["live", "objective"]).unwrap_or(usize::MAX);
        assert_eq!(o.last_line(obj), obj + 2, "block scalar ends before the blank line");
        assert_eq!(names(&o, &o.top_level().collect::<Vec<_>>()), ["title", "live", "tags"]);
    }

    #[test]
    fn half_typed_yaml_still_has_keys() {
        let t = "live:\n  objective: \"unclosed\n  triggers:\n    cron\n  act";
        let o = Outline::parse(t, 0..t.len());
        assert!(matches!(o.lines[3].kind, LineKind::Continuation));
        let t = "live:\n  triggers:\n    cron\n  act";
        let o = Outline::parse(t, 0..t.len());
        assert!(matches!(o.lines[2].kind, LineKind::Other));
        let parents = o.parents_at(2, 4);
        assert_eq!(names(&o, &parents), ["live", "triggers"]);
        assert_eq!(names(&o, &o.parents_at(3, 2)), ["live"]);
        assert_eq!(o.line_at(t.len()), Some(3));
    }

    /// Found by the `edits` fuzz target: `live\u{b}:` was read as the key `live` (a vertical
    /// tab is Unicode whitespace, not YAML's), so rewrites edited a block YAML calls
    /// `"live\u{b}"` and the note stayed without a live block.
    #[test]
    fn only_spaces_and_tabs_end_a_key() {
        let t = "live\u{b}:\nlive\u{a0}: x\nlive \t: y\n";
        let o = Outline::parse(t, 0..t.len());
        assert_eq!(names(&o, &[0, 1, 2]), ["live\u{b}", "live\u{a0}", "live"]);
        // What this means for rewrites: note/rewrite_tests.rs, `a_vertical_tab_ends_no_key`.
    }

    /// Found by the `edits` fuzz target: ` \t# c` is a comment line in YAML, but was read as
    /// stray text that ended the entry above it, so "Resume" inserted `active: true` between
    /// `objective:` and its value (YAML then read `active: "true c"`).
    #[test]
    fn a_tab_before_a_comment_keeps_it_a_comment() {
        let t = "live:\n objective:\n \t# c\n  text\n";
        let o = Outline::parse(t, 0..t.len());
        assert!(matches!(o.lines[2].kind, LineKind::Comment));
        assert_eq!(o.last_line(1), 3);
        // What this means for rewrites: note/rewrite_tests.rs, `a_tab_before_a_comment_keeps_resume_right`.
    }
}
