//! Open documents: a rope per document, changed incrementally in arrival order, and an
//! immutable snapshot (text, line index, analysis) computed lazily once per version for the
//! request handlers.

use std::sync::Arc;

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, TextDocumentContentChangeEvent};

use crate::note::{self, Analysis};
use crate::text::{Encoding, LineIndex};

/// An immutable view of one version of a document.
#[derive(Debug)]
pub struct Snapshot {
    pub text: String,
    pub version: i32,
    pub lines: LineIndex,
    pub analysis: Analysis,
}

#[derive(Debug)]
pub struct Document {
    rope: Rope,
    pub version: i32,
    snapshot: Option<Arc<Snapshot>>,
    /// What the document's lenses and hints last showed of its runtime fields and `active`
    /// (a digest; `None` until first seen), so that a change there redraws them.
    pub shown: Option<u64>,
}

impl Document {
    pub fn new(text: &str, version: i32) -> Self {
        Document { rope: Rope::from_str(text), version, snapshot: None, shown: None }
    }

    /// Apply one `didChange` batch. Changes apply in order, each against the result of the
    /// previous one, as LSP requires.
    pub fn apply(&mut self, changes: &[TextDocumentContentChangeEvent], version: i32, enc: Encoding) {
        for change in changes {
            match change.range {
                None => self.rope = Rope::from_str(&change.text),
                Some(range) => {
                    let start = self.offset(range.start, enc);
                    let end = self.offset(range.end, enc).max(start);
                    let (c0, c1) = (self.rope.byte_to_char(start), self.rope.byte_to_char(end));
                    self.rope.remove(c0..c1);
                    self.rope.insert(c0, &change.text);
                }
            }
        }
        self.version = version;
        self.snapshot = None;
    }

    /// Byte offset of an LSP position in the current text; positions past a line's end clamp
    /// to it, a column inside a character snaps to the character's start.
    pub fn offset(&self, pos: Position, enc: Encoding) -> usize {
        let line = pos.line as usize;
        if line >= self.rope.len_lines() {
            return self.rope.len_bytes();
        }
        let mut off = self.rope.line_to_byte(line);
        let mut remaining = pos.character as usize;
        let mut chars = self.rope.line(line).chars().peekable();
        while let Some(ch) = chars.next() {
            // The line ending (`\n` or `\r\n`) has no columns; a lone `\r` is text.
            if remaining == 0 || ch == '\n' || (ch == '\r' && chars.peek() == Some(&'\n')) {
                break;
            }
            let w = match enc {
                Encoding::Utf8 => ch.len_utf8(),
                Encoding::Utf16 => ch.len_utf16(),
                Encoding::Scalar => 1,
            };
            if remaining < w {
                break;
            }
            remaining -= w;
            off += ch.len_utf8();
        }
        off
    }

    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    /// Drop the cached analysis: what it was computed with (provider names) changed.
    pub fn forget_snapshot(&mut self) {
        self.snapshot = None;
    }

    /// The analysed snapshot of the current version, when it is computed already.
    pub fn cached_snapshot(&self) -> Option<Arc<Snapshot>> {
        self.snapshot.clone()
    }

    /// The analysed snapshot of the current version.
    pub fn snapshot(&mut self, opts: &note::Options) -> Arc<Snapshot> {
        if let Some(s) = &self.snapshot {
            return s.clone();
        }
        let text = self.rope.to_string();
        let analysis = note::analyze(&text, opts);
        let snap = Arc::new(Snapshot { lines: LineIndex::new(&text), text, version: self.version, analysis });
        self.snapshot = Some(snap.clone());
        snap
    }
}

#[cfg(test)]
mod tests {
    use tower_lsp_server::ls_types::Range;

    use super::*;

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            range_length: None,
            text: text.to_owned(),
        }
    }

    #[test]
    fn incremental_changes_in_utf16_and_utf8() {
        let mut d = Document::new("a😀b\r\n日本\n", 1);
        d.apply(&[change(0, 3, 0, 4, "B")], 2, Encoding::Utf16);
        assert_eq!(d.text(), "a😀B\r\n日本\n");
        d.apply(&[change(1, 3, 1, 6, "語"), change(0, 0, 0, 1, "")], 3, Encoding::Utf8);
        assert_eq!(d.text(), "😀B\r\n日語\n");
        // Past the end of a line clamps before its CRLF; past the last line appends.
        d.apply(&[change(0, 99, 0, 99, "!"), change(9, 0, 9, 0, "end")], 4, Encoding::Utf16);
        assert_eq!(d.text(), "😀B!\r\n日語\nend");
        assert_eq!(d.version, 4);
    }
}
