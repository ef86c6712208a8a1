use expect_test::expect;

use super::*;

fn payloads(bytes: &str) -> String {
    let feed = parse(bytes.as_bytes(), Some("https://example.org/feed")).unwrap();
    let items: Vec<Value> = feed
        .entries
        .iter()
        .map(|e| {
            let (id, version, summary, payload) = e.to_item();
            assert_eq!(version, e.version());
            assert_eq!(id, e.id);
            serde_json::json!({ "summary": summary, "payload": payload })
        })
        .collect();
    serde_json::to_string_pretty(&items).unwrap()
}

const RSS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel>
  <title>Tool releases</title>
  <link>https://example.org/</link>
  <lastBuildDate>Wed, 25 Nov 2026 10:00:00 GMT</lastBuildDate>
  <item>
    <title>v2.0 &amp; more</title>
    <link>/releases/v2.0</link>
    <guid isPermaLink="false">tag:example.org,2026:v2.0</guid>
    <pubDate>Wed, 25 Nov 2026 09:30:00 +0100</pubDate>
    <author>dev@example.org (Ada)</author>
    <description>&lt;p&gt;A &lt;b&gt;big&lt;/b&gt; release.&lt;/p&gt;&lt;ul&gt;&lt;li&gt;one&lt;/li&gt;&lt;li&gt;two&lt;/li&gt;&lt;/ul&gt;</description>
    <content:encoded><![CDATA[<h2>Notes</h2><p>Everything&nbsp;changed.</p><script>evil()</script>]]></content:encoded>
  </item>
  <item>
    <title>No guid, no link</title>
    <pubDate>Tue, 24 Nov 2026 08:00:00 GMT</pubDate>
  </item>
</channel>
</rss>"#;

#[test]
fn rss_entries_become_text_with_stable_ids() {
    expect![[r#"
        [
          {
            "payload": {
              "authors": [
                "Ada"
              ],
              "content": "Notes\n\nEverything changed.",
              "feed": "Tool releases",
              "id": "tag:example.org,2026:v2.0",
              "link": "https://example.org/releases/v2.0",
              "published": "2026-11-25T08:30:00Z",
              "summary": "A big release.\n\n- one\n- two",
              "title": "v2.0 & more",
              "updated": "2026-11-25T08:30:00Z"
            },
            "summary": "Tool releases: v2.0 & more"
          },
          {
            "payload": {
              "authors": [],
              "content": null,
              "feed": "Tool releases",
              "id": "hash:0a38be8298e7102e",
              "link": null,
              "published": "2026-11-24T08:00:00Z",
              "summary": null,
              "title": "No guid, no link",
              "updated": "2026-11-24T08:00:00Z"
            },
            "summary": "Tool releases: No guid, no link"
          }
        ]"#]]
    .assert_eq(&payloads(RSS));
    // Without a guid or a link the id is derived, the same on every parse (never a UUID).
    let a = parse(RSS.as_bytes(), None).unwrap();
    let b = parse(RSS.as_bytes(), None).unwrap();
    assert!(a.entries[1].id.starts_with("hash:"));
    assert_eq!(a.entries[1].id, b.entries[1].id);
}

#[test]
fn atom_and_json_feed_read_the_same_way() {
    let atom = r#"<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Blog</title>
  <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
  <updated>2026-11-25T18:30:02Z</updated>
  <entry>
    <title type="html">Hello &lt;em&gt;world&lt;/em&gt;</title>
    <link rel="alternate" href="https://blog.example.org/hello"/>
    <link rel="edit" href="https://blog.example.org/edit/1"/>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
    <updated>2026-11-25T18:30:02Z</updated>
    <author><name>Grace</name></author>
    <summary>Short.</summary>
  </entry>
</feed>"#;
    let json = r#"{
  "version": "https://jsonfeed.org/version/1.1",
  "title": "JSON things",
  "items": [
    { "id": "1", "url": "https://j.example.org/1", "title": "First",
      "content_html": "<p>Hi <a href=\"x\">there</a></p>", "date_published": "2026-11-20T10:00:00Z",
      "authors": [{ "name": "Lin" }] }
  ]
}"#;
    let line = |bytes: &str| {
        let feed = parse(bytes.as_bytes(), None).unwrap();
        let e = &feed.entries[0];
        format!(
            "{:?} | {} | {:?} | {:?} | {:?} | {:?} | {:?}",
            feed.title,
            e.id,
            e.title,
            e.link,
            e.summary,
            e.authors,
            e.published.map(|d| d.to_rfc3339())
        )
    };
    expect![[r#"Some("Blog") | urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a | Some("Hello world") | Some("https://blog.example.org/hello") | Some("Short.") | ["Grace"] | Some("2026-11-25T18:30:02+00:00")"#]]
        .assert_eq(&line(atom));
    expect![[r#"Some("JSON things") | 1 | Some("First") | Some("https://j.example.org/1") | Some("Hi there") | ["Lin"] | Some("2026-11-20T10:00:00+00:00")"#]]
        .assert_eq(&line(json));
}

#[test]
fn rss_0_91_reads_too() {
    let rss = r#"<?xml version="1.0"?>
<rss version="0.91"><channel><title>Old</title><link>http://old.example.org/</link>
<description>d</description>
<item><title>One</title><link>http://old.example.org/1</link><description>first</description></item>
</channel></rss>"#;
    let feed = parse(rss.as_bytes(), None).unwrap();
    assert_eq!(feed.entries.len(), 1);
    // No guid: the link is the id.
    assert_eq!(feed.entries[0].id, "http://old.example.org/1");
}

#[test]
fn an_entry_is_a_new_version_only_when_a_reader_would_see_a_change() {
    let version = |rss: &str| parse(rss.as_bytes(), None).unwrap().entries[0].version();
    let base = version(RSS);
    // The channel's build date and the entry's order of elements are no change.
    assert_eq!(
        version(&RSS.replace(
            "Wed, 25 Nov 2026 10:00:00 GMT</lastBuildDate>",
            "Thu, 26 Nov 2026 10:00:00 GMT</lastBuildDate>"
        )),
        base
    );
    // Edited in place: the same guid, another text.
    let edited = parse(RSS.replace("big", "huge").as_bytes(), None).unwrap();
    assert_eq!(edited.entries[0].id, "tag:example.org,2026:v2.0");
    assert_ne!(edited.entries[0].version(), base);
    assert_ne!(version(&RSS.replace("v2.0 &amp; more", "v2.0 final")), base);
}

#[test]
fn malformed_feeds_say_what_failed() {
    let err = |bytes: &str| parse(bytes.as_bytes(), None).unwrap_err().to_string();
    expect!["not a feed (RSS, Atom or JSON Feed): unable to parse feed: no root element"]
        .assert_eq(&err("<html><body>503</body></html>"));
    expect!["not a feed (RSS, Atom or JSON Feed): unable to parse feed: no root element"]
        .assert_eq(&err("<rss><channel><item><title>x</titl"));
    expect!["not a feed (RSS, Atom or JSON Feed): unable to parse JSON: invalid type: integer `3`, expected a string at line 1 column 14"].assert_eq(&err("{\"version\": 3}"));
    expect!["not a feed (RSS, Atom or JSON Feed): unable to parse feed: no root element"].assert_eq(&err(""));
}

#[test]
fn entries_and_texts_are_bounded() {
    let item = |i: usize| {
        format!(
            "<item><guid>{i}</guid><title>t{i}</title><description>{}</description></item>",
            "word ".repeat(2_000)
        )
    };
    let rss = format!(
        "<rss version=\"2.0\"><channel><title>Big</title>{}</channel></rss>",
        (0..MAX_ENTRIES + 50).map(item).collect::<String>()
    );
    let feed = parse(rss.as_bytes(), None).unwrap();
    assert_eq!(feed.entries.len(), MAX_ENTRIES);
    assert_eq!(feed.entries[0].id, "0");
    let summary = feed.entries[0].summary.as_deref().unwrap();
    assert_eq!(summary.chars().count(), MAX_TEXT);
    assert!(summary.ends_with('…'));
}

#[test]
fn deeply_nested_markup_is_no_crash() {
    let deep = |open: &str, close: &str| {
        format!(
            "<rss version=\"2.0\"><channel><title>x</title><item><title>t</title><description>{}{}</description></item></channel></rss>",
            open.repeat(200_000),
            close.repeat(200_000)
        )
    };
    let _ = parse(deep("<a>", "</a>").as_bytes(), None);
    let _ = parse(deep("&lt;b&gt;", "&lt;/b&gt;").as_bytes(), None);
    let json = format!(
        "{{\"version\":\"https://jsonfeed.org/version/1.1\",\"title\":\"j\",\"items\":{}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(parse(json.as_bytes(), None).is_err());
    let atom = format!(
        "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry>{}{}</entry></feed>",
        "<x>".repeat(200_000),
        "</x>".repeat(200_000)
    );
    let _ = parse(atom.as_bytes(), None);
}
