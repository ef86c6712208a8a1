//! The stdio transport's guard: a filter between the client's bytes and tower-lsp-server's
//! reader, and one writer for everything that goes back.
//!
//! On its own, tower-lsp-server stops reading at the first body that is not a JSON-RPC message
//! (`{bad}`, `[]`, `null`, `"method": 123`), which ended `livenote lsp` with its scheduler and
//! runs, and it buffers whatever `Content-Length` announces. So the client's stream is read
//! here first, frame by frame: a frame whose header announces more than [`MAX_MESSAGE_BYTES`]
//! is refused (-32600) without buffering its body, and reading resumes at the next
//! `Content-Length` header, as after any garbage between frames (-32700); a body that is not
//! JSON gets a parse error (-32700), valid JSON that is neither a request, a notification nor a
//! response an invalid-request error (-32600, with the message's `id` when it has a usable one,
//! so the client can fail that request). The server keeps serving. Only well-formed messages
//! reach tower-lsp-server, re-framed, through an in-memory pipe.
//!
//! tower-lsp-server writes into another in-memory pipe; one task copies its output frame by
//! frame to the real stdout, and the filter's error replies take the same lock, so frames never
//! interleave. On the way, a response whose result is a placeholder for an answer the handler
//! serialised itself (`raw_results`) gets that answer in its place.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use futures::SinkExt;
use futures::channel::mpsc;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tower_lsp_server::jsonrpc::{Id, Request, Response};

/// The largest message body accepted from the client. A full-text sync of a large note is a few
/// megabytes; nothing a client legitimately sends comes near this.
pub const MAX_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;
/// A header line longer than this is not a header.
const MAX_HEADER_LINE: usize = 8 * 1024;
/// A header block with more lines than this is not one either.
const MAX_HEADER_LINES: usize = 32;
/// How much of a body is buffered before more is asked for.
const PIPE_BYTES: usize = 64 * 1024;
/// Requests handled at once. Handlers never wait on the client, so a modest level suffices; it
/// bounds memory under a flood of requests while keeping slow requests from blocking cheap ones.
const CONCURRENCY: usize = 32;
/// Requests read ahead of those being handled (tower-lsp-server's own queue).
const MESSAGE_QUEUE: usize = 100;
/// A request or notification being handled, to its answer.
type Task = std::pin::Pin<Box<dyn std::future::Future<Output = Option<Response>> + Send>>;
/// Once reading ended, how long the answers in progress may take to reach the client.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// JSON-RPC: the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: JSON, but not a request, notification or response.
pub const INVALID_REQUEST: i64 = -32600;

/// What the reader found at the head of the stream.
#[derive(Debug, PartialEq, Eq)]
enum Frame {
    /// A complete body (not yet checked).
    Body(Vec<u8>),
    /// Something to answer with an error (id `null`); the reader has already moved on.
    Refused { code: i64, message: String },
    /// The stream ended (possibly inside a frame).
    End,
}

/// One header line, or why there is none.
enum Line {
    Text(Vec<u8>),
    /// The line's last bytes.
    TooLong(Vec<u8>),
    End,
}

/// Reads the client's frames with bounded memory: header lines are capped, bodies over the cap
/// are never buffered.
struct FrameReader<R> {
    inner: R,
    /// A line read while skipping garbage that starts the next header block.
    pending: Option<Vec<u8>>,
    /// Discard lines until one that starts a header block (after garbage or a refused frame).
    resync: bool,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    fn new(inner: R) -> Self {
        FrameReader { inner, pending: None, resync: false }
    }

    /// The next line (with its ending). A line longer than `MAX_HEADER_LINE` is consumed
    /// through its end and reported as [`Line::TooLong`] with only its last `MAX_HEADER_LINE`
    /// bytes (where a header may start after garbage).
    async fn line(&mut self) -> io::Result<Line> {
        if let Some(line) = self.pending.take() {
            return Ok(Line::Text(line));
        }
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                return Ok(Line::End);
            }
            let (n, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let keep = &buf[n.saturating_sub(MAX_HEADER_LINE)..n];
            line.extend_from_slice(keep);
            if line.len() > MAX_HEADER_LINE {
                too_long = true;
                line.drain(..line.len() - MAX_HEADER_LINE);
            }
            self.inner.consume(n);
            if done {
                return Ok(if too_long { Line::TooLong(line) } else { Line::Text(line) });
            }
        }
    }

    /// The next frame. Never holds more than one header line plus one body of at most `cap`
    /// bytes.
    async fn next(&mut self, cap: u64) -> io::Result<Frame> {
        let mut length: Option<u64> = None;
        let mut lines = 0;
        loop {
            let text = match self.line().await? {
                Line::End => return Ok(Frame::End),
                Line::TooLong(_) if !self.resync => return Ok(self.garbage("a header line is too long")),
                Line::TooLong(text) | Line::Text(text) => text,
            };
            if self.resync {
                // Resume at the next `Content-Length`, wherever on the line it starts.
                if let Some(at) = header_start(&text) {
                    self.resync = false;
                    self.pending = Some(text[at..].to_vec());
                }
                continue;
            }
            let text = trim_line_end(&text);
            if text.is_empty() {
                if lines == 0 {
                    // Blank lines between messages are harmless.
                    continue;
                }
                break;
            }
            lines += 1;
            if lines > MAX_HEADER_LINES {
                return Ok(self.garbage("too many header lines"));
            }
            let Some((name, value)) = split_header(text) else {
                return Ok(self.garbage("expected a `Content-Length` header"));
            };
            if name.eq_ignore_ascii_case("content-length") {
                match value.parse::<u64>() {
                    Ok(n) => length = Some(n),
                    Err(_) => return Ok(self.garbage("the `Content-Length` header is not a number")),
                }
            }
            // Content-Type and others: the body is checked as UTF-8 JSON whatever they say.
        }
        let Some(length) = length else {
            return Ok(self.garbage("missing `Content-Length` header"));
        };
        if length > cap {
            // Skip what follows up to the next header rather than buffer (or wait for) it all.
            self.resync = true;
            tracing::warn!(length, cap, "refused a message larger than the limit");
            return Ok(Frame::Refused {
                code: INVALID_REQUEST,
                message: format!(
                    "Invalid Request: a message of {length} bytes is over the limit of {} MiB",
                    cap / (1024 * 1024)
                ),
            });
        }
        // Grows as bytes arrive, so a header that lies costs nothing until the bytes come, and
        // never past the announced length: a 1 MB note is held at 1 MB, not in the 2 MB a
        // doubling buffer ends at.
        let want = usize::try_from(length).unwrap_or(usize::MAX);
        let mut body = Vec::with_capacity(want.min(PIPE_BYTES));
        while body.len() < want {
            if body.len() == body.capacity() {
                body.reserve_exact(body.capacity().max(PIPE_BYTES).min(want - body.len()));
            }
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                return Ok(Frame::End);
            }
            let n = buf.len().min(body.capacity() - body.len());
            body.extend_from_slice(&buf[..n]);
            self.inner.consume(n);
        }
        Ok(Frame::Body(body))
    }

    /// Refuse what was read and skip ahead to the next header block.
    fn garbage(&mut self, why: &str) -> Frame {
        self.resync = true;
        tracing::warn!("skipping malformed input from the client: {why}");
        Frame::Refused { code: PARSE_ERROR, message: format!("Parse error: {why}") }
    }
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Where in `line` a header block may start (reading resumes there after garbage).
fn header_start(line: &[u8]) -> Option<usize> {
    memchr::memmem::find(&line.to_ascii_lowercase(), b"content-length")
}

fn split_header(line: &[u8]) -> Option<(&str, &str)> {
    let line = std::str::from_utf8(line).ok()?;
    let (name, value) = line.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return None;
    }
    Some((name, value.trim()))
}

/// A message from the client, parsed once: what tower-lsp-server's own (crate-private)
/// `Message` accepts.
enum Incoming {
    /// The client's answer to a request of ours.
    Response(Response),
    /// A request or a notification.
    Request(Request),
}

/// Why a body cannot go on to the server: the JSON-RPC error code, its message and the id to
/// answer with.
type Refusal = (i64, String, Id);

/// The message in `body`, or the error to answer it with.
fn parse(body: &[u8]) -> std::result::Result<Incoming, Refusal> {
    // tower-lsp-server checks this first, and ends at a failure.
    if std::str::from_utf8(body).is_err() {
        return Err((PARSE_ERROR, "Parse error: the message is not UTF-8".to_owned(), Id::Null));
    }
    // The common case: one parse with the types the server reads. Not through an untagged
    // enum as tower-lsp-server does: serde buffers the whole message into a tree of its own
    // first, then copies each string out of it (3 MB for a 1 MB `didOpen`). A request is tried
    // first (almost every message is one); what has no `method` (a request's defaults to "")
    // is then read as a response when it is one, as tower-lsp-server would.
    match serde_json::from_slice::<Request>(body) {
        Ok(request) if !request.method().is_empty() => return Ok(Incoming::Request(request)),
        request => {
            if let Ok(response) = serde_json::from_slice::<Response>(body) {
                return Ok(Incoming::Response(response));
            }
            if let Ok(request) = request {
                return Ok(Incoming::Request(request));
            }
        }
    }
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        return Err((PARSE_ERROR, format!("Parse error: {e}"), Id::Null));
    }
    /// The `id` of an object, when it has a usable one.
    #[derive(Deserialize)]
    struct WithId {
        id: Option<Id>,
    }
    // Answering with the request's id (when it has one) lets the client fail that request
    // instead of waiting for it forever; JSON-RPC says `null` when no id can be told.
    let id = serde_json::from_slice::<WithId>(body).ok().and_then(|w| w.id).unwrap_or(Id::Null);
    Err((
        INVALID_REQUEST,
        "Invalid Request: not a JSON-RPC 2.0 request, notification or response".to_owned(),
        id,
    ))
}

/// livenote's own requests with the parameters clients send for "none": `livenote/listNotes`
/// takes none, and many clients send `{}` or `[]` where tower-lsp-server accepts only no
/// `params` or `null`; `livenote/noteStatus` given none (`{}`, `null`, nothing) answers `null`,
/// so a status bar asking without a document gets "no note" rather than an error. Other
/// messages pass as they are (the prefilter spares every other body a second parse).
fn lenient_params(body: Vec<u8>) -> Vec<u8> {
    if memchr::memmem::find(&body, b"livenote/").is_none() {
        return body;
    }
    let Ok(serde_json::Value::Object(mut msg)) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return body;
    };
    let empty = |p: Option<&serde_json::Value>| match p {
        None | Some(serde_json::Value::Null) => true,
        Some(serde_json::Value::Object(o)) => o.is_empty(),
        Some(serde_json::Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    };
    let method = msg.get("method").and_then(serde_json::Value::as_str);
    let params = msg.get("params");
    match method {
        Some(super::custom::LIST_NOTES) if empty(params) && params.is_some() => {
            msg.remove("params");
        }
        Some(super::custom::NOTE_STATUS)
            if empty(params) && !params.is_some_and(serde_json::Value::is_object) =>
        {
            msg.insert("params".to_owned(), json!({}));
        }
        _ => return body,
    }
    serde_json::to_vec(&msg).unwrap_or(body)
}

fn header(len: usize) -> String {
    format!("Content-Length: {len}\r\n\r\n")
}

/// Write one whole frame with `body` to `out`, holding the lock for all of it.
async fn write_frame<W: AsyncWrite + Unpin>(out: &Mutex<W>, body: &[u8]) -> io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(header(body.len()).as_bytes()).await?;
    out.write_all(body).await?;
    out.flush().await
}

async fn write_error<W: AsyncWrite + Unpin>(
    out: &Mutex<W>,
    code: i64,
    message: &str,
    id: &Id,
) -> io::Result<()> {
    let reply = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    write_frame(out, reply.to_string().as_bytes()).await
}

/// A message from the client, and whether more of the client's bytes were already read behind
/// it (its batch goes on: see [`Batch`]).
type Read = (Incoming, bool);

/// Read the client's frames from `input`; send well-formed messages on to `messages`, answer the
/// rest. Ends at the end of `input`, or when nothing takes messages any more.
async fn filter<I, W>(input: I, mut messages: mpsc::Sender<Read>, out: Arc<Mutex<W>>) -> io::Result<()>
where
    I: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = FrameReader::new(BufReader::new(input));
    loop {
        match reader.next(MAX_MESSAGE_BYTES).await? {
            Frame::End => return Ok(()),
            Frame::Refused { code, message } => {
                write_error(&out, code, &message, &Id::Null).await?;
            }
            Frame::Body(body) => {
                // The body is dropped as soon as it is parsed: a large note is not held twice.
                let parsed = parse(&lenient_params(body));
                match parsed {
                    Ok(message) => {
                        // Blank lines between messages are no message.
                        let more = reader.pending.is_some()
                            || reader.inner.buffer().iter().any(|b| !b.is_ascii_whitespace());
                        if messages.send((message, more)).await.is_err() {
                            return Ok(());
                        }
                    }
                    Err((code, message, id)) => {
                        tracing::warn!("answered a malformed message with {code}: {message}");
                        write_error(&out, code, &message, &id).await?;
                    }
                }
            }
        }
    }
}

/// JSON-RPC (LSP): the client cancelled the request.
pub const CANCELLED: i64 = -32800;
/// How long a batch waits for a message whose first bytes were read with it.
const BATCH_PATIENCE: Duration = Duration::from_millis(50);

/// The messages read from the client in one go (their bytes were already read when the first
/// was parsed), handed on together once the last of them is here. A request that a
/// `$/cancelRequest` of the same batch cancels is answered -32800 and never handled: a
/// completion followed by the next keystroke and its cancel costs nothing. (A cancel that comes
/// later reaches tower-lsp-server's `$/cancelRequest`, which ends a handler still waiting.)
/// A batch waits only for bytes the client has begun to send.
#[derive(Default)]
struct Batch {
    held: Vec<Incoming>,
    /// The ids the batch's `$/cancelRequest`s name.
    cancels: std::collections::HashSet<Id>,
}

/// A complete batch: its messages in arrival order, and the ids its cancels name.
type Complete = (Vec<Incoming>, std::collections::HashSet<Id>);

impl Batch {
    /// Take one read message (`None`: the end of input); the whole batch once it is complete.
    fn add(&mut self, read: Option<Read>) -> Option<Complete> {
        let more = match read {
            Some((message, more)) => {
                if let Incoming::Request(req) = &message
                    && req.method() == "$/cancelRequest"
                    && let Some(id) =
                        req.params().and_then(|p| p.get("id")).and_then(|i| Id::deserialize(i).ok())
                {
                    self.cancels.insert(id);
                }
                self.held.push(message);
                more
            }
            None => false,
        };
        if more {
            return None;
        }
        Some(self.take())
    }

    /// The batch as it is, complete or not.
    fn take(&mut self) -> Complete {
        (std::mem::take(&mut self.held), std::mem::take(&mut self.cancels))
    }
}

/// Write one outgoing message (an answer, or a request or notification of ours) as a frame. An
/// answer kept serialised (`raw_results`) takes its placeholder's place.
async fn write_message<W, T>(
    out: &Mutex<W>,
    raw: &super::raw_results::RawResults,
    message: &T,
) -> io::Result<()>
where
    W: AsyncWrite + Unpin,
    T: serde::Serialize,
{
    let body = serde_json::to_vec(message).map_err(io::Error::other)?;
    match raw.splice(&body) {
        Some(spliced) => write_frame(out, &spliced).await,
        None => write_frame(out, &body).await,
    }
}

/// Serve LSP with `service` over `input`/`output`, behind the filter. Returns once the client
/// sent `exit` or closed `input`, after the answers in progress were written.
///
/// This is tower-lsp-server's own `Server::serve` (the same queue, concurrency and order),
/// fed with the messages the filter parsed rather than through a second framing of its own:
/// its reader would buffer every message again in a buffer that doubles and is never given
/// back (2 MiB for the whole time after one 1 MB `didOpen`), and parse it a second time.
/// Messages start in arrival order, each handler running to its first `.await` before the
/// next message is read, so `didChange` edits apply in order.
pub async fn serve<I, O>(
    input: I,
    output: O,
    mut service: tower_lsp_server::LspService<super::Backend>,
    socket: tower_lsp_server::ClientSocket,
) where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    use futures::StreamExt;
    use tower::Service;

    let out = Arc::new(Mutex::new(output));
    let state = Arc::clone(&service.inner().state);
    state.raw.enable();
    let (client_requests, mut client_responses) = socket.split();
    let (client_requests, client_abort) = futures::stream::abortable(client_requests);
    let (messages_tx, mut messages) = mpsc::channel::<Read>(0);
    let (mut tasks_tx, tasks) = mpsc::channel::<Task>(MESSAGE_QUEUE);
    // The reader may be blocked on the client's input after `exit`: it runs on its own and is
    // not waited for.
    let reading = tokio::spawn(filter(input, messages_tx, Arc::clone(&out)));

    let answers = tasks.buffer_unordered(CONCURRENCY).filter_map(std::future::ready).for_each(|res| {
        let (out, state) = (Arc::clone(&out), Arc::clone(&state));
        async move {
            if let Err(e) = write_message(&out, &state.raw, &res).await {
                tracing::debug!("writing an answer to the client: {e}");
            }
        }
    });
    let ours = client_requests.for_each(|req| {
        let (out, state) = (Arc::clone(&out), Arc::clone(&state));
        async move {
            if let Err(e) = write_message(&out, &state.raw, &req).await {
                tracing::debug!("writing to the client: {e}");
            }
        }
    });
    let dispatch = async {
        let mut batch = Batch::default();
        'reading: loop {
            let mut ended = false;
            let complete = if batch.held.is_empty() {
                let read = messages.next().await;
                ended = read.is_none();
                batch.add(read)
            } else {
                // Bytes that never make a message (a client's stray partial write) do not hold
                // up the batch for longer than this.
                match tokio::time::timeout(BATCH_PATIENCE, messages.next()).await {
                    Ok(read) => {
                        ended = read.is_none();
                        batch.add(read)
                    }
                    Err(_) => Some(batch.take()),
                }
            };
            let Some((ready, cancels)) = complete else { continue };
            for message in ready {
                match message {
                    Incoming::Request(req) if req.id().is_some_and(|id| cancels.contains(id)) => {
                        // Answered here without a handler: the client cancelled it in the
                        // same breath (a completion superseded by the next keystroke).
                        if let Some(id) = req.id() {
                            let _ = write_error(&out, CANCELLED, "Canceled", id).await;
                        }
                    }
                    Incoming::Request(req) => {
                        if let Err(e) = std::future::poll_fn(|cx| service.poll_ready(cx)).await {
                            tracing::error!("the language server stopped taking requests: {e}");
                            break 'reading;
                        }
                        let will_exit = req.method() == "exit";
                        let fut = service.call(req);
                        let task = async move {
                            fut.await.unwrap_or_else(|e| {
                                tracing::error!("a request failed in the server: {e}");
                                None
                            })
                        };
                        if tasks_tx.send(Box::pin(task)).await.is_err() || will_exit {
                            break 'reading;
                        }
                    }
                    Incoming::Response(res) => {
                        if let Err(e) = client_responses.send(res).await {
                            tracing::error!("an answer of the client found no request waiting: {e}");
                            break 'reading;
                        }
                    }
                }
            }
            if ended {
                break;
            }
        }
        tasks_tx.disconnect();
        client_abort.abort();
    };
    let draining = async {
        futures::join!(answers, ours);
    };
    tokio::pin!(draining);
    tokio::select! {
        // Cannot end first (it ends once reading did), but it runs meanwhile.
        () = &mut draining => {}
        () = dispatch => {
            // The answers in progress get a bounded time to reach the client.
            if tokio::time::timeout(DRAIN_TIMEOUT, &mut draining).await.is_err() {
                tracing::warn!("the last replies did not reach the client within {DRAIN_TIMEOUT:?}");
            }
        }
    }
    reading.abort();
}

#[cfg(test)]
#[path = "framing_tests.rs"]
mod tests;
