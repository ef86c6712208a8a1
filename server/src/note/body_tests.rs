use super::*;
use crate::text::edit::apply;
use expect_test::{Expect, expect};
use proptest::prelude::*;

/// The user typed while a run's edit was on its way: the edit lands around what they typed.
#[path = "body_race_tests.rs"]
mod races;

/// Properties over generated notes and outputs.
#[path = "body_props_tests.rs"]
mod props;

fn show(s: &str) -> String {
    s.replace('\r', "␍").replace('\u{feff}', "⟨BOM⟩")
}

fn applied(text: &str, edits: &[TextEdit]) -> String {
    apply(text, edits).unwrap_or_else(|e| panic!("edits do not apply: {e}"))
}

fn render_edits(edits: &[TextEdit]) -> String {
    edits.iter().map(|e| format!("{:?} {:?}\n", e.range, show(&e.new_text))).collect()
}

/// The edits, then the resulting text.
fn check_replace(text: &str, new: &str, expect: Expect) {
    let edits = replace_region_edits(text, new);
    let out = applied(text, &edits);
    expect.assert_eq(&format!("{}----\n{}", render_edits(&edits), show(&out)));
}

/// Conflicts and edits of the patch computed on `base` applied to `current`, then the result.
fn check_race(base: &str, new: &str, current: &str, expect: Expect) {
    let r = Patch::compute(base, new).apply_to(current);
    let out = applied(current, &r.edits);
    expect.assert_eq(&format!("conflicts: {}\n{}----\n{}", r.conflicts, render_edits(&r.edits), show(&out)));
}

const NOTE: &str = "---\nlive:\n  objective: Show the time.\n---\n# Chicago time\n\n3:00 PM, Central Time\n\n## Notes\n\nsee below\n";

#[test]
fn region_is_below_the_h1_or_the_whole_body() {
    let r = |t: &str| {
        let r = agent_region(t);
        show(&t[r])
    };
    assert_eq!(r(NOTE), "\n3:00 PM, Central Time\n\n## Notes\n\nsee below\n");
    assert_eq!(r("---\na: 1\n---\nplain\n"), "plain\n");
    assert_eq!(r("\u{feff}plain\n"), "plain\n");
    assert_eq!(r("intro\n# T\r\nbody"), "body");
    assert_eq!(r("```\n# fenced\n```\n# Real\nx\n"), "x\n");
    assert_eq!(r("# T"), "");
    assert_eq!(agent_region("# T"), 3..3);
    assert_eq!(agent_region("---\na: 1\n"), 9..9);
    assert_eq!(agent_region(""), 0..0);
}

#[test]
fn replace_with_h1() {
    check_replace(
        NOTE,
        "4:00 PM, Central Time\n\n## Notes\n\nsee below\n",
        expect![[r#"
                58..80 "4:00 PM, Central Time\n"
                ----
                ---
                live:
                  objective: Show the time.
                ---
                # Chicago time

                4:00 PM, Central Time

                ## Notes

                see below
            "#]],
    );
    // The provider's own leading blank lines are kept as they are.
    check_replace(
        "# T\n\nold\n",
        "\n\nnew\n",
        expect![[r#"
                5..9 "\nnew\n"
                ----
                # T


                new
            "#]],
    );
    // Two blank lines under the H1 become the one the rule adds.
    check_replace(
        "# T\n\n\nold\n",
        "new",
        expect![[r#"
                5..10 "new\n"
                ----
                # T

                new
            "#]],
    );
    // Text directly under the H1 stays directly under it.
    check_replace(
        "# T\nold\nkeep\n",
        "new\nkeep\n",
        expect![[r#"
                4..8 "new\n"
                ----
                # T
                new
                keep
            "#]],
    );
    // What the user wrote above the H1 is not the agent's.
    check_replace(
        "mine\n\n# T\n\nold\n",
        "new\n",
        expect![[r#"
                11..15 "new\n"
                ----
                mine

                # T

                new
            "#]],
    );
}

#[test]
fn replace_drops_an_echoed_h1() {
    check_replace(
        "# Chicago time\n\n3:00 PM\n",
        "# Chicago time\n\n4:00 PM\n",
        expect![[r#"
            16..24 "4:00 PM\n"
            ----
            # Chicago time

            4:00 PM
        "#]],
    );
    // Another H1 is content like any other.
    check_replace(
        "# Chicago time\n\n3:00 PM\n",
        "# Elsewhere\n4:00 PM\n",
        expect![[r##"
            16..24 "# Elsewhere\n4:00 PM\n"
            ----
            # Chicago time

            # Elsewhere
            4:00 PM
        "##]],
    );
}

#[test]
fn replace_without_h1() {
    check_replace(
        "---\na: 1\n---\nold line\nkeep\n",
        "new line\nkeep\n",
        expect![[r#"
                13..22 "new line\n"
                ----
                ---
                a: 1
                ---
                new line
                keep
            "#]],
    );
    // No blank line is added without an H1, and a leading one is the provider's choice.
    check_replace(
        "---\na: 1\n---\nold\n",
        "\nnew\n",
        expect![[r#"
                13..17 "\nnew\n"
                ----
                ---
                a: 1
                ---

                new
            "#]],
    );
}

#[test]
fn replace_keeps_crlf() {
    check_replace(
        "---\r\na: 1\r\n---\r\n# T\r\n\r\nold\r\nkeep\r\n",
        "new\nkeep\nadded",
        expect![[r#"
                23..28 "new␍\n"
                34..34 "added␍\n"
                ----
                ---␍
                a: 1␍
                ---␍
                # T␍
                ␍
                new␍
                keep␍
                added␍
            "#]],
    );
    // An empty region takes the note's line ending from the rest of the note.
    check_replace(
        "---\r\na: 1\r\n---\r\n# T\r\n",
        "x\ny\n",
        expect![[r#"
                21..21 "␍\nx␍\ny␍\n"
                ----
                ---␍
                a: 1␍
                ---␍
                # T␍
                ␍
                x␍
                y␍
            "#]],
    );
}

#[test]
fn replace_empty_body() {
    check_replace(
        "---\na: 1\n---\n",
        "hello",
        expect![[r#"
                13..13 "hello\n"
                ----
                ---
                a: 1
                ---
                hello
            "#]],
    );
    check_replace(
        "---\na: 1\n---\n# T\n",
        "hello\n",
        expect![[r#"
                17..17 "\nhello\n"
                ----
                ---
                a: 1
                ---
                # T

                hello
            "#]],
    );
    // The last line had no line ending: one is added before the content, none after.
    check_replace(
        "# T",
        "hello\n",
        expect![[r#"
                3..3 "\n\nhello\n"
                ----
                # T

                hello
            "#]],
    );
    check_replace(
        "---\na: 1\n---",
        "hello",
        expect![[r#"
                12..12 "\nhello"
                ----
                ---
                a: 1
                ---
                hello"#]],
    );
    // Emptying the body removes it all, blank line included.
    check_replace(
        "# T\n\nold\n",
        "",
        expect![[r#"
                4..9 ""
                ----
                # T
            "#]],
    );
    // Unterminated frontmatter: there is no body to write.
    check_replace(
        "---\na: 1\n",
        "hello",
        expect![[r#"
                ----
                ---
                a: 1
            "#]],
    );
}

#[test]
fn replace_without_frontmatter() {
    check_replace(
        "# T\n\nold\nkeep\n",
        "new\nkeep\n",
        expect![[r#"
                5..9 "new\n"
                ----
                # T

                new
                keep
            "#]],
    );
    check_replace(
        "\u{feff}plain\ntext\n",
        "plain\nprose\n",
        expect![[r#"
                9..14 "prose\n"
                ----
                ⟨BOM⟩plain
                prose
            "#]],
    );
    check_replace(
        "",
        "hello",
        expect![[r#"
                0..0 "hello\n"
                ----
                hello
            "#]],
    );
}

/// Found by the `command_output` fuzz target: in a note without frontmatter or H1, output
/// starting with a `---` line turned the note's first lines into a frontmatter (an agent
/// could make a note live that way). A blank line in front keeps it body text, also when
/// the patch lands on a note whose frontmatter the user removed meanwhile.
#[test]
fn output_never_opens_a_frontmatter() {
    check_replace(
        "old\n",
        "---\nlive:\n  objective: x\n---\nbody\n",
        expect![[r#"
                0..4 "\n---\nlive:\n  objective: x\n---\nbody\n"
                ----

                ---
                live:
                  objective: x
                ---
                body
            "#]],
    );
    check_replace(
        "",
        "---",
        expect![[r#"
                0..0 "\n---\n"
                ----

                ---
            "#]],
    );
    check_race(
        "---\na: 1\n---\nold\n",
        "---\nx\n---\n",
        "old\n",
        expect![[r#"
                conflicts: 0
                0..4 "\n---\nx\n---\n"
                ----

                ---
                x
                ---
            "#]],
    );
    // A `---` line further down, or under an H1, is just a thematic break.
    assert_eq!(replace_region_edits("a\n", "a\n---\nb\n").len(), 1);
    // After a BOM, a second U+FEFF is text: `\u{feff}---` opens nothing.
    let text = "\u{feff}\u{feff}---\n";
    assert_eq!(replace_region_edits(text, &text[3..]), vec![]);
    assert_eq!(applied("# T\n", &replace_region_edits("# T\n", "---\nb\n")), "# T\n\n---\nb\n");
}

/// Found by the `command_output` fuzz target: writing back a region whose line endings are
/// mixed is not a no-op, as the module documentation said; its endings become the first
/// one's, like any output's. The documentation now says so.
#[test]
fn writing_back_a_mixed_region_normalises_it() {
    let text = "#Title\r\nbody\n";
    assert_eq!(applied(text, &replace_region_edits(text, text)), "#Title\r\nbody\r\n");
    let text = "#Title\r\nbody\r\n";
    assert_eq!(replace_region_edits(text, text), vec![]);
}

#[test]
fn replace_trailing_newline() {
    // The region ended with a newline: the result does too.
    check_replace(
        "# T\n\nold\n",
        "a\nb",
        expect![[r#"
                5..9 "a\nb\n"
                ----
                # T

                a
                b
            "#]],
    );
    // The note had no final newline: the provider's choice is kept either way.
    check_replace(
        "# T\n\nold",
        "new\n",
        expect![[r#"
                5..8 "new\n"
                ----
                # T

                new
            "#]],
    );
    check_replace(
        "# T\n\nold",
        "new",
        expect![[r#"
                5..8 "new"
                ----
                # T

                new"#]],
    );
    // Extra trailing blank lines from the provider are its own.
    check_replace(
        "# T\n\nold\n",
        "new\n\n",
        expect![[r#"
                5..9 "new\n\n"
                ----
                # T

                new

            "#]],
    );
}

#[test]
fn unchanged_output_gives_no_edits() {
    let cases = [
        (NOTE, "\n3:00 PM, Central Time\n\n## Notes\n\nsee below\n"),
        // The region's own text, as Undo writes it back, whatever its shape.
        (NOTE, &NOTE[agent_region(NOTE)]),
        ("# T\nx\n", "x\n"),
        ("# T\n\nx", "x"),
        ("# T\n", ""),
        ("---\r\na: 1\r\n---\r\n# T\r\n\r\nx\r\ny\r\n", "x\ny\n"),
        ("---\na: 1\n---\n", ""),
        ("plain\n", "plain"),
        ("", ""),
    ];
    for (text, new) in cases {
        assert_eq!(replace_region_edits(text, new), vec![], "{text:?} <- {new:?}");
        assert!(Patch::compute(text, new).is_empty(), "{text:?} <- {new:?}");
    }
}

#[test]
fn repeated_lines_give_ordered_edits() {
    // similar's compacting pass once reordered these ops into overlapping edits.
    check_replace(
        "- x\n- x\n\n",
        "\n---\n\n\n\n\n- x\n\r\r\n\r",
        expect![[r#"
            0..8 "\n---\n\n\n\n"
            9..9 "- x\n␍\n␍\n"
            ----

            ---




            - x
            ␍
            ␍
        "#]],
    );
}

const BASE: &str = "---\ntitle: Chicago\nlive:\n  objective: Show the time.\n---\n# Chicago time\n\nSummary: it is 3:00 PM.\n\n## Weather\n\nSunny.\n\n## Notes\n\n- bring an umbrella\n";
const AGENT: &str = "\nSummary: it is 4:00 PM.\n\n## Weather\n\nCloudy.\n\n## Notes\n\n- bring an umbrella\n";

fn typed(at: &str, insert: &str) -> String {
    BASE.replacen(at, &format!("{insert}{at}"), 1)
}

#[test]
fn patch_hunks_carry_context() {
    let patch = Patch::compute(BASE, AGENT);
    expect![[r###"
            [
                Hunk {
                    line: 1,
                    before: [
                        "\n",
                    ],
                    old: [
                        "Summary: it is 3:00 PM.\n",
                    ],
                    after: [
                        "\n",
                        "## Weather\n",
                    ],
                    new: "Summary: it is 4:00 PM.\n",
                    at_start: true,
                    at_end: false,
                },
                Hunk {
                    line: 5,
                    before: [
                        "## Weather\n",
                        "\n",
                    ],
                    old: [
                        "Sunny.\n",
                    ],
                    after: [
                        "\n",
                        "## Notes\n",
                    ],
                    new: "Cloudy.\n",
                    at_start: false,
                    at_end: false,
                },
            ]
        "###]]
    .assert_debug_eq(&patch.hunks());
}

#[test]
fn the_title_the_agent_is_shown_is_the_echo_the_engine_drops() {
    assert_eq!(with_title(Some("T"), "\nold\n"), "# T\n\nold\n");
    assert_eq!(with_title(Some(" T "), "x\r\ny\r\n"), "# T\r\nx\r\ny\r\n");
    assert_eq!(with_title(Some("T"), "# T\nx\n"), "# T\nx\n");
    assert_eq!(with_title(None, "x\n"), "x\n");
    // A later H1 of the same title is not the first line: the title still goes on top.
    assert_eq!(with_title(Some("T"), "x\n# T\n"), "# T\nx\n# T\n");
    let note = "---\nlive: {}\n---\n# T\n\nold\n";
    let shown = with_title(Some("T"), &note[agent_region(note)]);
    assert_eq!(body_h1(&shown), Some(0..3));
    let edited = shown.replace("old", "new");
    assert_eq!(applied(note, &replace_region_edits(note, &edited)), "---\nlive: {}\n---\n# T\n\nnew\n");
}
