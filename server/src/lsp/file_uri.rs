//! `file:` URIs and paths, both ways, the Unix way or the Windows way (see
//! `workspace::path_style`). Windows clients spell one file several ways: VS Code sends
//! `file:///c%3A/Users/me/a.md` (colon encoded, drive in lower case), others
//! `file:///C:/Users/me/a.md`, Wine's `file:///Z:/tmp/ws`, and a share
//! `file://server/share/a.md`; each is the path `C:\Users\me\a.md` (drive upper-cased) or
//! `\\server\share\a.md`. Back the other way an editor matches documents by the URI's text, so
//! a path the client named (an open document, a workspace folder and what lies below it) gets
//! the client's own spelling back ([`ClientUris`]); only other paths get ours.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use tower_lsp_server::ls_types::Uri;

use crate::workspace::path_style::{Head, PathStyle};

/// What a URI path keeps unencoded (RFC 3986's unreserved characters and `/`), as ls-types
/// encodes, so that the Unix spelling stays what it was.
const KEEP: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~').remove(b'/');

/// The path a `file:` URI names. Unix: the decoded URI path, as ls-types gives it (the host
/// is ignored; the scheme is not checked). Windows: a drive path with `\` and the drive
/// upper-cased, or a UNC path for a URI with a host (or the `file:////server/share` form).
pub fn path_of(style: PathStyle, uri: &Uri) -> Option<PathBuf> {
    let decoded = uri.path().decode().to_string_lossy().into_owned();
    if decoded.is_empty() {
        return None;
    }
    if style == PathStyle::Unix {
        return Some(PathBuf::from(decoded));
    }
    let host = uri.authority().map(|a| a.host()).unwrap_or_default();
    let host = if host.eq_ignore_ascii_case("localhost") { "" } else { host };
    let back = |s: &str| s.replace('/', "\\");
    if !host.is_empty() {
        let host = percent_encoding::percent_decode_str(host).decode_utf8_lossy();
        return Some(PathBuf::from(format!(r"\\{host}{}", back(&decoded))));
    }
    let bytes = decoded.as_bytes();
    // `/c:/…` (and the old `/c|/…`): the drive follows the path's leading slash.
    if let [b'/', d, b':' | b'|', rest @ ..] = bytes
        && d.is_ascii_alphabetic()
        && (rest.is_empty() || rest[0] == b'/' || rest[0] == b'\\')
    {
        let rest = decoded.get(3..).unwrap_or("");
        let rest = if rest.is_empty() { "\\".to_owned() } else { back(rest) };
        return Some(PathBuf::from(format!("{}:{rest}", d.to_ascii_uppercase() as char)));
    }
    Some(PathBuf::from(back(&decoded)))
}

/// A `file:` URI for an absolute `path`, in our spelling: Unix `file:///a%20b/c.md` (as
/// ls-types writes it), Windows `file:///C:/a%20b/c.md` or `file://server/share/c.md`.
/// `None` for a path that names no place on its own (relative, `\x`, `C:x`, a device).
pub fn uri_of(style: PathStyle, path: &Path) -> Option<Uri> {
    let text = path.to_string_lossy();
    let parts = |parts: &[&str]| {
        parts.iter().map(|p| utf8_percent_encode(p, KEEP).to_string()).collect::<Vec<_>>().join("/")
    };
    let uri = match style {
        PathStyle::Unix if text.starts_with('/') => format!("file://{}", utf8_percent_encode(&text, KEEP)),
        PathStyle::Unix => return None,
        PathStyle::Windows => {
            let split = style.split(&text);
            match split.head {
                Head::DriveRoot(d) => format!("file:///{d}:/{}", parts(&split.parts)),
                Head::Unc { server, share } if !server.is_empty() && !share.is_empty() => {
                    let tail = parts(&split.parts);
                    let share = utf8_percent_encode(share, KEEP);
                    let server = utf8_percent_encode(server, KEEP);
                    if tail.is_empty() {
                        format!("file://{server}/{share}")
                    } else {
                        format!("file://{server}/{share}/{tail}")
                    }
                }
                _ => return None,
            }
        }
    };
    uri.parse().ok()
}

/// The URIs the client gave us, by the path they name, so that a path is answered in the
/// client's spelling: its open documents exactly, and anything below one of its workspace
/// folders as that folder's URI with the rest appended.
#[derive(Debug, Default)]
pub struct ClientUris {
    documents: HashMap<String, Uri>,
    folders: Vec<(PathBuf, Uri)>,
}

impl ClientUris {
    /// A document the client opened.
    pub fn document(&mut self, uri: &Uri) {
        if let Some(path) = path_of(PathStyle::NATIVE, uri) {
            self.documents.insert(key(PathStyle::NATIVE, &path), uri.clone());
        }
    }

    /// A document the client closed: its spelling is no longer needed.
    pub fn closed(&mut self, uri: &Uri) {
        self.documents.retain(|_, u| u != uri);
    }

    /// A workspace folder (or the root URI) the client named.
    pub fn folder(&mut self, uri: &Uri) {
        if uri.query().is_some() || uri.fragment().is_some() {
            return;
        }
        if let Some(path) = path_of(PathStyle::NATIVE, uri) {
            self.folders
                .retain(|(p, _)| !PathStyle::NATIVE.same(&p.to_string_lossy(), &path.to_string_lossy()));
            self.folders.push((path, uri.clone()));
        }
    }

    /// `path`'s URI: the client's spelling when it gave one for this path or a folder above
    /// it, else ours.
    pub fn uri_for(&self, path: &Path) -> Option<Uri> {
        self.spelled(PathStyle::NATIVE, path).or_else(|| match PathStyle::NATIVE {
            // ls-types' own conversion, unchanged for Unix (it also takes relative paths).
            PathStyle::Unix => Uri::from_file_path(path),
            PathStyle::Windows => uri_of(PathStyle::Windows, path),
        })
    }

    /// The client's spelling of `path`, if it gave one for it or a folder above it.
    fn spelled(&self, style: PathStyle, path: &Path) -> Option<Uri> {
        if let Some(uri) = self.documents.get(&key(style, path)) {
            return Some(uri.clone());
        }
        let text = path.to_string_lossy();
        let (rest, folder) = self
            .folders
            .iter()
            .filter_map(|(f, uri)| {
                let f = f.to_string_lossy();
                Some((style.relative(&f, &text)?.len(), uri))
            })
            .min_by_key(|(rest, _)| *rest)?;
        let parts = style.split(&text).parts;
        let tail = parts.get(parts.len() - rest..)?;
        let base = folder.as_str();
        let mut spelled = base.strip_suffix('/').unwrap_or(base).to_owned();
        for part in tail {
            spelled.push('/');
            spelled.extend(utf8_percent_encode(part, KEEP));
        }
        spelled.parse().ok()
    }
}

/// The form paths are looked up in: one spelling per file for this style.
fn key(style: PathStyle, path: &Path) -> String {
    let text = path.to_string_lossy();
    let split = style.split(&text);
    let head = match split.head {
        Head::Relative => String::new(),
        Head::Root => "/".to_owned(),
        Head::Drive(d) => format!("{d}:"),
        Head::DriveRoot(d) => format!("{d}:/"),
        Head::Unc { server, share } => format!("//{server}/{share}/"),
        Head::Device(d) => format!("//./{d}/"),
    };
    style.fold(&format!("{head}{}", split.parts.join("/"))).into_owned()
}

/// A `file:` URI's path the way this machine spells paths.
pub trait FilePath {
    fn file_path(&self) -> Option<PathBuf>;
}

impl FilePath for Uri {
    fn file_path(&self) -> Option<PathBuf> {
        path_of(PathStyle::NATIVE, self)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const W: PathStyle = PathStyle::Windows;
    const U: PathStyle = PathStyle::Unix;

    fn uri(s: &str) -> Uri {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn win(s: &str) -> Option<String> {
        path_of(W, &uri(s)).map(|p| p.to_string_lossy().into_owned())
    }

    #[test]
    fn windows_clients_spell_one_file_many_ways() {
        let want = Some(r"C:\Users\me\notes\a.md".to_owned());
        assert_eq!(win("file:///c%3A/Users/me/notes/a.md"), want, "VS Code");
        assert_eq!(win("file:///C:/Users/me/notes/a.md"), want);
        assert_eq!(win("file:///c:/Users/me/notes/a.md"), want);
        assert_eq!(win("file://localhost/C:/Users/me/notes/a.md"), want);
        assert_eq!(win("file:///C%3a/Users/me/notes/a.md"), want);
        assert_eq!(win("file:///C%7C/Users/me/notes/a.md"), want);
        assert_eq!(win("file:///Z:/tmp/ws"), Some(r"Z:\tmp\ws".to_owned()), "Wine");
        assert_eq!(win("file:///z%3A"), Some(r"Z:\".to_owned()));
        assert_eq!(
            win("file:///c%3A/My%20Notes/%23plan%2050%25.md"),
            Some(r"C:\My Notes\#plan 50%.md".to_owned())
        );
        assert_eq!(win("file:///c%3A/%E6%97%A5%E6%9C%AC/a.md"), Some(r"C:\日本\a.md".to_owned()));
        assert_eq!(
            win("file://server/share/notes/a.md"),
            Some(r"\\server\share\notes\a.md".to_owned()),
            "UNC"
        );
        assert_eq!(win("file:////server/share/notes/a.md"), Some(r"\\server\share\notes\a.md".to_owned()));
        assert_eq!(win("file://"), None);
    }

    #[test]
    fn unix_is_what_ls_types_gives() {
        for s in [
            "file:///home/me/notes/a.md",
            "file:///home/me/My%20Notes/%23a%2050%25.md",
            "file://host/home/a.md",
            "file:///C:/x",
            "file:///a%5Cb.md",
            "untitled:Untitled-1",
        ] {
            let u = uri(s);
            assert_eq!(path_of(U, &u), u.to_file_path().map(|p| p.into_owned()), "{s}");
        }
    }

    #[test]
    fn paths_to_uris() {
        let w = |p: &str| uri_of(W, Path::new(p)).map(|u| u.as_str().to_owned());
        assert_eq!(w(r"C:\Users\me\a b.md"), Some("file:///C:/Users/me/a%20b.md".into()));
        assert_eq!(w(r"\\?\C:\x\#1.md"), Some("file:///C:/x/%231.md".into()));
        assert_eq!(w(r"\\server\share\notes\a.md"), Some("file://server/share/notes/a.md".into()));
        assert_eq!(w(r"\\?\UNC\server\share"), Some("file://server/share".into()));
        assert_eq!(w(r"notes\a.md"), None);
        assert_eq!(w(r"\notes\a.md"), None);
        assert_eq!(w("C:notes"), None);
        for p in ["/home/me/a b/(1)#.md", "/", "/日本/%.md"] {
            assert_eq!(uri_of(U, Path::new(p)), Uri::from_file_path(p), "{p}");
        }
        assert_eq!(uri_of(U, Path::new("rel/a.md")), None);
    }

    #[test]
    fn the_clients_spelling_comes_back() {
        let mut book = ClientUris::default();
        let folder = uri("file:///c%3A/Users/me/Notes");
        let doc = uri("file:///c%3A/Users/me/Notes/sub/A%20b.md");
        let (f, d) = (path_of(W, &folder), path_of(W, &doc));
        let (Some(f), Some(d)) = (f, d) else { panic!("both convert") };
        book.folders.push((f, folder));
        book.documents.insert(key(W, &d), doc.clone());
        let spelled = |p: &str| book.spelled(W, Path::new(p)).map(|u| u.as_str().to_owned());
        assert_eq!(spelled(r"C:\Users\me\Notes\sub\A b.md"), Some(doc.as_str().to_owned()));
        assert_eq!(spelled(r"c:\users\me\notes\SUB\a B.md"), Some(doc.as_str().to_owned()), "any case");
        assert_eq!(
            spelled(r"C:\Users\me\Notes\new #1.md"),
            Some("file:///c%3A/Users/me/Notes/new%20%231.md".into())
        );
        assert_eq!(spelled(r"C:\Users\me\Notes"), Some("file:///c%3A/Users/me/Notes".into()));
        assert_eq!(spelled(r"C:\Users\me\Other\a.md"), None);
        book.closed(&doc);
        let spelled = |p: &str| book.spelled(W, Path::new(p)).map(|u| u.as_str().to_owned());
        assert_eq!(
            spelled(r"C:\Users\me\Notes\sub\A b.md"),
            Some("file:///c%3A/Users/me/Notes/sub/A%20b.md".into())
        );
    }

    /// A name Windows allows, with the characters URIs must encode.
    fn name() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[a-zA-Z0-9 #%&+;=@\\[\\]{}'!$,()~._é日本ü-]{1,12}")
            .unwrap_or_else(|e| panic!("{e}"))
            .prop_filter("a name Windows keeps", |n| {
                !n.ends_with(['.', ' ']) && W.bad_part(n).is_none() && n != "."
            })
    }

    proptest! {
        /// The Unix style is ls-types' conversion, both ways, so nothing changes on Unix.
        #[test]
        fn unix_agrees_with_ls_types(names in proptest::collection::vec(name(), 0..5)) {
            let path = format!("/{}", names.join("/"));
            let ours = uri_of(U, Path::new(&path));
            prop_assert_eq!(&ours, &Uri::from_file_path(&path));
            let u = ours.unwrap_or_else(|| panic!("{path} has a URI"));
            prop_assert_eq!(path_of(U, &u), u.to_file_path().map(|p| p.into_owned()));
            prop_assert_eq!(path_of(U, &u), Some(PathBuf::from(&path)));
        }

        #[test]
        fn windows_paths_round_trip(
            unc in any::<bool>(),
            drive in proptest::char::range('A', 'Z'),
            server in "[a-z][a-z0-9-]{0,8}",
            share in name(),
            names in proptest::collection::vec(name(), 0..5),
        ) {
            let head = if unc { format!(r"\\{server}\{share}") } else { format!("{drive}:") };
            let path = format!(r"{head}\{}", names.join("\\"));
            let path = if unc { path.trim_end_matches('\\').to_owned() } else { path };
            let u = uri_of(W, Path::new(&path)).unwrap_or_else(|| panic!("{path} has a URI"));
            let back = path_of(W, &u).map(|p| p.to_string_lossy().into_owned());
            prop_assert_eq!(back.as_deref(), Some(path.as_str()), "{}", u.as_str());
            // VS Code's spelling of the same file reads back the same.
            if !unc {
                let vscode = u.as_str().replacen(&format!("{drive}:"), &format!("{}%3A", drive.to_ascii_lowercase()), 1);
                let back = path_of(W, &uri(&vscode)).map(|p| p.to_string_lossy().into_owned());
                prop_assert_eq!(back.as_deref(), Some(path.as_str()), "{}", vscode);
            }
        }
    }
}
