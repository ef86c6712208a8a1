//! The agent: a model that keeps a note up to date through patch-style tools (SPEC section 4).

pub mod prompt;
pub mod run;
pub mod tools;
