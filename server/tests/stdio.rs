//! The real `livenote lsp` binary over stdio: initialize → open → diagnostics → code action
//! → executeCommand → applyEdit round trip → shutdown → exit with status 0, with nothing on
//! stdout but framed JSON-RPC.

mod common;

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

struct Server {
    child: Child,
    stdin: ChildStdin,
    rx: mpsc::Receiver<Value>,
    /// Messages that arrived while waiting for another one.
    backlog: Vec<Value>,
}

impl Server {
    fn start(root: &std::path::Path) -> Server {
        // `--stdio` as vscode-languageclient passes it (ignored; plain `lsp` is tested by
        // tests/helix.rs, which starts the server as Helix's languages.toml says).
        let mut child = Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(["lsp", "--stdio"])
            .current_dir(root)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn livenote lsp: {e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let rx = common::read_frames(stdout);
        Server { child, stdin, rx, backlog: Vec::new() }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len())
            .unwrap_or_else(|e| panic!("write: {e}"));
        self.stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    /// Wait for a message matching `pred`, answering server requests on the way with `answer`.
    fn wait(&mut self, what: &str, mut pred: impl FnMut(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&mut pred) {
            return self.backlog.remove(i);
        }
        loop {
            let msg = self
                .rx
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
            if pred(&msg) {
                return msg;
            }
            if msg.get("method").is_some()
                && msg.get("id").is_some()
                && msg["method"] != "workspace/applyEdit"
            {
                // registerCapability, refreshes: acknowledge like an editor.
                let id = msg["id"].clone();
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
            } else {
                self.backlog.push(msg);
            }
        }
    }
}

#[test]
fn lsp_over_stdio_round_trip() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    let note = root.join("groceries.md");
    let text = "# Groceries\n\nmilk\n";
    std::fs::write(&note, text).unwrap_or_else(|e| panic!("{e}"));
    let live = "---\nlive:\n  objective: a \"quoted\" list\n  active: false\n---\n# Todo\n";
    std::fs::write(root.join("todo.md"), live).unwrap_or_else(|e| panic!("{e}"));
    let uri = tower_lsp_server::ls_types::Uri::from_file_path(&note)
        .map(|u| u.as_str().to_owned())
        .unwrap_or_default();
    let root_uri = tower_lsp_server::ls_types::Uri::from_file_path(root)
        .map(|u| u.as_str().to_owned())
        .unwrap_or_default();

    let mut s = Server::start(root);
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": null, "rootUri": root_uri, "capabilities": {
            "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}}}}}));
    let init = s.wait("initialize", |m| m["id"] == 1);
    assert_eq!(init["result"]["capabilities"]["textDocumentSync"]["change"], 2, "{init}");
    s.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));

    // A broken note gets diagnostics.
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "markdown", "version": 1, "text": "---\nlive:\n  active: yes\n---\n"}}}));
    let d = s.wait("diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 1
    });
    let codes: Vec<&str> = d["params"]["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["live/missing-objective", "live/wrong-type"]);

    // Replace it with a passive note, then "Make live" through a code action and its command.
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]}}));
    s.wait("clean diagnostics", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 2
    });
    s.send(json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []}}}));
    let actions = s.wait("code actions", |m| m["id"] == 2);
    let Some(make_live) =
        actions["result"].as_array().into_iter().flatten().find(|a| a["title"] == "Make live").cloned()
    else {
        panic!("no Make live in {actions}")
    };
    // The action carries the edit; the same change is also a command (the palette's way).
    assert!(make_live["edit"]["documentChanges"][0]["edits"][0]["newText"].is_string(), "{make_live}");
    s.send(json!({"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {
        "command": "livenote.makeLive", "arguments": [uri]}}));
    let apply = s.wait("applyEdit", |m| m["method"] == "workspace/applyEdit");
    let change = &apply["params"]["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["version"], 2, "the edit is versioned: {apply}");
    let new_text = change["edits"][0]["newText"].as_str().unwrap_or_default().to_owned();
    assert!(new_text.starts_with("---\nlive:\n  objective:"), "{new_text:?}");
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": format!("{new_text}{text}")}]}}));
    s.send(json!({"jsonrpc": "2.0", "id": apply["id"], "result": {"applied": true}}));
    let d = s.wait("diagnostics after Make live", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 3
    });
    assert_eq!(d["params"]["diagnostics"], json!([]));
    s.wait("executeCommand reply", |m| m["id"] == 3);

    // `livenote/listNotes` and its command form: the transport writes the answer the handler
    // serialised in place of a placeholder; both read as the same list.
    let mut id = 100;
    let mut list = |s: &mut Server, method: &str, params: Value| {
        id += 1;
        s.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        s.wait("listNotes", |m| m["id"] == id)
    };
    let mut typed = Value::Null;
    for _ in 0..200 {
        typed = list(&mut s, "livenote/listNotes", Value::Null);
        if typed["result"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(typed["result"][0]["path"], "todo.md", "{typed}");
    assert_eq!(typed["result"][0]["status"], "paused", "{typed}");
    assert_eq!(typed["jsonrpc"], "2.0", "{typed}");
    let by_command =
        list(&mut s, "workspace/executeCommand", json!({"command": "livenote.listNotes", "arguments": []}));
    assert_eq!(by_command["result"], typed["result"], "{by_command}");

    s.send(json!({"jsonrpc": "2.0", "id": 4, "method": "shutdown", "params": null}));
    let res = s.wait("shutdown", |m| m["id"] == 4);
    assert!(res.get("error").is_none(), "{res}");
    s.send(json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
    let status = s.child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status.code(), Some(0));
}
