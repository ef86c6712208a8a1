//! Issue 25 §1 over the protocol: "Make live: <heading>" for clients without an input box,
//! `livenote.makeLive URI {describe, run}` drafting through the scripted model server (one
//! versioned edit; an invalid draft is never written, the template is, with a warning), and
//! the "Set schedule: …" presets on a live note.

use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::{Value, json};

use super::harness::{TestClient, pos};
use super::{check, cursor, utf16_caps};
use expect_test::expect;

fn config(model: &MockModelServer) -> String {
    format!(
        "[agent]\nprovider = \"m\"\n\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n",
        model.base_url()
    )
}

/// A server over `root`, whose `.livenote.toml` (the model's provider) is trusted as it is.
async fn start(root: tempfile::TempDir, files: &[(&str, &str)]) -> TestClient {
    TestClient::start_in(root, files, utf16_caps(), Value::Null, true).await
}

async fn actions_at(c: &mut TestClient, uri: &str, text: &str, at: usize) -> Vec<Value> {
    let p = pos(text, at, false);
    let res = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": p, "end": p}, "context": {"diagnostics": []}}),
        )
        .await;
    res["result"].as_array().cloned().unwrap_or_default()
}

/// `title [command args]`, one a line, and whether it carries an edit.
fn render(actions: &[Value]) -> String {
    actions
        .iter()
        .map(|a| {
            let args: Vec<String> = a["command"]["arguments"]
                .as_array()
                .into_iter()
                .flatten()
                .skip(1)
                .map(Value::to_string)
                .collect();
            let edit = if a["edit"].is_null() { "" } else { " +edit" };
            format!("{} [{} {}]{edit}\n", a["title"], a["command"]["command"], args.join(" "))
        })
        .collect()
}

const NOTE: &str = "# Rust releases\n\nWhat changed lat$0ely.\n";

#[tokio::test]
async fn make_live_with_the_heading_drafts_through_the_model() {
    let reply = "```json\n{\"objective\": \"Keep the latest Rust release notes: version, date, highlights.\", \"triggers\": [{\"cron\": \"0 8 * * 1\"}]}\n```";
    let model = MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Text(reply.into())]).await;
    let (text, at) = cursor(NOTE);
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.path().join(".livenote.toml"), config(&model)).unwrap_or_else(|e| panic!("{e}"));
    let files = [("n.md", text.as_str())];
    let mut c = start(root, &files).await;
    let uri = c.open("n.md", &text).await;
    c.diagnostics(&uri, 1).await;
    let actions = actions_at(&mut c, &uri, &text, at).await;
    check(
        &render(&actions),
        expect![[r#"
            "Make live" [null ] +edit
            "Make live: Rust releases" ["livenote.makeLive" {"describe":"Rust releases"}]
        "#]],
    );
    let Some(action) = actions.iter().find(|a| a["title"] == "Make live: Rust releases") else {
        panic!("{actions:?}")
    };
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": action["command"]["command"], "arguments": action["command"]["arguments"]}),
        )
        .await;
    assert!(res.get("error").is_none(), "{res}");
    c.diagnostics(&uri, 2).await;
    check(
        &c.doc(&uri).text,
        expect![[r#"
            ---
            live:
              objective: "Keep the latest Rust release notes: version, date, highlights."
              triggers:
                cronExpr: "0 8 * * 1"
            ---
            # Rust releases

            What changed lately.
        "#]],
    );
    let asked = model.requests();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].run_message().contains("## What the user wants\n\nRust releases"),
        "{}",
        asked[0].run_message()
    );
    c.shutdown().await;
}

#[tokio::test]
async fn an_invalid_draft_is_never_written_the_template_is_with_a_warning() {
    let reply = r#"{"objective": "x", "triggers": [{"cron": "0 25 * * *"}]}"#;
    let model = MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Text(reply.into())]).await;
    let (text, _) = cursor(NOTE);
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.path().join(".livenote.toml"), config(&model)).unwrap_or_else(|e| panic!("{e}"));
    let files = [("n.md", text.as_str())];
    let mut c = start(root, &files).await;
    let uri = c.open("n.md", &text).await;
    c.diagnostics(&uri, 1).await;
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": "livenote.makeLive", "arguments": [uri, {"describe": "keep the latest Rust release notes", "run": false}]}),
        )
        .await;
    assert!(res.get("error").is_none(), "{res}");
    // The warning comes once the edit is in the buffer (waiting for diagnostics first could
    // drop it: the harness skips the notifications it is not waiting for).
    let message = loop {
        let shown = c.next_notification("window/showMessage").await;
        let message = shown["message"].as_str().unwrap_or_default().to_owned();
        if message.contains("made live") {
            break message;
        }
    };
    assert!(
        message.starts_with("livenote: n.md: made live from the template (your sentence as the objective, manual only): the model's draft would give the note errors: "),
        "{message}"
    );
    check(
        &c.doc(&uri).text,
        expect![[r#"
            ---
            live:
              objective: "keep the latest Rust release notes"
            ---
            # Rust releases

            What changed lately.
        "#]],
    );
    c.shutdown().await;
}

#[tokio::test]
async fn set_schedule_presets_replace_the_triggers() {
    // Paused: a scheduler run would write runtime fields meanwhile.
    let fixture = "---\nlive:\n  objective: Keep it.\n  active: false\n  trig$0gers:\n    cronExpr: \"@daily\"\n    eventMatchCriteria: mail\n---\n# N\n";
    let (text, at) = cursor(fixture);
    let mut c = TestClient::start(&[("n.md", text.as_str())], utf16_caps()).await;
    let uri = c.open("n.md", &text).await;
    c.diagnostics(&uri, 1).await;
    let actions = actions_at(&mut c, &uri, &text, at).await;
    let schedules: Vec<Value> = actions
        .iter()
        .filter(|a| a["title"].as_str().is_some_and(|t| t.starts_with("Set schedule")))
        .cloned()
        .collect();
    check(
        &render(&schedules),
        expect![[r#"
            "Set schedule: every hour" [null ] +edit
            "Set schedule: every morning at 8" [null ] +edit
            "Set schedule: weekdays at 9" [null ] +edit
            "Set schedule: once a day between 09:00 and 12:00" [null ] +edit
            "Set schedule: manual only" [null ] +edit
        "#]],
    );
    // From the body, the note's own actions only.
    let body = actions_at(&mut c, &uri, &text, text.len() - 1).await;
    assert!(!render(&body).contains("Set schedule"), "{}", render(&body));
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": "livenote.setSchedule", "arguments": [uri, "weekdays"]}),
        )
        .await;
    assert!(res.get("error").is_none(), "{res}");
    c.diagnostics(&uri, 2).await;
    check(
        &c.doc(&uri).text,
        expect![[r#"
            ---
            live:
              objective: Keep it.
              active: false
              triggers:
                cronExpr: "0 9 * * 1-5"
                eventMatchCriteria: mail
            ---
            # N
        "#]],
    );
    let Some(window) =
        schedules.iter().find(|a| a["title"] == "Set schedule: once a day between 09:00 and 12:00")
    else {
        panic!("{schedules:?}")
    };
    assert!(window["edit"].is_object(), "{window}");
    let bad = c
        .request(
            "workspace/executeCommand",
            json!({"command": "livenote.setSchedule", "arguments": [uri, "sometimes"]}),
        )
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    c.shutdown().await;
}

#[tokio::test]
async fn convert_to_live_note_merges_every_track_fence() {
    let fixture = "# Morning\n\n```tr$0ack\ntrackId: time\ninstruction: Show the time.\nschedule:\n  type: cron\n  expression: \"0 * * * *\"\n```\n\n```track\ntrackId: brief\ninstruction: Morning brief.\nschedule:\n  type: window\n  startTime: \"09:00\"\n  endTime: \"12:00\"\n```\n<!--track-target:brief-->\nbrief here\n<!--/track-target:brief-->\n";
    let (text, at) = cursor(fixture);
    let mut c = TestClient::start(&[("n.md", text.as_str())], utf16_caps()).await;
    let uri = c.open("n.md", &text).await;
    c.diagnostics(&uri, 1).await;
    let actions = actions_at(&mut c, &uri, &text, at).await;
    let Some(convert) = actions.iter().find(|a| a["title"] == "Convert to live note") else {
        panic!("{actions:?}")
    };
    assert_eq!(convert["kind"], "quickfix");
    c.apply_workspace_edit(&convert["edit"]).await;
    c.diagnostics(&uri, 2).await;
    check(
        &c.doc(&uri).text,
        expect![[r#"
            ---
            live:
              objective: |
                Keep each of these current, in its own section of the note, in this order:

                1. time: Show the time.
                2. brief: Morning brief.
              triggers:
                cronExpr: "0 * * * *"
                windows:
                  - startTime: "09:00"
                    endTime: "12:00"
            ---
            # Morning

            brief here
        "#]],
    );
    c.shutdown().await;
}

/// `run: true`: once the block is in the buffer, the note runs once (here with the template,
/// the default provider being a command, not a model).
#[tokio::test]
async fn make_live_with_run_runs_the_note_once() {
    let config = "[agent]\nprovider = \"echo\"\n[providers.echo]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"printf 'Agent wrote this.\\\\n'\"]\ntimeout = \"10s\"\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.path().join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
    let text = "# Greeting\n";
    let mut c = start(root, &[("n.md", text)]).await;
    let uri = c.open("n.md", text).await;
    c.diagnostics(&uri, 1).await;
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": "livenote.makeLive", "arguments": [uri, {"describe": "say hello", "run": true}]}),
        )
        .await;
    assert!(res.get("error").is_none(), "{res}");
    assert_eq!(c.progress("end").await["message"], "Updated: Agent wrote this.");
    let after = c.doc(&uri).text;
    assert!(after.starts_with("---\nlive:\n  objective: \"say hello\"\n"), "{after}");
    assert!(after.ends_with("# Greeting\n\nAgent wrote this.\n"), "{after}");
    c.shutdown().await;
}

/// Issue 32 §5 over the protocol: `livenote.makeLive` with a sentence on a live note shows the
/// model the current block, writes the extended one and says what changed; the draft's
/// `runNow` runs nothing, the editor's `run: true` runs the note once.
#[tokio::test]
async fn make_live_extends_a_live_note_and_only_the_editor_runs_it() {
    let draft = r#"{"objective": "Show the weather in Chicago. Also the pollen count.", "triggers": [{"cron": "0 7 * * *"}], "runNow": true}"#;
    let model = MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::Text(draft.into()),
            ScriptedReply::Text(draft.into()),
            ScriptedReply::Text("Nothing to change yet.".into()),
        ],
    )
    .await;
    // Paused: the scheduler would run the note on its own meanwhile.
    let text = "---\nlive:\n  objective: Show the weather in Chicago.\n  active: false\n  triggers:\n    cronExpr: \"0 7 * * *\"\n---\n# Weather\n\nSunny.\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.path().join(".livenote.toml"), config(&model)).unwrap_or_else(|e| panic!("{e}"));
    let mut c = start(root, &[("n.md", text)]).await;
    let uri = c.open("n.md", text).await;
    c.diagnostics(&uri, 1).await;
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": "livenote.makeLive", "arguments": [uri, {"describe": "also keep an eye on the pollen count", "run": false}]}),
        )
        .await;
    assert!(res.get("error").is_none(), "{res}");
    let message = loop {
        let shown = c.next_notification("window/showMessage").await;
        let message = shown["message"].as_str().unwrap_or_default().to_owned();
        if message.contains("n.md") {
            break message;
        }
    };
    assert_eq!(
        message,
        "livenote: n.md: extended from the model's draft: objective extended, schedule kept (cron \"0 7 * * *\")"
    );
    let asked = model.requests()[0].run_message();
    assert!(
        asked.contains(
            "{\"objective\":\"Show the weather in Chicago.\",\"triggers\":[{\"cron\":\"0 7 * * *\"}]}"
        ),
        "{asked}"
    );
    let after = c.doc(&uri).text;
    assert!(
        after.contains("objective: \"Show the weather in Chicago. Also the pollen count.\"\n"),
        "{after}"
    );
    assert!(after.contains("cronExpr: \"0 7 * * *\"") && !after.contains("lastAttemptAt"), "{after}");
    // The editor's explicit choice runs it; a run the draft had started would have taken this
    // draft's reply (and the note's lock) and left the count at four.
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": "livenote.makeLive", "arguments": [uri, {"describe": "and the pollen count", "run": true}]}),
        )
        .await;
    assert!(res.get("error").is_none(), "{res}");
    c.progress("end").await;
    assert_eq!(model.requests().len(), 3, "two drafts and one run");
    assert!(c.doc(&uri).text.contains("lastRunAt: "), "{}", c.doc(&uri).text);
    c.shutdown().await;
}
