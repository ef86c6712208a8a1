//! The index of a workspace's notes: every markdown path, and for live notes (or notes with
//! frontmatter problems) a summary read from the frontmatter alone. Built once by walking the
//! roots, then kept current one file at a time from file events; never rescanned on a timer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::note::{self, Diagnostic, model::Live};

/// What the index keeps about one note with something to say.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The frontmatter text as read (small; positions of diagnostics refer to it).
    pub head: String,
    pub live: Option<Live>,
    pub diagnostics: Vec<Diagnostic>,
    /// `title:` from the frontmatter, else the file name without extension.
    pub title: String,
}

#[derive(Debug, Default)]
pub struct Index {
    roots: Vec<PathBuf>,
    exclude: Vec<String>,
    /// Every markdown note; `None` for passive notes without problems.
    notes: BTreeMap<PathBuf, Option<Arc<Entry>>>,
}

impl Index {
    /// Walk `roots` and read every note's frontmatter. Returns walk problems beside the index.
    pub fn build(roots: &[PathBuf], exclude: &[String]) -> (Index, Vec<String>) {
        let mut index = Index { roots: roots.to_vec(), exclude: exclude.to_vec(), notes: BTreeMap::new() };
        let mut problems = Vec::new();
        for root in roots {
            let (files, errors) = super::markdown_files(root, exclude);
            problems.extend(errors);
            for f in files {
                let entry = read_entry(&f);
                index.notes.insert(f, entry);
            }
        }
        (index, problems)
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a path belongs to the workspace and is a note the index should track.
    pub fn covers(&self, path: &Path) -> bool {
        super::is_markdown(path)
            && self.roots.iter().any(|r| path.starts_with(r))
            && !path.components().any(|c| c.as_os_str() == ".livenote")
            && !self.excluded(path)
    }

    fn excluded(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| {
            let Ok(rel) = path.strip_prefix(root) else { return false };
            self.exclude
                .iter()
                .any(|g| globset::Glob::new(g).map(|g| g.compile_matcher().is_match(rel)).unwrap_or(false))
        })
    }

    /// Re-read one note after a file event (created, changed, deleted, renamed).
    /// Returns whether its entry changed in a way the scheduler or symbols care about.
    pub fn refresh(&mut self, path: &Path) -> bool {
        if !path.is_file() || !self.covers(path) {
            return self.notes.remove(path).is_some_and(|e| e.is_some());
        }
        let entry = read_entry(path);
        // Only a different frontmatter counts: saves that touch the body alone re-plan nothing.
        let changed = match (self.notes.get(path), &entry) {
            (Some(Some(old)), Some(new)) => old.head != new.head,
            (Some(None), None) => false,
            _ => true,
        };
        self.notes.insert(path.to_path_buf(), entry);
        changed
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

    /// The workspace root that holds `path`, if any (the longest match).
    pub fn root_of(&self, path: &Path) -> Option<&Path> {
        self.roots
            .iter()
            .filter(|r| path.starts_with(r))
            .max_by_key(|r| r.as_os_str().len())
            .map(PathBuf::as_path)
    }
}

fn read_entry(path: &Path) -> Option<Arc<Entry>> {
    let head = match super::read_frontmatter(path) {
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
    let title = frontmatter_title(&analysis, &head)
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    Some(Arc::new(Entry { live: analysis.live, diagnostics: analysis.diagnostics, title, head }))
}

fn frontmatter_title(analysis: &note::Analysis, head: &str) -> Option<String> {
    let fm = analysis.frontmatter.as_ref()?;
    let root = note::yaml::parse(head, fm.content.clone()).ok()??;
    root.get("title")?.value.as_str().map(str::to_owned)
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
}
