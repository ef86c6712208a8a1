//! Skills as text: a skill is a markdown note whose frontmatter has a `name` and a
//! `description`; its body is the guidance. Here: reading those two fields (with where they
//! are written), the catalog of known skills analysis checks `live.skills` against, and the
//! diagnostics of a skill file. Pure: `skills` (the edge) reads the folders.

use std::ops::Range;

use super::diagnostic::{Code, Diagnostic};
use super::frontmatter;
use super::yaml::{self, Kind, Scalar};

/// Where a skill comes from; a workspace skill overrides a user's of the same name, which
/// overrides a built-in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    Workspace,
    User,
    BuiltIn,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Workspace => "workspace",
            Source::User => "user",
            Source::BuiltIn => "built-in",
        }
    }
}

/// A skill as analysis and the editor know it: no body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillInfo {
    pub name: String,
    pub description: String,
    pub source: Source,
    /// The file (absolute); `None` for a built-in skill.
    pub path: Option<std::path::PathBuf>,
}

/// The skills a note may name in `live.skills`: one per name, the winner of its precedence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillCatalog {
    pub skills: Vec<SkillInfo>,
}

impl SkillCatalog {
    pub fn get(&self, name: &str) -> Option<&SkillInfo> {
        self.skills.iter().find(|s| s.name == name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.skills.iter().map(|s| s.name.as_str())
    }

    /// The names close to `name` (one containing the other, or a few edits away), nearest
    /// first, at most `n`: "did you mean".
    pub fn closest(&self, name: &str, n: usize) -> Vec<&str> {
        let lower = name.to_lowercase();
        let budget = crate::text::words::typo_budget(name).max(name.chars().count() / 2);
        let near = self.names().filter(|k| {
            let kl = k.to_lowercase();
            kl.contains(&lower)
                || lower.contains(&kl)
                || crate::text::words::edit_distance(&lower, &kl) <= budget
        });
        closest_names(name, near, n)
    }
}

/// The `n` names of `names` nearest to `name` by edit distance (ties by name); those sharing
/// a prefix or containing it come first, so `digest` finds `weekly-digest`.
pub fn closest_names<'a>(name: &str, names: impl Iterator<Item = &'a str>, n: usize) -> Vec<&'a str> {
    let lower = name.to_lowercase();
    let mut all: Vec<(bool, usize, &str)> = names
        .map(|k| {
            let kl = k.to_lowercase();
            let related = !lower.is_empty() && (kl.contains(&lower) || lower.contains(&kl));
            (!related, crate::text::words::edit_distance(&lower, &kl), k)
        })
        .collect();
    all.sort();
    all.into_iter().take(n).map(|(_, _, k)| k).collect()
}

/// A text field of a skill's frontmatter, with the range of its value (or of its key when the
/// value is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub value: String,
    pub span: Range<usize>,
}

/// What a skill file says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// The frontmatter's opening line, when there is one (where "missing" is reported).
    pub open: Option<Range<usize>>,
    pub name: Option<Field>,
    pub description: Option<Field>,
    /// Where the body (the guidance) starts.
    pub body_start: usize,
    /// Whether the frontmatter could be read at all (closed, valid YAML, a mapping).
    pub readable: bool,
}

impl Head {
    /// A skill needs both fields, non-empty.
    pub fn is_skill(&self) -> bool {
        self.name.as_ref().is_some_and(|n| !n.value.is_empty())
            && self.description.as_ref().is_some_and(|d| !d.value.is_empty())
    }
}

/// Read `name` and `description` from a skill file's frontmatter.
pub fn head(text: &str) -> Head {
    let Some(fm) = frontmatter::locate(text) else { return Head::default() };
    let mut head = Head { open: Some(fm.open.clone()), body_start: fm.body_start(), ..Head::default() };
    if fm.close.is_none() {
        return head;
    }
    let Ok(Some(root)) = yaml::parse(text, fm.content.clone()) else { return head };
    if root.entries().is_none() {
        return head;
    }
    head.readable = true;
    let field = |key: &str| {
        let e = root.get(key)?;
        let value = match &e.value.kind {
            Kind::Scalar(Scalar::Str(s)) => s.trim().to_owned(),
            _ => String::new(),
        };
        let span = if value.is_empty() { e.key_span.clone() } else { e.value.span.clone() };
        Some(Field { value, span })
    };
    head.name = field("name");
    head.description = field("description");
    head
}

/// The body of a skill file: the text after its frontmatter, trimmed.
pub fn body(text: &str) -> &str {
    text[head_body_start(text)..].trim()
}

fn head_body_start(text: &str) -> usize {
    frontmatter::locate(text).map_or(0, |fm| fm.body_start())
}

/// The diagnostics of a skill file: a missing or empty `name` or `description`, and a name
/// another skill file of the workspace also uses (`duplicate_of`: that file, as shown).
pub fn file_diagnostics(text: &str, duplicate_of: Option<&str>) -> Vec<Diagnostic> {
    let h = head(text);
    let mut out = Vec::new();
    let first_line = 0..text.find('\n').unwrap_or(text.len());
    let open = h.open.clone().map_or(first_line, |o| o.start..o.start + 3);
    for (key, field, what) in [
        ("name", &h.name, "the name notes list in `live.skills`"),
        ("description", &h.description, "one line on when to use it; runs show it in the catalog"),
    ] {
        let (range, message) = match field {
            Some(f) if !f.value.is_empty() => continue,
            Some(f) => (f.span.clone(), format!("a skill's `{key}` must be non-empty text: {what}")),
            None => (open.clone(), format!("a skill file needs `{key}` in its frontmatter: {what}")),
        };
        out.push(Diagnostic::warning(Code::SkillMissingField, range, message));
    }
    if let (Some(name), Some(other)) = (h.name.as_ref().filter(|n| !n.value.is_empty()), duplicate_of) {
        out.push(Diagnostic::warning(
            Code::DuplicateSkill,
            name.span.clone(),
            format!(
                "the skill `{}` is also defined in {other}; notes and runs get only one of them (the first by path): rename one",
                name.value
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_reads_name_and_description_with_their_places() {
        let text = "---\nname: weekly-digest\ndescription: \"Sum up a week.\"\n---\n# Digest\n\nSteps.\n";
        let h = head(text);
        assert!(h.is_skill());
        let name = h.name.clone().unwrap_or_else(|| panic!("no name"));
        assert_eq!(&text[name.span.clone()], "weekly-digest");
        assert_eq!(h.description.map(|d| d.value), Some("Sum up a week.".to_owned()));
        assert_eq!(body(text), "# Digest\n\nSteps.");
        assert!(!head("# no frontmatter\n").is_skill());
        assert!(!head("---\nname: [a\n---\n").readable);
        assert!(!head("---\nname: x\ndescription: 3\n---\n").is_skill());
    }

    #[test]
    fn file_diagnostics_report_what_is_missing_and_duplicates() {
        let render = |text: &str, dup: Option<&str>| -> Vec<String> {
            file_diagnostics(text, dup)
                .iter()
                .map(|d| format!("{} {:?} {}", d.code.as_str(), &text[d.range.clone()], d.message))
                .collect()
        };
        assert!(render("---\nname: a\ndescription: b\n---\n", None).is_empty());
        let got = render("---\nname: a\n---\n", Some("skills/other.md"));
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            got[0].starts_with("live/skill-missing-field \"---\" a skill file needs `description`"),
            "{got:?}"
        );
        assert!(
            got[1].starts_with("live/duplicate-skill \"a\" the skill `a` is also defined in skills/other.md"),
            "{got:?}"
        );
        let got = render("---\nname: \"\"\ndescription: b\n---\n", None);
        assert_eq!(
            got,
            [
                "live/skill-missing-field \"name\" a skill's `name` must be non-empty text: the name notes list in `live.skills`"
            ]
        );
        assert_eq!(render("plain\n", None).len(), 2);
    }

    #[test]
    fn closest_names_prefer_related_then_near() {
        let names = ["weekly-digest", "writing-live-notes", "daily-brief"];
        assert_eq!(closest_names("digest", names.iter().copied(), 2), ["weekly-digest", "daily-brief"]);
        assert_eq!(closest_names("daly-brief", names.iter().copied(), 1), ["daily-brief"]);
    }
}
