//! "Move into triggers": a trigger written directly under `live:` gets a quick fix at its
//! warning that moves it under `triggers:`; the editor applies the edit and the warning goes,
//! in the buffer and for `livenote check` on the saved file.

use std::process::Command;

use serde_json::json;

use super::harness::{TestClient, pos};
use super::{check, cursor, render_diags, utf16_caps};
use expect_test::expect;

/// `title kind preferred` and each edit as `line:col-line:col "new text"` (0-based, UTF-16).
fn render_action(a: &serde_json::Value) -> String {
    let mut out = format!("{} {} preferred={}\n", a["title"], a["kind"], a["isPreferred"]);
    let changes = a["edit"]["documentChanges"].as_array().into_iter().flatten();
    for e in changes.flat_map(|c| c["edits"].as_array().into_iter().flatten()) {
        let r = &e["range"];
        out.push_str(&format!(
            "  {}:{}-{}:{} {}\n",
            r["start"]["line"],
            r["start"]["character"],
            r["end"]["line"],
            r["end"]["character"],
            e["newText"]
        ));
    }
    out
}

#[tokio::test]
async fn cron_under_live_moves_into_triggers() {
    let (note, at) = cursor(
        "---\r\ntitle: \"😀 Standup\"\r\nlive:\r\n  objective: \"Keep the 📋 agenda\"\r\n  cr$0on: '0 9 * * 1-5'  # weekdays\r\n  triggers:\r\n    eventMatchCriteria: Calendar changes\r\n  lastRunAt: \"2026-11-23T15:02:00Z\"\r\n---\r\n# Standup\r\n",
    );
    let mut c = TestClient::start(&[("n.md", note.as_str())], utf16_caps()).await;
    let uri = c.open("n.md", &note).await;
    let diags = c.diagnostics(&uri, 1).await;
    check(
        &render_diags(&diags),
        expect![[r#"
            4:2-4:6 2 live/unknown-key unknown key `cron` in `live`; `cronExpr` belongs in `triggers`
            2:0-2:4 3 live/no-event-source no source sends events here: `eventMatchCriteria` waits for events, and this folder has no `[sources.NAME]` (a feed, a calendar, a mailbox, a webhook, a program; docs/sources.md); `livenote event` can still queue one
        "#]],
    );
    let cursor_at = pos(&note, at, false);
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": cursor_at, "end": cursor_at},
                   "context": {"diagnostics": diags}}),
        )
        .await;
    let fixes: Vec<&serde_json::Value> =
        actions["result"].as_array().into_iter().flatten().filter(|a| a["kind"] == "quickfix").collect();
    let rendered: String = fixes.iter().map(|a| render_action(a)).collect();
    check(
        &rendered,
        expect![[r#"
            "Move into `triggers:` as `cronExpr`" "quickfix" preferred=true
              4:0-5:0 ""
              7:0-7:0 "    cronExpr: '0 9 * * 1-5'  # weekdays\r\n"
        "#]],
    );
    let Some(fix) = fixes.first() else { panic!("no quick fix in {actions}") };
    c.apply_workspace_edit(&fix["edit"]).await;
    let after = c.diagnostics(&uri, 2).await;
    // What is left is the note's `eventMatchCriteria` in a folder with no source (information).
    assert!(after.iter().all(|d| d["code"] == "live/no-event-source"), "{after:?}");
    let text = c.doc(&uri).text;
    check(
        &text.replace('\r', "␍"),
        expect![[r#"
            ---␍
            title: "😀 Standup"␍
            live:␍
              objective: "Keep the 📋 agenda"␍
              triggers:␍
                eventMatchCriteria: Calendar changes␍
                cronExpr: '0 9 * * 1-5'  # weekdays␍
              lastRunAt: "2026-11-23T15:02:00Z"␍
            ---␍
            # Standup␍
        "#]],
    );
    c.shutdown().await;

    // The file as the editor saves it: `livenote check` has nothing to say about it.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let checked = |text: &str| {
        std::fs::write(dir.path().join("n.md"), text).unwrap_or_else(|e| panic!("{e}"));
        let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(["check", "n.md"])
            .current_dir(dir.path())
            .env_remove("LIVENOTE_LOG")
            .env("LIVENOTE_DATA_DIR", dir.path().join(".test-data"))
            .env("LIVENOTE_CONFIG_DIR", dir.path().join(".test-data"))
            .output()
            .unwrap_or_else(|e| panic!("run livenote: {e}"));
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (_, before) = checked(&note);
    assert!(before.contains("unknown-key"), "{before}");
    let (code, fixed) = checked(&text);
    assert_eq!(code, Some(0), "{fixed}");
    assert!(!fixed.contains("unknown-key") && !fixed.contains("error"), "{fixed}");
}

/// With a `cronExpr` in `triggers:` already, no fix is offered (it would duplicate the key) and
/// the warning says why.
#[tokio::test]
async fn no_fix_when_triggers_has_the_key() {
    let (note, at) = cursor(
        "---\nlive:\n  objective: x\n  cronExpr$0: \"0 7 * * *\"\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n# N\n",
    );
    let mut c = TestClient::start(&[("n.md", note.as_str())], utf16_caps()).await;
    let uri = c.open("n.md", &note).await;
    let diags = c.diagnostics(&uri, 1).await;
    check(
        &render_diags(&diags),
        expect![[r#"
            3:2-3:10 2 live/unknown-key unknown key `cronExpr` in `live`; `cronExpr` belongs in `triggers` (`triggers:` already has a `cronExpr`; keep one of the two and remove the other)
        "#]],
    );
    let cursor_at = pos(&note, at, false);
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": cursor_at, "end": cursor_at},
                   "context": {"diagnostics": diags}}),
        )
        .await;
    let fixes =
        actions["result"].as_array().into_iter().flatten().filter(|a| a["kind"] == "quickfix").count();
    assert_eq!(fixes, 0, "{actions}");
    c.shutdown().await;
}
