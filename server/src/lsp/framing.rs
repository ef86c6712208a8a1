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
mod tests {
    use serde_json::Value;

    use super::*;

    async fn frames(input: &[u8]) -> Vec<Frame> {
        let mut reader = FrameReader::new(BufReader::new(input));
        let mut out = Vec::new();
        loop {
            let f = reader.next(1000).await.unwrap_or(Frame::End);
            if f == Frame::End {
                return out;
            }
            out.push(f);
        }
    }

    fn body(text: &str) -> Frame {
        Frame::Body(text.as_bytes().to_vec())
    }

    fn code(f: &Frame) -> Option<i64> {
        match f {
            Frame::Refused { code, .. } => Some(*code),
            _ => None,
        }
    }

    #[tokio::test]
    async fn frames_with_any_headers_and_blank_lines_between() {
        let input = b"Content-Length: 2\r\n\r\n{}\r\ncontent-length: 3\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[1]Content-Length:1\n\n5";
        assert_eq!(frames(input).await, vec![body("{}"), body("[1]"), body("5")]);
    }

    #[tokio::test]
    async fn oversized_frames_are_refused_and_skipped() {
        // The announced body never arrives in full; the next header is found after it.
        let input =
            b"Content-Length: 99999999999\r\n\r\n{\"partial\": \"xxxx\nyyy\"}Content-Length: 2\r\n\r\n{}";
        let got = frames(input).await;
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(code(&got[0]), Some(INVALID_REQUEST));
        assert_eq!(got[1], body("{}"));
        // A body over the cap that does arrive (without line breaks) is skipped as well.
        let big = format!("Content-Length: 5000\r\n\r\n{}Content-Length: 2\r\n\r\n[]", "x".repeat(5000));
        let got = frames(big.as_bytes()).await;
        assert_eq!((code(&got[0]), &got[1]), (Some(INVALID_REQUEST), &body("[]")));
    }

    #[tokio::test]
    async fn garbage_headers_are_refused_and_skipped() {
        let long = format!("X-Long: {}\r\n\r\n", "y".repeat(MAX_HEADER_LINE));
        for garbage in ["{bad}\r\n", "Content-Length: ten\r\n\r\n", "Content-Length 2\r\n\r\n", long.as_str()]
        {
            let input = format!("{garbage}junk\r\nContent-Length: 2\r\n\r\n{{}}");
            let got = frames(input.as_bytes()).await;
            assert_eq!(got.len(), 2, "{garbage:?}: {got:?}");
            assert_eq!(code(&got[0]), Some(PARSE_ERROR), "{garbage:?}");
            assert_eq!(got[1], body("{}"), "{garbage:?}");
        }
        // No Content-Length at all: refused; the next block is read normally.
        let got = frames(b"Content-Type: x\r\n\r\nContent-Length: 2\r\n\r\n{}").await;
        assert_eq!((code(&got[0]), &got[1]), (Some(PARSE_ERROR), &body("{}")));
    }

    #[tokio::test]
    async fn truncated_input_ends_the_stream() {
        assert_eq!(frames(b"Content-Length: 10\r\n\r\n{}").await, vec![]);
        assert_eq!(frames(b"Content-Len").await, vec![]);
        assert_eq!(frames(b"").await, vec![]);
    }

    /// Pieces that make up hostile input: headers (some huge), separators, garbage, bodies.
    fn piece() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            (0u64..3000).prop_map(|n| format!("Content-Length: {n}\r\n").into_bytes()),
            Just(b"Content-Length: 99999999999\r\n".to_vec()),
            Just(b"content-length:x\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"{}".to_vec()),
            Just(vec![b'z'; 9000]),
            prop::collection::vec(any::<u8>(), 0..40),
        ]
    }

    proptest::proptest! {
        /// Whatever arrives, reading ends without a panic, and no body is over the cap.
        #[test]
        fn any_input_is_read_within_the_cap(pieces in proptest::collection::vec(piece(), 0..30)) {
            let input = pieces.concat();
            let runtime = tokio::runtime::Builder::new_current_thread().build();
            let Ok(runtime) = runtime else { return Ok(()) };
            let got = runtime.block_on(frames(&input));
            for f in &got {
                if let Frame::Body(b) = f {
                    proptest::prop_assert!(b.len() <= 1000);
                }
            }
            // Every frame consumed input: never more frames than header lines plus garbage.
            proptest::prop_assert!(got.len() <= input.len());
        }

        /// Against a simple model: batches hand on every message once, in arrival order, each
        /// batch ending at a message read with nothing behind it (or the end of input), and
        /// name exactly the ids their own cancels name.
        #[test]
        fn batches_keep_order_and_name_their_own_cancels(
            reads in proptest::collection::vec((0u8..3, 0i64..4, proptest::bool::ANY), 0..40),
        ) {
            let mut batch = Batch::default();
            let (mut model_batch, mut model_cancels) = (Vec::new(), Vec::new());
            let text = |kind: u8, id: i64| match kind {
                0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"textDocument/completion","params":{{}}}}"#),
                1 => r#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{}}"#.to_owned(),
                _ => format!(r#"{{"jsonrpc":"2.0","method":"$/cancelRequest","params":{{"id":{id}}}}}"#),
            };
            let check = |got: Option<Complete>, model: &mut Vec<String>, cancels: &mut Vec<i64>| {
                let Some((held, ids)) = got else { return Ok(()) };
                let names: Vec<String> = held
                    .iter()
                    .map(|m| match m {
                        Incoming::Request(r) => format!("{} {:?}", r.method(), r.id()),
                        Incoming::Response(_) => "response".to_owned(),
                    })
                    .collect();
                proptest::prop_assert_eq!(&names, &*model);
                let want: std::collections::HashSet<Id> = cancels.iter().map(|i| Id::Number(*i)).collect();
                proptest::prop_assert_eq!(ids, want);
                model.clear();
                cancels.clear();
                Ok(())
            };
            for (kind, id, more) in reads {
                let body = text(kind, id);
                let Ok(message) = parse(body.as_bytes()) else { return Err(proptest::test_runner::TestCaseError::fail(body)) };
                if let Incoming::Request(r) = &message {
                    model_batch.push(format!("{} {:?}", r.method(), r.id()));
                }
                if kind == 2 {
                    model_cancels.push(id);
                }
                check(batch.add(Some((message, more))), &mut model_batch, &mut model_cancels)?;
            }
            check(batch.add(None), &mut model_batch, &mut model_cancels)?;
            proptest::prop_assert!(model_batch.is_empty());
        }
    }

    #[test]
    fn bodies_are_checked_like_tower_lsp_server_reads_them() {
        let ok = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":null}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}"#,
        ];
        for body in ok {
            assert!(parse(body.as_bytes()).is_ok(), "{body}");
        }
        let bad = [
            ("{bad}", PARSE_ERROR, Id::Null),
            ("", PARSE_ERROR, Id::Null),
            ("[]", INVALID_REQUEST, Id::Null),
            ("null", INVALID_REQUEST, Id::Null),
            ("[{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]", INVALID_REQUEST, Id::Null),
            (r#"{"jsonrpc":"2.0","id":1,"method":123}"#, INVALID_REQUEST, Id::Number(1)),
            (r#"{"jsonrpc":"1.0","id":"q","method":"x"}"#, INVALID_REQUEST, Id::String("q".into())),
            (r#"{"id":[1],"method":"x"}"#, INVALID_REQUEST, Id::Null),
        ];
        for (body, want, id) in bad {
            let got = parse(body.as_bytes()).err();
            assert_eq!(got.as_ref().map(|g| (g.0, &g.2)), Some((want, &id)), "{body}: {got:?}");
        }
        assert_eq!(parse(b"\"\xff\"").err().map(|g| g.0), Some(PARSE_ERROR));
    }

    #[tokio::test]
    async fn filter_answers_garbage_and_passes_the_rest_on_parsed() {
        use futures::StreamExt;
        let input = b"Content-Length: 5\r\n\r\n{bad}Content-Length: 4\r\n\r\nnull\
Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}\
Content-Length: 38\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":null}"
            .to_vec();
        let (tx, rx) = mpsc::channel(8);
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let r = filter(&input[..], tx, Arc::clone(&out)).await;
        assert!(r.is_ok(), "{r:?}");
        let passed: Vec<String> = rx
            .map(|(m, _)| match m {
                Incoming::Request(r) => format!("request {}", r.method()),
                Incoming::Response(r) => format!("response {:?}", r.into_parts().0),
            })
            .collect()
            .await;
        assert_eq!(passed, vec!["request initialized".to_owned(), "response Number(7)".to_owned()]);
        let replies = String::from_utf8_lossy(&out.lock().await).into_owned();
        let bodies: Vec<Value> = replies
            .split("Content-Length: ")
            .filter_map(|f| f.split_once("\r\n\r\n"))
            .filter_map(|(_, b)| serde_json::from_str(b).ok())
            .collect();
        let codes: Vec<(Value, Value)> =
            bodies.iter().map(|b| (b["error"]["code"].clone(), b["id"].clone())).collect();
        assert_eq!(codes, vec![(json!(PARSE_ERROR), Value::Null), (json!(INVALID_REQUEST), Value::Null)]);
    }

    #[test]
    fn a_batch_holds_what_was_read_together_and_names_its_cancels() {
        let msg = |text: &str| match parse(text.as_bytes()) {
            Ok(m) => m,
            Err(e) => panic!("{text}: {e:?}"),
        };
        let mut batch = Batch::default();
        let completion = r#"{"jsonrpc":"2.0","id":4,"method":"textDocument/completion","params":{}}"#;
        let change = r#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{}}"#;
        let cancel = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":4}}"#;
        assert!(batch.add(Some((msg(completion), true))).is_none());
        assert!(batch.add(Some((msg(change), true))).is_none());
        let Some((held, cancels)) = batch.add(Some((msg(cancel), false))) else { panic!("not complete") };
        assert_eq!(held.len(), 3);
        assert_eq!(cancels, [Id::Number(4)].into_iter().collect());
        // The next batch starts empty; the end of input completes whatever is held.
        assert!(batch.add(Some((msg(completion), true))).is_none());
        let Some((held, cancels)) = batch.add(None) else { panic!("not complete") };
        assert_eq!((held.len(), cancels.len()), (1, 0));
    }

    #[tokio::test]
    async fn a_body_is_held_at_its_announced_size() {
        let text = "x".repeat(PIPE_BYTES * 3 + 17);
        let input = format!("Content-Length: {}\r\n\r\n{text}", text.len());
        let mut reader = FrameReader::new(BufReader::new(input.as_bytes()));
        let Ok(Frame::Body(body)) = reader.next(u64::MAX).await else { panic!("no body") };
        assert_eq!((body.len(), body.capacity()), (text.len(), text.len()));
    }
}
