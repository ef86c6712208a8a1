//! `livenote mcp`, end to end: the official Python MCP SDK (`mcp` on PyPI, pinned by
//! `tests/e2e/mcp/install.sh`) drives this build's binary over stdio through
//! `tests/e2e/mcp/drive.py`, in a trusted workspace whose provider is a `command`
//! (`sh -c 'echo ...'`). What it proves: the tools are listed with their exact names; bad
//! arguments (an unknown note, paths out of the workspace by `..`, absolute or through links,
//! an invalid cron, a file that is not markdown) are tool errors that change no byte of the
//! workspace; `make_live` leaves notes that `livenote check` accepts; `run_note` updates the
//! body; `list_live_notes`, `note_status`, the resources and the prompt answer what is on disk.
//!
//! The venv comes from `LIVENOTE_MCP_VENV` (`bash tests/e2e/mcp/install.sh` prints one; CI
//! exports it). Without it that test is skipped with a message, or fails under `CI=true`; the
//! raw-protocol test below needs no venv.

// Built on Unix calls (nix, std::os::unix, sh); Windows is covered by the platform layer's
// unit tests and the Wine suite.
#![cfg(unix)]
// The skip message goes to stderr.
#![allow(clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Workspace, command_config, tempdir, write};
use expect_test::expect;
use serde_json::{Value, json};

/// A backstop for one driver session (each takes about a second).
const TIMEOUT: Duration = Duration::from_secs(120);

fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The venv's python, or `None` (after saying why) when the test is to be skipped.
fn python() -> Option<PathBuf> {
    let Some(venv) = std::env::var_os("LIVENOTE_MCP_VENV").filter(|v| !v.is_empty()) else {
        let how = "LIVENOTE_MCP_VENV is not set: run `bash tests/e2e/mcp/install.sh` and export the path it prints as LIVENOTE_MCP_VENV";
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{how} (CI=true: the MCP tests must run)");
        }
        eprintln!("skipping the livenote mcp test: {how}");
        return None;
    };
    let python = PathBuf::from(venv).join("bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import mcp.client.stdio"])
        .stdin(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "LIVENOTE_MCP_VENV: {} cannot import the `mcp` package; run `bash tests/e2e/mcp/install.sh`",
        python.display()
    );
    Some(python)
}

/// Run the driver on `steps` against `livenote mcp <root>`; the results, one per step, after
/// checking the session's start.
fn session(python: &Path, ws: &Workspace, steps: &Value) -> Vec<Value> {
    let dir = tempdir();
    let steps_file = dir.path().join("steps.json");
    write(&steps_file, &steps.to_string());
    let root = ws.root.display().to_string();
    let mut child = Command::new(python)
        .arg(repo_root().join("tests/e2e/mcp/drive.py"))
        .args([steps_file.display().to_string(), root.clone(), "--".into()])
        .args([env!("CARGO_BIN_EXE_livenote"), "mcp", &root])
        .env("LIVENOTE_DATA_DIR", ws.data.path())
        .env("LIVENOTE_CONFIG_DIR", ws.data.path())
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    let start = Instant::now();
    while child.try_wait().ok().flatten().is_none() && start.elapsed() < TIMEOUT {
        std::thread::sleep(Duration::from_millis(20));
    }
    if child.try_wait().ok().flatten().is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the driver failed ({}):\n{stdout}\n{stderr}", out.status);
    let mut lines = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}\nstderr:\n{stderr}")));
    let hello = lines.next().unwrap_or_else(|| panic!("no output; stderr:\n{stderr}"));
    assert_eq!(hello["server"], "livenote", "{hello}");
    let results: Vec<Value> = lines.collect();
    assert_eq!(results.len(), steps.as_array().map_or(0, Vec::len), "{stdout}\n{stderr}");
    results
}

/// A tool call's answer, which must not be a tool error; its text parsed as JSON.
fn ok(r: &Value) -> Value {
    assert_eq!(r["isError"], false, "{r:#}");
    serde_json::from_str(r["text"].as_str().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {r:#}"))
}

/// A tool error that changed nothing in the workspace; its message.
fn refused(r: &Value) -> String {
    assert_eq!(r["isError"], true, "{r:#}");
    assert_eq!(r["unchanged"], true, "a refused call changed the workspace: {r:#}");
    r["text"].as_str().unwrap_or_default().to_owned()
}

fn read(ws: &Workspace, rel: &str) -> String {
    std::fs::read_to_string(ws.root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Without any SDK: raw JSON-RPC lines in, and stdout holds nothing but the answers; the
/// process ends (status 0) when stdin closes. docs/mcp.md names every tool and the prompt.
#[test]
fn stdout_is_the_protocol_and_the_docs_name_every_tool() {
    use std::io::Write;
    let ws = Workspace::with_note("", "# N\n");
    let mut child = ws
        .livenote(&["mcp", "."])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let requests = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "make_live", "arguments": {"path": "n.md", "objective": "x", "cronExpr": "* * *"}}}),
    ];
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    for r in &requests {
        writeln!(stdin, "{r}").unwrap_or_else(|e| panic!("{e}"));
    }
    drop(stdin);
    let start = Instant::now();
    while child.try_wait().ok().flatten().is_none() && start.elapsed() < TIMEOUT {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("stdout carried a non-protocol line {l:?}: {e}"))
        })
        .collect();
    let by_id = |id: u64| {
        answers.iter().find(|a| a["id"] == id).cloned().unwrap_or_else(|| panic!("no answer {id}: {stdout}"))
    };
    let names = |v: &Value, list: &str| -> Vec<String> {
        v["result"][list]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    };
    let tools = names(&by_id(1), "tools");
    assert_eq!(tools.len(), 12, "{tools:?}");
    assert_eq!(names(&by_id(2), "prompts"), ["make_live_note"]);
    let bad_cron = &by_id(3)["result"];
    assert_eq!(bad_cron["isError"], true, "{bad_cron}");
    assert_eq!(ws.note(), "# N\n");
    let doc = std::fs::read_to_string(repo_root().join("docs/mcp.md"))
        .unwrap_or_else(|e| panic!("docs/mcp.md: {e}"));
    for name in tools.iter().map(String::as_str).chain(["make_live_note", "livenote://<path>"]) {
        assert!(doc.contains(&format!("`{name}`")), "docs/mcp.md does not name `{name}`");
    }
}

const WEATHER: &str = "---\ntitle: Weather   # mine\ntags: [berlin]\n---\n# Weather\n\nold forecast\n";

#[test]
fn an_assistant_makes_runs_and_manages_live_notes() {
    let Some(python) = python() else { return };
    let outside = tempdir();
    write(&outside.path().join("secret.md"), "# Secret\n");
    let dir = tempdir();
    write(&dir.path().join("notes/weather.md"), WEATHER);
    write(&dir.path().join("notes/plain.md"), "# Plain\n\nkeep me\n");
    write(&dir.path().join("notes/todo.txt"), "not a note\n");
    let link = |to: &Path, at: &str| {
        std::os::unix::fs::symlink(to, dir.path().join(at)).unwrap_or_else(|e| panic!("{e}"))
    };
    link(&outside.path().join("secret.md"), "leak.md");
    link(outside.path(), "away");
    // The provider prints the new content below the title, naming the trigger and context.
    let ws = Workspace::in_dir(
        dir,
        &command_config("printf 'Sunny, 21 C (%s: %s)\\n' \"$LIVENOTE_TRIGGER\" \"$LIVENOTE_CONTEXT\""),
    );
    let bad_window = json!([{ "startTime": "9:00", "endTime": "10:00" }]);
    let q3_windows =
        json!([{ "startTime": "08:00", "endTime": "10:00" }, { "startTime": "17:00", "endTime": "18:00" }]);

    // Session 1: what the server offers, bad arguments, make_live.
    let r = session(
        &python,
        &ws,
        &json!([
            {"tools": true},
            {"prompts": true},
            {"prompt": "make_live_note", "args": {"request": "keep the Berlin weather here every morning", "path": "notes/weather.md"}},
            {"call": "note_status", "args": {"path": "notes/nosuch.md"}},
            {"call": "make_live", "args": {"path": "../outside.md", "objective": "x"}},
            {"call": "make_live", "args": {"path": "/etc/outside.md", "objective": "x"}},
            {"call": "make_live", "args": {"path": "leak.md", "objective": "x"}},
            {"call": "make_live", "args": {"path": "away/new.md", "objective": "x"}},
            {"call": "make_live", "args": {"path": "notes/weather.md", "objective": "x", "cronExpr": "61 * * * *"}},
            {"call": "make_live", "args": {"path": "notes/todo.txt", "objective": "x"}},
            {"call": "make_live", "args": {"path": "notes/new.md", "objective": "x", "windows": bad_window}},
            {"call": "run_note", "args": {"path": "notes/nosuch.md"}},
            {"call": "run_note", "args": {"path": "notes/../../outside.md"}},
            {"call": "set_active", "args": {"path": "notes/plain.md", "active": false}},
            {"call": "note_status", "args": {"path": 3}},
            {"call": "make_live", "args": {"path": "notes/weather.md", "objective": "Today's weather in Berlin: one line, then the hourly forecast.", "cronExpr": "0 7 * * *"}},
            {"call": "make_live", "args": {"path": "plans/q3/plan.md", "objective": "Keep the Q3 plan current.", "windows": q3_windows, "eventMatchCriteria": "Emails about the Q3 plan"}},
            {"call": "nosuch_tool", "args": {}},
        ]),
    );
    let names: Vec<&str> =
        r[0]["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "check",
            "extend_objective",
            "list_live_notes",
            "make_live",
            "make_passive",
            "note_history",
            "note_status",
            "run_note",
            "set_active",
            "set_triggers",
            "stop_run",
            "undo_last_run"
        ],
        "{:#}",
        r[0]
    );
    let schema = |tool: &str| {
        r[0]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["name"] == tool)
            .map(|t| t["inputSchema"].clone())
    };
    let props = |tool: &str| -> Vec<String> {
        let s = schema(tool).unwrap_or_default();
        let mut p: Vec<String> =
            s["properties"].as_object().into_iter().flatten().map(|(k, _)| k.clone()).collect();
        p.sort();
        p
    };
    assert_eq!(
        props("make_live"),
        ["cronExpr", "describe", "eventMatchCriteria", "objective", "path", "run", "windows"]
    );
    // `objective` or `describe`: the tool refuses a call with neither.
    assert_eq!(schema("make_live").unwrap_or_default()["required"], json!(["path"]));
    assert_eq!(props("run_note"), ["context", "path"]);
    assert_eq!(props("set_active"), ["active", "path"]);
    assert_eq!(props("check"), ["path"]);
    assert!(props("list_live_notes").is_empty());
    assert_eq!(props("extend_objective"), ["addition", "path"]);
    assert_eq!(props("set_triggers"), ["cronExpr", "eventMatchCriteria", "path", "windows"]);
    assert_eq!(props("note_history"), ["limit", "path"]);
    for tool in ["note_status", "make_passive", "undo_last_run", "stop_run"] {
        assert_eq!(props(tool), ["path"], "{tool}");
    }
    assert_eq!(
        r[1]["prompts"],
        json!([{"name": "make_live_note", "arguments": [{"name": "path", "required": false}, {"name": "request", "required": true}]}])
    );
    let prompt = r[2]["messages"][0]["text"].as_str().unwrap_or_default();
    assert!(prompt.contains("keep the Berlin weather here every morning"), "{prompt}");
    assert!(prompt.contains("The note: `notes/weather.md`"), "{prompt}");
    assert!(prompt.contains("day-of-week 1 is Monday, 0 and\n  7 are Sunday"), "{prompt}");

    let messages: Vec<String> = r[3..15].iter().map(refused).collect();
    expect![[r#"
        there is no note `notes/nosuch.md` in the workspace
        `../outside.md` leads out of the workspace (`..`); only notes inside it can be used
        `/etc/outside.md` is an absolute path; give the note's path relative to the workspace, `/`-separated, like `notes/weather.md`
        `leak.md` is outside the workspace (a link leads out of it); only notes inside it can be used
        `away/new.md` is outside the workspace (a link leads out of it); only notes inside it can be used
        refused, nothing was written: the note would have errors:
        7:15: error live/invalid-cron invalid cron expression: minute field `61`: out of range (allowed 0-59)
        `notes/todo.txt` is not a markdown note (`.md`)
        refused, nothing was written: the note would have errors:
        6:20: error live/invalid-time `9:00` needs a two-digit hour: `09:00`
        there is no note `notes/nosuch.md` in the workspace
        `notes/../../outside.md` leads out of the workspace (`..`); only notes inside it can be used
        this note is not live (it has no `live:` block)
        failed to deserialize parameters: invalid type: integer `3`, expected a string"#]]
    .assert_eq(&messages.join("\n"));
    assert_eq!(read(&ws, "notes/plain.md"), "# Plain\n\nkeep me\n");
    assert!(!ws.root.join("notes/new.md").exists());

    let made = ok(&r[15]);
    assert_eq!((made["created"].clone(), made["diagnostics"].clone()), (json!(false), json!([])), "{made:#}");
    assert_eq!(made["status"]["objective"], "Today's weather in Berlin: one line, then the hourly forecast.");
    assert_eq!(made["status"]["triggers"], json!({"cronExpr": "0 7 * * *"}));
    assert_eq!(made["status"]["status"], "live", "a trusted folder: {made:#}");
    expect![[r#"
        ---
        title: Weather   # mine
        tags: [berlin]
        live:
          objective: "Today's weather in Berlin: one line, then the hourly forecast."
          triggers:
            cronExpr: "0 7 * * *"
        ---
        # Weather

        old forecast
    "#]]
    .assert_eq(&read(&ws, "notes/weather.md"));
    let created = ok(&r[16]);
    assert_eq!(created["created"], true, "{created:#}");
    expect![[r#"
        ---
        live:
          objective: "Keep the Q3 plan current."
          triggers:
            windows:
              - startTime: "08:00"
                endTime: "10:00"
              - startTime: "17:00"
                endTime: "18:00"
            eventMatchCriteria: "Emails about the Q3 plan"
        ---
        # plan
    "#]]
    .assert_eq(&read(&ws, "plans/q3/plan.md"));
    assert!(r[17]["protocolError"].as_str().is_some_and(|e| e.contains("tool")), "{:#}", r[17]);

    // `livenote check` accepts what make_live wrote.
    let check = ws
        .livenote(&["check", "notes/weather.md", "plans/q3/plan.md"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(check.status.success(), "{check:?}");
    // Only information: the plan waits for events in a folder with no source.
    let said = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(said.lines().all(|l| l.contains(": info live/no-event-source ")), "{said}");

    // Session 2: run it, see it, manage it.
    let r = session(
        &python,
        &ws,
        &json!([
            {"call": "run_note", "args": {"path": "notes/weather.md", "context": "first run"}},
            {"call": "list_live_notes", "args": {}},
            {"call": "note_status", "args": {"path": "notes/weather.md"}},
            {"call": "note_status", "args": {"path": "notes/plain.md"}},
            {"resources": true},
            {"read": "livenote://notes/weather.md"},
            {"read": "livenote://../leak.md"},
            {"call": "set_active", "args": {"path": "plans/q3/plan.md", "active": false}},
            {"call": "check", "args": {}},
            {"call": "check", "args": {"path": "notes/weather.md"}},
            {"call": "make_live", "args": {"path": "notes/weather.md", "objective": "Tomorrow's weather in Berlin.", "cronExpr": ""}},
            {"call": "undo_last_run", "args": {"path": "notes/weather.md"}},
            {"call": "make_passive", "args": {"path": "plans/q3/plan.md"}},
        ]),
    );
    let run = ok(&r[0]);
    assert_eq!(run["outcome"], "done", "{run:#}");
    assert_eq!(run["summary"], "Updated: Sunny, 21 C (manual: first run)");
    let after_run = r[5]["contents"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(after_run.ends_with("# Weather\n\nSunny, 21 C (manual: first run)\n"), "{after_run}");
    assert!(
        after_run.contains("  lastRunSummary: \"Updated: Sunny, 21 C (manual: first run)\"\n"),
        "{after_run}"
    );
    assert_eq!(r[5]["contents"][0]["mimeType"], "text/markdown");

    let list = ok(&r[1]);
    let items = list.as_array().cloned().unwrap_or_default();
    let paths: Vec<&str> = items.iter().filter_map(|i| i["path"].as_str()).collect();
    assert_eq!(paths, ["notes/weather.md", "plans/q3/plan.md"], "{list:#}");
    let weather = &items[0];
    assert_eq!(weather["title"], "Weather");
    assert_eq!(weather["status"], "live");
    assert_eq!(weather["lastRunSummary"], "Updated: Sunny, 21 C (manual: first run)");
    assert!(weather["lastRunAt"].as_str().is_some(), "{weather:#}");
    // The same fields as `livenote list --format json`.
    let cli = ws.livenote(&["list", "--format", "json"]).output().unwrap_or_else(|e| panic!("{e}"));
    let cli: Value = serde_json::from_slice(&cli.stdout).unwrap_or_else(|e| panic!("{e}: {cli:?}"));
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().into_iter().flatten().map(|(k, _)| k.clone()).collect();
        k.sort();
        k
    };
    assert_eq!(keys(weather), keys(&cli[0]));
    assert_eq!(weather["lastRunAt"], cli[0]["lastRunAt"]);

    let status = ok(&r[2]);
    assert_eq!(status["live"], true);
    assert_eq!(status["objective"], "Today's weather in Berlin: one line, then the hourly forecast.");
    assert_eq!(status["triggers"], json!({"cronExpr": "0 7 * * *"}));
    assert!(status["nextDue"].as_str().is_some_and(|t| t.contains("T07:00:00")), "{status:#}");
    assert_eq!(ok(&r[3]), json!({"path": "notes/plain.md", "live": false}));

    assert_eq!(
        r[4]["resources"],
        json!([
            {"uri": "livenote://notes/weather.md", "name": "notes/weather.md", "title": "Weather", "mimeType": "text/markdown"},
            {"uri": "livenote://plans/q3/plan.md", "name": "plans/q3/plan.md", "title": "plan", "mimeType": "text/markdown"},
        ])
    );
    assert!(
        r[6]["protocolError"].as_str().is_some_and(|e| e.contains("leads out of the workspace")),
        "{:#}",
        r[6]
    );

    assert_eq!(ok(&r[7])["status"], "paused");
    let check = ok(&r[8]);
    assert_eq!((check["checked"].clone(), check["errors"].clone()), (json!(3), json!(0)), "{check:#}");
    let one = ok(&r[9]);
    assert_eq!((one["checked"].clone(), one["diagnostics"].clone()), (json!(1), json!([])), "{one:#}");

    // A live note: the objective replaced, the cron removed, the runtime fields kept.
    let changed = ok(&r[10]);
    assert_eq!(changed["status"]["triggers"], json!({}), "{changed:#}");
    let text = read(&ws, "notes/weather.md");
    assert!(
        text.contains(
            "live:\n  objective: \"Tomorrow's weather in Berlin.\"\n  triggers:\n  lastAttemptAt: "
        ),
        "{text}"
    );

    let undone = ok(&r[11]);
    assert!(undone["undid"].as_str().is_some_and(|id| id.len() == 26), "{undone:#}");
    assert!(read(&ws, "notes/weather.md").ends_with("# Weather\n\nold forecast\n"));
    assert_eq!(ok(&r[12]), json!({"path": "plans/q3/plan.md", "live": false}));
    assert_eq!(read(&ws, "plans/q3/plan.md"), "# plan\n");
}

/// Issue 33: the operations `livenote ask` gives its model are MCP tools too, with the same
/// refusals: the objective is extended (every word kept), triggers change in place and an
/// invalid one writes nothing, a note that is not running cannot be stopped, and history tells
/// the runs.
#[test]
fn extend_set_triggers_stop_and_history_are_tools_too() {
    let note = "---\nlive:\n  objective: \"Weather in Lyon.\" # mine\n  triggers:\n    cronExpr: \"0 7 * * *\"\n---\n# W\n";
    let ws = Workspace::with_note(&command_config("echo fresh"), note);
    let run = ws.livenote(&["run", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(run.status.success(), "{run:?}");
    let mut mcp = common::Mcp::start(&ws.root, ws.data.path());
    let (error, text) =
        mcp.call("extend_objective", json!({"path": "n.md", "addition": "Also the pollen count."}));
    assert!(!error, "{text}");
    let (error, text) = mcp.call("set_triggers", json!({"path": "n.md", "cronExpr": "0 25 * * *"}));
    assert!(
        error && text.contains("refused, nothing was written") && text.contains("live/invalid-cron"),
        "{text}"
    );
    let (error, text) = mcp.call("set_triggers", json!({"path": "n.md", "cronExpr": "0 9 * * 1-5"}));
    assert!(!error, "{text}");
    let after = ws.note();
    assert!(after.contains("  objective: \"Weather in Lyon. Also the pollen count.\" # mine\n"), "{after}");
    assert!(after.contains("    cronExpr: \"0 9 * * 1-5\"\n"), "{after}");
    let (error, text) = mcp.call("stop_run", json!({"path": "n.md"}));
    assert_eq!((error, text.as_str()), (true, "`n.md` is not running"));
    let (error, text) = mcp.call("note_history", json!({"path": "n.md", "limit": 5}));
    assert!(!error, "{text}");
    let history: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(history["runs"].as_array().map(Vec::len), Some(1), "{history}");
    assert_eq!(
        (&history["runs"][0]["trigger"], &history["runs"][0]["outcome"]),
        (&json!("manual"), &json!("done"))
    );
}
