//! `ask`'s tools: the note's changes (`mcp_server::changes`, the code `livenote mcp`'s tools
//! write through), the effects that wait until the change is written (a run, a stop, an undo),
//! and the note's runs. Which are offered follows the note (live or not) and the sentence
//! ([`Intent`]); a call of one not offered is refused all the same.

use serde_json::{Value, json};

use super::intent::Intent;
use super::{Effect, Session};
use crate::mcp_server::changes::{self, Change};
use crate::model::ToolSpec;
use crate::note::rewrite::TriggerEdits;

/// The tools for a note (`live` or not) and what the sentence asks.
pub fn offered(live: bool, intent: &Intent) -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, parameters: Value| ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    };
    let triggers = json!({
        "cronExpr": {"type": "string", "description": "5-field cron in local time (`0 9 * * 1-5`); \"\" removes it"},
        "windows": {"type": "array", "description": "daily bands, each firing once a day inside it; [] removes them",
            "items": {"type": "object", "properties": {"startTime": {"type": "string"}, "endTime": {"type": "string"}},
                "required": ["startTime", "endTime"]}},
        "eventMatchCriteria": {"type": "string", "description": "which incoming events update the note, in words; \"\" removes it"}
    });
    let mut tools = Vec::new();
    if live {
        tools.push(spec(
            "extend_objective",
            "Add to what the note covers: `addition` (the user's words) goes after the objective, which keeps every word.",
            json!({"type": "object", "properties": {"addition": {"type": "string"}}, "required": ["addition"]}),
        ));
        tools.push(spec(
            "set_triggers",
            "Set or change the note's triggers: those given replace the note's, the others stay.",
            json!({"type": "object", "properties": triggers}),
        ));
        // Resuming lets the schedule run the note again: only when the sentence says pause,
        // resume or stop.
        if intent.pause || intent.resume || intent.stop || intent.passive {
            tools.push(spec(
                "set_active",
                "Pause (`active: false`: it no longer runs on its own) or resume (`true`) the note.",
                json!({"type": "object", "properties": {"active": {"type": "boolean"}}, "required": ["active"]}),
            ));
        }
    } else {
        let mut properties = triggers.clone();
        properties["objective"] = json!({"type": "string", "description": "what the note should keep being: what to show, from where, how fresh"});
        tools.push(spec(
            "make_live",
            "Make this passive note live with an objective and, if the user said when, triggers (none: manual only).",
            json!({"type": "object", "properties": properties, "required": ["objective"]}),
        ));
    }
    tools.push(spec(
        "note_history",
        "The note's runs, newest first: time, trigger, outcome, summary or error, lines added and removed.",
        json!({"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1}}}),
    ));
    if intent.run {
        tools.push(spec(
            "run_now",
            "Run the note once now, after any change is written. `context`: extra instructions for this run (\"backfill the last 7 days\").",
            json!({"type": "object", "properties": {"context": {"type": "string"}}}),
        ));
    }
    if intent.stop {
        tools.push(spec(
            "stop_run",
            "Stop the note's run in progress.",
            json!({"type": "object", "properties": {}}),
        ));
    }
    if intent.undo {
        tools.push(spec(
            "undo_last_run",
            "Restore the body from before the latest run that changed it.",
            json!({"type": "object", "properties": {}}),
        ));
    }
    if intent.passive && live {
        tools.push(spec(
            "make_passive",
            "Make the note passive: its `live:` block is removed, the body stays.",
            json!({"type": "object", "properties": {}}),
        ));
    }
    tools
}

/// What a tool call did: its result for the model, and whether it was refused.
pub struct Called {
    pub content: String,
    pub refused: bool,
}

fn refused(message: impl Into<String>) -> Called {
    Called { content: message.into(), refused: true }
}

fn done(content: impl Into<String>) -> Called {
    Called { content: content.into(), refused: false }
}

/// Carry out one call on `session`: a change checked on the note as the session holds it
/// (nothing is written yet), an effect queued, or the runs read.
pub fn call(session: &mut Session<'_>, offered: &[ToolSpec], name: &str, args: &Value) -> Called {
    if !offered.iter().any(|t| t.name == name) {
        return refused(match name {
            "run_now" | "stop_run" | "undo_last_run" | "make_passive" | "set_active" => {
                format!("refused: the user's request does not ask for {name}; nothing was done")
            }
            _ => format!("refused: there is no tool `{name}` here"),
        });
    }
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
    let change = match name {
        "make_live" => Change::MakeLive {
            objective: text("objective").unwrap_or_default(),
            triggers: trigger_edits(args),
        },
        "extend_objective" => Change::ExtendObjective(text("addition").unwrap_or_default()),
        "set_triggers" => Change::SetTriggers(trigger_edits(args)),
        "set_active" => match args.get("active").and_then(Value::as_bool) {
            Some(active) => Change::SetActive(active),
            None => return refused("refused: `active` must be true or false"),
        },
        "make_passive" => Change::MakePassive,
        "run_now" => {
            return effect(
                session,
                name,
                Effect::Run { context: text("context").filter(|c| !c.trim().is_empty()) },
            );
        }
        "stop_run" => return effect(session, name, Effect::Stop),
        "undo_last_run" => return effect(session, name, Effect::Undo),
        "note_history" => {
            let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(10).clamp(1, 50) as usize;
            let runs: Vec<String> =
                session.material.history.iter().take(limit).map(super::prompt::run_line).collect();
            let runs = if runs.is_empty() { "no runs recorded".to_owned() } else { runs.join("\n") };
            return done(super::prompt::fence("runs", &runs));
        }
        _ => return refused(format!("refused: there is no tool `{name}` here")),
    };
    if let Some(address) = foreign_address(&change, session.sentence) {
        return refused(format!(
            "refused, nothing was changed: `{address}` is not in the user's request; an objective names only the links and addresses the user gave"
        ));
    }
    let mut all = session.changes.clone();
    all.push(change.clone());
    match changes::checked(&session.material.text, &all, &session.options) {
        Ok((_, after)) => {
            session.changes = all;
            session.acted(name);
            let block = crate::note::frontmatter::locate(&after)
                .map(|fm| after[..fm.body_start()].to_owned())
                .unwrap_or_else(|| "(no frontmatter: the note is passive)".to_owned());
            done(format!(
                "done (written when the conversation ends). The frontmatter now:\n{}",
                super::prompt::fence("frontmatter", &block)
            ))
        }
        Err(e) => refused(format!("refused, nothing was changed: {e}")),
    }
}

fn effect(session: &mut Session<'_>, name: &str, effect: Effect) -> Called {
    if !session.effects.iter().any(|e| std::mem::discriminant(e) == std::mem::discriminant(&effect)) {
        session.effects.push(effect);
    }
    session.acted(name);
    done("queued: it happens once the conversation ends, after any change is written")
}

/// The triggers of a call's arguments (`cronExpr`, `windows`, `eventMatchCriteria`).
fn trigger_edits(args: &Value) -> TriggerEdits {
    let windows = args.get("windows").and_then(Value::as_array).map(|ws| {
        ws.iter()
            .map(|w| {
                let t = |k: &str| w.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
                (t("startTime"), t("endTime"))
            })
            .collect()
    });
    TriggerEdits {
        cron_expr: args.get("cronExpr").and_then(Value::as_str).map(str::to_owned),
        windows,
        event_match_criteria: args.get("eventMatchCriteria").and_then(Value::as_str).map(str::to_owned),
    }
}

/// A link or e-mail address in the text a change writes into the block that the user's
/// sentence does not have: what a note's body or a run's summary could have talked the model
/// into (an objective that sends the note somewhere is an instruction to every later run).
fn foreign_address(change: &Change, sentence: &str) -> Option<String> {
    let written = match change {
        Change::MakeLive { objective, triggers } => {
            format!("{objective} {}", triggers.event_match_criteria.as_deref().unwrap_or_default())
        }
        Change::ExtendObjective(addition) => addition.clone(),
        Change::SetTriggers(t) => t.event_match_criteria.clone().unwrap_or_default(),
        Change::SetActive(_) | Change::MakePassive => return None,
    };
    let said = sentence.to_lowercase();
    written
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '<' | '>' | '"' | '\'' | '`' | ','))
        .map(|w| w.trim_end_matches(['.', ':', ';', '!', '?']))
        .filter(|w| w.contains("://") || w.contains('@') || w.starts_with("www."))
        .find(|w| !said.contains(&w.to_lowercase()))
        .map(str::to_owned)
}
