//! What a run did and cost: the totals of one run (tokens, model calls, tool calls by name,
//! wall time), gathered from its transcript events, and how they read in one line.
//!
//! Pure and self-contained (serde only), so that the run engine (which gathers and records
//! them), `livenote history`, the log line and the editor's hover share one definition.
//!
//! The events it reads are the agent's: `usage` (one per model call, with `data`
//! `{input, output, cached, ms}`) and `tool_result` (one per tool call run, with `data`
//! `{tool}`). A run whose provider emits neither (a command) has no totals.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::text::count::count;

/// Tokens over a run's model calls, as the providers reported them. `input` counts every
/// prompt token, `cached` the part of those read from the provider's prompt cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cached: u64,
}

impl Tokens {
    /// Input plus output: what the `[agent] max_tokens` limit counts.
    pub fn total(&self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

/// The totals of one run, recorded on the transcript's final line (`done`/`failed`, in
/// `data.totals`) and shown by `livenote history`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTotals {
    pub tokens: Tokens,
    pub model_calls: u64,
    /// Tool calls the run made, by tool name.
    pub tool_calls: BTreeMap<String, u64>,
    /// From the run's start to its end, by the engine's clock.
    pub duration_ms: u64,
}

impl RunTotals {
    /// Count one transcript event (`kind`, `data`); other events are ignored.
    pub fn observe(&mut self, kind: &str, data: Option<&Value>) {
        let Some(data) = data else { return };
        match kind {
            "usage" => {
                let n = |k: &str| data[k].as_u64().unwrap_or(0);
                self.model_calls += 1;
                self.tokens.input = self.tokens.input.saturating_add(n("input"));
                self.tokens.output = self.tokens.output.saturating_add(n("output"));
                self.tokens.cached = self.tokens.cached.saturating_add(n("cached"));
            }
            "tool_result" => {
                if let Some(tool) = data["tool"].as_str() {
                    *self.tool_calls.entry(tool.to_owned()).or_default() += 1;
                }
            }
            _ => {}
        }
    }

    /// Whether anything was counted (a command provider's run counts nothing).
    pub fn is_empty(&self) -> bool {
        self.model_calls == 0 && self.tool_calls.is_empty()
    }

    pub fn tool_call_count(&self) -> u64 {
        self.tool_calls.values().sum()
    }

    /// "3 model calls, 12,345 tokens (1,000 cached), 4 tool calls, 4.2 s": the log line's and
    /// the history's short form.
    pub fn brief(&self) -> String {
        let cached = match self.tokens.cached {
            0 => String::new(),
            n => format!(" ({} cached)", grouped(n)),
        };
        format!(
            "{}, {} tokens{cached}, {}, {}",
            count(usize::try_from(self.model_calls).unwrap_or(usize::MAX), "model call"),
            grouped(self.tokens.total()),
            count(usize::try_from(self.tool_call_count()).unwrap_or(usize::MAX), "tool call"),
            seconds(self.duration_ms)
        )
    }

    /// The tool calls by name, most used first: "edit_note 3, read_note 1".
    pub fn tools_by_name(&self) -> String {
        let mut v: Vec<(&String, &u64)> = self.tool_calls.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v.iter().map(|(name, n)| format!("{name} {n}")).collect::<Vec<_>>().join(", ")
    }
}

/// How a run ended and what it cost, from its transcript's final line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastRun {
    pub id: String,
    /// The run ended in failure (a limit, an error, a stop).
    pub failed: bool,
    pub totals: RunTotals,
}

pub use crate::text::count::grouped;

/// Milliseconds as "4.2 s" (one decimal), or "1 min 5 s" from a minute on.
pub fn seconds(ms: u64) -> String {
    if ms < 60_000 {
        format!("{}.{} s", ms / 1000, (ms % 1000) / 100)
    } else {
        format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn totals_add_up_usage_and_tool_results() {
        let mut t = RunTotals::default();
        t.observe("usage", Some(&json!({"input": 1200, "output": 34, "cached": 1000, "ms": 5})));
        t.observe("tool_result", Some(&json!({"tool": "edit_note"})));
        t.observe("tool_result", Some(&json!({"tool": "edit_note"})));
        t.observe("tool_result", Some(&json!({"tool": "read_note"})));
        t.observe("usage", Some(&json!({"input": 11145, "output": 0})));
        // Events without data, and other kinds, count nothing.
        t.observe("usage", None);
        t.observe("model", Some(&json!({"input": 9})));
        t.duration_ms = 4250;
        assert_eq!(t.tokens, Tokens { input: 12345, output: 34, cached: 1000 });
        assert_eq!(t.model_calls, 2);
        assert_eq!(t.brief(), "2 model calls, 12,379 tokens (1,000 cached), 3 tool calls, 4.2 s");
        assert_eq!(t.tools_by_name(), "edit_note 2, read_note 1");
        assert!(!t.is_empty() && RunTotals::default().is_empty());
        assert_eq!(
            serde_json::to_value(&t).ok(),
            Some(json!({
                "tokens": {"input": 12345, "output": 34, "cached": 1000},
                "modelCalls": 2,
                "toolCalls": {"edit_note": 2, "read_note": 1},
                "durationMs": 4250,
            }))
        );
    }

    #[test]
    fn numbers_read_for_people() {
        assert_eq!(
            (grouped(0), grouped(999), grouped(1000), grouped(1234567)),
            ("0".into(), "999".into(), "1,000".into(), "1,234,567".into())
        );
        assert_eq!(
            (seconds(0), seconds(4210), seconds(65_400)),
            ("0.0 s".into(), "4.2 s".into(), "1 min 5 s".into())
        );
    }
}
