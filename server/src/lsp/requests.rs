//! Requests: translate parameters, take the document's snapshot, delegate to `ide::*` (or the
//! index), translate back. Completion, hover, code actions, lenses, inlay hints, workspace
//! symbols (fuzzy ranked) and pulled diagnostics.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tower_lsp_server::ls_types::*;

use super::convert;
use super::documents::Snapshot;
use super::file_uri::FilePath;
use super::run_facts::{FactsCache, facts};
use super::snapshots::{
    diagnostics_for, mcp_for, providers_for, rel_path, skills_for, snapshot, sources_for,
};
use super::state::State;
use crate::ide::{self, Ctx};
use crate::status::{self, RunFacts};
use crate::text::LineIndex;

/// Run an `ide` feature over the document's snapshot.
fn with_ctx<R>(
    state: &State,
    uri: &Uri,
    f: impl FnOnce(&Ctx<'_, crate::schedule::Zone>, &Snapshot) -> R,
) -> Option<R> {
    let snap = snapshot(state, uri)?;
    let zone = state.opts.zone;
    let path = uri.file_path();
    // A run undone in the buffer still ran: its end, from the run store.
    let settled = super::run_facts::settled(state, path.as_deref(), &snap.analysis);
    let providers = providers_for(state, uri).unwrap_or_default();
    let mcp = mcp_for(state, uri).unwrap_or_default();
    let skills = skills_for(state, uri).unwrap_or_default();
    let sources = sources_for(state, uri);
    let ctx = Ctx {
        text: &snap.text,
        analysis: settled.as_ref().unwrap_or(&snap.analysis),
        now: state.opts.clock.now(),
        tz: &zone,
        providers: &providers,
        mcp: &mcp,
        facts: facts(state, path.as_deref()),
        last_run: None,
        skills: &skills,
        sources: sources.as_deref(),
        recent_events: &[],
    };
    Some(f(&ctx, &snap))
}

pub fn completion(state: &State, params: CompletionParams) -> Option<CompletionResponse> {
    let pos = params.text_document_position;
    let enc = state.encoding();
    let resolves = state.caps().resolves_documentation;
    let items = with_ctx(state, &pos.text_document.uri, |ctx, snap| {
        let offset = convert::offset(&snap.text, &snap.lines, pos.position, enc);
        ide::completion::completion(ctx, offset)
            .into_iter()
            .map(|mut c| {
                // Costly documentation: computed now, or named for `completionItem/resolve`.
                let data = match c.later.take() {
                    Some(ide::completion::LaterDoc::NextFires(expr)) if resolves => {
                        Some(serde_json::json!({ RESOLVE_NEXT_FIRES: expr }))
                    }
                    Some(later) => {
                        c.documentation = later.render(ctx.now, ctx.tz);
                        None
                    }
                    None => None,
                };
                (c, data)
            })
            .map(|(c, data)| CompletionItem {
                label: c.label.clone(),
                kind: Some(match c.kind {
                    ide::completion::CompletionKind::Key => CompletionItemKind::PROPERTY,
                    ide::completion::CompletionKind::Value => CompletionItemKind::VALUE,
                    ide::completion::CompletionKind::Snippet => CompletionItemKind::SNIPPET,
                    ide::completion::CompletionKind::Preset => CompletionItemKind::CONSTANT,
                    ide::completion::CompletionKind::Provider => CompletionItemKind::MODULE,
                    ide::completion::CompletionKind::McpServer => CompletionItemKind::MODULE,
                    ide::completion::CompletionKind::McpTool => CompletionItemKind::FUNCTION,
                    ide::completion::CompletionKind::Skill => CompletionItemKind::REFERENCE,
                    ide::completion::CompletionKind::Source => CompletionItemKind::EVENT,
                }),
                detail: c.detail.clone(),
                documentation: c.documentation.clone().map(|d| {
                    Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: d })
                }),
                insert_text_format: Some(if c.snippet {
                    InsertTextFormat::SNIPPET
                } else {
                    InsertTextFormat::PLAIN_TEXT
                }),
                // Inserts already carry their indentation and the note's line ending.
                insert_text_mode: Some(InsertTextMode::AS_IS),
                text_edit: Some(CompletionTextEdit::Edit(tower_lsp_server::ls_types::TextEdit {
                    range: convert::range(&snap.text, &snap.lines, &c.replace, enc),
                    new_text: c.insert_text.clone(),
                })),
                sort_text: c.sort_text.clone(),
                filter_text: Some(c.label.clone()),
                data,
                ..Default::default()
            })
            .collect::<Vec<_>>()
    })?;
    Some(CompletionResponse::Array(items))
}

/// The key of a completion item's `data` naming the cron expression whose next fire times
/// `completionItem/resolve` documents.
const RESOLVE_NEXT_FIRES: &str = "livenoteNextFires";

/// `completionItem/resolve`: the documentation [`completion`] left for later, at the server's
/// now and zone. An item it does not know (another server's, a client's own) comes back as it
/// was.
pub fn completion_resolve(state: &State, mut item: CompletionItem) -> CompletionItem {
    let later = item
        .data
        .as_ref()
        .and_then(|d| d.get(RESOLVE_NEXT_FIRES))
        .and_then(serde_json::Value::as_str)
        .map(|expr| ide::completion::LaterDoc::NextFires(expr.to_owned()));
    if let Some(doc) = later.and_then(|l| l.render(state.opts.clock.now(), &state.opts.zone)) {
        item.documentation =
            Some(Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: doc }));
    }
    item
}

pub fn hover(state: &State, params: HoverParams) -> Option<Hover> {
    let pos = params.text_document_position_params;
    let enc = state.encoding();
    let uri = &pos.text_document.uri;
    with_ctx(state, uri, |ctx, snap| {
        // What the latest run cost: from the end of its transcript, read once per run.
        let last_run_id = snap.analysis.live.as_ref().and_then(|l| l.last_run_id.as_deref());
        let last_run = last_run_id.and_then(|id| {
            let path = uri.file_path()?;
            let engine = state.engine_for(&path)?;
            state.world.last_run(&engine.root, id, || engine.last_run(id))
        });
        // Only here too: the events routing gave the note, for hover on its criteria.
        let recent = match snap.analysis.live.as_ref().and_then(|l| l.event_match_criteria.as_ref()) {
            Some(_) => super::snapshots::recent_events_for(state, uri),
            None => Vec::new(),
        };
        let ctx = &Ctx { last_run: last_run.as_ref(), recent_events: &recent, ..*ctx };
        let offset = convert::offset(&snap.text, &snap.lines, pos.position, enc);
        let path = pos.text_document.uri.file_path();
        let entries = || super::run_facts::memory_entries(state, path.as_deref());
        ide::memory::hover(ctx, offset, entries).map(|h| Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: h.markdown }),
            range: Some(convert::range(&snap.text, &snap.lines, &h.range, enc)),
        })
    })
    .flatten()
}

/// An entry of `live.skills`: its skill's file, at its start.
pub fn definition(state: &State, params: GotoDefinitionParams) -> Option<GotoDefinitionResponse> {
    let pos = params.text_document_position_params;
    let enc = state.encoding();
    with_ctx(state, &pos.text_document.uri, |ctx, snap| {
        let offset = convert::offset(&snap.text, &snap.lines, pos.position, enc);
        let d = ide::definition::definition(ctx, offset)?;
        let uri = state.uri_for(&d.path)?;
        Some(GotoDefinitionResponse::Scalar(Location { uri, range: Range::default() }))
    })
    .flatten()
}

fn lsp_command(uri: &Uri, c: &ide::Command) -> Command {
    let mut args = vec![json!(uri.as_str())];
    args.extend(c.args.iter().cloned());
    Command { title: c.title.clone(), command: c.id.to_owned(), arguments: Some(args) }
}

pub fn code_action(state: &State, params: CodeActionParams) -> Option<CodeActionResponse> {
    let uri = params.text_document.uri;
    let enc = state.encoding();
    let version = state.docs().get(&uri).map(|d| d.version);
    with_ctx(state, &uri, |ctx, snap| {
        // Whether there is something to undo: the note's history, read once and kept.
        let last_run_id = snap.analysis.live.as_ref().and_then(|l| l.last_run_id.as_deref());
        let undoable = uri.file_path().is_some_and(|p| {
            state.engine_for(&p).is_some_and(|e| {
                state.world.undo_history(&p, || e.undo_history(&p)).can_undo(&snap.text, last_run_id)
            })
        });
        let ctx = &Ctx { facts: RunFacts { undoable, ..ctx.facts }, ..*ctx };
        let start = convert::offset(&snap.text, &snap.lines, params.range.start, enc);
        let end = convert::offset(&snap.text, &snap.lines, params.range.end, enc).max(start);
        let shown = ide::actions::shown_diagnostics(ctx);
        let lsp_diags = convert::diagnostics(&snap.text, &snap.lines, &shown, enc);
        let mut actions = ide::actions::code_actions(ctx, start..end);
        if snap.analysis.live.is_some() {
            let entries = super::run_facts::memory_entries(state, uri.file_path().as_deref());
            actions.extend(ide::memory::clear_action(ctx, &entries));
        }
        actions
            .into_iter()
            .map(|a| {
                let kind = match a.kind {
                    ide::actions::ActionKind::QuickFix => CodeActionKind::QUICKFIX,
                    ide::actions::ActionKind::Refactor => CodeActionKind::REFACTOR_REWRITE,
                    ide::actions::ActionKind::Source => CodeActionKind::SOURCE,
                };
                let edit = (!a.edits.is_empty()).then(|| {
                    convert::document_edit(&uri, version, &snap.text, Some(&snap.lines), &a.edits, enc)
                });
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: a.title.clone(),
                    kind: Some(kind),
                    diagnostics: Some(
                        a.diagnostics.iter().filter_map(|&i| lsp_diags.get(i).cloned()).collect(),
                    ),
                    // An action with edits carries them (versioned) and no command: the client
                    // applies the edit itself; running the command too would rewrite twice.
                    command: if edit.is_some() {
                        None
                    } else {
                        a.command.as_ref().map(|c| lsp_command(&uri, c))
                    },
                    edit,
                    is_preferred: Some(a.preferred),
                    disabled: None,
                    data: None,
                })
            })
            .chain(ask_action(state, &uri))
            .collect()
    })
}

/// "Ask livenote…" on any note, for clients that can prompt for the sentence (they declare
/// `experimental.livenote.ask`): the command with the note's URI alone, which they intercept.
fn ask_action(state: &State, uri: &Uri) -> Option<CodeActionOrCommand> {
    let asks = state.caps.read().is_ok_and(|c| c.ask);
    asks.then(|| {
        CodeActionOrCommand::CodeAction(CodeAction {
            title: "Ask livenote…".to_owned(),
            command: Some(Command {
                title: "Ask livenote…".to_owned(),
                command: ide::commands::ASK.to_owned(),
                arguments: Some(vec![json!(uri.as_str())]),
            }),
            ..CodeAction::default()
        })
    })
}

pub fn code_lens(state: &State, params: CodeLensParams) -> Option<Vec<CodeLens>> {
    let uri = params.text_document.uri;
    let enc = state.encoding();
    with_ctx(state, &uri, |ctx, snap| {
        ide::lens::code_lenses(ctx)
            .into_iter()
            .map(|l| CodeLens {
                range: convert::range(&snap.text, &snap.lines, &l.range, enc),
                command: Some(match &l.command {
                    Some(c) => lsp_command(&uri, &ide::Command { title: l.title.clone(), ..c.clone() }),
                    // A lens without a command still needs one to show its title.
                    None => Command { title: l.title.clone(), command: String::new(), arguments: None },
                }),
                data: None,
            })
            .collect()
    })
}

pub fn inlay_hint(state: &State, params: InlayHintParams) -> Option<Vec<InlayHint>> {
    let uri = params.text_document.uri;
    let enc = state.encoding();
    let shown = ide::hints::Shown { lens: state.caps().code_lens };
    with_ctx(state, &uri, |ctx, snap| {
        let start = convert::offset(&snap.text, &snap.lines, params.range.start, enc);
        let end = convert::offset(&snap.text, &snap.lines, params.range.end, enc).max(start);
        ide::hints::inlay_hints(ctx, start..end, shown)
            .into_iter()
            .map(|h| InlayHint {
                position: convert::position(&snap.text, &snap.lines, h.offset, enc),
                label: InlayHintLabel::String(h.label.clone()),
                kind: None,
                text_edits: None,
                tooltip: h.tooltip.clone().map(InlayHintTooltip::String),
                padding_left: Some(true),
                padding_right: None,
                data: None,
            })
            .collect()
    })
}

/// How long `workspace/symbol` waits for the workspace's first index before answering with the
/// skills alone (an index of tens of thousands of notes takes a few seconds).
const FIRST_INDEX_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Wait until the workspace's first index is built, when one is being built: a picker opened
/// right after the editor started lists every note rather than none. Without a folder (no
/// root yet) there is nothing to wait for.
pub async fn first_index(state: &State) {
    let mut indexed = state.indexed.subscribe();
    if state.roots.read().map(|r| r.is_empty()).unwrap_or(true) {
        return;
    }
    let built = indexed.wait_for(|built| *built);
    if tokio::time::timeout(FIRST_INDEX_WAIT, built).await.is_err() {
        tracing::warn!("symbols: the workspace is still being indexed; answering without its notes");
    }
}

/// Live notes whose title or path matches the query as a subsequence, best first, then the
/// skills; an empty list, never `null`, before the workspace is indexed.
pub fn symbol(state: &State, params: WorkspaceSymbolParams) -> WorkspaceSymbolResponse {
    let query = params.query.to_lowercase();
    let now = state.opts.clock.now();
    let zone = state.opts.zone;
    let enc = state.encoding();
    let trust = FactsCache::new(state);
    let found = state.with_index(|idx| {
        // Score everything (cheap), then build symbols for the best 200 only: statuses and
        // next fires cost a schedule computation each.
        let mut scored: Vec<(
            i64,
            &PathBuf,
            &Arc<crate::workspace::index::Entry>,
            &crate::note::model::Live,
        )> = idx
            .live_notes()
            .filter_map(|(path, entry, live)| {
                // An empty query (a picker opening) matches every note alike: no strings to build.
                let score = if query.is_empty() {
                    0
                } else {
                    fuzzy_score(&query, &entry.title.to_lowercase())
                        .max(fuzzy_score(&query, &rel_path(idx, path).to_lowercase()))?
                };
                Some((score, path, entry, live))
            })
            .collect();
        // Best score, then title, then path: a total order, so only the best 200 need sorting.
        type Scored<'a> =
            (i64, &'a PathBuf, &'a Arc<crate::workspace::index::Entry>, &'a crate::note::model::Live);
        let order = |a: &Scored, b: &Scored| {
            b.0.cmp(&a.0).then_with(|| a.2.title.cmp(&b.2.title)).then_with(|| a.1.cmp(b.1))
        };
        if scored.len() > SYMBOLS_MAX {
            scored.select_nth_unstable_by(SYMBOLS_MAX - 1, order);
            scored.truncate(SYMBOLS_MAX);
        }
        scored.sort_unstable_by(order);
        scored
            .into_iter()
            .filter_map(|(_, path, entry, live)| {
                let rel = rel_path(idx, path);
                let uri = state.uri_for(path)?;
                let lines = LineIndex::new(&entry.head);
                let range = convert::range(&entry.head, &lines, &live.key_span, enc);
                let st = status::status(live, trust.facts(Some(path)), now, &zone).as_str();
                let next = entry
                    .schedule
                    .upcoming(live, now, &zone)
                    .next_due
                    .map(|t| {
                        if t <= now {
                            " · due now".to_owned()
                        } else {
                            format!(" · next {}", ide::text::at_local(t, now, &zone))
                        }
                    })
                    .unwrap_or_default();
                #[allow(deprecated)]
                let info = SymbolInformation {
                    name: entry.title.clone(),
                    kind: SymbolKind::FILE,
                    tags: None,
                    deprecated: None,
                    location: Location { uri, range },
                    container_name: Some(format!("{st}{next} · {rel}")),
                };
                Some(info)
            })
            .collect::<Vec<_>>()
    });
    let mut found = found.unwrap_or_default();
    found.extend(skill_symbols(state, &query));
    WorkspaceSymbolResponse::Flat(found)
}

/// The skills with a file (each root's own, the user's) whose name matches the query, best
/// first, after the notes.
fn skill_symbols(state: &State, query: &str) -> Vec<SymbolInformation> {
    let mut scored = Vec::new();
    for engine in state.engines() {
        let Some(facts) = state.world.root(&engine.root) else { continue };
        let catalog = facts.skills.clone();
        for s in catalog.skills.iter().cloned() {
            let Some(path) = s.path.clone() else { continue };
            let Some(score) = fuzzy_score(query, &s.name.to_lowercase()) else { continue };
            let shown = crate::workspace::NotePath::of(&engine.root, &path)
                .map_or_else(|| path.display().to_string(), |p| p.into_string());
            scored.push((score, s, path, shown));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    scored.dedup_by(|a, b| a.2 == b.2);
    scored
        .into_iter()
        .take(SYMBOLS_MAX)
        .filter_map(|(_, s, path, shown)| {
            #[allow(deprecated)]
            let info = SymbolInformation {
                name: s.name.clone(),
                kind: SymbolKind::FUNCTION,
                tags: None,
                deprecated: None,
                location: Location { uri: state.uri_for(&path)?, range: Range::default() },
                container_name: Some(format!("{} skill · {shown}", s.source.as_str())),
            };
            Some(info)
        })
        .collect()
}

/// The most workspace symbols answered at once (pickers show the best few anyway).
const SYMBOLS_MAX: usize = 200;

/// Subsequence match score: higher for earlier and contiguous matches; `None` if no match.
fn fuzzy_score(query: &str, candidate: &str) -> Option<i64> {
    if query.is_empty() {
        return Some(0);
    }
    let mut score = 0i64;
    let mut last: Option<usize> = None;
    let mut chars = candidate.char_indices();
    for q in query.chars().filter(|c| !c.is_whitespace()) {
        let (i, _) = chars.by_ref().find(|(_, c)| *c == q)?;
        score += match last {
            Some(l) if i == l + 1 => 10,
            _ => 1,
        };
        if i == 0 {
            score += 5;
        }
        last = Some(i);
    }
    Some(score * 100 - candidate.len() as i64)
}

pub fn document_diagnostic(
    state: &State,
    params: DocumentDiagnosticParams,
) -> DocumentDiagnosticReportResult {
    let (items, _) = diagnostics_for(state, &params.text_document.uri);
    DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(
        RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id: None, items },
        },
    ))
}

/// Diagnostics of every indexed note that is not open (open ones are pulled per document).
pub fn workspace_diagnostic(
    state: &State,
    _params: WorkspaceDiagnosticParams,
) -> WorkspaceDiagnosticReportResult {
    let enc = state.encoding();
    let open: Vec<Uri> = state.docs().keys().cloned().collect();
    let (now, zone) = (state.opts.clock.now(), state.opts.zone);
    let items = state
        .with_index(|idx| {
            idx.entries()
                .filter_map(|(path, e)| {
                    let shown = super::snapshots::entry_diagnostics(e, now, &zone);
                    if shown.is_empty() {
                        return None;
                    }
                    let uri = state.uri_for(path)?;
                    if open.contains(&uri) {
                        return None;
                    }
                    let lines = LineIndex::new(&e.head);
                    Some(WorkspaceDocumentDiagnosticReport::Full(WorkspaceFullDocumentDiagnosticReport {
                        uri,
                        version: None,
                        full_document_diagnostic_report: FullDocumentDiagnosticReport {
                            result_id: None,
                            items: convert::diagnostics(&e.head, &lines, &shown, enc),
                        },
                    }))
                })
                .collect()
        })
        .unwrap_or_default();
    WorkspaceDiagnosticReportResult::Report(WorkspaceDiagnosticReport { items })
}

#[cfg(test)]
mod tests {
    use super::fuzzy_score;

    #[test]
    fn fuzzy_prefers_contiguous_early_matches() {
        let a = fuzzy_score("chi", "chicago time");
        let b = fuzzy_score("chi", "weekly chart index");
        assert!(a > b, "{a:?} {b:?}");
        assert_eq!(fuzzy_score("xyz", "chicago"), None);
        assert_eq!(fuzzy_score("", "anything"), Some(0));
    }
}
