//! The IMAP source (issue 24, `kind = "imap"`) against a real Dovecot on 127.0.0.1: each test
//! starts a throwaway instance (its own config, user, maildir and free port in a temporary
//! folder), delivers mail with IMAP APPEND over a connection of its own, and polls through
//! `livenote::sources::imap`: the first poll records (backfill false) or returns (backfill true)
//! what exists; a new message is one item with its fields; a recreated mailbox (UIDVALIDITY
//! change) starts over without queueing; a bad password is a clear error without the password;
//! attachments are named, never sent; IDLE wakes on a delivery; a poll is bounded.
//!
//! Dovecot comes from tests/e2e/dovecot/install.sh, whose output `LIVENOTE_DOVECOT` names
//! (scripts/test.sh exports it), and must run as root (it drops to its own users). Without
//! either these tests say so and pass, except on CI (`CI=true`), where they fail.
#![cfg(unix)]
// A skipped test says so on stdout (shown with --nocapture).
#![allow(clippy::print_stdout)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::TryStreamExt;

mod common;

use livenote::sources::imap::{
    self, Change, Cursor, ImapError, ImapSettings, MAX_MESSAGES_PER_POLL, MailSession, Password, Tls,
};

const USER: &str = "alice";
const PASSWORD: &str = "correct-horse-battery";

/// The `dovecot` program of tests/e2e/dovecot/install.sh, or `None` (after saying why) when the
/// test must be skipped.
fn dovecot_bin() -> Option<PathBuf> {
    let on_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let skip = |why: &str| {
        assert!(
            !on_ci,
            "{why}: run `bash tests/e2e/dovecot/install.sh` as root and export its output as LIVENOTE_DOVECOT"
        );
        println!(
            "skipped: {why} (export LIVENOTE_DOVECOT=\"$(bash tests/e2e/dovecot/install.sh)\", as root)"
        );
        None
    };
    let Some(bin) = std::env::var_os("LIVENOTE_DOVECOT").filter(|v| !v.is_empty()) else {
        return skip("LIVENOTE_DOVECOT is not set");
    };
    if !nix::unistd::Uid::effective().is_root() {
        return skip("Dovecot's test instance needs root");
    }
    let bin = PathBuf::from(bin);
    assert!(bin.exists(), "LIVENOTE_DOVECOT={} does not exist", bin.display());
    Some(bin)
}

/// A Dovecot serving one user, `alice`, on 127.0.0.1; stopped when dropped.
struct Dovecot {
    dir: tempfile::TempDir,
    port: u16,
    /// Implicit TLS, with [`Dovecot::start_tls`] only.
    imaps_port: Option<u16>,
}

impl Dovecot {
    fn start(bin: &Path) -> Dovecot {
        Dovecot::start_with(bin, false)
    }

    /// With TLS: STARTTLS on `port`, implicit TLS on `imaps_port`, a self-signed certificate
    /// (made by openssl, which dovecot-core depends on) that no client trusts.
    fn start_tls(bin: &Path) -> Dovecot {
        Dovecot::start_with(bin, true)
    }

    fn start_with(bin: &Path, tls: bool) -> Dovecot {
        // Under /tmp: Dovecot's sockets live in base_dir, and socket paths are short.
        let dir =
            tempfile::Builder::new().prefix("dovecot").tempdir_in("/tmp").unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap_or_else(|e| panic!("{e}"));
        for sub in ["run", "state", "mail/alice"] {
            std::fs::create_dir_all(d.join(sub)).unwrap_or_else(|e| panic!("{e}"));
        }
        // Dovecot refuses mail users with UID 0: the mail belongs to nobody.
        let nobody =
            nix::unistd::User::from_name("nobody").ok().flatten().unwrap_or_else(|| panic!("no user nobody"));
        for p in [d.join("mail"), d.join("mail/alice")] {
            std::os::unix::fs::chown(&p, Some(nobody.uid.as_raw()), Some(nobody.gid.as_raw()))
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        }
        let port = free_port();
        let d_s = d.display();
        let (ssl, imaps_port) = if tls {
            let made = std::process::Command::new("openssl")
                .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"])
                .args(["-subj", "/CN=localhost", "-days", "2", "-keyout"])
                .arg(d.join("key.pem"))
                .arg("-out")
                .arg(d.join("cert.pem"))
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap_or_else(|e| panic!("openssl: {e}"));
            assert!(made.status.success(), "openssl: {}", String::from_utf8_lossy(&made.stderr));
            let imaps = free_port();
            (format!("yes\nssl_cert = <{d_s}/cert.pem\nssl_key = <{d_s}/key.pem"), Some(imaps))
        } else {
            ("no".to_owned(), None)
        };
        let imaps = imaps_port
            .map_or("    port = 0".to_owned(), |p| format!("    address = 127.0.0.1\n    port = {p}"));
        let config = format!(
            "base_dir = {d_s}/run\nstate_dir = {d_s}/state\nprotocols = imap\nlisten = 127.0.0.1\nssl = {ssl}\n\
             disable_plaintext_auth = no\nauth_mechanisms = plain login\ndefault_internal_user = dovecot\n\
             default_internal_group = dovecot\ndefault_login_user = dovenull\n\
             mail_location = maildir:{d_s}/mail/%u/Maildir\nlog_path = {d_s}/dovecot.log\n\
             service imap-login {{\n  inet_listener imap {{\n    address = 127.0.0.1\n    port = {port}\n  }}\n  \
             inet_listener imaps {{\n{imaps}\n  }}\n}}\n\
             passdb {{\n  driver = passwd-file\n  args = scheme=PLAIN {d_s}/users\n}}\n\
             userdb {{\n  driver = passwd-file\n  args = {d_s}/users\n}}\n"
        );
        std::fs::write(d.join("dovecot.conf"), config).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            d.join("users"),
            format!("{USER}:{{PLAIN}}{PASSWORD}:{}:{}::{d_s}/mail/alice::\n", nobody.uid, nobody.gid),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // It daemonizes: the status is the parent's, nothing is read from its pipes.
        let status = std::process::Command::new(bin)
            .arg("-c")
            .arg(d.join("dovecot.conf"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let dovecot = Dovecot { dir, port, imaps_port };
        assert!(status.success(), "dovecot exited with {status}: {}", dovecot.log());
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "dovecot never listened on {port}: {}", dovecot.log());
            std::thread::sleep(Duration::from_millis(10));
        }
        dovecot
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("dovecot.log")).unwrap_or_default()
    }

    fn settings(&self, mailbox: &str) -> ImapSettings {
        ImapSettings {
            host: "127.0.0.1".to_owned(),
            port: Some(self.port),
            tls: Tls::None,
            username: USER.to_owned(),
            password_env: "LIVENOTE_TEST_IMAP_PASSWORD".to_owned(),
            mailbox: mailbox.to_owned(),
        }
    }

    /// A connection of the test's own (not the code under test) for APPEND, CREATE, DELETE.
    async fn admin(&self) -> async_imap::Session<tokio::net::TcpStream> {
        let tcp =
            tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.unwrap_or_else(|e| panic!("{e}"));
        let mut client = async_imap::Client::new(tcp);
        let greeting = client.read_response().await.unwrap_or_else(|e| panic!("{e}"));
        assert!(greeting.is_some(), "no greeting");
        client.login(USER, PASSWORD).await.unwrap_or_else(|(e, _)| panic!("admin login: {e}"))
    }

    async fn deliver(&self, mailbox: &str, messages: &[String]) {
        let mut admin = self.admin().await;
        for m in messages {
            admin.append(mailbox, None, None, m.as_bytes()).await.unwrap_or_else(|e| panic!("APPEND: {e}"));
        }
        admin.logout().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

impl Drop for Dovecot {
    fn drop(&mut self) {
        let pid = std::fs::read_to_string(self.dir.path().join("run/master.pid")).unwrap_or_default();
        if let Ok(pid) = pid.trim().parse::<i32>() {
            let pid = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            // Its folder goes with the TempDir: let the master end first.
            let deadline = Instant::now() + Duration::from_secs(10);
            while nix::sys::signal::kill(pid, None).is_ok() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port()
}

fn password() -> Password {
    Password::new(PASSWORD)
}

fn mail(n: u32, subject: &str) -> String {
    format!(
        "From: Bob Sender <bob@example.com>\r\nTo: alice@example.com\r\nSubject: {subject}\r\n\
         Date: Tue, 3 Nov 2026 09:{n:02}:00 +0100\r\nMessage-ID: <m{n}@example.com>\r\n\r\nBody number {n}.\r\n"
    )
}

async fn poll(d: &Dovecot, mailbox: &str, cursor: Option<Cursor>, backfill: bool) -> imap::MailPoll {
    imap::poll_once(&d.settings(mailbox), &password(), cursor, backfill)
        .await
        .unwrap_or_else(|e| panic!("poll: {e}\n{}", d.log()))
}

fn subjects(p: &imap::MailPoll) -> Vec<&str> {
    p.messages.iter().map(|m| m.subject.as_str()).collect()
}

#[tokio::test]
async fn first_poll_records_then_each_new_message_is_one_item_once() {
    let Some(bin) = dovecot_bin() else { return };
    let d = Dovecot::start(&bin);
    d.deliver("INBOX", &[mail(1, "old one"), mail(2, "old two")]).await;

    let first = poll(&d, "INBOX", None, false).await;
    assert!(first.messages.is_empty(), "backfill false queues nothing: {:?}", subjects(&first));
    assert_eq!(first.cursor.last_uid, 2);
    assert_eq!(first.validity_changed_from, None);
    let backfilled = poll(&d, "INBOX", None, true).await;
    assert_eq!(subjects(&backfilled), ["old one", "old two"]);
    assert_eq!(backfilled.cursor, first.cursor);

    // Nothing new: nothing, and the cursor stays.
    let again = poll(&d, "INBOX", Some(first.cursor), false).await;
    assert!(again.messages.is_empty());
    assert_eq!(again.cursor, first.cursor);

    d.deliver("INBOX", &[mail(3, "Q3 thread: numbers are in")]).await;
    let new = poll(&d, "INBOX", Some(first.cursor), false).await;
    assert_eq!(new.messages.len(), 1, "{:?}", subjects(&new));
    let m = &new.messages[0];
    let (id, _version, summary, payload) = imap::to_item(m);
    assert_eq!(id, format!("{}:3", first.cursor.uid_validity));
    assert_eq!(summary, "Bob Sender <bob@example.com>: Q3 thread: numbers are in");
    assert_eq!(payload["from"], serde_json::json!(["Bob Sender <bob@example.com>"]));
    assert_eq!(payload["to"], serde_json::json!(["alice@example.com"]));
    assert_eq!(payload["subject"], "Q3 thread: numbers are in");
    assert_eq!(payload["date"], "2026-11-03T08:03:00Z");
    assert_eq!(payload["text"], "Body number 3.");
    assert_eq!(payload["messageId"], "m3@example.com");
    assert_eq!(payload["attachments"], serde_json::json!([]));
    assert_eq!(new.cursor, Cursor { uid_validity: first.cursor.uid_validity, last_uid: 3 });

    // The saved cursor never gives it again.
    assert!(poll(&d, "INBOX", Some(new.cursor), false).await.messages.is_empty());
}

#[tokio::test]
async fn a_multipart_message_names_its_attachment_without_sending_it() {
    let Some(bin) = dovecot_bin() else { return };
    let d = Dovecot::start(&bin);
    let start = poll(&d, "INBOX", None, false).await;
    let pdf_base64 = "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoK\r\n".repeat(200);
    let raw = format!(
        "From: alice@example.com\r\nTo: team@example.com\r\nSubject: report\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n\
         Content-Type: multipart/alternative; boundary=\"b2\"\r\n\r\n--b2\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\nSee the attached report.\r\n--b2\r\n\
         Content-Type: text/html; charset=utf-8\r\n\r\n<p>See the <b>attached</b> report.</p>\r\n--b2--\r\n--b1\r\n\
         Content-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"Q3 report.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{pdf_base64}--b1--\r\n"
    );
    d.deliver("INBOX", &[raw]).await;
    let p = poll(&d, "INBOX", Some(start.cursor), false).await;
    assert_eq!(p.messages.len(), 1);
    let (_, _, _, payload) = imap::to_item(&p.messages[0]);
    assert_eq!(payload["text"], "See the attached report.");
    assert_eq!(
        payload["attachments"],
        serde_json::json!([{ "filename": "Q3 report.pdf", "contentType": "application/pdf", "size": 27 * 200 }])
    );
    assert!(!payload.to_string().contains("JVBER"), "the attachment's content is never sent");
}

#[tokio::test]
async fn a_recreated_mailbox_starts_over_without_queueing() {
    let Some(bin) = dovecot_bin() else { return };
    let d = Dovecot::start(&bin);
    let mut admin = d.admin().await;
    admin.create("Work").await.unwrap_or_else(|e| panic!("{e}"));
    admin.logout().await.unwrap_or_else(|e| panic!("{e}"));
    d.deliver("Work", &[mail(1, "before")]).await;
    let before = poll(&d, "Work", None, false).await;
    assert_eq!(before.cursor.last_uid, 1);

    let mut admin = d.admin().await;
    admin.delete("Work").await.unwrap_or_else(|e| panic!("{e}"));
    admin.create("Work").await.unwrap_or_else(|e| panic!("{e}"));
    admin.logout().await.unwrap_or_else(|e| panic!("{e}"));
    d.deliver("Work", &[mail(2, "recreated one"), mail(3, "recreated two")]).await;

    let after = poll(&d, "Work", Some(before.cursor), false).await;
    assert_eq!(after.validity_changed_from, Some(before.cursor.uid_validity));
    assert_ne!(after.cursor.uid_validity, before.cursor.uid_validity);
    assert!(after.messages.is_empty(), "a recreated mailbox is a first poll: {:?}", subjects(&after));
    assert_eq!(after.cursor.last_uid, 2);
    // With backfill, what the recreated mailbox holds is returned, under the new validity.
    let backfilled = poll(&d, "Work", Some(before.cursor), true).await;
    assert_eq!(subjects(&backfilled), ["recreated one", "recreated two"]);
    assert_eq!(backfilled.messages[0].id(), format!("{}:1", after.cursor.uid_validity));

    d.deliver("Work", &[mail(4, "new after")]).await;
    let next = poll(&d, "Work", Some(after.cursor), false).await;
    assert_eq!(next.validity_changed_from, None);
    assert_eq!(subjects(&next), ["new after"]);
    assert_eq!(next.messages[0].id(), format!("{}:3", after.cursor.uid_validity));
}

#[tokio::test]
async fn a_bad_password_names_user_and_server_never_the_password() {
    let Some(bin) = dovecot_bin() else { return };
    let d = Dovecot::start(&bin);
    let wrong = "wrong-horse-staple";
    let err = imap::poll_once(&d.settings("INBOX"), &Password::new(wrong), None, false).await.unwrap_err();
    assert!(matches!(err, ImapError::Login { .. }), "{err:?}");
    let shown = err.to_string();
    assert!(shown.contains("alice") && shown.contains(&format!("127.0.0.1:{}", d.port)), "{shown}");
    assert!(shown.to_ascii_lowercase().contains("authentication failed"), "{shown}");
    assert!(!shown.contains(wrong) && !format!("{err:?}").contains(wrong), "{shown}");

    // A mailbox that does not exist is named too.
    let err = imap::poll_once(&d.settings("Nope"), &password(), None, false).await.unwrap_err();
    assert!(matches!(err, ImapError::Mailbox { .. }), "{err:?}");
    assert!(err.to_string().contains("\"Nope\""), "{err}");
}

#[tokio::test]
async fn starttls_is_required_before_the_password_is_sent() {
    let Some(bin) = dovecot_bin() else { return };
    // This Dovecot has no TLS: a source asking for STARTTLS stops before LOGIN.
    let d = Dovecot::start(&bin);
    let mut s = d.settings("INBOX");
    s.tls = Tls::Starttls;
    let err = imap::poll_once(&s, &password(), None, false).await.unwrap_err();
    assert!(matches!(err, ImapError::Tls { .. }), "{err:?}");
    assert!(err.to_string().contains("refused STARTTLS"), "{err}");
    assert!(!d.log().contains("Login: user=<alice>"), "no login happened: {}", d.log());
}

#[tokio::test]
async fn idle_wakes_on_a_delivery() {
    let Some(bin) = dovecot_bin() else { return };
    let d = Dovecot::start(&bin);
    let mut session =
        MailSession::connect(&d.settings("INBOX"), &password()).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(session.supports_idle());
    let first = session.poll(None, false).await.unwrap_or_else(|e| panic!("{e}"));
    let deliver = async {
        // The delivery comes while the session waits.
        tokio::task::yield_now().await;
        d.deliver("INBOX", &[mail(1, "pushed")]).await;
    };
    let (change, ()) = tokio::join!(session.wait_for_change(Duration::from_secs(60)), deliver);
    assert_eq!(change, Ok(Change::Changed));
    // The same connection polls again after the wait.
    let p = session.poll(Some(first.cursor), false).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(subjects(&p), ["pushed"]);
    session.logout().await;
}

#[tokio::test]
async fn a_poll_fetches_a_bounded_count_and_the_next_one_goes_on() {
    let Some(bin) = dovecot_bin() else { return };
    let d = Dovecot::start(&bin);
    let total = MAX_MESSAGES_PER_POLL as u32 + 5;
    let messages: Vec<String> = (1..=total).map(|n| mail(n % 60, &format!("n{n}"))).collect();
    d.deliver("INBOX", &messages).await;
    let first = poll(&d, "INBOX", None, true).await;
    assert_eq!(first.messages.len(), MAX_MESSAGES_PER_POLL);
    assert!(first.more);
    assert_eq!(first.cursor.last_uid, MAX_MESSAGES_PER_POLL as u32);
    let rest = poll(&d, "INBOX", Some(first.cursor), false).await;
    assert_eq!(subjects(&rest), ["n201", "n202", "n203", "n204", "n205"]);
    assert!(!rest.more);
}

#[tokio::test]
async fn tls_checks_the_certificate_before_the_login() {
    let Some(bin) = dovecot_bin() else { return };
    // A self-signed certificate: both handshakes reach it and stop there, before LOGIN.
    let d = Dovecot::start_tls(&bin);
    let mut implicit = d.settings("INBOX");
    implicit.tls = Tls::Implicit;
    implicit.port = d.imaps_port;
    let mut starttls = d.settings("INBOX");
    starttls.tls = Tls::Starttls;
    for s in [implicit, starttls] {
        let err = imap::poll_once(&s, &password(), None, false).await.unwrap_err();
        assert!(matches!(err, ImapError::Tls { .. }), "{:?}: {err:?}", s.tls);
        let shown = err.to_string();
        assert!(shown.contains("certificate") && !shown.contains("refused STARTTLS"), "{:?}: {shown}", s.tls);
    }
    assert!(!d.log().contains("Login: user=<alice>"), "no login happened: {}", d.log());
}

/// `UID n:*` always answers the highest UID, even below n: when a message arrives and is
/// expunged between two polls (a filter moved it), the newest one already seen must not come
/// back.
#[tokio::test]
async fn a_message_gone_between_polls_brings_no_older_one_back() {
    let Some(bin) = dovecot_bin() else { return };
    let d = Dovecot::start(&bin);
    d.deliver("INBOX", &[mail(1, "one"), mail(2, "two")]).await;
    let seen = poll(&d, "INBOX", None, true).await;
    assert_eq!(seen.cursor.last_uid, 2);
    d.deliver("INBOX", &[mail(3, "moved away")]).await;
    let mut admin = d.admin().await;
    admin.select("INBOX").await.unwrap_or_else(|e| panic!("{e}"));
    {
        let stored = admin.uid_store("3", "+FLAGS (\\Deleted)").await.unwrap_or_else(|e| panic!("{e}"));
        let _: Vec<_> = stored.try_collect().await.unwrap_or_else(|e| panic!("{e}"));
    }
    {
        let expunged = admin.expunge().await.unwrap_or_else(|e| panic!("{e}"));
        let _: Vec<_> = expunged.try_collect().await.unwrap_or_else(|e| panic!("{e}"));
    }
    admin.logout().await.unwrap_or_else(|e| panic!("{e}"));
    let after = poll(&d, "INBOX", Some(seen.cursor), false).await;
    assert!(after.messages.is_empty(), "{:?}", subjects(&after));
    assert_eq!(after.cursor, seen.cursor);
    d.deliver("INBOX", &[mail(4, "four")]).await;
    assert_eq!(subjects(&poll(&d, "INBOX", Some(seen.cursor), false).await), ["four"]);
}

/// A folder with a mailbox source on `d` (a command provider that echoes its context), a note
/// about the Q3 thread and one about the garden, its clock at 2026-11-03T09:00:00Z.
fn mail_workspace(d: &Dovecot) -> common::Workspace {
    let echo = r#"printf '%s\n' "trigger: $LIVENOTE_TRIGGER" "$LIVENOTE_CONTEXT""#;
    let config = format!(
        "{}\n[sources.mail]\nkind = \"imap\"\nhost = \"127.0.0.1\"\nport = {}\ntls = \"none\"\nusername = \"alice\"\npassword_env = \"LIVENOTE_TEST_IMAP_PASSWORD\"\nidle_min_gap = \"1s\"\n",
        common::command_config(echo),
        d.port
    );
    let dir = common::tempdir();
    let note = |title: &str, criteria: &str| {
        format!(
            "---\nlive:\n  objective: Keep {title} current\n  triggers:\n    eventMatchCriteria: \"{criteria}\"\n---\n# {title}\n\nold body\n"
        )
    };
    common::write(&dir.path().join("q3.md"), &note("Q3", "mail about the Q3 thread"));
    common::write(&dir.path().join("garden.md"), &note("Garden", "notes about the garden"));
    let ws = common::Workspace::in_dir(dir, &config);
    ws.set_clock("2026-11-03T09:00:00Z");
    ws
}

/// The whole path through the binary: a message delivered to the mailbox becomes one event
/// under `livenote watch`, which the usual routing gives to the note about it, which runs with
/// the message as its context; the note about something else is left alone.
#[test]
fn a_new_message_runs_the_note_it_is_about_under_watch() {
    let Some(bin) = dovecot_bin() else { return };
    let rt =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    let d = Dovecot::start(&bin);
    rt.block_on(d.deliver("INBOX", &[mail(1, "an old one")]));
    let ws = mail_workspace(&d);
    let clock = ws.clock().display().to_string();
    let w = ws.watch_env(&["--clock-file", &clock], &[("LIVENOTE_TEST_IMAP_PASSWORD", PASSWORD)]);
    // The first poll records where the mailbox is (its cursor) and queues nothing.
    common::wait_until("the first poll's cursor", 30, || {
        ws.source_state("mail")
            .and_then(|p| std::fs::read_to_string(p).ok())
            .is_some_and(|t| t.contains("uidValidity"))
    });
    rt.block_on(d.deliver("INBOX", &[mail(2, "Q3 thread: numbers are in")]));
    // `every` (5 minutes for a mailbox) passes: polled, whether or not IDLE said so first.
    ws.set_clock("2026-11-03T09:05:01Z");
    let q3 = ws.root.join("q3.md");
    common::wait_until("the message in the Q3 note", 30, || {
        std::fs::read_to_string(&q3).is_ok_and(|t| t.contains("Q3 thread: numbers are in"))
    });
    let logs = w.stop();
    let text = std::fs::read_to_string(&q3).unwrap_or_default();
    assert!(text.contains("trigger: event"), "{text}\n{logs:#?}");
    assert!(!text.contains("an old one"), "what was there before is never sent:\n{text}");
    let garden = std::fs::read_to_string(ws.root.join("garden.md")).unwrap_or_default();
    assert!(garden.ends_with("old body\n"), "{garden}");
}

/// IDLE: with the clock standing still, `every` never comes, and a delivered message still
/// reaches its note: the kept connection hears of it and asks for a poll. Mail that came
/// while no connection waited (the watcher connecting after the first poll) is found too.
#[test]
fn idle_brings_a_new_message_before_every_comes() {
    let Some(bin) = dovecot_bin() else { return };
    let rt =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    let d = Dovecot::start(&bin);
    let ws = mail_workspace(&d);
    let clock = ws.clock().display().to_string();
    let mut w = ws.watch_env(&["--clock-file", &clock], &[("LIVENOTE_TEST_IMAP_PASSWORD", PASSWORD)]);
    common::wait_until("the first poll's cursor", 30, || {
        ws.source_state("mail")
            .and_then(|p| std::fs::read_to_string(p).ok())
            .is_some_and(|t| t.contains("uidValidity"))
    });
    w.wait_for("source mail: waiting for new mail on 127.0.0.1");
    rt.block_on(d.deliver("INBOX", &[mail(1, "Q3 thread: first numbers")]));
    let q3 = ws.root.join("q3.md");
    common::wait_until("the first message in the Q3 note", 30, || {
        std::fs::read_to_string(&q3).is_ok_and(|t| t.contains("Q3 thread: first numbers"))
    });
    rt.block_on(d.deliver("INBOX", &[mail(2, "Q3 thread: second numbers")]));
    common::wait_until("the second message in the Q3 note", 30, || {
        std::fs::read_to_string(&q3).is_ok_and(|t| t.contains("Q3 thread: second numbers"))
    });
    let logs = w.stop();
    let text = std::fs::read_to_string(&q3).unwrap_or_default();
    // One event per message: the latest run had the second alone as its context.
    assert!(!text.contains("first numbers"), "the latest run's body:\n{text}\n{logs:#?}");
    let garden = std::fs::read_to_string(ws.root.join("garden.md")).unwrap_or_default();
    assert!(garden.ends_with("old body\n"), "{garden}");
    assert!(!logs.iter().any(|l| l.contains("IDLE stopped")), "{logs:#?}");
}

/// Issue 31, the reproduction: a mailbox source in the user's own config, and a trusted clone
/// that ships `.livenote/sources/mail.json` claiming an earlier poll at the mailbox's real
/// UIDVALIDITY with `lastUid: 0`, beside a `.gitignore` that ignores nothing. The shipped
/// cursor is never read: the first poll records where the mailbox is and queues none; the next
/// message alone is queued, and the `.gitignore` is livenote's once livenote writes there.
#[test]
fn a_cursor_a_clone_ships_never_brings_your_mailbox_into_it() {
    let Some(bin) = dovecot_bin() else { return };
    let rt =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    let d = Dovecot::start(&bin);
    let private: Vec<String> = (1..=5).map(|n| mail(n, &format!("private {n}"))).collect();
    rt.block_on(d.deliver("INBOX", &private));
    // What an attacker who knows the mailbox would write.
    let validity = rt.block_on(poll(&d, "INBOX", None, false)).cursor.uid_validity;
    let dir = common::tempdir();
    common::write(&dir.path().join(".livenote/.gitignore"), "# nothing here is ignored\n!*\n");
    let shipped = serde_json::json!({
        "kind": "imap",
        "lastPoll": "2026-11-01T00:00:00Z",
        "lastSuccess": "2026-11-01T00:00:00Z",
        "cursor": {"imap": {"uidValidity": validity, "lastUid": 0}},
        "seen": []
    });
    common::write(&dir.path().join(".livenote/sources/mail.json"), &shipped.to_string());
    let ws = common::Workspace::in_dir(dir, "");
    common::write(
        &ws.data.path().join("config.toml"),
        &format!(
            "[sources.mail]\nkind = \"imap\"\nhost = \"127.0.0.1\"\nport = {}\ntls = \"none\"\nusername = \"alice\"\npassword_env = \"LIVENOTE_TEST_IMAP_PASSWORD\"\n",
            d.port
        ),
    );
    let poll_mail = || {
        let out = ws
            .livenote(&["sources", "poll", "mail"])
            .env("LIVENOTE_TEST_IMAP_PASSWORD", PASSWORD)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), d.log());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let pending = || common::files(&ws.root.join(".livenote/events/pending"));
    // A first poll: where the mailbox is now is recorded, nothing is fetched or queued.
    let out = poll_mail();
    assert_eq!(out, "");
    assert!(pending().is_empty(), "{:?}", pending());
    rt.block_on(d.deliver("INBOX", &[mail(6, "Q3 thread: numbers are in")]));
    let out = poll_mail();
    assert_eq!(out.lines().filter(|l| l.starts_with("queued ")).count(), 1, "{out}");
    assert!(out.contains("Q3 thread: numbers are in") && !out.contains("private"), "{out}");
    assert_eq!(pending().len(), 1);
    let gitignore = std::fs::read_to_string(ws.root.join(".livenote/.gitignore")).unwrap_or_default();
    assert_eq!(gitignore, livenote::workspace::state::GITIGNORE);
    let state = std::fs::read_to_string(ws.root.join(".livenote/sources/mail.json")).unwrap_or_default();
    assert_eq!(state, shipped.to_string(), "the clone's file is neither read nor written");
}
