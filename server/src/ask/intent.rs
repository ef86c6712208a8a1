//! What the user's sentence asks for, read from its words alone: which of `ask`'s tools that
//! start or undo something the model is offered at all (a run, a stop, an undo, making the note
//! passive), and without a model, which direct commands to suggest. Pure and deliberately
//! simple: a false "yes" only offers a tool the model may still not call; a false "no" means the
//! user says it more plainly or uses the direct command.

/// What a sentence asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Intent {
    /// Run the note now ("run it", "refresh", "backfill the last week", "... now").
    pub run: bool,
    /// Stop its run ("stop it", "cancel the run"; not "stop tracking X").
    pub stop: bool,
    /// Undo the last run ("undo", "revert", "roll back").
    pub undo: bool,
    /// Make the note passive ("make it passive", "stop updating it", "turn it off").
    pub passive: bool,
    pub pause: bool,
    pub resume: bool,
    /// Says when ("every weekday at nine", "hourly", "between 9 and 12").
    pub schedule: bool,
    /// A question ("why did it not run this morning?").
    pub question: bool,
    /// Says the note should cover more ("... too", "also ...", "add ...", "keep an eye on ...").
    pub extend: bool,
}

/// The sentence's words, lower-case, apostrophes dropped (`don't` → `dont`).
fn words(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(|w| w.replace(['\'', '’'], "").to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

const NEGATIONS: &[&str] = &["dont", "not", "never", "without", "no", "nt", "didnt", "doesnt"];
const CADENCE: &[&str] =
    &["every", "each", "daily", "hourly", "weekly", "at", "on", "once", "twice", "when", "whenever"];
const QUESTION_WORDS: &[&str] =
    &["why", "what", "when", "how", "did", "does", "was", "which", "who", "is", "has", "where", "whats"];
const STOP_OBJECTS: &[&str] = &[
    "tracking",
    "watching",
    "following",
    "including",
    "showing",
    "mentioning",
    "adding",
    "listing",
    "updating",
    "keeping",
    "covering",
];
const SCHEDULE_WORDS: &[&str] = &[
    "every",
    "daily",
    "hourly",
    "weekly",
    "monthly",
    "weekday",
    "weekdays",
    "weekend",
    "weekends",
    "morning",
    "mornings",
    "evening",
    "evenings",
    "night",
    "nightly",
    "noon",
    "midnight",
    "am",
    "pm",
    "cron",
    "schedule",
    "minutes",
    "hours",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mondays",
    "tuesdays",
    "wednesdays",
    "thursdays",
    "fridays",
    "saturdays",
    "sundays",
    "between",
    "o",
    "clock",
];

impl Intent {
    pub fn of(sentence: &str) -> Intent {
        let w = words(sentence);
        let has = |word: &str| w.iter().any(|x| x == word);
        let phrase = |p: &str| {
            let p: Vec<&str> = p.split(' ').collect();
            w.windows(p.len()).any(|win| win.iter().zip(&p).all(|(a, b)| a == b))
        };
        // A word counts unless one of the two before it negates it.
        let negated = |i: usize| w[i.saturating_sub(2)..i].iter().any(|x| NEGATIONS.contains(&x.as_str()));
        let question = sentence.trim_end().ends_with('?')
            || w.first().is_some_and(|f| QUESTION_WORDS.contains(&f.as_str()));
        let run = !question
            && w.iter().enumerate().any(|(i, x)| {
                let next = w.get(i + 1).map(String::as_str);
                let prev = i.checked_sub(1).map(|p| w[p].as_str());
                let asks = match x.as_str() {
                    "run" | "rerun" => !next.is_some_and(|n| CADENCE.contains(&n)) && prev != Some("last"),
                    "refresh" | "backfill" | "regenerate" | "fill" => true,
                    "now" => next != Some("on") && prev != Some("from"),
                    "update" => matches!(next, None | Some("now")) || phrase("update it now"),
                    _ => false,
                };
                asks && !negated(i)
            });
        let stop = w.iter().enumerate().any(|(i, x)| {
            matches!(x.as_str(), "stop" | "cancel" | "abort" | "halt" | "kill")
                && !w.get(i + 1).is_some_and(|n| STOP_OBJECTS.contains(&n.as_str()))
                && !negated(i)
        });
        let passive = has("passive")
            || has("unlive")
            || phrase("stop updating")
            || phrase("stop keeping")
            || phrase("not live")
            || phrase("no longer live")
            || phrase("turn it off")
            || phrase("turn off")
            || phrase("make it static");
        let undo = has("undo")
            || has("revert")
            || has("rollback")
            || phrase("roll back")
            || phrase("put back")
            || has("restore");
        let resume = has("resume")
            || has("unpause")
            || has("reactivate")
            || phrase("start again")
            || phrase("turn it back on")
            || phrase("back on");
        let pause = !resume && (has("pause") || has("suspend") || phrase("take a break"));
        let schedule = w.iter().any(|x| SCHEDULE_WORDS.contains(&x.as_str()))
            || w.windows(2).any(|p| p[0] == "at" && p[1].chars().next().is_some_and(|c| c.is_ascii_digit()));
        let extend =
            ["too", "also", "add", "include", "track", "watch", "follow", "monitor"].iter().any(|x| has(x))
                || phrase("as well")
                || phrase("keep an eye");
        Intent { run, stop, undo, passive, pause, resume, schedule, question, extend }
    }
}

/// Without a model: the direct commands for what `sentence` seems to want, about the note at
/// `note` (as the user typed it), `live` or not. Never empty.
pub fn direct_commands(sentence: &str, note: &str, live: bool) -> Vec<String> {
    let i = Intent::of(sentence);
    let quoted = |s: &str| format!("\"{}\"", s.trim().replace('\\', "\\\\").replace('"', "\\\""));
    let mut out = Vec::new();
    if i.question {
        out.push(format!("livenote history {note}"));
        out.push(format!("livenote diff {note}"));
        out.push(format!("livenote list {}", parent_of(note)));
    }
    if i.stop && !i.passive {
        out.push(format!("livenote stop {note}"));
    }
    if i.undo {
        out.push(format!("livenote undo {note}"));
    }
    if i.passive {
        out.push("remove the `live:` block (your editor's \"Make passive\")".to_owned());
    } else if i.pause {
        out.push("set `active: false` in the `live:` block (your editor's \"Pause\")".to_owned());
    } else if i.resume {
        out.push("set `active: true` in the `live:` block (your editor's \"Resume\")".to_owned());
    }
    if i.schedule && !i.question {
        out.push(format!("livenote make-live {note} --cron \"MIN HOUR * * DAYS\" (or --window HH:MM-HH:MM)"));
    }
    let changes_block = i.passive || i.pause || i.resume || i.undo || (i.stop && !i.run);
    if !i.question && !changes_block && (i.extend || !i.run || !live) {
        match live {
            true => out.push(format!(
                "livenote make-live {note} --describe {} (adds it to the objective)",
                quoted(sentence)
            )),
            false => out.push(format!("livenote make-live {note} --describe {}", quoted(sentence))),
        }
    }
    if i.run {
        out.push(format!("livenote run {note}"));
    }
    if out.is_empty() {
        out.push(format!("livenote run {note}"));
        out.push(format!("livenote history {note}"));
    }
    out
}

/// Without a model, in an editor: its own commands for what `sentence` seems to want.
pub fn editor_commands(sentence: &str, live: bool) -> Vec<String> {
    let i = Intent::of(sentence);
    let mut out = Vec::new();
    if i.question {
        out.push("`livenote history NOTE` and `livenote diff NOTE` in a terminal".to_owned());
    }
    if i.stop && !i.passive {
        say(&mut out, "Stop", "livenote.stop");
    }
    if i.undo {
        say(&mut out, "Undo last run", "livenote.undoLastRun");
    }
    if i.passive {
        say(&mut out, "Make passive", "livenote.makePassive");
    } else if i.pause {
        say(&mut out, "Pause", "livenote.setActive");
    } else if i.resume {
        say(&mut out, "Resume", "livenote.setActive");
    }
    if i.schedule && !i.question && live {
        say(&mut out, "Set schedule…", "livenote.setSchedule");
    }
    let changes_block = i.passive || i.pause || i.resume || i.undo || (i.stop && !i.run);
    if !i.question && !changes_block && (i.extend || !i.run || !live) {
        say(
            &mut out,
            "Make live…",
            "livenote.makeLive, with your sentence: it extends a live note's objective",
        );
    }
    if i.run || out.is_empty() {
        say(&mut out, "Run now", "livenote.run");
    }
    out
}

fn say(out: &mut Vec<String>, title: &str, how: &str) {
    out.push(format!("\"{title}\" ({how})"));
}

/// The folder a note path names (`.` for a bare file name), for `livenote list`.
fn parent_of(note: &str) -> &str {
    match note.rsplit_once(['/', '\\']) {
        Some((dir, _)) if !dir.is_empty() => dir,
        _ => ".",
    }
}

#[cfg(test)]
#[path = "intent_tests.rs"]
mod tests;
