//! Issue 25 §2: what an editor's views of live notes ask the server. `livenote/noteHistory`
//! lists a note's runs, `livenote/runDiff` gives the body before and after one, and
//! `livenote/restoreRun` puts back the body from before one (through the buffer when the note
//! is open); `livenote/notesChanged` tells a client that asked for it which notes' list items
//! changed, so that its views refresh without polling.

use expect_test::expect;
use serde_json::{Value, json};

use super::harness::TestClient;
use super::{CONFIG, check, utf16_caps};

const NOTE: &str = "---\ntitle: Views\nlive:\n  objective: say something\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n# Views\n\nmine\n";

/// A client that asks for `livenote/notesChanged`.
fn caps() -> Value {
    let mut c = utf16_caps();
    c["experimental"] = json!({"livenote": {"notesChanged": true}});
    c
}

/// Runs as a view shows them, the run id left out (a ULID: its random part differs each time).
fn render_runs(runs: &Value) -> String {
    runs.as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            format!(
                "{} {} {} +{} -{} snapshot={} {}\n",
                r["time"],
                r["trigger"],
                r["outcome"],
                r["linesAdded"],
                r["linesRemoved"],
                r["snapshot"],
                r["summary"]
            )
        })
        .collect()
}

/// The next `livenote/notesChanged`, its URIs.
async fn notes_changed(c: &mut TestClient) -> Vec<String> {
    let p = c.next_notification("livenote/notesChanged").await;
    p["uris"].as_array().into_iter().flatten().filter_map(|u| u.as_str().map(str::to_owned)).collect()
}

async fn start() -> (TestClient, String) {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Trusted; scheduling off, so that only the manual runs write the note.
    let settings = json!({"scheduler": {"enabled": false}});
    let files = [(".livenote.toml", CONFIG), ("views.md", NOTE), ("other.md", NOTE)];
    let mut c = TestClient::start_in(root, &files, caps(), settings, true).await;
    // Once indexed, every live note is new to the client.
    assert_eq!(notes_changed(&mut c).await, [c.uri("other.md"), c.uri("views.md")]);
    let uri = c.open("views.md", NOTE).await;
    c.diagnostics(&uri, 1).await;
    (c, uri)
}

#[tokio::test]
async fn history_diff_and_restore_of_an_open_note() {
    let (mut c, uri) = start().await;
    let none = c.request("livenote/noteHistory", json!({"uri": uri})).await;
    assert_eq!(none["result"], json!([]), "{none}");

    assert_eq!(c.run_to_end(&uri).await, "Updated: Agent wrote this.");
    // The run changed this note's item (running, then its last run), and only this note's.
    loop {
        assert_eq!(notes_changed(&mut c).await, [uri.as_str()]);
        let list = c.request("livenote/listNotes", Value::Null).await;
        let status = list["result"].as_array().into_iter().flatten().find(|i| i["path"] == "views.md");
        if status.is_some_and(|i| i["status"] != "running") {
            break;
        }
    }
    let history = c.request("livenote/noteHistory", json!({"uri": uri})).await;
    check(
        &render_runs(&history["result"]),
        expect![[r#"
            "2026-11-23T15:07:00.000Z" "manual" "done" +1 -1 snapshot=true "Updated: Agent wrote this."
        "#]],
    );
    let Some(run) = history["result"][0]["id"].as_str().map(str::to_owned) else { panic!("{history}") };

    let diff = c.request("livenote/runDiff", json!({"uri": uri, "run": run})).await;
    assert_eq!(diff["result"]["run"], run, "{diff}");
    check(
        &format!(
            "before:\n{}after:\n{}",
            diff["result"]["before"].as_str().unwrap_or("?"),
            diff["result"]["after"].as_str().unwrap_or("?")
        ),
        expect![[r#"
            before:

            mine
            after:

            Agent wrote this.
        "#]],
    );
    // Without a run: the latest that changed the body, as `livenote diff NOTE`.
    let latest = c.request("livenote/runDiff", json!({"uri": uri})).await;
    assert_eq!(latest["result"], diff["result"], "{latest}");

    let res = c.request("livenote/restoreRun", json!({"uri": uri, "run": run})).await;
    assert_eq!(res["result"], Value::Null, "{res}");
    // The edit goes through the buffer (a spawned task's applyEdit); the file is untouched.
    for _ in 0..500 {
        if c.doc(&uri).text.ends_with("# Views\n\nmine\n") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(c.doc(&uri).text.ends_with("# Views\n\nmine\n"), "{}", c.doc(&uri).text);
    assert!(
        std::fs::read_to_string(c.root.path().join("views.md")).is_ok_and(|t| t == NOTE),
        "the file was written"
    );
    assert_eq!(notes_changed(&mut c).await, [uri.as_str()]);
    let history = c.request("livenote/noteHistory", json!({"uri": uri})).await;
    let triggers: Vec<&str> =
        history["result"].as_array().into_iter().flatten().filter_map(|r| r["trigger"].as_str()).collect();
    assert_eq!(triggers, ["restore", "manual"], "{history}");
    c.shutdown().await;
}

#[tokio::test]
async fn bad_requests_get_their_error_codes() {
    let (mut c, uri) = start().await;
    let code = |v: &Value| v["error"]["code"].as_i64();
    // The caller's mistakes: -32602.
    let not_an_id = c.request("livenote/runDiff", json!({"uri": uri, "run": "nope"})).await;
    assert_eq!(code(&not_an_id), Some(-32602), "{not_an_id}");
    let not_an_id = c.request("livenote/restoreRun", json!({"uri": uri, "run": "nope"})).await;
    assert_eq!(code(&not_an_id), Some(-32602), "{not_an_id}");
    let no_run = c.request("livenote/restoreRun", json!({"uri": uri})).await;
    assert_eq!(code(&no_run), Some(-32602), "{no_run}");
    let outside = c.request("livenote/noteHistory", json!({"uri": "file:///elsewhere/n.md"})).await;
    assert_eq!(code(&outside), Some(-32602), "{outside}");
    let no_uri = c.request("livenote/noteHistory", json!({"path": "views.md"})).await;
    assert_eq!(code(&no_uri), Some(-32602), "{no_uri}");
    // Well formed, but nothing to show or restore (yet): -32803.
    let unknown = "01JD0000000000000000000000";
    let diff = c.request("livenote/runDiff", json!({"uri": uri, "run": unknown})).await;
    assert_eq!(code(&diff), Some(-32803), "{diff}");
    check(
        diff["error"]["message"].as_str().unwrap_or(""),
        expect![
            "views.md has no kept snapshot of run 01JD0000000000000000000000; `livenote history views.md` lists its runs and which can be restored"
        ],
    );
    let restore = c.request("livenote/restoreRun", json!({"uri": uri, "run": unknown})).await;
    assert_eq!(code(&restore), Some(-32803), "{restore}");
    let nothing = c.request("livenote/runDiff", json!({"uri": uri})).await;
    assert_eq!(code(&nothing), Some(-32803), "{nothing}");
    c.shutdown().await;
}
