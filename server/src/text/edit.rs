//! A text edit is a byte range of the old text and its replacement; the pure layers speak only
//! this, and the LSP layer converts it to protocol positions.

use std::ops::Range;

/// Replace `range` (bytes of the original text) with `new_text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub range: Range<usize>,
    pub new_text: String,
}

impl TextEdit {
    pub fn replace(range: Range<usize>, new_text: impl Into<String>) -> Self {
        TextEdit { range, new_text: new_text.into() }
    }

    pub fn insert(at: usize, new_text: impl Into<String>) -> Self {
        TextEdit { range: at..at, new_text: new_text.into() }
    }

    pub fn delete(range: Range<usize>) -> Self {
        TextEdit { range, new_text: String::new() }
    }
}

/// Why a set of edits could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("edit {0:?} is outside the text or not on a character boundary")]
    OutOfBounds(Range<usize>),
    #[error("edits {0:?} and {1:?} overlap")]
    Overlap(Range<usize>, Range<usize>),
}

/// Apply non-overlapping edits (given in any order) to `text`.
pub fn apply(text: &str, edits: &[TextEdit]) -> Result<String, ApplyError> {
    let mut sorted: Vec<&TextEdit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut cursor = 0;
    for (i, edit) in sorted.iter().enumerate() {
        let r = &edit.range;
        if r.start > r.end
            || r.end > text.len()
            || !text.is_char_boundary(r.start)
            || !text.is_char_boundary(r.end)
        {
            return Err(ApplyError::OutOfBounds(r.clone()));
        }
        if r.start < cursor {
            let prev = sorted[i - 1].range.clone();
            return Err(ApplyError::Overlap(prev, r.clone()));
        }
        out.push_str(&text[cursor..r.start]);
        out.push_str(&edit.new_text);
        cursor = r.end;
    }
    out.push_str(&text[cursor..]);
    Ok(out)
}

/// The same edits (the same bytes when applied), none of them starting after the text's final
/// line ending.
///
/// An edit there starts on a line that line-based editors do not have: Neovim appends its lines
/// after the buffer's last line, and a new text that ends with a line ending then leaves an
/// extra empty line (the first run of `init`'s note in the editor did), where every other path
/// writes none. Such an insertion is made part of the edit that reaches the final line ending,
/// or else starts at that line ending and writes it again in front of its text: an edit that
/// ends past the last line is one Neovim applies exactly.
pub fn start_within_lines(text: &str, edits: &[TextEdit]) -> Vec<TextEdit> {
    let nl = if text.ends_with("\r\n") {
        "\r\n"
    } else if text.ends_with('\n') {
        "\n"
    } else {
        return edits.to_vec();
    };
    let before_nl = text.len() - nl.len();
    let past_end = |e: &TextEdit| e.range.start == text.len();
    let mut out: Vec<TextEdit> = edits.iter().filter(|e| !past_end(e)).cloned().collect();
    // An empty insertion there changes nothing, yet Neovim would append an empty line for it.
    for insert in edits.iter().filter(|e| past_end(e) && !e.new_text.is_empty()) {
        match out.iter_mut().filter(|e| e.range.end >= before_nl).max_by_key(|e| e.range.end) {
            Some(e) if e.range.end == text.len() => e.new_text.push_str(&insert.new_text),
            Some(e) if e.range.end == before_nl => {
                e.range.end = text.len();
                e.new_text.push_str(nl);
                e.new_text.push_str(&insert.new_text);
            }
            // Between a `\r` and its `\n`: no position names that place anyway.
            Some(_) => out.push(insert.clone()),
            None => out.push(TextEdit::replace(before_nl..text.len(), format!("{nl}{}", insert.new_text))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_in_any_order() {
        let edits = [TextEdit::replace(4..5, "X"), TextEdit::insert(0, ">"), TextEdit::delete(1..2)];
        assert_eq!(apply("abcdef", &edits).as_deref(), Ok(">acdXf"));
    }

    #[test]
    fn rejects_overlap_and_bad_bounds() {
        assert!(matches!(
            apply("abc", &[TextEdit::delete(0..2), TextEdit::delete(1..3)]),
            Err(ApplyError::Overlap(..))
        ));
        assert!(matches!(apply("abc", &[TextEdit::delete(2..9)]), Err(ApplyError::OutOfBounds(_))));
        assert!(matches!(apply("é", &[TextEdit::delete(1..2)]), Err(ApplyError::OutOfBounds(_))));
    }

    #[test]
    fn edits_past_the_final_line_ending_start_on_it() {
        let moved = |text: &str, edits: &[TextEdit]| {
            let out = start_within_lines(text, edits);
            assert_eq!(apply(text, &out), apply(text, edits), "same bytes");
            out
        };
        assert_eq!(
            moved("# T\n", &[TextEdit::insert(4, "\nbody\n")]),
            [TextEdit::replace(3..4, "\n\nbody\n")]
        );
        assert_eq!(moved("# T\r\n", &[TextEdit::insert(5, "x")]), [TextEdit::replace(3..5, "\r\nx")]);
        // No final line ending: the end is on the last line already.
        assert_eq!(moved("# T", &[TextEdit::insert(3, "x")]), [TextEdit::insert(3, "x")]);
        // An edit reaching the final line ending takes the insertion.
        assert_eq!(
            moved("# T\n\n", &[TextEdit::insert(4, "a\n"), TextEdit::insert(5, "a\n")]),
            [TextEdit::replace(4..5, "a\n\na\n")]
        );
        assert_eq!(
            moved("# T\n", &[TextEdit::replace(2..4, "U\n"), TextEdit::insert(4, "x\n")]),
            [TextEdit::replace(2..4, "U\nx\n")]
        );
        let clear = [TextEdit::replace(0..1, "="), TextEdit::insert(4, "x\n")];
        assert_eq!(moved("# T\n", &clear), [TextEdit::replace(0..1, "="), TextEdit::replace(3..4, "\nx\n")]);
        // An empty insertion there is dropped.
        assert_eq!(moved("# T\n", &[TextEdit::insert(4, "")]), []);
    }
}
