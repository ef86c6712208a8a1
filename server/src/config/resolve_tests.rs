use super::*;
use crate::config::Layer;
use crate::config::layer::tests::{messages, no_env, one};
use std::ffi::OsString;
use std::path::PathBuf;

#[test]
fn unknown_default_provider_is_a_problem_and_a_clear_run_error() {
    let (config, problems) =
        one("[agent]\nprovider = \"nope\"\n[providers.a]\nkind = \"command\"\ncommand = [\"x\"]\n");
    assert_eq!(messages(&problems), ["/cfg/workspace.toml:2:12: unknown provider `nope` (known: a)"]);
    let err = config.resolve_provider(None).map(|(n, _)| n).map_err(|e| e.to_string());
    assert_eq!(err, Err("unknown provider `nope` (known: a)".to_owned()));
    assert_eq!(config.default_provider(), None);
}

#[test]
fn several_providers_without_a_default_is_ambiguous() {
    let (config, _) = one(
        "[providers.b]\nkind = \"command\"\ncommand = [\"x\"]\n[providers.a]\nkind = \"command\"\ncommand = [\"y\"]\n",
    );
    let err = config.resolve_provider(None).map(|(n, _)| n).map_err(|e| e.to_string());
    assert_eq!(
            err,
            Err("several providers are configured (a, b) and none is the default: set `provider` under [agent] or in the note"
                .to_owned())
        );
    assert_eq!(config.resolve_provider(Some("b")).map(|(n, _)| n), Ok("b".to_owned()));
}

#[test]
fn key_variables_give_default_providers() {
    let both = |k: &str| matches!(k, "OPENAI_API_KEY" | "ANTHROPIC_API_KEY").then(|| OsString::from("k"));
    let anthropic = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| OsString::from("k"));
    let empty = |k: &str| (k == "OPENAI_API_KEY").then(OsString::new);

    let (config, _) = Config::from_layers(&[], &both);
    let (name, p) = config.default_provider().unwrap_or_else(|| panic!("no default"));
    assert_eq!(name, "openai");
    assert_eq!(
        p.kind,
        ProviderKind::OpenAi(OpenAiConfig {
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4.1-mini".into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
        })
    );
    assert_eq!(config.provider_names(), ["anthropic", "openai"]);

    let (config, _) = Config::from_layers(&[], &anthropic);
    let (name, p) = config.default_provider().unwrap_or_else(|| panic!("no default"));
    assert_eq!((name.as_str(), p.model()), ("anthropic", Some(DEFAULT_ANTHROPIC_MODEL)));

    for env in [&empty as &dyn Env, &no_env] {
        let (config, _) = Config::from_layers(&[], env);
        assert_eq!(config.default_provider(), None);
        let err = config.resolve_provider(None).map(|(n, _)| n).map_err(|e| e.to_string());
        assert_eq!(
                err,
                Err("no provider configured: add [providers.NAME] to .livenote.toml or ~/.config/livenote/config.toml, or set OPENAI_API_KEY / ANTHROPIC_API_KEY (see docs/providers.md)".to_owned())
            );
        let err = config.resolve_provider(Some("x")).map(|(n, _)| n).map_err(|e| e.to_string());
        assert!(err.is_err_and(|e| {
            e.starts_with("unknown provider `x` (none is configured: add [providers.NAME]")
        }));
    }
}

#[test]
fn configured_providers_take_precedence_over_key_variables() {
    let both = |k: &str| matches!(k, "OPENAI_API_KEY" | "ANTHROPIC_API_KEY").then(|| OsString::from("k"));
    let path = PathBuf::from("/w/.livenote.toml");
    let text = "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"llama3.1\"\n[providers.anthropic]\nkind = \"anthropic\"\n";
    let layers = [Layer::Toml { text, path: &path, origin: Origin::Workspace }];
    let (config, _) = Config::from_layers(&layers, &both);
    // Two names are configured (one broken): no silent fallback to the environment.
    assert!(matches!(config.resolve_provider(None), Err(ConfigError::AmbiguousProvider { .. })));
    // The environment's provider stays reachable by name...
    assert_eq!(config.resolve_provider(Some("openai")).map(|(_, p)| p.kind_name()), Ok("openai"));
    // ...unless the user's own definition of that name is broken.
    assert!(matches!(config.resolve_provider(Some("anthropic")), Err(ConfigError::BrokenProvider { .. })));
}
