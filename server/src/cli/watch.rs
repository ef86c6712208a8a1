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
use crate::workspace::index::{Entry, Index};
use crate::workspace::trust::TrustStore;

/// The index behind a lock, as the scheduler's source of notes.
pub struct IndexSource(pub Arc<RwLock<Index>>);

impl NoteSource for IndexSource {
    fn live_notes(&self) -> Vec<(PathBuf, Arc<Entry>)> {
        let idx = self.0.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        idx.live_notes().map(|(p, e, _)| (p.clone(), e.clone())).collect()
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(watch(root, clock(clock_file)))
}

async fn watch(root: PathBuf, clock: Arc<dyn Clock>) -> Result<u8> {
    let mut said = Said::default();
    let (config, problems) = Config::load(Some(&root), None);
    said.config(&config, &problems);
    let exclude = config.scheduler.exclude.clone();
    let trust = TrustStore::user();
    let engine = Arc::new(Engine::new(&root, clock, Zone::Local, Arc::new(DiskIo), config, trust));
    let (index, problems) = Index::build(std::slice::from_ref(&root), &exclude);
    for p in problems {
        tracing::warn!("skip {p}");
    }
    let live = index.live_notes().count();
    tracing::info!("watch {}: {}, {live} live", root.display(), crate::text::count(index.len(), "note"));
    let said = Arc::new(std::sync::Mutex::new(said));
    let index = Arc::new(RwLock::new(index));
    let notes: crate::events::NotesFn = {
        let (root, index, clock, zone) = (root.clone(), index.clone(), engine.clock.clone(), engine.zone);
        Arc::new(move || {
            let idx = index.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            crate::events::eligible_notes(&root, &idx, clock.now(), &zone)
        })
    };
    // The scheduler and the event processor, wired as the language server wires them.
    let service = Arc::new(RootService::start(
        engine.clone(),
        Arc::new(IndexSource(index.clone())),
        notes,
        Arc::new(Notify::new()),
    ));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<PathBuf>();
    let mut watcher = <notify::RecommendedWatcher as notify::Watcher>::new(
        move |res: notify::Result<notify::Event>| {
            // Reads are events too (inotify's open/close); only changes matter, and reacting to
            // our own reads would loop.
            if let Ok(ev) = res
                && !matches!(ev.kind, notify::EventKind::Access(_) | notify::EventKind::Other)
            {
                for p in ev.paths {
                    let _ = tx.send(p);
                }
            }
        },
        // A symlinked folder is not watched through: `everything -> /` would watch the disk.
        notify::Config::default().with_follow_symlinks(false),
    )
    .context("start the file watcher")?;
    notify::Watcher::watch(&mut watcher, &root, notify::RecursiveMode::Recursive)
        .with_context(|| format!("watch {}", root.display()))?;
    if let Some(dir) = engine.trust.as_ref().and_then(|t| t.file().parent().map(Path::to_path_buf)) {
        let _ = std::fs::create_dir_all(&dir);
        let _ = notify::Watcher::watch(&mut watcher, &dir, notify::RecursiveMode::NonRecursive);
    }
    // Said once the folder is watched: from this line on, a change is heard.
    said.lock().unwrap_or_else(std::sync::PoisonError::into_inner).folder(&engine);
    let routing = {
        let service = service.clone();
        tokio::spawn(async move {
            while let Some(path) = rx.recv().await {
                let refresh = |p: &Path| index.write().map(|mut i| i.refresh(p)).unwrap_or(false);
                // Trust granted from another shell, or the folder's config changed (a changed
                // file is untrusted until trusted again): reload the configuration.
                let reload = || {
                    let (config, problems) = Config::load(Some(&service.engine.root), None);
                    let mut said = said.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    said.config(&config, &problems);
                    if let Ok(mut c) = service.engine.config.write() {
                        *c = config;
                    }
                    said.folder(&service.engine);
                };
                service.on_file(&path, &refresh, &reload);
            }
        })
    };
    let _ = tokio::signal::ctrl_c().await;
    tracing::info!("stop watching");
    routing.abort();
    drop(watcher);
    Ok(0)
}

/// What `watch` last said about the folder, so that each change is said once: the
/// configuration's problems (a new `.livenote.toml` brings several file events, each a reload)
/// and whether notes run on their own.
#[derive(Default)]
struct Said {
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
        let root = engine.root.display();
        let (line, warn) = if !engine.scheduling_enabled() {
            let line = format!(
                "scheduling off {root}: `[scheduler] enabled = false` in the configuration; nothing runs on its own"
            );
            (line, true)
        } else if let Some(t) =
            engine.trust.as_ref().map(|t| t.check(&engine.root)).filter(|t| !t.is_trusted())
        {
            let why = t.reason();
            let ignored = engine.config.read().is_ok_and(|c| c.ignored_folder.is_some());
            let config = if ignored { "its .livenote.toml is ignored and " } else { "" };
            let line = format!(
                "untrusted {root}: {why}; {config}nothing runs on its own until you run `livenote trust {root}`"
            );
            (line, true)
        } else if engine.trust.is_none() {
            (format!("untrusted {root}: no data folder for a trust store; nothing runs on its own"), true)
        } else {
            (format!("trusted {root}: notes run on their own"), false)
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
