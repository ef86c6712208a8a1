use super::*;

const LIVE: &str = "---\ntags: [a] # mine\nlive:\n  objective: \"Weather in Lyon.\"\n  triggers:\n    cronExpr: \"0 8 * * *\"\n---\n# Weather\n\nSunny.\n";

fn after(text: &str, changes: &[Change]) -> Result<String, String> {
    checked(text, changes, &note::Options::default()).map(|(edits, after)| {
        assert_eq!(apply(text, &edits).ok().as_deref(), Some(after.as_str()), "one edit gives the result");
        after
    })
}

#[test]
fn extending_keeps_every_word_and_adds_the_new_ones_after_them() {
    let out = after(LIVE, &[Change::ExtendObjective("Also the pollen count.".into())]);
    assert_eq!(
        out.as_deref(),
        Ok(LIVE.replace("\"Weather in Lyon.\"", "\"Weather in Lyon. Also the pollen count.\"").as_str())
    );
    // Said already: nothing changes.
    assert_eq!(after(LIVE, &[Change::ExtendObjective("weather in lyon".into())]).as_deref(), Ok(LIVE));
}

#[test]
fn make_live_on_a_live_note_extends_rather_than_replaces() {
    let change = Change::MakeLive { objective: "The UV index.".into(), triggers: TriggerEdits::default() };
    let out = after(LIVE, &[change]).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("objective: \"Weather in Lyon. The UV index.\""), "{out}");
    assert!(out.contains("cronExpr: \"0 8 * * *\""), "{out}");
}

#[test]
fn triggers_change_in_place_and_an_invalid_one_is_refused() {
    let weekdays = TriggerEdits { cron_expr: Some("0 9 * * 1-5".into()), ..TriggerEdits::default() };
    let out = after(LIVE, &[Change::SetTriggers(weekdays)]);
    assert_eq!(out.as_deref(), Ok(LIVE.replace("0 8 * * *", "0 9 * * 1-5").as_str()));
    let bad = TriggerEdits { cron_expr: Some("0 25 * * *".into()), ..TriggerEdits::default() };
    let err = after(LIVE, &[Change::SetActive(false), Change::SetTriggers(bad)]);
    assert!(
        err.as_ref().is_err_and(|e| e.starts_with("refused, nothing was written") && e.contains("live/")),
        "{err:?}"
    );
    let none = after(LIVE, &[Change::SetTriggers(TriggerEdits::default())]);
    assert!(none.is_err(), "{none:?}");
}

#[test]
fn a_note_with_an_error_already_can_still_be_paused() {
    let broken = LIVE.replace("0 8 * * *", "0 25 * * *");
    let out = after(&broken, &[Change::SetActive(false)]).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("active: false"), "{out}");
}

#[test]
fn passive_notes_refuse_block_changes() {
    let passive = "# Plain\n";
    for change in [Change::ExtendObjective("x".into()), Change::SetActive(true), Change::MakePassive] {
        assert_eq!(
            after(passive, &[change]),
            Err("this note is not live (it has no `live:` block)".to_owned())
        );
    }
    let made = after(
        passive,
        &[Change::MakeLive { objective: "Plain things.".into(), triggers: TriggerEdits::default() }],
    );
    assert_eq!(made.as_deref(), Ok("---\nlive:\n  objective: \"Plain things.\"\n---\n# Plain\n"));
}

#[test]
fn the_whole_edit_is_the_changed_span_only() {
    assert_eq!(whole_edit("abc", "abc"), Vec::new());
    assert_eq!(whole_edit("a1c", "a22c"), vec![TextEdit::replace(1..2, "22")]);
    assert_eq!(whole_edit("aaa", "aaaa"), vec![TextEdit::replace(3..3, "a")]);
    // Never inside a character.
    let e = whole_edit("xé", "xè");
    assert_eq!(apply("xé", &e).ok().as_deref(), Some("xè"));
}

proptest::proptest! {
    /// One edit from any text to any other gives the other, and touches no byte both share at
    /// their start or end.
    #[test]
    fn the_whole_edit_takes_any_text_to_any_other(before in "[aé\n-]{0,12}", after in "[aé\n-]{0,12}") {
        let edits = whole_edit(&before, &after);
        proptest::prop_assert_eq!(apply(&before, &edits).ok(), Some(after.clone()));
        proptest::prop_assert!(edits.len() <= 1);
        if let Some(e) = edits.first() {
            proptest::prop_assert!(before.starts_with(&before[..e.range.start]) && after.starts_with(&before[..e.range.start]));
            proptest::prop_assert!(after.ends_with(&before[e.range.end..]));
        }
    }
}
