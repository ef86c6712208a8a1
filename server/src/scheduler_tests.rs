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
    fixture_with(command, note, Arc::new(DiskIo))
}

fn fixture_with(command: &str, note: &str, io: Arc<dyn crate::runs::NoteIo>) -> Fixture {
    fixture_in(command, "timeout = \"2s\"\n", &[("n.md", note)], io)
}

/// `extra`: more lines of the provider's table, then any other tables.
fn fixture_in(
    command: &str,
    extra: &str,
    notes: &[(&str, &str)],
    io: Arc<dyn crate::runs::NoteIo>,
) -> Fixture {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let config = format!(
        "[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", {command:?}]\n{extra}"
    );
    std::fs::write(root.join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
    for (name, text) in notes {
        std::fs::write(root.join(name), text).unwrap_or_else(|e| panic!("{e}"));
    }
    let clock = ManualClock::new(t("2026-11-23T09:00:30Z"));
    let trust = TrustStore::in_dir(&root.join(".data"));
    let (config, problems) = Config::load_with(Some(&root), None, &|_: &str| None);
    assert!(problems.is_empty(), "{problems:?}");
    let engine = Arc::new(Engine::new(
        &root,
        Arc::new(clock.clone()),
        Zone::Named(chrono_tz::UTC),
        io,
        config,
        Some(trust.clone()),
    ));
    let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
    let scheduler =
        Arc::new(Scheduler::new(engine, Arc::new(IndexSource(RwLock::new(index))), Arc::new(Notify::new())));
    Fixture { dir, clock, scheduler, trust }
}

const NOTE: &str = "---\nlive:\n  objective: o\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# N\n";

fn note_text(dir: &Path) -> String {
    let root = dir.canonicalize().unwrap_or_else(|e| panic!("{e}"));
    std::fs::read_to_string(root.join("n.md")).unwrap_or_default()
}

async fn settle(f: &Fixture) {
    for _ in 0..300 {
        if f.scheduler.is_idle() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the run did not finish");
}

/// A burst of due notes (the soak: 1,000 in one minute) runs at most
/// `max_concurrent_runs` at a time; the others wait their turn, unlocked and not shown
/// running, and all run in the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_due_notes_runs_at_most_max_concurrent_runs_at_once() {
    // Each run marks itself in flight, notes how many are, and blocks until released.
    let command = "cd \"$LIVENOTE_WORKSPACE\" && mkdir -p .probe && : > .probe/$$ && ls .probe | wc -l >> .probe-seen \
                       && while [ ! -e release ]; do sleep 0.02; done; rm -f .probe/$$; echo ran";
    let names: Vec<String> = (0..6).map(|k| format!("n{k}.md")).collect();
    let notes: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), NOTE)).collect();
    let extra = "timeout = \"60s\"\n[scheduler]\nmax_concurrent_runs = 2\n";
    let f = fixture_in(command, extra, &notes, Arc::new(DiskIo));
    let root = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    f.trust.trust(&root).unwrap_or_else(|e| panic!("{e}"));
    let mut memory = Memory::default();
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 6, "every due note is fired");
    let in_flight = || std::fs::read_dir(root.join(".probe")).map(|d| d.count()).unwrap_or(0);
    let mut most = 0;
    // Until two are in flight, then long enough for the other four to have started too.
    for _ in 0..300 {
        most = most.max(in_flight());
        if most >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        most = most.max(in_flight());
        assert!(f.scheduler.engine.registry.running().len() <= 2, "a waiting run shows as running");
        // A later pass does not fire the waiting notes again.
        memory.recently.clear();
        assert!(f.scheduler.pass(&mut memory).fired.is_empty());
    }
    assert_eq!(most, 2, "runs in flight at once");
    std::fs::write(root.join("release"), "").unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..1000 {
        if names.iter().all(|n| std::fs::read_to_string(root.join(n)).unwrap_or_default().contains("\nran\n"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for n in &names {
        let text = std::fs::read_to_string(root.join(n)).unwrap_or_default();
        assert!(text.contains("\nran\n"), "{n} did not run: {text}");
    }
    let seen = std::fs::read_to_string(root.join(".probe-seen")).unwrap_or_default();
    let seen: Vec<usize> = seen.split_whitespace().filter_map(|n| n.parse().ok()).collect();
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert!(seen.iter().all(|n| *n <= 2), "in flight as each run saw it: {seen:?}");
}

/// The index as it was: file events that lag behind a burst of runs.
struct Frozen(Vec<(PathBuf, Arc<Entry>)>);

impl NoteSource for Frozen {
    fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)> {
        self.0.clone()
    }
}

/// A pass that comes after a run of its own landed, before the index heard of the write,
/// neither fires the note again nor says it skipped it (the soak logged "skip … not due as
/// it reads now" after 9,631 of 10,000 runs); a text that is not the run's still is said.
#[tokio::test]
async fn a_run_that_just_landed_is_not_skipped_while_the_index_lags() {
    let f = fixture("echo hi", NOTE);
    let root = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    f.trust.trust(&root).unwrap_or_else(|e| panic!("{e}"));
    let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
    let frozen = Frozen(index.live_notes().map(|(p, e, _)| (p.clone(), e.clone())).collect());
    let s = Arc::new(Scheduler::new(f.scheduler.engine.clone(), Arc::new(frozen), Arc::new(Notify::new())));
    let mut memory = Memory::default();
    assert_eq!(s.pass(&mut memory).fired.len(), 1);
    for _ in 0..300 {
        if s.is_idle() && note_text(f.dir.path()).contains("hi") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(note_text(f.dir.path()).contains("lastRunSummary: \"Updated: hi\""));
    // Past the pause after a fire: the stale index says due, the note says done.
    memory.recently.clear();
    let pass = s.pass(&mut memory);
    assert!(pass.fired.is_empty(), "{pass:?}");
    assert!(pass.settled.is_empty(), "its own run was taken for unsaved changes: {pass:?}");
    assert_eq!(pass.next, Some(t("2026-11-23T10:00:00.001Z")));
    // Someone else's text (an edit the index has not seen either) is still said.
    let text = note_text(f.dir.path()).replace("# N", "# M");
    std::fs::write(root.join("n.md"), text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.pass(&mut memory).settled.len(), 1);
}

/// `[scheduler] host` naming another machine: the due note does not fire here; once it has
/// waited `failover_after` with no attempt from any machine it is taken over, once, past
/// the cron's grace, and its transcript says so. The run re-checks the rule under the lock.
#[tokio::test]
async fn a_folder_hosted_elsewhere_fires_only_by_failover() {
    let extra = "timeout = \"2s\"\n[scheduler]\nhost = \"elsewhere-of-issue-23\"\nfailover_after = \"10m\"\n";
    let f = fixture_in("echo hi", extra, &[("n.md", NOTE)], Arc::new(DiskIo));
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let path = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}")).join("n.md");
    let mut memory = Memory::default();
    let pass = f.scheduler.pass(&mut memory);
    assert!(pass.fired.is_empty(), "{pass:?}");
    assert_eq!(pass.next, Some(t("2026-11-23T09:10:00Z")), "wakes when the wait ends");
    // A scheduled run asked for directly (as a pass elsewhere would) is refused too.
    let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Cron, context: None, event: None };
    let refused = f.scheduler.engine.run(spec, &mut |_| {}).await;
    assert_eq!(refused, Outcome::Skipped("scheduled on elsewhere-of-issue-23".to_owned()));
    f.clock.set(t("2026-11-23T09:10:00Z"));
    let pass = f.scheduler.pass(&mut memory);
    assert_eq!(pass.fired, vec![(path.clone(), "cron")]);
    settle(&f).await;
    let text = note_text(f.dir.path());
    assert!(text.contains("lastRunAt: \"2026-11-23T09:10:00.000Z\""), "{text}");
    let transcripts = f.scheduler.engine.store.transcripts();
    let transcript = std::fs::read_to_string(&transcripts[0]).unwrap_or_default();
    assert!(transcript.contains("\"kind\":\"failover\""), "{transcript}");
    assert!(transcript.contains("in place of elsewhere-of-issue-23"), "{transcript}");
    // Served: not again this occurrence, however long it waits.
    memory.recently.clear();
    f.clock.set(t("2026-11-23T09:50:00Z"));
    assert!(f.scheduler.pass(&mut memory).fired.is_empty());
    // Without `failover_after`, never.
    let g = fixture_in(
        "echo hi",
        "timeout = \"2s\"\n[scheduler]\nhost = \"elsewhere-of-issue-23\"\n",
        &[("n.md", NOTE)],
        Arc::new(DiskIo),
    );
    g.trust.trust(g.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    g.clock.set(t("2026-11-23T11:59:00Z"));
    let pass = g.scheduler.pass(&mut Memory::default());
    assert_eq!((pass.fired.len(), pass.next), (0, None));
}

/// Without a host, a `lastRunId` this machine did not make is said once; with a host named
/// (this machine here), another machine's run is a run by hand or a failover: not said.
#[tokio::test]
async fn another_machines_run_is_noticed_only_without_a_host() {
    let ran = NOTE.replace("---\n# N", "  lastRunAt: \"2026-11-23T09:00:10.000Z\"\n---\n# N");
    let foreign = |id: &str| ran.replace("---\n# N", &format!("  lastRunId: {id}\n---\n# N"));
    for hosted in [false, true] {
        let f = fixture("echo hi", &ran);
        f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
        if hosted {
            let me = f.scheduler.engine.machine();
            if let Ok(mut c) = f.scheduler.engine.config.write() {
                c.scheduler.host = Some(me);
            }
        }
        let mut memory = Memory::default();
        assert!(f.scheduler.pass(&mut memory).fired.is_empty());
        let note = f.dir.path().join("n.md");
        std::fs::write(&note, foreign("01KAQ8XW0000000000000000AA")).unwrap_or_else(|e| panic!("{e}"));
        f.scheduler.pass(&mut memory);
        assert_eq!(memory.said_foreign, !hosted, "hosted: {hosted}");
    }
    // A run of this machine is its own.
    let f = fixture("echo hi", NOTE);
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let mut memory = Memory::default();
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&f).await;
    memory.recently.clear();
    f.scheduler.pass(&mut memory);
    assert!(note_text(f.dir.path()).contains("lastRunId"));
    assert!(!memory.said_foreign);
}

/// A sync tool's conflict copy of a due note is never fired; the note itself is.
#[tokio::test]
async fn a_sync_conflict_copy_never_fires() {
    let copy = "n.sync-conflict-20261123-090000-ABC1234.md";
    let f = fixture_in("echo hi", "timeout = \"2s\"\n", &[("n.md", NOTE), (copy, NOTE)], Arc::new(DiskIo));
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let pass = f.scheduler.pass(&mut Memory::default());
    let fired: Vec<String> = pass
        .fired
        .iter()
        .filter_map(|(p, _)| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    assert_eq!(fired, vec!["n.md".to_owned()]);
    settle(&f).await;
}

/// A one-shot pass (`livenote tick`) decides as the scheduler does; a dry one fires nothing,
/// a reporting one sends each fired note's outcome once, and the channel closes when the
/// runs are over (the caller's wait ends there).
#[tokio::test]
async fn a_one_shot_pass_reports_each_run_once_and_a_dry_one_runs_nothing() {
    let f = fixture("echo hi", NOTE);
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let root = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let source = || {
        let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
        Arc::new(IndexSource(RwLock::new(index)))
    };
    let engine = f.scheduler.engine.clone();
    let dry = Arc::new(Scheduler::one_shot(engine.clone(), source(), Firing::DryRun));
    let pass = dry.pass(&mut Memory::default());
    assert_eq!(pass.fired, vec![(root.join("n.md"), "cron")]);
    assert!(dry.is_idle());
    assert_eq!(note_text(f.dir.path()), NOTE, "a dry pass wrote");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let once = Arc::new(Scheduler::one_shot(engine.clone(), source(), Firing::Report(tx)));
    assert_eq!(once.pass(&mut Memory::default()).fired.len(), 1);
    drop(once);
    let mut outcomes = Vec::new();
    while let Some(o) = rx.recv().await {
        outcomes.push(o);
    }
    assert!(
        matches!(outcomes.as_slice(), [(p, Outcome::Done { .. })] if *p == root.join("n.md")),
        "{outcomes:?}"
    );
    // Run: a second one-shot pass finds nothing due.
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let again = Arc::new(Scheduler::one_shot(engine, source(), Firing::Report(tx)));
    assert!(again.pass(&mut Memory::default()).fired.is_empty());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// One-shot passes (`livenote tick` from a timer that comes late, early, twice at one
    /// instant or hours apart) compose as the rule for an hourly note says, written plainly
    /// here: it runs at the first pass (it never ran), then at a pass that lands within 2
    /// minutes (inclusive) after the latest hour strictly before it, if it has not run since
    /// that hour; never twice for one hour.
    #[test]
    fn one_shot_passes_at_any_instants_run_as_the_rule_says(
        // Seconds between passes: as many within minutes (around an hour's grace) as hours apart.
        steps in proptest::collection::vec(proptest::prop_oneof![0i64..=300, 0i64..=10_800], 1..12),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let (ran, expected) = runtime.block_on(async {
            let f = fixture("echo hi", NOTE);
            f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
            let root = f.dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
            let mut now = t("2026-11-23T09:00:30Z");
            let mut last: Option<DateTime<Utc>> = None;
            let (mut ran, mut expected) = (Vec::new(), Vec::new());
            for step in steps {
                now += TimeDelta::seconds(step);
                f.clock.set(now);
                let hour = now.timestamp().div_euclid(3600) * 3600;
                let hour = if hour == now.timestamp() { hour - 3600 } else { hour };
                let p = DateTime::from_timestamp(hour, 0).unwrap_or_default();
                if last.is_none_or(|l| l < p && now - p <= TimeDelta::minutes(2)) {
                    expected.push(now);
                    last = Some(now);
                }
                let (index, _) = Index::build(std::slice::from_ref(&root), &[]);
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let source = Arc::new(IndexSource(RwLock::new(index)));
                let once = Arc::new(Scheduler::one_shot(f.scheduler.engine.clone(), source, Firing::Report(tx)));
                let fired = once.pass(&mut Memory::default()).fired.len();
                drop(once);
                while let Some((_, outcome)) = rx.recv().await {
                    assert!(matches!(outcome, Outcome::Done { .. }), "{outcome:?}");
                    ran.push(now);
                }
                assert!(fired <= 1);
            }
            (ran, expected)
        });
        proptest::prop_assert_eq!(ran, expected);
    }
}

#[tokio::test]
async fn untrusted_fires_nothing_and_trust_starts_the_schedule() {
    let f = fixture("echo hi", NOTE);
    let mut memory = Memory::default();
    assert!(f.scheduler.pass(&mut memory).fired.is_empty(), "untrusted workspace fired");
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let pass = f.scheduler.pass(&mut memory);
    assert_eq!(pass.fired.len(), 1);
    assert_eq!(pass.fired[0].1, "cron");
    settle(&f).await;
    let text = note_text(f.dir.path());
    assert!(text.contains("lastRunSummary: \"Updated: hi\""), "{text}");
    assert!(text.ends_with("# N\n\nhi\n") || text.ends_with("# N\nhi\n"), "{text}");
    // Done for this hour: nothing fires until 10:00.
    memory.recently.clear();
    f.clock.set(t("2026-11-23T09:59:59Z"));
    assert!(f.scheduler.pass(&mut memory).fired.is_empty());
    f.clock.set(t("2026-11-23T10:00:00.500Z"));
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&f).await;
}

#[tokio::test]
async fn failure_is_recorded_and_retried_after_the_backoff() {
    let f = fixture("echo broken >&2; exit 3", NOTE);
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let mut memory = Memory::default();
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&f).await;
    let text = note_text(f.dir.path());
    assert!(text.contains("lastRunError: \"exited with status 3: broken\""), "{text}");
    assert!(!text.contains("lastRunAt"), "{text}");
    memory.recently.clear();
    // Still inside the backoff: nothing; after it, the failed cycle is retried.
    f.clock.advance(TimeDelta::minutes(4));
    assert!(f.scheduler.pass(&mut memory).fired.is_empty());
    f.clock.advance(TimeDelta::minutes(1));
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
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
            let spec = RunSpec { path, trigger: TriggerKind::Manual, context: None, event: None };
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
    let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Manual, context: None, event: None };
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
    assert!(f.scheduler.pass(&mut Memory::default()).fired.is_empty());
    let invalid = NOTE.replace("  objective: o\n", "  objective: o\n  active: yes\n");
    let f = fixture("echo hi", &invalid);
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(f.scheduler.pass(&mut Memory::default()).fired.is_empty());
}

#[tokio::test]
async fn nothing_fires_after_until() {
    // The zone is UTC: the date ends at 2026-11-23T24:00Z.
    let note = NOTE.replace("  objective: o\n", "  objective: o\n  until: 2026-11-23\n");
    let f = fixture("echo hi", &note);
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let mut memory = Memory::default();
    // Before the end: the hourly cron fires as usual.
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&f).await;
    memory.recently.clear();
    f.clock.set(t("2026-11-23T23:00:00.500Z"));
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&f).await;
    // From midnight on, no occurrence fires, however long the clock runs.
    for at in ["2026-11-24T00:00:00.500Z", "2026-11-24T01:00:00.500Z", "2026-12-01T09:00:00.500Z"] {
        memory.recently.clear();
        f.clock.set(t(at));
        assert!(f.scheduler.pass(&mut memory).fired.is_empty(), "fired at {at}");
    }
}

/// The note open in an editor: its buffer, edited by runs and left unsaved.
#[derive(Clone)]
struct Buffer {
    text: Arc<std::sync::Mutex<Option<(String, i32)>>>,
    changes: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Buffer {
    fn set(&self, text: &str) {
        let mut b = self.text.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let version = b.as_ref().map_or(1, |(_, v)| v + 1);
        *b = Some((text.to_owned(), version));
        drop(b);
        self.changes.send_modify(|n| *n += 1);
    }

    fn text(&self) -> String {
        let b = self.text.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        b.as_ref().map(|(t, _)| t.clone()).unwrap_or_default()
    }
}

impl crate::runs::io::Editor for Buffer {
    fn open(&self, _: &Path) -> Option<(String, i32)> {
        self.text.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn send_edit<'a>(
        &'a self,
        _: &'a Path,
        version: i32,
        _: &'a str,
        edits: &'a [crate::text::TextEdit],
    ) -> crate::runs::io::BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let current = self.open(Path::new("")).ok_or("closed")?;
            if current.1 != version {
                return Ok(false);
            }
            self.set(&crate::text::edit::apply(&current.0, edits).map_err(|e| e.to_string())?);
            Ok(true)
        })
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

/// A run into an unsaved buffer leaves the file due: the scheduler decides once that the
/// note is not due as it reads now, instead of firing and skipping it every pause for the
/// whole grace window; it runs again when the buffer changes or the next occurrence comes.
#[tokio::test]
async fn a_buffer_that_disagrees_with_the_file_is_decided_once() {
    let buffer = Buffer {
        text: Arc::new(std::sync::Mutex::new(None)),
        changes: Arc::new(tokio::sync::watch::channel(0).0),
    };
    let io = Arc::new(crate::runs::io::BufferIo::new(buffer.clone()));
    let f = fixture_with("echo hi", NOTE, io);
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    buffer.set(NOTE);
    let mut memory = Memory::default();
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&f).await;
    let ran = buffer.text();
    assert!(ran.contains("lastRunAt"), "{ran}");
    assert_eq!(note_text(f.dir.path()), NOTE, "the run went to the buffer, not the file");
    // Ticks every 2 s through the grace window (the refire pause over each time): the run
    // store's record of the buffer's run counts as the file's stamps would (issue 32 §2), so
    // the note is not due, not even a decision to take.
    let (mut fired, mut settled) = (0, 0);
    for _ in 0..40 {
        f.clock.advance(TimeDelta::seconds(2));
        memory.recently.clear();
        let pass = f.scheduler.pass(&mut memory);
        fired += pass.fired.len();
        settled += pass.settled.len();
        settle(&f).await;
    }
    assert_eq!((fired, settled), (0, 0));
    // The user throws the unsaved run away: the occurrence was attempted all the same.
    buffer.set(NOTE);
    memory.recently.clear();
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 0);
    // The next occurrence is due on disk; the buffer says a run the store does not know of
    // served it (typed, or pasted in): decided once, nothing fired.
    f.clock.set(t("2026-11-23T10:00:00.500Z"));
    buffer.set(&NOTE.replace("  triggers:", "  lastRunAt: \"2026-11-23T10:00:00.200Z\"\n  triggers:"));
    let (mut fired, mut settled) = (0, 0);
    for _ in 0..20 {
        memory.recently.clear();
        let pass = f.scheduler.pass(&mut memory);
        fired += pass.fired.len();
        settled += pass.settled.len();
        settle(&f).await;
        f.clock.advance(TimeDelta::seconds(2));
    }
    assert_eq!((fired, settled), (0, 1));
    // The buffer without it: due again, so the note runs.
    buffer.set(NOTE);
    memory.recently.clear();
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&f).await;
    assert!(buffer.text().contains("lastRunAt: \"2026-11-23T10:00:4"), "{}", buffer.text());
}

#[cfg(unix)]
/// A note the run cannot write stays due (its `lastAttemptAt` cannot be written either):
/// it is skipped once, not fired and skipped every pause, and tried again as soon as it
/// changes (a `chmod` counts) or a minute has passed.
#[tokio::test]
async fn a_note_that_cannot_be_written_is_skipped_once_until_it_changes() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture("echo hi", NOTE);
    f.trust.trust(f.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let note = f.dir.path().join("n.md");
    let mode = |m: u32| std::fs::set_permissions(&note, std::fs::Permissions::from_mode(m));
    mode(0o444).unwrap_or_else(|e| panic!("{e}"));
    let mut memory = Memory::default();
    let mut fired = 0;
    for _ in 0..20 {
        memory.recently.clear();
        fired += f.scheduler.pass(&mut memory).fired.len();
        settle(&f).await;
        f.clock.advance(TimeDelta::seconds(2));
    }
    assert_eq!(fired, 1, "fired again while nothing changed");
    assert_eq!(note_text(f.dir.path()), NOTE);
    // Made writable: runs at the next pass.
    mode(0o644).unwrap_or_else(|e| panic!("{e}"));
    memory.recently.clear();
    assert_eq!(f.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&f).await;
    assert!(note_text(f.dir.path()).contains("lastRunAt"));
    // Unchanged but a minute later: tried again (a full disk may have room by then).
    let g = fixture("echo hi", NOTE);
    g.trust.trust(g.dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let note = g.dir.path().join("n.md");
    std::fs::set_permissions(&note, std::fs::Permissions::from_mode(0o444)).unwrap_or_else(|e| panic!("{e}"));
    let mut memory = Memory::default();
    assert_eq!(g.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&g).await;
    g.clock.advance(TimeDelta::seconds(30));
    memory.recently.clear();
    let pass = g.scheduler.pass(&mut memory);
    assert!(pass.fired.is_empty());
    assert_eq!(pass.next, Some(t("2026-11-23T09:01:30Z")), "wakes when the pause ends");
    g.clock.advance(TimeDelta::seconds(31));
    memory.recently.clear();
    assert_eq!(g.scheduler.pass(&mut memory).fired.len(), 1);
    settle(&g).await;
}
