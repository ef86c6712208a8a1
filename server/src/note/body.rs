//! The part of a note's body that a run owns (everything below the H1), the minimal line edits
//! that turn it into a provider's output, and a [`Patch`] that replays those edits on a text the
//! user kept editing meanwhile without ever overwriting what they typed.
//!
//! Rules, in one place:
//!
//! - **Region.** The agent owns everything after the H1 line and its line ending; with no H1 it
//!   owns the whole body. Frontmatter, the H1 and anything the user wrote above the H1 are never
//!   in it. The region always runs to the end of the text. A note whose frontmatter is never
//!   closed has no body: its region is empty at the end of the text and nothing is written there
//!   (text there would become YAML).
//! - **Echoed H1.** Leading output lines that are H1s with the note's own title are dropped:
//!   the H1 stays where it is and is not duplicated. (Not when the region itself starts
//!   with that line, so that writing back the region's own text stays a no-op.)
//! - **Line endings.** The provider's output is rewritten to the note's line ending: the first
//!   one in the region, else the first one in the note, else `\n`.
//! - **No new frontmatter.** In a note without frontmatter or H1 the region starts the note;
//!   output that would then open with a `---` line (a frontmatter) gets a blank line in front,
//!   so it stays body text.
//! - **Blank line under the H1.** When the note has an H1 and the provider's output does not
//!   start with a blank line of its own, one is added — provided the note currently has a blank
//!   line (or nothing) under the H1. A note whose text sits directly under its H1 keeps that
//!   style. Consequently writing back the exact region text (Undo) is a no-op (when the
//!   region's line endings are all the same; see above), and a provider that prints just
//!   "3:00 PM" gets the usual `# Title`, blank line, content layout.
//! - **Final newline.** If the region ended with a line ending (or was empty in a note whose
//!   last line is terminated), the result does too; a provider's own trailing newlines are kept.
//!   When the region is empty and the line before it has no line ending (an H1 or a closing `---`
//!   at the very end of the file), one is added before the content.
//! - **Edits.** The old region and the rendered output are diffed line by line (each line with
//!   its ending) with Myers; every maximal run of changed lines becomes one edit. Unchanged lines
//!   are never inside an edit, and identical output yields no edit at all. (Only a diff of tens
//!   of thousands of changed lines, cut short by a time budget, may group more coarsely.)
//! - **Patch.** [`Patch::compute`] records each such run as a hunk: the old lines, up to
//!   [`CONTEXT`] unchanged lines on either side, and the new text. [`Patch::apply_to`] places
//!   the hunks, in order, in the *current* text's region; see [`Patch::apply_to`] for how. A
//!   hunk that cannot be placed is skipped and counted as a conflict: the user's text wins.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::DiffTag;
use similar::algorithms::{Capture, myers};

use crate::note::frontmatter::{bom_len, h1_line, locate, title};
use crate::text::TextEdit;

/// How many unchanged lines a hunk keeps on each side to find its place again. Two lines span
/// a blank separator plus a neighbouring line, enough to tell repeated lines apart without
/// tying a hunk to text far away that the user may be editing.
pub const CONTEXT: usize = 2;

/// How long a line diff may search for the smallest edits before it settles for larger ones.
const DIFF_BUDGET: Duration = Duration::from_millis(300);

/// The byte range of `text` that the agent owns: everything after the H1 line (after its line
/// ending) when the body has an H1, else the whole body after the frontmatter (and after a BOM).
pub fn agent_region(text: &str) -> Range<usize> {
    Layout::of(text).region
}

/// Minimal line-level edits of `text` that turn its agent region into `new_content`, following
/// the rules of the module documentation. Empty when nothing changes or when the note has no
/// writable body (unterminated frontmatter).
pub fn replace_region_edits(text: &str, new_content: &str) -> Vec<TextEdit> {
    let layout = Layout::of(text);
    if !layout.writable {
        return Vec::new();
    }
    let rendered = layout.render(new_content);
    let region = &text[layout.region.clone()];
    let old_lines = split_lines(region);
    let new_lines = split_lines(&rendered);
    let offsets = line_offsets(&old_lines, layout.region.start);
    changes(&old_lines, &new_lines)
        .into_iter()
        .map(|c| layout.edit(offsets[c.old.start]..offsets[c.old.end], new_lines[c.new].concat()))
        .collect()
}

/// The change a run made to the agent region, kept so that it can be applied to a text that
/// moved on since (the user typed while the agent ran).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch {
    hunks: Vec<Hunk>,
    /// The base had no H1, so the hunks belong to the whole body even if an H1 shows up later
    /// (the agent's own output may bring one).
    whole_body: bool,
}

/// One run of changed lines. Every line keeps its line ending, so matching is byte-exact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// Index, among the base region's lines, of the first line of `old` (where `new` goes for
    /// a pure insertion).
    pub line: usize,
    /// Up to [`CONTEXT`] unchanged lines right before `old` (fewer at the start of the region or
    /// after a close previous hunk).
    pub before: Vec<String>,
    /// The lines replaced; empty for a pure insertion.
    pub old: Vec<String>,
    /// Up to [`CONTEXT`] unchanged lines right after `old` (fewer at the end of the region or
    /// before a close next hunk).
    pub after: Vec<String>,
    /// The replacement text: whole lines, each with its ending (the last one possibly without).
    pub new: String,
    /// `before` is cut short by the start of the region.
    pub at_start: bool,
    /// `after` is cut short by the end of the region.
    pub at_end: bool,
}

/// The edits of a [`Patch`] against a current text, and how many hunks were skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchResult {
    /// Non-overlapping edits of the current text, in text order.
    pub edits: Vec<TextEdit>,
    /// Hunks whose old lines are no longer where they could be found: the user changed that
    /// text, so the agent's change there was dropped.
    pub conflicts: usize,
}

impl Patch {
    /// The change that turns `base_text`'s agent region into `new_content` (rendered as
    /// [`replace_region_edits`] would).
    pub fn compute(base_text: &str, new_content: &str) -> Patch {
        // An unwritable base still yields its hunks: `apply_to` refuses them on an unwritable
        // current text, and counting them as conflicts beats dropping the output silently.
        let layout = Layout::of(base_text);
        let whole_body = !layout.has_h1;
        let rendered = layout.render(new_content);
        let old_lines = split_lines(&base_text[layout.region.clone()]);
        let new_lines = split_lines(&rendered);
        let owned = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
        let changes = changes(&old_lines, &new_lines);
        let hunks = changes
            .iter()
            .enumerate()
            .map(|(i, c)| {
                // Context is unchanged lines only (never a neighbouring hunk's old lines), so it
                // reads the same before and after the patch: that is what tells "done" apart.
                let prev_end = if i == 0 { 0 } else { changes[i - 1].old.end };
                let next_start = changes.get(i + 1).map_or(old_lines.len(), |n| n.old.start);
                let before = c.old.start.saturating_sub(CONTEXT).max(prev_end)..c.old.start;
                let after = c.old.end..(c.old.end + CONTEXT).min(next_start);
                Hunk {
                    line: c.old.start,
                    // Cut short by the region's edge, not by a neighbouring hunk.
                    at_start: i == 0 && before.start == 0 && before.len() < CONTEXT,
                    at_end: i + 1 == changes.len() && after.end == old_lines.len() && after.len() < CONTEXT,
                    before: owned(&old_lines[before]),
                    old: owned(&old_lines[c.old.clone()]),
                    after: owned(&old_lines[after]),
                    new: new_lines[c.new.clone()].concat(),
                }
            })
            .collect();
        Patch { hunks, whole_body }
    }

    pub fn hunks(&self) -> &[Hunk] {
        &self.hunks
    }

    /// Whether the run changed nothing.
    pub fn is_empty(&self) -> bool {
        self.hunks.is_empty()
    }

    /// Edits of `current_text` that make the same changes, where the user has not touched the
    /// text a hunk replaces. Hunks are placed in order, each at or after the end of the previous
    /// one, searching only the current agent region (the whole body when the base had no H1,
    /// even if one appeared since: the agent owned it all). The expected line of a hunk is its
    /// base line shifted by how far the previous placed hunk moved. A hunk reads as *to do*
    /// where its context surrounds its old lines, and as *done* where its context surrounds its
    /// new lines (a retried edit that had landed after all: nothing is written). A pure
    /// insertion or deletion whose context is cut short by the region's start or end must also
    /// meet that edge, since its context alone would fit both before and after. The first of
    /// these decides:
    ///
    /// 1. either reading with full context at the expected line ("to do" first);
    /// 2. the same at the nearest line where one matches (the earlier line on a tie), so a hunk
    ///    follows text the user inserted or removed above it;
    /// 3. at the expected line only, a reading with the context of one side, or none, when the
    ///    user edited only the text around the hunk; the reading explaining more lines wins.
    ///
    /// When every hunk can be placed as "to do" by rules 1 and 2, that is the answer, and when
    /// every hunk reads as "done" by rules 1 and 2, nothing is written; if both hold (content
    /// that repeats itself), the reading whose hunks moved fewer lines in all wins, "to do" on a
    /// tie. Otherwise each hunk takes whichever reading it finds first, rule 3 included.
    ///
    /// A hunk without context on either side stands for the whole base region and matches only
    /// the whole current region (so an agent's first text for an empty body is not written into
    /// a body the user started meanwhile). Everything else is a conflict. Since a hunk only ever
    /// replaces lines identical to the base's, no byte the user typed is overwritten. Applying a
    /// patch again to its own result (a retry after the edit landed) changes nothing, unless the
    /// user edited the lines around a hunk meanwhile (then one side of context may not tell "to
    /// do" from "done") or the text repeats itself so much that no context can.
    pub fn apply_to(&self, current_text: &str) -> PatchResult {
        let layout = Layout::with(current_text, !self.whole_body);
        if !layout.writable {
            return PatchResult { edits: Vec::new(), conflicts: self.hunks.len() };
        }
        let lines = split_lines(&current_text[layout.region.clone()]);
        // Where the text reads wholly as "to do" or wholly as "done", that reading is taken: a
        // lone hunk that inserts a line like its neighbours can fit both ways, the whole patch
        // rarely does. If it does (content that repeats itself), the reading that needs its
        // hunks moved the least wins, "to do" on a tie.
        let todo = self.place_all(&lines, Reading::ToDo);
        // Nothing beats "to do" with every hunk where expected (the usual case): skip the rest.
        let done = match &todo {
            Some((_, 0)) => None,
            _ => self.place_all(&lines, Reading::Done),
        };
        let placements = match (todo, done) {
            (Some((_, todo_moved)), Some((_, done_moved))) if done_moved < todo_moved => {
                return PatchResult::default();
            }
            (Some((todo, _)), _) => todo,
            (None, Some(_)) => return PatchResult::default(),
            (None, None) => self.place_all(&lines, Reading::Either).map(|(p, _)| p).unwrap_or_default(),
        };
        let offsets = line_offsets(&lines, layout.region.start);
        let mut result = PatchResult::default();
        for (hunk, placement) in self.hunks.iter().zip(placements) {
            match placement {
                Some(Placement::Replace(at)) => {
                    let range = offsets[at]..offsets[at + hunk.old.len()];
                    let edit = layout.edit(range, hunk.new.clone());
                    match result.edits.last_mut() {
                        // Hunks the user's edits brought together become one edit, so that no
                        // client has to guess the order of two edits at the same offset.
                        Some(last) if last.range.end == edit.range.start => {
                            last.range.end = edit.range.end;
                            last.new_text.push_str(&edit.new_text);
                        }
                        _ => result.edits.push(edit),
                    }
                }
                Some(Placement::Done(_)) => {}
                None => result.conflicts += 1,
            }
        }
        // Hunks rendered for another layout (the user removed the frontmatter meanwhile) may
        // still put a `---` line first; as in `render`, a blank line keeps it body text.
        if layout.starts_note
            && let Some(first) = result.edits.first_mut()
            && first.range.start == layout.region.start
        {
            let rest = &current_text[first.range.end..];
            let line = &rest[..rest.find('\n').map_or(rest.len(), |i| i + 1)];
            let head = format!("{}{}{line}", &current_text[..first.range.start], first.new_text);
            if locate(&head).is_some() {
                first.new_text.insert_str(0, layout.nl);
            }
        }
        result
    }

    /// Each hunk's place in the current region's `lines`, in order, and how many lines away
    /// from where they were expected they were found in all. With a single reading, `None` as
    /// soon as a hunk has no place (that reading is out); with both, a missing place is `None`.
    fn place_all(&self, lines: &[&str], reading: Reading) -> Option<(Vec<Option<Placement>>, usize)> {
        // (base line, current line) just past the last placed hunk: its shift carries over.
        let mut anchor = (0, 0);
        let mut moved = 0;
        let mut placements = Vec::with_capacity(self.hunks.len());
        for hunk in &self.hunks {
            // Hunks are in base order, so `hunk.line >= anchor.0`: this cannot underflow.
            let expected = (hunk.line + anchor.1).saturating_sub(anchor.0).min(lines.len());
            let new_lines = split_lines(&hunk.new);
            let Some(placement) = place(hunk, &new_lines, lines, expected, anchor.1, reading) else {
                if reading != Reading::Either {
                    return None;
                }
                placements.push(None);
                continue;
            };
            let (at, end) = match placement {
                Placement::Replace(at) => (at, at + hunk.old.len()),
                Placement::Done(at) => (at, at + new_lines.len()),
            };
            moved += at.abs_diff(expected);
            anchor = (hunk.line + hunk.old.len(), end);
            placements.push(Some(placement));
        }
        Some((placements, moved))
    }
}

/// Which readings of a hunk [`place`] may take.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    ToDo,
    Done,
    Either,
}

/// Borrowed lines, to compare with the current text's.
fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Where a hunk goes in the current region's lines.
enum Placement {
    /// Its old lines start at this line.
    Replace(usize),
    /// Its new lines already start at this line.
    Done(usize),
}

/// Where `hunk` goes in `lines`, by the rules of [`Patch::apply_to`]; `floor` is the first line
/// after the previous hunk.
fn place(
    hunk: &Hunk,
    new: &[&str],
    lines: &[&str],
    expected: usize,
    floor: usize,
    reading: Reading,
) -> Option<Placement> {
    let (todo, done) = (reading != Reading::Done, reading != Reading::ToDo);
    let whole = hunk.before.is_empty() && hunk.after.is_empty();
    let (before, old, after) = (strs(&hunk.before), strs(&hunk.old), strs(&hunk.after));
    // How many lines `b`, `m`, `a` explain when they sit around line `at` (`m` starting there).
    // An empty `m` says little on its own, so a side of context cut short by the region's
    // start (`bound_start`) or end (`bound_end`) must then meet that edge; an empty pattern
    // explains nothing, except for a hunk that stands for the whole region.
    let fits = |at: usize, b: &[&str], m: &[&str], a: &[&str], bound_start: bool, bound_end: bool| {
        let end = at + m.len();
        let found = at >= floor
            && at >= b.len()
            && end + a.len() <= lines.len()
            && (!whole || (at == 0 && end == lines.len()))
            && (!(bound_start && m.is_empty()) || at == b.len())
            && (!(bound_end && m.is_empty()) || end + a.len() == lines.len())
            && lines[at - b.len()..at] == *b
            && lines[at..end] == *m
            && lines[end..end + a.len()] == *a;
        let explained = b.len() + m.len() + a.len();
        (found && (explained > 0 || whole)).then_some(explained)
    };
    let (start, end) = (hunk.at_start, hunk.at_end);
    // Rules 1 and 2: full context, outwards from the expected line; at one line, "to do" is
    // checked first (where both readings fit, the untouched text is the likelier one).
    let reach = expected.max(lines.len().saturating_sub(expected));
    for distance in 0..=reach {
        let candidates = [expected.checked_sub(distance), (distance > 0).then_some(expected + distance)];
        for at in candidates.into_iter().flatten() {
            if todo && fits(at, &before, &old, &after, start, end).is_some() {
                return Some(Placement::Replace(at));
            }
            if done && fits(at, &before, new, &after, start, end).is_some() {
                return Some(Placement::Done(at));
            }
        }
    }
    // Rule 3: the context changed; trust the position, never a far-away look-alike. The reading
    // that explains more lines wins ("to do" on a tie). Only when weighing both readings: one
    // side's context is too weak to tell "to do" from "done" on its own.
    if reading != Reading::Either {
        return None;
    }
    let one_sided = |m: &[&str]| {
        [fits(expected, &before, m, &[], start, false), fits(expected, &[], m, &after, false, end), {
            fits(expected, &[], m, &[], false, false)
        }]
        .into_iter()
        .flatten()
        .max()
    };
    match (one_sided(&old).filter(|_| todo), one_sided(new).filter(|_| done)) {
        (Some(r), Some(d)) if d > r => Some(Placement::Done(expected)),
        (Some(_), _) => Some(Placement::Replace(expected)),
        (None, Some(_)) => Some(Placement::Done(expected)),
        (None, None) => None,
    }
}

/// What the rules need to know about a note's text.
struct Layout {
    region: Range<usize>,
    has_h1: bool,
    /// The note's title, when the body has an H1 and the region does not itself start with an
    /// H1 of that title: an output line of that title is then an echo.
    echo_title: Option<String>,
    /// False when the frontmatter is never closed: the "body" would be YAML.
    writable: bool,
    /// The region is empty at the end of the text and the line before it (H1 or closing
    /// delimiter) has no line ending, so content must start with one.
    needs_break: bool,
    nl: &'static str,
    ends_with_newline: bool,
    /// Whether output that does not start with a blank line gets one in front.
    blank_under_h1: bool,
    /// The region starts the note (no frontmatter, no H1): a `---` line first would open one.
    starts_note: bool,
}

impl Layout {
    fn of(text: &str) -> Layout {
        Layout::with(text, true)
    }

    /// The layout of `text`, ignoring its H1 (the region is then the whole body) unless
    /// `below_h1`.
    fn with(text: &str, below_h1: bool) -> Layout {
        let (body_start, writable) = match locate(text) {
            Some(fm) => (fm.body_start(), fm.close.is_some()),
            None => (bom_len(text), true),
        };
        let body_start = body_start.min(text.len());
        let h1 = h1_line(text, body_start)
            .filter(|l| below_h1 && l.end <= text.len() && text.is_char_boundary(l.end));
        let start = match &h1 {
            Some(line) => {
                let rest = &text[line.end..];
                if rest.starts_with("\r\n") {
                    line.end + 2
                } else if rest.starts_with('\n') {
                    line.end + 1
                } else {
                    line.end
                }
            }
            None => body_start,
        };
        let region = start..text.len();
        let body = &text[region.clone()];
        let needs_break = body.is_empty() && start > bom_len(text) && !text[..start].ends_with('\n');
        let nl = match body.find('\n').map(|i| (body, i)).or_else(|| text.find('\n').map(|i| (text, i))) {
            Some((s, i)) if s[..i].ends_with('\r') => "\r\n",
            _ => "\n",
        };
        let ends_with_newline = if body.is_empty() { !needs_break } else { body.ends_with('\n') };
        let own_title = h1.as_ref().and_then(|_| title(text, body_start));
        let echo_title = own_title.filter(|t| first_line_title(body) != Some(*t)).map(str::to_owned);
        let has_h1 = h1.is_some();
        let blank_under_h1 = has_h1 && (body.is_empty() || starts_with_blank_line(body));
        let starts_note = region.start == bom_len(text);
        Layout {
            region,
            has_h1,
            echo_title,
            writable,
            needs_break,
            nl,
            ends_with_newline,
            blank_under_h1,
            starts_note,
        }
    }

    /// The provider's output as the region's new text.
    fn render(&self, new_content: &str) -> String {
        let mut out = normalise_newlines(new_content, self.nl);
        if let Some(own) = &self.echo_title {
            // A provider that echoes the note's H1 would otherwise duplicate it on every run.
            while first_line_title(&out) == Some(own.as_str()) {
                let first_end = out.find('\n').map_or(out.len(), |i| i + 1);
                out.drain(..first_end);
            }
        }
        if out.is_empty() {
            return out;
        }
        if self.blank_under_h1 && !starts_with_blank_line(&out) {
            out.insert_str(0, self.nl);
        }
        if self.ends_with_newline && !out.ends_with('\n') {
            out.push_str(self.nl);
        }
        // (After the BOM the note may have: a second U+FEFF is text.)
        if self.starts_note && locate(&format!("{}{out}", &"\u{feff}"[..self.region.start])).is_some() {
            out.insert_str(0, self.nl);
        }
        out
    }

    /// An edit of the region, terminating the line before an empty region when content goes in.
    fn edit(&self, range: Range<usize>, mut new_text: String) -> TextEdit {
        if self.needs_break && range.start == self.region.start && !new_text.is_empty() {
            new_text.insert_str(0, self.nl);
        }
        TextEdit { range, new_text }
    }
}

/// The title of `s`'s first line, when that line is an H1.
fn first_line_title(s: &str) -> Option<&str> {
    title(&s[..s.find('\n').map_or(s.len(), |i| i + 1)], 0)
}

/// Whether the first line of non-empty `s` holds nothing but spaces and tabs (whitespace-only
/// output counts, so that writing it twice gives the same text).
fn starts_with_blank_line(s: &str) -> bool {
    !s.is_empty() && s[..s.find('\n').unwrap_or(s.len())].trim_matches([' ', '\t', '\r']).is_empty()
}

/// `s` with every `\n` or `\r\n` replaced by `nl`; a lone `\r` is text, as the frontmatter
/// scanner and the line diff see it.
fn normalise_newlines(s: &str, nl: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    let mut rest = s;
    while let Some(i) = rest.find('\n') {
        let line = &rest[..i];
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push_str(nl);
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
    out
}

/// Lines split after each `\n`, each keeping its ending; a final unterminated line is kept.
fn split_lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// Byte offset (in the whole text) of each line's start, plus the end of the last line.
fn line_offsets(lines: &[&str], start: usize) -> Vec<usize> {
    let mut offsets = Vec::with_capacity(lines.len() + 1);
    let mut at = start;
    offsets.push(at);
    for line in lines {
        at += line.len();
        offsets.push(at);
    }
    offsets
}

/// A maximal run of changed lines: old line indices replaced by new line indices.
struct Change {
    old: Range<usize>,
    new: Range<usize>,
}

/// The runs of changed lines between `old` and `new`, in order.
fn changes(old: &[&str], new: &[&str]) -> Vec<Change> {
    // Plain Myers ops: similar's `Compact` post-pass (used by `capture_diff_slices`) can emit
    // ops out of order on inputs with repeated lines, which would yield overlapping edits.
    // Myers costs O(lines × changed lines); the deadline bounds a rewrite of a huge body, past
    // which similar settles for larger (still correct) runs instead of stalling a write.
    let deadline = Instant::now().checked_add(DIFF_BUDGET);
    let mut capture = Capture::new();
    let Ok(()) = myers::diff_deadline(&mut capture, old, 0..old.len(), new, 0..new.len(), deadline);
    let mut out: Vec<Change> = Vec::new();
    let mut open = false;
    let (mut old_at, mut new_at) = (0, 0);
    for op in capture.into_ops() {
        let (tag, o, n) = op.as_tag_tuple();
        if o.start != old_at || n.start != new_at {
            // Not a contiguous script; never seen, but a wrong edit is worse than a large one.
            return whole_change(old, new);
        }
        (old_at, new_at) = (o.end, n.end);
        if tag == DiffTag::Equal {
            open = false;
            continue;
        }
        match out.last_mut() {
            // Adjacent non-equal ops (a delete next to an insert) are one run of changed lines.
            Some(last) if open => {
                last.old.end = o.end;
                last.new.end = n.end;
            }
            _ => out.push(Change { old: o, new: n }),
        }
        open = true;
    }
    if old_at != old.len() || new_at != new.len() {
        return whole_change(old, new);
    }
    out
}

/// One change between the common prefix and suffix of `old` and `new`.
fn whole_change(old: &[&str], new: &[&str]) -> Vec<Change> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix =
        old[prefix..].iter().rev().zip(new[prefix..].iter().rev()).take_while(|(a, b)| a == b).count();
    let change = Change { old: prefix..old.len() - suffix, new: prefix..new.len() - suffix };
    if change.old.is_empty() && change.new.is_empty() { Vec::new() } else { vec![change] }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::edit::apply;
    use expect_test::{Expect, expect};
    use proptest::prelude::*;

    fn show(s: &str) -> String {
        s.replace('\r', "␍").replace('\u{feff}', "⟨BOM⟩")
    }

    fn applied(text: &str, edits: &[TextEdit]) -> String {
        apply(text, edits).unwrap_or_else(|e| panic!("edits do not apply: {e}"))
    }

    fn render_edits(edits: &[TextEdit]) -> String {
        edits.iter().map(|e| format!("{:?} {:?}\n", e.range, show(&e.new_text))).collect()
    }

    /// The edits, then the resulting text.
    fn check_replace(text: &str, new: &str, expect: Expect) {
        let edits = replace_region_edits(text, new);
        let out = applied(text, &edits);
        expect.assert_eq(&format!("{}----\n{}", render_edits(&edits), show(&out)));
    }

    /// Conflicts and edits of the patch computed on `base` applied to `current`, then the result.
    fn check_race(base: &str, new: &str, current: &str, expect: Expect) {
        let r = Patch::compute(base, new).apply_to(current);
        let out = applied(current, &r.edits);
        expect.assert_eq(&format!(
            "conflicts: {}\n{}----\n{}",
            r.conflicts,
            render_edits(&r.edits),
            show(&out)
        ));
    }

    const NOTE: &str = "---\nlive:\n  objective: Show the time.\n---\n# Chicago time\n\n3:00 PM, Central Time\n\n## Notes\n\nsee below\n";

    #[test]
    fn region_is_below_the_h1_or_the_whole_body() {
        let r = |t: &str| {
            let r = agent_region(t);
            show(&t[r])
        };
        assert_eq!(r(NOTE), "\n3:00 PM, Central Time\n\n## Notes\n\nsee below\n");
        assert_eq!(r("---\na: 1\n---\nplain\n"), "plain\n");
        assert_eq!(r("\u{feff}plain\n"), "plain\n");
        assert_eq!(r("intro\n# T\r\nbody"), "body");
        assert_eq!(r("```\n# fenced\n```\n# Real\nx\n"), "x\n");
        assert_eq!(r("# T"), "");
        assert_eq!(agent_region("# T"), 3..3);
        assert_eq!(agent_region("---\na: 1\n"), 9..9);
        assert_eq!(agent_region(""), 0..0);
    }

    #[test]
    fn replace_with_h1() {
        check_replace(
            NOTE,
            "4:00 PM, Central Time\n\n## Notes\n\nsee below\n",
            expect![[r#"
                58..80 "4:00 PM, Central Time\n"
                ----
                ---
                live:
                  objective: Show the time.
                ---
                # Chicago time

                4:00 PM, Central Time

                ## Notes

                see below
            "#]],
        );
        // The provider's own leading blank lines are kept as they are.
        check_replace(
            "# T\n\nold\n",
            "\n\nnew\n",
            expect![[r#"
                5..9 "\nnew\n"
                ----
                # T


                new
            "#]],
        );
        // Two blank lines under the H1 become the one the rule adds.
        check_replace(
            "# T\n\n\nold\n",
            "new",
            expect![[r#"
                5..10 "new\n"
                ----
                # T

                new
            "#]],
        );
        // Text directly under the H1 stays directly under it.
        check_replace(
            "# T\nold\nkeep\n",
            "new\nkeep\n",
            expect![[r#"
                4..8 "new\n"
                ----
                # T
                new
                keep
            "#]],
        );
        // What the user wrote above the H1 is not the agent's.
        check_replace(
            "mine\n\n# T\n\nold\n",
            "new\n",
            expect![[r#"
                11..15 "new\n"
                ----
                mine

                # T

                new
            "#]],
        );
    }

    #[test]
    fn replace_drops_an_echoed_h1() {
        check_replace(
            "# Chicago time\n\n3:00 PM\n",
            "# Chicago time\n\n4:00 PM\n",
            expect![[r#"
            16..24 "4:00 PM\n"
            ----
            # Chicago time

            4:00 PM
        "#]],
        );
        // Another H1 is content like any other.
        check_replace(
            "# Chicago time\n\n3:00 PM\n",
            "# Elsewhere\n4:00 PM\n",
            expect![[r##"
            16..24 "# Elsewhere\n4:00 PM\n"
            ----
            # Chicago time

            # Elsewhere
            4:00 PM
        "##]],
        );
    }

    #[test]
    fn replace_without_h1() {
        check_replace(
            "---\na: 1\n---\nold line\nkeep\n",
            "new line\nkeep\n",
            expect![[r#"
                13..22 "new line\n"
                ----
                ---
                a: 1
                ---
                new line
                keep
            "#]],
        );
        // No blank line is added without an H1, and a leading one is the provider's choice.
        check_replace(
            "---\na: 1\n---\nold\n",
            "\nnew\n",
            expect![[r#"
                13..17 "\nnew\n"
                ----
                ---
                a: 1
                ---

                new
            "#]],
        );
    }

    #[test]
    fn replace_keeps_crlf() {
        check_replace(
            "---\r\na: 1\r\n---\r\n# T\r\n\r\nold\r\nkeep\r\n",
            "new\nkeep\nadded",
            expect![[r#"
                23..28 "new␍\n"
                34..34 "added␍\n"
                ----
                ---␍
                a: 1␍
                ---␍
                # T␍
                ␍
                new␍
                keep␍
                added␍
            "#]],
        );
        // An empty region takes the note's line ending from the rest of the note.
        check_replace(
            "---\r\na: 1\r\n---\r\n# T\r\n",
            "x\ny\n",
            expect![[r#"
                21..21 "␍\nx␍\ny␍\n"
                ----
                ---␍
                a: 1␍
                ---␍
                # T␍
                ␍
                x␍
                y␍
            "#]],
        );
    }

    #[test]
    fn replace_empty_body() {
        check_replace(
            "---\na: 1\n---\n",
            "hello",
            expect![[r#"
                13..13 "hello\n"
                ----
                ---
                a: 1
                ---
                hello
            "#]],
        );
        check_replace(
            "---\na: 1\n---\n# T\n",
            "hello\n",
            expect![[r#"
                17..17 "\nhello\n"
                ----
                ---
                a: 1
                ---
                # T

                hello
            "#]],
        );
        // The last line had no line ending: one is added before the content, none after.
        check_replace(
            "# T",
            "hello\n",
            expect![[r#"
                3..3 "\n\nhello\n"
                ----
                # T

                hello
            "#]],
        );
        check_replace(
            "---\na: 1\n---",
            "hello",
            expect![[r#"
                12..12 "\nhello"
                ----
                ---
                a: 1
                ---
                hello"#]],
        );
        // Emptying the body removes it all, blank line included.
        check_replace(
            "# T\n\nold\n",
            "",
            expect![[r#"
                4..9 ""
                ----
                # T
            "#]],
        );
        // Unterminated frontmatter: there is no body to write.
        check_replace(
            "---\na: 1\n",
            "hello",
            expect![[r#"
                ----
                ---
                a: 1
            "#]],
        );
    }

    #[test]
    fn replace_without_frontmatter() {
        check_replace(
            "# T\n\nold\nkeep\n",
            "new\nkeep\n",
            expect![[r#"
                5..9 "new\n"
                ----
                # T

                new
                keep
            "#]],
        );
        check_replace(
            "\u{feff}plain\ntext\n",
            "plain\nprose\n",
            expect![[r#"
                9..14 "prose\n"
                ----
                ⟨BOM⟩plain
                prose
            "#]],
        );
        check_replace(
            "",
            "hello",
            expect![[r#"
                0..0 "hello\n"
                ----
                hello
            "#]],
        );
    }

    /// Found by the `command_output` fuzz target: in a note without frontmatter or H1, output
    /// starting with a `---` line turned the note's first lines into a frontmatter (an agent
    /// could make a note live that way). A blank line in front keeps it body text, also when
    /// the patch lands on a note whose frontmatter the user removed meanwhile.
    #[test]
    fn output_never_opens_a_frontmatter() {
        check_replace(
            "old\n",
            "---\nlive:\n  objective: x\n---\nbody\n",
            expect![[r#"
                0..4 "\n---\nlive:\n  objective: x\n---\nbody\n"
                ----

                ---
                live:
                  objective: x
                ---
                body
            "#]],
        );
        check_replace(
            "",
            "---",
            expect![[r#"
                0..0 "\n---\n"
                ----

                ---
            "#]],
        );
        check_race(
            "---\na: 1\n---\nold\n",
            "---\nx\n---\n",
            "old\n",
            expect![[r#"
                conflicts: 0
                0..4 "\n---\nx\n---\n"
                ----

                ---
                x
                ---
            "#]],
        );
        // A `---` line further down, or under an H1, is just a thematic break.
        assert_eq!(replace_region_edits("a\n", "a\n---\nb\n").len(), 1);
        // After a BOM, a second U+FEFF is text: `\u{feff}---` opens nothing.
        let text = "\u{feff}\u{feff}---\n";
        assert_eq!(replace_region_edits(text, &text[3..]), vec![]);
        assert_eq!(applied("# T\n", &replace_region_edits("# T\n", "---\nb\n")), "# T\n\n---\nb\n");
    }

    /// Found by the `command_output` fuzz target: writing back a region whose line endings are
    /// mixed is not a no-op, as the module documentation said; its endings become the first
    /// one's, like any output's. The documentation now says so.
    #[test]
    fn writing_back_a_mixed_region_normalises_it() {
        let text = "#Title\r\nbody\n";
        assert_eq!(applied(text, &replace_region_edits(text, text)), "#Title\r\nbody\r\n");
        let text = "#Title\r\nbody\r\n";
        assert_eq!(replace_region_edits(text, text), vec![]);
    }

    #[test]
    fn replace_trailing_newline() {
        // The region ended with a newline: the result does too.
        check_replace(
            "# T\n\nold\n",
            "a\nb",
            expect![[r#"
                5..9 "a\nb\n"
                ----
                # T

                a
                b
            "#]],
        );
        // The note had no final newline: the provider's choice is kept either way.
        check_replace(
            "# T\n\nold",
            "new\n",
            expect![[r#"
                5..8 "new\n"
                ----
                # T

                new
            "#]],
        );
        check_replace(
            "# T\n\nold",
            "new",
            expect![[r#"
                5..8 "new"
                ----
                # T

                new"#]],
        );
        // Extra trailing blank lines from the provider are its own.
        check_replace(
            "# T\n\nold\n",
            "new\n\n",
            expect![[r#"
                5..9 "new\n\n"
                ----
                # T

                new

            "#]],
        );
    }

    #[test]
    fn unchanged_output_gives_no_edits() {
        let cases = [
            (NOTE, "\n3:00 PM, Central Time\n\n## Notes\n\nsee below\n"),
            // The region's own text, as Undo writes it back, whatever its shape.
            (NOTE, &NOTE[agent_region(NOTE)]),
            ("# T\nx\n", "x\n"),
            ("# T\n\nx", "x"),
            ("# T\n", ""),
            ("---\r\na: 1\r\n---\r\n# T\r\n\r\nx\r\ny\r\n", "x\ny\n"),
            ("---\na: 1\n---\n", ""),
            ("plain\n", "plain"),
            ("", ""),
        ];
        for (text, new) in cases {
            assert_eq!(replace_region_edits(text, new), vec![], "{text:?} <- {new:?}");
            assert!(Patch::compute(text, new).is_empty(), "{text:?} <- {new:?}");
        }
    }

    #[test]
    fn repeated_lines_give_ordered_edits() {
        // similar's compacting pass once reordered these ops into overlapping edits.
        check_replace(
            "- x\n- x\n\n",
            "\n---\n\n\n\n\n- x\n\r\r\n\r",
            expect![[r#"
            0..8 "\n---\n\n\n\n"
            9..9 "- x\n␍\n␍\n"
            ----

            ---




            - x
            ␍
            ␍
        "#]],
        );
    }

    const BASE: &str = "---\ntitle: Chicago\nlive:\n  objective: Show the time.\n---\n# Chicago time\n\nSummary: it is 3:00 PM.\n\n## Weather\n\nSunny.\n\n## Notes\n\n- bring an umbrella\n";
    const AGENT: &str =
        "\nSummary: it is 4:00 PM.\n\n## Weather\n\nCloudy.\n\n## Notes\n\n- bring an umbrella\n";

    fn typed(at: &str, insert: &str) -> String {
        BASE.replacen(at, &format!("{insert}{at}"), 1)
    }

    #[test]
    fn patch_hunks_carry_context() {
        let patch = Patch::compute(BASE, AGENT);
        expect![[r###"
            [
                Hunk {
                    line: 1,
                    before: [
                        "\n",
                    ],
                    old: [
                        "Summary: it is 3:00 PM.\n",
                    ],
                    after: [
                        "\n",
                        "## Weather\n",
                    ],
                    new: "Summary: it is 4:00 PM.\n",
                    at_start: true,
                    at_end: false,
                },
                Hunk {
                    line: 5,
                    before: [
                        "## Weather\n",
                        "\n",
                    ],
                    old: [
                        "Sunny.\n",
                    ],
                    after: [
                        "\n",
                        "## Notes\n",
                    ],
                    new: "Cloudy.\n",
                    at_start: false,
                    at_end: false,
                },
            ]
        "###]]
        .assert_debug_eq(&patch.hunks());
    }

    #[test]
    fn race_user_typed_in_the_frontmatter() {
        check_race(
            BASE,
            AGENT,
            &typed("live:", "tags: [time]\n"),
            expect![[r#"
                conflicts: 0
                86..110 "Summary: it is 4:00 PM.\n"
                123..130 "Cloudy.\n"
                ----
                ---
                title: Chicago
                tags: [time]
                live:
                  objective: Show the time.
                ---
                # Chicago time

                Summary: it is 4:00 PM.

                ## Weather

                Cloudy.

                ## Notes

                - bring an umbrella
            "#]],
        );
    }

    #[test]
    fn race_user_typed_above_the_h1() {
        check_race(
            BASE,
            AGENT,
            &typed("# Chicago", "Draft, do not share.\n\n"),
            expect![[r#"
                conflicts: 0
                95..119 "Summary: it is 4:00 PM.\n"
                132..139 "Cloudy.\n"
                ----
                ---
                title: Chicago
                live:
                  objective: Show the time.
                ---
                Draft, do not share.

                # Chicago time

                Summary: it is 4:00 PM.

                ## Weather

                Cloudy.

                ## Notes

                - bring an umbrella
            "#]],
        );
    }

    #[test]
    fn race_user_typed_in_another_paragraph() {
        // Below the agent's changes.
        check_race(
            BASE,
            AGENT,
            &typed("- bring", "- call mum\n"),
            expect![[r#"
            conflicts: 0
            73..97 "Summary: it is 4:00 PM.\n"
            110..117 "Cloudy.\n"
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time

            Summary: it is 4:00 PM.

            ## Weather

            Cloudy.

            ## Notes

            - call mum
            - bring an umbrella
        "#]],
        );
        // Above them, in the same region: the hunks follow the text down.
        check_race(
            BASE,
            AGENT,
            &typed("Summary", "Written by hand.\n\n"),
            expect![[r#"
            conflicts: 0
            91..115 "Summary: it is 4:00 PM.\n"
            128..135 "Cloudy.\n"
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time

            Written by hand.

            Summary: it is 4:00 PM.

            ## Weather

            Cloudy.

            ## Notes

            - bring an umbrella
        "#]],
        );
        // Right next to a change (its context): the old lines are intact where expected.
        check_race(
            BASE,
            AGENT,
            &BASE.replace("## Weather", "## Weather today"),
            expect![[r#"
            conflicts: 0
            73..97 "Summary: it is 4:00 PM.\n"
            116..123 "Cloudy.\n"
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time

            Summary: it is 4:00 PM.

            ## Weather today

            Cloudy.

            ## Notes

            - bring an umbrella
        "#]],
        );
    }

    #[test]
    fn race_user_typed_in_the_line_the_agent_changes() {
        check_race(
            BASE,
            AGENT,
            &BASE.replace("Sunny.", "Sunny, says Bob."),
            expect![[r#"
            conflicts: 1
            73..97 "Summary: it is 4:00 PM.\n"
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time

            Summary: it is 4:00 PM.

            ## Weather

            Sunny, says Bob.

            ## Notes

            - bring an umbrella
        "#]],
        );
        // The user emptied the body: nothing of the agent's comes back.
        let emptied = &BASE[..agent_region(BASE).start];
        check_race(
            BASE,
            AGENT,
            emptied,
            expect![[r#"
            conflicts: 2
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time
        "#]],
        );
    }

    #[test]
    fn retry_after_the_edit_landed_changes_nothing() {
        // An appended section (a pure insertion) must not be appended twice.
        let base = "# T\n\nSummary.\n";
        let new = "\nSummary.\n\n## Added\n\nfresh\n";
        let patch = Patch::compute(base, new);
        let once = applied(base, &patch.apply_to(base).edits);
        check_race(
            base,
            new,
            &once,
            expect![[r#"
                conflicts: 0
                ----
                # T

                Summary.

                ## Added

                fresh
            "#]],
        );
        // Even when the user typed above it in between.
        check_race(
            base,
            new,
            &once.replace("Summary.", "Mine.\n\nSummary."),
            expect![[r#"
                conflicts: 0
                ----
                # T

                Mine.

                Summary.

                ## Added

                fresh
            "#]],
        );
        // With no H1 the agent owns the whole body, even once its output brought an H1.
        let bare = "---\na: 1\n---\n";
        let once = applied(bare, &Patch::compute(bare, "# Made\n\nfresh\n").apply_to(bare).edits);
        check_race(
            bare,
            "# Made\n\nfresh\n",
            &once,
            expect![[r#"
            conflicts: 0
            ----
            ---
            a: 1
            ---
            # Made

            fresh
        "#]],
        );
        let empty = "# T\n";
        let once = applied(empty, &Patch::compute(empty, "fresh\n").apply_to(empty).edits);
        check_race(
            empty,
            "fresh\n",
            &once,
            expect![[r#"
            conflicts: 0
            ----
            # T

            fresh
        "#]],
        );
    }

    #[test]
    fn race_on_an_empty_body() {
        let base = "---\na: 1\n---\n# T\n";
        check_race(
            base,
            "fresh\n",
            base,
            expect![[r#"
            conflicts: 0
            17..17 "\nfresh\n"
            ----
            ---
            a: 1
            ---
            # T

            fresh
        "#]],
        );
        check_race(
            base,
            "fresh\n",
            "---\na: 1\n---\n# T\nmine\n",
            expect![[r#"
            conflicts: 1
            ----
            ---
            a: 1
            ---
            # T
            mine
        "#]],
        );
        // The frontmatter got broken meanwhile: no body to write to.
        check_race(
            base,
            "fresh\n",
            "---\na: 1\n# T\n",
            expect![[r#"
            conflicts: 1
            ----
            ---
            a: 1
            # T
        "#]],
        );
    }

    #[test]
    fn race_with_repeated_lines_picks_the_nearest() {
        let base = "# T\n\n- a\n- x\n- b\n- a\n- x\n- b\n- a\n- x\n- b\n- a\n- x\n- b\n";
        // The agent changes the second `- x`, whose context the third one shares.
        let new = "\n- a\n- x\n- b\n- a\n- y\n- b\n- a\n- x\n- b\n- a\n- x\n- b\n";
        // The user inserted a line at the top, shifting everything by one.
        let current = base.replace("# T\n\n", "# T\n\n- new\n");
        check_race(
            base,
            new,
            &current,
            expect![[r#"
            conflicts: 0
            27..31 "- y\n"
            ----
            # T

            - new
            - a
            - x
            - b
            - a
            - y
            - b
            - a
            - x
            - b
            - a
            - x
            - b
        "#]],
        );
    }

    /// A generated note and where its parts are.
    #[derive(Debug, Clone)]
    struct Note {
        text: String,
        crlf: bool,
    }

    const LINES: [&str; 9] = ["", "a", "b", "- x", "## S", "  ", "é ü", "`c`", "# B"];

    fn line() -> impl Strategy<Value = &'static str> {
        prop::sample::select([&LINES[..], &["keep"]].concat())
    }

    /// A note: optional BOM and frontmatter (closed, closed at the end of the file without a
    /// newline, or unterminated), text above the H1, an optional H1, body lines.
    fn note() -> impl Strategy<Value = Note> {
        note_with(0..4u8)
    }

    /// A note whose frontmatter is of the kinds `fm` gives: 0 none, 1 closed, 2 closed at the
    /// end of the file, 3 unterminated.
    fn note_with(fm: impl Strategy<Value = u8>) -> impl Strategy<Value = Note> {
        let parts = (
            any::<bool>(),
            any::<bool>(),
            fm,
            prop::collection::vec(line(), 0..3),
            prop::collection::vec(line(), 0..3),
            0..3u8,
            prop::collection::vec(line(), 0..8),
            any::<bool>(),
        );
        parts.prop_map(|(crlf, bom, fm, fm_lines, above, h1, body, final_nl)| {
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut text = String::from(if bom { "\u{feff}" } else { "" });
            let join = |lines: &[&str]| lines.iter().map(|l| format!("{l}{nl}")).collect::<String>();
            match fm {
                1 => text += &format!("---{nl}{}---{nl}", join(&fm_lines)),
                2 => return Note { text: text + &format!("---{nl}{}---", join(&fm_lines)), crlf },
                3 => return Note { text: text + &format!("---{nl}{}", join(&fm_lines)), crlf },
                _ => {}
            }
            text += &join(&above);
            match h1 {
                1 => text += &format!("# Title{nl}"),
                2 => return Note { text: text + "# Title", crlf },
                _ => {}
            }
            text += &body.join(nl);
            if final_nl && !body.is_empty() {
                text += nl;
            }
            Note { text, crlf }
        })
    }

    /// A provider's output: lines joined by LF or CRLF, with or without a final newline.
    fn output() -> impl Strategy<Value = String> {
        (prop::collection::vec((line(), any::<bool>()), 0..8), any::<bool>()).prop_map(|(lines, last)| {
            let mut out = String::new();
            for (i, (l, crlf)) in lines.iter().enumerate() {
                out += l;
                if i + 1 < lines.len() || last {
                    out += if *crlf { "\r\n" } else { "\n" };
                }
            }
            out
        })
    }

    fn content_lines(s: &str) -> Vec<&str> {
        s.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
    }

    fn blank_first(s: &str) -> bool {
        !s.is_empty() && s.split('\n').next().unwrap_or_default().trim().is_empty()
    }

    fn has_h1(text: &str) -> bool {
        let start = locate(text).map_or(bom_len(text), |fm| fm.body_start());
        h1_line(text, start).is_some()
    }

    fn edits_are_ordered(edits: &[TextEdit], region: &Range<usize>) -> Result<(), TestCaseError> {
        for e in edits {
            prop_assert!(
                region.start <= e.range.start && e.range.end <= region.end,
                "{e:?} outside {region:?}"
            );
        }
        for w in edits.windows(2) {
            // Runs of changes are separated by at least one unchanged line.
            prop_assert!(w[0].range.end < w[1].range.start, "{:?} and {:?} touch", w[0], w[1]);
        }
        Ok(())
    }

    /// Text made of the tokens that matter to the rules, for the never-panics property.
    fn soup() -> impl Strategy<Value = String> {
        let token = prop::sample::select(vec![
            "---", "...", "\n", "\r\n", "\r", "# ", "#", "a", "b", " ", "é", "\u{feff}", "```", ":", "- x\n",
        ]);
        prop::collection::vec(token, 0..40).prop_map(|t| t.concat())
    }

    proptest! {
        #[test]
        fn replace_keeps_the_rest_and_writes_the_output(note in note(), output in output()) {
            let text = &note.text;
            let region = agent_region(text);
            let edits = replace_region_edits(text, &output);
            edits_are_ordered(&edits, &region)?;
            let out = apply(text, &edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if locate(text).is_some_and(|fm| fm.close.is_none()) {
                prop_assert!(edits.is_empty());
                return Ok(());
            }
            // Frontmatter, text above the H1 and the H1 itself are byte-identical.
            prop_assert!(out.starts_with(&text[..region.start]));
            // A note without any line break has no convention of its own: LF.
            let nl = if note.crlf && text.contains('\n') { "\r\n" } else { "\n" };
            let body = &text[region.clone()];
            // The output less the leading lines that repeat the note's H1.
            let mut new = output.as_str();
            let start = locate(text).map_or(bom_len(text), |fm| fm.body_start());
            if let Some(own) = title(text, start).filter(|t| first_line_title(body) != Some(*t)) {
                while first_line_title(new) == Some(own) {
                    new = &new[new.find('\n').map_or(new.len(), |i| i + 1)..];
                }
            }
            let mut tail = &out[region.start..];
            let needs_break = body.is_empty() && !text.is_empty() && !text.ends_with('\n') && text != "\u{feff}";
            if needs_break && !new.is_empty() {
                prop_assert!(tail.starts_with(nl), "no line break before the content: {tail:?}");
                tail = &tail[nl.len()..];
            }
            if has_h1(text) {
                prop_assert_eq!(agent_region(&out).start, out.len() - tail.len());
            }
            // Every line ending is the note's.
            prop_assert_eq!(tail.matches('\n').count(), tail.matches(nl).count());
            if nl == "\n" {
                prop_assert!(!tail.contains('\r'));
            }
            // Modulo line endings, the region is the output, plus the blank line under the H1
            // and the final newline the rules add.
            let mut want: Vec<&str> = Vec::new();
            if !new.is_empty() {
                let blank_region = body.is_empty() || blank_first(body);
                if has_h1(text) && blank_region && !blank_first(new) {
                    want.push("");
                }
                want.extend(content_lines(new));
                let final_nl = if body.is_empty() { !needs_break } else { body.ends_with('\n') };
                if final_nl && !new.ends_with('\n') {
                    want.push("");
                }
            }
            let got = if tail.is_empty() { Vec::new() } else { content_lines(tail) };
            prop_assert_eq!(got, want);
            // Writing the same output again changes nothing (unless it brought the first H1).
            if agent_region(&out).start == out.len() - tail.len() {
                prop_assert_eq!(replace_region_edits(&out, &output), vec![]);
            }
            prop_assert_eq!(replace_region_edits(text, &text[region]), vec![]);
        }

        #[test]
        fn unchanged_blocks_are_never_edited(
            a in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
            a2 in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
            c in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
            c2 in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
        ) {
            let lines = |v: &[&str]| v.iter().map(|l| format!("{l}\n")).collect::<String>();
            // Longer than `a` and `c` together, so a minimal diff keeps all of it.
            let block: String = (0..12).map(|i| format!("keep{i}\n")).collect();
            let text = format!("# T\n\n{}{block}{}", lines(&a), lines(&c));
            let new = format!("\n{}{block}{}", lines(&a2), lines(&c2));
            let start = 5 + lines(&a).len();
            let inner = start + "keep0\n".len()..start + block.len() - "keep11\n".len();
            let edits = replace_region_edits(&text, &new);
            edits_are_ordered(&edits, &agent_region(&text))?;
            for e in &edits {
                prop_assert!(e.range.end <= inner.start || e.range.start >= inner.end, "{e:?} inside the block");
            }
            prop_assert_eq!(applied(&text, &edits), format!("# T\n{new}"));
        }

        #[test]
        fn user_edits_outside_the_region_never_conflict(
            note in note_with(Just(1)),
            new in output(),
            pick in any::<prop::sample::Index>(),
            word in "[a-z]{1,6}",
        ) {
            let text = &note.text;
            let nl = if note.crlf { "\r\n" } else { "\n" };
            let Some(fm) = locate(text) else { return Ok(()) };
            // Insertion points: a new line at any line start of the frontmatter's content or
            // above the H1, or letters at the end of a frontmatter line.
            let region = agent_region(text);
            let mut spots: Vec<(usize, String)> = Vec::new();
            let mut at = fm.content.start;
            for l in text[fm.content.clone()].split_inclusive('\n') {
                spots.push((at, format!("{word}: x{nl}")));
                let end = at + l.trim_end_matches(['\r', '\n']).len();
                spots.push((end, word.clone()));
                at += l.len();
            }
            spots.push((fm.content.end, format!("{word}: y{nl}")));
            if has_h1(text) {
                let mut at = fm.body_start();
                for l in text[fm.body_start()..region.start].split_inclusive('\n') {
                    spots.push((at, format!("{word}{nl}")));
                    at += l.len();
                }
            }
            let (at, insert) = pick.get(&spots).clone();
            let current = format!("{}{insert}{}", &text[..at], &text[at..]);
            prop_assert_eq!(&current[agent_region(&current)], &text[region.clone()]);

            let patch = Patch::compute(text, &new);
            for cur in [text.as_str(), current.as_str()] {
                let r = patch.apply_to(cur);
                prop_assert_eq!(r.conflicts, 0);
                prop_assert_eq!(&r.edits, &replace_region_edits(cur, &new));
                let out = apply(cur, &r.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let base_out = applied(text, &replace_region_edits(text, &new));
                let cur_region = agent_region(cur);
                prop_assert_eq!(&out[..cur_region.start], &cur[..cur_region.start]);
                prop_assert_eq!(&out[cur_region.start..], &base_out[region.start..]);
                // A retry on the result finds everything done.
                prop_assert_eq!(patch.apply_to(&out), PatchResult::default(), "{:?}", out);
            }
        }

        #[test]
        fn user_lines_in_the_region_are_never_overwritten(
            note in note(),
            new in output(),
            pick in any::<prop::sample::Index>(),
            append in any::<bool>(),
        ) {
            let text = &note.text;
            let region = agent_region(text);
            let nl = if note.crlf { "\r\n" } else { "\n" };
            // The user adds a line, or appends to one, somewhere in the region.
            let mut spots = vec![region.start];
            spots.extend(text[region.clone()].match_indices('\n').map(|(i, _)| region.start + i + 1));
            let at = *pick.get(&spots);
            let current = if append && at > region.start {
                let end = if text[..at - 1].ends_with('\r') { at - 2 } else { at - 1 };
                format!("{} USER{}", &text[..end], &text[end..])
            } else if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
                format!("{text}{nl}USER")
            } else {
                format!("{}USER{nl}{}", &text[..at], &text[at..])
            };
            let patch = Patch::compute(text, &new);
            let r = patch.apply_to(&current);
            edits_are_ordered(&r.edits, &agent_region(&current))?;
            let out = apply(&current, &r.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
            // A retry on the result may still find work where the user's edit broke a hunk's
            // context (it cannot always tell "to do" from "done" then), but never costs the
            // user's line either.
            let retry = patch.apply_to(&out);
            let again = apply(&out, &retry.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
            // A deleted blank line can join the user's line to a BOM; the line itself is intact.
            let current = current.replace('\u{feff}', "");
            let user_line = current.lines().find(|l| l.contains("USER")).unwrap_or_default();
            for out in [out, again] {
                let out = out.replace('\u{feff}', "");
                prop_assert!(out.lines().any(|l| l == user_line), "lost {user_line:?}:\n{out:?}");
            }
        }

        #[test]
        fn never_panics(base in soup(), new in soup(), splice in soup(), pick in any::<prop::sample::Index>()) {
            let region = agent_region(&base);
            prop_assert!(region.start <= region.end && region.end == base.len());
            prop_assert!(base.is_char_boundary(region.start));
            let edits = replace_region_edits(&base, &new);
            prop_assert!(apply(&base, &edits).is_ok());
            // The user typed anywhere, frontmatter and H1 included.
            let spots: Vec<usize> = (0..=base.len()).filter(|i| base.is_char_boundary(*i)).collect();
            let at = *pick.get(&spots);
            let current = format!("{}{splice}{}", &base[..at], &base[at..]);
            let r = Patch::compute(&base, &new).apply_to(&current);
            prop_assert!(r.conflicts <= Patch::compute(&base, &new).hunks().len());
            // Never in the frontmatter; below the H1 unless the base had none (then the agent
            // owned the whole body, whatever the user added since).
            let body_start = locate(&current).map_or(bom_len(&current), |fm| fm.body_start());
            let floor = if has_h1(&base) { agent_region(&current).start } else { body_start };
            for e in &r.edits {
                prop_assert!(floor <= e.range.start && e.range.end <= current.len(), "{e:?}");
            }
            prop_assert!(apply(&current, &r.edits).is_ok());
        }
    }
}
