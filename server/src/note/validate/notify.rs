//! `notify`: one of `changes`, `failures`, `all` or `false`; anything else an error with the
//! value it most likely meant.

use super::*;
use crate::note::model::NotifyWhen;

impl Cx<'_> {
    /// `notify`: a value it cannot read is a warning, not an error: how the user is told is no
    /// reason to stop the note's runs, which go on under the default rule until it is fixed.
    pub(super) fn notify(&mut self, e: &Entry) -> Option<Spanned<NotifyWhen>> {
        let span = e.value.span.clone();
        let (found, meant) = match &e.value.kind {
            Kind::Scalar(Scalar::Null) => return None,
            Kind::Scalar(Scalar::Bool(false)) => return Some(Spanned { value: NotifyWhen::Never, span }),
            Kind::Scalar(Scalar::Str(s)) => {
                if let Some(value) = NotifyWhen::parse(s) {
                    return Some(Spanned { value, span });
                }
                (format!("{s:?}"), meant(s))
            }
            Kind::Scalar(Scalar::Bool(true)) => ("true".to_owned(), Some("all")),
            _ => (e.value.type_name().to_owned(), None),
        };
        let span = self.widen(span);
        let span = if span.is_empty() { e.key_span.clone() } else { span };
        let mut d = Diagnostic::warning(
            Code::InvalidNotify,
            span.clone(),
            format!(
                "`notify` is `changes` (a run changed the body), `failures`, `all` or `false`, found {found}{}; until it is fixed, only failures of scheduled and event runs are told",
                meant.map(|m| format!(" (did you mean `{m}`?)")).unwrap_or_default()
            ),
        );
        if let Some(m) = meant {
            d = d.with_fix(format!("Change to `{m}`"), vec![TextEdit::replace(span, m)], true);
        }
        self.push(d);
        None
    }
}

/// The value a string most likely meant: a near spelling, or a word for "never" or "always".
fn meant(written: &str) -> Option<&'static str> {
    let w = written.trim().to_ascii_lowercase();
    match w.as_str() {
        "no" | "off" | "none" | "never" | "n" | "false" | "disabled" => return Some("false"),
        "yes" | "on" | "always" | "every" | "true" | "everything" => return Some("all"),
        "change" | "changed" | "updates" | "updated" => return Some("changes"),
        "failure" | "failed" | "errors" | "error" => return Some("failures"),
        _ => {}
    }
    let names = NotifyWhen::CHOICES.iter().map(|(v, _)| *v).filter(|v| *v != "false");
    crate::text::words::closest(&w, names, crate::text::words::typo_budget(&w))
}
