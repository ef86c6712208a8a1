//! Open documents: the text and its line index, changed in place in arrival order, and an
//! immutable snapshot (text, line index, analysis) computed lazily once per version for the
//! request handlers. The snapshot shares the document's text and index rather than copying
//! them: a 1 MB note is held once, and a keystroke copies it only while a handler still holds
//! the previous snapshot.

use std::sync::Arc;

use tower_lsp_server::ls_types::{Position, TextDocumentContentChangeEvent};

use crate::note::{self, Analysis};
use crate::text::{Encoding, LineCol, LineIndex};

/// An immutable view of one version of a document.
#[derive(Debug)]
pub struct Snapshot {
    pub text: Arc<String>,
    pub version: i32,
    pub lines: Arc<LineIndex>,
    pub analysis: Analysis,
}

#[derive(Debug)]
pub struct Document {
    text: Arc<String>,
    lines: Arc<LineIndex>,
    pub version: i32,
    snapshot: Option<Arc<Snapshot>>,
    /// What the document's lenses and hints last showed of its runtime fields and `active`
    /// (a digest; `None` until first seen), so that a change there redraws them.
    pub shown: Option<u64>,
}

impl Document {
    pub fn new(text: String, version: i32) -> Self {
        let lines = Arc::new(LineIndex::new(&text));
        Document { text: Arc::new(text), lines, version, snapshot: None, shown: None }
    }

    /// Apply one `didChange` batch. Changes apply in order, each against the result of the
    /// previous one, as LSP requires.
    pub fn apply(&mut self, changes: Vec<TextDocumentContentChangeEvent>, version: i32, enc: Encoding) {
        // Dropped first: unless a handler still holds it, the text is then changed in place.
        self.snapshot = None;
        for change in changes {
            match change.range {
                None => {
                    self.lines = Arc::new(LineIndex::new(&change.text));
                    self.text = Arc::new(change.text);
                }
                Some(range) => {
                    let start = self.offset(range.start, enc);
                    let end = self.offset(range.end, enc).max(start);
                    Arc::make_mut(&mut self.text).replace_range(start..end, &change.text);
                    Arc::make_mut(&mut self.lines).splice(start..end, &change.text);
                }
            }
        }
        self.version = version;
    }

    /// Byte offset of an LSP position in the current text; positions past a line's end clamp
    /// to it, a column inside a character snaps to the character's start.
    pub fn offset(&self, pos: Position, enc: Encoding) -> usize {
        self.lines.offset(&self.text, LineCol { line: pos.line, col: pos.character }, enc)
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Drop the cached analysis: what it was computed with (provider names) changed.
    pub fn forget_snapshot(&mut self) {
        self.snapshot = None;
    }

    /// The analysed snapshot of the current version, when it is computed already.
    pub fn cached_snapshot(&self) -> Option<Arc<Snapshot>> {
        self.snapshot.clone()
    }

    /// The analysed snapshot of the current version (analysed here, under whatever lock holds
    /// the document: [`Document::unanalysed`] and [`Document::keep`] analyse outside it).
    pub fn snapshot(&mut self, opts: &note::Options) -> Arc<Snapshot> {
        if let Some(s) = &self.snapshot {
            return s.clone();
        }
        let (text, lines, version) = self.unanalysed();
        self.keep(analysed(text, lines, version, opts))
    }

    /// What an analysis of the current version needs, shared, so that it can run after the
    /// documents lock is released.
    pub fn unanalysed(&self) -> (Arc<String>, Arc<LineIndex>, i32) {
        (Arc::clone(&self.text), Arc::clone(&self.lines), self.version)
    }

    /// Keep `snap` as the current version's snapshot when it is of that version still (a
    /// change that came meanwhile made it stale: it is handed back, not kept).
    pub fn keep(&mut self, snap: Arc<Snapshot>) -> Arc<Snapshot> {
        if let Some(s) = &self.snapshot {
            return s.clone();
        }
        if snap.version == self.version && Arc::ptr_eq(&snap.text, &self.text) {
            self.snapshot = Some(snap.clone());
        }
        snap
    }
}

/// The snapshot of one version: `text` analysed with `opts`.
pub fn analysed(
    text: Arc<String>,
    lines: Arc<LineIndex>,
    version: i32,
    opts: &note::Options,
) -> Arc<Snapshot> {
    let analysis = note::analyze(&text, opts);
    Arc::new(Snapshot { text, lines, version, analysis })
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
        let mut d = Document::new("a😀b\r\n日本\n".to_owned(), 1);
        d.apply(vec![change(0, 3, 0, 4, "B")], 2, Encoding::Utf16);
        assert_eq!(d.text(), "a😀B\r\n日本\n");
        d.apply(vec![change(1, 3, 1, 6, "語"), change(0, 0, 0, 1, "")], 3, Encoding::Utf8);
        assert_eq!(d.text(), "😀B\r\n日語\n");
        // Past the end of a line clamps before its CRLF; past the last line appends.
        d.apply(vec![change(0, 99, 0, 99, "!"), change(9, 0, 9, 0, "end")], 4, Encoding::Utf16);
        assert_eq!(d.text(), "😀B!\r\n日語\nend");
        assert_eq!(d.version, 4);
    }
}
