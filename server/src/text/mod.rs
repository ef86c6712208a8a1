//! Plain text plumbing shared by every layer: byte offsets to line/column positions in any
//! encoding, text edits expressed as byte ranges, a note's line ending (`eol`), did-you-mean
//! distances, counted nouns, text made safe for a terminal and HTML as text (`html`).

pub mod count;
pub mod edit;
pub mod eol;
pub mod escape;
pub mod html;
pub mod line_index;
pub mod short;
pub mod words;

pub use count::count;
pub use edit::TextEdit;
pub use eol::Eol;
pub use line_index::{Encoding, LineCol, LineIndex};
