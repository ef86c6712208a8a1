//! Issue 16 §4 in the editor: `live/expired` appears when the clock passes `until`, with no
//! edit (pushed, and refreshed for pull clients), with quick fixes that extend or remove it;
//! `live.maxChars` completes and hovers like the other keys, a malformed one is an error, and
//! a body over it is a warning that the lens and the hover repeat.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::harness::{self, TestClient, pos};
use super::{render_diags, utf16_caps};

/// No triggers: a scheduled run would edit the note meanwhile.
const NOTE: &str = "---\nlive:\n  objective: Conference notes\n  until: \"2026-11-24\" # the conference\n  active: true\n---\n# Conf\n";

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Wait until the workspace is indexed and its engines run, so that nothing republishes
/// diagnostics later on its own (configuration loaded, index built): from then on only the
/// clock does.
async fn settled(c: &mut TestClient) {
    for _ in 0..200 {
        let list = c.request("livenote/listNotes", Value::Null).await;
        if list["result"].as_array().is_some_and(|a| !a.is_empty()) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the workspace was never indexed");
}

/// The quick fixes offered at byte `offset`, each as its title and the text after its edit.
async fn fixes(c: &mut TestClient, uri: &str, text: &str, offset: usize) -> String {
    let p = pos(text, offset, false);
    let res = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": p, "end": p},
                   "context": {"diagnostics": []}}),
        )
        .await;
    let mut out = String::new();
    for a in res["result"].as_array().into_iter().flatten().filter(|a| a["kind"] == "quickfix") {
        let edits = a["edit"]["documentChanges"][0]["edits"].as_array().cloned().unwrap_or_default();
        let codes: Vec<&str> =
            a["diagnostics"].as_array().into_iter().flatten().filter_map(|d| d["code"].as_str()).collect();
        out.push_str(&format!(
            "== {} (fixes {})\n{}",
            a["title"].as_str().unwrap_or_default(),
            codes.join(", "),
            harness::apply(text, &edits, false)
        ));
    }
    out
}

#[tokio::test]
async fn expired_appears_when_the_clock_passes_until_with_fixes() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("n.md", NOTE)], utf16_caps(), Value::Null, true).await;
    c.clock.set(at("2026-11-24T23:59:00-06:00"));
    settled(&mut c).await;
    let uri = c.open("n.md", NOTE).await;
    assert_eq!(c.diagnostics(&uri, 1).await, Vec::<Value>::new());
    // Midnight in Chicago: no edit, and the diagnostics come again.
    c.clock.set(at("2026-11-25T00:00:00-06:00"));
    let diags = c.diagnostics(&uri, 1).await;
    expect_test::expect![[r#"
        3:9-3:21 3 live/expired this note expired: `until` passed on Tue 24 Nov 2026; nothing fires on schedule or on events (a run by hand still works)
    "#]]
    .assert_eq(&render_diags(&diags));
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(lenses["result"][0]["command"]["title"], "Expired Tue 24 Nov", "{lenses}");
    let offset = NOTE.find("2026-11-24").unwrap_or(0);
    expect_test::expect![[r#"
        == Extend until 2026-12-02 (a week from today) (fixes live/expired)
        ---
        live:
          objective: Conference notes
          until: "2026-12-02" # the conference
          active: true
        ---
        # Conf
        == Extend until 2026-12-25 (a month from today) (fixes live/expired)
        ---
        live:
          objective: Conference notes
          until: "2026-12-25" # the conference
          active: true
        ---
        # Conf
        == Remove `until` (fixes live/expired)
        ---
        live:
          objective: Conference notes
          active: true
        ---
        # Conf
    "#]]
    .assert_eq(&fixes(&mut c, &uri, NOTE, offset).await);
    // A clock set back un-expires the note, again without an edit.
    c.clock.set(at("2026-11-24T12:00:00-06:00"));
    assert_eq!(c.diagnostics(&uri, 1).await, Vec::<Value>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn pull_clients_are_asked_to_pull_again_when_until_passes() {
    let mut caps = utf16_caps();
    caps["textDocument"]["diagnostic"] = json!({"dynamicRegistration": false});
    caps["workspace"]["diagnostics"] = json!({"refreshSupport": true});
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("n.md", NOTE)], caps, Value::Null, true).await;
    c.clock.set(at("2026-11-24T23:00:00-06:00"));
    settled(&mut c).await;
    let uri = c.open("n.md", NOTE).await;
    let pull = json!({"textDocument": {"uri": uri}});
    let before = c.request("textDocument/diagnostic", pull.clone()).await;
    assert_eq!(before["result"]["items"], json!([]), "{before}");
    // Refreshes asked for so far (the index, the configuration) are not the one awaited.
    while tokio::time::timeout(
        std::time::Duration::from_millis(300),
        c.next_notification("workspace/diagnostic/refresh"),
    )
    .await
    .is_ok()
    {}
    c.clock.set(at("2026-11-25T00:00:01-06:00"));
    c.next_notification("workspace/diagnostic/refresh").await;
    let after = c.request("textDocument/diagnostic", pull).await;
    let items = after["result"]["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.iter().map(|d| d["code"].clone()).collect::<Vec<_>>(), vec![json!("live/expired")]);
    c.shutdown().await;
}

const BUDGET: &str =
    "---\nlive:\n  objective: Standup notes\n  maxChars: 20\n---\n# Standup\n\n- Shipped the importer.\n";

#[tokio::test]
async fn a_body_over_its_budget_is_a_warning_and_the_lens_says_so() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("n.md", BUDGET)], utf16_caps(), Value::Null, true).await;
    let uri = c.open("n.md", BUDGET).await;
    expect_test::expect![[r#"
        3:12-3:14 2 live/over-budget the body is 35 characters, over its budget of 20 by 15: runs may only shrink it until it fits; trim older sections or raise `maxChars`
    "#]]
    .assert_eq(&render_diags(&c.diagnostics(&uri, 1).await));
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(
        lenses["result"][0]["command"]["title"], "● Live · never run · manual only · over budget (35 of 20)",
        "{lenses}"
    );
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 1}}),
        )
        .await;
    let hover = hover["result"]["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        hover.contains("\n\nBudget: 35 of 20 characters (over budget by 15; trim older sections)\n\n"),
        "{hover}"
    );
    // Trimming the body clears the warning and the lens's note.
    let start = BUDGET.find("- Shipped").unwrap_or(0);
    c.edit(&uri, start, BUDGET.len(), "").await;
    assert_eq!(c.diagnostics(&uri, 2).await, Vec::<Value>::new());
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(lenses["result"][0]["command"]["title"], "● Live · never run · manual only", "{lenses}");
    c.shutdown().await;
}

#[tokio::test]
async fn max_chars_completes_hovers_and_must_be_a_positive_number() {
    let text = "---\nlive:\n  objective: Standup notes\n  max\n---\n# Standup\n";
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("n.md", text)], utf16_caps(), Value::Null, true).await;
    let uri = c.open("n.md", text).await;
    let at = text.find("max").unwrap_or(0) + 3;
    let res = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": pos(text, at, false)}),
        )
        .await;
    let items: Vec<String> = res["result"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["label"] == "maxChars")
        .map(|i| format!("{} | {} | {}", i["label"], i["detail"], i["textEdit"]["newText"]))
        .collect();
    expect_test::expect![[r#"["\"maxChars\" | \"characters, a whole number\" | \"maxChars: \""]"#]]
        .assert_eq(&format!("{items:?}"));

    let text = "---\nlive:\n  objective: Standup notes\n  maxChars: lots\n---\n# Standup\n";
    c.edit(&uri, 0, c.doc(&uri).text.len(), text).await;
    expect_test::expect![[r#"
        3:12-3:16 1 live/invalid-max-chars `maxChars` must be a whole number of characters above zero, like 4000, found the string "lots"
    "#]]
    .assert_eq(&render_diags(&c.diagnostics(&uri, 2).await));
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": pos(text, text.find("maxChars").unwrap_or(0) + 2, false)}),
        )
        .await;
    let hover = hover["result"]["contents"]["value"].as_str().unwrap_or_default();
    assert!(hover.contains("The body's budget, in characters"), "{hover}");
    c.shutdown().await;
}
