//! The notes `livenote new NAME` writes: the built-in templates (embedded, `templates/*.md`) and
//! how a template's text becomes a note. A workspace's own `templates/NAME.md` wins over a
//! built-in of the same name (the CLI reads it); both are plain text, the note written from one
//! is checked like any other. Pure.

/// A built-in template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    pub name: &'static str,
    /// Where `livenote new NAME` writes without a path.
    pub default_file: &'static str,
    /// One line for the command's help and errors.
    pub about: &'static str,
    pub text: &'static str,
}

pub const BUILTIN: &[Template] = &[
    Template {
        name: "daily",
        default_file: "Today.md",
        about: "today's page: overview, calendar, emails, what you missed, priorities; three windows and in-day events",
        text: include_str!("templates/daily.md"),
    },
    Template {
        name: "digest",
        default_file: "digest.md",
        about: "a weekly digest of a topic, Monday 08:00",
        text: include_str!("templates/digest.md"),
    },
    Template {
        name: "tracker",
        default_file: "tracker.md",
        about: "the current state of one thing and a log of its changes, daily and on events",
        text: include_str!("templates/tracker.md"),
    },
];

pub fn builtin(name: &str) -> Option<&'static Template> {
    BUILTIN.iter().find(|t| t.name == name)
}

/// A name a template may have: what a file name `NAME.md` can hold on every system, no path.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
}

/// The note's text from a template's: `{{title}}` becomes `title`.
pub fn render(template: &str, title: &str) -> String {
    template.replace("{{title}}", title)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in template makes a valid live note, its windows and criteria intact.
    #[test]
    fn the_built_in_templates_are_valid_live_notes() {
        for t in BUILTIN {
            let text = render(t.text, "My note");
            let a = crate::note::analyze(&text, &crate::note::Options::default());
            assert!(a.diagnostics.is_empty(), "{}: {:?}", t.name, a.diagnostics);
            let live = a.live.unwrap_or_else(|| panic!("{} is not live", t.name));
            assert!(live.has_triggers(), "{}", t.name);
            assert!(text.ends_with("# My note\n"), "{}", t.name);
            assert!(valid_name(t.name) && t.default_file.ends_with(".md"));
        }
        let daily = crate::note::analyze(
            render(builtin("daily").map_or("", |t| t.text), "Today").as_str(),
            &crate::note::Options::default(),
        );
        let live = daily.live.unwrap_or_else(|| panic!("daily is not live"));
        assert_eq!(live.windows.len(), 3);
        assert!(live.event_match_criteria.is_some());
    }

    #[test]
    fn names_are_plain() {
        assert!(valid_name("weekly-review_2"));
        for bad in ["", "../x", "a/b", "a.md", "x y", &"n".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
