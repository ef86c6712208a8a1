//! Sync conflict copies: the file a sync tool writes beside a note when two machines changed
//! it at once. Such a copy carries the note's `live:` block, so without this rule it would run
//! as a second note, on every machine, and make more conflicts. Pure: a file name in, the tool
//! and the original's name out.
//!
//! Only names no person writes by chance are recognised:
//! - Syncthing: `notes.sync-conflict-20261123-101502-ABCDEF7.md`
//! - Dropbox, Nextcloud, ownCloud: `notes (conflicted copy).md`, `notes (Ann's conflicted copy
//!   2026-11-23).md`, `notes (conflicted copy 2026-11-23 101502).md`
//! - Seafile: `notes (SFConflict ann@example.com 2026-11-23-10-15-02).md`
//! - the tools that mark a copy `.conflict-` with a stamp or an id: `notes.conflict-20261123.md`,
//!   `notes.conflict-1a2b3c.md` (the mark followed by letters, digits and dashes, with a digit)
//!
//! Not recognised, because they are names people choose too: iCloud's `notes 2.md`,
//! OneDrive's `notes-LAPTOP.md`, `notes.conflict-resolution.md` (no digit: a word).

use super::diagnostic::{Code, Diagnostic};
use super::model::Live;

/// A file recognised as a sync tool's conflict copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictCopy {
    /// The tool that writes such names.
    pub tool: &'static str,
    /// The file name of the note it is a copy of.
    pub original: String,
}

/// Whether `file_name` (a name, not a path) is a sync tool's conflict copy.
pub fn conflict_copy(file_name: &str) -> Option<ConflictCopy> {
    let (stem, ext) = match file_name.rfind('.') {
        Some(i) if i > 0 => file_name.split_at(i),
        _ => (file_name, ""),
    };
    syncthing(stem, ext).or_else(|| parenthesised(stem, ext)).or_else(|| marked(stem, ext))
}

/// `<stem>.conflict-<stamp or id><ext>`, the stamp or id made of letters, digits and dashes
/// with at least one digit (a word after the mark is a name someone chose).
fn marked(stem: &str, ext: &str) -> Option<ConflictCopy> {
    const MARK: &str = ".conflict-";
    let at = stem.rfind(MARK)?;
    let tag = &stem[at + MARK.len()..];
    let ok = at > 0
        && !tag.is_empty()
        && tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && tag.bytes().any(|b| b.is_ascii_digit());
    ok.then(|| ConflictCopy { tool: "a sync tool", original: format!("{}{ext}", &stem[..at]) })
}

/// Whether the file at `path` is a conflict copy, by its name: such a note is never run on its
/// own (scheduler, events, `tick`), however due its copied block says it is.
pub fn is_conflict_copy(path: &std::path::Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).and_then(conflict_copy).is_some()
}

/// `<stem>.sync-conflict-<YYYYMMDD>-<HHMMSS>-<device id><ext>`.
fn syncthing(stem: &str, ext: &str) -> Option<ConflictCopy> {
    const MARK: &str = ".sync-conflict-";
    let at = stem.rfind(MARK)?;
    let rest = &stem[at + MARK.len()..];
    let mut parts = rest.splitn(3, '-');
    let date = parts.next()?;
    let time = parts.next()?;
    let device = parts.next()?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let ok = digits(date, 8)
        && digits(time, 6)
        && !device.is_empty()
        && device.bytes().all(|b| b.is_ascii_alphanumeric())
        && at > 0;
    ok.then(|| ConflictCopy { tool: "Syncthing", original: format!("{}{ext}", &stem[..at]) })
}

/// `<stem> (<… conflicted copy …>)<ext>` (Dropbox, Nextcloud, ownCloud) and `<stem>
/// (SFConflict …)<ext>` (Seafile).
fn parenthesised(stem: &str, ext: &str) -> Option<ConflictCopy> {
    let inner = stem.strip_suffix(')')?;
    let open = inner.rfind(" (")?;
    let (base, note) = (&inner[..open], &inner[open + 2..]);
    if base.is_empty() {
        return None;
    }
    let tool = if note.to_lowercase().contains("conflicted copy") {
        "Dropbox, Nextcloud or ownCloud"
    } else if note.starts_with("SFConflict ") {
        "Seafile"
    } else {
        return None;
    };
    Some(ConflictCopy { tool, original: format!("{base}{ext}") })
}

/// `live/sync-conflict-copy` on the `live` key of a conflict copy: what the file is, that it
/// does not run, and what to do with it.
pub fn diagnostics(file_name: &str, live: Option<&Live>) -> Vec<Diagnostic> {
    let (Some(copy), Some(live)) = (conflict_copy(file_name), live) else { return Vec::new() };
    let message = format!(
        "this file is a sync conflict copy of {} made by {}; it never runs on its own: keep what you need in {} and delete this file",
        copy.original, copy.tool, copy.original
    );
    vec![Diagnostic::warning(Code::SyncConflictCopy, live.key_span.clone(), message)]
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_common_tools_names_are_recognised_with_their_original() {
        let cases = [
            ("notes.sync-conflict-20261123-101502-ABCDEF7.md", Some(("Syncthing", "notes.md"))),
            ("a.b.sync-conflict-20261123-101502-7ZZ.md", Some(("Syncthing", "a.b.md"))),
            ("notes (conflicted copy).md", Some(("Dropbox, Nextcloud or ownCloud", "notes.md"))),
            (
                "notes (Ann's conflicted copy 2026-11-23).md",
                Some(("Dropbox, Nextcloud or ownCloud", "notes.md")),
            ),
            (
                "notes (Conflicted copy 2026-11-23 101502).md",
                Some(("Dropbox, Nextcloud or ownCloud", "notes.md")),
            ),
            ("notes (SFConflict ann@example.com 2026-11-23-10-15-02).md", Some(("Seafile", "notes.md"))),
            ("notes.conflict-20261123-101502.md", Some(("a sync tool", "notes.md"))),
            ("q3.plan.conflict-1a2b3c.md", Some(("a sync tool", "q3.plan.md"))),
        ];
        for (name, want) in cases {
            let got = conflict_copy(name);
            let got = got.as_ref().map(|c| (c.tool, c.original.as_str()));
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn names_people_choose_are_not_copies() {
        for name in [
            "notes.md",
            "notes 2.md",
            "notes (draft).md",
            "notes.conflict-resolution.md",
            "notes.conflict-.md",
            ".conflict-2026.md",
            "notes.conflict-v2 draft.md",
            "sync-conflict-notes.md",
            "notes.sync-conflict-2026-101502-A.md",
            ".sync-conflict-20261123-101502-A.md",
            " (conflicted copy).md",
            "meeting (copy).md",
        ] {
            assert_eq!(conflict_copy(name), None, "{name}");
        }
    }

    proptest! {
        /// Any note name with a Syncthing or Dropbox suffix is a copy of exactly that note;
        /// the matcher never panics on any name.
        #[test]
        fn a_copys_original_is_the_name_it_was_made_from(
            stem in "[a-zA-Z0-9 _.-]{1,20}",
            date in "[0-9]{8}",
            time in "[0-9]{6}",
            device in "[A-Z0-9]{1,7}",
            junk in "\\PC{0,40}",
        ) {
            prop_assume!(!stem.starts_with('.') && !stem.ends_with('.'));
            let name = format!("{stem}.sync-conflict-{date}-{time}-{device}.md");
            prop_assert_eq!(conflict_copy(&name).map(|c| c.original), Some(format!("{stem}.md")));
            let name = format!("{stem} (conflicted copy).md");
            prop_assume!(!stem.trim().is_empty());
            prop_assert_eq!(conflict_copy(&name).map(|c| c.original), Some(format!("{stem}.md")));
            let _ = conflict_copy(&junk);
        }
    }
}
