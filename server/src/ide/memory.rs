//! The agent's memory in the editor: the *Clear agent memory* action, offered on a live note
//! whose memory holds entries (or cannot be read, so that it can be cleared), and the entry
//! count on the `live` key's hover. The count is looked up by the LSP layer (a file under
//! `.livenote/memory/`); here it is only shown.

use chrono::TimeZone;

use super::actions::{Action, ActionKind};
use super::hover::Hover;
use super::{Command, Ctx, commands};

/// What the LSP layer found of a note's memory: its entry count, or why it cannot be read.
pub type Entries = Result<usize, String>;

/// *Clear agent memory*, when the note is live and has a memory to clear.
pub fn clear_action<Tz: TimeZone>(ctx: &Ctx<Tz>, entries: &Entries) -> Option<Action> {
    ctx.analysis.live.as_ref()?;
    if matches!(entries, Ok(0)) {
        return None;
    }
    let title = "Clear agent memory";
    Some(Action {
        title: title.to_owned(),
        kind: ActionKind::Source,
        edits: Vec::new(),
        command: Some(Command { title: title.to_owned(), id: commands::CLEAR_MEMORY, args: Vec::new() }),
        diagnostics: Vec::new(),
        preferred: false,
    })
}

/// The hover at `offset`, with the memory's entry count when it is the `live` key's summary
/// (`entries` is asked only then).
pub fn hover<Tz: TimeZone>(ctx: &Ctx<Tz>, offset: usize, entries: impl FnOnce() -> Entries) -> Option<Hover> {
    let mut h = super::hover::hover(ctx, offset)?;
    if ctx.analysis.live.is_some() && super::hover::on_live_key(ctx, offset) {
        h.markdown.push_str("\n\n");
        h.markdown.push_str(&line(&entries()));
    }
    Some(h)
}

fn line(entries: &Entries) -> String {
    match entries {
        Ok(0) => "Agent memory: empty.".to_owned(),
        Ok(n) => format!(
            "Agent memory: {} (`livenote memory NOTE` lists them; *Clear agent memory* forgets them).",
            crate::text::count(*n, "entry")
        ),
        Err(why) => format!("Agent memory: cannot be read: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::fixture::{cursor, with_ctx};
    use crate::status::RunFacts;

    const FACTS: RunFacts = RunFacts {
        running: false,
        trusted: Some(true),
        scheduling_off: false,
        undoable: false,
        scheduled_on: None,
    };

    #[test]
    fn the_action_needs_a_live_note_with_memory() {
        let live = "---\nlive:\n  objective: x\n---\n# N\n";
        with_ctx(live, FACTS, |ctx| {
            assert!(clear_action(ctx, &Ok(0)).is_none());
            let a = clear_action(ctx, &Ok(2)).map(|a| (a.title, a.command.map(|c| c.id)));
            assert_eq!(a, Some(("Clear agent memory".to_owned(), Some(commands::CLEAR_MEMORY))));
            assert!(clear_action(ctx, &Err("bad".to_owned())).is_some());
        });
        with_ctx("# passive\n", FACTS, |ctx| assert!(clear_action(ctx, &Ok(2)).is_none()));
    }

    #[test]
    fn the_count_is_on_the_live_key_only() {
        let (text, at) = cursor("---\nli$0ve:\n  objective: x\n---\n# N\n");
        with_ctx(&text, FACTS, |ctx| {
            let h = hover(ctx, at, || Ok(3)).map(|h| h.markdown).unwrap_or_default();
            assert!(h.ends_with("\n\nAgent memory: 3 entries (`livenote memory NOTE` lists them; *Clear agent memory* forgets them)."), "{h}");
            assert!(h.starts_with("**Live note**"), "{h}");
        });
        let (text, at) = cursor("---\nlive:\n  obj$0ective: x\n---\n# N\n");
        with_ctx(&text, FACTS, |ctx| {
            let h = hover(ctx, at, || Ok(3)).map(|h| h.markdown).unwrap_or_default();
            assert!(!h.contains("Agent memory"), "{h}");
        });
    }
}
