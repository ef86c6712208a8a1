//! Finding a note's YAML frontmatter: the `---` line at the top (after an optional BOM), the
//! closing `---` or `...` line, and the body after it. Scanning stops at the closing line, so
//! the cost does not depend on the size of the body.

use std::ops::Range;

/// Where the frontmatter of a note sits, as byte ranges of the whole text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter {
    /// The opening `---` line, including its line ending.
    pub open: Range<usize>,
    /// The YAML between the two delimiter lines (each line with its ending).
    pub content: Range<usize>,
    /// The closing `---`/`...` line with its line ending; `None` when the frontmatter is never
    /// closed (then `content` runs to the end of the text).
    pub close: Option<Range<usize>>,
}

impl Frontmatter {
    /// Where the body starts: after the closing line, or at the end of an unterminated block.
    pub fn body_start(&self) -> usize {
        self.close.as_ref().map_or(self.content.end, |c| c.end)
    }
}

/// Byte length of a UTF-8 BOM at the start of `text`, if any.
pub fn bom_len(text: &str) -> usize {
    if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 }
}

/// Locate the frontmatter, or `None` when the note has none.
pub fn locate(text: &str) -> Option<Frontmatter> {
    let start = bom_len(text);
    let mut lines = Lines { text, pos: start };
    let (open_line, open_full) = lines.next()?;
    if !is_delimiter(&text[open_line.clone()], "---") || open_full.end == open_line.end {
        // `---` alone at the end of the file with no newline opens nothing.
        return None;
    }
    let content_start = open_full.end;
    for (line, full) in lines {
        let s = &text[line.clone()];
        if is_delimiter(s, "---") || is_delimiter(s, "...") {
            return Some(Frontmatter {
                open: open_full,
                content: content_start..full.start,
                close: Some(full),
            });
        }
    }
    Some(Frontmatter { open: open_full, content: content_start..text.len(), close: None })
}

fn is_delimiter(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker).is_some_and(|rest| rest.trim_end_matches([' ', '\t']).is_empty())
}

/// Iterates lines as (content range without the line ending, full range with it).
struct Lines<'a> {
    text: &'a str,
    pos: usize,
}

impl Iterator for Lines<'_> {
    type Item = (Range<usize>, Range<usize>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let (content_end, full_end) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => {
                let nl = start + i;
                let ce = if nl > start && bytes[nl - 1] == b'\r' { nl - 1 } else { nl };
                (ce, nl + 1)
            }
            None => (self.text.len(), self.text.len()),
        };
        self.pos = full_end;
        Some((start..content_end, start..full_end))
    }
}

/// The note's title: the text of the first `# ` heading of the body (outside code fences).
pub fn title(text: &str, body_start: usize) -> Option<&str> {
    let mut in_fence = false;
    for (line, _) in (Lines { text, pos: body_start.min(text.len()) }) {
        let s = &text[line];
        let trimmed = s.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(rest) = s.strip_prefix("# ") {
            let t = rest.trim().trim_end_matches('#').trim();
            if !t.is_empty() {
                return Some(t);
            }
        }
    }
    None
}

/// The note's title (the first `# ` heading of its body, [`title`]) in a whole note's text:
/// looked for below the frontmatter only, never in it (a `# ` line there is a YAML comment).
pub fn body_title(text: &str) -> Option<&str> {
    match locate(text) {
        Some(fm) => fm.close.is_some().then(|| title(text, fm.body_start())).flatten(),
        None => title(text, bom_len(text)),
    }
}

/// The H1 line of the body (range without its line ending), if any.
pub fn h1_line(text: &str, body_start: usize) -> Option<Range<usize>> {
    let t = title(text, body_start)?;
    // `title` returns a slice of `text`; recover its line from the pointer offset.
    let off = t.as_ptr() as usize - text.as_ptr() as usize;
    let line_start = text[..off].rfind('\n').map_or(0, |i| i + 1).max(body_start.min(off));
    let line_end = text[off..].find('\n').map_or(text.len(), |i| off + i);
    let line_end = if text[..line_end].ends_with('\r') { line_end - 1 } else { line_end };
    Some(line_start..line_end)
}

/// A legacy ```` ```track ```` fence in the body (the older per-block model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackFence {
    /// The whole fence, from the opening backticks to the end of the closing line (with its
    /// line ending), or to the end of the text when unclosed.
    pub range: Range<usize>,
    /// The opening line (without its line ending), where the hint is shown.
    pub open_line: Range<usize>,
    /// The fence's inner text (its YAML).
    pub inner: Range<usize>,
}

/// Find legacy ```` ```track ```` fences in the body. Uses a substring search so a large body
/// without fences costs one fast pass.
pub fn track_fences(text: &str, body_start: usize) -> Vec<TrackFence> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let finder = memchr::memmem::Finder::new(b"```track");
    let mut from = body_start.min(text.len());
    while let Some(i) = finder.find(&bytes[from..]) {
        let at = from + i;
        from = at + 8;
        let at_line_start = at == 0 || bytes[at - 1] == b'\n';
        if !at_line_start {
            continue;
        }
        let rest_of_line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |j| at + j);
        let info = text[at + 8..rest_of_line_end].trim_end_matches('\r');
        if !(info.is_empty() || info.starts_with([' ', '\t'])) {
            continue; // ```tracker or similar
        }
        let open_line_end =
            if text[..rest_of_line_end].ends_with('\r') { rest_of_line_end - 1 } else { rest_of_line_end };
        let inner_start = (rest_of_line_end + 1).min(text.len());
        let mut close = None;
        for (line, full) in (Lines { text, pos: inner_start }) {
            if text[line.clone()].trim_end() == "```" {
                close = Some((line.start, full.end));
                break;
            }
        }
        let (inner_end, end) = close.unwrap_or((text.len(), text.len()));
        out.push(TrackFence { range: at..end, open_line: at..open_line_end, inner: inner_start..inner_end });
        from = end.max(from);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lf_crlf_bom_and_dot_closers() {
        let t = "---\na: 1\n---\n# T\nbody";
        let fm = locate(t).unwrap_or_else(|| panic!("no frontmatter"));
        assert_eq!(&t[fm.content.clone()], "a: 1\n");
        assert_eq!(&t[fm.body_start()..], "# T\nbody");

        let t = "\u{feff}---\r\na: 1\r\n...\r\nbody";
        let fm = locate(t).unwrap_or_else(|| panic!("no frontmatter"));
        assert_eq!(&t[fm.content.clone()], "a: 1\r\n");
        assert_eq!(&t[fm.body_start()..], "body");

        // Closing line at the very end without a newline.
        let t = "---\na: 1\n---";
        let fm = locate(t).unwrap_or_else(|| panic!("no frontmatter"));
        assert_eq!(fm.close, Some(9..12));
        assert_eq!(fm.body_start(), t.len());
    }

    #[test]
    fn no_or_unterminated_frontmatter() {
        assert_eq!(locate("# title\n---\n"), None);
        assert_eq!(locate("---"), None);
        assert_eq!(locate(" ---\na: 1\n---\n"), None);
        let fm = locate("---\na: 1\n").unwrap_or_else(|| panic!("no frontmatter"));
        assert_eq!(fm.close, None);
        assert_eq!(fm.content, 4..9);
    }

    #[test]
    fn title_skips_code_fences() {
        let t = "---\n---\n```\n# not\n```\n# Real title #\n";
        assert_eq!(title(t, 8), Some("Real title"));
        let h1 = h1_line(t, 8).unwrap_or_default();
        assert_eq!(&t[h1], "# Real title #");
    }

    #[test]
    fn finds_track_fences() {
        let t = "x\n```track\nid: a\n```\ny ```track\n```tracker\n```\n";
        let f = track_fences(t, 0);
        assert_eq!(f.len(), 1);
        assert_eq!(&t[f[0].inner.clone()], "id: a\n");
        assert_eq!(&t[f[0].range.clone()], "```track\nid: a\n```\n");
    }
}
