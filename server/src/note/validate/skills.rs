//! `skills:` a list of skill names, each checked against the known skills when analysis has
//! them (`live/unknown-skill`, with the closest names and a fix to use the nearest).

use super::*;

impl Cx<'_> {
    /// `skills`: a list of names; `None` when absent (or null).
    pub(super) fn skills(&mut self, e: &Entry, opts: &Options) -> Option<Vec<Spanned<String>>> {
        let entries = self.name_list(
            e,
            "a list of skill names, like [weekly-digest]",
            "name a skill (`livenote skills` lists them)",
            "a skill name, as text",
        )?;
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
