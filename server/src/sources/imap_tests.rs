use super::*;

use expect_test::expect;

fn settings(host: &str, tls: Tls) -> ImapSettings {
    ImapSettings {
        host: host.to_owned(),
        port: None,
        tls,
        username: "alice@example.com".to_owned(),
        password_env: "MAIL_PASSWORD".to_owned(),
        mailbox: DEFAULT_MAILBOX.to_owned(),
    }
}

#[test]
fn settings_read_from_the_source_table_with_defaults() {
    let table: toml::Table = toml::from_str(
        "kind = \"imap\"\nevery = \"5m\"\nhost = \"imap.fastmail.com\"\nusername = \"me@fastmail.com\"\npassword_env = \"FASTMAIL_APP_PASSWORD\"\n",
    )
    .unwrap();
    let s: ImapSettings = toml::Value::Table(table).try_into().unwrap();
    assert_eq!(s.tls, Tls::Implicit);
    assert_eq!(s.port(), 993);
    assert_eq!(s.mailbox, "INBOX");
    assert_eq!(s.server(), "imap.fastmail.com:993");
    let s: ImapSettings = toml::from_str(
        "host = \"127.0.0.1\"\nport = 1143\ntls = \"none\"\nusername = \"u\"\npassword_env = \"P\"\nmailbox = \"Lists/rust\"\n",
    )
    .unwrap();
    assert_eq!((s.tls, s.port(), s.mailbox.as_str()), (Tls::None, 1143, "Lists/rust"));
    assert_eq!(settings("imap.example.com", Tls::Starttls).port(), 143);
    assert_eq!(settings("::1", Tls::None).server(), "[::1]:143");
    assert!(
        toml::from_str::<ImapSettings>(
            "host = \"h\"\ntls = \"ssl\"\nusername = \"u\"\npassword_env = \"P\"\n"
        )
        .is_err()
    );
}

#[test]
fn plain_text_is_refused_off_loopback() {
    for host in ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.53", "mail.localhost"] {
        assert_eq!(settings(host, Tls::None).check(), Ok(()), "{host}");
    }
    let err = settings("imap.example.com", Tls::None).check().unwrap_err();
    expect![[r#"imap source: `tls = "none"` sends the password in clear text: allowed only to a loopback address, not imap.example.com; use tls = "implicit" or "starttls""#]]
        .assert_eq(&err.to_string());
    assert!(settings("10.0.0.1", Tls::None).check().is_err());
    assert_eq!(settings("imap.example.com", Tls::Starttls).check(), Ok(()));
    let mut s = settings("imap.example.com", Tls::Implicit);
    s.mailbox = "a\r\nb".to_owned();
    assert!(s.check().is_err());
}

/// The refusal comes before any connection: the host is never reached.
#[tokio::test]
async fn plain_text_off_loopback_never_connects() {
    let err = poll_once(&settings("imap.invalid", Tls::None), &Password::new("hunter2"), None, false)
        .await
        .unwrap_err();
    assert!(matches!(err, ImapError::Config(_)), "{err:?}");
}

#[test]
fn password_comes_from_the_named_variable_and_is_never_shown() {
    let s = settings("imap.example.com", Tls::Implicit);
    let env = |name: &str| (name == "MAIL_PASSWORD").then(|| "hunter2".to_owned());
    let password = s.password(env).unwrap();
    assert_eq!(format!("{password:?}"), "Password([hidden])");
    assert_eq!(password.server_text("LOGIN failed for hunter2"), super::secret::WITHHELD);
    let err = s.password(|_| None).unwrap_err();
    expect!["the environment variable MAIL_PASSWORD (`password_env`) is not set or empty"]
        .assert_eq(&err.to_string());
    assert!(s.password(|_| Some(String::new())).is_err());
}

const MULTIPART: &str = "From: Alice Example <alice@example.com>\r\n\
To: bob@example.com, Carol <carol@example.com>\r\n\
Subject: =?UTF-8?Q?Q3_numbers_=E2=9C=93?=\r\n\
Date: Tue, 3 Nov 2026 09:30:00 +0100\r\n\
Message-ID: <q3@example.com>\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"XX\"\r\n\
\r\n\
--XX\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
\r\n\
The Q3 report is attached.\r\n\
--XX\r\n\
Content-Type: application/pdf; name=\"q3.pdf\"\r\n\
Content-Disposition: attachment; filename=\"q3.pdf\"\r\n\
Content-Transfer-Encoding: base64\r\n\
\r\n\
JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoK\r\n\
--XX--\r\n";

#[test]
fn a_multipart_message_becomes_fields_and_named_attachments() {
    let m = parse_message(MULTIPART.as_bytes(), "INBOX", 7, 42, Some(MULTIPART.len() as u32), None);
    let (id, version, summary, payload) = to_item(&m);
    assert_eq!(id, "7:42");
    assert_eq!(version.len(), 16);
    expect!["Alice Example <alice@example.com>: Q3 numbers ✓"].assert_eq(&summary);
    expect![[r#"
        {
          "attachments": [
            {
              "contentType": "application/pdf",
              "filename": "q3.pdf",
              "size": 27
            }
          ],
          "date": "2026-11-03T08:30:00Z",
          "from": [
            "Alice Example <alice@example.com>"
          ],
          "mailbox": "INBOX",
          "messageId": "q3@example.com",
          "size": 531,
          "subject": "Q3 numbers ✓",
          "text": "The Q3 report is attached.",
          "to": [
            "bob@example.com",
            "Carol <carol@example.com>"
          ],
          "uid": 42,
          "uidValidity": 7
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&payload).unwrap());
    // Nothing of the attachment's content is in the event.
    assert!(!payload.to_string().contains("JVBER"));
    // The same message gives the same item.
    assert_eq!(to_item(&parse_message(MULTIPART.as_bytes(), "INBOX", 7, 42, Some(531), None)).1, version);
}

#[test]
fn html_only_mail_is_sent_as_text() {
    let raw = "From: news@example.com\r\nSubject: Weekly\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><body><h1>Release 2.0</h1><p>Now with <b>sources</b>.</p><script>x()</script></body></html>\r\n";
    let m = parse_message(raw.as_bytes(), "INBOX", 1, 1, None, None);
    assert!(m.text.contains("Release 2.0"), "{:?}", m.text);
    assert!(m.text.contains("Now with sources."), "{:?}", m.text);
    assert!(!m.text.contains('<'), "{:?}", m.text);
}

#[test]
fn bodies_are_clipped_and_cut_messages_say_so() {
    let body = "é".repeat(MAX_TEXT_BYTES);
    let raw = format!(
        "From: a@example.com\r\nSubject: long\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    );
    let m = parse_message(raw.as_bytes(), "INBOX", 1, 2, Some(5_000_000), None);
    assert!(m.text_clipped);
    assert!(m.text.len() <= MAX_TEXT_BYTES && m.text.len() > MAX_TEXT_BYTES - 4);
    assert!(m.truncated, "5 MB on the server, fewer bytes fetched");
    let raw = b"Subject: s\r\n\r\nhi\r\n";
    let short = parse_message(raw, "INBOX", 1, 3, Some(raw.len() as u32), None);
    assert!(!short.text_clipped && !short.truncated);
    assert_eq!(short.text, "hi");
}

#[test]
fn anything_fetched_becomes_a_message_without_panicking() {
    let arrived = Utc.with_ymd_and_hms(2026, 11, 3, 8, 0, 0).single();
    for raw in [
        &b""[..],
        b"\xff\xfe\x00garbage",
        b"From:\r\nSubject:\r\n\r\n",
        b"Content-Type: multipart/mixed; boundary=\r\n\r\n--\r\n",
    ] {
        let m = parse_message(raw, "INBOX", 1, 9, None, arrived);
        assert_eq!(m.id(), "1:9");
        let (_, _, summary, _) = to_item(&m);
        assert!(!summary.is_empty());
    }
    // No Date header: the server's arrival time.
    assert_eq!(parse_message(b"Subject: s\r\n\r\nx", "INBOX", 1, 9, None, arrived).date, arrived);
}

proptest::proptest! {
    /// Whatever a server hands over, as raw bytes or as a mangled message, becomes a message
    /// within the bounds: no panic, the text within its budget, the item's id its UIDs.
    #[test]
    fn any_bytes_parse_within_bounds(
        raw in proptest::collection::vec(proptest::num::u8::ANY, 0..4096),
        cut in 0usize..40_000,
        repeat in 1usize..40,
    ) {
        let m = parse_message(&raw, "INBOX", 3, 4, Some(raw.len() as u32), None);
        proptest::prop_assert!(m.text.len() <= MAX_TEXT_BYTES);
        proptest::prop_assert!(!m.truncated);
        proptest::prop_assert_eq!(to_item(&m).0, "3:4");
        // A real message cut anywhere, its body grown past the budget.
        let grown = MULTIPART.replace("The Q3 report is attached.", &"The Q3 report is attached. ".repeat(repeat * 40));
        let cut_at = cut.min(grown.len());
        let m = parse_message(&grown.as_bytes()[..cut_at], "INBOX", 3, 4, Some(grown.len() as u32), None);
        proptest::prop_assert!(m.text.len() <= MAX_TEXT_BYTES);
        proptest::prop_assert_eq!(m.truncated, cut_at < grown.len());
        let full = parse_message(grown.as_bytes(), "INBOX", 3, 4, None, None);
        proptest::prop_assert_eq!(full.text_clipped, full.text.len() < "The Q3 report is attached. ".len() * repeat * 40 - 1);
    }
}

/// A server that accepts and then says nothing: the poll ends at [`IO_TIMEOUT`] with the
/// step named (paused time: the wait is not slept).
#[tokio::test(start_paused = true)]
async fn a_silent_server_times_out() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let accepted = listener.accept().await;
        tokio::time::sleep(Duration::from_secs(3600)).await;
        drop(accepted);
    });
    let mut s = settings("127.0.0.1", Tls::None);
    s.port = Some(port);
    let err = poll_once(&s, &Password::new("p"), None, false).await.unwrap_err();
    assert_eq!(err, ImapError::Timeout { server: format!("127.0.0.1:{port}"), what: "greeting".to_owned() });
    expect![[r#"127.0.0.1:PORT did not answer within 30 s (greeting)"#]]
        .assert_eq(&err.to_string().replace(&port.to_string(), "PORT"));
    server.abort();
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error_naming_the_server() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut s = settings("127.0.0.1", Tls::None);
    s.port = Some(port);
    let err = poll_once(&s, &Password::new("p"), None, false).await.unwrap_err();
    assert!(
        matches!(&err, ImapError::Connect { server, .. } if *server == format!("127.0.0.1:{port}")),
        "{err:?}"
    );
}
