//! `kind = "webhook"`: an HTTP listener (loopback unless the user's own file says otherwise).
//! `POST <path>` with `Authorization: Bearer <token>` (`token_env`) or GitHub's
//! `X-Hub-Signature-256` (HMAC-SHA256 of the body with `secret_env`) becomes one event; the
//! body is the payload (JSON kept as JSON; a non-JSON content type kept as text). Anything
//! else is answered with a status and never ends the listener: 401 without the secret, 413
//! over [`MAX_BODY`] (or for an event whose file would be larger than the queue takes), 400 for
//! a body that is not what it says, 404/405 elsewhere.
//!
//! A request is answered 202 only once its event is on disk. Requests are not each made to
//! wait for the source's state lock: they queue in memory for one writer per listener, which
//! takes the lock once for all that are waiting, writes their events, records their delivery
//! ids and saves the state once, then answers each. A burst is therefore queued, not refused;
//! 503 with `Retry-After` is kept for what is really overload (the lock held elsewhere for
//! [`LOCK_WAIT`], a queue that cannot be written).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::{Notify, Semaphore, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::config::{Env, ProcessEnv, SourceConfig, SourceKind, WebhookSourceConfig};
use crate::runs::Engine;

/// The largest body accepted.
pub const MAX_BODY: usize = 1024 * 1024;
/// Connections served at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 64;
/// How long a client may take to send its headers, and its body.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest one connection is served, whatever it does.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the writer waits for the source's state lock (held by another process, briefly)
/// before it answers the requests waiting 503.
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// Requests whose events wait for the writer: more than can be served at once is never
/// needed, so a full queue is a writer that stopped keeping up.
const QUEUE: usize = MAX_CONNECTIONS;
/// The `Retry-After` of a 503, in seconds.
const RETRY_AFTER: &str = "5";

/// The listeners of one root, by source name, each with the configuration it listens with.
#[derive(Default)]
pub struct Listeners {
    running: HashMap<String, (WebhookSourceConfig, CancellationToken)>,
    /// Those that could not listen (the port taken: another process serves it), with when
    /// they tried: tried again a minute later, said once per configuration.
    failed: HashMap<String, (WebhookSourceConfig, std::time::Instant)>,
}

/// How long a webhook that could not listen waits before it tries again.
const BIND_RETRY: Duration = Duration::from_secs(60);

impl Listeners {
    /// Listen for each webhook of `sources` (and only those): a new or changed one is
    /// (re)started, one no longer there stopped.
    pub fn sync<'a>(
        &mut self,
        engine: &Arc<Engine>,
        sources: impl Iterator<Item = (&'a String, &'a SourceConfig)>,
        events_wake: &Arc<Notify>,
    ) {
        let wanted: HashMap<&String, (&WebhookSourceConfig, &SourceConfig)> = sources
            .filter_map(|(n, c)| match &c.kind {
                SourceKind::Webhook(w) => Some((n, (w, c))),
                _ => None,
            })
            .collect();
        self.running.retain(|name, (cfg, stop)| {
            let keep = wanted.get(name).is_some_and(|(w, _)| *w == cfg);
            if !keep {
                stop.cancel();
            }
            keep
        });
        self.failed.retain(|name, (cfg, _)| wanted.get(name).is_some_and(|(w, _)| *w == cfg));
        for (name, (w, c)) in wanted {
            if self.running.contains_key(name) {
                continue;
            }
            let tried = self.failed.get(name).map(|(_, at)| *at);
            if tried.is_some_and(|at| at.elapsed() < BIND_RETRY) {
                continue;
            }
            let stop = CancellationToken::new();
            match listen(engine.clone(), name, c, w, events_wake.clone(), stop.clone()) {
                Ok(addr) => {
                    tracing::info!("source {name}: listening on http://{addr}{}", w.path);
                    for var in w.token_env.iter().chain(&w.secret_env) {
                        if ProcessEnv.var(var).is_none() {
                            tracing::warn!(
                                "source {name}: {var} is not set: requests that need it are refused"
                            );
                        }
                    }
                    self.failed.remove(name);
                    self.running.insert(name.clone(), (w.clone(), stop));
                }
                Err(e) => {
                    if tried.is_none() {
                        tracing::warn!(
                            "source {name}: cannot listen on {}: {e}; trying again every minute",
                            w.listen
                        );
                    }
                    self.failed.insert(name.clone(), (w.clone(), std::time::Instant::now()));
                }
            }
        }
    }
}

impl Drop for Listeners {
    fn drop(&mut self) {
        for (_, stop) in self.running.values() {
            stop.cancel();
        }
    }
}

/// What a request handler needs.
struct Hook {
    engine: Arc<Engine>,
    name: String,
    event_type: String,
    cfg: WebhookSourceConfig,
    events_wake: Arc<Notify>,
    /// To the writer ([`write_events`]).
    queue: mpsc::Sender<Waiting>,
}

/// A request's event, checked and encoded, waiting for the writer; its answer goes back on
/// `answer`.
struct Waiting {
    delivery: Option<String>,
    event: crate::events::NewEvent,
    answer: oneshot::Sender<Response<Full<Bytes>>>,
}

/// Bind and serve until `stop`. Returns the bound address.
fn listen(
    engine: Arc<Engine>,
    name: &str,
    source: &SourceConfig,
    cfg: &WebhookSourceConfig,
    events_wake: Arc<Notify>,
    stop: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let std_listener = std::net::TcpListener::bind(cfg.listen)?;
    std_listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(std_listener)?;
    let addr = listener.local_addr()?;
    let (queue, waiting) = mpsc::channel(QUEUE);
    let hook = Arc::new(Hook {
        engine,
        name: name.to_owned(),
        event_type: source.event_type.clone(),
        cfg: cfg.clone(),
        events_wake,
        queue,
    });
    // The writer ends when the listener and its last request are gone (the queue closes).
    tokio::spawn(write_events(hook.engine.clone(), hook.name.clone(), hook.events_wake.clone(), waiting));
    tokio::spawn(serve(listener, hook, stop));
    Ok(addr)
}

async fn serve(listener: tokio::net::TcpListener, hook: Arc<Hook>, stop: CancellationToken) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else { return };
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            a = listener.accept() => a,
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            Err(e) => {
                tracing::debug!("source {}: accept: {e}", hook.name);
                continue;
            }
        };
        let (hook, stop) = (hook.clone(), stop.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |req| {
                let hook = hook.clone();
                async move { Ok::<_, Infallible>(handle(&hook, req).await) }
            });
            // One request per connection, and a bound on the whole of it: a client that
            // connects and says nothing (or trickles) cannot hold one of the slots for long.
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(READ_TIMEOUT)
                .keep_alive(false)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::select! {
                () = stop.cancelled() => {}
                r = tokio::time::timeout(CONNECTION_TIMEOUT, conn) => match r {
                    Err(_) => tracing::debug!("webhook connection: timed out"),
                    Ok(Err(e)) => tracing::debug!("webhook connection: {e}"),
                    Ok(Ok(())) => {}
                },
            }
        });
    }
}

fn reply(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    r
}

fn error(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    reply(status, json!({ "error": message }))
}

/// 503: the event cannot be kept now; the sender is told when to try again.
fn unavailable(message: &str) -> Response<Full<Bytes>> {
    let mut r = error(StatusCode::SERVICE_UNAVAILABLE, message);
    r.headers_mut().insert(hyper::header::RETRY_AFTER, hyper::header::HeaderValue::from_static(RETRY_AFTER));
    r
}

async fn handle(hook: &Hook, req: Request<Incoming>) -> Response<Full<Bytes>> {
    if req.uri().path() != hook.cfg.path {
        return error(StatusCode::NOT_FOUND, "no webhook here");
    }
    if req.method() != hyper::Method::POST {
        return error(StatusCode::METHOD_NOT_ALLOWED, "POST only");
    }
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let bearer_ok = header("authorization").is_some_and(|h| bearer_matches(&hook.cfg, &h, &ProcessEnv));
    let signature = header("x-hub-signature-256");
    if !bearer_ok && (signature.is_none() || hook.cfg.secret_env.is_none()) {
        return error(StatusCode::UNAUTHORIZED, "missing or wrong token");
    }
    let declared = header("content-length").and_then(|l| l.trim().parse::<u64>().ok());
    if declared.is_some_and(|l| l > MAX_BODY as u64) {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "body larger than 1 MiB");
    }
    let content_type = header("content-type").unwrap_or_default().to_ascii_lowercase();
    let delivery = header("x-github-delivery").filter(|d| !d.trim().is_empty());
    let body =
        match tokio::time::timeout(READ_TIMEOUT, Limited::new(req.into_body(), MAX_BODY).collect()).await {
            Err(_) => return error(StatusCode::REQUEST_TIMEOUT, "body too slow"),
            Ok(Err(e)) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
                return error(StatusCode::PAYLOAD_TOO_LARGE, "body larger than 1 MiB");
            }
            Ok(Err(_)) => return error(StatusCode::BAD_REQUEST, "cannot read the body"),
            Ok(Ok(b)) => b.to_bytes(),
        };
    if !bearer_ok
        && !signature.as_deref().is_some_and(|s| signature_matches(&hook.cfg, s, &body, &ProcessEnv))
    {
        return error(StatusCode::UNAUTHORIZED, "missing or wrong signature");
    }
    let payload = match payload(&content_type, &body) {
        Ok(p) => p,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    accept(hook, delivery, payload).await
}

/// The body as the event's payload: JSON when it says it is (or says nothing and parses),
/// text for another textual content type.
fn payload(content_type: &str, body: &[u8]) -> Result<Value, &'static str> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err("empty body");
    }
    let json_type = content_type.is_empty()
        || content_type.starts_with("application/json")
        || content_type.contains("+json");
    if json_type {
        return serde_json::from_slice::<Value>(body).map_err(|_| "the body is not valid JSON");
    }
    match std::str::from_utf8(body) {
        Ok(text) => Ok(Value::String(text.to_owned())),
        Err(_) => Err("the body is not UTF-8 text"),
    }
}

/// Hand the event to the writer and wait for its answer. An event whose file would be larger
/// than the queue takes is refused here, before anything is written: 413, never a 202 for an
/// event the queue would then drop.
async fn accept(hook: &Hook, delivery: Option<String>, payload: Value) -> Response<Full<Bytes>> {
    let root = &hook.engine.root;
    let now = hook.engine.clock.now();
    let event = match crate::events::new_event(root, &hook.name, &hook.event_type, payload, None, now) {
        Ok(e) => e,
        Err(crate::events::EventError::TooLarge(why)) => return error(StatusCode::PAYLOAD_TOO_LARGE, &why),
        Err(e) => {
            tracing::warn!("source {}: cannot queue a request: {e}", hook.name);
            return error(StatusCode::BAD_REQUEST, "cannot queue it as an event");
        }
    };
    let (answer, answered) = oneshot::channel();
    match hook.queue.try_send(Waiting { delivery, event, answer }) {
        Ok(()) => {}
        Err(mpsc::error::TrySendError::Full(_)) => {
            tracing::warn!("source {}: {QUEUE} requests wait to be written; refusing one", hook.name);
            return unavailable("busy; try again");
        }
        Err(mpsc::error::TrySendError::Closed(_)) => return unavailable("not listening any more"),
    }
    // Dropped unanswered: the writer failed (it says why in the log).
    answered.await.unwrap_or_else(|_| unavailable("cannot keep the event now"))
}

/// The writer of one listener: takes every request waiting, writes their events under the
/// source's lock ([`write_batch`], off the runtime's threads), and answers each.
async fn write_events(
    engine: Arc<Engine>,
    name: String,
    events_wake: Arc<Notify>,
    mut waiting: mpsc::Receiver<Waiting>,
) {
    while let Some(first) = waiting.recv().await {
        let mut batch = vec![first];
        while let Ok(more) = waiting.try_recv() {
            batch.push(more);
        }
        let (engine, name2) = (engine.clone(), name.clone());
        match tokio::task::spawn_blocking(move || write_batch(&engine, &name2, batch)).await {
            Ok(true) => events_wake.notify_one(),
            Ok(false) => {}
            // Its requests, unanswered, are told 503.
            Err(e) => tracing::warn!("source {name}: writing events failed: {e}"),
        }
    }
}

/// Write `batch`'s events, once per delivery id when the sender gives one (GitHub's
/// redelivery), save the source's state, then answer each request: 202 once its event is on
/// disk, 200 for a delivery already queued, 503 when it cannot be kept. Returns whether any
/// event was queued.
fn write_batch(engine: &Engine, name: &str, batch: Vec<Waiting>) -> bool {
    let root = &engine.root;
    let home = super::state::Home::of(engine);
    let _lock = match lock_within(&home, name, LOCK_WAIT) {
        Ok(lock) => lock,
        Err(why) => {
            tracing::warn!("source {name}: {why}; {} requests answered 503", batch.len());
            for w in batch {
                let _ = w.answer.send(unavailable("busy; try again"));
            }
            return false;
        }
    };
    let mut st = super::state::load(&home, name).unwrap_or_else(|e| {
        tracing::warn!("source {name}: cannot read its state ({e}); starting afresh");
        super::state::SourceState::default()
    });
    st.kind = "webhook".to_owned();
    let mut answers = Vec::with_capacity(batch.len());
    let mut queued = 0u64;
    for Waiting { delivery, event, answer } in batch {
        // The client is gone (it gave up, or its connection timed out): it was told nothing,
        // so nothing is kept; it will send again.
        if answer.is_closed() {
            continue;
        }
        let version = super::version_of(&event.event.payload);
        if let Some(d) = &delivery
            && !st.is_new(d, &version)
        {
            answers.push((answer, reply(StatusCode::OK, json!({ "duplicate": d }))));
            continue;
        }
        let id = event.event.id.clone();
        match crate::events::write_event(root, &event) {
            Ok(()) => {
                tracing::info!("source {name}: queued {id} for a request");
                if let Some(d) = &delivery {
                    st.record(d, &version);
                }
                st.events_queued += 1;
                queued += 1;
                answers.push((answer, reply(StatusCode::ACCEPTED, json!({ "id": id }))));
            }
            Err(e) => {
                tracing::warn!("source {name}: cannot queue a request: {e}");
                answers.push((answer, unavailable("cannot keep the event now")));
            }
        }
    }
    if queued > 0 {
        let _ = st.succeeded(engine.clock.now(), None);
        // The events are queued whatever happens here; only a redelivery's dedupe is lost.
        if let Err(e) = super::state::save(&home, name, &st) {
            tracing::warn!("source {name}: cannot save its state: {e}");
        }
    }
    for (answer, response) in answers {
        let _ = answer.send(response);
    }
    queued > 0
}

/// The source's state lock, waited for up to `wait` (another process may hold it briefly).
fn lock_within(
    home: &super::state::Home,
    name: &str,
    wait: Duration,
) -> Result<super::state::SourceLock, String> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        match super::state::try_lock(home, name) {
            Ok(Some(lock)) => return Ok(lock),
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => return Err(format!("its state stayed locked for {} s", wait.as_secs())),
            Err(e) => return Err(format!("cannot lock its state: {e}")),
        }
    }
}

/// Whether `header` is `Bearer <the token_env variable's value>`, compared in constant time.
fn bearer_matches(cfg: &WebhookSourceConfig, header: &str, env: &dyn Env) -> bool {
    let Some(var) = &cfg.token_env else { return false };
    let Some(token) = env.var(var).and_then(|v| v.into_string().ok()) else { return false };
    let Some(given) = header.strip_prefix("Bearer ") else { return false };
    constant_time_eq(given.trim().as_bytes(), token.trim().as_bytes())
}

/// Whether `header` is `sha256=<hex HMAC-SHA256 of body with the secret_env variable's value>`.
fn signature_matches(cfg: &WebhookSourceConfig, header: &str, body: &[u8], env: &dyn Env) -> bool {
    let Some(var) = &cfg.secret_env else { return false };
    let Some(secret) = env.var(var).and_then(|v| v.into_string().ok()) else { return false };
    let Some(hex) = header.trim().strip_prefix("sha256=") else { return false };
    let Some(tag) = decode_hex(hex) else { return false };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    ring::hmac::verify(&key, body, &tag).is_ok()
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok())).collect()
}

/// Equal bytes, in a time that does not tell how much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    fn cfg() -> WebhookSourceConfig {
        WebhookSourceConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            path: "/hook".to_owned(),
            token_env: Some("TOKEN".to_owned()),
            secret_env: Some("SECRET".to_owned()),
        }
    }

    fn env(name: &str) -> Option<OsString> {
        match name {
            "TOKEN" => Some("t0ken".into()),
            "SECRET" => Some("It's a Secret to Everybody".into()),
            _ => None,
        }
    }

    #[test]
    fn bearer_and_github_signature_are_checked() {
        assert!(bearer_matches(&cfg(), "Bearer t0ken", &env));
        assert!(!bearer_matches(&cfg(), "Bearer t0ke", &env));
        assert!(!bearer_matches(&cfg(), "t0ken", &env));
        assert!(!bearer_matches(&cfg(), "Bearer ", &|_: &str| None));
        // GitHub's documented example (docs: "Validating webhook deliveries").
        let sig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert!(signature_matches(&cfg(), sig, b"Hello, World!", &env));
        assert!(!signature_matches(&cfg(), sig, b"Hello, World?", &env));
        assert!(!signature_matches(&cfg(), "sha256=zz", b"Hello, World!", &env));
        assert!(!signature_matches(&cfg(), sig, b"Hello, World!", &|_: &str| None));
    }

    #[test]
    fn bodies_become_payloads() {
        assert_eq!(payload("application/json", br#"{"a":1}"#), Ok(json!({"a": 1})));
        assert_eq!(payload("", b"[1]"), Ok(json!([1])));
        assert_eq!(payload("text/plain", b"hi"), Ok(json!("hi")));
        assert!(payload("application/json", b"{oops").is_err());
        assert!(payload("text/plain", b"\xff").is_err());
        assert!(payload("application/json", b"  ").is_err());
    }
}
