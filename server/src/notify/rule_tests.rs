use std::path::PathBuf;

use expect_test::expect;

use super::*;

fn entry(title: &str, outcome: Outcome, added: usize, removed: usize) -> Entry {
    Entry {
        path: PathBuf::from(format!("/notes/{title}.md")),
        title: title.to_owned(),
        trigger: TriggerKind::Cron,
        outcome,
        summary: "Rain after six; the error text when it failed".to_owned(),
        added,
        removed,
        run_id: "01J0000000000000000000000".to_owned(),
    }
}

#[test]
fn the_rule_per_trigger_and_outcome() {
    use NotifyWhen::*;
    use Outcome::*;
    let triggers = [TriggerKind::Cron, TriggerKind::Window, TriggerKind::Event, TriggerKind::Manual];
    let mut table = String::new();
    for rule in [None, Some(Changes), Some(Failures), Some(All), Some(Never)] {
        for outcome in [Changed, Unchanged, Failed] {
            let cells: Vec<&str> =
                triggers.iter().map(|t| if told(rule, *t, outcome) { "told" } else { "-" }).collect();
            table.push_str(&format!(
                "{:<8} {:<9} {}\n",
                rule.map_or("absent", NotifyWhen::as_str),
                outcome.as_str(),
                cells.join(" ")
            ));
        }
    }
    // Columns: cron, window, event, manual.
    expect![[r#"
        absent   changed   - - - -
        absent   unchanged - - - -
        absent   failed    told told told -
        changes  changed   told told told told
        changes  unchanged - - - -
        changes  failed    - - - -
        failures changed   - - - -
        failures unchanged - - - -
        failures failed    told told told told
        all      changed   told told told told
        all      unchanged told told told told
        all      failed    told told told told
        false    changed   - - - -
        false    unchanged - - - -
        false    failed    - - - -
    "#]]
    .assert_eq(&table);
}

#[test]
fn triggers_are_named_as_the_contract_names_them() {
    assert_eq!(trigger_name(TriggerKind::Cron), "schedule");
    assert_eq!(trigger_name(TriggerKind::Window), "schedule");
    assert_eq!(trigger_name(TriggerKind::Event), "event");
    assert_eq!(trigger_name(TriggerKind::Manual), "manual");
}

#[test]
fn one_line_per_run_and_per_digest() {
    let lines: Vec<String> = [
        Notice::of(vec![entry("Weather", Outcome::Changed, 3, 0)]),
        Notice::of(vec![entry("Weather", Outcome::Changed, 1, 0)]),
        Notice::of(vec![entry("Weather", Outcome::Changed, 3, 1)]),
        Notice::of(vec![entry("Weather", Outcome::Changed, 0, 2)]),
        Notice::of(vec![entry("Weather", Outcome::Changed, 0, 0)]),
        Notice::of(vec![entry("Weather", Outcome::Unchanged, 0, 0)]),
        Notice::of(vec![entry("Weather", Outcome::Failed, 0, 0)]),
        Notice::of((0..5).map(|i| entry(&format!("N{i}"), Outcome::Changed, 1, 0)).collect()),
        Notice::of(vec![
            entry("A", Outcome::Changed, 1, 0),
            entry("B", Outcome::Failed, 0, 0),
            entry("C", Outcome::Changed, 1, 0),
        ]),
        Notice::of(vec![entry("A", Outcome::Failed, 0, 0), entry("B", Outcome::Failed, 0, 0)]),
        Notice::of(vec![entry("A", Outcome::Unchanged, 0, 0), entry("B", Outcome::Unchanged, 0, 0)]),
        // Two runs of one note in a minute: one note, two runs.
        Notice::of(vec![entry("A", Outcome::Changed, 1, 0), entry("A", Outcome::Changed, 2, 0)]),
    ]
    .iter()
    .map(|n| format!("{} | digest={} failed={}", n.message, n.digest, n.failed()))
    .collect();
    expect![[r#"
        Weather changed: 3 lines added | digest=false failed=false
        Weather changed: 1 line added | digest=false failed=false
        Weather changed: 3 lines added, 1 removed | digest=false failed=false
        Weather changed: 2 lines removed | digest=false failed=false
        Weather changed | digest=false failed=false
        Weather ran: nothing changed | digest=false failed=false
        Weather failed: Rain after six; the error text when it failed | digest=false failed=true
        5 notes changed | digest=true failed=false
        3 notes: 2 changed, 1 failed | digest=true failed=true
        2 notes failed | digest=true failed=true
        2 notes ran, nothing changed | digest=true failed=false
        1 note changed | digest=true failed=false"#]]
    .assert_eq(&lines.join("\n"));
}

#[test]
fn a_digest_body_lists_its_runs_and_a_long_one_the_rest_counted() {
    let notice = Notice::of((0..10).map(|i| entry(&format!("N{i}"), Outcome::Changed, 1, 0)).collect());
    expect![[r#"
        N0 changed: 1 line added
        N1 changed: 1 line added
        N2 changed: 1 line added
        N3 changed: 1 line added
        N4 changed: 1 line added
        N5 changed: 1 line added
        N6 changed: 1 line added
        N7 changed: 1 line added
        and 2 more"#]]
    .assert_eq(&notice.body());
    assert_eq!(
        Notice::of(vec![entry("W", Outcome::Changed, 1, 0)]).body(),
        "Rain after six; the error text when it failed"
    );
}
