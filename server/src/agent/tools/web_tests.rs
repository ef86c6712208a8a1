use std::fmt;

use super::*;

fn err<T: fmt::Debug>(r: Result<T, ToolError>) -> String {
    match r {
        Err(e) => e.0,
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

#[test]
fn urls_are_checked() {
    assert!(check_url("https://example.com/a?b#c").is_ok());
    assert!(check_url("http://93.184.216.34:8080/").is_ok());
    for (url, msg) in [
        ("file:///etc/passwd", "only http:// and https:// URLs can be fetched"),
        ("ftp://example.com", "only http:// and https:// URLs can be fetched"),
        ("http://localhost:8080/", "local and private network addresses are refused"),
        ("http://127.0.0.1/", "local and private network addresses are refused"),
        ("http://169.254.169.254/latest/meta-data", "local and private network addresses are refused"),
        ("http://[::1]/", "local and private network addresses are refused"),
        ("http://10.1.2.3/", "local and private network addresses are refused"),
        ("https://user:pw@example.com/", "URLs with credentials are refused"),
        ("https:///x", "the URL has no host"),
        ("https://exa mple.com", "the URL contains spaces or control characters"),
    ] {
        assert_eq!(err(check_url(url)), msg, "{url}");
    }
}

#[test]
fn addresses_that_carry_a_local_ipv4_address_are_refused() {
    let refused = "local and private network addresses are refused";
    for host in [
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[::ffff:10.0.0.1]",
        "[::ffff:169.254.169.254]",
        "[::127.0.0.1]",
        "[::7f00:1]",
        "[::8.8.8.8]",
        "[::]",
        "[::ffff:0:127.0.0.1]",
        "[64:ff9b::127.0.0.1]",
        "[64:ff9b::7f00:1]",
        "[64:ff9b::a9fe:a9fe]",
        "[64:ff9b:1::8.8.8.8]",
        "[64:ff9b:1:2::1]",
        "[2002:7f00:1::1]",
        "[2002:c0a8:101::]",
        "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
        "[2001:0:7f00:1::]",
        "[2001:db8::1]",
        "[fc00::1]",
        "[fd12:3456::1]",
        "[fe80::1]",
        "[fec0::1]",
        "[ff02::1]",
        "[100::1]",
        "224.0.0.1",
        "240.0.0.1",
        "100.64.0.1",
        "198.18.0.1",
        "192.0.0.8",
    ] {
        assert_eq!(err(check_url(&format!("http://{host}/"))), refused, "{host}");
    }
    for host in [
        "[2606:4700:4700::1111]",
        "[::ffff:8.8.8.8]",
        "[64:ff9b::8.8.8.8]",
        "[2002:808:808::1]",
        "[2001:0:4136:e378:8000:63bf:f7f7:f7f7]",
        "8.8.8.8",
    ] {
        assert!(check_url(&format!("https://{host}/")).is_ok(), "{host}");
    }
}

#[test]
fn html_becomes_text() {
    let html = "<html><head><title>T</title><style>p{}</style></head><body><!-- c --><h1>Q3 &amp; more</h1>\
            <script>var x = '<p>';</script><p>Planning   moved\n to <b>Friday</b>.</p><ul><li>one</li><li>two&#x21;</li></ul>\
            <p>a &lt; b &unknown; &#9731;</p></body></html>";
    assert_eq!(
        html_to_text(html),
        "Q3 & more\n\nPlanning moved to Friday.\n\n- one\n- two!\n\na < b &unknown; ☃"
    );
}

/// A one-shot HTTP server on loopback answering each connection with the next canned
/// response; it returns its address.
async fn serve(responses: Vec<String>) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(async move {
        for response in responses {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let mut buf = vec![0u8; 4096];
            let _ = socket.read(&mut buf).await;
            let _ = socket.write_all(response.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    addr
}

fn http(status: &str, headers: &str, body: &str) -> String {
    format!("HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
}

#[tokio::test]
async fn http_fetcher_follows_redirects_caps_and_converts() {
    let local = HttpFetcher { allow_private: true };
    let fetch = |url: String, max: usize| async move {
        local.fetch(&url, max, Duration::from_secs(5), CancellationToken::new()).await
    };
    let addr = serve(vec![
        http("302 Found", "Location: /page\r\n", ""),
        http(
            "200 OK",
            "Content-Type: text/html; charset=utf-8\r\n",
            "<p>Hello &amp; welcome</p><script>x</script>",
        ),
    ])
    .await;
    assert_eq!(fetch(format!("http://{addr}/start"), 1000).await, Ok("Hello & welcome".to_owned()));

    let addr = serve(vec![http("200 OK", "Content-Type: text/plain\r\n", &"x".repeat(100))]).await;
    assert_eq!(
        fetch(format!("http://{addr}/"), 10).await,
        Ok("xxxxxxxxxx\n[… the page is longer than 10 bytes and was cut]".to_owned())
    );

    let addr =
        serve(vec![http("404 Not Found", "", "nope"), http("200 OK", "Content-Type: image/png\r\n", "PNG")])
            .await;
    assert_eq!(fetch(format!("http://{addr}/"), 100).await, Err("HTTP 404 Not Found".to_owned()));
    assert_eq!(fetch(format!("http://{addr}/"), 100).await, Err("not a text page (image/png)".to_owned()));

    // Without the test switch, loopback is refused before any connection (every redirect
    // hop goes through the same check).
    let strict = HttpFetcher::default();
    let r =
        strict.fetch(&format!("http://{addr}/"), 100, Duration::from_secs(5), CancellationToken::new()).await;
    assert_eq!(r, Err("local and private network addresses are refused".to_owned()));
}
