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
    let config = Config::load_logged(&root);
    let exclude = config.scheduler.exclude.clone();
    let trust = TrustStore::user();
    let engine = Arc::new(Engine::new(&root, clock, Zone::Local, Arc::new(DiskIo), config, trust));
    let (index, problems) = Index::build(std::slice::from_ref(&root), &exclude);
    for p in problems {
        tracing::warn!("skip {p}");
    }
    let live = index.live_notes().count();
    tracing::info!("watch {}: {}, {live} live", root.display(), crate::text::count(index.len(), "note"));
    if !engine.scheduling_enabled() {
        tracing::warn!(
            "scheduling off {}: `[scheduler] enabled = false` in the configuration; nothing runs on its own",
            root.display()
        );
    } else if let Some(t) = engine.trust.as_ref().map(|t| t.check(&root)).filter(|t| !t.is_trusted()) {
        tracing::warn!(
            "untrusted {}: {}; nothing runs on its own until you run `livenote trust {}`",
            root.display(),
            t.reason(),
            root.display()
        );
    } else if engine.trust.is_none() {
        tracing::warn!(
            "untrusted {}: no data folder for a trust store; nothing runs on its own",
            root.display()
        );
    }
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
    let routing = {
        let service = service.clone();
        tokio::spawn(async move {
            while let Some(path) = rx.recv().await {
                let refresh = |p: &Path| index.write().map(|mut i| i.refresh(p)).unwrap_or(false);
                // Trust granted from another shell, or the folder's config changed (a changed
                // file is untrusted until trusted again): reload the configuration.
                let reload = || {
                    let config = Config::load_logged(&service.engine.root);
                    if let Ok(mut c) = service.engine.config.write() {
                        *c = config;
                    }
                };
                service.on_file(&path, &refresh, &reload);
            }
        })
    };
    let signal = super::signal::shutdown().await;
    tracing::info!("stop watching: {signal}");
    routing.abort();
    drop(watcher);
    Ok(0)
}
