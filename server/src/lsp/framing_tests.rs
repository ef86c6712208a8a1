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
    let input = b"Content-Length: 99999999999\r\n\r\n{\"partial\": \"xxxx\nyyy\"}Content-Length: 2\r\n\r\n{}";
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
    for garbage in ["{bad}\r\n", "Content-Length: ten\r\n\r\n", "Content-Length 2\r\n\r\n", long.as_str()] {
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
