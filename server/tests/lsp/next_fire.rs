//! Issue 14: every surface names the same next fire. The cron's inlay hint, the status lens,
//! the hover on `live:`, `livenote/listNotes` and `livenote list --at` at the same instant, for
//! a `*/5` note after a success (no backoff) and after an attempt that did not succeed (the
//! backoff holds the 09:05 occurrence past its grace, so the next fire is 09:10).

use std::process::Command;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::harness::TestClient;
use super::utf16_caps;

fn note(runtime: &str) -> String {
    format!(
        "---\nlive:\n  objective: the time\n  triggers:\n    cronExpr: \"*/5 * * * *\"\n{runtime}---\n# Time\n"
    )
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// What each surface says about the note at `now`, one line each.
async fn surfaces(text: &str, now: &str) -> String {
    surfaces_with_config(None, text, now).await
}

/// [`surfaces`] in a folder whose `.livenote.toml` (trusted) is `config`.
async fn surfaces_with_config(config: Option<&str>, text: &str, now: &str) -> String {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    if let Some(config) = config {
        std::fs::write(root.path().join(".livenote.toml"), config).unwrap_or_else(|e| panic!("{e}"));
    }
    // (Removed when the client goes, at the end.)
    let root_path = root.path().to_path_buf();
    // Trusted and scheduling on, as a user has it; nothing is due at these instants.
    let mut c = TestClient::start_in(root, &[("n.md", text)], utf16_caps(), Value::Null, true).await;
    c.clock.set(at(now));
    let uri = c.open("n.md", text).await;
    c.diagnostics(&uri, 1).await;
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 12, "character": 0}}}),
        )
        .await;
    let hints: Vec<&str> =
        hints["result"].as_array().into_iter().flatten().filter_map(|h| h["label"].as_str()).collect();
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    let lens = lenses["result"][0]["command"]["title"].as_str().unwrap_or_default().to_owned();
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 1}}),
        )
        .await;
    let hover = hover["result"]["contents"]["value"].as_str().unwrap_or_default().to_owned();
    let next_run = hover.lines().find(|l| l.starts_with("Next run")).unwrap_or("(no next run)").to_owned();
    let mut list = Value::Null;
    for _ in 0..200 {
        list = c.request("livenote/listNotes", Value::Null).await;
        if list["result"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let list_next = list["result"][0]["nextDue"].clone();
    // The CLI on the same files and trust store, asked about the same instant.
    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["list", "--format", "json", "--at", now])
        .current_dir(&root_path)
        .env("LIVENOTE_DATA_DIR", root_path.join(".data"))
        .env("LIVENOTE_CONFIG_DIR", root_path.join(".data"))
        .env("TZ", "America/Chicago")
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("livenote list: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    c.shutdown().await;
    format!(
        "hints: {}\nlens: {lens}\nhover: {next_run}\nlistNotes: {list_next}\nlivenote list: {}\n",
        hints.join(" | "),
        cli[0]["nextDue"]
    )
}

#[tokio::test]
async fn hint_lens_hover_and_lists_name_the_same_next_fire() {
    // Ran at 09:01:47 and succeeded: no backoff, the 09:05 occurrence fires.
    let ok =
        note("  lastAttemptAt: \"2026-11-23T15:01:47.000Z\"\n  lastRunAt: \"2026-11-23T15:01:50.000Z\"\n");
    expect_test::expect![[r#"
        hints: every 5 minutes · next 09:05 | 1 min ago
        lens: ● Live · updated 1 min ago · next 09:05
        hover: Next run: 09:05 (Mon 23 Nov 09:05 CST).
        listNotes: "2026-11-23T09:05:00-06:00"
        livenote list: "2026-11-23T09:05:00-06:00"
    "#]]
    .assert_eq(&surfaces(&ok, "2026-11-23T09:03:00-06:00").await);
    // An attempt at 09:03:30 that did not finish (killed): the backoff holds everything until
    // 09:08:30, past the 09:05 occurrence's grace, so the next fire is 09:10 (the hint used to
    // say "due in 2 min").
    let interrupted =
        note("  lastAttemptAt: \"2026-11-23T15:03:30.000Z\"\n  lastRunAt: \"2026-11-23T15:00:05.000Z\"\n");
    expect_test::expect![[r#"
        hints: every 5 minutes · next 09:10 | 6 min ago
        lens: ● Live · updated 6 min ago · next 09:10
        hover: Next run: 09:10 (Mon 23 Nov 09:10 CST).
        listNotes: "2026-11-23T09:10:00-06:00"
        livenote list: "2026-11-23T09:10:00-06:00"
    "#]]
    .assert_eq(&surfaces(&interrupted, "2026-11-23T09:07:00-06:00").await);
    // The same attempt failed: the lens shows the failure; the others still agree.
    let failed = note(
        "  lastAttemptAt: \"2026-11-23T15:03:30.000Z\"\n  lastRunAt: \"2026-11-23T15:00:05.000Z\"\n  lastRunError: boom\n",
    );
    expect_test::expect![[r#"
        hints: failed 3 min ago | every 5 minutes · next 09:10 | 6 min ago
        lens: Failed 3 min ago: boom
        hover: Next run: 09:10 (Mon 23 Nov 09:10 CST).
        listNotes: "2026-11-23T09:10:00-06:00"
        livenote list: "2026-11-23T09:10:00-06:00"
    "#]]
    .assert_eq(&surfaces(&failed, "2026-11-23T09:07:00-06:00").await);
}

/// `[scheduler] max_backoff` reaches every surface: a note that failed 8 times (past both
/// caps) at 09:00:30 retries at 10:00:30 with a 1-hour cap, and every surface says so, where
/// the default 6-hour cap says 15:00:30.
#[tokio::test]
async fn a_configured_max_backoff_is_the_retry_every_surface_names() {
    let failing = "---\nlive:\n  objective: the time\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T14:00:05.000Z\"\n  lastAttemptAt: \"2026-11-23T15:00:30.000Z\"\n  lastRunError: boom\n  failures: 8\n---\n# Time\n";
    expect_test::expect![[r#"
        hints: failed 29 min ago · retry at 15:00 (8th failure) | every hour · next 15:00 | 1 h ago
        lens: Failed 29 min ago: boom · retry at 15:00 (8th failure)
        hover: Next run: retry at 15:00 (8th failure).
        listNotes: "2026-11-23T15:00:30-06:00"
        livenote list: "2026-11-23T15:00:30-06:00"
    "#]]
    .assert_eq(&surfaces(failing, "2026-11-23T09:30:00-06:00").await);
    let capped = "[scheduler]\nmax_backoff = \"1h\"\n";
    expect_test::expect![[r#"
        hints: failed 29 min ago · retry at 10:00 (8th failure) | every hour · next 10:00 | 1 h ago
        lens: Failed 29 min ago: boom · retry at 10:00 (8th failure)
        hover: Next run: retry at 10:00 (8th failure).
        listNotes: "2026-11-23T10:00:30-06:00"
        livenote list: "2026-11-23T10:00:30-06:00"
    "#]]
    .assert_eq(&surfaces_with_config(Some(capped), failing, "2026-11-23T09:30:00-06:00").await);
}
