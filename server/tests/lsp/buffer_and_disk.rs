//! Issue 14: a run leaves the same bytes whether it edits an editor's buffer (the language
//! server's edits through `workspace/applyEdit`) or the file on disk: the first run of the note
//! `livenote init` writes, end to end, and any body and output, as a property.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use livenote::config::Config;
use livenote::run_types::TriggerKind;
use livenote::runs::io::{BoxFuture, BufferIo, Editor};
use livenote::runs::{DiskIo, Engine, NoteIo, Outcome, RunSpec};
use livenote::schedule::{ManualClock, Zone};
use livenote::text::{Encoding, TextEdit};
use proptest::prelude::*;
use serde_json::{Value, json};
use tower_lsp_server::ls_types::Uri;

use super::harness::{self, TestClient};
use super::utf16_caps;

const NOTE: &str = "what-time-is-it.md";

fn livenote(cwd: &Path, data: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(args)
        .current_dir(cwd)
        .env("LIVENOTE_DATA_DIR", data)
        .env("LIVENOTE_CONFIG_DIR", data)
        .env("TZ", "America/Chicago")
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("run livenote: {e}"));
    assert!(out.status.success(), "livenote {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `livenote init`'s two files, with its provider's `date` replaced by a fixed sentence of the
/// same shape, so that two runs a moment apart write the same text.
fn init_files(data: &Path) -> (String, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    livenote(dir.path(), data, &["init", "."]);
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap_or_else(|e| panic!("{e}"));
    let config = read(".livenote.toml");
    let command = config.lines().find(|l| l.starts_with("command = ")).unwrap_or_else(|| panic!("{config}"));
    let fixed = r#"command = ["sh", "-c", "printf 'It is 09:07 on Monday 23 November.\n'"]"#;
    (config.replace(command, fixed), read(NOTE))
}

/// The run id is random: the same placeholder in both texts.
fn without_run_id(text: &str) -> String {
    text.lines()
        .map(|l| if l.trim_start().starts_with("lastRunId:") { "  lastRunId: <id>" } else { l })
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        + if text.ends_with('\n') { "" } else { "<no final newline>" }
}

async fn run_in_buffer(config: &str, note: &str, neovim: bool) -> String {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let files = [(".livenote.toml", config), (NOTE, note)];
    // Trusted, and scheduling off: only the manual run below writes the note.
    let settings = serde_json::json!({"scheduler": {"enabled": false}});
    let mut c = TestClient::start_in(root, &files, utf16_caps(), settings, true).await;
    if neovim {
        c.behave_like_neovim();
    }
    let uri = c.open(NOTE, note).await;
    c.diagnostics(&uri, 1).await;
    assert_eq!(c.run_to_end(&uri).await, "Updated: It is 09:07 on Monday 23 November.");
    let text = c.doc(&uri).text;
    let server = c.request("livenote/documentText", serde_json::json!({"uri": uri})).await;
    assert_eq!(server["result"]["text"].as_str(), Some(text.as_str()), "{server}");
    assert_eq!(std::fs::read_to_string(c.root.path().join(NOTE)).unwrap_or_default(), note, "disk untouched");
    c.shutdown().await;
    text
}

fn run_on_disk(config: &str, note: &str) -> String {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join(".data");
    std::fs::write(dir.path().join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join(NOTE), note).unwrap_or_else(|e| panic!("{e}"));
    let clock = dir.path().join(".clock");
    std::fs::write(&clock, harness::now().to_rfc3339()).unwrap_or_else(|e| panic!("{e}"));
    livenote(dir.path(), &data, &["trust", "."]);
    let clock = clock.display().to_string();
    let out = livenote(dir.path(), &data, &["run", NOTE, "--clock-file", &clock]);
    assert_eq!(out, "Updated: It is 09:07 on Monday 23 November.\n");
    std::fs::read_to_string(dir.path().join(NOTE)).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn init_note_runs_to_the_same_bytes_in_a_buffer_and_on_disk() {
    let data = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (config, note) = init_files(data.path());
    let disk = run_on_disk(&config, &note);
    expect_test::expect![[r#"
        ---
        live:
          objective: |
            Say what time it is, in one short sentence.
          triggers:
            cronExpr: "*/5 * * * *"
          lastAttemptAt: "2026-11-23T15:07:00.000Z"
          lastRunId: <id>
          lastRunAt: "2026-11-23T15:07:00.000Z"
          lastRunSummary: "Updated: It is 09:07 on Monday 23 November."
          lastRunError: null
        ---

        # What time is it?

        It is 09:07 on Monday 23 November.
    "#]]
    .assert_eq(&without_run_id(&disk));
    for neovim in [false, true] {
        let buffer = run_in_buffer(&config, &note, neovim).await;
        assert_eq!(without_run_id(&buffer), without_run_id(&disk), "neovim-like client: {neovim}");
    }
}

/// An open buffer that gets the run's edits as the language server sends them
/// (`lsp::convert::document_edit`, UTF-16 positions) and applies them as Neovim or VS Code does.
struct WireEditor {
    path: PathBuf,
    doc: Mutex<(String, i32)>,
    neovim: bool,
    changes: tokio::sync::watch::Sender<u64>,
}

struct Wire(Arc<WireEditor>);

impl Editor for Wire {
    fn open(&self, path: &Path) -> Option<(String, i32)> {
        (path == self.0.path).then(|| self.0.doc.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    fn send_edit<'a>(
        &'a self,
        path: &'a Path,
        version: i32,
        text: &'a str,
        edits: &'a [TextEdit],
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let uri = Uri::from_file_path(path).ok_or("not a file path")?;
            let edit = livenote::lsp::convert::document_edit(
                &uri,
                Some(version),
                text,
                None,
                edits,
                Encoding::Utf16,
            );
            let wire = serde_json::to_value(&edit).map_err(|e| e.to_string())?;
            let edits =
                wire.pointer("/documentChanges/0/edits").and_then(Value::as_array).ok_or("no edits")?;
            let mut doc = self.0.doc.lock().unwrap_or_else(|e| e.into_inner());
            if doc.1 != version {
                return Ok(false);
            }
            doc.0 = if self.0.neovim {
                harness::apply_like_neovim(&doc.0, edits, false)
            } else {
                harness::apply(&doc.0, edits, false)
            };
            doc.1 += 1;
            drop(doc);
            self.0.changes.send_modify(|n| *n += 1);
            Ok(true)
        })
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.0.changes.subscribe()
    }
}

/// Where a run's edits go.
#[derive(Debug, Clone, Copy)]
enum Target {
    Disk,
    /// An open buffer; `true`: in Neovim, else in VS Code.
    Buffer(bool),
}

/// One manual run of `note` whose provider prints `output`, in `target`; the note's text after
/// it and how the run ended.
async fn run_once(note: &str, output: &str, target: Target) -> (String, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let path = root.join("n.md");
    std::fs::write(&path, note).unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({
        "agent": {"provider": "p"},
        "providers": {"p": {"kind": "command", "command": ["printf", "%s", output]}},
    });
    let (config, problems) = Config::load_with(None, Some(&settings), &|_: &str| None);
    assert!(problems.is_empty(), "{problems:?}");
    let (io, buffer): (Arc<dyn NoteIo>, _) = match target {
        Target::Disk => (Arc::new(DiskIo), None),
        Target::Buffer(neovim) => {
            let editor = Arc::new(WireEditor {
                path: path.clone(),
                doc: Mutex::new((note.to_owned(), 1)),
                neovim,
                changes: tokio::sync::watch::Sender::new(0),
            });
            let mut io = BufferIo::new(Wire(editor.clone()));
            // An edit that did not show up as expected is sent again after this.
            io.settle = Duration::from_millis(50);
            (Arc::new(io), Some(editor))
        }
    };
    let clock = ManualClock::new(harness::now());
    let engine = Engine::new(&root, Arc::new(clock), Zone::Named(chrono_tz::UTC), io, config, None);
    let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Manual, context: None, event: None };
    let outcome = match engine.run(spec, &mut |_| {}).await {
        Outcome::Done { summary, .. } => format!("done: {summary}"),
        Outcome::Failed { error, .. } => format!("failed: {error}"),
        other => format!("{other:?}"),
    };
    let text = match buffer {
        Some(b) => b.doc.lock().unwrap_or_else(|e| e.into_inner()).0.clone(),
        None => std::fs::read_to_string(&path).unwrap_or_default(),
    };
    (without_run_id(&text), outcome)
}

fn lines() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(vec!["", "a", "b b", "é😀", "---", "  ", "# T"]), 0..5)
}

/// A live note: its frontmatter, maybe an H1, body lines, CRLF or LF throughout (Neovim keeps
/// one line ending per buffer), with or without a final line ending.
fn note() -> impl Strategy<Value = String> {
    (any::<bool>(), lines(), any::<bool>(), any::<bool>()).prop_map(|(h1, body, crlf, final_nl)| {
        let mut all = vec!["---", "live:", "  objective: x", "---"];
        if h1 {
            all.push("# T");
        }
        all.extend(body);
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = all.join(nl);
        if final_nl {
            text.push_str(nl);
        }
        text
    })
}

/// A provider's output: lines with either ending, with or without a final one, and blank lines
/// at the end.
fn output() -> impl Strategy<Value = String> {
    (lines(), any::<bool>(), any::<bool>(), 0..3usize).prop_map(|(lines, crlf, final_nl, blank)| {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = lines.join(nl);
        if final_nl {
            text.push_str(nl);
        }
        text.push_str(&nl.repeat(blank));
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the old body and the provider's output (final line ending or not, CRLF, blank
    /// lines at the end), the edits the buffer path sends, applied by Neovim or VS Code, leave
    /// the bytes the disk path writes, and the run ends the same.
    #[test]
    fn buffer_edits_leave_the_bytes_the_disk_write_does(note in note(), output in output()) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let disk = runtime.block_on(run_once(&note, &output, Target::Disk));
        for neovim in [true, false] {
            let buffer = runtime.block_on(run_once(&note, &output, Target::Buffer(neovim)));
            prop_assert_eq!(&buffer, &disk, "neovim: {}", neovim);
        }
    }
}
