// Links, FIFOs, signals and process groups are made with Unix calls; the Windows side of what
// these cover is in platform/ and the Wine suite.
#![cfg(unix)]

use std::path::Path;
use std::time::Instant;

use chrono::{TimeZone, Utc};

use super::*;
use crate::providers::TriggerKind;

fn request(root: &Path) -> RunRequest {
    RunRequest {
        note_path: "notes/weather.md".to_owned(),
        title: Some("Weather".to_owned()),
        objective: "Keep the forecast for Paris current.".to_owned(),
        trigger: TriggerKind::Manual,
        context: Some("look at tomorrow".to_owned()),
        event: None,
        body: "# Weather\n\nSunny.\n".to_owned(),
        now: Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).single().unwrap_or_default(),
        local_now: "2025-03-04T06:06:07+01:00".to_owned(),
        time_zone: "Europe/Paris".to_owned(),
        workspace_root: root.to_path_buf(),
        trusted: true,
        run_id: "01JTESTRUN".to_owned(),
        model: None,
        mcp_servers: Vec::new(),
        instructions: Vec::new(),
        max_chars: None,
        memory: Default::default(),
        skills: Vec::new(),
        skill_catalog: Vec::new(),
    }
}

fn sh(script: &str, timeout: Duration) -> CommandConfig {
    CommandConfig { command: vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()], timeout }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

/// Run with a fresh token; returns the result and the events seen.
async fn run(cfg: &CommandConfig, req: &RunRequest) -> (Result<RunOutput, ProviderError>, Vec<RunEvent>) {
    let mut seen = Vec::new();
    let result =
        run_command(cfg, req, CancellationToken::new(), &mut |e: &RunEvent| seen.push(e.clone())).await;
    (result, seen)
}

fn ok(result: Result<RunOutput, ProviderError>) -> RunOutput {
    result.unwrap_or_else(|e| panic!("run failed: {e}"))
}

/// Gone, or a zombie nobody reaped yet (containers often lack a reaping init): either way
/// it no longer runs.
fn is_gone(pid: i32) -> bool {
    // Signal 0 finds any process, a zombie too; ESRCH: none.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err() || is_zombie(pid)
}

#[cfg(target_os = "linux")]
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// macOS has no /proc: `ps` asks the kernel.
#[cfg(not(target_os = "linux"))]
fn is_zombie(pid: i32) -> bool {
    std::process::Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim_start().starts_with('Z'))
}

async fn wait_gone(pid: i32) -> bool {
    for _ in 0..50 {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// The pid a script wrote to `file`, once it exists.
async fn read_pid(file: &Path) -> i32 {
    for _ in 0..250 {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no pid in {}", file.display());
}

#[tokio::test]
async fn plain_output_is_the_new_body() {
    let dir = tempdir();
    let (result, events) =
        run(&sh("printf '## Today\\n\\nSunny.\\n'", Duration::from_secs(10)), &request(dir.path())).await;
    assert_eq!(
        ok(result),
        RunOutput { body: "## Today\n\nSunny.\n".to_owned(), summary: None, body_is_below_h1: true }
    );
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["started", "exited"]);
    assert!(events[0].message.starts_with("started sh (pid "), "{:?}", events[0]);
    assert_eq!(events[1].message, "exited with status 0");
}

#[tokio::test]
async fn json_output_gives_body_and_summary() {
    let dir = tempdir();
    let script = r#"printf '  {"body": "Rain at 4pm.\\n", "summary": " Rain later. "}\n'"#;
    let (result, _) = run(&sh(script, Duration::from_secs(10)), &request(dir.path())).await;
    let out = ok(result);
    assert_eq!(out.body, "Rain at 4pm.\n");
    assert_eq!(out.summary.as_deref(), Some("Rain later."));

    // Starts like JSON but is not the JSON answer: the run fails, saying why (with the
    // parser's line:col), rather than writing the raw JSON into the note.
    for (text, why) in [
        (r#"{"text": "x"}"#, "has no string `body`"),
        (r#"{"body": 3}"#, "has no string `body`"),
        (r#"{"body": "x", "summary": 3}"#, "its `summary` is not a string"),
        ("{not json", "is not valid JSON: key must be a string at 1:2"),
        ("\n{\"body\": \"x\",}", "is not valid JSON: trailing comma at 2:14"),
    ] {
        let (result, _) =
            run(&sh(&format!("printf '%s' '{text}'"), Duration::from_secs(10)), &request(dir.path())).await;
        let err = result.err().unwrap_or_else(|| panic!("{text}: should fail"));
        assert!(matches!(err, ProviderError::InvalidOutput(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "output starts with `{{` but {why}; print plain text or {{\"body\": \"...\", \"summary\": \"...\"}}"
            )
        );
    }
    // `{"body": null}`-like summaries are fine; plain text that merely contains braces is text.
    let (result, _) =
        run(&sh(r#"printf '{"body": "x", "summary": null}'"#, Duration::from_secs(10)), &request(dir.path()))
            .await;
    assert_eq!(ok(result).summary, None);
    let (result, _) = run(&sh("printf 'a {b}'", Duration::from_secs(10)), &request(dir.path())).await;
    assert_eq!(ok(result).body, "a {b}");
}

#[tokio::test]
async fn failure_carries_status_and_stderr_tail() {
    let dir = tempdir();
    let script =
        "echo one >&2; echo two >&2; printf '\\033[31mthree\\033[0m\\n\\n' >&2; echo four >&2; exit 3";
    let (result, events) = run(&sh(script, Duration::from_secs(10)), &request(dir.path())).await;
    let err = result.err().unwrap_or_else(|| panic!("should fail"));
    assert_eq!(err.to_string(), "exited with status 3: two | three | four");
    let stderr: Vec<&str> =
        events.iter().filter(|e| e.kind == "stderr").map(|e| e.message.as_str()).collect();
    assert_eq!(stderr, ["one", "two", "three", "", "four"]);

    let (result, _) = run(&sh("exit 1", Duration::from_secs(10)), &request(dir.path())).await;
    assert_eq!(result.map_err(|e| e.to_string()), Err("exited with status 1".to_owned()));

    let (result, _) = run(&sh("kill -9 $$", Duration::from_secs(10)), &request(dir.path())).await;
    assert_eq!(result.map_err(|e| e.to_string()), Err("killed by signal 9 (SIGKILL)".to_owned()));
}

#[tokio::test]
async fn long_stderr_is_trimmed_to_one_short_line() {
    let dir = tempdir();
    let script =
        "i=0; while [ $i -lt 2000 ]; do echo \"line $i $(printf '%0100d' 0)\" >&2; i=$((i+1)); done; exit 2";
    let (result, events) = run(&sh(script, Duration::from_secs(30)), &request(dir.path())).await;
    let msg = result.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.starts_with("exited with status 2: …"), "{msg}");
    assert!(msg.ends_with(&format!("line 1999 {}", "0".repeat(100))), "{msg}");
    assert!(msg.chars().count() <= "exited with status 2: ".len() + TAIL_CHARS, "{msg}");
    let stderr = events.iter().filter(|e| e.kind == "stderr").count();
    assert_eq!(stderr, MAX_STDERR_EVENTS + 1, "capped, with one 'not recorded' line");
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let dir = tempdir();
    let pid_file = dir.path().join("child.pid");
    let script = "sleep 30 & echo $! > child.pid; wait";
    let start = Instant::now();
    let (result, events) = run(&sh(script, Duration::from_millis(300)), &request(dir.path())).await;
    assert_eq!(result.map_err(|e| e.to_string()), Err("timed out after 300ms".to_owned()));
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    assert!(events.iter().any(|e| e.kind == "killed"));
    let grandchild = read_pid(&pid_file).await;
    assert!(wait_gone(grandchild).await, "the background sleep {grandchild} survived");
}

#[tokio::test]
async fn stop_ends_the_command_within_a_second() {
    // The second script ignores SIGTERM (and so does its child): only SIGKILL ends it.
    for script in
        ["sleep 30 & echo $! > child.pid; wait", "trap '' TERM; sleep 30 & echo $! > child.pid; wait"]
    {
        let dir = tempdir();
        let pid_file = dir.path().join("child.pid");
        let cfg = sh(script, Duration::from_secs(60));
        let req = request(dir.path());
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let task = tokio::spawn(async move {
            let mut sink = |_: &RunEvent| {};
            run_command(&cfg, &req, token, &mut sink).await
        });
        let grandchild = read_pid(&pid_file).await;
        assert!(!is_gone(grandchild));
        let stopped_at = Instant::now();
        cancel.cancel();
        let result = task.await.unwrap_or_else(|e| panic!("join: {e}"));
        let took = stopped_at.elapsed();
        assert_eq!(result, Err(ProviderError::Stopped));
        assert_eq!(ProviderError::Stopped.to_string(), "stopped");
        assert!(took < Duration::from_secs(1), "{script}: took {took:?}");
        assert!(wait_gone(grandchild).await, "{script}: the child sleep {grandchild} survived");
    }
}

#[tokio::test]
async fn a_stopped_token_runs_nothing() {
    let dir = tempdir();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let cfg = sh("touch ran", Duration::from_secs(10));
    let result = run_command(&cfg, &request(dir.path()), cancel, &mut |_: &RunEvent| {}).await;
    assert_eq!(result, Err(ProviderError::Stopped));
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn environment_and_working_directory() {
    let dir = tempdir();
    let script = r#"printf '%s|' "$LIVENOTE_NOTE_PATH" "$LIVENOTE_OBJECTIVE" "$LIVENOTE_TRIGGER" "$LIVENOTE_CONTEXT" "$LIVENOTE_RUN_ID" "$LIVENOTE_NOW" "$LIVENOTE_WORKSPACE" "$LIVENOTE_TITLE" "$LIVENOTE_MODEL"; pwd -P"#;
    let (result, _) = run(&sh(script, Duration::from_secs(10)), &request(dir.path())).await;
    let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let expected = format!(
        "notes/weather.md|Keep the forecast for Paris current.|manual|look at tomorrow|01JTESTRUN|2025-03-04T05:06:07Z|{}|Weather||{}\n",
        dir.path().display(),
        root.display()
    );
    assert_eq!(ok(result).body, expected);
}

#[tokio::test]
async fn stdin_carries_the_run_as_json() {
    let dir = tempdir();
    let mut req = request(dir.path());
    req.trigger = TriggerKind::Event;
    req.model = Some("m1".to_owned());
    req.title = None;
    req.mcp_servers = vec![
        crate::mcp::Selected {
            name: "time".to_owned(),
            config: crate::config::McpServerConfig {
                transport: crate::config::McpTransport::Stdio { command: vec!["mcp-server-time".to_owned()] },
                env: [("TOKEN".to_owned(), "secret".to_owned())].into(),
                events: true,
                timeout: Duration::from_secs(30),
                origin: crate::config::Origin::User,
            },
            tools: None,
        },
        crate::mcp::Selected {
            name: "remote".to_owned(),
            config: crate::config::McpServerConfig {
                transport: crate::config::McpTransport::Http {
                    url: "http://127.0.0.1:8931/mcp".to_owned(),
                    headers: Vec::new(),
                },
                env: Default::default(),
                events: true,
                timeout: Duration::from_secs(30),
                origin: crate::config::Origin::User,
            },
            tools: Some(vec!["search".to_owned()]),
        },
    ];
    req.instructions = vec![
        crate::instructions::Instruction {
            file: "AGENTS.md".to_owned(),
            text: "Write in French.".to_owned(),
            cut_from: None,
        },
        crate::instructions::cut("notes/STYLE.md".to_owned(), "Short lines, always.", 5),
    ];
    req.max_chars = Some(4000);
    req.event = Some(super::super::TriggerEvent {
        id: "01JV0000000000000000000001".to_owned(),
        source: "gmail".to_owned(),
        kind: "email.synced".to_owned(),
        created_at: "2025-03-04T05:00:00Z".to_owned(),
        payload: serde_json::json!({"subject": "Rain", "to": ["a@example.com"]}),
        target_file_path: None,
    });
    let now = req.now;
    req.memory
        .entries
        .save("sources", "meteo.fr", Some(true), now, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    req.skills = vec![crate::skills::Skill {
        name: "weekly-digest".to_owned(),
        description: "Sum up a week.".to_owned(),
        source: crate::skills::Source::Workspace,
        file: "skills/digest.md".to_owned(),
        path: None,
        body: "Group by day.".to_owned(),
    }];
    // A prefix so the echo is not itself mistaken for JSON output.
    let (result, _) = run(&sh("printf 'got:'; cat", Duration::from_secs(10)), &req).await;
    let body = ok(result).body;
    let json = body.strip_prefix("got:").unwrap_or_else(|| panic!("{body}"));
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(
        v,
        serde_json::json!({
            "notePath": "notes/weather.md",
            "title": null,
            "objective": "Keep the forecast for Paris current.",
            "trigger": "event",
            "context": "look at tomorrow",
            "event": {
                "id": "01JV0000000000000000000001",
                "source": "gmail",
                "type": "email.synced",
                "createdAt": "2025-03-04T05:00:00Z",
                "payload": {"subject": "Rain", "to": ["a@example.com"]},
                "targetFilePath": null,
            },
            "body": "# Weather\n\nSunny.\n",
            "now": "2025-03-04T05:06:07Z",
            "localNow": "2025-03-04T06:06:07+01:00",
            "timeZone": "Europe/Paris",
            "runId": "01JTESTRUN",
            "model": "m1",
            "mcpServers": [
                {"name": "time", "command": ["mcp-server-time"], "tools": null},
                {"name": "remote", "url": "http://127.0.0.1:8931/mcp", "tools": ["search"]},
            ],
            "instructions": [
                {"file": "AGENTS.md", "text": "Write in French."},
                {
                    "file": "notes/STYLE.md",
                    "text": "Short\n\n[cut: notes/STYLE.md has 20 characters; only the first 5 are used ([agent] instructions_max_chars)]",
                    "cutFrom": 20
                },
            ],
            "maxChars": 4000,
            "memory": [
                {"key": "sources", "content": "meteo.fr", "pinned": true, "updated": "2025-03-04T05:06:07Z"}
            ],
            "skills": [{
                "name": "weekly-digest",
                "description": "Sum up a week.",
                "source": "workspace",
                "file": "skills/digest.md",
                "body": "Group by day.",
            }],
        })
    );
}

#[tokio::test]
async fn a_program_that_ignores_stdin_does_not_block() {
    let dir = tempdir();
    let mut req = request(dir.path());
    req.body = "x".repeat(4 * 1024 * 1024);
    let (result, _) = run(&sh("echo done", Duration::from_secs(10)), &req).await;
    assert_eq!(ok(result).body, "done\n");
}

#[tokio::test]
async fn huge_output_is_an_error_and_ends_the_program() {
    let dir = tempdir();
    let start = Instant::now();
    let (result, _) =
        run(&sh("yes 'all work and no play'", Duration::from_secs(30)), &request(dir.path())).await;
    assert_eq!(result.map_err(|e| e.to_string()), Err("output larger than 8 MiB".to_owned()));
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());

    // Just under the cap is fine.
    let script = format!("head -c {MAX_STDOUT} /dev/zero | tr '\\0' a");
    let (result, _) = run(&sh(&script, Duration::from_secs(30)), &request(dir.path())).await;
    assert_eq!(ok(result).body.len(), MAX_STDOUT);
}

#[tokio::test]
async fn leftover_background_processes_do_not_hold_the_run() {
    let dir = tempdir();
    let pid_file = dir.path().join("child.pid");
    let start = Instant::now();
    let (result, _) =
        run(&sh("echo hi; sleep 30 & echo $! > child.pid", Duration::from_secs(30)), &request(dir.path()))
            .await;
    assert_eq!(ok(result).body, "hi\n");
    assert!(start.elapsed() < PIPE_GRACE + Duration::from_secs(2), "{:?}", start.elapsed());
    let leftover = read_pid(&pid_file).await;
    assert!(wait_gone(leftover).await, "the background sleep {leftover} survived");
}

/// A runner slow to come back to the pipes (a loaded machine, a 2-core CI) still reads what
/// was written to them before the grace ran out: the program's output is its answer, and
/// dropping it failed the run with "the command printed nothing". The stderr line makes this
/// runner stall (its event handler blocks the thread) past the grace while the output arrives.
#[tokio::test]
async fn output_waiting_in_the_pipe_when_the_grace_ends_is_still_read() {
    let dir = tempdir();
    let script = "(sleep 0.2; echo stall >&2; sleep 0.1; echo late) & echo early";
    let mut seen = Vec::new();
    let result = run_command(
        &sh(script, Duration::from_secs(30)),
        &request(dir.path()),
        CancellationToken::new(),
        &mut |e: &RunEvent| {
            if e.message.contains("stall") {
                std::thread::sleep(PIPE_GRACE + Duration::from_millis(600));
            }
            seen.push(e.clone());
        },
    )
    .await;
    assert_eq!(ok(result).body, "early\nlate\n", "{seen:?}");
}

#[tokio::test]
async fn missing_programs_and_bad_setups_are_clear() {
    let dir = tempdir();
    let req = request(dir.path());
    let cfg = CommandConfig {
        command: vec!["livenote-no-such-program".to_owned()],
        timeout: Duration::from_secs(5),
    };
    let (result, _) = run(&cfg, &req).await;
    assert_eq!(
        result.map_err(|e| e.to_string()),
        Err("command not found: livenote-no-such-program".to_owned())
    );

    let cfg = CommandConfig { command: vec!["./missing.sh".to_owned()], timeout: Duration::from_secs(5) };
    let (result, _) = run(&cfg, &req).await;
    assert_eq!(result.map_err(|e| e.to_string()), Err("command not found: ./missing.sh".to_owned()));

    let cfg = CommandConfig { command: vec![], timeout: Duration::from_secs(5) };
    let (result, _) = run(&cfg, &req).await;
    assert!(matches!(result, Err(ProviderError::Config(_))));

    let not_dir = request(&dir.path().join("nope"));
    let (result, _) = run(&sh("true", Duration::from_secs(5)), &not_dir).await;
    assert!(result.is_err_and(|e| e.to_string().starts_with("workspace folder not found: ")));
}

#[tokio::test]
async fn relative_programs_are_the_workspaces_files() {
    let dir = tempdir();
    std::fs::create_dir_all(dir.path().join("bin")).unwrap_or_else(|e| panic!("{e}"));
    let script = dir.path().join("bin/agent.sh");
    std::fs::write(&script, "#!/bin/sh\necho from-script\n").unwrap_or_else(|e| panic!("{e}"));
    let cfg = CommandConfig {
        command: vec!["sh".to_owned(), "bin/agent.sh".to_owned()],
        timeout: Duration::from_secs(5),
    };
    let (result, _) = run(&cfg, &request(dir.path())).await;
    assert_eq!(ok(result).body, "from-script\n");

    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    let cfg = CommandConfig { command: vec!["./bin/agent.sh".to_owned()], timeout: Duration::from_secs(5) };
    let (result, _) = run(&cfg, &request(dir.path())).await;
    assert_eq!(ok(result).body, "from-script\n");
}

#[tokio::test]
async fn invalid_utf8_output_is_refused() {
    let dir = tempdir();
    let (result, _) = run(&sh("printf 'ok\\377'", Duration::from_secs(5)), &request(dir.path())).await;
    assert_eq!(result.map_err(|e| e.to_string()), Err("output is not valid UTF-8 (at byte 2)".to_owned()));
}

#[test]
fn env_values_never_break_spawn() {
    assert_eq!(env_value("a\0b"), "ab");
    let long = "é".repeat(MAX_ENV_VALUE);
    let v = env_value(&long);
    assert!(v.len() <= MAX_ENV_VALUE && v.len() > MAX_ENV_VALUE - 2);
}

#[test]
fn stderr_lines_are_cleaned() {
    assert_eq!(clean_line("\u{1b}[1;31merror:\u{1b}[0m  bad\tthing\r"), "error: bad thing");
    assert_eq!(tail_summary(b"a\n\n  b  \nc\nd\n"), "b | c | d");
    assert_eq!(tail_summary(b""), "");
}

#[tokio::test]
async fn output_over_the_budget_fails_the_run() {
    let dir = tempdir();
    let mut req = request(dir.path());
    // "# Weather\n" (10) on top of the output, as the note will read.
    req.max_chars = Some(20);
    let (result, _) = run(&sh("printf 'abcdefghi\n'", Duration::from_secs(10)), &req).await;
    assert_eq!(ok(result).body, "abcdefghi\n");
    let (result, _) = run(&sh("printf 'abcdéfghij\n'", Duration::from_secs(10)), &req).await;
    let err = result.err().map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("output of 21 characters is over budget by 1; trim older sections (maxChars is 20)")
    );
}

#[test]
fn memory_changes_come_only_with_a_json_answer() {
    let got = |s: &str| memory_changes(s.as_bytes()).map(|r| r.map(|m| m.len()));
    assert_eq!(got(r#"{"body": "x", "memory": {"a": "1", "b": null}}"#), Some(Ok(2)));
    assert_eq!(got(r#"{"body": "x", "memory": null}"#), None);
    assert_eq!(got(r#"{"body": "x"}"#), None);
    // Not the JSON answer: the whole text is the note's content, nothing is read from it.
    assert_eq!(got(r#"{"memory": {"a": "1"}}"#), None);
    assert_eq!(got("Plain text mentioning \"memory\"."), None);
    assert!(matches!(got(r#"{"body": "x", "memory": ["a"]}"#), Some(Err(_))));
}
