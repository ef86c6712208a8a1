//! Issue 25 §1 through the real binary: `livenote make-live` with explicit triggers, and with
//! `--describe`, where the scripted model server drafts the block; a draft that would be
//! invalid is never written (the template is, saying why), and so without a model provider.

#![cfg(unix)]

mod common;

use std::process::Output;

use expect_test::expect;
use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};

use common::{Workspace, tempdir, write};

fn model_config(model: &MockModelServer) -> String {
    format!(
        "[agent]\nprovider = \"m\"\n\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n",
        model.base_url()
    )
}

fn make_live(ws: &Workspace, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["make-live"];
    all.extend_from_slice(args);
    let out: Output = ws
        .livenote(&all)
        .env("LIVENOTE_LOG", "warn")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const NOTE: &str = "---\ntags: [rust]\n---\n# Rust releases\n\nWhat changed in the latest releases.\n";

#[test]
fn describe_writes_the_models_draft_in_one_edit() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let reply = "Here you go:\n```json\n{\"objective\": \"Keep the latest Rust release notes: version, date and the three biggest changes.\", \
                 \"triggers\": [{\"cron\": \"0 8 * * 1\"}], \"runNow\": false}\n```";
    let model =
        runtime.block_on(MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Text(reply.into())]));
    let ws = Workspace::with_note(&model_config(&model), NOTE);
    let (code, out, err) =
        make_live(&ws, &["n.md", "--describe", "keep the latest Rust release notes, every Monday morning"]);
    assert_eq!(code, 0, "{err}");
    expect![[r#"
        made n.md live from the model's draft: Keep the latest Rust release notes: version, date and the three biggest changes. (cron "0 8 * * 1")
    "#]]
    .assert_eq(&out);
    expect![[r#"
        ---
        tags: [rust]
        live:
          objective: "Keep the latest Rust release notes: version, date and the three biggest changes."
          triggers:
            cronExpr: "0 8 * * 1"
        ---
        # Rust releases

        What changed in the latest releases.
    "#]]
    .assert_eq(&ws.note());
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let asked = requests[0].run_message();
    assert!(asked.contains("keep the latest Rust release notes, every Monday morning"), "{asked}");
    assert!(
        asked.contains("Title: Rust releases") && asked.contains("What changed in the latest releases."),
        "{asked}"
    );
    assert!(requests[0].system_prompt().contains("\"triggers\""), "{}", requests[0].system_prompt());
}

#[test]
fn an_invalid_draft_is_never_written_the_template_is_and_says_why() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let reply = r#"{"objective": "Keep it.", "triggers": [{"cron": "0 25 * * *"}, {"window": {"start": "12:00", "end": "09:00"}}]}"#;
    let model =
        runtime.block_on(MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Text(reply.into())]));
    let ws = Workspace::with_note(&model_config(&model), NOTE);
    let (code, out, err) = make_live(&ws, &["n.md", "--describe", "keep the latest Rust release notes"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("livenote: warning: n.md: the template was written, not a draft: the model's draft would give the note errors: "),
        "{err}"
    );
    assert!(err.contains("25"), "the validator's reason: {err}");
    assert_eq!(out, "made n.md live from the template: your sentence as the objective, manual only\n");
    expect![[r#"
        ---
        tags: [rust]
        live:
          objective: "keep the latest Rust release notes"
        ---
        # Rust releases

        What changed in the latest releases.
    "#]]
    .assert_eq(&ws.note());
}

#[test]
fn without_a_model_provider_the_template_is_written() {
    let ws = Workspace::with_note("", "# Groceries\n");
    let (code, out, err) = make_live(&ws, &["n.md", "--describe", "what we need this week"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("the template was written, not a draft: "), "{err}");
    assert_eq!(out, "made n.md live from the template: your sentence as the objective, manual only\n");
    assert_eq!(ws.note(), "---\nlive:\n  objective: \"what we need this week\"\n---\n# Groceries\n");
}

#[test]
fn explicit_triggers_create_a_note_and_invalid_ones_write_nothing() {
    let ws = Workspace::in_dir(tempdir(), "");
    let (code, out, err) = make_live(
        &ws,
        &[
            "notes/standup.md",
            "--objective",
            "Today's standup agenda.",
            "--cron",
            "0 9 * * 1-5",
            "--window",
            "09:00-12:00",
            "--event",
            "Calendar changes",
        ],
    );
    assert_eq!(code, 2, "the folder notes/ does not exist: {err}");
    std::fs::create_dir(ws.root.join("notes")).unwrap_or_else(|e| panic!("{e}"));
    let (code, out2, err2) = make_live(
        &ws,
        &[
            "notes/standup.md",
            "--objective",
            "Today's standup agenda.",
            "--cron",
            "0 9 * * 1-5",
            "--window",
            "09:00-12:00",
            "--event",
            "Calendar changes",
        ],
    );
    assert_eq!(code, 0, "{out}{err}{err2}");
    assert!(out2.starts_with("made notes/standup.md live (created)\n"), "{out2}");
    let text = std::fs::read_to_string(ws.root.join("notes/standup.md")).unwrap_or_default();
    expect![[r#"
        ---
        live:
          objective: "Today's standup agenda."
          triggers:
            cronExpr: "0 9 * * 1-5"
            windows:
              - startTime: "09:00"
                endTime: "12:00"
            eventMatchCriteria: "Calendar changes"
        ---
        # standup
    "#]]
    .assert_eq(&text);
    let (code, _, err) = make_live(&ws, &["notes/standup.md", "--objective", "x", "--cron", "0 25 * * *"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("refused, nothing was written"), "{err}");
    assert_eq!(std::fs::read_to_string(ws.root.join("notes/standup.md")).unwrap_or_default(), text);
    let (code, _, err) = make_live(&ws, &["notes/standup.md", "--objective", "x", "--window", "0900"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("HH:MM-HH:MM"), "{err}");
}

/// Issue 32 §5: a draft never starts a run. A reply saying `"runNow": true` used to run the note
/// without `--run`; only the user's `--run` runs it.
#[test]
fn a_draft_never_starts_a_run_only_the_users_run_does() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let reply = r#"{"objective": "A haiku about autumn.", "triggers": [], "runNow": true}"#;
    let model = runtime.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::Text(reply.into()),
            ScriptedReply::Text(reply.into()),
            ScriptedReply::Text("Nothing to change yet.".into()),
        ],
    ));
    let dir = tempdir();
    write(&dir.path().join("n.md"), "# Autumn\n");
    let ws = Workspace::in_dir(dir, &model_config(&model));
    let (code, out, err) = make_live(&ws, &["n.md", "--describe", "a haiku about autumn, write it now"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out, "made n.md live from the model's draft: A haiku about autumn. (manual only)\n");
    assert_eq!(model.requests().len(), 1, "the draft only, no run: {out}{err}");
    assert!(!ws.note().contains("lastRunAt") && !ws.note().contains("lastAttemptAt"), "{}", ws.note());
    // The user's `--run` runs it, once.
    let (code, out, err) = make_live(&ws, &["n.md", "--describe", "a haiku about autumn", "--run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(model.requests().len(), 3, "the draft, then the run: {out}{err}");
    assert!(ws.note().contains("lastRunAt: "), "{}", ws.note());
}

const WEATHER: &str = "---\nlive:\n  objective: Show the weather in Chicago.\n  triggers:\n    cronExpr: \"0 7 * * *\"\n---\n# Weather\n\nSunny.\n";

/// Issue 32 §5: on a live note, `--describe` without a model adds the sentence to the
/// objective and keeps the cron, and says so; it used to write the sentence as the whole
/// objective and say "manual only" while the cron stayed.
#[test]
fn describe_on_a_live_note_without_a_model_extends_the_objective() {
    let ws = Workspace::with_note("", WEATHER);
    let (code, out, err) = make_live(&ws, &["n.md", "--describe", "also keep an eye on the pollen count"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("livenote: warning: n.md: your sentence was added to the objective, not a draft: "),
        "{err}"
    );
    expect![[r#"
        extended n.md from your sentence: objective extended, schedule kept (cron "0 7 * * *")
          objective: Show the weather in Chicago. also keep an eye on the pollen count
    "#]]
    .assert_eq(&out);
    expect![[r#"
        ---
        live:
          objective: "Show the weather in Chicago. also keep an eye on the pollen count"
          triggers:
            cronExpr: "0 7 * * *"
        ---
        # Weather

        Sunny.
    "#]]
    .assert_eq(&ws.note());
}

/// Issue 32 §5: with a model, the drafting request shows the note's current block and asks for
/// it extended; the draft keeps the objective's words and the output says what changed. A
/// draft that drops the objective is not written: the sentence is added instead.
#[test]
fn describe_on_a_live_note_drafts_the_extended_block() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let extended = r#"{"objective": "Show the weather in Chicago, and keep an eye on the pollen count: today's level.", "triggers": [{"cron": "0 7 * * *"}, {"event": "Pollen alerts"}]}"#;
    let replaced = r#"{"objective": "Track the pollen count.", "triggers": []}"#;
    let model = runtime.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![ScriptedReply::Text(extended.into()), ScriptedReply::Text(replaced.into())],
    ));
    let ws = Workspace::with_note(&model_config(&model), WEATHER);
    let (code, out, err) = make_live(&ws, &["n.md", "--describe", "also keep an eye on the pollen count"]);
    assert_eq!(code, 0, "{err}");
    expect![[r#"
        extended n.md from the model's draft: objective extended, schedule changed (was cron "0 7 * * *", now cron "0 7 * * *", events "Pollen alerts")
          objective: Show the weather in Chicago, and keep an eye on the pollen count: today's level.
    "#]]
    .assert_eq(&out);
    let asked = model.requests()[0].run_message();
    assert!(
        asked.contains("## The note's live block now (extend it)\n\n{\"objective\":\"Show the weather in Chicago.\",\"triggers\":[{\"cron\":\"0 7 * * *\"}]}"),
        "{asked}"
    );
    assert!(model.requests()[0].system_prompt().contains("Extend them, never replace them"));
    let after = ws.note();
    assert!(
        after.contains("eventMatchCriteria: \"Pollen alerts\"") && after.contains("0 7 * * *"),
        "{after}"
    );

    let (code, out, err) = make_live(&ws, &["n.md", "--describe", "and the UV index"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("the model's draft leaves out words of the note's objective"), "{err}");
    assert!(out.starts_with("extended n.md from your sentence: objective extended, schedule kept (cron \"0 7 * * *\", events \"Pollen alerts\")\n"), "{out}");
    assert!(
        ws.note().contains("objective: \"Show the weather in Chicago, and keep an eye on the pollen count: today's level. and the UV index\""),
        "{}",
        ws.note()
    );
}

/// Issue 32 §5 over MCP: `make_live` with `describe` extends a live note as the command line
/// does and answers what changed; a draft's `runNow` runs nothing, the caller's `run` does.
#[test]
fn mcp_make_live_extends_a_live_note_and_runs_only_when_asked() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let extended = r#"{"objective": "Show the weather in Chicago. Also the pollen count.", "triggers": [{"cron": "0 7 * * *"}], "runNow": true}"#;
    let model = runtime.block_on(MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::Text(extended.into()),
            ScriptedReply::Text(extended.into()),
            ScriptedReply::Text("Nothing to change yet.".into()),
        ],
    ));
    let ws = Workspace::with_note(&model_config(&model), WEATHER);
    let mut mcp = common::Mcp::start(&ws.root, ws.data.path());
    let (error, text) = mcp.call(
        "make_live",
        serde_json::json!({"path": "n.md", "describe": "also keep an eye on the pollen count"}),
    );
    assert!(!error, "{text}");
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(
        answer["draft"]["changes"], "objective extended, schedule kept (cron \"0 7 * * *\")",
        "{answer}"
    );
    assert_eq!(answer["draft"]["wasLive"], true, "{answer}");
    assert!(answer.get("run").is_none(), "{answer}");
    assert_eq!(model.requests().len(), 1, "the draft only: {answer}");
    assert!(model.requests()[0].run_message().contains("{\"objective\":\"Show the weather in Chicago.\""));
    assert!(
        ws.note().contains("objective: \"Show the weather in Chicago. Also the pollen count.\""),
        "{}",
        ws.note()
    );
    assert!(!ws.note().contains("lastAttemptAt"), "{}", ws.note());
    // The caller's `run` runs the note once.
    let (error, text) = mcp.call(
        "make_live",
        serde_json::json!({"path": "n.md", "describe": "also the pollen count", "run": true}),
    );
    assert!(!error, "{text}");
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(answer["run"]["outcome"], "done", "{answer}");
    assert_eq!(model.requests().len(), 3, "{answer}");
    assert!(ws.note().contains("lastRunAt: "), "{}", ws.note());
}

fn new(ws: &Workspace, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["new"];
    all.extend_from_slice(args);
    let out = ws.livenote(&all).env("LIVENOTE_LOG", "warn").output().unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn new_writes_a_built_in_template_and_never_over_a_file() {
    let ws = Workspace::in_dir(tempdir(), "");
    let (code, out, err) = new(&ws, &["daily"]);
    // What `new` says of the note is what `check` says: here the information that no source
    // sends the events the daily page waits for.
    let check = ws.livenote(&["check", "Today.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    let check = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(check.starts_with("Today.md:2:1: info live/no-event-source "), "{check}");
    assert_eq!(
        (code, out),
        (0, format!("wrote Today.md from the built-in `daily` template\n{check}")),
        "{err}"
    );
    let today = std::fs::read_to_string(ws.root.join("Today.md")).unwrap_or_default();
    assert!(today.starts_with("---\nlive:\n  objective: |\n    Today's page"), "{today}");
    assert!(
        today.contains("      - startTime: \"12:00\"\n") && today.contains("    eventMatchCriteria: "),
        "{today}"
    );
    assert!(today.ends_with("---\n# Today\n"), "{today}");
    let list = ws.livenote(&["list", "--format", "json"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("\"path\": \"Today.md\""),
        "{}",
        String::from_utf8_lossy(&list.stdout)
    );
    // Again: refused, the note as it was.
    std::fs::write(ws.root.join("Today.md"), "mine\n").unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = new(&ws, &["daily"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(err, "livenote: new: Today.md exists; nothing was written (give another PATH)\n");
    assert_eq!(std::fs::read_to_string(ws.root.join("Today.md")).unwrap_or_default(), "mine\n");
    std::fs::create_dir(ws.root.join("notes")).unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = new(&ws, &["digest", "notes/rust.md"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "wrote notes/rust.md from the built-in `digest` template\n"),
        "{err}"
    );
    let rust = std::fs::read_to_string(ws.root.join("notes/rust.md")).unwrap_or_default();
    assert!(rust.contains("    cronExpr: \"0 8 * * 1\"\n") && rust.ends_with("# rust\n"), "{rust}");
    let (code, _, err) = new(&ws, &["nope"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "livenote: new: no template `nope`: built in: daily, digest, tracker; a workspace adds its own as templates/NAME.md\n"
    );
    let (code, _, err) = new(&ws, &["../x"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_workspace_template_wins_and_its_note_is_checked() {
    let ws = Workspace::in_dir(tempdir(), "");
    write(
        &ws.root.join("templates/daily.md"),
        "---\nlive:\n  objective: Our own {{title}}.\n---\n# {{title}}\n",
    );
    write(
        &ws.root.join("templates/standup.md"),
        "---\nlive:\n  objective: Standup.\n  triggers:\n    cronExpr: \"0 25 * * *\"\n---\n# {{title}}\n",
    );
    let (code, out, err) = new(&ws, &["daily", "day.md"]);
    assert_eq!((code, out.as_str()), (0, "wrote day.md from templates/daily.md\n"), "{err}");
    assert_eq!(
        std::fs::read_to_string(ws.root.join("day.md")).unwrap_or_default(),
        "---\nlive:\n  objective: Our own day.\n---\n# day\n"
    );
    let (code, out, err) = new(&ws, &["standup"]);
    assert_eq!(code, 1, "{err}");
    expect![[r#"
        wrote standup.md from templates/standup.md
        standup.md:5:15: error live/invalid-cron invalid cron expression: hour field `25`: out of range (allowed 0-23)
    "#]]
    .assert_eq(&out);
    assert!(ws.root.join("standup.md").exists(), "written, to be fixed in place");
}
