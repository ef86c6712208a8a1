//! The agent: a model that keeps a note up to date through patch-style tools (SPEC section 4).
//!
//! Below `providers/` (which hands it a client from `model::client_for`), above `run_types`
//! (the request it runs and the outcome it returns) and `model` (the conversation): it imports
//! nothing from `providers/` or `runs/`.

pub mod prompt;
pub mod run;
pub mod tools;
