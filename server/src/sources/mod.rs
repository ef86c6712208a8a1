//! Sources: producers of events from the world outside the notes (docs/sources.md). This
//! branch holds the HTTP/file fetch and the feed and calendar parsers; the poller, the seen
//! state and the other kinds sit beside them.

pub mod feed;
pub mod fetch;
pub mod ics;
pub mod version;
