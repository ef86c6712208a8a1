//! What each tool of `livenote mcp` does, without the protocol: the workspace's notes read,
//! rewritten and run through the code the command line and the editor use. Every answer is
//! JSON; every refusal a message for the assistant, with nothing written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

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
        self.rewrite(path, &|t: &str| rewrite::set_active(t, active).map_err(live_only)).await
    }

    /// `make_passive`: remove the `live:` block; the body stays.
    pub async fn make_passive(&self, path: &str) -> Result<Value, Refusal> {
        self.rewrite(path, &|t: &str| rewrite::make_passive(t).map_err(live_only)).await
    }

    /// A rewrite of an existing note's frontmatter under its lock; answers its status.
    async fn rewrite(
        &self,
        path: &str,
        compute: &(dyn Fn(&str) -> Result<Vec<TextEdit>, String> + Send + Sync),
    ) -> Result<Value, Refusal> {
        let rel = paths::parse(path)?;
        let file = paths::existing(&self.root, &rel)?;
        let text = self.edit(&file, &rel, compute).await?;
        tracing::info!("rewrite {rel}");
        Ok(self.status_of(&rel, &file, &text))
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

/// Why a rewrite of a live note's block failed; a note without frontmatter is just not live.
fn live_only(e: rewrite::RewriteError) -> String {
    match e {
        rewrite::RewriteError::NoFrontmatter => rewrite::RewriteError::NotLive.to_string(),
        e => e.to_string(),
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
mod tests {
    use super::*;

    /// A workspace in a temp folder with `files`, its clock frozen.
    fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        for (rel, text) in files {
            let path = root.join(rel);
            if let Some(d) = path.parent() {
                std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
            }
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        }
        let clock = crate::schedule::ManualClock::new(
            "2026-11-25T08:00:00Z".parse().unwrap_or_else(|e| panic!("{e}")),
        );
        let ws = Workspace::with_clock(&root, Arc::new(clock));
        (dir, ws)
    }

    /// Every path under the workspace, sorted (`.livenote/` included).
    fn tree(ws: &Workspace) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![ws.root.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                out.push(survey::shown_in(&p, &ws.root));
                if p.is_dir() {
                    stack.push(p);
                }
            }
        }
        out.sort();
        out
    }

    fn make_live(path: &str, cron: Option<&str>, windows: &[(&str, &str)]) -> MakeLive {
        MakeLive {
            path: path.to_owned(),
            objective: "Keep it current.".to_owned(),
            triggers: TriggerEdits {
                cron_expr: cron.map(str::to_owned),
                windows: (!windows.is_empty())
                    .then(|| windows.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()),
                event_match_criteria: None,
            },
            describe: None,
        }
    }

    #[tokio::test]
    async fn refusals_leave_no_trace() {
        let (_d, ws) = workspace(&[("a.md", "# A\n")]);
        let before = tree(&ws);
        let err = ws.make_live(&make_live("a.md", Some("0 25 * * *"), &[])).await;
        assert!(err.as_ref().is_err_and(|e| e.contains("live/invalid-cron")), "{err:?}");
        let err = ws.make_live(&make_live("new/deep/b.md", None, &[("10:00", "09:00")])).await;
        assert!(err.as_ref().is_err_and(|e| e.contains("error live/")), "{err:?}");
        let err = ws.make_live(&MakeLive { objective: " ".into(), ..make_live("a.md", None, &[]) }).await;
        assert!(err.as_ref().is_err_and(|e| e.contains("`objective` is empty")), "{err:?}");
        let err = ws.make_live(&make_live("new.markdown", None, &[])).await;
        assert_eq!(err, Err("`new.markdown` is not a markdown note (`.md`)".to_owned()));
        let err = ws.set_active("a.md", false).await;
        assert_eq!(err, Err("this note is not live (it has no `live:` block)".to_owned()));
        assert_eq!(ws.note_status("a.md"), Ok(json!({"path": "a.md", "live": false})));
        assert_eq!(tree(&ws), before);
        assert_eq!(std::fs::read_to_string(ws.root.join("a.md")).ok().as_deref(), Some("# A\n"));
    }

    /// Issue 21: a note without `title:` is named by its first `# ` heading, as everywhere.
    #[tokio::test]
    async fn notes_are_named_by_their_heading_without_a_title_key() {
        let (_d, ws) = workspace(&[
            ("reading-stats.md", "---\nlive:\n  objective: count\n---\n\n# Reading list statistics\n"),
            ("clock.md", "---\ntitle: Chicago time\nlive:\n  objective: time\n---\n# Clock\n"),
            ("bare.md", "---\nlive:\n  objective: x\n---\nno heading\n"),
        ]);
        let list = ws.list_live_notes();
        let titles: Vec<(&str, &str)> = list
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| (i["path"].as_str().unwrap_or(""), i["title"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(
            titles,
            [
                ("bare.md", "bare"),
                ("clock.md", "Chicago time"),
                ("reading-stats.md", "Reading list statistics")
            ]
        );
        let status = ws.note_status("reading-stats.md").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(status["title"], "Reading list statistics", "{status}");
        let resources = ws.resources();
        assert!(resources.iter().any(|(_, p, t)| p == "reading-stats.md" && t == "Reading list statistics"));
    }

    #[tokio::test]
    async fn a_new_note_gets_its_folders_a_title_and_the_block() {
        let (_d, ws) = workspace(&[]);
        let answer = ws.make_live(&make_live("notes/daily/Today.md", None, &[("07:00", "09:00")])).await;
        let answer = answer.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(answer["created"], true);
        assert_eq!(answer["status"]["title"], "Today");
        let text = std::fs::read_to_string(ws.root.join("notes/daily/Today.md")).unwrap_or_default();
        assert_eq!(
            text,
            "---\nlive:\n  objective: \"Keep it current.\"\n  triggers:\n    windows:\n      - startTime: \"07:00\"\n        endTime: \"09:00\"\n---\n# Today\n"
        );
        // Made again: the block is replaced in place, and nothing else changes.
        let again = ws.make_live(&make_live("notes/daily/Today.md", Some("@hourly"), &[])).await;
        assert_eq!(again.map(|a| a["created"].clone()), Ok(json!(false)));
        let text2 = std::fs::read_to_string(ws.root.join("notes/daily/Today.md")).unwrap_or_default();
        // A trigger the block lacks goes after those it has.
        assert_eq!(text2, text.replace("---\n# Today", "    cronExpr: \"@hourly\"\n---\n# Today"));
    }

    #[tokio::test]
    async fn rewrites_wait_for_a_run_to_end() {
        let note = "---\nlive:\n  objective: x\n---\n# X\n";
        let (_d, ws) = workspace(&[("x.md", note)]);
        // Another process runs the note: it holds the note's lock.
        let held = ws.engine.store.try_lock("x.md").ok().flatten();
        assert!(held.is_some());
        let busy = ws.set_active("x.md", false).await;
        assert!(busy.as_ref().is_err_and(|e| e.starts_with("the note is updating")), "{busy:?}");
        let busy = ws.make_live(&make_live("x.md", Some("@daily"), &[])).await;
        assert!(busy.is_err(), "{busy:?}");
        assert_eq!(std::fs::read_to_string(ws.root.join("x.md")).ok().as_deref(), Some(note));
        drop(held);
        let paused = ws.set_active("x.md", false).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(paused["status"], "paused");
        let passive = ws.make_passive("x.md").await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(passive, json!({"path": "x.md", "live": false}));
        assert_eq!(std::fs::read_to_string(ws.root.join("x.md")).ok().as_deref(), Some("# X\n"));
    }

    /// A folder inside with its own `.livenote.toml` is a root of its own: its notes are listed
    /// and edited with its state (here: a run of the inner root holds the note's lock in
    /// `inner/.livenote/`), not the workspace's.
    #[tokio::test]
    async fn a_nested_root_keeps_its_own_state() {
        let note = "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Inner\n";
        let (_d, ws) = workspace(&[
            ("inner/.livenote.toml", "[agent]\n"),
            ("inner/n.md", note),
            ("outer.md", &note.replace("# Inner", "# Outer")),
        ]);
        let inner = crate::runs::Store::new(&ws.root.join("inner"));
        let _lock = inner.try_lock("n.md").ok().flatten().unwrap_or_else(|| panic!("no lock"));
        let listed = ws.list_live_notes();
        let status = |path: &str| {
            listed.as_array().into_iter().flatten().find(|i| i["path"] == path).map(|i| i["status"].clone())
        };
        assert_eq!(status("inner/n.md"), Some(json!("running")), "{listed}");
        assert_ne!(status("outer.md"), Some(json!("running")), "{listed}");
        assert_eq!(ws.note_status("inner/n.md").map(|v| v["status"].clone()), Ok(json!("running")));
        let err = ws.set_active("inner/n.md", false).await;
        assert!(err.as_ref().is_err_and(|e| e.contains("the note is updating")), "{err:?}");
        assert!(std::fs::read_to_string(ws.root.join("inner/n.md")).is_ok_and(|t| t == note));
    }
}
