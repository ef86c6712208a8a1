use super::*;
use crate::text::edit::apply;
use expect_test::{Expect, expect};
use proptest::prelude::*;

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
fn race_user_typed_in_the_frontmatter() {
    check_race(
        BASE,
        AGENT,
        &typed("live:", "tags: [time]\n"),
        expect![[r#"
                conflicts: 0
                86..110 "Summary: it is 4:00 PM.\n"
                123..130 "Cloudy.\n"
                ----
                ---
                title: Chicago
                tags: [time]
                live:
                  objective: Show the time.
                ---
                # Chicago time

                Summary: it is 4:00 PM.

                ## Weather

                Cloudy.

                ## Notes

                - bring an umbrella
            "#]],
    );
}

#[test]
fn race_user_typed_above_the_h1() {
    check_race(
        BASE,
        AGENT,
        &typed("# Chicago", "Draft, do not share.\n\n"),
        expect![[r#"
                conflicts: 0
                95..119 "Summary: it is 4:00 PM.\n"
                132..139 "Cloudy.\n"
                ----
                ---
                title: Chicago
                live:
                  objective: Show the time.
                ---
                Draft, do not share.

                # Chicago time

                Summary: it is 4:00 PM.

                ## Weather

                Cloudy.

                ## Notes

                - bring an umbrella
            "#]],
    );
}

#[test]
fn race_user_typed_in_another_paragraph() {
    // Below the agent's changes.
    check_race(
        BASE,
        AGENT,
        &typed("- bring", "- call mum\n"),
        expect![[r#"
            conflicts: 0
            73..97 "Summary: it is 4:00 PM.\n"
            110..117 "Cloudy.\n"
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time

            Summary: it is 4:00 PM.

            ## Weather

            Cloudy.

            ## Notes

            - call mum
            - bring an umbrella
        "#]],
    );
    // Above them, in the same region: the hunks follow the text down.
    check_race(
        BASE,
        AGENT,
        &typed("Summary", "Written by hand.\n\n"),
        expect![[r#"
            conflicts: 0
            91..115 "Summary: it is 4:00 PM.\n"
            128..135 "Cloudy.\n"
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time

            Written by hand.

            Summary: it is 4:00 PM.

            ## Weather

            Cloudy.

            ## Notes

            - bring an umbrella
        "#]],
    );
    // Right next to a change (its context): the old lines are intact where expected.
    check_race(
        BASE,
        AGENT,
        &BASE.replace("## Weather", "## Weather today"),
        expect![[r#"
            conflicts: 0
            73..97 "Summary: it is 4:00 PM.\n"
            116..123 "Cloudy.\n"
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time

            Summary: it is 4:00 PM.

            ## Weather today

            Cloudy.

            ## Notes

            - bring an umbrella
        "#]],
    );
}

#[test]
fn race_user_typed_in_the_line_the_agent_changes() {
    check_race(
        BASE,
        AGENT,
        &BASE.replace("Sunny.", "Sunny, says Bob."),
        expect![[r#"
            conflicts: 1
            73..97 "Summary: it is 4:00 PM.\n"
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time

            Summary: it is 4:00 PM.

            ## Weather

            Sunny, says Bob.

            ## Notes

            - bring an umbrella
        "#]],
    );
    // The user emptied the body: nothing of the agent's comes back.
    let emptied = &BASE[..agent_region(BASE).start];
    check_race(
        BASE,
        AGENT,
        emptied,
        expect![[r#"
            conflicts: 2
            ----
            ---
            title: Chicago
            live:
              objective: Show the time.
            ---
            # Chicago time
        "#]],
    );
}

#[test]
fn retry_after_the_edit_landed_changes_nothing() {
    // An appended section (a pure insertion) must not be appended twice.
    let base = "# T\n\nSummary.\n";
    let new = "\nSummary.\n\n## Added\n\nfresh\n";
    let patch = Patch::compute(base, new);
    let once = applied(base, &patch.apply_to(base).edits);
    check_race(
        base,
        new,
        &once,
        expect![[r#"
                conflicts: 0
                ----
                # T

                Summary.

                ## Added

                fresh
            "#]],
    );
    // Even when the user typed above it in between.
    check_race(
        base,
        new,
        &once.replace("Summary.", "Mine.\n\nSummary."),
        expect![[r#"
                conflicts: 0
                ----
                # T

                Mine.

                Summary.

                ## Added

                fresh
            "#]],
    );
    // With no H1 the agent owns the whole body, even once its output brought an H1.
    let bare = "---\na: 1\n---\n";
    let once = applied(bare, &Patch::compute(bare, "# Made\n\nfresh\n").apply_to(bare).edits);
    check_race(
        bare,
        "# Made\n\nfresh\n",
        &once,
        expect![[r#"
            conflicts: 0
            ----
            ---
            a: 1
            ---
            # Made

            fresh
        "#]],
    );
    let empty = "# T\n";
    let once = applied(empty, &Patch::compute(empty, "fresh\n").apply_to(empty).edits);
    check_race(
        empty,
        "fresh\n",
        &once,
        expect![[r#"
            conflicts: 0
            ----
            # T

            fresh
        "#]],
    );
}

#[test]
fn race_on_an_empty_body() {
    let base = "---\na: 1\n---\n# T\n";
    check_race(
        base,
        "fresh\n",
        base,
        expect![[r#"
            conflicts: 0
            17..17 "\nfresh\n"
            ----
            ---
            a: 1
            ---
            # T

            fresh
        "#]],
    );
    check_race(
        base,
        "fresh\n",
        "---\na: 1\n---\n# T\nmine\n",
        expect![[r#"
            conflicts: 1
            ----
            ---
            a: 1
            ---
            # T
            mine
        "#]],
    );
    // The frontmatter got broken meanwhile: no body to write to.
    check_race(
        base,
        "fresh\n",
        "---\na: 1\n# T\n",
        expect![[r#"
            conflicts: 1
            ----
            ---
            a: 1
            # T
        "#]],
    );
}

#[test]
fn race_with_repeated_lines_picks_the_nearest() {
    let base = "# T\n\n- a\n- x\n- b\n- a\n- x\n- b\n- a\n- x\n- b\n- a\n- x\n- b\n";
    // The agent changes the second `- x`, whose context the third one shares.
    let new = "\n- a\n- x\n- b\n- a\n- y\n- b\n- a\n- x\n- b\n- a\n- x\n- b\n";
    // The user inserted a line at the top, shifting everything by one.
    let current = base.replace("# T\n\n", "# T\n\n- new\n");
    check_race(
        base,
        new,
        &current,
        expect![[r#"
            conflicts: 0
            27..31 "- y\n"
            ----
            # T

            - new
            - a
            - x
            - b
            - a
            - y
            - b
            - a
            - x
            - b
            - a
            - x
            - b
        "#]],
    );
}

/// A generated note and where its parts are.
#[derive(Debug, Clone)]
struct Note {
    text: String,
    crlf: bool,
}

const LINES: [&str; 9] = ["", "a", "b", "- x", "## S", "  ", "é ü", "`c`", "# B"];

fn line() -> impl Strategy<Value = &'static str> {
    prop::sample::select([&LINES[..], &["keep"]].concat())
}

/// A note: optional BOM and frontmatter (closed, closed at the end of the file without a
/// newline, or unterminated), text above the H1, an optional H1, body lines.
fn note() -> impl Strategy<Value = Note> {
    note_with(0..4u8)
}

/// A note whose frontmatter is of the kinds `fm` gives: 0 none, 1 closed, 2 closed at the
/// end of the file, 3 unterminated.
fn note_with(fm: impl Strategy<Value = u8>) -> impl Strategy<Value = Note> {
    let parts = (
        any::<bool>(),
        any::<bool>(),
        fm,
        prop::collection::vec(line(), 0..3),
        prop::collection::vec(line(), 0..3),
        0..3u8,
        prop::collection::vec(line(), 0..8),
        any::<bool>(),
    );
    parts.prop_map(|(crlf, bom, fm, fm_lines, above, h1, body, final_nl)| {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = String::from(if bom { "\u{feff}" } else { "" });
        let join = |lines: &[&str]| lines.iter().map(|l| format!("{l}{nl}")).collect::<String>();
        match fm {
            1 => text += &format!("---{nl}{}---{nl}", join(&fm_lines)),
            2 => return Note { text: text + &format!("---{nl}{}---", join(&fm_lines)), crlf },
            3 => return Note { text: text + &format!("---{nl}{}", join(&fm_lines)), crlf },
            _ => {}
        }
        text += &join(&above);
        match h1 {
            1 => text += &format!("# Title{nl}"),
            2 => return Note { text: text + "# Title", crlf },
            _ => {}
        }
        text += &body.join(nl);
        if final_nl && !body.is_empty() {
            text += nl;
        }
        Note { text, crlf }
    })
}

/// A provider's output: lines joined by LF or CRLF, with or without a final newline.
fn output() -> impl Strategy<Value = String> {
    (prop::collection::vec((line(), any::<bool>()), 0..8), any::<bool>()).prop_map(|(lines, last)| {
        let mut out = String::new();
        for (i, (l, crlf)) in lines.iter().enumerate() {
            out += l;
            if i + 1 < lines.len() || last {
                out += if *crlf { "\r\n" } else { "\n" };
            }
        }
        out
    })
}

fn content_lines(s: &str) -> Vec<&str> {
    s.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

fn blank_first(s: &str) -> bool {
    !s.is_empty() && s.split('\n').next().unwrap_or_default().trim().is_empty()
}

fn has_h1(text: &str) -> bool {
    let start = locate(text).map_or(bom_len(text), |fm| fm.body_start());
    h1_line(text, start).is_some()
}

fn edits_are_ordered(edits: &[TextEdit], region: &Range<usize>) -> Result<(), TestCaseError> {
    for e in edits {
        prop_assert!(region.start <= e.range.start && e.range.end <= region.end, "{e:?} outside {region:?}");
    }
    for w in edits.windows(2) {
        // Runs of changes are separated by at least one unchanged line.
        prop_assert!(w[0].range.end < w[1].range.start, "{:?} and {:?} touch", w[0], w[1]);
    }
    Ok(())
}

/// Text made of the tokens that matter to the rules, for the never-panics property.
fn soup() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "---", "...", "\n", "\r\n", "\r", "# ", "#", "a", "b", " ", "é", "\u{feff}", "```", ":", "- x\n",
    ]);
    prop::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

proptest! {
    #[test]
    fn replace_keeps_the_rest_and_writes_the_output(note in note(), output in output()) {
        let text = &note.text;
        let region = agent_region(text);
        let edits = replace_region_edits(text, &output);
        edits_are_ordered(&edits, &region)?;
        let out = apply(text, &edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if locate(text).is_some_and(|fm| fm.close.is_none()) {
            prop_assert!(edits.is_empty());
            return Ok(());
        }
        // Frontmatter, text above the H1 and the H1 itself are byte-identical.
        prop_assert!(out.starts_with(&text[..region.start]));
        // A note without any line break has no convention of its own: LF.
        let nl = if note.crlf && text.contains('\n') { "\r\n" } else { "\n" };
        let body = &text[region.clone()];
        // The output less the leading lines that repeat the note's H1.
        let mut new = output.as_str();
        let start = locate(text).map_or(bom_len(text), |fm| fm.body_start());
        if let Some(own) = title(text, start).filter(|t| first_line_title(body) != Some(*t)) {
            while first_line_title(new) == Some(own) {
                new = &new[new.find('\n').map_or(new.len(), |i| i + 1)..];
            }
        }
        let mut tail = &out[region.start..];
        let needs_break = body.is_empty() && !text.is_empty() && !text.ends_with('\n') && text != "\u{feff}";
        if needs_break && !new.is_empty() {
            prop_assert!(tail.starts_with(nl), "no line break before the content: {tail:?}");
            tail = &tail[nl.len()..];
        }
        if has_h1(text) {
            prop_assert_eq!(agent_region(&out).start, out.len() - tail.len());
        }
        // Every line ending is the note's.
        prop_assert_eq!(tail.matches('\n').count(), tail.matches(nl).count());
        if nl == "\n" {
            prop_assert!(!tail.contains('\r'));
        }
        // Modulo line endings, the region is the output, plus the blank line under the H1
        // and the final newline the rules add.
        let mut want: Vec<&str> = Vec::new();
        if !new.is_empty() {
            let blank_region = body.is_empty() || blank_first(body);
            if has_h1(text) && blank_region && !blank_first(new) {
                want.push("");
            }
            want.extend(content_lines(new));
            let final_nl = if body.is_empty() { !needs_break } else { body.ends_with('\n') };
            if final_nl && !new.ends_with('\n') {
                want.push("");
            }
        }
        let got = if tail.is_empty() { Vec::new() } else { content_lines(tail) };
        prop_assert_eq!(got, want);
        // Writing the same output again changes nothing (unless it brought the first H1).
        if agent_region(&out).start == out.len() - tail.len() {
            prop_assert_eq!(replace_region_edits(&out, &output), vec![]);
        }
        prop_assert_eq!(replace_region_edits(text, &text[region]), vec![]);
    }

    #[test]
    fn unchanged_blocks_are_never_edited(
        a in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
        a2 in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
        c in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
        c2 in prop::collection::vec(prop::sample::select(&LINES[..]), 0..5),
    ) {
        let lines = |v: &[&str]| v.iter().map(|l| format!("{l}\n")).collect::<String>();
        // Longer than `a` and `c` together, so a minimal diff keeps all of it.
        let block: String = (0..12).map(|i| format!("keep{i}\n")).collect();
        let text = format!("# T\n\n{}{block}{}", lines(&a), lines(&c));
        let new = format!("\n{}{block}{}", lines(&a2), lines(&c2));
        let start = 5 + lines(&a).len();
        let inner = start + "keep0\n".len()..start + block.len() - "keep11\n".len();
        let edits = replace_region_edits(&text, &new);
        edits_are_ordered(&edits, &agent_region(&text))?;
        for e in &edits {
            prop_assert!(e.range.end <= inner.start || e.range.start >= inner.end, "{e:?} inside the block");
        }
        prop_assert_eq!(applied(&text, &edits), format!("# T\n{new}"));
    }

    #[test]
    fn user_edits_outside_the_region_never_conflict(
        note in note_with(Just(1)),
        new in output(),
        pick in any::<prop::sample::Index>(),
        word in "[a-z]{1,6}",
    ) {
        let text = &note.text;
        let nl = if note.crlf { "\r\n" } else { "\n" };
        let Some(fm) = locate(text) else { return Ok(()) };
        // Insertion points: a new line at any line start of the frontmatter's content or
        // above the H1, or letters at the end of a frontmatter line.
        let region = agent_region(text);
        let mut spots: Vec<(usize, String)> = Vec::new();
        let mut at = fm.content.start;
        for l in text[fm.content.clone()].split_inclusive('\n') {
            spots.push((at, format!("{word}: x{nl}")));
            let end = at + l.trim_end_matches(['\r', '\n']).len();
            spots.push((end, word.clone()));
            at += l.len();
        }
        spots.push((fm.content.end, format!("{word}: y{nl}")));
        if has_h1(text) {
            let mut at = fm.body_start();
            for l in text[fm.body_start()..region.start].split_inclusive('\n') {
                spots.push((at, format!("{word}{nl}")));
                at += l.len();
            }
        }
        let (at, insert) = pick.get(&spots).clone();
        let current = format!("{}{insert}{}", &text[..at], &text[at..]);
        prop_assert_eq!(&current[agent_region(&current)], &text[region.clone()]);

        let patch = Patch::compute(text, &new);
        for cur in [text.as_str(), current.as_str()] {
            let r = patch.apply_to(cur);
            prop_assert_eq!(r.conflicts, 0);
            prop_assert_eq!(&r.edits, &replace_region_edits(cur, &new));
            let out = apply(cur, &r.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let base_out = applied(text, &replace_region_edits(text, &new));
            let cur_region = agent_region(cur);
            prop_assert_eq!(&out[..cur_region.start], &cur[..cur_region.start]);
            prop_assert_eq!(&out[cur_region.start..], &base_out[region.start..]);
            // A retry on the result finds everything done.
            prop_assert_eq!(patch.apply_to(&out), PatchResult::default(), "{:?}", out);
        }
    }

    #[test]
    fn user_lines_in_the_region_are_never_overwritten(
        note in note(),
        new in output(),
        pick in any::<prop::sample::Index>(),
        append in any::<bool>(),
    ) {
        let text = &note.text;
        let region = agent_region(text);
        let nl = if note.crlf { "\r\n" } else { "\n" };
        // The user adds a line, or appends to one, somewhere in the region.
        let mut spots = vec![region.start];
        spots.extend(text[region.clone()].match_indices('\n').map(|(i, _)| region.start + i + 1));
        let at = *pick.get(&spots);
        let current = if append && at > region.start {
            let end = if text[..at - 1].ends_with('\r') { at - 2 } else { at - 1 };
            format!("{} USER{}", &text[..end], &text[end..])
        } else if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
            format!("{text}{nl}USER")
        } else {
            format!("{}USER{nl}{}", &text[..at], &text[at..])
        };
        let patch = Patch::compute(text, &new);
        let r = patch.apply_to(&current);
        edits_are_ordered(&r.edits, &agent_region(&current))?;
        let out = apply(&current, &r.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // A retry on the result may still find work where the user's edit broke a hunk's
        // context (it cannot always tell "to do" from "done" then), but never costs the
        // user's line either.
        let retry = patch.apply_to(&out);
        let again = apply(&out, &retry.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
        // A deleted blank line can join the user's line to a BOM; the line itself is intact.
        let current = current.replace('\u{feff}', "");
        let user_line = current.lines().find(|l| l.contains("USER")).unwrap_or_default();
        for out in [out, again] {
            let out = out.replace('\u{feff}', "");
            prop_assert!(out.lines().any(|l| l == user_line), "lost {user_line:?}:\n{out:?}");
        }
    }

    #[test]
    fn never_panics(base in soup(), new in soup(), splice in soup(), pick in any::<prop::sample::Index>()) {
        let region = agent_region(&base);
        prop_assert!(region.start <= region.end && region.end == base.len());
        prop_assert!(base.is_char_boundary(region.start));
        let edits = replace_region_edits(&base, &new);
        prop_assert!(apply(&base, &edits).is_ok());
        // The user typed anywhere, frontmatter and H1 included.
        let spots: Vec<usize> = (0..=base.len()).filter(|i| base.is_char_boundary(*i)).collect();
        let at = *pick.get(&spots);
        let current = format!("{}{splice}{}", &base[..at], &base[at..]);
        let r = Patch::compute(&base, &new).apply_to(&current);
        prop_assert!(r.conflicts <= Patch::compute(&base, &new).hunks().len());
        // Never in the frontmatter; below the H1 unless the base had none (then the agent
        // owned the whole body, whatever the user added since).
        let body_start = locate(&current).map_or(bom_len(&current), |fm| fm.body_start());
        let floor = if has_h1(&base) { agent_region(&current).start } else { body_start };
        for e in &r.edits {
            prop_assert!(floor <= e.range.start && e.range.end <= current.len(), "{e:?}");
        }
        prop_assert!(apply(&current, &r.edits).is_ok());
    }
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
