//! "Ask livenote" (issue 33): one sentence about one note ("keep an eye on the pollen count
//! too", "every weekday at nine instead", "why did it not run this morning?") handed to the
//! configured model with the note, its state and a few tools that are livenote's own
//! operations. The model acts first and replies in a sentence or two.
//!
//! This module is the conversation only; it writes nothing. Its [`Answer`] holds the changes
//! (`mcp_server::changes`, checked together on the note's text: an invalid block is never
//! written) and the effects (a run, a stop, an undo) for the caller to carry out in that
//! order: the CLI through `mcp_server::ops` (the disk, atomic and under the note's lock), the
//! language server through the engine's io (one versioned edit of the open buffer) and its runs.
//!
//! Decisions (docs/security.md, docs/context.md):
//! - Outside input is data: the note's text, its status and runs, and every tool result reach
//!   the model inside fenced blocks labelled as data ([`prompt::fence`]); the sentence comes
//!   last, outside them, as the only instructions.
//! - Nothing starts unasked: a run, a stop, an undo and making the note passive are offered as
//!   tools only when the sentence asks for them ([`intent::Intent`]), and a call of one not
//!   offered is refused, whatever the model was told by what it read.
//! - Extend, never replace: there is no tool that sets the objective of a live note; `make_live`
//!   on a live note extends it too.

pub mod intent;
pub mod prompt;
pub mod tools;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::mcp_server::changes::Change;
use crate::model::{Message, ModelClient, Request};
use crate::note;

/// Model turns in one conversation: enough to look at the runs, make two changes and reply.
const MAX_TURNS: usize = 6;
/// Tokens of one reply: tool calls and a sentence or two.
const MAX_TOKENS: u32 = 1024;
/// Characters of the reply shown to the user.
const REPLY_CHARS: usize = 400;

/// What the model is told about the note: gathered by the caller from where it reads the
/// note (the editor's buffer or the disk) and the note's state.
#[derive(Debug, Clone, Default)]
pub struct Material {
    /// The note's path as the user knows it (workspace-relative).
    pub path: String,
    /// The note's text: the buffer in an editor, unsaved changes included.
    pub text: String,
    /// Its status: `livenote list --format json`'s item (status, nextDue, lastRunError,
    /// failures, scheduledOn, missed ...), or `{"live": false}`.
    pub status: Value,
    /// Its runs, newest first, as `livenote history --format json` gives them.
    pub history: Vec<Value>,
    /// Local time now, in words (`2026-12-07 08:00 (Monday)`), and the zone's name.
    pub now: String,
    pub zone: String,
    /// This machine's name (`[scheduler] host` is compared with it).
    pub host: String,
}

/// Something that happens after the note's changes are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Run { context: Option<String> },
    Stop,
    Undo,
}

/// What the conversation came to.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// One or two sentences for the user.
    pub reply: String,
    /// The changes to write, in order (checked together on [`Material::text`]).
    pub changes: Vec<Change>,
    /// Then these, in order.
    pub effects: Vec<Effect>,
    /// The tools that acted, in order, each once (`extend_objective`, `run_now`).
    pub actions: Vec<String>,
    /// The calls refused, with why.
    pub refused: Vec<String>,
}

/// One conversation's state: the note as the model left it so far.
pub struct Session<'a> {
    pub material: &'a Material,
    /// The user's sentence: what an objective may take addresses from.
    pub sentence: &'a str,
    pub options: note::Options<'a>,
    pub changes: Vec<Change>,
    pub effects: Vec<Effect>,
    actions: Vec<String>,
}

impl Session<'_> {
    fn acted(&mut self, name: &str) {
        if !self.actions.iter().any(|a| a == name) {
            self.actions.push(name.to_owned());
        }
    }
}

/// Ask `client` about the note in `material`: the conversation until the model replies
/// without calling a tool (at most [`MAX_TURNS`] turns). `options` checks the changes as the
/// note's root would (its providers, tools and skills). Fails only when the model does.
pub async fn converse(
    client: &dyn ModelClient,
    material: &Material,
    sentence: &str,
    options: note::Options<'_>,
    cancel: CancellationToken,
) -> Result<Answer, String> {
    let intent = intent::Intent::of(sentence);
    let live = note::analyze(&material.text, &note::Options::default()).live.is_some();
    let offered = tools::offered(live, &intent);
    let mut session = Session {
        material,
        sentence,
        options,
        changes: Vec::new(),
        effects: Vec::new(),
        actions: Vec::new(),
    };
    let mut messages = vec![Message::user(prompt::message(material, sentence))];
    let mut refused = Vec::new();
    let mut reply = String::new();
    for _ in 0..MAX_TURNS {
        let req = Request {
            system: prompt::SYSTEM_PROMPT,
            messages: &messages,
            tools: &offered,
            max_tokens: MAX_TOKENS,
            json: false,
        };
        let turn =
            client.complete(req, cancel.clone()).await.map_err(|e| format!("the model call failed: {e}"))?;
        messages.push(turn.message());
        if turn.tool_calls.is_empty() {
            reply = turn.text;
            break;
        }
        for call in &turn.tool_calls {
            let called = tools::call(&mut session, &offered, &call.name, &call.arguments);
            if called.refused {
                tracing::info!("ask {}: {} refused: {}", material.path, call.name, called.content);
                refused.push(format!("{}: {}", call.name, called.content));
            }
            messages.push(Message::tool_result(&call.id, called.content, called.refused));
        }
    }
    let actions = session.actions;
    let reply = match crate::text::short::one_line(&reply, REPLY_CHARS) {
        r if !r.is_empty() => r,
        _ if actions.is_empty() => "Nothing was done.".to_owned(),
        _ => format!("Done: {}.", actions.join(", ").replace('_', " ")),
    };
    Ok(Answer { reply, changes: session.changes, effects: session.effects, actions, refused })
}

/// Without a model: the one line saying so and how to set one up, then the direct commands
/// for what `sentence` seems to want (`commands`, from [`intent::direct_commands`] or the
/// editor's own).
pub fn no_model(why: &str, commands: &[String]) -> String {
    let mut out = format!("livenote ask needs a model: {why}");
    if !commands.is_empty() {
        out.push_str("\nMeanwhile, directly:");
        for c in commands {
            out.push_str("\n  ");
            out.push_str(c);
        }
    }
    out
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
