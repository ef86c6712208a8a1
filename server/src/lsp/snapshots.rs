//! What the handlers read about a note: the snapshot of an open document (analysed with its
//! root's provider names), its current text (the buffer, else the file), its diagnostics, its
//! path for display. Reading only; nothing here talks to the client.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use super::convert;
use super::documents::Snapshot;
use super::file_uri::FilePath;
use super::state::State;
use crate::note;
use crate::text::LineIndex;
use crate::workspace;

/// The options a note at `path` is analysed with outside a snapshot: its root's backoff cap
/// ([`max_backoff_for`]); provider names come with configuration, so that check is skipped.
pub(super) fn note_options(state: &State, path: Option<&std::path::Path>) -> note::Options<'static> {
    let max_backoff = path.and_then(|p| max_backoff_for(state, p));
    note::Options { providers: None, mcp: None, skills: None, scan_body: true, max_backoff }
}

/// The backoff's cap of the root a note at `path` belongs to (`[scheduler] max_backoff` of
/// its engine's configuration), so the lens, hints, hover and `listNotes` show the retry the
/// scheduler will make; `None` outside every root (the default cap).
pub(super) fn max_backoff_for(state: &State, path: &std::path::Path) -> Option<chrono::TimeDelta> {
    let engine = state.engine_for(path)?;
    engine.config.read().ok().map(|c| c.scheduler.backoff_cap())
}

/// The diagnostics of an open document, or of a closed note from the index.
pub(super) fn diagnostics_for(state: &State, uri: &Uri) -> (Vec<Diagnostic>, Option<i32>) {
    let enc = state.encoding();
    let (now, zone) = (state.opts.clock.now(), state.opts.zone);
    if let Some(snap) = snapshot(state, uri) {
        let shown = note::expiry::with_timed(&snap.text, &snap.analysis, now, &zone);
        let mut diags = convert::diagnostics(&snap.text, &snap.lines, &shown, enc);
        let too_long = instructions_too_long(state, uri, &snap.text);
        diags.extend(convert::diagnostics(&snap.text, &snap.lines, &too_long, enc));
        let skill_file = skill_file_diagnostics(state, uri, &snap.text);
        diags.extend(convert::diagnostics(&snap.text, &snap.lines, &skill_file, enc));
        // Only inside a root: outside every root no configuration says what sources exist.
        if let Some(sources) = sources_for(state, uri) {
            let found = note::sources::source_diagnostics(&snap.text, snap.analysis.live.as_ref(), &sources);
            diags.extend(convert::diagnostics(&snap.text, &snap.lines, &found, enc));
        }
        let copy = conflict_copy_diagnostics(uri, snap.analysis.live.as_ref());
        diags.extend(convert::diagnostics(&snap.text, &snap.lines, &copy, enc));
        return (diags, Some(snap.version));
    }
    let Some(path) = uri.file_path() else { return (Vec::new(), None) };
    let diags = state
        .with_index(|idx| {
            idx.get(&path).map(|e| {
                let lines = LineIndex::new(&e.head);
                let mut all = entry_diagnostics(e, now, &zone);
                all.extend(conflict_copy_diagnostics(uri, e.live.as_ref()));
                convert::diagnostics(&e.head, &lines, &all, enc)
            })
        })
        .flatten()
        .unwrap_or_default();
    (diags, None)
}

/// The diagnostics of a closed note from the index at `now`: its analysis of the frontmatter
/// (`until` is there) and those of the instant.
pub(super) fn entry_diagnostics(
    e: &crate::workspace::index::Entry,
    now: chrono::DateTime<chrono::Utc>,
    zone: &crate::schedule::Zone,
) -> Vec<note::Diagnostic> {
    let mut all = e.diagnostics.clone();
    all.extend(note::expiry::diagnostics(&e.head, e.live.as_ref(), now, zone));
    all
}

/// `live/sync-conflict-copy` when the document's file name is a sync tool's conflict copy.
fn conflict_copy_diagnostics(uri: &Uri, live: Option<&note::model::Live>) -> Vec<note::Diagnostic> {
    let Some(path) = uri.file_path() else { return Vec::new() };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    note::conflict::diagnostics(&name, live)
}

/// `live/instructions-too-long` when the document is one of its root's standing-instructions
/// files (`AGENTS.md`, `[agent] instructions`) and longer than their budget.
fn instructions_too_long(state: &State, uri: &Uri, text: &str) -> Vec<note::Diagnostic> {
    let Some(path) = uri.file_path() else { return Vec::new() };
    let Some(engine) = state.engine_for(&path) else { return Vec::new() };
    let Some(rel) = workspace::NotePath::of(&engine.root, &path) else { return Vec::new() };
    let Ok(config) = engine.config.read() else { return Vec::new() };
    if !crate::instructions::is_instructions_file(&config.agent, rel.as_str()) {
        return Vec::new();
    }
    note::instructions_too_long(text, config.agent.instructions_max_chars).into_iter().collect()
}

/// The diagnostics of a skill file of its root (`[skills] dirs`): missing fields, a name
/// another skill file uses too.
fn skill_file_diagnostics(state: &State, uri: &Uri, text: &str) -> Vec<note::Diagnostic> {
    let Some(path) = uri.file_path() else { return Vec::new() };
    let Some(engine) = state.engine_for(&path) else { return Vec::new() };
    let Some(rel) = workspace::NotePath::of(&engine.root, &path) else { return Vec::new() };
    let Ok(dirs) = engine.config.read().map(|c| c.skills.dirs.clone()) else { return Vec::new() };
    if !crate::skills::is_skill_file(&dirs, rel.as_str()) {
        return Vec::new();
    }
    crate::skills::file_diagnostics(&engine.root, &dirs, rel.as_str(), text)
}

/// Whether `path` is a skill file of its root (`[skills] dirs`).
pub(super) fn is_skill_file(state: &State, path: &Path) -> bool {
    let Some(engine) = state.engine_for(path) else { return false };
    let Some(rel) = workspace::NotePath::of(&engine.root, path) else { return false };
    engine.config.read().is_ok_and(|c| crate::skills::is_skill_file(&c.skills.dirs, rel.as_str()))
}

/// The skills a note at `uri` may name in `live.skills` (its root's, shown whether or not the
/// folder is trusted; the user's; livenote's), as the world last read them; `None` outside
/// every root.
pub(super) fn skills_for(state: &State, uri: &Uri) -> Option<Arc<note::skills::SkillCatalog>> {
    let path = uri.file_path()?;
    let engine = state.engine_for(&path)?;
    state.world.root(&engine.root).map(|f| f.skills.clone())
}

pub(super) fn snapshot(state: &State, uri: &Uri) -> Option<Arc<Snapshot>> {
    let (text, lines, version) = {
        let docs = state.docs();
        let doc = docs.get(uri)?;
        if let Some(snap) = doc.cached_snapshot() {
            return Some(snap);
        }
        doc.unanalysed()
    };
    // Analysed outside the documents lock: a keystroke applied meanwhile does not wait for it.
    let providers = providers_for(state, uri);
    let mcp = mcp_for(state, uri);
    let skills = skills_for(state, uri);
    let opts = note::Options {
        providers: providers.as_deref(),
        mcp: mcp.as_deref(),
        skills: skills.as_deref(),
        scan_body: true,
        max_backoff: uri.file_path().and_then(|p| max_backoff_for(state, &p)),
    };
    let snap = super::documents::analysed(text, lines, version, &opts);
    Some(match state.docs().get_mut(uri) {
        Some(d) => d.keep(snap),
        None => snap,
    })
}

/// The provider names a note at `uri` may use (its root's configuration, the folder's own
/// file included even before it is trusted); `None` outside every root: then nothing checks
/// `provider:`.
pub(super) fn providers_for(state: &State, uri: &Uri) -> Option<Vec<String>> {
    let path = uri.file_path()?;
    let engine = state.engine_for(&path)?;
    engine.config.read().ok().map(|c| c.names_for_notes())
}

/// The sources of the root a note at `uri` belongs to that may send it events
/// (`Config::sources_for_notes`); `None` outside every root.
pub(super) fn sources_for(state: &State, uri: &Uri) -> Option<Vec<note::sources::SourceRef>> {
    let path = uri.file_path()?;
    let engine = state.engine_for(&path)?;
    let config = engine.config.read().ok()?;
    Some(config.sources_for_notes())
}

/// The latest events routing gave the note at `uri`, newest first (`World::recent_events`).
pub(super) fn recent_events_for(state: &State, uri: &Uri) -> Vec<note::sources::MatchedEvent> {
    let Some(path) = uri.file_path() else { return Vec::new() };
    let Some(engine) = state.engine_for(&path) else { return Vec::new() };
    state.world.recent_events(&engine.root, engine.rel(&path).as_str())
}

/// A file of a root's `done/` changed: the root's recent events read its record.
pub(super) fn recent_events_changed(state: &State, path: &Path) {
    let engines = state.engines();
    if let Some(engine) = engines.iter().find(|e| path.parent() == Some(&crate::events::done_dir(&e.root))) {
        state.world.events_done(&engine.root);
    }
}

/// The MCP servers a note at `uri` may name in `live.tools`, with the tools the cache knew
/// when the world last read it; `None` outside every root.
pub(super) fn mcp_for(state: &State, uri: &Uri) -> Option<Arc<note::tools::McpCatalog>> {
    let path = uri.file_path()?;
    let engine = state.engine_for(&path)?;
    state.world.root(&engine.root).map(|f| f.mcp.clone())
}

/// Read `engine`'s root facts from the disk into the world ([`super::world::RootFacts`]: trust,
/// skills, MCP tools; the locks held are kept as they were): when the root appears, and when a file event or
/// the server's own change (a trust, a configuration) may have changed them. Never from a
/// request.
pub(super) fn refresh_root(state: &State, engine: &Arc<crate::runs::Engine>) {
    let trusted = engine.trusted();
    let (dirs, mcp) = match engine.config.read() {
        Ok(c) => (c.skills.dirs.clone(), crate::mcp::catalog(&c, state.opts.mcp_tools.as_deref())),
        Err(_) => return,
    };
    let skills = crate::skills::catalog(crate::skills::Sources {
        root: &engine.root,
        dirs: &dirs,
        workspace: true,
        user_dir: state.opts.user_dir.as_deref(),
    });
    // The locks are their own events' to look at again ([`refresh_locks`], [`refresh_lock`]):
    // with a lock file per note that ever ran, that is a file per note.
    let held = state.world.root(&engine.root).map(|f| f.held.clone()).unwrap_or_default();
    let facts = super::world::RootFacts { trusted, skills: Arc::new(skills), mcp: Arc::new(mcp), held };
    state.world.set_root(&engine.root, facts);
}

/// [`refresh_root`] for every root; the facts of roots that went are dropped.
pub(super) fn refresh_world(state: &State) {
    let engines = state.engines();
    for engine in &engines {
        refresh_root(state, engine);
    }
    state.world.retain_roots(&engines.iter().map(|e| e.root.clone()).collect::<Vec<_>>());
}

/// [`refresh_world`], and every root's locks looked at: when the index is (re)built and when
/// the watcher starts (what happened before it announced nothing).
pub(super) fn refresh_world_and_locks(state: &State) {
    refresh_world(state);
    for engine in state.engines() {
        refresh_locks(state, &engine);
        // Runs into another editor's buffer recorded before the watcher looked.
        engine.attempts.load();
    }
}

/// The notes of `engine`'s root whose run lock is held now (by another process, or by a run
/// of this one, which the registry tells first).
fn held_locks(state: &State, engine: &Arc<crate::runs::Engine>) -> std::collections::HashSet<PathBuf> {
    let names = engine.store.lock_names();
    // No lock file at all (a vault that never ran here): nothing to look up.
    if names.is_empty() {
        return Default::default();
    }
    let engines = state.engines();
    state
        .with_index(|idx| {
            idx.entries()
                .map(|(p, _)| p)
                .filter(|p| super::state::engine_among(&engines, p).is_some_and(|e| Arc::ptr_eq(e, engine)))
                .filter(|p| engine.store.is_locked_among(&engine.rel(p), &names))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The run lock of the note at `path` looked at again (its file changed: another process's run
/// writes it right after taking the lock, and again before releasing it); lenses and hints
/// are redrawn when that changed what they show.
pub(super) fn refresh_lock(state: &State, path: &Path) {
    let engines = state.engines();
    let Some(engine) = super::state::engine_among(&engines, path) else { return };
    let held = engine.store.is_locked(&engine.rel(path));
    let mut changed = false;
    state.world.update_root(&engine.root, |f| {
        changed = if held { f.held.insert(path.to_path_buf()) } else { f.held.remove(path) };
    });
    if changed {
        state.refresh_views();
    }
}

/// The lock file `name` of `engine`'s root changed (made by another process's run): the note it
/// belongs to has its lock looked at again; a name no indexed note has, every note's.
pub(super) fn refresh_lock_file(state: &State, engine: &Arc<crate::runs::Engine>, name: &str) {
    let engines = state.engines();
    let note = state
        .with_index(|idx| {
            idx.entries()
                .map(|(p, _)| p)
                .filter(|p| super::state::engine_among(&engines, p).is_some_and(|e| Arc::ptr_eq(e, engine)))
                .find(|p| crate::runs::store::Store::key(&engine.rel(p)) == name)
                .cloned()
        })
        .flatten();
    match note {
        Some(path) => refresh_lock(state, &path),
        None => refresh_locks(state, engine),
    }
}

/// A run of this process ended (its lock released): the note's lock, memory and history and
/// the costs of its root's runs are looked at again.
pub(super) fn run_ended(state: &State, path: &Path) {
    refresh_lock(state, path);
    let engines = state.engines();
    if let Some(engine) = super::state::engine_among(&engines, path) {
        state.world.forget_runs(&engine.root);
    }
    // The run may have saved to the note's memory, and recorded its history.
    state.world.forget_memory(path);
    state.world.forget_undo(path);
}

/// [`refresh_lock`] for every note of `engine`'s root (a lock file appeared or went).
pub(super) fn refresh_locks(state: &State, engine: &Arc<crate::runs::Engine>) {
    let held = held_locks(state, engine);
    let mut changed = false;
    state.world.update_root(&engine.root, |f| {
        changed = f.held != held;
        f.held = held;
    });
    if changed {
        state.refresh_views();
    }
}

/// The configuration changed (provider names among it): analyses of open documents are
/// computed again and their diagnostics published.
pub(super) fn reanalyse_open_documents(state: &State) {
    let uris: Vec<Uri> = {
        let mut docs = state.docs();
        docs.iter_mut()
            .map(|(u, d)| {
                d.forget_snapshot();
                u.clone()
            })
            .collect()
    };
    for uri in uris {
        state.mark_dirty(uri);
    }
}

/// A note's path relative to the folder opened (a nested root's notes included), for display.
pub(super) fn rel_path(idx: &crate::workspace::index::Index, path: &Path) -> String {
    match idx.shown_root_of(path) {
        Some(root) => crate::workspace::NotePath::of_or_whole(root, path).into_string(),
        None => path.display().to_string(),
    }
}

/// The note's current text and version: the open document, else the file on disk.
pub(super) fn current_text(state: &State, uri: &Uri) -> Result<(String, Option<i32>)> {
    if let Some(d) = state.docs().get(uri) {
        return Ok((d.text().to_owned(), Some(d.version)));
    }
    let path = uri.file_path().ok_or_else(|| Error::invalid_params("not a file URI"))?;
    let text =
        workspace::read_note(&path).map_err(|e| super::errors::failed(format!("{}: {e}", path.display())))?;
    Ok((text, None))
}
