//! `live.until`: the hint names the last day while the note is live; once it has passed, the
//! lens says "Expired <date>", `livenote/listNotes` says `expired` with no next fire, and the
//! cron's hint promises none. A malformed value is an error with the accepted forms.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::harness::TestClient;
use super::utf16_caps;

const NOTE: &str = "---\nlive:\n  objective: Conference notes\n  until: 2026-11-24\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-24T14:00:05Z\"\n---\n# Conf\n";

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Hints, the status lens and the listNotes item at one instant, one line each.
async fn surfaces(c: &mut TestClient, uri: &str) -> String {
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
    let mut list = Value::Null;
    for _ in 0..200 {
        list = c.request("livenote/listNotes", Value::Null).await;
        if list["result"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let item = &list["result"][0];
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 1}}),
        )
        .await;
    let hover = hover["result"]["contents"]["value"].as_str().unwrap_or_default();
    let hover = hover.lines().next().unwrap_or_default().to_owned();
    format!(
        "hints: {}\nlens: {lens}\nhover: {hover}\nlistNotes: {} next {}\n",
        hints.join(" | "),
        item["status"],
        item["nextDue"]
    )
}

#[tokio::test]
async fn until_shows_on_every_surface_and_expires() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("n.md", NOTE)], utf16_caps(), Value::Null, true).await;
    c.clock.set(at("2026-11-24T08:30:00-06:00"));
    let uri = c.open("n.md", NOTE).await;
    assert_eq!(c.diagnostics(&uri, 1).await, Vec::<Value>::new());
    let before = surfaces(&mut c, &uri).await;
    c.clock.set(at("2026-11-25T00:00:00-06:00"));
    let after = surfaces(&mut c, &uri).await;
    expect_test::expect![[r#"
        hints: until Tue 24 Nov | every hour · next 09:00 | 29 min ago
        lens: ● Live · updated 29 min ago · next 09:00
        hover: **Live note** · live
        listNotes: "live" next "2026-11-24T09:00:00-06:00"
        --
        hints: ended Tue 24 Nov | every hour | 15 h ago
        lens: Expired Tue 24 Nov
        hover: **Live note** · expired (`until` has passed): nothing fires on schedule or on events
        listNotes: "expired" next null
    "#]]
    .assert_eq(&format!("{before}--\n{after}"));
    c.shutdown().await;
}

/// An expired note's window never opens again: its hint says nothing of "opens 14:00" (the
/// `until` hint says "ended"), as its lens and listNotes say it fires no more.
#[tokio::test]
async fn an_expired_notes_windows_promise_nothing() {
    let note = "---\nlive:\n  objective: Conference notes\n  until: 2026-11-24\n  triggers:\n    windows:\n      - startTime: \"14:00\"\n        endTime: \"16:00\"\n  lastRunAt: \"2026-11-23T20:00:05Z\"\n---\n# Conf\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("n.md", note)], utf16_caps(), Value::Null, true).await;
    c.clock.set(at("2026-11-24T10:00:00-06:00"));
    let uri = c.open("n.md", note).await;
    assert_eq!(c.diagnostics(&uri, 1).await, Vec::<Value>::new());
    let before = surfaces(&mut c, &uri).await;
    c.clock.set(at("2026-11-25T10:00:00-06:00"));
    let after = surfaces(&mut c, &uri).await;
    expect_test::expect![[r#"
        hints: until Tue 24 Nov | opens 14:00 | 19 h ago
        lens: ● Live · updated 19 h ago · next 14:00
        hover: **Live note** · live
        listNotes: "live" next "2026-11-24T14:00:00-06:00"
        --
        hints: ended Tue 24 Nov | yesterday
        lens: Expired Tue 24 Nov
        hover: **Live note** · expired (`until` has passed): nothing fires on schedule or on events
        listNotes: "expired" next null
    "#]]
    .assert_eq(&format!("{before}--\n{after}"));
    c.shutdown().await;
}

#[tokio::test]
async fn a_malformed_until_is_an_error_with_the_accepted_forms() {
    let text = NOTE.replace("until: 2026-11-24", "until: 24 Nov");
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("n.md", &text)], utf16_caps(), Value::Null, true).await;
    let uri = c.open("n.md", &text).await;
    let diags = c.diagnostics(&uri, 1).await;
    let shown: Vec<String> = diags
        .iter()
        .map(|d| format!("{} {} {} {}", d["range"]["start"]["line"], d["severity"], d["code"], d["message"]))
        .collect();
    expect_test::expect![[r#"3 1 "live/invalid-until" "`until` must be a date like 2026-02-25 (the end of that day) or an RFC 3339 time like \"2026-02-25T18:00:00Z\", found \"24 Nov\"""#]].assert_eq(&shown.join("\n"));
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(lenses["result"][0]["command"]["title"], "Invalid: fix 1 error", "{lenses}");
    c.shutdown().await;
}
