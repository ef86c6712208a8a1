use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use chrono::{TimeZone, Utc};
use serde_json::{Value, json};

use super::*;
use crate::model::error::CONTEXT_OVERFLOW;
use crate::model::{BoxFuture, Role, ToolSpec, Usage};

/// What the fake model saw in one call.
#[derive(Debug, Clone)]
struct Seen {
    system: String,
    messages: Vec<Message>,
    tools: Vec<String>,
}

/// A model that replays queued turns and records the requests. With an empty queue it
/// hangs until cancelled (like a slow model).
#[derive(Default)]
struct Scripted {
    turns: Mutex<VecDeque<Result<Turn, ModelError>>>,
    seen: Mutex<Vec<Seen>>,
}

impl Scripted {
    fn new(turns: Vec<Turn>) -> Self {
        Scripted::replies(turns.into_iter().map(Ok).collect())
    }

    fn replies(replies: Vec<Result<Turn, ModelError>>) -> Self {
        Scripted { turns: Mutex::new(replies.into()), seen: Mutex::default() }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl ModelClient for Scripted {
    fn complete<'a>(
        &'a self,
        req: Request<'a>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Turn, ModelError>> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(Seen {
                system: req.system.to_owned(),
                messages: req.messages.to_vec(),
                tools: req.tools.iter().map(|t: &ToolSpec| t.name.clone()).collect(),
            });
        }
        let next = self.turns.lock().ok().and_then(|mut t| t.pop_front());
        Box::pin(async move {
            match next {
                Some(reply) => reply,
                None => {
                    cancel.cancelled().await;
                    Err(ModelError::Stopped)
                }
            }
        })
    }
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall { id: id.to_owned(), name: name.to_owned(), arguments: args }
}

fn calls(list: Vec<ToolCall>) -> Turn {
    Turn {
        text: String::new(),
        tool_calls: list,
        usage: Usage { input_tokens: 100, output_tokens: 10, cached_input_tokens: 0 },
        stop_reason: Some("tool_calls".to_owned()),
    }
}

fn answer(text: &str) -> Turn {
    Turn {
        text: text.to_owned(),
        tool_calls: Vec::new(),
        usage: Usage { input_tokens: 100, output_tokens: 10, cached_input_tokens: 0 },
        stop_reason: Some("stop".to_owned()),
    }
}

const NOTE: &str = "---\ntitle: Chicago\nlive:\n  objective: Keep the time.\n---\n# Chicago time\n\n3:00 PM\n\n## Log\n\n- 3:00 PM\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "notes/chicago.md", NOTE);
    dir
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

/// The request the engine builds: the body below the H1.
fn request(root: &Path, trigger: TriggerKind) -> RunRequest {
    RunRequest {
        note_path: "notes/chicago.md".to_owned(),
        title: Some("Chicago time".to_owned()),
        objective: "Keep the time.".to_owned(),
        trigger,
        context: None,
        event: None,
        body: "\n3:00 PM\n\n## Log\n\n- 3:00 PM\n".to_owned(),
        now: Utc.with_ymd_and_hms(2026, 5, 8, 16, 0, 0).single().unwrap_or_default(),
        local_now: "2026-05-08T11:00:00-05:00".to_owned(),
        time_zone: "America/Chicago".to_owned(),
        workspace_root: root.to_path_buf(),
        trusted: true,
        run_id: "run1".to_owned(),
        model: None,
        mcp_servers: Vec::new(),
        instructions: Vec::new(),
        max_chars: None,
        memory: Default::default(),
        skills: Vec::new(),
        skill_catalog: Vec::new(),
    }
}

struct Ran {
    result: Result<RunOutput, ProviderError>,
    edits: Vec<String>,
    events: Vec<RunEvent>,
}

async fn run(client: &Scripted, req: &RunRequest, limits: Limits, web: bool) -> Ran {
    run_with(client, req, limits, web, CancellationToken::new(), false).await
}

async fn run_with(
    client: &Scripted,
    req: &RunRequest,
    limits: Limits,
    web: bool,
    cancel: CancellationToken,
    cancel_on_edit: bool,
) -> Ran {
    let mut edits = Vec::new();
    let mut events = Vec::new();
    let stop = cancel.clone();
    let result = run_agent(
        client,
        req,
        limits,
        web,
        cancel,
        &mut |b: &str| {
            edits.push(b.to_owned());
            if cancel_on_edit {
                stop.cancel();
            }
        },
        &mut |e: &RunEvent| events.push(e.clone()),
    )
    .await;
    Ran { result, edits, events }
}

/// The tool results the model saw in its last request, in order.
fn results(client: &Scripted) -> Vec<(String, bool)> {
    let seen = client.seen();
    let last = seen.last().map(|s| s.messages.clone()).unwrap_or_default();
    last.into_iter().filter(|m| m.role == Role::Tool).map(|m| (m.content, m.is_error)).collect()
}

#[tokio::test]
async fn reads_patches_twice_and_summarises() {
    let dir = workspace();
    let client = Scripted::new(vec![
        calls(vec![call("1", "read_note", json!({}))]),
        calls(vec![call("2", "edit_note", json!({"old_text": "\n3:00 PM\n", "new_text": "\n4:00 PM\n"}))]),
        calls(vec![call("3", "read_note", json!({}))]),
        calls(vec![call(
            "4",
            "edit_note",
            json!({"old_text": "- 3:00 PM\n", "new_text": "- 4:00 PM\n- 3:00 PM\n"}),
        )]),
        answer("  Updated the time to 4:00 PM.\n"),
    ]);
    let req = request(dir.path(), TriggerKind::Cron);
    let ran = run(&client, &req, Limits::default(), false).await;
    let expected = "# Chicago time\n\n4:00 PM\n\n## Log\n\n- 4:00 PM\n- 3:00 PM\n";
    assert_eq!(
        ran.result,
        Ok(RunOutput {
            body: expected.to_owned(),
            summary: Some("Updated the time to 4:00 PM.".to_owned()),
            body_is_below_h1: false,
        })
    );
    assert_eq!(
        ran.edits,
        vec!["# Chicago time\n\n4:00 PM\n\n## Log\n\n- 3:00 PM\n".to_owned(), expected.to_owned()]
    );
    let seen = client.seen();
    assert_eq!(seen.len(), 5);
    assert!(seen[0].system.starts_with("You keep one markdown note up to date."));
    assert_eq!(
        seen[0].tools,
        [
            "read_note",
            "edit_note",
            "replace_section",
            "append_to_note",
            "list_files",
            "read_file",
            "search_files",
            "memory_list",
            "memory_show",
            "memory_save",
            "memory_delete"
        ]
    );
    assert_eq!(seen[0].messages.len(), 1);
    assert!(seen[0].messages[0].content.starts_with("Update the live note `notes/chicago.md`"));
    // The model read the body with its H1, and the second read saw the first edit.
    let reads: Vec<String> = seen[4]
        .messages
        .iter()
        .filter(|m| m.tool_call_id.as_deref() == Some("1") || m.tool_call_id.as_deref() == Some("3"))
        .map(|m| m.content.clone())
        .collect();
    assert_eq!(
        reads,
        [
            "# Chicago time\n\n3:00 PM\n\n## Log\n\n- 3:00 PM\n",
            "# Chicago time\n\n4:00 PM\n\n## Log\n\n- 3:00 PM\n"
        ]
    );
    // The engine applies this as the region below the H1: the echoed H1 is dropped.
    let note = format!("---\nlive:\n  objective: x\n---\n# Chicago time\n{}", req.body);
    let patch = crate::note::body::Patch::compute(&note, expected);
    let applied = crate::text::edit::apply(&note, &patch.apply_to(&note).edits).unwrap_or_default();
    assert_eq!(applied, format!("---\nlive:\n  objective: x\n---\n{expected}"));
    // The transcript.
    let kinds: Vec<&str> = ran.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "tool_call",
            "usage",
            "tool_result",
            "tool_call",
            "usage",
            "tool_result",
            "tool_call",
            "usage",
            "tool_result",
            "tool_call",
            "usage",
            "tool_result",
            "model",
            "usage"
        ]
    );
    assert_eq!(ran.events[3].message, r#"edit_note {"new_text":"\n4:00 PM\n","old_text":"\n3:00 PM\n"}"#);
    // Each model call's usage and time, as text and as data for the run's totals.
    let usage = &ran.events[4];
    assert!(usage.message.starts_with("input=100 output=10 cached=0 ms="), "{}", usage.message);
    assert!(usage.message.ends_with(" total=220 stop=tool_calls"), "{}", usage.message);
    let data = usage.data.clone().unwrap_or_default();
    assert_eq!((&data["input"], &data["output"], &data["cached"]), (&json!(100), &json!(10), &json!(0)));
    assert!(data["ms"].is_u64(), "{data}");
    assert_eq!(ran.events[5].data, Some(json!({"tool": "edit_note"})));
    assert_eq!(ran.events[5].message, "edit_note ok: Edited: 2 lines replaced by 2 lines.");
    assert_eq!(ran.events[12].message, "Updated the time to 4:00 PM.");
}

#[tokio::test]
async fn edit_errors_reach_the_model() {
    let dir = workspace();
    let client = Scripted::new(vec![
        calls(vec![
            call("1", "edit_note", json!({"old_text": "5:00 PM", "new_text": "x"})),
            call("2", "edit_note", json!({"old_text": "3:00 PM", "new_text": "x"})),
            // Frontmatter is not in the body: nothing to find.
            call(
                "3",
                "edit_note",
                json!({"old_text": "objective: Keep the time.", "new_text": "objective: x"}),
            ),
            call("4", "edit_note", json!("{not json")),
            call("5", "rm_rf", json!({})),
        ]),
        answer(""),
    ]);
    let ran = run(&client, &request(dir.path(), TriggerKind::Manual), Limits::default(), false).await;
    let out = ran.result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.body, "# Chicago time\n\n3:00 PM\n\n## Log\n\n- 3:00 PM\n");
    assert_eq!(out.summary, None);
    assert!(ran.edits.is_empty());
    let results = results(&client);
    assert_eq!(results[0], ("old_text not found; read_note to see the current text".to_owned(), true));
    assert_eq!(
        results[1],
        ("old_text matches 2 places; include more context so that it matches exactly one".to_owned(), true)
    );
    assert_eq!(results[2], ("old_text not found; read_note to see the current text".to_owned(), true));
    assert!(results[3].1 && results[3].0.starts_with("the arguments of edit_note are not valid JSON"));
    assert!(results[4].1 && results[4].0.starts_with("unknown tool `rm_rf`; the tools are: read_note,"));
    assert_eq!(std::fs::read_to_string(dir.path().join("notes/chicago.md")).unwrap_or_default(), NOTE);
}

#[tokio::test]
async fn fetch_url_is_offered_only_when_enabled_and_never_for_events() {
    let dir = workspace();
    let offered = |web: bool, trigger: TriggerKind| {
        let client = Scripted::new(vec![answer("Nothing to do.")]);
        let req = request(dir.path(), trigger);
        async move {
            let ran = run(&client, &req, Limits::default(), web).await;
            assert!(ran.result.is_ok());
            let seen = client.seen();
            (seen[0].tools.iter().any(|t| t == "fetch_url"), seen[0].system.contains("fetch_url"))
        }
    };
    assert_eq!(offered(true, TriggerKind::Manual).await, (true, true));
    assert_eq!(offered(true, TriggerKind::Cron).await, (true, true));
    assert_eq!(offered(true, TriggerKind::Event).await, (false, false));
    assert_eq!(offered(false, TriggerKind::Manual).await, (false, false));

    // Offered, it fetches through the fetcher (a fake here: no network), checking the URL
    // first; in an event run it does not exist.
    let fake = FakeFetcher::default();
    let client = Scripted::new(vec![
        calls(vec![
            call("1", "fetch_url", json!({"url": " https://example.com/weather "})),
            call("2", "fetch_url", json!({"url": "http://169.254.169.254/latest"})),
            call("3", "fetch_url", json!({"url": "file:///etc/passwd"})),
        ]),
        answer("done"),
    ]);
    let req = request(dir.path(), TriggerKind::Manual);
    let ran = run_fetching(&client, &req, &fake).await;
    assert!(ran.is_ok());
    assert_eq!(
        results(&client),
        [
            ("page about https://example.com/weather".to_owned(), false),
            ("local and private network addresses are refused".to_owned(), true),
            ("only http:// and https:// URLs can be fetched".to_owned(), true),
        ]
    );
    let client = Scripted::new(vec![
        calls(vec![call("1", "fetch_url", json!({"url": "https://example.com"}))]),
        answer("done"),
    ]);
    let ran = run_fetching(&client, &request(dir.path(), TriggerKind::Event), &fake).await;
    assert!(ran.is_ok());
    let r = results(&client);
    assert!(r[0].1 && r[0].0.starts_with("unknown tool `fetch_url`"), "{r:?}");
    assert_eq!(fake.urls(), ["https://example.com/weather"]);
}

/// A fetcher that answers from memory and records the URLs.
#[derive(Default)]
struct FakeFetcher {
    urls: Mutex<Vec<String>>,
}

impl FakeFetcher {
    fn urls(&self) -> Vec<String> {
        self.urls.lock().map(|u| u.clone()).unwrap_or_default()
    }
}

impl Fetcher for FakeFetcher {
    fn fetch<'a>(
        &'a self,
        url: &'a str,
        _max_bytes: usize,
        _timeout: Duration,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<String, String>> {
        if let Ok(mut u) = self.urls.lock() {
            u.push(url.to_owned());
        }
        Box::pin(async move { Ok(format!("page about {url}")) })
    }
}

async fn run_fetching(
    client: &Scripted,
    req: &RunRequest,
    fetcher: &FakeFetcher,
) -> Result<RunOutput, ProviderError> {
    run_agent_with(
        client,
        req,
        Limits::default(),
        Some(fetcher),
        Caps::default(),
        CancellationToken::new(),
        &mut |_: &str| {},
        &mut |_: &RunEvent| {},
    )
    .await
}

#[tokio::test]
async fn step_limit_fails_the_run_but_keeps_earlier_edits() {
    let dir = workspace();
    let mut turns = vec![calls(vec![call("e", "append_to_note", json!({"text": "- more"}))])];
    turns.extend((0..10).map(|i| calls(vec![call(&format!("r{i}"), "read_note", json!({}))])));
    let client = Scripted::new(turns);
    let limits = Limits { max_steps: 3, ..Limits::default() };
    let ran = run(&client, &request(dir.path(), TriggerKind::Manual), limits, false).await;
    assert_eq!(
        ran.result.map_err(|e| e.to_string()),
        Err("stopped after 3 tool calls ([agent] max_steps)".to_owned())
    );
    assert_eq!(ran.edits, ["# Chicago time\n\n3:00 PM\n\n## Log\n\n- 3:00 PM\n- more\n"]);
    assert_eq!(client.seen().len(), 4);
}

#[tokio::test]
async fn a_conversation_over_its_byte_bound_fails_the_run() {
    let dir = workspace();
    let pad = "p".repeat(30_000);
    let turn = || calls(vec![call("1", "read_note", json!({"pad": pad}))]);
    let client = Scripted::new(vec![turn(), turn(), turn(), turn(), answer("done")]);
    let limits = Limits { max_conversation_bytes: 100_000, ..Limits::default() };
    let ran = run(&client, &request(dir.path(), TriggerKind::Manual), limits, false).await;
    let e = ran.result.map_err(|e| e.to_string()).err().unwrap_or_default();
    assert_eq!(
        e,
        "conversation too large: the run's conversation with the model grew past 100000 bytes \
             (agent.max_conversation_bytes)"
    );
    assert_eq!(client.seen().len(), 4, "the fourth turn (past 100 000 bytes) ended the run");
    let results = ran.events.iter().filter(|e| e.kind == "tool_result").count();
    assert_eq!(results, 3, "its tool calls were not run");
    // Within the bound the same run finishes.
    let client = Scripted::new(vec![turn(), turn(), turn(), turn(), answer("done")]);
    let ran = run(&client, &request(dir.path(), TriggerKind::Manual), Limits::default(), false).await;
    assert!(ran.result.is_ok(), "{:?}", ran.result);
}

#[tokio::test]
async fn token_limit_fails_the_run() {
    let dir = workspace();
    let turns = (0..10).map(|i| calls(vec![call(&format!("r{i}"), "read_note", json!({}))])).collect();
    let client = Scripted::new(turns);
    let limits = Limits { max_tokens_total: 250, ..Limits::default() };
    let ran = run(&client, &request(dir.path(), TriggerKind::Manual), limits, false).await;
    assert_eq!(
        ran.result.map_err(|e| e.to_string()),
        Err("stopped after using 330 tokens, over the limit of 250 ([agent] max_tokens)".to_owned())
    );
}

#[tokio::test]
async fn cancel_stops_the_run() {
    let dir = workspace();
    // The first edit cancels; the model then hangs until it notices.
    let client = Scripted::new(vec![calls(vec![call("1", "append_to_note", json!({"text": "- x"}))])]);
    let req = request(dir.path(), TriggerKind::Manual);
    let ran = run_with(&client, &req, Limits::default(), false, CancellationToken::new(), true).await;
    assert_eq!(ran.result, Err(ProviderError::Stopped));
    assert_eq!(ran.edits.len(), 1);
    // Cancelled before it starts: the model is never asked.
    let client = Scripted::new(vec![answer("x")]);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let ran = run_with(&client, &req, Limits::default(), false, cancel, false).await;
    assert_eq!(ran.result, Err(ProviderError::Stopped));
    assert!(client.seen().is_empty());
}

#[tokio::test(start_paused = true)]
async fn timeout_ends_a_hanging_model() {
    let dir = workspace();
    let client = Scripted::new(Vec::new());
    let limits = Limits { timeout: Duration::from_millis(50), ..Limits::default() };
    let ran = run(&client, &request(dir.path(), TriggerKind::Manual), limits, false).await;
    assert_eq!(
        ran.result.map_err(|e| e.to_string()),
        Err("timed out after 50ms ([agent] timeout)".to_owned())
    );
}

#[tokio::test]
async fn a_body_that_has_its_h1_is_taken_as_is() {
    let dir = workspace();
    let client = Scripted::new(vec![
        calls(vec![call("1", "replace_section", json!({"heading": "## Log", "content": "- 5:00 PM"}))]),
        answer("Logged 5 PM."),
    ]);
    let mut req = request(dir.path(), TriggerKind::Manual);
    req.body = "# Chicago time\r\n\r\n## Log\r\n\r\n- 3:00 PM\r\n".to_owned();
    let ran = run(&client, &req, Limits::default(), false).await;
    let out = ran.result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.body, "# Chicago time\r\n\r\n## Log\r\n\r\n- 5:00 PM\r\n");
    // Without a title there is nothing to add either.
    req.title = None;
    req.body = "plain\n".to_owned();
    assert_eq!(agent_body(&req), "plain\n");
}

#[tokio::test]
async fn context_overflow_elides_older_results_and_retries() {
    let dir = workspace();
    write(dir.path(), "notes/long.md", &"lots of text\n".repeat(100));
    let overflow = || Err(ModelError::ContextOverflow);
    let client = Scripted::replies(vec![
        Ok(calls(vec![call("1", "read_file", json!({"path": "notes/long.md"}))])),
        Ok(calls(vec![call("2", "read_note", json!({}))])),
        overflow(),
        Ok(answer("Done.")),
    ]);
    let ran = run(&client, &request(dir.path(), TriggerKind::Manual), Limits::default(), false).await;
    assert_eq!(ran.result.map(|o| o.summary), Ok(Some("Done.".to_owned())));
    let seen = client.seen();
    let tool_results = |i: usize| -> Vec<usize> {
        seen[i].messages.iter().filter(|m| m.role == Role::Tool).map(|m| m.content.len()).collect()
    };
    assert_eq!(tool_results(2), [1300, 43]);
    // The retry keeps the latest result (the note) and elides the file.
    assert_eq!(tool_results(3), [ELIDED.len(), 43]);
    assert!(ran.events.iter().any(|e| e.kind == "context"));
    // Nothing left to elide: the error stands.
    let client = Scripted::replies(vec![overflow()]);
    let ran = run(&client, &request(dir.path(), TriggerKind::Manual), Limits::default(), false).await;
    assert_eq!(ran.result, Err(ProviderError::Io(CONTEXT_OVERFLOW.to_owned())));
}
