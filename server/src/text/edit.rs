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
}
