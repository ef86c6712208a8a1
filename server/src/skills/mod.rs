//! Skills: guidance written once as markdown (`name` and `description` in the frontmatter,
//! the guidance below) that runs get in full when a note lists it in `live.skills`, and
//! otherwise as one catalog line the agent can expand with `load_skill`.
//!
//! Three sources, by precedence: the workspace's folders (`[skills] dirs`, default
//! `skills/`), the user's `skills/` beside their config file, and the skills built into
//! livenote. A name defined by a higher source shadows the lower ones. In a folder, a skill is
//! a `*.md` file, or a `SKILL.md` in a subfolder (the Agent Skills layout); a file without
//! both fields is no skill (the editor and `check` say so).
//!
//! Trust: the workspace's skills arrive with a cloned folder, so runs use them only when the
//! folder is trusted, like `AGENTS.md` (`instructions`); the editor, `check` and
//! `livenote skills` show them either way. The user's and the built-in ones always count.
//! Reads are confined like instructions': a plain workspace-relative folder, no `..`, no link
//! leading outside, regular files only.
//!
//! Dependencies: `config` (the user's folder), `workspace` (capped reads) and `note` (the pure
//! parsing, the catalog type); nothing above.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

pub use crate::note::skills::Source;
use crate::note::skills::{self as parse, SkillCatalog, SkillInfo};

/// A skill file larger than this is not read: guidance, not a document.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Skill files read from one folder at most (the rest are reported, not read).
pub const MAX_FILES_PER_DIR: usize = 200;
/// The file a skill of the Agent Skills layout keeps in its own folder.
pub const SKILL_FILE: &str = "SKILL.md";
/// The user's folder of skills, in their livenote config folder.
pub const USER_DIR: &str = "skills";

/// The skills built into livenote: (file name, text).
const BUILT_IN: &[(&str, &str)] = &[("writing-live-notes.md", include_str!("builtin/writing-live-notes.md"))];

/// One skill with its guidance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    pub name: String,
    pub description: String,
    #[serde(serialize_with = "source_str")]
    pub source: Source,
    /// The file: workspace-relative for the workspace's, absolute for the user's,
    /// `built-in:<file>` for livenote's own.
    pub file: String,
    /// The file on disk (absolute); `None` for a built-in skill.
    #[serde(skip)]
    pub path: Option<PathBuf>,
    /// The guidance: the text after the frontmatter.
    pub body: String,
}

fn source_str<S: serde::Serializer>(s: &Source, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s.as_str())
}

/// Every skill found, the effective ones and those a higher source shadows.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// One per name, by name.
    pub skills: Vec<Skill>,
    /// Skills a skill of the same name shadows (a higher source, or the first by path in the
    /// same source), with the file of the one that wins.
    pub shadowed: Vec<(Skill, String)>,
    /// "<file>: <why>" for a folder or file that could not be read.
    pub problems: Vec<String>,
}

impl Loaded {
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// What analysis checks `live.skills` against.
    pub fn catalog(&self) -> SkillCatalog {
        SkillCatalog {
            skills: self
                .skills
                .iter()
                .map(|s| SkillInfo {
                    name: s.name.clone(),
                    description: s.description.clone(),
                    source: s.source,
                    path: s.path.clone(),
                })
                .collect(),
        }
    }

    /// A run's skills: those the note lists, in its order (with the names that are not
    /// known), and every other one for the catalog.
    pub fn for_run(&self, listed: &[String]) -> (Vec<Skill>, Vec<Skill>, Vec<String>) {
        let mut preloaded = Vec::new();
        let mut missing = Vec::new();
        for name in listed {
            match self.get(name) {
                Some(s) if !preloaded.iter().any(|p: &Skill| p.name == s.name) => preloaded.push(s.clone()),
                Some(_) => {}
                None => missing.push(name.clone()),
            }
        }
        let catalog =
            self.skills.iter().filter(|s| !preloaded.iter().any(|p| p.name == s.name)).cloned().collect();
        (preloaded, catalog, missing)
    }
}

/// Where to look: the workspace (with its `[skills] dirs`, and whether its skills count) and
/// the user's livenote folder.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    pub root: &'a Path,
    pub dirs: &'a [String],
    /// `false`: the workspace's skills are left out (a run in an untrusted folder).
    pub workspace: bool,
    pub user_dir: Option<&'a Path>,
}

/// The user's livenote folder, from the process environment.
pub fn user_dir() -> Option<PathBuf> {
    crate::config::user_config_dir(&crate::config::ProcessEnv)
}

/// Every skill of the sources, the higher source winning on a name.
pub fn load(src: Sources<'_>) -> Loaded {
    load_with(src, true)
}

/// What the editor checks `live.skills` against: as [`load`], reading only each file's
/// frontmatter (it is asked on every request).
pub fn catalog(src: Sources<'_>) -> SkillCatalog {
    load_with(src, false).catalog()
}

fn load_with(src: Sources<'_>, bodies: bool) -> Loaded {
    let mut found: Vec<Skill> = Vec::new();
    let mut problems = Vec::new();
    if src.workspace {
        for f in workspace_files(src.root, src.dirs, &mut problems) {
            found.extend(read_skill(&f.path, f.rel, Source::Workspace, bodies, &mut problems));
        }
    }
    if let Some(dir) = src.user_dir.map(|d| d.join(USER_DIR)) {
        for path in files_in(&dir, &dir.display().to_string(), &mut problems) {
            let shown = path.display().to_string();
            found.extend(read_skill(&path, shown, Source::User, bodies, &mut problems));
        }
    }
    for (file, text) in BUILT_IN {
        found.extend(skill_of(text, format!("built-in:{file}"), None, Source::BuiltIn));
    }
    // Stable: sources in precedence order, files by path within each.
    found.sort_by_key(|s| s.source);
    let mut loaded = Loaded { problems, ..Loaded::default() };
    for s in found {
        match loaded.skills.iter().find(|w| w.name == s.name) {
            Some(winner) => {
                let by = winner.file.clone();
                loaded.shadowed.push((s, by));
            }
            None => loaded.skills.push(s),
        }
    }
    loaded.skills.sort_by(|a, b| a.name.cmp(&b.name));
    loaded
}

/// A workspace skill file: where it is and how it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceFile {
    pub path: PathBuf,
    /// Workspace-relative, `/`-separated.
    pub rel: String,
}

/// The files of the workspace's skills folders (skills or not), by path.
pub fn workspace_files(root: &Path, dirs: &[String], problems: &mut Vec<String>) -> Vec<WorkspaceFile> {
    let mut out: Vec<WorkspaceFile> = Vec::new();
    for dir in dirs {
        let dir = dir.trim().trim_start_matches("./").trim_end_matches('/');
        match confined_dir(root, dir) {
            Ok(Some(real)) => {
                for path in files_in(&real, dir, problems) {
                    let rel = match path.strip_prefix(&real) {
                        Ok(rest) => format!("{dir}/{}", rest.to_string_lossy().replace('\\', "/")),
                        Err(_) => continue,
                    };
                    if !out.iter().any(|f| f.rel == rel) {
                        out.push(WorkspaceFile { path: root.join(&rel), rel });
                    }
                }
            }
            Ok(None) => {}
            Err(why) => problems.push(format!("{dir}: {why}")),
        }
    }
    out
}

/// Whether the workspace-relative `rel` is a skill file of one of `dirs`: a `*.md` directly in
/// it, or a `SKILL.md` one folder down.
pub fn is_skill_file(dirs: &[String], rel: &str) -> bool {
    dirs.iter().any(|d| {
        let d = d.trim().trim_start_matches("./").trim_end_matches('/');
        let Some(rest) = rel.strip_prefix(d).and_then(|r| r.strip_prefix('/')) else { return false };
        match rest.split_once('/') {
            None => crate::workspace::is_markdown(Path::new(rest)),
            Some((sub, file)) => !sub.is_empty() && file == SKILL_FILE,
        }
    })
}

/// The diagnostics of the workspace skill file `rel` whose text is `text`: missing fields, and
/// a name another skill file of the workspace uses too.
pub fn file_diagnostics(root: &Path, dirs: &[String], rel: &str, text: &str) -> Vec<crate::note::Diagnostic> {
    // Only skills collide: a file missing a field is not loaded.
    let head = parse::head(text);
    let name = head.is_skill().then_some(head.name).flatten().map(|n| n.value);
    let other = name.as_deref().and_then(|name| {
        let mut ignored = Vec::new();
        workspace_files(root, dirs, &mut ignored).into_iter().filter(|f| f.rel != rel).find_map(|f| {
            let t = crate::workspace::read_text(&f.path, MAX_FILE_BYTES).ok()?;
            let h = parse::head(&t);
            (h.is_skill() && h.name?.value == name).then_some(f.rel)
        })
    });
    parse::file_diagnostics(text, other.as_deref())
}

/// A workspace-relative folder confined to the workspace: no absolute path, no `..`, no link
/// leading outside. `Ok(None)`: no such folder.
fn confined_dir(root: &Path, rel: &str) -> Result<Option<PathBuf>, String> {
    let path = Path::new(rel);
    if rel.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err("not a plain folder inside the workspace (no absolute path, no `..`)".to_owned());
    }
    let lexical = root.join(path);
    if std::fs::symlink_metadata(&lexical).is_err() {
        return Ok(None);
    }
    match (std::fs::canonicalize(root), std::fs::canonicalize(&lexical)) {
        // Through a link, the folder reached must be one the agent could see (not `.git/`).
        (Ok(root), Ok(real))
            if real != root.join(path)
                && real.starts_with(&root)
                && !crate::workspace::is_visible(&root, &real) =>
        {
            Err("a link to a hidden or ignored folder; refused".to_owned())
        }
        (Ok(root), Ok(real)) if real.starts_with(&root) && real.is_dir() => Ok(Some(lexical)),
        (Ok(root), Ok(real)) if real.starts_with(&root) => Err("not a folder".to_owned()),
        _ => Err("points outside the workspace; refused".to_owned()),
    }
}

/// The skill files of a folder, by path: `*.md` in it and `*/SKILL.md`. Hidden entries are
/// skipped; a link must stay inside the folder; at most [`MAX_FILES_PER_DIR`]. `shown`: the
/// folder as problems name it (workspace-relative for the workspace's).
fn files_in(dir: &Path, shown: &str, problems: &mut Vec<String>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let real_dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| !n.starts_with('.')))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for p in names {
        let candidate = match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => p.join(SKILL_FILE),
            Ok(_) if crate::workspace::is_markdown(&p) => p,
            _ => continue,
        };
        let inside = std::fs::canonicalize(&candidate).is_ok_and(|real| real.starts_with(&real_dir));
        if !inside {
            if std::fs::symlink_metadata(&candidate).is_ok() {
                let rest = candidate.strip_prefix(dir).unwrap_or(&candidate).to_string_lossy();
                problems.push(format!("{shown}/{rest}: points outside its folder; refused"));
            }
            continue;
        }
        if out.len() == MAX_FILES_PER_DIR {
            problems
                .push(format!("{shown}: more than {MAX_FILES_PER_DIR} skill files; the rest are not read"));
            break;
        }
        out.push(candidate);
    }
    out
}

fn read_skill(
    path: &Path,
    shown: String,
    source: Source,
    bodies: bool,
    problems: &mut Vec<String>,
) -> Option<Skill> {
    let read = if bodies {
        crate::workspace::read_text(path, MAX_FILE_BYTES)
    } else {
        // The same size limit as runs, without reading the body.
        match std::fs::metadata(path) {
            Ok(m) if m.len() > MAX_FILE_BYTES => {
                Err(crate::workspace::ReadError::TooLarge { size: m.len(), max: MAX_FILE_BYTES })
            }
            _ => crate::workspace::read_frontmatter(path),
        }
    };
    match read {
        Ok(text) => skill_of(&text, shown, Some(path.to_path_buf()), source),
        Err(e) => {
            problems.push(format!("{shown}: {e}"));
            None
        }
    }
}

fn skill_of(text: &str, file: String, path: Option<PathBuf>, source: Source) -> Option<Skill> {
    let head = parse::head(text);
    if !head.is_skill() {
        return None;
    }
    Some(Skill {
        name: head.name?.value,
        description: head.description?.value,
        source,
        file,
        path,
        body: parse::body(text).to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    }

    fn skill(name: &str, description: &str, body: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    }

    #[test]
    fn the_built_in_skill_is_a_skill() {
        let loaded =
            load(Sources { root: Path::new("/nonexistent"), dirs: &[], workspace: true, user_dir: None });
        let s = loaded.get("writing-live-notes").unwrap_or_else(|| panic!("no built-in skill"));
        assert_eq!(s.source, Source::BuiltIn);
        assert!(s.body.contains("objective"), "{}", s.body);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    }

    #[cfg(unix)]
    #[test]
    fn workspace_overrides_user_overrides_built_in() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let user = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = ws.path();
        write(&root.join("skills/digest.md"), &skill("weekly-digest", "Sum up a week.", "Workspace steps."));
        write(&root.join("skills/brief/SKILL.md"), &skill("brief", "A short brief.", "Brief steps."));
        write(&root.join("skills/notes.md"), "# just a note\n");
        write(&root.join("skills/deep/more/x.md"), &skill("deep", "too deep", "x"));
        write(&user.path().join("skills/digest.md"), &skill("weekly-digest", "User's.", "User steps."));
        write(&user.path().join("skills/live.md"), &skill("writing-live-notes", "Mine.", "My way."));
        write(&user.path().join("outside.md"), &skill("outside", "x", "x"));
        std::os::unix::fs::symlink(user.path().join("outside.md"), root.join("skills/link.md"))
            .unwrap_or_else(|e| panic!("{e}"));
        nix::unistd::mkfifo(&root.join("skills/fifo.md"), nix::sys::stat::Mode::S_IRWXU)
            .unwrap_or_else(|e| panic!("{e}"));
        let dirs = vec!["skills".to_owned(), "../up".to_owned()];
        let src = Sources { root, dirs: &dirs, workspace: true, user_dir: Some(user.path()) };
        let loaded = load(src);
        let names: Vec<(&str, &str)> =
            loaded.skills.iter().map(|s| (s.name.as_str(), s.source.as_str())).collect();
        assert_eq!(
            names,
            [("brief", "workspace"), ("weekly-digest", "workspace"), ("writing-live-notes", "user")]
        );
        assert_eq!(loaded.get("weekly-digest").map(|s| s.body.as_str()), Some("Workspace steps."));
        assert_eq!(loaded.get("brief").map(|s| s.file.as_str()), Some("skills/brief/SKILL.md"));
        let shadowed: Vec<(&str, &str, &str)> =
            loaded.shadowed.iter().map(|(s, by)| (s.name.as_str(), s.source.as_str(), by.as_str())).collect();
        assert_eq!(shadowed.len(), 2);
        assert!(shadowed.contains(&("weekly-digest", "user", "skills/digest.md")), "{shadowed:?}");
        assert_eq!(loaded.problems.len(), 3, "{:?}", loaded.problems);
        assert!(
            loaded.problems.iter().any(|p| p.contains("link.md: points outside")),
            "{:?}",
            loaded.problems
        );
        assert!(
            loaded.problems.iter().any(|p| p.contains("fifo.md: not a regular file")),
            "{:?}",
            loaded.problems
        );
        assert!(
            loaded.problems.iter().any(|p| p.starts_with("../up: not a plain folder")),
            "{:?}",
            loaded.problems
        );
        // An untrusted folder's skills do not count for runs.
        let loaded = load(Sources { workspace: false, ..src });
        assert_eq!(loaded.get("weekly-digest").map(|s| s.source), Some(Source::User));
        assert!(loaded.get("brief").is_none());
        let (pre, catalog, missing) = loaded.for_run(&["weekly-digest".into(), "nope".into()]);
        assert_eq!(pre.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["weekly-digest"]);
        assert_eq!(catalog.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["writing-live-notes"]);
        assert_eq!(missing, ["nope"]);
    }

    #[test]
    fn skill_files_and_their_duplicates() {
        let dirs = vec!["skills".to_owned()];
        assert!(is_skill_file(&dirs, "skills/a.md"));
        assert!(is_skill_file(&dirs, "skills/a/SKILL.md"));
        assert!(!is_skill_file(&dirs, "skills/a/b.md"));
        assert!(!is_skill_file(&dirs, "skillsx/a.md"));
        assert!(!is_skill_file(&dirs, "notes/a.md"));
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        write(&ws.path().join("skills/a.md"), &skill("same", "A.", "a"));
        write(&ws.path().join("skills/b.md"), &skill("same", "B.", "b"));
        let text = skill("same", "A.", "a");
        let d = file_diagnostics(ws.path(), &dirs, "skills/a.md", &text);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].message.contains("also defined in skills/b.md"), "{}", d[0].message);
        assert!(file_diagnostics(ws.path(), &dirs, "skills/a.md", &skill("other", "A.", "a")).is_empty());
    }
}
