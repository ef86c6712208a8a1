//! `livenote ask NOTE "SENTENCE"`: the configured model, given the note and its state, acts on
//! the sentence with livenote's own operations and says what it did (`crate::ask`). The
//! changes are written through `mcp_server::ops` as `make-live` writes (the disk, atomic, under
//! the note's lock, refused with nothing written when the note would have errors); then a run,
//! stop or undo the sentence asked for, as `livenote run`, `stop` and `undo` do them (a run in
//! an untrusted folder with the user's own configuration only). Without a model: one line
//! saying so, and the direct commands for what the sentence seems to want.
//!
//! Exit status: 0 when the model answered (whether it acted or only answered), 1 when the model
//! failed, an action was refused or did not happen, or there is no model; 2 on usage errors.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ask::{self, Effect, Material};
use crate::mcp_server::ops::Workspace;
use crate::schedule::Zone;

/// What was asked on the command line.
#[derive(Debug)]
pub struct Args {
    pub note: PathBuf,
    pub sentence: String,
    pub workspace: Option<PathBuf>,
    pub clock_file: Option<PathBuf>,
}

pub fn run(args: Args, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    if args.sentence.trim().is_empty() {
        writeln!(err, "livenote: ask needs a sentence: livenote ask NOTE \"what you want\"")?;
        return Ok(2);
    }
    let file = crate::workspace::given::note(&args.note)?;
    let root = match &args.workspace {
        Some(d) => crate::workspace::given::folder(d).context("--workspace")?,
        None => crate::workspace::note_root(&file),
    };
    let rel = crate::workspace::NotePath::of_or_whole(&root, &file);
    let clock = super::watch::clock(args.clock_file.clone());
    let ws = Workspace::with_clock(&root, clock.clone());
    let refuse = |err: &mut dyn Write, why: String| -> Result<u8> {
        writeln!(err, "livenote: ask {rel}: {why}")?;
        Ok(1)
    };
    let (config, known, host) = match ws.setting(rel.as_str()) {
        Ok(s) => s,
        Err(why) => return refuse(err, why),
    };
    let text = crate::workspace::read_note(&file).with_context(|| format!("read {rel}"))?;
    let status = ws.note_status(rel.as_str()).unwrap_or(Value::Null);
    let live = status["live"] == Value::Bool(true);
    let client = match crate::model::default_client(&config, "answer `livenote ask`") {
        Ok(c) => c,
        Err(why) => {
            let typed = args.note.display().to_string();
            let commands = ask::intent::direct_commands(&args.sentence, &typed, live);
            writeln!(out, "{}", ask::no_model(&why, &commands))?;
            return Ok(1);
        }
    };
    let history = ws
        .history(rel.as_str(), Some(20))
        .ok()
        .and_then(|h| h["runs"].as_array().cloned())
        .unwrap_or_default();
    let zone = Zone::Local;
    let material = Material {
        path: rel.as_str().to_owned(),
        text,
        status,
        history,
        now: clock.now().with_timezone(&zone).format("%Y-%m-%d %H:%M (%A)").to_string(),
        zone: zone.name(),
        host,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")?;
    let cancel = CancellationToken::new();
    let answer = runtime.block_on(async {
        let mut shutdown = super::signal::Shutdown::listen();
        let talk = ask::converse(client.as_ref(), &material, &args.sentence, known.options(), cancel.clone());
        tokio::select! {
            a = talk => a,
            signal = shutdown.recv() => {
                cancel.cancel();
                Err(format!("stopped: {signal}"))
            }
        }
    });
    let answer = match answer {
        Ok(a) => a,
        Err(why) => return refuse(err, why),
    };
    let mut failed = false;
    for r in &answer.refused {
        writeln!(err, "livenote: ask {rel}: {}", crate::text::escape::terminal(r))?;
        failed = true;
    }
    if !answer.changes.is_empty()
        && let Err(why) = runtime.block_on(ws.change(rel.as_str(), &answer.changes))
    {
        // Nothing was written, so nothing after it happens either: the reply would be untrue.
        writeln!(out, "{}", crate::text::escape::terminal(&answer.reply))?;
        return refuse(err, format!("not done: {why}"));
    }
    writeln!(out, "{}", crate::text::escape::terminal(&answer.reply))?;
    out.flush()?;
    for effect in &answer.effects {
        let done = runtime.block_on(async {
            match effect {
                Effect::Run { context } => {
                    let mut shutdown = super::signal::Shutdown::listen();
                    let run = ws.run_note(rel.as_str(), context.clone(), cancel.clone());
                    tokio::pin!(run);
                    tokio::select! {
                        r = &mut run => r,
                        _ = shutdown.recv() => {
                            cancel.cancel();
                            run.await
                        }
                    }
                    .map(|v| format!("ran {rel}: {}", v["summary"].as_str().unwrap_or_default()))
                }
                Effect::Stop => ws.stop(rel.as_str()).await.map(|v| match v["stopped"].as_bool() {
                    Some(true) => format!("stopped {rel}"),
                    _ => format!("asked the run of {rel} to stop; it is still running"),
                }),
                Effect::Undo => ws
                    .undo_last_run(rel.as_str())
                    .await
                    .map(|v| format!("undid run {} of {rel}", v["undid"].as_str().unwrap_or_default())),
            }
        });
        match done {
            Ok(line) => writeln!(err, "livenote: {}", crate::text::escape::terminal(&line))?,
            Err(why) => {
                writeln!(err, "livenote: ask {rel}: {}", crate::text::escape::terminal(&why))?;
                failed = true;
            }
        }
    }
    Ok(u8::from(failed))
}
