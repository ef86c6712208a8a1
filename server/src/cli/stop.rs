//! `livenote stop NOTE`: stop the note's run, whichever livenote process holds it (a
//! `livenote watch`, an editor's language server, another `livenote run`). The holder watches
//! for the request beside the note's lock and stops as *Stop* does: the run records "stopped"
//! in `lastRunError`.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::runs::Store;

/// How long to wait for the holder to let go of the note.
const WAIT: Duration = Duration::from_secs(10);

pub fn run(note: &Path, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    let path = crate::workspace::given::note(note)?;
    let root = crate::workspace::note_root(&path);
    let rel = crate::workspace::NotePath::of_or_whole(&root, &path).into_string();
    let store = Store::new(&root);
    let holder = match store.request_stop(&rel).with_context(|| format!("ask the run of {rel} to stop"))? {
        None => {
            writeln!(err, "livenote: {rel} is not running")?;
            return Ok(1);
        }
        Some(holder) => holder,
    };
    let who = holder.map_or_else(|| "its livenote process".to_owned(), |pid| format!("process {pid}"));
    let started = Instant::now();
    while started.elapsed() < WAIT {
        if !store.is_locked(&rel) {
            writeln!(out, "stopped {rel} (run by {who})")?;
            return Ok(0);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    writeln!(err, "livenote: asked {who} to stop {rel}; it is still running after {} s", WAIT.as_secs())?;
    Ok(1)
}
