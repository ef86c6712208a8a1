//! The index of a workspace's notes: every markdown path, and for live notes (or notes with
//! frontmatter problems) a summary read from the frontmatter alone. Built once by walking the
//! roots, then kept current one file at a time from file events; never rescanned on a timer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::exclude::Excludes;
use crate::note::{self, Diagnostic, model::Live};

/// What the index keeps about one note with something to say.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The frontmatter text as read (small; positions of diagnostics refer to it).
    pub head: String,
    pub live: Option<Live>,
    pub diagnostics: Vec<Diagnostic>,
    /// The note's name ([`note_title`]).
    pub title: String,
    /// The live block's next due instant, kept between index-wide requests (the entry is
    /// replaced when its note changes, and the memo with it).
    pub schedule: crate::status::ScheduleMemo,
    /// The note's `listNotes` item as JSON, kept between requests while what it shows holds.
    pub list_item: crate::status::ItemMemo,
}

#[derive(Debug, Default)]
pub struct Index {
    roots: Vec<PathBuf>,
    /// Per root, in the order of `roots`: `[scheduler] exclude` of that root's config.
    excludes: Vec<Excludes>,
    /// Every markdown note; `None` for passive notes without problems.
    notes: BTreeMap<PathBuf, Option<Arc<Entry>>>,
    /// Per root, `[scheduler] max_backoff` of its config when it is not the default: copied
    /// into each of its notes' `Live::max_backoff`, so the scheduler and every view of the
    /// index compute the same retries ([`Index::set_backoff_caps`]).
    caps: Vec<(PathBuf, chrono::TimeDelta)>,
}

impl Index {
    /// Walk `roots` and read every note's frontmatter, on every core. Returns what the walk
    /// skipped beside the index.
    pub fn build(roots: &[PathBuf], exclude: &[String]) -> (Index, Vec<super::Skipped>) {
        let per_root: Vec<(PathBuf, Vec<String>)> =
            roots.iter().map(|r| (r.clone(), exclude.to_vec())).collect();
        Index::build_per_root(&per_root)
    }

    /// [`Index::build`] with each root's own excludes (each root has its own config). A folder
    /// inside a root with its own `.livenote.toml` is a root of its own ([`super::roots`]):
    /// it joins [`Index::roots`] after the given ones (with its excludes when it was given
    /// too, else none), and its notes belong to it, not to the root around it.
    pub fn build_per_root(roots: &[(PathBuf, Vec<String>)]) -> (Index, Vec<super::Skipped>) {
        let t = std::time::Instant::now();
        let mut problems = Vec::new();
        let mut files = Vec::new();
        let exclude_of =
            |r: &Path| roots.iter().find(|(g, _)| g == r).map(|(_, e)| e.clone()).unwrap_or_default();
        let mut given: Vec<PathBuf> = roots.iter().map(|(r, _)| r.clone()).collect();
        let mut found_roots = Vec::new();
        for (root, _) in roots {
            // A given root inside another given one that owns it is walked from there.
            if found_roots.contains(root) {
                continue;
            }
            let (walked, errors) = super::walk::roots(root, &exclude_of);
            problems.extend(errors);
            for (r, found) in walked {
                files.extend(found);
                if !found_roots.contains(&r) {
                    found_roots.push(r);
                }
            }
        }
        for r in found_roots {
            if !given.contains(&r) {
                given.push(r);
            }
        }
        let roots = given;
        let excludes = roots.iter().map(|r| Excludes::new(r, &exclude_of(r)).0).collect();
        let walked = t.elapsed();
        let entries = read_entries(&files);
        let read = t.elapsed();
        // The walk yields paths nearly in order, so collecting sorts little and then builds the
        // tree in bulk instead of inserting (and comparing paths) one note at a time.
        let notes: BTreeMap<PathBuf, Option<Arc<Entry>>> = files.into_iter().zip(entries).collect();
        tracing::debug!(
            "index build: walk {} ms, read and parse {} ms, map {} ms",
            walked.as_millis(),
            (read - walked).as_millis(),
            (t.elapsed() - read).as_millis()
        );
        (Index { roots, excludes, notes, caps: Vec::new() }, problems)
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a path belongs to the workspace and is a note the index should track.
    pub fn covers(&self, path: &Path) -> bool {
        super::is_markdown(path)
            && self.roots.iter().any(|r| super::is_within(path, r))
            && !path.components().any(|c| {
                super::PathStyle::NATIVE.same_name(&c.as_os_str().to_string_lossy(), super::STATE_DIR)
            })
            && !self.excluded(path)
    }

    /// Whether `path` resolves inside a root: a link to a file elsewhere is not a note here,
    /// as the walk does not follow it either.
    fn inside(&self, path: &Path) -> bool {
        let Ok(real) = std::fs::canonicalize(path) else { return false };
        self.roots.iter().any(|r| std::fs::canonicalize(r).is_ok_and(|r| real.starts_with(r)))
    }

    fn excluded(&self, path: &Path) -> bool {
        self.excludes.iter().any(|e| e.excludes(path))
    }

    /// The excludes each root was built with, to tell whether a new config changes them.
    pub fn excludes(&self) -> &[Excludes] {
        &self.excludes
    }

    /// Re-read one note after a file event (created, changed, deleted, renamed).
    /// Returns whether its entry changed in a way the scheduler or symbols care about.
    pub fn refresh(&mut self, path: &Path) -> bool {
        if !path.is_file() || !self.covers(path) || !self.inside(path) {
            return self.notes.remove(path).is_some_and(|e| e.is_some());
        }
        let entry = read_entry(path).map(|e| self.capped(path, e));
        // Only a different frontmatter (or name) counts: saves that touch the body alone
        // re-plan nothing.
        let changed = match (self.notes.get(path), &entry) {
            (Some(Some(old)), Some(new)) => old.head != new.head || old.title != new.title,
            (Some(None), None) => false,
            _ => true,
        };
        self.notes.insert(path.to_path_buf(), entry);
        changed
    }

    /// Set each root's backoff cap from its configuration (a root not named keeps the
    /// default): entries whose cap changes are replaced, their memos with them.
    pub fn set_backoff_caps(&mut self, caps: &[(PathBuf, chrono::TimeDelta)]) {
        let default = crate::schedule::due::MAX_BACKOFF;
        let caps: Vec<_> = caps.iter().filter(|(_, c)| *c != default).cloned().collect();
        if caps == self.caps {
            return;
        }
        self.caps = caps;
        let paths: Vec<PathBuf> =
            self.notes.iter().filter(|(_, e)| e.is_some()).map(|(p, _)| p.clone()).collect();
        for path in paths {
            let Some(Some(entry)) = self.notes.get(&path) else { continue };
            let cap = self.cap_of(&path);
            if entry.live.as_ref().is_some_and(|l| l.max_backoff != cap) {
                let fresh = self.capped(
                    &path,
                    Arc::new(Entry {
                        schedule: Default::default(),
                        list_item: Default::default(),
                        ..Entry::clone(entry)
                    }),
                );
                self.notes.insert(path, Some(fresh));
            }
        }
    }

    /// The backoff cap of the root owning `path`; `None` for the default.
    fn cap_of(&self, path: &Path) -> Option<chrono::TimeDelta> {
        let root = self.root_of(path)?;
        self.caps.iter().find(|(r, _)| r == root).map(|(_, c)| *c)
    }

    /// `entry` with its owning root's backoff cap.
    fn capped(&self, path: &Path, mut entry: Arc<Entry>) -> Arc<Entry> {
        let cap = self.cap_of(path);
        if entry.live.as_ref().is_some_and(|l| l.max_backoff != cap)
            && let Some(live) = Arc::make_mut(&mut entry).live.as_mut()
        {
            live.max_backoff = cap;
        }
        entry
    }

    pub fn remove(&mut self, path: &Path) -> bool {
        self.notes.remove(path).is_some_and(|e| e.is_some())
    }

    pub fn len(&self) -> usize {
        self.notes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }

    pub fn get(&self, path: &Path) -> Option<&Arc<Entry>> {
        self.notes.get(path).and_then(Option::as_ref)
    }

    /// Notes with a summary (live, or with frontmatter problems).
    pub fn entries(&self) -> impl Iterator<Item = (&PathBuf, &Arc<Entry>)> {
        self.notes.iter().filter_map(|(p, e)| e.as_ref().map(|e| (p, e)))
    }

    pub fn live_notes(&self) -> impl Iterator<Item = (&PathBuf, &Arc<Entry>, &Live)> {
        self.entries().filter_map(|(p, e)| e.live.as_ref().map(|l| (p, e, l)))
    }

    /// The workspace root that holds `path`, if any (the longest match: a nested root owns
    /// its notes).
    pub fn root_of(&self, path: &Path) -> Option<&Path> {
        super::roots::owner_among(&self.roots, path)
    }

    /// The outermost root that holds `path` (the folder the user opened): where paths are
    /// shown from, nested roots' notes included, as `livenote list` shows them.
    pub fn shown_root_of(&self, path: &Path) -> Option<&Path> {
        self.roots
            .iter()
            .filter(|r| super::is_within(path, r))
            .min_by_key(|r| r.as_os_str().len())
            .map(PathBuf::as_path)
    }

    /// The live notes `root` owns (not those of a root nested in it).
    pub fn live_notes_of<'a>(
        &'a self,
        root: &'a Path,
    ) -> impl Iterator<Item = (&'a PathBuf, &'a Arc<Entry>, &'a Live)> {
        self.live_notes().filter(move |(p, _, _)| self.root_of(p) == Some(root))
    }
}

/// [`read_entry`] for every file, in order. Reading and parsing dominate building the index
/// and notes are independent, so threads (one per core, up to 8) take chunks of the list in
/// turn; small lists stay on the calling thread.
fn read_entries(files: &[PathBuf]) -> Vec<Option<Arc<Entry>>> {
    const CHUNK: usize = 64;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if threads < 2 || files.len() < 4 * CHUNK {
        return files.iter().map(|f| read_entry(f)).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let start = next.fetch_add(CHUNK, Ordering::Relaxed);
            if start >= files.len() {
                return done;
            }
            let end = (start + CHUNK).min(files.len());
            done.push((start, files[start..end].iter().map(|f| read_entry(f)).collect::<Vec<_>>()));
        }
    };
    let mut chunks = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut chunks = work();
        for h in helpers {
            chunks.extend(h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        chunks
    });
    chunks.sort_unstable_by_key(|(start, _)| *start);
    chunks.into_iter().flat_map(|(_, entries)| entries).collect()
}

/// A note's name wherever a note is named (`list`, `livenote/listNotes`, `noteStatus`,
/// workspace symbols, MCP, `$/progress`): `title:` from its frontmatter (`title`, from the
/// analysis) when not blank, else its title heading (the first `# ` heading of the body,
/// `note::frontmatter::body_title`; SPEC 1), else the file name without extension.
pub fn note_title(title: Option<String>, heading: Option<&str>, path: &Path) -> String {
    title
        .filter(|t| !t.trim().is_empty())
        .or_else(|| heading.map(str::trim).filter(|h| !h.is_empty()).map(str::to_owned))
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
}

fn read_entry(path: &Path) -> Option<Arc<Entry>> {
    let (head, heading) = match super::read_head(path) {
        Ok(h) => h,
        Err(e) => {
            tracing::debug!("skip {}: {e}", path.display());
            return None;
        }
    };
    let analysis = note::analyze(&head, &note::Options::default());
    if analysis.live.is_none() && analysis.diagnostics.is_empty() {
        return None;
    }
    let title = note_title(analysis.title, heading.as_deref(), path);
    Some(Arc::new(Entry {
        live: analysis.live,
        diagnostics: analysis.diagnostics,
        title,
        head,
        schedule: Default::default(),
        list_item: Default::default(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_refreshes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().to_path_buf();
        let w = |rel: &str, t: &str| std::fs::write(root.join(rel), t).unwrap_or_else(|e| panic!("{e}"));
        w("a.md", "---\ntitle: Alpha\nlive:\n  objective: x\n---\nbody");
        w("b.md", "# plain\n");
        w("c.md", "---\nlive:\n  active: yes\n---\n");
        let (mut idx, problems) = Index::build(std::slice::from_ref(&root), &[]);
        assert!(problems.is_empty());
        assert_eq!(idx.len(), 3);
        let titles: Vec<String> = idx.live_notes().map(|(_, e, _)| e.title.clone()).collect();
        assert_eq!(titles, ["Alpha", "c"]);
        assert!(idx.get(&root.join("c.md")).is_some_and(|e| !e.diagnostics.is_empty()));
        w("b.md", "---\nlive:\n  objective: now live\n---\n");
        assert!(idx.refresh(&root.join("b.md")));
        assert_eq!(idx.live_notes().count(), 3);
        std::fs::remove_file(root.join("a.md")).unwrap_or_else(|e| panic!("{e}"));
        assert!(idx.refresh(&root.join("a.md")));
        assert_eq!(idx.live_notes().count(), 2);
        assert!(!idx.refresh(&root.join("notes.txt")));
    }

    #[test]
    fn parallel_build_matches_one_note_at_a_time() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().to_path_buf();
        for i in 0..700 {
            let sub = root.join(format!("d{}", i % 7));
            std::fs::create_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
            let text = match i % 3 {
                0 => format!("---\ntitle: Note {i}\nlive:\n  objective: x\n---\nbody"),
                1 => format!("---\nlive:\n  active: maybe{i}\n---\n"),
                _ => format!("# plain {i}\n"),
            };
            std::fs::write(sub.join(format!("n{i}.md")), text).unwrap_or_else(|e| panic!("{e}"));
        }
        let (idx, problems) = Index::build(std::slice::from_ref(&root), &[]);
        assert!(problems.is_empty());
        assert_eq!(idx.len(), 700);
        let (files, _) = crate::workspace::markdown_files(&root, &[]);
        for f in &files {
            let want = read_entry(f);
            let got = idx.get(f);
            assert_eq!(got.map(|e| (&e.title, &e.head)), want.as_ref().map(|e| (&e.title, &e.head)), "{f:?}");
        }
        assert_eq!(idx.live_notes().count(), 467);
    }
}
