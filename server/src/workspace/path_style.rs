//! Paths as text, the Unix way or the Windows way, whatever this machine is: `\` and `/`,
//! drive letters, UNC shares and `\\?\` prefixes, names compared without case, and the names
//! Windows reads as something else than a file (`a.md:stream`, `CON`, `nul.md`, `a.md.`).
//! Pure functions over `&str`, so that both styles are tested on any machine;
//! [`PathStyle::NATIVE`] is the one place that picks this machine's.

use std::borrow::Cow;

/// How a platform spells and compares paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// `/` only; names compared byte for byte.
    Unix,
    /// `\` and `/`; drive letters, UNC shares; names compared without case (as NTFS does by
    /// default).
    Windows,
}

/// What comes before a path's names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head<'a> {
    /// `notes/a.md`
    Relative,
    /// `/notes` (Unix), `\notes` (Windows: the current drive's root).
    Root,
    /// `C:notes`: relative to the current folder of drive C.
    Drive(char),
    /// `C:\notes`, `\\?\C:\notes`: the drive letter upper-cased.
    DriveRoot(char),
    /// `\\server\share\notes`, `\\?\UNC\server\share\notes`.
    Unc { server: &'a str, share: &'a str },
    /// `\\.\COM1`, `\\?\Volume{…}\`: a device namespace path.
    Device(&'a str),
}

/// A path taken apart: its head and its names, empty and `.` names dropped (`..` kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    pub head: Head<'a>,
    pub parts: Vec<&'a str>,
}

/// Why a path part cannot be a name inside a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadPart {
    /// `..`
    Parent,
    /// A `:`: an alternate data stream (`a.md:secret`) or a drive (`C:`) on Windows.
    Colon,
    /// A Windows device name (`CON`, `nul.md`, `COM1`): opening it opens the device.
    Device,
    /// A character Windows refuses in names (`<>"|?*`), or a trailing dot or space, which
    /// Windows drops (`a.md.` opens `a.md`).
    Reserved,
}

const DEVICES: [&str; 8] = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$", "KEYBOARD$"];

impl PathStyle {
    /// This machine's style: the only `cfg` deciding it.
    pub const NATIVE: PathStyle = if cfg!(windows) { PathStyle::Windows } else { PathStyle::Unix };

    pub fn is_separator(self, c: char) -> bool {
        c == '/' || (self == PathStyle::Windows && c == '\\')
    }

    /// The separator this style writes.
    pub fn separator(self) -> char {
        match self {
            PathStyle::Unix => '/',
            PathStyle::Windows => '\\',
        }
    }

    /// `path`'s head and names.
    pub fn split(self, path: &str) -> Split<'_> {
        let (head, rest) = match self {
            PathStyle::Unix => match path.strip_prefix('/') {
                Some(rest) => (Head::Root, rest),
                None => (Head::Relative, path),
            },
            PathStyle::Windows => windows_head(path),
        };
        let parts = rest.split(|c| self.is_separator(c)).filter(|p| !p.is_empty() && *p != ".").collect();
        Split { head, parts }
    }

    /// Whether `path` is relative to the current folder: no root, drive or share. On Windows
    /// `\notes` and `C:notes` are not (they name another place than the folder they sit in).
    pub fn is_relative(self, path: &str) -> bool {
        self.split(path).head == Head::Relative
    }

    /// Whether two names are the same file name here: byte for byte on Unix, without case on
    /// Windows (Unicode simple case folding, close to NTFS's upcase table).
    pub fn same_name(self, a: &str, b: &str) -> bool {
        match self {
            PathStyle::Unix => a == b,
            PathStyle::Windows => {
                a == b || a.chars().flat_map(char::to_lowercase).eq(b.chars().flat_map(char::to_lowercase))
            }
        }
    }

    /// The form two names or paths are compared (and hashed) in: the text itself on Unix,
    /// lower-cased on Windows.
    pub fn fold(self, s: &str) -> Cow<'_, str> {
        match self {
            PathStyle::Unix => Cow::Borrowed(s),
            PathStyle::Windows if !s.chars().any(char::is_uppercase) => Cow::Borrowed(s),
            // Char by char, as `same_name` compares (no final-sigma rule).
            PathStyle::Windows => Cow::Owned(s.chars().flat_map(char::to_lowercase).collect()),
        }
    }

    fn same_head(self, a: &Head<'_>, b: &Head<'_>) -> bool {
        match (a, b) {
            (Head::Unc { server: s1, share: h1 }, Head::Unc { server: s2, share: h2 }) => {
                self.same_name(s1, s2) && self.same_name(h1, h2)
            }
            (Head::Device(d1), Head::Device(d2)) => self.same_name(d1, d2),
            _ => a == b,
        }
    }

    /// Whether `a` and `b` spell the same path (not resolving `..` or links): `C:\Notes`,
    /// `c:/notes/` and `\\?\C:\NOTES` are one on Windows.
    pub fn same(self, a: &str, b: &str) -> bool {
        let (a, b) = (self.split(a), self.split(b));
        self.same_head(&a.head, &b.head)
            && a.parts.len() == b.parts.len()
            && a.parts.iter().zip(&b.parts).all(|(x, y)| self.same_name(x, y))
    }

    /// The names of `path` below `base`, when `path` is `base` or under it (whole names,
    /// compared the way this style compares them; `..` is not resolved).
    pub fn relative<'p>(self, base: &str, path: &'p str) -> Option<Vec<&'p str>> {
        let (b, mut p) = (self.split(base), self.split(path));
        let under = self.same_head(&b.head, &p.head)
            && b.parts.len() <= p.parts.len()
            && b.parts.iter().zip(&p.parts).all(|(x, y)| self.same_name(x, y));
        under.then(|| p.parts.split_off(b.parts.len()))
    }

    /// Whether `path` is `base` or under it.
    pub fn is_within(self, path: &str, base: &str) -> bool {
        self.relative(base, path).is_some()
    }

    /// Why `part` (one name of a path inside a workspace) cannot be used, if it cannot: `..`
    /// everywhere; on Windows also a `:`, a device name, a reserved character or a trailing
    /// dot or space, each of which makes Windows open something else than the name says.
    pub fn bad_part(self, part: &str) -> Option<BadPart> {
        if part == ".." {
            return Some(BadPart::Parent);
        }
        if self == PathStyle::Unix || part == "." {
            return None;
        }
        // Windows drops trailing dots and spaces, so `.. ` is `..` and `CON .md`'s stem is CON.
        let trimmed = part.trim_end_matches(['.', ' ']);
        if trimmed == ".." || (trimmed.is_empty() && !part.is_empty()) {
            return Some(BadPart::Parent);
        }
        if part.contains(':') {
            return Some(BadPart::Colon);
        }
        let stem = part.split('.').next().unwrap_or(part).trim_end_matches(' ');
        if is_device(stem) {
            return Some(BadPart::Device);
        }
        if part.chars().any(|c| matches!(c, '<' | '>' | '"' | '|' | '?' | '*') || c.is_control())
            || trimmed.len() != part.len()
        {
            return Some(BadPart::Reserved);
        }
        None
    }
}

/// `CON`, `nul`, `COM1`, `LPT¹`…: names Windows opens as devices in every folder.
fn is_device(stem: &str) -> bool {
    let upper = stem.to_ascii_uppercase();
    if DEVICES.contains(&upper.as_str()) {
        return true;
    }
    let numbered = upper.strip_prefix("COM").or_else(|| upper.strip_prefix("LPT"));
    numbered.is_some_and(|n| {
        let mut chars = n.chars();
        matches!((chars.next(), chars.next()), (Some('0'..='9' | '¹' | '²' | '³'), None))
    })
}

/// A Windows path's head and the text after it.
fn windows_head(path: &str) -> (Head<'_>, &str) {
    let sep = |c: char| c == '/' || c == '\\';
    let mut chars = path.chars();
    let (c0, c1, c2, c3) = (chars.next(), chars.next(), chars.next(), chars.next());
    if c0.is_some_and(sep) && c1.is_some_and(sep) {
        // `\\?\…` (verbatim) and `\\.\…` (device namespace).
        if matches!(c2, Some('?' | '.')) && c3.is_some_and(sep) {
            let rest = path.get(4..).unwrap_or("");
            if let Some((drive, after)) = drive_of(rest)
                && (after.is_empty() || after.starts_with(sep))
            {
                return (Head::DriveRoot(drive), after);
            }
            if rest.get(..3).is_some_and(|u| u.eq_ignore_ascii_case("UNC")) && rest[3..].starts_with(sep) {
                return unc(&rest[4..]);
            }
            let end = rest.find(sep).unwrap_or(rest.len());
            return (Head::Device(&rest[..end]), &rest[end..]);
        }
        return unc(&path[2..]);
    }
    if let Some((drive, after)) = drive_of(path) {
        return if after.starts_with(sep) {
            (Head::DriveRoot(drive), after)
        } else {
            (Head::Drive(drive), after)
        };
    }
    if c0.is_some_and(sep) { (Head::Root, &path[1..]) } else { (Head::Relative, path) }
}

/// `X:` at the start of `s`: the drive letter upper-cased and what follows it.
fn drive_of(s: &str) -> Option<(char, &str)> {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(d), Some(':')) if d.is_ascii_alphabetic() => Some((d.to_ascii_uppercase(), &s[2..])),
        _ => None,
    }
}

/// `server\share\rest` after a UNC path's leading `\\`.
fn unc(s: &str) -> (Head<'_>, &str) {
    let sep = |c: char| c == '/' || c == '\\';
    let server_end = s.find(sep).unwrap_or(s.len());
    let server = &s[..server_end];
    let after = s[server_end..].trim_start_matches(sep);
    let share_end = after.find(sep).unwrap_or(after.len());
    (Head::Unc { server, share: &after[..share_end] }, &after[share_end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: PathStyle = PathStyle::Windows;
    const U: PathStyle = PathStyle::Unix;

    #[test]
    fn windows_heads() {
        let split = |s| W.split(s);
        assert_eq!(
            split(r"C:\Users\me\a.md"),
            Split { head: Head::DriveRoot('C'), parts: vec!["Users", "me", "a.md"] }
        );
        assert_eq!(
            split("c:/Users//me/./a.md"),
            Split { head: Head::DriveRoot('C'), parts: vec!["Users", "me", "a.md"] }
        );
        assert_eq!(split(r"\\?\C:\Notes").head, Head::DriveRoot('C'));
        assert_eq!(split("C:notes").head, Head::Drive('C'));
        assert_eq!(split(r"\notes").head, Head::Root);
        assert_eq!(split(r"notes\a.md"), Split { head: Head::Relative, parts: vec!["notes", "a.md"] });
        assert_eq!(
            split(r"\\server\share\notes\a.md"),
            Split { head: Head::Unc { server: "server", share: "share" }, parts: vec!["notes", "a.md"] }
        );
        assert_eq!(split(r"\\?\UNC\server\share\a.md").head, Head::Unc { server: "server", share: "share" });
        assert_eq!(split("//server/share").parts, Vec::<&str>::new());
        assert_eq!(split(r"\\.\COM1").head, Head::Device("COM1"));
        assert_eq!(split(r"..\a.md").parts, vec!["..", "a.md"]);
        assert_eq!(split("").head, Head::Relative);
        // A non-ASCII first character must not be cut in half.
        assert_eq!(split("é:/x").head, Head::Relative);
        assert_eq!(split(r"\\é").head, Head::Unc { server: "é", share: "" });
    }

    #[test]
    fn unix_keeps_backslashes_and_colons_as_name_characters() {
        assert_eq!(U.split(r"/ws/a\b.md"), Split { head: Head::Root, parts: vec!["ws", r"a\b.md"] });
        assert_eq!(U.split("C:/x").head, Head::Relative);
        assert!(U.is_relative(r"C:\x"));
        assert!(
            !W.is_relative(r"C:\x")
                && !W.is_relative("C:x")
                && !W.is_relative(r"\x")
                && !W.is_relative("//s/x")
        );
        assert!(W.is_relative("notes/a.md") && U.is_relative("notes/a.md"));
    }

    #[test]
    fn windows_compares_without_case() {
        assert!(W.same(r"C:\Notes", r"c:\notes"));
        assert!(W.same(r"C:\Notes\", "c:/NOTES"));
        assert!(W.same(r"\\?\C:\Notes", r"C:\notes"));
        assert!(W.same(r"\\Server\Share\x", r"\\?\UNC\server\share\X"));
        assert!(W.same(r"C:\Ärger", r"c:\ärger"));
        assert!(!W.same(r"C:\Notes", r"D:\Notes"));
        assert!(!W.same(r"C:\Notes", r"C:Notes"));
        assert!(!W.same(r"\\a\b\x", r"\\a\c\x"));
        assert!(!U.same("/ws/Notes", "/ws/notes"));
        assert!(U.same("/ws/notes/", "/ws//notes"));
        assert_eq!(W.fold("Notes/A.md"), "notes/a.md");
        for (a, b) in [("ΟΔΟΣ.md", "οδοσ.md"), ("Ärger/İ.md", "ärger/i̇.md"), ("x", "X")] {
            assert!(W.same_name(a, b), "{a} {b}");
            assert_eq!(W.fold(a), W.fold(b), "{a} {b}");
        }
        assert_eq!(U.fold("Notes/A.md"), "Notes/A.md");
    }

    #[test]
    fn relative_and_within() {
        assert_eq!(
            W.relative(r"C:\Users\Me\Notes", r"c:\users\me\notes\sub\A.md"),
            Some(vec!["sub", "A.md"])
        );
        assert_eq!(W.relative(r"C:\Notes", r"C:\Notes"), Some(vec![]));
        assert_eq!(W.relative(r"C:\Notes", r"C:\NotesX\a.md"), None);
        assert_eq!(W.relative(r"C:\Notes", r"D:\Notes\a.md"), None);
        assert_eq!(W.relative(r"\\srv\share\ws", r"\\SRV\Share\ws\a.md"), Some(vec!["a.md"]));
        assert_eq!(U.relative("/ws", "/ws/notes/a.md"), Some(vec!["notes", "a.md"]));
        assert_eq!(U.relative("/ws", "/WS/notes/a.md"), None);
        assert_eq!(U.relative("/ws", "/wsx/a.md"), None);
        assert!(W.is_within(r"z:\tmp\ws\a.md", r"Z:\tmp\ws"));
        assert!(!U.is_within("/tmp/WS/a.md", "/tmp/ws"));
    }

    #[test]
    fn parts_windows_reads_as_something_else_are_refused() {
        for (part, want) in [
            ("..", Some(BadPart::Parent)),
            (".. ", Some(BadPart::Parent)),
            ("...", Some(BadPart::Parent)),
            ("a.md:secret", Some(BadPart::Colon)),
            ("a.md::$DATA", Some(BadPart::Colon)),
            ("C:", Some(BadPart::Colon)),
            ("CON", Some(BadPart::Device)),
            ("nul.md", Some(BadPart::Device)),
            ("Com1.md", Some(BadPart::Device)),
            ("LPT9", Some(BadPart::Device)),
            ("COM¹.txt", Some(BadPart::Device)),
            ("CON .md", Some(BadPart::Device)),
            ("conout$", Some(BadPart::Device)),
            ("a?.md", Some(BadPart::Reserved)),
            ("a*.md", Some(BadPart::Reserved)),
            ("a.md.", Some(BadPart::Reserved)),
            ("a.md ", Some(BadPart::Reserved)),
            ("a.md", None),
            ("console.md", None),
            ("COM10.md", None),
            ("nullable.md", None),
            (".hidden.md", None),
            ("My Plan (v2) #1 50%.md", None),
            ("日本.md", None),
        ] {
            assert_eq!(W.bad_part(part), want, "{part:?}");
        }
        assert_eq!(U.bad_part(".."), Some(BadPart::Parent));
        for fine_on_unix in ["a.md:secret", "CON", "nul.md", "a?.md", "a.md.", ".. ", r"..\a.md"] {
            assert_eq!(U.bad_part(fine_on_unix), None, "{fine_on_unix:?}");
        }
    }
}
