//! Converting a legacy ```` ```track ```` fence into a `live:` block (the older per-block model
//! the design replaced): what carries over, what is dropped with a comment, and the fence and
//! its marker lines removed from the body.

use super::*;

/// Convert a legacy ```` ```track ```` fence into the note's `live:` block: `instruction`
/// becomes the objective, a cron schedule `triggers.cronExpr`, a window schedule one entry of
/// `triggers.windows`, `eventMatchCriteria` is kept, `active: false` and the runtime fields
/// `lastRunAt`/`lastRunId`/`lastRunSummary` are carried over (so the note does not run again
/// at once). What cannot be carried over (a one-time schedule, a window's cron) is dropped
/// and a YAML comment in the block says so. The fence is removed from the body, with the
/// `<!--track-target:ID-->` and `<!--/track-target:ID-->` marker lines; the content between
/// the markers stays.
pub fn convert_track_fence(text: &str, fence: &TrackFence) -> Result<Vec<TextEdit>, RewriteError> {
    let fenced = text.get(fence.range.clone()).ok_or(RewriteError::BadRange)?;
    if text.get(fence.inner.clone()).is_none()
        || fence.inner.start < fence.range.start
        || fence.inner.end > fence.range.end
        || !fenced.starts_with("```track")
    {
        return Err(RewriteError::BadRange);
    }
    let fm = frontmatter::locate(text);
    let body_start = fm.as_ref().map_or(frontmatter::bom_len(text), Frontmatter::body_start);
    if fence.range.start < body_start {
        return Err(RewriteError::BadRange);
    }
    // An unclosed fence runs to the end of the text; deleting it would delete the body.
    let last_line = fenced.trim_end_matches(['\n', '\r']).rsplit('\n').next().unwrap_or("");
    if fenced.trim_end_matches(['\n', '\r']).len() <= "```track".len() || last_line.trim_end() != "```" {
        return Err(RewriteError::InvalidTrack("the ```track fence is not closed".to_owned()));
    }
    let root = match yaml::parse(text, fence.inner.clone()) {
        Ok(Some(root)) => root,
        Ok(None) => {
            return Err(RewriteError::InvalidTrack("the track block is empty".to_owned()));
        }
        Err(e) => {
            return Err(RewriteError::InvalidTrack(format!("its YAML does not parse ({})", e.message)));
        }
    };
    if root.entries().is_none() {
        return Err(RewriteError::InvalidTrack("its YAML is not a mapping".to_owned()));
    }
    let track_id = root.get("trackId").and_then(|e| scalar_text(&e.value, text));
    let block = NewLive::from_track(text, &root, body_start, track_id.as_deref());

    let mut edits = vec![insert_live(text, &block)?];
    edits.push(TextEdit::delete(fence_removal(text, fence, body_start)));
    if let Some(id) = track_id {
        for marker in [format!("track-target:{id}"), format!("/track-target:{id}")] {
            if let Some(line) = find_marker_line(text, body_start, &marker, &fence.range) {
                edits.push(TextEdit::delete(line));
            }
        }
    }
    Ok(edits)
}

impl NewLive {
    fn from_track(text: &str, root: &Node, body_start: usize, track_id: Option<&str>) -> NewLive {
        let get = |key: &str| root.get(key).map(|e| &e.value);
        let text_of =
            |key: &str| get(key).and_then(|n| scalar_text(n, text)).filter(|s| !s.trim().is_empty());
        // Every comment says where the block came from, since the fence is gone.
        let name = match track_id {
            Some(id) => format!("from track \"{id}\":"),
            None => "from the track block:".to_owned(),
        };
        let mut block = NewLive {
            objective: text_of("instruction")
                .unwrap_or_else(|| default_objective(frontmatter::title(text, body_start))),
            active: match get("active").map(|n| &n.kind) {
                Some(Kind::Scalar(Scalar::Bool(false))) => Some(false),
                _ => None,
            },
            event: text_of("eventMatchCriteria"),
            ..NewLive::default()
        };
        if let Some(schedule) = get("schedule").filter(|n| !n.is_null()) {
            let field = |key: &str| schedule.get(key).and_then(|e| scalar_text(&e.value, text));
            match field("type").as_deref() {
                Some("cron") => match field("expression") {
                    Some(expr) => block.cron = Some(expr),
                    None => block
                        .notes
                        .push(format!("{name} its cron schedule had no expression and was dropped")),
                },
                Some("window") => {
                    match (field("startTime"), field("endTime")) {
                        (Some(start), Some(end)) => block.windows.push((start, end)),
                        _ => block
                            .notes
                            .push(format!("{name} its window had no start or end time and was dropped")),
                    }
                    if let Some(cron) = field("cron") {
                        block.notes.push(format!(
                            "{name} its window's cron \"{cron}\" was dropped; a window now fires at most once a day"
                        ));
                    }
                }
                Some("once") => {
                    let when = field("runAt").map(|t| format!(" (runAt {t})")).unwrap_or_default();
                    block.notes.push(format!(
                        "{name} its one-time schedule{when} was dropped; live notes have no one-time trigger"
                    ));
                }
                _ => block.notes.push(format!("{name} its schedule was not understood and was dropped")),
            }
        }
        for field in [RuntimeField::LastRunAt, RuntimeField::LastRunId, RuntimeField::LastRunSummary] {
            if let Some(v) = get(field.key()).and_then(|n| scalar_text(n, text)) {
                block.runtime.push((field, v));
            }
        }
        block
    }
}

/// A scalar's text: strings as read, numbers and booleans as written (a track's `startTime:
/// 0900` is still meant as text).
fn scalar_text(n: &Node, text: &str) -> Option<String> {
    match &n.kind {
        Kind::Scalar(Scalar::Str(s)) => Some(s.clone()),
        Kind::Scalar(Scalar::Null) => None,
        Kind::Scalar(_) => text.get(n.span.clone()).map(str::to_owned),
        _ => None,
    }
}

/// The fence's bytes plus, when a blank line precedes it (or it opens the body), the blank
/// line after it, so removing it does not leave two blank lines in a row.
fn fence_removal(text: &str, fence: &TrackFence, body_start: usize) -> Range<usize> {
    let start = fence.range.start;
    let end = fence.range.end;
    let before = &text[body_start..start];
    let blank_before = start == body_start
        || before.strip_suffix('\n').is_some_and(|b| {
            let b = b.strip_suffix('\r').unwrap_or(b);
            b.rsplit('\n').next().is_some_and(|l| l.trim().is_empty())
        });
    if !blank_before || !text[..end].ends_with('\n') {
        return start..end;
    }
    let rest = &text[end..];
    let next_len = rest.find('\n').map_or(rest.len(), |i| i + 1);
    let next = &rest[..next_len];
    if !next.is_empty() && next.trim().is_empty() && next.ends_with('\n') {
        start..end + next_len
    } else {
        start..end
    }
}

/// The full range (with its line ending) of the first body line outside `skip` that is the
/// HTML comment `<!--marker-->` (spaces inside the comment allowed).
fn find_marker_line(
    text: &str,
    body_start: usize,
    marker: &str,
    skip: &Range<usize>,
) -> Option<Range<usize>> {
    let mut pos = body_start;
    for line in text[body_start..].split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        if start >= skip.start && start < skip.end {
            continue;
        }
        let inner = line.trim().strip_prefix("<!--").and_then(|r| r.strip_suffix("-->"));
        if inner.is_some_and(|i| i.trim() == marker) {
            return Some(start..pos);
        }
    }
    None
}
