//! Sources: producers of events from the world outside the notes (issue 24). An edge module:
//! each kind does its own I/O and hands back plain items.

pub mod imap;
