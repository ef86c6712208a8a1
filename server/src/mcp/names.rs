//! The names the model calls MCP tools by: `mcp__<server>__<tool>`, with every character
//! outside `[A-Za-z0-9_-]` turned into `_` (what the model APIs accept) and at most 64
//! characters (their limit). Names stay unique: one that is too long, or that clashes with an
//! earlier one once sanitised, is cut and ends in a hash of the server's and the tool's own
//! names, so the same tools always get the same names.

use std::collections::HashSet;

/// Every MCP tool's name starts with this; no built-in tool's does.
pub const PREFIX: &str = "mcp__";
/// The longest tool name the model APIs accept.
pub const MAX_NAME: usize = 64;

/// `s` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// The model's names for `tools` (server, tool), in the same order: unique, at most
/// [`MAX_NAME`] characters. Earlier tools keep their plain name when two clash.
pub fn assign(tools: &[(&str, &str)]) -> Vec<String> {
    let mut used: HashSet<String> = HashSet::new();
    tools
        .iter()
        .map(|(server, tool)| {
            let plain = format!("{PREFIX}{}__{}", sanitize(server), sanitize(tool));
            let mut name = plain.clone();
            let mut round = 0u32;
            while name.len() > MAX_NAME || used.contains(&name) {
                let suffix = format!("_{:08x}", hash(server, tool, round));
                // Sanitised names are ASCII: any byte index is a character boundary.
                let keep = plain.len().min(MAX_NAME - suffix.len());
                name = format!("{}{suffix}", &plain[..keep]);
                round += 1;
            }
            used.insert(name.clone());
            name
        })
        .collect()
}

/// FNV-1a over the names as the server gave them (not sanitised, so `a.b` and `a_b` differ).
fn hash(server: &str, tool: &str, round: u32) -> u32 {
    let bytes = server.bytes().chain([0]).chain(tool.bytes()).chain(round.to_le_bytes());
    let h = bytes.fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    (h ^ (h >> 32)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_prefixed_and_unique() {
        let names = assign(&[
            ("time", "get_current_time"),
            ("git hub", "issues.list"),
            ("github", "a.b"),
            ("github", "a_b"),
            ("fs", "lire/écrire"),
        ]);
        assert_eq!(names[0], "mcp__time__get_current_time");
        assert_eq!(names[1], "mcp__git_hub__issues_list");
        assert_eq!(names[2], "mcp__github__a_b");
        // Clashes with the one before once sanitised: cut and hashed.
        assert!(names[3].starts_with("mcp__github__a_b_") && names[3].len() == 25, "{}", names[3]);
        assert_eq!(names[4], "mcp__fs__lire__crire");
        assert_eq!(assign(&[("github", "a.b"), ("github", "a_b")]), names[2..4], "deterministic");
    }

    #[test]
    fn long_names_are_cut_to_64_and_stay_unique() {
        let long_a = format!("{}a", "x".repeat(80));
        let long_b = format!("{}b", "x".repeat(80));
        let names = assign(&[("server", &long_a), ("server", &long_b), ("server", "ok")]);
        assert!(names.iter().all(|n| n.len() <= MAX_NAME), "{names:?}");
        assert_eq!(names[0].len(), MAX_NAME);
        assert_ne!(names[0], names[1]);
        assert!(names[0].starts_with("mcp__server__xxxx"));
        assert_eq!(names[2], "mcp__server__ok");
        let all = HashSet::<&String>::from_iter(&names);
        assert_eq!(all.len(), 3);
    }
}
