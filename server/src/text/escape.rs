//! Text from notes, file names and the folder, made safe to print on a terminal: a name or a
//! field holding `ESC [2J` (clear the screen) or an OSC sequence (set the window title, write
//! the clipboard) must show as text, not act. One home, for every line the CLI prints
//! in text form (JSON output is escaped by serde already).

use std::borrow::Cow;
use std::fmt::Write;

/// `s` with every control character (C0, DEL and C1: `char::is_control`) written as an escape
/// a reader can see: `\n`, `\r`, `\t`, else `\x1b`-style for one byte and `\u{9b}`-style
/// above. A newline is escaped too, so one field stays one line. Borrowed when nothing needs
/// escaping, which is nearly always.
pub fn terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && u32::from(c) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_show_as_escapes() {
        assert!(matches!(terminal("plain – ü 日本"), Cow::Borrowed(_)));
        assert_eq!(terminal("a\u{1b}[2Jb.md"), "a\\x1b[2Jb.md");
        assert_eq!(terminal("\u{1b}]0;pwned\u{7}"), "\\x1b]0;pwned\\x07");
        assert_eq!(terminal("x\u{9b}31m\u{7f}"), "x\\u{9b}31m\\x7f");
        assert_eq!(terminal("two\nlines\r\tx"), "two\\nlines\\r\\tx");
    }
}
