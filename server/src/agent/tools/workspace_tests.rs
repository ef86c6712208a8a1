// Links, FIFOs, signals and process groups are made with Unix calls; the Windows side of what
// these cover is in platform/ and the Wine suite.
#![cfg(unix)]

use std::fmt;

use super::*;

fn err<T: fmt::Debug>(r: Result<T, ToolError>) -> String {
    match r {
        Err(e) => e.0,
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

#[test]
fn globs_match_names_or_paths() {
    let names = PathFilter::new(Some("*.md")).unwrap_or_else(|e| panic!("{e}"));
    assert!(names.matches("a/b/c.md") && !names.matches("a/b.txt"));
    let paths = PathFilter::new(Some("notes/*.md")).unwrap_or_else(|e| panic!("{e}"));
    assert!(paths.matches("notes/a.md") && !paths.matches("notes/x/a.md"));
    let deep = PathFilter::new(Some("./notes/**")).unwrap_or_else(|e| panic!("{e}"));
    assert!(deep.matches("notes/x/a.md"));
    assert!(err(PathFilter::new(Some("a[")).map(|_| ())).starts_with("bad glob `a[`"));
}

/// A workspace with a note, ordinary files, livenote state, an ignored file, a big file, a
/// binary file and symlinks in and out; and a folder outside it.
fn fixture() -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let put = |root: &Path, rel: &str, bytes: &[u8]| {
        let p = root.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        fs::write(p, bytes).unwrap_or_else(|e| panic!("{e}"));
    };
    let root = ws.path();
    put(root, "notes/live.md", b"---\nlive:\n  objective: x\n---\n# Live\n\nQ3 plans\n");
    put(root, "notes/q3.md", b"# Q3\n\nQ3 planning moved to Friday.\nbudget: tbd\n");
    put(root, "notes/deep/older.md", b"q3 retro\n");
    put(root, "todo.txt", b"buy milk\n");
    put(root, ".gitignore", b"secret.txt\nbuild/\n");
    put(root, "secret.txt", b"Q3 password\n");
    put(root, "build/out.txt", b"Q3 build\n");
    put(root, ".hidden/notes.md", b"Q3 hidden\n");
    put(root, ".livenote/runs/r.jsonl", b"{\"kind\":\"start\"} Q3\n");
    put(root, "big.txt", &vec![b'a'; 300 * 1024]);
    put(root, "blob.bin", b"Q3\0\x01\x02");
    put(outside.path(), "passwd", b"root:x:0:0 Q3\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink(outside.path().join("passwd"), root.join("escape.txt")).unwrap_or_else(|e| panic!("{e}"));
        symlink(outside.path(), root.join("outdir")).unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join("notes/q3.md"), root.join("alias.md")).unwrap_or_else(|e| panic!("{e}"));
        symlink(root.join(".livenote/runs/r.jsonl"), root.join("state.txt"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    (ws, outside)
}

fn open(root: &Path) -> Workspace {
    Workspace::new(root, "notes/live.md", Caps::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Every file of the tree, with its bytes, to show the tools wrote nothing.
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            let meta = fs::symlink_metadata(&p).unwrap_or_else(|e| panic!("{e}"));
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file() {
                out.push((p.clone(), fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn read_file_stays_inside_the_workspace() {
    let (ws, outside) = fixture();
    let before = (snapshot(ws.path()), snapshot(outside.path()));
    let w = open(ws.path());
    assert_eq!(
        w.read_file("notes/q3.md").map_err(|e| e.0),
        Ok("# Q3\n\nQ3 planning moved to Friday.\nbudget: tbd\n".to_owned())
    );
    assert_eq!(w.read_file("./notes//deep/older.md").map_err(|e| e.0), Ok("q3 retro\n".to_owned()));
    let refused = [
        ("../x", "`../x`: `..` is not allowed; paths stay inside the workspace"),
        ("notes/../todo.txt", "`notes/../todo.txt`: `..` is not allowed; paths stay inside the workspace"),
        (
            "/etc/passwd",
            "`/etc/passwd` is an absolute path; only paths relative to the workspace root are allowed (like notes/todo.md)",
        ),
        (".livenote/runs/r.jsonl", "livenote's own state under .livenote/ is off limits"),
        ("notes/.livenote/x", "livenote's own state under .livenote/ is off limits"),
        ("big.txt", "`big.txt`: 307200 bytes, over the 262144 byte limit for reading a file"),
        ("blob.bin", "`blob.bin`: a binary file; only text files can be read"),
        (
            "secret.txt",
            "`secret.txt` is not available to the agent (ignored by .gitignore or .ignore, hidden, or behind a symlinked folder)",
        ),
        (
            "build/out.txt",
            "`build/out.txt` is not available to the agent (ignored by .gitignore or .ignore, hidden, or behind a symlinked folder)",
        ),
        (
            ".hidden/notes.md",
            "`.hidden/notes.md` is not available to the agent (ignored by .gitignore or .ignore, hidden, or behind a symlinked folder)",
        ),
        (
            "notes/live.md",
            "that is the note you are updating; use read_note (its frontmatter is not part of your job)",
        ),
        ("notes", "`notes` is a folder; use list_files with a glob like `notes/**`"),
        ("missing.md", "no such file: `missing.md`; use list_files to see what exists"),
        ("", "path is empty; give a path relative to the workspace root"),
    ];
    for (path, msg) in refused {
        assert_eq!(err(w.read_file(path)), msg, "{path}");
    }
    #[cfg(unix)]
    {
        assert_eq!(err(w.read_file("escape.txt")), "`escape.txt` points outside the workspace; refused");
        assert_eq!(
            err(w.read_file("outdir/passwd")),
            "`outdir/passwd` points outside the workspace; refused"
        );
        assert_eq!(err(w.read_file("state.txt")), "livenote's own state under .livenote/ is off limits");
        assert_eq!(w.read_file("alias.md").map(|t| t.len()).map_err(|e| e.0), Ok(47));
    }
    assert_eq!((snapshot(ws.path()), snapshot(outside.path())), before);
}

#[test]
fn list_files_honours_gitignore_and_caps() {
    let (ws, _outside) = fixture();
    let w = open(ws.path());
    let all = w.list_files(None).unwrap_or_else(|e| panic!("{e}"));
    let expected = if cfg!(unix) {
        "alias.md\nbig.txt\nblob.bin\nnotes/deep/older.md\nnotes/live.md\nnotes/q3.md\ntodo.txt"
    } else {
        "big.txt\nblob.bin\nnotes/deep/older.md\nnotes/live.md\nnotes/q3.md\ntodo.txt"
    };
    assert_eq!(all, expected);
    assert_eq!(
        w.list_files(Some("*.md")).map(|s| s.lines().count()).map_err(|e| e.0),
        Ok(if cfg!(unix) { 4 } else { 3 })
    );
    assert_eq!(
        w.list_files(Some("notes/*.md")).map_err(|e| e.0),
        Ok("notes/live.md\nnotes/q3.md".to_owned())
    );
    assert_eq!(w.list_files(Some("*.rs")).map_err(|e| e.0), Ok("No files match `*.rs`.".to_owned()));
    let capped = Workspace::new(ws.path(), "notes/live.md", Caps { max_files: 2, ..Caps::default() })
        .unwrap_or_else(|e| panic!("{e}"));
    let listed = capped.list_files(Some("notes/**")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(listed, "notes/deep/older.md\nnotes/live.md\n… and 1 more; narrow the glob");
}

#[test]
fn search_files_finds_lines_in_visible_text_files() {
    let (ws, _outside) = fixture();
    let w = open(ws.path());
    let found = w.search_files("q3", Some("notes/**")).unwrap_or_else(|e| panic!("{e}"));
    // Not the note being updated, nor ignored, hidden, state, binary or outside files.
    assert_eq!(
        found,
        "notes/deep/older.md:1: q3 retro\nnotes/q3.md:1: # Q3\nnotes/q3.md:3: Q3 planning moved to Friday."
    );
    let everywhere = w.search_files("Q3", None).unwrap_or_else(|e| panic!("{e}"));
    for refused in ["secret", "build", "hidden", "jsonl", "blob", "root:x", "Live"] {
        assert!(!everywhere.contains(refused), "{refused} in {everywhere}");
    }
    assert_eq!(
        w.search_files("nowhere to be found", None).map_err(|e| e.0),
        Ok("No matches for `nowhere to be found`.".to_owned())
    );
    assert_eq!(err(w.search_files(" ", None)), "query is empty; give some words to look for");
    let capped = Workspace::new(ws.path(), "notes/live.md", Caps { max_matches: 1, ..Caps::default() })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        capped.search_files("q3", Some("notes/**")).map_err(|e| e.0),
        Ok("notes/deep/older.md:1: q3 retro\n(stopped at 1 matches; narrow the query or give a glob)"
            .to_owned())
    );
}
