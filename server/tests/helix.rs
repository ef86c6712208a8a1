//! The Helix setup (`editors/helix/languages.toml`): Helix has no health check we can run
//! here, so this parses the file as Helix would read it and checks what Helix would do with
//! it: markdown gets livenote beside marksman, and the command it names is this build's
//! binary, which answers `initialize` with the arguments given.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn languages() -> toml::Table {
    let path = repo_root().join("editors/helix/languages.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse().unwrap_or_else(|e| panic!("{} is not valid TOML: {e}", path.display()))
}

#[test]
fn markdown_runs_livenote_beside_marksman() {
    let langs = languages();
    let markdown = langs
        .get("language")
        .and_then(|l| l.as_array())
        .and_then(|a| a.iter().find(|l| l.get("name").and_then(|n| n.as_str()) == Some("markdown")))
        .unwrap_or_else(|| panic!("no [[language]] named markdown"));
    let servers: Vec<&str> = markdown
        .get("language-servers")
        .and_then(|s| s.as_array())
        .map(|a| a.iter().filter_map(|s| s.as_str()).collect())
        .unwrap_or_default();
    assert_eq!(servers, ["marksman", "livenote"]);
    // Every server the language names is defined here or is one Helix ships (marksman).
    let defined = langs.get("language-server").and_then(|s| s.as_table());
    assert!(defined.is_some_and(|d| d.contains_key("livenote")), "no [language-server.livenote]");
}

/// The command and arguments Helix would start: `livenote lsp`.
fn server_command() -> (String, Vec<String>) {
    let langs = languages();
    let server = langs
        .get("language-server")
        .and_then(|s| s.get("livenote"))
        .unwrap_or_else(|| panic!("no [language-server.livenote]"));
    let command = server.get("command").and_then(|c| c.as_str()).unwrap_or_default().to_owned();
    let args = server
        .get("args")
        .and_then(|a| a.as_array())
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    (command, args)
}

#[test]
fn the_named_command_is_this_build_and_speaks_lsp() {
    let (command, args) = server_command();
    let binary = Path::new(env!("CARGO_BIN_EXE_livenote"));
    // Helix finds `command` on PATH: it must be the name the package installs.
    assert_eq!(Some(command.as_str()), binary.file_stem().and_then(|s| s.to_str()));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(binary)
        .args(&args)
        .env("LIVENOTE_DATA_DIR", dir.path().join("data"))
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {} {args:?}: {e}", binary.display()));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}"#;
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap_or_else(|e| panic!("{e}"));
    stdin.flush().unwrap_or_else(|e| panic!("{e}"));
    let mut out = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("no stdout")));
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            panic!("`{command} {}` closed its output before answering", args.join(" "));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse().unwrap_or(0);
        }
    }
    let mut reply = vec![0; len];
    out.read_exact(&mut reply).unwrap_or_else(|e| panic!("{e}"));
    let reply: serde_json::Value = serde_json::from_slice(&reply).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply["result"]["serverInfo"]["name"], "livenote", "{reply}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}

/// The snippet in docs/editors.md is the file's configuration, comments aside; the README
/// points at the file.
#[test]
fn docs_show_the_same_configuration() {
    let root = repo_root();
    let file = std::fs::read_to_string(root.join("editors/helix/languages.toml")).unwrap_or_default();
    // Comment lines dropped, and the blank lines they leave collapsed.
    let mut lines: Vec<&str> = Vec::new();
    for l in file.lines().filter(|l| !l.starts_with('#')) {
        if !(l.trim().is_empty() && lines.last().is_some_and(|p| p.trim().is_empty())) {
            lines.push(l);
        }
    }
    let config = lines.join("\n").trim().to_owned();
    let read = |doc: &str| std::fs::read_to_string(root.join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let editors = read("docs/editors.md");
    // The block that configures the server (the page has other TOML blocks, e.g. auto-save).
    let snippet = editors
        .split("```toml\n")
        .skip(1)
        .filter_map(|s| s.split("```").next())
        .find(|s| s.contains("[language-server.livenote]"))
        .unwrap_or_default();
    assert_eq!(
        snippet.trim(),
        config,
        "docs/editors.md's Helix snippet differs from editors/helix/languages.toml"
    );
    assert!(
        read("README.md").contains("(editors/helix/languages.toml)"),
        "README.md does not link the Helix file"
    );
}
