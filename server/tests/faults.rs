//! Fault injection (docs/reliability.md, "Faults tried"): full and read-only disks, notes
//! deleted, renamed or rewritten by another program mid-run, a flood of events, providers
//! returning garbage, wall-clock jumps, several schedulers on one folder, and `livenote run`
//! killed with SIGKILL at different points of a run.
//!
//! Time is a `ManualClock` (in process) or a clock file (`--clock-file`, real processes);
//! nothing sleeps on the schedule. The only real waits are short polls for child processes.
//! No network beyond 127.0.0.1.

// Built on Unix calls (nix, std::os::unix, sh); Windows is covered by the platform layer's
// unit tests and the Wine suite.
#![cfg(unix)]

mod common;
mod faults {
    pub mod clock;
    pub mod disk;
    pub mod events;
    pub mod keystrokes;
    pub mod notes;
    pub mod process;
    pub mod provider;
    pub mod schedulers;
}

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use livenote::config::Config;
use livenote::note::model::Live;
use livenote::run_types::TriggerKind;
use livenote::runs::{DiskIo, Engine, NoteIo, Outcome, RunSpec};
use livenote::schedule::{ManualClock, Zone};
use livenote::scheduler::{NoteSource, Scheduler};
use livenote::workspace::index::{Entry, Index};
use livenote::workspace::trust::TrustStore;
use tokio::sync::Notify;

// The helpers this crate shares with the other tests of real files and processes; the
// modules under faults/ use them as `crate::write` and so on.
use common::{command_config, command_provider, tempdir, wait_until, write};

pub fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap_or_else(|e| panic!("bad instant {s}: {e}")).with_timezone(&Utc)
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A live note: `live_lines` go inside `live:` (two-space indent), `body` below `# Title`.
pub fn live_note(live_lines: &str, body: &str) -> String {
    format!("---\nlive:\n  objective: Keep this current\n{live_lines}---\n# Title\n\n{body}")
}

/// The note must parse: no error-severity diagnostic at all (YAML or `live:`).
pub fn assert_parses(text: &str) -> Live {
    let analysis = livenote::note::analyze(text, &livenote::note::Options::default());
    assert!(!analysis.has_errors(), "the note does not parse cleanly: {:?}\n{text}", analysis.diagnostics);
    analysis.live.unwrap_or_else(|| panic!("the note is no longer live:\n{text}"))
}

/// What the agent owns: everything below the H1.
pub fn body_of(text: &str) -> &str {
    &text[livenote::note::body::agent_region(text)]
}

/// Leftover temp files of atomic writes (`.livenote-*.tmp`, `.event-*.tmp`) anywhere under
/// `dir`, `.livenote/` included.
pub fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if name.ends_with(".tmp")
                && (name.starts_with(".livenote-") || name.starts_with(".event-"))
            {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// One workspace with a manual clock and its own trust store (trusted).
pub struct Ws {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    _data: tempfile::TempDir,
    pub clock: ManualClock,
    pub trust: TrustStore,
    pub zone: Zone,
}

impl Ws {
    pub fn new(config: &str, now: &str) -> Ws {
        let dir = tempdir();
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let data = tempdir();
        write(&root.join(".livenote.toml"), config);
        let trust = TrustStore::in_dir(data.path());
        trust.trust(&root).unwrap_or_else(|e| panic!("{e}"));
        Ws {
            _dir: dir,
            root,
            _data: data,
            clock: ManualClock::new(t(now)),
            trust,
            zone: Zone::Named(chrono_tz::UTC),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        read(&self.path(rel))
    }

    pub fn write(&self, rel: &str, text: &str) {
        write(&self.path(rel), text);
    }

    pub fn config(&self) -> Config {
        let (config, problems) = Config::load_with(Some(&self.root), None, &|_: &str| None);
        assert!(problems.is_empty(), "{problems:?}");
        config
    }

    pub fn engine(&self) -> Arc<Engine> {
        self.engine_with(Arc::new(DiskIo))
    }

    pub fn engine_with(&self, io: Arc<dyn NoteIo>) -> Arc<Engine> {
        Arc::new(Engine::new(
            &self.root,
            Arc::new(self.clock.clone()),
            self.zone,
            io,
            self.config(),
            Some(self.trust.clone()),
        ))
    }

    /// A scheduler over its own engine, reading the notes fresh from disk at every pass.
    pub fn scheduler(&self) -> Arc<Scheduler> {
        Arc::new(Scheduler::new(
            self.engine(),
            Arc::new(FreshSource::new(&self.root, 1)),
            Arc::new(Notify::new()),
        ))
    }
}

/// Run a note by hand on `engine`.
pub async fn run_manual(engine: &Engine, path: &Path) -> Outcome {
    let spec = RunSpec { path: path.to_path_buf(), trigger: TriggerKind::Manual, context: None, event: None };
    engine.run(spec, &mut |_| {}).await
}

/// The scheduler's view of the notes, from an index re-read every `every`-th call (1: always
/// fresh, like a process that hears every file event; more: a lagging index).
pub struct FreshSource {
    index: RwLock<(Index, usize)>,
    every: usize,
}

impl FreshSource {
    pub fn new(root: &Path, every: usize) -> FreshSource {
        let (index, _) = Index::build(&[root.to_path_buf()], &[]);
        FreshSource { index: RwLock::new((index, 0)), every: every.max(1) }
    }
}

impl NoteSource for FreshSource {
    fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)> {
        let mut guard = self.index.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (idx, calls) = &mut *guard;
        *calls += 1;
        if *calls % self.every == 0 {
            let paths: Vec<PathBuf> = idx.entries().map(|(p, _)| p.clone()).collect();
            for p in &paths {
                idx.refresh(p);
            }
        }
        idx.live_notes().map(|(p, e, _)| (p.clone(), e.clone())).collect()
    }
}

/// One scheduler pass; returns how many notes it fired.
pub fn pass(s: &Arc<Scheduler>) -> usize {
    s.pass(&mut livenote::scheduler::Memory::default()).fired.len()
}

/// Wait (real time, bounded) until none of the schedulers has a run waiting for a slot or going on.
pub async fn settle(schedulers: &[&Arc<Scheduler>]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if schedulers.iter().all(|s| s.is_idle()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("runs did not finish");
}

/// Lines of a log file the providers append to (empty when absent).
pub fn log_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).map(|s| s.lines().map(str::to_owned).collect()).unwrap_or_default()
}
