//! An in-process LSP client: the real service over `tokio::io::duplex` pipes with real
//! `Content-Length` framing. It answers the server's requests like an editor would
//! (`workspace/applyEdit` is applied to its own copy of the document)
//! and collects notifications for the tests to await.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use livenote::schedule::{ManualClock, Zone};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::{mpsc, oneshot};

pub const TIMEOUT: Duration = Duration::from_secs(10);

pub fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-23T15:07:00Z").map(|t| t.with_timezone(&Utc)).unwrap_or_default()
}

/// The client's copy of an open document, kept in step with what it sends and applies.
#[derive(Debug, Clone, Default)]
pub struct ClientDoc {
    pub text: String,
    pub version: i32,
}

#[derive(Default)]
struct Shared {
    pending: HashMap<i64, oneshot::Sender<Value>>,
    docs: HashMap<String, ClientDoc>,
    utf8: bool,
    /// Before answering the next applyEdit, "type" this (insert `.1` after the first `.0`),
    /// send it, and reject the edit as stale — a user racing the agent.
    type_before_next_apply: Option<(String, String)>,
    /// Behave like Neovim: edits are applied to a buffer of lines ([`apply_like_neovim`]),
    /// each applied edit is followed by a second version of the document that reaches the
    /// server late (just before its next edit), and an edit for an older version is rejected
    /// yet answered with `applied: true`.
    neovim: bool,
    /// Documents whose second version is still to be sent (`neovim`).
    pending_bumps: Vec<String>,
    /// The messages of the `window/showMessageRequest`s the server sent, in order.
    asked: Vec<String>,
}

pub struct TestClient {
    writer: Arc<tokio::sync::Mutex<WriteHalf<DuplexStream>>>,
    shared: Arc<Mutex<Shared>>,
    notifications: mpsc::UnboundedReceiver<Value>,
    next_id: i64,
    pub clock: ManualClock,
    pub root: tempfile::TempDir,
}

fn lock(m: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl TestClient {
    /// Start a server over a fresh workspace folder containing `files` (path, text).
    pub async fn start(files: &[(&str, &str)], capabilities: Value) -> TestClient {
        TestClient::start_with_settings(files, capabilities, Value::Null).await
    }

    /// [`TestClient::start`] with `initializationOptions` (the client's settings).
    pub async fn start_with_settings(
        files: &[(&str, &str)],
        capabilities: Value,
        settings: Value,
    ) -> TestClient {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        TestClient::start_in(root, files, capabilities, settings, false).await
    }

    /// A client that opens no folder (VS Code's single-file mode): no `rootUri`, no
    /// `workspaceFolders`.
    pub async fn start_without_folder(
        files: &[(&str, &str)],
        capabilities: Value,
        settings: Value,
    ) -> TestClient {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        TestClient::start_with(root, files, capabilities, settings, false, false, false).await
    }

    /// [`TestClient::start_with_settings`] in `root`, trusted beforehand when `trusted` (in the
    /// test's own trust store, `root/.data`).
    pub async fn start_in(
        root: tempfile::TempDir,
        files: &[(&str, &str)],
        capabilities: Value,
        settings: Value,
        trusted: bool,
    ) -> TestClient {
        TestClient::start_with(root, files, capabilities, settings, trusted, true, false).await
    }

    /// [`TestClient::start_in`] with the server watching files itself (`notify`) where the
    /// client does not: the workspace unless the client registers a watcher, and the trust store.
    pub async fn start_watching(
        root: tempfile::TempDir,
        files: &[(&str, &str)],
        capabilities: Value,
        settings: Value,
    ) -> TestClient {
        TestClient::start_with(root, files, capabilities, settings, false, true, true).await
    }

    /// [`TestClient::start_in`], trusted, with the server watching files itself (`notify`):
    /// what another process changes (a lock taken, the trust store) reaches it only so.
    pub async fn start_trusted_watching(
        root: tempfile::TempDir,
        files: &[(&str, &str)],
        capabilities: Value,
        settings: Value,
    ) -> TestClient {
        TestClient::start_with(root, files, capabilities, settings, true, true, true).await
    }

    async fn start_with(
        root: tempfile::TempDir,
        files: &[(&str, &str)],
        capabilities: Value,
        settings: Value,
        trusted: bool,
        folder: bool,
        watch_files: bool,
    ) -> TestClient {
        if trusted {
            let store = livenote::workspace::trust::TrustStore::in_dir(&root.path().join(".data"));
            store.trust(root.path()).unwrap_or_else(|e| panic!("{e}"));
        }
        for (rel, text) in files {
            let p = root.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap_or(root.path())).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
        }
        let clock = ManualClock::new(now());
        let opts = livenote::lsp::Options {
            clock: Arc::new(clock.clone()),
            zone: Zone::Named(chrono_tz::America::Chicago),
            watch_files,
            trust: Some(livenote::workspace::trust::TrustStore::in_dir(&root.path().join(".data"))),
            mcp_tools: Some(Arc::new(livenote::mcp::cache::ToolCache::in_dir(&root.path().join(".data")))),
            user_dir: Some(root.path().join(".config")),
        };
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_end);
        // The transport `livenote lsp` serves stdio with (framing, raw answers), over a pipe.
        tokio::spawn(livenote::lsp::serve(server_read, server_write, opts, None));
        let (client_read, client_write) = tokio::io::split(client_end);
        let writer = Arc::new(tokio::sync::Mutex::new(client_write));
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(read_loop(BufReader::new(client_read), writer.clone(), shared.clone(), tx));
        let utf8 = capabilities
            .pointer("/general/positionEncodings")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|e| e == "utf-8"));
        lock(&shared).utf8 = utf8;
        let mut c = TestClient { writer, shared, notifications: rx, next_id: 1, clock, root };
        let root_uri = if folder { json!(c.uri("")) } else { Value::Null };
        let folders = if folder { json!([{"uri": root_uri, "name": "notes"}]) } else { Value::Null };
        let res = c
            .request(
                "initialize",
                json!({"processId": null, "rootUri": root_uri, "capabilities": capabilities,
                       "initializationOptions": settings, "workspaceFolders": folders}),
            )
            .await;
        assert!(res.get("result").is_some(), "initialize failed: {res}");
        c.notify("initialized", json!({})).await;
        c
    }

    pub fn uri(&self, rel: &str) -> String {
        let p = self.root.path().join(rel);
        let p = if rel.is_empty() { self.root.path().to_path_buf() } else { p };
        tower_lsp_server::ls_types::Uri::from_file_path(&p).map(|u| u.as_str().to_owned()).unwrap_or_default()
    }

    pub async fn send(&self, msg: Value) {
        let body = msg.to_string();
        let mut w = self.writer.lock().await;
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        w.write_all(frame.as_bytes()).await.unwrap_or_else(|e| panic!("write: {e}"));
    }

    pub async fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let (tx, rx) = oneshot::channel();
        lock(&self.shared).pending.insert(id, tx);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        tokio::time::timeout(TIMEOUT, rx)
            .await
            .unwrap_or_else(|_| panic!("{method}: no response"))
            .unwrap_or_else(|e| panic!("{method}: {e}"))
    }

    /// Send a request and, in the same write, the messages `then` makes of its id (a change
    /// and a `$/cancelRequest`, as an editor sends them when the next keystroke supersedes a
    /// completion); its response.
    pub async fn request_then(
        &mut self,
        method: &str,
        params: Value,
        then: impl FnOnce(i64) -> Vec<Value>,
    ) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let (tx, rx) = oneshot::channel();
        lock(&self.shared).pending.insert(id, tx);
        let mut frames = String::new();
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        for msg in std::iter::once(request).chain(then(id)) {
            let body = msg.to_string();
            frames.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        }
        self.writer.lock().await.write_all(frames.as_bytes()).await.unwrap_or_else(|e| panic!("write: {e}"));
        tokio::time::timeout(TIMEOUT, rx)
            .await
            .unwrap_or_else(|_| panic!("{method}: no response"))
            .unwrap_or_else(|e| panic!("{method}: {e}"))
    }

    pub async fn open(&self, rel: &str, text: &str) -> String {
        self.open_uri(self.uri(rel), text).await
    }

    /// Open a document under a URI spelled by the test (another editor's encoding of it).
    pub async fn open_uri(&self, uri: String, text: &str) -> String {
        lock(&self.shared).docs.insert(uri.clone(), ClientDoc { text: text.to_owned(), version: 1 });
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}),
        )
        .await;
        uri
    }

    pub fn doc(&self, uri: &str) -> ClientDoc {
        lock(&self.shared).docs.get(uri).cloned().unwrap_or_default()
    }

    /// Replace `start..end` (bytes of the client's text) and send it as an incremental change.
    pub async fn edit(&self, uri: &str, start: usize, end: usize, new_text: &str) {
        let (range, version) = {
            let mut s = lock(&self.shared);
            let utf8 = s.utf8;
            let Some(doc) = s.docs.get_mut(uri) else { panic!("{uri} is not open") };
            let range = json!({"start": pos(&doc.text, start, utf8), "end": pos(&doc.text, end, utf8)});
            doc.text.replace_range(start..end, new_text);
            doc.version += 1;
            (range, doc.version)
        };
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": range, "text": new_text}]}),
        )
        .await;
    }

    /// Answer `workspace/applyEdit` as Neovim does (see `Shared::neovim`).
    /// The questions (`window/showMessageRequest`) the server asked so far.
    pub fn asked(&self) -> Vec<String> {
        lock(&self.shared).asked.clone()
    }

    pub fn behave_like_neovim(&self) {
        lock(&self.shared).neovim = true;
    }

    /// Make the next `workspace/applyEdit` lose a race: the user types `insert` after
    /// `after` first, so the edit's version is stale and the editor rejects it.
    pub fn type_before_next_apply(&self, after: &str, insert: &str) {
        lock(&self.shared).type_before_next_apply = Some((after.to_owned(), insert.to_owned()));
    }

    /// Apply a `WorkspaceEdit` (from a code action) like an editor: change the buffer, then
    /// tell the server with `didChange`.
    pub async fn apply_workspace_edit(&self, edit: &Value) {
        let msg = json!({"method": "workspace/applyEdit", "id": 0, "params": {"edit": edit}});
        let (reply, follow_ups) = answer(&self.shared, &msg);
        assert_eq!(reply["applied"], true, "{reply}");
        for n in follow_ups {
            self.send(n).await;
        }
    }

    /// The next notification with this method (others are dropped).
    pub async fn next_notification(&mut self, method: &str) -> Value {
        loop {
            let n = tokio::time::timeout(TIMEOUT, self.notifications.recv())
                .await
                .unwrap_or_else(|_| panic!("no {method} notification"))
                .unwrap_or_else(|| panic!("connection closed"));
            if n["method"] == method {
                return n["params"].clone();
            }
        }
    }

    /// The notifications received and not yet awaited, taken.
    pub fn drained(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.notifications.try_recv().ok()).collect()
    }

    /// Diagnostics published for `uri` at `version` (earlier versions are skipped).
    /// The next `$/progress` notification of `kind` ("begin", "report", "end"); its value.
    pub async fn progress(&mut self, kind: &str) -> Value {
        loop {
            let p = self.next_notification("$/progress").await;
            if p["value"]["kind"] == kind {
                return p["value"].clone();
            }
        }
    }

    /// Run the note by hand (`livenote.run`) and wait for the run's end; its message.
    pub async fn run_to_end(&mut self, uri: &str) -> String {
        let res = self
            .request("workspace/executeCommand", json!({"command": "livenote.run", "arguments": [uri]}))
            .await;
        assert!(res.get("error").is_none(), "{res}");
        self.progress("end").await["message"].as_str().unwrap_or_default().to_owned()
    }

    /// The code actions at the first of `diags` (its quick fixes first), with `diags` as the
    /// request's context: the whole answer.
    pub async fn fixes_for(&mut self, uri: &str, diags: &[Value]) -> Value {
        self.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": diags[0]["range"], "context": {"diagnostics": diags}}),
        )
        .await
    }

    /// The completion items at byte `at` of `text` (the document's current text, UTF-16).
    pub async fn completions(&mut self, uri: &str, text: &str, at: usize) -> Vec<Value> {
        let items = self
            .request(
                "textDocument/completion",
                json!({"textDocument": {"uri": uri}, "position": pos(text, at, false)}),
            )
            .await;
        items["result"].as_array().cloned().unwrap_or_default()
    }

    pub async fn diagnostics(&mut self, uri: &str, version: i32) -> Vec<Value> {
        loop {
            let p = self.next_notification("textDocument/publishDiagnostics").await;
            if p["uri"] == uri && p["version"].as_i64() == Some(version.into()) {
                return p["diagnostics"].as_array().cloned().unwrap_or_default();
            }
        }
    }

    pub async fn shutdown(mut self) {
        let res = self.request("shutdown", Value::Null).await;
        assert!(res.get("error").is_none(), "{res}");
        self.notify("exit", Value::Null).await;
    }
}

/// LSP position of a byte offset in the client's encoding.
pub fn pos(text: &str, offset: usize, utf8: bool) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col: usize =
        if utf8 { offset - line_start } else { text[line_start..offset].chars().map(char::len_utf16).sum() };
    json!({"line": line, "character": col})
}

/// Byte offset of an LSP position in `text`.
pub fn offset_of(text: &str, p: &Value, utf8: bool) -> usize {
    let line = p["line"].as_u64().unwrap_or(0) as usize;
    let col = p["character"].as_u64().unwrap_or(0) as usize;
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let line_text = &text[start..text[start..].find('\n').map_or(text.len(), |i| start + i)];
    let mut acc = 0;
    for (i, ch) in line_text.char_indices() {
        if acc >= col {
            return start + i;
        }
        acc += if utf8 { ch.len_utf8() } else { ch.len_utf16() };
    }
    start + line_text.len()
}

async fn read_loop(
    mut reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    writer: Arc<tokio::sync::Mutex<WriteHalf<DuplexStream>>>,
    shared: Arc<Mutex<Shared>>,
    notifications: mpsc::UnboundedSender<Value>,
) {
    loop {
        let mut len = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = v.parse::<usize>().ok();
            }
        }
        let Some(len) = len else { return };
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&body) else { continue };
        if msg.get("method").is_some() && msg.get("id").is_some() {
            // Requests are answered here, and seen by tests too (`next_notification`).
            let _ = notifications.send(msg.clone());
            let (reply, follow_ups) = answer(&shared, &msg);
            let mut w = writer.lock().await;
            // Like an editor: the buffer changes (didChange) before the edit is acknowledged.
            for n in follow_ups {
                let body = n.to_string();
                let _ = w.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
            }
            let body = json!({"jsonrpc": "2.0", "id": msg["id"], "result": reply}).to_string();
            let _ = w.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
        } else if msg.get("method").is_some() {
            let _ = notifications.send(msg);
        } else if let Some(id) = msg.get("id").and_then(Value::as_i64)
            && let Some(tx) = lock(&shared).pending.remove(&id)
        {
            let _ = tx.send(msg);
        }
    }
}

/// What the fake editor replies to a server request, and the notifications it sends first.
fn answer(shared: &Mutex<Shared>, msg: &Value) -> (Value, Vec<Value>) {
    let mut follow_ups = Vec::new();
    let reply = match msg["method"].as_str() {
        Some("workspace/applyEdit") => {
            let mut s = lock(shared);
            let utf8 = s.utf8;
            for uri in std::mem::take(&mut s.pending_bumps) {
                if let Some(doc) = s.docs.get_mut(&uri) {
                    doc.version += 1;
                    follow_ups.push(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                        "textDocument": {"uri": uri, "version": doc.version},
                        "contentChanges": [{"text": doc.text}]}}));
                }
            }
            let neovim = s.neovim;
            if let Some((after, insert)) = s.type_before_next_apply.take() {
                for (uri, doc) in s.docs.iter_mut() {
                    let Some(at) = doc.text.find(&after).map(|i| i + after.len()) else { continue };
                    doc.text.insert_str(at, &insert);
                    doc.version += 1;
                    follow_ups.push(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                        "textDocument": {"uri": uri, "version": doc.version},
                        "contentChanges": [{"text": doc.text}]}}));
                }
                return (json!({"applied": false, "failureReason": "document version changed"}), follow_ups);
            }
            let mut bumps = Vec::new();
            for change in
                msg.pointer("/params/edit/documentChanges").and_then(Value::as_array).into_iter().flatten()
            {
                let uri = change.pointer("/textDocument/uri").and_then(Value::as_str).unwrap_or_default();
                let version = change.pointer("/textDocument/version").and_then(Value::as_i64);
                let Some(doc) = s.docs.get_mut(uri) else { continue };
                if version.is_some_and(|v| v != i64::from(doc.version)) {
                    // Neovim logs "Buffer ... newer than edits" and still answers applied.
                    return (json!({"applied": neovim, "failureReason": "stale version"}), follow_ups);
                }
                let edits = change["edits"].as_array().map(Vec::as_slice).unwrap_or_default();
                doc.text = if neovim {
                    apply_like_neovim(&doc.text, edits, utf8)
                } else {
                    apply(&doc.text, edits, utf8)
                };
                doc.version += 1;
                follow_ups.push(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": doc.version},
                    "contentChanges": [{"text": doc.text}]}}));
                if neovim {
                    bumps.push(uri.to_owned());
                }
            }
            s.pending_bumps.extend(bumps);
            json!({"applied": true})
        }
        Some("window/showMessageRequest") => {
            let text = msg.pointer("/params/message").and_then(Value::as_str).unwrap_or_default();
            lock(shared).asked.push(text.to_owned());
            msg.pointer("/params/actions/0").cloned().unwrap_or(Value::Null)
        }
        _ => Value::Null,
    };
    (reply, follow_ups)
}

/// LSP text edits applied to `text` as VS Code does: positions are offsets into the text.
pub fn apply(text: &str, edits: &[Value], utf8: bool) -> String {
    let mut edits: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset_of(text, &e["range"]["start"], utf8),
                offset_of(text, &e["range"]["end"], utf8),
                e["newText"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut text = text.to_owned();
    for (start, end, new) in edits {
        text.replace_range(start..end, &new);
    }
    text
}

/// LSP text edits applied to `text` as Neovim does (`vim.lsp.util.apply_text_edits`, 0.10 and
/// 0.11): the buffer is a list of lines plus 'eol' (the text ends with a line ending), CRLF
/// only when every line ends so ('fileformat' dos); new text has its `\r\n` and `\r` turned
/// into line breaks; an edit starting past the last line appends its lines, one ending past it
/// is cut at the end of the last line and then an empty last line is dropped.
pub fn apply_like_neovim(text: &str, edits: &[Value], utf8: bool) -> String {
    let dos = text.contains("\r\n") && text.matches('\n').count() == text.matches("\r\n").count();
    let nl = if dos { "\r\n" } else { "\n" };
    let eol = text.ends_with(nl);
    let body = if eol { &text[..text.len() - nl.len()] } else { text };
    let mut lines: Vec<String> = body.split(nl).map(str::to_owned).collect();
    // Position → byte column on that line, clamped to the line (`vim.str_byteindex`, not strict).
    let byte_col = |lines: &[String], p: &Value| -> usize {
        let line = p["line"].as_u64().unwrap_or(0) as usize;
        let col = p["character"].as_u64().unwrap_or(0) as usize;
        let Some(l) = lines.get(line) else { return 0 };
        let mut units = 0;
        for (i, ch) in l.char_indices() {
            if units >= col {
                return i;
            }
            units += if utf8 { ch.len_utf8() } else { ch.len_utf16() };
        }
        l.len()
    };
    let key = |e: &Value| {
        (
            e["range"]["start"]["line"].as_u64().unwrap_or(0),
            e["range"]["start"]["character"].as_u64().unwrap_or(0),
        )
    };
    // Last first; of two at one place, the later one first.
    let mut order: Vec<usize> = (0..edits.len()).collect();
    order.sort_by(|&a, &b| key(&edits[b]).cmp(&key(&edits[a])).then(b.cmp(&a)));
    let mut eol_edit = false;
    for i in order {
        let e = &edits[i];
        let new_text = e["newText"].as_str().unwrap_or_default().replace("\r\n", "\n").replace('\r', "\n");
        let mut new_lines: Vec<String> = new_text.split('\n').map(str::to_owned).collect();
        let start_row = e["range"]["start"]["line"].as_u64().unwrap_or(0) as usize;
        let mut end_row = e["range"]["end"]["line"].as_u64().unwrap_or(0) as usize;
        let start_col = byte_col(&lines, &e["range"]["start"]);
        let mut end_col = byte_col(&lines, &e["range"]["end"]);
        let max = lines.len();
        if max <= start_row {
            lines.extend(new_lines);
            continue;
        }
        let last_line_len = lines[end_row.min(max - 1)].len();
        if max <= end_row {
            end_row = max - 1;
            end_col = last_line_len;
            eol_edit = true;
        } else if end_col >= last_line_len
            && e["range"]["end"]["character"].as_u64().unwrap_or(0) as usize > end_col
            && new_text.ends_with('\n')
        {
            new_lines.pop();
        }
        let end_col = end_col.min(last_line_len);
        let prefix = lines[start_row][..start_col.min(lines[start_row].len())].to_owned();
        let suffix = lines[end_row][end_col..].to_owned();
        if let Some(first) = new_lines.first_mut() {
            first.insert_str(0, &prefix);
        }
        if let Some(last) = new_lines.last_mut() {
            last.push_str(&suffix);
        }
        lines.splice(start_row..=end_row, new_lines);
    }
    // 'fixeol' is on by default, so this holds for a buffer without 'eol' too.
    if eol_edit && lines.len() > 1 && lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut out = lines.join(nl);
    if eol {
        out.push_str(nl);
    }
    out
}
