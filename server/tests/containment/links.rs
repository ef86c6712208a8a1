//! See the suite's header in containment.rs.
//!
//! Issue 21, section 7: a link is as visible as what it leads to. The agent's workspace tools,
//! the standing instructions and `livenote mcp`'s note paths decide on the link's target, not
//! only on the link's own name: `readme.txt -> .env`, `notes/cfg.txt -> ../.git/config`,
//! `AGENTS.md -> .git/config` and links into a nested `sub/.git/` or `sub/.livenote/`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::{Value, json};

use crate::common::{tempdir, write};

const KEY: &str = "sk-test-LINKS-5151";

fn link(target: &str, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap_or_else(|e| panic!("{}: {e}", at.display()));
}

fn livenote(root: &Path, data: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(args)
        .current_dir(root)
        .env("LIVENOTE_TEST_KEY", KEY)
        .env("LIVENOTE_DATA_DIR", data)
        .env("LIVENOTE_CONFIG_DIR", data)
        .env("TZ", "UTC")
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A trusted folder whose visible files link to hidden and ignored ones: the agent lists, reads
/// and searches through the links, and `AGENTS.md` links into `.git/`. Nothing of the targets
/// reaches the model; a link to a visible file still works.
#[test]
fn links_to_hidden_or_ignored_files_show_nothing_to_the_model() {
    let dir = tempdir();
    let data = tempdir();
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    write(&root.join(".env"), "API_TOKEN=tok-env-4242\n");
    write(&root.join(".git/config"), "[remote]\n  url = https://tok-git-4242@example.com\n");
    write(&root.join(".gitignore"), "private.txt\n");
    write(&root.join("private.txt"), "tok-ignored-4242\n");
    write(&root.join("plain.txt"), "tok-plain-visible\n");
    link(".env", &root.join("readme.txt"));
    std::fs::create_dir_all(root.join("notes")).unwrap_or_else(|e| panic!("{e}"));
    link("../.git/config", &root.join("notes/cfg.txt"));
    link("private.txt", &root.join("shown.txt"));
    link("plain.txt", &root.join("alias.txt"));
    link(".git/config", &root.join("AGENTS.md"));
    write(&root.join("n.md"), "---\nlive:\n  objective: Summarise the folder.\n---\n# N\n\nold body\n");

    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let script = vec![
        ScriptedReply::tool("list_files", json!({})),
        ScriptedReply::tool("read_file", json!({"path": "readme.txt"})),
        ScriptedReply::tool("read_file", json!({"path": "notes/cfg.txt"})),
        ScriptedReply::tool("read_file", json!({"path": "shown.txt"})),
        ScriptedReply::tool("search_files", json!({"query": "tok-"})),
        ScriptedReply::tool("read_file", json!({"path": "alias.txt"})),
        ScriptedReply::Text("Nothing to change.".to_owned()),
    ];
    let server = runtime.block_on(MockModelServer::start(Flavor::OpenAi, script));
    write(
        &root.join(".livenote.toml"),
        &format!(
            "[agent]\nprovider = \"m\"\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
            server.base_url()
        ),
    );
    let trusted = livenote(&root, data.path(), &["trust", "."]);
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
    let out = livenote(&root, data.path(), &["run", "n.md"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 7, "{stderr}");
    for (i, r) in reqs.iter().enumerate() {
        let body = r.body.to_string();
        for secret in ["tok-env-4242", "tok-git-4242", "tok-ignored-4242"] {
            assert!(!body.contains(secret), "request {i} carries {secret}: {body}");
        }
    }
    let result = |i: usize| reqs[i].tool_results().first().cloned().unwrap_or_default().1;
    let listing = result(1);
    assert!(listing.contains("plain.txt") && listing.contains("alias.txt"), "{listing}");
    for hidden in ["readme.txt", "notes/cfg.txt", "shown.txt", "AGENTS.md"] {
        assert!(!listing.lines().any(|l| l == hidden), "{hidden} listed: {listing}");
    }
    assert!(result(2).contains("`readme.txt` is a link to `.env`, which is not available"), "{}", result(2));
    assert!(result(3).contains("`notes/cfg.txt` is a link to `.git/config`"), "{}", result(3));
    assert!(result(4).contains("`shown.txt` is a link to `private.txt`"), "{}", result(4));
    let found = result(5);
    assert!(found.contains("plain.txt:1: tok-plain-visible"), "{found}");
    assert!(found.contains("alias.txt:1: tok-plain-visible"), "{found}");
    assert_eq!(found.lines().count(), 2, "{found}");
    assert_eq!(result(6), "tok-plain-visible\n", "a link to a visible file still reads");
    // The standing instructions: the link was refused, and the run says so.
    assert!(!reqs[0].system_prompt().contains("AGENTS.md"), "{}", reqs[0].system_prompt());
    let transcripts: String = std::fs::read_dir(root.join(".livenote/runs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        transcripts.contains("not used: AGENTS.md: a link to .git/config, a hidden or ignored file; refused"),
        "{transcripts}"
    );
}

/// `livenote mcp` over stdio: one JSON-RPC message a line each way.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<Value>,
    next: i64,
}

impl Mcp {
    fn start(root: &Path, data: &Path) -> Mcp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(["mcp", "."])
            .current_dir(root)
            .env("LIVENOTE_DATA_DIR", data)
            .env("LIVENOTE_CONFIG_DIR", data)
            .env("TZ", "UTC")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let v = serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let mut mcp = Mcp { child, stdin, lines, next: 1 };
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap_or_else(|e| panic!("{e}"));
        self.stdin.flush().unwrap_or_else(|e| panic!("{e}"));
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.lines.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
            if msg["id"] == id {
                return msg;
            }
        }
    }

    /// A tool call's answer: whether it is a tool error, and its text.
    fn call(&mut self, tool: &str, args: Value) -> (bool, String) {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let text = r["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        (r["result"]["isError"] == true, text)
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Links into a nested `sub/.git/` or `sub/.livenote/` are refused by `make_live` and
/// `note_status` like the top-level ones: nothing is written there, nothing is read.
#[test]
fn mcp_paths_through_links_into_nested_private_folders_are_refused() {
    let dir = tempdir();
    let data = tempdir();
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    write(&root.join("sub/.git/hooks/README.md"), "# hooks\n");
    write(&root.join("sub/.livenote/history/x.md"), "---\nlive:\n  objective: tok-state-4242\n---\n# X\n");
    link("sub/.git/hooks", &root.join("hooks"));
    link("sub/.livenote/history/x.md", &root.join("state.md"));
    link("sub/.git/hooks/README.md", &root.join("readme.md"));
    write(&root.join("ok.md"), "# Ok\n");

    let mut mcp = Mcp::start(&root, data.path());
    let (err, text) = mcp.call("make_live", json!({"path": "hooks/post-merge.md", "objective": "x"}));
    assert!(err && text.contains("outside the workspace"), "{text}");
    let (err, text) = mcp.call("make_live", json!({"path": "readme.md", "objective": "x"}));
    assert!(err && text.contains("outside the workspace"), "{text}");
    let (err, text) = mcp.call("note_status", json!({"path": "state.md"}));
    assert!(err && text.contains("outside the workspace") && !text.contains("tok-state-4242"), "{text}");
    // What stays inside still works.
    let (err, text) = mcp.call("make_live", json!({"path": "ok.md", "objective": "Keep it current."}));
    assert!(!err, "{text}");
    drop(mcp);
    assert!(!root.join("sub/.git/hooks/post-merge.md").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("sub/.git/hooks/README.md")).unwrap_or_default(),
        "# hooks\n"
    );
}
