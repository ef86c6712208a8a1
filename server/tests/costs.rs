//! What each run did and cost, through the real `livenote` binary against the scripted model
//! server (both wire formats): per-call usage in the transcript, per-run totals in
//! `livenote history` (text and JSON) and the log line, the three limits of `[agent]` failing a
//! run with a `lastRunError` that names the key, and `livenote diff` / `livenote restore`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use expect_test::expect;
use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::{Value, json};

const NOTE: &str = "---\nlive:\n  objective: Keep the weather in Paris current.\n---\n# Weather\n\nSunny.\n\n## Details\n\nWind 5 km/h.\n";

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
    _runtime: tokio::runtime::Runtime,
    server: MockModelServer,
}

impl Ws {
    /// A trusted folder with `weather.md` and a provider `m` of `kind` at the scripted server,
    /// plus `extra` in `.livenote.toml`.
    fn new(flavor: Flavor, script: Vec<ScriptedReply>, extra: &str) -> Ws {
        let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
        let server = runtime.block_on(MockModelServer::start(flavor, script));
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().to_path_buf();
        let kind = match flavor {
            Flavor::OpenAi => "openai",
            Flavor::Anthropic => "anthropic",
        };
        let config = format!(
            "{extra}[providers.m]\nkind = \"{kind}\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
            server.base_url()
        );
        std::fs::write(root.join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("weather.md"), NOTE).unwrap_or_else(|e| panic!("{e}"));
        let ws = Ws { _dir: dir, root, _runtime: runtime, server };
        let trusted = ws.livenote(&["trust", "."]);
        assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
        ws
    }

    fn livenote(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(args)
            .current_dir(&self.root)
            .env("LIVENOTE_TEST_KEY", "sk-test")
            .env("LIVENOTE_DATA_DIR", self.root.join(".data"))
            .env("LIVENOTE_CONFIG_DIR", self.root.join(".data"))
            .env("LIVENOTE_LOG", "info")
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn note(&self) -> String {
        std::fs::read_to_string(self.root.join("weather.md")).unwrap_or_default()
    }

    fn history(&self) -> Vec<Value> {
        let out = self.livenote(&["history", "weather.md", "--format", "json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The transcript lines of run `id`.
    fn transcript(&self, id: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.root.join(format!(".livenote/runs/{id}.jsonl")))
            .unwrap_or_else(|e| panic!("{e}"));
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn tool(name: &str, args: Value) -> ScriptedReply {
    ScriptedReply::ToolCalls(vec![(name.to_owned(), args)])
}

/// Four model calls (three tool calls, two of them patches), each reporting its own usage.
fn patching_script() -> Vec<ScriptedReply> {
    vec![
        tool("read_note", json!({})).with_usage(1000, 20, 0),
        tool("edit_note", json!({"old_text": "Sunny.", "new_text": "Rain all afternoon."}))
            .with_usage(1500, 30, 1000),
        tool("edit_note", json!({"old_text": "Wind 5 km/h.", "new_text": "Wind 30 km/h."}))
            .with_usage(1700, 25, 1500),
        ScriptedReply::Text("Rain and wind this afternoon.".to_owned()).with_usage(1800, 40, 1700),
    ]
}

fn totals_equal_the_reported_usage(flavor: Flavor) {
    let ws = Ws::new(flavor, patching_script(), "");
    let out = ws.livenote(&["run", "weather.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        ws.note().ends_with("# Weather\n\nRain all afternoon.\n\n## Details\n\nWind 30 km/h.\n"),
        "{}",
        ws.note()
    );
    // The run's log line says what it cost.
    let log = stderr(&out);
    assert!(
        log.contains("done weather.md: Rain and wind this afternoon. (4 model calls, 6,115 tokens (4,200 cached), 3 tool calls, "),
        "{log}"
    );
    let runs = ws.history();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    // Sums over the four calls: input 1000+1500+1700+1800, output 20+30+25+40, cached 0+1000+1500+1700.
    assert_eq!(run["tokens"], json!({"input": 6000, "output": 115, "cached": 4200}));
    assert_eq!(run["modelCalls"], json!(4));
    assert_eq!(run["toolCalls"], json!({"edit_note": 2, "read_note": 1}));
    assert!(run["durationMs"].is_u64(), "{run}");
    // Each model call's own usage and time is a transcript line.
    let id = run["id"].as_str().unwrap_or_default();
    let usage: Vec<Value> = ws
        .transcript(id)
        .into_iter()
        .filter(|l| l["kind"] == "usage")
        .map(|l| {
            assert!(l["data"]["ms"].is_u64(), "{l}");
            json!([l["data"]["input"], l["data"]["output"], l["data"]["cached"]])
        })
        .collect();
    assert_eq!(
        usage,
        [json!([1000, 20, 0]), json!([1500, 30, 1000]), json!([1700, 25, 1500]), json!([1800, 40, 1700])]
    );
    // The text listing shows the totals under the run.
    let out = ws.livenote(&["history", "weather.md"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("    4 model calls, 6,115 tokens (4,200 cached), 3 tool calls, ")
            && text.contains(" [edit_note 2, read_note 1]; input 6,000, output 115\n"),
        "{text}"
    );
}

#[test]
fn openai_history_totals_equal_the_usage_the_server_reported() {
    totals_equal_the_reported_usage(Flavor::OpenAi);
}

#[test]
fn anthropic_history_totals_equal_the_usage_the_server_reported() {
    totals_equal_the_reported_usage(Flavor::Anthropic);
}

fn last_run_error(text: &str) -> String {
    let analysis = livenote::note::analyze(text, &livenote::note::Options::default());
    analysis.live.and_then(|l| l.last_run_error).unwrap_or_default()
}

#[test]
fn the_step_limit_fails_the_run_naming_its_key() {
    let script = (0..5).map(|_| tool("read_note", json!({}))).collect();
    let ws = Ws::new(Flavor::OpenAi, script, "[agent]\nmax_steps = 2\n");
    let out = ws.livenote(&["run", "weather.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(last_run_error(&ws.note()), "stopped after 2 tool calls ([agent] max_steps)");
    // A failed run's totals are recorded too: three model calls, two tool calls made.
    let run = &ws.history()[0];
    assert_eq!((run["outcome"].as_str(), &run["modelCalls"]), (Some("failed"), &json!(3)));
    assert_eq!(run["toolCalls"], json!({"read_note": 2}));
    assert!(stderr(&out).contains("(3 model calls, 45 tokens, 2 tool calls, "), "{}", stderr(&out));
}

#[test]
fn the_token_limit_fails_the_run_naming_its_key() {
    let script = (0..5).map(|_| tool("read_note", json!({})).with_usage(800, 10, 700)).collect();
    let ws = Ws::new(Flavor::Anthropic, script, "[agent]\nmax_tokens = 1000\n");
    let out = ws.livenote(&["run", "weather.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        last_run_error(&ws.note()),
        "stopped after using 1620 tokens, over the limit of 1000 ([agent] max_tokens)"
    );
    assert_eq!(ws.server.remaining(), 3, "the run stopped at the second reply");
    assert_eq!(ws.history()[0]["tokens"], json!({"input": 1600, "output": 20, "cached": 1400}));
}

#[test]
fn a_bad_max_tokens_is_reported_with_the_key() {
    let ws = Ws::new(Flavor::OpenAi, vec![], "[agent]\nmax_tokens = 10\nmax_token = 5\n");
    // Any command that loads the configuration warns about it.
    let out = ws.livenote(&["history", "weather.md"]);
    let err = stderr(&out);
    assert!(err.contains("`agent.max_tokens` must be between 1000 and 1000000000"), "{err}");
    assert!(err.contains("unknown key `agent.max_token` (did you mean `max_tokens`?)"), "{err}");
}

/// `[agent] timeout` through the engine, in paused time: the model never answers, the clock
/// jumps to the limit, and the note says which limit ended the run.
#[tokio::test(start_paused = true)]
async fn the_time_limit_fails_the_run_naming_its_key() {
    use livenote::runs::{DiskIo, Engine, RunSpec};
    let server = MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Stall]).await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("weather.md"), NOTE).unwrap_or_else(|e| panic!("{e}"));
    // The editor's settings (a client layer): the user's own provider, no trust needed.
    let client = json!({
        "agent": {"provider": "m", "timeout": "45s"},
        "providers": {"m": {"kind": "openai", "base_url": server.base_url(), "model": "m"}},
    });
    let (config, problems) =
        livenote::config::Config::load_with(Some(dir.path()), Some(&client), &|_: &str| None);
    assert!(problems.is_empty(), "{problems:?}");
    let engine = Engine::new(
        dir.path(),
        std::sync::Arc::new(livenote::schedule::ManualClock::new(chrono::Utc::now())),
        livenote::schedule::Zone::Named(chrono_tz::UTC),
        std::sync::Arc::new(DiskIo),
        config,
        None,
    );
    let path = dir.path().join("weather.md");
    let spec = RunSpec {
        path: path.clone(),
        trigger: livenote::schedule::TriggerKind::Manual,
        context: None,
        event: None,
    };
    let started = tokio::time::Instant::now();
    let outcome = engine.run(spec, &mut |_| {}).await;
    assert!(matches!(outcome, livenote::runs::Outcome::Failed { .. }), "{outcome:?}");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(last_run_error(&text), "timed out after 45s ([agent] timeout)");
    assert!(started.elapsed() >= std::time::Duration::from_secs(45));
}

/// Each line after a `|`, so that the diff's context lines of one space stay visible.
fn shown(text: &str) -> String {
    text.lines().map(|l| format!("|{l}\n")).collect()
}

fn run_id_of(runs: &[Value], i: usize) -> String {
    runs[i]["id"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn diff_shows_what_a_run_changed_and_restore_puts_a_snapshot_back() {
    let mut script = patching_script();
    script.push(tool("edit_note", json!({"old_text": "Rain all afternoon.", "new_text": "Storm tonight."})));
    script.push(ScriptedReply::Text("Storm.".to_owned()));
    let ws = Ws::new(Flavor::OpenAi, script, "");
    let original = ws.note();
    for _ in 0..2 {
        let out = ws.livenote(&["run", "weather.md"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let runs = ws.history();
    let (second, first) = (run_id_of(&runs, 0), run_id_of(&runs, 1));
    // Default: the latest run that changed the body.
    let out = ws.livenote(&["diff", "weather.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let latest = shown(&String::from_utf8_lossy(&out.stdout).replace(&second, "RUN2"));
    expect![[r#"
        |--- weather.md (before run RUN2)
        |+++ weather.md (after run RUN2)
        |@@ -1,5 +1,5 @@
        | 
        |-Rain all afternoon.
        |+Storm tonight.
        | 
        | ## Details
        | 
    "#]]
    .assert_eq(&latest);
    let out = ws.livenote(&["diff", "weather.md", &first]);
    let earlier = shown(&String::from_utf8_lossy(&out.stdout).replace(&first, "RUN1"));
    expect![[r#"
        |--- weather.md (before run RUN1)
        |+++ weather.md (after run RUN1)
        |@@ -1,6 +1,6 @@
        | 
        |-Sunny.
        |+Rain all afternoon.
        | 
        | ## Details
        | 
        |-Wind 5 km/h.
        |+Wind 30 km/h.
    "#]]
    .assert_eq(&earlier);

    // Restore the body from before the first run; `undo` then brings the pre-restore body back.
    let before_restore = ws.note();
    let out = ws.livenote(&["restore", "weather.md", &first]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let restored = ws.note();
    assert!(restored.ends_with("# Weather\n\nSunny.\n\n## Details\n\nWind 5 km/h.\n"), "{restored}");
    assert!(original.ends_with(&restored[restored.find("# Weather").unwrap_or(0)..]));
    assert!(restored.contains("lastRunSummary: \"Undone: Storm.\""), "{restored}");
    let runs = ws.history();
    assert_eq!((runs[0]["trigger"].as_str(), runs[0]["outcome"].as_str()), (Some("restore"), Some("done")));
    let out = ws.livenote(&["undo", "weather.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(ws.note(), before_restore, "undo brought the body from before the restore back");
}

#[test]
fn restore_refuses_over_later_edits_unless_forced() {
    let ws = Ws::new(Flavor::OpenAi, patching_script(), "");
    let out = ws.livenote(&["run", "weather.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = run_id_of(&ws.history(), 0);
    let edited = ws.note().replace("Wind 30 km/h.", "Wind 30 km/h, gusts.");
    std::fs::write(ws.root.join("weather.md"), &edited).unwrap_or_else(|e| panic!("{e}"));
    let out = ws.livenote(&["restore", "weather.md", &run]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("the body was edited since run {run} (line 16)"))
            && err.contains(
                "`livenote restore --force` restores the body from before the run you named anyway"
            ),
        "{err}"
    );
    assert_eq!(ws.note(), edited, "nothing was written");
    let out = ws.livenote(&["restore", "weather.md", &run, "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(ws.note().ends_with("# Weather\n\nSunny.\n\n## Details\n\nWind 5 km/h.\n"), "{}", ws.note());
    // The edited body is kept: undo brings it back.
    let out = ws.livenote(&["undo", "weather.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(ws.note().ends_with("Wind 30 km/h, gusts.\n"), "{}", ws.note());
}

#[test]
fn diff_and_restore_explain_what_they_cannot_do() {
    let ws = Ws::new(Flavor::OpenAi, patching_script(), "");
    let unknown = "01KAT5B2X0000000000000000A";
    let out = ws.livenote(&["diff", "weather.md", unknown]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "livenote: diff weather.md: weather.md has no kept snapshot of run {unknown}; `livenote history weather.md` lists its runs and which can be restored\n"
        )
    );
    let out = ws.livenote(&["restore", "weather.md", unknown]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&format!("has no kept snapshot of run {unknown}")), "{}", stderr(&out));
    let out = ws.livenote(&["restore", "weather.md", "latest"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("`latest` is not a run id"), "{}", stderr(&out));
    // Before any run: nothing to show.
    let out = ws.livenote(&["diff", "weather.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no kept run changed the body"), "{}", stderr(&out));
    // A markdown file that is not a live note.
    std::fs::write(ws.root.join("plain.md"), "# Plain\n\ntext\n").unwrap_or_else(|e| panic!("{e}"));
    for args in [&["diff", "plain.md"][..], &["restore", "plain.md", unknown]] {
        let out = ws.livenote(args);
        assert_eq!(out.status.code(), Some(1));
        assert!(stderr(&out).contains("plain.md is not a live note"), "{args:?}: {}", stderr(&out));
    }
    assert!(Path::new(&ws.root.join("plain.md")).exists());
}
