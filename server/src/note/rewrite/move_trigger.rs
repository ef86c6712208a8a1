//! The "Move into triggers" quick fix: a trigger key written directly under `live:` (`cron:`,
//! `cronExpr:`, `windows:`, `eventMatchCriteria:` and their aliases) moves under `triggers:`
//! with livenote's name for it, its value, quoting and comments exactly as written.
//!
//! Decisions worth knowing:
//! - The moved lines keep their text; only the key's name and the indentation change, so a
//!   quoted value, a trailing comment or a nested `windows:` list keep what YAML reads from
//!   them (every line of the entry is shifted by the same number of spaces).
//! - A missing `triggers:` is created where *Make live* and `make_live` put it: above the
//!   runtime fields livenote writes, else as the last key of `live:`.
//! - When `triggers:` already has the key, nothing is moved: the two values disagree or
//!   repeat, and only the user knows which one to keep ([`RewriteError::AlreadyInTriggers`]).
//! - Two keys of `live:` meaning the same trigger (`cron` and `cronExpr`) are not moved
//!   either ([`RewriteError::TwiceInLive`]): moved one by one they would collide.
//! - `triggers: {}` (or `null`) counts as empty and is rewritten as a block; any other inline
//!   value of `triggers:` is refused, as other trigger edits refuse it.

use super::*;
use crate::note::fields::{self, Level, Suggestion};

/// Move the entry whose key is on the line containing byte `at`, a child of `live:`, into
/// `triggers:` as `name` (`cronExpr`, `windows` or `eventMatchCriteria`).
pub fn move_into_triggers(text: &str, at: usize, name: &str) -> Result<Vec<TextEdit>, RewriteError> {
    if !matches!(name, "cronExpr" | "windows" | "eventMatchCriteria") {
        return Err(RewriteError::InvalidKeyName(name.to_owned()));
    }
    let doc = Doc::open(text)?;
    let live = doc.live_block()?;
    let i = doc.key_line_at(at)?;
    let o = &doc.outline;
    let Some(key) = o.key(i).filter(|k| k.dash_col.is_none() && live.children.contains(&i)) else {
        return Err(RewriteError::NoKeyAt);
    };
    if key.name == "triggers" {
        return Err(RewriteError::NoKeyAt);
    }
    // Two keys of `live:` that both mean this trigger (`cron` and `cronExpr`) would both land
    // in `triggers:`; applied together (a "fix all") they would write the key twice.
    let twin = live.children.iter().any(|&c| {
        c != i && o.key(c).is_some_and(|k| k.dash_col.is_none() && belongs_in_triggers(&k.name) == Some(name))
    });
    if twin {
        return Err(RewriteError::TwiceInLive(name.to_owned()));
    }
    // An explicit indentation indicator (`|2`) counts from the key's column: shifted lines
    // would change the value.
    if key.value.as_ref().is_some_and(|v| {
        let v = &text[v.clone()];
        v.starts_with(['|', '>']) && v.chars().any(|c| c.is_ascii_digit())
    }) {
        return Err(RewriteError::UnclearLayout);
    }
    let span = doc.removal_span(i);
    let nl = doc.nl();
    let (target_col, at_triggers, mut edits, header) = match doc.child(&live, "triggers")? {
        Some(t) => {
            let (col, insert, edits) = doc.triggers_slot(t, name)?;
            (col, insert, edits, String::new())
        }
        None => {
            let header = format!("{}triggers:{nl}", " ".repeat(live.child_col));
            (live.child_col + 2, doc.before_runtime_fields(&live), Vec::new(), header)
        }
    };
    // The triggers block lies after the `live:` line and is never inside the moved entry, so
    // the shift is positive: every line of the entry gets the same number of spaces added.
    let shift = " ".repeat(target_col.saturating_sub(key.col));
    let mut moved = header;
    let mut pos = span.start;
    for line in text[span.clone()].split_inclusive('\n') {
        if pos == o.lines[i].full.start {
            moved.push_str(&" ".repeat(target_col));
            moved.push_str(name);
            moved.push_str(&text[key.key.end..pos + line.len()]);
        } else {
            if !line.trim_matches([' ', '\t', '\r', '\n']).is_empty() {
                moved.push_str(&shift);
            }
            moved.push_str(line);
        }
        pos += line.len();
    }
    if (span.start..=span.end).contains(&at_triggers) {
        // Right next to where it goes (`cron:` just after `triggers:`'s block): one edit, so
        // the insertion and the removal cannot be ordered the wrong way.
        edits.push(TextEdit::replace(span, moved));
    } else {
        edits.push(TextEdit::delete(span));
        edits.push(TextEdit::insert(at_triggers, moved));
    }
    Ok(edits)
}

/// The name under `triggers:` of a key written directly under `live:`, if it is a trigger.
fn belongs_in_triggers(key: &str) -> Option<&'static str> {
    match fields::suggest(Level::Live, key) {
        Suggestion::Elsewhere(Level::Triggers, to) => Some(to),
        _ => None,
    }
}

impl Doc<'_> {
    /// For a key `name` moving into the `triggers:` entry on line `t`: the column of its
    /// children, where the key goes (after the last child and the comments under it), and the
    /// edits that open an empty inline `triggers: {}` as a block.
    fn triggers_slot(&self, t: usize, name: &str) -> Result<(usize, usize, Vec<TextEdit>), RewriteError> {
        let o = &self.outline;
        let Some(key) = o.key(t) else { return Err(RewriteError::NoKeyAt) };
        let mut edits = Vec::new();
        if let Some(v) = &key.value {
            self.triggers_value_is_empty(v)?;
            let start = self.text[..v.start].trim_end_matches([' ', '\t']).len();
            edits.push(TextEdit::delete(start..v.end));
        }
        self.triggers_block_holds_keys(t)?;
        let children = o.children(t);
        if self.child_in(&children, name)?.is_some() {
            return Err(RewriteError::AlreadyInTriggers(name.to_owned()));
        }
        let col = children.first().and_then(|&c| o.key(c)).map_or(key.col + 2, |k| k.col);
        let end = match children.last() {
            Some(&c) => self.trailing_comments(self.entry_end(c), key.col),
            None => t,
        };
        Ok((col, o.lines[end].full.end, edits))
    }
}

#[cfg(test)]
#[path = "move_trigger_tests.rs"]
mod tests;
