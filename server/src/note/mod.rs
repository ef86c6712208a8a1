//! A note: its frontmatter, the `live:` block model, validation and byte-minimal rewrites.
//! Pure functions over text; no I/O, no LSP types.

pub mod body;
pub mod budget;
pub mod conflict;
pub mod diagnostic;
pub mod draft;
pub mod expiry;
pub mod fields;
pub mod frontmatter;
pub mod model;
pub mod outline;
pub mod rewrite;
pub mod skills;
pub mod sources;
pub mod tools;
pub mod validate;
pub mod yaml;

pub use diagnostic::{Code, Diagnostic, Fix, Severity};
pub use validate::{Analysis, Options, analyze, instructions_too_long};

#[cfg(test)]
#[path = "eol_tests.rs"]
mod eol_tests;
