//! End-to-end tests of the real `livenote` binary: `check` and `list`, their JSON forms, text
//! forms and exit codes, on the fixture vault in tests/fixtures/vault.

// Built on Unix calls (nix, std::os::unix, sh); Windows is covered by the platform layer's
// unit tests and the Wine suite.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use expect_test::{Expect, expect};

fn fixture_vault() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/vault")
}

/// A copy of the fixture vault with a git-ignored note and a `.livenote/` folder added (they
/// cannot live in the repository itself).
fn vault() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    copy_dir(&fixture_vault(), dir.path());
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
    };
    write(".gitignore", "ignored/\n");
    write("ignored/skip.md", "---\nlive:\n  objective: x\n  active: nope\n---\n");
    write(".livenote/history/x.md", "---\nlive:\n  active: nope\n---\n");
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{e}")).flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap_or_else(|e| panic!("{e}"));
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

fn livenote(cwd: &Path, args: &[&str]) -> Output {
    livenote_with(cwd, args, &[])
}

/// [`livenote`] with more environment variables.
fn livenote_with(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(args)
        .env_remove("LIVENOTE_LOG")
        .envs(env.iter().copied())
        .current_dir(cwd)
        .env("TZ", "America/Chicago")
        // A trust list of its own, so the user's never changes the output.
        .env("LIVENOTE_DATA_DIR", cwd.join(".test-data"))
        .env("LIVENOTE_CONFIG_DIR", cwd.join(".test-data"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap_or_else(|e| panic!("run livenote: {e}"))
}

fn check_output(out: &Output, code: i32, stdout: Expect) {
    assert_eq!(out.status.code(), Some(code), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    stdout.assert_eq(&String::from_utf8_lossy(&out.stdout));
}

#[test]
fn check_text() {
    let v = vault();
    check_output(
        &livenote(v.path(), &["check"]),
        1,
        expect![[r#"
            plain.md:6:1: hint live/legacy-track-fence a ```track fence from the older per-block model; livenote uses one `live:` block in the frontmatter
            sub/broken-crlf.md:5:11: error live/wrong-type `active` must be true or false, found the string "yes" (YAML 1.2 reads `yes`/`no` as text)
            sub/broken-crlf.md:7:5: warning live/unknown-key unknown key `cron` in `triggers`; did you mean `cronExpr`?
            sub/failed.md:2:1: warning live/last-run-failed the latest run failed: provider timed out after 10m
            sub/failed.md:2:1: info live/no-event-source no source sends events here: `eventMatchCriteria` waits for events, and this folder has no `[sources.NAME]` (a feed, a calendar, a mailbox, a webhook, a program; docs/sources.md); `livenote event` can still queue one
        "#]],
    );
}

#[test]
fn check_json_with_exit_codes() {
    let v = vault();
    check_output(
        &livenote(v.path(), &["check", "--format", "json", "sub/broken-crlf.md", "plain.md"]),
        1,
        expect![[r#"
            [
              {
                "path": "sub/broken-crlf.md",
                "line": 5,
                "column": 11,
                "endLine": 5,
                "endColumn": 14,
                "severity": "error",
                "code": "live/wrong-type",
                "message": "`active` must be true or false, found the string \"yes\" (YAML 1.2 reads `yes`/`no` as text)"
              },
              {
                "path": "sub/broken-crlf.md",
                "line": 7,
                "column": 5,
                "endLine": 7,
                "endColumn": 9,
                "severity": "warning",
                "code": "live/unknown-key",
                "message": "unknown key `cron` in `triggers`; did you mean `cronExpr`?"
              },
              {
                "path": "plain.md",
                "line": 6,
                "column": 1,
                "endLine": 6,
                "endColumn": 9,
                "severity": "hint",
                "code": "live/legacy-track-fence",
                "message": "a ```track fence from the older per-block model; livenote uses one `live:` block in the frontmatter"
              }
            ]
        "#]],
    );
    check_output(
        &livenote(v.path(), &["check", "--format", "json", "hourly.md", "morning.md"]),
        0,
        expect![[r#"
        []
    "#]],
    );
    let missing = livenote(v.path(), &["check", "nope.md"]);
    assert_eq!(missing.status.code(), Some(2));
    let usage = livenote(v.path(), &["check", "--format", "yaml"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn list_json_at_an_instant() {
    let v = vault();
    // Trusted, so statuses show the notes' own state.
    assert_eq!(livenote(v.path(), &["trust", "."]).status.code(), Some(0));
    // 09:01:30 in Chicago: one minute and a half after the hourly cron's 09:00 occurrence,
    // inside the 08:00-10:00 window.
    check_output(
        &livenote(v.path(), &["list", "--format", "json", "--at", "2026-11-23T15:01:30Z"]),
        0,
        expect![[r#"
            [
              {
                "path": "hourly.md",
                "title": "Chicago time",
                "active": true,
                "status": "live",
                "triggers": {
                  "cronExpr": "0 * * * *"
                },
                "due": "cron",
                "nextDue": "2026-11-23T15:01:30+00:00",
                "lastRunAt": "2026-11-23T14:00:01.000Z",
                "lastRunSummary": "Updated.",
                "lastAttemptAt": "2026-11-23T14:00:00.000Z",
                "lastRunError": null
              },
              {
                "path": "morning.md",
                "title": "Morning",
                "active": true,
                "status": "live",
                "triggers": {
                  "windows": [
                    {
                      "startTime": "08:00",
                      "endTime": "10:00"
                    },
                    {
                      "startTime": "12:00",
                      "endTime": "12:00"
                    }
                  ]
                },
                "due": "window",
                "nextDue": "2026-11-23T15:01:30+00:00",
                "lastRunAt": "2026-11-22T14:30:00.000Z",
                "lastRunSummary": null,
                "lastAttemptAt": null,
                "lastRunError": null
              },
              {
                "path": "paused.md",
                "title": "paused",
                "active": false,
                "status": "paused",
                "triggers": {
                  "cronExpr": "0 9 * * 1"
                },
                "due": null,
                "nextDue": null,
                "lastRunAt": null,
                "lastRunSummary": null,
                "lastAttemptAt": null,
                "lastRunError": null
              },
              {
                "path": "sub/broken-crlf.md",
                "title": "日本 😀",
                "active": true,
                "status": "invalid",
                "triggers": {},
                "due": null,
                "nextDue": null,
                "lastRunAt": null,
                "lastRunSummary": null,
                "lastAttemptAt": null,
                "lastRunError": null
              },
              {
                "path": "sub/failed.md",
                "title": "failed",
                "active": true,
                "status": "failed",
                "triggers": {
                  "eventMatchCriteria": "Emails about the budget"
                },
                "due": null,
                "nextDue": null,
                "lastRunAt": null,
                "lastRunSummary": null,
                "lastAttemptAt": "2026-11-23T14:58:00.000Z",
                "lastRunError": "provider timed out after 10m"
              }
            ]
        "#]],
    );
}

#[test]
fn list_answers_what_fires_tomorrow_morning() {
    let v = vault();
    check_output(
        &livenote(v.path(), &["list", "--at", "2026-11-24T08:00:00-06:00", "."]),
        0,
        expect![[r#"
            NOTE                STATUS     DUE     NEXT                       LAST RUN
            hourly.md           untrusted  cron    2026-11-24T08:00:00-06:00  2026-11-23T08:00:01-06:00
                summary: Updated.
            morning.md          untrusted  window  2026-11-24T08:00:00-06:00  2026-11-22T08:30:00-06:00
            paused.md           paused     -       -                          never
            sub/broken-crlf.md  invalid    -       -                          never
            sub/failed.md       untrusted  -       -                          never
                error: provider timed out after 10m
        "#]],
    );
    let bad = livenote(v.path(), &["list", "--at", "tomorrow"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a time"), "{bad:?}");
}

/// `init` gives a new user a working setup: `run` updates the example note at once, and
/// `list` shows it as updated.
#[test]
fn init_then_run() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = livenote(dir.path(), &["init", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // The config init wrote is the user's own: trusted with that content.
    assert!(String::from_utf8_lossy(&out.stdout).contains("with the .livenote.toml written now"), "{out:?}");
    let out = livenote(dir.path(), &["run", "what-time-is-it.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Updated: It is "), "{out:?}");
    let note = std::fs::read_to_string(dir.path().join("what-time-is-it.md")).unwrap_or_default();
    assert!(note.contains("lastRunError: null") && note.contains("\n# What time is it?\n\nIt is "), "{note}");
    // A second init keeps what is there, and does not ask to trust a folder that is trusted.
    let out = livenote(dir.path(), &["init", "."]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("kept"), "{out:?}");
    assert!(!said.contains("livenote trust") && said.contains("next: `livenote run "), "{said}");
    // A failing provider: exit 1, the error recorded in the note.
    std::fs::write(
        dir.path().join(".livenote.toml"),
        "[providers.bad]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo nope >&2; exit 4\"]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // init trusted the config it wrote; a changed one is ignored until trusted again.
    let out = livenote(dir.path(), &["run", "what-time-is-it.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("changed since you trusted"), "{out:?}");
    // Changed since trusted: init says to review and trust it.
    let out = livenote(dir.path(), &["init", "."]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("then `livenote trust ."), "{out:?}");
    assert_eq!(livenote(dir.path(), &["trust", "."]).status.code(), Some(0));
    let out = livenote(dir.path(), &["run", "what-time-is-it.md"]);
    assert_eq!(out.status.code(), Some(1));
    let note = std::fs::read_to_string(dir.path().join("what-time-is-it.md")).unwrap_or_default();
    assert!(note.contains("lastRunError: \"exited with status 4: nope\""), "{note}");
}

/// Issue 21: a `command` provider whose output starts like JSON but is not (`{"body": "x",}`)
/// had that raw text written as the note's body. The run fails with the parser's line:col, and
/// the note keeps its body: only the runtime fields of a failed run change.
#[test]
fn a_command_printing_broken_json_fails_and_leaves_the_note() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let data = dir.path().join(".test-data");
    std::fs::create_dir_all(&data).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        data.join("config.toml"),
        r#"
[agent]
provider = "j"
[providers.j]
kind = "command"
command = ["sh", "-c", "printf '{\"body\": \"x\",}'"]
"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let before = "---\nlive:\n  objective: Keep it current\n---\n# Title\n\nold body\n";
    std::fs::write(dir.path().join("n.md"), before).unwrap_or_else(|e| panic!("{e}"));
    let out = livenote(dir.path(), &["run", "n.md"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is not valid JSON: trailing comma at 1:14"), "{stderr}");
    let after = std::fs::read_to_string(dir.path().join("n.md")).unwrap_or_default();
    assert!(
        after.contains(
            "  lastRunError: \"output starts with `{` but is not valid JSON: trailing comma at 1:14;"
        ),
        "{after}"
    );
    assert!(!after.contains("lastRunAt"), "{after}");
    // Everything but the failed run's runtime fields is byte for byte as it was.
    let without_runtime: String = after
        .split_inclusive('\n')
        .filter(|l| {
            !l.starts_with("  lastAttemptAt:")
                && !l.starts_with("  lastRunId:")
                && !l.starts_with("  lastRunError:")
                && !l.starts_with("  failures:")
        })
        .collect();
    assert_eq!(without_runtime, before);
}

/// Issue 21: `examples/reading-stats.md` has no `title:`; `list` named it "reading-stats"
/// instead of its `# ` heading (SPEC 1).
#[test]
fn list_names_a_note_by_its_heading() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/reading-stats.md");
    std::fs::copy(example, dir.path().join("reading-stats.md")).unwrap_or_else(|e| panic!("{e}"));
    let out = livenote(dir.path(), &["list", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let items: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(items[0]["path"], "reading-stats.md", "{items}");
    assert_eq!(items[0]["title"], "Reading list statistics", "{items}");
}

/// `[scheduler] exclude` leaves notes out of `list` as it does out of the scheduler (one
/// matcher for both), once the folder's config counts.
#[test]
fn list_leaves_out_excluded_notes() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let note = "---\nlive:\n  objective: say something\n---\n# Note\n";
    for rel in ["now.md", "archive/old.md", "archive/deep/older.md"] {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, note).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(dir.path().join(".livenote.toml"), "[scheduler]\nexclude = [\"archive/**\"]\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let paths = |out: &Output| -> Vec<String> {
        let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        items.as_array().into_iter().flatten().filter_map(|i| i["path"].as_str().map(str::to_owned)).collect()
    };
    // Untrusted, the folder's config (and its excludes) is not used.
    let out = livenote(dir.path(), &["list", "--format", "json"]);
    assert_eq!(paths(&out), ["archive/deep/older.md", "archive/old.md", "now.md"], "{out:?}");
    assert_eq!(livenote(dir.path(), &["trust", "."]).status.code(), Some(0));
    let out = livenote(dir.path(), &["list", "--format", "json"]);
    assert_eq!(paths(&out), ["now.md"], "{out:?}");
}

/// `livenote check` checks `provider:` against the note's workspace configuration, as the
/// language server does; a folder's own providers count even before it is trusted (running
/// the note asks for trust, checking it does not).
#[test]
fn check_reports_unknown_providers_with_did_you_mean() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.path().join(".livenote.toml"),
        "[providers.clock]\nkind = \"command\"\ncommand = [\"date\"]\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("good.md"), "---\nlive:\n  objective: x\n  provider: clock\n---\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("typo.md"), "---\nlive:\n  objective: x\n  provider: clok\n---\n")
        .unwrap_or_else(|e| panic!("{e}"));
    check_output(
        &livenote(dir.path(), &["check", "."]),
        1,
        expect![[r#"
            typo.md:4:13: error live/unknown-provider no provider named `clok` (did you mean `clock`? configured: anthropic, clock, openai); see [providers.*] in .livenote.toml
        "#]],
    );
}

/// `livenote check` checks `tools:` against the MCP servers of the note's workspace (those of
/// a folder not trusted yet count, as for providers) without starting any: `nosuch` is a
/// warning with "did you mean" for a typo, and warnings alone exit 0.
#[test]
fn check_reports_unknown_mcp_servers_in_tools() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let marker = dir.path().join("server-started");
    std::fs::write(
        dir.path().join(".livenote.toml"),
        format!("[mcp.servers.time]\ncommand = [\"sh\", \"-c\", \"touch {}\"]\n", marker.display()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("good.md"), "---\nlive:\n  objective: x\n  tools: [time]\n---\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.path().join("typo.md"),
        "---\nlive:\n  objective: x\n  tools: [nosuch, tme.get_current_time]\n---\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    check_output(
        &livenote(dir.path(), &["check", "."]),
        0,
        expect![[r#"
        typo.md:4:11: warning live/unknown-tool no MCP server named `nosuch` (configured: time); see [mcp.servers.*] in .livenote.toml
        typo.md:4:19: warning live/unknown-tool no MCP server named `tme` (did you mean `time`? configured: time); see [mcp.servers.*] in .livenote.toml
    "#]],
    );
    assert!(!marker.exists(), "checking started an MCP server");
}

/// Shell completions from the CLI definition, for three shells; `help` works like `--help`;
/// every positional argument says what it is.
#[test]
fn completions_help_and_argument_texts() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (shell, marker) in
        [("bash", "_livenote()"), ("zsh", "#compdef livenote"), ("fish", "complete -c livenote")]
    {
        let out = livenote(dir.path(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {out:?}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        for command in ["check", "watch", "tick", "undo", "history", "stop", "completions"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
    }
    let out = livenote(dir.path(), &["help", "--help"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = livenote(dir.path(), &["help", "run"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: livenote run [OPTIONS] <NOTE>"), "{out:?}");
    for command in [
        "run", "watch", "tick", "event", "trust", "untrust", "init", "undo", "history", "stop", "list",
        "check",
    ] {
        // The short form: a command with a long description (`tick`) puts `--help`'s argument
        // texts on lines of their own.
        let out = livenote(dir.path(), &[command, "-h"]);
        let text = String::from_utf8_lossy(&out.stdout);
        let arguments = text.split("Arguments:").nth(1).unwrap_or_default();
        let arguments = arguments.split("Options:").next().unwrap_or_default();
        for line in
            arguments.lines().filter(|l| l.trim_start().starts_with('[') || l.trim_start().starts_with('<'))
        {
            let described = line.trim().split_once("  ").is_some_and(|(_, help)| !help.trim().is_empty());
            assert!(described, "`livenote {command}`: an argument without help: {line:?}");
        }
    }
}

/// `livenote man` renders livenote(1) from the command definition; `--out` writes a page per
/// command, and refuses a folder that does not exist.
#[test]
fn man_pages_from_the_command_definition() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = livenote(dir.path(), &["man"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".TH livenote 1"), "{page}");
    assert!(page.contains("livenote\\-watch(1)"), "{page}");
    let pages = dir.path().join("man1");
    std::fs::create_dir(&pages).unwrap_or_else(|e| panic!("{e}"));
    let out = livenote(dir.path(), &["man", "--out", "man1"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let list = livenote_page(&pages.join("livenote-list.1"));
    assert!(list.contains(".TH livenote-list 1") && list.contains("\\-\\-at"), "{list}");
    // The help text of every visible command has its page; hidden options stay hidden.
    for command in ["check", "run", "watch", "tick", "undo", "history", "completions", "man"] {
        assert!(pages.join(format!("livenote-{command}.1")).is_file(), "no page for {command}");
    }
    assert!(!livenote_page(&pages.join("livenote-run.1")).contains("clock"), "a hidden option in the page");
    let missing = livenote(dir.path(), &["man", "--out", "nosuch"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nosuch is not a folder"), "{missing:?}");
}

fn livenote_page(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `--at` takes a local date-time without an offset too, counts an occurrence exactly at the
/// instant as firing then, and shows times in the zone the question was asked in.
#[test]
fn list_at_a_local_time_and_in_the_questions_zone() {
    let v = vault();
    assert_eq!(livenote(v.path(), &["trust", "."]).status.code(), Some(0));
    let item = |args: &[&str]| -> serde_json::Value {
        let out = livenote(v.path(), args);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        items.as_array().into_iter().flatten().find(|i| i["path"] == "hourly.md").cloned().unwrap_or_default()
    };
    // 08:00 in Chicago (the tests' TZ), no offset: the hourly cron fires then.
    let local = item(&["list", "--format", "json", "--at", "2026-11-24T08:00"]);
    assert_eq!(local["due"], "cron", "{local}");
    assert_eq!(local["nextDue"], "2026-11-24T08:00:00-06:00", "{local}");
    // The same instant asked in +01:00 answers in +01:00.
    let paris = item(&["list", "--format", "json", "--at", "2026-11-24T15:00:00+01:00"]);
    assert_eq!(paris["due"], "cron", "{paris}");
    assert_eq!(paris["nextDue"], "2026-11-24T15:00:00+01:00", "{paris}");
    let bad = livenote(v.path(), &["list", "--at", "2026-11-25 8h"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("give 2026-11-24T08:00 (local)"), "{bad:?}");
}

/// Commands log warnings and errors by default: `check` on valid notes prints nothing at all.
/// `-v` shows its summary, `-q` hides a warning, and `LIVENOTE_LOG` overrides both.
#[test]
fn check_is_silent_on_success_and_log_levels_follow_flags_and_livenote_log() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    std::fs::write(root.join("a.md"), "---\nlive:\n  objective: x\n---\n# A\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("b.md"), "# B\n").unwrap_or_else(|e| panic!("{e}"));
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let out = livenote_with(root, args, env);
        assert_eq!(out.status.code(), Some(0), "{args:?} {env:?}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert_eq!(run(&["check"], &[]), "");
    for args in [&["-v", "check"][..], &["check", "--verbose"][..]] {
        let stderr = run(args, &[]);
        assert!(stderr.contains("INFO checked 2 notes"), "{args:?}: {stderr}");
    }
    assert!(run(&["-vv", "check"], &[]).contains("INFO checked 2 notes"));
    assert!(run(&["check"], &[("LIVENOTE_LOG", "livenote=info")]).contains("INFO checked 2 notes"));
    assert_eq!(run(&["-vv", "check"], &[("LIVENOTE_LOG", "error")]), "", "LIVENOTE_LOG wins over -v");
    let bad = run(&["check"], &[("LIVENOTE_LOG", "[[nonsense")]);
    assert!(bad.contains("LIVENOTE_LOG=\"[[nonsense\" is not a log filter"), "{bad}");
    // An ignore file that is a link to a folder: skipped with a warning, which `-q` hides.
    std::os::unix::fs::symlink(".", root.join(".ignore")).unwrap_or_else(|e| panic!("{e}"));
    let warned = run(&["check"], &[]);
    assert!(warned.contains("WARN skip") && warned.contains("not a regular file"), "{warned}");
    assert_eq!(run(&["-q", "check"], &[]), "");
    assert!(run(&["check", "--quiet"], &[("LIVENOTE_LOG", "warn")]).contains("WARN skip"));
    let both = livenote(root, &["-q", "-v", "check"]);
    assert_eq!(both.status.code(), Some(2), "{both:?}");
}

/// What the user reads on stderr: the log lines' level and message without their timestamp
/// (`2026-… WARN skip x.md: …` → `WARN skip x.md: …`), and `livenote: …` lines as they are.
fn stderr_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| match l.split_once("Z ") {
            Some((time, rest)) if time.starts_with("20") => rest.trim_start().to_owned(),
            _ => l.to_owned(),
        })
        .collect()
}

/// A typo in a DIR or NOTE argument (relative, as users type them) comes back naming the path
/// as typed, saying whether it does not exist or is the wrong kind of thing: never an empty
/// name or a bare OS error. `init` on a file says so instead of "File exists (os error 17)".
#[test]
fn path_arguments_name_the_path_as_typed() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("note.md"), "---\nlive:\n  objective: x\n---\n# N\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir(dir.path().join("folder")).unwrap_or_else(|e| panic!("{e}"));
    let mut transcript = String::new();
    for args in [
        &["watch", "nosuch"][..],
        &["watch", "note.md/"],
        &["tick", "nosuch"],
        &["list", "nosuch"],
        &["list", "note.md"],
        &["trust", "nosuch"],
        &["trust", "note.md"],
        &["untrust", "note.md"],
        &["init", "note.md"],
        &["init", "note.md/sub"],
        &["event", "--source", "s", "--type", "t", "nosuch"],
        &["event", "--source", "s", "--type", "t", "--target", "nosuch.md", "."],
        &["run", "nosuch.md"],
        &["run", "folder"],
        &["run", "note.md", "--workspace", "nosuch"],
        &["stop", "nosuch.md"],
        &["undo", "folder"],
        &["history", "note.md/x.md"],
        &["check", "nosuch.md"],
    ] {
        let out = livenote(dir.path(), args);
        let lines = stderr_lines(&out);
        transcript.push_str(&format!("$ livenote {}  [{:?}]\n", args.join(" "), out.status.code()));
        for l in &lines {
            transcript.push_str(&format!("  {l}\n"));
        }
    }
    expect![[r#"
        $ livenote watch nosuch  [Some(2)]
          livenote: nosuch: no such file or folder
        $ livenote watch note.md/  [Some(2)]
          livenote: note.md/ is a file, not a folder
        $ livenote tick nosuch  [Some(2)]
          livenote: nosuch: no such file or folder
        $ livenote list nosuch  [Some(2)]
          livenote: nosuch: no such folder
        $ livenote list note.md  [Some(2)]
          livenote: note.md is a file, not a folder
        $ livenote trust nosuch  [Some(2)]
          livenote: trust: nosuch: no such folder
        $ livenote trust note.md  [Some(2)]
          livenote: trust: note.md is a file, not a folder
        $ livenote untrust note.md  [Some(2)]
          livenote: untrust: note.md is a file, not a folder
        $ livenote init note.md  [Some(2)]
          livenote: note.md is a file, not a folder
        $ livenote init note.md/sub  [Some(2)]
          livenote: note.md/sub: cannot create it: note.md is a file, not a folder
        $ livenote event --source s --type t nosuch  [Some(2)]
          livenote: nosuch: no such file or folder
        $ livenote event --source s --type t --target nosuch.md .  [Some(2)]
          livenote: --target nosuch.md: no such note
        $ livenote run nosuch.md  [Some(2)]
          livenote: nosuch.md: no such note
        $ livenote run folder  [Some(2)]
          livenote: folder is a folder, not a note
        $ livenote run note.md --workspace nosuch  [Some(2)]
          livenote: --workspace: nosuch: no such file or folder
        $ livenote stop nosuch.md  [Some(2)]
          livenote: nosuch.md: no such note
        $ livenote undo folder  [Some(2)]
          livenote: folder is a folder, not a note
        $ livenote history note.md/x.md  [Some(2)]
          livenote: note.md/x.md: no such note: note.md is a file, not a folder
        $ livenote check nosuch.md  [Some(2)]
          ERROR nosuch.md: no such file or folder
    "#]]
    .assert_eq(&transcript);
    // Nothing was created or trusted by the refusals.
    assert!(!dir.path().join("note.md/sub").exists());
    assert!(!dir.path().join(".test-data/trust.json").exists());
}

/// `check` counts only the notes it checked, and says what it skipped and why; `list` skips the
/// same files for the same reasons, in the same words.
#[test]
fn check_and_list_skip_the_same_files_for_the_same_reasons() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path();
    let note = "---\nlive:\n  objective: x\n---\n# N\n";
    std::fs::write(root.join("good.md"), note).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("binary.md"), b"---\n\0\n---\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.join("latin1.md"), b"---\ntitle: caf\xe9\n---\n").unwrap_or_else(|e| panic!("{e}"));
    // Sparse: 65 MiB on paper, nothing on disk.
    let big = std::fs::File::create(root.join("huge.md")).unwrap_or_else(|e| panic!("{e}"));
    big.set_len(65 * 1024 * 1024).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(outside.path().join("private.md"), note).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(outside.path().join("private.md"), root.join("private.md"))
        .unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink("gone.md", root.join("dangling.md")).unwrap_or_else(|e| panic!("{e}"));
    nix::unistd::mkfifo(&root.join("pipe.md"), nix::sys::stat::Mode::from_bits_truncate(0o600))
        .unwrap_or_else(|e| panic!("{e}"));
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(args)
            .current_dir(root)
            .env("LIVENOTE_DATA_DIR", root.join(".test-data"))
            .env("LIVENOTE_CONFIG_DIR", root.join(".test-data"))
            // The summary of `check` is an INFO line.
            .env("RUST_LOG", "info")
            .env("LIVENOTE_LOG", "info")
            .output()
            .unwrap_or_else(|e| panic!("run livenote: {e}"))
    };
    let check = run(&["check"]);
    assert_eq!(check.status.code(), Some(0), "{check:?}");
    let skips = |out: &Output| -> Vec<String> {
        let mut v: Vec<String> = stderr_lines(out)
            .into_iter()
            .filter_map(|l| l.strip_prefix("WARN skip ").map(str::to_owned))
            .collect();
        v.sort();
        v
    };
    let private = std::fs::canonicalize(outside.path().join("private.md")).unwrap_or_else(|e| panic!("{e}"));
    let want = [
        "binary.md: a binary file (NUL byte at offset 4)".to_owned(),
        "dangling.md: a symlink to gone.md, which does not exist".to_owned(),
        "huge.md: 65 MiB is over the 64 MiB limit for a note".to_owned(),
        "latin1.md: not UTF-8 text (invalid byte at offset 14)".to_owned(),
        "pipe.md: not a regular file (a FIFO)".to_owned(),
        format!("private.md: a symlink to {}, outside the workspace", private.display()),
    ];
    assert_eq!(skips(&check), want, "{check:?}");
    let summary: Vec<String> = stderr_lines(&check).into_iter().filter(|l| l.starts_with("INFO ")).collect();
    assert_eq!(summary, ["INFO checked 1 note: 0 errors, 0 warnings; skipped 6 files"], "{check:?}");
    let list = run(&["list", "--format", "json"]);
    assert_eq!(list.status.code(), Some(0), "{list:?}");
    assert_eq!(skips(&list), want, "{list:?}");
    let items: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap_or_default();
    let paths: Vec<&str> =
        items.as_array().into_iter().flatten().filter_map(|i| i["path"].as_str()).collect();
    assert_eq!(paths, ["good.md"]);
}

/// The examples read as English: `reading-stats.md` counts "1 heading", a run summary of
/// `recent-changes.md` names what the list holds instead of "Updated: Most recently changed
/// files:", and `watch` says what to set for routing events with a model.
#[test]
fn the_examples_speak_plainly() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples"), dir.path());
    assert_eq!(livenote(dir.path(), &["trust", "."]).status.code(), Some(0));
    let out = livenote(dir.path(), &["run", "reading-stats.md"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stats = std::fs::read_to_string(dir.path().join("reading-stats.md")).unwrap_or_default();
    assert!(stats.contains(" lines, with 1 heading.\n"), "{stats}");
    let out = livenote(dir.path(), &["-v", "run", "recent-changes.md"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.starts_with("Most recently changed files: ") && summary.ends_with(" and 2 more\n"),
        "{summary}"
    );
    let note = std::fs::read_to_string(dir.path().join("recent-changes.md")).unwrap_or_default();
    assert!(note.contains(&format!("lastRunSummary: \"{}\"", summary.trim_end())), "{note}");
    // `run -v` shows its progress without naming the note twice.
    assert!(
        stderr_lines(&out).iter().any(|l| l.starts_with("INFO start recent-changes.md: trigger=manual run=")),
        "{out:?}"
    );

    // The examples' default provider is a command: `watch` routes events by keyword and says
    // which setting would route them with a model.
    let mut watch = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["watch", "."])
        .current_dir(dir.path())
        .env("LIVENOTE_DATA_DIR", dir.path().join(".test-data"))
        .env("LIVENOTE_CONFIG_DIR", dir.path().join(".test-data"))
        .env("RUST_LOG", "info")
        .env("LIVENOTE_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = watch.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("routing events") {
                let _ = tx.send(line);
                return;
            }
        }
    });
    let line = rx.recv_timeout(std::time::Duration::from_secs(30));
    let _ = watch.kill();
    let _ = watch.wait();
    let line = line.unwrap_or_else(|_| panic!("watch never said how it routes events"));
    assert!(
        line.ends_with(
            "routing events by keyword overlap: `[agent] provider` is `clock`, a command provider; to route events with a model, set `[agent] provider` to an `openai` or `anthropic` provider"
        ),
        "{line}"
    );
}

/// `livenote check` warns on the workspace's standing-instructions files (`AGENTS.md` and the
/// files of `[agent] instructions`) over `[agent] instructions_max_chars`, and on no other file;
/// warnings alone exit 0.
#[test]
fn check_warns_on_instructions_over_their_budget() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
    };
    write(
        ".test-data/config.toml",
        "[agent]\ninstructions = [\"notes/STYLE.md\", \"notes/SHORT.md\"]\ninstructions_max_chars = 100\n",
    );
    let long = format!("# Style\n\n{}\n", "Short lines. ".repeat(10));
    // A repository: its root is the workspace of every file in it.
    std::fs::create_dir_all(dir.path().join(".git")).unwrap_or_else(|e| panic!("{e}"));
    write("AGENTS.md", &long);
    write("notes/STYLE.md", &long);
    write("notes/SHORT.md", "# Style\n\nShort lines.\n");
    write("notes/other.md", &long);
    check_output(
        &livenote(dir.path(), &["check", "."]),
        0,
        expect![[r#"
            AGENTS.md:3:92: warning live/instructions-too-long standing instructions of 138 characters, over the budget of 100 ([agent] instructions_max_chars): runs get only the first 100, cut with a marker
            notes/STYLE.md:3:92: warning live/instructions-too-long standing instructions of 138 characters, over the budget of 100 ([agent] instructions_max_chars): runs get only the first 100, cut with a marker
        "#]],
    );
}

/// A note with `until` is due as usual up to the end of that day (local time: Chicago in the
/// tests), shows no next fire once the last one before the end has passed, and is `expired`
/// after it.
#[test]
fn list_at_shows_next_due_until_the_note_expires() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.path().join("conf.md"),
        "---\nlive:\n  objective: Conference notes\n  until: 2026-11-24\n  triggers:\n    cronExpr: \"0 * * * *\"\n  lastRunAt: \"2026-11-24T14:00:05Z\"\n---\n# Conf\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(livenote(dir.path(), &["trust", "."]).status.code(), Some(0));
    let item = |at: &str| -> serde_json::Value {
        let out = livenote(dir.path(), &["list", "--format", "json", "--at", at]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        items[0].clone()
    };
    let before = item("2026-11-24T08:30");
    assert_eq!(before["status"], "live", "{before}");
    assert_eq!(before["nextDue"], "2026-11-24T09:00:00-06:00", "{before}");
    assert_eq!(before["until"], "2026-11-25T00:00:00-06:00", "{before}");
    // The midnight occurrence is the end itself: it never fires.
    let last_hour = item("2026-11-24T23:30");
    assert_eq!(last_hour["status"], "live", "{last_hour}");
    assert_eq!(last_hour["nextDue"], serde_json::Value::Null, "{last_hour}");
    let after = item("2026-11-25T00:00");
    assert_eq!(after["status"], "expired", "{after}");
    assert_eq!(after["due"], serde_json::Value::Null, "{after}");
    assert_eq!(after["nextDue"], serde_json::Value::Null, "{after}");
    check_output(
        &livenote(dir.path(), &["list", "--at", "2026-11-26T09:00"]),
        0,
        expect![[r#"
            NOTE     STATUS     DUE     NEXT                       LAST RUN
            conf.md  expired    -       -                          2026-11-24T08:00:05-06:00
        "#]],
    );
}

/// A workspace with skills: two of its own (one shadowing the user's of the same name), a
/// file in skills/ missing its description, the user's own and livenote's built-in one.
fn skills_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
    };
    std::fs::create_dir_all(dir.path().join(".git")).unwrap_or_else(|e| panic!("{e}"));
    write(
        "skills/digest.md",
        "---\nname: weekly-digest\ndescription: Sum up a week of notes.\n---\nSteps.\n",
    );
    write("skills/brief/SKILL.md", "---\nname: brief\ndescription: A short brief.\n---\nBe brief.\n");
    write("skills/draft.md", "---\nname: draft\n---\nNo description yet.\n");
    write(
        ".test-data/skills/digest.md",
        "---\nname: weekly-digest\ndescription: The user's digest.\n---\nMine.\n",
    );
    write(".test-data/skills/tone.md", "---\nname: tone\ndescription: Friendly tone.\n---\nBe kind.\n");
    write("note.md", "---\nlive:\n  objective: A digest.\n  skills: [weekly-digst, brief]\n---\n# Digest\n");
    dir
}

/// `livenote skills` lists the skills by name with their source and file; the user's skill a
/// workspace skill shadows is listed as overridden; an untrusted folder is told its skills do
/// not reach runs yet.
#[test]
fn skills_lists_sources_and_overrides() {
    let dir = skills_workspace();
    let out = livenote(dir.path(), &["skills"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Columns joined by `|`: their width follows the temporary folder's path.
    let text: String = String::from_utf8_lossy(&out.stdout)
        .replace(&dir.path().display().to_string(), "<ws>")
        .lines()
        .map(|l| {
            l.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect::<Vec<_>>().join(" | ") + "\n"
        })
        .collect();
    expect![[r#"
        NAME | SOURCE | PATH | DESCRIPTION
        brief | workspace | skills/brief/SKILL.md | A short brief.
        tone | user | <ws>/.test-data/skills/tone.md | Friendly tone.
        weekly-digest | workspace | skills/digest.md | Sum up a week of notes.
        weekly-digest | user | <ws>/.test-data/skills/digest.md | (overridden by skills/digest.md) The user's digest.
        writing-live-notes | built-in | built-in:writing-live-notes.md | How to write a good live note (objective, triggers, windows or cron, tools, unt…

        This folder is not trusted: runs use only the user's and the built-in skills until you run `livenote trust <ws>`.
    "#]]
    .assert_eq(&text);
    let out = livenote(dir.path(), &["skills", ".", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let rows: Vec<String> = items
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| format!("{} {} {} {}", i["name"], i["source"], i["path"], i["overriddenBy"]))
        .map(|r| r.replace(&dir.path().display().to_string(), "<ws>"))
        .collect();
    assert_eq!(
        rows,
        [
            r#""brief" "workspace" "skills/brief/SKILL.md" null"#,
            r#""tone" "user" "<ws>/.test-data/skills/tone.md" null"#,
            r#""weekly-digest" "workspace" "skills/digest.md" null"#,
            r#""weekly-digest" "user" "<ws>/.test-data/skills/digest.md" "skills/digest.md""#,
            r#""writing-live-notes" "built-in" "built-in:writing-live-notes.md" null"#,
        ]
    );
    assert_eq!(items[0]["description"], "A short brief.");
    // Trusted, the note is silent about it.
    assert_eq!(livenote(dir.path(), &["trust", "."]).status.code(), Some(0));
    let out = livenote(dir.path(), &["skills"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("not trusted"), "{out:?}");
}

/// `livenote check` warns on a skill name no source defines (with the closest) and on a skill
/// file missing its description; warnings alone exit 0.
#[test]
fn check_warns_on_unknown_skills_and_incomplete_skill_files() {
    let dir = skills_workspace();
    check_output(
        &livenote(dir.path(), &["check", "."]),
        0,
        expect![[r#"
            note.md:4:12: warning live/unknown-skill no skill named `weekly-digst` (did you mean `weekly-digest`?); skills live in the workspace's skills/ folder, ~/.config/livenote/skills/ or livenote itself
            skills/draft.md:1:1: warning live/skill-missing-field a skill file needs `description` in its frontmatter: one line on when to use it; runs show it in the catalog
        "#]],
    );
}

/// A folder inside the workspace with its own `.livenote.toml` (what `livenote init my-notes`
/// makes inside a workspace) is a root of its own: `list` over the outer folder shows its notes
/// with paths from where the user asked, and with that root's trust and `[scheduler] exclude`,
/// not the outer folder's.
#[test]
fn list_shows_a_nested_root_with_its_own_trust_and_excludes() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
    };
    let hourly = "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# Hourly\n";
    // The outer folder is not trusted; the inner one is.
    write(".livenote.toml", "[agent]\n");
    write("outer.md", hourly);
    write("inner/.livenote.toml", "[scheduler]\nexclude = [\"drafts/**\"]\n");
    write("inner/n.md", hourly);
    write("inner/drafts/d.md", hourly);
    assert_eq!(livenote(dir.path(), &["trust", "inner"]).status.code(), Some(0));
    let out = livenote(dir.path(), &["list", "--format", "json", "--at", "2026-11-24T08:30"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let got: Vec<String> = items
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| format!("{} {}", i["path"].as_str().unwrap_or("?"), i["status"].as_str().unwrap_or("?")))
        .collect();
    assert_eq!(got, ["inner/n.md live", "outer.md untrusted"], "{items}");
}

/// Events go to the queue of the root that owns their note: `--target` into a folder with its
/// own `.livenote.toml` is queued there (the target relative to it), and an event for every
/// note is queued in every root's queue, each processed with that root's configuration.
#[test]
fn events_are_queued_in_the_root_that_owns_the_note() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
    };
    let note = "---\nlive:\n  objective: x\n  eventMatchCriteria: deploys\n---\n# N\n";
    write(".livenote.toml", "[agent]\n");
    write("inner/.livenote.toml", "[agent]\n");
    write("inner/n.md", note);
    let event = |args: &[&str]| {
        let mut all = vec!["event", "--source", "ci", "--type", "deploy"];
        all.extend_from_slice(args);
        let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
            .args(&all)
            .current_dir(dir.path())
            .env("LIVENOTE_DATA_DIR", dir.path().join(".test-data"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    };
    let pending = |root: &str| -> Vec<serde_json::Value> {
        std::fs::read_dir(dir.path().join(root).join(".livenote/events/pending"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap_or_default()).ok())
            .collect()
    };
    event(&["--target", "inner/n.md"]);
    assert_eq!(pending("").len(), 0);
    let queued = pending("inner");
    assert_eq!(
        queued.iter().map(|e| e["targetFilePath"].clone()).collect::<Vec<_>>(),
        [serde_json::json!("n.md")]
    );
    event(&[]);
    assert_eq!(pending("").len(), 1);
    assert_eq!(pending("inner").len(), 2);
}
