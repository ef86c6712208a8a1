//! The notes on disk: finding them (gitignore-aware, `.livenote/` skipped, symlink loops safe)
//! and reading them with caps, so that binary, huge or non-UTF-8 files are skipped with a
//! reason instead of breaking anything.

pub mod confine;
pub mod exclude;
pub mod index;
pub mod note_path;
pub mod read;
pub mod trust;
pub mod walk;
pub mod write;

pub use note_path::NotePath;
pub use read::{ReadError, read_frontmatter, read_note, read_text};
pub use walk::{is_markdown, markdown_files, visible_entries};

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
