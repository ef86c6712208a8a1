//! The compare-and-swap window of note writes, measured (docs/reliability.md, "Known gaps"):
//! another program appends a numbered line to a note every 5 ms while livenote rewrites the
//! note's frontmatter through `write_if_unchanged` as fast as it can (read, compare, write,
//! rename; a `Changed` answer is read again, as a run does). A line appended after the last
//! compare and before the rename is lost to the rename; the count of lines missing at the end
//! is the window's cost.
//!
//! `cargo run -p livenote --example cas_window [ROUNDS] [LINES]` (3 rounds of 1,008 lines by
//! default). Prints one line per round: lines lost of lines appended, writes done, conflicts.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use livenote::workspace::write::{WriteError, write_if_unchanged};

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let rounds = args.next().and_then(Result::ok).unwrap_or(3);
    let lines = args.next().and_then(Result::ok).unwrap_or(1008);
    let (mut lost_all, mut total) = (0, 0);
    let mut out = std::io::stdout().lock();
    for round in 1..=rounds {
        let (lost, writes, conflicts) = round_of(lines);
        let _ = writeln!(
            out,
            "round {round}: {lost} of {lines} lines lost; {writes} writes, {conflicts} conflicts"
        );
        let _ = out.flush();
        lost_all += lost;
        total += lines;
    }
    let _ = writeln!(out, "all: {lost_all} of {total} lines lost");
}

fn round_of(lines: usize) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let note = dir.path().join("n.md");
    std::fs::File::create(&note)
        .and_then(|mut f| f.write_all(b"---\nlive:\n  objective: o\n  lastRunId: \"0\"\n---\n# N\n\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    let done = AtomicBool::new(false);
    let (mut writes, mut conflicts) = (0, 0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..lines {
                let mut f =
                    std::fs::OpenOptions::new().append(true).open(&note).unwrap_or_else(|e| panic!("{e}"));
                f.write_all(format!("line {i}\n").as_bytes()).unwrap_or_else(|e| panic!("{e}"));
                drop(f);
                std::thread::sleep(Duration::from_millis(5));
            }
            done.store(true, Ordering::SeqCst);
        });
        while !done.load(Ordering::SeqCst) {
            let Ok(text) = std::fs::read_to_string(&note) else { continue };
            // The runtime field a run sets, each time a new value.
            let Some((_, body)) = text.split_once("\n---\n") else { continue };
            let new = format!("---\nlive:\n  objective: o\n  lastRunId: \"{writes}\"\n---\n{body}");
            match write_if_unchanged(&note, &text, &new) {
                Ok(()) => writes += 1,
                Err(WriteError::Changed) => conflicts += 1,
                Err(e) => panic!("{e}"),
            }
        }
    });
    let text = std::fs::read_to_string(&note).unwrap_or_default();
    let kept: std::collections::HashSet<&str> = text.lines().collect();
    let lost = (0..lines).filter(|i| !kept.contains(format!("line {i}").as_str())).count();
    (lost, writes, conflicts)
}
