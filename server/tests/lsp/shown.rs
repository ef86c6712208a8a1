//! Issue 32 §7–8: the editor shows what is true. A quick fix is offered anywhere on its
//! diagnostic's line; a passive note has a "Make live" lens; a client with lenses gets no
//! status hint that says the lens's words again; `workspace/symbol` asked while the workspace
//! is first indexed lists its notes; a run undone in the buffer (`u`) is no failure and is not
//! run again.

use expect_test::expect;
use livenote::note::rewrite::{RuntimeField, set_runtime_fields};
use serde_json::{Value, json};

use super::harness::{self, TestClient, pos};
use super::{check, cursor, utf16_caps};

/// The code actions at the fixture's cursor: `kind title` per line.
async fn actions(c: &mut TestClient, uri: &str, text: &str, at: usize) -> String {
    let p = pos(text, at, false);
    let res = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": p, "end": p}, "context": {"diagnostics": []}}),
        )
        .await;
    res["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| format!("{} {}\n", a["kind"].as_str().unwrap_or(""), a["title"].as_str().unwrap_or("")))
        .collect()
}

const ACTIVE_YES: &str = "---\ntitle: Chicago time\nlive:\n  objective: Show the time in Chicago.\n  active: yes\n---\n# Chicago time\n";

/// rust-analyzer's rule: the fix of a diagnostic is offered with the cursor anywhere on its
/// line, not only on the value it underlines (`yes`).
#[tokio::test]
async fn a_quick_fix_is_offered_anywhere_on_its_line() {
    let mut c = TestClient::start(&[], utf16_caps()).await;
    let uri = c.open("chicago.md", ACTIVE_YES).await;
    c.diagnostics(&uri, 1).await;
    let mut shown = String::new();
    for fixture in [
        // On the key.
        "---\ntitle: Chicago time\nlive:\n  objective: Show the time in Chicago.\n  act$0ive: yes\n",
        // In the indentation.
        "---\ntitle: Chicago time\nlive:\n  objective: Show the time in Chicago.\n $0 active: yes\n",
        // At the end of the line.
        "---\ntitle: Chicago time\nlive:\n  objective: Show the time in Chicago.\n  active: yes$0\n",
    ] {
        let (text, at) = cursor(fixture);
        let quick: String =
            actions(&mut c, &uri, &text, at).await.lines().filter(|l| l.starts_with("quickfix")).collect();
        shown.push_str(&format!("{quick}\n"));
    }
    check(
        &shown,
        expect![[r#"
            quickfix Change to `true`
            quickfix Change to `true`
            quickfix Change to `true`
        "#]],
    );
    // Not on the line above.
    let (text, at) = cursor("---\ntitle: Chicago time\nlive:\n  objective: Show the$0 time in Chicago.\n");
    let above = actions(&mut c, &uri, &text, at).await;
    assert!(!above.contains("quickfix"), "{above}");
    c.shutdown().await;
}

/// A passive note shows the status pill's passive state as a lens: "Make live", which makes it
/// live from the template (the code action's command).
#[tokio::test]
async fn a_passive_note_has_a_make_live_lens() {
    let mut c = TestClient::start(&[], utf16_caps()).await;
    let uri = c.open("groceries.md", "# Groceries\n\n- milk\n").await;
    c.diagnostics(&uri, 1).await;
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    check(
        &render_lenses(&lenses),
        expect![[r#"
            0:0-0:11 "Make live" "livenote.makeLive"
        "#]],
    );
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": lenses["result"][0]["command"]["command"], "arguments": lenses["result"][0]["command"]["arguments"]}),
        )
        .await;
    assert!(res.get("error").is_none(), "{res}");
    let mut text = String::new();
    for _ in 0..300 {
        text = c.doc(&uri).text;
        if text.contains("live:") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(text.starts_with("---\nlive:\n  objective: "), "{text}");
    c.shutdown().await;
}

fn render_lenses(lenses: &Value) -> String {
    lenses["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            let r = &l["range"];
            format!(
                "{}:{}-{}:{} {} {}\n",
                r["start"]["line"],
                r["start"]["character"],
                r["end"]["line"],
                r["end"]["character"],
                l["command"]["title"],
                l["command"]["command"]
            )
        })
        .collect()
}

fn render_hints(hints: &Value) -> String {
    hints["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| format!("{}:{} {}\n", h["position"]["line"], h["position"]["character"], h["label"]))
        .collect()
}

async fn hints(c: &mut TestClient, uri: &str) -> Value {
    c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 12, "character": 0}}}),
    )
    .await
}

const HOURLY: &str = "---\nlive:\n  objective: time\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n---\n";

/// Neovim draws a lens and the hints of its line side by side ("waiting for trust Waiting for
/// trust"): a client that declares code lenses gets the status from the lens alone, one
/// without them (Helix) from the hint.
#[tokio::test]
async fn the_status_is_said_once_lens_or_hint() {
    let mut with_lenses = utf16_caps();
    with_lenses["textDocument"]["codeLens"] = json!({"dynamicRegistration": false});
    let mut c = TestClient::start(&[], with_lenses).await;
    let uri = c.open("n.md", HOURLY).await;
    c.diagnostics(&uri, 1).await;
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(lenses["result"][0]["command"]["title"], "Waiting for trust", "{lenses}");
    check(
        &render_hints(&hints(&mut c, &uri).await),
        expect![[r#"
            4:25 "every hour · next 10:00"
            5:35 "5 min ago"
        "#]],
    );
    c.shutdown().await;

    let mut c = TestClient::start(&[], utf16_caps()).await;
    let uri = c.open("n.md", HOURLY).await;
    c.diagnostics(&uri, 1).await;
    check(
        &render_hints(&hints(&mut c, &uri).await),
        expect![[r#"
            1:5 "waiting for trust"
            4:25 "every hour · next 10:00"
            5:35 "5 min ago"
        "#]],
    );
    c.shutdown().await;
}

/// A picker opened as the editor starts (`workspace/symbol` before the first index is built)
/// lists the notes once they are indexed, never `null`.
#[tokio::test]
async fn symbols_asked_during_the_first_index_list_the_notes() {
    let notes: Vec<(String, String)> = (0..1500)
        .map(|i| {
            (
                format!("notes/n{i:04}.md"),
                format!("---\ntitle: Note {i:03}\nlive:\n  objective: keep {i}\n---\n# Note {i:03}\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = notes.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let mut c = TestClient::start(&files, utf16_caps()).await;
    let symbols = c.request("workspace/symbol", json!({"query": "note 123"})).await;
    let found = symbols["result"].as_array().unwrap_or_else(|| panic!("not a list: {symbols}"));
    assert!(found.iter().any(|s| s["name"] == "Note 123"), "{symbols}");
    let all = c.request("workspace/symbol", json!({"query": ""})).await;
    assert_eq!(all["result"].as_array().map(Vec::len), Some(200), "at most 200: {all}");
    c.shutdown().await;
}

/// A client with no folder open has no index to wait for: an empty list at once.
#[tokio::test]
async fn symbols_without_a_folder_are_an_empty_list() {
    let mut c = TestClient::start_without_folder(&[], utf16_caps(), Value::Null).await;
    let symbols = c.request("workspace/symbol", json!({"query": ""})).await;
    assert_eq!(symbols["result"], json!([]), "{symbols}");
    c.shutdown().await;
}

/// `u` after a scheduled run into the buffer takes out the body and the result's fields
/// (`lastRunAt`, `lastRunSummary`) but not `lastAttemptAt`, which the run's first edit wrote.
/// The run happened: no "retry in 5 min", no failure, and the occurrence is not run again when
/// the backoff would have ended.
#[tokio::test]
async fn a_run_undone_in_the_buffer_is_no_failure_and_is_not_run_again() {
    let note = "---\nlive:\n  objective: say something\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T15:00:05.000Z\"\n  lastAttemptAt: \"2026-11-23T15:00:05.000Z\"\n---\n# Hourly\n\nold body\n";
    let settings = json!({
        "agent": {"provider": "echo"},
        "providers": {"echo": {"kind": "command", "command": ["sh", "-c", "printf 'Agent wrote this.\\n'"]}},
    });
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("hourly.md", note)], utf16_caps(), settings, true).await;
    let uri = c.open("hourly.md", note).await;
    c.diagnostics(&uri, 1).await;
    // 10:00:30 in Chicago: the hourly occurrence is due, and runs into the buffer.
    c.clock.set(harness::now() + chrono::TimeDelta::minutes(53) + chrono::TimeDelta::seconds(30));
    c.progress("begin").await;
    let end = c.progress("end").await;
    assert_eq!(end["message"], "Updated: Agent wrote this.", "{end}");
    let ran = c.doc(&uri).text;
    let field = |name: &str| -> String {
        ran.lines()
            .find_map(|l| {
                l.trim_start().strip_prefix(&format!("{name}: ")).map(|v| v.trim_matches('"').to_owned())
            })
            .unwrap_or_else(|| panic!("no {name} in {ran}"))
    };
    let (attempt, run_id) = (field("lastAttemptAt"), field("lastRunId"));
    // What `u` leaves: the note as the run's first edit made it.
    let edits = set_runtime_fields(
        note,
        &[(RuntimeField::LastAttemptAt, Some(&attempt)), (RuntimeField::LastRunId, Some(&run_id))],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let undone = livenote::text::edit::apply(note, &edits).unwrap_or_else(|e| panic!("{e}"));
    assert!(undone.ends_with("old body\n") && !undone.contains("Agent wrote"), "{undone}");
    c.edit(&uri, 0, ran.len(), &undone).await;
    c.diagnostics(&uri, c.doc(&uri).version).await;
    // And `:w`: the file says so too, as every other process reads it.
    std::fs::write(c.root.path().join("hourly.md"), &undone).unwrap_or_else(|e| panic!("{e}"));
    c.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}})).await;

    let hints = render_hints(&hints(&mut c, &uri).await);
    assert!(!hints.contains("retry"), "an undone run reads as a failure to retry:\n{hints}");
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(lenses["result"][0]["command"]["title"], "● Live · updated just now · next 11:00", "{lenses}");
    let status = c.request("livenote/noteStatus", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(status["result"]["status"], "live", "{status}");
    assert_eq!(status["result"]["nextDue"], "2026-11-23T11:00:00-06:00", "{status}");

    // Past the end of the backoff an attempt without a result would have: nothing runs.
    c.clock.set(harness::now() + chrono::TimeDelta::minutes(59));
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let again = c
        .drained()
        .into_iter()
        .filter(|n| n["method"] == "$/progress" && n["params"]["value"]["kind"] == "begin")
        .count();
    assert_eq!(again, 0, "the undone occurrence ran again");
    assert_eq!(c.doc(&uri).text, undone, "the buffer changed");
    c.shutdown().await;
}
