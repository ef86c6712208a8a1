//! The diagnostics that depend on the instant, not only on the text: `live/expired` once
//! `until` has passed. [`super::analyze`] stays a function of the text alone (its result is
//! cached per version); every surface that shows diagnostics adds these at its own clock's
//! instant (the language server at publish and pull time, again when an open note crosses its
//! `until`; `livenote check` at the system clock's).

use chrono::{DateTime, Months, NaiveDate, TimeDelta, TimeZone, Utc};

use super::diagnostic::{Code, Diagnostic, Severity};
use super::model::Live;
use super::rewrite;
use super::validate::Analysis;
use crate::schedule::Until;

/// The diagnostics of a note's `live` block (read from `text`) that hold at `now` in `tz`.
pub fn diagnostics<Tz: TimeZone>(
    text: &str,
    live: Option<&Live>,
    now: DateTime<Utc>,
    tz: &Tz,
) -> Vec<Diagnostic> {
    live.and_then(|live| expired(text, live, now, tz)).into_iter().collect()
}

/// The diagnostics of `analysis` followed by those that hold at `now`: what a surface shows.
pub fn with_timed<Tz: TimeZone>(
    text: &str,
    analysis: &Analysis,
    now: DateTime<Utc>,
    tz: &Tz,
) -> Vec<Diagnostic> {
    let mut all = analysis.diagnostics.clone();
    all.extend(diagnostics(text, analysis.live.as_ref(), now, tz));
    all
}

/// `live/expired` on `until`'s value, with quick fixes that extend it by a week or a month
/// from today (as a date: the note then runs through that day) or remove it.
fn expired<Tz: TimeZone>(text: &str, live: &Live, now: DateTime<Utc>, tz: &Tz) -> Option<Diagnostic> {
    let until = live.until.as_ref().filter(|u| u.value.passed(now, tz))?;
    let when = match until.value {
        Until::Date(d) => format!("on {}", d.format("%a %-d %b %Y")),
        Until::Instant(t) => format!("at {}", t.with_timezone(tz).naive_local().format("%a %-d %b %Y %H:%M")),
    };
    let mut d = Diagnostic::new(
        Code::Expired,
        Severity::Info,
        until.span.clone(),
        format!(
            "this note expired: `until` passed {when}; nothing fires on schedule or on events (a run by hand still works)"
        ),
    );
    let today = now.with_timezone(tz).date_naive();
    let written = text.get(until.span.clone()).unwrap_or_default();
    let extensions: [(&str, Option<NaiveDate>); 2] = [
        ("a week", today.checked_add_signed(TimeDelta::days(7))),
        ("a month", today.checked_add_months(Months::new(1))),
    ];
    for (span, day) in extensions {
        let Some(day) = day else { continue };
        let value = requote(written, &day.format("%Y-%m-%d").to_string());
        if let Ok(edits) = rewrite::replace_value(text, until.span.start, &value) {
            d = d.with_fix(
                format!("Extend until {} ({span} from today)", day.format("%Y-%m-%d")),
                edits,
                false,
            );
        }
    }
    if let Ok(edits) = rewrite::remove_entry(text, until.span.start) {
        d = d.with_fix("Remove `until`", edits, false);
    }
    Some(d)
}

/// `new` in the quotes `written` uses, if any.
fn requote(written: &str, new: &str) -> String {
    match written.chars().next() {
        Some(q @ ('"' | '\'')) => format!("{q}{new}{q}"),
        _ => new.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;
    use crate::note::{Options, analyze};

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|t| t.to_utc()).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn check(text: &str, now: &str, want: Expect) {
        let analysis = analyze(text, &Options::default());
        let tz = chrono_tz::America::Chicago;
        let mut out = String::new();
        for d in diagnostics(text, analysis.live.as_ref(), t(now), &tz) {
            out.push_str(&format!(
                "{:?} {} {:?} {}\n",
                d.range,
                d.severity.as_str(),
                d.code.as_str(),
                d.message
            ));
            for f in &d.fixes {
                let fixed = crate::text::edit::apply(text, &f.edits).unwrap_or_else(|e| panic!("{e:?}"));
                out.push_str(&format!("  fix: {}\n{}", f.title, fixed));
            }
        }
        want.assert_eq(&out);
    }

    #[test]
    fn nothing_before_the_end_of_the_day() {
        let note = "---\nlive:\n  objective: x\n  until: 2026-11-24\n---\n";
        // 23:59 in Chicago on the 24th.
        check(note, "2026-11-25T05:59:00Z", expect![""]);
        check("---\nlive:\n  objective: x\n---\n", "2030-01-01T00:00:00Z", expect![""]);
    }

    #[test]
    fn expired_with_fixes_that_keep_quotes_and_comments() {
        let note =
            "---\nlive:\n  objective: x\n  until: '2026-11-24' # conference\n  active: true\n---\n# T\n";
        check(
            note,
            "2026-11-25T06:00:00Z",
            expect![[r#"
                34..46 info "live/expired" this note expired: `until` passed on Tue 24 Nov 2026; nothing fires on schedule or on events (a run by hand still works)
                  fix: Extend until 2026-12-02 (a week from today)
                ---
                live:
                  objective: x
                  until: '2026-12-02' # conference
                  active: true
                ---
                # T
                  fix: Extend until 2026-12-25 (a month from today)
                ---
                live:
                  objective: x
                  until: '2026-12-25' # conference
                  active: true
                ---
                # T
                  fix: Remove `until`
                ---
                live:
                  objective: x
                  active: true
                ---
                # T
            "#]],
        );
    }

    #[test]
    fn an_instant_is_named_in_local_time() {
        let note = "---\nlive:\n  objective: x\n  until: \"2026-11-24T18:00:00Z\"\n---\n";
        check(
            note,
            "2026-11-24T18:00:00Z",
            expect![[r#"
                34..56 info "live/expired" this note expired: `until` passed at Tue 24 Nov 2026 12:00; nothing fires on schedule or on events (a run by hand still works)
                  fix: Extend until 2026-12-01 (a week from today)
                ---
                live:
                  objective: x
                  until: "2026-12-01"
                ---
                  fix: Extend until 2026-12-24 (a month from today)
                ---
                live:
                  objective: x
                  until: "2026-12-24"
                ---
                  fix: Remove `until`
                ---
                live:
                  objective: x
                ---
            "#]],
        );
    }
}
