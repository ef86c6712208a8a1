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
    let body_start = body_start(text);
    let track = read_fence(text, fence, body_start)?;
    let block = NewLive::from_track(text, &track.root, body_start, track.id.as_deref());
    let mut edits = vec![insert_live(text, &block)?];
    edits.extend(fence_edits(text, fence, body_start, track.id.as_deref()));
    Ok(edits)
}

/// Convert every ```` ```track ```` fence of the note into its one `live:` block at once (the
/// design's v2 folded the per-block tracks into one objective per note): with one fence, as
/// [`convert_track_fence`]; with several, their instructions become one objective that lists
/// each track's part (by its `trackId`), their windows and event criteria are all kept, the
/// first cron is kept (a note has one `cronExpr`; a different one is dropped with a comment),
/// the note is paused only when every track was, and the runtime fields come from the track
/// that ran last. Every fence and its marker lines go; a fence that cannot be read refuses the
/// whole conversion.
pub fn convert_track_fences(text: &str) -> Result<Vec<TextEdit>, RewriteError> {
    let body_start = body_start(text);
    let fences = frontmatter::track_fences(text, body_start);
    let tracks = fences.iter().map(|f| read_fence(text, f, body_start)).collect::<Result<Vec<_>, _>>()?;
    let blocks: Vec<(Option<String>, NewLive)> = tracks
        .iter()
        .map(|t| (t.id.clone(), NewLive::from_track(text, &t.root, body_start, t.id.as_deref())))
        .collect();
    let block = NewLive::merge(blocks).ok_or(RewriteError::BadRange)?;
    let mut edits = vec![insert_live(text, &block)?];
    for (fence, track) in fences.iter().zip(&tracks) {
        edits.extend(fence_edits(text, fence, body_start, track.id.as_deref()));
    }
    Ok(edits)
}

/// Where the body starts (after a frontmatter, else after a BOM).
fn body_start(text: &str) -> usize {
    frontmatter::locate(text).as_ref().map_or(frontmatter::bom_len(text), Frontmatter::body_start)
}

/// A fence's YAML, read and checked.
struct Track {
    root: Node,
    id: Option<String>,
}

fn read_fence(text: &str, fence: &TrackFence, body_start: usize) -> Result<Track, RewriteError> {
    let fenced = text.get(fence.range.clone()).ok_or(RewriteError::BadRange)?;
    if text.get(fence.inner.clone()).is_none()
        || fence.inner.start < fence.range.start
        || fence.inner.end > fence.range.end
        || !fenced.starts_with("```track")
    {
        return Err(RewriteError::BadRange);
    }
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
    let id = root.get("trackId").and_then(|e| scalar_text(&e.value, text));
    Ok(Track { root, id })
}

/// The edits that remove a fence and its marker lines (the content between them stays).
fn fence_edits(text: &str, fence: &TrackFence, body_start: usize, track_id: Option<&str>) -> Vec<TextEdit> {
    let mut edits = vec![TextEdit::delete(fence_removal(text, fence, body_start))];
    if let Some(id) = track_id {
        for marker in [format!("track-target:{id}"), format!("/track-target:{id}")] {
            if let Some(line) = find_marker_line(text, body_start, &marker, &fence.range) {
                edits.push(TextEdit::delete(line));
            }
        }
    }
    edits
}

impl NewLive {
    /// One block from several tracks' (see [`convert_track_fences`]); `None` for none.
    fn merge(mut blocks: Vec<(Option<String>, NewLive)>) -> Option<NewLive> {
        if blocks.len() <= 1 {
            return blocks.pop().map(|(_, b)| b);
        }
        let mut objective =
            String::from("Keep each of these current, in its own section of the note, in this order:\n");
        let mut merged = NewLive { active: Some(false), ..NewLive::default() };
        let mut events: Vec<String> = Vec::new();
        let mut latest_run: Option<String> = None;
        for (n, (id, b)) in blocks.into_iter().enumerate() {
            let label = id.as_deref().map_or_else(|| format!("{}.", n + 1), |id| format!("{}. {id}:", n + 1));
            // Continuation lines indented under the item, so each track's part reads as one.
            let part = b.objective.trim_end().replace('\n', "\n   ");
            objective.push_str(&format!("\n{label} {part}"));
            if b.active != Some(false) {
                merged.active = None;
            }
            match (&merged.cron, b.cron) {
                (None, cron) => merged.cron = cron,
                (Some(kept), Some(other)) if *kept != other => {
                    let name =
                        id.as_deref().map_or_else(|| "a track".to_owned(), |id| format!("track \"{id}\""));
                    merged.notes.push(format!(
                        "from {name}: its cron \"{other}\" was dropped; a note has one cronExpr (\"{kept}\" is kept)"
                    ));
                }
                _ => {}
            }
            for w in b.windows {
                if !merged.windows.contains(&w) {
                    merged.windows.push(w);
                }
            }
            if let Some(e) = b.event.filter(|e| !events.contains(e)) {
                events.push(e);
            }
            merged.notes.extend(b.notes);
            let ran = b.runtime.iter().find(|(f, _)| *f == RuntimeField::LastRunAt).map(|(_, v)| v.clone());
            if merged.runtime.is_empty()
                || ran.as_ref().is_some_and(|r| latest_run.as_ref().is_none_or(|l| r > l))
            {
                if ran.is_some() {
                    latest_run = ran;
                }
                if !b.runtime.is_empty() {
                    merged.runtime = b.runtime;
                }
            }
        }
        objective.push('\n');
        merged.objective = objective;
        merged.event = (!events.is_empty()).then(|| events.join("; "));
        Some(merged)
    }

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

/// The note's top-level `track:` list (the older model kept its tracks in the frontmatter):
/// the key's span and its items, when it is a list.
pub fn track_list(text: &str) -> Option<(Range<usize>, usize)> {
    let fm = frontmatter::locate(text)?;
    let content = text.get(fm.content.clone())?;
    // Most notes have none: only then is the frontmatter parsed a second time.
    if !content.starts_with("track:") && !content.contains("\ntrack:") {
        return None;
    }
    let root = yaml::parse(text, fm.content.clone()).ok()??;
    let entry = root.get("track")?;
    // A list of tracks: mappings that say what to produce; a user's own `track:` (a list of
    // names, say) is left alone.
    match &entry.value.kind {
        Kind::Seq(items)
            if !items.is_empty()
                && items.iter().all(|i| i.get("instruction").is_some() || i.get("trackId").is_some()) =>
        {
            Some((entry.key_span.clone(), items.len()))
        }
        _ => None,
    }
}

/// Convert a frontmatter `track:` list into the note's `live:` block, as
/// [`convert_track_fences`] merges fences: the list's tracks first, then any ```` ```track ````
/// fences of the body. The `live:` block takes the list's place; marker lines and fences go.
pub fn convert_track_list(text: &str) -> Result<Vec<TextEdit>, RewriteError> {
    let doc = Doc::open(text)?;
    doc.check_top_level()?;
    if doc.top_live()?.is_some() {
        return Err(RewriteError::AlreadyLive);
    }
    let root = match yaml::parse(text, doc.fm.content.clone()) {
        Ok(Some(root)) => root,
        Ok(None) => {
            return Err(RewriteError::InvalidTrack("the frontmatter has no `track:` list".to_owned()));
        }
        Err(e) => return Err(RewriteError::InvalidYaml(e.message)),
    };
    let Some(Kind::Seq(items)) = root.get("track").map(|e| &e.value.kind) else {
        return Err(RewriteError::InvalidTrack("`track:` is not a list".to_owned()));
    };
    let line = doc
        .outline
        .top_level()
        .find(|&i| doc.outline.key(i).is_some_and(|k| k.name == "track"))
        .ok_or(RewriteError::NoKeyAt)?;
    let body_start = doc.fm.body_start();
    let mut blocks = Vec::new();
    let mut ids = Vec::new();
    for item in items {
        if item.entries().is_none() {
            return Err(RewriteError::InvalidTrack("an item of `track:` is not a mapping".to_owned()));
        }
        let id = item.get("trackId").and_then(|e| scalar_text(&e.value, text));
        blocks.push((id.clone(), NewLive::from_track(text, item, body_start, id.as_deref())));
        ids.extend(id);
    }
    let fences = frontmatter::track_fences(text, body_start);
    let tracks = fences.iter().map(|f| read_fence(text, f, body_start)).collect::<Result<Vec<_>, _>>()?;
    for t in &tracks {
        blocks.push((t.id.clone(), NewLive::from_track(text, &t.root, body_start, t.id.as_deref())));
    }
    let block =
        NewLive::merge(blocks).ok_or_else(|| RewriteError::InvalidTrack("`track:` is empty".to_owned()))?;
    let span = doc.removal_span(line);
    let mut edits = vec![TextEdit::replace(span.clone(), block.render(doc.nl()))];
    for (fence, track) in fences.iter().zip(&tracks) {
        edits.extend(fence_edits(text, fence, body_start, track.id.as_deref()));
    }
    let nothing = 0..0;
    for id in ids {
        for marker in [format!("track-target:{id}"), format!("/track-target:{id}")] {
            if let Some(l) = find_marker_line(text, body_start, &marker, &nothing) {
                edits.push(TextEdit::delete(l));
            }
        }
    }
    Ok(edits)
}

#[cfg(test)]
#[path = "track_tests.rs"]
mod tests;
