//! Conversions between livenote's plain types (byte ranges, `note::Diagnostic`, `TextEdit`)
//! and LSP types, in the negotiated position encoding. The only place positions are computed.

use std::ops::Range;

use tower_lsp_server::ls_types as lsp;

use crate::note::{self, Severity};
use crate::text::{Encoding, LineCol, LineIndex, TextEdit};

pub fn position(text: &str, lines: &LineIndex, offset: usize, enc: Encoding) -> lsp::Position {
    let LineCol { line, col } = lines.position(text, offset, enc);
    lsp::Position::new(line, col)
}

pub fn range(text: &str, lines: &LineIndex, r: &Range<usize>, enc: Encoding) -> lsp::Range {
    lsp::Range::new(position(text, lines, r.start, enc), position(text, lines, r.end, enc))
}

pub fn offset(text: &str, lines: &LineIndex, pos: lsp::Position, enc: Encoding) -> usize {
    lines.offset(text, LineCol { line: pos.line, col: pos.character }, enc)
}

pub fn severity(s: Severity) -> lsp::DiagnosticSeverity {
    match s {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Info => lsp::DiagnosticSeverity::INFORMATION,
        Severity::Hint => lsp::DiagnosticSeverity::HINT,
    }
}

pub fn diagnostic(text: &str, lines: &LineIndex, d: &note::Diagnostic, enc: Encoding) -> lsp::Diagnostic {
    lsp::Diagnostic {
        range: range(text, lines, &d.range, enc),
        severity: Some(severity(d.severity)),
        code: Some(lsp::NumberOrString::String(d.code.as_str().to_owned())),
        code_description: None,
        source: Some("livenote".to_owned()),
        message: d.message.clone(),
        related_information: None,
        tags: None,
        data: None,
    }
}

pub fn diagnostics(
    text: &str,
    lines: &LineIndex,
    ds: &[note::Diagnostic],
    enc: Encoding,
) -> Vec<lsp::Diagnostic> {
    ds.iter().map(|d| diagnostic(text, lines, d, enc)).collect()
}

pub fn text_edit(text: &str, lines: &LineIndex, e: &TextEdit, enc: Encoding) -> lsp::TextEdit {
    lsp::TextEdit { range: range(text, lines, &e.range, enc), new_text: e.new_text.clone() }
}

/// A workspace edit of one document, versioned when the document is open so the client
/// rejects it if the user typed since. No edit starts past the last line, where line-based
/// editors apply it differently (`text::edit::start_within_lines`). `lines` is `text`'s line
/// index when the caller has it (an open document's snapshot: a list of code actions on a
/// 1 MB note would otherwise index the note once per action).
pub fn document_edit(
    uri: &lsp::Uri,
    version: Option<i32>,
    text: &str,
    lines: Option<&LineIndex>,
    edits: &[TextEdit],
    enc: Encoding,
) -> lsp::WorkspaceEdit {
    let built;
    let lines = match lines {
        Some(l) => l,
        None => {
            built = LineIndex::new(text);
            &built
        }
    };
    let edits = crate::text::edit::start_within_lines(text, edits)
        .iter()
        .map(|e| lsp::OneOf::Left(text_edit(text, lines, e, enc)))
        .collect();
    lsp::WorkspaceEdit {
        changes: None,
        document_changes: Some(lsp::DocumentChanges::Edits(vec![lsp::TextDocumentEdit {
            text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri: uri.clone(), version },
            edits,
        }])),
        change_annotations: None,
    }
}
