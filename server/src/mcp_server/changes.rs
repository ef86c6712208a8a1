//! The changes livenote's assistants make to a note's `live:` block, as pure functions over its
//! text: `livenote mcp`'s tools and `livenote ask` both write through here, so both extend,
//! refuse and validate alike. Each change is a [`note::rewrite`] edit (byte-minimal, nothing
//! re-serialised) and can be computed again on a newer text: a writer that finds the note
//! changed meanwhile replays the changes on what it finds.

use crate::note::rewrite::{self, TriggerEdits};
use crate::note::{self, Severity, draft};
use crate::text::TextEdit;
use crate::text::edit::apply;

/// One change of a note's block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A passive note gets a block with this objective and triggers; on a live note the
    /// objective is extended (never replaced) and the triggers given are set.
    MakeLive { objective: String, triggers: TriggerEdits },
    /// The objective with this said too: the user's words kept as they are, the addition after
    /// them ([`draft::extend`]).
    ExtendObjective(String),
    /// The triggers given replaced (`Some("")` / `Some([])` removes one), the others kept.
    SetTriggers(TriggerEdits),
    /// Pause (`false`) or resume (`true`).
    SetActive(bool),
    /// The `live:` block removed; the body stays.
    MakePassive,
}

impl Change {
    /// The edits of `text` this change makes (empty when it changes nothing).
    pub fn edits(&self, text: &str) -> Result<Vec<TextEdit>, String> {
        match self {
            Change::MakeLive { objective, triggers } => {
                let objective = match draft::current(text) {
                    Some(current) => draft::extend(&current.objective, objective),
                    None => objective.trim().to_owned(),
                };
                if objective.is_empty() {
                    return Err("`objective` is empty: say what the note should keep being".to_owned());
                }
                rewrite::make_live_with(text, &objective, triggers).map_err(|e| e.to_string())
            }
            Change::ExtendObjective(addition) => {
                if addition.trim().is_empty() {
                    return Err("`addition` is empty: say what the objective should also cover".to_owned());
                }
                let current =
                    draft::current(text).ok_or_else(|| rewrite::RewriteError::NotLive.to_string())?;
                let objective = draft::extend(&current.objective, addition);
                if objective == current.objective {
                    return Ok(Vec::new());
                }
                rewrite::make_live_with(text, &objective, &TriggerEdits::default()).map_err(|e| e.to_string())
            }
            Change::SetTriggers(triggers) => {
                if draft::current(text).is_none() {
                    return Err(rewrite::RewriteError::NotLive.to_string());
                }
                if triggers == &TriggerEdits::default() {
                    return Err(
                        "no trigger given: pass `cronExpr`, `windows` or `eventMatchCriteria`".to_owned()
                    );
                }
                rewrite::make_live_with(text, "", triggers).map_err(|e| e.to_string())
            }
            Change::SetActive(active) => rewrite::set_active(text, *active).map_err(live_only),
            Change::MakePassive => rewrite::make_passive(text).map_err(live_only),
        }
    }

    /// The name of the tool that makes this change, as `livenote mcp` and `livenote ask` call it.
    pub fn tool(&self) -> &'static str {
        match self {
            Change::MakeLive { .. } => "make_live",
            Change::ExtendObjective(_) => "extend_objective",
            Change::SetTriggers(_) => "set_triggers",
            Change::SetActive(_) => "set_active",
            Change::MakePassive => "make_passive",
        }
    }
}

/// `text` after `changes`, each on the text the previous one left, refused when the result has
/// an error the note did not have before (a note with an error already can still be paused or
/// made passive): the edits of the whole, over `text`, and the new text.
pub fn checked(
    text: &str,
    changes: &[Change],
    options: &note::Options<'_>,
) -> Result<(Vec<TextEdit>, String), String> {
    let mut after = text.to_owned();
    for change in changes {
        let edits = change.edits(&after)?;
        after = apply(&after, &edits).map_err(|e| e.to_string())?;
    }
    let new = new_errors(text, &after, options);
    if !new.is_empty() {
        return Err(format!("refused, nothing was written: the note would have errors:\n{}", new.join("\n")));
    }
    Ok((whole_edit(text, &after), after))
}

/// The errors of `after` that `before` does not have (by code and message), as
/// `code message` lines.
fn new_errors(before: &str, after: &str, options: &note::Options<'_>) -> Vec<String> {
    let errors = |text: &str| -> Vec<String> {
        note::analyze(text, options)
            .diagnostics
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| format!("error {} {}", d.code.as_str(), d.message))
            .collect()
    };
    let mut had = errors(before);
    errors(after)
        .into_iter()
        .filter(|e| match had.iter().position(|h| h == e) {
            Some(i) => {
                had.swap_remove(i);
                false
            }
            None => true,
        })
        .collect()
}

/// One edit from `before` to `after`: the span between their common start and common end, so
/// that an editor's undo takes the whole change back at once and nothing else moves.
pub fn whole_edit(before: &str, after: &str) -> Vec<TextEdit> {
    if before == after {
        return Vec::new();
    }
    let prefix = before.bytes().zip(after.bytes()).take_while(|(a, b)| a == b).count();
    let mut prefix = prefix;
    while !before.is_char_boundary(prefix) || !after.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = before.len().min(after.len()) - prefix;
    let mut suffix =
        before.bytes().rev().zip(after.bytes().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    while !before.is_char_boundary(before.len() - suffix) || !after.is_char_boundary(after.len() - suffix) {
        suffix -= 1;
    }
    vec![TextEdit::replace(prefix..before.len() - suffix, &after[prefix..after.len() - suffix])]
}

/// Why a rewrite of a live note's block failed; a note without frontmatter is just not live.
pub fn live_only(e: rewrite::RewriteError) -> String {
    match e {
        rewrite::RewriteError::NoFrontmatter => rewrite::RewriteError::NotLive.to_string(),
        e => e.to_string(),
    }
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
