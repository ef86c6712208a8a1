//! The README's commands, run as written: the first command (`scripts/demo.sh`, with this
//! build's binary) and the two-minute tour's block, line by line, in a scratch home folder.
//! When the README changes, this test runs what it now says.

// Built on Unix calls (nix, std::os::unix, sh); Windows is covered by the platform layer's
// unit tests and the Wine suite.
#![cfg(unix)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn readme() -> String {
    std::fs::read_to_string(checkout().join("README.md")).unwrap_or_else(|e| panic!("README.md: {e}"))
}

/// The lines of the first ```sh block after `heading`, without their trailing comments.
fn sh_block(text: &str, heading: &str) -> Vec<String> {
    let section = text.split(heading).nth(1).unwrap_or_else(|| panic!("no {heading:?} in the README"));
    let block = section.split("```sh\n").nth(1).unwrap_or_else(|| panic!("no sh block after {heading:?}"));
    let block = block.split("```").next().unwrap_or_default();
    block
        .lines()
        .map(|l| l.split("  #").next().unwrap_or(l).trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A scratch home, with livenote's own data and config folders in it, and this build first on
/// PATH as `livenote`.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        Home { dir: tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")) }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn shell(&self, line: &str, cwd: &Path) -> Command {
        let bin = Path::new(env!("CARGO_BIN_EXE_livenote"));
        let path = format!(
            "{}:{}",
            bin.parent().unwrap_or(Path::new("/")).display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = Command::new("bash");
        c.args(["-ec", line])
            .current_dir(cwd)
            .env("HOME", self.path())
            .env("PATH", path)
            .env("TMPDIR", self.path())
            .env("TZ", "UTC")
            .env("LIVENOTE_BIN", bin)
            .env("LIVENOTE_DATA_DIR", self.path().join(".data"))
            .env("LIVENOTE_CONFIG_DIR", self.path().join(".config"))
            .env_remove("LIVENOTE_LOG")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY");
        c
    }
}

/// A long-running command in a process group of its own, killed with its group when dropped.
struct Background(Child);

impl Background {
    fn spawn(mut c: Command) -> Self {
        let child = c
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        Background(child)
    }

    /// Wait (up to 30 s) until `done` holds; fails early if the command exits first.
    fn wait_until(&mut self, what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if done() {
                return;
            }
            if let Ok(Some(status)) = self.0.try_wait() {
                assert!(done(), "exited ({status}) before {what}");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("not within 30 s: {what}")
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGTERM);
        }
        let _ = self.0.wait();
    }
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn ran(note: &Path) -> bool {
    let t = text(note);
    t.contains("lastRunAt:") && !t.contains("(not updated yet)")
}

#[test]
fn the_first_command_fills_a_copy_of_the_examples_and_leaves_the_checkout_alone() {
    let lines = sh_block(&readme(), "# livenote\n");
    assert_eq!(lines, ["bash scripts/demo.sh", "bash scripts/test.sh"], "the README's first screen changed");
    let home = Home::new();
    let before = text(&checkout().join("examples/clock.md"));
    // LIVENOTE_BIN (set by Home) skips the release build: the script is otherwise as written.
    let mut demo = Background::spawn(home.shell(&lines[0], &checkout()));
    let copy = home.path().join("livenote-examples");
    for note in ["clock.md", "reading-stats.md", "recent-changes.md"] {
        demo.wait_until(note, || ran(&copy.join(note)));
    }
    drop(demo);
    assert_eq!(text(&checkout().join("examples/clock.md")), before, "the demo edited the checkout");
}

#[test]
fn the_tour_runs_as_written() {
    let lines = sh_block(&readme(), "## Two-minute tour");
    let home = Home::new();
    let tour = home.path().join("livenote-tour");
    let mut cwd = checkout();
    let (last, steps) = lines.split_last().unwrap_or_else(|| panic!("an empty tour"));
    let mut outputs: Vec<(String, Output)> = Vec::new();
    for line in steps {
        // Each line in the folder the previous one left the shell in (the first one `cd`s).
        let pwd = home.path().join(".pwd");
        let out = home
            .shell(&format!("{line}\npwd > '{}'", pwd.display()), &cwd)
            .output()
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(out.status.success(), "`{line}` failed: {out:?}");
        cwd = PathBuf::from(text(&pwd).trim());
        outputs.push((line.clone(), out));
    }
    let out = |prefix: &str| -> &Output {
        let hit = outputs.iter().find(|(l, _)| l.starts_with(prefix));
        &hit.unwrap_or_else(|| panic!("the tour has no `{prefix}`")).1
    };
    // What the tour says of each step.
    let check = out("livenote check");
    assert!(check.stdout.is_empty() && check.stderr.is_empty(), "check is not silent: {check:?}");
    let at = String::from_utf8_lossy(&out("livenote list --at").stdout).into_owned();
    assert!(at.contains("clock.md") && at.contains("2026-11-24T08:00:00+00:00"), "{at}");
    let run = out("livenote run clock.md");
    let summary = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(summary.lines().count() == 1 && run.stderr.is_empty(), "run prints its summary only: {run:?}");
    let history = String::from_utf8_lossy(&out("livenote history").stdout).into_owned();
    assert!(history.contains("manual") && history.contains("done"), "{history}");
    // `undo` brought back the body from before the run.
    assert!(text(&tour.join("clock.md")).contains("(not updated yet)"), "{}", text(&tour.join("clock.md")));
    // The last line keeps the new note current until stopped.
    assert!(last.contains("livenote watch"), "the tour no longer ends with watch: {last}");
    // `init` makes a folder of the user's own, beside the tour, not a root nested in it.
    let notes = home.path().join("my-notes");
    assert!(!tour.join("my-notes").exists(), "the tour's init made its folder inside the examples copy");
    let starter = std::fs::read_dir(&notes)
        .unwrap_or_else(|e| panic!("{}: {e}", notes.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "md"))
        .unwrap_or_else(|| panic!("init wrote no note"));
    let mut watch = Background::spawn(home.shell(last, &cwd));
    watch.wait_until("watch updated init's note", || text(&starter).contains("lastRunAt:"));
}
