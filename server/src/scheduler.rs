//! The scheduler: one task that sleeps until the earliest instant a live note becomes due,
//! fires what is due, and re-plans when the notes change (file events, document saves) or
//! trust is granted. It re-checks at least every minute against wall-clock jumps and suspend;
//! it never rescans files on a timer. It reads saved files (through the index), never editor
//! buffers, and a run re-checks due-ness under the note's lock, so several livenote processes
//! on one folder fire each cycle once.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::providers::TriggerKind;
use crate::runs::{Engine, Outcome, RunSpec};
use crate::workspace::index::Entry;

/// Where the scheduler finds live notes (the workspace index): every note with a `live:`
/// block, as its index entry (shared, so a pass copies no block, and each entry's schedule memo
/// spares the pass the cron searches of notes that are not due yet).
pub trait NoteSource: Send + Sync {
    fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)>;
}

/// The longest the scheduler sleeps before looking again (clock jumps, suspend).
pub const MAX_SLEEP: Duration = Duration::from_secs(60);
/// A note whose run was skipped (another process has it) is not fired again for this long,
/// so the scheduler does not spin until the index sees the other run's `lastAttemptAt`.
const REFIRE_PAUSE: Duration = Duration::from_secs(2);

pub struct Scheduler {
    pub engine: Arc<Engine>,
    pub source: Arc<dyn NoteSource>,
    /// Notified to re-plan now.
    pub wake: Arc<Notify>,
}

/// What the scheduler did in one pass, for logs and tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pass {
    pub fired: Vec<(PathBuf, &'static str)>,
    pub next: Option<chrono::DateTime<chrono::Utc>>,
}

impl Scheduler {
    /// Run until the process ends.
    pub async fn run(self: Arc<Self>) {
        let mut recently: HashMap<PathBuf, Instant> = HashMap::new();
        loop {
            let pass = self.pass(&mut recently);
            let now = self.engine.clock.now();
            let mut wait = pass
                .next
                .map(|n| (n - now).to_std().unwrap_or(Duration::ZERO))
                .unwrap_or(MAX_SLEEP)
                .min(MAX_SLEEP);
            if let Some(poll) = self.engine.clock.poll_interval() {
                wait = wait.min(poll);
            }
            if !recently.is_empty() {
                wait = wait.min(REFIRE_PAUSE);
            }
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.wake.notified() => {}
            }
        }
    }

    /// Fire every note due now; return when to look next.
    pub fn pass(self: &Arc<Self>, recently: &mut HashMap<PathBuf, Instant>) -> Pass {
        let mut pass = Pass::default();
        recently.retain(|_, at| at.elapsed() < REFIRE_PAUSE);
        if !self.engine.unattended_runs() {
            return pass;
        }
        let now = self.engine.clock.now();
        for (path, entry) in self.source.live_notes() {
            let Some(live) = &entry.live else { continue };
            if live.has_errors || !live.active || self.engine.registry.is_running(&path) {
                continue;
            }
            let upcoming = entry.schedule.upcoming(live, now, &self.engine.zone);
            match upcoming.due {
                // Inside a folder with its own, untrusted `.livenote.toml`: the root's trust
                // does not extend there (`livenote list` shows it untrusted).
                Some(_) if self.engine.untrusted_nested_folder(&path).is_some() => {
                    tracing::debug!(
                        "not firing {}: inside an untrusted folder with its own config",
                        path.display()
                    );
                }
                Some(trigger) if !recently.contains_key(&path) => {
                    let Some(token) = self.engine.registry.start(&path) else { continue };
                    let kind = TriggerKind::from(trigger);
                    let rel = self.engine.rel(&path);
                    tracing::info!("fire {rel} ({})", kind.as_str());
                    recently.insert(path.clone(), Instant::now());
                    pass.fired.push((path.clone(), kind.as_str()));
                    let me = self.clone();
                    tokio::spawn(async move {
                        let spec = RunSpec { path: path.clone(), trigger: kind, context: None };
                        let outcome = me.engine.run_registered(spec, token, &mut |_| {}).await;
                        log_outcome(&rel, &outcome);
                        me.wake.notify_one();
                    });
                }
                Some(_) => {}
                None => {
                    if let Some(n) = upcoming.next_due.filter(|n| *n > now) {
                        pass.next = Some(pass.next.map_or(n, |p| p.min(n)));
                    }
                }
            }
        }
        pass
    }
}

/// One log line per outcome, the note path second.
pub fn log_outcome(rel: &str, outcome: &Outcome) {
    match outcome {
        Outcome::Done { summary, .. } => tracing::info!("done {rel}: {summary}"),
        Outcome::Failed { error, .. } => tracing::warn!("failed {rel}: {error}"),
        Outcome::Stopped { .. } => tracing::warn!("failed {rel}: stopped"),
        Outcome::Skipped(reason) => tracing::info!("skip {rel} ({reason})"),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::RwLock;

    use chrono::{DateTime, TimeDelta, Utc};

    use super::*;
    use crate::config::Config;
    use crate::runs::DiskIo;
    use crate::schedule::{ManualClock, Zone};
    use crate::workspace::index::Index;
    use crate::workspace::trust::TrustStore;

    struct IndexSource(RwLock<Index>);

    impl NoteSource for IndexSource {
        fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)> {
            let mut idx = self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner);
            // Tests re-read every note each pass (the real scheduler hears file events).
            let paths: Vec<PathBuf> = idx.live_notes().map(|(p, _, _)| p.clone()).collect();
            for p in &paths {
                idx.refresh(p);
            }
            idx.live_notes().map(|(p, e, _)| (p.clone(), e.clone())).collect()
        }
    }

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_default()
    }

    struct Fixture {
        dir: tempfile::TempDir,
        clock: ManualClock,
        scheduler: Arc<Scheduler>,
        trust: TrustStore,
    }

    fn fixture(command: &str, note: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let config = format!(
            "[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", {command:?}]\ntimeout = \"2s\"\n"
        );
        std::fs::write(root.join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("n.md"), note).unwrap_or_else(|e| panic!("{e}"));
        let clock = ManualClock::new(t("2026-11-23T09:00:30Z"));
        let trust = TrustStore::in_dir(&root.join(".data"));
        let (config, problems) = Config::load_with(Some(&root), None, &|_: &str| None);
        assert!(problems.is_empty(), "{problems:?}");
        let engine = Arc::new(Engine::new(
            &root,
            Arc::new(clock.clone()),
            Zone::Named(chrono_tz::UTC),
            Arc::new(DiskIo),
            config,
            Some(trust.clone()),
        ));
        let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
        let scheduler = Arc::new(Scheduler {
            engine,
            source: Arc::new(IndexSource(RwLock::new(index))),
            wake: Arc::new(Notify::new()),
        });
        Fixture { dir, clock, scheduler, trust }
    }

    const NOTE: &str = "---\nlive:\n  objective: o\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# N\n";

    fn note_text(dir: &Path) -> String {
        let root = dir.canonicalize().unwrap_or_else(|e| panic!("{e}"));
        std::fs::read_to_string(root.join("n.md")).unwrap_or_default()
    }

    async fn settle(f: &Fixture) {
        for _ in 0..300 {
            if f.scheduler.engine.registry.running().is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the run did not finish");
    }

    #[tokio::test]
    async fn untrusted_fires_nothing_and_trust_starts_the_schedule() {
        let f = fixture("echo hi", NOTE);
        let mut recently = HashMap::new();
        assert!(f.scheduler.pass(&mut recently).fired.is_empty(), "untrusted workspace fired");
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let pass = f.scheduler.pass(&mut recently);
        assert_eq!(pass.fired.len(), 1);
        assert_eq!(pass.fired[0].1, "cron");
        settle(&f).await;
        let text = note_text(f.dir.path());
        assert!(text.contains("lastRunSummary: \"Updated: hi\""), "{text}");
        assert!(text.ends_with("# N\n\nhi\n") || text.ends_with("# N\nhi\n"), "{text}");
        // Done for this hour: nothing fires until 10:00.
        recently.clear();
        f.clock.set(t("2026-11-23T09:59:59Z"));
        assert!(f.scheduler.pass(&mut recently).fired.is_empty());
        f.clock.set(t("2026-11-23T10:00:00.500Z"));
        assert_eq!(f.scheduler.pass(&mut recently).fired.len(), 1);
        settle(&f).await;
    }

    #[tokio::test]
    async fn failure_is_recorded_and_retried_after_the_backoff() {
        let f = fixture("echo broken >&2; exit 3", NOTE);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let mut recently = HashMap::new();
        assert_eq!(f.scheduler.pass(&mut recently).fired.len(), 1);
        settle(&f).await;
        let text = note_text(f.dir.path());
        assert!(text.contains("lastRunError: \"exited with status 3: broken\""), "{text}");
        assert!(!text.contains("lastRunAt"), "{text}");
        recently.clear();
        // Still inside the backoff: nothing; after it, the failed cycle is retried.
        f.clock.advance(TimeDelta::minutes(4));
        assert!(f.scheduler.pass(&mut recently).fired.is_empty());
        f.clock.advance(TimeDelta::minutes(1));
        assert_eq!(f.scheduler.pass(&mut recently).fired.len(), 1);
        settle(&f).await;
    }

    #[tokio::test]
    async fn stop_ends_a_run_within_a_second_and_a_hang_times_out() {
        let f = fixture("sleep 30", NOTE);
        // The provider is the folder's: it runs, even by hand, only in a trusted folder.
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let path = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}")).join("n.md");
        let engine = f.scheduler.engine.clone();
        let run = {
            let engine = engine.clone();
            let path = path.clone();
            tokio::spawn(async move {
                let spec = RunSpec { path, trigger: TriggerKind::Manual, context: None };
                engine.run(spec, &mut |_| {}).await
            })
        };
        for _ in 0..200 {
            if engine.registry.is_running(&path) && note_text(f.dir.path()).contains("lastRunId") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let asked = std::time::Instant::now();
        assert!(engine.stop(&path));
        let outcome = run.await.unwrap_or_else(|e| panic!("{e}"));
        assert!(asked.elapsed() < Duration::from_secs(1), "stop took {:?}", asked.elapsed());
        assert!(matches!(outcome, Outcome::Stopped { .. }), "{outcome:?}");
        assert!(note_text(f.dir.path()).contains("lastRunError: \"stopped\""));
        // The provider's timeout is 2 s: a hang is killed then.
        let started = std::time::Instant::now();
        let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Manual, context: None };
        let outcome = engine.run(spec, &mut |_| {}).await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            matches!(&outcome, Outcome::Failed { error, .. } if error == "timed out after 2s"),
            "{outcome:?}"
        );
    }

    #[tokio::test]
    async fn paused_and_invalid_notes_never_fire() {
        let paused = NOTE.replace("  objective: o\n", "  objective: o\n  active: false\n");
        let f = fixture("echo hi", &paused);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert!(f.scheduler.pass(&mut HashMap::new()).fired.is_empty());
        let invalid = NOTE.replace("  objective: o\n", "  objective: o\n  active: yes\n");
        let f = fixture("echo hi", &invalid);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        assert!(f.scheduler.pass(&mut HashMap::new()).fired.is_empty());
    }
}
