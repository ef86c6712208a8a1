use base64::Engine as _;
use proptest::prelude::*;

use super::*;

/// A refusal as a server that echoes the LOGIN line writes it, and as async-imap turns it into
/// an error (`check_status_ok`: `code: {code:?}, info: {information:?}`).
fn echoed_refusal(user: &str, password: &str) -> String {
    let line = format!("LOGIN {} {} failed", quote(user), quote(password));
    let e = async_imap::error::Error::No(format!("code: {:?}, info: {:?}", None::<&str>, Some(line)));
    e.to_string()
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[test]
fn each_spelling_is_found_and_a_harmless_answer_is_kept() {
    let p = Password::new(r#"pa"ss\wo rd"#);
    let refusal = echoed_refusal("me", r#"pa"ss\wo rd"#);
    // The reproduction: neither the password nor its quoted form is in the error as such.
    assert!(!refusal.contains(r#"pa"ss\wo rd"#) && !refusal.contains(r#"pa\"ss\\wo rd"#), "{refusal}");
    assert_eq!(p.server_text(&refusal), WITHHELD);
    let plain = base64::engine::general_purpose::STANDARD.encode("\0me\0pa\"ss\\wo rd");
    for text in [
        r#"pa"ss\wo rd"#.to_owned(),
        r#"LOGIN "ME" "PA\"SS\\WO RD""#.to_owned(),
        format!("unable to parse data ({:?}) as UTF-8", br#"x pa"ss\wo rd"#.to_vec()),
        format!("AUTHENTICATE PLAIN {plain} refused"),
        "imap://me:pa%22ss%5Cwo%20rd@host".to_owned(),
    ] {
        assert!(p.appears_in(&text), "{text}");
    }
    let fine = "code: Some(AuthenticationFailed), info: Some(\"Authentication failed.\")";
    assert_eq!(p.server_text(fine), fine);
    assert!(!Password::new("").appears_in("anything"));
}

proptest! {
    /// Over passwords full of quotes, backslashes, spaces and non-ASCII letters: an echo of the
    /// LOGIN line as the library quotes it, in whatever case, and the base64 of an
    /// AUTHENTICATE PLAIN exchange are withheld whole, while an answer without the password is
    /// shown as the server said it.
    #[test]
    fn every_echo_of_the_password_is_withheld(
        password in r#"[a-zA-Z0-9"\\ é%!{}]{1,24}"#,
        user in "[a-z]{1,8}",
    ) {
        let p = Password::new(password.clone());
        let refusal = echoed_refusal(&user, &password);
        prop_assert_eq!(p.server_text(&refusal), WITHHELD);
        prop_assert_eq!(p.server_text(&refusal.to_uppercase()), WITHHELD);
        let plain = base64::engine::general_purpose::STANDARD.encode(format!("\0{user}\0{password}"));
        if password.len() >= 4 {
            prop_assert_eq!(p.server_text(&format!("NO {plain} rejected")), WITHHELD);
        }
        let fine = "NO [AUTHENTICATIONFAILED] Invalid credentials";
        if password.len() >= 8 && !fine.to_lowercase().contains(&password.to_lowercase()) {
            prop_assert_eq!(p.server_text(fine), fine);
        }
    }
}
