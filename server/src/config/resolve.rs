//! Which provider a note runs with (the note's `provider:`, `[agent] provider`, the only
//! configured one, or the environment's implicit `openai` / `anthropic`), and the provider
//! names a note may use.

use std::collections::BTreeMap;

use super::{
    ANTHROPIC_KEY_ENV, AnthropicConfig, Config, ConfigError, DEFAULT_ANTHROPIC_BASE_URL,
    DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_MODEL, Env, IgnoredFolderConfig,
    McpServerConfig, OPENAI_KEY_ENV, OpenAiConfig, Origin, ProviderConfig, ProviderKind,
};

impl Config {
    /// The folder's ignored `.livenote.toml` when a run of a note naming `note_provider`
    /// would need it: the provider the run would pick, or its settings, differ with the file
    /// (the note names a provider only that file defines, the file sets the default provider,
    /// or it redefines the provider). Such a run must not start until the folder is trusted;
    /// a run that does not need it runs with the user's own configuration.
    pub fn needs_ignored_folder(&self, note_provider: Option<&str>) -> Option<&IgnoredFolderConfig> {
        let ignored = self.ignored_folder.as_deref()?;
        let with_file = ignored.would_be.resolve_provider(note_provider);
        match (self.resolve_provider(note_provider), with_file) {
            (_, Err(_)) => None,
            (Ok((name, p)), Ok((n, q))) if name == n && p.kind == q.kind => None,
            _ => Some(ignored),
        }
    }

    /// Every provider name a note may use (configured, misconfigured or implied by the
    /// environment), sorted: for validating `provider:`.
    /// The provider names a note may name without a diagnostic: those usable here, the
    /// built-in `openai` and `anthropic`, and those the folder's ignored `.livenote.toml`
    /// defines (its note is valid; running it asks for trust first).
    pub fn names_for_notes(&self) -> Vec<String> {
        let mut names: Vec<String> = self.provider_names().into_iter().map(str::to_owned).collect();
        // The built-in providers are names livenote always knows: without their key variable a
        // run says how to set it, which beats a validation error that depends on the shell.
        names.extend(["openai".to_owned(), "anthropic".to_owned()]);
        if let Some(ignored) = &self.ignored_folder {
            names.extend(ignored.would_be.provider_names().into_iter().map(str::to_owned));
        }
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The sources that may send a note events (`live.sources` names them, hover lists them):
    /// the enabled ones, and those of the folder's ignored `.livenote.toml` (they poll once
    /// the folder is trusted). A misconfigured source is named too: the fix is in the file.
    pub fn sources_for_notes(&self) -> Vec<crate::note::sources::SourceRef> {
        let mut all: Vec<crate::note::sources::SourceRef> = self
            .sources
            .iter()
            .filter(|(_, s)| s.enabled)
            .map(|(n, s)| crate::note::sources::SourceRef {
                name: n.clone(),
                kind: s.kind.name(),
                waiting_for_trust: false,
            })
            .collect();
        if let Some(ignored) = &self.ignored_folder {
            for (n, s) in &ignored.would_be.sources {
                all.push(crate::note::sources::SourceRef {
                    name: n.clone(),
                    kind: s.kind.name(),
                    waiting_for_trust: true,
                });
            }
        }
        all
    }

    /// The MCP servers `live.tools` may name without a diagnostic, sorted by name, each with
    /// its configuration when usable: those configured here (usable or not) and those of the
    /// folder's ignored `.livenote.toml` (the note is valid; its servers start once the folder
    /// is trusted).
    pub fn mcp_servers_for_notes(&self) -> Vec<(&str, Option<&McpServerConfig>)> {
        let mut all: BTreeMap<&str, Option<&McpServerConfig>> = BTreeMap::new();
        if let Some(ignored) = &self.ignored_folder {
            all.extend(ignored.would_be.mcp_servers_for_notes());
        }
        all.extend(self.broken_mcp_servers.keys().map(|n| (n.as_str(), None)));
        all.extend(self.mcp_servers.iter().map(|(n, c)| (n.as_str(), Some(c))));
        all.into_iter().collect()
    }

    /// The names of [`Config::mcp_servers_for_notes`].
    pub fn mcp_names_for_notes(&self) -> Vec<String> {
        self.mcp_servers_for_notes().into_iter().map(|(n, _)| n.to_owned()).collect()
    }

    /// The MCP servers only the folder's ignored `.livenote.toml` defines: not started until
    /// the folder is trusted.
    pub fn ignored_mcp_servers(&self) -> Vec<&str> {
        let Some(ignored) = &self.ignored_folder else { return Vec::new() };
        ignored
            .would_be
            .mcp_servers
            .keys()
            .filter(|n| !self.mcp_servers.contains_key(*n))
            .map(String::as_str)
            .collect()
    }

    pub fn provider_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .providers
            .keys()
            .chain(self.broken_providers.keys())
            .chain(self.env_providers.keys())
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The provider for notes without `provider:`; see [`Config::resolve_provider`].
    pub fn default_provider(&self) -> Option<(String, ProviderConfig)> {
        self.resolve_provider(None).ok()
    }

    /// The provider a note runs with: the note's `provider:`, else `[agent] provider`, else the
    /// only configured provider, else (nothing configured) `openai` when `OPENAI_API_KEY` is
    /// set, else `anthropic` when `ANTHROPIC_API_KEY` is set.
    pub fn resolve_provider(
        &self,
        note_provider: Option<&str>,
    ) -> Result<(String, ProviderConfig), ConfigError> {
        if let Some(name) = note_provider.or(self.agent.provider.as_deref()) {
            return self.lookup(name);
        }
        let configured: Vec<&String> = self.providers.keys().chain(self.broken_providers.keys()).collect();
        match configured.as_slice() {
            [] => ["openai", "anthropic"]
                .into_iter()
                .find_map(|n| self.env_providers.get(n).map(|p| (n.to_owned(), p.clone())))
                .ok_or(ConfigError::NoProvider),
            [only] => self.lookup(only),
            several => {
                let mut names: Vec<String> = several.iter().map(|n| n.to_string()).collect();
                names.sort_unstable();
                Err(ConfigError::AmbiguousProvider { names })
            }
        }
    }

    fn lookup(&self, name: &str) -> Result<(String, ProviderConfig), ConfigError> {
        if let Some(p) = self.providers.get(name).or_else(|| {
            // A broken definition shadows the environment's provider of the same name: the
            // user meant their own.
            if self.broken_providers.contains_key(name) { None } else { self.env_providers.get(name) }
        }) {
            return Ok((name.to_owned(), p.clone()));
        }
        if let Some(reason) = self.broken_providers.get(name) {
            return Err(ConfigError::BrokenProvider { name: name.to_owned(), reason: reason.clone() });
        }
        Err(ConfigError::UnknownProvider {
            name: name.to_owned(),
            known: self.provider_names().into_iter().map(str::to_owned).collect(),
        })
    }
}

/// The implicit providers from the usual key variables (SPEC 6: "with no config").
pub(super) fn env_providers(env: &dyn Env) -> BTreeMap<String, ProviderConfig> {
    let mut out = BTreeMap::new();
    if env.var(OPENAI_KEY_ENV).is_some() {
        let kind = ProviderKind::OpenAi(OpenAiConfig {
            base_url: DEFAULT_OPENAI_BASE_URL.to_owned(),
            model: DEFAULT_OPENAI_MODEL.to_owned(),
            api_key_env: Some(OPENAI_KEY_ENV.to_owned()),
        });
        out.insert("openai".to_owned(), ProviderConfig { kind, origin: Origin::User });
    }
    if env.var(ANTHROPIC_KEY_ENV).is_some() {
        let kind = ProviderKind::Anthropic(AnthropicConfig {
            base_url: DEFAULT_ANTHROPIC_BASE_URL.to_owned(),
            model: DEFAULT_ANTHROPIC_MODEL.to_owned(),
            api_key_env: ANTHROPIC_KEY_ENV.to_owned(),
        });
        out.insert("anthropic".to_owned(), ProviderConfig { kind, origin: Origin::User });
    }
    out
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
