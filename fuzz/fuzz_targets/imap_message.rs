//! Fuzz the mail reader (server/src/sources/imap/message.rs): `parse_message` (through
//! mail-parser) on an arbitrary fetched message, and the item it becomes.
//!
//! Input: bytes 0–3 the UIDVALIDITY, 4–7 the UID (little-endian), byte 8 whether the server
//! said the message was larger than what arrived; the rest is the message as fetched.
//!
//! Checked: nothing panics (but for one debug assertion of mail-parser, below); the text is at most `MAX_TEXT_BYTES`, clipped only when it says so;
//! subject, message id, addresses and attachment names are one line and bounded; a message is
//! `truncated` exactly when the server's size exceeds what arrived; the item's id is
//! UIDVALIDITY:UID, its version stable, its summary one line.
#![no_main]

use std::panic::{self, PanicHookInfo};
use std::sync::Once;

use libfuzzer_sys::fuzz_target;
use livenote::sources::imap::{MAX_TEXT_BYTES, MailMessage, parse_message, to_item};

fuzz_target!(|data: &[u8]| {
    let Some((head, raw)) = data.split_at_checked(9) else { return };
    let word = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
    let (validity, uid) = (word(0), word(4));
    let fetched = u32::try_from(raw.len()).unwrap_or(u32::MAX);
    let size = match head[8] % 3 {
        0 => None,
        1 => Some(fetched),
        _ => Some(fetched.saturating_add(1)),
    };
    let Some(m) = parse(raw, validity, uid, size) else { return };
    assert!(m.text.len() <= MAX_TEXT_BYTES, "{} bytes of text", m.text.len());
    assert_eq!(m.truncated, size.is_some_and(|s| s as usize > raw.len()));
    for (what, max, s) in [("subject", 998, Some(&m.subject)), ("message id", 998, m.message_id.as_ref())] {
        if let Some(s) = s {
            assert!(!s.contains(['\n', '\r']) && s.chars().count() <= max, "{what}: {s:?}");
        }
    }
    for a in m.from.iter().chain(&m.to).chain(&m.cc) {
        assert!(!a.contains(['\n', '\r']) && a.chars().count() <= 320, "{a:?}");
    }
    for a in &m.attachments {
        if let Some(n) = &a.filename {
            assert!(!n.contains(['\n', '\r']) && n.chars().count() <= 255, "{n:?}");
        }
    }
    let (id, version, summary, payload) = to_item(&m);
    assert_eq!(id, format!("{validity}:{uid}"));
    assert_eq!(to_item(&m).1, version, "the version is not stable");
    assert!(!summary.contains('\n') && summary.chars().count() <= 160, "{summary:?}");
    assert_eq!(payload["uid"], uid);
});

/// `parse_message`, skipping what reaches mail-parser 0.11.9's `debug_assert!(false, "Invalid
/// part ID, could not find multipart.")` (src/parsers/message.rs:485; seed
/// `mail-parser-debug-assertion`): a release build, the one users run, leaves the assertion out
/// and reads on, and a debug build's panic is the poll's error (the poller catches it). 1.0
/// drops the assertion but needs Rust 1.98. Any other panic still ends the run.
fn parse(raw: &[u8], validity: u32, uid: u32, size: Option<u32>) -> Option<MailMessage> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let fuzzer = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !known(info) {
                fuzzer(info);
            }
        }));
    });
    panic::catch_unwind(|| parse_message(raw, "INBOX", validity, uid, size, None)).ok()
}

fn known(info: &PanicHookInfo<'_>) -> bool {
    let at = info.location().map(|l| l.file()).unwrap_or_default();
    let what = info.payload().downcast_ref::<&str>().copied().unwrap_or_default();
    at.contains("mail-parser-0.11.9")
        && at.ends_with("message.rs")
        && what.contains("could not find multipart")
}
