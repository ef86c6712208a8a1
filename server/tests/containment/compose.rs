//! Agent edits compose (issue 12, section 1; SPEC 4): each step of a model run lands relative
//! to the text the previous step produced, on disk and in an editor buffer, so the note ends
//! with exactly the agent's final body; what the user types meanwhile is kept, and a step that
//! conflicts with it is reported to the model (which re-reads and retries) instead of being
//! dropped. The model is the scripted server on 127.0.0.1, driven through the real run engine.
//!
//! The property test runs random sequences of `edit_note` / `replace_section` /
//! `append_to_note`, with and without user edits between the model's turns, against a simple
//! model of the body (sections as lists of lines), for the disk path and for a buffer whose
//! editor misbehaves the way Neovim does (a second version bump after each edit, and
//! `applied: true` answered for an edit it rejected as stale).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use livenote::config::Config;
use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use livenote::note::body::agent_region;
use livenote::run_types::TriggerKind;
use livenote::runs::io::{BoxFuture, BufferIo, Editor};
use livenote::runs::{DiskIo, Engine, NoteIo, Outcome, RunSpec};
use livenote::schedule::{ManualClock, Zone};
use livenote::text::TextEdit;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::common::{tempdir, write};

fn call(name: &str, args: Value) -> ScriptedReply {
    ScriptedReply::ToolCalls(vec![(name.to_owned(), args)])
}

fn edit(old: &str, new: &str) -> ScriptedReply {
    call("edit_note", json!({"old_text": old, "new_text": new}))
}

fn append(text: &str) -> ScriptedReply {
    call("append_to_note", json!({"text": text}))
}

fn section(heading: &str, content: &str) -> ScriptedReply {
    call("replace_section", json!({"heading": heading, "content": content}))
}

const HEAD: &str = "---\ntitle: mine # kept\nlive:\n  objective: Keep it current\n---\n# Title\n";

fn note(body: &str) -> String {
    format!("{HEAD}{body}")
}

/// The tool results the model got, in order (from the last request it sent).
fn tool_results(server: &MockModelServer) -> Vec<String> {
    let requests = server.requests();
    let Some(last) = requests.last() else { return Vec::new() };
    last.body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The five cases of the issue, through the real `livenote run` (disk).

fn run_cli(body: &str, script: Vec<ScriptedReply>) -> (String, String, Vec<String>) {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let server = runtime.block_on(MockModelServer::start(Flavor::OpenAi, script));
    let dir = tempdir();
    let data = dir.path().join(".data");
    write(
        &data.join("config.toml"),
        &format!(
            "[agent]\nprovider = \"m\"\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n",
            server.base_url()
        ),
    );
    write(&dir.path().join("n.md"), &note(body));
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["run", "n.md"])
        .current_dir(dir.path())
        .env("LIVENOTE_DATA_DIR", &data)
        .env("LIVENOTE_CONFIG_DIR", &data)
        .env("LIVENOTE_LOG", "info")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = std::fs::read_to_string(dir.path().join("n.md")).unwrap_or_default();
    assert!(text.starts_with("---\ntitle: mine # kept\nlive:\n  objective: Keep it current\n"), "{text}");
    // One title line, the note's own, wherever the run's steps went.
    assert_eq!(text.matches("\n# ").count(), 1, "{text}");
    assert!(text.contains("\n---\n# Title\n"), "{text}");
    let body = text[agent_region(&text)].to_owned();
    let results = tool_results(&server);
    drop(runtime);
    (body, stderr, results)
}

fn check_cli(body: &str, script: Vec<ScriptedReply>, expected: &str) {
    let mut script = script;
    script.push(ScriptedReply::Text("Done.".to_owned()));
    let (got, stderr, results) = run_cli(body, script);
    assert_eq!(got, expected, "stderr:\n{stderr}");
    assert!(!stderr.contains("skipped"), "{stderr}");
    assert!(results.iter().all(|r| !r.contains("Not applied")), "{results:?}");
}

#[test]
fn append_then_append() {
    check_cli("\nline\n", vec![append("one"), append("two")], "\nline\none\ntwo\n");
}

#[test]
fn edit_then_append() {
    check_cli("\nfirst\nsecond\n", vec![edit("first", "FIRST"), append("third")], "\nFIRST\nsecond\nthird\n");
}

#[test]
fn edit_the_same_line_twice() {
    check_cli("\nv0\n", vec![edit("v0", "v1"), edit("v1", "v2")], "\nv2\n");
}

#[test]
fn replace_section_twice() {
    check_cli(
        "\n## News\n\nold\n",
        vec![section("News", "first"), section("News", "second")],
        "\n## News\n\nsecond\n",
    );
}

#[test]
fn edit_two_adjacent_lines() {
    check_cli("\na\nb\nc\n", vec![edit("a", "A"), edit("b", "B")], "\nA\nB\nc\n");
}

/// Issue 21: `edit_note` of the title line answered "Edited: 1 line replaced by 1 line." and
/// left two title lines. The title is the note's, not the agent's (SPEC 4): the tool says so
/// and nothing changes, and the agent's next step still lands.
#[test]
fn an_edit_of_the_title_line_is_refused_and_changes_nothing() {
    let script = vec![
        edit("# Title", "# Renamed"),
        edit("# Title\n\nline", "# Renamed\n\nline"),
        edit("line", "new line"),
        ScriptedReply::Text("Done.".to_owned()),
    ];
    let (got, stderr, results) = run_cli("\nline\n", script);
    assert_eq!(got, "\nnew line\n", "stderr:\n{stderr}");
    for refused in &results[..2] {
        assert!(refused.contains("the title line `# Title` stays first and unchanged"), "{results:?}");
        assert!(!refused.contains("Edited"), "{results:?}");
    }
    assert!(results[2].starts_with("Edited: 1 line replaced by 1 line."), "{results:?}");
}

// ---------------------------------------------------------------------------------------------
// In process: the engine over a disk or a buffer, with the world moving between model turns.

/// An editor buffer that behaves like Neovim: every edit it applies is followed by a second
/// version (sent late: it arrives as the next edit is sent), and an edit for an older version
/// is rejected while the answer says `applied: true`.
struct Buffer {
    text: Mutex<(String, i32)>,
    pending_bump: AtomicBool,
    neovim: bool,
    changes: tokio::sync::watch::Sender<u64>,
    sent: AtomicUsize,
}

impl Buffer {
    fn new(text: &str, neovim: bool) -> Arc<Buffer> {
        Arc::new(Buffer {
            text: Mutex::new((text.to_owned(), 1)),
            pending_bump: AtomicBool::new(false),
            neovim,
            changes: tokio::sync::watch::Sender::new(0),
            sent: AtomicUsize::new(0),
        })
    }

    fn text(&self) -> String {
        self.text.lock().unwrap_or_else(|e| e.into_inner()).0.clone()
    }

    /// The user types: `f` rewrites the buffer.
    fn user_edit(&self, f: &dyn Fn(&str) -> String) {
        let mut guard = self.text.lock().unwrap_or_else(|e| e.into_inner());
        guard.0 = f(&guard.0);
        guard.1 += 1;
        drop(guard);
        self.changes.send_modify(|n| *n += 1);
    }
}

#[derive(Clone)]
struct BufferEditor(Arc<Buffer>, PathBuf);

impl Editor for BufferEditor {
    fn open(&self, path: &Path) -> Option<(String, i32)> {
        (path == self.1).then(|| self.0.text.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    fn send_edit<'a>(
        &'a self,
        _path: &'a Path,
        version: i32,
        _text: &'a str,
        edits: &'a [TextEdit],
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let b = &self.0;
            b.sent.fetch_add(1, Ordering::SeqCst);
            if b.pending_bump.swap(false, Ordering::SeqCst) {
                b.user_edit(&|t| t.to_owned());
            }
            let mut guard = b.text.lock().unwrap_or_else(|e| e.into_inner());
            if guard.1 != version {
                // Neovim: "Buffer ... newer than edits", yet `applied: true`.
                return Ok(b.neovim);
            }
            guard.0 = livenote::text::edit::apply(&guard.0, edits).map_err(|e| e.to_string())?;
            guard.1 += 1;
            drop(guard);
            b.changes.send_modify(|n| *n += 1);
            if b.neovim {
                b.pending_bump.store(true, Ordering::SeqCst);
            }
            Ok(true)
        })
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.0.changes.subscribe()
    }
}

/// Where the run's edits go.
#[derive(Debug, Clone, Copy)]
enum Target {
    Disk,
    /// An open buffer; `true`: one that behaves like Neovim.
    Buffer(bool),
}

struct World {
    _dir: tempfile::TempDir,
    path: PathBuf,
    buffer: Option<Arc<Buffer>>,
    engine: Engine,
    server: MockModelServer,
}

impl World {
    async fn new(text: &str, target: Target, script: Vec<ScriptedReply>) -> World {
        let server = MockModelServer::start(Flavor::OpenAi, script).await;
        let dir = tempdir();
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let path = root.join("n.md");
        write(&path, text);
        let settings = json!({
            "agent": {"provider": "m"},
            "providers": {"m": {"kind": "openai", "base_url": server.base_url(), "model": "test-model"}},
        });
        let (config, problems) = Config::load_with(None, Some(&settings), &|_: &str| None);
        assert!(problems.is_empty(), "{problems:?}");
        let (io, buffer): (Arc<dyn NoteIo>, _) = match target {
            Target::Disk => (Arc::new(DiskIo), None),
            Target::Buffer(neovim) => {
                let b = Buffer::new(text, neovim);
                let mut io = BufferIo::new(BufferEditor(b.clone(), path.clone()));
                // Real editors answer within milliseconds; a lost edit is re-sent after this.
                io.settle = Duration::from_millis(100);
                (Arc::new(io), Some(b))
            }
        };
        let clock = ManualClock::new(chrono::Utc::now());
        let engine = Engine::new(&root, Arc::new(clock), Zone::Named(chrono_tz::UTC), io, config, None);
        World { _dir: dir, path, buffer, engine, server }
    }

    fn text(&self) -> String {
        match &self.buffer {
            Some(b) => b.text(),
            None => std::fs::read_to_string(&self.path).unwrap_or_default(),
        }
    }

    /// Rewrite the note as the user would: in the buffer, or on disk.
    fn user_edit(&self, f: &dyn Fn(&str) -> String) {
        match &self.buffer {
            Some(b) => b.user_edit(f),
            None => {
                let text = std::fs::read_to_string(&self.path).unwrap_or_default();
                std::fs::write(&self.path, f(&text)).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }

    async fn run(&self) -> Outcome {
        let spec =
            RunSpec { path: self.path.clone(), trigger: TriggerKind::Manual, context: None, event: None };
        self.engine.run(spec, &mut |_| {}).await
    }
}

/// Runs `f` before the model's `n`-th reply, once.
fn before_turn(world: &Arc<World>, turn: usize, f: impl Fn(&str) -> String + Send + Sync + 'static) {
    let w = Arc::downgrade(world);
    world.server.before_reply(move |n| {
        if n == turn
            && let Some(w) = w.upgrade()
        {
            w.user_edit(&f);
        }
    });
}

#[tokio::test]
async fn a_step_that_conflicts_is_a_tool_error_and_the_model_retries() {
    for target in [Target::Disk, Target::Buffer(false), Target::Buffer(true)] {
        let script = vec![
            edit("first", "FIRST"),
            edit("second", "agent"),
            call("read_note", json!({})),
            edit("second by the user", "agent, after re-reading"),
            ScriptedReply::Text("Done.".to_owned()),
        ];
        let world = Arc::new(World::new(&note("\nfirst\nsecond\nthird\n"), target, script).await);
        // Between the first step and the second, the user rewrites the line the second edits.
        before_turn(&world, 2, |t| t.replace("\nsecond\n", "\nsecond by the user\n"));
        let outcome = world.run().await;
        assert!(matches!(outcome, Outcome::Done { .. }), "{target:?}: {outcome:?}");
        let text = world.text();
        assert_eq!(&text[agent_region(&text)], "\nFIRST\nagent, after re-reading\nthird\n", "{target:?}");
        let results = tool_results(&world.server);
        assert!(results[1].contains("Not applied: the note was edited meanwhile"), "{target:?}: {results:?}");
        // The re-read shows the user's line.
        assert!(results[2].contains("second by the user"), "{target:?}: {results:?}");
    }
}

#[tokio::test]
async fn user_typing_elsewhere_is_kept_and_the_steps_land() {
    for target in [Target::Disk, Target::Buffer(false), Target::Buffer(true)] {
        let script = vec![append("one"), append("two"), ScriptedReply::Text("Done.".to_owned())];
        let world = Arc::new(World::new(&note("\nuser\n\n## Log\n\nzero\n"), target, script).await);
        before_turn(&world, 2, |t| t.replace("\nuser\n", "\nuser typed this\n"));
        let outcome = world.run().await;
        assert!(matches!(outcome, Outcome::Done { .. }), "{target:?}: {outcome:?}");
        let text = world.text();
        assert_eq!(
            &text[agent_region(&text)],
            "\nuser typed this\n\n## Log\n\nzero\none\ntwo\n",
            "{target:?}"
        );
    }
}

#[tokio::test]
async fn a_buffer_that_never_takes_the_edit_fails_the_run() {
    // An editor that answers `applied: true` and never changes the buffer: the run must not
    // report success for a result that is not in the note.
    struct Liar(Arc<Buffer>, PathBuf);
    impl Editor for Liar {
        fn open(&self, path: &Path) -> Option<(String, i32)> {
            (path == self.1).then(|| self.0.text.lock().unwrap_or_else(|e| e.into_inner()).clone())
        }
        fn send_edit<'a>(
            &'a self,
            _: &'a Path,
            _: i32,
            _: &'a str,
            _: &'a [TextEdit],
        ) -> BoxFuture<'a, Result<bool, String>> {
            Box::pin(async { Ok(true) })
        }
        fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
            self.0.changes.subscribe()
        }
    }
    let server = MockModelServer::start(Flavor::OpenAi, vec![]).await;
    let dir = tempdir();
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let path = root.join("n.md");
    let text = note("\nold\n");
    write(&path, &text);
    let settings = json!({"agent": {"provider": "m"}, "providers": {"m": {"kind": "command", "command": ["sh", "-c", "echo new"]}}});
    let (config, _) = Config::load_with(None, Some(&settings), &|_: &str| None);
    let b = Buffer::new(&text, false);
    let mut io = BufferIo::new(Liar(b.clone(), path.clone()));
    io.settle = Duration::from_millis(20);
    let engine = Engine::new(
        &root,
        Arc::new(ManualClock::new(chrono::Utc::now())),
        Zone::Named(chrono_tz::UTC),
        Arc::new(io),
        config,
        None,
    );
    let spec = RunSpec { path: path.clone(), trigger: TriggerKind::Manual, context: None, event: None };
    let outcome = engine.run(spec, &mut |_| {}).await;
    // Nothing reached the buffer, not even lastAttemptAt: the run could not start.
    assert!(matches!(&outcome, Outcome::Skipped(r) if r.contains("did not apply")), "{outcome:?}");
    assert_eq!(b.text(), text);
    drop(server);
}

// ---------------------------------------------------------------------------------------------
// The property: random steps against a model of the body.

/// The body as the model sees it: the note's title line (`# Title`, which the agent may not
/// change: a step that tries is refused and changes nothing), then three sections of unique
/// lines (`L000`...), the user's first. `append_to_note` adds to the last section; the user
/// edits only their own section, away from every line the agent changes.
#[derive(Debug, Clone)]
struct Model {
    user: Vec<String>,
    a: Vec<String>,
    b: Vec<String>,
    next: usize,
}

impl Model {
    fn new() -> Model {
        Model {
            user: vec!["U000".into()],
            a: vec!["L000".into(), "L001".into()],
            b: vec!["L002".into()],
            next: 3,
        }
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("L{:03}", self.next)
    }

    fn render(&self) -> String {
        format!(
            "\n## User\n\n{}\n\n## A\n\n{}\n\n## B\n\n{}\n",
            self.user.join("\n"),
            self.a.join("\n"),
            self.b.join("\n")
        )
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// Change the n-th line (modulo) of sections A and B.
    Edit(prop::sample::Index),
    Append,
    /// Replace section A (`true`) or B with 1 to 3 fresh lines.
    Replace(bool, usize),
    /// An `edit_note` that touches the title line: rename it (0), put a line above it (1),
    /// rename it along with the first section's lines (2). Refused: the model stays as it was.
    Title(usize),
}

#[derive(Debug, Clone)]
enum UserOp {
    AddLine,
    ChangeFirst,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Op::Edit),
        Just(Op::Append),
        (any::<bool>(), 1..4usize).prop_map(|(a, n)| Op::Replace(a, n)),
        (0..3usize).prop_map(Op::Title),
    ]
}

fn user_op() -> impl Strategy<Value = Option<UserOp>> {
    prop_oneof![2 => Just(None), 1 => Just(Some(UserOp::AddLine)), 1 => Just(Some(UserOp::ChangeFirst))]
}

/// The script for `ops`, and the model after them and after the user's edits. The model's
/// text is the note's below the frontmatter: the title line, then [`Model::render`].
fn plan(ops: &[(Op, Option<UserOp>)], with_user: bool) -> (Vec<ScriptedReply>, Vec<Option<UserOp>>, Model) {
    let mut m = Model::new();
    let mut script = Vec::new();
    let mut users = Vec::new();
    for (i, (op, user)) in ops.iter().enumerate() {
        let user = user.clone().filter(|_| with_user);
        match &user {
            Some(UserOp::AddLine) => m.user.push(format!("U{:03}", i + 1)),
            Some(UserOp::ChangeFirst) => m.user[0].push_str(" (edited)"),
            None => {}
        }
        users.push(user);
        match op {
            Op::Edit(ix) => {
                let all: Vec<(bool, usize)> =
                    (0..m.a.len()).map(|k| (true, k)).chain((0..m.b.len()).map(|k| (false, k))).collect();
                let (in_a, k) = all[ix.index(all.len())];
                let new = m.fresh();
                let line = if in_a { &mut m.a[k] } else { &mut m.b[k] };
                script.push(edit(line, &new));
                *line = new;
            }
            Op::Append => {
                let new = m.fresh();
                script.push(append(&new));
                m.b.push(new);
            }
            Op::Replace(a, n) => {
                let lines: Vec<String> = (0..*n).map(|_| m.fresh()).collect();
                script.push(section(if *a { "A" } else { "B" }, &lines.join("\n")));
                if *a {
                    m.a = lines;
                } else {
                    m.b = lines;
                }
            }
            Op::Title(kind) => {
                let new = m.fresh();
                script.push(match kind {
                    0 => edit("# Title", &format!("# {new}")),
                    1 => edit("# Title\n", &format!("{new}\n# Title\n")),
                    _ => edit("# Title\n\n## User", &format!("# {new}\n\n## {new}")),
                });
            }
        }
    }
    script.push(ScriptedReply::Text("Done.".to_owned()));
    (script, users, m)
}

fn apply_user(text: &str, op: &UserOp, turn: usize) -> String {
    let marker = "\n\n## A\n";
    match op {
        UserOp::AddLine => text.replacen(marker, &format!("\nU{turn:03}{marker}"), 1),
        UserOp::ChangeFirst => text.replacen("U000", "U000 (edited)", 1),
    }
}

fn check_plan(ops: Vec<(Op, Option<UserOp>)>, target: Target, with_user: bool) -> Result<(), TestCaseError> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let (script, users, model) = plan(&ops, with_user);
        let world = Arc::new(World::new(&note(&Model::new().render()), target, script).await);
        let w = Arc::downgrade(&world);
        // The user's edit planned with step i happens before the model's reply for it.
        world.server.before_reply(move |n| {
            if let Some(Some(op)) = users.get(n.wrapping_sub(1))
                && let Some(w) = w.upgrade()
            {
                w.user_edit(&|t| apply_user(t, op, n));
            }
        });
        let outcome = world.run().await;
        prop_assert!(matches!(outcome, Outcome::Done { .. }), "{:?}", outcome);
        let text = world.text();
        prop_assert_eq!(&text[agent_region(&text)], model.render());
        prop_assert!(text.starts_with("---\ntitle: mine # kept\nlive:\n  objective: Keep it current\n"));
        // The title line is the note's: one, unchanged, whatever the steps tried.
        let below_frontmatter = text.split_once("\n---\n").map(|(_, b)| b);
        let expected = format!("# Title\n{}", model.render());
        prop_assert_eq!(below_frontmatter, Some(expected.as_str()));
        let results = tool_results(&world.server);
        prop_assert!(results.iter().all(|r| !r.contains("Not applied")), "{:?}", results);
        for ((op, _), result) in ops.iter().zip(&results) {
            let refused = result.contains("the title line `# Title` stays first and unchanged");
            prop_assert_eq!(refused, matches!(op, Op::Title(_)), "{:?}: {}", op, result);
        }
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn steps_compose_on_disk(ops in prop::collection::vec((op(), user_op()), 1..8), with_user in any::<bool>()) {
        check_plan(ops, Target::Disk, with_user)?;
    }

    #[test]
    fn steps_compose_in_a_buffer(ops in prop::collection::vec((op(), user_op()), 1..8), with_user in any::<bool>()) {
        check_plan(ops, Target::Buffer(false), with_user)?;
    }

    #[test]
    fn steps_compose_in_a_neovim_like_buffer(ops in prop::collection::vec((op(), user_op()), 1..6), with_user in any::<bool>()) {
        check_plan(ops, Target::Buffer(true), with_user)?;
    }
}
