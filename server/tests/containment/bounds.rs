//! See the suite's header in containment.rs.
//!
//! The language server and the model stay bounded (issue 12, section 6): the real `livenote lsp`
//! answers malformed JSON-RPC with an error and keeps serving, refuses an oversized
//! `Content-Length` without buffering it, and exits 1 on `exit` without `shutdown`; a model
//! server's oversized replies make the run fail with a clear error instead of growing the
//! process without end.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::{Value, json};

use crate::common;

// ---------------------------------------------------------------------------------------------
// The language server over stdio
// ---------------------------------------------------------------------------------------------

/// The real binary, driven over pipes; stdout is read by a thread into a channel.
struct Lsp {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: mpsc::Receiver<Value>,
    _dir: tempfile::TempDir,
}

impl Lsp {
    fn start() -> Lsp {
        let dir = common::tempdir();
        let mut child = Command::new(env!("CARGO_BIN_EXE_livenote"))
            .arg("lsp")
            .current_dir(dir.path())
            .env("LIVENOTE_LOG", "warn")
            .env("LIVENOTE_DATA_DIR", dir.path().join(".data"))
            .env("LIVENOTE_CONFIG_DIR", dir.path().join(".data"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn livenote lsp: {e}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let rx = common::read_frames(stdout);
        Lsp { child, stdin, rx, _dir: dir }
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap_or_else(|| panic!("stdin closed"));
        stdin.write_all(bytes).unwrap_or_else(|e| panic!("write: {e}"));
        stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    /// A framed message with this exact body.
    fn body(&mut self, body: &str) {
        self.raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn send(&mut self, msg: Value) {
        self.body(&msg.to_string());
    }

    /// The next message that matches `pred` (others are dropped), within 20 s.
    fn wait(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(msg) if pred(&msg) => return msg,
                Ok(_) => {}
                Err(e) => panic!("no {what} ({e}); the server's status: {:?}", self.child.try_wait()),
            }
        }
    }

    fn initialize(&mut self, id: i64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "processId": null, "rootUri": null, "capabilities": {}}}));
        let init = self.wait("initialize reply", |m| m["id"] == id);
        assert!(init["result"]["capabilities"].is_object(), "{init}");
        self.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    }

    fn shutdown(&mut self, id: i64) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "shutdown", "params": null}));
        let res = self.wait("shutdown reply", |m| m["id"] == id);
        assert!(res.get("error").is_none(), "{res}");
    }

    /// The exit status, within 10 s (else the server is killed and the test fails).
    fn exit_status(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                other => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!("the server did not exit within 10 s: {other:?}");
                }
            }
        }
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        if self.alive() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn error_code(msg: &Value) -> Option<i64> {
    msg["error"]["code"].as_i64()
}

/// `{bad}`, `[]`, `null` and `"method": 123` each get a JSON-RPC error; the server keeps
/// serving (it used to end, with status 0, at the first of them).
#[test]
fn malformed_messages_get_errors_and_the_server_keeps_serving() {
    let mut s = Lsp::start();
    let cases = [
        ("{bad}", -32700, Value::Null),
        ("[]", -32600, Value::Null),
        ("null", -32600, Value::Null),
        (r#"{"jsonrpc":"2.0","id":1,"method":123}"#, -32600, json!(1)),
        (r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"#, -32700, Value::Null),
    ];
    for (body, code, id) in cases {
        s.body(body);
        let reply = s.wait(&format!("an error for {body}"), |m| m.get("error").is_some());
        assert_eq!((error_code(&reply), &reply["id"]), (Some(code), &id), "{body}: {reply}");
        assert!(s.alive(), "the server ended after {body}");
    }
    // Bytes that are not even a frame: refused, and the next frame is found.
    s.raw(b"garbage without headers\r\n");
    let reply = s.wait("an error for unframed garbage", |m| m.get("error").is_some());
    assert_eq!(error_code(&reply), Some(-32700), "{reply}");

    s.initialize(2);
    s.body("{bad}");
    let reply = s.wait("an error after initialize", |m| m.get("error").is_some());
    assert_eq!(error_code(&reply), Some(-32700), "{reply}");
    s.shutdown(3);
    s.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(s.exit_status().code(), Some(0));
}

/// A `Content-Length` over the cap is refused at once (nothing is buffered or waited for); the
/// server stays up and answers the next message.
#[test]
fn an_oversized_content_length_is_refused_and_the_server_keeps_serving() {
    let mut s = Lsp::start();
    s.raw(b"Content-Length: 99999999999\r\n\r\n");
    let reply = s.wait("a refusal", |m| m.get("error").is_some());
    assert_eq!((error_code(&reply), &reply["id"]), (Some(-32600), &Value::Null), "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("99999999999") && message.contains("64 MiB"), "{message}");
    // Part of the announced body, then a real message: reading resumes at its header.
    s.raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{\"text\":\"xxxx");
    s.initialize(1);
    assert!(s.alive());
    s.shutdown(2);
    s.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(s.exit_status().code(), Some(0));
}

/// `exit` without `shutdown` ends the server with status 1 (it was 0).
#[test]
fn exit_without_shutdown_exits_1() {
    let mut s = Lsp::start();
    s.initialize(1);
    s.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(s.exit_status().code(), Some(1));

    // Before `initialize` too.
    let mut s = Lsp::start();
    s.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(s.exit_status().code(), Some(1));
}

// ---------------------------------------------------------------------------------------------
// A model server's replies
// ---------------------------------------------------------------------------------------------

const NOTE: &str = "---\nlive:\n  objective: Keep the weather current.\n---\n# Weather\n\nSunny.\n";

struct Ran {
    code: Option<i32>,
    note: String,
    stderr: String,
    requests: usize,
}

/// `livenote run` on a note, against a model server playing `script`; `agent` goes into the
/// user's `[agent]` table.
fn run_against(flavor: Flavor, script: Vec<ScriptedReply>, agent: &str) -> Ran {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let server = runtime.block_on(MockModelServer::start(flavor, script));
    let dir = common::tempdir();
    let kind = match flavor {
        Flavor::OpenAi => "openai",
        Flavor::Anthropic => "anthropic",
    };
    let data = dir.path().join(".data");
    // The user's own config, so the provider counts whatever the folder's trust.
    common::write(
        &data.join("config.toml"),
        &format!(
            "[agent]\nprovider = \"m\"\n{agent}\n[providers.m]\nkind = \"{kind}\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
            server.base_url()
        ),
    );
    common::write(&dir.path().join("weather.md"), NOTE);
    let mut child = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["run", "weather.md"])
        .current_dir(dir.path())
        .env("LIVENOTE_TEST_KEY", "sk-test")
        .env("LIVENOTE_DATA_DIR", &data)
        .env("LIVENOTE_CONFIG_DIR", &data)
        .env("LIVENOTE_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stderr_pipe = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr_pipe.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            other => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("livenote run did not finish within 60 s: {other:?}");
            }
        }
    };
    let stderr = reader.join().unwrap_or_default();
    let note = std::fs::read_to_string(dir.path().join("weather.md")).unwrap_or_default();
    Ran { code: status.code(), note, stderr, requests: server.requests().len() }
}

/// One tool call with 2 MiB of arguments (the default bound is 1 MiB) fails the run with a
/// clear error, before the tool runs; it used to be appended (and 24 such calls of 30 MB each
/// took the process to 2.9 GB).
#[test]
fn huge_tool_call_arguments_fail_the_run() {
    for flavor in [Flavor::OpenAi, Flavor::Anthropic] {
        let text = "x".repeat(2 * 1024 * 1024);
        let script = vec![
            ScriptedReply::ToolCalls(vec![("append_to_note".to_owned(), json!({ "text": text }))]),
            ScriptedReply::Text("Appended.".to_owned()),
        ];
        let ran = run_against(flavor, script, "");
        assert_eq!(ran.code, Some(1), "{flavor:?}: {}", ran.stderr);
        assert!(
            ran.note.contains(
                "lastRunError: \"model reply too large: a tool call's arguments are over 1 MiB (agent.max_tool_args_bytes)\""
            ),
            "{flavor:?}: {}",
            ran.note.lines().filter(|l| l.contains("lastRun")).collect::<Vec<_>>().join("\n")
        );
        assert!(ran.note.ends_with("# Weather\n\nSunny.\n"), "{flavor:?}: nothing was appended");
        assert_eq!(ran.requests, 1, "{flavor:?}: the bad reply is not retried");
    }
}

/// A reply over `max_reply_bytes` is cut off as it streams and fails the run.
#[test]
fn a_reply_over_the_bound_fails_the_run() {
    let script = vec![ScriptedReply::Text("y".repeat(300 * 1024))];
    let ran = run_against(Flavor::OpenAi, script, "max_reply_bytes = 262144");
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert!(
        ran.note.contains("lastRunError: \"model reply too large: over 256 KiB (agent.max_reply_bytes)\""),
        "{}",
        ran.note
    );
    assert_eq!(ran.requests, 1);
}

/// Replies each within the bounds still cannot grow the conversation past
/// `max_conversation_bytes`: the run fails at the step that crosses it.
#[test]
fn a_conversation_over_its_bound_fails_the_run() {
    let pad = "p".repeat(60_000);
    let turn = || ScriptedReply::ToolCalls(vec![("read_note".to_owned(), json!({ "pad": pad }))]);
    let script = vec![turn(), turn(), turn(), turn(), turn(), ScriptedReply::Text("Read.".to_owned())];
    let ran = run_against(Flavor::OpenAi, script, "max_conversation_bytes = 200000");
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert!(
        ran.note.contains(
            "lastRunError: \"conversation too large: the run's conversation with the model grew past 200000 bytes (agent.max_conversation_bytes)\""
        ),
        "{}",
        ran.note
    );
    assert_eq!(ran.requests, 4, "the fourth reply crossed the bound");
}
