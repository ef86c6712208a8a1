use super::*;
use crate::config::{HeaderFromEnv, MIB};
use std::ffi::OsString;

pub(in crate::config) fn no_env(_: &str) -> Option<OsString> {
    None
}

pub(in crate::config) fn toml_layers(files: &[(&str, Origin)]) -> (Config, Vec<ConfigProblem>) {
    let paths: Vec<PathBuf> =
        files.iter().map(|(_, o)| PathBuf::from(format!("/cfg/{}.toml", o.as_str()))).collect();
    let layers: Vec<Layer<'_>> = files
        .iter()
        .zip(&paths)
        .map(|((text, origin), path)| Layer::Toml { text, path, origin: *origin })
        .collect();
    Config::from_layers(&layers, &no_env)
}

pub(in crate::config) fn one(text: &str) -> (Config, Vec<ConfigProblem>) {
    toml_layers(&[(text, Origin::Workspace)])
}

pub(in crate::config) fn messages(problems: &[ConfigProblem]) -> Vec<String> {
    problems.iter().map(ToString::to_string).collect()
}

#[test]
fn no_config_gives_defaults() {
    let (config, problems) = Config::from_layers(&[], &no_env);
    assert!(problems.is_empty());
    assert_eq!(config, Config::default());
    assert_eq!(config.agent.max_steps, 25);
    assert_eq!(config.agent.timeout, Duration::from_secs(600));
    assert!(!config.agent.web);
    assert!(config.scheduler.enabled);
    assert_eq!(config.history.keep, 20);
}

#[test]
fn spec_example_loads() {
    let (config, problems) = one(r#"
[agent]
provider = "local"          # default provider for notes without `provider:`
max_steps = 25
timeout = "10m"
web = false                 # offer fetch_url to the agent

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "llama3.1"

[providers.claude]
kind = "anthropic"
model = "claude-sonnet-4-5"
api_key_env = "ANTHROPIC_API_KEY"

[providers.clock]
kind = "command"
command = ["sh", "-c", "date '+%H:%M'"]
timeout = "30s"

[scheduler]
enabled = true
exclude = ["archive/**"]    # globs relative to the workspace root, beside .gitignore
"#);
    assert_eq!(messages(&problems), Vec::<String>::new());
    assert_eq!(config.agent.provider.as_deref(), Some("local"));
    assert_eq!(config.scheduler.exclude, ["archive/**"]);
    assert_eq!(config.provider_names(), ["claude", "clock", "local"]);
    let local = &config.providers["local"];
    assert_eq!(
        local.kind,
        ProviderKind::OpenAi(OpenAiConfig {
            base_url: "http://127.0.0.1:11434/v1".into(),
            model: "llama3.1".into(),
            api_key_env: None,
        })
    );
    assert_eq!(local.origin, Origin::Workspace);
    assert_eq!(
        config.providers["claude"].kind,
        ProviderKind::Anthropic(AnthropicConfig {
            base_url: DEFAULT_ANTHROPIC_BASE_URL.into(),
            model: "claude-sonnet-4-5".into(),
            api_key_env: "ANTHROPIC_API_KEY".into(),
        })
    );
    assert_eq!(
        config.providers["clock"].kind,
        ProviderKind::Command(CommandConfig {
            command: vec!["sh".into(), "-c".into(), "date '+%H:%M'".into()],
            timeout: Duration::from_secs(30),
        })
    );
    assert!(config.providers["clock"].needs_trust());
    assert!(!local.needs_trust());
    let (name, p) =
        config.resolve_provider(None).map_err(|e| e.to_string()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((name.as_str(), p.kind_name()), ("local", "openai"));
    let resolved = config.resolve_provider(Some("clock")).map(|(n, _)| n);
    assert_eq!(resolved, Ok("clock".to_owned()));
}

#[test]
fn cli_init_template_loads_cleanly() {
    let (config, problems) = one(r#"# livenote configuration for this workspace. See docs/providers.md.
[agent]
provider = "clock"

[providers.clock]
kind = "command"
command = ["sh", "-c", "printf 'It is %s.\n' \"$(date '+%H:%M on %A %d %B')\""]
timeout = "30s"

[scheduler]
enabled = true
exclude = []
"#);
    assert_eq!(messages(&problems), Vec::<String>::new());
    assert_eq!(config.default_provider().map(|(n, _)| n), Some("clock".to_owned()));
}

#[test]
fn later_layers_override_keys_and_merge_providers_by_name() {
    let user = r#"
[agent]
provider = "claude"
max_steps = 40
web = true

[providers.claude]
kind = "anthropic"
model = "claude-sonnet-4-5"
api_key_env = "MY_ANTHROPIC_KEY"

[providers.mine]
kind = "command"
command = ["my-agent"]

[scheduler]
exclude = ["a/**"]

[history]
keep = 5
"#;
    let workspace = r#"
[agent]
max_steps = 10

[providers.claude]
model = "claude-opus-4-1"

[scheduler]
exclude = ["b/**"]
"#;
    let client = serde_json::json!({
        "agent": { "timeout": "2m", "web": null },
        "providers": { "fast": { "kind": "openai", "model": "gpt-4.1-nano" } },
        "history": { "keep": 7 }
    });
    let (ws_path, user_path) = (PathBuf::from("/w/.livenote.toml"), PathBuf::from("/u/config.toml"));
    let layers = [
        Layer::Toml { text: user, path: &user_path, origin: Origin::User },
        Layer::Toml { text: workspace, path: &ws_path, origin: Origin::Workspace },
        Layer::Json(&client),
    ];
    let (config, problems) = Config::from_layers(&layers, &no_env);
    assert_eq!(messages(&problems), Vec::<String>::new());
    assert_eq!(config.agent.provider.as_deref(), Some("claude"));
    assert_eq!(config.agent.max_steps, 10);
    assert_eq!(config.agent.timeout, Duration::from_secs(120));
    assert!(config.agent.web, "null in client settings means not set");
    assert_eq!(config.scheduler.exclude, ["b/**"], "later lists replace earlier ones");
    assert_eq!(config.history.keep, 7);
    let claude = &config.providers["claude"];
    assert_eq!(
        claude.kind,
        ProviderKind::Anthropic(AnthropicConfig {
            base_url: DEFAULT_ANTHROPIC_BASE_URL.into(),
            model: "claude-opus-4-1".into(),
            api_key_env: "MY_ANTHROPIC_KEY".into(),
        })
    );
    assert_eq!(claude.origin, Origin::Workspace, "the latest layer touching a provider owns it");
    assert_eq!(config.providers["mine"].origin, Origin::User);
    assert!(!config.providers["mine"].needs_trust());
    assert_eq!(config.providers["fast"].origin, Origin::Client);
    assert_eq!(
        config.providers["fast"].kind,
        ProviderKind::OpenAi(OpenAiConfig {
            base_url: DEFAULT_OPENAI_BASE_URL.into(),
            model: "gpt-4.1-nano".into(),
            api_key_env: Some(OPENAI_KEY_ENV.into()),
        })
    );
}

#[test]
fn changing_a_providers_kind_starts_it_afresh() {
    let user = "[providers.x]\nkind = \"openai\"\nbase_url = \"https://example.com/v1\"\nmodel = \"m\"\n";
    let workspace = "[providers.x]\nkind = \"command\"\ncommand = [\"evil\"]\n";
    let (config, problems) = toml_layers(&[(user, Origin::User), (workspace, Origin::Workspace)]);
    assert_eq!(messages(&problems), Vec::<String>::new());
    let x = &config.providers["x"];
    assert_eq!(
        x.kind,
        ProviderKind::Command(CommandConfig {
            command: vec!["evil".into()],
            timeout: DEFAULT_COMMAND_TIMEOUT
        })
    );
    assert!(x.needs_trust());
}

#[test]
fn broken_toml_is_reported_with_place_and_other_layers_still_load() {
    let user = "[agent]\nmax_steps = 7\n";
    let workspace = "[agent]\nmax_steps = 3\ntimeout = \"10m\n[providers.x]\n";
    let (config, problems) = toml_layers(&[(user, Origin::User), (workspace, Origin::Workspace)]);
    assert_eq!(config.agent.max_steps, 7, "the broken file is ignored as a whole");
    let p = problems.first().cloned().unwrap_or_else(|| panic!("no problem reported"));
    assert_eq!(p.path, Some(PathBuf::from("/cfg/workspace.toml")));
    assert_eq!(p.origin, Origin::Workspace);
    assert_eq!(p.line, Some(3), "{p}");
    assert!(p.column.is_some());
    assert!(p.message.starts_with("invalid TOML: "), "{p}");
    assert!(p.to_string().starts_with("/cfg/workspace.toml:3:"), "{p}");
}

#[test]
fn agent_byte_limits_have_defaults_and_bounds() {
    let (config, problems) =
        one("[agent]\nmax_tool_args_bytes = 2048\nmax_conversation_bytes = 1073741824\n");
    assert_eq!(problems, vec![]);
    assert_eq!(
        (config.agent.max_reply_bytes, config.agent.max_tool_args_bytes, config.agent.max_conversation_bytes),
        (4 * MIB, 2048, 1 << 30)
    );
    let (config, problems) = one("[agent]\nmax_reply_bytes = 10\nmax_conversation_bytes = 1073741825\n");
    assert_eq!((config.agent.max_reply_bytes, config.agent.max_conversation_bytes), (4 * MIB, 16 * MIB));
    assert_eq!(problems.len(), 2, "{:?}", messages(&problems));
}

#[test]
fn duplicate_keys_are_a_syntax_problem() {
    let (config, problems) = one("[agent]\nmax_steps = 3\nmax_steps = 4\n");
    assert_eq!(config.agent.max_steps, 25);
    assert_eq!(problems.len(), 1, "{:?}", messages(&problems));
    assert_eq!(problems[0].line, Some(3));
}

#[test]
fn unknown_keys_are_problems_with_the_key_and_a_suggestion() {
    let (config, problems) = one(
        "colour = 1\n[agent]\nmax_step = 3\nweb = true\n[providers.p]\nkind = \"command\"\ncommand = [\"x\"]\ntimout = \"1s\"\n[history]\nkeep = 3\nlimit = 1\n",
    );
    assert!(config.agent.web, "the rest of the file still loads");
    assert_eq!(config.history.keep, 3);
    assert!(config.providers.contains_key("p"));
    assert_eq!(
        messages(&problems),
        [
            "/cfg/workspace.toml:3:1: unknown key `agent.max_step` (did you mean `max_steps`?)",
            "/cfg/workspace.toml:1:1: unknown key `colour`",
            "/cfg/workspace.toml:11:1: unknown key `history.limit`",
            "/cfg/workspace.toml:8:1: unknown key `providers.p.timout` (did you mean `timeout`?)",
        ]
    );
    assert_eq!(problems[0].key.as_deref(), Some("agent.max_step"));
    assert_eq!(problems[0].span, Some(19..27));
}

#[test]
fn bad_values_are_problems_and_keep_the_default() {
    let (config, problems) = one(
        "[agent]\nmax_steps = 0\ntimeout = \"10\"\nweb = \"yes\"\nprovider = 3\n[scheduler]\nexclude = [\"a\", 1]\nenabled = false\n[history]\nkeep = -1\n",
    );
    assert_eq!(config.agent, AgentConfig::default());
    assert_eq!(config.scheduler, SchedulerConfig { enabled: false, ..SchedulerConfig::default() });
    assert_eq!(config.history.keep, 20);
    assert_eq!(
        messages(&problems),
        [
            "/cfg/workspace.toml:2:13: `agent.max_steps` must be between 1 and 4294967295",
            "/cfg/workspace.toml:5:12: `agent.provider` must be a string, not an integer",
            "/cfg/workspace.toml:3:11: `agent.timeout`: invalid duration \"10\": missing unit (ms, s, m or h), e.g. \"10s\"",
            "/cfg/workspace.toml:4:7: `agent.web` must be true or false, not a string",
            "/cfg/workspace.toml:10:8: `history.keep` must be between 0 and 100000",
            "/cfg/workspace.toml:7:17: `scheduler.exclude` must contain only strings, not an integer",
        ]
    );
}

#[test]
fn incomplete_providers_are_broken_with_a_reason() {
    let (config, problems) = one(
        "[providers.a]\nmodel = \"m\"\n[providers.b]\nkind = \"openai\"\n[providers.c]\nkind = \"command\"\ncommand = []\n[providers.d]\nkind = \"gemini\"\n[providers.e]\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"localhost:1234\"\n[providers.f]\nkind = \"command\"\ncommand = [\"x\"]\nmodel = \"m\"\n",
    );
    assert_eq!(
        config.providers.keys().collect::<Vec<_>>(),
        ["f"],
        "settings of another kind are only ignored"
    );
    assert_eq!(config.provider_names(), ["a", "b", "c", "d", "e", "f"]);
    assert_eq!(
        messages(&problems),
        [
            "/cfg/workspace.toml:9:8: unknown provider kind in `providers.d.kind` (use openai, anthropic or command)",
            "/cfg/workspace.toml:1:12: provider `a` has no `kind` (openai, anthropic or command)",
            "/cfg/workspace.toml:3:12: provider `b` has no `model`",
            "/cfg/workspace.toml:7:11: `providers.c.command` needs a program as its first element",
            "/cfg/workspace.toml:13:12: `providers.e.base_url` must start with http:// or https://",
            "/cfg/workspace.toml:17:9: `providers.f.model` does not apply to kind command; ignored",
        ]
    );
    let err = config.resolve_provider(Some("b")).map(|(n, _)| n).map_err(|e| e.to_string());
    assert_eq!(err, Err("provider `b` is misconfigured: no `model`".to_owned()));
    let err = config.resolve_provider(Some("d")).map(|(n, _)| n).map_err(|e| e.to_string());
    assert_eq!(
        err,
        Err("provider `d` is misconfigured: unknown kind (use openai, anthropic or command)".to_owned())
    );
}

#[test]
fn api_keys_are_never_read_and_never_echoed() {
    let secret = "sk-live-0123456789abcdef";
    let text = format!(
        "[providers.o]\nkind = \"openai\"\nmodel = \"m\"\napi_key = \"{secret}\"\n[providers.p]\nkind = \"openai\"\nmodel = \"m\"\napi_key_env = \"{secret}\"\n"
    );
    let (config, problems) = one(&text);
    let all = messages(&problems).join("\n");
    assert!(!all.contains(secret), "{all}");
    assert!(!format!("{config:?}").contains(secret));
    assert_eq!(
        messages(&problems),
        [
            "/cfg/workspace.toml:4:1: `providers.o.api_key` is ignored: keys are never read from configuration; put the key in an environment variable and set `providers.o.api_key_env` to its name",
            "/cfg/workspace.toml:8:15: `providers.p.api_key_env` must be the name of an environment variable (like OPENAI_API_KEY), not a key",
        ]
    );
}

#[test]
fn client_settings_problems_name_the_key() {
    let client = serde_json::json!({"agent": {"timeout": 30, "max_steps": 2.5}, "extra": {}});
    let (config, problems) = Config::from_layers(&[Layer::Json(&client)], &no_env);
    assert_eq!(config.agent, AgentConfig::default());
    assert_eq!(
        messages(&problems),
        [
            "client settings: `agent.max_steps` must be an integer, not a float",
            "client settings: `agent.timeout` must be a duration like \"30s\", \"10m\" or \"1h\", not an integer",
            "client settings: unknown key `extra`",
        ]
    );
    assert_eq!(problems[0].path, None);
    let (_, problems) = Config::from_layers(&[Layer::Json(&serde_json::json!([1]))], &no_env);
    assert_eq!(messages(&problems), ["client settings: `settings` must be a table, not an array"]);
}

#[test]
fn line_col_counts_characters() {
    assert_eq!(line_col("ab\ncdé f", 0), (1, 1));
    assert_eq!(line_col("ab\ncdé f", 3), (2, 1));
    assert_eq!(line_col("ab\ncdé f", 8), (2, 5));
    assert_eq!(line_col("ab", 99), (1, 3));
}

#[test]
fn mcp_servers_load_with_defaults_and_merge_by_name() {
    let user = r#"
[mcp.servers.time]
command = ["uvx", "mcp-server-time"]
env = { TZ = "Europe/Berlin" }

[mcp.servers.remote]
url = "http://127.0.0.1:8931/mcp"
"#;
    let workspace = r#"
[mcp.servers.time]
env = { LANG = "C" }
events = true
timeout = "5s"

[mcp.servers.remote]
command = ["./local-server"]
"#;
    let (config, problems) = toml_layers(&[(user, Origin::User), (workspace, Origin::Workspace)]);
    assert_eq!(messages(&problems), Vec::<String>::new());
    let time = &config.mcp_servers["time"];
    assert_eq!(time.transport, McpTransport::Stdio { command: vec!["uvx".into(), "mcp-server-time".into()] });
    let env: Vec<(&str, &str)> = time.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(env, [("LANG", "C"), ("TZ", "Europe/Berlin")], "env merges by variable");
    assert!(time.events);
    assert_eq!(time.timeout, Duration::from_secs(5));
    assert_eq!(time.origin, Origin::Workspace);
    assert!(time.needs_trust());
    // A later `command` replaces an earlier `url`.
    assert_eq!(
        config.mcp_servers["remote"].transport,
        McpTransport::Stdio { command: vec!["./local-server".into()] }
    );
    let (config, _) = toml_layers(&[(user, Origin::User)]);
    let time = &config.mcp_servers["time"];
    assert!(!time.events, "events is off unless asked for");
    assert_eq!(time.timeout, DEFAULT_MCP_TIMEOUT);
    assert!(!time.needs_trust());
    assert_eq!(config.mcp_names_for_notes(), ["remote", "time"]);
}

#[test]
fn broken_mcp_servers_are_problems_and_keep_their_names() {
    let (config, problems) = one(r#"
[mcp.servers.none]
events = true

[mcp.servers.both]
command = ["x"]
url = "http://127.0.0.1:1/mcp"

[mcp.servers.ftp]
url = "ftp://example.com"

[mcp.servers.empty]
command = []

[mcp.servers."a.b"]
command = ["x"]

[mcp.servers.bad]
command = ["x"]
env = { "1X" = "v", OK = 3 }
timeout = "soon"
colour = "red"

[mcp]
server = {}
"#);
    assert_eq!(
        messages(&problems),
        [
            "/cfg/workspace.toml:25:1: unknown key `mcp.server` (did you mean `servers`?)",
            "/cfg/workspace.toml:15:14: `mcp.servers.a.b`: a server name may hold only letters, digits, `_` and `-` (it becomes part of tool names); ignored",
            "/cfg/workspace.toml:22:1: unknown key `mcp.servers.bad.colour`",
            "/cfg/workspace.toml:20:9: `mcp.servers.bad.env.1X`: not an environment variable name (letters, digits, `_`)",
            "/cfg/workspace.toml:20:26: `mcp.servers.bad.env.OK` must be a string, not an integer",
            "/cfg/workspace.toml:21:11: `mcp.servers.bad.timeout`: invalid duration \"soon\": expected a number, e.g. \"30s\"",
            "/cfg/workspace.toml:7:7: `mcp.servers.both` sets both `command` and `url`; set one (a program, or a server's URL)",
            "/cfg/workspace.toml:13:11: `mcp.servers.empty.command` needs a program as its first element",
            "/cfg/workspace.toml:10:7: `mcp.servers.ftp.url` must start with http:// or https://",
            "/cfg/workspace.toml:2:14: MCP server `none` has no `command` (e.g. command = [\"uvx\", \"mcp-server-time\"]) or `url`",
        ]
    );
    assert_eq!(config.mcp_servers.keys().collect::<Vec<_>>(), ["bad"]);
    assert_eq!(config.broken_mcp_servers.keys().collect::<Vec<_>>(), ["both", "empty", "ftp", "none"]);
    assert_eq!(config.mcp_names_for_notes(), ["bad", "both", "empty", "ftp", "none"]);
}

#[test]
fn agent_instructions_parse_and_bad_types_are_problems() {
    let (config, problems) =
        one("[agent]\ninstructions = [\"notes/STYLE.md\"]\ninstructions_max_chars = 500\n");
    assert_eq!(problems, vec![]);
    assert_eq!(config.agent.instructions, vec!["notes/STYLE.md".to_owned()]);
    assert_eq!(config.agent.instructions_max_chars, 500);
    let (config, _) = one("");
    assert_eq!((config.agent.instructions.len(), config.agent.instructions_max_chars), (0, 8000));
    let (config, problems) =
        one("[agent]\ninstructions = \"notes/STYLE.md\"\ninstructions_max_chars = \"8k\"\n");
    assert_eq!((config.agent.instructions.len(), config.agent.instructions_max_chars), (0, 8000));
    let msgs = messages(&problems);
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(msgs[0].contains("agent.instructions"), "{msgs:?}");
    assert!(msgs[1].contains("agent.instructions_max_chars"), "{msgs:?}");
    let (_, problems) = one("[agent]\ninstructions = [1]\ninstructions_max_chars = 0\n");
    assert_eq!(problems.len(), 2, "{:?}", messages(&problems));
}

#[test]
fn memory_quotas_parse_with_did_you_mean() {
    let (config, problems) = one("[memory]\nmax_keys = 10\nmax_bytes = 512\n");
    assert_eq!(problems, vec![]);
    assert_eq!(config.memory, crate::config::MemoryConfig { max_keys: 10, max_bytes: 512 });
    let (config, _) = one("");
    assert_eq!(config.memory, crate::config::MemoryConfig { max_keys: 50, max_bytes: 4096 });
    let (config, problems) = one("[memory]\nmax_key = 10\nmax_bytes = 1\n[memroy]\n");
    assert_eq!(config.memory, crate::config::MemoryConfig::default());
    assert_eq!(
        messages(&problems),
        [
            "/cfg/workspace.toml:3:13: `memory.max_bytes` must be between 16 and 1048576",
            "/cfg/workspace.toml:2:1: unknown key `memory.max_key` (did you mean `max_keys`?)",
            "/cfg/workspace.toml:4:2: unknown key `memroy` (did you mean `memory`?)",
        ]
    );
}

#[test]
fn skills_dirs_parse_and_unknown_keys_are_problems() {
    let (config, problems) = one("[skills]\ndirs = [\"skills\", \"notes/skills\"]\n");
    assert_eq!(problems, vec![]);
    assert_eq!(config.skills.dirs, ["skills", "notes/skills"]);
    let (config, _) = one("");
    assert_eq!(config.skills.dirs, ["skills"]);
    let (config, problems) = one("[skills]\ndirs = \"skills\"\ndir = [\"x\"]\n");
    assert_eq!(config.skills.dirs, ["skills"]);
    let msgs = messages(&problems);
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(msgs.iter().any(|m| m.contains("`skills.dirs` must be an array")), "{msgs:?}");
    assert!(msgs.iter().any(|m| m.contains("`skills.dir` (did you mean `dirs`?)")), "{msgs:?}");
}

#[test]
fn url_servers_take_headers_from_named_variables() {
    let (config, problems) = one(r#"
[mcp.servers.github]
url = "https://api.example.com/mcp"
bearer_token_env = "GITHUB_TOKEN"
headers_env = { "X-Api-Key" = "EXAMPLE_KEY", Authorization = "OTHER" }

[mcp.servers.bad]
url = "https://api.example.com/mcp"
bearer_token_env = "not a var"
headers_env = { "Bad Header" = "V", "X-Ok" = "sk-literal-token!" }

[mcp.servers.local]
command = ["x"]
bearer_token_env = "TOKEN"
"#);
    assert_eq!(
        messages(&problems),
        [
            "/cfg/workspace.toml:9:20: `mcp.servers.bad.bearer_token_env`: not an environment variable name (letters, digits, `_`)",
            "/cfg/workspace.toml:10:17: `mcp.servers.bad.headers_env.Bad Header`: not an HTTP header name",
            "/cfg/workspace.toml:10:46: `mcp.servers.bad.headers_env.X-Ok` names the environment variable holding the header's value (letters, digits, `_`), not the value",
            "/cfg/workspace.toml:14:20: `mcp.servers.local.bearer_token_env` applies only to a `url` server (a program gets `env`); ignored",
        ]
    );
    let header = |name: &str, var: &str, bearer| HeaderFromEnv { name: name.into(), var: var.into(), bearer };
    assert_eq!(
        config.mcp_servers["github"].transport,
        McpTransport::Http {
            url: "https://api.example.com/mcp".into(),
            // The bearer token takes the place of a plain `Authorization`.
            headers: vec![
                header("Authorization", "GITHUB_TOKEN", true),
                header("X-Api-Key", "EXAMPLE_KEY", false)
            ],
        }
    );
    assert_eq!(
        config.mcp_servers["bad"].transport,
        McpTransport::Http { url: "https://api.example.com/mcp".into(), headers: Vec::new() }
    );
}

#[test]
fn max_backoff_is_a_duration_within_five_minutes_and_a_week() {
    assert_eq!(Config::default().scheduler.max_backoff, Duration::from_secs(6 * 3600));
    let (config, problems) = one("[scheduler]\nmax_backoff = \"1h30m\"\n");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(config.scheduler.max_backoff, Duration::from_secs(5400));
    assert_eq!(config.scheduler.backoff_cap(), chrono::TimeDelta::minutes(90));
    // Both ends are accepted.
    for (text, secs) in [("5m", 300), ("168h", 7 * 24 * 3600)] {
        let (config, problems) = one(&format!("[scheduler]\nmax_backoff = \"{text}\"\n"));
        assert!(problems.is_empty(), "{text}: {problems:?}");
        assert_eq!(config.scheduler.max_backoff, Duration::from_secs(secs));
    }
    let (config, problems) = one("[scheduler]\nmax_backoff = \"4m\"\n");
    assert_eq!(
        config.scheduler.max_backoff,
        SchedulerConfig::default().max_backoff,
        "a bad value keeps the default"
    );
    let (_, later) = one("[scheduler]\nmax_backoff = \"169h\"\n");
    let (_, wrong) = one("[scheduler]\nmax_backoff = 6\nmax_backof = \"1h\"\n");
    expect_test::expect![[r#"
        (
            [
                "/cfg/workspace.toml:2:15: `scheduler.max_backoff` must be between 5m and 168h",
            ],
            [
                "/cfg/workspace.toml:2:15: `scheduler.max_backoff` must be between 5m and 168h",
            ],
            [
                "/cfg/workspace.toml:3:1: unknown key `scheduler.max_backof` (did you mean `max_backoff`?)",
                "/cfg/workspace.toml:2:15: `scheduler.max_backoff` must be a duration like \"30s\", \"10m\" or \"1h\", not an integer",
            ],
        )
    "#]].assert_debug_eq(&(messages(&problems), messages(&later), messages(&wrong)));
}

#[test]
fn max_concurrent_runs_is_read_bounded_and_misspellings_are_named() {
    let (config, problems) = one("[scheduler]\nmax_concurrent_runs = 2\n");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(config.scheduler.max_concurrent_runs, 2);
    let (config, problems) = one("[scheduler]\nmax_concurrent_runs = 0\nmax_concurent_runs = 3\n");
    assert_eq!(config.scheduler.max_concurrent_runs, crate::config::DEFAULT_MAX_CONCURRENT_RUNS);
    let messages = messages(&problems);
    assert_eq!(messages.len(), 2, "{messages:?}");
    let has = |part: &str| messages.iter().any(|m| m.contains(part));
    assert!(has("`scheduler.max_concurrent_runs` must be between 1 and 256"), "{messages:?}");
    assert!(
        has("unknown key `scheduler.max_concurent_runs` (did you mean `max_concurrent_runs`?)"),
        "{messages:?}"
    );
}

#[test]
fn scheduler_catch_up_is_a_duration_and_off_by_default() {
    assert_eq!(one("").0.scheduler.catch_up, None);
    let (config, problems) = one("[scheduler]\ncatch_up = \"2h\"\n");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(config.scheduler.catch_up, Some(Duration::from_secs(7200)));
    let (config, problems) = one("[scheduler]\ncatch_up = true\n");
    assert_eq!(config.scheduler.catch_up, None);
    let said = messages(&problems);
    assert!(said.iter().any(|m| m.contains("`scheduler.catch_up` must be a duration")), "{said:?}");
    let (_, problems) = one("[scheduler]\ncatchup = \"2h\"\n");
    let said = messages(&problems);
    assert!(said.iter().any(|m| m.contains("(did you mean `catch_up`?)")), "{said:?}");
}

#[test]
fn scheduler_host_and_failover_are_read_and_misspellings_are_named() {
    let (config, problems) = one("[scheduler]\nhost = \" nas \"\nfailover_after = \"2h\"\n");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(config.scheduler.host.as_deref(), Some("nas"));
    assert_eq!(config.scheduler.failover_after, Some(Duration::from_secs(7200)));
    let (config, problems) = one("[scheduler]\nhots = \"nas\"\nfailover_after = 5\n");
    assert_eq!(config.scheduler.host, None);
    assert_eq!(config.scheduler.failover_after, None);
    let messages = messages(&problems);
    let has = |part: &str| messages.iter().any(|m| m.contains(part));
    assert!(has("unknown key `scheduler.hots` (did you mean `host`?)"), "{messages:?}");
    assert!(has("`scheduler.failover_after` must be a duration"), "{messages:?}");
    // A later layer's "" lets every machine run the folder again.
    let (config, _) = toml_layers(&[
        ("[scheduler]\nhost = \"nas\"\n", Origin::User),
        ("[scheduler]\nhost = \"\"\n", Origin::Workspace),
    ]);
    assert_eq!(config.scheduler.host, None);
}

/// `[machine]` names this machine only from the user's own file: a synced folder's
/// `.livenote.toml` is the same file on every machine.
#[test]
fn machine_name_is_read_from_the_users_file_only() {
    let (config, problems) = toml_layers(&[("[machine]\nname = \"laptop\"\n", Origin::User)]);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(config.machine.name.as_deref(), Some("laptop"));
    let (config, problems) = one("[machine]\nname = \"laptop\"\n");
    assert_eq!(config.machine.name, None);
    let said = messages(&problems);
    assert!(said.iter().any(|m| m.contains("`[machine]` belongs in your own config")), "{said:?}");
    let (_, problems) = toml_layers(&[("[machine]\nnmae = \"x\"\n", Origin::User)]);
    assert!(messages(&problems).iter().any(|m| m.contains("(did you mean `name`?)")), "{problems:?}");
}

#[test]
fn notify_reads_desktop_and_command_with_where_the_command_came_from() {
    let (config, problems) = one("");
    assert!(problems.is_empty());
    assert_eq!(config.notify, crate::config::NotifyConfig::default());
    let (config, problems) = toml_layers(&[
        ("[notify]\ndesktop = true\ncommand = [\"notify-send-mine\", \"--quiet\"]\n", Origin::User),
        ("[notify]\ndesktop = false\n", Origin::Workspace),
    ]);
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!config.notify.desktop, "the folder's layer comes after the user's");
    assert_eq!(
        config.notify.command,
        Some(crate::config::NotifyCommand {
            command: vec!["notify-send-mine".to_owned(), "--quiet".to_owned()],
            origin: Origin::User
        })
    );
    // A folder's command is the folder's; `command = []` there turns the user's off.
    let (config, _) = toml_layers(&[
        ("[notify]\ncommand = [\"mine\"]\n", Origin::User),
        ("[notify]\ncommand = [\"theirs\"]\n", Origin::Workspace),
    ]);
    assert_eq!(
        config.notify.command.map(|c| (c.command, c.origin)),
        Some((vec!["theirs".to_owned()], Origin::Workspace))
    );
    let (config, _) = toml_layers(&[
        ("[notify]\ncommand = [\"mine\"]\n", Origin::User),
        ("[notify]\ncommand = []\n", Origin::Workspace),
    ]);
    assert_eq!(config.notify.command, None);
    let (config, problems) =
        one("[notify]\ndesktop = \"yes\"\ncomand = [\"x\"]\ncommand = [\"\"]\n[notfy]\n");
    assert_eq!(config.notify, crate::config::NotifyConfig::default());
    let said = messages(&problems);
    assert_eq!(said.len(), 4, "{said:?}");
    assert!(said.iter().any(|m| m.contains("`notify.desktop` must be true or false")), "{said:?}");
    assert!(said.iter().any(|m| m.contains("`notify.comand` (did you mean `command`?)")), "{said:?}");
    assert!(said.iter().any(|m| m.contains("names no program")), "{said:?}");
    assert!(said.iter().any(|m| m.contains("`notfy` (did you mean `notify`?)")), "{said:?}");
}
