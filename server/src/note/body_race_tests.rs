use super::*;

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
