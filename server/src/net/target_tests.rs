use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;
use crate::net::testing::Table;

async fn target(url: &str, table: &Table) -> Target {
    let url = Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    Target::resolve(&url, table).await.unwrap_or_else(|e| panic!("{url}: {e}"))
}

#[tokio::test]
async fn an_address_literal_is_judged_by_the_address_whatever_its_spelling() {
    let table = Table::default();
    for (url, addr) in [
        ("http://[::ffff:7f00:1]:8080/feed", "[::ffff:127.0.0.1]:8080"),
        ("http://[::ffff:127.0.0.1]/", "[::ffff:127.0.0.1]:80"),
        ("https://0.0.0.0/", "0.0.0.0:443"),
        ("http://[::]:1/", "[::]:1"),
        ("http://127.1/", "127.0.0.1:80"),
        ("http://2130706433/", "127.0.0.1:80"),
    ] {
        let t = target(url, &table).await;
        assert_eq!(t.addrs(), [addr.parse::<SocketAddr>().unwrap_or_else(|e| panic!("{e}"))], "{url}");
        assert_eq!(t.farthest(), Some(Scope::Loopback), "{url}");
        assert_eq!(t.refused(Reach::Public).map(|(_, s)| s), Some(Scope::Loopback), "{url}");
        assert_eq!(t.refused(Reach::PublicAnd(Scope::Loopback)), None, "{url}");
    }
    assert!(table.lookups.lock().unwrap_or_else(|e| e.into_inner()).is_empty(), "a literal is not looked up");
    let t = target("http://[fe80::1]/", &table).await;
    assert_eq!(t.refused(Reach::PublicAnd(Scope::Private)).map(|(_, s)| s), Some(Scope::LinkLocal));
}

#[tokio::test]
async fn every_address_of_a_name_is_checked() {
    let table = Table::with(&[
        ("feeds.example.org", &["93.184.216.34", "2606:2800:220:1::1"]),
        ("mixed.example.org", &["93.184.216.34", "127.0.0.1"]),
        ("dev.test", &["127.0.0.1"]),
        ("nas.test", &["192.168.1.5"]),
    ]);
    let t = target("https://feeds.example.org/rss", &table).await;
    assert_eq!(t.addrs().len(), 2);
    assert_eq!((t.refused(Reach::Public), t.farthest()), (None, Some(Scope::Public)));

    // One local address among public ones is enough to refuse; the host still counts as public,
    // so the redirects after it reach less, not more.
    let t = target("https://mixed.example.org/rss", &table).await;
    assert_eq!(
        t.refused(Reach::Public),
        Some(("127.0.0.1".parse().unwrap_or_else(|e| panic!("{e}")), Scope::Loopback))
    );
    assert_eq!(t.farthest(), Some(Scope::Public));

    let t = target("http://dev.test:8080/", &table).await;
    assert_eq!(t.addrs(), ["127.0.0.1:8080".parse::<SocketAddr>().unwrap_or_else(|e| panic!("{e}"))]);
    assert_eq!(t.refused(Reach::PublicAnd(Scope::Private)).map(|(_, s)| s), Some(Scope::Loopback));
    let t = target("http://nas.test/", &table).await;
    assert_eq!(t.refused(Reach::PublicAnd(Scope::Private)), None);
    assert_eq!(t.refused(Reach::PublicAnd(Scope::Loopback)).map(|(_, s)| s), Some(Scope::Private));
}

#[tokio::test]
async fn a_name_that_does_not_resolve_has_no_address_and_says_why() {
    let t = target("https://nowhere.test/", &Table::default()).await;
    assert!(t.addrs().is_empty());
    assert_eq!(t.lookup_error(), Some("no such name in the table"));
    assert_eq!((t.refused(Reach::Public), t.farthest()), (None, None));
    let url = Url::parse("file:///etc/passwd").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Target::resolve(&url, &Table::default()).await, Err(NoHost));
}

/// One answer on 127.0.0.1; its port.
async fn answer_once(body: &'static str) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else { return };
        let _ = socket.read(&mut [0u8; 4096]).await;
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
        let _ = socket.write_all(format!("{head}{body}").as_bytes()).await;
    });
    port
}

#[tokio::test]
async fn the_client_connects_to_the_checked_addresses_without_a_second_lookup() {
    let port = answer_once("pinned").await;
    // Names only the table knows: the system's resolver would not find them.
    let table = Table::with(&[("feed.livenote-test.invalid", &["127.0.0.1"])]);
    let t = target(&format!("http://feed.livenote-test.invalid:{port}/x"), &table).await;
    let client = t.pin(reqwest::Client::builder().no_proxy()).build().unwrap_or_else(|e| panic!("{e}"));
    let response = client
        .get(format!("http://feed.livenote-test.invalid:{port}/x"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text().await.ok().as_deref(), Some("pinned"));

    // A name pinned to no address is never looked up again: the connection fails.
    let t = target(&format!("http://localhost:{port}/"), &Table::default()).await;
    assert_eq!(t.lookup_error(), Some("no such name in the table"));
    let client = t.pin(reqwest::Client::builder().no_proxy()).build().unwrap_or_else(|e| panic!("{e}"));
    let sent = client.get(format!("http://localhost:{port}/")).send().await;
    assert!(sent.as_ref().is_err_and(reqwest::Error::is_connect), "{sent:?}");
}
