//! MCP servers as tools of model runs (issue 15, part 1), through the real `livenote run`,
//! `livenote watch` and `livenote stop`, with real MCP servers: `mcp-server-time` from PyPI (over
//! stdio, and over streamable HTTP with tests/e2e/mcp/time_http.py) and
//! tests/e2e/mcp/fake_server.py (on the official Python SDK) for the faults: a call that hangs
//! is cut at the server's `timeout`, a server that exits mid-run is started again at its next
//! use, Stop kills the server's whole process group, an idle server is stopped (injected clock).
//! The model is the scripted server of `model::testing`.
//!
//! The Python packages come from tests/e2e/mcp/install.sh, whose venv `LIVENOTE_MCP_VENV`
//! names (scripts/test.sh exports it). Without it these tests say so and pass, except on CI
//! (`CI=true`), where they fail.

// A skipped test says so on stdout (shown with --nocapture).
#![allow(clippy::print_stdout)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::TimeZone;
use livenote::model::testing::{Flavor, MockModelServer, RecordedRequest, ScriptedReply};
use serde_json::{Value, json};

use common::{Workspace, tempdir, wait_until, write};

/// The venv of tests/e2e/mcp/install.sh, or `None` (after saying why) when the test must be
/// skipped.
fn venv() -> Option<PathBuf> {
    match std::env::var_os("LIVENOTE_MCP_VENV").filter(|v| !v.is_empty()) {
        Some(v) => {
            let v = PathBuf::from(v);
            assert!(v.join("bin/python").exists(), "LIVENOTE_MCP_VENV={} has no bin/python", v.display());
            Some(v)
        }
        None if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("LIVENOTE_MCP_VENV is not set: run `bash tests/e2e/mcp/install.sh` and export its output")
        }
        None => {
            println!(
                "skipped: LIVENOTE_MCP_VENV is not set (export LIVENOTE_MCP_VENV=\"$(bash tests/e2e/mcp/install.sh)\")"
            );
            None
        }
    }
}

/// tests/e2e/mcp/fake_server.py.
fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e/mcp/fake_server.py")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"))
}

/// `[providers.m]` on the scripted model server, the folder's default.
fn provider(server: &MockModelServer) -> String {
    format!(
        "[agent]\nprovider = \"m\"\n\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
        server.base_url()
    )
}

/// `[mcp.servers.fake]`: the fake server, its marks in `marks`.
fn fake_config(venv: &Path, marks: &Path, timeout: &str) -> String {
    format!(
        "\n[mcp.servers.fake]\ncommand = [{:?}, {:?}]\nenv = {{ FAKE_MCP_DIR = {:?} }}\ntimeout = \"{timeout}\"\n",
        venv.join("bin/python").display().to_string(),
        fake_server().display().to_string(),
        marks.display().to_string(),
    )
}

const NOTE: &str = "---\nlive:\n  objective: Keep the time in Chicago.\n---\n# Chicago\n\nold\n";

fn calls(name: &str, args: Value) -> ScriptedReply {
    ScriptedReply::ToolCalls(vec![(name.to_owned(), args)])
}

/// `livenote run n.md`: (exit code, stderr).
fn run_note(p: &Workspace) -> (i32, String) {
    let out = p
        .livenote(&["run", "n.md"])
        .env("LIVENOTE_TEST_KEY", "k")
        .env("LIVENOTE_LOG", "debug")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The names of the tools the model was offered in `req` (OpenAI format).
fn tool_names(req: &RecordedRequest) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// The tool results the model got in `req`, in order.
fn tool_results(req: &RecordedRequest) -> Vec<String> {
    req.body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Every transcript line of the runs in `root`, oldest run first.
fn transcript(root: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(".livenote/runs"))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f).unwrap_or_default().lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect()
}

fn mcp_lines(root: &Path) -> Vec<Value> {
    transcript(root).into_iter().filter(|l| l["kind"] == "mcp").collect()
}

/// Whether any process of group `pgid` is still alive (zombies waiting for a reaper do not
/// count: they run nothing).
fn group_alive(pgid: i32) -> bool {
    common::group_running(pgid)
}

/// The pids and groups the fake server marked `kind-<pid>` (holding its group).
fn marks(dir: &Path, kind: &str) -> Vec<(u32, i32)> {
    let mut found: Vec<(u32, i32)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix(&format!("{kind}-"))?.parse().ok()?;
            let pgid = std::fs::read_to_string(e.path()).ok()?.trim().parse().ok()?;
            Some((pid, pgid))
        })
        .collect();
    found.sort_unstable();
    found
}

// ---------------------------------------------------------------------------------------------
// mcp-server-time (PyPI) as a run's tool

/// The acceptance test: the model gets `mcp__time__get_current_time` with its schema, calls it
/// for Chicago, gets the time back, and the run succeeds; the transcript records the call; the
/// tool list is kept for the editor and `livenote check`. An event run in the same folder
/// does not see the tool (`events = false`).
#[test]
fn the_time_server_is_a_tool_of_a_model_run_but_not_of_an_event_run() {
    let Some(venv) = venv() else { return };
    let rt = runtime();
    let model = rt.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![
            calls("mcp__time__get_current_time", json!({"timezone": "America/Chicago"})),
            ScriptedReply::Text("Noted the time in Chicago.".to_owned()),
        ],
    ));
    let config = format!(
        "{}\n[mcp.servers.time]\ncommand = [{:?}]\n",
        provider(&model),
        venv.join("bin/mcp-server-time").display().to_string()
    );
    let note = "---\nlive:\n  objective: Keep the time in Chicago.\n  triggers:\n    eventMatchCriteria: Anything\n---\n# Chicago\n\nold\n";
    let p = Workspace::with_note(&config, note);
    let (code, stderr) = run_note(&p);
    assert_eq!(code, 0, "{stderr}");
    assert!(p.note().contains("lastRunSummary: \"Noted the time in Chicago.\""), "{}", p.note());

    let reqs = model.requests();
    assert_eq!(reqs.len(), 2, "{stderr}");
    let tool = reqs[0].body["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["function"]["name"] == "mcp__time__get_current_time"))
        .cloned()
        .unwrap_or_else(|| panic!("no mcp__time__get_current_time in {:?}", tool_names(&reqs[0])));
    assert_eq!(tool["function"]["description"], "Get current time in a specific timezone");
    let schema = &tool["function"]["parameters"];
    assert_eq!(schema["type"], "object", "{schema}");
    assert_eq!(schema["required"], json!(["timezone"]), "{schema}");
    assert_eq!(schema["properties"]["timezone"]["type"], "string", "{schema}");
    assert!(tool_names(&reqs[0]).contains(&"mcp__time__convert_time".to_owned()));
    assert!(
        reqs[0].body["messages"][0]["content"].as_str().unwrap_or_default().contains("mcp__<server>__<tool>")
    );

    // The result: the time in Chicago, with Chicago's offset at that instant.
    let results = tool_results(&reqs[1]);
    assert_eq!(results.len(), 1);
    let result: Value = serde_json::from_str(&results[0]).unwrap_or_else(|e| panic!("{e}: {}", results[0]));
    assert_eq!(result["timezone"], "America/Chicago", "{result}");
    let at = chrono::DateTime::parse_from_rfc3339(result["datetime"].as_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {result}"));
    let chicago = chrono_tz::America::Chicago.from_utc_datetime(&at.naive_utc());
    assert_eq!(
        at.offset().local_minus_utc(),
        chrono::Offset::fix(chicago.offset()).local_minus_utc(),
        "{result}"
    );
    assert!((chrono::Utc::now() - at.to_utc()).num_minutes().abs() < 5, "{result}");

    // The transcript records the call.
    let calls = mcp_lines(&p.root);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    let data = &calls[0]["data"];
    assert_eq!(data["server"], "time");
    assert_eq!(data["tool"], "get_current_time");
    assert_eq!(data["arguments"], json!({"timezone": "America/Chicago"}));
    assert_eq!(data["resultBytes"].as_u64(), Some(results[0].len() as u64));
    assert!(data["durationMs"].is_u64() && data.get("error").is_none(), "{data}");

    // The tool list is kept: `livenote check` knows the server's tools without starting it.
    std::fs::write(
        p.root.join("n.md"),
        "---\nlive:\n  objective: x\n  tools: [time.get_current_tim, time.convert_time, nosuch]\n---\n# N\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = p.livenote(&["check", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "n.md:4:11: warning live/unknown-tool the MCP server `time` has no tool `get_current_tim` (did you mean `get_current_time`? its tools: get_current_time, convert_time)\n\
         n.md:4:52: warning live/unknown-tool no MCP server named `nosuch` (configured: time); see [mcp.servers.*] in .livenote.toml\n"
    );

    // An event run in the same folder: the server is not offered (`events = false`).
    std::fs::write(p.root.join("n.md"), note).unwrap_or_else(|e| panic!("{e}"));
    model.push(ScriptedReply::Text("Nothing to do.".to_owned()));
    let mut event = p
        .livenote(&["event", "--source", "test", "--type", "ping", "--target", "n.md"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    drop(event.stdin.take());
    let id = String::from_utf8_lossy(&event.wait_with_output().unwrap_or_else(|e| panic!("{e}")).stdout)
        .trim()
        .to_owned();
    let mut w = watch(&p, &[]);
    w.wait_for("watch ");
    let done = livenote::events::done_dir(&p.root).join(format!("{id}.json"));
    wait_until("the event run", 30, || done.exists());
    let logs = w.stop();
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(&done).unwrap_or_default()).unwrap_or_default();
    assert_eq!(record["error"], Value::Null, "{record}");
    let reqs = model.requests();
    assert_eq!(reqs.len(), 3, "{logs:#?}");
    assert!(reqs[2].body["messages"].to_string().contains("**Trigger:** event"), "{}", reqs[2].body);
    let offered = tool_names(&reqs[2]);
    assert!(
        offered.contains(&"read_note".to_owned()) && !offered.iter().any(|t| t.starts_with("mcp__")),
        "{offered:?}"
    );
    assert!(
        transcript(&p.root)
            .iter()
            .any(|l| l["message"] == "MCP server `time` is not offered to event runs (events = false)"),
        "{:#?}",
        transcript(&p.root)
    );
}

/// A folder's servers are programs: in a folder that is not trusted they never start, even for
/// a manual run with the user's own provider; the transcript says why.
#[test]
fn an_untrusted_folders_server_never_starts() {
    let Some(venv) = venv() else { return };
    let rt = runtime();
    let model =
        rt.block_on(MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Text("Done.".to_owned())]));
    let dir = tempdir();
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let data = tempdir();
    let marker = root.join("server-started");
    let folder_config = format!(
        "[mcp.servers.marker]\ncommand = [\"sh\", \"-c\", \"touch {}; exec {}\"]\n",
        marker.display(),
        venv.join("bin/mcp-server-time").display()
    );
    write(&root.join(".livenote.toml"), &folder_config);
    write(&root.join("n.md"), NOTE);
    // The provider is the user's own: a manual run goes ahead in an untrusted folder.
    write(&data.path().join("config.toml"), &provider(&model));
    let livenote = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(args)
            .current_dir(&root)
            .env("LIVENOTE_DATA_DIR", data.path())
            .env("LIVENOTE_CONFIG_DIR", data.path())
            .env("LIVENOTE_TEST_KEY", "k")
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let out = livenote(&["run", "n.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!marker.exists(), "the untrusted folder's MCP server was started");
    let reqs = model.requests();
    assert_eq!(reqs.len(), 1);
    assert!(!tool_names(&reqs[0]).iter().any(|t| t.starts_with("mcp__")), "{:?}", tool_names(&reqs[0]));
    let why = mcp_lines(&root);
    assert_eq!(why.len(), 1, "{why:#?}");
    let message = why[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("MCP server `marker` comes from ") && message.contains("not trusted"),
        "{message}"
    );
    // Neither does checking the folder start it.
    let out = livenote(&["check", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!marker.exists());
}

/// A child process of the test, killed when the test ends however it ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// mcp-server-time served over streamable HTTP on a free port of 127.0.0.1, answering only
/// requests that carry `headers` (`NAME=VALUE`); stopped when the guard is dropped.
fn time_http(venv: &Path, headers: &[&str]) -> (u16, KillOnDrop) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e/mcp/time_http.py");
    let server = KillOnDrop(
        std::process::Command::new(venv.join("bin/python"))
            .arg(&script)
            .arg(port.to_string())
            .args(headers)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    wait_until("the HTTP server", 30, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    (port, server)
}

/// A server reached over streamable HTTP (`url`): the same tools and results as over stdio.
/// One that cannot be reached leaves the run going without its tools.
#[test]
fn a_server_at_a_url_is_a_tool_of_a_model_run() {
    let Some(venv) = venv() else { return };
    let (port, _server) = time_http(&venv, &[]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"));
    let rt = runtime();
    let model = rt.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![
            calls("mcp__remote__get_current_time", json!({"timezone": "Asia/Tokyo"})),
            ScriptedReply::Text("Noted the time in Tokyo.".to_owned()),
        ],
    ));
    let config = format!(
        "{}\n[mcp.servers.remote]\nurl = \"http://127.0.0.1:{port}/mcp\"\n\n[mcp.servers.nobody]\nurl = \"http://127.0.0.1:{closed}/mcp\"\ntimeout = \"5s\"\n",
        provider(&model)
    );
    let p = Workspace::with_note(&config, NOTE);
    let (code, stderr) = run_note(&p);
    assert_eq!(code, 0, "{stderr}");
    let reqs = model.requests();
    assert_eq!(reqs.len(), 2, "{stderr}");
    let offered = tool_names(&reqs[0]);
    assert!(offered.contains(&"mcp__remote__get_current_time".to_owned()), "{offered:?}");
    assert!(!offered.iter().any(|t| t.starts_with("mcp__nobody__")), "{offered:?}");
    let results = tool_results(&reqs[1]);
    let result: Value = serde_json::from_str(&results[0]).unwrap_or_else(|e| panic!("{e}: {results:?}"));
    assert_eq!(result["timezone"], "Asia/Tokyo");
    assert!(result["datetime"].as_str().is_some_and(|d| d.ends_with("+09:00")), "{result}");
    let lines = mcp_lines(&p.root);
    assert!(
        lines.iter().any(|l| l["message"].as_str().is_some_and(|m| m.starts_with(&format!(
            "MCP server `nobody` did not start: cannot reach it at http://127.0.0.1:{closed}/mcp"
        )))),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l["data"]["server"] == "remote" && l["data"].get("error").is_none()),
        "{lines:#?}"
    );
}

/// A server behind a token (`bearer_token_env`, `headers_env`): the values come from the
/// environment when livenote connects and are sent with every request; without them the server
/// is left out with a line naming the variable, and a value never reaches the transcript.
#[test]
fn a_url_server_gets_its_headers_from_the_environment() {
    let Some(venv) = venv() else { return };
    let (port, _server) = time_http(&venv, &["Authorization=Bearer s3cret-t0ken", "X-Api-Key=k3y-v4lue"]);
    for with_env in [true, false] {
        let rt = runtime();
        let model = rt.block_on(MockModelServer::start(
            Flavor::OpenAi,
            if with_env {
                vec![
                    calls("mcp__remote__get_current_time", json!({"timezone": "Asia/Tokyo"})),
                    ScriptedReply::Text("Noted the time in Tokyo.".to_owned()),
                ]
            } else {
                vec![ScriptedReply::Text("No tools today.".to_owned())]
            },
        ));
        let config = format!(
            "{}\n[mcp.servers.remote]\nurl = \"http://127.0.0.1:{port}/mcp\"\nbearer_token_env = \"LIVENOTE_TEST_MCP_TOKEN\"\nheaders_env = {{ \"X-Api-Key\" = \"LIVENOTE_TEST_MCP_KEY\" }}\ntimeout = \"10s\"\n",
            provider(&model)
        );
        let p = Workspace::with_note(&config, NOTE);
        let mut run = p.livenote(&["run", "n.md"]);
        run.env("LIVENOTE_TEST_KEY", "k").env("LIVENOTE_LOG", "debug");
        if with_env {
            run.env("LIVENOTE_TEST_MCP_TOKEN", "s3cret-t0ken").env("LIVENOTE_TEST_MCP_KEY", "k3y-v4lue");
        }
        let out = run.output().unwrap_or_else(|e| panic!("{e}"));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let reqs = model.requests();
        let offered = tool_names(&reqs[0]);
        let lines = mcp_lines(&p.root);
        if with_env {
            assert!(offered.contains(&"mcp__remote__get_current_time".to_owned()), "{offered:?} {lines:#?}");
            let results = tool_results(&reqs[1]);
            let result: Value =
                serde_json::from_str(&results[0]).unwrap_or_else(|e| panic!("{e}: {results:?}"));
            assert_eq!(result["timezone"], "Asia/Tokyo");
        } else {
            assert!(!offered.iter().any(|t| t.starts_with("mcp__remote__")), "{offered:?}");
            assert!(
                lines.iter().any(|l| l["message"].as_str().is_some_and(|m| m.contains(
                    "LIVENOTE_TEST_MCP_TOKEN is not set (named by bearer_token_env of MCP server `remote`)"
                ))),
                "{lines:#?}"
            );
        }
        let everything =
            format!("{stderr}{}", transcript(&p.root).iter().map(Value::to_string).collect::<String>());
        assert!(!everything.contains("s3cret") && !everything.contains("k3y-v4lue"), "{everything}");
    }
}

// ---------------------------------------------------------------------------------------------
// Faults, with the fake server

/// A server slower to start than its call `timeout` (a cold venv, `npx`) still gives the run
/// its tools: starting gets at least `MIN_MCP_START`.
#[test]
fn a_server_slower_to_start_than_its_call_timeout_still_gives_its_tools() {
    let Some(venv) = venv() else { return };
    let rt = runtime();
    let model = rt.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![
            calls("mcp__fake__echo", json!({"text": "slow but here"})),
            ScriptedReply::Text("Echoed.".to_owned()),
        ],
    ));
    let marks_dir = tempdir();
    let server = fake_config(&venv, marks_dir.path(), "1s")
        .replace("env = { FAKE_MCP_DIR", "env = { FAKE_MCP_START_DELAY = \"2.5\", FAKE_MCP_DIR");
    assert!(server.contains("FAKE_MCP_START_DELAY"), "{server}");
    let p = Workspace::with_note(&format!("{}{server}", provider(&model)), NOTE);
    let (code, stderr) = run_note(&p);
    assert_eq!(code, 0, "{stderr}");
    let reqs = model.requests();
    assert_eq!(reqs.len(), 2, "{stderr}");
    assert_eq!(tool_results(&reqs[1]), ["slow but here"], "{stderr}");
}

/// A call that never answers is cut at the server's `timeout`: the model reads the error, the
/// server's whole process group is gone by then, and the run still ends well.
#[test]
fn a_hanging_call_is_cut_at_the_servers_timeout() {
    let Some(venv) = venv() else { return };
    let rt = runtime();
    let model = rt.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![calls("mcp__fake__hang", json!({})), ScriptedReply::Text("The server hung.".to_owned())],
    ));
    let marks_dir = tempdir();
    let config = format!("{}{}", provider(&model), fake_config(&venv, marks_dir.path(), "2s"));
    let p = Workspace::with_note(&config, NOTE);
    // When the model is asked again (after the timeout), the hung server must be gone already.
    let gone_before_reply = Arc::new(AtomicBool::new(false));
    let (flag, dir) = (Arc::clone(&gone_before_reply), marks_dir.path().to_path_buf());
    model.before_reply(move |n| {
        if n == 2 {
            let hung = marks(&dir, "hang");
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while hung.iter().any(|(_, g)| group_alive(*g)) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            flag.store(!hung.is_empty() && !hung.iter().any(|(_, g)| group_alive(*g)), Ordering::SeqCst);
        }
    });
    let began = std::time::Instant::now();
    let (code, stderr) = run_note(&p);
    assert_eq!(code, 0, "{stderr}");
    assert!(began.elapsed() < Duration::from_secs(20), "{:?}", began.elapsed());
    let reqs = model.requests();
    assert_eq!(reqs.len(), 2);
    let results = tool_results(&reqs[1]);
    assert_eq!(
        results,
        [
            "Error: the MCP server `fake`: no answer within 2s; the server was stopped and starts again at the next call"
        ]
    );
    assert!(gone_before_reply.load(Ordering::SeqCst), "the hung server's process group outlived the timeout");
    let calls = mcp_lines(&p.root);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert!(calls[0]["data"]["durationMs"].as_u64().is_some_and(|d| d >= 2000), "{calls:#?}");
    assert!(calls[0]["data"]["error"].as_str().unwrap_or_default().contains("no answer within 2s"));
}

/// A server that exits mid-call gives the model a tool error; its next call starts it again.
/// One that cannot start at all leaves the run going without its tools.
#[test]
fn a_server_that_exits_is_started_again_at_its_next_use() {
    let Some(venv) = venv() else { return };
    let rt = runtime();
    let model = rt.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![
            calls("mcp__fake__exit", json!({})),
            calls("mcp__fake__echo", json!({"text": "back again"})),
            ScriptedReply::Text("Recovered.".to_owned()),
        ],
    ));
    let marks_dir = tempdir();
    let config = format!(
        "{}{}\n[mcp.servers.gone]\ncommand = [\"/nonexistent/mcp-server\"]\n",
        provider(&model),
        fake_config(&venv, marks_dir.path(), "20s")
    );
    let p = Workspace::with_note(&config, NOTE);
    let (code, stderr) = run_note(&p);
    assert_eq!(code, 0, "{stderr}");
    let reqs = model.requests();
    assert_eq!(reqs.len(), 3, "{stderr}");
    let offered = tool_names(&reqs[0]);
    assert!(offered.contains(&"mcp__fake__echo".to_owned()), "{offered:?}");
    assert!(!offered.iter().any(|t| t.starts_with("mcp__gone__")), "{offered:?}");
    let results = tool_results(&reqs[2]);
    assert_eq!(results.len(), 2);
    assert!(
        results[0].starts_with("Error: the MCP server `fake`: the server exited (its stderr: ")
            && results[0].contains("fake: exiting mid-call")
            && results[0].ends_with("; it starts again at the next call"),
        "{}",
        results[0]
    );
    assert_eq!(results[1], "back again");
    assert_eq!(marks(marks_dir.path(), "started").len(), 2, "started once, and again after the exit");
    let lines = transcript(&p.root);
    assert!(
        lines.iter().any(|l| l["kind"] == "mcp"
            && l["message"] == "MCP server `gone` did not start: cannot start `/nonexistent/mcp-server`: command not found"),
        "{lines:#?}"
    );
}

/// Stop during a call that never answers ends the run at once and kills the server's whole
/// process group (the server and what it started), while the process that ran it goes on.
#[test]
fn stop_kills_the_servers_process_group() {
    let Some(venv) = venv() else { return };
    let rt = runtime();
    let model = rt.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![calls("mcp__fake__hang", json!({})), ScriptedReply::Text("unused".to_owned())],
    ));
    let marks_dir = tempdir();
    let config = format!("{}{}", provider(&model), fake_config(&venv, marks_dir.path(), "10m"));
    let cron = "---\nlive:\n  objective: Keep the time in Chicago.\n  triggers:\n    cronExpr: \"* * * * *\"\n  lastRunAt: \"2026-11-23T08:59:10.000Z\"\n---\n# Chicago\n\nold\n";
    let p = Workspace::with_note(&config, cron);
    p.set_clock("2026-11-23T08:59:30Z");
    let clock = p.clock().display().to_string();
    let mut w = watch(&p, &["--clock-file", &clock]);
    w.wait_for("watch ");
    p.set_clock("2026-11-23T09:00:20Z");
    wait_until("the hanging call", 60, || !marks(marks_dir.path(), "hang").is_empty());
    let hung = marks(marks_dir.path(), "hang");
    let pgid = hung[0].1;
    assert!(group_alive(pgid));
    let stop = p.livenote(&["stop", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(stop.status.success(), "{}", String::from_utf8_lossy(&stop.stderr));
    wait_until("the server's process group to end", 10, || !group_alive(pgid));
    w.wait_for("failed n.md");
    assert!(w.alive(), "the watcher itself went on");
    let logs = w.stop();
    assert!(p.note().contains("lastRunError: \"stopped\""), "{}\n{logs:#?}", p.note());
    assert_eq!(model.requests().len(), 1);
}

/// `livenote watch OPTIONS .` with the model's key (which `common`'s watcher does not set).
fn watch(p: &Workspace, options: &[&str]) -> WatchProcess {
    let mut args = vec!["watch"];
    args.extend_from_slice(options);
    args.push(".");
    let mut c = p.livenote(&args);
    c.env("LIVENOTE_TEST_KEY", "k").stdout(Stdio::null()).stderr(Stdio::piped());
    WatchProcess::spawn(c)
}

/// A running `livenote watch` and the lines of its log.
struct WatchProcess {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl WatchProcess {
    fn spawn(mut c: std::process::Command) -> WatchProcess {
        use std::io::BufRead;
        let mut child = c.spawn().unwrap_or_else(|e| panic!("{e}"));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        WatchProcess { child, lines, seen: Vec::new() }
    }

    fn wait_for(&mut self, needle: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_millis(50)) {
                let hit = line.contains(needle);
                self.seen.push(line);
                if hit {
                    return;
                }
            }
        }
        panic!("watch never logged {needle:?}: {:#?}", self.seen)
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().is_ok_and(|s| s.is_none())
    }

    fn stop(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut seen = std::mem::take(&mut self.seen);
        seen.extend(self.lines.try_iter());
        seen
    }
}

impl Drop for WatchProcess {
    /// A test that fails half-way leaves no watcher behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// The pool, in process: idle servers stop, measured with the injected clock

#[test]
fn an_idle_server_is_stopped_and_started_again_when_needed() {
    use livenote::config::{McpServerConfig, McpTransport, Origin};
    use livenote::schedule::ManualClock;
    let Some(venv) = venv() else { return };
    let marks_dir = tempdir();
    let root = tempdir();
    let cfg = McpServerConfig {
        transport: McpTransport::Stdio {
            command: vec![venv.join("bin/python").display().to_string(), fake_server().display().to_string()],
        },
        env: [("FAKE_MCP_DIR".to_owned(), marks_dir.path().display().to_string())].into(),
        events: false,
        timeout: Duration::from_secs(20),
        origin: Origin::User,
    };
    let clock =
        ManualClock::new(chrono::Utc.with_ymd_and_hms(2026, 11, 23, 9, 0, 0).single().unwrap_or_default());
    let cache_dir = tempdir();
    let cache = livenote::mcp::cache::ToolCache::in_dir(cache_dir.path());
    let pool = livenote::mcp::Pool::new(Arc::new(clock.clone()), Some(cache));
    let rt = runtime();
    let first = rt.block_on(pool.acquire("fake", &cfg, root.path(), true)).unwrap_or_else(|e| panic!("{e}"));
    let pgid = first.process_group().unwrap_or_else(|| panic!("no process group"));
    let names: Vec<String> = first.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["echo", "hang", "exit"]);
    // The same instance for the next run.
    let again = rt.block_on(pool.acquire("fake", &cfg, root.path(), true)).unwrap_or_else(|e| panic!("{e}"));
    assert!(Arc::ptr_eq(&first, &again));
    drop((first, again));
    // The list is kept for the editor.
    let listed = livenote::mcp::cache::ToolCache::in_dir(cache_dir.path()).load(&cfg).unwrap_or_default();
    assert_eq!(listed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["echo", "hang", "exit"]);
    clock.advance(chrono::Duration::minutes(4));
    pool.reap_idle();
    assert!(group_alive(pgid), "stopped before 5 idle minutes");
    clock.advance(chrono::Duration::minutes(2));
    pool.reap_idle();
    wait_until("the idle server to end", 10, || !group_alive(pgid));
    let restarted =
        rt.block_on(pool.acquire("fake", &cfg, root.path(), true)).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(restarted.process_group(), Some(pgid));
    assert_eq!(marks(marks_dir.path(), "started").len(), 2);
    pool.shutdown();
    let last = restarted.process_group().unwrap_or_default();
    wait_until("shutdown", 10, || !group_alive(last));
}
