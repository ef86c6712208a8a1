//! Runs with real processes and real files: several `livenote watch` processes on one folder
//! fire each cycle once, and a run killed with SIGKILL leaves a readable note that is retried
//! after the backoff. Time is a file the test writes (`--clock-file`), never slept on.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

struct Workspace {
    dir: tempfile::TempDir,
    data: tempfile::TempDir,
    clock: PathBuf,
}

impl Workspace {
    fn new(command: &str, note: &str) -> Workspace {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let data = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let config = format!(
            "[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", {command:?}]\ntimeout = \"20s\"\n"
        );
        std::fs::write(dir.path().join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("n.md"), note).unwrap_or_else(|e| panic!("{e}"));
        let clock = data.path().join("clock");
        let ws = Workspace { dir, data, clock };
        let out = ws.livenote(&["trust", "."]).output().unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        ws
    }

    fn livenote(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_livenote"));
        c.args(args)
            .current_dir(self.dir.path())
            .env("LIVENOTE_DATA_DIR", self.data.path())
            .env("LIVENOTE_CONFIG_DIR", self.data.path())
            .env("RUST_LOG", "info")
            .env("TZ", "UTC");
        c
    }

    fn set_clock(&self, t: &str) {
        let tmp = self.clock.with_extension("tmp");
        std::fs::write(&tmp, t).unwrap_or_else(|e| panic!("{e}"));
        std::fs::rename(&tmp, &self.clock).unwrap_or_else(|e| panic!("{e}"));
    }

    fn note(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("n.md")).unwrap_or_default()
    }

    /// Transcripts of runs that finished successfully.
    fn done_runs(&self) -> usize {
        let dir = self.dir.path().join(".livenote/runs");
        std::fs::read_dir(dir)
            .map(|r| {
                r.flatten()
                    .filter(|e| {
                        std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("\"kind\":\"done\""))
                    })
                    .count()
            })
            .unwrap_or(0)
    }

    /// Start `livenote watch` and wait until it has indexed the folder.
    fn watch(&self) -> Watcher {
        let mut child = self
            .livenote(&["watch", "--clock-file", &self.clock.display().to_string(), "."])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let w = Watcher { child, lines: rx, seen: Vec::new() };
        w.wait_for("watch ")
    }
}

struct Watcher {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Watcher {
    fn wait_for(mut self, needle: &str) -> Watcher {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_millis(100)) {
                let hit = line.contains(needle);
                self.seen.push(line);
                if hit {
                    return self;
                }
            }
        }
        panic!("watcher never logged {needle:?}: {:?}", self.seen)
    }

    fn stop(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.seen.extend(self.lines.try_iter());
        self.seen
    }
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("timed out waiting for {what}");
}

const MINUTELY: &str = "---\nlive:\n  objective: count\n  triggers:\n    cronExpr: \"* * * * *\"\n  lastRunAt: \"2026-11-23T08:59:10.000Z\"\n---\n# Count\n\nold body\n";

#[test]
fn three_watchers_fire_each_cycle_once() {
    let ws = Workspace::new("date +%s%N", MINUTELY);
    ws.set_clock("2026-11-23T08:59:20Z");
    let watchers: Vec<Watcher> = (0..3).map(|_| ws.watch()).collect();
    // Three cycles of a per-minute cron; the 5-minute backoff spaces fires out.
    for (i, t) in ["2026-11-23T09:00:30Z", "2026-11-23T09:06:30Z", "2026-11-23T09:12:30Z"].iter().enumerate()
    {
        ws.set_clock(t);
        wait_until(&format!("run {}", i + 1), || ws.done_runs() == i + 1);
        // Give the other watchers every chance to fire the same cycle again.
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(ws.done_runs(), i + 1, "cycle {} fired more than once:\n{}", i + 1, ws.note());
    }
    let logs: Vec<Vec<String>> = watchers.into_iter().map(Watcher::stop).collect();
    let fires: usize = logs.iter().flatten().filter(|l| l.contains("fire n.md")).count();
    assert!(fires >= 3, "{logs:#?}");
    let text = ws.note();
    assert!(text.contains("lastRunAt: \"2026-11-23T09:12:30.000Z\""), "{text}");
}

#[test]
fn kill_9_mid_run_leaves_a_readable_note_retried_after_the_backoff() {
    let note = "---\nlive:\n  objective: slow\n---\n# Slow\n\nold body\n";
    let ws = Workspace::new("sleep 3; echo new body", note);
    ws.set_clock("2026-11-23T09:00:00Z");
    let mut run = ws
        .livenote(&["run", "n.md", "--clock-file", &ws.clock.display().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    wait_until("the run to start", || ws.note().contains("lastRunId"));
    // SIGKILL: no cleanup of any kind.
    run.kill().unwrap_or_else(|e| panic!("{e}"));
    let _ = run.wait();
    let text = ws.note();
    let analysis = livenote::note::analyze(&text, &livenote::note::Options::default());
    assert!(!analysis.has_errors(), "{text}");
    assert!(text.ends_with("# Slow\n\nold body\n"), "the body changed:\n{text}");
    assert!(text.contains("lastAttemptAt: \"2026-11-23T09:00:00.000Z\""), "{text}");
    assert!(!text.contains("lastRunAt"), "{text}");
    // Make the note scheduled; within the backoff nothing fires, after it the run happens.
    let scheduled =
        text.replace("  objective: slow\n", "  objective: slow\n  triggers:\n    cronExpr: \"0 * * * *\"\n");
    std::fs::write(ws.dir.path().join("n.md"), &scheduled).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        ws.dir.path().join(".livenote.toml"),
        "[agent]\nprovider = \"p\"\n[providers.p]\nkind = \"command\"\ncommand = [\"echo\", \"new body\"]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    ws.set_clock("2026-11-23T09:04:59Z");
    let w = ws.watch();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(ws.done_runs(), 0, "fired inside the backoff");
    ws.set_clock("2026-11-23T09:05:00Z");
    wait_until("the retried run", || ws.done_runs() == 1);
    w.stop();
    let text = ws.note();
    assert!(text.ends_with("# Slow\n\nnew body\n"), "{text}");
    assert!(text.contains("lastRunError: null"), "{text}");
}
