//! `livenote watch [DIR]`: the headless scheduler for when no editor is open. Indexes the
//! folder, follows file changes with `notify`, fires due notes and logs one line per
//! fire/skip/done/failed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use tokio::sync::Notify;

use crate::config::Config;
use crate::runs::{DiskIo, Engine};
use crate::schedule::{Clock, SystemClock, Zone};
use crate::scheduler::NoteSource;
use crate::triggers::RootService;
use crate::triggers::watcher::Seen;
use crate::workspace::index::{Entry, Index};
use crate::workspace::trust::TrustStore;

/// The index behind a lock, as the scheduler's source of notes: the live notes its root owns
/// (a folder inside with its own `.livenote.toml` has its own scheduler).
pub struct IndexSource {
    pub index: Arc<RwLock<Index>>,
    pub root: PathBuf,
}

impl NoteSource for IndexSource {
    fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)> {
        let idx = self.index.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        idx.live_notes_of(&self.root).map(|(p, e, _)| (p.clone(), e.clone())).collect()
    }
}

/// A clock read from a file holding an RFC 3339 instant: lets end-to-end tests move several
/// processes through time together. Falls back to the system clock if the file is unreadable.
pub struct FileClock(pub PathBuf);

impl Clock for FileClock {
    fn now(&self) -> DateTime<Utc> {
        std::fs::read_to_string(&self.0)
            .ok()
            .and_then(|s| DateTime::parse_from_rfc3339(s.trim()).ok())
            .map_or_else(Utc::now, |t| t.with_timezone(&Utc))
    }

    fn poll_interval(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_millis(50))
    }
}

pub fn clock(clock_file: Option<PathBuf>) -> Arc<dyn Clock> {
    match clock_file {
        Some(f) => Arc::new(FileClock(f)),
        None => Arc::new(SystemClock),
    }
}

pub fn run(dir: Option<PathBuf>, clock_file: Option<PathBuf>) -> Result<u8> {
    let root = crate::workspace::given::folder_or_note(&dir.unwrap_or_else(|| PathBuf::from(".")))?;
    runtime()?.block_on(watch(root, clock(clock_file)))
}

/// The runtime `watch` and `tick` run their scheduler, events and runs in.
pub(super) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("start the async runtime")
}

/// The folder walked: its notes and those of every folder inside with its own
/// `.livenote.toml` (a root of its own), each root's `[scheduler] exclude` from its own
/// configuration (`configs`, loaded once per root and kept for its engine).
pub(super) fn build_index(root: &Path, configs: &mut Vec<(PathBuf, Config)>, said: &Saids) -> Index {
    let config_of = |configs: &mut Vec<(PathBuf, Config)>, r: &Path| {
        if !configs.iter().any(|(c, _)| c == r) {
            configs.push((r.to_path_buf(), load_config(r, said)));
        }
    };
    config_of(configs, root);
    let excludes = |configs: &[(PathBuf, Config)]| -> Vec<(PathBuf, Vec<String>)> {
        configs.iter().map(|(r, c)| (r.clone(), c.scheduler.exclude.clone())).collect()
    };
    let (mut index, mut problems) = Index::build_per_root(&excludes(configs));
    let found: Vec<PathBuf> = index.roots().to_vec();
    let known = configs.len();
    for r in &found {
        config_of(configs, r);
    }
    configs.retain(|(r, _)| found.contains(r));
    // A nested root found now whose own config excludes notes: walk again with its excludes.
    if configs.len() > known && configs.iter().any(|(_, c)| !c.scheduler.exclude.is_empty()) {
        (index, problems) = Index::build_per_root(&excludes(configs));
    }
    for p in problems {
        tracing::warn!("skip {p}");
    }
    let caps: Vec<_> = configs.iter().map(|(r, c)| (r.clone(), c.scheduler.backoff_cap())).collect();
    index.set_backoff_caps(&caps);
    index
}

/// Each service's `[scheduler] max_backoff` into the index, after a root's configuration
/// reloaded (its scheduler reads the index's notes).
fn set_backoff_caps(index: &RwLock<Index>, services: &[Arc<RootService>]) {
    let caps: Vec<_> = services
        .iter()
        .filter_map(|s| {
            s.engine.config.read().ok().map(|c| (s.engine.root.clone(), c.scheduler.backoff_cap()))
        })
        .collect();
    if let Ok(mut i) = index.write() {
        i.set_backoff_caps(&caps);
    }
}

/// What `watch` last said about each root (see [`Said`]), shared by the start and the file
/// events that reload a root's configuration.
pub(super) type Saids = std::sync::Mutex<std::collections::HashMap<PathBuf, Said>>;

fn said_of<'a>(saids: &'a mut std::collections::HashMap<PathBuf, Said>, root: &Path) -> &'a mut Said {
    saids.entry(root.to_path_buf()).or_default()
}

/// A root's configuration, its problems said once (not again at each reload that finds them).
fn load_config(root: &Path, said: &Saids) -> Config {
    let (config, problems) = Config::load(Some(root), None);
    let mut saids = said.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    said_of(&mut saids, root).config(&config, &problems);
    config
}

/// Whether `engine`'s root runs notes on its own, said when that changes (and at start when
/// it does not).
pub(super) fn say_folder(engine: &Engine, said: &Saids) {
    let mut saids = said.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    said_of(&mut saids, &engine.root).folder(engine);
}

/// The scheduler and event processor of one root, wired as the language server wires them.
fn start_root(
    root: &Path,
    config: Config,
    clock: &Arc<dyn Clock>,
    index: &Arc<RwLock<Index>>,
    said: &Saids,
    hub: &Arc<crate::notify::Hub>,
) -> Arc<RootService> {
    let engine =
        Arc::new(Engine::new(root, clock.clone(), Zone::Local, Arc::new(DiskIo), config, TrustStore::user()));
    set_hub(&engine, hub);
    say_folder(&engine, said);
    let notes = event_notes(&engine, index);
    let source = IndexSource { index: index.clone(), root: root.to_path_buf() };
    Arc::new(RootService::start(engine, Arc::new(source), notes, Arc::new(Notify::new())))
}

/// Every root's runs tell one [`crate::notify::Hub`] of the process: one digest for all.
pub(super) fn set_hub(engine: &Engine, hub: &Arc<crate::notify::Hub>) {
    if let Ok(mut n) = engine.notify.write() {
        *n = Some(hub.clone());
    }
}

/// The notes events of `engine`'s root may go to, from the index as it is when asked.
pub(super) fn event_notes(engine: &Engine, index: &Arc<RwLock<Index>>) -> crate::events::NotesFn {
    let (root, index, clock, zone) = (engine.root.clone(), index.clone(), engine.clock.clone(), engine.zone);
    Arc::new(move || {
        let idx = index.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        crate::events::eligible_notes(&root, &idx, clock.now(), &zone)
    })
}

/// Whether a changed `path` makes or unmakes a root inside `root`: a `.livenote.toml` of a
/// folder below it that is not a root yet, or of a nested root that has none any more.
fn changes_roots(root: &Path, roots: &[PathBuf], path: &Path) -> bool {
    let Some(dir) = path.parent() else { return false };
    path.file_name().is_some_and(|n| n == crate::workspace::trust::CONFIG_FILE)
        && dir != root
        && dir.starts_with(root)
        && roots.iter().any(|r| r == dir) != crate::workspace::roots::has_config(dir)
}

async fn watch(root: PathBuf, clock: Arc<dyn Clock>) -> Result<u8> {
    // Before any run can start: a signal then still ends the runs' programs.
    let mut shutdown = super::signal::Shutdown::listen();
    // Watching first: a change made while the folder is walked is not lost (it waits in the
    // channel), and once `watch` says it watches, it does.
    let trust_store = TrustStore::user();
    let trust_file = trust_store.as_ref().map(TrustStore::file);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Seen>();
    let mut watcher = crate::triggers::watcher::watcher(tx).context("start the file watcher")?;
    notify::Watcher::watch(&mut watcher, &root, notify::RecursiveMode::Recursive)
        .with_context(|| format!("watch {}", root.display()))?;
    if let Some(dir) = trust_file.as_ref().and_then(|t| t.parent().map(Path::to_path_buf)) {
        let _ = std::fs::create_dir_all(&dir);
        let _ = notify::Watcher::watch(&mut watcher, &dir, notify::RecursiveMode::NonRecursive);
    }
    let said: Arc<Saids> = Arc::default();
    let mut configs = Vec::new();
    let index = build_index(&root, &mut configs, &said);
    let live = index.live_notes().count();
    tracing::info!("watch {}: {}, {live} live", root.display(), crate::text::count(index.len(), "note"));
    for r in index.roots().iter().filter(|r| **r != root) {
        tracing::info!(
            "root {}: a folder with its own .livenote.toml, run with its own configuration",
            r.display()
        );
    }
    let index = Arc::new(RwLock::new(index));
    // Desktop notifications (`[notify] desktop`), the first of a minute at once.
    let hub = crate::notify::Hub::new(clock.clone(), vec![Arc::new(crate::notify::Desktop)], true);
    hub.start();
    let mut services: Vec<Arc<RootService>> =
        configs.into_iter().map(|(r, config)| start_root(&r, config, &clock, &index, &said, &hub)).collect();
    let routing = {
        let (clock, hub) = (clock.clone(), hub.clone());
        tokio::spawn(async move {
            while let Some(seen) = rx.recv().await {
                let roots = index.read().map(|i| i.roots().to_vec()).unwrap_or_default();
                // A nested `.livenote.toml` appeared or went, or the watcher lost changes (a
                // rescan: FSEvents coalescing, a full inotify queue): walk again, reload each
                // root's configuration and give each root found its own scheduler (a root that
                // is gone keeps an idle one: its notes now belong to the root around it).
                let changed = match seen {
                    Seen::Changed(path) if !changes_roots(&root, &roots, &path) => Some(path),
                    _ => None,
                };
                let Some(path) = changed else {
                    crate::triggers::watcher::drain(&mut rx);
                    let mut configs = Vec::new();
                    let fresh = build_index(&root, &mut configs, &said);
                    tracing::info!(
                        "reroot {}: {}",
                        root.display(),
                        crate::text::count(fresh.roots().len(), "root")
                    );
                    if let Ok(mut i) = index.write() {
                        *i = fresh;
                    }
                    for (r, config) in configs {
                        match services.iter().find(|s| s.root() == r) {
                            Some(s) => {
                                if let Ok(mut c) = s.engine.config.write() {
                                    *c = config;
                                }
                            }
                            None => services.push(start_root(&r, config, &clock, &index, &said, &hub)),
                        }
                    }
                    for s in &services {
                        s.scheduler_wake.notify_one();
                        s.events_wake.notify_one();
                    }
                    continue;
                };
                let refresh = |p: &Path| index.write().map(|mut i| i.refresh(p)).unwrap_or(false);
                // The trust store concerns every root; anything else, the root that owns it.
                let is_store = trust_store.as_ref().is_some_and(|t| t.is_store_file(&path));
                let owner = (!is_store)
                    .then(|| crate::workspace::roots::owner_among(&roots, &path).map(Path::to_path_buf))
                    .flatten();
                for service in
                    services.iter().filter(|s| owner.is_none() || owner.as_deref() == Some(s.root()))
                {
                    // Trust granted from another shell, or the folder's config changed (a
                    // changed file is untrusted until trusted again): reload the configuration.
                    let reload = || {
                        let config = load_config(&service.engine.root, &said);
                        if let Ok(mut c) = service.engine.config.write() {
                            *c = config;
                        }
                        set_backoff_caps(&index, &services);
                        say_folder(&service.engine, &said);
                    };
                    service.on_file(&path, &refresh, &reload);
                }
            }
        })
    };
    let signal = shutdown.recv().await;
    tracing::info!("stop watching: {signal}");
    routing.abort();
    drop(watcher);
    // What waited for its minute is said before `watch` ends (each notice and hook bounded).
    hub.finish().await;
    Ok(0)
}

/// Why the notes of `engine`'s root do not run on their own, when they do not: scheduling is
/// off, or the folder is not trusted (and how to trust it).
pub(super) fn not_on_their_own(engine: &Engine) -> Option<String> {
    let root = engine.root.display();
    if !engine.scheduling_enabled() {
        Some(format!(
            "scheduling off {root}: `[scheduler] enabled = false` in the configuration; nothing runs on its own"
        ))
    } else if let Some(t) = engine.trust.as_ref().map(|t| t.check(&engine.root)).filter(|t| !t.is_trusted()) {
        let why = t.reason();
        let ignored = engine.config.read().is_ok_and(|c| c.ignored_folder.is_some());
        let config = if ignored { "its .livenote.toml is ignored and " } else { "" };
        Some(format!(
            "untrusted {root}: {why}; {config}nothing runs on its own until you run `livenote trust {root}`"
        ))
    } else if engine.trust.is_none() {
        Some(format!("untrusted {root}: no data folder for a trust store; nothing runs on its own"))
    } else {
        None
    }
}

/// The line for a trusted folder whose `[scheduler] host` is another machine: this one fires
/// nothing on its own (`watch`, `tick`); `None` when it is the host or none is named.
pub(super) fn scheduled_elsewhere(engine: &Engine) -> Option<String> {
    let host = engine.scheduled_on()?;
    let failover = match engine.failover_after() {
        Some(after) => format!(
            ", or when no machine attempted a due note for {} (`failover_after`)",
            crate::config::format_duration(after.to_std().unwrap_or_default())
        ),
        None => String::new(),
    };
    Some(format!(
        "scheduled on {host} {}: `[scheduler] host` names {host}; this machine ({}) runs notes by hand{failover}",
        engine.root.display(),
        engine.machine()
    ))
}

/// What `watch` last said about the folder, so that each change is said once: the
/// configuration's problems (a new `.livenote.toml` brings several file events, each a reload)
/// and whether notes run on their own.
#[derive(Default)]
pub(super) struct Said {
    problems: Vec<String>,
    /// The folder's line; `None` before the first.
    folder: Option<String>,
}

impl Said {
    /// Warn about the problems not said at the previous load. The folder's file ignored for
    /// want of trust is left to [`Said::folder`]'s line, which says the same with what it means.
    fn config(&mut self, config: &Config, problems: &[crate::config::ConfigProblem]) {
        let ignored = config.ignored_folder.as_ref().map(|i| (i.path.as_path(), i.problem()));
        let lines: Vec<String> = problems
            .iter()
            .filter(|p| {
                ignored.as_ref().is_none_or(|(path, m)| p.path.as_deref() != Some(*path) || p.message != *m)
            })
            .map(ToString::to_string)
            .collect();
        for line in lines.iter().filter(|l| !self.problems.contains(l)) {
            tracing::warn!("config {line}");
        }
        self.problems = lines;
    }

    /// One line when whether notes run on their own changes (trust granted or withdrawn, the
    /// config changed, scheduling turned off); nothing at start when they do.
    fn folder(&mut self, engine: &Engine) {
        let (line, warn) = match not_on_their_own(engine) {
            Some(line) => (line, true),
            None => match scheduled_elsewhere(engine) {
                Some(line) => {
                    // Said at start too: a `watch` that fires nothing must say why.
                    if self.folder.as_ref() != Some(&line) {
                        tracing::info!("{line}");
                        self.folder = Some(line);
                    }
                    return;
                }
                None => (format!("trusted {}: notes run on their own", engine.root.display()), false),
            },
        };
        if self.folder.as_ref() == Some(&line) {
            return;
        }
        match (warn, self.folder.is_some()) {
            (true, _) => tracing::warn!("{line}"),
            (false, true) => tracing::info!("{line}"),
            (false, false) => {}
        }
        self.folder = Some(line);
    }
}
