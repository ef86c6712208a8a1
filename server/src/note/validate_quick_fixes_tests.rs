use proptest::prelude::*;

use super::super::{Options, analyze};
use crate::text::edit;

/// A frontmatter with the user's own keys, comments and quoting styles around a `live:`
/// block carrying mistakes that have quick fixes.
fn note() -> impl Strategy<Value = String> {
    let comment = prop_oneof![Just(""), Just("  # why not"), Just(" #c")];
    let quote = prop_oneof![Just("\""), Just("'"), Just("")];
    (
        comment.clone(),
        quote.clone(),
        quote,
        any::<bool>(),
        prop::sample::subsequence(vec![0usize, 1, 2, 3, 4, 5], 1..=6),
        "[a-z]{1,8}",
    )
        .prop_map(|(c, q1, q2, crlf, mistakes, user)| {
            let mut lines =
                vec![format!("{user}: 'x: y'{c}"), "# user comment".to_owned(), "live:".to_owned()];
            lines.push(format!("  objective: {q1}Keep it{q1}{c}"));
            if mistakes.contains(&5) {
                lines.push(format!("  cron: {q2}0 7 * * *{q2}{c}"));
            }
            for m in &mistakes {
                match m {
                    0 => lines.push(format!("  active: {q2}yes{q2}{c}")),
                    1 => lines.push(format!("  instructions: x{c}")),
                    2 => lines.push("  triggers:".to_owned()),
                    _ => {}
                }
            }
            if !mistakes.contains(&2) {
                lines.push("  triggers:".to_owned());
            }
            if mistakes.contains(&3) {
                lines.push(format!("    cron: {q1}0 9 * * *{q1}{c}"));
                lines.push("    once:".to_owned());
                lines.push("      runAt: \"2026-04-14T09:00:00\"".to_owned());
            }
            lines.push("    windows:".to_owned());
            if mistakes.contains(&4) {
                lines.push(format!("      - startTime: {q2}9:00{q2}{c}"));
                lines.push("        endTime: \"10:00\"".to_owned());
            }
            lines.push(format!("      - startTime: {q1}22:00{q1}"));
            lines.push(format!("        endTime: {q1}02:00{q1}{c}"));
            lines.push(format!("tail: {q2}z{q2}"));
            let nl = if crlf { "\r\n" } else { "\n" };
            format!("---{nl}{}{nl}---{nl}# Body{nl}text{nl}", lines.join(nl))
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn fixes_touch_only_their_lines_and_resolve_their_diagnostic(text in note()) {
        let a = analyze(&text, &Options { providers: None, mcp: None, skills: None, scan_body: true, max_backoff: None });
        prop_assert!(a.diagnostics.iter().any(|d| !d.fixes.is_empty()));
        for d in &a.diagnostics {
            for f in &d.fixes {
                let after = edit::apply(&text, &f.edits).map_err(|e| TestCaseError::fail(e.to_string()))?;
                // Everything before the first edited line and after the last is unchanged.
                let first = f.edits.iter().map(|e| e.range.start).min().unwrap_or(0);
                let last = f.edits.iter().map(|e| e.range.end).max().unwrap_or(0);
                let line_start = text[..first].rfind('\n').map_or(0, |i| i + 1);
                let line_end = text[last..].find('\n').map_or(text.len(), |i| last + i + 1);
                prop_assert_eq!(&after[..line_start], &text[..line_start]);
                let tail = &text[line_end..];
                prop_assert!(after.ends_with(tail), "fix {:?} changed text after its lines", f.title);
                // The fixed note has one diagnostic of that code fewer.
                let b = analyze(&after, &Options { providers: None, mcp: None, skills: None, scan_body: true, max_backoff: None });
                let count = |x: &super::super::Analysis| x.diagnostics.iter().filter(|y| y.code == d.code).count();
                prop_assert!(count(&b) < count(&a), "fix {:?} did not resolve {:?}:\n{}", f.title, d.code, after);
                prop_assert!(!b.diagnostics.iter().any(|y| y.code == super::super::Code::YamlSyntax), "{}", after);
            }
        }
    }
}
