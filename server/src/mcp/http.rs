//! MCP over streamable HTTP (`url = "http://…/mcp"`), through livenote's own reqwest (0.12,
//! rustls): rmcp's transport runs the protocol (sessions, the SSE stream, reconnects, the
//! protocol-version headers); this adapter makes its three kinds of HTTP request. Every
//! response is bounded as rmcp's own client bounds it: a JSON answer by
//! `max_json_response_size`, an error body by `max_error_response_size`, each SSE event by
//! `max_sse_event_size`. There is no whole-request timeout (the SSE stream lives long): calls
//! are bounded by the server's `timeout` above, the connection by [`CONNECT_TIMEOUT`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, StatusCode};
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::model::{ClientConfig, ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use crate::config::format_duration;

const SESSION_ID: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";
/// How long reaching the server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

type Error = StreamableHttpError<reqwest::Error>;

/// The headers of a `url` server, their values read from the environment now: a missing or
/// unusable variable is an error naming it (never its value).
pub(super) fn headers_from_env(
    server: &str,
    headers: &[crate::config::HeaderFromEnv],
    env: &dyn crate::config::Env,
) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    let mut out = HashMap::new();
    for h in headers {
        let setting = if h.bearer { "bearer_token_env" } else { "headers_env" };
        let Some(value) = env.var(&h.var) else {
            return Err(format!("{} is not set (named by {setting} of MCP server `{server}`)", h.var));
        };
        let value = value.to_str().map(str::trim).unwrap_or_default();
        let value = if h.bearer { format!("Bearer {value}") } else { value.to_owned() };
        let name = HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|_| format!("`{}` is not an HTTP header name", h.name))?;
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            format!(
                "{} holds a value an HTTP header cannot carry (named by {setting} of MCP server `{server}`)",
                h.var
            )
        })?;
        // Kept out of debug output and HTTP/2 header compression tables.
        value.set_sensitive(true);
        out.insert(name, value);
    }
    Ok(out)
}

/// Connect to the server at `url` and run the MCP handshake (as `client`) within `timeout`,
/// sending `headers` with every request.
pub(super) async fn connect(
    url: &str,
    headers: HashMap<HeaderName, HeaderValue>,
    timeout: Duration,
    client: ClientConfig,
) -> Result<RunningService<RoleClient, ClientConfig>, String> {
    let http = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        // A server's redirect must not take the session (and its headers) elsewhere.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    let transport = StreamableHttpClientTransport::with_client(
        Reqwest(http),
        StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers),
    );
    match tokio::time::timeout(timeout, client.serve(transport)).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => {
            Err(format!("cannot reach it at {url}: {}", crate::text::short::one_line(&e.to_string(), 300)))
        }
        Err(_) => Err(format!("it did not answer within {}", format_duration(timeout))),
    }
}

/// Our reqwest client (neither the trait nor reqwest's client is ours).
#[derive(Clone)]
struct Reqwest(reqwest::Client);

fn content_type(r: &reqwest::Response) -> Option<String> {
    r.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase)
}

fn with_headers(
    mut req: reqwest::RequestBuilder,
    auth: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    if let Some(token) = auth {
        req = req.bearer_auth(token);
    }
    // The protocol version and the like, from rmcp.
    for (name, value) in headers {
        req = req.header(name, value);
    }
    req
}

/// The whole body, failing past `max` bytes.
async fn read_bounded(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    let mut chunks = resp.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(StreamableHttpError::Client)?;
        if body.len() + chunk.len() > max {
            return Err(too_large(max));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most `max` bytes of the body, for an error message.
async fn read_prefix(resp: reqwest::Response, max: usize) -> String {
    let mut body = Vec::new();
    let mut chunks = resp.bytes_stream();
    while body.len() < max {
        match chunks.next().await {
            Some(Ok(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(max);
    String::from_utf8_lossy(&body).into_owned()
}

fn too_large(max: usize) -> Error {
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
        "the server's answer is larger than {}",
        crate::text::count::bytes(max as u64)
    )))
}

/// The response's SSE events, each at most `max` bytes (its lines, without their endings).
fn bounded_sse(resp: reqwest::Response, max: usize) -> BoxStream<'static, Result<Sse, SseError>> {
    let mut limit = EventLimit { max, pending: 0, at_line_start: true, after_cr: false };
    let bytes = resp.bytes_stream().map_err(std::io::Error::other).and_then(move |chunk| {
        let checked = limit.feed(&chunk).map(|()| chunk);
        std::future::ready(checked)
    });
    SseStream::from_bytes_stream(bytes).boxed()
}

/// Counts the bytes of the SSE event under way: an event ends at an empty line.
struct EventLimit {
    max: usize,
    pending: usize,
    at_line_start: bool,
    after_cr: bool,
}

impl EventLimit {
    fn feed(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        for &b in chunk {
            match b {
                // The `\n` of a `\r\n` ends the line the `\r` ended.
                b'\n' if self.after_cr => self.after_cr = false,
                b'\r' | b'\n' => {
                    if self.at_line_start {
                        self.pending = 0;
                    }
                    self.at_line_start = true;
                    self.after_cr = b == b'\r';
                }
                _ => {
                    self.after_cr = false;
                    self.at_line_start = false;
                    self.pending += 1;
                    if self.pending > self.max {
                        return Err(std::io::Error::other(format!(
                            "an event of the server's stream is larger than {}",
                            crate::text::count::bytes(self.max as u64)
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

impl Reqwest {
    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let mut req =
            self.0.post(uri.as_ref()).header(ACCEPT, format!("{JSON}, {EVENT_STREAM}")).json(&message);
        if let Some(s) = &session_id {
            req = req.header(SESSION_ID, s.as_ref());
        }
        let resp = with_headers(req, auth, headers).send().await.map_err(StreamableHttpError::Client)?;
        let status = resp.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let new_session = resp.headers().get(SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let ct = content_type(&resp);
        if !status.is_success() {
            // A JSON-RPC error is the server's answer; anything else is only a message.
            if ct.as_deref().is_some_and(|c| c.starts_with(JSON)) {
                let body = read_bounded(resp, limits.max_json_response_size).await?;
                if let Ok(m @ JsonRpcMessage::Error(_)) =
                    serde_json::from_slice::<ServerJsonRpcMessage>(&body)
                {
                    return Ok(StreamableHttpPostResponse::Json(m, new_session));
                }
                let text = String::from_utf8_lossy(&body[..body.len().min(limits.max_error_response_size)])
                    .into_owned();
                return Err(unexpected(status, &text));
            }
            let text = read_prefix(resp, limits.max_error_response_size).await;
            return Err(unexpected(status, &text));
        }
        let no_reply = !matches!(message, JsonRpcMessage::Request(_));
        match ct.as_deref() {
            Some(c) if c.starts_with(EVENT_STREAM) => {
                Ok(StreamableHttpPostResponse::Sse(bounded_sse(resp, limits.max_sse_event_size), new_session))
            }
            Some(c) if c.starts_with(JSON) => {
                let body = read_bounded(resp, limits.max_json_response_size).await?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(m) => Ok(StreamableHttpPostResponse::Json(m, new_session)),
                    Err(_) if no_reply => Ok(StreamableHttpPostResponse::Accepted),
                    Err(e) => Err(StreamableHttpError::Deserialize(e)),
                }
            }
            _ if no_reply => Ok(StreamableHttpPostResponse::Accepted),
            other => Err(StreamableHttpError::UnexpectedContentType(other.map(str::to_owned))),
        }
    }

    async fn get(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max_event: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let mut req = self.0.get(uri.as_ref()).header(ACCEPT, format!("{EVENT_STREAM}, {JSON}"));
        if let Some(s) = session_id {
            req = req.header(SESSION_ID, s.as_ref());
        }
        if let Some(id) = last_event_id {
            req = req.header(LAST_EVENT_ID, id);
        }
        let resp = with_headers(req, auth, headers).send().await.map_err(StreamableHttpError::Client)?;
        if resp.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        let resp = resp.error_for_status().map_err(StreamableHttpError::Client)?;
        match content_type(&resp).as_deref() {
            Some(c) if c.starts_with(EVENT_STREAM) || c.starts_with(JSON) => Ok(bounded_sse(resp, max_event)),
            other => Err(StreamableHttpError::UnexpectedContentType(other.map(str::to_owned))),
        }
    }
}

fn unexpected(status: StatusCode, body: &str) -> Error {
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
        "HTTP {status}: {}",
        crate::text::short::one_line(body, 300)
    )))
}

impl StreamableHttpClient for Reqwest {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.post(uri, message, session_id, auth, headers, StreamableHttpResponseLimits::default()).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post(uri, message, session_id, auth, headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.post(uri, message, session_id, auth, headers, limits).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let req = self.0.delete(uri.as_ref()).header(SESSION_ID, session_id.as_ref());
        let resp = with_headers(req, auth, headers).send().await.map_err(StreamableHttpError::Client)?;
        if resp.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        resp.error_for_status().map_err(StreamableHttpError::Client)?;
        Ok(())
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let max = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get(uri, session_id, last_event_id, auth, headers, max).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.get(uri, session_id, last_event_id, auth, headers, max_sse_event_size).await
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use rmcp::model::ClientConfig;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::EventLimit;

    /// A server's redirect never takes the session, or the headers with its token, anywhere:
    /// where it points is never connected to (so no rule of where a redirect may go applies).
    #[tokio::test]
    async fn a_redirect_is_not_followed() {
        let elsewhere = TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
        let elsewhere_port = elsewhere.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
        let reached = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&reached);
        tokio::spawn(async move {
            while elsewhere.accept().await.is_ok() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        });
        let server = TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
        let port = server.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = server.accept().await {
                let _ = socket.read(&mut [0u8; 8192]).await;
                let answer = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{elsewhere_port}/mcp\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        let url = format!("http://127.0.0.1:{port}/mcp");
        let connected =
            super::connect(&url, HashMap::new(), Duration::from_secs(5), ClientConfig::default()).await;
        let Err(e) = connected else { panic!("connected through a redirect") };
        assert!(e.starts_with(&format!("cannot reach it at {url}: ")), "{e}");
        assert_eq!(reached.load(Ordering::SeqCst), 0, "the redirect's target was reached");
    }

    #[test]
    fn sse_events_are_bounded_one_by_one() {
        let mut limit = EventLimit { max: 10, pending: 0, at_line_start: true, after_cr: false };
        // Two events of 8 and 9 bytes, split anywhere, with both kinds of line ending.
        assert!(limit.feed(b"data: ab\n\nda").is_ok());
        assert!(limit.feed(b"ta: abc\r\n\r\n").is_ok());
        assert!(limit.feed(b"data: abcd\n").is_ok());
        // The same event goes on past the limit.
        assert!(limit.feed(b"data: e\n").is_err());
        let mut limit = EventLimit { max: 10, pending: 0, at_line_start: true, after_cr: false };
        assert!(limit.feed(&[b'x'; 11]).is_err());
    }
}
