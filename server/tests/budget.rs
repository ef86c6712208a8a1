//! `live.maxChars` and `live.until` through the real binary: a scripted model run is told the
//! budget and the size, an append past the budget is a tool error while the run goes on, a
//! trimming edit of an over-budget note is taken; a `command` provider's longer output fails
//! the run; `livenote check` reports `live/over-budget` and `live/expired`.

mod common;

use std::process::Command;

use common::{Workspace, command_config};
use livenote::model::testing::{Flavor, MockModelServer, RecordedRequest, ScriptedReply};
use serde_json::json;

const KEY: &str = "sk-test-budget";

/// "# Weather\n\nSunny.\n\n## Details\n\nWind 5 km/h.\n": 44 characters.
fn note(max: usize) -> String {
    format!(
        "---\nlive:\n  objective: Keep the weather in Paris current.\n  maxChars: {max}\n---\n# Weather\n\nSunny.\n\n## Details\n\nWind 5 km/h.\n"
    )
}

/// `livenote run n.md` against the scripted Anthropic-style server; the requests it got and
/// the note afterwards.
fn run_model(max: usize, script: Vec<ScriptedReply>) -> (Vec<RecordedRequest>, String) {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let server = runtime.block_on(MockModelServer::start(Flavor::Anthropic, script));
    let config = format!(
        "[providers.m]\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
        server.base_url()
    );
    let ws = Workspace::with_note(&config, &note(max));
    let out = ws
        .livenote(&["run", "n.md"])
        .env("LIVENOTE_TEST_KEY", KEY)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    (server.requests(), ws.note())
}

#[test]
fn an_append_past_the_budget_is_a_tool_error_and_the_run_goes_on() {
    let script = vec![
        ScriptedReply::tool("read_note", json!({})),
        ScriptedReply::tool("append_to_note", json!({"text": "\n## Tomorrow\n\nRain."})),
        ScriptedReply::tool("edit_note", json!({"old_text": "Sunny.", "new_text": "Rain."})),
        ScriptedReply::Text("Rain now.".to_owned()),
    ];
    let (reqs, after) = run_model(50, script);
    assert_eq!(reqs.len(), 4);
    let message = reqs[0].run_message();
    assert!(message.contains("Budget: 44 of 50 characters. The note must stay within it"), "{message}");
    // "\n## Tomorrow\n\nRain.\n" is 20 more: 64, 14 over.
    assert_eq!(
        reqs[2].tool_results(),
        vec![(
            true,
            "over budget by 14; trim older sections: that change would make the note 64 characters, and its budget (maxChars) is 50"
                .to_owned()
        )]
    );
    assert_eq!(reqs[3].tool_results().first().map(|r| r.0), Some(false));
    assert!(after.ends_with("# Weather\n\nRain.\n\n## Details\n\nWind 5 km/h.\n"), "{after}");
    assert!(
        after.contains("lastRunError: null") && after.contains("lastRunSummary: \"Rain now.\""),
        "{after}"
    );
}

#[test]
fn a_note_over_its_budget_may_be_trimmed_but_not_grown() {
    let script = vec![
        ScriptedReply::tool("append_to_note", json!({"text": "More."})),
        ScriptedReply::tool("replace_section", json!({"heading": "## Details", "content": ""})),
        ScriptedReply::Text("Trimmed the details.".to_owned()),
    ];
    let (reqs, after) = run_model(30, script);
    let message = reqs[0].run_message();
    assert!(
        message.contains("Budget: 44 of 30 characters (over budget by 14; trim older sections)."),
        "{message}"
    );
    let refused = reqs[1].tool_results();
    assert!(
        refused[0].0 && refused[0].1.starts_with("over budget by 20; trim older sections"),
        "{refused:?}"
    );
    assert!(refused[0].1.ends_with("(it is 44 now: only changes that shrink it are taken)"), "{refused:?}");
    assert_eq!(reqs[2].tool_results().first().map(|r| r.0), Some(false));
    // Still over (30 characters of body are allowed), but smaller, and the run succeeded.
    assert!(after.ends_with("# Weather\n\nSunny.\n\n## Details\n"), "{after}");
    assert!(after.contains("lastRunError: null"), "{after}");
}

#[test]
fn a_command_output_past_the_budget_fails_the_run_with_the_reason() {
    // "# Weather\n" (10) on top of 41 characters of output: 51, 1 over 50.
    let ws = Workspace::with_note(&command_config("printf '%041d' 0"), &note(50));
    let out = ws.livenote(&["run", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let text = ws.note();
    assert!(
        text.contains(
            "lastRunError: \"output of 51 characters is over budget by 1; trim older sections (maxChars is 50)\""
        ),
        "{text}"
    );
    // The body is as it was.
    assert!(text.ends_with("# Weather\n\nSunny.\n\n## Details\n\nWind 5 km/h.\n"), "{text}");
    // Within the budget, the same program's output is taken.
    let ws = Workspace::with_note(&command_config("printf '%040d' 0"), &note(50));
    let out = ws.livenote(&["run", "n.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(ws.note().contains(&"0".repeat(40)), "{}", ws.note());
}

#[test]
fn check_reports_over_budget_and_expired() {
    let dir = common::tempdir();
    common::write(&dir.path().join("long.md"), &note(30));
    common::write(
        &dir.path().join("old.md"),
        "---\nlive:\n  objective: Conference notes\n  until: 2020-02-25\n---\n# Conf\n",
    );
    common::write(
        &dir.path().join("later.md"),
        "---\nlive:\n  objective: Conference notes\n  until: 2999-02-25\n---\n# Conf\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["check", "."])
        .current_dir(dir.path())
        .env("LIVENOTE_DATA_DIR", dir.path().join(".data"))
        .env("LIVENOTE_CONFIG_DIR", dir.path().join(".data"))
        .env("TZ", "UTC")
        .env_remove("LIVENOTE_LOG")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    // Neither is an error.
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    expect_test::expect![[r#"
        long.md:4:13: warning live/over-budget the body is 44 characters, over its budget of 30 by 14: runs may only shrink it until it fits; trim older sections or raise `maxChars`
        old.md:4:10: info live/expired this note expired: `until` passed on Tue 25 Feb 2020; nothing fires on schedule or on events (a run by hand still works)
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stdout));
}
