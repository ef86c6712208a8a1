//! `live.sources` in the editor (issue 24 §3): names the folder does not configure get
//! `live/unknown-source` with a fix to the nearest; the list completes from the folder's
//! sources; `sources` without `eventMatchCriteria` is told it does nothing.

use serde_json::{Value, json};

use super::harness::{TestClient, apply};
use super::{check, cursor, render_diags, utf16_caps};
use expect_test::expect;

const CONFIG: &str = "[sources.mail]\nkind = \"command\"\ncommand = [\"true\"]\n\n[sources.releases]\nkind = \"feed\"\nurl = \"https://example.org/releases.atom\"\n";
const NOTE: &str =
    "---\nlive:\n  objective: x\n  sources: [mial]\n  triggers:\n    eventMatchCriteria: Q3 mail\n---\n# N\n";

async fn start() -> TestClient {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let files = [(".livenote.toml", CONFIG), ("n.md", NOTE)];
    TestClient::start_in(root, &files, utf16_caps(), json!({"scheduler": {"enabled": false}}), true).await
}

#[tokio::test]
async fn an_unknown_source_is_reported_with_a_fix() {
    let mut c = start().await;
    let uri = c.open("n.md", NOTE).await;
    let diags = c.diagnostics(&uri, 1).await;
    check(
        &render_diags(&diags),
        expect![[r#"
            3:12-3:16 2 live/unknown-source no source named `mial` (this folder's sources are `mail`, `releases`); only events queued with `livenote event --source mial` reach this note
        "#]],
    );
    let actions = c.fixes_for(&uri, &diags).await;
    let action = &actions["result"][0];
    assert_eq!(action["title"], "Use source `mail`", "{actions}");
    assert_eq!(action["diagnostics"][0]["code"], "live/unknown-source", "{actions}");
    let edits = action["edit"]["documentChanges"][0]["edits"].as_array().cloned().unwrap_or_default();
    let fixed = apply(NOTE, &edits, false);
    assert_eq!(fixed, NOTE.replace("[mial]", "[mail]"));
    // Fixed, the note is quiet.
    c.edit(&uri, 0, NOTE.len(), &fixed).await;
    assert_eq!(c.diagnostics(&uri, 2).await, Vec::<Value>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn source_names_complete_in_the_list_and_on_a_new_line() {
    let mut c = start().await;
    let uri = c.open("n.md", NOTE).await;
    let _ = c.diagnostics(&uri, 1).await;
    let mut version = 1;
    let mut current = NOTE.to_owned();
    for marked in [
        "---\nlive:\n  objective: x\n  sources: [mail, $0]\n  triggers:\n    eventMatchCriteria: Q3 mail\n---\n# N\n",
        "---\nlive:\n  objective: x\n  sources:\n    - re$0\n  triggers:\n    eventMatchCriteria: Q3 mail\n---\n# N\n",
        "---\nlive:\n  objective: x\n  sources:$0\n  triggers:\n    eventMatchCriteria: Q3 mail\n---\n# N\n",
    ] {
        let (typed, at) = cursor(marked);
        c.edit(&uri, 0, current.len(), &typed).await;
        version += 1;
        let _ = c.diagnostics(&uri, version).await;
        current = typed.clone();
        let rendered: Vec<String> = c
            .completions(&uri, &typed, at)
            .await
            .iter()
            .map(|i| {
                let insert = i["textEdit"]["newText"].as_str().or(i["insertText"].as_str()).unwrap_or("");
                format!(
                    "{} {} {} -> {insert:?}",
                    i["label"].as_str().unwrap_or(""),
                    i["kind"],
                    i["detail"].as_str().unwrap_or("")
                )
            })
            .collect();
        let shown = format!("{marked}\n{}\n", rendered.join("\n"));
        match version {
            2 => check(
                &shown,
                expect![[r#"
                    ---
                    live:
                      objective: x
                      sources: [mail, $0]
                      triggers:
                        eventMatchCriteria: Q3 mail
                    ---
                    # N

                    releases 23 feed source, once the folder is trusted -> "releases"
                "#]],
            ),
            3 => check(
                &shown,
                expect![[r#"
                ---
                live:
                  objective: x
                  sources:
                    - re$0
                  triggers:
                    eventMatchCriteria: Q3 mail
                ---
                # N

                mail 23 command source, once the folder is trusted -> "mail"
                releases 23 feed source, once the folder is trusted -> "releases"
            "#]],
            ),
            _ => check(
                &shown,
                expect![[r#"
                ---
                live:
                  objective: x
                  sources:$0
                  triggers:
                    eventMatchCriteria: Q3 mail
                ---
                # N

                mail 23 command source, once the folder is trusted -> " [mail]"
                releases 23 feed source, once the folder is trusted -> " [releases]"
            "#]],
            ),
        }
    }
    c.shutdown().await;
}

#[tokio::test]
async fn sources_without_criteria_does_nothing_and_says_so() {
    let mut c = start().await;
    let text =
        "---\nlive:\n  objective: x\n  sources: [mail]\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n# N\n";
    let uri = c.open("n.md", text).await;
    let diags = c.diagnostics(&uri, 1).await;
    check(
        &render_diags(&diags),
        expect![[r#"
            3:2-3:9 2 live/sources-without-criteria `sources` narrows which events reach the note, and it has no `triggers.eventMatchCriteria`: no event reaches it; add the criteria, or remove `sources`
        "#]],
    );
    c.shutdown().await;
}

fn done_record(id: &str, subject: &str, candidates: &[&str]) -> String {
    json!({
        "id": id, "source": "mail", "type": "mail.message", "createdAt": "2026-11-03T09:00:00Z",
        "payload": {"subject": subject, "from": "ann@example.org"},
        "processedAt": "2026-11-03T09:00:02Z",
        "candidateFilePaths": candidates,
        "results": candidates.iter().map(|c| json!({"filePath": c, "status": "done"})).collect::<Vec<_>>(),
    })
    .to_string()
}

/// Hover on `eventMatchCriteria` lists the folder's sources and the latest events routing gave
/// the note (issue 24 §3); an event processed later (by `watch`, or this server) shows at the
/// next hover, through the file watcher, without the note changing.
#[tokio::test]
async fn hover_on_the_criteria_shows_the_latest_events_routed_here() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let files = [
        (".livenote.toml", CONFIG),
        ("n.md", NOTE),
        (
            ".livenote/events/done/01M6GA0000000000000000000A.json",
            &*done_record("01M6GA0000000000000000000A", "Q3: first numbers", &["n.md"]),
        ),
        (
            ".livenote/events/done/01M6GA0000000000000000000B.json",
            &*done_record("01M6GA0000000000000000000B", "garden", &["other.md"]),
        ),
    ];
    // Trusted with its `.livenote.toml` (an untrusted one would wait on the trust question),
    // and watched by the server itself, as where the client does not watch.
    for (rel, text) in files {
        let p = root.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(root.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
    }
    let store = livenote::workspace::trust::TrustStore::in_dir(&root.path().join(".data"));
    store.trust(root.path()).unwrap_or_else(|e| panic!("{e}"));
    let mut c =
        TestClient::start_watching(root, &[], utf16_caps(), json!({"scheduler": {"enabled": false}})).await;
    let uri = c.open("n.md", NOTE).await;
    let _ = c.diagnostics(&uri, 1).await;
    let at = json!({"line": 5, "character": 8});
    let hover = |v: Value| v["result"]["contents"]["value"].as_str().unwrap_or_default().to_owned();
    let first =
        hover(c.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": at})).await);
    let latest = first.split("Latest events routed here:").nth(1).unwrap_or_default().to_owned();
    check(
        &latest,
        expect![[r#"

            - 3 Nov 03:00: `mail.message` from `mail`, done: Q3: first numbers"#]],
    );
    let second = done_record("01M6GA0000000000000000000C", "Q3: second numbers", &["n.md"]);
    let path = c.root.path().join(".livenote/events/done/01M6GA0000000000000000000C.json");
    let mut shown = String::new();
    // Written again when not seen: the watch may start just after the first write.
    'written: for _ in 0..5 {
        std::fs::write(&path, &second).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..50 {
            shown = hover(
                c.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": at})).await,
            );
            if shown.contains("second numbers") {
                break 'written;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    assert!(shown.contains("second numbers") && shown.contains("first numbers"), "{shown}");
    assert!(
        shown.find("second").unwrap_or(usize::MAX) < shown.find("first").unwrap_or(0),
        "newest first: {shown}"
    );
    c.shutdown().await;
}
