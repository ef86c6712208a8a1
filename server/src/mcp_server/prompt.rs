//! The `make_live_note` prompt: what the design's chat skill teaches an assistant, for turning
//! a request ("keep this note updated with ...") into a good objective and triggers, and the
//! tools to carry it out. Pure: the request, the note and the local time go in, text comes out.

use std::fmt::Write as _;

/// What the prompt knows of the place it is asked in.
pub struct Setting<'a> {
    /// The user's request, in their words.
    pub request: &'a str,
    /// The note they mean, when they named one.
    pub path: Option<&'a str>,
    /// The zone schedules are read in ("Europe/Berlin") and the local time now.
    pub zone: &'a str,
    pub now: &'a str,
}

/// The prompt's text.
pub fn make_live_note(s: &Setting<'_>) -> String {
    let mut out = String::with_capacity(6 * 1024);
    out.push_str(GUIDE);
    let _ = writeln!(out, "\n## Cron presets livenote knows (expression: meaning)\n");
    for (expr, meaning) in crate::schedule::presets() {
        let _ = writeln!(out, "- `{expr}`: {meaning}");
    }
    let _ = writeln!(
        out,
        "\n## Here\n\nSchedules are read in the local time of the machine livenote runs on: {} (it is {} there now).",
        s.zone, s.now
    );
    match s.path {
        Some(p) if !p.trim().is_empty() => {
            let _ = writeln!(
                out,
                "The note: `{p}`. Call `note_status` with this path first: if it is live already, extend its objective."
            );
        }
        _ => out.push_str(
            "No note was named: if the request is about a note you can see, use it; else pick a short, descriptive \
             `.md` path (lowercase, dashes, e.g. `notes/berlin-weather.md`) and `make_live` creates it. Call \
             `list_live_notes` first: if a live note already covers the topic, extend that one.\n",
        ),
    }
    let _ = write!(out, "\n## The request\n\n{}\n", s.request.trim());
    out
}

const GUIDE: &str = r#"# Making a live note with livenote

A live note is a markdown note whose body livenote keeps up to date: an agent rewrites the body
below the title on a schedule, when a matching event arrives, or when asked. Its YAML frontmatter
holds one `live:` block with one `objective` (what the note should keep being) and optional
`triggers` (when to update it). You create and change it with this server's tools; never write
the frontmatter by hand.

## When to make a note live

- Yes, act without asking: cadence words ("every morning", "daily", "hourly"), living-document
  verbs ("keep a running summary of", "maintain a digest of"), watch or monitor verbs, "always
  show the latest X here", "track" or "follow X", "whenever an email about X comes in".
- Offer, after answering: questions whose answer goes stale (weather, an exchange rate, a
  service's status), recurring artifacts (a morning briefing, a weekly review).
- No: definitions, one-off lookups, editing a document by hand.

## One note, one objective

A note has at most one `live:` block and it has exactly one objective. When the note is live
already and the user asks to also follow something else, extend its objective in prose (read it
with `note_status`, then pass the whole new objective to `make_live`); never make a second note
or block for it.

## Writing the objective

Write it for the agent that will update the note, in the user's language, 2 to 6 sentences:
- what to show, from which sources or kinds of sources, and how fresh it must be;
- the layout when it matters ("a table of the 5 largest movers", "one short line"); otherwise
  the agent keeps the title, starts with a 1 to 3 sentence summary, then H2 sections by
  sub-topic, freshest first, terse;
- units, time zones, languages and limits ("at most 10 items", "skip items older than a week");
- what to do when nothing changed (usually: leave the note as it is).
Good: "Show today's weather in Berlin: a one-line summary, then the hourly temperature and rain
chance from 06:00 to 22:00 as a table. Use °C."
Bad: "weather" (too vague), or a step-by-step script of tool calls (the agent has its own).

## Triggers (all optional; none means the note updates only when run by hand)

- `cronExpr`: a 5-field cron expression, `minute hour day-of-month month day-of-week`, in the
  machine's local time. Vixie semantics (livenote uses croner): day-of-week 1 is Monday, 0 and
  7 are Sunday; names work (`MON-FRI`, `JAN`); ranges `1-5`, steps `*/15`, lists `8,12,18`;
  when both day-of-month and day-of-week are restricted, either one matching fires (OR). An
  optional leading seconds field and nicknames (`@hourly`, `@daily`, `@weekly`, `@monthly`)
  work too. A fire more than 2 minutes late (the machine was off) is skipped, not replayed. More
  often than every 5 minutes is a warning: every fire is an agent run, with its cost.
- `windows`: a list of `{"startTime": "HH:MM", "endTime": "HH:MM"}` bands (24-hour, two-digit
  hour, local time, `endTime` not before `startTime`, the end minute included; no band crosses
  midnight: split it in two). The note updates once a day in each band, as soon as it can:
  "every morning" is better as a window `07:00`-`10:00` than as a cron at 07:00, since a cron
  fire missed while the laptop sleeps is skipped while a window catches up.
- `eventMatchCriteria`: a sentence saying which incoming events matter ("Emails about the Q3
  budget", "Calendar changes for next week"). Events come from programs that feed livenote
  (`livenote event`); only set it when the user has such a source. The agent still decides
  per event whether the note needs a change.
Mix them freely: a morning window plus event criteria is a good daily briefing.

Examples:
- "keep the EUR/USD rate here, hourly on weekdays" -> `cronExpr: "0 9-17 * * 1-5"`.
- "every morning, a summary of Hacker News' front page" -> `windows: [{"startTime": "07:00",
  "endTime": "11:00"}]`.
- "a weekly review every Friday afternoon" -> `windows` are daily, so use
  `cronExpr: "0 16 * * 5"`.
- "keep track of emails about the office move" -> `eventMatchCriteria: "Emails about the
  office move"`, perhaps with a daily window to tidy up.

## Doing it

1. `note_status {path}` (or `list_live_notes`) to see what exists.
2. `make_live {path, objective, cronExpr?, windows?, eventMatchCriteria?}`. It creates the note
   if it does not exist (a `.md` path inside the workspace), adds the `live:` block to a passive
   note, or, for a live note, replaces the objective and the triggers you pass (leave a trigger
   out to keep it; `""` or `[]` removes it). It answers the note's diagnostics; when the result
   would have errors (an invalid cron, a malformed window) nothing is written and the error says
   why: fix the values and call it again. Warnings are worth telling the user about.
3. `run_note {path}` once, unless the user said not to run it yet, so the note fills now; pass
   `context` to steer this first run ("backfill the last 7 days"). It waits for the outcome and
   answers the run's summary, or the error (a folder that is not trusted runs only with the
   user's own configuration: say what the error says to do).
4. Tell the user what the note will do and when it updates next (`note_status` gives
   `nextDue`). Scheduled runs happen while livenote watches the folder: an editor with the
   livenote extension open on it, or `livenote watch` running.

Other tools: `set_active {path, active}` pauses or resumes a note, `make_passive {path}` removes
the `live:` block (the body stays), `undo_last_run {path}` restores the body from before the
latest run, `check {path?}` lists the diagnostics of a note or of the workspace. The live notes
are also resources, `livenote://<path>`, to read a note's current text.
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_request_the_note_and_the_zone() {
        let text = make_live_note(&Setting {
            request: "  keep the Berlin weather here every morning ",
            path: Some("notes/weather.md"),
            zone: "Europe/Berlin",
            now: "2026-11-25 08:00",
        });
        assert!(text.ends_with("## The request\n\nkeep the Berlin weather here every morning\n"), "{text}");
        assert!(text.contains("The note: `notes/weather.md`."), "{text}");
        assert!(text.contains("Europe/Berlin (it is 2026-11-25 08:00 there now)"), "{text}");
        assert!(text.contains("- `0 9 * * 1-5`: "), "the presets: {text}");
        let without = make_live_note(&Setting {
            path: None,
            ..Setting { request: "x", path: None, zone: "UTC", now: "" }
        });
        assert!(without.contains("No note was named"), "{without}");
    }
}
