//! `maxChars`: a whole number above zero, and the warning on a body over it.

use super::*;

impl Cx<'_> {
    /// `maxChars`: anything but a positive integer is an error (a budget is not guessed, and a
    /// note with a broken one does not run: its edits would have no bound the user set).
    pub(super) fn max_chars(&mut self, e: &Entry) -> Option<Spanned<usize>> {
        let found = match &e.value.kind {
            Kind::Scalar(Scalar::Null) => return None,
            Kind::Scalar(Scalar::Int(n)) if *n > 0 => {
                return Some(Spanned {
                    value: usize::try_from(*n).unwrap_or(usize::MAX),
                    span: e.value.span.clone(),
                });
            }
            Kind::Scalar(Scalar::Int(n)) => n.to_string(),
            Kind::Scalar(Scalar::Str(s)) => format!("the string {s:?}"),
            _ => e.value.type_name().to_owned(),
        };
        let span = self.widen(e.value.span.clone());
        let span = if span.is_empty() { e.key_span.clone() } else { span };
        let mut d = Diagnostic::error(
            Code::InvalidMaxChars,
            span.clone(),
            format!("`maxChars` must be a whole number of characters above zero, like 4000, found {found}"),
        );
        // "4,000" or "4000" in quotes: the number is clear.
        if let Kind::Scalar(Scalar::Str(s)) = &e.value.kind
            && let Ok(n) = s.trim().replace([',', '_'], "").parse::<u64>()
            && n > 0
        {
            d = d.with_fix(format!("Change to {n}"), vec![TextEdit::replace(span, n.to_string())], true);
        }
        self.push(d);
        None
    }
}

/// `live/over-budget` on `maxChars` when the body below the frontmatter of `text` is longer.
pub(super) fn over_budget(text: &str, live: &Live) -> Option<Diagnostic> {
    let max = live.max_chars.as_ref()?;
    let size = crate::note::budget::body_chars(text);
    if size <= max.value {
        return None;
    }
    use crate::note::budget::grouped;
    Some(Diagnostic::warning(
        Code::OverBudget,
        max.span.clone(),
        format!(
            "the body is {} characters, over its budget of {} by {}: runs may only shrink it until it fits; trim older sections or raise `maxChars`",
            grouped(size),
            grouped(max.value),
            grouped(size - max.value)
        ),
    ))
}
