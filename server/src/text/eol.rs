//! A note's line ending, and text livenote writes into a note converted to it: the one home
//! of that rule for every writer (runs, runtime fields, rewrites, conversions, undo and
//! restore, the agent's edits, completions and quick fixes).
//!
//! The rule: a note's line ending is the one most of its lines end with, `\r\n` or `\n`; on a
//! tie, the one its first line ends with; a note without any line ending takes `\n`. (VS Code
//! picks a mixed file's ending by the same majority when it opens it, so livenote and the
//! editor agree on what the note "is".) Whatever livenote writes into a note has every line
//! ending converted to that one; lines it does not touch keep their own. A lone `\r` is text,
//! never a line ending, as everywhere else (`text::line_index`).

use std::borrow::Cow;

/// How many `\n` bytes `bytes` holds. Counted in runs of 255 into a byte, which the compiler
/// turns into vector adds (15 times the speed of counting into a `usize`, measured).
fn count_newlines(bytes: &[u8]) -> usize {
    bytes.chunks(255).map(|run| usize::from(run.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n')))).sum()
}

/// A line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Eol {
    #[default]
    Lf,
    CrLf,
}

impl Eol {
    /// The line ending of `text` by the rule of the module documentation.
    pub fn of(text: &str) -> Eol {
        let bytes = text.as_bytes();
        // Counted, not visited line by line: a note is analysed at each keystroke, and a 1 MB
        // one has tens of thousands of lines. A `\n` note has no `\r` at all, mostly.
        let all = count_newlines(bytes);
        let crlf = match memchr::memchr(b'\r', bytes) {
            None => 0,
            Some(at) => memchr::memmem::find_iter(&bytes[at..], b"\r\n").count(),
        };
        match crlf.cmp(&(all - crlf)) {
            std::cmp::Ordering::Greater => Eol::CrLf,
            std::cmp::Ordering::Less => Eol::Lf,
            std::cmp::Ordering::Equal => Eol::first(text).unwrap_or_default(),
        }
    }

    /// The line ending of `text`'s first line, or `None` when it has no line ending: for text
    /// that is not a whole note (a line, a region) whose caller has a better fallback.
    pub fn first(text: &str) -> Option<Eol> {
        let i = memchr::memchr(b'\n', text.as_bytes())?;
        Some(if text[..i].ends_with('\r') { Eol::CrLf } else { Eol::Lf })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
        }
    }

    /// `text` with every line ending (`\n` or `\r\n`) made this one; borrowed when nothing
    /// changes.
    pub fn convert(self, text: &str) -> Cow<'_, str> {
        let bytes = text.as_bytes();
        let mismatched = memchr::memchr_iter(b'\n', bytes)
            .any(|i| (i > 0 && bytes[i - 1] == b'\r') != (self == Eol::CrLf));
        if !mismatched {
            return Cow::Borrowed(text);
        }
        let nl = self.as_str();
        let mut out = String::with_capacity(text.len() + text.len() / 16);
        let mut rest = text;
        while let Some(i) = rest.find('\n') {
            let line = &rest[..i];
            out.push_str(line.strip_suffix('\r').unwrap_or(line));
            out.push_str(nl);
            rest = &rest[i + 1..];
        }
        out.push_str(rest);
        Cow::Owned(out)
    }
}

/// Whether `a` and `b` are the same text but for their line endings: a body that git's
/// `autocrlf` (or an editor) converted reads as the one livenote wrote.
pub fn same_lines(a: &str, b: &str) -> bool {
    a == b || Eol::Lf.convert(a) == Eol::Lf.convert(b)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_majority_wins_and_a_tie_goes_to_the_first_line() {
        assert_eq!(Eol::of(""), Eol::Lf);
        assert_eq!(Eol::of("one line, no ending"), Eol::Lf);
        assert_eq!(Eol::of("a\r\n"), Eol::CrLf);
        assert_eq!(Eol::of("a\nb\r\nc\r\n"), Eol::CrLf);
        assert_eq!(Eol::of("a\r\nb\nc\n"), Eol::Lf);
        assert_eq!(Eol::of("a\r\nb\n"), Eol::CrLf);
        assert_eq!(Eol::of("a\nb\r\n"), Eol::Lf);
        // A lone `\r` is text.
        assert_eq!(Eol::of("a\rb\r\n"), Eol::CrLf);
        assert_eq!(Eol::of("a\r\rb\n"), Eol::Lf);
        assert_eq!(Eol::first("x"), None);
        assert_eq!(Eol::first("x\r\ny\nz\n"), Some(Eol::CrLf));
    }

    #[test]
    fn convert_keeps_lone_carriage_returns_and_borrows_when_it_can() {
        assert_eq!(Eol::CrLf.convert("a\nb\r\nc\rd\n"), "a\r\nb\r\nc\rd\r\n");
        assert_eq!(Eol::Lf.convert("a\nb\r\nc\rd\r\n"), "a\nb\nc\rd\n");
        assert!(matches!(Eol::CrLf.convert("a\r\nb"), Cow::Borrowed(_)));
        assert!(matches!(Eol::Lf.convert("a\rb\n"), Cow::Borrowed(_)));
        assert!(same_lines("a\r\nb\n", "a\nb\r\n"));
        assert!(!same_lines("a\r\n", "a\n\n"));
        assert!(!same_lines("a\rb", "a\nb"));
    }

    /// The rule as written: each line visited, its ending counted.
    fn of_by_lines(text: &str) -> Eol {
        let bytes = text.as_bytes();
        let (mut lf, mut crlf, mut first) = (0usize, 0usize, None);
        for i in memchr::memchr_iter(b'\n', bytes) {
            let this = if i > 0 && bytes[i - 1] == b'\r' { Eol::CrLf } else { Eol::Lf };
            first.get_or_insert(this);
            if this == Eol::CrLf { crlf += 1 } else { lf += 1 }
        }
        match crlf.cmp(&lf) {
            std::cmp::Ordering::Greater => Eol::CrLf,
            std::cmp::Ordering::Less => Eol::Lf,
            std::cmp::Ordering::Equal => first.unwrap_or_default(),
        }
    }

    proptest! {
        /// Counting the endings finds what visiting every line does (texts past one counting
        /// run of 255 bytes too).
        #[test]
        fn of_counts_as_the_rule_reads(
            parts in proptest::collection::vec(
                prop_oneof![Just("\n"), Just("\r\n"), Just("\r"), Just("a"), Just("é"), Just("\r\r\n")],
                0..300,
            ),
        ) {
            let text: String = parts.concat();
            prop_assert_eq!(Eol::of(&text), of_by_lines(&text), "{:?}", text);
        }
    }

    proptest! {
        /// Converted text has only the one ending, the same lines, and converting is idempotent.
        #[test]
        fn convert_is_a_change_of_endings_only(
            parts in proptest::collection::vec(
                prop_oneof![Just("\n".to_owned()), Just("\r\n".to_owned()), Just("\r".to_owned()), "[a-zé ]{0,4}"],
                0..20,
            ),
            crlf in any::<bool>(),
        ) {
            let text: String = parts.concat();
            // A `\r` that is text right before a `\r\n` reads, once the ending is `\n`, as
            // part of a CRLF: LF text cannot hold it, whoever converts.
            prop_assume!(!text.contains("\r\r\n"));
            let eol = if crlf { Eol::CrLf } else { Eol::Lf };
            let out = eol.convert(&text);
            let bytes = out.as_bytes();
            for i in memchr::memchr_iter(b'\n', bytes) {
                prop_assert_eq!(i > 0 && bytes[i - 1] == b'\r', crlf, "{:?}", out);
            }
            prop_assert!(same_lines(&text, &out));
            prop_assert_eq!(eol.convert(&out), out.clone());
            prop_assert_eq!(Eol::Lf.convert(&out).replace('\n', ""), text.replace("\r\n", "").replace('\n', ""));
            if memchr::memchr(b'\n', text.as_bytes()).is_some() {
                prop_assert_eq!(Eol::of(&out), eol);
            }
        }
    }
}
