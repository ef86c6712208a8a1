//! `load_skill {name}`: the guidance of a skill the run message lists in its catalog (or
//! preloads). Offered only when the run has skills. An unknown name is a tool error naming the
//! closest skills, so the model can correct itself; the run goes on.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{LOAD_SKILL, ToolError, parse_args, truncate};
use crate::model::ToolSpec;
use crate::skills::Skill;

#[derive(Deserialize)]
struct Args {
    name: String,
}

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: LOAD_SKILL.to_owned(),
        description:
            "Read the full guidance of a skill listed under \"Other skills\" in the run message, by its name."
                .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The skill's name, as listed."}},
            "required": ["name"],
            "additionalProperties": false
        }),
    }
}

/// The skill's guidance under its name and description, cut at `max_output` bytes.
pub(super) fn load(skills: &[&Skill], args: &Value, max_output: usize) -> Result<String, ToolError> {
    let a: Args = parse_args(LOAD_SKILL, args)?;
    let name = a.name.trim();
    if let Some(s) = skills.iter().find(|s| s.name == name) {
        let text = format!("# Skill: {}\n\n{}\n\n{}", s.name, s.description, s.body);
        return Ok(truncate(&text, max_output, "the skill"));
    }
    let near = crate::note::skills::closest_names(name, skills.iter().map(|s| s.name.as_str()), 3);
    let list: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
    Err(ToolError::new(format!(
        "no skill named `{name}`; the closest: {}",
        if list.is_empty() { "(none)".to_owned() } else { list.join(", ") }
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::Source;

    fn skill(name: &str) -> Skill {
        Skill {
            name: name.to_owned(),
            description: format!("About {name}."),
            source: Source::Workspace,
            file: format!("skills/{name}.md"),
            path: None,
            body: format!("Steps of {name}."),
        }
    }

    #[test]
    fn loads_by_name_and_names_the_closest_otherwise() {
        let (a, b) = (skill("weekly-digest"), skill("daily-brief"));
        let skills = [&a, &b];
        let got = load(&skills, &json!({"name": "weekly-digest"}), 1000);
        assert_eq!(
            got,
            Ok("# Skill: weekly-digest\n\nAbout weekly-digest.\n\nSteps of weekly-digest.".to_owned())
        );
        let err = load(&skills, &json!({"name": "digest"}), 1000).err().map(|e| e.0);
        assert_eq!(
            err.as_deref(),
            Some("no skill named `digest`; the closest: `weekly-digest`, `daily-brief`")
        );
        assert!(load(&skills, &json!({}), 1000).is_err());
        assert!(
            load(&skills, &json!({"name": "weekly-digest"}), 20).is_ok_and(|t| t.contains("is cut here"))
        );
    }
}
