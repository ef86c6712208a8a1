//! `live.maxChars`, the body's budget: how a body is measured and the one rule every writer
//! follows. The run message, the agent's edit tools, the `command` provider and the
//! `live/over-budget` warning all measure and word it here, so they never disagree.
//!
//! - The size is the number of characters (Unicode scalar values) of the body below the
//!   frontmatter, the `# ` title line included: what the user sees as the note.
//! - An edit may not make a body over its budget, unless it makes a body that already was
//!   over it smaller: the agent must be able to trim a note that grew past a budget lowered
//!   after the fact, one section at a time.

/// The characters of `s`.
pub fn chars(s: &str) -> usize {
    s.chars().count()
}

/// The size of a note's body: the characters below its frontmatter (the whole text when it has
/// none).
pub fn body_chars(text: &str) -> usize {
    let start = super::frontmatter::locate(text)
        .map_or_else(|| super::frontmatter::bom_len(text), |fm| fm.body_start());
    chars(text.get(start..).unwrap_or_default())
}

pub use crate::text::count::grouped;

/// "Budget: 1,234 of 4,000 characters", as the run message states it.
pub fn status_line(size: usize, max: usize) -> String {
    let mut s = format!("Budget: {} of {} characters", grouped(size), grouped(max));
    if size > max {
        s.push_str(&format!(" (over budget by {}; trim older sections)", grouped(size - max)));
    }
    s
}

/// Whether a body going from `old` to `new` characters keeps to a budget of `max`; the
/// refusal, worded for the model, when it does not.
pub fn check_edit(max: Option<usize>, old: usize, new: usize) -> Result<(), String> {
    match max {
        Some(max) if new > max && new >= old => Err(format!(
            "over budget by {}; trim older sections: that change would make the note {} characters, and its budget (maxChars) is {}{}",
            grouped(new - max),
            grouped(new),
            grouped(max),
            if old > max {
                format!(" (it is {} now: only changes that shrink it are taken)", grouped(old))
            } else {
                String::new()
            }
        )),
        _ => Ok(()),
    }
}

/// Why a provider's output of `size` characters is refused, for `lastRunError`; `None` within
/// the budget.
pub fn output_error(max: Option<usize>, size: usize) -> Option<String> {
    let max = max.filter(|max| size > *max)?;
    Some(format!(
        "output of {} characters is over budget by {}; trim older sections (maxChars is {})",
        grouped(size),
        grouped(size - max),
        grouped(max)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping() {
        let shown: Vec<String> = [0, 7, 999, 1000, 4532, 1_234_567].into_iter().map(grouped).collect();
        assert_eq!(shown, ["0", "7", "999", "1,000", "4,532", "1,234,567"]);
    }

    #[test]
    fn the_body_is_what_follows_the_frontmatter_title_included() {
        assert_eq!(body_chars("---\nlive:\n  objective: x\n---\n# Té\n"), 5);
        assert_eq!(body_chars("\u{feff}# 東京\n"), 5);
        assert_eq!(body_chars("---\nlive:\n  objective: x\n"), 0);
    }

    #[test]
    fn the_rule() {
        assert_eq!(check_edit(None, 10, 1_000_000), Ok(()));
        assert_eq!(check_edit(Some(100), 50, 100), Ok(()));
        let e = check_edit(Some(100), 50, 101).err().unwrap_or_default();
        assert_eq!(
            e,
            "over budget by 1; trim older sections: that change would make the note 101 characters, and its budget (maxChars) is 100"
        );
        // Over already: shrinking is taken, keeping the size or growing is not.
        assert_eq!(check_edit(Some(100), 150, 149), Ok(()));
        let e = check_edit(Some(100), 150, 150).err().unwrap_or_default();
        assert!(e.starts_with("over budget by 50; trim older sections"), "{e}");
        assert!(e.ends_with("(it is 150 now: only changes that shrink it are taken)"), "{e}");
        assert_eq!(status_line(1234, 4000), "Budget: 1,234 of 4,000 characters");
        assert_eq!(
            status_line(4100, 4000),
            "Budget: 4,100 of 4,000 characters (over budget by 100; trim older sections)"
        );
        assert_eq!(output_error(Some(10), 10), None);
        assert_eq!(
            output_error(Some(10), 12).as_deref(),
            Some("output of 12 characters is over budget by 2; trim older sections (maxChars is 10)")
        );
    }
}
