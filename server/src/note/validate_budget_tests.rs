use super::*;

#[test]
fn max_chars_is_a_positive_whole_number() {
    check(
        "---\nlive:\n  objective: y\n  maxChars: 4000\n---\n# T\n",
        expect![[r#"
            live: has_errors=false
        "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  maxChars: \"4,000\"\n---\n",
        expect![[r#"
            4:13-4:20 error live/invalid-max-chars `maxChars` must be a whole number of characters above zero, like 4000, found the string "4,000"
              fix*: Change to 4000
            live: has_errors=true
        "#]],
    );
    check_fix(
        "---\nlive:\n  objective: y\n  maxChars: \"4,000\"\n---\n",
        "Change to 4000",
        expect![[r#"
        ---
        live:
          objective: y
          maxChars: 4000
        ---
    "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  maxChars: 0\n  active: true\n---\n",
        expect![[r#"
            4:13-4:14 error live/invalid-max-chars `maxChars` must be a whole number of characters above zero, like 4000, found 0
            live: has_errors=true
        "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  maxChars: 2.5\n---\n",
        expect![[r#"
            4:13-4:16 error live/invalid-max-chars `maxChars` must be a whole number of characters above zero, like 4000, found a number
            live: has_errors=true
        "#]],
    );
}

#[test]
fn a_body_over_its_budget_is_a_warning_on_max_chars() {
    // "# T\n" and 8 more: 12 characters (é is one), title line included.
    let note = "---\nlive:\n  objective: y\n  maxChars: 11\n---\n# T\nhéllo!!\n";
    check(
        note,
        expect![[r#"
            4:13-4:15 warning live/over-budget the body is 12 characters, over its budget of 11 by 1: runs may only shrink it until it fits; trim older sections or raise `maxChars`
            live: has_errors=false
        "#]],
    );
    check(
        &note.replace("11", "12"),
        expect![[r#"
        live: has_errors=false
    "#]],
    );
    // Read without the body (the index reads frontmatter only): no size, no warning.
    let a = analyze(note, &Options { scan_body: false, ..Options::default() });
    assert!(a.diagnostics.is_empty(), "{:#?}", a.diagnostics);
}
