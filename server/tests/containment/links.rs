//! See the suite's header in containment.rs.
//!
//! Issue 21, section 7: a link is as visible as what it leads to. The agent's workspace tools,
//! the standing instructions and `livenote mcp`'s note paths decide on the link's target, not
//! only on the link's own name: `readme.txt -> .env`, `notes/cfg.txt -> ../.git/config`,
//! `AGENTS.md -> .git/config` and links into a nested `sub/.git/` or `sub/.livenote/`.

use std::path::Path;
use std::process::Command;

use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::json;

use crate::common::{Mcp, tempdir, write};

const KEY: &str = "sk-test-LINKS-5151";

fn link(target: &str, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap_or_else(|e| panic!("{}: {e}", at.display()));
}

fn livenote(root: &Path, data: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(args)
        .current_dir(root)
        .env("LIVENOTE_TEST_KEY", KEY)
        .env("LIVENOTE_DATA_DIR", data)
        .env("LIVENOTE_CONFIG_DIR", data)
        .env("TZ", "UTC")
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A trusted folder whose visible files link to hidden and ignored ones: the agent lists, reads
/// and searches through the links, and `AGENTS.md` links into `.git/`. Nothing of the targets
/// reaches the model; a link to a visible file still works.
#[test]
fn links_to_hidden_or_ignored_files_show_nothing_to_the_model() {
    let dir = tempdir();
    let data = tempdir();
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    write(&root.join(".env"), "API_TOKEN=tok-env-4242\n");
    write(&root.join(".git/config"), "[remote]\n  url = https://tok-git-4242@example.com\n");
    write(&root.join(".gitignore"), "private.txt\n");
    write(&root.join("private.txt"), "tok-ignored-4242\n");
    write(&root.join("plain.txt"), "tok-plain-visible\n");
    link(".env", &root.join("readme.txt"));
    std::fs::create_dir_all(root.join("notes")).unwrap_or_else(|e| panic!("{e}"));
    link("../.git/config", &root.join("notes/cfg.txt"));
    link("private.txt", &root.join("shown.txt"));
    link("plain.txt", &root.join("alias.txt"));
    link(".git/config", &root.join("AGENTS.md"));
    write(&root.join("n.md"), "---\nlive:\n  objective: Summarise the folder.\n---\n# N\n\nold body\n");

    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let script = vec![
        ScriptedReply::tool("list_files", json!({})),
        ScriptedReply::tool("read_file", json!({"path": "readme.txt"})),
        ScriptedReply::tool("read_file", json!({"path": "notes/cfg.txt"})),
        ScriptedReply::tool("read_file", json!({"path": "shown.txt"})),
        ScriptedReply::tool("search_files", json!({"query": "tok-"})),
        ScriptedReply::tool("read_file", json!({"path": "alias.txt"})),
        ScriptedReply::Text("Nothing to change.".to_owned()),
    ];
    let server = runtime.block_on(MockModelServer::start(Flavor::OpenAi, script));
    write(
        &root.join(".livenote.toml"),
        &format!(
            "[agent]\nprovider = \"m\"\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
            server.base_url()
        ),
    );
    let trusted = livenote(&root, data.path(), &["trust", "."]);
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
    let out = livenote(&root, data.path(), &["run", "n.md"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 7, "{stderr}");
    for (i, r) in reqs.iter().enumerate() {
        let body = r.body.to_string();
        for secret in ["tok-env-4242", "tok-git-4242", "tok-ignored-4242"] {
            assert!(!body.contains(secret), "request {i} carries {secret}: {body}");
        }
    }
    let result = |i: usize| reqs[i].tool_results().first().cloned().unwrap_or_default().1;
    let listing = result(1);
    assert!(listing.contains("plain.txt") && listing.contains("alias.txt"), "{listing}");
    for hidden in ["readme.txt", "notes/cfg.txt", "shown.txt", "AGENTS.md"] {
        assert!(!listing.lines().any(|l| l == hidden), "{hidden} listed: {listing}");
    }
    assert!(result(2).contains("`readme.txt` is a link to `.env`, which is not available"), "{}", result(2));
    assert!(result(3).contains("`notes/cfg.txt` is a link to `.git/config`"), "{}", result(3));
    assert!(result(4).contains("`shown.txt` is a link to `private.txt`"), "{}", result(4));
    let found = result(5);
    assert!(found.contains("plain.txt:1: tok-plain-visible"), "{found}");
    assert!(found.contains("alias.txt:1: tok-plain-visible"), "{found}");
    assert_eq!(found.lines().count(), 2, "{found}");
    assert_eq!(result(6), "tok-plain-visible\n", "a link to a visible file still reads");
    // The standing instructions: the link was refused, and the run says so.
    assert!(!reqs[0].system_prompt().contains("AGENTS.md"), "{}", reqs[0].system_prompt());
    let transcripts: String = std::fs::read_dir(root.join(".livenote/runs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        transcripts.contains("not used: AGENTS.md: a link to .git/config, a hidden or ignored file; refused"),
        "{transcripts}"
    );
}

/// Links into a nested `sub/.git/` or `sub/.livenote/` are refused by `make_live` and
/// `note_status` like the top-level ones: nothing is written there, nothing is read.
#[test]
fn mcp_paths_through_links_into_nested_private_folders_are_refused() {
    let dir = tempdir();
    let data = tempdir();
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    write(&root.join("sub/.git/hooks/README.md"), "# hooks\n");
    write(&root.join("sub/.livenote/history/x.md"), "---\nlive:\n  objective: tok-state-4242\n---\n# X\n");
    link("sub/.git/hooks", &root.join("hooks"));
    link("sub/.livenote/history/x.md", &root.join("state.md"));
    link("sub/.git/hooks/README.md", &root.join("readme.md"));
    write(&root.join("ok.md"), "# Ok\n");

    let mut mcp = Mcp::start(&root, data.path());
    let (err, text) = mcp.call("make_live", json!({"path": "hooks/post-merge.md", "objective": "x"}));
    assert!(err && text.contains("outside the workspace"), "{text}");
    let (err, text) = mcp.call("make_live", json!({"path": "readme.md", "objective": "x"}));
    assert!(err && text.contains("outside the workspace"), "{text}");
    let (err, text) = mcp.call("note_status", json!({"path": "state.md"}));
    assert!(err && text.contains("outside the workspace") && !text.contains("tok-state-4242"), "{text}");
    // What stays inside still works.
    let (err, text) = mcp.call("make_live", json!({"path": "ok.md", "objective": "Keep it current."}));
    assert!(!err, "{text}");
    drop(mcp);
    assert!(!root.join("sub/.git/hooks/post-merge.md").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("sub/.git/hooks/README.md")).unwrap_or_default(),
        "# hooks\n"
    );
}

/// Issue 32 §5: a clone holding `notes/today.md -> ../../victim.md` (and a folder `inbox ->
/// ../private`). Every command that takes a note path refuses the link as the walk does, and
/// nothing outside the clone is read, run or written; `make-live --run` used to write a `live:`
/// block into `victim.md` and `run` to rewrite it again. A link inside the clone still works.
#[test]
fn a_note_path_through_a_link_out_of_the_workspace_is_refused_by_every_command() {
    let outer = tempdir();
    let top = outer.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let victim = "---\nlive:\n  objective: Mine.\n---\n# Victim\n\nmy words\n";
    write(&top.join("victim.md"), victim);
    write(&top.join("private/keep.md"), "# Keep\n");
    let clone = tempfile::tempdir_in(&top).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(clone.path().join(".git")).unwrap_or_else(|e| panic!("{e}"));
    write(
        &clone.path().join("daily/2026-05-08.md"),
        "---\nlive:\n  objective: Today.\n---\n# Today\n\nold\n",
    );
    let ws = crate::common::Workspace::in_dir(clone, &crate::common::command_config("echo replaced"));
    std::fs::create_dir_all(ws.root.join("notes")).unwrap_or_else(|e| panic!("{e}"));
    link("../../victim.md", &ws.root.join("notes/today.md"));
    link("../private", &ws.root.join("inbox"));
    link("daily/2026-05-08.md", &ws.root.join("today.md"));
    let private_before = crate::common::files(&top.join("private"));

    let commands: [&[&str]; 9] = [
        &["make-live", "notes/today.md", "--objective", "x", "--run"],
        &["make-live", "inbox/new.md", "--objective", "x"],
        &["run", "notes/today.md"],
        &["undo", "notes/today.md"],
        &["restore", "notes/today.md", "01JTESTRUN"],
        &["history", "notes/today.md"],
        &["diff", "notes/today.md"],
        &["stop", "notes/today.md"],
        &["memory", "notes/today.md"],
    ];
    for args in commands {
        let out = ws.livenote(args).output().unwrap_or_else(|e| panic!("{e}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("is a symlink to")
                && err.contains("livenote never follows a link out of a workspace"),
            "{args:?}: {err}"
        );
        assert_eq!(std::fs::read_to_string(top.join("victim.md")).unwrap_or_default(), victim, "{args:?}");
        assert_eq!(crate::common::files(&top.join("private")), private_before, "{args:?}");
    }
    assert!(!top.join(".livenote").exists(), "no state was written outside the clone");
    // A link that stays inside the clone is the note it leads to.
    let out = ws.livenote(&["run", "today.md"]).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let today = std::fs::read_to_string(ws.root.join("daily/2026-05-08.md")).unwrap_or_default();
    assert!(today.ends_with("# Today\n\nreplaced\n"), "{today}");
}
