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
//! - **Line endings.** The provider's output is rewritten to the note's line ending
//!   ([`Eol::of`]: the one most of the note's lines end with, on a tie its first line's, else
//!   `\n`). In a note whose endings are mixed, region lines with the other ending differ from
//!   the output's, so a run rewrites them: the region comes out in the note's ending.
//! - **No new frontmatter.** In a note without frontmatter or H1 the region starts the note;
//!   output that would then open with a `---` line (a frontmatter) gets a blank line in front,
//!   so it stays body text.
//! - **Blank line under the H1.** When the note has an H1 and the provider's output does not
//!   start with a blank line of its own, one is added — provided the note currently has a blank
//!   line (or nothing) under the H1. A note whose text sits directly under its H1 keeps that
//!   style. Consequently writing back the exact region text (Undo) is a no-op (when the
//!   region's line endings are all the note's; see above), and a provider that prints just
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
use crate::text::{Eol, TextEdit};

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

/// The H1 line of `body` (a note's text below its frontmatter), by the rule [`agent_region`]
/// cuts the region with (`frontmatter::h1_line`).
pub fn body_h1(body: &str) -> Option<Range<usize>> {
    h1_line(body, 0)
}

/// What the agent works on: `region` (the text below the H1, as [`agent_region`] cuts it) with
/// `# {title}` on top, unless its first line already is that H1. The same test as the one by
/// which a [`Patch`] drops an echoed title line, so the H1 the agent is shown is the one the
/// engine strips again. The line ending follows the region's.
pub fn with_title(title: Option<&str>, region: &str) -> String {
    match title.map(str::trim).filter(|t| !t.is_empty()) {
        Some(title) if first_line_title(region) != Some(title) => {
            let nl = Eol::first(region).unwrap_or_default().as_str();
            format!("# {title}{nl}{region}")
        }
        _ => region.to_owned(),
    }
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
                first.new_text.insert_str(0, layout.nl.as_str());
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
    nl: Eol,
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
        let nl = Eol::of(text);
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
        let mut out = self.nl.convert(new_content).into_owned();
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
            out.insert_str(0, self.nl.as_str());
        }
        if self.ends_with_newline && !out.ends_with('\n') {
            out.push_str(self.nl.as_str());
        }
        // (After the BOM the note may have: a second U+FEFF is text.)
        if self.starts_note && locate(&format!("{}{out}", &"\u{feff}"[..self.region.start])).is_some() {
            out.insert_str(0, self.nl.as_str());
        }
        out
    }

    /// An edit of the region, terminating the line before an empty region when content goes in.
    fn edit(&self, range: Range<usize>, mut new_text: String) -> TextEdit {
        if self.needs_break && range.start == self.region.start && !new_text.is_empty() {
            new_text.insert_str(0, self.nl.as_str());
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
#[path = "body_tests.rs"]
mod tests;
