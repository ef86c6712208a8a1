//! A run's call of its provider: the run request (instructions, memory, skills, MCP servers)
//! and, for model runs, each step applied through [`Steps`] before the model's next turn.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Engine {
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn call_provider(
        &self,
        spec: &RunSpec,
        rel: &str,
        text: &str,
        live: &note::model::Live,
        run_id: &str,
        now: DateTime<Utc>,
        cancel: CancellationToken,
        on_edit: &mut dyn providers::EditSink,
        on_event: &mut (dyn FnMut(&RunEvent) + Send),
    ) -> Result<providers::RunOutput, providers::ProviderError> {
        let trusted = self.trusted();
        let (name, provider, agent, mcp) = {
            let config = self
                .config
                .read()
                .map_err(|_| providers::ProviderError::Config("configuration lock poisoned".to_owned()))?;
            // The folder's untrusted `.livenote.toml` is not used; a run that needs it does not
            // start with something else instead (SPEC 7).
            let note_provider = live.provider.as_ref().map(|p| p.value.as_str());
            if let Some(ignored) = config.needs_ignored_folder(note_provider) {
                return Err(providers::ProviderError::Config(ignored.run_error(note_provider)));
            }
            let (name, p) = config
                .resolve_provider(live.provider.as_ref().map(|p| p.value.as_str()))
                .map_err(|e| providers::ProviderError::Config(e.to_string()))?;
            let manual = spec.trigger == TriggerKind::Manual;
            // MCP servers are programs, started only as `command` providers run (SPEC 7).
            let mcp = crate::mcp::select(
                &config,
                live.tool_names().as_deref(),
                spec.trigger == TriggerKind::Event,
                |server| match server.origin {
                    crate::config::Origin::User => Ok(()),
                    _ if trusted => Ok(()),
                    crate::config::Origin::Client if manual => Ok(()),
                    crate::config::Origin::Client => {
                        Err("it is named by the editor's settings and this folder is not trusted".to_owned())
                    }
                    crate::config::Origin::Workspace => {
                        Err("it comes from this folder's .livenote.toml, which is not trusted as it is now"
                            .to_owned())
                    }
                },
            );
            (name, p, config.agent.clone(), mcp)
        };
        // Loaded while the folder was trusted, but its `.livenote.toml` changed since (or its
        // trust was withdrawn): the folder's settings wait for the user's trust again.
        if provider.origin == crate::config::Origin::Workspace && !trusted {
            return Err(providers::ProviderError::Config(format!(
                "provider `{name}` comes from this folder's .livenote.toml, which is not trusted as it is now (it changed since it was loaded, or trust was withdrawn); review it, then run `livenote trust {}`",
                self.root.display()
            )));
        }
        // A program named by the editor's settings runs on its own only when trusted; a
        // manual run is the user's consent for that run.
        if provider.needs_trust() && spec.trigger != TriggerKind::Manual && !trusted {
            return Err(providers::ProviderError::Config(format!(
                "provider `{name}` is a program named by the editor's settings and this folder is not trusted (run `livenote trust {}`)",
                self.root.display()
            )));
        }
        let env = crate::config::ProcessEnv;
        let user_dir = crate::config::user_config_dir(&env);
        let home = crate::platform::home_dir(&|k| crate::config::Env::var(&env, k));
        let instructions =
            crate::instructions::load(&self.root, &agent, user_dir.as_deref(), home.as_deref(), trusted);
        let memory = self.run_memory(rel);
        // The folder's skills count only when it is trusted, like its `AGENTS.md`.
        let skill_dirs = self.config.read().map(|c| c.skills.dirs.clone()).unwrap_or_default();
        let skills = crate::skills::load(crate::skills::Sources {
            root: &self.root,
            dirs: &skill_dirs,
            workspace: trusted,
            user_dir: user_dir.as_deref(),
        });
        let (preloaded, skill_catalog, missing_skills) = skills.for_run(&live.skill_names());
        let region = agent_region(text);
        let local = now.with_timezone(&self.zone);
        let req = RunRequest {
            note_path: rel.to_owned(),
            title: frontmatter::body_title(text).map(str::to_owned),
            objective: live.objective.clone().unwrap_or_default(),
            trigger: spec.trigger,
            context: spec.context.clone(),
            event: spec.event.clone(),
            body: text[region].to_owned(),
            now,
            local_now: local.to_rfc3339_opts(SecondsFormat::Secs, false),
            time_zone: self.zone.name(),
            workspace_root: self.root.clone(),
            trusted,
            run_id: run_id.to_owned(),
            model: live.model.clone(),
            mcp_servers: mcp.servers,
            instructions: instructions.files,
            max_chars: live.max_chars.as_ref().map(|m| m.value),
            memory,
            skills: preloaded,
            skill_catalog,
        };
        on_event(&RunEvent::new("provider", format!("{name} ({})", provider.kind_name())));
        for why in &instructions.problems {
            tracing::warn!("ignore instructions {why}");
            on_event(&RunEvent::new("instructions", format!("not used: {why}")));
        }
        for (i, chars) in req.instructions.iter().filter_map(|i| Some((i, i.cut_from?))) {
            on_event(&RunEvent::new(
                "instructions",
                crate::instructions::marker(&i.file, chars, agent.instructions_max_chars),
            ));
        }
        for why in &skills.problems {
            tracing::warn!("ignore skill {why}");
            on_event(&RunEvent::new("skills", format!("not used: {why}")));
        }
        for name in &missing_skills {
            let why = if trusted { "" } else { " (this folder's skills are not used: it is not trusted)" };
            on_event(&RunEvent::new("skills", format!("not preloaded: no skill named `{name}`{why}")));
        }
        if !req.skills.is_empty() {
            let names: Vec<&str> = req.skills.iter().map(|s| s.name.as_str()).collect();
            on_event(&RunEvent::new("skills", format!("preloaded: {}", names.join(", "))));
        }
        for why in &mcp.left_out {
            on_event(&RunEvent::new("mcp", why.clone()));
        }
        if let Some(why) = &req.memory.unreadable {
            tracing::warn!("ignore memory {rel}: {why}");
            on_event(&RunEvent::new("memory", format!("not used: {why}")));
        }
        if let Some(what) = &req.memory.left_out {
            tracing::warn!("trim memory {rel}: {what}");
            on_event(&RunEvent::new("memory", what.clone()));
        }
        providers::run(&provider, &req, &agent, cancel, on_edit, on_event).await
    }

    /// The note's memory for a run (read under its lock, which every writer takes).
    pub(super) fn run_memory(&self, rel: &str) -> providers::RunMemory {
        let quotas = self.config.read().map(|c| c.memory).unwrap_or_default();
        match crate::memory::store::MemoryStore::new(&self.root).load(rel) {
            Ok(stored) => {
                let (entries, left_out) = stored.within(&quotas);
                providers::RunMemory { entries, quotas, unreadable: None, left_out }
            }
            Err(why) => providers::RunMemory { quotas, unreadable: Some(why), ..Default::default() },
        }
    }
}

/// Why a step or a result was not written: the note changed where it goes.
pub(super) const CONFLICT: &str = "the note was edited meanwhile where this change goes";

/// Applies a model run's steps to the note, each as a patch from the text the previous step
/// left (at first, the text at run start) onto the note as it is: what the user typed
/// elsewhere meanwhile stays, and a step that would touch text the user changed is not
/// written at all (the model hears so and re-reads).
pub(super) struct Steps<'a> {
    pub(super) io: &'a dyn NoteIo,
    pub(super) path: &'a Path,
    /// The note's text as the latest applied step left it.
    pub(super) base: String,
}

impl providers::EditSink for Steps<'_> {
    fn apply<'a>(&'a mut self, body: &'a str) -> providers::BoxFuture<'a, providers::EditReply> {
        use providers::EditReply;
        Box::pin(async move {
            if let Some(at) = body.find('\0') {
                return EditReply::Refused {
                    message: format!(
                        "the text holds a NUL byte (at byte {at}); binary data cannot go into a note"
                    ),
                    body: None,
                };
            }
            let patch = Patch::compute(&self.base, body);
            if patch.is_empty() {
                return EditReply::Applied(None);
            }
            let conflict = std::sync::atomic::AtomicBool::new(false);
            let applied = self
                .io
                .apply(self.path, &|t: &str| {
                    let r = patch.apply_to(t);
                    if r.conflicts > 0 {
                        conflict.store(true, std::sync::atomic::Ordering::Relaxed);
                        return Err(CONFLICT.to_owned());
                    }
                    Ok(r.edits)
                })
                .await;
            match applied {
                Ok(text) => {
                    let region = text[agent_region(&text)].to_owned();
                    self.base = text;
                    EditReply::Applied(Some(region))
                }
                Err(e) if conflict.load(std::sync::atomic::Ordering::Relaxed) => {
                    tracing::info!("edit {}: {e}; the model is told to re-read", self.path.display());
                    let now = self.io.read(self.path).ok();
                    let body = now.as_deref().map(|t| t[agent_region(t)].to_owned());
                    if let Some(t) = now {
                        self.base = t;
                    }
                    EditReply::Refused {
                        message: format!("{CONFLICT} (by the user or another program)"),
                        body,
                    }
                }
                Err(e) => EditReply::Failed(e),
            }
        })
    }
}
