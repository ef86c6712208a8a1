//! The log lines a user should see in the editor, sent as `window/logMessage`: livenote's own
//! INFO and up (runs fired, done, failed and skipped, trust, configuration reloads, events),
//! never its DEBUG and TRACE (per keystroke, per file) nor other crates' lines. Under
//! `livenote lsp`, stderr keeps only warnings and errors: editors record every stderr line as
//! an error (Neovim's LSP log does).
//!
//! A tracing layer hands each line to a bounded queue without waiting; a task of its own sends
//! them, so neither a handler nor a run ever waits on the client, and a client that stops
//! reading loses log lines (counted, and said once it reads again), never time.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::MessageType;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// Lines queued for the client at most; more are dropped while it does not read.
const QUEUE: usize = 256;

/// The tracing side: turns events into lines for the client.
pub struct ClientLogLayer {
    tx: mpsc::Sender<(MessageType, String)>,
    dropped: Arc<AtomicUsize>,
}

/// The client side: the queued lines, until [`ClientLog::forward`] sends them.
pub struct ClientLog {
    rx: mpsc::Receiver<(MessageType, String)>,
    dropped: Arc<AtomicUsize>,
}

/// A layer to install in the process's subscriber and the queue it fills.
pub fn client_log() -> (ClientLogLayer, ClientLog) {
    let (tx, rx) = mpsc::channel(QUEUE);
    let dropped = Arc::new(AtomicUsize::new(0));
    (ClientLogLayer { tx, dropped: dropped.clone() }, ClientLog { rx, dropped })
}

/// Whether a line is one for the user: livenote's own, INFO and up.
fn for_user(meta: &tracing::Metadata<'_>) -> bool {
    let target = meta.target();
    *meta.level() <= Level::INFO && (target == "livenote" || target.starts_with("livenote::"))
}

fn message_type(level: Level) -> MessageType {
    match level {
        Level::ERROR => MessageType::ERROR,
        Level::WARN => MessageType::WARNING,
        _ => MessageType::INFO,
    }
}

impl<S: Subscriber> Layer<S> for ClientLogLayer {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let meta = event.metadata();
        if !for_user(meta) {
            return;
        }
        let mut text = Text::default();
        event.record(&mut text);
        if self.tx.try_send((message_type(*meta.level()), text.finish())).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl ClientLog {
    /// Send the lines to `client` from a task of its own, until the process ends.
    pub fn forward(mut self, client: Client) {
        tokio::spawn(async move {
            while let Some((typ, message)) = self.rx.recv().await {
                let dropped = self.dropped.swap(0, Ordering::Relaxed);
                if dropped > 0 {
                    let note = format!("{dropped} log line(s) not sent: the editor was not reading");
                    client.log_message(MessageType::WARNING, note).await;
                }
                client.log_message(typ, message).await;
            }
        });
    }
}

/// An event as one line: its message, then its other fields as `name=value`.
#[derive(Default)]
struct Text {
    message: String,
    fields: String,
}

impl Text {
    fn finish(self) -> String {
        self.message + &self.fields
    }
}

impl Visit for Text {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    #[test]
    fn livenote_info_and_up_become_lines_and_a_full_queue_drops_them() {
        let (layer, mut log) = client_log();
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::debug!("per keystroke");
            tracing::info!(attempt = 2, "fire {} (cron)", "clock.md");
            tracing::warn!(target: "tower_lsp_server", "not ours");
            tracing::warn!("failed clock.md: exited with status 3");
            for _ in 0..QUEUE {
                tracing::info!("more");
            }
        });
        let mut lines = Vec::new();
        while let Ok(line) = log.rx.try_recv() {
            lines.push(line);
        }
        assert_eq!(lines.len(), QUEUE);
        assert_eq!(lines[0], (MessageType::INFO, "fire clock.md (cron) attempt=2".to_owned()));
        assert_eq!(lines[1], (MessageType::WARNING, "failed clock.md: exited with status 3".to_owned()));
        assert_eq!(log.dropped.load(Ordering::Relaxed), 2);
    }
}
