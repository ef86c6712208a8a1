//! The editor's side of notifications (`crate::notify`): a client that declares
//! `experimental.livenote.notify` gets `livenote/notify` with every run it tells of (the
//! editors show it with their own buttons); any other gets `window/showMessage` with the line.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use serde_json::json;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::MessageType;

use super::state::State;
use crate::notify::{Hub, Notice, Sink, trigger_name};

/// `livenote/notify`, as a notification type.
pub enum LivenoteNotify {}

impl tower_lsp_server::ls_types::notification::Notification for LivenoteNotify {
    type Params = serde_json::Value;
    const METHOD: &'static str = "livenote/notify";
}

/// The process's one hub, made with the first engine: every root's runs share its digest.
pub fn hub(client: &Client, state: &Arc<State>) -> Arc<Hub> {
    state
        .notify
        .get_or_init(|| {
            let sink = Editor { client: client.clone(), state: Arc::downgrade(state) };
            let hub = Hub::new(state.opts.clock.clone(), vec![Arc::new(sink)], true);
            hub.start();
            hub
        })
        .clone()
}

struct Editor {
    client: Client,
    state: Weak<State>,
}

impl Sink for Editor {
    // The desktop is `watch`'s and `tick`'s: an editor shows its notifications itself.
    fn send(&self, notice: Notice, _desktop: bool) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let (client, state) = (self.client.clone(), self.state.upgrade());
        Box::pin(async move {
            let Some(state) = state else { return };
            if state.caps().notify {
                client.send_notification::<LivenoteNotify>(params(&state, &notice)).await;
            } else {
                let kind = if notice.failed() { MessageType::WARNING } else { MessageType::INFO };
                client.show_message(kind, format!("livenote: {}", notice.message)).await;
            }
        })
    }
}

/// The params of `livenote/notify` (docs/editors.md).
pub fn params(state: &State, notice: &Notice) -> serde_json::Value {
    let notes: Vec<serde_json::Value> = notice
        .entries
        .iter()
        .map(|e| {
            json!({
                "uri": state.uri_for(&e.path).map(|u| u.as_str().to_owned()),
                "path": e.path,
                "title": e.title,
                "trigger": trigger_name(e.trigger),
                "outcome": e.outcome,
                "summary": e.summary,
                "added": e.added,
                "removed": e.removed,
                "runId": e.run_id,
            })
        })
        .collect();
    json!({ "message": notice.message, "digest": notice.digest, "notes": notes })
}
