use super::*;
use crate::workspace::given::GivenError;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

fn write(p: &Path, text: &str) {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn trusting_persists_and_covers_subfolders_without_config() {
    let data = tmp();
    let ws = tmp();
    let sub = ws.path().join("notes");
    std::fs::create_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
    let store = TrustStore::in_dir(&data.path().join("livenote"));
    assert!(!store.is_trusted(ws.path()));
    store.trust(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    store.trust(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(store.is_trusted(&sub));
    let again = TrustStore::in_dir(&data.path().join("livenote"));
    assert!(again.is_trusted(ws.path()));
    let (records, legacy) = again.records().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].config, None);
    assert!(legacy.is_empty());
}

#[test]
fn trust_binds_to_the_config_content() {
    let data = tmp();
    let ws = tmp();
    let cfg = ws.path().join(CONFIG_FILE);
    write(&cfg, "[agent]\nweb = false\n");
    let store = TrustStore::in_dir(data.path());
    let rec = store.trust(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rec.config.as_deref(), Some(digest_bytes(b"[agent]\nweb = false\n").as_str()));
    assert!(store.is_trusted(ws.path()));
    write(&cfg, "[agent]\nweb = true\n");
    assert!(matches!(store.check(ws.path()), Trust::Changed { .. }));
    std::fs::remove_file(&cfg).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(store.check(ws.path()), Trust::Changed { .. }), "a removed file is a change too");
    write(&cfg, "[agent]\nweb = false\n");
    assert!(store.is_trusted(ws.path()), "the same bytes again");
    // Trusting what the user was shown fails when the file changed meanwhile.
    let shown = Some(digest_bytes(b"something else"));
    assert!(matches!(store.trust_expecting(ws.path(), Some(&shown)), Err(TrustError::ChangedMeanwhile(_))));
}

#[test]
fn nested_folders_with_their_own_config_need_their_own_trust() {
    let data = tmp();
    let ws = tmp();
    write(&ws.path().join(CONFIG_FILE), "");
    write(&ws.path().join("cloned/.livenote.toml"), "[agent]\n");
    std::fs::create_dir_all(ws.path().join("cloned/deeper")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(ws.path().join("plain")).unwrap_or_else(|e| panic!("{e}"));
    let store = TrustStore::in_dir(data.path());
    store.trust(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(store.is_trusted(&ws.path().join("plain")));
    assert_eq!(store.check(&ws.path().join("cloned")), Trust::Untrusted);
    assert_eq!(store.check(&ws.path().join("cloned/deeper")), Trust::Untrusted);
    store.trust(&ws.path().join("cloned")).unwrap_or_else(|e| panic!("{e}"));
    assert!(store.is_trusted(&ws.path().join("cloned/deeper")));
}

#[test]
fn nested_config_dirs_are_found_below_the_root_only() {
    let ws = tmp();
    let root = ws.path();
    write(&root.join(CONFIG_FILE), "");
    write(&root.join("a/.livenote.toml"), "");
    write(&root.join("a/b/c/n.md"), "");
    write(&root.join("plain/n.md"), "");
    assert_eq!(nested_config_dir(root, &root.join("a/b/c/n.md")), Some(root.join("a")));
    assert_eq!(nested_config_dir(root, &root.join("a/n.md")), Some(root.join("a")));
    assert_eq!(nested_config_dir(root, &root.join("plain/n.md")), None);
    assert_eq!(nested_config_dir(root, &root.join("n.md")), None);
    assert_eq!(nested_config_dir(&root.join("a"), &root.join("a/b/c/n.md")), None);
}

#[test]
fn paths_that_are_not_existing_folders_are_refused() {
    let data = tmp();
    let ws = tmp();
    let store = TrustStore::in_dir(data.path());
    let nl = ws.path().join("proj\n/tmp");
    assert!(matches!(store.trust(&nl), Err(TrustError::ControlCharacter(_))));
    std::fs::create_dir_all(&nl).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(store.trust(&nl), Err(TrustError::ControlCharacter(_))), "even when it exists");
    assert!(matches!(
        store.trust(Path::new("/nope-livenote-test")),
        Err(TrustError::Path(GivenError::Missing { .. }))
    ));
    assert!(matches!(
        store.trust(&ws.path().join("typo")),
        Err(TrustError::Path(GivenError::Missing { .. }))
    ));
    write(&ws.path().join("n.md"), "x");
    assert!(matches!(
        store.trust(&ws.path().join("n.md")),
        Err(TrustError::Path(GivenError::WrongKind { .. }))
    ));
    assert!(store.records().unwrap_or_else(|e| panic!("{e}")).0.is_empty());
    assert!(!store.is_trusted(Path::new("/tmp")));
}

#[test]
fn untrust_removes_and_says_whether_it_was_there() {
    let data = tmp();
    let ws = tmp();
    let store = TrustStore::in_dir(data.path());
    store.trust(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(store.untrust(ws.path()).unwrap_or_else(|e| panic!("{e}")));
    assert!(!store.is_trusted(ws.path()));
    assert!(!store.untrust(ws.path()).unwrap_or_else(|e| panic!("{e}")));
    // A folder that is gone can still be untrusted by its path.
    let gone = ws.path().join("gone");
    std::fs::create_dir_all(&gone).unwrap_or_else(|e| panic!("{e}"));
    store.trust(&gone).unwrap_or_else(|e| panic!("{e}"));
    std::fs::remove_dir(&gone).unwrap_or_else(|e| panic!("{e}"));
    let canonical_gone = std::fs::canonicalize(ws.path()).unwrap_or_else(|e| panic!("{e}")).join("gone");
    assert!(store.untrust(&canonical_gone).unwrap_or_else(|e| panic!("{e}")));
}

#[cfg(unix)]
#[test]
fn a_watcher_names_the_store_under_either_spelling() {
    // A data folder reached through a link, as macOS's /var (-> /private/var) is: inotify
    // names the store as watched, FSEvents with the link resolved.
    let base = tmp();
    let real = base.path().join("real");
    std::fs::create_dir_all(&real).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&real, base.path().join("link")).unwrap_or_else(|e| panic!("{e}"));
    let store = TrustStore::in_dir(&base.path().join("link"));
    let canonical = std::fs::canonicalize(&real).unwrap_or_else(|e| panic!("{e}"));
    assert!(store.is_store_file(&store.file()));
    assert!(store.is_store_file(&canonical.join(STORE_FILE)));
    assert!(!store.is_store_file(&canonical.join(LEGACY_FILE)));
    assert!(!store.is_store_file(&canonical.join("other").join(STORE_FILE)));
}

#[test]
fn legacy_line_stores_grant_nothing() {
    let data = tmp();
    let ws = tmp();
    let canonical = std::fs::canonicalize(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    write(&data.path().join(LEGACY_FILE), &format!("{}\n/\n", canonical.display()));
    let store = TrustStore::in_dir(data.path());
    assert_eq!(store.check(ws.path()), Trust::Legacy);
    assert!(!store.is_trusted(Path::new("/tmp")));
    store.trust(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(store.is_trusted(ws.path()));
    let (_, legacy) = store.records().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(legacy.len(), 2, "the old file is left as it was");
}

#[test]
fn a_config_that_is_not_a_regular_file_is_never_trusted_nor_waited_on() {
    let data = tmp();
    let ws = tmp();
    let fifo = ws.path().join(CONFIG_FILE);
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap_or_else(|e| panic!("{e}"));
    assert!(made.success());
    let store = TrustStore::in_dir(data.path());
    assert!(read_config_bytes(ws.path()).is_err());
    assert!(matches!(store.trust(ws.path()), Err(TrustError::Io { .. })));
    assert!(!store.is_trusted(ws.path()));
}

#[test]
fn concurrent_writers_keep_every_entry() {
    let data = tmp();
    let folders: Vec<tempfile::TempDir> = (0..16).map(|_| tmp()).collect();
    std::thread::scope(|s| {
        for f in &folders {
            let store = TrustStore::in_dir(data.path());
            s.spawn(move || store.trust(f.path()).unwrap_or_else(|e| panic!("{e}")));
        }
    });
    let store = TrustStore::in_dir(data.path());
    assert_eq!(store.records().unwrap_or_else(|e| panic!("{e}")).0.len(), folders.len());
    assert!(folders.iter().all(|f| store.is_trusted(f.path())));
}

#[test]
fn windows_command_words_name_files_inside_in_any_spelling() {
    let w = PathStyle::Windows;
    let root = Path::new(r"C:\Users\Me\ws");
    assert_eq!(inside(w, root, r"scripts\gen.cmd", true), Some("scripts/gen.cmd".into()));
    assert_eq!(inside(w, root, r".\scripts\..\gen.cmd", true), Some("gen.cmd".into()));
    assert_eq!(inside(w, root, r"c:\users\me\WS\bin\agent.exe", true), Some("bin/agent.exe".into()));
    assert_eq!(inside(w, root, "scripts/gen.cmd", false), Some("scripts/gen.cmd".into()));
    assert_eq!(inside(w, root, r"C:\Windows\cmd.exe", true), None);
    assert_eq!(inside(w, root, "cmd", true), None);
    assert_eq!(inside(w, root, r"..\x.cmd", false), None);
    assert_eq!(inside(w, root, r"\\server\share\x.cmd", false), None);
    assert_eq!(inside(w, root, r"\x.cmd", false), None);
    assert_eq!(inside(w, root, r"D:x.cmd", false), None);
    // On Unix a backslash is part of a name, not a separator.
    assert_eq!(inside(PathStyle::Unix, Path::new("/ws"), r"scripts\gen.sh", true), None);
    assert_eq!(
        inside(PathStyle::Unix, Path::new("/ws"), "/ws/scripts/gen.sh", true),
        Some("scripts/gen.sh".into())
    );
}

#[test]
fn the_files_a_config_runs_are_those_its_commands_name_inside_the_folder() {
    let ws = tmp();
    let root = std::fs::canonicalize(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    write(&root.join("scripts/gen.sh"), "echo 1");
    write(&root.join("tool.py"), "print(1)");
    write(&root.join("python3"), "not what PATH finds");
    let abs = root.join("tool.py").display().to_string();
    let config = format!(
        "[providers.a]\ncommand = [\"bash\", \"scripts/gen.sh\", \"-x\", \"../outside.sh\", \"scripts/../../x\"]\n\
             [providers.b]\ncommand = [\"python3\", {abs:?}]\n\
             [mcp.servers.m]\ncommand = [\"./bin/server\", \"--flag\"]\n"
    );
    let files = bound_files(&root, Some(config.as_bytes()));
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(names, ["bin/server", "scripts/gen.sh", "tool.py"]);
    assert_eq!(files["bin/server"], None, "named as a path, not there yet");
    assert_eq!(files["scripts/gen.sh"], Some(digest_bytes(b"echo 1")));
    assert!(!runs_file(&root, &root.join("scripts/gen.sh")), "no .livenote.toml yet");
    write(&root.join(CONFIG_FILE), &config);
    assert!(runs_file(&root, &root.join("scripts/gen.sh")));
    assert!(runs_file(&root, &root.join("bin/server")));
    assert!(!runs_file(&root, &root.join("python3")));
    assert!(
        bound_files(&root, Some(b"[providers.a\ncommand = [\"./x\"]")).is_empty(),
        "not TOML: runs nothing"
    );
}

#[test]
fn a_note_a_command_reads_is_data_not_bound() {
    let ws = tmp();
    let root = std::fs::canonicalize(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    write(&root.join("scripts/word-count.sh"), "wc -w");
    write(&root.join("reading-list.md"), "# Reading\n");
    write(&root.join("notes/Log.MARKDOWN"), "# Log\n");
    write(&root.join("run.md"), "a program, oddly named");
    let config = "[providers.w]\ncommand = [\"sh\", \"scripts/word-count.sh\", \"reading-list.md\", \"notes/Log.MARKDOWN\"]\n\
                      [providers.odd]\ncommand = [\"./run.md\"]\n";
    let files = bound_files(&root, Some(config.as_bytes()));
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(names, ["run.md", "scripts/word-count.sh"], "the notes read are data; a program is bound");
    write(&root.join(CONFIG_FILE), config);
    assert!(!runs_file(&root, &root.join("reading-list.md")), "saving the note keeps the trust");
    assert!(runs_file(&root, &root.join("scripts/word-count.sh")));
}

#[test]
fn a_notify_command_binds_the_program_it_runs() {
    let ws = tmp();
    let root = std::fs::canonicalize(ws.path()).unwrap_or_else(|e| panic!("{e}"));
    write(&root.join("hooks/told.sh"), "notify-send \"$1\"");
    let config = "[notify]\ndesktop = true\ncommand = [\"sh\", \"hooks/told.sh\"]\n";
    let files = bound_files(&root, Some(config.as_bytes()));
    assert_eq!(files.keys().map(String::as_str).collect::<Vec<_>>(), ["hooks/told.sh"]);
    write(&root.join(CONFIG_FILE), config);
    assert!(runs_file(&root, &root.join("hooks/told.sh")), "changing it untrusts the folder");
}

#[test]
fn a_corrupt_store_trusts_nothing_and_is_not_overwritten() {
    let data = tmp();
    let ws = tmp();
    write(&data.path().join(STORE_FILE), "{not json");
    let store = TrustStore::in_dir(data.path());
    assert!(!store.is_trusted(ws.path()));
    assert!(matches!(store.trust(ws.path()), Err(TrustError::Corrupt(..))));
    let text = std::fs::read_to_string(data.path().join(STORE_FILE)).unwrap_or_default();
    assert_eq!(text, "{not json");
}
