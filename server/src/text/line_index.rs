//! Byte offsets <-> (line, column) in UTF-8, UTF-16 or Unicode scalar values. Lines end at
//! `\n`; a `\r` before it belongs to the line ending, never to a column.

/// How columns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Bytes of UTF-8 (LSP `utf-8`).
    Utf8,
    /// UTF-16 code units (LSP default).
    Utf16,
    /// Unicode scalar values (what `livenote check` prints).
    Scalar,
}

/// A zero-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// Start offsets of every line of a text; cheap to build, O(log n) lookups.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { starts, len: text.len() }
    }

    /// The index of the text after `range` of it was replaced by `inserted`: the lines in the
    /// range go, those of `inserted` come, those after move. What an editor's keystroke costs
    /// in a large note is this, not a scan of the whole text. `range` is clamped to the text.
    pub fn splice(&mut self, range: std::ops::Range<usize>, inserted: &str) {
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        // A line starts after each `\n`: those that were inside the range are gone.
        let first = self.starts.partition_point(|&s| s <= start);
        let after = self.starts.partition_point(|&s| s <= end);
        let new_len = self.len - (end - start) + inserted.len();
        let new = memchr::memchr_iter(b'\n', inserted.as_bytes()).map(|i| start + i + 1);
        let moved: Vec<usize> =
            self.starts[after..].iter().map(|&s| s - end + start + inserted.len()).collect();
        self.starts.truncate(first);
        self.starts.extend(new);
        self.starts.extend(moved);
        self.len = new_len;
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Byte offset where `line` starts (clamped to the end of the text).
    pub fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.len)
    }

    /// Byte offset just past the line's content (before `\r\n` or `\n`).
    pub fn line_end(&self, text: &str, line: usize) -> usize {
        let start = self.line_start(line);
        let next = self.starts.get(line + 1).copied().unwrap_or(self.len);
        let bytes = text.as_bytes();
        let mut end = next;
        if end > start && bytes.get(end - 1) == Some(&b'\n') {
            end -= 1;
            if end > start && bytes.get(end - 1) == Some(&b'\r') {
                end -= 1;
            }
        }
        end
    }

    /// Zero-based line containing `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// Position of a byte offset; offsets inside a character or a line ending are clamped.
    pub fn position(&self, text: &str, offset: usize, enc: Encoding) -> LineCol {
        let offset = offset.min(text.len());
        let line = self.line_of(offset);
        let start = self.line_start(line);
        let end = self.line_end(text, line).max(start);
        let upto = floor_char_boundary(text, offset.min(end));
        let col = column_width(&text[start..upto.max(start)], enc);
        LineCol { line: line as u32, col: col as u32 }
    }

    /// Byte offset of a position; columns past the line's end clamp to it, lines past the end
    /// clamp to the end of the text. Never splits a character.
    pub fn offset(&self, text: &str, pos: LineCol, enc: Encoding) -> usize {
        let line = pos.line as usize;
        if line >= self.starts.len() {
            return self.len;
        }
        let start = self.line_start(line);
        let end = self.line_end(text, line);
        let mut remaining = pos.col as usize;
        for (i, ch) in text[start..end].char_indices() {
            let w = char_width(ch, enc);
            if remaining < w {
                // A column inside a character (e.g. between surrogates) snaps to its start.
                return start + i;
            }
            remaining -= w;
            if remaining == 0 {
                return start + i + ch.len_utf8();
            }
        }
        end
    }
}

fn char_width(ch: char, enc: Encoding) -> usize {
    match enc {
        Encoding::Utf8 => ch.len_utf8(),
        Encoding::Utf16 => ch.len_utf16(),
        Encoding::Scalar => 1,
    }
}

/// Width of `s` in the given encoding.
pub fn column_width(s: &str, enc: Encoding) -> usize {
    match enc {
        Encoding::Utf8 => s.len(),
        Encoding::Utf16 => s.chars().map(char::len_utf16).sum(),
        Encoding::Scalar => s.chars().count(),
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Edits spliced one after another index the text as a fresh scan of the result does.
        #[test]
        fn spliced_edits_index_the_text_as_a_scan_does(
            text in "[a\n\r\u{e9}]{0,40}",
            edits in proptest::collection::vec((0usize..50, 0usize..50, "[b\n\r\u{e9}]{0,6}"), 0..12),
        ) {
            let mut text = text;
            let mut index = LineIndex::new(&text);
            for (a, b, inserted) in edits {
                let (a, b) = (floor_char_boundary(&text, a.min(text.len())), floor_char_boundary(&text, b.min(text.len())));
                let (start, end) = (a.min(b), a.max(b));
                text.replace_range(start..end, &inserted);
                index.splice(start..end, &inserted);
                let fresh = LineIndex::new(&text);
                proptest::prop_assert_eq!(&index.starts, &fresh.starts);
                proptest::prop_assert_eq!(index.len, fresh.len);
            }
        }
    }

    #[test]
    fn positions_in_every_encoding() {
        let text = "a😀b\r\n你好\nx";
        let idx = LineIndex::new(text);
        let b = text.find('b').unwrap_or_default();
        assert_eq!(idx.position(text, b, Encoding::Utf8), LineCol { line: 0, col: 5 });
        assert_eq!(idx.position(text, b, Encoding::Utf16), LineCol { line: 0, col: 3 });
        assert_eq!(idx.position(text, b, Encoding::Scalar), LineCol { line: 0, col: 2 });
        let hao = text.find('好').unwrap_or_default();
        assert_eq!(idx.position(text, hao, Encoding::Utf16), LineCol { line: 1, col: 1 });
        for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Scalar] {
            for off in [0, b, hao, text.len()] {
                assert_eq!(idx.offset(text, idx.position(text, off, enc), enc), off, "{enc:?} {off}");
            }
        }
    }

    #[test]
    fn clamps_out_of_range_positions() {
        let text = "ab\r\ncd";
        let idx = LineIndex::new(text);
        assert_eq!(idx.offset(text, LineCol { line: 0, col: 99 }, Encoding::Utf16), 2);
        assert_eq!(idx.offset(text, LineCol { line: 9, col: 0 }, Encoding::Utf16), text.len());
        // The `\r` of a CRLF is not a column.
        assert_eq!(idx.position(text, 3, Encoding::Utf16), LineCol { line: 0, col: 2 });
        // Half a surrogate pair snaps to the character's start.
        let t = "😀x";
        assert_eq!(LineIndex::new(t).offset(t, LineCol { line: 0, col: 1 }, Encoding::Utf16), 0);
    }
}
