//! The note tools (`read_note`, `edit_note`, `replace_section`, `append_to_note`) over the
//! body held in memory.

use super::{Caps, ToolError, truncate};
use crate::note::{body, budget};
use crate::text::Eol;

// ---------------------------------------------------------------------------------------------
// The note body

/// The note body being edited: the text below the frontmatter, with the note's line ending.
#[derive(Debug, Clone)]
pub struct NoteBody {
    text: String,
    newline: Eol,
    max_bytes: usize,
    /// Counts the changes, so the caller can tell whether a call edited the body.
    revision: u64,
    /// `live.maxChars`: edits may not leave the body over it unless they shrink it.
    max_chars: Option<usize>,
}

impl NoteBody {
    pub fn new(text: String, caps: &Caps) -> Self {
        let newline = Eol::of(&text);
        let max_bytes = caps.max_body_bytes.max(text.len());
        NoteBody { text, newline, max_bytes, revision: 0, max_chars: None }
    }

    /// Hold the edits to a budget of `max` characters (`note::budget`).
    pub fn with_budget(mut self, max: Option<usize>) -> Self {
        self.max_chars = max;
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn into_text(self) -> String {
        self.text
    }

    /// Take `text` as the body, without the tools' checks: it is the note as it stands.
    pub fn sync(&mut self, text: String) {
        if text != self.text {
            self.max_bytes = self.max_bytes.max(text.len());
            self.text = text;
        }
    }

    /// How many times the body changed so far.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// `read_note`: the body as it is now (cut at `max` bytes for a huge note).
    pub fn read(&self, max: usize) -> String {
        if self.text.trim().is_empty() {
            return "(the note body is empty)".to_owned();
        }
        truncate(&self.text, max, "the note")
    }

    /// `edit_note`: replace the one place where `old_text` occurs with `new_text`.
    pub fn edit(&mut self, old_text: &str, new_text: &str) -> Result<String, ToolError> {
        if old_text.is_empty() {
            return Err(ToolError::new(
                "old_text is empty; copy the exact text to replace from read_note (to add at the end, use append_to_note)",
            ));
        }
        if old_text == new_text {
            return Err(ToolError::new("old_text and new_text are the same; nothing would change"));
        }
        // The model often sends `\n` for a note written with CRLF: try its text as given, then
        // with the note's line ending.
        let converted = self.newline.convert(old_text).into_owned();
        let (old, count, at) = [old_text, converted.as_str()]
            .into_iter()
            .map(|o| {
                let (count, at) = occurrences(&self.text, o);
                (o, count, at)
            })
            .find(|(_, count, _)| *count > 0)
            .unwrap_or((old_text, 0, 0));
        match count {
            0 => {
                let trimmed = old_text.trim();
                let hint = if !trimmed.is_empty() && trimmed != old_text && self.text.contains(trimmed) {
                    " (it occurs without its leading/trailing whitespace; copy the text exactly)"
                } else {
                    ""
                };
                Err(ToolError::new(format!("old_text not found; read_note to see the current text{hint}")))
            }
            1 => {
                let new = self.newline.convert(new_text).into_owned();
                let mut text = String::with_capacity(self.text.len() + new.len());
                text.push_str(&self.text[..at]);
                text.push_str(&new);
                text.push_str(&self.text[at + old.len()..]);
                self.commit(text)?;
                Ok(format!("Edited: {} replaced by {}.", lines(old), lines(&new)))
            }
            n => {
                let n = if n >= MAX_COUNTED { format!("{n} or more") } else { n.to_string() };
                Err(ToolError::new(format!(
                    "old_text matches {n} places; include more context so that it matches exactly one"
                )))
            }
        }
    }

    /// `replace_section`: replace what is under a heading (`## Weather`; a bare `Weather`
    /// means `## Weather`) up to the next heading of the same or a higher level; a section
    /// that does not exist is added at the end.
    pub fn replace_section(&mut self, heading: &str, content: &str) -> Result<String, ToolError> {
        let (level, title) = parse_heading_arg(heading)?;
        let marks = "#".repeat(level);
        let body = section_body(content, level, &title);
        let nl = self.newline.as_str();
        let all = headings(&self.text);
        let mut found: Vec<usize> =
            (0..all.len()).filter(|&i| all[i].level == level && all[i].title == title).collect();
        if found.is_empty() {
            found = (0..all.len())
                .filter(|&i| all[i].level == level && all[i].title.to_lowercase() == title.to_lowercase())
                .collect();
        }
        match found.as_slice() {
            [] => {
                let mut text = self.text.clone();
                if !text.is_empty() {
                    if !text.ends_with('\n') {
                        text.push_str(nl);
                    }
                    if !text.ends_with(&format!("{nl}{nl}")) && !text.trim().is_empty() {
                        text.push_str(nl);
                    }
                }
                text.push_str(&format!("{marks} {title}{nl}"));
                if !body.is_empty() {
                    text.push_str(nl);
                    text.push_str(&self.newline.convert(&body));
                    text.push_str(nl);
                }
                self.commit(text)?;
                Ok(format!("Added the section `{marks} {title}` at the end of the note."))
            }
            [i] => {
                let h = &all[*i];
                let end = all[i + 1..].iter().find(|n| n.level <= level).map_or(self.text.len(), |n| n.start);
                let last = end == self.text.len();
                let mut repl = String::new();
                if h.end == h.text_end {
                    repl.push_str(nl); // the heading was the last line, without a line ending
                }
                if !body.is_empty() {
                    repl.push_str(nl);
                    repl.push_str(&self.newline.convert(&body));
                    repl.push_str(nl);
                }
                if !last {
                    repl.push_str(nl);
                }
                let old_lines = lines(&self.text[h.end..end]);
                let text = format!("{}{}{}", &self.text[..h.end], repl, &self.text[end..]);
                let changed = text != self.text;
                self.commit(text)?;
                Ok(if changed {
                    format!(
                        "Replaced the content of `{marks} {}` ({old_lines} before, {} now).",
                        h.title,
                        line_count(&body)
                    )
                } else {
                    format!("`{marks} {}` already had that content; nothing changed.", h.title)
                })
            }
            many => Err(ToolError::new(format!(
                "the heading `{marks} {title}` appears {} times; use edit_note to change one of them",
                many.len()
            ))),
        }
    }

    /// `append_to_note`: add `text` on a new line at the end of the body.
    pub fn append(&mut self, text: &str) -> Result<String, ToolError> {
        if text.trim().is_empty() {
            return Err(ToolError::new("text is empty; nothing to append"));
        }
        let nl = self.newline.as_str();
        let mut new = self.text.clone();
        if !new.is_empty() && !new.ends_with('\n') {
            new.push_str(nl);
        }
        new.push_str(&self.newline.convert(text));
        if !new.ends_with('\n') {
            new.push_str(nl);
        }
        self.commit(new)?;
        Ok(format!("Appended {} at the end of the note.", lines(text)))
    }

    /// Accept a new body unless it breaks a rule the tools enforce.
    fn commit(&mut self, new: String) -> Result<(), ToolError> {
        // The H1 is the note's title, not the agent's (SPEC 4: "the H1 stays"): the engine
        // writes only the text below it, so a renamed or displaced title line would land as a
        // second H1 while the tool reported a rename.
        if let Some(h1) = body::body_h1(&self.text) {
            let Some(new_h1) = body::body_h1(&new) else {
                return Err(ToolError::new(
                    "that change would remove the note's `# ` title line (the H1); keep it and change only the text below it",
                ));
            };
            if new[..new_h1.end] != self.text[..h1.end] {
                return Err(ToolError::new(format!(
                    "the title line `{}` stays first and unchanged (it is the note's title, not part of the text you keep current); nothing was changed: edit only the text below it",
                    &self.text[h1]
                )));
            }
        }
        if new.len() > self.max_bytes {
            return Err(ToolError::new(format!(
                "that change would make the note {} bytes, over the {} byte limit; keep the note terse",
                new.len(),
                self.max_bytes
            )));
        }
        if new != self.text {
            let (old_chars, new_chars) = (budget::chars(&self.text), budget::chars(&new));
            budget::check_edit(self.max_chars, old_chars, new_chars).map_err(ToolError)?;
            self.text = new;
            self.revision += 1;
        }
        Ok(())
    }
}

/// Occurrences are counted up to this: enough to say "many" without scanning a huge body.
const MAX_COUNTED: usize = 100;

/// How many times `needle` occurs in `hay` (overlapping occurrences count: "aa" occurs twice in
/// "aaa", which is ambiguous too), up to [`MAX_COUNTED`], and where the first one starts.
fn occurrences(hay: &str, needle: &str) -> (usize, usize) {
    let mut count = 0;
    let mut first = 0;
    let mut from = 0;
    while count < MAX_COUNTED {
        let Some(i) = hay.get(from..).and_then(|rest| rest.find(needle)) else { break };
        let at = from + i;
        if count == 0 {
            first = at;
        }
        count += 1;
        // Step one character, so that overlapping occurrences are found too.
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
    }
    (count, first)
}

fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// "1 line", "3 lines".
fn lines(text: &str) -> String {
    crate::text::count(line_count(text), "line")
}

/// A markdown ATX heading line of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Heading {
    level: usize,
    title: String,
    /// Start of the line.
    start: usize,
    /// End of the line's text (before its line ending).
    text_end: usize,
    /// End of the line, after its line ending.
    end: usize,
}

/// The ATX headings of `text` outside fenced code blocks.
fn headings(text: &str) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut pos = 0;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let content = text[pos..end].trim_end_matches(['\n', '\r']);
        let trimmed = content.trim_start_matches(' ');
        if content.len() - trimmed.len() <= 3 {
            if let Some((c, n)) = fence_marker(trimmed) {
                match fence {
                    None => fence = Some((c, n)),
                    Some((fc, fnn)) if fc == c && n >= fnn && trimmed[n..].trim().is_empty() => fence = None,
                    Some(_) => {}
                }
            } else if fence.is_none()
                && let Some((level, title)) = atx(trimmed)
            {
                out.push(Heading {
                    level,
                    title: title.to_owned(),
                    start: pos,
                    text_end: pos + content.len(),
                    end,
                });
            }
        }
        pos = end;
    }
    out
}

/// A code fence opener or closer: its character and length.
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let c = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = line.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

/// An ATX heading: its level and its text (closing `#`s removed).
fn atx(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let mut title = rest.trim();
    let without_closing = title.trim_end_matches('#');
    if without_closing.is_empty() || without_closing.ends_with([' ', '\t']) {
        title = without_closing.trim();
    }
    Some((level, title))
}

/// The `heading` argument of `replace_section`: `## Weather`, `### Notes` or a bare `Weather`
/// (a `##` section, the default layout's unit).
fn parse_heading_arg(heading: &str) -> Result<(usize, String), ToolError> {
    let h = heading.trim();
    if h.is_empty() {
        return Err(ToolError::new("heading is empty; give a section heading like `## Weather`"));
    }
    if h.contains('\n') {
        return Err(ToolError::new("heading must be a single line, like `## Weather`"));
    }
    let (level, title) = if h.starts_with('#') {
        atx(h).ok_or_else(|| {
            ToolError::new(format!("`{h}` is not a markdown heading; write it like `## Weather`"))
        })?
    } else {
        (2, h)
    };
    if title.is_empty() {
        return Err(ToolError::new("the heading has no text; give one like `## Weather`"));
    }
    if level == 1 {
        return Err(ToolError::new(
            "replace_section works on `##` (or deeper) sections; the `# ` title line stays (use edit_note for text right below it)",
        ));
    }
    Ok((level, title.to_owned()))
}

/// The content to put under a heading, with `\n` line endings: without leading and trailing
/// blank lines, and without a first line repeating the heading itself (models often include
/// it).
fn section_body(content: &str, level: usize, title: &str) -> String {
    let lf = content.replace("\r\n", "\n");
    let mut lines: Vec<&str> = lf.split('\n').collect();
    let skip_blank = |lines: &mut Vec<&str>| {
        let n = lines.iter().take_while(|l| l.trim().is_empty()).count();
        lines.drain(..n);
    };
    skip_blank(&mut lines);
    if lines
        .first()
        .and_then(|l| atx(l.trim_start()))
        .is_some_and(|(lv, t)| lv == level && t.to_lowercase() == title.to_lowercase())
    {
        lines.remove(0);
        skip_blank(&mut lines);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

#[cfg(test)]
#[path = "note_tests.rs"]
mod tests;
