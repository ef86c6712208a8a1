//! The notes on disk: finding them (gitignore-aware, `.livenote/` skipped, symlink loops safe)
//! and reading them with caps, so that binary, huge or non-UTF-8 files are skipped with a
//! reason instead of breaking anything.

pub mod confine;
pub mod index;
pub mod read;
pub mod trust;
pub mod walk;
pub mod write;

pub use read::{ReadError, read_frontmatter, read_note};
pub use walk::{is_markdown, markdown_files};
