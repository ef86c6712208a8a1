//! Each root's configuration kept current: loading it (the folder's file only when trusted),
//! the client's settings layer, reloading when trust or `.livenote.toml` changes, and walking
//! again when the excludes change.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::*;

use super::snapshots::reanalyse_open_documents;
use super::state::State;
use crate::workspace::index::Index;

/// Each root with its engine's `[scheduler] exclude` (none before the engine exists).
pub(super) fn root_excludes(state: &State) -> Vec<(PathBuf, Vec<String>)> {
    let roots = state.roots.read().map(|r| r.clone()).unwrap_or_default();
    let engines = state.engines();
    roots
        .into_iter()
        .map(|root| {
            let exclude = engines
                .iter()
                .find(|e| e.root == root)
                .and_then(|e| e.config.read().ok().map(|c| c.scheduler.exclude.clone()))
                .unwrap_or_default();
            (root, exclude)
        })
        .collect()
}

/// Give the index each root's `[scheduler] max_backoff` (its engine's configuration), so the
/// scheduler, `listNotes` and the views compute the retries the same way.
pub(super) fn apply_backoff_caps(state: &State) {
    let caps: Vec<(PathBuf, chrono::TimeDelta)> = state
        .engines()
        .iter()
        .filter_map(|e| e.config.read().ok().map(|c| (e.root.clone(), c.scheduler.backoff_cap())))
        .collect();
    if let Ok(mut slot) = state.index.write()
        && let Some(index) = slot.as_mut()
    {
        index.set_backoff_caps(&caps);
    }
}

/// After a configuration change: when a root's excludes changed, walk again (a note no longer
/// excluded must come back) and swap the index in.
pub(super) fn reindex_if_excludes_changed(state: &Arc<State>) {
    let wanted = root_excludes(state);
    let same = state
        .with_index(|idx| {
            idx.excludes().len() == wanted.len()
                && idx
                    .excludes()
                    .iter()
                    .zip(&wanted)
                    .all(|(e, (r, g))| e.root() == r && e.globs() == g.as_slice())
        })
        .unwrap_or(true);
    if same {
        apply_backoff_caps(state);
        return;
    }
    let state = state.clone();
    tokio::spawn(async move {
        let Ok((index, problems)) = tokio::task::spawn_blocking(move || Index::build_per_root(&wanted)).await
        else {
            return;
        };
        for p in problems {
            tracing::warn!("skip {p}");
        }
        tracing::info!("reindex: the excludes changed ({})", crate::text::count(index.len(), "note"));
        if let Ok(mut slot) = state.index.write() {
            *slot = Some(index);
        }
        apply_backoff_caps(&state);
        state.wake.notify_waiters();
        state.wake_events();
        state.refresh_views_and_diagnostics();
    });
}

/// A root's configuration: the user's, the folder's `.livenote.toml` only when the user
/// trusts the folder with that content (SPEC 7), the client's settings.
pub(super) fn load_config(
    state: &State,
    root: &Path,
    settings: Option<&Value>,
) -> (crate::config::Config, Vec<crate::config::ConfigProblem>) {
    crate::config::Config::load_gated(
        Some(root),
        settings,
        &crate::config::ProcessEnv,
        state.opts.trust.as_ref(),
    )
}

/// Reload one engine's configuration (trust granted or withdrawn, its `.livenote.toml`
/// changed), wake the schedulers and event processors, and redraw.
pub fn reload_config(client: &Client, state: &Arc<State>, engine: &Arc<crate::runs::Engine>) {
    let settings = state.settings();
    let (config, problems) = load_config(state, &engine.root, settings.as_ref());
    report_config_problems(client, &problems);
    if let Ok(mut c) = engine.config.write() {
        *c = config;
    }
    // Its trust, skill folders and MCP servers may be others now.
    super::snapshots::refresh_root(state, engine);
    tracing::info!("reload configuration {}", engine.root.display());
    reindex_if_excludes_changed(state);
    reanalyse_open_documents(state);
    state.wake.notify_waiters();
    state.wake_events();
    state.refresh_views_and_diagnostics();
}

/// Reload the engine's configuration when it was loaded under another trust than the store
/// holds now (trusted or untrusted from a shell, or its `.livenote.toml` appeared): whether
/// the folder's file is used must follow the store.
pub fn sync_trust(client: &Client, state: &Arc<State>, engine: &Arc<crate::runs::Engine>) {
    let Some(store) = &state.opts.trust else { return };
    if !engine.root.join(crate::workspace::trust::CONFIG_FILE).exists() {
        return;
    }
    let uses_file = engine.config.read().is_ok_and(|c| c.ignored_folder.is_none());
    if store.check(&engine.root).is_trusted() != uses_file {
        reload_config(client, state, engine);
    }
}

/// The client's settings for livenote: `None` for "not sent" (`null`), else the settings
/// table, `Some(None)` when it is empty (the user set nothing, or removed the last setting:
/// the client layer is cleared). Clients nest them under `livenote` (VS Code's section
/// convention) or send the table itself.
pub(super) fn client_settings(value: Value) -> Option<Option<Value>> {
    let value = match value {
        Value::Null => return None,
        Value::Object(mut map) if map.contains_key("livenote") => map.remove("livenote").unwrap_or_default(),
        other => other,
    };
    match &value {
        Value::Object(map) if !map.is_empty() => Some(Some(value)),
        // Lua clients (Neovim) cannot tell an empty table from an empty list and send `{}` as
        // `[]`: that is "no settings" too, not a mistake to warn about at every start.
        Value::Object(_) | Value::Null => Some(None),
        Value::Array(items) if items.is_empty() => Some(None),
        // Any other non-table is reported as a problem by the configuration loader.
        _ => Some(Some(value)),
    }
}

#[cfg(test)]
#[test]
fn client_settings_empty_in_any_encoding_clears_the_layer() {
    use serde_json::json;
    assert_eq!(client_settings(Value::Null), None);
    for empty in
        [json!({}), json!([]), json!({"livenote": {}}), json!({"livenote": []}), json!({"livenote": null})]
    {
        assert_eq!(client_settings(empty.clone()), Some(None), "{empty}");
    }
    assert_eq!(client_settings(json!({"livenote": {"a": 1}})), Some(Some(json!({"a": 1}))));
    // A list with something in it is still a mistake the loader reports.
    assert_eq!(client_settings(json!([1])), Some(Some(json!([1]))));
}

/// Log configuration problems; show the ones in the client's settings to the user, who cannot
/// see the server's log (problems in TOML files are also diagnostics of `livenote check`).
pub(super) fn report_config_problems(client: &Client, problems: &[crate::config::ConfigProblem]) {
    for p in problems {
        tracing::warn!("config {p}");
    }
    let from_client: Vec<String> = problems
        .iter()
        .filter(|p| p.origin == crate::config::Origin::Client)
        .map(ToString::to_string)
        .collect();
    if !from_client.is_empty() {
        let client = client.clone();
        let msg = format!("livenote settings: {}", from_client.join("; "));
        tokio::spawn(async move { client.show_message(MessageType::WARNING, msg).await });
    }
}
