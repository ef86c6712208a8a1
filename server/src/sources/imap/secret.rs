//! The mailbox password, and every way it can be spelled back to us. A server may echo the
//! LOGIN line in its refusal (`a1 NO LOGIN "me" "pa\"ss" failed`: the password IMAP-quoted),
//! the client library quotes that refusal again in its error (`info: Some("… \"pa\\\"ss\" …")`:
//! escaped twice), a parse error lists the line's bytes (`[112, 97, …]`), and AUTHENTICATE PLAIN
//! sends it in base64. Server text in which any spelling appears is never shown, logged or
//! saved ([`Password::server_text`]); the rest is shown as the server said it.

use std::fmt;

use base64::Engine as _;

/// What an error says instead of a server's text that repeated the password.
pub const WITHHELD: &str = "(the server's answer repeated the password, so it is not shown)";

/// A base64 run shorter than this is not taken for the password: a few letters of it occur in
/// ordinary text, and would hide a harmless answer.
const MIN_BASE64_RUN: usize = 4;

/// A password, never printed.
#[derive(Clone)]
pub struct Password(pub(super) String);

impl Password {
    pub fn new(secret: impl Into<String>) -> Password {
        Password(secret.into())
    }

    /// What a server said, for an error: as it said it, unless any spelling of the password
    /// is in it ([`Password::appears_in`]); then none of it, so no part of the secret (the
    /// ends of a spelling this list lacks) is ever kept.
    pub(super) fn server_text(&self, text: &str) -> String {
        if self.appears_in(text) { WITHHELD.to_owned() } else { text.to_owned() }
    }

    /// Whether any spelling of the password is in `text`, in any letter case (a server may
    /// shout the line back).
    pub(super) fn appears_in(&self, text: &str) -> bool {
        if self.0.is_empty() {
            return false;
        }
        let text = text.to_lowercase();
        spellings(&self.0).iter().any(|s| text.contains(&s.to_lowercase()))
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password([hidden])")
    }
}

/// Every spelling of `secret` that can reach an error's text: as it is and IMAP-quoted (as the
/// LOGIN line carries it), each as Rust's `{:?}` escapes it once and twice and as JSON does,
/// percent-encoded, its bytes as a list, and the runs of base64 that any stream carrying it
/// holds, whatever its offset (AUTHENTICATE PLAIN: `\0user\0password`).
pub fn spellings(secret: &str) -> Vec<String> {
    let mut out = Vec::new();
    for base in [secret.to_owned(), imap_quoted(secret)] {
        let once = debug_escaped(&base);
        out.push(debug_escaped(&once));
        out.push(json_escaped(&base));
        out.push(once);
        out.push(byte_list(&base));
        out.push(base);
    }
    out.push(percent_encoded(secret));
    out.extend(base64_runs(secret.as_bytes()));
    out.retain(|s| !s.is_empty());
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// The inside of an IMAP quoted string: `\` and `"` escaped (RFC 3501; async-imap's quoting).
fn imap_quoted(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The inside of `{:?}`.
fn debug_escaped(s: &str) -> String {
    let quoted = format!("{s:?}");
    quoted.get(1..quoted.len() - 1).unwrap_or_default().to_owned()
}

fn json_escaped(s: &str) -> String {
    let quoted = serde_json::Value::String(s.to_owned()).to_string();
    quoted.get(1..quoted.len() - 1).unwrap_or_default().to_owned()
}

/// `112, 97, 115, 115`: the bytes as a `Vec<u8>`'s `{:?}` lists them.
fn byte_list(s: &str) -> String {
    s.bytes().map(|b| b.to_string()).collect::<Vec<_>>().join(", ")
}

fn percent_encoded(s: &str) -> String {
    s.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { char::from(b).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// The base64 characters that depend on `secret`'s bytes alone, for each of the three offsets
/// (modulo 3) it may start at in a longer stream: what any encoding of a stream holding it
/// contains.
fn base64_runs(secret: &[u8]) -> Vec<String> {
    (0..3usize)
        .filter_map(|offset| {
            let mut stream = vec![0u8; offset];
            stream.extend_from_slice(secret);
            let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&stream);
            // The first characters carry bits of the bytes before it; the last, when the
            // secret does not end a 3-byte group, bits of the bytes after it.
            let skip = [0, 2, 3][offset];
            let drop_last = usize::from(!stream.len().is_multiple_of(3));
            let end = encoded.len().checked_sub(drop_last)?;
            let run = encoded.get(skip..end)?;
            (run.len() >= MIN_BASE64_RUN).then(|| run.to_owned())
        })
        .collect()
}

#[cfg(test)]
#[path = "secret_tests.rs"]
mod tests;
