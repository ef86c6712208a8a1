//! Standing instructions: text the user writes once and every model run follows (house style,
//! language, sources to prefer). The workspace's `AGENTS.md`, the files `[agent] instructions`
//! lists (both only when the folder is trusted: they arrive with a cloned folder) and the
//! user's own `instructions.md` beside their config file (always).
//!
//! Each file is capped at `[agent] instructions_max_chars`; a longer one is cut with a visible
//! marker, and `check` and the editor warn on it (`live/instructions-too-long`).
//!
//! Dependencies: `config` (the `[agent]` settings, the user's folder) and `workspace`
//! (confined reads); nothing above. The warning itself is `note::instructions_too_long`.

use std::path::{Component, Path};

use serde::Serialize;

use crate::config::AgentConfig;

/// The workspace's file, the convention agents already read in repositories.
pub const AGENTS_FILE: &str = "AGENTS.md";
/// The user's file, in their livenote config folder.
pub const USER_FILE: &str = "instructions.md";
/// An instructions file larger than this is not read at all: it is not hand-written guidance.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// One file's instructions as the model gets them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Instruction {
    /// The file as the heading names it: workspace-relative, or the user's file's path.
    pub file: String,
    /// The text sent, cut (with the marker) when the file is over the budget.
    pub text: String,
    /// The file's length in characters when it was cut; `None` when it is sent whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_from: Option<usize>,
}

/// What a run's instructions are, and the files that could not be used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    pub files: Vec<Instruction>,
    /// "<file>: <why>" for a listed file that is missing or refused.
    pub problems: Vec<String>,
}

/// The workspace's instruction files, workspace-relative: `AGENTS.md`, then the listed ones
/// (each once).
pub fn workspace_files(agent: &AgentConfig) -> Vec<String> {
    let mut out = vec![AGENTS_FILE.to_owned()];
    for f in &agent.instructions {
        let f = f.trim().trim_start_matches("./").to_owned();
        if !f.is_empty() && !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// Whether `rel` (workspace-relative, `/`-separated) is one of the workspace's instruction files.
pub fn is_instructions_file(agent: &AgentConfig, rel: &str) -> bool {
    workspace_files(agent).iter().any(|f| f == rel)
}

/// The instructions of a run. `user_dir`: the user's livenote folder; `home`: the user's home,
/// shown as `~` in the user file's heading (the model's server need not learn the account
/// name); `trusted`: whether the workspace's own files count. A missing `AGENTS.md` or user
/// file is normal; a missing listed file is a problem.
pub fn load(
    root: &Path,
    agent: &AgentConfig,
    user_dir: Option<&Path>,
    home: Option<&Path>,
    trusted: bool,
) -> Loaded {
    let max = agent.instructions_max_chars;
    let mut loaded = Loaded::default();
    if trusted {
        for rel in workspace_files(agent) {
            match read_in_workspace(root, &rel) {
                Ok(Some(text)) => loaded.files.push(cut(rel, &text, max)),
                Ok(None) if rel == AGENTS_FILE => {}
                Ok(None) => {
                    loaded.problems.push(format!("{rel}: no such file (listed in [agent] instructions)"))
                }
                Err(why) => loaded.problems.push(format!("{rel}: {why}")),
            }
        }
    }
    if let Some(path) = user_dir.map(|d| d.join(USER_FILE)) {
        match read(&path) {
            Ok(Some(text)) => {
                let shown = match home.and_then(|h| path.strip_prefix(h).ok()) {
                    Some(rest) => format!("~/{}", rest.display()),
                    None => path.display().to_string(),
                };
                loaded.files.push(cut(shown, &text, max));
            }
            Ok(None) => {}
            Err(why) => loaded.problems.push(format!("{}: {why}", path.display())),
        }
    }
    loaded
}

/// `text` as sent: whole, or its first `max` characters and a marker saying what was cut.
pub fn cut(file: String, text: &str, max: usize) -> Instruction {
    let text = text.trim_end();
    let chars = text.chars().count();
    if chars <= max {
        return Instruction { file, text: text.to_owned(), cut_from: None };
    }
    let kept: String = text.chars().take(max).collect();
    let text = format!("{kept}\n\n{}", marker(&file, chars, max));
    Instruction { file, text, cut_from: Some(chars) }
}

/// The visible marker at the end of a cut file (also the transcript's and the warning's words).
pub fn marker(file: &str, chars: usize, max: usize) -> String {
    format!(
        "[cut: {file} has {chars} characters; only the first {max} are used ([agent] instructions_max_chars)]"
    )
}

/// A workspace-relative file confined to the workspace: no absolute path, no `..`, no symlink
/// leading outside, only a regular file (a FIFO is never opened). `Ok(None)`: no such file.
fn read_in_workspace(root: &Path, rel: &str) -> Result<Option<String>, String> {
    let path = Path::new(rel);
    if !path.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err("not a plain path inside the workspace (no absolute path, no `..`)".to_owned());
    }
    let lexical = root.join(path);
    if std::fs::symlink_metadata(&lexical).is_err() {
        return Ok(None);
    }
    let (root, real) = match (std::fs::canonicalize(root), std::fs::canonicalize(&lexical)) {
        (Ok(root), Ok(real)) if real.starts_with(&root) => (root, real),
        _ => return Err("points outside the workspace; refused".to_owned()),
    };
    // Through a link, the target must be a file the agent could see (`AGENTS.md ->
    // .git/config` is not): the file named is the user's choice, what a link reaches is not.
    if real != root.join(path) && !crate::workspace::is_visible(&root, &real) {
        let target =
            crate::workspace::NotePath::of(&root, &real).map(crate::workspace::NotePath::into_string);
        return Err(format!(
            "a link to {}, a hidden or ignored file; refused",
            target.unwrap_or_else(|| real.display().to_string())
        ));
    }
    read(&lexical)
}

/// A regular file's text (links followed), `Ok(None)` when it does not exist.
fn read(path: &Path) -> Result<Option<String>, String> {
    match crate::workspace::read_text(path, MAX_FILE_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(crate::workspace::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)] // only the Unix-only tests use it
    fn agent(files: &[&str], max: usize) -> AgentConfig {
        AgentConfig {
            instructions: files.iter().map(|f| (*f).to_owned()).collect(),
            instructions_max_chars: max,
            ..AgentConfig::default()
        }
    }

    #[cfg(unix)] // only the Unix-only tests use it
    fn write(path: &Path, text: &str) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn cut_keeps_the_first_characters_and_says_so() {
        assert_eq!(
            cut("a.md".into(), "héllo\n", 5),
            Instruction { file: "a.md".into(), text: "héllo".into(), cut_from: None }
        );
        let c = cut("a.md".into(), "héllo world", 5);
        assert_eq!(c.cut_from, Some(11));
        assert!(c.text.starts_with("héllo\n\n[cut: a.md has 11 characters; only the first 5"), "{}", c.text);
    }

    #[cfg(unix)]
    #[test]
    fn workspace_files_count_only_when_trusted_and_stay_inside() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let user = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = ws.path();
        write(&root.join("AGENTS.md"), "Write in French.\n");
        write(&root.join("notes/STYLE.md"), "Short lines.\n");
        write(&user.path().join(USER_FILE), "Prefer primary sources.\n");
        write(&user.path().join("secret.md"), "outside\n");
        std::os::unix::fs::symlink(user.path().join("secret.md"), root.join("link.md"))
            .unwrap_or_else(|e| panic!("{e}"));
        nix::unistd::mkfifo(&root.join("fifo.md"), nix::sys::stat::Mode::S_IRWXU)
            .unwrap_or_else(|e| panic!("{e}"));
        let cfg = agent(&["notes/STYLE.md", "../x.md", "link.md", "fifo.md", "gone.md"], 8000);
        let l = load(root, &cfg, Some(user.path()), Some(user.path()), true);
        let files: Vec<&str> = l.files.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(files[..2], ["AGENTS.md", "notes/STYLE.md"]);
        assert_eq!(files[2], "~/instructions.md");
        assert_eq!(l.files[0].text, "Write in French.");
        assert_eq!(l.problems.len(), 4, "{:?}", l.problems);
        assert!(l.problems[0].starts_with("../x.md: not a plain path"), "{:?}", l.problems);
        assert!(l.problems[1].contains("outside the workspace"), "{:?}", l.problems);
        assert!(l.problems[2].contains("not a regular file"), "{:?}", l.problems);
        assert!(l.problems[3].contains("no such file"), "{:?}", l.problems);
        let l = load(root, &cfg, Some(user.path()), None, false);
        assert_eq!(l.files.len(), 1);
        assert_eq!(l.files[0].text, "Prefer primary sources.");
        assert_eq!(l.files[0].file, user.path().join(USER_FILE).display().to_string());
        assert!(l.problems.is_empty());
    }
}
