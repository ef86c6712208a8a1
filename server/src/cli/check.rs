//! `livenote check [PATH...]`: validate notes for humans (`file:line:col: severity code
//! message`) or scripts (`--format json`), exiting 1 when any note has errors.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::Format;
use crate::survey;
use crate::text::escape::terminal;
use crate::workspace::NotePath;

pub fn run(paths: &[PathBuf], format: Format, out: &mut impl Write) -> Result<u8> {
    let default = [PathBuf::from(".")];
    let paths = if paths.is_empty() { &default[..] } else { paths };
    let now = crate::schedule::Clock::now(&crate::schedule::SystemClock);
    let checked = survey::check(paths, now, &crate::schedule::Zone::Local, &shown);
    let items = &checked.items;
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &items)?;
            writeln!(out)?;
        }
        Format::Text => {
            for i in items {
                // A file name or a quoted value can hold terminal escapes: shown, never acted on.
                let (path, message) = (terminal(&i.path), terminal(&i.message));
                writeln!(out, "{path}:{}:{}: {} {} {message}", i.line, i.column, i.severity, i.code)?;
            }
            tracing::info!("{}", summary(checked.checked, checked.skipped, checked.errors, checked.warnings));
        }
    }
    Ok(if checked.io_failure {
        2
    } else if checked.errors > 0 {
        1
    } else {
        0
    })
}

/// "checked 3 notes: 1 error, 0 warnings; skipped 1 file".
fn summary(checked: usize, skipped: usize, errors: usize, warnings: usize) -> String {
    use crate::text::count;
    let mut s = format!(
        "checked {}: {}, {}",
        count(checked, "note"),
        count(errors, "error"),
        count(warnings, "warning")
    );
    if skipped > 0 {
        s.push_str(&format!("; skipped {}", count(skipped, "file")));
    }
    s
}

/// A path under the folder the user named relatively is shown `/`-separated without its
/// leading `./` (Windows' `.\notes\a.md` too), as `list` shows it; any other path as given.
fn shown(path: &Path) -> String {
    match NotePath::from_relative(path) {
        Some(p) if p.as_str().is_empty() => ".".to_owned(),
        Some(p) => p.into_string(),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_a_relative_folder_are_shown_slash_separated_without_dot() {
        let cases = [
            ("./notes/a.md", "notes/a.md"),
            ("notes/./a.md", "notes/a.md"),
            (".", "."),
            ("a.md", "a.md"),
            // Not under the folder, or absolute: as given.
            ("../x/a.md", "../x/a.md"),
            ("/abs/notes/a.md", "/abs/notes/a.md"),
        ];
        for (path, want) in cases {
            assert_eq!(shown(Path::new(path)), want, "{path}");
        }
    }
}
