//! Walking a folder for markdown notes with the `ignore` crate: `.gitignore` (even outside a
//! git repository), `.ignore` and hidden folders are honoured, `.livenote/` is skipped, user
//! excludes are globs relative to the root, and symlink loops are reported, not followed.
//!
//! Containment: a symlink (to a folder or a file) whose target lies outside the workspace is
//! never followed (`everything -> /`, `linked -> ../private`); it is skipped with a message.
//! Ignore files are read by [`IgnoreRules`], not by the `ignore` crate, so that only regular
//! files are opened: a `.gitignore -> /proc/self/fd/0` or a FIFO named `.ignore` is skipped
//! with a warning instead of blocking the walk.
//!
//! Bounded: a folder [`MAX_DEPTH`] levels below the root is not entered (said as a skip), and
//! the ignore rules of a folder are found from its parent's, once, so a walk costs the same per
//! entry at any depth (five chains of 1,500 nested folders took `check` 13 s when every entry
//! looked at every folder above it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder};

use super::confine;
use super::given::bad_link;
use super::read::{ReadError, Skipped};

use super::STATE_DIR;

/// Whether a path names a markdown note.
pub fn is_markdown(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"))
}

/// How deep a walk goes: a folder this many levels below the root is not entered. Far beyond
/// any notes folder people keep (git itself has no limit, but nobody nests notes 64 deep);
/// what it stops is a clone built to make every walk slow.
pub const MAX_DEPTH: usize = 64;

/// The largest ignore file read; a bigger one is skipped with a warning.
const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;

/// The ignore files of one folder: `.ignore`, `.gitignore` and, at a repository's top,
/// `.git/info/exclude` (each only when it is a regular file).
#[derive(Debug, Default)]
struct DirRules {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

impl DirRules {
    fn is_empty(&self) -> bool {
        self.ignore.is_none() && self.gitignore.is_none() && self.exclude.is_none()
    }
}

/// The folders with ignore rules from one folder up to the filesystem root, deepest first, as
/// a list shared with the folder above (most folders have no rules and add no link).
#[derive(Debug)]
struct Chain {
    rules: Arc<DirRules>,
    up: Option<Arc<Chain>>,
}

impl Chain {
    fn iter(this: &Option<Arc<Chain>>) -> impl Iterator<Item = &DirRules> {
        std::iter::successors(this.as_deref(), |c| c.up.as_deref()).map(|c| &*c.rules)
    }
}

/// `rules` in front of `up` when it has any.
fn link(rules: Arc<DirRules>, up: Option<Arc<Chain>>) -> Option<Arc<Chain>> {
    if rules.is_empty() { up } else { Some(Arc::new(Chain { rules, up })) }
}

/// `.ignore`, `.gitignore` and git's `info/exclude` of every folder from the filesystem root
/// down, read lazily and only from regular files, with the `ignore` crate's precedence: a
/// `.ignore` match beats a `.gitignore` match beats an exclude; within one kind the deepest
/// folder decides. Use with the walk's own ignore-file reading turned off
/// ([`walk_builder`] does both).
#[derive(Debug)]
pub struct IgnoreRules {
    /// The walk's root, as given (paths of the walk start with it).
    root: PathBuf,
    /// The rules of the folders above the root, deepest first (from its canonical form, so
    /// that `.` works).
    above: Option<Arc<Chain>>,
    /// Each folder met so far (the root and below), with its chain.
    dirs: Mutex<HashMap<PathBuf, Option<Arc<Chain>>>>,
}

impl IgnoreRules {
    /// The rules of a walk from `root`.
    pub fn new(root: &Path) -> IgnoreRules {
        let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let above: Vec<&Path> = canonical.ancestors().skip(1).collect();
        // From the top down, so each link points at the folder above it.
        let above = above.iter().rev().fold(None, |up, d| link(rules_of(d), up));
        IgnoreRules { root: root.to_path_buf(), above, dirs: Mutex::default() }
    }

    /// Whether the ignore files above `path` (a file, or a folder when `is_dir`) ignore it.
    pub fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.parent() else { return false };
        let chain = self.chain(parent);
        let kinds: [fn(&DirRules) -> Option<&Gitignore>; 3] =
            [|r| r.ignore.as_ref(), |r| r.gitignore.as_ref(), |r| r.exclude.as_ref()];
        for kind in kinds {
            // Deepest folder first: its rules override those above.
            for rules in Chain::iter(&chain) {
                match kind(rules).map(|g| g.matched(path, is_dir)) {
                    Some(Match::Ignore(_)) => return true,
                    Some(Match::Whitelist(_)) => return false,
                    _ => {}
                }
            }
        }
        false
    }

    /// The chain of `dir`: from the folders met already, so a walk (which meets a folder before
    /// what it holds) reads each folder's ignore files once and looks up one folder per entry.
    fn chain(&self, dir: &Path) -> Option<Arc<Chain>> {
        let mut dirs = self.dirs.lock().unwrap_or_else(PoisonError::into_inner);
        // Up to the nearest folder known (or the root, or the top for a path outside it)...
        let mut missing: Vec<&Path> = Vec::new();
        let mut up = None;
        for d in dir.ancestors() {
            if let Some(c) = dirs.get(d) {
                up = c.clone();
                break;
            }
            missing.push(d);
            if d == self.root {
                up = self.above.clone();
                break;
            }
        }
        // ...then down again, keeping each.
        for d in missing.into_iter().rev() {
            up = link(rules_of(d), up);
            dirs.insert(d.to_path_buf(), up.clone());
        }
        up
    }
}

/// The ignore files of `dir`, each only when it is a regular file.
fn rules_of(dir: &Path) -> Arc<DirRules> {
    let git = dir.join(".git");
    let exclude = std::fs::symlink_metadata(&git)
        .is_ok_and(|m| m.is_dir())
        .then(|| matcher(dir, &git.join("info").join("exclude")))
        .flatten();
    Arc::new(DirRules {
        ignore: matcher(dir, &dir.join(".ignore")),
        gitignore: matcher(dir, &dir.join(".gitignore")),
        exclude,
    })
}

/// The patterns of one ignore file, if it is a regular file that can be read.
fn matcher(dir: &Path, file: &Path) -> Option<Gitignore> {
    match std::fs::symlink_metadata(file) {
        Err(_) => return None,
        Ok(m) if m.is_dir() => return None,
        Ok(_) => {}
    }
    let bytes = match confine::read_regular(file, MAX_IGNORE_FILE_BYTES) {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!("skip {}: {e}", file.display());
            return None;
        }
    };
    let mut b = GitignoreBuilder::new(dir);
    for line in String::from_utf8_lossy(&bytes).lines() {
        // A bad pattern is skipped, as git does.
        let _ = b.add_line(Some(file.to_path_buf()), line);
    }
    match b.build() {
        Ok(g) if !g.is_empty() => Some(g),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("skip {}: {e}", file.display());
            None
        }
    }
}

/// A `WalkBuilder` for `root` whose ignore files come from `rules` only (the crate's own
/// reading of `.gitignore`, `.ignore`, excludes and parents' files is off; the user's global
/// git excludes stay). Callers add `rules.is_ignored` to their `filter_entry`.
pub fn walk_builder(root: &Path) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.standard_filters(false).hidden(true).git_global(true).require_git(false);
    b
}

/// Whether the entry is a symlink whose target is outside `canonical_root` (or dangling).
fn leaves(entry: &ignore::DirEntry, canonical_root: &Path) -> Option<Skipped> {
    if !entry.path_is_symlink() {
        return None;
    }
    let reason = match std::fs::canonicalize(entry.path()) {
        Ok(t) if t.starts_with(canonical_root) => return None,
        Ok(t) => format!("a symlink to {}, outside the workspace", t.display()),
        Err(e) => bad_link(entry.path()).unwrap_or_else(|| ReadError::Io(e).to_string()),
    };
    Some(Skipped::new(entry.path(), reason))
}

/// A walk error as a skip: the path it concerns and why, in the words of every other skip.
fn walk_skip(mut e: ignore::Error) -> Skipped {
    let mut path = None;
    loop {
        e = match e {
            ignore::Error::WithPath { path: p, err } => {
                path.get_or_insert(p);
                *err
            }
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => *err,
            _ => break,
        }
    }
    let reason = match e {
        // The same words from every root (the folder it leads back to depends on where the
        // walk started).
        ignore::Error::Loop { child, .. } => {
            return Skipped::new(&child, "a symlink loop (back to a folder above it)");
        }
        ignore::Error::Io(e) => match path.as_deref().and_then(bad_link) {
            Some(reason) => reason,
            None => ReadError::Io(e).to_string(),
        },
        e => e.to_string(),
    };
    Skipped { path, reason }
}

/// Every markdown file under `root`, sorted by path; what was skipped (unreadable folders,
/// symlink loops, symlinks leaving the workspace, FIFOs named like notes, bad exclude globs)
/// comes back beside the files.
pub fn markdown_files(root: &Path, exclude: &[String]) -> (Vec<PathBuf>, Vec<Skipped>) {
    let walked = walk_notes(root, exclude, false);
    (walked.files, walked.skipped)
}

/// What a walk of one root found: its notes, the folders inside it that are roots of their own
/// (a `.livenote.toml` of their own: not entered, see [`super::roots`]) and what was skipped.
#[derive(Debug, Default)]
pub struct RootWalk {
    pub files: Vec<PathBuf>,
    pub nested: Vec<PathBuf>,
    pub skipped: Vec<Skipped>,
}

/// [`markdown_files`] of one root only: a folder below `root` with its own `.livenote.toml` is
/// another root, so the walk does not enter it and lists it in `nested` instead.
pub fn root_files(root: &Path, exclude: &[String]) -> RootWalk {
    walk_notes(root, exclude, true)
}

fn walk_notes(root: &Path, exclude: &[String], stop_at_roots: bool) -> RootWalk {
    let mut errors = Vec::new();
    let canonical_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let rules = IgnoreRules::new(root);
    let skipped = Arc::new(Mutex::new(Vec::new()));
    let mut builder = walk_builder(root);
    builder.follow_links(true).sort_by_file_name(|a, b| a.cmp(b));
    let sink = skipped.clone();
    let nested = Arc::new(Mutex::new(Vec::new()));
    let nested_sink = nested.clone();
    builder.filter_entry(move |e| {
        if e.file_name() == STATE_DIR {
            return false;
        }
        if let Some(why) = leaves(e, &canonical_root) {
            sink.lock().unwrap_or_else(PoisonError::into_inner).push(why);
            return false;
        }
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        if rules.is_ignored(e.path(), is_dir) {
            return false;
        }
        if is_dir && e.depth() >= MAX_DEPTH {
            let why = format!("a folder {MAX_DEPTH} levels deep; folders this deep are not searched");
            sink.lock().unwrap_or_else(PoisonError::into_inner).push(Skipped::new(e.path(), why));
            return false;
        }
        if stop_at_roots && is_dir && e.depth() > 0 && super::roots::has_config(e.path()) {
            nested_sink.lock().unwrap_or_else(PoisonError::into_inner).push(e.path().to_path_buf());
            return false;
        }
        true
    });
    let (excludes, bad) = super::exclude::Excludes::new(root, exclude);
    errors.extend(bad.into_iter().map(|reason| Skipped { path: None, reason }));
    if let Some(o) = excludes.overrides() {
        builder.overrides(o);
    }
    let mut files = Vec::new();
    for entry in builder.build() {
        match entry {
            Ok(e) => match e.file_type() {
                Some(t) if t.is_dir() => {}
                Some(t) if t.is_file() && is_markdown(e.path()) => files.push(e.into_path()),
                // Never opened, but said: a FIFO named `x.md` is not silently missing.
                Some(t) if !t.is_file() && is_markdown(e.path()) => {
                    errors.push(Skipped::new(e.path(), ReadError::NotRegular(super::given::kind_of(t))));
                }
                _ => {}
            },
            Err(e) => errors.push(walk_skip(e)),
        }
    }
    errors.extend(std::mem::take(&mut *skipped.lock().unwrap_or_else(PoisonError::into_inner)));
    let nested = std::mem::take(&mut *nested.lock().unwrap_or_else(PoisonError::into_inner));
    RootWalk { files, nested, skipped: errors }
}

/// The roots a walk of `root` finds: `root` first, then every folder below it with its own
/// `.livenote.toml` (at any depth, outer before inner), each with the notes it owns. Folders
/// the walk skips (hidden, gitignored, excluded by the outer root) are not entered, so a
/// configuration inside them makes no root. `exclude_of` gives a root's `[scheduler]
/// exclude` (its own configuration's).
pub fn roots(
    root: &Path,
    exclude_of: &dyn Fn(&Path) -> Vec<String>,
) -> (Vec<(PathBuf, Vec<PathBuf>)>, Vec<Skipped>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(r) = todo.pop() {
        let walked = root_files(&r, &exclude_of(&r));
        skipped.extend(walked.skipped);
        // Popped from the end: reversed, so that they come out in name order.
        todo.extend(walked.nested.into_iter().rev());
        out.push((r, walked.files));
    }
    (out, skipped)
}

/// Every entry under `root` that a confined reader (the agent's workspace tools) may see, in
/// name order: .gitignore (even outside git), .ignore and git excludes honoured, hidden paths
/// skipped, symlinked folders not entered (no loops, no escape), `.livenote/` and `.git/`
/// skipped outright. `only_towards`: enter only the folders on the way to this path.
pub fn visible_entries(root: &Path, only_towards: Option<PathBuf>) -> ignore::Walk {
    // Ignore files are read only when regular (a `.gitignore -> /proc/self/fd/0` or a FIFO
    // never blocks a tool call): see `IgnoreRules`.
    let rules = IgnoreRules::new(root);
    let mut b = walk_builder(root);
    // What lies deeper is not searched, as for notes (`markdown_files` says so).
    b.follow_links(false).max_depth(Some(MAX_DEPTH)).sort_by_file_name(|a, b| a.cmp(b));
    b.filter_entry(move |e| {
        let name = e.file_name();
        if name == STATE_DIR || name == ".git" {
            return false;
        }
        only_towards.as_ref().is_none_or(|t| t.starts_with(e.path()))
            && !rules.is_ignored(e.path(), e.file_type().is_some_and(|t| t.is_dir()))
    });
    b.build()
}

/// Whether `path` is an entry [`visible_entries`] shows under `root` (both in the same form,
/// canonical for a resolved path): not hidden, not ignored, not under `.git/` or `.livenote/`.
/// Only the folders on the way to it are listed.
pub fn is_visible(root: &Path, path: &Path) -> bool {
    path.starts_with(root)
        && visible_entries(root, Some(path.to_path_buf())).flatten().any(|e| e.path() == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model: every folder from `path`'s up to the filesystem root, read afresh each time,
    /// deepest first, as the walk did before the chains (and their cache) existed.
    fn model_is_ignored(rules: &IgnoreRules, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.parent() else { return false };
        let mut chain: Vec<Arc<DirRules>> = Vec::new();
        for d in parent.ancestors() {
            chain.push(rules_of(d));
            if d == rules.root {
                let canonical = std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf());
                chain.extend(canonical.ancestors().skip(1).map(rules_of));
                break;
            }
        }
        let kinds: [fn(&DirRules) -> Option<&Gitignore>; 3] =
            [|r| r.ignore.as_ref(), |r| r.gitignore.as_ref(), |r| r.exclude.as_ref()];
        for kind in kinds {
            for r in &chain {
                match kind(r).map(|g| g.matched(path, is_dir)) {
                    Some(Match::Ignore(_)) => return true,
                    Some(Match::Whitelist(_)) => return false,
                    _ => {}
                }
            }
        }
        false
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// The chains answer as the model does for every path, whatever order the paths are
        /// asked in (the cache is filled by whichever comes first).
        #[test]
        fn chains_agree_with_reading_every_folder_above(
            dirs in proptest::collection::vec(proptest::collection::vec(0..3usize, 0..6), 1..8),
            ignores in proptest::collection::vec((0..8usize, proptest::bool::ANY, proptest::collection::vec(0..6usize, 1..3)), 0..5),
            order in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 0..40),
        ) {
            const NAMES: [&str; 3] = ["a", "b", "c.md"];
            const PATTERNS: [&str; 6] = ["a", "b/", "!a", "*.md", "!c.md", "/b"];
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let root = dir.path();
            let folders: Vec<PathBuf> =
                dirs.iter().map(|d| d.iter().fold(root.to_path_buf(), |p, &i| p.join(NAMES[i]))).collect();
            for f in &folders {
                std::fs::create_dir_all(f).unwrap_or_else(|e| panic!("{e}"));
            }
            for (at, dot_ignore, patterns) in &ignores {
                let folder = &folders[at % folders.len()];
                let text: Vec<&str> = patterns.iter().map(|&i| PATTERNS[i]).collect();
                let name = if *dot_ignore { ".ignore" } else { ".gitignore" };
                std::fs::write(folder.join(name), text.join("\n")).unwrap_or_else(|e| panic!("{e}"));
            }
            // Every folder and a note in each, asked in a random order.
            let mut paths: Vec<(PathBuf, bool)> = Vec::new();
            for f in &folders {
                for a in f.ancestors().take_while(|a| a.starts_with(root) && *a != root) {
                    paths.push((a.to_path_buf(), true));
                }
                paths.push((f.join("n.md"), false));
            }
            let rules = IgnoreRules::new(root);
            let asked = order.iter().map(|i| i.index(paths.len())).chain(0..paths.len());
            for i in asked {
                let (p, is_dir) = &paths[i];
                proptest::prop_assert_eq!(rules.is_ignored(p, *is_dir), model_is_ignored(&rules, p, *is_dir), "{}", p.display());
            }
        }
    }

    #[test]
    fn honours_gitignore_livenote_and_excludes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        for p in [
            "a.md",
            "b.markdown",
            "c.txt",
            "ignored/x.md",
            ".livenote/history/h.md",
            "archive/old.md",
            "sub/d.MD",
        ] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap_or(root)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(&path, "x").unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap_or_else(|e| panic!("{e}"));
        let (files, errors) = markdown_files(root, &["archive/**".to_owned()]);
        let rel: Vec<String> =
            files.iter().map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string()).collect();
        assert_eq!(rel, ["a.md", "b.markdown", "sub/d.MD"]);
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_reported_not_followed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        std::fs::create_dir_all(root.join("a")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("a/n.md"), "x").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(root, root.join("a/loop")).unwrap_or_else(|e| panic!("{e}"));
        let (files, errors) = markdown_files(root, &[]);
        assert_eq!(files.len(), 1);
        assert_eq!(errors.len(), 1, "{errors:?}");
    }

    #[cfg(unix)]
    #[test]
    fn links_leaving_the_workspace_are_not_followed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let private = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        std::fs::write(private.path().join("diary.md"), "x").unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root.join("real")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("real/n.md"), "x").unwrap_or_else(|e| panic!("{e}"));
        let link = |to: &Path, name: &str| {
            std::os::unix::fs::symlink(to, root.join(name)).unwrap_or_else(|e| panic!("{e}"))
        };
        link(Path::new("/"), "everything");
        link(private.path(), "linked");
        link(&private.path().join("diary.md"), "diary.md");
        link(&root.join("real"), "inside");
        link(&root.join("real/n.md"), "alias.md");
        let (files, errors) = markdown_files(root, &[]);
        let rel: Vec<String> =
            files.iter().map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string()).collect();
        assert_eq!(rel, ["alias.md", "inside/n.md", "real/n.md"]);
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors.iter().all(|e| e.reason.contains("outside the workspace")), "{errors:?}");
    }

    #[test]
    fn ignore_files_above_the_root_still_count() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().join("ws/sub");
        std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("ws/.gitignore"), "skip.md\n").unwrap_or_else(|e| panic!("{e}"));
        for n in ["keep.md", "skip.md"] {
            std::fs::write(root.join(n), "x").unwrap_or_else(|e| panic!("{e}"));
        }
        let (files, _) = markdown_files(&root, &[]);
        assert_eq!(files, [root.join("keep.md")]);
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_ignore_files_are_read() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub")).unwrap_or_else(|e| panic!("{e}"));
        for p in ["a.md", "sub/b.md", "sub/c.md", "sub/keep.md"] {
            std::fs::write(root.join(p), "x").unwrap_or_else(|e| panic!("{e}"));
        }
        // /dev/fd/0: /proc/self/fd/0 on Linux, the fdesc device on macOS (which has no /proc).
        std::os::unix::fs::symlink("/dev/fd/0", root.join(".gitignore")).unwrap_or_else(|e| panic!("{e}"));
        nix::unistd::mkfifo(&root.join(".ignore"), nix::sys::stat::Mode::from_bits_truncate(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        // A regular one deeper down still counts, with `.ignore` over `.gitignore`.
        std::fs::write(root.join("sub/.gitignore"), "*.md\n!keep.md\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("sub/.ignore"), "!c.md\n").unwrap_or_else(|e| panic!("{e}"));
        let (files, _) = markdown_files(root, &[]);
        let rel: Vec<String> =
            files.iter().map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string()).collect();
        assert_eq!(rel, ["a.md", "sub/c.md", "sub/keep.md"]);
    }

    fn write_file(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap_or(p)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, "x").unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn a_folder_with_its_own_config_is_its_own_root() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        for p in [
            "a.md",
            "plain/b.md",
            "inner/.livenote.toml",
            "inner/c.md",
            "inner/deep/d.md",
            "inner/deeper/.livenote.toml",
            "inner/deeper/e.md",
            "other/.livenote.toml",
            ".hidden/.livenote.toml",
        ] {
            write_file(&root.join(p));
        }
        let (roots, skipped) = super::roots(root, &|_| Vec::new());
        assert!(skipped.is_empty(), "{skipped:?}");
        let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
        let got: Vec<(String, Vec<String>)> =
            roots.iter().map(|(r, files)| (rel(r), files.iter().map(|f| rel(f)).collect())).collect();
        let want = [
            ("", vec!["a.md", "plain/b.md"]),
            ("inner", vec!["inner/c.md", "inner/deep/d.md"]),
            ("inner/deeper", vec!["inner/deeper/e.md"]),
            ("other", vec![]),
        ];
        let want: Vec<(String, Vec<String>)> =
            want.iter().map(|(r, f)| (r.to_string(), f.iter().map(|s| s.to_string()).collect())).collect();
        assert_eq!(got, want);
        let all: Vec<PathBuf> = roots.into_iter().map(|(r, _)| r).collect();
        assert_eq!(
            crate::workspace::roots::owner_among(&all, &root.join("inner/deeper/x/e.md")),
            Some(root.join("inner/deeper").as_path())
        );
        assert_eq!(
            crate::workspace::roots::owner_among(&all, &root.join("inner/deep/d.md")),
            Some(root.join("inner").as_path())
        );
        assert_eq!(crate::workspace::roots::owner_among(&all, &root.join("plain/b.md")), Some(root));
        assert_eq!(
            crate::workspace::roots::owner(root, &root.join("inner/deeper/e.md")),
            root.join("inner/deeper")
        );
        assert_eq!(crate::workspace::roots::owner(root, &root.join("plain/b.md")), root);
    }
}
