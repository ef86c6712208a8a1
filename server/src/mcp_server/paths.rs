//! The note paths a client sends: workspace-relative, `/`-separated, confined to the
//! workspace. Parsing is pure ([`parse`]); [`resolve`] then checks what is on disk, so that a
//! link inside the workspace that leads out of it is refused like a `..`.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use crate::workspace::path_style::{BadPart, Head, PathStyle};
use crate::workspace::{self, NotePath};

/// The scheme of the notes as MCP resources: `livenote://<path>`.
pub const SCHEME: &str = "livenote://";

/// Why a path was refused, as the client reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty; give the note's path relative to the workspace, like `notes/weather.md`")]
    Empty,
    #[error(
        "`{0}` is an absolute path; give the note's path relative to the workspace, `/`-separated, like `notes/weather.md`"
    )]
    Absolute(String),
    #[error("`{0}` leads out of the workspace (`..`); only notes inside it can be used")]
    Parent(String),
    #[error("`{0}` is inside livenote's or git's own folder (`.livenote/`, `.git/`), which holds no notes")]
    Private(String),
    #[error("`{0}` has a control character")]
    Control(String),
    #[error("`{0}` is not a markdown note (`.md`)")]
    NotMarkdown(String),
    #[error("`{0}` is outside the workspace (a link leads out of it); only notes inside it can be used")]
    Outside(String),
    #[error("there is no note `{0}` in the workspace")]
    Missing(String),
    #[error("`{0}` is not a regular file")]
    NotFile(String),
    #[error("`{path}`: {error}")]
    Io { path: String, error: String },
    #[error("`{0}` is not a livenote resource; they are named `livenote://<path>`")]
    NotResource(String),
    #[error(
        "`{0}` has a `:`, which Windows reads as a drive or a file's hidden stream; note paths have none"
    )]
    Colon(String),
    #[error("`{0}` names a Windows device (CON, NUL, COM1, LPT1, …), not a file")]
    Device(String),
    #[error(
        "`{0}` has a character Windows does not keep in file names (`<>\"|?*`, or a trailing dot or space)"
    )]
    Reserved(String),
}

/// A client's path as a note path: relative, no `..`, no `.livenote/` or `.git/` part, no
/// control characters, a markdown file name. `./` parts and repeated `/` are dropped.
pub fn parse(written: &str) -> Result<NotePath, PathError> {
    parse_in(PathStyle::NATIVE, written)
}

/// [`parse`] for `style`. On Windows `\` separates too, and every name Windows would open as
/// something else is refused like `..`: `..\`, `C:\`, `\\server\`, a stream (`a.md:x`), a
/// device (`CON`, `nul.md`), a trailing dot or space; `.LIVENOTE` is `.livenote`.
pub fn parse_in(style: PathStyle, written: &str) -> Result<NotePath, PathError> {
    let shown = || written.to_owned();
    if written.trim().is_empty() {
        return Err(PathError::Empty);
    }
    if written.chars().any(char::is_control) {
        return Err(PathError::Control(written.escape_debug().to_string()));
    }
    if style == PathStyle::Windows {
        return parse_windows(written);
    }
    let path = Path::new(written);
    // `C:\notes` or `\\server\x` are absolute elsewhere; here they would be odd file names.
    if path.is_absolute() || written.starts_with('\\') || written.get(1..3) == Some(":\\") {
        return Err(PathError::Absolute(shown()));
    }
    for c in path.components() {
        match c {
            Component::ParentDir => return Err(PathError::Parent(shown())),
            Component::RootDir | Component::Prefix(_) => return Err(PathError::Absolute(shown())),
            Component::Normal(part) if part == workspace::STATE_DIR || part == ".git" => {
                return Err(PathError::Private(shown()));
            }
            _ => {}
        }
    }
    let rel = NotePath::from_relative(path).ok_or_else(|| PathError::Parent(shown()))?;
    if rel.is_empty() || !workspace::is_markdown(Path::new(rel.as_str())) || written.ends_with('/') {
        return Err(PathError::NotMarkdown(shown()));
    }
    Ok(rel)
}

fn parse_windows(written: &str) -> Result<NotePath, PathError> {
    let style = PathStyle::Windows;
    let shown = || written.to_owned();
    let split = style.split(written);
    if split.head != Head::Relative {
        return Err(PathError::Absolute(shown()));
    }
    for part in &split.parts {
        match style.bad_part(part) {
            Some(BadPart::Parent) => return Err(PathError::Parent(shown())),
            Some(BadPart::Colon) => return Err(PathError::Colon(shown())),
            Some(BadPart::Device) => return Err(PathError::Device(shown())),
            Some(BadPart::Reserved) => return Err(PathError::Reserved(shown())),
            None if private(style, part) => return Err(PathError::Private(shown())),
            None => {}
        }
    }
    let rel = NotePath::from_relative(Path::new(&split.parts.join("/")))
        .ok_or_else(|| PathError::Parent(shown()))?;
    if rel.is_empty() || !workspace::is_markdown(Path::new(rel.as_str())) || written.ends_with(['/', '\\']) {
        return Err(PathError::NotMarkdown(shown()));
    }
    Ok(rel)
}

/// livenote's and git's own folders, spelled in any case where names are compared so.
fn private(style: PathStyle, name: &str) -> bool {
    style.same_name(name, workspace::STATE_DIR) || style.same_name(name, ".git")
}

/// Whether a note may be created at `rel`: a `.md` file name.
pub fn creatable(rel: &NotePath) -> bool {
    Path::new(rel.as_str()).extension().is_some_and(|e| e.eq_ignore_ascii_case("md"))
}

/// What is at a note path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A regular file inside the workspace (maybe through links that stay inside).
    Note(PathBuf),
    /// Nothing yet; the folders that exist on the way are inside the workspace.
    Missing(PathBuf),
}

/// Check `rel` against the disk under `root` (canonical): an existing note must resolve to a
/// regular file inside `root` and outside its `.livenote/`; for a missing one, the deepest
/// folder that exists on the way must be inside `root`.
pub fn resolve(root: &Path, rel: &NotePath) -> Result<Found, PathError> {
    let path = rel.to_path(root);
    let shown = || rel.as_str().to_owned();
    let io = |e: std::io::Error| PathError::Io { path: shown(), error: e.to_string() };
    match std::fs::symlink_metadata(&path) {
        Ok(_) => {
            let real = match std::fs::canonicalize(&path) {
                Ok(r) => r,
                // A link to nothing, or a link loop.
                Err(e) if e.kind() == ErrorKind::NotFound => return Err(PathError::Missing(shown())),
                Err(e) => return Err(io(e)),
            };
            inside(root, &real).then_some(()).ok_or_else(|| PathError::Outside(shown()))?;
            let meta = std::fs::metadata(&real).map_err(io)?;
            if !meta.is_file() {
                return Err(PathError::NotFile(shown()));
            }
            Ok(Found::Note(path))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let existing = path.ancestors().skip(1).find(|a| a.exists()).unwrap_or(root);
            let real = std::fs::canonicalize(existing).map_err(io)?;
            if !inside(root, &real) {
                return Err(PathError::Outside(shown()));
            }
            // A dangling link on the way (`notes -> /gone`) would be created through.
            if path.ancestors().skip(1).take_while(|a| *a != existing).any(|a| a.symlink_metadata().is_ok()) {
                return Err(PathError::Outside(shown()));
            }
            Ok(Found::Missing(path))
        }
        Err(e) => Err(io(e)),
    }
}

/// The path of an existing note, or the error saying there is none.
pub fn existing(root: &Path, rel: &NotePath) -> Result<PathBuf, PathError> {
    match resolve(root, rel)? {
        Found::Note(p) => Ok(p),
        Found::Missing(_) => Err(PathError::Missing(rel.as_str().to_owned())),
    }
}

/// `real` (canonical) is `root` (canonical) or under it, and in no `.livenote/` or `.git/`
/// at any depth (a link may lead into a nested `sub/.git/`).
fn inside(root: &Path, real: &Path) -> bool {
    real.strip_prefix(root).is_ok_and(|rel| {
        rel.components().all(|c| !private(PathStyle::NATIVE, &c.as_os_str().to_string_lossy()))
    })
}

/// Characters kept as they are in a resource URI's path: RFC 3986's unreserved ones; `/`
/// separates the note's folders.
const KEEP: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~').remove(b'/');

/// `livenote://<path>`, each byte outside the unreserved set percent-encoded.
pub fn resource_uri(rel: &str) -> String {
    format!("{SCHEME}{}", utf8_percent_encode(rel, KEEP))
}

/// The note path of a `livenote://` URI (percent-decoded; a trailing `/` some URI libraries
/// add after a bare host is dropped).
pub fn from_resource_uri(uri: &str) -> Result<NotePath, PathError> {
    let rest = uri.strip_prefix(SCHEME).ok_or_else(|| PathError::NotResource(uri.to_owned()))?;
    let decoded =
        percent_decode_str(rest).decode_utf8().map_err(|_| PathError::NotResource(uri.to_owned()))?;
    let decoded = decoded.strip_suffix('/').unwrap_or(&decoded);
    parse(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_markdown_paths_parse() {
        let ok = |s: &str| parse(s).map(NotePath::into_string);
        assert_eq!(ok("notes/weather.md"), Ok("notes/weather.md".into()));
        assert_eq!(ok("./notes//a.MD"), Ok("notes/a.MD".into()));
        assert_eq!(ok("Plan.markdown"), Ok("Plan.markdown".into()));
        assert_eq!(ok("日本/メモ.md"), Ok("日本/メモ.md".into()));
        for (bad, want) in [
            ("", PathError::Empty),
            ("  ", PathError::Empty),
            ("/etc/passwd.md", PathError::Absolute("/etc/passwd.md".into())),
            ("\\\\server\\a.md", PathError::Absolute("\\\\server\\a.md".into())),
            ("C:\\a.md", PathError::Absolute("C:\\a.md".into())),
            ("../a.md", PathError::Parent("../a.md".into())),
            ("notes/../../a.md", PathError::Parent("notes/../../a.md".into())),
            ("notes/../a.md", PathError::Parent("notes/../a.md".into())),
            (".livenote/history/x.md", PathError::Private(".livenote/history/x.md".into())),
            ("sub/.git/x.md", PathError::Private("sub/.git/x.md".into())),
            ("a\nb.md", PathError::Control("a\\nb.md".into())),
            ("a\0.md", PathError::Control("a\\0.md".into())),
            ("notes/a.txt", PathError::NotMarkdown("notes/a.txt".into())),
            ("notes", PathError::NotMarkdown("notes".into())),
            ("a.md/", PathError::NotMarkdown("a.md/".into())),
            (".", PathError::NotMarkdown(".".into())),
        ] {
            assert_eq!(parse(bad), Err(want), "{bad:?}");
        }
        assert!(creatable(&NotePath::from_relative(Path::new("a/b.md")).unwrap_or_else(|| panic!())));
        assert!(!creatable(&NotePath::from_relative(Path::new("a/b.markdown")).unwrap_or_else(|| panic!())));
    }

    #[cfg(unix)]
    #[test]
    fn windows_refuses_what_windows_reads_as_another_place() {
        let w = |s: &str| parse_in(PathStyle::Windows, s).map(NotePath::into_string);
        assert_eq!(w(r"notes\weather.md"), Ok("notes/weather.md".into()));
        assert_eq!(w(r".\notes/a.MD"), Ok("notes/a.MD".into()));
        assert_eq!(w("日本/メモ.md"), Ok("日本/メモ.md".into()));
        assert_eq!(w("My Plan (v2) #1.md"), Ok("My Plan (v2) #1.md".into()));
        for (bad, want) in [
            (r"..\a.md", PathError::Parent(r"..\a.md".into())),
            (r"notes\..\..\a.md", PathError::Parent(r"notes\..\..\a.md".into())),
            (r".. \a.md", PathError::Parent(r".. \a.md".into())),
            (r"C:\a.md", PathError::Absolute(r"C:\a.md".into())),
            ("c:/a.md", PathError::Absolute("c:/a.md".into())),
            ("C:a.md", PathError::Absolute("C:a.md".into())),
            (r"\\server\share\a.md", PathError::Absolute(r"\\server\share\a.md".into())),
            (r"\\?\C:\a.md", PathError::Absolute(r"\\?\C:\a.md".into())),
            (r"\a.md", PathError::Absolute(r"\a.md".into())),
            ("/a.md", PathError::Absolute("/a.md".into())),
            ("a.md:secret", PathError::Colon("a.md:secret".into())),
            (r"notes\a.md::$DATA", PathError::Colon(r"notes\a.md::$DATA".into())),
            ("CON.md", PathError::Device("CON.md".into())),
            (r"notes\nul.md", PathError::Device(r"notes\nul.md".into())),
            ("com1/a.md", PathError::Device("com1/a.md".into())),
            ("a.md.", PathError::Reserved("a.md.".into())),
            ("a?.md", PathError::Reserved("a?.md".into())),
            (r".LIVENOTE\history\x.md", PathError::Private(r".LIVENOTE\history\x.md".into())),
            (r"sub\.Git\x.md", PathError::Private(r"sub\.Git\x.md".into())),
            (r"notes\", PathError::NotMarkdown(r"notes\".into())),
            ("a\0.md", PathError::Control("a\\0.md".into())),
        ] {
            assert_eq!(parse_in(PathStyle::Windows, bad), Err(want), "{bad:?}");
        }
        // The same names are plain file names on Unix.
        for fine in ["a:b.md", "CON.md", r"..\a.md", ".LIVENOTE/x.md"] {
            assert!(parse_in(PathStyle::Unix, fine).is_ok(), "{fine:?}");
        }
    }

    #[test]
    fn links_out_of_the_workspace_are_refused() {
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = std::fs::canonicalize(ws.path()).unwrap_or_else(|e| panic!("{e}"));
        let write = |p: &Path, t: &str| std::fs::write(p, t).unwrap_or_else(|e| panic!("{e}"));
        let link =
            |to: &Path, at: &Path| std::os::unix::fs::symlink(to, at).unwrap_or_else(|e| panic!("{e}"));
        write(&outside.path().join("secret.md"), "x");
        std::fs::create_dir(root.join("notes")).unwrap_or_else(|e| panic!("{e}"));
        write(&root.join("notes/a.md"), "# A\n");
        link(&outside.path().join("secret.md"), &root.join("leak.md"));
        link(outside.path(), &root.join("away"));
        link(&root.join("notes/a.md"), &root.join("alias.md"));
        link(&root.join("gone"), &root.join("dangling"));
        std::fs::create_dir(root.join(".livenote")).unwrap_or_else(|e| panic!("{e}"));
        write(&root.join(".livenote/x.md"), "x");
        link(&root.join(".livenote/x.md"), &root.join("state.md"));
        let at = |s: &str| resolve(&root, &parse(s).unwrap_or_else(|e| panic!("{s}: {e}")));
        assert_eq!(at("notes/a.md"), Ok(Found::Note(root.join("notes/a.md"))));
        assert_eq!(at("alias.md"), Ok(Found::Note(root.join("alias.md"))), "a link that stays inside");
        assert_eq!(at("notes/new.md"), Ok(Found::Missing(root.join("notes/new.md"))));
        assert_eq!(at("new/deeper/b.md"), Ok(Found::Missing(root.join("new/deeper/b.md"))));
        assert_eq!(at("leak.md"), Err(PathError::Outside("leak.md".into())));
        assert_eq!(at("away/secret.md"), Err(PathError::Outside("away/secret.md".into())));
        assert_eq!(at("away/new.md"), Err(PathError::Outside("away/new.md".into())));
        assert_eq!(at("dangling/new.md"), Err(PathError::Outside("dangling/new.md".into())));
        assert_eq!(at("state.md"), Err(PathError::Outside("state.md".into())));
        assert_eq!(
            existing(&root, &parse("notes/none.md").unwrap_or_else(|e| panic!("{e}"))),
            Err(PathError::Missing("notes/none.md".into()))
        );
    }

    #[test]
    fn resource_uris_round_trip() {
        for p in ["a.md", "notes/My Plan (v2).md", "日本/メモ.md", "50%.md", "a#b?.md"] {
            let uri = resource_uri(p);
            assert!(!uri[SCHEME.len()..].contains([' ', '#', '?', '(']), "{uri}");
            assert_eq!(from_resource_uri(&uri).map(NotePath::into_string), Ok(p.to_owned()), "{uri}");
        }
        assert_eq!(resource_uri("notes/My Plan.md"), "livenote://notes/My%20Plan.md");
        assert_eq!(from_resource_uri("livenote://a.md/").map(NotePath::into_string), Ok("a.md".into()));
        assert_eq!(from_resource_uri("file:///a.md"), Err(PathError::NotResource("file:///a.md".into())));
        assert_eq!(from_resource_uri("livenote://../a.md"), Err(PathError::Parent("../a.md".into())));
        assert_eq!(from_resource_uri("livenote://%2E%2E/a.md"), Err(PathError::Parent("../a.md".into())));
    }
}
