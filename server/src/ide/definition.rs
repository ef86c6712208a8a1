//! Go to definition inside a note's frontmatter: an entry of `skills` leads to its skill's
//! file. A built-in skill has no file to open (its guidance is shown on hover and by
//! `livenote skills`), and an unknown one none either.

use std::ops::Range;
use std::path::PathBuf;

use chrono::TimeZone;

use super::Ctx;
use crate::note::model::Spanned;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// Bytes of the entry the cursor is on.
    pub origin: Range<usize>,
    /// The file to open, at its start.
    pub path: PathBuf,
}

/// The definition at byte `offset` of the note, if any.
pub fn definition<Tz: TimeZone>(ctx: &Ctx<Tz>, offset: usize) -> Option<Definition> {
    let entry = skill_at(ctx, offset)?;
    let path = ctx.skills.get(&entry.value)?.path.clone()?;
    Some(Definition { origin: entry.span.clone(), path })
}

/// The entry of `skills` under the cursor, as the validated block read it.
pub(super) fn skill_at<'a, Tz: TimeZone>(ctx: &'a Ctx<Tz>, offset: usize) -> Option<&'a Spanned<String>> {
    let skills = ctx.analysis.live.as_ref()?.skills.as_ref()?;
    skills.iter().find(|e| e.span.start <= offset && offset <= e.span.end)
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{cursor, with_ctx};
    use super::*;

    fn at(fixture: &str) -> Option<Definition> {
        let (text, offset) = cursor(fixture);
        with_ctx(&text, Default::default(), |ctx| definition(ctx, offset))
    }

    #[test]
    fn a_workspace_skill_leads_to_its_file_a_built_in_or_unknown_one_nowhere() {
        let d = at("---\nlive:\n  objective: x\n  skills: [week$0ly-digest, writing-live-notes]\n---\n");
        assert_eq!(d, Some(Definition { origin: 36..49, path: PathBuf::from("/w/skills/digest.md") }));
        assert_eq!(
            at("---\nlive:\n  objective: x\n  skills: [weekly-digest, writing-$0live-notes]\n---\n"),
            None
        );
        assert_eq!(at("---\nlive:\n  objective: x\n  skills: [nope$0]\n---\n"), None);
        assert_eq!(at("---\nlive:\n  objective: $0x\n  skills: [weekly-digest]\n---\n"), None);
    }
}
