//! Containment (issue 12, docs/security.md): what a folder cloned from a stranger, a model gone
//! wrong or a client sending garbage can make livenote do. Each test reproduces an attack that
//! worked on an earlier build and checks that it no longer does.
//!
//! - `compose`: agent edits compose (disk and editor buffer), conflicts are reported.
//! - `state_dir`: nothing under `.livenote/` is followed through a symlink.
//! - `trust`: an untrusted folder's `.livenote.toml` is not used; trust binds to its content.
//! - `files`: only regular files, only inside the workspace; writes keep links, modes, owners.
//! - `undo`: undo and history never lose work.
//! - `bounds`: the language server and the model stay bounded.
//! - `terminal`: names and fields from the folder reach the terminal as text, never as escapes.
//! - `walk`: a walk stops at a depth bound and costs the same per entry at any depth.
//! - `links`: a link is as visible as its target (agent tools, instructions, MCP paths).
//! - `programs`: the user's programs in an untrusted folder, and signals that end them.
//! - `memory`: `[memory]` quotas hold for a memory file that came with the folder.
//!
//! Time is a `ManualClock` or a clock file; nothing sleeps on the schedule. No network beyond
//! 127.0.0.1.

// Built on Unix calls (nix, std::os::unix, sh); Windows is covered by the platform layer's
// unit tests and the Wine suite.
#![cfg(unix)]

mod common;
mod containment {
    pub mod bounds;
    pub mod compose;
    pub mod files;
    pub mod links;
    pub mod memory;
    pub mod programs;
    pub mod state_dir;
    pub mod terminal;
    pub mod trust;
    pub mod undo;
    pub mod walk;
}
