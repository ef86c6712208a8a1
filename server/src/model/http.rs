//! What the model clients (`openai`, `anthropic`) share on the wire: one reqwest client per
//! kind of destination, retries with exponential backoff and jitter that honour `Retry-After`,
//! a server-sent-events parser (`sse.rs`, re-exported here), stall and overall timeouts,
//! prompt cancellation, and the mapping of every failure to a short [`ModelError`] that never
//! contains the API key.
//!
//! A provider builds a `Call` (URL, headers, JSON body) and a `Decoder` for its streaming
//! format; `execute` does the rest.

use std::collections::hash_map::RandomState;
use std::error::Error as StdError;
use std::fmt;
use std::hash::BuildHasher;
use std::io;
use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{Response, StatusCode, Url};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use super::sse::{SseEvent, SseParser, extract_json_object, parse_tool_arguments};
use crate::config::Env;
use crate::model::conversation::Turn;
use crate::model::error::ModelError;
use crate::net;

/// Establishing a TCP+TLS connection takes well under this unless the host is unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const MIB: usize = 1024 * 1024;
/// Of an error response only the message matters.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// Messages from the service are cut to this many characters to keep `lastRunError` short.
const MAX_MESSAGE_CHARS: usize = 200;
/// Backoff never grows beyond this: with ~4 attempts, longer waits only delay the error.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Timeouts and retry policy of one model client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpOptions {
    /// Limit for one `complete` call, retries and waits included.
    pub request_timeout: Duration,
    /// No bytes for this long (waiting for the response or mid-stream) is a timeout.
    pub stall_timeout: Duration,
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// A longer `Retry-After` is cut to this.
    pub max_retry_after: Duration,
    /// First backoff step; each retry doubles it (with jitter) up to 10 s.
    pub backoff_base: Duration,
    /// Bytes of one response body, counted as it streams (`[agent] max_reply_bytes`): no reply
    /// to a bounded-token request is this large, so beyond it the server is misbehaving.
    pub max_reply_bytes: usize,
    /// Bytes of one tool call's arguments (`[agent] max_tool_args_bytes`).
    pub max_tool_args_bytes: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            request_timeout: Duration::from_secs(5 * 60),
            stall_timeout: Duration::from_secs(60),
            max_attempts: 4,
            max_retry_after: Duration::from_secs(60),
            backoff_base: Duration::from_secs(1),
            max_reply_bytes: 4 * MIB,
            max_tool_args_bytes: MIB,
        }
    }
}

/// The error for a reply over `limit` bytes.
pub fn reply_too_large(limit: usize) -> ModelError {
    ModelError::TooLarge(format!(
        "model reply too large: over {} (agent.max_reply_bytes)",
        crate::text::count::bytes(limit as u64)
    ))
}

/// The error for a tool call whose arguments are over `limit` bytes.
pub fn tool_args_too_large(limit: usize) -> ModelError {
    ModelError::TooLarge(format!(
        "model reply too large: a tool call's arguments are over {} (agent.max_tool_args_bytes)",
        crate::text::count::bytes(limit as u64)
    ))
}

/// The length of `value` as compact JSON (a string: its text), without building that text.
pub fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    match value {
        Value::String(s) => s.len(),
        other => {
            let mut count = Count(0);
            // Writing to a counter cannot fail.
            let _ = serde_json::to_writer(&mut count, other);
            count.0
        }
    }
}

/// Fails when one of `turn`'s tool calls has arguments over `limit` bytes.
fn check_arguments(turn: &Turn, limit: usize) -> Result<(), ModelError> {
    if turn.tool_calls.iter().any(|c| json_len(&c.arguments) > limit) {
        return Err(tool_args_too_large(limit));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// API keys and endpoints
// ---------------------------------------------------------------------------------------------

/// An API key read from the environment variable named in config. `Debug` shows only the
/// variable's name, so the key cannot leak through logs or error reports.
#[derive(Clone)]
pub struct ApiKey {
    var: String,
    value: String,
}

impl ApiKey {
    /// Read the key from `var`. Errors name the variable, never a value.
    pub fn from_env(env: &dyn Env, var: &str) -> Result<ApiKey, ModelError> {
        let not_set = || {
            ModelError::Config(format!(
                "{var} is not set (named by api_key_env in the livenote configuration)"
            ))
        };
        let raw = env.var(var).ok_or_else(not_set)?;
        let value = raw
            .into_string()
            .map_err(|_| ModelError::Config(format!("{var} is not valid UTF-8")))?
            // Keys pasted with a trailing newline are common and never meant.
            .trim()
            .to_owned();
        if value.is_empty() {
            return Err(not_set());
        }
        if !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ModelError::Config(format!(
                "{var} contains characters that cannot go into an HTTP header"
            )));
        }
        Ok(ApiKey { var: var.to_owned(), value })
    }

    /// The name of the variable the key came from.
    pub fn var(&self) -> &str {
        &self.var
    }

    /// The header value `prefix` + key, marked sensitive so that `http`'s own `Debug` hides it.
    pub(crate) fn header(&self, prefix: &str) -> Result<HeaderValue, ModelError> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", self.value)).map_err(|_| {
            ModelError::Config(format!("{} contains characters that cannot go into an HTTP header", self.var))
        })?;
        value.set_sensitive(true);
        Ok(value)
    }

    fn secret(&self) -> &str {
        &self.value
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKey").field("var", &self.var).field("value", &"***").finish()
    }
}

/// Where requests go, and how errors name it (host and port only: a URL may carry
/// credentials in its user-info or query).
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub url: Url,
    /// `host` or `host:port`, for error messages.
    pub host: String,
}

impl Endpoint {
    /// `base_url` (trailing `/` ignored) joined with `path`.
    pub fn new(base_url: &str, path: &str) -> Result<Endpoint, ModelError> {
        let joined = format!("{}/{}", base_url.trim().trim_end_matches('/'), path.trim_start_matches('/'));
        let invalid =
            || ModelError::Config(format!("invalid base_url `{}`", one_line(base_url, MAX_MESSAGE_CHARS)));
        let url = Url::parse(&joined).map_err(|_| invalid())?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid());
        }
        let host = match (url.host_str(), url.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_owned(),
            (None, _) => return Err(invalid()),
        };
        Ok(Endpoint { url, host })
    }

    /// The URL without user-info and query, for "nothing at ..." messages.
    fn display(&self) -> String {
        format!("{}://{}{}", self.url.scheme(), self.host, self.url.path())
    }

    /// Local servers (Ollama, llama.cpp, tests) are reached directly even when a proxy is set;
    /// an address is on this machine by `net::scope` (`[::ffff:127.0.0.1]` and `0.0.0.0` too).
    fn is_loopback(&self) -> bool {
        let host = self.url.host_str().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host.to_ascii_lowercase().ends_with(".localhost")
            || host.parse::<IpAddr>().is_ok_and(|ip| net::scope(ip) == net::Scope::Loopback)
    }
}

/// The process-wide client for `endpoint`: one for loopback hosts (never proxied) and one for
/// everything else (honouring the usual proxy variables), so connections are pooled across
/// runs.
pub fn client_for(endpoint: &Endpoint) -> Result<reqwest::Client, ModelError> {
    static PROXIED: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    static DIRECT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    let direct = endpoint.is_loopback();
    let cell = if direct { &DIRECT } else { &PROXIED };
    cell.get_or_init(|| build_client(direct))
        .clone()
        .map_err(|e| ModelError::Config(format!("cannot set up the HTTP client: {e}")))
}

fn build_client(direct: bool) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("livenote/", env!("CARGO_PKG_VERSION")))
        // APIs do not redirect their POST endpoints; following one would send the key (in
        // `x-api-key`, which reqwest does not strip) to wherever the redirect points.
        .redirect(reqwest::redirect::Policy::none());
    if direct {
        builder = builder.no_proxy();
    }
    builder.build().map_err(|e| root_cause(&e))
}

// ---------------------------------------------------------------------------------------------
// Executing a call
// ---------------------------------------------------------------------------------------------

/// One model request, ready to send (again, on retries).
pub(crate) struct Call<'a> {
    pub client: &'a reqwest::Client,
    pub endpoint: &'a Endpoint,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// For "unknown model `x`".
    pub model: &'a str,
    /// Scrubbed from every error.
    pub key: Option<&'a ApiKey>,
    /// What follows "authentication failed (HTTP 401): ", e.g. "check OPENAI_API_KEY".
    pub auth_hint: String,
    pub opts: &'a HttpOptions,
}

/// Why a stream could not be turned into a [`Turn`]; [`execute`] adds the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamError {
    /// Not the JSON or events the format promises.
    Malformed(String),
    /// The stream ended before its end marker: a dropped connection, worth a retry.
    Truncated,
    /// The service reported an error inside a successful response.
    Api { message: String, retryable: bool },
}

/// A wire format's streaming reply, fed event by event.
pub(crate) trait Decoder: Default + Send {
    /// One server-sent event; `Ok(true)` when it ends the reply.
    fn event(&mut self, event: &SseEvent) -> Result<bool, StreamError>;
    /// The reply so far; `saw_end` tells whether the end marker arrived.
    fn finish(self, saw_end: bool) -> Result<Turn, StreamError>;
    /// A server that ignored `stream: true` sent the whole reply as one JSON document.
    fn whole(body: &[u8]) -> Result<Turn, StreamError>;
    /// Bytes of the longest tool call arguments received so far.
    fn arguments_len(&self) -> usize;
}

/// What went wrong in one attempt, and whether another may help.
struct Failure {
    error: ModelError,
    retry: Retry,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    No,
    Backoff,
    After(Duration),
}

impl Failure {
    fn fatal(error: ModelError) -> Failure {
        Failure { error, retry: Retry::No }
    }

    fn transient(error: ModelError) -> Failure {
        Failure { error, retry: Retry::Backoff }
    }
}

/// Send `call` (with retries) and decode the streamed reply with `D`. Returns
/// [`ModelError::Stopped`] as soon as `cancel` fires, whatever is being awaited, and
/// [`ModelError::TimedOut`] after `request_timeout` or a stall.
pub(crate) async fn execute<D: Decoder>(
    call: &Call<'_>,
    cancel: &CancellationToken,
) -> Result<Turn, ModelError> {
    let result = if cancel.is_cancelled() {
        Err(ModelError::Stopped)
    } else {
        let limit = call.opts.request_timeout;
        let deadline = Instant::now() + limit;
        // Racing the whole exchange (rather than each await) also drops the connection at once.
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(ModelError::Stopped),
            r = tokio::time::timeout_at(deadline, attempts::<D>(call, deadline)) => {
                r.unwrap_or(Err(ModelError::TimedOut(limit)))
            }
        }
    };
    result.map_err(|e| scrub(e, call.key))
}

async fn attempts<D: Decoder>(call: &Call<'_>, deadline: Instant) -> Result<Turn, ModelError> {
    let mut attempt = 1;
    loop {
        let failure = match attempt_once::<D>(call).await {
            Ok(turn) => return Ok(turn),
            Err(f) => f,
        };
        let delay = match failure.retry {
            Retry::No => return Err(failure.error),
            Retry::Backoff => backoff(call.opts.backoff_base, attempt),
            Retry::After(d) => d,
        };
        // Waiting past the deadline would only turn a telling error into "timed out".
        if attempt >= call.opts.max_attempts || Instant::now() + delay >= deadline {
            return Err(failure.error);
        }
        let error = scrub(failure.error, call.key);
        tracing::warn!(host = %call.endpoint.host, attempt, ?delay, "model request failed, retrying: {error}");
        tokio::time::sleep(delay).await;
        attempt += 1;
    }
}

async fn attempt_once<D: Decoder>(call: &Call<'_>) -> Result<Turn, Failure> {
    let stall = call.opts.stall_timeout;
    let host = &call.endpoint.host;
    let request =
        call.client.post(call.endpoint.url.clone()).headers(call.headers.clone()).body(call.body.clone());
    let mut response = match tokio::time::timeout(stall, request.send()).await {
        Err(_) => return Err(Failure::fatal(ModelError::TimedOut(stall))),
        Ok(Err(e)) => return Err(send_failure(host, &e)),
        Ok(Ok(r)) => r,
    };
    let status = response.status();
    if !status.is_success() {
        let retry_after = retry_after(response.headers(), call.opts.max_retry_after);
        // The body only improves the message; a broken one still leaves the status.
        let body = read_body(&mut response, MAX_ERROR_BODY, stall, host).await.unwrap_or_default();
        return Err(status_failure(call, status, retry_after, &body));
    }

    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    match content_type.as_deref() {
        Some("application/json") => {
            let body = read_body(&mut response, call.opts.max_reply_bytes, stall, host).await?;
            let turn = D::whole(&body).map_err(|e| stream_failure(host, e))?;
            return check_arguments(&turn, call.opts.max_tool_args_bytes)
                .map(|()| turn)
                .map_err(Failure::fatal);
        }
        Some("text/event-stream") | None => {}
        Some(other) => {
            return Err(Failure::fatal(malformed(host, &format!("expected an event stream, got `{other}`"))));
        }
    }

    let mut parser = SseParser::default();
    let mut decoder = D::default();
    let (max_reply, max_args) = (call.opts.max_reply_bytes, call.opts.max_tool_args_bytes);
    let mut total = 0;
    let mut ended = false;
    while let Some(chunk) = next_chunk(&mut response, stall, host).await? {
        // Counted as it streams: a reply over the bound is dropped before it is all read.
        total += chunk.len();
        if total > max_reply {
            return Err(Failure::fatal(reply_too_large(max_reply)));
        }
        let events = parser.feed(&chunk).map_err(|m| Failure::fatal(malformed(host, &m)))?;
        ended = feed(&mut decoder, &events, max_args, host)?;
        if ended {
            break;
        }
    }
    if !ended {
        let events = parser.finish().map_err(|m| Failure::fatal(malformed(host, &m)))?;
        ended = feed(&mut decoder, &events, max_args, host)?;
    }
    let turn = decoder.finish(ended).map_err(|e| stream_failure(host, e))?;
    check_arguments(&turn, max_args).map_err(Failure::fatal)?;
    Ok(turn)
}

/// Hand `events` to `decoder`; `Ok(true)` when one ended the reply. Fails as soon as a tool
/// call's arguments grow past `max_args`.
fn feed<D: Decoder>(
    decoder: &mut D,
    events: &[SseEvent],
    max_args: usize,
    host: &str,
) -> Result<bool, Failure> {
    for event in events {
        let end = decoder.event(event).map_err(|e| stream_failure(host, e))?;
        if decoder.arguments_len() > max_args {
            return Err(Failure::fatal(tool_args_too_large(max_args)));
        }
        if end {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The next piece of the body, `None` at its end.
async fn next_chunk(
    response: &mut Response,
    stall: Duration,
    host: &str,
) -> Result<Option<Vec<u8>>, Failure> {
    match tokio::time::timeout(stall, response.chunk()).await {
        Err(_) => Err(Failure::fatal(ModelError::TimedOut(stall))),
        Ok(Err(e)) => Err(Failure::transient(ModelError::Io(format!(
            "the connection to {host} broke mid-response: {}",
            root_cause(&e)
        )))),
        Ok(Ok(chunk)) => Ok(chunk.map(|b| b.to_vec())),
    }
}

async fn read_body(
    response: &mut Response,
    limit: usize,
    stall: Duration,
    host: &str,
) -> Result<Vec<u8>, Failure> {
    let mut body = Vec::new();
    while let Some(chunk) = next_chunk(response, stall, host).await? {
        body.extend_from_slice(&chunk);
        if body.len() > limit {
            return Err(Failure::fatal(reply_too_large(limit)));
        }
    }
    Ok(body)
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

fn malformed(host: &str, detail: &str) -> ModelError {
    ModelError::InvalidOutput(format!(
        "malformed response from {host}: {}",
        one_line(detail, MAX_MESSAGE_CHARS)
    ))
}

fn stream_failure(host: &str, e: StreamError) -> Failure {
    match e {
        StreamError::Malformed(m) => Failure::fatal(malformed(host, &m)),
        StreamError::Truncated => {
            Failure::transient(ModelError::Io(format!("the response from {host} ended early")))
        }
        StreamError::Api { message, retryable } => Failure {
            error: ModelError::Io(format!("error from {host}: {}", one_line(&message, MAX_MESSAGE_CHARS))),
            retry: if retryable { Retry::Backoff } else { Retry::No },
        },
    }
}

/// A request that got no response.
fn send_failure(host: &str, e: &reqwest::Error) -> Failure {
    let cause = root_cause(e);
    if e.is_builder() {
        return Failure::fatal(ModelError::Config(format!("cannot build a request to {host}: {cause}")));
    }
    if e.is_timeout() {
        return Failure::transient(ModelError::Io(format!("timed out connecting to {host}")));
    }
    // TLS and similar failures come as these io kinds and will not heal by retrying.
    let permanent = io_kind(e).is_some_and(|k| {
        matches!(
            k,
            io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::PermissionDenied
        )
    });
    let error = ModelError::Io(if e.is_connect() {
        format!("cannot connect to {host}: {cause}")
    } else {
        format!("the connection to {host} failed: {cause}")
    });
    if permanent { Failure::fatal(error) } else { Failure::transient(error) }
}

/// The innermost error's message: reqwest's own `Display` names the URL, and the interesting
/// part ("connection refused") is at the bottom of the chain anyway.
pub(crate) fn root_cause(e: &(dyn StdError + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    let text = cur.to_string();
    // "Connection refused (os error 111)" → "connection refused".
    let text = match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_owned(),
        _ => text,
    };
    let mut chars = text.chars();
    let text = match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => "unknown error".to_owned(),
    };
    one_line(&text, MAX_MESSAGE_CHARS)
}

fn io_kind(e: &(dyn StdError + 'static)) -> Option<io::ErrorKind> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            return Some(io.kind());
        }
        cur = err.source();
    }
    None
}

/// A non-2xx response.
fn status_failure(
    call: &Call<'_>,
    status: StatusCode,
    retry_after: Option<Duration>,
    body: &[u8],
) -> Failure {
    let code = status.as_u16();
    let host = &call.endpoint.host;
    let text = String::from_utf8_lossy(body);
    let lower = text.to_lowercase();
    let suffix = api_message(&text).map(|m| format!(": {m}")).unwrap_or_default();
    match code {
        // The body of an auth error may quote the key (OpenAI echoes a masked one): not used.
        401 | 403 => Failure::fatal(ModelError::Config(format!(
            "authentication failed (HTTP {code}): {}",
            call.auth_hint
        ))),
        408 | 429 | 500..=599 => {
            let what = match code {
                408 => "the request timed out",
                429 => "rate limited",
                529 => "overloaded",
                _ => "server error",
            };
            Failure {
                error: ModelError::Io(format!("{what} (HTTP {code} from {host}){suffix}")),
                retry: retry_after.map_or(Retry::Backoff, Retry::After),
            }
        }
        _ if is_context_overflow(code, &lower) => Failure::fatal(ModelError::ContextOverflow),
        _ if is_unknown_model(code, &lower) => Failure::fatal(ModelError::Config(format!(
            "unknown model `{}` (HTTP {code} from {host})",
            call.model
        ))),
        404 => Failure::fatal(ModelError::Config(format!(
            "nothing at {} (HTTP 404): check base_url",
            call.endpoint.display()
        ))),
        300..=399 => Failure::fatal(ModelError::Config(format!(
            "HTTP {code} from {host}: a redirect, which is not followed; check base_url"
        ))),
        _ => Failure::fatal(ModelError::Io(format!("HTTP {code} from {host}{suffix}"))),
    }
}

fn is_context_overflow(code: u16, lower_body: &str) -> bool {
    code == 413
        || (matches!(code, 400 | 422)
            && [
                "context_length",
                "context length",
                "prompt is too long",
                "context window",
                "context size",
                "maximum context",
            ]
            .iter()
            .any(|p| lower_body.contains(p)))
}

/// OpenAI says "The model `x` does not exist" (404), Anthropic "model: x" (404), Ollama
/// "model \"x\" not found" (404), some servers the same with 400.
fn is_unknown_model(code: u16, lower_body: &str) -> bool {
    let mentions_model = lower_body.contains("model");
    match code {
        404 => mentions_model,
        400 => {
            mentions_model
                && ["not found", "not_found", "does not exist", "unknown model", "invalid model"]
                    .iter()
                    .any(|p| lower_body.contains(p))
        }
        _ => false,
    }
}

/// The human part of an error body: `error.message` (OpenAI, Anthropic), `error` as a string
/// (Ollama), `message` or `detail` (FastAPI servers), else the text unless it is HTML.
fn api_message(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let found = [&v["error"]["message"], &v["error"], &v["message"], &v["detail"]]
            .into_iter()
            .find_map(|c| c.as_str().filter(|s| !s.trim().is_empty()));
        return found.map(|s| one_line(s, MAX_MESSAGE_CHARS));
    }
    if body.starts_with('<') {
        return None;
    }
    Some(one_line(body, MAX_MESSAGE_CHARS))
}

/// `text` on one line (whitespace runs collapsed), at most `max` characters.
pub use crate::text::short::one_line;

/// Remove the key from every text of `e`: messages quoted from a service may contain it.
fn scrub(e: ModelError, key: Option<&ApiKey>) -> ModelError {
    let Some(key) = key else { return e };
    let s = |t: String| scrub_text(&t, key.secret());
    match e {
        ModelError::Io(m) => ModelError::Io(s(m)),
        ModelError::Config(m) => ModelError::Config(s(m)),
        ModelError::InvalidOutput(m) => ModelError::InvalidOutput(s(m)),
        e @ (ModelError::Stopped
        | ModelError::TimedOut(_)
        | ModelError::ContextOverflow
        | ModelError::NotAModel
        | ModelError::TooLarge(_)) => e,
    }
}

fn scrub_text(text: &str, secret: &str) -> String {
    if secret.len() < 4 {
        // Too short to be a real key; replacing it would garble the message.
        return text.to_owned();
    }
    let out = text.replace(secret, "***");
    // Masked forms such as "sk-proj-abc…wxyz" still give half the key away.
    match secret.get(..8).filter(|_| secret.len() >= 16) {
        Some(prefix) => {
            out.split(' ').map(|w| if w.contains(prefix) { "***" } else { w }).collect::<Vec<_>>().join(" ")
        }
        None => out,
    }
}

// ---------------------------------------------------------------------------------------------
// Retry timing
// ---------------------------------------------------------------------------------------------

/// `Retry-After` (seconds or an HTTP date) or the `retry-after-ms` that OpenAI and Anthropic
/// also send, cut to `cap`.
fn retry_after(headers: &HeaderMap, cap: Duration) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let from_ms = header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|ms| secs_to_duration(ms / 1000.0, cap));
    from_ms.or_else(|| parse_retry_after(header(RETRY_AFTER.as_str())?, Utc::now(), cap))
}

/// A `Retry-After` value, relative to `now`, at most `cap`.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>, cap: Duration) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return secs_to_duration(secs, cap);
    }
    // IMF-fixdate ("Wed, 21 Oct 2015 07:28:00 GMT") is a valid RFC 2822 date.
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    let wait = (at.with_timezone(&Utc) - now).to_std().unwrap_or(Duration::ZERO);
    Some(wait.min(cap))
}

fn secs_to_duration(secs: f64, cap: Duration) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(cap.as_secs_f64())))
}

/// Exponential backoff for retry number `attempt` (1-based) with jitter in [50 %, 100 %], so
/// that clients failing together do not retry together.
fn backoff(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1u32 << attempt.saturating_sub(1).min(16)).min(MAX_BACKOFF);
    exp.mul_f64(0.5 + 0.5 * random_fraction())
}

/// Good enough randomness for jitter without a dependency: `RandomState` is seeded randomly
/// and differs between calls.
fn random_fraction() -> f64 {
    let bits = RandomState::new().hash_one(std::time::SystemTime::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
