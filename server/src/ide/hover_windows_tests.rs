use super::*;

#[test]
fn windows() {
    let w =
        |start: &str, end: &str| format!("windows:\n  - startTime: \"{start}\"\n    endTime: \"{end}$0\"");
    // Now is 09:07 in Chicago.
    check(
        &note(&w("09:00", "12:00"), ""),
        expect![[r#"
            "12:00"
            ~~~~
            **09:00–12:00** local, once a day

            Due now.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("09:00", "12:00"), "  lastRunAt: \"2026-11-23T15:02:00Z\"\n"),
        expect![[r#"
            "12:00"
            ~~~~
            **09:00–12:00** local, once a day

            Done today (last run 5 min ago).

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("09:00", "12:00"), "  lastRunAt: \"2026-11-23T15:00:00Z\"\n"),
        expect![[r#"
            "12:00"
            ~~~~
            **09:00–12:00** local, once a day

            Due now.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(
            &w("09:00", "12:00"),
            "  lastAttemptAt: \"2026-11-23T15:05:00Z\"\n  lastRunError: \"timeout\"\n",
        ),
        expect![[r#"
            "12:00"
            ~~~~
            **09:00–12:00** local, once a day

            Due in 3 min (backoff after a run that did not succeed).

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("09:00", "09:08"), "  lastAttemptAt: \"2026-11-23T15:05:00Z\"\n"),
        expect![[r#"
            "09:08"
            ~~~~
            **09:00–09:08** local, once a day

            Missed today: the backoff outlasts the band.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("06:00", "08:00"), "  lastRunAt: \"2026-11-23T13:30:00Z\"\n"),
        expect![[r#"
            "08:00"
            ~~~~
            **06:00–08:00** local, once a day

            Done today (last run 1 h ago).

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("06:00", "08:00"), "  lastRunAt: \"2026-11-23T15:02:00Z\"\n"),
        expect![[r#"
            "08:00"
            ~~~~
            **06:00–08:00** local, once a day

            Closed today; opens again tomorrow at 06:00.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("09:00", "12:00"), "  active: 3\n"),
        expect![[r#"
            "12:00"
            ~~~~
            **09:00–12:00** local, once a day

            Nothing fires until the errors are fixed.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("13:00", "15:00"), ""),
        expect![[r#"
            "15:00"
            ~~~~
            **13:00–15:00** local, once a day

            Opens at 13:00.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("06:00", "08:00"), "  active: false\n"),
        expect![[r#"
            "08:00"
            ~~~~
            **06:00–08:00** local, once a day

            Paused: nothing fires on schedule.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("09:07", "09:07"), ""),
        expect![[r#"
            "09:07"
            ~~~~
            **09:07** local, a one-minute band, once a day

            Due now.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("12:00", "08:00"), ""),
        expect![[r#"
            "08:00"
            ~~~~
            **12:00–08:00** ends before it starts. Windows cannot cross midnight, so this one never fires; split it into 12:00–23:59 and 00:00–08:00.

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note(&w("9:00", "12:00"), ""),
        expect![[r#"
            "12:00"
            ~~~~
            `startTime`: write the hour with two digits: "09:00"

            ---

            `live.triggers.windows[].endTime` · HH:MM local time, required

            End of the band, 24-hour `HH:MM`, not before `startTime`; the end minute is inside the band.
        "#]],
    );
    check(
        &note("windows:\n  - startTime$0: \"09:00\"", ""),
        expect![[r#"
            startTime
            ~~~~
            A window needs both `startTime` and `endTime`.

            ---

            `live.triggers.windows[].startTime` · HH:MM local time, required

            Start of the band, 24-hour `HH:MM` local time.
        "#]],
    );
    // Any key or value of the item shows its window.
    check(
        &note(
            "windows:\n  - startTime: \"06:00\"\n    endTime: \"07:00\"\n  - start$0Time: \"13:00\"\n    endTime: \"15:00\"",
            "",
        ),
        expect![[r#"
                startTime
                ~~~~
                **13:00–15:00** local, once a day

                Opens at 13:00.

                ---

                `live.triggers.windows[].startTime` · HH:MM local time, required

                Start of the band, 24-hour `HH:MM` local time.
            "#]],
    );
    // The `windows` key lists every window.
    check(
        &note(
            "win$0dows:\n  - startTime: \"06:00\"\n    endTime: \"07:00\"\n  - startTime: \"09:00\"\n    endTime: \"12:00\"",
            "",
        ),
        expect![[r#"
                windows
                ~~~~
                `live.triggers.windows` · list of daily time windows

                Time-of-day bands; each fires at most once a day, as soon as possible inside its band.

                ---

                - 06:00–07:00: closed today; opens again tomorrow at 06:00
                - 09:00–12:00: due now
            "#]],
    );
}
