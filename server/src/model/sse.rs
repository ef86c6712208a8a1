//! What the wire formats share in parsing a reply: a server-sent-events parser, lenient tool
//! call arguments, and the JSON object inside a text reply. Re-exported by `http`.

use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Server-sent events
// ---------------------------------------------------------------------------------------------

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, "message" when absent.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// An incremental parser for `text/event-stream` (the WHATWG format): bytes in, events out,
/// whatever the chunk boundaries.
#[derive(Debug, Default)]
pub struct SseParser {
    pending: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// The events completed by `bytes`. Errors describe malformed input (not UTF-8).
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, String> {
        self.pending.extend_from_slice(bytes);
        let buf = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < buf.len() {
            let next = match buf[i] {
                b'\n' => i + 1,
                b'\r' => match buf.get(i + 1) {
                    Some(b'\n') => i + 2,
                    Some(_) => i + 1,
                    // A `\r` at the end may be the first half of `\r\n`.
                    None => break,
                },
                _ => {
                    i += 1;
                    continue;
                }
            };
            self.line(&buf[start..i], &mut out)?;
            start = next;
            i = next;
        }
        self.pending = buf[start..].to_vec();
        Ok(out)
    }

    /// The end of the stream: a last line without terminator and a last event without the
    /// blank line still count (some servers omit them).
    pub fn finish(&mut self) -> Result<Vec<SseEvent>, String> {
        let rest = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        let rest = rest.strip_suffix(b"\r").unwrap_or(&rest);
        if !rest.is_empty() {
            self.line(rest, &mut out)?;
        }
        self.line(b"", &mut out)?;
        Ok(out)
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), String> {
        if line.is_empty() {
            if self.has_data {
                let event = if self.event.is_empty() {
                    "message".to_owned()
                } else {
                    std::mem::take(&mut self.event)
                };
                out.push(SseEvent { event, data: std::mem::take(&mut self.data) });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|_| "the event stream is not UTF-8".to_owned())?;
        if line.starts_with(':') {
            return Ok(()); // a comment, used as keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {} // `id`, `retry` and unknown fields mean nothing here
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// JSON helpers shared by the formats
// ---------------------------------------------------------------------------------------------

/// A tool call's arguments as the model sent them (a JSON text): the object, or the raw text
/// as a string value when it is not an object, so the tool can explain what is wrong.
pub fn parse_tool_arguments(raw: &str) -> Value {
    let raw = raw.trim();
    if raw.is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => v,
        // Some models encode the object twice.
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::String(raw.to_owned()),
        },
        _ => Value::String(raw.to_owned()),
    }
}

/// The JSON object in a reply meant to be only that, tolerating code fences and prose around
/// it; `None` when there is none.
pub fn extract_json_object(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if matches!(serde_json::from_str::<Value>(trimmed), Ok(Value::Object(_))) {
        return Some(trimmed.to_owned());
    }
    let start = trimmed.find('{')?;
    let end = trimmed.rfind('}')?;
    let candidate = trimmed.get(start..=end)?;
    matches!(serde_json::from_str::<Value>(candidate), Ok(Value::Object(_))).then(|| candidate.to_owned())
}
