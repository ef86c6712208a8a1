//! Issue 14: lenses and hints are redrawn as soon as what they show changes, not at the next
//! minute: trust granted (the prompt's Allow, the trust command, `livenote trust` in a shell),
//! a run ending (whatever started it), the user editing a runtime field. The client declares
//! refresh support; after the change it receives `workspace/codeLens/refresh` and
//! `workspace/inlayHint/refresh`, and what it then asks for is new (the clock never moves).

use std::process::Command;

use serde_json::{Value, json};

use super::harness::{self, TestClient};
use super::utf16_caps;

/// Hourly, ran at 09:02 (Chicago): not due before 10:00.
const HOURLY: &str = "---\nlive:\n  objective: the time\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastAttemptAt: \"2026-11-23T15:01:59.000Z\"\n  lastRunAt: \"2026-11-23T15:02:00.000Z\"\n---\n# Time\n\n9:02\n";

const ECHO: &str = "Agent wrote this.";

fn echo_settings(scheduling: bool) -> Value {
    json!({
        "scheduler": {"enabled": scheduling},
        "agent": {"provider": "echo"},
        "providers": {"echo": {"kind": "command", "command": ["sh", "-c", format!("printf '{ECHO}\\n'")]}},
    })
}

/// The hints of the whole note, `|`-separated.
async fn hints(c: &mut TestClient, uri: &str) -> String {
    let res = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}}),
        )
        .await;
    let labels: Vec<&str> =
        res["result"].as_array().into_iter().flatten().filter_map(|h| h["label"].as_str()).collect();
    labels.join(" | ")
}

async fn lens(c: &mut TestClient, uri: &str) -> String {
    let res = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    res["result"][0]["command"]["title"].as_str().unwrap_or_default().to_owned()
}

/// Both refresh requests of one round (lenses first, then hints).
async fn refreshed(c: &mut TestClient) {
    c.next_notification("workspace/codeLens/refresh").await;
    c.next_notification("workspace/inlayHint/refresh").await;
}

/// What `show` answers once a redraw asked for shows `want`: a change another process made
/// reaches the server through its file watcher, so a redraw asked for an earlier change of
/// the same burst may come first; a few rounds are allowed, each waiting for a redraw.
async fn redrawn_to<F>(c: &mut TestClient, uri: &str, want: &str, show: F) -> String
where
    F: AsyncFn(&mut TestClient, &str) -> String,
{
    let mut shown = String::new();
    for _ in 0..5 {
        refreshed(c).await;
        shown = show(c, uri).await;
        if shown == want {
            break;
        }
    }
    shown
}

async fn open(c: &mut TestClient, text: &str) -> String {
    let uri = c.open("n.md", text).await;
    c.diagnostics(&uri, 1).await;
    uri
}

/// `livenote trust` or `untrust` in a shell, with the server's trust store.
fn shell(c: &TestClient, args: &[&str]) {
    let data = c.root.path().join(".data");
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(args)
        .arg(c.root.path())
        .env("LIVENOTE_DATA_DIR", &data)
        .env("LIVENOTE_CONFIG_DIR", &data)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("livenote {args:?}: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test]
async fn the_trust_prompts_allow_redraws_at_once() {
    // Untrusted, with a scheduled note: the server asks; this client answers "Allow".
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("n.md", HOURLY)], utf16_caps(), Value::Null, false).await;
    let asked = c.next_notification("window/showMessageRequest").await;
    assert!(asked["message"].as_str().is_some_and(|m| m.contains("trust")), "{asked}");
    refreshed(&mut c).await;
    let uri = open(&mut c, HOURLY).await;
    assert_eq!(hints(&mut c, &uri).await, "every hour · next 10:00 | 5 min ago");
    assert_eq!(lens(&mut c, &uri).await, "● Live · updated 5 min ago · next 10:00");
    c.shutdown().await;
}

#[tokio::test]
async fn the_trust_command_redraws_at_once() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Scheduling off: no trust question at start, the command is what trusts.
    let settings = json!({"scheduler": {"enabled": false}});
    let mut c = TestClient::start_in(root, &[("n.md", HOURLY)], utf16_caps(), settings, false).await;
    let uri = open(&mut c, HOURLY).await;
    assert_eq!(hints(&mut c, &uri).await, "waiting for trust | every hour · next 10:00 | 5 min ago");
    let res = c
        .request("workspace/executeCommand", json!({"command": "livenote.trustWorkspace", "arguments": []}))
        .await;
    assert!(res.get("error").is_none(), "{res}");
    refreshed(&mut c).await;
    assert_eq!(hints(&mut c, &uri).await, "every hour · next 10:00 | 5 min ago");
    c.shutdown().await;
}

/// `livenote trust` and `untrust` in a shell change the trust store, which the server watches
/// (beside the workspace, when the client registers a watcher for that): both redraw, in a
/// folder without a `.livenote.toml` too.
#[tokio::test]
async fn trust_from_a_shell_redraws_at_once() {
    for client_watches in [false, true] {
        let mut caps = utf16_caps();
        caps["workspace"]["didChangeWatchedFiles"] = json!({"dynamicRegistration": client_watches});
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let settings = json!({"scheduler": {"enabled": false}});
        let mut c = TestClient::start_watching(root, &[("n.md", HOURLY)], caps, settings).await;
        let uri = open(&mut c, HOURLY).await;
        assert_eq!(hints(&mut c, &uri).await, "waiting for trust | every hour · next 10:00 | 5 min ago");
        shell(&c, &["trust"]);
        let want = "every hour · next 10:00 | 5 min ago";
        assert_eq!(redrawn_to(&mut c, &uri, want, hints).await, want, "client watches: {client_watches}");
        shell(&c, &["untrust"]);
        let want = "waiting for trust | every hour · next 10:00 | 5 min ago";
        assert_eq!(redrawn_to(&mut c, &uri, want, hints).await, want, "client watches: {client_watches}");
        c.shutdown().await;
    }
}

/// A scheduled run in the buffer: once it ends, the client is asked to redraw, and the lens and
/// hints show the new run and the next fire, not "updating…" or "due now".
#[tokio::test]
async fn the_end_of_a_scheduled_run_redraws_at_once() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c =
        TestClient::start_in(root, &[("n.md", HOURLY)], utf16_caps(), echo_settings(true), true).await;
    let uri = open(&mut c, HOURLY).await;
    assert_eq!(hints(&mut c, &uri).await, "every hour · next 10:00 | 5 min ago");
    // 10:00:30: the 10:00 occurrence fires.
    c.clock.set(harness::now() + chrono::TimeDelta::minutes(53) + chrono::TimeDelta::seconds(30));
    assert_eq!(c.progress("end").await["message"], format!("Updated: {ECHO}"));
    refreshed(&mut c).await;
    assert_eq!(hints(&mut c, &uri).await, "every hour · next 11:00 | just now");
    assert_eq!(lens(&mut c, &uri).await, "● Live · updated just now · next 11:00");
    assert!(c.doc(&uri).text.ends_with(&format!("# Time\n\n{ECHO}\n")), "{}", c.doc(&uri).text);
    c.shutdown().await;
}

/// The user writes a runtime field by hand: the note's lenses and hints follow.
#[tokio::test]
async fn editing_a_runtime_field_redraws() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({"scheduler": {"enabled": false}});
    let mut c = TestClient::start_in(root, &[("n.md", HOURLY)], utf16_caps(), settings, true).await;
    let uri = open(&mut c, HOURLY).await;
    assert_eq!(hints(&mut c, &uri).await, "every hour · next 10:00 | 5 min ago");
    let at = HOURLY.find("---\n# Time").unwrap_or_else(|| panic!("no closing delimiter"));
    c.edit(&uri, at, at, "  lastRunError: boom\n").await;
    refreshed(&mut c).await;
    assert_eq!(lens(&mut c, &uri).await, "Failed 5 min ago: boom");
    c.shutdown().await;
}

/// A run held by another process (here: its lock taken outside the server): the lens says
/// "updating" once the watcher saw the lock file (a redraw is asked for) and is redrawn once it
/// is released, though no file event announces that.
#[tokio::test]
async fn a_run_in_another_process_ending_redraws_without_a_file_event() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({"scheduler": {"enabled": false}});
    let mut c = TestClient::start_trusted_watching(root, &[("n.md", HOURLY)], utf16_caps(), settings).await;
    let uri = open(&mut c, HOURLY).await;
    let idle = lens(&mut c, &uri).await;
    assert_ne!(idle, "Updating…");
    let store = livenote::runs::Store::new(c.root.path());
    let held = store.try_lock("n.md").unwrap_or_else(|e| panic!("{e}"));
    assert!(held.is_some(), "the lock was free");
    let busy = redrawn_to(&mut c, &uri, "Updating…", lens).await;
    assert_eq!(busy, "Updating…");
    drop(held);
    assert_eq!(redrawn_to(&mut c, &uri, &idle, lens).await, idle);
    c.shutdown().await;
}
