//! Reading the frontmatter's YAML with saphyr (YAML 1.2 core schema) into a small owned tree
//! whose nodes carry byte ranges of the whole note. Bounded: alias expansion, nesting depth and
//! size are capped before or while parsing, so no input can make it blow up.

use std::ops::Range;

use saphyr::{MarkedYaml, Scalar as SScalar, YamlData, YamlLoader};
use saphyr_parser::{Event, Marker, Parser};

use crate::text::LineIndex;

/// Frontmatter larger than this is reported, not parsed.
pub const MAX_FRONTMATTER_BYTES: usize = 256 * 1024;
/// Nesting deeper than this is reported, not parsed (keeps recursion shallow).
pub const MAX_DEPTH: usize = 64;
/// Nodes that alias expansion may produce in one frontmatter.
pub const ALIAS_LIMIT: usize = 2_000;

/// A YAML node with the byte range of its text in the note.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub span: Range<usize>,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Map(Vec<Entry>),
    Seq(Vec<Node>),
    Scalar(Scalar),
    /// A value YAML itself rejects (e.g. `!!int abc`).
    Bad,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key as text (non-string keys are shown as written).
    pub key: String,
    pub key_span: Range<usize>,
    pub value: Node,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Scalar {
    /// The YAML type name, for messages ("expected a string, found a boolean").
    pub fn type_name(&self) -> &'static str {
        match self {
            Scalar::Null => "null",
            Scalar::Bool(_) => "a boolean",
            Scalar::Int(_) => "an integer",
            Scalar::Float(_) => "a number",
            Scalar::Str(_) => "a string",
        }
    }
}

impl Node {
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            Kind::Map(_) => "a mapping",
            Kind::Seq(_) => "a list",
            Kind::Scalar(s) => s.type_name(),
            Kind::Bad => "an invalid value",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar(Scalar::Str(s)) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.kind, Kind::Scalar(Scalar::Null))
    }

    pub fn entries(&self) -> Option<&[Entry]> {
        match &self.kind {
            Kind::Map(e) => Some(e),
            _ => None,
        }
    }

    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries()?.iter().find(|e| e.key == key)
    }
}

/// What went wrong reading the YAML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub kind: YamlErrorKind,
    /// Where to show it (may be empty, at the parser's position).
    pub span: Range<usize>,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YamlErrorKind {
    Syntax,
    DuplicateKey,
    AliasLimit,
    TooDeep,
    TooLarge,
}

/// Parse the YAML in `text[content]`. `Ok(None)` for an empty document.
pub fn parse(text: &str, content: Range<usize>) -> Result<Option<Node>, YamlError> {
    let src = &text[content.clone()];
    if src.len() > MAX_FRONTMATTER_BYTES {
        return Err(YamlError {
            kind: YamlErrorKind::TooLarge,
            span: content.start..content.start,
            message: format!(
                "frontmatter is {} KiB; livenote reads at most {} KiB",
                src.len() / 1024,
                MAX_FRONTMATTER_BYTES / 1024
            ),
        });
    }
    if let Some(at) = too_deep(src) {
        return Err(YamlError {
            kind: YamlErrorKind::TooDeep,
            span: content.start + at..content.start + at,
            message: format!("YAML is nested more than {MAX_DEPTH} levels deep"),
        });
    }
    let map = PosMap { src, base: content.start, lines: LineIndex::new(src) };
    let mut loader: YamlLoader<MarkedYaml> = YamlLoader::default();
    loader.alias_limit(ALIAS_LIMIT);
    let mut parser = Parser::new_from_str(src);
    let result = parser.load(&mut loader, true);
    let err = result.err().or_else(|| loader.error().cloned());
    if let Some(e) = err {
        let at = map.byte(e.marker());
        let info = e.info();
        let kind = if info.contains("duplicate") {
            YamlErrorKind::DuplicateKey
        } else if info.contains("alias") {
            YamlErrorKind::AliasLimit
        } else {
            YamlErrorKind::Syntax
        };
        let span = match kind {
            YamlErrorKind::DuplicateKey => at..key_end(src, at - content.start) + content.start,
            _ => at..at,
        };
        return Err(YamlError { kind, span, message: clean_message(info) });
    }
    let docs = loader.into_documents();
    match docs.first() {
        None => Ok(None),
        Some(doc) => Ok(Some(map.convert(doc))),
    }
}

fn clean_message(info: &str) -> String {
    let m = info.trim().trim_end_matches('.');
    if m.contains("duplicate") { "duplicate key in mapping".to_owned() } else { m.to_owned() }
}

/// End of the key that starts at `at` (for underlining a duplicate key).
fn key_end(src: &str, at: usize) -> usize {
    let rest = &src[at.min(src.len())..];
    let line = rest.split(['\n', '\r']).next().unwrap_or("");
    let end = line.find(':').unwrap_or(line.trim_end().len());
    at + line[..end].trim_end().len()
}

/// Where `src` nests deeper than [`MAX_DEPTH`], checked before loading it into a tree. A cheap
/// upper bound first; since it also counts brackets inside quoted strings and comments (a
/// `lastRunSummary` full of `[`), the parser's event stream, which is flat, confirms it.
fn too_deep(src: &str) -> Option<usize> {
    rough_too_deep(src)?;
    let mut depth = 0usize;
    for event in Parser::new_from_str(src) {
        // A syntax error: the loader reports it.
        let Ok((event, span)) = event else { return None };
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    let at = span.start.index();
                    return Some(src.char_indices().nth(at).map_or(src.len(), |(b, _)| b));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Cheap upper bound on nesting: indentation levels plus `- ` prefixes plus flow brackets.
/// Returns the byte offset of the first line that goes too deep.
fn rough_too_deep(src: &str) -> Option<usize> {
    let mut stack: Vec<usize> = Vec::new();
    let mut flow: usize = 0;
    let mut offset = 0;
    for line in src.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = body.len() - body.trim_start_matches(' ').len();
        let rest = &body[indent..];
        if rest.is_empty() || rest.starts_with('#') {
            continue;
        }
        while stack.last().is_some_and(|&top| top >= indent) {
            stack.pop();
        }
        stack.push(indent);
        let mut dashes = 0;
        let mut r = rest;
        while let Some(next) = r.strip_prefix("- ").or_else(|| r.strip_prefix("-\t")) {
            dashes += 1;
            r = next.trim_start();
        }
        for b in rest.bytes() {
            match b {
                b'[' | b'{' => flow += 1,
                b']' | b'}' => flow = flow.saturating_sub(1),
                _ => {}
            }
        }
        if stack.len() + dashes + flow > MAX_DEPTH {
            return Some(start);
        }
    }
    None
}

/// Converts saphyr's character-based markers into byte offsets of the whole note.
struct PosMap<'a> {
    src: &'a str,
    base: usize,
    lines: LineIndex,
}

impl PosMap<'_> {
    fn byte(&self, m: &Marker) -> usize {
        let line = m.line().saturating_sub(1);
        let start = self.lines.line_start(line);
        let end = self.lines.line_end(self.src, line);
        let col = m.col();
        let within = self.src[start..end].char_indices().nth(col).map_or(end - start, |(i, _)| i);
        self.base + start + within
    }

    fn convert(&self, n: &MarkedYaml) -> Node {
        let start = self.byte(&n.span.start);
        let end = self.byte(&n.span.end).max(start);
        match &n.data {
            YamlData::Mapping(m) => {
                let entries = m
                    .iter()
                    .map(|(k, v)| {
                        let key_start = self.byte(&k.span.start);
                        let key_end = self.byte(&k.span.end).max(key_start);
                        Entry {
                            key: key_text(k),
                            key_span: self.scalar_span(key_start, key_end),
                            value: self.convert(v),
                        }
                    })
                    .collect::<Vec<Entry>>();
                let last = entries.last().map(|e| e.value.span.end.max(e.key_span.end));
                Node { span: self.collection_span(start, end, last), kind: Kind::Map(entries) }
            }
            YamlData::Sequence(s) => {
                let items: Vec<Node> = s.iter().map(|v| self.convert(v)).collect();
                let last = items.last().map(|n| n.span.end);
                Node { span: self.collection_span(start, end, last), kind: Kind::Seq(items) }
            }
            YamlData::Tagged(_, inner) => self.convert(inner),
            YamlData::Value(v) => {
                let scalar = match v {
                    SScalar::Null => Scalar::Null,
                    SScalar::Boolean(b) => Scalar::Bool(*b),
                    SScalar::Integer(i) => Scalar::Int(*i),
                    SScalar::FloatingPoint(f) => Scalar::Float(f.into_inner()),
                    SScalar::String(s) => Scalar::Str(s.to_string()),
                };
                Node { span: self.scalar_span(start, end), kind: Kind::Scalar(scalar) }
            }
            YamlData::Representation(s, ..) => {
                Node { span: self.scalar_span(start, end), kind: Kind::Scalar(Scalar::Str(s.to_string())) }
            }
            _ => Node { span: self.scalar_span(start, end), kind: Kind::Bad },
        }
    }

    /// saphyr's collection spans run to the next token (often the next line); narrow them: a
    /// flow collection to its closing bracket, a block one to the end of its last child.
    fn collection_span(&self, start: usize, end: usize, last_child_end: Option<usize>) -> Range<usize> {
        let local = start - self.base;
        let src = self.src;
        if let Some(open @ (b'[' | b'{')) = src.as_bytes().get(local).copied() {
            let close = if open == b'[' { b']' } else { b'}' };
            let mut depth = 0usize;
            let mut quote: Option<u8> = None;
            for (i, &b) in src.as_bytes()[local..].iter().enumerate() {
                match (quote, b) {
                    (Some(q), _) if b == q => quote = None,
                    (Some(_), _) => {}
                    (None, b'"' | b'\'') => quote = Some(b),
                    (None, b'[' | b'{') => depth += 1,
                    (None, c) if c == close || c == b']' || c == b'}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return start..start + i + 1;
                        }
                    }
                    _ => {}
                }
            }
            return start..end;
        }
        start..last_child_end.unwrap_or(end).max(start)
    }

    /// saphyr's scalar spans can run past the token (to a trailing comment or the next key);
    /// narrow them to the scalar as written: a quoted string to its closing quote, a plain one
    /// to the end of its text on the line.
    fn scalar_span(&self, start: usize, end: usize) -> Range<usize> {
        let local = start - self.base;
        let src = self.src;
        let rest = &src[local..(end - self.base).max(local)];
        let first = src[local..].chars().next();
        match first {
            Some(q @ ('"' | '\'')) => {
                let mut escaped = false;
                let mut iter = src[local + 1..].char_indices().peekable();
                while let Some((i, c)) = iter.next() {
                    if q == '"' && c == '\\' && !escaped {
                        escaped = true;
                        continue;
                    }
                    if c == q && !escaped {
                        if q == '\'' && iter.peek().is_some_and(|&(_, n)| n == '\'') {
                            iter.next();
                            continue;
                        }
                        return start..start + 1 + i + 1;
                    }
                    escaped = false;
                }
                start..end
            }
            _ => {
                let mut len = rest.trim_end().len();
                if let Some(nl) = rest[..len].find(['\n', '\r']) {
                    // A plain scalar on one line: stop at its end. Block scalars keep their
                    // multi-line extent (their span starts at the content).
                    if !rest[nl..].trim().is_empty() && !is_block_content(src, local) {
                        len = nl;
                    }
                }
                let text = &rest[..len];
                let cut = text.find(" #").map_or(text.len(), |i| i);
                start..start + text[..cut].trim_end().len()
            }
        }
    }
}

/// Whether the scalar at `local` is block-scalar content (its line has no `key:` before it).
fn is_block_content(src: &str, local: usize) -> bool {
    let line_start = src[..local].rfind('\n').map_or(0, |i| i + 1);
    src[line_start..local].trim().is_empty()
}

fn key_text(k: &MarkedYaml) -> String {
    match &k.data {
        YamlData::Value(SScalar::String(s)) => s.to_string(),
        YamlData::Value(SScalar::Integer(i)) => i.to_string(),
        YamlData::Value(SScalar::Boolean(b)) => b.to_string(),
        YamlData::Value(SScalar::FloatingPoint(f)) => f.to_string(),
        YamlData::Value(SScalar::Null) => "null".to_owned(),
        YamlData::Representation(s, ..) => s.to_string(),
        _ => "<complex key>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(src: &str) -> Result<Option<Node>, YamlError> {
        parse(src, 0..src.len())
    }

    #[test]
    fn yaml_12_core_schema_strings() {
        let src = "a: 09:00\nb: yes\nc: 2026-05-01\nd: 0 * * * *\ne: true\nf: null\n";
        let Ok(Some(root)) = parse_all(src) else { panic!("parse failed") };
        let got: Vec<(String, String)> = root
            .entries()
            .unwrap_or_default()
            .iter()
            .map(|e| (e.key.clone(), format!("{:?} {:?}", e.value.kind, &src[e.value.span.clone()])))
            .collect();
        expect_test::expect![[r#"
            [
                (
                    "a",
                    "Scalar(Str(\"09:00\")) \"09:00\"",
                ),
                (
                    "b",
                    "Scalar(Str(\"yes\")) \"yes\"",
                ),
                (
                    "c",
                    "Scalar(Str(\"2026-05-01\")) \"2026-05-01\"",
                ),
                (
                    "d",
                    "Scalar(Str(\"0 * * * *\")) \"0 * * * *\"",
                ),
                (
                    "e",
                    "Scalar(Bool(true)) \"true\"",
                ),
                (
                    "f",
                    "Scalar(Null) \"null\"",
                ),
            ]
        "#]]
        .assert_debug_eq(&got);
    }

    #[test]
    fn spans_are_narrowed_to_the_scalar() {
        let src =
            "title: \"x\" # c\nn: plain words   # note\ns: 'it''s'\nk: |\n  line one\n  line: two\nz: 1\n";
        let Ok(Some(root)) = parse_all(src) else { panic!("parse failed") };
        let spans: Vec<&str> =
            root.entries().unwrap_or_default().iter().map(|e| &src[e.value.span.clone()]).collect();
        assert_eq!(spans, ["\"x\"", "plain words", "'it''s'", "line one\n  line: two", "1"]);
    }

    #[test]
    fn errors_carry_positions() {
        let src = "a: 1\na: 2\n";
        let Err(e) = parse_all(src) else { panic!("expected error") };
        assert_eq!((e.kind, e.span.clone()), (YamlErrorKind::DuplicateKey, 5..6));

        let src = "a: [1\nb: 2\n";
        let Err(e) = parse_all(src) else { panic!("expected error") };
        assert_eq!(e.kind, YamlErrorKind::Syntax);

        let mut bomb = String::from("a: &a [x,x,x,x,x,x,x,x,x,x]\n");
        for i in 0..8 {
            let prev = if i == 0 { "a".to_owned() } else { format!("l{}", i - 1) };
            bomb.push_str(&format!("l{i}: &l{i} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
        }
        let Err(e) = parse_all(&bomb) else { panic!("expected alias limit") };
        assert_eq!(e.kind, YamlErrorKind::AliasLimit);

        let deep = "a: ".to_owned() + &"[".repeat(200);
        let Err(e) = parse_all(&deep) else { panic!("expected too deep") };
        assert_eq!(e.kind, YamlErrorKind::TooDeep);
        let deep = "- ".repeat(5000) + "x\n";
        let Err(e) = parse_all(&deep) else { panic!("expected too deep") };
        assert_eq!(e.kind, YamlErrorKind::TooDeep);
    }

    /// Found by the `edits` fuzz target: "Make live" on a note titled `b[[[...` wrote an
    /// objective that was then refused as nested too deep, so the note had no live block.
    #[test]
    fn brackets_in_strings_and_comments_are_not_nesting() {
        let many = "[".repeat(200);
        let src = format!("a: '{many}'\nb: \"{many}\" # {many}\nc: plain {many}\n# {many}\nd: [[x]]\n");
        let Ok(Some(root)) = parse_all(&src) else { panic!("parse failed") };
        assert_eq!(root.get("a").and_then(|e| e.value.as_str()), Some(many.as_str()));
        // Still refused where the nesting is real, at the line that goes too deep.
        let deep = format!("a: '{many}'\nb: {}x{}\n", "[".repeat(70), "]".repeat(70));
        let Err(e) = parse_all(&deep) else { panic!("expected too deep") };
        assert_eq!(e.kind, YamlErrorKind::TooDeep);
        // The root mapping is level 1: the 64th bracket opens level 65.
        assert_eq!(e.span.start, "a: '".len() + many.len() + "'\nb: ".len() + MAX_DEPTH - 1);
    }

    #[test]
    fn offsets_are_bytes_of_the_whole_note() {
        let text = "---\r\nt: \"日本語\"\r\nx: 😀\r\n---\r\n";
        let Ok(Some(root)) = parse(text, 5..text.len() - 5) else { panic!("parse failed") };
        let e = root.entries().unwrap_or_default();
        assert_eq!(&text[e[0].value.span.clone()], "\"日本語\"");
        assert_eq!(&text[e[1].value.span.clone()], "😀");
        assert_eq!(&text[e[1].key_span.clone()], "x");
    }
}
