//! "Make live" with the objective and triggers given (`livenote mcp`'s `make_live`): a passive
//! note gets a whole `live:` block, inserted exactly as the editor's *Make live* inserts one; a
//! live note has its objective and the triggers given replaced in place, every other line
//! (runtime fields, comments, other keys, quoting) left as it is.

use super::*;

/// The triggers a [`make_live_with`] writes. `None` leaves a trigger as it is; an empty value
/// (blank text, no windows) removes it; anything else replaces it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TriggerEdits {
    pub cron_expr: Option<String>,
    /// `(startTime, endTime)` pairs, as written.
    pub windows: Option<Vec<(String, String)>>,
    pub event_match_criteria: Option<String>,
}

/// A value to write: `None` (leave), `Some(None)` (remove) or `Some(Some(v))` (write).
fn wanted<T: ?Sized>(value: Option<&T>, empty: impl Fn(&T) -> bool) -> Option<Option<&T>> {
    value.map(|v| (!empty(v)).then_some(v))
}

/// Everything a [`make_live_edits`] writes: the objective and triggers as for
/// [`make_live_with`], plus `tools:` and `skills:` (`None` leaves them as they are, a list
/// replaces them; an empty list means none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveEdits {
    pub objective: String,
    pub triggers: TriggerEdits,
    pub tools: Option<Vec<String>>,
    pub skills: Option<Vec<String>>,
}

/// Make the note live with `objective` and `triggers` (a blank objective: derived from the
/// title, as *Make live* does), or, when it is live already, replace its objective (a blank one
/// is left as it is) and the triggers given.
pub fn make_live_with(
    text: &str,
    objective: &str,
    triggers: &TriggerEdits,
) -> Result<Vec<TextEdit>, RewriteError> {
    make_live_edits(
        text,
        &LiveEdits { objective: objective.to_owned(), triggers: triggers.clone(), ..LiveEdits::default() },
    )
}

/// [`make_live_with`], also writing the `tools:` and `skills:` given (a drafted block's).
pub fn make_live_edits(text: &str, edits: &LiveEdits) -> Result<Vec<TextEdit>, RewriteError> {
    let (objective, triggers) = (edits.objective.as_str(), &edits.triggers);
    if frontmatter::locate(text).is_some() {
        let doc = Doc::open(text)?;
        doc.check_top_level()?;
        if doc.top_live()?.is_some() {
            return doc.update_live(edits);
        }
    }
    let objective = if objective.trim().is_empty() {
        let body_start = frontmatter::locate(text).map_or(frontmatter::bom_len(text), |fm| fm.body_start());
        default_objective(frontmatter::title(text, body_start))
    } else {
        objective.to_owned()
    };
    let block = NewLive {
        objective,
        cron: triggers.cron_expr.clone().filter(|c| !c.trim().is_empty()),
        windows: triggers.windows.clone().unwrap_or_default(),
        event: triggers.event_match_criteria.clone().filter(|e| !e.trim().is_empty()),
        tools: edits.tools.clone(),
        skills: edits.skills.clone(),
        ..NewLive::default()
    };
    Ok(vec![insert_live(text, &block)?])
}

/// The schedules "Set schedule…" offers on a live note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    Hourly,
    Morning,
    Weekdays,
    Window,
    Manual,
}

impl Schedule {
    pub const ALL: [Schedule; 5] =
        [Schedule::Hourly, Schedule::Morning, Schedule::Weekdays, Schedule::Window, Schedule::Manual];

    /// The name `livenote.setSchedule` takes.
    pub fn id(self) -> &'static str {
        match self {
            Schedule::Hourly => "hourly",
            Schedule::Morning => "morning",
            Schedule::Weekdays => "weekdays",
            Schedule::Window => "window",
            Schedule::Manual => "manual",
        }
    }

    pub fn from_id(id: &str) -> Option<Schedule> {
        Schedule::ALL.into_iter().find(|s| s.id() == id)
    }

    /// In words, for a menu.
    pub fn title(self) -> &'static str {
        match self {
            Schedule::Hourly => "every hour",
            Schedule::Morning => "every morning at 8",
            Schedule::Weekdays => "weekdays at 9",
            Schedule::Window => "once a day between 09:00 and 12:00",
            Schedule::Manual => "manual only",
        }
    }
}

/// Replace a live note's schedule with `schedule`: the time triggers (`cronExpr`, `windows`)
/// become the preset's and `eventMatchCriteria` stays (events are not a schedule); "manual
/// only" removes `triggers:` whole, events included, since then nothing but the user runs it.
pub fn set_schedule(text: &str, schedule: Schedule) -> Result<Vec<TextEdit>, RewriteError> {
    let doc = Doc::open(text)?;
    let live = doc.live_block()?;
    let (cron, windows) = match schedule {
        Schedule::Hourly => ("0 * * * *", Vec::new()),
        Schedule::Morning => ("0 8 * * *", Vec::new()),
        Schedule::Weekdays => ("0 9 * * 1-5", Vec::new()),
        Schedule::Window => ("", vec![("09:00".to_owned(), "12:00".to_owned())]),
        Schedule::Manual => {
            return Ok(match doc.child(&live, "triggers")? {
                Some(t) => vec![TextEdit::delete(doc.removal_span(t))],
                None => Vec::new(),
            });
        }
    };
    let triggers =
        TriggerEdits { cron_expr: Some(cron.to_owned()), windows: Some(windows), event_match_criteria: None };
    doc.update_live(&LiveEdits { triggers, ..LiveEdits::default() })
}

impl Doc<'_> {
    fn update_live(&self, wanted_edits: &LiveEdits) -> Result<Vec<TextEdit>, RewriteError> {
        let (objective, triggers) = (wanted_edits.objective.as_str(), &wanted_edits.triggers);
        let live = self.live_block()?;
        let nl = self.nl();
        let mut edits = Vec::new();
        // Lines inserted right after the `live:` line (an objective the block lacks).
        let mut after_key = String::new();
        // New keys of `live:` (a `triggers:` block, `tools:`, `skills:`), inserted together above
        // the runtime fields.
        let mut new_keys = String::new();
        if !objective.trim().is_empty() {
            match self.child(&live, "objective")? {
                Some(i) => edits.push(self.objective_edit(i, objective)?),
                None => {
                    let value = objective_value(objective, live.child_col + 2, nl);
                    after_key.push_str(&format!("{}objective:{value}{nl}", " ".repeat(live.child_col)));
                }
            }
        }
        let blank = |s: &str| s.trim().is_empty();
        let cron = wanted(triggers.cron_expr.as_deref(), blank);
        let windows = wanted(triggers.windows.as_deref(), <[_]>::is_empty);
        let event = wanted(triggers.event_match_criteria.as_deref(), blank);
        match self.child(&live, "triggers")? {
            Some(t) => self.update_triggers(t, cron, windows, event, &mut edits)?,
            None => {
                let col = live.child_col + 2;
                let mut lines = String::new();
                if let Some(Some(c)) = cron {
                    lines.push_str(&trigger_line(col, TriggerKey::CronExpr, c, nl));
                }
                if let Some(Some(w)) = windows {
                    lines.push_str(&windows_entry(col, w, nl));
                }
                if let Some(Some(e)) = event {
                    lines.push_str(&trigger_line(col, TriggerKey::EventMatchCriteria, e, nl));
                }
                if !lines.is_empty() {
                    new_keys.push_str(&format!("{}triggers:{nl}{lines}", " ".repeat(live.child_col)));
                }
            }
        }
        for (key, list) in [("tools", &wanted_edits.tools), ("skills", &wanted_edits.skills)] {
            let Some(list) = list else { continue };
            match self.child(&live, key)? {
                Some(i) => edits.push(self.value_edit(i, &flow_list(list))?),
                None => new_keys.push_str(&format!(
                    "{}{key}: {}{nl}",
                    " ".repeat(live.child_col),
                    flow_list(list)
                )),
            }
        }
        if !new_keys.is_empty() {
            let at = self.before_runtime_fields(&live);
            if at == self.outline.lines[live.line].full.end {
                after_key.push_str(&new_keys);
            } else {
                edits.push(TextEdit::insert(at, new_keys));
            }
        }
        if !after_key.is_empty() {
            edits.push(TextEdit::insert(self.outline.lines[live.line].full.end, after_key));
        }
        Ok(edits)
    }

    /// Where a new key of `live:` goes so that it sits above the runtime fields livenote
    /// writes (and the comment that introduces them): before the first of them, else after
    /// the block's last entry.
    pub(super) fn before_runtime_fields(&self, live: &LiveBlock) -> usize {
        let o = &self.outline;
        let runtime = live
            .children
            .iter()
            .copied()
            .find(|&i| o.key(i).is_some_and(|k| RuntimeField::ALL.iter().any(|f| f.key() == k.name)));
        let Some(first) = runtime else { return live.insert_at };
        // A comment at the key's column or less right above it introduces it.
        let mut at = first;
        while at > live.line + 1
            && matches!(o.lines[at - 1].kind, LineKind::Comment)
            && o.lines[at - 1].indent <= live.child_col
        {
            at -= 1;
        }
        o.lines[at].full.start
    }

    /// `triggers:`'s inline value, when it has one, is an empty block (`{}`, null), which keys
    /// can go under; anything else is not a mapping livenote may edit.
    pub(super) fn triggers_value_is_empty(&self, v: &std::ops::Range<usize>) -> Result<(), RewriteError> {
        if matches!(&self.text[v.clone()], "{}" | "null" | "Null" | "NULL" | "~") {
            Ok(())
        } else {
            Err(RewriteError::TriggersNotMapping)
        }
    }

    /// The lines under `triggers:` (at line `t`) start with a key, not a list item or text.
    pub(super) fn triggers_block_holds_keys(&self, t: usize) -> Result<(), RewriteError> {
        let o = &self.outline;
        if let Some(j) = (t + 1..=o.last_line(t))
            .find(|&j| !matches!(o.lines[j].kind, LineKind::Blank | LineKind::Comment))
            && !matches!(&o.lines[j].kind, LineKind::Key(k) if k.dash_col.is_none())
        {
            return Err(RewriteError::TriggersNotMapping);
        }
        Ok(())
    }

    fn update_triggers(
        &self,
        t: usize,
        cron: Option<Option<&str>>,
        windows: Option<Option<&[(String, String)]>>,
        event: Option<Option<&str>>,
        edits: &mut Vec<TextEdit>,
    ) -> Result<(), RewriteError> {
        let o = &self.outline;
        let nl = self.nl();
        let Some(key) = o.key(t) else { return Err(RewriteError::NoKeyAt) };
        let adds = [cron.flatten().is_some(), windows.flatten().is_some(), event.flatten().is_some()];
        if let Some(v) = &key.value {
            // `triggers: {}` (or null) is an empty block: its value goes, keys come under it.
            self.triggers_value_is_empty(v)?;
            if adds.contains(&true) {
                let start = self.text[..v.start].trim_end_matches([' ', '\t']).len();
                edits.push(TextEdit::delete(start..v.end));
            }
        }
        self.triggers_block_holds_keys(t)?;
        let children = o.children(t);
        let col = children.first().and_then(|&c| o.key(c)).map_or(key.col + 2, |k| k.col);
        let mut inserted = String::new();
        let scalar = |name: TriggerKey,
                      value: Option<Option<&str>>,
                      edits: &mut Vec<TextEdit>,
                      inserted: &mut String| {
            let Some(value) = value else { return Ok(()) };
            match (self.child_in(&children, name.key())?, value) {
                (Some(i), Some(v)) => edits.push(self.value_edit(i, &yaml_string(v))?),
                (Some(i), None) => edits.push(TextEdit::delete(self.removal_span(i))),
                (None, Some(v)) => inserted.push_str(&trigger_line(col, name, v, nl)),
                (None, None) => {}
            }
            Ok::<(), RewriteError>(())
        };
        scalar(TriggerKey::CronExpr, cron, edits, &mut inserted)?;
        if let Some(value) = windows {
            match (self.child_in(&children, "windows")?, value) {
                (Some(i), Some(w)) => {
                    let k_col = o.key(i).map_or(col, |k| k.col);
                    let span = o.lines[i].full.start..o.lines[o.last_line(i)].full.end;
                    edits.push(TextEdit::replace(span, windows_entry(k_col, w, nl)));
                }
                (Some(i), None) => edits.push(TextEdit::delete(self.removal_span(i))),
                (None, Some(w)) => inserted.push_str(&windows_entry(col, w, nl)),
                (None, None) => {}
            }
        }
        scalar(TriggerKey::EventMatchCriteria, event, edits, &mut inserted)?;
        if !inserted.is_empty() {
            let end = match children.last() {
                Some(&c) => self.trailing_comments(self.entry_end(c), key.col),
                None => t,
            };
            edits.push(TextEdit::insert(o.lines[end].full.end, inserted));
        }
        Ok(())
    }

    /// Replace the objective's value: one quoted line or a literal block (as *Make live* writes
    /// it), keeping a trailing comment of the key line (after a block's `|`).
    fn objective_edit(&self, i: usize, objective: &str) -> Result<TextEdit, RewriteError> {
        let o = &self.outline;
        let Some(k) = o.key(i) else { return Err(RewriteError::NoKeyAt) };
        let text = self.text;
        let nl = self.nl();
        let line = &o.lines[i];
        let space = [' ', '\t'];
        let (start, comment) = match &k.value {
            Some(v) => {
                let tail = &text[v.end..line.range.end];
                let is_comment = tail.starts_with(space) && tail.trim_start_matches(space).starts_with('#');
                (v.start, if is_comment { tail.trim_end_matches(space).to_owned() } else { String::new() })
            }
            None => {
                let c = text[k.value_start..line.range.end].trim_matches(space);
                (k.value_start, if c.is_empty() { String::new() } else { format!(" {c}") })
            }
        };
        let rendered = objective_value(objective, k.col + 2, nl);
        let rendered = rendered.strip_prefix(' ').unwrap_or(&rendered);
        let (head, rest) = rendered.find(nl).map_or((rendered, ""), |at| rendered.split_at(at));
        let sep = if text[..start].ends_with(space) { "" } else { " " };
        let end = o.lines[o.last_line(i)].range.end;
        Ok(TextEdit::replace(start..end, format!("{sep}{head}{comment}{rest}")))
    }
}

#[cfg(test)]
#[path = "live_fields_tests.rs"]
mod tests;
