//! The notes on disk: finding them (gitignore-aware, `.livenote/` skipped, symlink loops safe)
//! and reading them with caps, so that binary, huge or non-UTF-8 files are skipped with a
//! reason instead of breaking anything.

pub mod confine;
pub mod exclude;
pub mod given;
pub mod index;
pub mod launch;
pub mod note_path;
pub mod read;
pub mod roots;
pub mod state;
pub mod trust;
pub mod walk;
pub mod write;

pub use note_path::NotePath;
pub use read::{ReadError, Skipped, read_frontmatter, read_head, read_note, read_text};
pub use walk::{is_markdown, is_visible, markdown_files, visible_entries};

/// The folder of livenote's own state in a workspace (history, transcripts, events, locks):
/// never walked for notes, never shown to the agent.
pub const STATE_DIR: &str = ".livenote";

/// The workspace of a note opened on its own (`livenote run NOTE`, an editor with no folder
/// open): the nearest folder above it with `.livenote.toml`, `.livenote/` or `.git`, else the
/// note's folder.
pub fn note_root(note: &std::path::Path) -> std::path::PathBuf {
    let start = note.parent().unwrap_or(note);
    for dir in start.ancestors() {
        if [".livenote.toml", ".livenote", ".git"].iter().any(|m| dir.join(m).exists()) {
            return dir.to_path_buf();
        }
    }
    start.to_path_buf()
}

/// The program of a configured command (a `command` provider, an MCP server): a relative
/// path with a slash (`./scripts/agent.sh`) means the workspace's file, whatever the
/// platform's spawn does with relative paths; a bare name is looked up in PATH. On Windows a
/// backslash counts as a slash (`.\scripts\agent.cmd`).
pub fn program_path(program: &str, root: &std::path::Path) -> std::path::PathBuf {
    let p = std::path::Path::new(program);
    if p.is_relative() && program.contains(std::path::is_separator) { root.join(p) } else { p.to_path_buf() }
}

/// `path.starts_with(base)` (whole components), quicker for the common case: when `path`'s
/// bytes are `base`'s followed by a separator (or nothing), the components are too, without
/// parsing either; otherwise `Path::starts_with` decides. Index-wide requests ask this for
/// every note and root.
pub fn is_within(path: &std::path::Path, base: &std::path::Path) -> bool {
    let (p, b) = (path.as_os_str().as_encoded_bytes(), base.as_os_str().as_encoded_bytes());
    let at_boundary = p.len() == b.len()
        || b.last().is_some_and(|&c| std::path::is_separator(c.into()))
        || p.get(b.len()).is_some_and(|&c| std::path::is_separator(c.into()));
    (p.starts_with(b) && !b.is_empty() && at_boundary) || path.starts_with(base)
}

#[cfg(test)]
mod is_within_tests {
    use std::path::Path;

    use super::is_within;

    #[test]
    fn agrees_with_path_starts_with() {
        let paths =
            ["/a/b/c.md", "/a/b", "/a/bc/d.md", "/a//b/c.md", "/a/./b/c.md", "a/b.md", "/", "", "/a/b/"];
        let bases = ["/a/b", "/a/b/", "/a", "/", "/a/bc", "/a//b", "a", "", "/a/./b", "/x"];
        for p in paths {
            for b in bases {
                assert_eq!(is_within(Path::new(p), Path::new(b)), Path::new(p).starts_with(b), "{p} in {b}");
            }
        }
    }
}
