use super::*;

fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut p = SseParser::default();
    let mut out = Vec::new();
    for c in chunks {
        out.extend(p.feed(c).unwrap());
    }
    out.extend(p.finish().unwrap());
    out
}

fn ev(event: &str, data: &str) -> SseEvent {
    SseEvent { event: event.to_owned(), data: data.to_owned() }
}

#[test]
fn sse_events_survive_any_chunking() {
    let stream = b": keep-alive\nevent: a\ndata: {\"x\":1}\n\ndata:no-space\ndata: second line\r\n\r\nid: 7\nretry: 10\n\nevent: b\r\ndata: \xc3\xa9\r\rdata: [DONE]\n\n";
    let expected = vec![
        ev("a", "{\"x\":1}"),
        ev("message", "no-space\nsecond line"),
        ev("b", "é"),
        ev("message", "[DONE]"),
    ];
    assert_eq!(parse_all(&[stream]), expected);
    // Every split point, including inside `\r\n` and inside the two-byte `é`.
    for cut in 0..stream.len() {
        assert_eq!(parse_all(&[&stream[..cut], &stream[cut..]]), expected, "cut at {cut}");
    }
    let bytewise: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(parse_all(&bytewise), expected);
}

#[test]
fn sse_last_event_without_blank_line_counts() {
    assert_eq!(parse_all(&[b"data: a\n\ndata: b"]), vec![ev("message", "a"), ev("message", "b")]);
    assert_eq!(parse_all(&[b"data: a\r"]), vec![ev("message", "a")]);
    assert_eq!(parse_all(&[b"event: only\n\n"]), vec![]);
}

#[test]
fn sse_rejects_invalid_utf8() {
    let mut p = SseParser::default();
    assert!(p.feed(b"data: \xff\n\n").is_err());
}

#[test]
fn retry_after_seconds_dates_and_cap() {
    let now = DateTime::parse_from_rfc3339("2015-10-21T07:28:00Z").unwrap().with_timezone(&Utc);
    let cap = Duration::from_secs(60);
    assert_eq!(parse_retry_after("1", now, cap), Some(Duration::from_secs(1)));
    assert_eq!(parse_retry_after(" 2.5 ", now, cap), Some(Duration::from_millis(2500)));
    assert_eq!(parse_retry_after("3600", now, cap), Some(cap));
    assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now, cap), Some(Duration::from_secs(30)));
    assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now, cap), Some(Duration::ZERO));
    assert_eq!(parse_retry_after("Thu, 22 Oct 2015 07:28:00 GMT", now, cap), Some(cap));
    assert_eq!(parse_retry_after("-1", now, cap), None);
    assert_eq!(parse_retry_after("soon", now, cap), None);
    assert_eq!(parse_retry_after("NaN", now, cap), None);

    let mut headers = HeaderMap::new();
    headers.insert("retry-after-ms", HeaderValue::from_static("250"));
    headers.insert(RETRY_AFTER, HeaderValue::from_static("9"));
    assert_eq!(retry_after(&headers, cap), Some(Duration::from_millis(250)));
    headers.remove("retry-after-ms");
    assert_eq!(retry_after(&headers, cap), Some(Duration::from_secs(9)));
}

#[test]
fn backoff_grows_with_jitter_and_is_capped() {
    let base = Duration::from_millis(100);
    for attempt in 1..=3 {
        let full = base * (1 << (attempt - 1));
        for _ in 0..20 {
            let d = backoff(base, attempt);
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?}");
        }
    }
    assert!(backoff(Duration::from_secs(5), 30) <= MAX_BACKOFF);
}

#[test]
fn api_messages_are_short_single_lines() {
    assert_eq!(api_message(r#"{"error":{"message":"bad\nthing"}}"#).as_deref(), Some("bad thing"));
    assert_eq!(api_message(r#"{"error":"model 'x' not found"}"#).as_deref(), Some("model 'x' not found"));
    assert_eq!(api_message(r#"{"detail":"nope"}"#).as_deref(), Some("nope"));
    assert_eq!(api_message("<html><body>502</body></html>"), None);
    assert_eq!(api_message(""), None);
    let long = api_message(&"x".repeat(1000)).unwrap();
    assert_eq!(long.chars().count(), MAX_MESSAGE_CHARS);
}

#[test]
fn scrubbing_removes_keys_and_masked_keys() {
    let key = "sk-proj-abcdefgh0123456789";
    assert_eq!(scrub_text(&format!("bad key {key}."), key), "bad key ***.");
    assert_eq!(
        scrub_text("Incorrect API key provided: sk-proj-a****6789 ok", key),
        "Incorrect API key provided: *** ok"
    );
    assert_eq!(scrub_text("nothing here", key), "nothing here");
}

#[test]
fn tool_arguments_and_json_extraction() {
    assert_eq!(parse_tool_arguments(""), serde_json::json!({}));
    assert_eq!(parse_tool_arguments(r#"{"a":1}"#), serde_json::json!({"a": 1}));
    assert_eq!(parse_tool_arguments(r#""{\"a\":1}""#), serde_json::json!({"a": 1}));
    assert_eq!(parse_tool_arguments(r#"{"a":"#), Value::String(r#"{"a":"#.to_owned()));
    assert_eq!(parse_tool_arguments("[1]"), Value::String("[1]".to_owned()));

    assert_eq!(extract_json_object(r#" {"a":1} "#).as_deref(), Some(r#"{"a":1}"#));
    assert_eq!(
        extract_json_object("```json\n{\"a\": {\"b\": 2}}\n```").as_deref(),
        Some("{\"a\": {\"b\": 2}}")
    );
    assert_eq!(extract_json_object("Sure! {\"ok\":true} Done.").as_deref(), Some("{\"ok\":true}"));
    assert_eq!(extract_json_object("no json"), None);
    assert_eq!(extract_json_object("[1,2]"), None);
}

#[test]
fn endpoints_and_loopback() {
    let e = Endpoint::new("http://127.0.0.1:11434/v1/", "chat/completions").unwrap();
    assert_eq!(e.url.as_str(), "http://127.0.0.1:11434/v1/chat/completions");
    assert_eq!(e.host, "127.0.0.1:11434");
    assert!(e.is_loopback());
    let e = Endpoint::new("https://user:pw@api.example.com/v1?x=secret", "chat/completions").unwrap();
    assert_eq!(e.host, "api.example.com");
    assert!(!e.display().contains("pw") && !e.display().contains("secret"));
    assert!(!e.is_loopback());
    assert!(Endpoint::new("http://localhost:8080", "x").unwrap().is_loopback());
    assert!(Endpoint::new("http://[::1]:8080", "x").unwrap().is_loopback());
    assert!(Endpoint::new("http://[::ffff:127.0.0.1]:8080", "x").unwrap().is_loopback());
    assert!(!Endpoint::new("http://[::ffff:10.0.0.1]:8080", "x").unwrap().is_loopback());
    assert!(matches!(Endpoint::new("ftp://x", "y"), Err(ModelError::Config(_))));
    assert!(matches!(Endpoint::new("not a url", "y"), Err(ModelError::Config(_))));
}

#[test]
fn api_keys_come_from_the_named_variable_only() {
    use std::ffi::OsString;
    let env = |name: &str| match name {
        "GOOD" => Some(OsString::from("  sk-good-key\n")),
        "BAD" => Some(OsString::from("sk bad")),
        _ => None,
    };
    let key = ApiKey::from_env(&env, "GOOD").unwrap();
    assert_eq!(key.secret(), "sk-good-key");
    assert!(!format!("{key:?}").contains("sk-good-key"));
    assert!(format!("{:?}", key.header("Bearer ").unwrap()).contains("Sensitive"));
    let missing = ApiKey::from_env(&env, "OPENAI_API_KEY").unwrap_err().to_string();
    assert_eq!(missing, "OPENAI_API_KEY is not set (named by api_key_env in the livenote configuration)");
    let bad = ApiKey::from_env(&env, "BAD").unwrap_err().to_string();
    assert!(bad.starts_with("BAD contains characters") && !bad.contains("sk bad"), "{bad}");
}
