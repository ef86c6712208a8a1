//! Model-driven runs through the real `livenote run`, against a scripted model server on
//! 127.0.0.1 that speaks each wire format: the agent reads the note, patches it twice and
//! finishes; the body and runtime fields are exact; the API key never reaches a file or a log.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::write;
use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::json;

const KEY: &str = "sk-test-SECRET-4242";
const NOTE: &str = "---\ntitle: Weather # mine\nlive:\n  objective: Keep the weather in Paris current.\n---\n# Weather\n\nSunny.\n\n## Details\n\nWind 5 km/h.\n";

fn script() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::ToolCalls(vec![("read_note".to_owned(), json!({}))]),
        ScriptedReply::ToolCalls(vec![(
            "edit_note".to_owned(),
            json!({"old_text": "Sunny.", "new_text": "Rain all afternoon in Paris."}),
        )]),
        ScriptedReply::ToolCalls(vec![(
            "edit_note".to_owned(),
            json!({"old_text": "Wind 5 km/h.", "new_text": "Wind 30 km/h from the west."}),
        )]),
        ScriptedReply::Text("Rain and wind for Paris this afternoon.".to_owned()),
    ]
}

fn run_with(flavor: Flavor, kind: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let server = runtime.block_on(MockModelServer::start(flavor, script()));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let config = format!(
        "[providers.m]\nkind = \"{kind}\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
        server.base_url()
    );
    std::fs::write(dir.path().join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("weather.md"), NOTE).unwrap_or_else(|e| panic!("{e}"));
    // The provider is the folder's: its config counts once the user trusts the folder.
    let trusted = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["trust", "."])
        .current_dir(dir.path())
        .env("LIVENOTE_DATA_DIR", dir.path().join(".data"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["run", "weather.md"])
        .current_dir(dir.path())
        .env("LIVENOTE_TEST_KEY", KEY)
        .env("LIVENOTE_DATA_DIR", dir.path().join(".data"))
        .env("LIVENOTE_CONFIG_DIR", dir.path().join(".data"))
        .env("LIVENOTE_LOG", "debug")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = std::fs::read_to_string(dir.path().join("weather.md")).unwrap_or_default();
    assert!(
        text.ends_with(
            "# Weather\n\nRain all afternoon in Paris.\n\n## Details\n\nWind 30 km/h from the west.\n"
        ),
        "{text}"
    );
    assert!(
        text.starts_with(
            "---\ntitle: Weather # mine\nlive:\n  objective: Keep the weather in Paris current.\n"
        )
    );
    assert!(text.contains("lastRunSummary: \"Rain and wind for Paris this afternoon.\""), "{text}");
    assert!(text.contains("lastRunError: null"), "{text}");
    // The model saw the tools and the key went only into the request header.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    assert!(reqs[0].body.to_string().contains("edit_note"));
    // No key in any file livenote wrote, nor in its output.
    assert!(!stderr.contains(KEY) && !String::from_utf8_lossy(&out.stdout).contains(KEY));
    for entry in walk(dir.path()) {
        let content = std::fs::read(&entry).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&content).contains(KEY), "key leaked into {}", entry.display());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

#[test]
fn openai_agent_run_patches_the_note() {
    run_with(Flavor::OpenAi, "openai");
}

#[test]
fn anthropic_agent_run_patches_the_note() {
    run_with(Flavor::Anthropic, "anthropic");
}

/// With no configuration and no key in the environment, a run says how to configure one.
#[test]
fn no_provider_says_how_to_configure_one() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("n.md"), "---\nlive:\n  objective: x\n---\n# N\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["run", "n.md"])
        .current_dir(dir.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("LIVENOTE_DATA_DIR", dir.path().join(".data"))
        .env("LIVENOTE_CONFIG_DIR", dir.path().join(".data"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(dir.path().join("n.md")).unwrap_or_default();
    assert!(text.contains("lastRunError: \"no provider configured"), "{text}");
    assert!(text.contains(".livenote.toml") && text.contains("OPENAI_API_KEY"), "{text}");
}

/// The user's provider `m` at the scripted model `server`, in the user's folder `user` (so
/// that an untrusted folder still runs).
fn use_model(user: &Path, server: &MockModelServer) {
    let config = format!(
        "[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
        server.base_url()
    );
    write(&user.join("config.toml"), &config);
}

/// `livenote ARGS` in `root`, with `user` as the user's config and data folder.
fn livenote_in(root: &Path, user: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(args)
        .current_dir(root)
        .env("LIVENOTE_TEST_KEY", KEY)
        .env("LIVENOTE_DATA_DIR", user.join("data"))
        .env("LIVENOTE_CONFIG_DIR", user)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `livenote trust .` in `root`, with the trust store of `user`.
fn trust(root: &Path, user: &Path) {
    let trusted = livenote_in(root, user, &["trust", "."]);
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
}

/// `livenote run weather.md` in `root`, which must succeed.
fn run_weather(root: &Path, user: &Path) {
    let out = livenote_in(root, user, &["run", "weather.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Every run transcript of `root`, one after the other.
fn transcripts(root: &Path) -> String {
    let mut transcript = String::new();
    for e in std::fs::read_dir(root.join(".livenote/runs")).into_iter().flatten().flatten() {
        transcript.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
    }
    transcript
}

/// `livenote run` in `root` with the scripted model, the user's folder `user`, and the folder
/// trusted or not; returns the system prompt the model got and the run's transcript.
fn run_with_instructions(root: &Path, user: &Path, trust_it: bool) -> (String, String) {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let script = vec![ScriptedReply::Text("Nothing to change.".to_owned())];
    let server = runtime.block_on(MockModelServer::start(Flavor::OpenAi, script));
    use_model(user, &server);
    if trust_it {
        trust(root, user);
    }
    run_weather(root, user);
    let reqs = server.requests();
    assert_eq!(reqs[0].body["messages"][0]["role"], "system");
    (reqs[0].system_prompt(), transcripts(root))
}

#[test]
fn standing_instructions_follow_the_system_prompt_within_their_budget() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let user = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    write(&root.join("weather.md"), NOTE);
    write(
        &root.join(".livenote.toml"),
        "[agent]\ninstructions = [\"notes/STYLE.md\", \"notes/LONG.md\"]\ninstructions_max_chars = 100\n",
    );
    write(&root.join("AGENTS.md"), "Write in French.\n");
    write(&root.join("notes/STYLE.md"), "Short lines, no adjectives.\n");
    write(&root.join("notes/LONG.md"), &format!("{}TAIL", "x".repeat(120)));
    write(&user.path().join("instructions.md"), "Prefer primary sources.\n");

    let (system, transcript) = run_with_instructions(root, user.path(), true);
    let own = system.find("You keep one markdown note up to date.").unwrap_or(usize::MAX);
    let heading = system.find("\n\n## AGENTS.md\n\nWrite in French.").unwrap_or_else(|| panic!("{system}"));
    assert!(own < heading, "livenote's prompt comes first: {system}");
    assert!(system.contains("livenote's own rules take precedence"), "{system}");
    assert!(system.contains("\n\n## notes/STYLE.md\n\nShort lines, no adjectives."), "{system}");
    let cut = format!(
        "\n\n## notes/LONG.md\n\n{}\n\n[cut: notes/LONG.md has 124 characters; only the first 100 are used ([agent] instructions_max_chars)]",
        "x".repeat(100)
    );
    assert!(system.contains(&cut) && !system.contains("TAIL"), "{system}");
    assert!(system.ends_with("instructions.md\n\nPrefer primary sources."), "{system}");
    assert!(transcript.contains("[cut: notes/LONG.md has 124 characters"), "{transcript}");

    // Untrusted: the folder's files are not sent (its config is not used either); the user's is.
    let again = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(&again.path().join("weather.md"), NOTE);
    write(&again.path().join("AGENTS.md"), "Write in French.\n");
    let (system, _) = run_with_instructions(again.path(), user.path(), false);
    assert!(!system.contains("AGENTS.md") && !system.contains("French"), "{system}");
    assert!(system.contains("Prefer primary sources."), "{system}");
}

/// A note that preloads a skill: the run message carries its guidance under a heading and
/// every other skill in one catalog line; `load_skill` answers with a listed skill's guidance,
/// and an unknown name with the closest ones, and the run still succeeds.
#[test]
fn skills_are_preloaded_listed_and_loaded_on_demand() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let user = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    write(
        &root.join("weather.md"),
        &NOTE.replace("Paris current.\n", "Paris current.\n  skills: [weekly-digest, nosuch]\n"),
    );
    write(
        &root.join("skills/digest.md"),
        "---\nname: weekly-digest\ndescription: Sum up a week.\n---\n# Digest\n\nGroup by day; newest first.\n",
    );
    write(
        &root.join("skills/brief/SKILL.md"),
        "---\nname: brief\ndescription: Keep it to three lines.\n---\nThree lines at most.\n",
    );
    write(
        &user.path().join("skills/tone.md"),
        "---\nname: tone\ndescription: A friendly tone.\n---\nBe kind.\n",
    );

    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let script = vec![
        ScriptedReply::ToolCalls(vec![("load_skill".to_owned(), json!({"name": "brief"}))]),
        ScriptedReply::ToolCalls(vec![("load_skill".to_owned(), json!({"name": "brif"}))]),
        ScriptedReply::Text("Nothing to change.".to_owned()),
    ];
    let server = runtime.block_on(MockModelServer::start(Flavor::OpenAi, script));
    use_model(user.path(), &server);
    trust(root, user.path());
    run_weather(root, user.path());

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let message = reqs[0].run_message();
    assert!(
        message.contains("**Skills for this note** (follow their guidance):\n\n### Skill: weekly-digest\n\n# Digest\n\nGroup by day; newest first.\n"),
        "{message}"
    );
    let catalog = "**Other skills** (call load_skill with a name to read one when it would help):\n- `brief`: Keep it to three lines.\n- `tone`: A friendly tone.\n- `writing-live-notes`: How to write a good live note";
    assert!(message.contains(catalog), "{message}");
    assert!(!message.contains("- `weekly-digest`"), "a preloaded skill is not in the catalog: {message}");
    let tools: Vec<&str> = reqs[0].body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"load_skill"), "{tools:?}");
    let last_tool_result = |i: usize| -> String {
        let msgs = reqs[i].body["messages"].as_array().cloned().unwrap_or_default();
        let last = msgs.last().cloned().unwrap_or_default();
        assert_eq!(last["role"], "tool", "{last}");
        last["content"].as_str().unwrap_or_default().to_owned()
    };
    assert_eq!(last_tool_result(1), "# Skill: brief\n\nKeep it to three lines.\n\nThree lines at most.");
    let unknown = last_tool_result(2);
    // Tool errors reach OpenAI-style models prefixed with `Error: `.
    assert!(unknown.starts_with("Error: no skill named `brif`; the closest: `brief`"), "{unknown}");
    let text = std::fs::read_to_string(root.join("weather.md")).unwrap_or_default();
    assert!(text.contains("lastRunSummary: \"Nothing to change.\""), "{text}");
    let transcript = transcripts(root);
    assert!(transcript.contains("preloaded: weekly-digest"), "{transcript}");
    assert!(transcript.contains("not preloaded: no skill named `nosuch`"), "{transcript}");
}

/// In a folder that is not trusted, its skills do not reach the model: a note listing one runs
/// without it (the transcript says why), and the catalog holds only the user's and livenote's.
#[test]
fn an_untrusted_folders_skills_are_not_sent() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let user = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    write(
        &root.join("weather.md"),
        &NOTE.replace("Paris current.\n", "Paris current.\n  skills: [weekly-digest]\n"),
    );
    write(
        &root.join("skills/digest.md"),
        "---\nname: weekly-digest\ndescription: Sum up a week.\n---\nSECRET STEPS\n",
    );
    write(
        &user.path().join("skills/tone.md"),
        "---\nname: tone\ndescription: A friendly tone.\n---\nBe kind.\n",
    );
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let server = runtime
        .block_on(MockModelServer::start(Flavor::OpenAi, vec![ScriptedReply::Text("Done.".to_owned())]));
    use_model(user.path(), &server);
    run_weather(root, user.path());
    let reqs = server.requests();
    let message = reqs[0].run_message();
    assert!(!message.contains("SECRET") && !message.contains("weekly-digest"), "{message}");
    assert!(!message.contains("**Skills for this note**"), "{message}");
    assert!(message.contains("- `tone`: A friendly tone.\n- `writing-live-notes`: "), "{message}");
    let transcript = transcripts(root);
    assert!(
        transcript.contains("not preloaded: no skill named `weekly-digest` (this folder's skills are not used: it is not trusted)"),
        "{transcript}"
    );
}
