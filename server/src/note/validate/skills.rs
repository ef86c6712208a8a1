//! `skills:` a list of skill names, each checked against the known skills when analysis has
//! them (`live/unknown-skill`, with the closest names and a fix to use the nearest).

use super::*;

impl Cx<'_> {
    /// `skills`: a list of names; `None` when absent (or null).
    pub(super) fn skills(&mut self, e: &Entry, opts: &Options) -> Option<Vec<Spanned<String>>> {
        let items = match &e.value.kind {
            Kind::Seq(items) => items,
            Kind::Scalar(Scalar::Null) => return None,
            _ => {
                self.wrong_type("skills", &e.value, "a list of skill names, like [weekly-digest]");
                return None;
            }
        };
        let mut entries = Vec::with_capacity(items.len());
        for item in items {
            match &item.kind {
                Kind::Scalar(Scalar::Str(s)) if !s.trim().is_empty() => {
                    entries.push(Spanned { value: s.trim().to_owned(), span: item.span.clone() });
                }
                Kind::Scalar(Scalar::Str(_) | Scalar::Null) => {
                    let span = self.widen(item.span.clone());
                    let span = if span.is_empty() { e.key_span.clone() } else { span };
                    self.push(Diagnostic::error(
                        Code::EmptyValue,
                        span,
                        "an entry of `skills` is empty: name a skill (`livenote skills` lists them)",
                    ));
                }
                _ => self.wrong_type("skills", item, "a skill name, as text"),
            }
        }
        if let Some(catalog) = opts.skills {
            for entry in &entries {
                self.check_skill(entry, catalog);
            }
        }
        Some(entries)
    }

    fn check_skill(&mut self, entry: &Spanned<String>, catalog: &crate::note::skills::SkillCatalog) {
        if catalog.get(&entry.value).is_some() {
            return;
        }
        let span = self.widen(entry.span.clone());
        let near = catalog.closest(&entry.value, 3);
        let hint = if catalog.skills.is_empty() {
            "no skill is defined".to_owned()
        } else if near.is_empty() {
            "`livenote skills` lists them".to_owned()
        } else {
            let list: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
            format!("did you mean {}?", list.join(", "))
        };
        let mut d = Diagnostic::warning(
            Code::UnknownSkill,
            span.clone(),
            format!(
                "no skill named `{}` ({hint}); skills live in the workspace's skills/ folder, ~/.config/livenote/skills/ or livenote itself",
                entry.value
            ),
        );
        for (i, n) in near.iter().enumerate() {
            d = d.with_fix(
                format!("Use skill `{n}`"),
                vec![TextEdit::replace(span.clone(), crate::note::tools::entry_yaml(n))],
                i == 0,
            );
        }
        self.push(d);
    }
}
