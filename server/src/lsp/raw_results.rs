//! Answers serialised by the handler, written to the client as they are.
//!
//! tower-lsp-server turns every result into a `serde_json::Value` and serialises that again;
//! for `livenote/listNotes` (a few hundred kilobytes at 10,000 notes) building, writing and
//! dropping that tree was most of the request. Under the stdio transport (`framing`), the
//! handler instead keeps its JSON here and returns a short placeholder string; the transport's
//! writer, which sees every frame tower-lsp-server writes, puts the kept JSON in the
//! placeholder's place. Without the transport (in-process tests) [`RawResults::answer`] gives
//! the parsed value, so both paths answer the same JSON.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use serde_json::Value;
use tower_lsp_server::jsonrpc::Response;

/// How a placeholder starts (a NUL, which no path or note text in an answer can produce
/// unescaped, then the name). On the wire it reads `"\u0000livenote/raw:`.
const MARK: &str = "\u{0}livenote/raw:";
const MARK_ON_WIRE: &[u8] = b"\"\\u0000livenote/raw:";
/// Kept answers whose response never reached the writer (a cancelled request, the session
/// ended) are dropped beyond this many: eight times the requests tower-lsp-server runs at once
/// (`framing`'s concurrency level, 32; its response stream holds no more than those), so an
/// answer still on its way is never among them.
const KEEP: usize = 256;

pub struct RawResults {
    enabled: AtomicBool,
    /// Random per process: a placeholder from elsewhere never names a kept answer.
    nonce: u64,
    next: AtomicU64,
    kept: Mutex<VecDeque<(u64, Vec<u8>)>>,
}

impl Default for RawResults {
    fn default() -> Self {
        RawResults {
            enabled: AtomicBool::new(false),
            nonce: std::collections::hash_map::RandomState::new().build_hasher().finish(),
            next: AtomicU64::new(0),
            kept: Mutex::new(VecDeque::new()),
        }
    }
}

impl RawResults {
    /// The transport will splice: answers become placeholders from now on.
    pub fn enable(&self) {
        self.enabled.store(true, Ordering::SeqCst);
    }

    /// The result to hand tower-lsp-server for `json` (which must be valid JSON): a placeholder
    /// when the transport splices, else the value itself.
    pub fn answer(&self, json: Vec<u8>) -> Value {
        if !self.enabled.load(Ordering::SeqCst) {
            return serde_json::from_slice(&json).unwrap_or_else(|e| {
                tracing::error!("an answer serialised by livenote is not JSON: {e}");
                Value::Null
            });
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.push_back((n, json));
        while kept.len() > KEEP {
            kept.pop_front();
        }
        Value::String(format!("{MARK}{:016x}:{n}", self.nonce))
    }

    /// The frame to write instead of `body` when `body` is a response whose result is one of
    /// this process's placeholders (the kept answer is given out once).
    pub fn splice(&self, body: &[u8]) -> Option<Vec<u8>> {
        // Any frame may hold one (the client chooses the id's length); the search is a memchr-speed
        // scan, and only frames where it finds the mark are parsed.
        memchr::memmem::find(body, MARK_ON_WIRE)?;
        let response: Response = serde_json::from_slice(body).ok()?;
        let (id, Ok(Value::String(placeholder))) = response.into_parts() else { return None };
        let (nonce, n) = placeholder.strip_prefix(MARK)?.split_once(':')?;
        if u64::from_str_radix(nonce, 16).ok()? != self.nonce {
            return None;
        }
        let n: u64 = n.parse().ok()?;
        let json = {
            let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            let at = kept.iter().position(|(k, _)| *k == n)?;
            kept.remove(at)?.1
        };
        let id = serde_json::to_vec(&id).ok()?;
        let mut out = Vec::with_capacity(json.len() + id.len() + 32);
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"result\":");
        out.extend_from_slice(&json);
        out.extend_from_slice(b",\"id\":");
        out.extend_from_slice(&id);
        out.push(b'}');
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tower_lsp_server::jsonrpc::Id;

    use super::*;

    fn frame(id: Id, result: Value) -> Vec<u8> {
        serde_json::to_vec(&Response::from_ok(id, result)).unwrap_or_default()
    }

    #[test]
    fn without_the_transport_the_answer_is_the_value() {
        let raw = RawResults::default();
        assert_eq!(raw.answer(br#"[{"a":1}]"#.to_vec()), json!([{"a": 1}]));
    }

    #[test]
    fn a_placeholder_response_becomes_the_kept_json_once() {
        let raw = RawResults::default();
        raw.enable();
        let json = br#"[{"path":"a.md","status":"live"},{"path":"b\"c.md"}]"#.to_vec();
        let placeholder = raw.answer(json.clone());
        let body = frame(Id::Number(7), placeholder.clone());
        let spliced = raw.splice(&body).unwrap_or_default();
        // Exactly what tower-lsp-server writes for the value itself.
        let expected = frame(Id::Number(7), serde_json::from_slice(&json).unwrap_or_default());
        let as_value = |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap_or_default();
        assert_eq!(as_value(&spliced), as_value(&expected));
        assert_eq!(
            spliced,
            br#"{"jsonrpc":"2.0","result":[{"path":"a.md","status":"live"},{"path":"b\"c.md"}],"id":7}"#
        );
        // Given out once; a string id works too.
        assert_eq!(raw.splice(&body), None);
        let p = raw.answer(b"[]".to_vec());
        let s = raw.splice(&frame(Id::String("x".into()), p)).unwrap_or_default();
        assert_eq!(s, br#"{"jsonrpc":"2.0","result":[],"id":"x"}"#);
        // However long the id.
        let long = "i".repeat(10_000);
        let p = raw.answer(b"[2]".to_vec());
        let s = raw.splice(&frame(Id::String(long.clone()), p)).unwrap_or_default();
        assert_eq!(s, format!(r#"{{"jsonrpc":"2.0","result":[2],"id":"{long}"}}"#).into_bytes());
    }

    #[test]
    fn other_frames_pass_untouched() {
        let raw = RawResults::default();
        raw.enable();
        let kept = raw.answer(b"[1]".to_vec());
        let Value::String(p) = &kept else { panic!("{kept}") };
        // Another process's placeholder, an unknown number, a request, an error, a plain string.
        let foreign = p.replace(&format!("{:016x}", raw.nonce), &format!("{:016x}", raw.nonce ^ 1));
        let unknown = format!("{MARK}{:016x}:999", raw.nonce);
        for body in [
            frame(Id::Number(1), Value::String(foreign)),
            frame(Id::Number(1), Value::String(unknown)),
            frame(Id::Number(1), json!("livenote/raw:0")),
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "x", "params": [kept.clone()]}))
                .unwrap_or_default(),
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": kept}}))
                .unwrap_or_default(),
        ] {
            assert_eq!(raw.splice(&body), None, "{}", String::from_utf8_lossy(&body));
        }
        // The kept answer is still there for its own response.
        assert!(raw.splice(&frame(Id::Number(2), kept)).is_some());
    }

    #[test]
    fn answers_never_taken_are_dropped_beyond_a_few() {
        let raw = RawResults::default();
        raw.enable();
        let first = raw.answer(b"[0]".to_vec());
        for _ in 0..KEEP {
            raw.answer(b"[]".to_vec());
        }
        assert_eq!(raw.kept.lock().map(|k| k.len()).unwrap_or_default(), KEEP);
        assert_eq!(raw.splice(&frame(Id::Number(1), first)), None);
    }
}
