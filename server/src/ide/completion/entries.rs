//! Completion of the entries of a list of names: `tools` (MCP servers and their tools),
//! `skills` and `sources`, inline in `[...]` or on a block list's `- ` lines.

use std::ops::Range;

use chrono::TimeZone;

use super::{CompletionItem, CompletionKind, Ctx, KeyLine, Level, LineKind, Scope, Spot};

/// Where an entry of `tools` goes: the text it replaces and how it must be written there.
pub(super) struct EntrySlot {
    replace: Range<usize>,
    /// Inside quotes the user opened: the bare entry.
    quoted: bool,
    /// The opening quote has no closing one yet.
    close: Option<char>,
    /// After `tools:` with no value yet: the entry goes in a new `[...]` list, after a space
    /// when the cursor is right after the colon.
    new_list: Option<bool>,
}

impl EntrySlot {
    /// The entry `label` of a list of names, the `i`-th offered.
    fn item(
        &self,
        i: usize,
        label: String,
        kind: CompletionKind,
        detail: String,
        documentation: Option<String>,
    ) -> CompletionItem {
        CompletionItem {
            insert_text: entry_text(self, &label),
            label,
            kind,
            detail: Some(detail),
            documentation,
            snippet: false,
            replace: self.replace.clone(),
            sort_text: Some(format!("{i:04}")),
            later: None,
        }
    }
}

/// What goes in an entry of a list of names (`tools`, `skills`).
pub(super) type Entries<Tz> = fn(&Ctx<Tz>, &EntrySlot) -> Vec<CompletionItem>;

/// On the line of `tools:` (or `skills:`): a new list after the colon, or the entry of a
/// `[...]` list the cursor is in.
pub(super) fn tools_inline<Tz: TimeZone>(
    ctx: &Ctx<Tz>,
    spot: &Spot,
    k: &KeyLine,
    entries: Entries<Tz>,
) -> Vec<CompletionItem> {
    let (text, offset) = (ctx.text, spot.offset);
    let Some(v) = k.value.clone() else {
        // A trailing comment starts where the value would; complete only before it.
        if offset > k.value_start {
            return Vec::new();
        }
        let slot = EntrySlot {
            replace: offset..offset,
            quoted: false,
            close: None,
            new_list: Some(text[..offset].ends_with(':')),
        };
        return entries(ctx, &slot);
    };
    if !text[v.clone()].starts_with('[') || offset <= v.start || offset > v.end {
        return Vec::new();
    }
    // The entry around the cursor: after the last `,` (or the `[`) outside quotes.
    let mut start = v.start + 1;
    let mut quote = None;
    for (i, c) in text[v.start + 1..offset].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, ',') => start = v.start + 1 + i + 1,
            (None, ']') => return Vec::new(),
            _ => {}
        }
    }
    let start = start + text[start..offset].len() - text[start..offset].trim_start_matches([' ', '\t']).len();
    match entry_slot(text, start, offset, v.end, &[',', ']']) {
        Some(slot) => entries(ctx, &slot),
        None => Vec::new(),
    }
}

/// On a `- ` item line of a block list under `live.tools`: the entry after the dash.
pub(super) fn tools_item<Tz: TimeZone>(ctx: &Ctx<Tz>, spot: &Spot) -> Option<Vec<CompletionItem>> {
    let Some(LineKind::Item { dash_col }) = spot.kind() else { return None };
    let dash = *dash_col;
    let o = &spot.outline;
    // Up past the sibling items to the key that holds them.
    let mut j = spot.line;
    let owner = loop {
        j = j.checked_sub(1)?;
        match &o.lines[j].kind {
            LineKind::Blank | LineKind::Comment | LineKind::Continuation => {}
            LineKind::Item { dash_col } if *dash_col == dash => {}
            LineKind::Key(k) if k.dash_col.is_none() && k.col <= dash && k.value.is_none() => break j,
            _ => return None,
        }
    };
    let k = o.key(owner)?;
    let in_live =
        matches!(crate::ide::cursor::scope(o, owner, k.col), Scope::Block { level: Level::Live, .. });
    let entries: Entries<Tz> = match k.name.as_str() {
        "tools" if in_live => tool_entries,
        "skills" if in_live => skill_entries,
        "sources" if in_live => source_entries,
        _ => return None,
    };
    let text = ctx.text;
    let after_dash = spot.line_start + dash + 1;
    let rest = &text[after_dash..spot.line_end];
    let start = after_dash + rest.len() - rest.trim_start_matches([' ', '\t']).len();
    if spot.offset < start {
        return Some(Vec::new());
    }
    // A comment after the entry is not part of it.
    let end = text[start..spot.line_end].find(" #").map_or(spot.line_end, |i| start + i);
    Some(entry_slot(text, start, spot.offset, end, &[]).map(|slot| entries(ctx, &slot)).unwrap_or_default())
}

/// The entry starting at `start` that the cursor at `offset` is in, ending before one of
/// `stops` (outside quotes) or at `end`.
fn entry_slot(text: &str, start: usize, offset: usize, end: usize, stops: &[char]) -> Option<EntrySlot> {
    let first = text[start..].chars().next();
    if let Some(q @ ('"' | '\'')) = first.filter(|_| offset > start) {
        let inner = start + 1;
        let close_at = text[inner..end].find(q).map(|i| inner + i);
        if close_at.is_some_and(|c| offset > c) {
            return None;
        }
        let stop = close_at.unwrap_or_else(|| {
            let rest = &text[inner..end];
            inner + rest.find(stops).unwrap_or(rest.len())
        });
        let stop = inner + text[inner..stop].trim_end_matches([' ', '\t']).len();
        return Some(EntrySlot {
            replace: inner..stop.max(offset),
            quoted: true,
            close: close_at.is_none().then_some(q),
            new_list: None,
        });
    }
    let rest = &text[start..end];
    let stop = start + rest.find(stops).unwrap_or(rest.len());
    let stop = start + text[start..stop].trim_end_matches([' ', '\t']).len();
    (offset <= stop.max(start)).then_some(EntrySlot {
        replace: start..stop.max(offset),
        quoted: false,
        close: None,
        new_list: None,
    })
}

/// The entries a list (`tools`, `skills`) already has outside the one being completed, which
/// completion does not offer again.
fn named_elsewhere<'a>(
    list: Option<&'a [crate::note::model::Spanned<String>]>,
    slot: &EntrySlot,
) -> Vec<&'a str> {
    list.unwrap_or_default()
        .iter()
        .filter(|e| e.span.end < slot.replace.start || e.span.start > slot.replace.end)
        .map(|e| e.value.as_str())
        .collect()
}

/// What completing `entry` in `slot` inserts: quoted as the slot needs, its quote closed, and
/// inside a new `[...]` after a bare `key:`.
fn entry_text(slot: &EntrySlot, entry: &str) -> String {
    let mut value = if slot.quoted { entry.to_owned() } else { crate::note::tools::entry_yaml(entry) };
    value.extend(slot.close);
    match slot.new_list {
        Some(space) => format!("{}[{value}]", if space { " " } else { "" }),
        None => value,
    }
}

/// The configured MCP servers, then the tools of those a run has listed, as entries of
/// `tools` (those the note already names elsewhere left out).
pub(super) fn tool_entries<Tz: TimeZone>(ctx: &Ctx<Tz>, slot: &EntrySlot) -> Vec<CompletionItem> {
    let named = named_elsewhere(ctx.analysis.live.as_ref().and_then(|l| l.tools.as_deref()), slot);
    let mut items = Vec::new();
    for server in &ctx.mcp.servers {
        if named.contains(&server.name.as_str()) {
            continue;
        }
        let detail = match &server.tools {
            Some(tools) => format!("MCP server: all {}", crate::text::count(tools.len(), "tool")),
            None => "MCP server: all its tools".to_owned(),
        };
        let documentation = server.tools.as_ref().map(|tools| {
            tools
                .iter()
                .map(|t| format!("- `{}`: {}", t.name, t.description.as_deref().unwrap_or("")))
                .collect::<Vec<_>>()
                .join("\n")
        });
        items.push((server.name.clone(), CompletionKind::McpServer, detail, documentation));
    }
    for server in &ctx.mcp.servers {
        for t in server.tools.iter().flatten() {
            let entry = format!("{}.{}", server.name, t.name);
            if named.contains(&entry.as_str()) {
                continue;
            }
            let detail = t.description.as_deref().and_then(|d| d.lines().next()).map_or_else(
                || format!("a tool of MCP server `{}`", server.name),
                |d| crate::text::short::clip(d, 80),
            );
            items.push((entry, CompletionKind::McpTool, detail, Some(tool_doc(t))));
        }
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, (label, kind, detail, documentation))| slot.item(i, label, kind, detail, documentation))
        .collect()
}

/// The folder's sources as entries of `sources` (those the note already lists elsewhere left out).
pub(super) fn source_entries<Tz: TimeZone>(ctx: &Ctx<Tz>, slot: &EntrySlot) -> Vec<CompletionItem> {
    let named = named_elsewhere(ctx.analysis.live.as_ref().and_then(|l| l.sources.as_deref()), slot);
    ctx.sources
        .unwrap_or_default()
        .iter()
        .filter(|s| !named.contains(&s.name.as_str()))
        .enumerate()
        .map(|(i, s)| {
            let waiting = if s.waiting_for_trust { ", once the folder is trusted" } else { "" };
            let doc = format!(
                "Events from `[sources.{}]` may update this note (`livenote sources` shows what it saw last).",
                s.name
            );
            slot.item(i, s.name.clone(), CompletionKind::Source, format!("{} source{waiting}", s.kind), Some(doc))
        })
        .collect()
}

/// The known skills as entries of `skills` (those the note already lists elsewhere left out).
pub(super) fn skill_entries<Tz: TimeZone>(ctx: &Ctx<Tz>, slot: &EntrySlot) -> Vec<CompletionItem> {
    let named = named_elsewhere(ctx.analysis.live.as_ref().and_then(|l| l.skills.as_deref()), slot);
    ctx.skills
        .skills
        .iter()
        .filter(|s| !named.contains(&s.name.as_str()))
        .enumerate()
        .map(|(i, s)| {
            let detail = format!("{} skill", s.source.as_str());
            slot.item(i, s.name.clone(), CompletionKind::Skill, detail, Some(s.description.clone()))
        })
        .collect()
}

/// A tool's description and arguments, in markdown (completion and hover).
pub(crate) fn tool_doc(t: &crate::note::tools::McpToolInfo) -> String {
    let mut doc = t.description.clone().unwrap_or_default();
    if !t.params.is_empty() {
        let params: Vec<String> = t.params.iter().map(|p| format!("`{p}`")).collect();
        if !doc.is_empty() {
            doc.push_str("\n\n");
        }
        doc.push_str(&format!("Arguments: {}", params.join(", ")));
    }
    doc
}
