//! What each tool of `livenote mcp` does, without the protocol: the workspace's notes read,
//! rewritten and run through the code the command line and the editor use. Every answer is
//! JSON; every refusal a message for the assistant, with nothing written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::changes::Change;
use super::paths::{self, Found, PathError};
use crate::config::Config;
use crate::note::rewrite::{self, TriggerEdits};
use crate::note::{self, Severity};
use crate::providers::{RunEvent, TriggerKind};
use crate::runs::{DiskIo, Engine, Outcome, RunSpec};
use crate::schedule::{Clock, SystemClock, Zone};
use crate::survey;
use crate::text::TextEdit;
use crate::text::edit::apply;
use crate::workspace::{self, NotePath, trust::TrustStore};

/// The workspace a `livenote mcp` serves.
pub struct Workspace {
    /// Canonical, so that links are judged against the real folder.
    pub root: PathBuf,
    engine: Arc<Engine>,
    /// The engines of folders inside with their own `.livenote.toml` (roots of their own:
    /// their configuration, trust and state), made when a tool first needs one.
    nested: std::sync::Mutex<std::collections::HashMap<PathBuf, Arc<Engine>>>,
}

/// How long `stop_run` waits for another process's run to let go of the note.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A refusal, shown to the assistant as a tool error.
pub type Refusal = String;

impl From<PathError> for Refusal {
    fn from(e: PathError) -> Refusal {
        e.to_string()
    }
}

/// `make_live`'s arguments, checked.
#[derive(Debug, Clone, Default)]
pub struct MakeLive {
    pub path: String,
    pub objective: String,
    pub triggers: TriggerEdits,
    /// One sentence for the configured model to draft the block from (`livenote make-live
    /// --describe`), instead of `objective` and `triggers`.
    pub describe: Option<String>,
}

impl Workspace {
    /// Serve `root` (an existing folder), with the system clock and the local zone.
    pub fn open(root: &Path) -> std::io::Result<Workspace> {
        Ok(Workspace::with_clock(&std::fs::canonicalize(root)?, Arc::new(SystemClock)))
    }

    /// [`Workspace::open`] with a clock (tests); `root` must be canonical.
    pub fn with_clock(root: &Path, clock: Arc<dyn Clock>) -> Workspace {
        let engine = Engine::new(
            root,
            clock,
            Zone::Local,
            Arc::new(DiskIo),
            Config::load_logged(root),
            TrustStore::user(),
        );
        Workspace { root: root.to_path_buf(), engine: Arc::new(engine), nested: Default::default() }
    }

    /// The engine of the root owning `file` ([`workspace::roots::owner`]): the workspace's, or
    /// that of a folder inside it with its own `.livenote.toml`.
    fn engine_of(&self, file: &Path) -> Arc<Engine> {
        let owner = workspace::roots::owner(&self.root, file);
        if owner == self.root {
            return self.engine.clone();
        }
        let mut nested = self.nested.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        nested
            .entry(owner)
            .or_insert_with_key(|owner| {
                Arc::new(Engine::new(
                    owner,
                    self.engine.clock.clone(),
                    self.engine.zone,
                    Arc::new(DiskIo),
                    Config::load_logged(owner),
                    TrustStore::user(),
                ))
            })
            .clone()
    }

    /// The configuration of `engine`'s root as it is now: the user may have trusted the
    /// folder, or changed a file, since the last call.
    fn reload_config(engine: &Engine) {
        let config = Config::load_logged(&engine.root);
        if let Ok(mut c) = engine.config.write() {
            *c = config;
        }
    }

    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.engine.clock.now()
    }

    /// `list_live_notes`: what `livenote list --format json` prints.
    pub fn list_live_notes(&self) -> Value {
        let listing = survey::live_notes(&self.root, self.now(), &Zone::Local);
        json!(listing.items)
    }

    /// `note_status`: the note's list item with its objective, or `live: false`.
    pub fn note_status(&self, path: &str) -> Result<Value, Refusal> {
        let rel = paths::parse(path)?;
        let file = paths::existing(&self.root, &rel)?;
        let text = read(&file, &rel)?;
        Ok(self.status_of(&rel, &file, &text))
    }

    fn status_of(&self, rel: &NotePath, file: &Path, text: &str) -> Value {
        let facts = survey::Facts::of(&workspace::roots::owner(&self.root, file)).shown_from(&self.root);
        let analysis = note::analyze(text, &note::Options::default());
        let heading = note::frontmatter::body_title(text);
        match (facts.item(file, text, heading, self.now(), &Zone::Local), analysis.live) {
            (Some(item), Some(live)) => {
                let mut v = json!(item);
                if let Some(o) = v.as_object_mut() {
                    o.insert("live".into(), json!(true));
                    o.insert("objective".into(), json!(live.objective));
                    o.insert("provider".into(), json!(live.provider.map(|p| p.value)));
                    o.insert("model".into(), json!(live.model));
                }
                v
            }
            _ => json!({ "path": rel.as_str(), "live": false }),
        }
    }

    /// `make_live`: a passive note (or a new one) gets a `live:` block, a live one its
    /// objective and the triggers given; refused, with nothing written, when the note would
    /// have errors.
    pub async fn make_live(&self, args: &MakeLive) -> Result<Value, Refusal> {
        let rel = paths::parse(&args.path)?;
        if args.describe.is_none() && args.objective.trim().is_empty() {
            return Err("`objective` is empty: say what the note should keep being".to_owned());
        }
        let found = paths::resolve(&self.root, &rel)?;
        let engine = self.engine_of(match &found {
            Found::Note(f) | Found::Missing(f) => f,
        });
        Self::reload_config(&engine);
        let known = Self::known(&engine);
        let new_text = |file: &Path| {
            let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            format!("# {stem}\n")
        };
        // The model is asked once, about the note as it is now; its reply is checked again
        // against the text the edit is made on.
        let reply = match &args.describe {
            Some(sentence) => {
                let text = match &found {
                    Found::Note(file) => read(file, &rel)?,
                    Found::Missing(file) => new_text(file),
                };
                let config = engine.config.read().map(|c| c.clone()).unwrap_or_default();
                let cancel = CancellationToken::new();
                Some(crate::authoring::ask(&config, &known, &text, sentence, cancel).await)
            }
            None => None,
        };
        let drafted = std::sync::Mutex::new(None);
        let compute = |text: &str| -> Result<Vec<TextEdit>, String> {
            let edits = match (&args.describe, &reply) {
                (Some(sentence), Some(reply)) => {
                    let written = note::draft::choose(text, sentence, reply.clone(), &known.options())
                        .map_err(|e| format!("refused, nothing was written: {e}"))?;
                    let edits = written.edits.clone();
                    if let Ok(mut d) = drafted.lock() {
                        *d = Some(written);
                    }
                    edits
                }
                _ => rewrite::make_live_with(text, &args.objective, &args.triggers)
                    .map_err(|e| e.to_string())?,
            };
            let after = apply(text, &edits).map_err(|e| e.to_string())?;
            let errors = self.diagnostics(&rel, &after, &known, Some(Severity::Error));
            if !errors.is_empty() {
                return Err(format!(
                    "refused, nothing was written: the note would have errors:\n{}",
                    lines(&errors)
                ));
            }
            Ok(edits)
        };
        let (file, created) = match found {
            Found::Note(file) => {
                self.edit(&file, &rel, &compute).await?;
                (file, false)
            }
            Found::Missing(file) => {
                if !paths::creatable(&rel) {
                    return Err(PathError::NotMarkdown(rel.into_string()).into());
                }
                let text = new_text(&file);
                let new = apply(&text, &compute(&text)?).map_err(|e| e.to_string())?;
                let _lock = engine.lock_for_edit(&file)?;
                create(&self.root, &rel, &file, &new)?;
                tracing::info!("create {rel}");
                (file, true)
            }
        };
        tracing::info!("make live {rel}");
        let text = read(&file, &rel)?;
        let mut answer = json!({
            "path": rel.as_str(),
            "created": created,
            "diagnostics": self.diagnostics(&rel, &text, &known, None),
            "status": self.status_of(&rel, &file, &text),
        });
        let drafted = drafted.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let (Some(w), Some(o)) = (drafted, answer.as_object_mut()) {
            if let Some(why) = &w.fallback {
                tracing::info!("make live {rel}: the template, not a draft: {why}");
            }
            o.insert(
                "draft".into(),
                json!({
                    "drafted": w.fallback.is_none(),
                    "fallback": w.fallback,
                    "objective": w.draft.objective,
                    "triggers": note::draft::describe_triggers(&w.draft),
                    // What changed, in words: a live note is extended, and the user reads how.
                    "wasLive": w.change.was_live(),
                    "changes": w.change.describe(),
                }),
            );
        }
        Ok(answer)
    }

    /// `set_active`: pause or resume a live note.
    pub async fn set_active(&self, path: &str, active: bool) -> Result<Value, Refusal> {
        self.change(path, &[Change::SetActive(active)]).await
    }

    /// `make_passive`: remove the `live:` block; the body stays.
    pub async fn make_passive(&self, path: &str) -> Result<Value, Refusal> {
        self.change(path, &[Change::MakePassive]).await
    }

    /// `extend_objective`: the objective with `addition` said too; the user's words stay.
    pub async fn extend_objective(&self, path: &str, addition: &str) -> Result<Value, Refusal> {
        self.change(path, &[Change::ExtendObjective(addition.to_owned())]).await
    }

    /// `set_triggers`: the triggers given replaced, the others kept.
    pub async fn set_triggers(&self, path: &str, triggers: TriggerEdits) -> Result<Value, Refusal> {
        self.change(path, &[Change::SetTriggers(triggers)]).await
    }

    /// `changes` made to an existing note, in order, as one write under its lock (replayed on
    /// the note as it is then); refused, with nothing written, when one of them cannot be made
    /// or the result has an error the note did not have. Answers the note's status.
    pub async fn change(&self, path: &str, changes: &[Change]) -> Result<Value, Refusal> {
        let rel = paths::parse(path)?;
        let file = paths::existing(&self.root, &rel)?;
        let engine = self.engine_of(&file);
        Self::reload_config(&engine);
        let known = Self::known(&engine);
        let compute = |text: &str| super::changes::checked(text, changes, &known.options()).map(|(e, _)| e);
        let text = self.edit(&file, &rel, &compute).await?;
        let names: Vec<&str> = changes.iter().map(Change::tool).collect();
        tracing::info!("{} {rel}", names.join(", ").replace('_', " "));
        Ok(self.status_of(&rel, &file, &text))
    }

    /// `stop_run`: stop the note's run, whichever livenote process holds it, and wait (a few
    /// seconds at most) for it to let go, as `livenote stop` does.
    pub async fn stop(&self, path: &str) -> Result<Value, Refusal> {
        let rel = paths::parse(path)?;
        let file = paths::existing(&self.root, &rel)?;
        let engine = self.engine_of(&file);
        // A run of this process is cancelled; another process's is asked beside the note's lock.
        if !engine.is_running(&file) || !engine.stop(&file) {
            return Err(format!("`{rel}` is not running"));
        }
        let deadline = tokio::time::Instant::now() + STOP_WAIT;
        while tokio::time::Instant::now() < deadline {
            if !engine.is_running(&file) {
                tracing::info!("stop {rel}");
                return Ok(json!({ "path": rel.as_str(), "stopped": true }));
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        Ok(json!({ "path": rel.as_str(), "stopped": false, "stopRequested": true }))
    }

    /// `note_history`: the note's runs, newest first (at most `limit`), as `livenote history
    /// --format json` gives them: outcome, summary or error, lines added and removed.
    pub fn history(&self, path: &str, limit: Option<usize>) -> Result<Value, Refusal> {
        let rel = paths::parse(path)?;
        let file = paths::existing(&self.root, &rel)?;
        let mut runs = self.engine_of(&file).history(&file);
        runs.truncate(limit.unwrap_or(usize::MAX));
        Ok(json!({ "path": rel.as_str(), "runs": runs }))
    }

    /// Apply `compute`'s edits to the note under its lock (recomputed if the note changes
    /// meanwhile); answers the note's new text. Tried on the note as it is first, so that a
    /// refusal leaves no trace at all (not even the lock's file).
    async fn edit(
        &self,
        file: &Path,
        rel: &NotePath,
        compute: &(dyn Fn(&str) -> Result<Vec<TextEdit>, String> + Send + Sync),
    ) -> Result<String, Refusal> {
        compute(&read(file, rel)?)?;
        let engine = self.engine_of(file);
        let _lock = engine.lock_for_edit(file)?;
        engine.io.apply(file, compute).await
    }

    /// `undo_last_run`: restore the body from before the latest run that changed it, as
    /// `livenote undo` does (refused when the body was edited since).
    pub async fn undo_last_run(&self, path: &str) -> Result<Value, Refusal> {
        let rel = paths::parse(path)?;
        let file = paths::existing(&self.root, &rel)?;
        let done = self.engine_of(&file).undo_last_run(&file, false).await.map_err(|e| e.to_string())?;
        Ok(json!({ "path": rel.as_str(), "undid": done.undid, "undoRunId": done.id }))
    }

    /// `run_note`: run the note now and wait for its outcome, as `livenote run` does (the
    /// folder's configuration only if trusted). `cancel` stops the run.
    pub async fn run_note(
        &self,
        path: &str,
        context: Option<String>,
        cancel: CancellationToken,
    ) -> Result<Value, Refusal> {
        let rel = paths::parse(path)?;
        let file = paths::existing(&self.root, &rel)?;
        let engine = self.engine_of(&file);
        Self::reload_config(&engine);
        if let Some(error) = engine.needs_trust(&file) {
            return Err(format!("nothing ran: {error}"));
        }
        let spec = RunSpec { path: file.clone(), trigger: TriggerKind::Manual, context, event: None };
        let mut log = |e: &RunEvent| tracing::info!("{} {rel}: {}", e.kind, e.message);
        let run = engine.run(spec, &mut log);
        tokio::pin!(run);
        let outcome = tokio::select! {
            o = &mut run => o,
            () = cancel.cancelled() => {
                engine.stop(&file);
                run.await
            }
        };
        match outcome {
            Outcome::Done { run_id, summary } => {
                Ok(json!({ "path": rel.as_str(), "outcome": "done", "runId": run_id, "summary": summary }))
            }
            Outcome::Failed { run_id, error } => Err(format!("run {run_id} failed: {error}")),
            Outcome::Stopped { run_id } => Err(format!("run {run_id} was stopped")),
            Outcome::Skipped(reason) => Err(format!("nothing ran: {reason}")),
        }
    }

    /// The configuration of the root owning the note at `path` as it is now (the folder's only
    /// when trusted), the names a note there may use, and the machine's name: what `livenote
    /// ask` asks its model with and checks the changes against.
    pub fn setting(&self, path: &str) -> Result<(Config, survey::Known, String), Refusal> {
        let rel = paths::parse(path)?;
        let file = paths::existing(&self.root, &rel)?;
        let engine = self.engine_of(&file);
        Self::reload_config(&engine);
        let config = engine.config.read().map(|c| c.clone()).unwrap_or_default();
        Ok((config, Self::known(&engine), engine.machine()))
    }

    /// `check`: the diagnostics of one note, or of every note of the workspace, as
    /// `livenote check --format json` gives them, with the counts.
    pub fn check(&self, path: Option<&str>) -> Result<Value, Refusal> {
        let target = match path {
            Some(p) => paths::existing(&self.root, &paths::parse(p)?)?,
            None => self.root.clone(),
        };
        let root = self.root.clone();
        let checked =
            survey::check(&[target], self.now(), &self.engine.zone, &|p: &Path| survey::shown_in(p, &root));
        Ok(json!({
            "checked": checked.checked,
            "errors": checked.errors,
            "warnings": checked.warnings,
            "skipped": checked.skipped,
            "diagnostics": checked.items,
        }))
    }

    /// The `make_live_note` prompt for `request` (about the note at `path`, when given).
    pub fn prompt(&self, request: &str, path: Option<&str>) -> String {
        let zone = Zone::Local;
        let now = self.now().with_timezone(&zone).format("%Y-%m-%d %H:%M (%A)").to_string();
        super::prompt::make_live_note(&super::prompt::Setting {
            request,
            path,
            zone: &zone.name(),
            now: &now,
        })
    }

    /// The live notes as resources: `(uri, path, title)`.
    pub fn resources(&self) -> Vec<(String, String, String)> {
        survey::live_notes(&self.root, self.now(), &Zone::Local)
            .items
            .into_iter()
            .map(|i| (paths::resource_uri(&i.path), i.path, i.title))
            .collect()
    }

    /// The text of the note a `livenote://` URI names.
    pub fn read_resource(&self, uri: &str) -> Result<String, Refusal> {
        let rel = paths::from_resource_uri(uri)?;
        let file = paths::existing(&self.root, &rel)?;
        read(&file, &rel)
    }

    fn known(engine: &Engine) -> survey::Known {
        match engine.config.read() {
            Ok(c) => survey::Known::of(&c).with_skills(&engine.root),
            Err(_) => survey::Known {
                providers: Vec::new(),
                mcp: Default::default(),
                agent: Default::default(),
                skill_dirs: Vec::new(),
                skills: None,
                sources: Vec::new(),
            },
        }
    }

    /// The note's diagnostics as `livenote check` reports them (all, or those of one severity).
    fn diagnostics(
        &self,
        rel: &NotePath,
        text: &str,
        known: &survey::Known,
        only: Option<Severity>,
    ) -> Vec<survey::Item> {
        let analysis = note::analyze(text, &known.options());
        let wanted: Vec<_> =
            analysis.diagnostics.into_iter().filter(|d| only.is_none_or(|s| d.severity == s)).collect();
        survey::items(rel.as_str(), text, &wanted)
    }
}

/// `line:column: severity code message`, one a line.
fn lines(items: &[survey::Item]) -> String {
    items
        .iter()
        .map(|i| format!("{}:{}: {} {} {}", i.line, i.column, i.severity, i.code, i.message))
        .collect::<Vec<_>>()
        .join("\n")
}

fn read(file: &Path, rel: &NotePath) -> Result<String, Refusal> {
    workspace::read_note(file).map_err(|e| format!("cannot read `{rel}`: {e}"))
}

/// Create the note at `file` with `text`: its missing folders first (never through a link),
/// then the file itself, atomically and never over something that appeared meanwhile.
fn create(root: &Path, rel: &NotePath, file: &Path, text: &str) -> Result<(), Refusal> {
    let parent = Path::new(rel.as_str()).parent().unwrap_or(Path::new(""));
    // The folders that exist were checked to be inside; only the new ones are made here.
    let existing = parent.ancestors().find(|a| root.join(a).is_dir()).unwrap_or(Path::new(""));
    let missing = parent.strip_prefix(existing).unwrap_or(Path::new(""));
    let base =
        std::fs::canonicalize(root.join(existing)).map_err(|e| format!("cannot create `{rel}`: {e}"))?;
    workspace::confine::real_dir(&base, missing, true).map_err(|e| format!("cannot create `{rel}`: {e}"))?;
    workspace::write::create_new(file, text).map_err(|e| format!("cannot create `{rel}`: {e}"))
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
