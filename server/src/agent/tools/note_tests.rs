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
    // Nor rename it, nor put text above it: the title is not the agent's.
    for (old, new) in
        [("# Title", "# New title"), ("# Title\n", "Intro\n# Title\n"), ("# Title\n\ntext", "# T2\n\nmore")]
    {
        assert!(
            err(b.edit(old, new)).contains("the title line `# Title` stays first and unchanged"),
            "{old:?}"
        );
        assert_eq!(b.text(), "# Title\n\ntext\n");
    }
    assert_eq!(b.revision(), 0);
    // Text right below it is the agent's, even when the edit quotes the title line.
    assert!(b.edit("# Title\n\ntext", "# Title\n\nnew text").is_ok());
    assert_eq!(b.text(), "# Title\n\nnew text\n");
    // A second H1 further down is body text.
    assert!(b.append("# Another").is_ok());
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

fn budgeted(text: &str, max: usize) -> NoteBody {
    body(text).with_budget(Some(max))
}

#[test]
fn edits_that_would_pass_the_budget_are_refused() {
    // "# T\n\n" (5) + "- é one\n" (8, é is one) + "- two\n" (6).
    let mut b = budgeted("# T\n\n- é one\n- two\n", 24);
    assert_eq!(crate::note::budget::chars(b.text()), 19);
    assert_eq!(
        err(b.append("- three")),
        "over budget by 3; trim older sections: that change would make the note 27 characters, and its budget (maxChars) is 24"
    );
    assert!(err(b.edit("- two", "- two, twice")).starts_with("over budget by 2; trim older sections"));
    assert!(err(b.replace_section("## More", "text")).starts_with("over budget by "));
    assert_eq!(b.revision(), 0);
    // Up to the budget exactly is fine.
    assert!(b.append("- fi").is_ok());
    assert_eq!(crate::note::budget::chars(b.text()), 24);
}

#[test]
fn a_body_over_its_budget_may_only_shrink() {
    let mut b = budgeted("# T\n\n## Old\n- a long entry from last year\n\n## New\n- b\n", 20);
    assert!(err(b.append("- c")).starts_with("over budget by "));
    // A same-size change does not help either.
    let e = err(b.edit("- b", "- B"));
    assert!(e.ends_with("only changes that shrink it are taken)"), "{e}");
    // Trimming an older section is taken, though the note stays over.
    assert!(b.edit("- a long entry from last year\n", "").is_ok());
    assert!(crate::note::budget::chars(b.text()) > 20);
    assert_eq!(b.revision(), 1);
}

mod budget_holds {
    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Append(String),
        Edit(usize, usize, String),
        Section(String, String),
    }

    fn op() -> impl Strategy<Value = Op> {
        let text = "[a-zé\n #-]{0,40}";
        prop_oneof![
            text.prop_map(Op::Append),
            (0usize..200, 1usize..30, text).prop_map(|(at, len, new)| Op::Edit(at, len, new)),
            ("[A-C]", text).prop_map(|(h, c)| Op::Section(h, c)),
        ]
    }

    proptest! {
        /// After any sequence of tool edits, the body is within its budget, or it started over
        /// it and never grew.
        #[test]
        fn never_over_unless_it_started_over_and_never_grew(
            start in "# T\n\n[a-zé\n -]{0,120}",
            max in 1usize..150,
            ops in proptest::collection::vec(op(), 0..25),
        ) {
            let mut b = budgeted(&start, max);
            let initial = crate::note::budget::chars(&start);
            let mut before = initial;
            for op in ops {
                let _ = match op {
                    Op::Append(t) => b.append(&t),
                    Op::Edit(at, len, new) => {
                        let text = b.text().to_owned();
                        let chars: Vec<(usize, char)> = text.char_indices().collect();
                        if chars.is_empty() { continue; }
                        let s = chars[at % chars.len()].0;
                        let e = chars.get(at % chars.len() + len).map_or(text.len(), |c| c.0);
                        b.edit(&text[s..e], &new)
                    }
                    Op::Section(h, c) => b.replace_section(&format!("## {h}"), &c),
                };
                let now = crate::note::budget::chars(b.text());
                prop_assert!(now <= max || (initial > max && now <= before), "{now} > {max} (was {before}, started {initial})");
                before = now;
            }
        }
    }
}
