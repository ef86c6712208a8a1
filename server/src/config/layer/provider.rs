//! `[providers.NAME]`: one provider read from a layer, merged by name, and finally checked into
//! a usable [`ProviderConfig`] (or the reason it cannot be used).

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KindTag {
    OpenAi,
    Anthropic,
    Command,
    Unknown,
}

pub(super) struct PartialProvider {
    /// The latest definition (its key in the file), for "missing `model`" and the like.
    pub(super) at: At,
    pub(super) origin: Origin,
    pub(super) kind: Option<KindTag>,
    pub(super) base_url: Option<Set<String>>,
    pub(super) model: Option<Set<String>>,
    pub(super) api_key_env: Option<Set<String>>,
    pub(super) command: Option<Set<Vec<String>>>,
    pub(super) timeout: Option<Set<Duration>>,
}

impl PartialProvider {
    pub(super) fn new(at: At) -> Self {
        PartialProvider {
            origin: at.origin,
            at,
            kind: None,
            base_url: None,
            model: None,
            api_key_env: None,
            command: None,
            timeout: None,
        }
    }
}

pub(super) fn apply_provider(acc: &mut Partial, entry: &Entry, cx: &mut Cx<'_>) {
    let name = entry.key.as_str();
    let prefix = format!("providers.{name}");
    let Some(fields) = cx.table(&prefix, &entry.node) else { return };
    let at = cx.at(entry.key_span.clone());
    // `kind` first: a layer that changes a provider's kind starts it afresh, so settings of
    // two kinds never mix (a user's `base_url` must not leak into a workspace's redefinition).
    let mut kind = None;
    for f in set_entries(fields).filter(|f| f.key == "kind") {
        let key = format!("{prefix}.kind");
        kind = cx.string(&key, &f.node).map(|k| match k.as_str() {
            "openai" => KindTag::OpenAi,
            "anthropic" => KindTag::Anthropic,
            "command" => KindTag::Command,
            _ => {
                let message = format!("unknown provider kind in `{key}` (use openai, anthropic or command)");
                cx.report(f.node.span.clone(), Some(&key), message);
                KindTag::Unknown
            }
        });
    }
    let p = acc.providers.entry(name.to_owned()).or_insert_with(|| PartialProvider::new(at.clone()));
    if let Some(k) = kind {
        if p.kind.as_ref().is_some_and(|old| *old != k) {
            *p = PartialProvider::new(at.clone());
        }
        p.kind = Some(k);
    }
    p.at = at;
    p.origin = cx.origin;
    for f in set_entries(fields) {
        let key = format!("{prefix}.{}", f.key);
        let at = cx.at(f.node.span.clone());
        match f.key.as_str() {
            "kind" => {}
            "base_url" => {
                if let Some(v) = cx.string(&key, &f.node) {
                    p.base_url = Some(Set { value: v, at });
                }
            }
            "model" => {
                if let Some(v) = cx.string(&key, &f.node) {
                    p.model = Some(Set { value: v, at });
                }
            }
            "api_key_env" => {
                if let Some(v) = cx.string(&key, &f.node) {
                    if is_env_name(&v) {
                        p.api_key_env = Some(Set { value: v, at });
                    } else {
                        // Never echo the value: it may well be the key itself.
                        let message = format!(
                            "`{key}` must be the name of an environment variable (like OPENAI_API_KEY), not a key"
                        );
                        cx.report(f.node.span.clone(), Some(&key), message);
                    }
                }
            }
            "command" => {
                if let Some(v) = cx.strings(&key, &f.node) {
                    p.command = Some(Set { value: v, at });
                }
            }
            "timeout" => {
                if let Some(v) = cx.duration(&key, &f.node) {
                    p.timeout = Some(Set { value: v, at });
                }
            }
            other if looks_like_secret_key(other) => {
                let message = format!(
                    "`{key}` is ignored: keys are never read from configuration; put the key in an environment variable and set `{prefix}.api_key_env` to its name"
                );
                cx.report(f.key_span.clone(), Some(&key), message);
            }
            _ => cx.unknown(&key, f, PROVIDER_KEYS),
        }
    }
}

pub(super) fn looks_like_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["key", "token", "secret", "password"].iter().any(|w| k.contains(w))
}

/// A usable provider, or why not (the problem is reported here, the reason kept for runs).
pub(super) fn build_provider(
    name: &str,
    p: PartialProvider,
    problems: &mut Vec<ConfigProblem>,
) -> Result<ProviderConfig, String> {
    let prefix = format!("providers.{name}");
    let Some(kind) = p.kind else {
        let reason = "no `kind` (openai, anthropic or command)".to_owned();
        problems.push(p.at.problem(Some(&prefix), format!("provider `{name}` has {reason}")));
        return Err(reason);
    };
    // Settings of another kind are reported and ignored rather than breaking the provider.
    let mut not_for = |set: Option<&At>, field: &str, kind: &str| {
        if let Some(at) = set {
            let key = format!("{prefix}.{field}");
            problems.push(at.problem(Some(&key), format!("`{key}` does not apply to kind {kind}; ignored")));
        }
    };
    let kind = match kind {
        KindTag::Unknown => return Err("unknown kind (use openai, anthropic or command)".to_owned()),
        KindTag::OpenAi | KindTag::Anthropic => {
            let kind_name = if kind == KindTag::OpenAi { "openai" } else { "anthropic" };
            not_for(p.command.as_ref().map(|s| &s.at), "command", kind_name);
            not_for(p.timeout.as_ref().map(|s| &s.at), "timeout", kind_name);
            let Some(model) = p.model else {
                let reason = "no `model`".to_owned();
                problems.push(p.at.problem(Some(&prefix), format!("provider `{name}` has {reason}")));
                return Err(reason);
            };
            if let Some(url) = &p.base_url
                && !(url.value.starts_with("http://") || url.value.starts_with("https://"))
            {
                let key = format!("{prefix}.base_url");
                let reason = "`base_url` must start with http:// or https://".to_owned();
                problems
                    .push(url.at.problem(Some(&key), format!("`{key}` must start with http:// or https://")));
                return Err(reason);
            }
            if kind == KindTag::OpenAi {
                // The public API always needs its key; a custom endpoint (Ollama, llama.cpp)
                // usually needs none.
                let api_key_env = match (&p.api_key_env, &p.base_url) {
                    (Some(v), _) => Some(v.value.clone()),
                    (None, None) => Some(OPENAI_KEY_ENV.to_owned()),
                    (None, Some(_)) => None,
                };
                ProviderKind::OpenAi(OpenAiConfig {
                    base_url: p.base_url.map_or_else(|| DEFAULT_OPENAI_BASE_URL.to_owned(), |s| s.value),
                    model: model.value,
                    api_key_env,
                })
            } else {
                ProviderKind::Anthropic(AnthropicConfig {
                    base_url: p.base_url.map_or_else(|| DEFAULT_ANTHROPIC_BASE_URL.to_owned(), |s| s.value),
                    model: model.value,
                    api_key_env: p.api_key_env.map_or_else(|| ANTHROPIC_KEY_ENV.to_owned(), |s| s.value),
                })
            }
        }
        KindTag::Command => {
            not_for(p.base_url.as_ref().map(|s| &s.at), "base_url", "command");
            not_for(p.model.as_ref().map(|s| &s.at), "model", "command");
            not_for(p.api_key_env.as_ref().map(|s| &s.at), "api_key_env", "command");
            let command = match p.command {
                Some(c) if c.value.first().is_some_and(|prog| !prog.is_empty()) => c.value,
                Some(c) => {
                    let key = format!("{prefix}.command");
                    let reason = "`command` needs a program as its first element".to_owned();
                    problems.push(
                        c.at.problem(Some(&key), format!("`{key}` needs a program as its first element")),
                    );
                    return Err(reason);
                }
                None => {
                    let reason = "no `command` (e.g. command = [\"sh\", \"-c\", \"...\"])".to_owned();
                    problems.push(p.at.problem(Some(&prefix), format!("provider `{name}` has {reason}")));
                    return Err(reason);
                }
            };
            ProviderKind::Command(CommandConfig {
                command,
                timeout: p.timeout.map_or(DEFAULT_COMMAND_TIMEOUT, |s| s.value),
            })
        }
    };
    Ok(ProviderConfig { kind, origin: p.origin })
}
