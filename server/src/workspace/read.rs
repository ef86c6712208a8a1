//! Reading notes with caps. A whole note for `check`; only the frontmatter (read up to its
//! closing line) for listing and indexing, so a 10 MB body costs nothing there.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Notes larger than this are skipped with a message.
pub const MAX_NOTE_BYTES: u64 = 64 * 1024 * 1024;
/// How much of a file `read_frontmatter` reads at most.
pub const MAX_FRONTMATTER_READ: usize = 512 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("skipped: {size} bytes is over the {max} byte limit for a note")]
    TooLarge { size: u64, max: u64 },
    #[error("skipped: not UTF-8 text (invalid byte at offset {0})")]
    NotUtf8(usize),
    #[error("skipped: binary file (NUL byte at offset {0})")]
    Binary(usize),
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
    let file = super::confine::open_regular(path)?;
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
    let file = super::confine::open_regular(path)?;
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
        assert!(read_note(&p).is_err_and(|e| e.to_string().contains("not a regular file")));
        assert!(read_frontmatter(&p).is_err());
    }
}
