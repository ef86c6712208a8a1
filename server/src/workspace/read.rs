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
    let file = open(path)?;
    // A note too large to run is skipped here too, so that listing and checking it agree.
    let size = file.metadata()?.len();
    if size > MAX_NOTE_BYTES {
        return Err(ReadError::TooLarge { size, max: MAX_NOTE_BYTES });
    }
    let mut reader = BufReader::with_capacity(16 * 1024, file);
    let mut bytes = Vec::new();
    let mut first = true;
    loop {
        let before = bytes.len();
        let n = reader.read_until(b'\n', &mut bytes)?;
        if n == 0 {
            break;
        }
        let line = trim_eol(&bytes[before..]);
        if first {
            first = false;
            let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
            if !is_delim(line, b"---") {
                break;
            }
            continue;
        }
        if is_delim(line, b"---") || is_delim(line, b"...") || bytes.len() > MAX_FRONTMATTER_READ {
            break;
        }
    }
    check_text(bytes)
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
