//! Neovim, end to end, headless, against this build's `livenote lsp`:
//! - the README's setup: Neovim 0.11 loads `tests/e2e/nvim/init.lua` (the README's snippet,
//!   verbatim) and runs `tests/e2e/nvim/test.lua`: diagnostics, completion, "Make live", the
//!   status lens, inlay hints;
//! - the plugin (`editors/nvim`): `tests/e2e/nvim/plugin_test.lua` loads it alone and drives
//!   its commands; again on Neovim 0.10 when `tests/e2e/nvim/install-0.10.sh` installed it.
//!
//! Neovim comes from `bash tests/e2e/nvim/install.sh` (CI runs it first). Found as
//! `$LIVENOTE_NVIM`, else `$LIVENOTE_NVIM_VENV/bin/nvim`, else `<repo>/target/nvim-venv/bin/nvim`,
//! else `nvim` on PATH if it is 0.11 or later. Without one the test fails, unless
//! `LIVENOTE_SKIP_NVIM=1` says to skip it.

// This test's output is Neovim's report, shown with `--nocapture`.
#![allow(clippy::print_stdout)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A backstop: test.lua and plugin_test.lua stop themselves after 120 s.
const TIMEOUT: Duration = Duration::from_secs(180);

fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// `(major, minor)` from `nvim --version`'s first line ("NVIM v0.11.4"), if it runs.
fn version(nvim: &Path) -> Option<(u32, u32)> {
    let out = Command::new(nvim).arg("--version").stdin(Stdio::null()).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.lines().next()?.strip_prefix("NVIM v")?;
    let mut parts = v.split(['.', '-', '+']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

fn recent_enough(v: Option<(u32, u32)>) -> bool {
    v.is_some_and(|v| v >= (0, 11))
}

fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The Neovim to run, or why none was found.
fn find_nvim(root: &Path) -> Result<PathBuf, String> {
    if let Some(nvim) = env_path("LIVENOTE_NVIM") {
        // An explicit choice is used or refused, never passed over.
        return match version(&nvim) {
            v if recent_enough(v) => Ok(nvim),
            Some((major, minor)) => {
                Err(format!("LIVENOTE_NVIM={} is Neovim {major}.{minor}; 0.11+ is needed", nvim.display()))
            }
            None => Err(format!("LIVENOTE_NVIM={} does not run as Neovim", nvim.display())),
        };
    }
    let venv = env_path("LIVENOTE_NVIM_VENV").unwrap_or_else(|| root.join("target/nvim-venv"));
    let mut tried = Vec::new();
    for nvim in [venv.join("bin/nvim"), PathBuf::from("nvim")] {
        match version(&nvim) {
            v if recent_enough(v) => return Ok(nvim),
            Some((major, minor)) => tried.push(format!("{} is {major}.{minor}", nvim.display())),
            None => tried.push(format!("{}: not found", nvim.display())),
        }
    }
    Err(format!("no Neovim 0.11+ ({})", tried.join("; ")))
}

/// What one headless Neovim run printed, and how it ended.
struct NvimRun {
    /// The command line, for the report.
    shown: String,
    /// `None` when it did not finish in [`TIMEOUT`] and was killed.
    status: Option<std::process::ExitStatus>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl NvimRun {
    fn report(&self) -> String {
        format!("$ {}\n--- stdout\n{}--- stderr\n{}---", self.shown, self.stdout, self.stderr)
    }

    /// Panic with the report unless Neovim exited 0 after the script's closing
    /// "N passed, 0 failed" line (with N > 0), so an init error that exits 0 cannot pass for a
    /// run; print the report otherwise (shown with `--nocapture`).
    fn assert_passed(&self, what: &str) {
        let report = self.report();
        let Some(status) = self.status else {
            panic!("Neovim did not finish in {} s and was killed\n{report}", TIMEOUT.as_secs())
        };
        let all_passed = self.stdout.lines().any(|l| {
            l.strip_suffix(" passed, 0 failed").and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n > 0)
        });
        assert!(status.success() && all_passed, "{what} failed ({status})\n{report}");
        println!("{report}\n{what}: {:.1} s", self.elapsed.as_secs_f64());
    }
}

/// The Neovim to use, or `None` when `LIVENOTE_SKIP_NVIM=1` says to skip (said on stdout).
fn nvim_or_skip(root: &Path) -> Option<PathBuf> {
    if std::env::var("LIVENOTE_SKIP_NVIM").is_ok_and(|v| v == "1") {
        println!("skipped: LIVENOTE_SKIP_NVIM=1 (the Neovim end-to-end test did not run)");
        return None;
    }
    Some(find_nvim(root).unwrap_or_else(|why| {
        panic!(
            "the Neovim end-to-end test needs Neovim 0.11+: {why}.\n\
             Install it with `bash tests/e2e/nvim/install.sh` (as CI does), point LIVENOTE_NVIM at an \
             nvim 0.11+, or set LIVENOTE_SKIP_NVIM=1 to skip this test."
        )
    }))
}

/// Run `nvim --headless --clean <args>` from the repo root against this build's server, in a
/// fresh home (state, LSP log; --clean keeps user config and plugins out), with the backstop
/// timeout; both pipes are drained while it runs.
fn run_nvim(nvim: &Path, root: &Path, args: &[&str]) -> NvimRun {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let started = Instant::now();
    let mut child = Command::new(nvim)
        .current_dir(root)
        .arg("--headless")
        .arg("--clean")
        .args(args)
        .env("LIVENOTE_BIN", env!("CARGO_BIN_EXE_livenote"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env_remove("NVIM_APPNAME")
        .env_remove("LIVENOTE_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", nvim.display()));

    let stdout = common::drain(child.stdout.take());
    let stderr = common::drain(child.stderr.take());

    let status = common::wait_or_kill(&mut child, TIMEOUT);
    NvimRun {
        shown: format!("{} --headless --clean {}", nvim.display(), args.join(" ")),
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        elapsed: started.elapsed(),
    }
}

#[test]
fn neovim_readme_setup_end_to_end() {
    let root = repo_root();
    let Some(nvim) = nvim_or_skip(&root) else { return };
    run_nvim(&nvim, &root, &["-u", "tests/e2e/nvim/init.lua", "-l", "tests/e2e/nvim/test.lua"])
        .assert_passed("Neovim end-to-end test");
}

/// The Neovim plugin (`editors/nvim`), loaded with nothing else, end to end:
/// `tests/e2e/nvim/plugin_test.lua` puts only editors/nvim on 'runtimepath', calls
/// `require('livenote').setup()` and drives the :Live* commands against this build's server
/// (make live, trust, run with the `command` provider, pause/resume, the quickfix list, clearing
/// the agent memory its run saved, help, :checkhealth), and what the editor shows of runs it did
/// not start: a `livenote run` from a shell reloaded into the clean buffer, `u` after a
/// scheduled run read as no failure (issue 32 §7).
#[test]
fn neovim_plugin_end_to_end() {
    let root = repo_root();
    let Some(nvim) = nvim_or_skip(&root) else { return };
    run_nvim(&nvim, &root, &["-l", "tests/e2e/nvim/plugin_test.lua"]).assert_passed("Neovim plugin test");
}

/// The plugin on the oldest Neovim it supports, 0.10 (its `vim.lsp.start` path), when
/// `bash tests/e2e/nvim/install-0.10.sh` has installed one: `$LIVENOTE_NVIM010`, else
/// `$LIVENOTE_NVIM010_DIR/nvim`, else `<repo>/target/nvim-0.10/nvim`. Without it the test says
/// so and passes: 0.10 comes from Debian packages, which not every machine can install.
#[test]
fn neovim_0_10_plugin_end_to_end() {
    let root = repo_root();
    if std::env::var("LIVENOTE_SKIP_NVIM").is_ok_and(|v| v == "1") {
        println!("skipped: LIVENOTE_SKIP_NVIM=1 (the Neovim 0.10 plugin test did not run)");
        return;
    }
    let nvim = env_path("LIVENOTE_NVIM010").unwrap_or_else(|| {
        env_path("LIVENOTE_NVIM010_DIR").unwrap_or_else(|| root.join("target/nvim-0.10")).join("nvim")
    });
    match version(&nvim) {
        Some((0, 10)) => {}
        Some((major, minor)) => panic!("{} is Neovim {major}.{minor}, not 0.10", nvim.display()),
        None => {
            println!(
                "skipped: no Neovim 0.10 at {} (install it with `bash tests/e2e/nvim/install-0.10.sh`)",
                nvim.display()
            );
            return;
        }
    }
    run_nvim(&nvim, &root, &["-l", "tests/e2e/nvim/plugin_test.lua"])
        .assert_passed("Neovim 0.10 plugin test");
}

/// The README's Neovim snippet is `init.lua`, character for character, so what users copy is
/// what the test above runs.
#[test]
fn readme_shows_init_lua_verbatim() {
    let root = repo_root();
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_else(|e| panic!("read {p}: {e}"));
    let init = read("tests/e2e/nvim/init.lua");
    for doc in ["README.md", "docs/editors.md"] {
        assert!(
            read(doc).contains(&format!("```lua\n{init}```")),
            "{doc}'s Neovim snippet differs from tests/e2e/nvim/init.lua; paste this into {doc}:\n\
             ```lua\n{init}```"
        );
    }
}
