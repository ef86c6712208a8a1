//! Tokens per run (issue 16): what a typical refresh of a typical note sends to the model and
//! gets back, with the scripted model doing what a good model does, patch edits (two
//! `edit_note` calls on single lines, then a one-line summary), not a whole-body rewrite.
//!
//! The scripted server estimates each call's usage from the bytes on the wire (a token per 4
//! bytes: the request body as sent, the reply's text or tool arguments; nothing cached), and
//! the figures are read back the way a user reads them, from `livenote history --format json`,
//! so that they also check the run's accounting. Input dominates: every call re-sends the
//! system prompt, the tool specs, the note and the conversation so far.

use std::path::Path;
use std::process::{Command, Stdio};

use livenote::model::testing::{Flavor, MockModelServer, ScriptedReply};
use serde_json::{Value, json};

use crate::progress;

/// A typical note: about 1 KB, a heading and four short sections of one-line items.
const NOTE: &str = "---
title: Team status
live:
  objective: Keep this week's team status current from the tracker and the release notes; one line per item.
  triggers:
    cronExpr: \"0 9 * * 1-5\"
---
# Team status

Updated Monday morning. Items move from *Next* to *Doing* to *Done*; each line names its owner.

## Done

- Release 2.4 shipped to all regions (Ana); the rollout took two days instead of one.
- Login latency back under 200 ms at p95 after the cache fix (Bo).
- On-call handbook rewritten for the new paging rules (Chen).

## Doing

- Search index migration: 60 % of tenants moved, the rest by Thursday (Dee).
- Billing export in CSV and Parquet, waiting for review (Eli).
- Flaky end-to-end tests: 4 of 11 fixed, tracked in the quality board (Fay).

## Next

- Quarterly planning draft, due Friday (Ana).
- Dependency upgrades for the mobile apps (Bo).
- Accessibility audit of the settings pages (Chen).

## Risks

- The search migration needs a maintenance window for the two largest tenants.
- Review capacity is thin this week: two people are out on Wednesday.
";

pub fn bench(bin: &Path) -> Value {
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("tokio: {e}"));
    let mut out = serde_json::Map::new();
    for (flavor, kind) in [(Flavor::OpenAi, "openai"), (Flavor::Anthropic, "anthropic")] {
        let figures = refresh(&rt, bin, flavor, kind);
        progress(&format!(
            "tokens per run ({kind}, typical refresh, 2 patches): {} input + {} output in {} model calls",
            figures["tokens"]["input"], figures["tokens"]["output"], figures["modelCalls"]
        ));
        out.insert(kind.to_owned(), figures);
    }
    Value::Object(out)
}

/// One refresh of [`NOTE`] by `livenote run`; its history record plus the bytes sent.
fn refresh(rt: &tokio::runtime::Runtime, bin: &Path, flavor: Flavor, kind: &str) -> Value {
    let edit = |old: &str, new: &str| {
        ScriptedReply::ToolCalls(vec![("edit_note".to_owned(), json!({"old_text": old, "new_text": new}))])
    };
    let script = vec![
        edit(
            "- Search index migration: 60 % of tenants moved, the rest by Thursday (Dee).",
            "- Search index migration: 85 % of tenants moved, the last two in Thursday's window (Dee).",
        ),
        edit(
            "- Flaky end-to-end tests: 4 of 11 fixed, tracked in the quality board (Fay).",
            "- Flaky end-to-end tests: 7 of 11 fixed, tracked in the quality board (Fay).",
        ),
        ScriptedReply::Text("Search migration at 85 %, 7 of 11 flaky tests fixed.".to_owned()),
    ];
    let model = rt.block_on(MockModelServer::start(flavor, script));
    model.estimate_usage();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let root = dir.path();
    let data = root.join(".data");
    let config = format!(
        "[agent]\nprovider = \"m\"\n[providers.m]\nkind = \"{kind}\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key_env = \"LIVENOTE_BENCH_KEY\"\n",
        model.base_url()
    );
    std::fs::write(root.join(".livenote.toml"), config).unwrap_or_else(|e| panic!("config: {e}"));
    std::fs::write(root.join("status.md"), NOTE).unwrap_or_else(|e| panic!("note: {e}"));
    let livenote = |args: &[&str]| {
        Command::new(bin)
            .args(args)
            .current_dir(root)
            .env("LIVENOTE_DATA_DIR", &data)
            .env("LIVENOTE_CONFIG_DIR", &data)
            .env("LIVENOTE_BENCH_KEY", "k")
            .env("LIVENOTE_LOG", "warn")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("livenote {args:?}: {e}"))
    };
    assert!(livenote(&["trust", "."]).status.success(), "livenote trust failed");
    assert!(livenote(&["run", "status.md"]).status.success(), "livenote run failed");
    let note = std::fs::read_to_string(root.join("status.md")).unwrap_or_default();
    assert!(
        note.contains("85 % of tenants") && note.contains("7 of 11 fixed"),
        "the patches did not land:\n{note}"
    );
    let history: Value =
        serde_json::from_slice(&livenote(&["history", "status.md", "--format", "json"]).stdout)
            .unwrap_or_else(|e| panic!("livenote history: {e}"));
    let run = &history[0];
    let request_bytes: Vec<usize> = model.requests().iter().map(|r| r.body.to_string().len()).collect();
    json!({
        "tokens": run["tokens"],
        "modelCalls": run["modelCalls"],
        "toolCalls": run["toolCalls"],
        "request_bytes": request_bytes,
        "note_bytes": NOTE.len(),
    })
}
