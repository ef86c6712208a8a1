//! See the suite's header in containment.rs.
//!
//! Issue 21, section 7: file names and fields with control characters (`ESC [2J` clears the
//! screen, an OSC sequence sets the window title) reached the terminal raw in the text output
//! of `check`, `list` and `skills`. Now they show as escapes; JSON was escaped already.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{tempdir, write};

const CLEAR: &str = "\u{1b}[2J";
const TITLE: &str = "\u{1b}]0;pwned\u{7}";

fn livenote(root: &Path, data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(args)
        .current_dir(root)
        .env("LIVENOTE_DATA_DIR", data)
        .env("LIVENOTE_CONFIG_DIR", data)
        .env("LIVENOTE_LOG", "info")
        .env("TZ", "UTC")
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// stdout and stderr, each checked to hold no escape or bell byte.
fn shown(out: &Output) -> (String, String) {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        assert!(!text.contains(['\u{1b}', '\u{7}', '\u{9b}']), "a raw control character on {name}: {text:?}");
    }
    (stdout, stderr)
}

#[test]
fn file_names_and_fields_with_terminal_escapes_are_shown_not_acted_on() {
    let dir = tempdir();
    let data = tempdir();
    let root = dir.path();
    // A name that clears the screen; an unknown key and a cron that do too, quoted back by
    // the diagnostics; a skill whose name, description and file name set the window title.
    write(
        &root.join(format!("a{CLEAR}b.md")),
        &format!(
            "---\nlive:\n  objective: o\n  \"{CLEAR}key\": 1\n  triggers:\n    cronExpr: \"{TITLE}\"\n---\n# T\n"
        ),
    );
    write(
        &root.join(format!("skills/x{TITLE}.md")),
        &format!("---\nname: evil{CLEAR}\ndescription: \"d {TITLE}\"\n---\nbody\n"),
    );

    let out = livenote(root, data.path(), &["check", "."]);
    let (stdout, _) = shown(&out);
    assert!(stdout.contains("a\\x1b[2Jb.md:4:3: warning live/unknown-key"), "{stdout}");
    assert!(stdout.contains("`\\x1b[2Jkey`"), "{stdout}");

    let out = livenote(root, data.path(), &["list", "."]);
    assert_eq!(out.status.code(), Some(0));
    let (stdout, _) = shown(&out);
    assert!(stdout.contains("a\\x1b[2Jb.md  "), "{stdout}");

    let out = livenote(root, data.path(), &["skills", "."]);
    assert_eq!(out.status.code(), Some(0));
    let (stdout, _) = shown(&out);
    assert!(stdout.contains("evil\\x1b[2J"), "{stdout}");
    assert!(stdout.contains("skills/x\\x1b]0;pwned\\x07.md"), "{stdout}");
    assert!(stdout.contains("d \\x1b]0;pwned\\x07"), "{stdout}");

    // JSON keeps the text as it is (serde escapes it).
    let out = livenote(root, data.path(), &["list", "--format", "json", "."]);
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(items[0]["path"], format!("a{CLEAR}b.md"));
}
