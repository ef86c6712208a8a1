use std::fmt;

use super::*;

fn body(text: &str) -> NoteBody {
    NoteBody::new(text.to_owned(), &Caps::default())
}

fn err<T: fmt::Debug>(r: Result<T, ToolError>) -> String {
    match r {
        Err(e) => e.0,
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

#[test]
fn edit_needs_exactly_one_match() {
    let mut b = body("# T\n\n- a\n- a\n- b\n");
    assert_eq!(
        err(b.edit("- a", "- c")),
        "old_text matches 2 places; include more context so that it matches exactly one"
    );
    assert_eq!(err(b.edit("- z", "- c")), "old_text not found; read_note to see the current text");
    assert_eq!(
        err(b.edit("", "x")),
        "old_text is empty; copy the exact text to replace from read_note (to add at the end, use append_to_note)"
    );
    assert!(b.edit("- a\n- b", "- a\n- c").is_ok());
    assert_eq!(b.text(), "# T\n\n- a\n- a\n- c\n");
    // Overlapping occurrences are ambiguous too.
    let mut b = body("aaa");
    assert!(err(b.edit("aa", "b")).starts_with("old_text matches 2 places"));
}

#[test]
fn edit_hints_at_whitespace_and_keeps_crlf() {
    let mut b = body("# T\r\n\r\nOld line\r\nnext\r\n");
    assert_eq!(
        err(b.edit(" Old line ", "x")),
        "old_text not found; read_note to see the current text (it occurs without its leading/trailing whitespace; copy the text exactly)"
    );
    assert!(b.edit("Old line\nnext", "New line\nafter").is_ok());
    assert_eq!(b.text(), "# T\r\n\r\nNew line\r\nafter\r\n");
}

#[test]
fn edits_keep_the_h1() {
    let mut b = body("# Title\n\ntext\n");
    assert!(err(b.edit("# Title\n", "")).contains("remove the note's `# ` title line"));
    assert_eq!(b.text(), "# Title\n\ntext\n");
    // Renaming it is the objective's call.
    assert!(b.edit("# Title", "# New title").is_ok());
    // A body without an H1 may stay without one.
    let mut b = body("just text\n");
    assert!(b.edit("just", "only").is_ok());
}

#[test]
fn replace_section_replaces_up_to_the_next_peer() {
    let mut b = body("# T\n\nSummary.\n\n## Weather\n\nRain.\n\n### Detail\n\nwet\n\n## News\n\nNone.\n");
    let msg = b.replace_section("Weather", "## Weather\n\nSun.\n\n").map_err(|e| e.0);
    assert_eq!(msg.as_deref(), Ok("Replaced the content of `## Weather` (7 lines before, 1 now)."));
    assert_eq!(b.text(), "# T\n\nSummary.\n\n## Weather\n\nSun.\n\n## News\n\nNone.\n");
    // The last section, and case-insensitive matching.
    assert!(b.replace_section("## news", "- quiet").is_ok());
    assert_eq!(b.text(), "# T\n\nSummary.\n\n## Weather\n\nSun.\n\n## News\n\n- quiet\n");
    // Missing: added at the end.
    assert!(b.replace_section("### Later", "soon").is_ok());
    assert_eq!(
        b.text(),
        "# T\n\nSummary.\n\n## Weather\n\nSun.\n\n## News\n\n- quiet\n\n### Later\n\nsoon\n"
    );
    assert!(err(b.replace_section("# T", "x")).contains("the `# ` title line stays"));
}

#[test]
fn replace_section_ignores_code_fences_and_refuses_duplicates() {
    let mut b = body("# T\n\n## A\n\n```\n## B\n```\n\n## A\n");
    assert_eq!(
        err(b.replace_section("A", "x")),
        "the heading `## A` appears 2 times; use edit_note to change one of them"
    );
    let mut b = body("# T\n\n## A\n\n```\n## B\n```\n\n## C\nc");
    assert!(b.replace_section("A", "new").is_ok());
    assert_eq!(b.text(), "# T\n\n## A\n\nnew\n\n## C\nc");
    assert!(b.replace_section("C", "cc").is_ok());
    assert_eq!(b.text(), "# T\n\n## A\n\nnew\n\n## C\n\ncc\n");
    // A heading at the very end without a line ending.
    let mut b = body("# T\n\n## A");
    assert!(b.replace_section("A", "x").is_ok());
    assert_eq!(b.text(), "# T\n\n## A\n\nx\n");
}

#[test]
fn append_adds_a_line() {
    let mut b = body("# T\n\nend");
    assert!(b.append("- one").is_ok());
    assert_eq!(b.text(), "# T\n\nend\n- one\n");
    assert_eq!(err(b.append("  \n")), "text is empty; nothing to append");
}

#[test]
fn the_body_cannot_grow_without_bound() {
    let caps = Caps { max_body_bytes: 20, ..Caps::default() };
    let mut b = NoteBody::new("# T\n".to_owned(), &caps);
    assert!(err(b.append(&"x".repeat(30))).contains("over the 20 byte limit"));
}
