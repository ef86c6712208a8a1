//! A note: its frontmatter, the `live:` block model, validation and byte-minimal rewrites.
//! Pure functions over text; no I/O, no LSP types.

pub mod frontmatter;
pub mod outline;
pub mod yaml;
