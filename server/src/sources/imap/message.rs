//! A fetched message as an event carries it: addresses, subject, date, the text body (HTML-only
//! mail as text) clipped to a bound, attachments named and never passed on.

use super::*;

/// One message as an event carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MailMessage {
    pub mailbox: String,
    pub uid_validity: u32,
    pub uid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// `Name <address>` or the bare address, as the headers give them.
    pub from: Vec<String>,
    pub to: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cc: Vec<String>,
    pub subject: String,
    /// The Date header in UTC, else the server's arrival time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<DateTime<Utc>>,
    /// The plain-text body (an HTML-only message as text), at most [`MAX_TEXT_BYTES`].
    pub text: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub text_clipped: bool,
    /// Named, never sent.
    pub attachments: Vec<Attachment>,
    /// The whole message's size as the server counts it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// Only the first [`MAX_FETCH_BYTES`] were fetched: text and attachments past them are
    /// missing, a cut attachment's size is what arrived.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// An attachment's name and kind; its content stays on the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    pub content_type: String,
    /// Decoded bytes.
    pub size: usize,
}

impl MailMessage {
    /// `<uidvalidity>:<uid>`: stable across polls and processes, new when the mailbox is
    /// recreated.
    pub fn id(&self) -> String {
        format!("{}:{}", self.uid_validity, self.uid)
    }
}

/// The item of the sources contract: (id, version, summary, payload). A message under one UID
/// never changes (IMAP guarantees it), so the version is a hash of what was read, for the
/// contract's "changed" rule only.
pub fn to_item(message: &MailMessage) -> (String, String, String, serde_json::Value) {
    let payload = serde_json::to_value(message).unwrap_or(serde_json::Value::Null);
    let digest = ring::digest::digest(&ring::digest::SHA256, payload.to_string().as_bytes());
    let version: String = digest.as_ref().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let from = message.from.first().map(String::as_str).unwrap_or("(no sender)");
    let subject = if message.subject.is_empty() { "(no subject)" } else { &message.subject };
    let summary = one_line(&format!("{from}: {subject}"), 160);
    (message.id(), version, summary, payload)
}

/// Turns a fetched message (at most `fetched` of its bytes, the whole being `size`) into its
/// event form. Never fails: what cannot be parsed is left empty, the raw text kept as the body.
pub fn parse_message(
    raw: &[u8],
    mailbox: &str,
    uid_validity: u32,
    uid: u32,
    size: Option<u32>,
    arrived: Option<DateTime<Utc>>,
) -> MailMessage {
    let truncated = size.is_some_and(|s| s as usize > raw.len());
    let mut message = MailMessage {
        mailbox: mailbox.to_owned(),
        uid_validity,
        uid,
        message_id: None,
        from: Vec::new(),
        to: Vec::new(),
        cc: Vec::new(),
        subject: String::new(),
        date: arrived,
        text: String::new(),
        text_clipped: false,
        attachments: Vec::new(),
        size,
        truncated,
    };
    let Some(parsed) = MessageParser::default().parse(raw) else {
        let text = String::from_utf8_lossy(raw);
        (message.text, message.text_clipped) = clip_text(&text);
        return message;
    };
    let addresses = |a: Option<&mail_parser::Address<'_>>| -> Vec<String> {
        a.map(|a| a.iter().filter_map(show_address).collect()).unwrap_or_default()
    };
    message.from = addresses(parsed.from());
    message.to = addresses(parsed.to());
    message.cc = addresses(parsed.cc());
    message.subject = parsed.subject().map(|s| one_line(s, 998)).unwrap_or_default();
    message.message_id = parsed.message_id().map(|id| one_line(id, 998));
    if let Some(date) = parsed.date().and_then(|d| Utc.timestamp_opt(d.to_timestamp(), 0).single()) {
        message.date = Some(date);
    }
    let bodies: Vec<String> = (0..parsed.text_body_count())
        .filter_map(|i| parsed.body_text(i))
        .map(|t| t.trim().to_owned())
        .collect();
    (message.text, message.text_clipped) = clip_text(&bodies.join("\n\n"));
    message.attachments = parsed
        .attachments()
        .map(|part| Attachment {
            filename: part.attachment_name().map(|n| one_line(n, 255)),
            content_type: part
                .content_type()
                .map(|ct| match ct.subtype() {
                    Some(sub) => format!("{}/{}", ct.ctype(), sub),
                    None => ct.ctype().to_owned(),
                })
                .unwrap_or_else(|| "application/octet-stream".to_owned())
                .to_ascii_lowercase(),
            size: part.len(),
        })
        .collect();
    message
}

pub(super) fn show_address(a: &mail_parser::Addr<'_>) -> Option<String> {
    let shown = match (a.name().map(str::trim).filter(|n| !n.is_empty()), a.address()) {
        (Some(name), Some(address)) => format!("{name} <{address}>"),
        (None, Some(address)) => address.to_owned(),
        (Some(name), None) => name.to_owned(),
        (None, None) => return None,
    };
    Some(one_line(&shown, 320))
}

pub(super) fn clip_text(text: &str) -> (String, bool) {
    let cut = prefix_bytes(text, MAX_TEXT_BYTES);
    (cut.to_owned(), cut.len() < text.len())
}
