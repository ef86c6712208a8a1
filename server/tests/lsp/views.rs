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

/// What a Runs view does: on each `livenote/notesChanged` naming the note, ask for its runs
/// again, and nothing otherwise. Returns the runs it shows once `done` (given the messages seen
/// so far) holds and what it shows is what the server answers now: a change announced before
/// or without a notification would leave it behind and fail here.
async fn follow(c: &mut TestClient, uri: &str, done: impl Fn(&[Value], &TestClient) -> bool) -> Value {
    let (mut seen, mut shown) = (Vec::new(), Value::Null);
    for _ in 0..500 {
        for n in c.drained() {
            // Among the notes named, this one's (a run by hand also brings the folder's trust
            // up to date, which may change the other note's status too).
            let named = n["method"] == "livenote/notesChanged"
                && n["params"]["uris"].as_array().is_some_and(|u| u.contains(&json!(uri)));
            if named {
                shown = c.request("livenote/noteHistory", json!({"uri": uri})).await["result"].clone();
            }
            seen.push(n);
        }
        if done(&seen, c) {
            let now = c.request("livenote/noteHistory", json!({"uri": uri})).await["result"].clone();
            if now == shown {
                return shown;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the view of the runs fell behind: it shows {shown}")
}

async fn start() -> (TestClient, String) {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Trusted; scheduling off, so that only the manual runs write the note.
    let settings = json!({"scheduler": {"enabled": false}});
    let files = [(".livenote.toml", CONFIG), ("views.md", NOTE), ("other.md", NOTE)];
    let mut c = TestClient::start_in(root, &files, caps(), settings, true).await;
    // Once indexed, every live note is new to the client.
    assert_eq!(notes_changed(&mut c).await, [c.uri("other.md"), c.uri("views.md")]);
    // What a Live notes view does: ask for the list on each notification, until what it shows
    // is what the server answers (the start settles: trust, the configuration).
    let mut shown = c.request("livenote/listNotes", Value::Null).await["result"].clone();
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        if c.drained().iter().any(|n| n["method"] == "livenote/notesChanged") {
            shown = c.request("livenote/listNotes", Value::Null).await["result"].clone();
        }
    }
    let now = c.request("livenote/listNotes", Value::Null).await["result"].clone();
    assert_eq!(shown, now, "the list changed without a notification");
    let uri = c.open("views.md", NOTE).await;
    c.diagnostics(&uri, 1).await;
    (c, uri)
}

#[tokio::test]
async fn history_diff_and_restore_of_an_open_note() {
    let (mut c, uri) = start().await;
    let none = c.request("livenote/noteHistory", json!({"uri": uri})).await;
    assert_eq!(none["result"], json!([]), "{none}");

    let res =
        c.request("workspace/executeCommand", json!({"command": "livenote.run", "arguments": [uri]})).await;
    assert!(res.get("error").is_none(), "{res}");
    // A view that asks again on each notification ends up showing the finished run.
    let history = follow(&mut c, &uri, |seen, _| {
        seen.iter().any(|n| n["method"] == "$/progress" && n["params"]["value"]["kind"] == "end")
    })
    .await;
    check(
        &render_runs(&history),
        expect![[r#"
            "2026-11-23T15:07:00.000Z" "manual" "done" +1 -1 snapshot=true "Updated: Agent wrote this."
        "#]],
    );
    let Some(run) = history[0]["id"].as_str().map(str::to_owned) else { panic!("{history}") };

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
    let history = follow(&mut c, &uri, |_, c| c.doc(&uri).text.ends_with("# Views\n\nmine\n")).await;
    assert!(
        std::fs::read_to_string(c.root.path().join("views.md")).is_ok_and(|t| t == NOTE),
        "the file was written"
    );
    let triggers: Vec<&str> =
        history.as_array().into_iter().flatten().filter_map(|r| r["trigger"].as_str()).collect();
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

/// A client that did not ask for `livenote/notesChanged` gets none, whatever changes.
#[tokio::test]
async fn no_notification_for_a_client_that_did_not_ask() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({"scheduler": {"enabled": false}});
    let files = [(".livenote.toml", CONFIG), ("views.md", NOTE)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), settings, true).await;
    let uri = c.open("views.md", NOTE).await;
    c.diagnostics(&uri, 1).await;
    assert_eq!(c.run_to_end(&uri).await, "Updated: Agent wrote this.");
    // Everything the server sent until the round of refreshes after the run (in which a
    // notification would have gone too) and an answer after it.
    let mut seen: Vec<Value> = Vec::new();
    for _ in 0..500 {
        seen.extend(c.drained());
        if seen.iter().any(|n| n["method"] == "workspace/codeLens/refresh") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(seen.iter().any(|n| n["method"] == "workspace/codeLens/refresh"), "no refresh after the run");
    let history = c.request("livenote/noteHistory", json!({"uri": uri})).await;
    assert_eq!(history["result"].as_array().map(Vec::len), Some(1), "{history}");
    seen.extend(c.drained());
    let sent: Vec<&Value> = seen.iter().filter(|n| n["method"] == "livenote/notesChanged").collect();
    assert!(sent.is_empty(), "{sent:?}");
    c.shutdown().await;
}
