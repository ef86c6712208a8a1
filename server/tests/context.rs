//! Issue 16's acceptance, all at once: what the agent knows, through the real `livenote run`
//! against the scripted model server. Two runs of one note in a trusted folder: its standing
//! instructions (one cut at the budget), the skill it preloads, the catalog of the others, its
//! memory, its budget; the first run saves a memory entry and is refused an append that would
//! pass the budget, the second run's message shows the entry. The token totals `history` gives
//! equal what the server reported.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::write;
use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::{Value, json};

const KEY: &str = "sk-test-context";

fn livenote(root: &Path, user: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(args)
        .current_dir(root)
        .env("LIVENOTE_TEST_KEY", KEY)
        .env("LIVENOTE_DATA_DIR", user.join("data"))
        .env("LIVENOTE_CONFIG_DIR", user)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_run_knows_its_instructions_skills_memory_and_budget_and_says_what_it_cost() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let user = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (root, user) = (dir.path(), user.path());
    // 13 + 1 + 40 + 1 = 55 characters of body, against a budget of 80.
    let body = format!("# Paris week\n\n{}\n", "x".repeat(40));
    write(
        &root.join("week.md"),
        &format!(
            "---\nlive:\n  objective: A digest of the week in Paris.\n  skills: [weekly-digest]\n  maxChars: 80\n---\n{body}"
        ),
    );
    write(&root.join(".livenote.toml"), "[agent]\ninstructions_max_chars = 100\n");
    write(&root.join("AGENTS.md"), &format!("Write in French. {}END", "y".repeat(100)));
    write(
        &root.join("skills/digest.md"),
        "---\nname: weekly-digest\ndescription: Sum up a week.\n---\nGroup by day, newest first.\n",
    );
    write(
        &root.join("skills/brief.md"),
        "---\nname: brief\ndescription: Keep it to three lines.\n---\nThree lines.\n",
    );

    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let script = vec![
        // Run 1: save a fact, break a quota, try to pass the budget, then finish.
        ScriptedReply::tool(
            "memory_save",
            json!({"key": "sources", "content": "parisinfo.com had the events", "pinned": true}),
        )
        .with_usage(1000, 20, 600),
        ScriptedReply::tool("memory_save", json!({"key": "Bad Key", "content": "x"}))
            .with_usage(1100, 10, 900),
        ScriptedReply::tool("append_to_note", json!({"text": "y".repeat(40)})).with_usage(1200, 30, 1000),
        ScriptedReply::Text("Nothing new this week.".to_owned()).with_usage(1300, 8, 1100),
        // Run 2: nothing to do; its message is what counts.
        ScriptedReply::Text("Still nothing new.".to_owned()).with_usage(900, 5, 0),
    ];
    let server = runtime.block_on(MockModelServer::start(Flavor::OpenAi, script));
    write(
        &user.join("config.toml"),
        &format!(
            "[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
            server.base_url()
        ),
    );
    let trusted = livenote(root, user, &["trust", "."]);
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));

    let first = livenote(root, user, &["run", "week.md"]);
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    let (system, message) = (reqs[0].system_prompt(), reqs[0].run_message());
    // Instructions: after livenote's own prompt, cut at the budget with the marker.
    let cut = format!(
        "\n\n## AGENTS.md\n\nWrite in French. {}\n\n[cut: AGENTS.md has 120 characters; only the first 100 are used ([agent] instructions_max_chars)]",
        "y".repeat(83)
    );
    assert!(system.contains(&cut) && !system.contains("END"), "{system}");
    // The preloaded skill in full, the other skills as a catalog, the memory, the budget.
    assert!(message.contains("### Skill: weekly-digest\n\nGroup by day, newest first."), "{message}");
    assert!(message.contains("- `brief`: Keep it to three lines."), "{message}");
    assert!(message.contains("- `writing-live-notes`: "), "{message}");
    assert!(message.contains("## Memory\n\nYour memory for this note is empty."), "{message}");
    assert!(message.contains("Budget: 55 of 80 characters."), "{message}");
    // The quota violation and the over-budget append are tool errors; the run goes on.
    let results: Vec<(bool, String)> = reqs[1..].iter().flat_map(|r| r.tool_results()).collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(!results[0].0, "{results:?}");
    assert!(results[1].0 && results[1].1.contains("Bad Key"), "{results:?}");
    assert!(
        results[2].0 && results[2].1.starts_with("Error: over budget by 16; trim older sections"),
        "{results:?}"
    );
    let text = std::fs::read_to_string(root.join("week.md")).unwrap_or_default();
    assert!(text.ends_with(&body), "the refused append left the body as it was: {text}");
    assert!(text.contains("lastRunSummary: \"Nothing new this week.\""), "{text}");

    // Run 2's message carries what run 1 saved (pinned: in full too).
    let second = livenote(root, user, &["run", "week.md"]);
    assert_eq!(second.status.code(), Some(0), "{}", String::from_utf8_lossy(&second.stderr));
    let reqs = server.requests();
    let message = reqs[4].run_message();
    assert!(message.contains("| `sources` (pinned) | "), "{message}");
    assert!(message.contains("### `sources` (pinned)\n\nparisinfo.com had the events"), "{message}");
    let memory = livenote(root, user, &["memory", "week.md", "show", "sources"]);
    let shown = String::from_utf8_lossy(&memory.stdout).into_owned();
    assert!(
        shown.starts_with("sources (updated ") && shown.contains(", pinned)\n\nparisinfo.com had the events"),
        "{shown}"
    );

    // What each run cost: the totals of the usage the server reported.
    let history = livenote(root, user, &["history", "week.md", "--format", "json"]);
    let runs: Value = serde_json::from_slice(&history.stdout).unwrap_or_else(|e| panic!("{e}"));
    let runs = runs.as_array().cloned().unwrap_or_default();
    assert_eq!(runs.len(), 2, "{runs:?}");
    // Newest first.
    assert_eq!(runs[0]["tokens"], json!({"input": 900, "output": 5, "cached": 0}));
    assert_eq!(runs[1]["tokens"], json!({"input": 4600, "output": 68, "cached": 3600}));
    assert_eq!(runs[1]["modelCalls"], json!(4));
    assert_eq!(runs[1]["toolCalls"], json!({"append_to_note": 1, "memory_save": 2}));
}
