//! Reading notes with caps. A whole note for `check`; only the frontmatter (read up to its
//! closing line) for listing and indexing, so a 10 MB body costs nothing there.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::text::count::bytes;

/// Notes larger than this are skipped with a message.
pub const MAX_NOTE_BYTES: u64 = 64 * 1024 * 1024;
/// How much of a file `read_frontmatter` reads at most.
pub const MAX_FRONTMATTER_READ: usize = 512 * 1024;

/// Why a file cannot be read as a note. `Display` is the reason alone (the caller names the
/// file): the one wording of `check`, `list`, `watch`, the editor and a run's error.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}", io_reason(.0))]
    Io(#[from] std::io::Error),
    /// A folder, a FIFO, a socket or a device: never opened.
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    #[error("{} is over the {} limit for a note", bytes(*.size), bytes(*.max))]
    TooLarge { size: u64, max: u64 },
    #[error("not UTF-8 text (invalid byte at offset {0})")]
    NotUtf8(usize),
    #[error("a binary file (NUL byte at offset {0})")]
    Binary(usize),
}

/// A file that looks like a note but is not read as one (or a folder the walk could not
/// enter), and why. `check`, `list`, `watch` and the editor all report skips through this, so
/// the same file gets the same reason everywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file or folder; `None` for a problem of the walk itself (a bad exclude glob).
    pub path: Option<PathBuf>,
    pub reason: String,
}

impl Skipped {
    pub fn new(path: &Path, reason: impl std::fmt::Display) -> Skipped {
        Skipped { path: Some(path.to_path_buf()), reason: reason.to_string() }
    }

    /// "<path>: <reason>", the path as `show` writes it (relative to what the user named).
    pub fn shown(&self, show: impl Fn(&Path) -> String) -> String {
        match &self.path {
            Some(p) => format!("{}: {}", show(p), self.reason),
            None => self.reason.clone(),
        }
    }
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown(|p| p.display().to_string()))
    }
}

/// An I/O failure, in words that do not repeat the path for the common ones (callers say
/// "cannot read ..." or "skip ..." before it).
fn io_reason(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::NotFound => "no such file".to_owned(),
        kind @ (ErrorKind::PermissionDenied | ErrorKind::IsADirectory | ErrorKind::NotADirectory) => {
            kind.to_string()
        }
        _ => e.to_string(),
    }
}

/// Open a regular file (links followed); anything else is [`ReadError::NotRegular`], named.
fn open(path: &Path) -> Result<std::fs::File, ReadError> {
    super::confine::open_regular(path).map_err(|e| {
        if super::confine::is_refusal(&e) {
            let kind = std::fs::metadata(path)
                .map_or("not a regular file", |m| super::given::kind_of(m.file_type()));
            ReadError::NotRegular(kind)
        } else {
            ReadError::Io(e)
        }
    })
}

fn check_text(bytes: Vec<u8>) -> Result<String, ReadError> {
    if let Some(i) = memchr::memchr(0, &bytes) {
        return Err(ReadError::Binary(i));
    }
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8(e.utf8_error().valid_up_to()))
}

/// The whole note as text. Only a regular file is opened (a FIFO named `x.md` never blocks).
pub fn read_note(path: &Path) -> Result<String, ReadError> {
    read_text(path, MAX_NOTE_BYTES)
}

/// A whole file as text, refusing one over `max` bytes (by its size, or by what a read finds
/// when it grew meanwhile), a binary one (a NUL byte) and one that is not UTF-8. Only a regular
/// file is opened (a FIFO never blocks a read).
pub fn read_text(path: &Path, max: u64) -> Result<String, ReadError> {
    let file = open(path)?;
    let size = file.metadata()?.len();
    if size > max {
        return Err(ReadError::TooLarge { size, max });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::TooLarge { size: bytes.len() as u64, max });
    }
    check_text(bytes)
}

/// The start of a note through the end of its frontmatter (the closing line included), or
/// just its first line when it has none. Never reads the body.
pub fn read_frontmatter(path: &Path) -> Result<String, ReadError> {
    let mut reader = open_note(path)?;
    let (bytes, _) = frontmatter_bytes(&mut reader)?;
    check_text(bytes)
}

/// How far below the frontmatter [`read_head`] looks for the note's `# ` title: a title sits
/// right under the frontmatter in practice, and `list` must not read whole bodies.
pub const MAX_TITLE_READ: usize = 16 * 1024;

/// [`read_frontmatter`], and the note's title (its first `# ` heading,
/// `note::frontmatter::title`) when one starts within [`MAX_TITLE_READ`] bytes below a closed
/// frontmatter. Reading stops at that heading.
pub fn read_head(path: &Path) -> Result<(String, Option<String>), ReadError> {
    let mut reader = open_note(path)?;
    let (bytes, closed) = frontmatter_bytes(&mut reader)?;
    let head = check_text(bytes)?;
    if !closed {
        return Ok((head, None));
    }
    let mut body = Vec::new();
    while body.len() < MAX_TITLE_READ {
        let before = body.len();
        if reader.read_until(b'\n', &mut body)? == 0 {
            break;
        }
        // Only a line that could be a heading is worth a look; `title` decides (code fences).
        if !body[before..].starts_with(b"# ") {
            continue;
        }
        let Ok(text) = std::str::from_utf8(&body) else { break };
        if let Some(title) = crate::note::frontmatter::title(text, 0) {
            return Ok((head, Some(title.to_owned())));
        }
    }
    Ok((head, None))
}

/// A note opened for reading its start; one too large to run is refused here too, so that
/// listing and checking it agree.
fn open_note(path: &Path) -> Result<BufReader<std::fs::File>, ReadError> {
    let file = open(path)?;
    let size = file.metadata()?.len();
    if size > MAX_NOTE_BYTES {
        return Err(ReadError::TooLarge { size, max: MAX_NOTE_BYTES });
    }
    Ok(BufReader::with_capacity(16 * 1024, file))
}

/// The bytes of [`read_frontmatter`], and whether a closing line ended them (so a body follows).
fn frontmatter_bytes(reader: &mut impl BufRead) -> Result<(Vec<u8>, bool), ReadError> {
    let mut bytes = Vec::new();
    let mut first = true;
    loop {
        let before = bytes.len();
        let n = reader.read_until(b'\n', &mut bytes)?;
        if n == 0 {
            return Ok((bytes, false));
        }
        let line = trim_eol(&bytes[before..]);
        if first {
            first = false;
            let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
            if !is_delim(line, b"---") {
                return Ok((bytes, false));
            }
            continue;
        }
        if is_delim(line, b"---") || is_delim(line, b"...") {
            return Ok((bytes, true));
        }
        if bytes.len() > MAX_FRONTMATTER_READ {
            return Ok((bytes, false));
        }
    }
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn is_delim(line: &[u8], marker: &[u8]) -> bool {
    line.strip_prefix(marker).is_some_and(|rest| rest.iter().all(|b| *b == b' ' || *b == b'\t'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_brings_the_first_heading_below_the_frontmatter() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("n.md");
        let head = |text: &str| {
            std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
            read_head(&p).unwrap_or_else(|e| panic!("{e}"))
        };
        let fm = "---\nlive:\n  objective: o\n---\n";
        assert_eq!(
            head(&format!("{fm}\n# Reading stats\n\nbody")),
            (fm.to_owned(), Some("Reading stats".into()))
        );
        // A `# ` line in a code fence is no heading; `#tag` is none either.
        let text = format!("{fm}```sh\n# comment\n```\n#tag\n# Title #\n");
        assert_eq!(head(&text).1.as_deref(), Some("Title"));
        assert_eq!(head(&format!("{fm}no heading\n## Sub\n")).1, None);
        // No body: the frontmatter never closes (a `# ` line there is YAML).
        assert_eq!(head("---\nlive: x\n# not a title\n").1, None);
        // Bounded: a heading far below the frontmatter is not looked for.
        let far = format!("{fm}{}# Late\n", "x\n".repeat(MAX_TITLE_READ));
        assert_eq!(head(&far).1, None);
        // Not UTF-8 before the heading: no title, the head still reads.
        let mut bytes = fm.as_bytes().to_vec();
        bytes.extend_from_slice(b"\xff\n# T\n");
        std::fs::write(&p, bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_head(&p).unwrap_or_else(|e| panic!("{e}")), (fm.to_owned(), None));
    }

    #[test]
    fn reads_only_the_frontmatter() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("n.md");
        let body = "x".repeat(1_000_000);
        std::fs::write(&p, format!("\u{feff}---\r\nlive:\r\n  objective: o\r\n---\r\n{body}"))
            .unwrap_or_else(|e| panic!("{e}"));
        let fm = read_frontmatter(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(fm, "\u{feff}---\r\nlive:\r\n  objective: o\r\n---\r\n");
        std::fs::write(&p, "# no frontmatter\nbody").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_frontmatter(&p).unwrap_or_else(|e| panic!("{e}")), "# no frontmatter\n");
    }

    #[test]
    fn rejects_binary_and_invalid_utf8() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("n.md");
        std::fs::write(&p, b"---\na: \xff\n---\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(read_note(&p), Err(ReadError::NotUtf8(7))));
        std::fs::write(&p, b"ab\0").unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(read_note(&p), Err(ReadError::Binary(2))));
    }

    #[cfg(unix)]
    #[test]
    fn never_opens_a_fifo() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("x.md");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        // Opening it would block until a writer came; it is refused instead.
        assert_eq!(
            read_note(&p).err().map(|e| e.to_string()).as_deref(),
            Some("not a regular file (a FIFO)")
        );
        assert_eq!(
            read_frontmatter(&p).err().map(|e| e.to_string()).as_deref(),
            Some("not a regular file (a FIFO)")
        );
    }
}
