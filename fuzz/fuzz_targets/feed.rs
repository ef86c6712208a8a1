//! Fuzz the feed reader (server/src/sources/feed.rs): `feed::parse` (RSS, Atom and JSON Feed
//! through feed-rs) on arbitrary bytes, and the item of each entry.
//!
//! Checked: nothing panics; at most 500 entries; every entry has an id, a title, summary,
//! content and authors within their bounds, a title and authors on one line; its item carries
//! the entry's id, a version that is the entry's own and stable, a one-line summary.
#![no_main]

use libfuzzer_sys::fuzz_target;
use livenote::sources::feed::{self, MAX_ENTRIES, MAX_TEXT};

fuzz_target!(|data: &[u8]| {
    let Ok(parsed) = feed::parse(data, Some("https://example.org/blog/feed.xml")) else { return };
    assert!(parsed.entries.len() <= MAX_ENTRIES);
    for e in &parsed.entries {
        assert!(!e.id.is_empty(), "{e:?}");
        assert!(e.id.chars().count() <= 2_048, "{e:?}");
        for t in e.title.iter().chain(e.authors.iter()) {
            assert!(t.chars().count() <= 300 && !t.contains('\n'), "{t:?}");
        }
        assert!(e.authors.len() <= 20);
        for t in e.summary.iter().chain(e.content.iter()) {
            assert!(t.chars().count() <= MAX_TEXT, "{} characters", t.chars().count());
        }
        let (id, version, summary, payload) = e.to_item();
        assert_eq!(id, e.id);
        assert_eq!(version, e.version());
        assert_eq!(e.to_item().1, version, "the version is not stable");
        assert!(!summary.contains('\n') && summary.chars().count() <= 200, "{summary:?}");
        assert_eq!(payload["id"], e.id.as_str());
    }
});
