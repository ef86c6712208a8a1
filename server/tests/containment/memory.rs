//! See the suite's header in containment.rs.
//!
//! Issue 21, section 7: `[memory]` quotas hold for a memory file that came with the folder (or
//! predates a lowered quota). A clone shipping 100 pinned entries far over `max_bytes` sent
//! them all in the first model request; now a run applies the quotas as it reads the file and
//! says what it left out (the log, the transcript, the run message).

use std::process::Command;

use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::json;

use crate::common::{tempdir, write};

const KEY: &str = "sk-test-MEMORY-3131";

#[test]
fn quotas_apply_to_a_memory_file_that_came_with_the_folder() {
    let dir = tempdir();
    let user = tempdir();
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    write(&root.join("n.md"), "---\nlive:\n  objective: Keep it current.\n---\n# N\n\nold body\n");
    // 100 pinned entries of 20 KB (over the default 4 KiB each) and 60 small pinned ones (past
    // the default 50 keys), each a minute newer than the one before.
    let entry = |key: String, content: String, minute: usize| {
        json!({"key": key, "content": content, "pinned": true,
               "updated": format!("2026-11-{:02}T{:02}:{:02}:00Z", 1 + minute / 1440, minute / 60 % 24, minute % 60)})
    };
    let mut entries: Vec<_> = (0..100)
        .map(|i| entry(format!("big-{i:02}"), format!("BIG{i:02}{}", "x".repeat(20_000)), i))
        .collect();
    entries.extend((0..60).map(|i| entry(format!("small-{i:02}"), format!("small fact {i:02}"), 100 + i)));
    let key = livenote::workspace::state::note_key("n.md");
    write(
        &root.join(format!(".livenote/memory/{key}.json")),
        &json!({"note": "n.md", "entries": entries}).to_string(),
    );

    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let script = vec![ScriptedReply::Text("Nothing to change.".to_owned())];
    let server = runtime.block_on(MockModelServer::start(Flavor::OpenAi, script));
    write(
        &user.path().join("config.toml"),
        &format!(
            "[agent]\nprovider = \"m\"\n[providers.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\napi_key_env = \"LIVENOTE_TEST_KEY\"\n",
            server.base_url()
        ),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["run", "n.md"])
        .current_dir(&root)
        .env("LIVENOTE_TEST_KEY", KEY)
        .env("LIVENOTE_DATA_DIR", user.path().join("data"))
        .env("LIVENOTE_CONFIG_DIR", user.path())
        .env("LIVENOTE_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{stderr}");
    let size = reqs[0].body.to_string().len();
    assert!(size < 64 * 1024, "the first request has {size} bytes");
    let message = reqs[0].run_message();
    assert!(!message.contains("BIG"), "an entry over max_bytes was sent");
    // The 50 newest small entries are kept; the 10 oldest are left out.
    assert!(message.contains("small fact 59") && message.contains("small fact 10"), "{message}");
    assert!(!message.contains("small fact 09"), "{message}");
    let left_out = "left out 100 entries over 4 KiB ([memory] max_bytes): `big-99`, `big-98`, `big-97`, `big-96`, `big-95` and 95 more; 10 entries past the first 50 ([memory] max_keys): `small-09`, `small-08`, `small-07`, `small-06`, `small-05` and 5 more";
    assert!(message.contains(left_out), "{message}");
    assert!(stderr.contains(&format!("trim memory n.md: {left_out}")), "{stderr}");
    let transcripts: String = std::fs::read_dir(root.join(".livenote/runs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(transcripts.contains(left_out), "{transcripts}");
    // Nothing was saved, so the file is as it came.
    let file = std::fs::read_to_string(root.join(format!(".livenote/memory/{key}.json"))).unwrap_or_default();
    assert!(file.contains("BIG99"));
}
