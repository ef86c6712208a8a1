use proptest::prelude::*;

use super::super::{Options, analyze};
use crate::note::outline::Outline;
use crate::text::{Encoding, LineIndex};

/// Lines that look like frontmatter, so the generator reaches deep into the validator
/// instead of stopping at the first syntax error.
fn yamlish_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("---".to_owned()),
        Just("...".to_owned()),
        Just("live:".to_owned()),
        Just("  objective: |".to_owned()),
        Just("  triggers:".to_owned()),
        Just("    windows:".to_owned()),
        Just("      - startTime: \"09:00\"".to_owned()),
        Just("        endTime: 08:00".to_owned()),
        Just("    cronExpr: \"*/2 * * * *\"".to_owned()),
        Just("  active: yes".to_owned()),
        Just("  lastRunAt: \"2026-05-08T15:00:01Z\"".to_owned()),
        Just("a: &x [1, *x]".to_owned()),
        Just("```track".to_owned()),
        Just("```".to_owned()),
        "[ -~]{0,30}",
        "\\PC{0,12}",
        (0usize..8, "[a-zA-Z_]{1,12}", "[ -~]{0,20}")
            .prop_map(|(n, k, v)| format!("{}{k}: {v}", " ".repeat(n))),
    ]
}

fn note() -> impl Strategy<Value = String> {
    (prop::collection::vec(yamlish_line(), 0..30), any::<bool>(), any::<bool>()).prop_map(
        |(lines, crlf, bom)| {
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut s = if bom { "\u{feff}".to_owned() } else { String::new() };
            s.push_str(&lines.join(nl));
            s
        },
    )
}

fn exercise(text: &str) {
    let providers = ["local".to_owned()];
    let a = analyze(
        text,
        &Options { providers: Some(&providers), mcp: None, skills: None, scan_body: true, max_backoff: None },
    );
    let idx = LineIndex::new(text);
    for d in &a.diagnostics {
        assert!(d.range.start <= d.range.end && d.range.end <= text.len(), "{d:?}");
        assert!(text.is_char_boundary(d.range.start) && text.is_char_boundary(d.range.end), "{d:?}");
        let _ = idx.position(text, d.range.end, Encoding::Utf16);
        for f in &d.fixes {
            // Every fix applies cleanly.
            crate::text::edit::apply(text, &f.edits).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        }
    }
    if let Some(fm) = &a.frontmatter {
        let o = Outline::parse(text, fm.content.clone());
        for i in 0..o.lines.len() {
            let _ = (o.extent(i), o.children(i), o.parents_at(i, 4));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn on_arbitrary_text(text in "\\PC{0,200}") {
        exercise(&text);
        exercise(&format!("---\n{text}\n---\n"));
    }

    #[test]
    fn on_frontmatter_shaped_text(text in note()) {
        exercise(&text);
        exercise(&format!("---\n{text}"));
    }
}
