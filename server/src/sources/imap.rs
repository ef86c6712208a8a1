//! `[sources.NAME] kind = "imap"`: new mail in one mailbox, one item per message.
//!
//! A poll connects (TLS from the first byte, STARTTLS, or plain to a loopback address only),
//! logs in with the password from the environment variable the config names, EXAMINEs the
//! mailbox (read-only: nothing is ever marked read) and fetches the messages whose UID is above
//! the saved cursor, at most [`MAX_MESSAGES_PER_POLL`] of them, each at most
//! [`MAX_FETCH_BYTES`] of it. The identity of a message is UIDVALIDITY:UID; a changed
//! UIDVALIDITY means the mailbox was recreated and its UIDs start over, so that poll counts as a
//! first one (what exists is recorded, nothing queued unless `backfill`).
//!
//! Every read is bounded: each command has [`IO_TIMEOUT`], and the bytes one connection may
//! read between two resets are capped ([`MAX_READ_BYTES`]), so a server that streams without end
//! ends the poll with an error instead of filling memory. The password is never logged and never
//! part of an error: whatever a server says back is shown only when no spelling of the password
//! is in it (`secret.rs`), and then not at all.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll as TaskPoll};
use std::time::Duration;

use async_imap::extensions::idle::IdleResponse;
use async_imap::imap_proto::{Response, Status};
use async_imap::{Client, Session};
use chrono::{DateTime, TimeZone, Utc};
use futures::TryStreamExt;
use mail_parser::{MessageParser, MimeHeaders};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls;

use crate::text::short::{one_line, prefix_bytes};

/// The mailbox watched when the config names none.
pub const DEFAULT_MAILBOX: &str = "INBOX";
/// Messages fetched by one poll; the rest come with the next ([`MailPoll::more`]).
pub const MAX_MESSAGES_PER_POLL: usize = 200;
/// The first bytes of a message that are fetched: headers, text and the attachments' headers fit
/// in far less, and a 30 MB attachment is never downloaded to learn its name.
pub const MAX_FETCH_BYTES: u32 = 1024 * 1024;
/// The plain-text body an event carries, in bytes (cut on a character boundary).
pub const MAX_TEXT_BYTES: usize = 16 * 1024;
/// What one connection may read between two resets (each poll, each IDLE wait): 200 messages
/// at their fetch bound, with room for the UID list of a large mailbox.
pub const MAX_READ_BYTES: u64 = 256 * 1024 * 1024;
/// Each command's answer (and the connect, TLS handshake and greeting) must come within this.
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);

mod secret;
mod settings;
pub use secret::Password;
pub use settings::{ImapSettings, Tls, is_loopback_host};

/// Why a poll failed. None of them carries the password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImapError {
    #[error("imap source: {0}")]
    Config(String),
    #[error("the environment variable {var} (`password_env`) is not set or empty")]
    MissingPassword { var: String },
    #[error("cannot connect to {server}: {reason}")]
    Connect { server: String, reason: String },
    #[error("TLS with {server} failed: {reason}")]
    Tls { server: String, reason: String },
    #[error("{server} refused the login of {user}: {reason}")]
    Login { server: String, user: String, reason: String },
    #[error("{server}: cannot open the mailbox {mailbox:?} of {user}: {reason}")]
    Mailbox { server: String, user: String, mailbox: String, reason: String },
    #[error("{server}: {reason}")]
    Protocol { server: String, reason: String },
    #[error("{server} did not answer within {} s ({what})", IO_TIMEOUT.as_secs())]
    Timeout { server: String, what: String },
}

/// Where a mailbox was read up to. Saved by the caller between polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cursor {
    pub uid_validity: u32,
    /// The highest UID already seen (recorded or queued).
    pub last_uid: u32,
}

/// What one poll found.
#[derive(Debug, Clone, PartialEq)]
pub struct MailPoll {
    /// To save for the next poll.
    pub cursor: Cursor,
    /// The new messages, oldest first. Empty on a first poll without backfill.
    pub messages: Vec<MailMessage>,
    /// The UIDVALIDITY the saved cursor had when the server's differs: the mailbox was
    /// recreated, and this poll was taken as a first one.
    pub validity_changed_from: Option<u32>,
    /// More new messages wait than one poll fetches: poll again soon.
    pub more: bool,
}

mod message;
pub use message::{Attachment, MailMessage, parse_message, to_item};

/// The socket under the IMAP client: plain or TLS, and never more than its read budget.
struct Wire {
    transport: Transport,
    read_left: u64,
}

enum Transport {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl fmt::Debug for Wire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.transport {
            Transport::Plain(_) => "plain",
            Transport::Tls(_) => "tls",
        };
        f.debug_struct("Wire").field("transport", &kind).field("read_left", &self.read_left).finish()
    }
}

impl AsyncRead for Wire {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> TaskPoll<io::Result<()>> {
        let this = self.get_mut();
        if this.read_left == 0 {
            return TaskPoll::Ready(Err(io::Error::other(format!(
                "the server sent more than {} MiB at once",
                MAX_READ_BYTES >> 20
            ))));
        }
        let before = buf.filled().len();
        let polled = match &mut this.transport {
            Transport::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        };
        let read = (buf.filled().len() - before) as u64;
        this.read_left = this.read_left.saturating_sub(read);
        polled
    }
}

impl AsyncWrite for Wire {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> TaskPoll<io::Result<usize>> {
        match &mut self.get_mut().transport {
            Transport::Plain(s) => Pin::new(s).poll_write(cx, data),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> TaskPoll<io::Result<()>> {
        match &mut self.get_mut().transport {
            Transport::Plain(s) => Pin::new(s).poll_flush(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> TaskPoll<io::Result<()>> {
        match &mut self.get_mut().transport {
            Transport::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Whether something changed while waiting ([`MailSession::wait_for_change`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The server said something about the mailbox (a new message, an expunge): poll now.
    Changed,
    /// The wait ran out with nothing said.
    Quiet,
}

/// A logged-in connection, kept between polls by a poller that uses IDLE.
pub struct MailSession {
    session: Option<Session<Wire>>,
    settings: ImapSettings,
    password: Password,
    idle: bool,
}

impl fmt::Debug for MailSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MailSession")
            .field("server", &self.settings.server())
            .field("user", &self.settings.username)
            .field("idle", &self.idle)
            .finish()
    }
}

/// One poll on a connection of its own, closed after: for `every` polling and `sources poll`.
pub async fn poll_once(
    settings: &ImapSettings,
    password: &Password,
    cursor: Option<Cursor>,
    backfill: bool,
) -> Result<MailPoll, ImapError> {
    let mut session = MailSession::connect(settings, password).await?;
    let polled = session.poll(cursor, backfill).await;
    session.logout().await;
    polled
}

impl MailSession {
    /// Connects, logs in and learns whether the server offers IDLE.
    pub async fn connect(settings: &ImapSettings, password: &Password) -> Result<MailSession, ImapError> {
        settings.check()?;
        let server = settings.server();
        let timeout_err = |what: &str| ImapError::Timeout { server: server.clone(), what: what.to_owned() };
        let tcp =
            tokio::time::timeout(IO_TIMEOUT, TcpStream::connect((settings.host.as_str(), settings.port())))
                .await
                .map_err(|_| timeout_err("connect"))?
                .map_err(|e| ImapError::Connect { server: server.clone(), reason: e.to_string() })?;
        if settings.tls == Tls::None {
            // The name was loopback; so must be where it led (a hosts file can say otherwise).
            let peer = tcp
                .peer_addr()
                .map_err(|e| ImapError::Connect { server: server.clone(), reason: e.to_string() })?;
            if !peer.ip().is_loopback() {
                return Err(ImapError::Config(format!(
                    "`tls = \"none\"`: {} resolved to {}, which is not a loopback address",
                    settings.host,
                    peer.ip()
                )));
            }
        }
        let _ = tcp.set_nodelay(true);
        let wire = match settings.tls {
            Tls::Implicit => tls_wire(settings, tcp).await?,
            Tls::Starttls | Tls::None => Wire { transport: Transport::Plain(tcp), read_left: MAX_READ_BYTES },
        };
        let mut client = Client::new(wire);
        greeting(&mut client, &server).await?;
        if settings.tls == Tls::Starttls {
            tokio::time::timeout(IO_TIMEOUT, client.run_command_and_check_ok("STARTTLS", None))
                .await
                .map_err(|_| timeout_err("STARTTLS"))?
                .map_err(|e| ImapError::Tls {
                    server: server.clone(),
                    reason: format!("the server refused STARTTLS: {}", reason_with(password, &e)),
                })?;
            // Whatever the server sent after its OK is dropped with the client's buffer: only
            // what comes through TLS counts (the STARTTLS injection attack).
            let Wire { transport, .. } = client.into_inner();
            let Transport::Plain(tcp) = transport else {
                return Err(ImapError::Protocol { server, reason: "STARTTLS over TLS".to_owned() });
            };
            client = Client::new(tls_wire(settings, tcp).await?);
        }
        let mut session = tokio::time::timeout(IO_TIMEOUT, client.login(&settings.username, &password.0))
            .await
            .map_err(|_| timeout_err("LOGIN"))?
            .map_err(|(e, _)| ImapError::Login {
                server: server.clone(),
                user: settings.username.clone(),
                reason: reason_with(password, &e),
            })?;
        let capabilities = tokio::time::timeout(IO_TIMEOUT, session.capabilities())
            .await
            .map_err(|_| timeout_err("CAPABILITY"))?
            .map_err(|e| ImapError::Protocol { server: server.clone(), reason: reason_with(password, &e) })?;
        let idle = capabilities.has_str("IDLE");
        tracing::debug!(server = %server, user = %settings.username, idle, "connected to imap server");
        Ok(MailSession {
            session: Some(session),
            settings: settings.clone(),
            password: password.clone(),
            idle,
        })
    }

    /// Whether [`MailSession::wait_for_change`] can wait on the server (CAPABILITY IDLE); else
    /// the poller polls every `every`.
    pub fn supports_idle(&self) -> bool {
        self.idle
    }

    fn server(&self) -> String {
        self.settings.server()
    }

    fn session(&mut self) -> Result<&mut Session<Wire>, ImapError> {
        let server = self.server();
        self.session
            .as_mut()
            .ok_or(ImapError::Protocol { server, reason: "the connection was lost".to_owned() })
    }

    fn protocol(&self, e: &async_imap::error::Error) -> ImapError {
        ImapError::Protocol { server: self.server(), reason: reason_with(&self.password, e) }
    }

    fn timeout(&self, what: &str) -> ImapError {
        ImapError::Timeout { server: self.server(), what: what.to_owned() }
    }

    /// The messages above `cursor`, and the cursor to save. No cursor (a first poll), or one of
    /// another UIDVALIDITY: what exists is recorded as seen, and returned only with `backfill`.
    /// After an error the connection is given up (a timed-out command may still answer):
    /// connect again.
    pub async fn poll(&mut self, cursor: Option<Cursor>, backfill: bool) -> Result<MailPoll, ImapError> {
        let polled = self.poll_on(cursor, backfill).await;
        if polled.is_err() {
            self.session = None;
        }
        polled
    }

    async fn poll_on(&mut self, cursor: Option<Cursor>, backfill: bool) -> Result<MailPoll, ImapError> {
        let mailbox_name = self.settings.mailbox.clone();
        let session = self.session()?;
        session.get_mut().read_left = MAX_READ_BYTES;
        // EXAMINE every poll: read-only, and fresh UIDVALIDITY and UIDNEXT on a kept connection.
        let examined = tokio::time::timeout(IO_TIMEOUT, session.examine(&mailbox_name)).await;
        let mailbox = match examined {
            Err(_) => return Err(self.timeout("EXAMINE")),
            Ok(Err(e)) => {
                return Err(ImapError::Mailbox {
                    server: self.server(),
                    user: self.settings.username.clone(),
                    mailbox: mailbox_name,
                    reason: reason_with(&self.password, &e),
                });
            }
            Ok(Ok(m)) => m,
        };
        let Some(validity) = mailbox.uid_validity else {
            return Err(ImapError::Protocol {
                server: self.server(),
                reason: format!("no UIDVALIDITY for the mailbox {mailbox_name:?}"),
            });
        };
        let validity_changed_from = cursor.filter(|c| c.uid_validity != validity).map(|c| c.uid_validity);
        if let Some(old) = validity_changed_from {
            tracing::info!(
                server = %self.server(),
                mailbox = %mailbox_name,
                old,
                new = validity,
                "recorded a recreated imap mailbox (uidvalidity changed): its messages count as seen"
            );
        }
        let after = match cursor.filter(|c| c.uid_validity == validity) {
            Some(c) => c.last_uid,
            None if backfill => 0,
            None => {
                let top = self.highest_uid(mailbox.uid_next, mailbox.exists).await?;
                return Ok(MailPoll {
                    cursor: Cursor { uid_validity: validity, last_uid: top },
                    messages: Vec::new(),
                    validity_changed_from,
                    more: false,
                });
            }
        };
        let unchanged = MailPoll {
            cursor: Cursor { uid_validity: validity, last_uid: after },
            messages: Vec::new(),
            validity_changed_from,
            more: false,
        };
        if mailbox.exists == 0 || mailbox.uid_next.is_some_and(|next| next <= after.saturating_add(1)) {
            return Ok(unchanged);
        }
        let mut uids = self.uids_above(after).await?;
        let more = uids.len() > MAX_MESSAGES_PER_POLL;
        uids.truncate(MAX_MESSAGES_PER_POLL);
        let mut messages = Vec::with_capacity(uids.len());
        let mut last = after;
        for uid in uids {
            if let Some(message) = self.fetch(validity, uid).await? {
                messages.push(message);
            }
            last = uid;
        }
        Ok(MailPoll {
            cursor: Cursor { uid_validity: validity, last_uid: last },
            messages,
            validity_changed_from,
            more,
        })
    }

    /// The highest UID in the mailbox (0 when empty): UIDNEXT − 1 when the server tells.
    async fn highest_uid(&mut self, uid_next: Option<u32>, exists: u32) -> Result<u32, ImapError> {
        if exists == 0 {
            return Ok(uid_next.map_or(0, |n| n.saturating_sub(1)));
        }
        if let Some(next) = uid_next {
            return Ok(next.saturating_sub(1));
        }
        Ok(self.uids_above(0).await?.last().copied().unwrap_or(0))
    }

    /// The UIDs above `after`, ascending.
    async fn uids_above(&mut self, after: u32) -> Result<Vec<u32>, ImapError> {
        let query = format!("UID {}:*", after.saturating_add(1));
        let session = self.session()?;
        let found = tokio::time::timeout(IO_TIMEOUT, session.uid_search(&query)).await;
        let found = match found {
            Err(_) => return Err(self.timeout("UID SEARCH")),
            Ok(Err(e)) => return Err(self.protocol(&e)),
            Ok(Ok(found)) => found,
        };
        // `n:*` always includes the highest UID, even when it is below n.
        let mut uids: Vec<u32> = found.into_iter().filter(|&uid| uid > after).collect();
        uids.sort_unstable();
        Ok(uids)
    }

    /// One message by UID, its first [`MAX_FETCH_BYTES`]; `None` when it was expunged meanwhile.
    async fn fetch(&mut self, validity: u32, uid: u32) -> Result<Option<MailMessage>, ImapError> {
        let mailbox = self.settings.mailbox.clone();
        let query = format!("(UID RFC822.SIZE INTERNALDATE BODY.PEEK[]<0.{MAX_FETCH_BYTES}>)");
        let session = self.session()?;
        let fetched = tokio::time::timeout(IO_TIMEOUT, async {
            let stream = session.uid_fetch(uid.to_string(), &query).await?;
            stream.try_collect::<Vec<_>>().await
        })
        .await;
        let fetched = match fetched {
            Err(_) => return Err(self.timeout("UID FETCH")),
            Ok(Err(e)) => return Err(self.protocol(&e)),
            Ok(Ok(f)) => f,
        };
        let Some(f) = fetched.iter().find(|f| f.uid == Some(uid)) else { return Ok(None) };
        let arrived = f.internal_date().map(|d| d.with_timezone(&Utc));
        let (raw, size) = (f.body().unwrap_or_default().to_vec(), f.size);
        // Off the runtime's workers: a hostile megabyte (140,000 addresses, 40,000 parts) took
        // up to a second of CPU to parse in an optimised fuzzing build. A panic stays a panic,
        // which the poller reports as this source's error.
        let parsed =
            tokio::task::spawn_blocking(move || parse_message(&raw, &mailbox, validity, uid, size, arrived))
                .await;
        match parsed {
            Ok(message) => Ok(Some(message)),
            Err(e) => match e.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(e) => Err(ImapError::Protocol {
                    server: self.server(),
                    reason: format!("the message was not read: {e}"),
                }),
            },
        }
    }

    /// Waits on the server (IDLE) until it reports a change to the mailbox or `timeout` passes.
    /// The mailbox must have been polled on this session (IDLE watches the examined one). On a
    /// server without IDLE this returns an error at once: the poller polls instead. Keep
    /// `timeout` under 29 minutes (RFC 2177: servers may drop a client idle longer). After an
    /// error the connection is given up, as after a failed poll.
    pub async fn wait_for_change(&mut self, timeout: Duration) -> Result<Change, ImapError> {
        if !self.idle {
            return Err(ImapError::Protocol {
                server: self.server(),
                reason: "the server does not offer IDLE".to_owned(),
            });
        }
        let server = self.server();
        let Some(mut session) = self.session.take() else {
            return Err(ImapError::Protocol { server, reason: "the connection was lost".to_owned() });
        };
        session.get_mut().read_left = MAX_READ_BYTES;
        let mut handle = session.idle();
        match tokio::time::timeout(IO_TIMEOUT, handle.init()).await {
            Err(_) => return Err(self.timeout("IDLE")),
            Ok(Err(e)) => return Err(self.protocol(&e)),
            Ok(Ok(())) => {}
        }
        let outcome = {
            let (wait, _stop) = handle.wait_with_timeout(timeout);
            // The crate's timeout restarts at each keep-alive; ours bounds the whole wait.
            tokio::time::timeout(timeout.saturating_add(IO_TIMEOUT), wait).await
        };
        let change = match outcome {
            Err(_) | Ok(Ok(IdleResponse::Timeout | IdleResponse::ManualInterrupt)) => Change::Quiet,
            Ok(Ok(IdleResponse::NewData(_))) => Change::Changed,
            Ok(Err(e)) => return Err(self.protocol(&e)),
        };
        match tokio::time::timeout(IO_TIMEOUT, handle.done()).await {
            Err(_) => Err(self.timeout("DONE")),
            Ok(Err(e)) => Err(self.protocol(&e)),
            Ok(Ok(session)) => {
                self.session = Some(session);
                Ok(change)
            }
        }
    }

    /// LOGOUT, best effort: the poll's outcome is already known.
    pub async fn logout(mut self) {
        if let Some(mut session) = self.session.take() {
            let _ = tokio::time::timeout(IO_TIMEOUT, session.logout()).await;
        }
    }
}

/// The server's greeting: `* OK` (or PREAUTH) goes on, `* BYE` or nothing is an error.
async fn greeting(client: &mut Client<Wire>, server: &str) -> Result<(), ImapError> {
    let protocol = |reason: String| ImapError::Protocol { server: server.to_owned(), reason };
    let read = tokio::time::timeout(IO_TIMEOUT, client.read_response())
        .await
        .map_err(|_| ImapError::Timeout { server: server.to_owned(), what: "greeting".to_owned() })?
        .map_err(|e| protocol(format!("no greeting: {e}")))?;
    let Some(response) = read else {
        return Err(protocol("the server closed the connection before greeting".to_owned()));
    };
    match response.parsed() {
        Response::Data { status: Status::Ok | Status::PreAuth, .. } => Ok(()),
        Response::Data { status, outcome, .. } => Err(protocol(format!(
            "the server greeted with {status:?}: {}",
            one_line(outcome.information.as_deref().unwrap_or(""), 200)
        ))),
        _ => Err(protocol("the server's first line is not a greeting".to_owned())),
    }
}

async fn tls_wire(settings: &ImapSettings, tcp: TcpStream) -> Result<Wire, ImapError> {
    let server = settings.server();
    let tls_err = |reason: String| ImapError::Tls { server: server.clone(), reason };
    let host = settings.host.trim_start_matches('[').trim_end_matches(']').to_owned();
    let name = rustls::pki_types::ServerName::try_from(host).map_err(|e| tls_err(e.to_string()))?;
    let connector = TlsConnector::from(tls_config().map_err(&tls_err)?);
    let stream = tokio::time::timeout(IO_TIMEOUT, connector.connect(name, tcp))
        .await
        .map_err(|_| ImapError::Timeout { server: server.clone(), what: "TLS handshake".to_owned() })?
        .map_err(|e| tls_err(e.to_string()))?;
    Ok(Wire { transport: Transport::Tls(Box::new(stream)), read_left: MAX_READ_BYTES })
}

/// rustls on ring with the Mozilla roots webpki-roots ships (what reqwest uses too).
fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
    Ok(Arc::new(config))
}

/// A server's NO/BAD text or the transport's error, one line: withheld whole when it repeats
/// the password in any spelling, checked before it is cut (a cut could leave half of it).
fn reason_with(password: &Password, e: &async_imap::error::Error) -> String {
    use async_imap::error::Error;
    let text = match e {
        Error::No(text) | Error::Bad(text) => text.clone(),
        other => other.to_string(),
    };
    one_line(&password.server_text(&text), 300)
}

#[cfg(test)]
#[path = "imap_tests.rs"]
mod tests;
