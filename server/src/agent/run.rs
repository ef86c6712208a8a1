//! The agent loop: ask the model, run the tools it calls in order, hand their results back,
//! until it answers without calling a tool (that answer is the run's summary) or a limit hits.
//!
//! Every edit changes the body held in memory and is handed to `on_edit` at once, so the
//! engine can apply it to the note while the run goes on: the user watches the note change
//! patch by patch. Consequently a run that fails later (step or token limit, timeout, stop, a
//! provider error) has already shown its earlier edits; they are kept, not rolled back. Each
//! edit is a complete patch the model chose, the body was snapshotted into history before the
//! run (so `Undo last run` restores it), and throwing away good work because the model then
//! looped would help no one. The run still counts as failed (`lastRunError`, cycle unfired).
//!
//! The body the model sees: the engine hands the agent region of the note (the text below the
//! H1) as `RunRequest::body`. So that the model sees the title it must keep, the loop shows
//! `# {title}` above it when the body does not already carry that H1, and every body it hands
//! back (to `on_edit` and in the [`RunOutput`]) is that whole text, with
//! `body_is_below_h1: false`. Fed to `Patch::compute` as the new region, an unchanged H1 is
//! dropped as an echo, so that works today; an H1 the objective had renamed would need the
//! engine to replace the whole body after the frontmatter, as `body_is_below_h1: false` says.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::agent::prompt;
use crate::agent::tools::{self, Caps, Fetcher, HttpFetcher, Toolbox, Workspace, clip};
use crate::model::ModelError;
use crate::model::http::{format_bytes, json_len};
use crate::model::{Message, ModelClient, Request, Role, ToolCall, Turn};
use crate::note::body;
use crate::run_types::{EditReply, EditSink, ProviderError, RunEvent, RunOutput, RunRequest, TriggerKind};

/// The most tokens one reply may use; large enough to rewrite a long section in one call.
const MAX_REPLY_TOKENS: u64 = 8192;
/// The least a reply is allowed even when the budget is nearly spent, so a summary fits.
const MIN_REPLY_TOKENS: u64 = 512;
/// How much of a model text or tool call goes into the transcript.
const EVENT_TEXT_CHARS: usize = 2000;
/// How much of a tool result goes into the transcript.
const EVENT_RESULT_CHARS: usize = 500;

/// The limits of one run (SPEC 4: 25 tool calls, 10 minutes, bounded tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tool calls the model may make in all.
    pub max_steps: u32,
    /// Wall-clock time of the whole run.
    pub timeout: Duration,
    /// Input plus output tokens over all of the run's model calls, as the provider reports them.
    pub max_tokens_total: u64,
    /// Bytes of the conversation kept for the model (messages, tool calls, tool results).
    pub max_conversation_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        // 400k tokens: 25 steps re-sending a conversation of ~15k tokens each, which covers a
        // long note and a few file reads, while capping the cost of a run that goes wrong.
        Limits {
            max_steps: 25,
            timeout: Duration::from_secs(600),
            max_tokens_total: 400_000,
            max_conversation_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Run the agent on one note. `web`: offer `fetch_url` (never in `event` runs). `on_edit`
/// gets the whole new body after each edit; `events` gets the transcript (model turns, tool
/// calls and results, token usage).
pub async fn run_agent(
    client: &dyn ModelClient,
    req: &RunRequest,
    limits: Limits,
    web: bool,
    cancel: CancellationToken,
    on_edit: &mut dyn EditSink,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<RunOutput, ProviderError> {
    let http = HttpFetcher::default();
    let fetcher: Option<&dyn Fetcher> = if web { Some(&http) } else { None };
    run_agent_with(client, req, limits, fetcher, Caps::default(), cancel, on_edit, events).await
}

/// [`run_agent`] with a given fetcher (`None`: no `fetch_url`) and tool caps.
#[allow(clippy::too_many_arguments)]
pub async fn run_agent_with(
    client: &dyn ModelClient,
    req: &RunRequest,
    limits: Limits,
    fetcher: Option<&dyn Fetcher>,
    caps: Caps,
    cancel: CancellationToken,
    on_edit: &mut dyn EditSink,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<RunOutput, ProviderError> {
    // An event run decides whether the event matters to this note; reading the web is not
    // part of that (and an event payload must not be able to make livenote fetch URLs).
    let fetcher = fetcher.filter(|_| req.trigger != TriggerKind::Event);
    let workspace = Workspace::new(&req.workspace_root, &req.note_path, caps)
        .map_err(|e| ProviderError::Config(e.to_string()))?;
    let toolbox = Toolbox::new(workspace, agent_body(req), fetcher);
    let work = converse(client, req, limits, toolbox, cancel.clone(), on_edit, events);
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ProviderError::Stopped),
        r = tokio::time::timeout(limits.timeout, work) => r.unwrap_or(Err(ProviderError::TimedOut(limits.timeout))),
    }
}

/// The body the model works on: the request's body, with the note's H1 on top when the body
/// is the text below it (see the module documentation); the H1 rule is the run engine's
/// (`note::body::with_title`).
fn agent_body(req: &RunRequest) -> String {
    body::with_title(req.title.as_deref(), &req.body)
}

async fn converse(
    client: &dyn ModelClient,
    req: &RunRequest,
    limits: Limits,
    mut toolbox: Toolbox<'_>,
    cancel: CancellationToken,
    on_edit: &mut dyn EditSink,
    events: &mut (dyn FnMut(&RunEvent) + Send),
) -> Result<RunOutput, ProviderError> {
    let specs = toolbox.specs();
    let system = prompt::system_prompt(specs.iter().any(|s| s.name == tools::FETCH_URL));
    let mut messages = vec![Message::user(prompt::run_message(req))];
    let mut tokens: u64 = 0;
    let mut steps: u32 = 0;
    loop {
        if cancel.is_cancelled() {
            return Err(ProviderError::Stopped);
        }
        check_conversation(&messages, limits.max_conversation_bytes)?;
        let remaining = limits.max_tokens_total.saturating_sub(tokens);
        let max_tokens = remaining.clamp(MIN_REPLY_TOKENS, MAX_REPLY_TOKENS);
        let request = Request {
            system: &system,
            messages: &messages,
            tools: &specs,
            max_tokens: u32::try_from(max_tokens).unwrap_or(u32::MAX),
            json: false,
        };
        let turn = match client.complete(request, cancel.clone()).await {
            Ok(turn) => turn,
            // Re-reads and file contents pile up; the latest ones are what the model needs.
            Err(ModelError::ContextOverflow) if elide_old_results(&mut messages) => {
                events(&RunEvent::new("context", "the conversation got too long: older tool results elided"));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        tokens = tokens.saturating_add(turn.usage.input_tokens).saturating_add(turn.usage.output_tokens);
        report_turn(&turn, tokens, events);
        messages.push(turn.message());
        if !turn.tool_calls.is_empty() {
            check_conversation(&messages, limits.max_conversation_bytes)?;
        }
        if turn.tool_calls.is_empty() {
            let summary = turn.text.trim();
            let body = toolbox.into_body();
            return Ok(RunOutput {
                body,
                summary: (!summary.is_empty()).then(|| summary.to_owned()),
                body_is_below_h1: false,
            });
        }
        if tokens > limits.max_tokens_total {
            return Err(failed(format!(
                "stopped after using {tokens} tokens, over the limit of {}",
                limits.max_tokens_total
            )));
        }
        for call in &turn.tool_calls {
            if steps >= limits.max_steps {
                return Err(failed(format!("stopped after {} tool calls", limits.max_steps)));
            }
            steps += 1;
            let mut out = toolbox.call(call, &cancel).await;
            if out.edited {
                // Each step lands before the next is computed, so the model's next edit applies
                // to the note as this one left it (SPEC 4).
                match on_edit.apply(toolbox.body()).await {
                    EditReply::Applied(None) => {}
                    EditReply::Applied(Some(region)) => {
                        toolbox.sync_body(body::with_title(req.title.as_deref(), &region))
                    }
                    EditReply::Refused { message, body } => {
                        if let Some(region) = body {
                            toolbox.sync_body(body::with_title(req.title.as_deref(), &region));
                        }
                        out.content = format!(
                            "Not applied: {message}. Call read_note to see the note as it is now, then make your change again on that text."
                        );
                        out.is_error = true;
                    }
                    EditReply::Failed(e) => {
                        return Err(ProviderError::Io(format!("cannot write the note: {e}")));
                    }
                }
            }
            let status = if out.is_error { "error" } else { "ok" };
            events(&RunEvent::new(
                "tool_result",
                format!("{} {status}: {}", call.name, clip(&out.content, EVENT_RESULT_CHARS)),
            ));
            messages.push(Message::tool_result(&call.id, out.content, out.is_error));
        }
    }
}

/// Fails when `messages` hold more than `limit` bytes: what the model sends back is kept and
/// re-sent at every step, so this bounds the run's memory whatever the model does.
fn check_conversation(messages: &[Message], limit: usize) -> Result<(), ProviderError> {
    let bytes = messages.iter().fold(0usize, |sum, m| {
        let calls = m.tool_calls.iter().map(|c| c.id.len() + c.name.len() + json_len(&c.arguments));
        sum.saturating_add(m.content.len()).saturating_add(calls.sum())
    });
    if bytes > limit {
        return Err(ProviderError::TooLarge(format!(
            "conversation too large: the run's conversation with the model grew past {} \
             (agent.max_conversation_bytes)",
            format_bytes(limit)
        )));
    }
    Ok(())
}

/// What replaces an elided tool result.
const ELIDED: &str = "[elided to save room; call the tool again if you still need this]";

/// Shorten the results of all tool calls but the latest turn's; whether anything changed (if
/// not, the conversation cannot shrink this way and the error stands).
fn elide_old_results(messages: &mut [Message]) -> bool {
    let latest = messages.iter().rposition(|m| m.role == Role::Assistant).unwrap_or(0);
    let mut changed = false;
    for m in &mut messages[..latest] {
        if m.role == Role::Tool && m.content.len() > ELIDED.len() {
            m.content = ELIDED.to_owned();
            changed = true;
        }
    }
    changed
}

/// The transcript of one model turn.
fn report_turn(turn: &Turn, tokens: u64, events: &mut (dyn FnMut(&RunEvent) + Send)) {
    let text = turn.text.trim();
    if !text.is_empty() {
        events(&RunEvent::new("model", clip(text, EVENT_TEXT_CHARS)));
    }
    for call in &turn.tool_calls {
        events(&RunEvent::new("tool_call", describe_call(call)));
    }
    let stop = turn.stop_reason.as_deref().map(|s| format!(" stop={s}")).unwrap_or_default();
    events(&RunEvent::new(
        "usage",
        format!("input={} output={} total={tokens}{stop}", turn.usage.input_tokens, turn.usage.output_tokens),
    ));
}

fn describe_call(call: &ToolCall) -> String {
    let args = match &call.arguments {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    clip(&format!("{} {args}", call.name), EVENT_TEXT_CHARS)
}

/// A run that ended on a limit: one line for `lastRunError`.
fn failed(message: String) -> ProviderError {
    ProviderError::Failed { status: message, stderr_tail: String::new() }
}

#[cfg(test)]
mod tests {
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
            usage: Usage { input_tokens: 100, output_tokens: 10 },
            stop_reason: Some("tool_calls".to_owned()),
        }
    }

    fn answer(text: &str) -> Turn {
        Turn {
            text: text.to_owned(),
            tool_calls: Vec::new(),
            usage: Usage { input_tokens: 100, output_tokens: 10 },
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
            body: "\n3:00 PM\n\n## Log\n\n- 3:00 PM\n".to_owned(),
            now: Utc.with_ymd_and_hms(2026, 5, 8, 16, 0, 0).single().unwrap_or_default(),
            local_now: "2026-05-08T11:00:00-05:00".to_owned(),
            time_zone: "America/Chicago".to_owned(),
            workspace_root: root.to_path_buf(),
            run_id: "run1".to_owned(),
            model: None,
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
            calls(vec![call(
                "2",
                "edit_note",
                json!({"old_text": "\n3:00 PM\n", "new_text": "\n4:00 PM\n"}),
            )]),
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
                "search_files"
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
        assert_eq!(ran.events[4].message, "input=100 output=10 total=220 stop=tool_calls");
        assert_eq!(ran.events[5].message, "edit_note ok: Edited: 2 line(s) replaced by 2 line(s).");
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
            (
                "old_text matches 2 places; include more context so that it matches exactly one".to_owned(),
                true
            )
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
        assert_eq!(ran.result.map_err(|e| e.to_string()), Err("stopped after 3 tool calls".to_owned()));
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
            Err("stopped after using 330 tokens, over the limit of 250".to_owned())
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

    #[tokio::test]
    async fn timeout_ends_a_hanging_model() {
        let dir = workspace();
        let client = Scripted::new(Vec::new());
        let limits = Limits { timeout: Duration::from_millis(50), ..Limits::default() };
        let ran = run(&client, &request(dir.path(), TriggerKind::Manual), limits, false).await;
        assert_eq!(ran.result, Err(ProviderError::TimedOut(Duration::from_millis(50))));
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
}
