//! Issue 21, section 2: a run reaches the disk. Opening a folder keeps nothing in it until
//! something needs keeping, and every write of one run goes to one place (the buffer when the
//! note is open in this client, else the disk).

use serde_json::json;

use super::harness::TestClient;
use super::utf16_caps;

/// Ran at today's 09:00 (Chicago, the harness's zone) already: nothing is due at 09:07.
const NOTE: &str = "---\nlive:\n  objective: Say hello.\n  triggers:\n    cronExpr: \"0 9 * * *\"\n  lastRunAt: \"2026-11-23T15:00:00.000Z\"\n---\n# Hello\n";

/// An editor that opens a folder (untrusted, nothing run) leaves no `.livenote/` behind: no
/// state folder, no `.gitignore` to show up in `git status`. Nor once the user trusts it
/// (the harness answers the trust question with its first action, Allow) while nothing is due.
#[tokio::test]
async fn opening_a_folder_creates_no_state_folder() {
    let mut c = TestClient::start(&[("n.md", NOTE)], utf16_caps()).await;
    let uri = c.open("n.md", NOTE).await;
    c.diagnostics(&uri, 1).await;
    // The root's scheduler and event processor are set up once the folder is indexed, right
    // after the trust question is queued (on this single-threaded runtime, the question is
    // sent once that set-up is over).
    let asked = c.next_notification("window/showMessageRequest").await;
    assert!(asked["message"].as_str().is_some_and(|m| m.contains("trust")), "{asked}");
    // Requests that read state (history, status, lenses) must not create it either.
    for (method, params) in [
        ("livenote/noteStatus", json!({"textDocument": {"uri": uri}})),
        ("textDocument/codeLens", json!({"textDocument": {"uri": uri}})),
        (
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 4}}),
        ),
    ] {
        let res = c.request(method, params).await;
        assert!(res.get("error").is_none(), "{method}: {res}");
    }
    let state = c.root.path().join(".livenote");
    assert!(!state.exists(), "{} was created: {:?}", state.display(), walk(&state));
    c.shutdown().await;
}

/// Every path under `dir`, for a failure message.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        out.push(e.path().display().to_string());
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

/// A note that runs on schedule (scheduling is off in these tests: only Run now runs it).
const DUE: &str = "---\nlive:\n  objective: Say it is done.\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n# Done?\n\nNot yet.\n";

/// The run's first write (`lastAttemptAt`, `lastRunId`) went to disk, the note was not open yet;
/// the editor then opened it (the text it had read before that write, as VS Code does after a
/// window reload) while the provider ran. Every later write of the run goes to disk too: the
/// buffer never gets a result without the fields before it, and the disk has all of them. A
/// `livenote run` from a shell meanwhile (another process, like a second window's server or
/// `watch`) does not run the note beside it.
#[tokio::test]
async fn a_run_writes_where_it_started_even_when_the_note_opens_meanwhile() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = root.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let go = dir.join("go");
    // The provider waits for the test's go-ahead, so that the note opens mid-run.
    let script = format!("while [ ! -e '{}' ]; do sleep 0.02; done; printf 'It is done.\\n'", go.display());
    let settings = json!({
        "scheduler": {"enabled": false},
        "agent": {"provider": "p"},
        "providers": {"p": {"kind": "command", "command": ["sh", "-c", script]}},
    });
    let mut c = TestClient::start_in(root, &[("n.md", DUE)], utf16_caps(), settings, true).await;
    let uri = c.uri("n.md");
    let res =
        c.request("workspace/executeCommand", json!({"command": "livenote.run", "arguments": [uri]})).await;
    assert!(res.get("error").is_none(), "{res}");
    // The run's progress begins once its first fields are written.
    c.progress("begin").await;
    let disk = || std::fs::read_to_string(dir.join("n.md")).unwrap_or_else(|e| panic!("{e}"));
    let started = disk();
    assert!(started.contains("lastAttemptAt:") && started.contains("lastRunId:"), "{started}");
    c.open("n.md", DUE).await;

    // Another livenote process on the same folder leaves the note alone while this run holds it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["run", "n.md"])
        .current_dir(&dir)
        .env("LIVENOTE_DATA_DIR", dir.join(".data"))
        .env("LIVENOTE_CONFIG_DIR", dir.join(".config"))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("run livenote: {e}"));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("another livenote process"), "livenote run said: {said}");
    assert_eq!(disk(), started, "the second process wrote the note");

    std::fs::write(&go, "").unwrap_or_else(|e| panic!("{e}"));
    let end = c.progress("end").await;
    assert_eq!(end["message"], "Updated: It is done.", "{end}");
    let done = disk();
    for field in [
        "lastAttemptAt:",
        "lastRunId:",
        "lastRunAt:",
        "lastRunSummary: \"Updated: It is done.\"",
        "\nIt is done.\n",
    ] {
        assert!(done.contains(field), "no {field:?} on disk:\n{done}");
    }
    // Not a word of the run in the buffer: the editor reloads the note from disk.
    assert_eq!(c.doc(&uri).text, DUE, "the run wrote into the buffer after writing the disk");
    c.shutdown().await;
}
