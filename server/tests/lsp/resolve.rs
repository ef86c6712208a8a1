//! The cron presets' next fire times cost schedule arithmetic per item, at every keystroke in
//! `cronExpr`: a client that resolves documentation (`completionItem.resolveSupport` naming
//! `documentation`, as VS Code and Helix do) gets them from `completionItem/resolve` for the
//! item it shows; any other client gets them in the list, as before.

use expect_test::expect;
use serde_json::{Value, json};

use super::harness::TestClient;
use super::{check, cursor, utf16_caps};

const NOTE: &str = "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"$0\"\n---\n# N\n";

/// The `0 * * * *` preset the server offers at the cursor of [`NOTE`], with `caps`.
async fn hourly_preset(caps: Value) -> (TestClient, Value) {
    let (text, at) = cursor(NOTE);
    let mut c = TestClient::start(&[("n.md", text.as_str())], caps).await;
    let uri = c.open("n.md", &text).await;
    c.diagnostics(&uri, 1).await;
    let items = c.completions(&uri, &text, at).await;
    let Some(item) = items.into_iter().find(|i| i["label"] == "0 * * * *") else {
        panic!("no hourly preset offered")
    };
    (c, item)
}

#[tokio::test]
async fn a_client_that_resolves_gets_the_next_fires_from_resolve() {
    let mut caps = utf16_caps();
    caps["textDocument"]["completion"] =
        json!({"completionItem": {"resolveSupport": {"properties": ["documentation", "detail"]}}});
    let (mut c, item) = hourly_preset(caps).await;
    assert!(item.get("documentation").is_none(), "computed with the list: {item}");
    assert_eq!(item["data"], json!({"livenoteNextFires": "0 * * * *"}), "{item}");
    let resolved = c.request("completionItem/resolve", item.clone()).await;
    check(
        resolved["result"]["documentation"]["value"].as_str().unwrap_or("<none>"),
        expect![[r#"
            Next:
            - Mon 23 Nov 10:00 CST
            - Mon 23 Nov 11:00 CST
            - Mon 23 Nov 12:00 CST"#]],
    );
    assert_eq!(resolved["result"]["textEdit"], item["textEdit"], "resolve changes nothing else");
    // An item the server did not make, or whose data is not a cron expression, comes back as
    // it was.
    let foreign = json!({"label": "x", "data": {"livenoteNextFires": "not cron"}});
    assert_eq!(c.request("completionItem/resolve", foreign.clone()).await["result"], foreign);
    let foreign = json!({"label": "y", "data": [1, 2]});
    assert_eq!(c.request("completionItem/resolve", foreign.clone()).await["result"], foreign);
    c.shutdown().await;
}

#[tokio::test]
async fn a_client_that_does_not_resolve_gets_them_in_the_list() {
    let (c, item) = hourly_preset(utf16_caps()).await;
    assert!(item.get("data").is_none(), "{item}");
    check(
        item["documentation"]["value"].as_str().unwrap_or("<none>"),
        expect![[r#"
            Next:
            - Mon 23 Nov 10:00 CST
            - Mon 23 Nov 11:00 CST
            - Mon 23 Nov 12:00 CST"#]],
    );
    c.shutdown().await;
}
