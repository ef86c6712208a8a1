//! Fetches against a real HTTP server on 127.0.0.1 (ETag/Last-Modified answered with 304,
//! bodies with and without a length, slow answers), and the feed and calendar parsers fed
//! from it the way a poll does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{TimeZone, Utc};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::model::testing::{RecordedRequest, read_request};
use crate::net::testing::Table;
use crate::schedule::Zone;
use crate::sources::{feed, ics};

/// What the server answers on one path.
#[derive(Clone, Default)]
struct Route {
    status: u16,
    body: Vec<u8>,
    etag: Option<String>,
    last_modified: Option<String>,
    /// Close-delimited, with no Content-Length (the client cannot refuse it up front).
    no_length: bool,
    location: Option<String>,
    /// Accept the request and never answer.
    hang: bool,
}

impl Route {
    fn ok(body: impl Into<Vec<u8>>) -> Route {
        Route { status: 200, body: body.into(), ..Route::default() }
    }
}

#[derive(Default)]
struct Shared {
    routes: HashMap<String, Route>,
    requests: Vec<RecordedRequest>,
}

/// A small HTTP/1.1 server that honours `If-None-Match` and `If-Modified-Since` as a feed
/// host does. Stops when dropped.
struct Server {
    port: u16,
    shared: Arc<Mutex<Shared>>,
    stop: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Server {
    async fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let stop = CancellationToken::new();
        let (s, st) = (Arc::clone(&shared), stop.clone());
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    () = st.cancelled() => return,
                    a = listener.accept() => a,
                };
                let Ok((socket, _)) = accepted else { continue };
                let (s, st) = (Arc::clone(&s), st.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        () = st.cancelled() => {}
                        () = serve(socket, &s) => {}
                    }
                });
            }
        });
        Server { port, shared, stop }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn location(&self, path: &str) -> Location {
        Location::parse(&self.url(path)).unwrap()
    }

    fn route(&self, path: &str, route: Route) {
        self.shared.lock().unwrap().routes.insert(path.to_owned(), route);
    }

    fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().unwrap().requests.clone()
    }
}

async fn serve(mut socket: TcpStream, shared: &Mutex<Shared>) {
    let Some(request) = read_request(&mut socket).await else { return };
    let route = {
        let mut s = shared.lock().unwrap();
        s.requests.push(request.clone());
        s.routes.get(&request.path).cloned()
    };
    let Some(route) = route else {
        let _ = write(&mut socket, 404, &[], b"not found", false).await;
        return;
    };
    if route.hang {
        std::future::pending::<()>().await;
    }
    let fresh = match (&route.etag, request.header("if-none-match")) {
        (Some(etag), Some(sent)) => etag == sent,
        _ => {
            matches!((&route.last_modified, request.header("if-modified-since")), (Some(a), Some(b)) if a == b)
        }
    };
    let mut headers = Vec::new();
    if let Some(etag) = &route.etag {
        headers.push(("ETag", etag.clone()));
    }
    if let Some(date) = &route.last_modified {
        headers.push(("Last-Modified", date.clone()));
    }
    if let Some(location) = &route.location {
        headers.push(("Location", location.clone()));
    }
    let _ = if fresh && route.status == 200 {
        write(&mut socket, 304, &headers, b"", false).await
    } else {
        write(&mut socket, route.status, &headers, &route.body, route.no_length).await
    };
}

async fn write(
    socket: &mut TcpStream,
    status: u16,
    headers: &[(&str, String)],
    body: &[u8],
    no_length: bool,
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} Test\r\nConnection: close\r\n");
    if !no_length {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    for piece in body.chunks(64 * 1024) {
        socket.write_all(piece).await?;
    }
    socket.shutdown().await
}

fn body(f: Fetched) -> (Vec<u8>, Validators) {
    match f {
        Fetched::Body { bytes, validators } => (bytes, validators),
        Fetched::NotModified => panic!("expected a body, got 304"),
    }
}

const RSS: &str = r#"<?xml version="1.0"?>
<rss version="2.0"><channel><title>Releases</title><link>https://example.org/</link>
<item><guid>v1.2</guid><title>v1.2</title><link>https://example.org/v1.2</link>
<description>&lt;p&gt;Fixes &lt;b&gt;crash&lt;/b&gt;&lt;/p&gt;</description></item>
<item><guid>v1.1</guid><title>v1.1</title><link>https://example.org/v1.1</link>
<description>First release</description></item>
</channel></rss>"#;

#[tokio::test]
async fn an_etag_is_sent_back_and_a_304_is_not_modified() {
    let server = Server::start().await;
    server.route("/feed.xml", Route { etag: Some("\"abc\"".to_owned()), ..Route::ok(RSS) });
    let location = server.location("/feed.xml");

    let (bytes, validators) =
        body(fetch(&location, &Validators::default(), FetchOptions::default()).await.unwrap());
    assert_eq!(bytes, RSS.as_bytes());
    assert_eq!(validators, Validators { etag: Some("\"abc\"".to_owned()), last_modified: None });

    let again = fetch(&location, &validators, FetchOptions::default()).await.unwrap();
    assert_eq!(again, Fetched::NotModified);
    let requests = server.requests();
    assert_eq!(requests[0].header("if-none-match"), None);
    assert_eq!(requests[1].header("if-none-match"), Some("\"abc\""));

    // The feed changes: a new ETag, so the old one gets the whole body again.
    server.route(
        "/feed.xml",
        Route { etag: Some("\"def\"".to_owned()), ..Route::ok(RSS.replace("v1.2", "v1.3")) },
    );
    let (bytes, validators) = body(fetch(&location, &validators, FetchOptions::default()).await.unwrap());
    assert!(String::from_utf8(bytes).unwrap().contains("v1.3"));
    assert_eq!(validators.etag.as_deref(), Some("\"def\""));
}

#[tokio::test]
async fn last_modified_is_sent_back_as_if_modified_since() {
    let server = Server::start().await;
    let date = "Wed, 25 Nov 2026 10:00:00 GMT".to_owned();
    server.route(
        "/cal.ics",
        Route { last_modified: Some(date.clone()), ..Route::ok("BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n") },
    );
    let location = server.location("/cal.ics");
    let (_, validators) =
        body(fetch(&location, &Validators::default(), FetchOptions::default()).await.unwrap());
    assert_eq!(validators.last_modified.as_deref(), Some(date.as_str()));
    assert_eq!(fetch(&location, &validators, FetchOptions::default()).await.unwrap(), Fetched::NotModified);
    assert_eq!(server.requests()[1].header("if-modified-since"), Some(date.as_str()));
}

#[tokio::test]
async fn a_huge_answer_is_refused_with_or_without_its_length() {
    let server = Server::start().await;
    let huge = format!("<rss><channel>{}</channel></rss>", "<item><title>x</title></item>".repeat(400_000));
    assert!(huge.len() > DEFAULT_MAX_BYTES);
    server.route("/huge.xml", Route::ok(huge.clone()));
    server.route("/stream.xml", Route { no_length: true, ..Route::ok(huge) });
    for path in ["/huge.xml", "/stream.xml"] {
        let err =
            fetch(&server.location(path), &Validators::default(), FetchOptions::default()).await.unwrap_err();
        assert!(matches!(err, FetchError::TooLarge { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "the answer from 127.0.0.1:{} is larger than 10 MiB (the limit of a source)",
                server.port
            )
        );
    }
}

#[tokio::test]
async fn errors_name_the_host_never_the_secret_path() {
    let server = Server::start().await;
    let secret = "/calendar/ical/me%40gmail.com/private-0123456789abcdef/basic.ics";
    server.route(secret, Route { status: 500, ..Route::ok("oops") });
    let err =
        fetch(&server.location(secret), &Validators::default(), FetchOptions::default()).await.unwrap_err();
    assert_eq!(err.to_string(), format!("127.0.0.1:{} answered HTTP 500", server.port));
    let missing = server.location("/private-feedface/basic.ics");
    let err = fetch(&missing, &Validators::default(), FetchOptions::default()).await.unwrap_err();
    assert!(!err.to_string().contains("private"), "{err}");
    assert_eq!(missing.display(), format!("http://127.0.0.1:{}", server.port));
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = Server::start().await;
    server.route("/slow", Route { hang: true, ..Route::ok("") });
    let options = FetchOptions { timeout: Duration::from_millis(300), ..FetchOptions::default() };
    let err = fetch(&server.location("/slow"), &Validators::default(), options).await.unwrap_err();
    assert!(matches!(err, FetchError::TimedOut { .. }), "{err}");
}

#[tokio::test]
async fn redirects_are_followed_on_the_same_machine() {
    let server = Server::start().await;
    server.route("/old", Route { status: 301, location: Some("/new".to_owned()), ..Route::ok("") });
    server.route("/new", Route::ok(RSS));
    let (bytes, _) =
        body(fetch(&server.location("/old"), &Validators::default(), FetchOptions::default()).await.unwrap());
    assert_eq!(bytes, RSS.as_bytes());
    server.route("/loop", Route { status: 302, location: Some("/loop".to_owned()), ..Route::ok("") });
    let err =
        fetch(&server.location("/loop"), &Validators::default(), FetchOptions::default()).await.unwrap_err();
    assert!(matches!(err, FetchError::Redirect { problem: RedirectProblem::TooMany, .. }), "{err}");
}

/// Where a redirect from a feed on the internet may lead, decided by the address, however it is
/// spelled and whatever name leads there.
#[tokio::test]
async fn a_remote_feed_cannot_redirect_to_this_machine_or_the_network() {
    let table = Table::with(&[
        ("cdn.example.net", &["93.184.216.34"]),
        ("intranet.test", &["127.0.0.1"]),
        ("both.test", &["93.184.216.34", "::1"]),
        ("nas.test", &["192.168.1.5"]),
    ]);
    let public = Reach::PublicAnd(Scope::Public);
    let from = Some("feeds.example.org");
    let refused = |to: &str, scope: &str| {
        format!(
            "feeds.example.org redirected to {to}, {scope}, which is refused: name that address in the source's url if it is meant"
        )
    };
    let this_machine = "on this machine (loopback)";
    for (url, want) in [
        ("http://127.0.0.1:8080/admin", refused("127.0.0.1:8080", this_machine)),
        ("http://[::ffff:7f00:1]:8080/", refused("[::ffff:7f00:1]:8080", this_machine)),
        ("http://[::ffff:127.0.0.1]/", refused("[::ffff:7f00:1]", this_machine)),
        ("http://[::7f00:1]/", refused("[::7f00:1]", this_machine)),
        ("http://0.0.0.0:631/", refused("0.0.0.0:631", this_machine)),
        ("http://[::]:631/", refused("[::]:631", this_machine)),
        ("http://intranet.test:8080/", refused("intranet.test:8080 (127.0.0.1)", this_machine)),
        ("http://both.test/", refused("both.test (::1)", this_machine)),
        (
            "http://169.254.169.254/latest/meta-data/",
            refused("169.254.169.254", "a link-local address (a router or a cloud metadata service)"),
        ),
        (
            "http://[fe80::1]/",
            refused("[fe80::1]", "a link-local address (a router or a cloud metadata service)"),
        ),
        ("http://10.0.0.1/", refused("10.0.0.1", "on a private network")),
        ("http://nas.test/", refused("nas.test (192.168.1.5)", "on a private network")),
    ] {
        let url = Url::parse(url).unwrap();
        let err = hop(&url, public, from, &table).await.unwrap_err();
        assert!(
            matches!(err, FetchError::Redirect { problem: RedirectProblem::Refused { .. }, .. }),
            "{err}"
        );
        assert_eq!(err.to_string(), want, "{url}");
    }
    let cdn = Url::parse("https://cdn.example.net/rss").unwrap();
    assert!(hop(&cdn, public, from, &table).await.is_ok());
    // A feed on the LAN may redirect on the LAN, never to this machine or the link.
    let lan = Reach::PublicAnd(Scope::Private);
    assert!(hop(&Url::parse("http://nas.test/").unwrap(), lan, from, &table).await.is_ok());
    assert!(hop(&Url::parse("http://intranet.test/").unwrap(), lan, from, &table).await.is_err());
    assert!(hop(&Url::parse("http://169.254.169.254/").unwrap(), lan, from, &table).await.is_err());
    // The configured host itself is what the user named: it goes wherever it resolves.
    assert!(hop(&Url::parse("http://intranet.test/").unwrap(), Reach::Anything, None, &table).await.is_ok());
}

#[test]
fn a_redirect_is_to_http_with_a_location() {
    let from = Url::parse("https://feeds.example.org/rss").unwrap();
    let mut headers = HeaderMap::new();
    assert!(matches!(
        redirect_target(&from, &headers),
        Err(FetchError::Redirect { problem: RedirectProblem::NoLocation, .. })
    ));
    headers.insert(LOCATION, "https://cdn.example.net/rss".parse().unwrap());
    assert_eq!(redirect_target(&from, &headers).unwrap().as_str(), "https://cdn.example.net/rss");
    headers.insert(LOCATION, "/moved".parse().unwrap());
    assert_eq!(redirect_target(&from, &headers).unwrap().as_str(), "https://feeds.example.org/moved");
    for to in ["ftp://example.net/rss", "file:///etc/passwd", "javascript:alert(1)"] {
        headers.insert(LOCATION, to.parse().unwrap());
        let err = redirect_target(&from, &headers).unwrap_err();
        assert!(matches!(err, FetchError::Redirect { problem: RedirectProblem::NotHttp, .. }), "{to}: {err}");
    }
}

/// The whole fetch, names looked up in a table: each hop connects to the address its name was
/// checked at (the system knows none of these names), a redirect within this machine is
/// followed, one from this machine to the LAN or the link is refused before it connects.
#[tokio::test]
async fn every_hop_is_resolved_checked_and_pinned() {
    let server = Server::start().await;
    let table = Table::with(&[
        ("feed.livenote-test.invalid", &["127.0.0.1"]),
        ("mirror.livenote-test.invalid", &["127.0.0.1"]),
        ("nas.livenote-test.invalid", &["192.168.1.5"]),
    ]);
    let port = server.port;
    server.route(
        "/old",
        Route {
            status: 301,
            location: Some(format!("http://mirror.livenote-test.invalid:{port}/new")),
            ..Route::ok("")
        },
    );
    server.route("/new", Route::ok(RSS));
    let start = Location::parse(&format!("http://feed.livenote-test.invalid:{port}/old")).unwrap();
    let fetched = fetch_via(&start, &Validators::default(), FetchOptions::default(), &table).await.unwrap();
    assert_eq!(body(fetched).0, RSS.as_bytes());
    assert_eq!(
        *table.lookups.lock().unwrap(),
        ["feed.livenote-test.invalid", "mirror.livenote-test.invalid"],
        "each name looked up once, by the check"
    );

    for (to, refused) in [
        (
            "http://nas.livenote-test.invalid/feed",
            "nas.livenote-test.invalid (192.168.1.5), on a private network",
        ),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254, a link-local address"),
    ] {
        server.route("/away", Route { status: 302, location: Some(to.to_owned()), ..Route::ok("") });
        let start = Location::parse(&format!("http://feed.livenote-test.invalid:{port}/away")).unwrap();
        let err =
            fetch_via(&start, &Validators::default(), FetchOptions::default(), &table).await.unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("feed.livenote-test.invalid:{port} redirected to {refused}")),
            "{err}"
        );
    }
    // Nothing reached the LAN: every request was to the server on 127.0.0.1.
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn locations_read_webcal_and_file_urls() {
    assert_eq!(
        Location::parse("webcal://p01-calendars.icloud.com/published/2/abc").unwrap(),
        Location::Http(Url::parse("https://p01-calendars.icloud.com/published/2/abc").unwrap())
    );
    assert_eq!(Location::parse("file:///tmp/cal.ics").unwrap(), Location::File("/tmp/cal.ics".into()));
    assert_eq!(
        Location::parse("ftp://example.org/x").unwrap_err().to_string(),
        "invalid URL: the scheme `ftp` (http, https, webcal or file)"
    );
    assert!(Location::parse("not a url").is_err());
}

#[tokio::test]
async fn a_local_calendar_file_is_read_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cal.ics");
    std::fs::write(&path, b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n").unwrap();
    let location = Location::File(path.clone());
    let (bytes, _) = body(fetch(&location, &Validators::default(), FetchOptions::default()).await.unwrap());
    assert_eq!(bytes, b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n");
    let small = FetchOptions { max_bytes: 10, ..FetchOptions::default() };
    assert!(matches!(
        fetch(&location, &Validators::default(), small).await,
        Err(FetchError::TooLarge { .. })
    ));
    let missing = Location::File(dir.path().join("none.ics"));
    assert!(matches!(fetch(&missing, &Validators::default(), small).await, Err(FetchError::File { .. })));
}

/// The way a poll uses these pieces: fetch, parse, compare versions with the last poll's.
#[tokio::test]
async fn an_entry_edited_in_place_is_a_new_version_over_http() {
    let server = Server::start().await;
    server.route("/feed.xml", Route { etag: Some("\"1\"".to_owned()), ..Route::ok(RSS) });
    let location = server.location("/feed.xml");
    let versions = |bytes: &[u8]| -> Vec<(String, String)> {
        let feed = feed::parse(bytes, Some(&server.url("/feed.xml"))).unwrap();
        feed.entries.iter().map(|e| e.to_item()).map(|(id, version, ..)| (id, version)).collect()
    };
    let (bytes, validators) =
        body(fetch(&location, &Validators::default(), FetchOptions::default()).await.unwrap());
    let first = versions(&bytes);
    assert_eq!(first.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["v1.2", "v1.1"]);

    // Edited in place: same guid, new description.
    let edited = RSS.replace("Fixes &lt;b&gt;crash&lt;/b&gt;", "Fixes the crash on start");
    server.route("/feed.xml", Route { etag: Some("\"2\"".to_owned()), ..Route::ok(edited) });
    let (bytes, _) = body(fetch(&location, &validators, FetchOptions::default()).await.unwrap());
    let second = versions(&bytes);
    assert_eq!(second[0].0, first[0].0);
    assert_ne!(second[0].1, first[0].1, "the edited entry is a new version");
    assert_eq!(second[1], first[1], "the other entry is unchanged");
}

#[tokio::test]
async fn a_malformed_feed_over_http_is_a_clear_error() {
    let server = Server::start().await;
    server.route("/bad.xml", Route::ok("<html><body>Service unavailable</body></html>"));
    let (bytes, _) = body(
        fetch(&server.location("/bad.xml"), &Validators::default(), FetchOptions::default()).await.unwrap(),
    );
    let err = feed::parse(&bytes, None).unwrap_err();
    assert!(err.to_string().starts_with("not a feed (RSS, Atom or JSON Feed): "), "{err}");
}

#[tokio::test]
async fn a_calendar_over_http_becomes_a_digest() {
    let server = Server::start().await;
    server.route("/basic.ics", Route::ok(include_str!("../../tests/fixtures/sources/berlin-standup.ics")));
    let (bytes, _) = body(
        fetch(&server.location("/basic.ics"), &Validators::default(), FetchOptions::default()).await.unwrap(),
    );
    let now = Utc.with_ymd_and_hms(2026, 3, 28, 12, 0, 0).unwrap();
    let digest =
        ics::digest(&bytes, Zone::Named(chrono_tz::Europe::Berlin), now, ics::DEFAULT_HORIZON).unwrap();
    let starts: Vec<&str> = digest.events.iter().map(|e| e.start.as_str()).collect();
    assert_eq!(
        starts,
        ["2026-03-28T09:00:00+01:00", "2026-03-29T09:00:00+02:00", "2026-03-30T09:00:00+02:00"]
    );
}
