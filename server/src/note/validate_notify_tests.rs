use super::*;

#[test]
fn notify_takes_one_of_four_values() {
    for v in ["changes", "failures", "all", "false", "\"all\""] {
        check(
            &format!("---\nlive:\n  objective: y\n  notify: {v}\n---\n"),
            expect![[r#"
            live: has_errors=false
        "#]],
        );
    }
    check(
        "---\nlive:\n  objective: y\n  notify: chnages\n---\n",
        expect![[r#"
            4:11-4:18 warning live/invalid-notify `notify` is `changes` (a run changed the body), `failures`, `all` or `false`, found "chnages" (did you mean `changes`?); until it is fixed, only failures of scheduled and event runs are told
              fix*: Change to `changes`
            live: has_errors=false
        "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  notify: true\n---\n",
        expect![[r#"
            4:11-4:15 warning live/invalid-notify `notify` is `changes` (a run changed the body), `failures`, `all` or `false`, found true (did you mean `all`?); until it is fixed, only failures of scheduled and event runs are told
              fix*: Change to `all`
            live: has_errors=false
        "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  notify: [all]\n---\n",
        expect![[r#"
            4:11-4:16 warning live/invalid-notify `notify` is `changes` (a run changed the body), `failures`, `all` or `false`, found a list; until it is fixed, only failures of scheduled and event runs are told
            live: has_errors=false
        "#]],
    );
    check_fix(
        "---\nlive:\n  objective: y\n  notify: never\n---\n",
        "Change to `false`",
        expect![[r#"
        ---
        live:
          objective: y
          notify: false
        ---
    "#]],
    );
    check_fix(
        "---\nlive:\n  objective: y\n  notifications: all\n---\n",
        "Rename to `notify`",
        expect![[r#"
        ---
        live:
          objective: y
          notify: all
        ---
    "#]],
    );
}
