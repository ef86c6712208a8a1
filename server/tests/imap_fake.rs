//! The IMAP source against a tiny IMAP server written here, on 127.0.0.1, for what Dovecot
//! (tests/imap.rs) cannot be made to do (issue 31): echo the LOGIN line in its refusal, report a
//! change 50 ms after each IDLE, drop the connection at each IDLE. Through the binary: the
//! password never reaches the log, `livenote sources poll` or the source's state file in
//! any spelling; IDLE asks for at most one poll per `idle_min_gap`; reconnections back off.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use common::{Workspace, wait_until};

/// What the server does besides answering as a mailbox of 3 messages would.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Refuses every LOGIN, repeating the command's arguments in its answer.
    EchoRefusal,
    /// Takes every LOGIN; 50 ms after each IDLE starts, reports a new message.
    ChangeAfterIdle,
    /// Takes every LOGIN; drops the connection when IDLE starts.
    DropAtIdle,
}

/// The server, on a thread per connection; when each LOGIN came, and each IDLE (only the IDLE
/// watcher's connection sends one: a poll's login is not a reconnection).
struct FakeImap {
    port: u16,
    seen: Arc<Seen>,
}

#[derive(Default)]
struct Seen {
    logins: Mutex<Vec<Instant>>,
    idles: Mutex<Vec<Instant>>,
}

impl FakeImap {
    fn start(mode: Mode) -> FakeImap {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("{e}"));
        let seen: Arc<Seen> = Arc::default();
        let each = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let seen = each.clone();
                std::thread::spawn(move || serve(stream, mode, &seen));
            }
        });
        FakeImap { port, seen }
    }

    fn logins(&self) -> Vec<Instant> {
        self.seen.logins.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn idles(&self) -> Vec<Instant> {
        self.seen.idles.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// One connection, until it closes or a write fails.
fn serve(stream: TcpStream, mode: Mode, seen: &Seen) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let Ok(mut out) = stream.try_clone() else { return };
    let mut lines = BufReader::new(stream);
    let mut say = |text: &str| out.write_all(text.as_bytes()).is_ok();
    if !say("* OK [CAPABILITY IMAP4rev1 IDLE] fake ready\r\n") {
        return;
    }
    let mut exists = 3;
    loop {
        let mut line = String::new();
        if lines.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        let mut parts = line.splitn(3, ' ');
        let (tag, command, rest) =
            (parts.next().unwrap_or(""), parts.next().unwrap_or("").to_ascii_uppercase(), parts.next());
        let answer = match command.as_str() {
            "CAPABILITY" => format!("* CAPABILITY IMAP4rev1 IDLE\r\n{tag} OK done\r\n"),
            "LOGIN" => {
                seen.logins.lock().unwrap_or_else(PoisonError::into_inner).push(Instant::now());
                if mode == Mode::EchoRefusal {
                    format!("{tag} NO [AUTHENTICATIONFAILED] Refused: LOGIN {}\r\n", rest.unwrap_or(""))
                } else {
                    format!("{tag} OK logged in\r\n")
                }
            }
            "EXAMINE" | "SELECT" => format!(
                "* {exists} EXISTS\r\n* 0 RECENT\r\n* OK [UIDVALIDITY 7] ok\r\n* OK [UIDNEXT 4] ok\r\n{tag} OK [READ-ONLY] done\r\n"
            ),
            "UID" => format!("* SEARCH 1 2 3\r\n{tag} OK done\r\n"),
            "NOOP" => format!("{tag} OK done\r\n"),
            "LOGOUT" => {
                let _ = say(&format!("* BYE bye\r\n{tag} OK done\r\n"));
                return;
            }
            "IDLE" if mode == Mode::DropAtIdle => {
                seen.idles.lock().unwrap_or_else(PoisonError::into_inner).push(Instant::now());
                return;
            }
            "IDLE" => {
                seen.idles.lock().unwrap_or_else(PoisonError::into_inner).push(Instant::now());
                if !say("+ idling\r\n") {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
                exists += 1;
                if !say(&format!("* {exists} EXISTS\r\n")) {
                    return;
                }
                let mut done = String::new();
                if lines.read_line(&mut done).unwrap_or(0) == 0 {
                    return;
                }
                format!("{tag} OK idle done\r\n")
            }
            _ => format!("{tag} BAD unknown command\r\n"),
        };
        if !say(&answer) {
            return;
        }
    }
}

/// A workspace with the mailbox source `mail` on `server` (`more` added to its table).
fn mail_workspace(server: &FakeImap, more: &str) -> Workspace {
    let config = format!(
        "[sources.mail]\nkind = \"imap\"\nhost = \"127.0.0.1\"\nport = {}\ntls = \"none\"\nusername = \"me\"\npassword_env = \"FAKE_IMAP_PASSWORD\"\n{more}",
        server.port
    );
    Workspace::with_note(&config, "# Notes\n\nnot live\n")
}

/// Issue 31: a server that echoes the LOGIN line in its refusal, with a password holding `"`,
/// `\` and a space. Before, its escaped form reached the log, `livenote sources poll` and the
/// source's state file. Now the refusal is said without the server's text, everywhere.
#[test]
fn a_server_echoing_the_login_line_never_shows_the_password() {
    let server = FakeImap::start(Mode::EchoRefusal);
    let ws = mail_workspace(&server, "");
    let password = r#"pa"ss\wo rd"9"#;
    let out = ws
        .livenote(&["sources", "poll", "mail"])
        .env("FAKE_IMAP_PASSWORD", password)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let state = ws.source_state("mail").and_then(|p| std::fs::read_to_string(p).ok()).unwrap_or_default();
    assert!(!state.is_empty(), "the source's state was written");
    let listed = ws.livenote(&["sources", "--format", "json"]).output().unwrap_or_else(|e| panic!("{e}"));
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    // The password's middle, as it is, escaped, percent-encoded, as bytes: in no spelling
    // anywhere.
    for text in [&said, &state, &listed] {
        let lower = text.to_lowercase();
        for piece in ["ss\\", "wo rd", "wo%20rd", "119, 111, 32, 114, 100"] {
            assert!(!lower.contains(piece), "{piece:?} in {text}");
        }
    }
    assert!(!out.status.success(), "{said}");
    assert_eq!(server.logins().len(), 1, "{said}");
    assert!(said.contains("refused the login of me"), "{said}");
    for text in [&said, &state, &listed] {
        assert!(text.contains("repeated the password"), "{text}");
    }
}

/// Issue 31: a server reporting a change 50 ms after each IDLE got 193 logins in 10 s, a poll
/// per change. Now IDLE asks for at most one poll per `idle_min_gap` (2 s here): over 6 s, the
/// first poll, the watcher's own login and a poll every 2 s at most.
#[test]
fn idle_asks_for_one_poll_per_gap_however_often_the_server_speaks() {
    let server = FakeImap::start(Mode::ChangeAfterIdle);
    let ws = mail_workspace(&server, "idle_min_gap = \"2s\"\n");
    let mut w = ws.watch_env(&[], &[("FAKE_IMAP_PASSWORD", "secret")]);
    w.wait_for("source mail: waiting for new mail on 127.0.0.1");
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(6));
    let logs = w.stop();
    let logins = server.logins();
    let within =
        logins.iter().filter(|t| t.saturating_duration_since(started) < Duration::from_secs(6)).count();
    // At t = 0, 2, 4 and perhaps 6, and the two logins before the window.
    assert!((3..=6).contains(&within), "{within} logins in 6 s (all: {}):\n{logs:#?}", logins.len());
    assert!(!logs.iter().any(|l| l.contains("poll failed") || l.contains("IDLE stopped")), "{logs:#?}");
}

/// A server that takes the login and then drops the connection at each IDLE: the watcher
/// connects again after twice the gap (1 s here), doubled each time, not at a steady pace
/// (before, each login that worked started the backoff over).
#[test]
fn reconnections_to_a_failing_server_back_off() {
    let server = FakeImap::start(Mode::DropAtIdle);
    let ws = mail_workspace(&server, "idle_min_gap = \"1s\"\n");
    let mut w = ws.watch_env(&[], &[("FAKE_IMAP_PASSWORD", "secret")]);
    w.wait_for("source mail: IDLE stopped");
    // Measured at the server, from the IDLE commands: a poll's own login (the first poll can come
    // after the first IDLE failed, on a loaded machine) is not a reconnection, and the log line
    // can be read late. Reconnections 2 s, then 4 s, then 8 s after each failure: IDLEs at about
    // 0, 2 and 6 s.
    wait_until("the second reconnection", 30, || server.idles().len() >= 3);
    std::thread::sleep(Duration::from_secs(4));
    let logs = w.stop();
    let idles = server.idles();
    let after: Vec<f64> = idles.iter().skip(1).map(|t| t.duration_since(idles[0]).as_secs_f64()).collect();
    // At a steady 2 s there would be 4 or 5 reconnections by now; with the backoff, 2 (the next
    // is at ~14 s).
    assert_eq!(after.len(), 2, "reconnections at {after:?} s:\n{logs:#?}");
    assert!(after[0] >= 1.5, "reconnections at {after:?} s");
    assert!(after[1] - after[0] >= 3.5, "reconnections at {after:?} s");
}
