//! Providers that return garbage: a `command` printing binary junk, NUL bytes, nothing, too
//! much, exiting non-zero with junk on stderr, hanging past its timeout; model servers (the
//! scripted mock on 127.0.0.1) answering malformed JSON or SSE, truncated streams, 5xx and
//! the wrong content type. Each run fails with a clear `lastRunError`, the body is unchanged,
//! and the scheduler and the engine keep going.

use chrono::TimeDelta;
use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use livenote::runs::Outcome;

use crate::{Ws, assert_parses, body_of, command_provider, live_note, pass, run_manual, settle};

const OLD_BODY: &str = "Old body.\n";

/// (note and provider name, script, timeout, the `lastRunError` expected; `None`: succeeds).
const COMMANDS: &[(&str, &str, &str, Option<&str>)] = &[
    ("binary", r"printf '\377\376garbage\200\n'", "20s", Some("output is not valid UTF-8 (at byte 0)")),
    (
        "nul",
        r"printf 'text\000more\n'",
        "20s",
        Some("output contains a NUL byte (at byte 4): binary data cannot go into a note"),
    ),
    ("empty", "printf '  \\n\\n'", "20s", Some("the command printed nothing; the note was left unchanged")),
    ("huge", r"head -c 9000000 /dev/zero | tr '\000' x", "20s", Some("output larger than 8 MiB")),
    (
        "fails",
        r#"printf 'half a body'; printf '\377 "quoted" \\ back: #x\n' >&2; exit 3"#,
        "20s",
        Some("exited with status 3: \u{fffd} \"quoted\" \\ back: #x"),
    ),
    ("killed", "kill -9 $$", "20s", Some("killed by signal 9 (SIGKILL)")),
    ("hangs", "sleep 30", "1s", Some("timed out after 1s")),
    // Output that starts with `{` is held to the JSON answer: cut-off JSON fails the run
    // (documented in docs/providers.md) instead of going into the note as text.
    (
        "jsonish",
        r#"printf '{"body": "cut off'"#,
        "20s",
        Some(
            "output starts with `{` but is not valid JSON: EOF while parsing a string at 1:17; print plain text or {\"body\": \"...\", \"summary\": \"...\"}",
        ),
    ),
    // A flood on stderr is trimmed to its tail; the run itself is fine.
    ("noisy", r"head -c 10000000 /dev/zero | tr '\000' e >&2; echo fine", "20s", None),
    ("good", "echo fresh", "20s", None),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_from_command_providers_fails_each_run_cleanly_and_the_scheduler_goes_on() {
    let mut config = String::new();
    for (name, script, timeout, _) in COMMANDS {
        config.push_str(&command_provider(name, script, timeout));
    }
    let ws = Ws::new(&config, "2026-11-23T09:00:30Z");
    let hourly = |name: &str| format!("  provider: {name}\n  triggers:\n    cronExpr: \"0 * * * *\"\n");
    for (name, ..) in COMMANDS {
        ws.write(&format!("{name}.md"), &live_note(&hourly(name), OLD_BODY));
    }
    let scheduler = ws.scheduler();
    assert_eq!(pass(&scheduler), COMMANDS.len(), "every note is due (never ran)");
    settle(&[&scheduler]).await;
    let failing = COMMANDS.iter().filter(|c| c.3.is_some()).count();
    for (name, _, _, want) in COMMANDS {
        let text = ws.read(&format!("{name}.md"));
        let live = assert_parses(&text);
        match want {
            Some(error) => {
                assert_eq!(live.last_run_error.as_deref(), Some(*error), "{name}:\n{text}");
                assert_eq!(body_of(&text), format!("\n{OLD_BODY}"), "{name}: the body changed");
                assert_eq!(live.last_run_at, None, "{name}");
                assert!(live.last_attempt_at.is_some(), "{name}");
            }
            None => {
                assert_eq!(live.last_run_error, None, "{name}:\n{text}");
                assert!(live.last_run_at.is_some(), "{name}");
            }
        }
    }
    assert_eq!(body_of(&ws.read("good.md")), "\nfresh\n");
    assert_eq!(body_of(&ws.read("noisy.md")), "\nfine\n");

    // After the backoff the failed cycles are retried (and fail the same way); the notes that
    // ran are done for the hour.
    ws.clock.advance(TimeDelta::minutes(5));
    assert_eq!(pass(&scheduler), failing);
    settle(&[&scheduler]).await;
    for (name, _, _, want) in COMMANDS {
        let text = ws.read(&format!("{name}.md"));
        assert_eq!(assert_parses(&text).last_run_error.as_deref(), *want, "{name}");
        if want.is_some() {
            assert_eq!(body_of(&text), format!("\n{OLD_BODY}"), "{name}");
        }
    }
}

/// An environment variable that is set in any test run, to stand in for an API key (the
/// Anthropic client wants one; the mock ignores it).
fn key_var() -> String {
    ["CARGO_PKG_NAME", "CARGO_MANIFEST_DIR", "PATH", "HOME"]
        .iter()
        .find(|v| std::env::var(v).is_ok_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic())))
        .map(|v| (*v).to_owned())
        .unwrap_or_else(|| panic!("no usable environment variable for a fake API key"))
}

fn raw(status: u16, content_type: &str, body: &str) -> ScriptedReply {
    ScriptedReply::Raw { status, content_type: content_type.to_owned(), body: body.to_owned() }
}

/// Three quick 5xx answers (`Retry-After: 0`) so that a transient failure's retries are used
/// up at once and the fourth attempt's failure is the one reported.
fn three_quick_500s() -> Vec<ScriptedReply> {
    vec![ScriptedReply::Status(500, Some(0)); 3]
}

#[tokio::test]
async fn garbage_from_model_servers_fails_each_run_cleanly_and_the_next_run_works() {
    let openai = MockModelServer::start(Flavor::OpenAi, vec![]).await;
    let anthropic = MockModelServer::start(Flavor::Anthropic, vec![]).await;
    let config = format!(
        "[providers.oa]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\n[providers.an]\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key_env = \"{}\"\n",
        openai.base_url(),
        anthropic.base_url(),
        key_var()
    );
    let ws = Ws::new(&config, "2026-11-23T09:00:30Z");
    ws.write("oa.md", &live_note("  provider: oa\n", OLD_BODY));
    ws.write("an.md", &live_note("  provider: an\n", OLD_BODY));
    let engine = ws.engine();
    let host =
        |s: &MockModelServer| s.base_url().trim_start_matches("http://").trim_end_matches("/v1").to_owned();
    let (oa_host, an_host) = (host(&openai), host(&anthropic));
    let openai_chunk = r#"data: {"choices":[{"index":0,"delta":{"content":"Half"},"finish_reason":null}]}"#;
    let anthropic_start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n";
    // (server, note, replies, what lastRunError says)
    let cases: Vec<(&MockModelServer, &str, Vec<ScriptedReply>, String)> = vec![
        (
            &openai,
            "oa.md",
            vec![raw(200, "application/json", r#"{"choices": [{"message": "#)],
            format!("malformed response from {oa_host}: bad JSON: EOF while parsing"),
        ),
        (
            &openai,
            "oa.md",
            vec![raw(200, "text/event-stream", "data: {not json}\n\n")],
            format!("malformed response from {oa_host}: bad JSON: key must be a string"),
        ),
        (
            &openai,
            "oa.md",
            [three_quick_500s(), vec![raw(200, "text/event-stream", &format!("{openai_chunk}\n\n"))]]
                .concat(),
            format!("the response from {oa_host} ended early"),
        ),
        (
            &openai,
            "oa.md",
            vec![ScriptedReply::Status(500, Some(0)); 4],
            format!("server error (HTTP 500 from {oa_host}): Scripted error 500"),
        ),
        (
            &openai,
            "oa.md",
            vec![raw(200, "text/html", "<html>captive portal</html>")],
            format!("malformed response from {oa_host}: expected an event stream, got `text/html`"),
        ),
        (
            &anthropic,
            "an.md",
            vec![raw(200, "text/event-stream", "event: message_start\ndata: {\"type\": \n\n")],
            format!("malformed response from {an_host}: bad JSON: EOF while parsing"),
        ),
        (
            &anthropic,
            "an.md",
            [three_quick_500s(), vec![raw(200, "text/event-stream", anthropic_start)]].concat(),
            format!("the response from {an_host} ended early"),
        ),
        (
            &anthropic,
            "an.md",
            vec![raw(
                200,
                "text/event-stream",
                "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"junk \\\"quoted\\\"\"}}\n\n",
            )],
            format!("error from {an_host}: junk \"quoted\""),
        ),
        (
            &anthropic,
            "an.md",
            vec![ScriptedReply::Status(529, Some(0)); 4],
            format!("overloaded (HTTP 529 from {an_host}): Overloaded"),
        ),
        (
            &anthropic,
            "an.md",
            vec![raw(200, "application/octet-stream", "\u{1}\u{2}\u{3}garbage")],
            format!(
                "malformed response from {an_host}: expected an event stream, got `application/octet-stream`"
            ),
        ),
    ];
    for (server, note, replies, want) in cases {
        for r in replies {
            server.push(r);
        }
        let outcome = run_manual(&engine, &ws.path(note)).await;
        let Outcome::Failed { error, .. } = &outcome else { panic!("{note} {want}: {outcome:?}") };
        assert!(error.starts_with(&want), "{note}: got {error:?}, want {want:?}");
        assert_eq!(server.remaining(), 0, "{note} {want}: not every reply was asked for");
        let text = ws.read(note);
        let live = assert_parses(&text);
        assert_eq!(live.last_run_error.as_deref(), Some(error.as_str()), "{text}");
        assert_eq!(body_of(&text), format!("\n{OLD_BODY}"), "{note} {want}: the body changed");
    }
    // The same engine, the same servers: a good reply now goes through and clears the error.
    for (server, note) in [(&openai, "oa.md"), (&anthropic, "an.md")] {
        server.push(ScriptedReply::Text("Nothing new today.".to_owned()));
        let outcome = run_manual(&engine, &ws.path(note)).await;
        assert!(
            matches!(&outcome, Outcome::Done { summary, .. } if summary == "Nothing new today."),
            "{outcome:?}"
        );
        let text = ws.read(note);
        let live = assert_parses(&text);
        assert_eq!(live.last_run_error, None);
        assert_eq!(body_of(&text), format!("\n{OLD_BODY}"));
    }
}
