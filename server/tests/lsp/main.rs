//! Protocol tests: the real language server driven in-process over framed JSON-RPC, with
//! fixtures where `$0` marks the cursor and expect-test snapshots of what an editor receives.

mod attempts;
mod budget;
mod buffer_and_disk;
mod cancel;
mod client_uris;
#[path = "../common/mod.rs"]
mod common;
mod costs;
mod crlf;
mod harness;
mod host;
mod identity;
mod make_live;
mod memory;
mod move_trigger;
mod next_fire;
mod reaches_disk;
mod refresh;
mod resolve;
mod shown;
mod skills;
mod sources;
mod undo;
mod until;
mod views;
mod world;

use expect_test::{Expect, expect};
use harness::{TestClient, pos};
use serde_json::{Value, json};

fn utf16_caps() -> Value {
    json!({
        "textDocument": {"codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}},
        "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true},
                      "codeLens": {"refreshSupport": true}, "inlayHint": {"refreshSupport": true}}
    })
}

fn utf8_caps() -> Value {
    let mut c = utf16_caps();
    c["general"] = json!({"positionEncodings": ["utf-8", "utf-16"]});
    c
}

/// Diagnostics as `line:col-line:col severity code message`, 0-based as on the wire.
fn render_diags(ds: &[Value]) -> String {
    ds.iter()
        .map(|d| {
            let r = &d["range"];
            format!(
                "{}:{}-{}:{} {} {} {}\n",
                r["start"]["line"],
                r["start"]["character"],
                r["end"]["line"],
                r["end"]["character"],
                d["severity"],
                d["code"].as_str().unwrap_or(""),
                d["message"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn cursor(fixture: &str) -> (String, usize) {
    let Some(at) = fixture.find("$0") else { panic!("no $0 in fixture") };
    (fixture.replacen("$0", "", 1), at)
}

const BROKEN: &str = "---\ntitle: \"😀 日本語\"\nlive:\n  objective: \"東京 🌧\"\n  active: yes\n  triggers:\n    cron: \"0 9 * * *\"\n---\n# Tokyo\n";

#[tokio::test]
async fn diagnostics_are_pushed_on_open_and_change_in_utf16() {
    let mut c = TestClient::start(&[], utf16_caps()).await;
    let uri = c.open("tokyo.md", BROKEN).await;
    check(
        &render_diags(&c.diagnostics(&uri, 1).await),
        expect![[r#"
        4:10-4:13 1 live/wrong-type `active` must be true or false, found the string "yes" (YAML 1.2 reads `yes`/`no` as text)
        6:4-6:8 2 live/unknown-key unknown key `cron` in `triggers`; did you mean `cronExpr`?
    "#]],
    );
    // Fix `active` and watch the error go.
    let at = BROKEN.find("yes").unwrap_or(0);
    c.edit(&uri, at, at + 3, "true").await;
    check(
        &render_diags(&c.diagnostics(&uri, 2).await),
        expect![[r#"
        6:4-6:8 2 live/unknown-key unknown key `cron` in `triggers`; did you mean `cronExpr`?
    "#]],
    );
    c.shutdown().await;
}

#[tokio::test]
async fn positions_in_utf8_and_crlf() {
    let mut c = TestClient::start(&[], utf8_caps()).await;
    let text = BROKEN.replace('\n', "\r\n");
    let uri = c.open("tokyo.md", &text).await;
    check(
        &render_diags(&c.diagnostics(&uri, 1).await),
        expect![[r#"
        4:10-4:13 1 live/wrong-type `active` must be true or false, found the string "yes" (YAML 1.2 reads `yes`/`no` as text)
        6:4-6:8 2 live/unknown-key unknown key `cron` in `triggers`; did you mean `cronExpr`?
    "#]],
    );
    c.shutdown().await;
}

fn check(actual: &str, expect: Expect) {
    expect.assert_eq(actual);
}

async fn server_text(c: &mut TestClient, uri: &str) -> Value {
    c.request("livenote/documentText", json!({"uri": uri})).await["result"].clone()
}

/// Random edits, multibyte text included, sent back to back without waiting: the server's
/// text must equal the client's, and the last diagnostics must be those of that text.
#[tokio::test]
async fn two_thousand_changes_arrive_in_order() {
    let mut c = TestClient::start(&[], utf16_caps()).await;
    let start = "---\nlive:\n  objective: start\n---\n# T\n";
    let uri = c.open("burst.md", start).await;
    // A fixed-seed xorshift keeps the burst reproducible without a dependency.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rand = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    let pieces = ["a", "é", "😀", "日本", "\n", "  active: yes\n", "---\n", "", "\r\n", ":"];
    for _ in 0..2000 {
        let text = c.doc(&uri).text;
        // Char boundaries, except inside a CRLF (no position exists there in LSP).
        let bytes = text.as_bytes();
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|&i| {
                text.is_char_boundary(i) && !(i > 0 && bytes[i - 1] == b'\r' && bytes.get(i) == Some(&b'\n'))
            })
            .collect();
        let i = rand(bounds.len());
        let j = (i + rand(4)).min(bounds.len() - 1);
        let k = rand(pieces.len());
        c.edit(&uri, bounds[i], bounds[j], pieces[k]).await;
    }
    let client = c.doc(&uri);
    let server = server_text(&mut c, &uri).await;
    assert_eq!(server["version"], json!(client.version));
    assert_eq!(server["text"].as_str(), Some(client.text.as_str()));
    let published = c.diagnostics(&uri, client.version).await;
    let expected = livenote::note::analyze(
        &client.text,
        &livenote::note::Options {
            providers: None,
            mcp: None,
            skills: None,
            scan_body: true,
            max_backoff: None,
        },
    );
    let codes: Vec<&str> = published.iter().filter_map(|d| d["code"].as_str()).collect();
    let want: Vec<&str> = expected.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, want);
    c.shutdown().await;
}

/// "Make live" from a code action: the command runs, the server sends a versioned
/// applyEdit, the editor applies it, and the note's diagnostics follow.
#[tokio::test]
async fn make_live_round_trip() {
    let mut c = TestClient::start(&[], utf16_caps()).await;
    let uri = c.open("plain.md", "# Groceries\n\nmilk\n").await;
    c.diagnostics(&uri, 1).await;
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri},
            "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}},
            "context": {"diagnostics": []}}),
        )
        .await;
    let titles: Vec<&str> =
        actions["result"].as_array().into_iter().flatten().filter_map(|a| a["title"].as_str()).collect();
    assert!(titles.contains(&"Make live"), "{titles:?}");
    let Some(make_live) =
        actions["result"].as_array().into_iter().flatten().find(|a| a["title"] == "Make live")
    else {
        panic!("no Make live action")
    };
    // The action carries a versioned edit; the editor applies it.
    assert_eq!(make_live["edit"]["documentChanges"][0]["textDocument"]["version"], 1, "{make_live}");
    c.apply_workspace_edit(&make_live["edit"]).await;
    let diags = c.diagnostics(&uri, 2).await;
    assert!(diags.is_empty(), "{diags:?}");
    check(
        &c.doc(&uri).text,
        expect![[r#"
        ---
        live:
          objective: 'Keep this note about "Groceries" up to date.'
        ---
        # Groceries

        milk
    "#]],
    );
    let server = server_text(&mut c, &uri).await;
    assert_eq!(server["text"].as_str(), Some(c.doc(&uri).text.as_str()));
    c.shutdown().await;
}

#[tokio::test]
async fn pause_resume_and_passive_commands() {
    let mut c = TestClient::start(&[], utf16_caps()).await;
    let text = "---\ntitle: x # mine\nlive:\n  objective: keep it\n  triggers:\n    cronExpr: '0 9 * * *'\n---\nbody\n";
    let uri = c.open("n.md", text).await;
    c.diagnostics(&uri, 1).await;
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": "livenote.setActive", "arguments": [uri, false]}),
        )
        .await;
    assert!(res.get("error").is_none(), "{res}");
    c.diagnostics(&uri, 2).await;
    check(
        &c.doc(&uri).text,
        expect![[r#"
        ---
        title: x # mine
        live:
          objective: keep it
          active: false
          triggers:
            cronExpr: '0 9 * * *'
        ---
        body
    "#]],
    );
    let res = c
        .request("workspace/executeCommand", json!({"command": "livenote.makePassive", "arguments": [uri]}))
        .await;
    assert!(res.get("error").is_none(), "{res}");
    c.diagnostics(&uri, 3).await;
    check(
        &c.doc(&uri).text,
        expect![[r#"
        ---
        title: x # mine
        ---
        body
    "#]],
    );
    // The note is passive now: a run starts, finds nothing to run and says so.
    let res =
        c.request("workspace/executeCommand", json!({"command": "livenote.run", "arguments": [uri]})).await;
    assert!(res.get("error").is_none(), "{res}");
    let msg = c.next_notification("window/showMessage").await;
    assert!(msg["message"].as_str().is_some_and(|m| m.contains("the note is not live")), "{msg}");
    let res = c
        .request("workspace/executeCommand", json!({"command": "livenote.setActive", "arguments": []}))
        .await;
    assert!(res.get("error").is_some(), "{res}");
    c.shutdown().await;
}

/// Lenses, hints, hover and completion through the protocol (their logic is tested in
/// `ide::`; this checks the translation, positions included).
#[tokio::test]
async fn lenses_hints_hover_completion() {
    let mut c = TestClient::start(&[], utf16_caps()).await;
    let text = "---\nlive:\n  objective: \"😀 time\"\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n---\n";
    let uri = c.open("n.md", text).await;
    c.diagnostics(&uri, 1).await;
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    let rendered: String = lenses["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            format!("{} {} {}\n", l["range"]["start"]["line"], l["command"]["title"], l["command"]["command"])
        })
        .collect();
    check(
        &rendered,
        expect![[r#"
            1 "Waiting for trust" "livenote.trustWorkspace"
            1 "Run now" "livenote.run"
            1 "Pause" "livenote.setActive"
        "#]],
    );
    // Trusting the workspace (the list lives in the user's data dir) makes the note live.
    let res = c
        .request("workspace/executeCommand", json!({"command": "livenote.trustWorkspace", "arguments": []}))
        .await;
    assert!(res.get("error").is_none(), "{res}");
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(
        lenses["result"][0]["command"]["title"], "● Live · updated 5 min ago · next 10:00",
        "{lenses}"
    );
    // Relative times age with the clock.
    c.clock.advance(chrono::TimeDelta::minutes(10));
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(
        lenses["result"][0]["command"]["title"], "● Live · updated 15 min ago · next 10:00",
        "{lenses}"
    );
    c.clock.set(harness::now());
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 7, "character": 0}}}),
        )
        .await;
    let rendered: String = hints["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| format!("{}:{} {}\n", h["position"]["line"], h["position"]["character"], h["label"]))
        .collect();
    check(
        &rendered,
        expect![[r#"
        4:25 "every hour · next 10:00"
        5:35 "5 min ago"
    "#]],
    );
    let (with_cursor, at) =
        cursor("---\nlive:\n  objective: \"😀 time\"\n  triggers:\n    cronExpr: \"0 * $0* * *\"\n");
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": pos(&with_cursor, at, false)}),
        )
        .await;
    check(
        hover["result"]["contents"]["value"].as_str().unwrap_or("<none>"),
        expect![[r#"
        **Every hour**

        Next:
        - Mon 23 Nov 10:00 CST
        - Mon 23 Nov 11:00 CST
        - Mon 23 Nov 12:00 CST"#]],
    );
    let (with_cursor, at) = cursor("---\nlive:\n  objective: \"😀 time\"\n  $0");
    c.edit(&uri, with_cursor.len(), text.len() - 4, "").await;
    let completion = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": pos(&with_cursor, at, false)}),
        )
        .await;
    let labels: Vec<&str> =
        completion["result"].as_array().into_iter().flatten().filter_map(|i| i["label"].as_str()).collect();
    check(
        &labels.join("\n"),
        expect![[r#"
            active
            triggers
            provider
            model
            tools
            until
            maxChars
            skills
            sources
            notify"#]],
    );
    c.shutdown().await;
}

/// The index covers closed notes: workspace symbols, `livenote.listNotes` and (pull clients)
/// workspace diagnostics.
#[tokio::test]
async fn index_symbols_and_list_notes() {
    let files = [
        (
            "chicago.md",
            "---\ntitle: Chicago time\nlive:\n  objective: time\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n",
        ),
        ("sub/weather.md", "---\nlive:\n  objective: weather\n  active: false\n---\n"),
        ("broken.md", "---\nlive:\n  active: yes\n---\n"),
        ("plain.md", "# plain\n"),
    ];
    let mut caps = utf16_caps();
    caps["textDocument"]["diagnostic"] = json!({"dynamicRegistration": false});
    let mut c = TestClient::start(&files, caps).await;
    // Indexing runs in the background; wait for it.
    let mut list = Value::Null;
    for _ in 0..200 {
        list = c
            .request("workspace/executeCommand", json!({"command": "livenote.listNotes", "arguments": []}))
            .await;
        if list["result"].as_array().is_some_and(|a| a.len() == 3) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let rendered: String = list["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| format!("{} {} due={} next={}\n", i["path"], i["status"], i["due"], i["nextDue"]))
        .collect();
    check(
        &rendered,
        expect![[r#"
        "broken.md" "invalid" due=null next=null
        "chicago.md" "live" due="cron" next="2026-11-23T09:07:00-06:00"
        "sub/weather.md" "paused" due=null next=null
    "#]],
    );
    // The typed request answers exactly what the command does.
    let typed = c.request("livenote/listNotes", Value::Null).await;
    assert_eq!(typed["result"], list["result"], "{typed}");
    let uri = c.uri("chicago.md");
    let by_command = c
        .request("workspace/executeCommand", json!({"command": "livenote.noteStatus", "arguments": [uri]}))
        .await;
    let typed = c.request("livenote/noteStatus", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(typed["result"], by_command["result"], "{typed}");
    assert_eq!(typed["result"]["live"], true, "{typed}");
    assert_eq!(typed["result"]["schedulerEnabled"], true, "{typed}");
    let passive = c.request("livenote/noteStatus", json!({"textDocument": {"uri": c.uri("plain.md")}})).await;
    assert_eq!(passive["result"], json!({"live": false}), "{passive}");
    let bad = c.request("livenote/noteStatus", json!({"uri": 3})).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let symbols = c.request("workspace/symbol", json!({"query": "chi"})).await;
    let rendered: String = symbols["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| format!("{} | {}\n", s["name"], s["containerName"]))
        .collect();
    check(
        &rendered,
        expect![[r#"
            "Chicago time" | "live · due now · chicago.md"
        "#]],
    );
    let ws = c.request("workspace/diagnostic", json!({"previousResultIds": []})).await;
    let rendered: String = ws["result"]["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let name = r["uri"].as_str().unwrap_or("").rsplit('/').next().unwrap_or("").to_owned();
            format!("{name}: {}", render_diags(r["items"].as_array().map(Vec::as_slice).unwrap_or(&[])))
        })
        .collect();
    check(
        &rendered,
        expect![[r#"
        broken.md: 1:0-1:4 1 live/missing-objective a live note needs an `objective`: what the note should keep being, in plain words
        2:10-2:13 1 live/wrong-type `active` must be true or false, found the string "yes" (YAML 1.2 reads `yes`/`no` as text)
    "#]],
    );
    c.shutdown().await;
}

const CONFIG: &str = "[agent]\nprovider = \"echo\"\n[providers.echo]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"printf 'Agent wrote this.\\\\n'\"]\ntimeout = \"10s\"\n";

/// The user types while the agent's edit is in flight: the editor rejects the stale edit,
/// the server recomputes it against the fresh buffer and retries. No keystroke is lost.
#[tokio::test]
async fn agent_edit_racing_a_keystroke_loses_nothing() {
    let note = "---\ntitle: Race\nlive:\n  objective: say something\n---\n# Race\n\nold body\n";
    let mut c = TestClient::start(&[(".livenote.toml", CONFIG), ("race.md", note)], utf16_caps()).await;
    let uri = c.open("race.md", note).await;
    c.diagnostics(&uri, 1).await;
    c.type_before_next_apply("title: Race", " (typed)");
    // Wait for the run to finish: the end of its progress.
    assert_eq!(c.run_to_end(&uri).await, "Updated: Agent wrote this.");
    let text = c.doc(&uri).text;
    assert!(text.contains("title: Race (typed)"), "the keystroke was lost:\n{text}");
    assert!(text.ends_with("# Race\n\nAgent wrote this.\n"), "{text}");
    assert!(text.contains("lastRunSummary: \"Updated: Agent wrote this.\""), "{text}");
    assert!(text.contains("lastRunError: null"), "{text}");
    let server = server_text(&mut c, &uri).await;
    assert_eq!(server["text"].as_str(), Some(text.as_str()));
    c.shutdown().await;
}

/// A model run on a note open in an editor that behaves like Neovim (a second version after
/// each edit, arriving late; `applied: true` for an edit it rejected as stale): every step
/// lands in the buffer, in order, and the buffer ends with exactly the agent's final body.
#[tokio::test]
async fn model_steps_land_in_a_neovim_like_buffer() {
    use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
    let server = MockModelServer::start(
        Flavor::OpenAi,
        vec![
            ScriptedReply::ToolCalls(vec![("append_to_note".to_owned(), json!({"text": "one"}))]),
            ScriptedReply::ToolCalls(vec![("append_to_note".to_owned(), json!({"text": "two"}))]),
            ScriptedReply::ToolCalls(vec![(
                "edit_note".to_owned(),
                json!({"old_text": "old body", "new_text": "new body"}),
            )]),
            ScriptedReply::Text("Counted to two.".to_owned()),
        ],
    )
    .await;
    let settings = json!({
        "agent": {"provider": "m"},
        "providers": {"m": {"kind": "openai", "base_url": server.base_url(), "model": "test-model"}},
    });
    let note = "---\ntitle: Steps\nlive:\n  objective: count\n---\n# Steps\n\nold body\n";
    let mut c = TestClient::start_with_settings(&[("steps.md", note)], utf16_caps(), settings).await;
    c.behave_like_neovim();
    let uri = c.open("steps.md", note).await;
    c.diagnostics(&uri, 1).await;
    // Wait for the run to finish: the end of its progress.
    assert_eq!(c.run_to_end(&uri).await, "Counted to two.");
    let text = c.doc(&uri).text;
    assert!(text.ends_with("# Steps\n\nnew body\none\ntwo\n"), "{text}");
    assert!(text.contains("lastRunSummary: \"Counted to two.\""), "{text}");
    let server_view = server_text(&mut c, &uri).await;
    assert_eq!(server_view["text"].as_str(), Some(text.as_str()));
    c.shutdown().await;
}

/// A run the scheduler starts inside the language server shows as `$/progress` like a manual
/// one, titled with the note's title, not its path.
#[tokio::test]
async fn scheduled_runs_report_progress_titled_with_the_note() {
    let note = "---\nlive:\n  objective: say something\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Hourly digest\n\nold body\n";
    let settings = json!({
        "agent": {"provider": "echo"},
        "providers": {"echo": {"kind": "command", "command": ["sh", "-c", "printf 'Agent wrote this.\\n'"]}},
    });
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("digest.md", note)], utf16_caps(), settings, true).await;
    let begin = json!({"value": c.progress("begin").await});
    assert_eq!(begin["value"]["title"], "Updating Hourly digest", "{begin}");
    let end = json!({"value": c.progress("end").await});
    assert_eq!(end["value"]["message"], "Updated: Agent wrote this.", "{end}");
    c.shutdown().await;
}

/// Issue 21: a note without `title:` is named by its first `# ` heading (SPEC 1), not its file
/// name, on every surface, by one rule: `title:`, else the heading, else the file name.
#[tokio::test]
async fn notes_are_named_by_title_then_heading_then_file_name() {
    let files = [
        (
            "reading-stats.md",
            "---\nlive:\n  objective: count\n---\n\n```sh\n# not the title\n```\n# Reading list statistics\n\n# Second\n",
        ),
        ("clock.md", "---\ntitle: Chicago time\nlive:\n  objective: time\n---\n# Clock\n"),
        ("sub/bare.md", "---\nlive:\n  objective: x\n# a YAML comment\n---\nno heading\n"),
    ];
    let mut c = TestClient::start(&files, utf16_caps()).await;
    let mut list = Value::Null;
    for _ in 0..200 {
        list = c.request("livenote/listNotes", Value::Null).await;
        if list["result"].as_array().is_some_and(|a| a.len() == 3) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let mut rendered: String = list["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| format!("listNotes {} {}\n", i["path"], i["title"]))
        .collect();
    for file in ["reading-stats.md", "clock.md", "sub/bare.md"] {
        let status = c.request("livenote/noteStatus", json!({"textDocument": {"uri": c.uri(file)}})).await;
        rendered.push_str(&format!("noteStatus {file} {}\n", status["result"]["title"]));
    }
    for query in ["statistics", "chicago", "bare"] {
        let symbols = c.request("workspace/symbol", json!({"query": query})).await;
        for s in symbols["result"].as_array().into_iter().flatten() {
            rendered.push_str(&format!("symbol {query}: {}\n", s["name"]));
        }
    }
    check(
        &rendered,
        expect![[r#"
            listNotes "clock.md" "Chicago time"
            listNotes "reading-stats.md" "Reading list statistics"
            listNotes "sub/bare.md" "bare"
            noteStatus reading-stats.md "Reading list statistics"
            noteStatus clock.md "Chicago time"
            noteStatus sub/bare.md "bare"
            symbol statistics: "Reading list statistics"
            symbol chicago: "Chicago time"
            symbol bare: "bare"
        "#]],
    );
    // An open buffer's heading names the note as typed.
    let text = files[0].1.replace("# Reading list statistics", "# Reading, renamed");
    let uri = c.open("reading-stats.md", &text).await;
    let status = c.request("livenote/noteStatus", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(status["result"]["title"], "Reading, renamed", "{status}");
    c.shutdown().await;
}

/// `$/progress` names a run's note by the same rule as every list: `title:` first.
#[tokio::test]
async fn progress_names_the_note_like_the_lists() {
    let note = "---\ntitle: Chicago time\nlive:\n  objective: say something\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Clock\n\nold body\n";
    let settings = json!({
        "agent": {"provider": "echo"},
        "providers": {"echo": {"kind": "command", "command": ["sh", "-c", "printf 'Agent wrote this.\\n'"]}},
    });
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[("clock.md", note)], utf16_caps(), settings, true).await;
    let begin = json!({"value": c.progress("begin").await});
    assert_eq!(begin["value"]["title"], "Updating Chicago time", "{begin}");
    c.progress("end").await;
    c.shutdown().await;
}

/// A client that opens no folder (VS Code's single-file mode, Neovim's bare `vim.lsp.config`
/// outside a project) can still run a note: the first note it opens roots the workspace.
#[tokio::test]
async fn a_client_with_no_workspace_folder_can_run_a_note() {
    let note = "---\nlive:\n  objective: say something\n---\n# Lonely\n\nold body\n";
    let settings = json!({
        "agent": {"provider": "echo"},
        "providers": {"echo": {"kind": "command", "command": ["sh", "-c", "printf 'Agent wrote this.\\n'"]}},
    });
    let mut c = TestClient::start_without_folder(&[("notes/lonely.md", note)], utf16_caps(), settings).await;
    let uri = c.open("notes/lonely.md", note).await;
    c.diagnostics(&uri, 1).await;
    // Wait for the run to finish: the end of its progress.
    assert_eq!(c.run_to_end(&uri).await, "Updated: Agent wrote this.");
    let text = c.doc(&uri).text;
    assert!(text.ends_with("# Lonely\n\nAgent wrote this.\n"), "{text}");
    // Rooted at the note's own folder (nothing above it marks a workspace): its state is there.
    assert!(c.root.path().join("notes/.livenote").is_dir());
    c.shutdown().await;
}

/// `[scheduler] exclude` (here VS Code's `livenote.scheduler.exclude`, sent as client settings)
/// holds in the language server as under `livenote watch`: an excluded live note is not
/// scheduled, not listed, and a change to it does not bring it back.
#[tokio::test]
async fn excluded_notes_are_not_scheduled_or_listed() {
    let due = "---\nlive:\n  objective: say something\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Due\n\nold body\n";
    let settings = json!({
        "scheduler": {"exclude": ["archive/**"]},
        "agent": {"provider": "echo"},
        "providers": {"echo": {"kind": "command", "command": ["sh", "-c", "printf 'Agent wrote this.\\n'"]}},
    });
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c =
        TestClient::start_in(root, &[("now.md", due), ("archive/old.md", due)], utf16_caps(), settings, true)
            .await;
    // The note that is not excluded runs (and only it: a second run would show a second begin).
    c.progress("end").await;
    let list = c.request("livenote/listNotes", Value::Null).await;
    let paths: Vec<&str> =
        list["result"].as_array().into_iter().flatten().filter_map(|i| i["path"].as_str()).collect();
    assert_eq!(paths, ["now.md"], "{list}");
    let archived = c.root.path().join("archive/old.md");
    assert_eq!(std::fs::read_to_string(&archived).unwrap_or_default(), due);
    // Edited on disk: the file event must not index it again.
    std::fs::write(&archived, due.replace("old body", "edited")).unwrap_or_else(|e| panic!("{e}"));
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": c.uri("archive/old.md"), "type": 2}]}),
    )
    .await;
    let list = c.request("livenote/listNotes", Value::Null).await;
    let paths: Vec<&str> =
        list["result"].as_array().into_iter().flatten().filter_map(|i| i["path"].as_str()).collect();
    assert_eq!(paths, ["now.md"], "{list}");
    // Removing the setting brings it back (the folder is walked again).
    c.notify("workspace/didChangeConfiguration", json!({"settings": {"livenote": {
        "agent": {"provider": "echo"},
        "providers": {"echo": {"kind": "command", "command": ["sh", "-c", "printf 'Agent wrote this.\\n'"]}},
    }}}))
    .await;
    let mut paths = Vec::new();
    for _ in 0..200 {
        let list = c.request("livenote/listNotes", Value::Null).await;
        paths = list["result"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i["path"].as_str().map(str::to_owned))
            .collect();
        if paths.len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(paths, ["archive/old.md", "now.md"]);
    c.shutdown().await;
}

/// `provider:` is checked against the root's configuration (here the client's settings): a
/// typo gets `live/unknown-provider` with "did you mean" and its fix first; completion offers
/// the configured names.
#[tokio::test]
async fn unknown_providers_are_reported_and_names_completed() {
    let settings = json!({
        "providers": {
            "claude": {"kind": "anthropic", "model": "claude-sonnet-4-5", "api_key_env": "NO_SUCH_KEY_VAR"},
            "local": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "llama"},
        },
    });
    let note = "---\nlive:\n  objective: x\n  provider: claud\n---\n# N\n";
    let mut c = TestClient::start_with_settings(&[("n.md", note)], utf16_caps(), settings).await;
    let uri = c.open("n.md", note).await;
    let diags = c.diagnostics(&uri, 1).await;
    check(
        &render_diags(&diags),
        expect![[r#"
            3:12-3:17 1 live/unknown-provider no provider named `claud` (did you mean `claude`? configured: anthropic, claude, local, openai); see [providers.*] in .livenote.toml
        "#]],
    );
    let actions = c.fixes_for(&uri, &diags).await;
    assert_eq!(actions["result"][0]["title"], "Use provider `claude`", "{actions}");
    assert_eq!(actions["result"][0]["isPreferred"], true, "{actions}");
    // Completion after `provider: `.
    let typed = "---\nlive:\n  objective: x\n  provider: \n---\n# N\n";
    c.edit(&uri, 0, note.len(), typed).await;
    let items = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 12}}),
        )
        .await;
    let labels: Vec<&str> =
        items["result"].as_array().into_iter().flatten().filter_map(|i| i["label"].as_str()).collect();
    for name in ["claude", "local"] {
        assert!(labels.contains(&name), "{name} not offered: {labels:?}");
    }
    c.shutdown().await;
}

/// `tools:` is checked against the root's MCP servers and the tool lists runs kept: unknown
/// names get `live/unknown-tool` with "did you mean"; completion offers the servers and their
/// tools; hover shows a tool's description. None of it starts a server.
#[tokio::test]
async fn mcp_tools_are_checked_completed_and_described_without_starting_servers() {
    use livenote::config::{McpServerConfig, McpTransport, Origin};
    use livenote::mcp::cache::{CachedTool, ToolCache};
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let marker = root.path().join("server-started");
    let command = vec!["sh".to_owned(), "-c".to_owned(), format!("touch {}", marker.display())];
    let config = format!(
        "[mcp.servers.time]\ncommand = {command:?}\n\n[mcp.servers.github]\ncommand = [\"gh-mcp\"]\n"
    );
    // A run listed the time server's tools before.
    let cfg = McpServerConfig {
        transport: McpTransport::Stdio { command },
        env: Default::default(),
        events: false,
        timeout: std::time::Duration::from_secs(30),
        origin: Origin::Workspace,
    };
    let tool = |name: &str, description: &str| CachedTool {
        name: name.to_owned(),
        description: Some(description.to_owned()),
        input_schema: json!({"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}),
    };
    let tools = [
        tool("get_current_time", "Get current time in a specific timezone"),
        tool("convert_time", "Convert time between timezones"),
    ];
    ToolCache::in_dir(&root.path().join(".data"))
        .store("time", &cfg, &tools, harness::now())
        .unwrap_or_else(|e| panic!("{e}"));
    let note = "---\nlive:\n  objective: x\n  tools: [nosuch, tme, time.get_current_tim, github.anything]\n---\n# N\n";
    let files = [(".livenote.toml", config.as_str()), ("n.md", note)];
    let mut c = TestClient::start_in(root, &files, utf16_caps(), Value::Null, true).await;
    let uri = c.open("n.md", note).await;
    check(
        &render_diags(&c.diagnostics(&uri, 1).await),
        expect![[r#"
            3:10-3:16 2 live/unknown-tool no MCP server named `nosuch` (configured: github, time); see [mcp.servers.*] in .livenote.toml
            3:18-3:21 2 live/unknown-tool no MCP server named `tme` (did you mean `time`? configured: github, time); see [mcp.servers.*] in .livenote.toml
            3:23-3:43 2 live/unknown-tool the MCP server `time` has no tool `get_current_tim` (did you mean `get_current_time`? its tools: get_current_time, convert_time)
        "#]],
    );
    // Completion in a block list.
    let (typed, at) = cursor("---\nlive:\n  objective: x\n  tools:\n    - time\n    - $0\n---\n# N\n");
    c.edit(&uri, 0, note.len(), &typed).await;
    let items = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": pos(&typed, at, false)}),
        )
        .await;
    let rendered: Vec<String> = items["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            format!(
                "{} {} {}",
                i["label"].as_str().unwrap_or(""),
                i["kind"],
                i["detail"].as_str().unwrap_or("")
            )
        })
        .collect();
    check(
        &rendered.join("\n"),
        expect![[r#"
        github 9 MCP server: all its tools
        time.get_current_time 3 Get current time in a specific timezone
        time.convert_time 3 Convert time between timezones"#]],
    );
    // Hover on a tool.
    let (hovered, at) = cursor("---\nlive:\n  objective: x\n  tools:\n    - time.conv$0ert_time\n---\n# N\n");
    c.edit(&uri, 0, typed.len(), &hovered).await;
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": pos(&hovered, at, false)}),
        )
        .await;
    check(
        hover["result"]["contents"]["value"].as_str().unwrap_or("<none>"),
        expect![[r#"
        **`convert_time`** · a tool of MCP server `time`

        Convert time between timezones

        Arguments: `timezone`"#]],
    );
    assert!(!c.root.path().join("server-started").exists(), "the editor started an MCP server");
    c.shutdown().await;
}

/// An event waiting in `.livenote/events/pending/` is routed to the note whose criteria match,
/// runs it as an `event` run once the workspace is trusted, and lands in done/ enriched.
#[tokio::test]
async fn language_server_consumes_events() {
    let config = "[agent]\nprovider = \"echo\"\n[providers.echo]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"printf 'Handled: %s\\\\n' \\\"$LIVENOTE_TRIGGER\\\"\"]\n";
    let budget = "---\nlive:\n  objective: track the budget\n  triggers:\n    eventMatchCriteria: Emails about the budget\n---\n# Budget\n";
    let garden = "---\nlive:\n  objective: garden log\n  triggers:\n    eventMatchCriteria: Notes about the garden\n---\n# Garden\n";
    let event = r#"{"id": "01JTX3AAAAAAAAAAAAAAAAAAAA", "source": "gmail", "type": "email.synced", "createdAt": "2026-11-23T15:00:00Z", "payload": "Subject: Q3 budget review moved to Friday"}"#;
    let c = TestClient::start(
        &[
            (".livenote.toml", config),
            ("budget.md", budget),
            ("garden.md", garden),
            (".livenote/events/pending/01JTX3AAAAAAAAAAAAAAAAAAAA.json", event),
        ],
        utf16_caps(),
    )
    .await;
    let done = c.root.path().join(".livenote/events/done/01JTX3AAAAAAAAAAAAAAAAAAAA.json");
    for _ in 0..500 {
        if done.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&done).unwrap_or_default())
        .unwrap_or_else(|e| panic!("no done record: {e}"));
    assert_eq!(record["candidateFilePaths"], json!(["budget.md"]), "{record}");
    assert_eq!(record["runIds"].as_array().map(Vec::len), Some(1), "{record}");
    assert!(record["processedAt"].is_string());
    let budget_now = std::fs::read_to_string(c.root.path().join("budget.md")).unwrap_or_default();
    assert!(budget_now.ends_with("# Budget\n\nHandled: event\n"), "{budget_now}");
    let garden_now = std::fs::read_to_string(c.root.path().join("garden.md")).unwrap_or_default();
    assert_eq!(garden_now, garden);
    c.shutdown().await;
}

/// A source of the trusted folder polls inside the language server as under `watch`: its new
/// item becomes an event, routed to the matching note, which runs (issue 24).
#[tokio::test]
async fn language_server_polls_sources() {
    let config = "[agent]\nprovider = \"echo\"\n[providers.echo]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"printf 'Handled: %s\\\\n' \\\"$LIVENOTE_TRIGGER\\\"\"]\n[sources.mail]\nkind = \"command\"\nbackfill = true\ncommand = [\"sh\", \"-c\", \"cat mail.jsonl\"]\n";
    let budget = "---\nlive:\n  objective: track the budget\n  triggers:\n    eventMatchCriteria: Emails about the budget\n---\n# Budget\n";
    let garden = "---\nlive:\n  objective: garden log\n  triggers:\n    eventMatchCriteria: Notes about the garden\n---\n# Garden\n";
    let mail = r#"{"id": "m-1", "payload": {"subject": "Q3 budget review moved to Friday"}}"#;
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let c = TestClient::start_in(
        root,
        &[(".livenote.toml", config), ("budget.md", budget), ("garden.md", garden), ("mail.jsonl", mail)],
        utf16_caps(),
        Value::Null,
        true,
    )
    .await;
    let path = c.root.path().join("budget.md");
    for _ in 0..500 {
        if std::fs::read_to_string(&path).is_ok_and(|t| t.contains("Handled: event")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let budget_now = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(budget_now.ends_with("# Budget\n\nHandled: event\n"), "{budget_now}");
    // Kept in the data folder (the harness's trust store's), never in the workspace's .livenote/.
    assert!(!c.root.path().join(".livenote/sources").exists());
    let state = common::source_state_in(&c.root.path().join(".data"), "mail")
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    assert!(state.contains("\"m-1\""), "{state}");
    let garden_now = std::fs::read_to_string(c.root.path().join("garden.md")).unwrap_or_default();
    assert_eq!(garden_now, garden);
    c.shutdown().await;
}

/// Wait (in real time, the server indexes in the background) until `livenote.noteStatus`
/// answers something `done` accepts; return the last answer.
async fn note_status_until(c: &mut TestClient, uri: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..500 {
        let res = c
            .request(
                "workspace/executeCommand",
                json!({"command": "livenote.noteStatus", "arguments": [uri]}),
            )
            .await;
        last = res["result"].clone();
        if done(&last) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    last
}

/// An editor that turns scheduling off (VS Code in an untrusted workspace) sends
/// `scheduler.enabled = false` as initializationOptions: a due note in a trusted workspace
/// does not fire, the lens and `livenote.noteStatus` say so; turning it back on with
/// `workspace/didChangeConfiguration` (here by clearing the setting) fires the note.
#[tokio::test]
async fn client_settings_turn_scheduling_off_and_on() {
    let note = "---\ntitle: Hourly\nlive:\n  objective: say something\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Hourly\n\nold body\n";
    let settings = json!({"livenote": {"scheduler": {"enabled": false}}});
    let mut c = TestClient::start_with_settings(
        &[(".livenote.toml", CONFIG), ("hourly.md", note)],
        utf16_caps(),
        settings,
    )
    .await;
    // Trusted beforehand, so only the setting holds the run back.
    let store = livenote::workspace::trust::TrustStore::in_dir(&c.root.path().join(".data"));
    store.trust(c.root.path()).unwrap_or_else(|e| panic!("{e}"));
    let passive = c.open("plain.md", "# Plain\n").await;
    let res = c
        .request(
            "workspace/executeCommand",
            json!({"command": "livenote.noteStatus", "arguments": [passive]}),
        )
        .await;
    assert_eq!(res["result"], json!({"live": false}), "{res}");
    let uri = c.open("hourly.md", note).await;
    let status = note_status_until(&mut c, &uri, |s| s["schedulerEnabled"] == false).await;
    let rendered = format!(
        "{} {} due={} next={} lastAttemptAt={} schedulerEnabled={}",
        status["path"],
        status["status"],
        status["due"],
        status["nextDue"],
        status["lastAttemptAt"],
        status["schedulerEnabled"]
    );
    check(
        &rendered,
        expect![[
            r#""hourly.md" "live" due="cron" next="2026-11-23T09:07:00-06:00" lastAttemptAt=null schedulerEnabled=false"#
        ]],
    );
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(lenses["result"][0]["command"]["title"], "● Live · never run · scheduling off", "{lenses}");
    assert_eq!(std::fs::read_to_string(c.root.path().join("hourly.md")).unwrap_or_default(), note);

    c.notify(
        "workspace/didChangeConfiguration",
        // The user removed the setting: an empty table clears the client layer (default: on).
        json!({"settings": {"livenote": {}}}),
    )
    .await;
    let status =
        note_status_until(&mut c, &uri, |s| s["lastRunAt"].is_string() && s["status"] == "live").await;
    assert_eq!(status["schedulerEnabled"], true, "{status}");
    assert_eq!(status["status"], "live", "{status}");
    let text = c.doc(&uri).text;
    assert!(text.ends_with("# Hourly\n\nAgent wrote this.\n"), "{text}");
    c.shutdown().await;
}

/// Settings the server cannot use are shown to the user, who cannot see the server's log.
#[tokio::test]
async fn bad_client_settings_are_shown() {
    let settings = json!({"agent": {"max_steps": "many"}, "schedule": {}});
    let mut c = TestClient::start_with_settings(&[("a.md", "# A\n")], utf16_caps(), settings).await;
    let msg = c.next_notification("window/showMessage").await;
    check(
        msg["message"].as_str().unwrap_or(""),
        expect![
            "livenote settings: client settings: `agent.max_steps` must be an integer, not a string; client settings: unknown key `schedule` (did you mean `scheduler`?)"
        ],
    );
    c.shutdown().await;
}

/// The titles of the code actions at the fixture's cursor, one per line.
async fn actions_at(c: &mut TestClient, uri: &str, text: &str, at: usize) -> String {
    let p = pos(text, at, false);
    let res = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": p, "end": p}, "context": {"diagnostics": []}}),
        )
        .await;
    res["result"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["title"].as_str())
        .map(|t| format!("{t}\n"))
        .collect()
}

/// [`actions_at`] once the note is idle: a run or an undo holds the note's lock a moment after
/// the editor sees its edit, and the note counts as updating (Stop) until it lets go.
async fn action_titles(c: &mut TestClient, uri: &str, text: &str, at: usize) -> String {
    let mut titles = String::new();
    for _ in 0..500 {
        titles = actions_at(c, uri, text, at).await;
        if !titles.contains("Stop") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    titles
}

/// Issue 12 §5: *Undo last run* is offered only when the note's history holds a run that
/// changed the body — not for a `lastRunId` alone (a failed run, or a folder cloned with
/// runtime fields) — and an undo is itself undoable, in the editor buffer.
#[tokio::test]
async fn undo_is_offered_only_when_there_is_something_to_undo() {
    let fixture = "---\ntitle: Undo\nlive:\n  objective: say something\n  lastRunId: \"01KAT5B2X0000000000000000A\"\n  lastRunError: \"boom\"\n---\n# Undo\n\nmine$0\n";
    let (note, at) = cursor(fixture);
    let mut c = TestClient::start(&[(".livenote.toml", CONFIG), ("undo.md", &note)], utf16_caps()).await;
    let uri = c.open("undo.md", &note).await;
    c.diagnostics(&uri, 1).await;
    check(
        &action_titles(&mut c, &uri, &note, at).await,
        expect![[r#"
            Run now
            Pause
            Make passive
        "#]],
    );
    c.run_to_end(&uri).await;
    let ran = c.doc(&uri).text;
    assert!(ran.ends_with("# Undo\n\nAgent wrote this.\n"), "{ran}");
    let at = ran.len() - 1;
    check(
        &action_titles(&mut c, &uri, &ran, at).await,
        expect![[r#"
            Run now
            Pause
            Undo last run
            Make passive
        "#]],
    );
    let undone = undo_until(&mut c, &uri, "# Undo\n\nmine\n").await;
    assert!(undone.ends_with("# Undo\n\nmine\n"), "{undone}");
    // The undo is a change of its own: offered again (once the undo has let go of the note's
    // lock, until then the note counts as updating), and it brings the run's text back.
    let at = undone.len() - 1;
    check(
        &action_titles(&mut c, &uri, &undone, at).await,
        expect![[r#"
            Run now
            Pause
            Undo last run
            Make passive
        "#]],
    );
    let redone = undo_until(&mut c, &uri, "# Undo\n\nAgent wrote this.\n").await;
    assert!(redone.ends_with("# Undo\n\nAgent wrote this.\n"), "{redone}");
    c.shutdown().await;
}

/// Wait (real time, bounded) until the client's copy of the document satisfies `done`.
async fn doc_until(c: &TestClient, uri: &str, done: impl Fn(&str) -> bool) -> String {
    for _ in 0..500 {
        let text = c.doc(uri).text;
        if done(&text) {
            return text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    c.doc(uri).text
}

/// Issue 12 §5 in the editor: the user typed after the run, so *Undo last run* asks first
/// (this client answers "Restore anyway"), and what they typed is kept in history: undoing
/// the undo brings it back.
#[tokio::test]
async fn undo_over_edits_in_the_buffer_asks_and_keeps_a_copy() {
    let note = "---\ntitle: Undo\nlive:\n  objective: say something\n---\n# Undo\n\nmine\n";
    let mut c = TestClient::start(&[(".livenote.toml", CONFIG), ("undo.md", note)], utf16_caps()).await;
    let uri = c.open("undo.md", note).await;
    c.diagnostics(&uri, 1).await;
    let res =
        c.request("workspace/executeCommand", json!({"command": "livenote.run", "arguments": [uri]})).await;
    assert!(res.get("error").is_none(), "{res}");
    c.progress("end").await;
    let ran = c.doc(&uri).text;
    assert!(ran.ends_with("Agent wrote this.\n"), "{ran}");
    let at = ran.len() - 1;
    c.edit(&uri, at, at, " (typed)").await;
    // Idle again (the run's lock released) before undoing.
    let typed = c.doc(&uri).text;
    assert!(action_titles(&mut c, &uri, &typed, at).await.contains("Undo last run"));
    let res = c
        .request("workspace/executeCommand", json!({"command": "livenote.undoLastRun", "arguments": [uri]}))
        .await;
    assert!(res.get("error").is_none(), "{res}");
    let undone = doc_until(&c, &uri, |t| t.ends_with("# Undo\n\nmine\n")).await;
    assert!(undone.ends_with("# Undo\n\nmine\n"), "{undone}");
    // The question reads as one, for the buttons beside it: no CLI advice, no preview, no final
    // punctuation (Neovim shows it followed by ": ").
    let asked = c.asked();
    let question = asked.iter().find(|q| q.starts_with("Undo last run")).cloned().unwrap_or_default();
    assert_eq!(
        question,
        "Undo last run: the body was edited since the last run (line 13). The current body is kept in history either way. Restore the body from before that run anyway",
        "{asked:?}"
    );
    let at = undone.len() - 1;
    assert!(action_titles(&mut c, &uri, &undone, at).await.contains("Undo last run"));
    let res = c
        .request("workspace/executeCommand", json!({"command": "livenote.undoLastRun", "arguments": [uri]}))
        .await;
    assert!(res.get("error").is_none(), "{res}");
    let back = doc_until(&c, &uri, |t| t.ends_with("(typed)\n")).await;
    assert!(back.ends_with("# Undo\n\nAgent wrote this. (typed)\n"), "the typed text was lost:\n{back}");
    c.shutdown().await;
}

/// `livenote/listNotes` keeps each note's item between requests; it still changes when the
/// clock passes the note's next due instant, when trust goes and when a run holds the note.
#[tokio::test]
async fn list_notes_follows_time_trust_and_runs() {
    let ran = "2026-11-23T15:00:05.000Z";
    let note = format!(
        "---\nlive:\n  objective: hourly\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"{ran}\"\n  lastAttemptAt: \"{ran}\"\n---\n"
    );
    let mut c = TestClient::start_trusted_watching(
        tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")),
        &[("hourly.md", &note)],
        utf16_caps(),
        // Nothing fires on its own while the clock moves.
        json!({"scheduler": {"enabled": false}}),
    )
    .await;
    let show = async |c: &mut TestClient| {
        let list = c.request("livenote/listNotes", Value::Null).await;
        let items = list["result"].as_array().cloned().unwrap_or_default();
        items
            .iter()
            .map(|i| format!("{} due={} next={}", i["status"], i["due"], i["nextDue"]))
            .collect::<String>()
    };
    let mut first = String::new();
    for _ in 0..200 {
        first = show(&mut c).await;
        if !first.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(first, r#""live" due=null next="2026-11-23T10:00:00-06:00""#);
    // Asked again (from the memo): the same.
    assert_eq!(show(&mut c).await, first);
    // The clock passes the next due instant.
    c.clock.set(harness::now() + chrono::TimeDelta::minutes(53) + chrono::TimeDelta::seconds(1));
    assert_eq!(show(&mut c).await, r#""live" due="cron" next="2026-11-23T10:00:01-06:00""#);
    // What another process does reaches the server through its file watcher: shown within a
    // second or so (bounded here by 3 s of real time for a loaded machine).
    let shown_soon = async |c: &mut TestClient, want: &str| {
        let mut shown = String::new();
        for _ in 0..150 {
            shown = show(c).await;
            if shown == want {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        shown
    };
    // Another process holds the note's lock: a run is in progress.
    let store = livenote::runs::store::Store::new(c.root.path());
    let lock = store.try_lock("hourly.md").unwrap_or_else(|e| panic!("{e}"));
    assert!(lock.is_some());
    let running = r#""running" due="cron" next="2026-11-23T10:00:01-06:00""#;
    assert_eq!(shown_soon(&mut c, running).await, running);
    drop(lock);
    let live = r#""live" due="cron" next="2026-11-23T10:00:01-06:00""#;
    assert_eq!(shown_soon(&mut c, live).await, live);
    // Trust is withdrawn.
    let trust = livenote::workspace::trust::TrustStore::in_dir(&c.root.path().join(".data"));
    assert!(trust.untrust(c.root.path()).unwrap_or_else(|e| panic!("{e}")));
    let untrusted = r#""untrusted" due="cron" next="2026-11-23T10:00:01-06:00""#;
    assert_eq!(shown_soon(&mut c, untrusted).await, untrusted);
}

/// `livenote.undoLastRun`, then wait (real time, bounded: the edit is applied by a spawned
/// task) until the buffer ends with `suffix`; the buffer's text.
async fn undo_until(c: &mut TestClient, uri: &str, suffix: &str) -> String {
    let res = c
        .request("workspace/executeCommand", json!({"command": "livenote.undoLastRun", "arguments": [uri]}))
        .await;
    assert!(res.get("error").is_none(), "{res}");
    for _ in 0..500 {
        if c.doc(uri).text.ends_with(suffix) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    c.doc(uri).text
}

/// An open standing-instructions file (`AGENTS.md`, a file of `[agent] instructions`) over
/// `[agent] instructions_max_chars` gets `live/instructions-too-long` on the part runs do not
/// get; another markdown file with the same text does not.
#[tokio::test]
async fn instructions_over_their_budget_are_warned_on_in_the_open_file() {
    let settings = json!({"agent": {"instructions": ["notes/STYLE.md"], "instructions_max_chars": 100}});
    let long = format!("# Style\n\n{}\n", "Short lines. ".repeat(10));
    let files = [("AGENTS.md", long.as_str()), ("notes/STYLE.md", &long), ("notes/other.md", &long)];
    let mut c = TestClient::start_with_settings(&files, utf16_caps(), settings).await;
    for rel in ["AGENTS.md", "notes/STYLE.md"] {
        let uri = c.open(rel, &long).await;
        check(
            &render_diags(&c.diagnostics(&uri, 1).await),
            expect![[r#"
                2:91-2:129 2 live/instructions-too-long standing instructions of 138 characters, over the budget of 100 ([agent] instructions_max_chars): runs get only the first 100, cut with a marker
            "#]],
        );
    }
    let uri = c.open("notes/other.md", &long).await;
    check(&render_diags(&c.diagnostics(&uri, 1).await), expect![[""]]);
    // Trimmed within the budget, the warning goes.
    let uri = c.uri("AGENTS.md");
    c.edit(&uri, 20, long.len(), "\n").await;
    check(&render_diags(&c.diagnostics(&uri, 2).await), expect![[""]]);
    c.shutdown().await;
}

/// A folder inside the workspace with its own `.livenote.toml` is a root of its own in the
/// editor too: its notes are checked against its providers (no `live/unknown-provider` for a
/// name only it defines) and *Run now* runs them with its provider, on its own trust.
#[tokio::test]
async fn a_nested_root_uses_its_own_configuration() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let inner = root.path().join("inner");
    std::fs::create_dir_all(&inner).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        inner.join(".livenote.toml"),
        "[providers.innerp]\nkind = \"command\"\ncommand = [\"echo\", \"inner body\"]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let store = livenote::workspace::trust::TrustStore::in_dir(&root.path().join(".data"));
    store.trust(&inner).unwrap_or_else(|e| panic!("{e}"));
    let note = "---\nlive:\n  objective: x\n  provider: innerp\n---\n# N\n\nold body\n";
    let mut c = TestClient::start_in(root, &[("inner/n.md", note)], utf16_caps(), Value::Null, true).await;
    let uri = c.open("inner/n.md", note).await;
    // Published before the inner root is found (the outer one's providers), then again.
    loop {
        let diags = c.diagnostics(&uri, 1).await;
        if diags.is_empty() {
            break;
        }
        assert!(diags.iter().all(|d| d["code"] == "live/unknown-provider"), "{diags:?}");
    }
    let message = c.run_to_end(&uri).await;
    assert!(c.doc(&uri).text.ends_with("# N\n\ninner body\n"), "{message}: {}", c.doc(&uri).text);
    // Listed from the folder opened, as `livenote list` lists it.
    let list = c.request("livenote/listNotes", Value::Null).await;
    let paths: Vec<&str> =
        list["result"].as_array().into_iter().flatten().filter_map(|i| i["path"].as_str()).collect();
    assert_eq!(paths, ["inner/n.md"], "{list}");
    c.shutdown().await;
}

/// A note waiting for events in a folder with no source is told so (information), and hover on
/// `eventMatchCriteria` says where events come from; with a source in the folder's
/// configuration, the diagnostic is gone and hover names the source (issue 24 §3).
#[tokio::test]
async fn a_note_waiting_for_events_sees_the_folders_sources() {
    let note =
        "---\nlive:\n  objective: summarise\n  triggers:\n    eventMatchCriteria: mail about Q3\n---\n# Q3\n";
    let hover_at = json!({"line": 4, "character": 6});
    for (config, sources) in [
        ("", None),
        // The harness trusts the folder before writing its files: the trust does not cover this
        // `.livenote.toml`, whose source waits for it and still counts.
        (
            "[sources.mail]\nkind = \"command\"\ncommand = [\"true\"]\nenabled = true\n",
            Some("`mail (command, once the folder is trusted)`"),
        ),
    ] {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut c = TestClient::start_in(
            root,
            &[(".livenote.toml", config), ("q3.md", note)],
            utf16_caps(),
            json!({"scheduler": {"enabled": false}}),
            true,
        )
        .await;
        let uri = c.open("q3.md", note).await;
        let diags = c.diagnostics(&uri, 1).await;
        let codes: Vec<&str> = diags.iter().filter_map(|d| d["code"].as_str()).collect();
        let hover = c
            .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": hover_at}))
            .await;
        let hover = hover["result"]["contents"]["value"].as_str().unwrap_or_default().to_owned();
        match sources {
            None => {
                assert_eq!(codes, ["live/no-event-source"], "{diags:?}");
                assert!(hover.contains("**No source sends events here**"), "{hover}");
            }
            Some(named) => {
                assert!(codes.is_empty(), "{diags:?}");
                assert!(
                    hover.contains(&format!("Events come from this folder's sources: {named}")),
                    "{hover}"
                );
            }
        }
        c.shutdown().await;
    }
}

/// Errors carry what went wrong (issue 26): parameters that do not fit are -32602
/// (`InvalidParams`); a well-formed request that cannot be done, on a note whose file is gone,
/// is -32803 (`RequestFailed`), which a client may try again later.
#[tokio::test]
async fn a_failed_request_is_told_apart_from_bad_parameters() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut c = TestClient::start_in(root, &[(".livenote.toml", "")], utf16_caps(), Value::Null, true).await;
    let gone = c.uri("gone.md");
    let failed = c
        .request("workspace/executeCommand", json!({"command": "livenote.makePassive", "arguments": [gone]}))
        .await;
    assert_eq!(failed["error"]["code"], -32803, "{failed}");
    assert!(failed["error"]["message"].as_str().is_some_and(|m| m.contains("gone.md")), "{failed}");
    let bad = c
        .request("workspace/executeCommand", json!({"command": "livenote.makePassive", "arguments": [3]}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    c.shutdown().await;
}
