//! Plain text plumbing shared by every layer: byte offsets to line/column positions in any
//! encoding, and text edits expressed as byte ranges.

pub mod edit;
pub mod line_index;

pub use edit::TextEdit;
pub use line_index::{Encoding, LineCol, LineIndex};
