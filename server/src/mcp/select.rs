//! Which MCP servers, and which of their tools, one run may use: every configured server by
//! default; the servers and tools `live.tools` names when the note narrows it; in event runs
//! only servers with `events = true` (an event's payload is text from outside, and a prompt
//! injection must not reach tools with side effects by default); and only servers the run
//! may start (a folder's servers in a trusted folder, as for `command` providers).

use std::collections::BTreeMap;

use crate::config::{Config, McpServerConfig};
use crate::note::tools::parse_entry;

/// One server a run may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    pub name: String,
    pub config: McpServerConfig,
    /// `None`: all of its tools; else only these.
    pub tools: Option<Vec<String>>,
}

/// What a run gets, and what it does not and why (for the transcript).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub servers: Vec<Selected>,
    pub left_out: Vec<String>,
}

/// The servers of `config` for a run. `wanted`: the note's `live.tools` (`None` when absent);
/// `event_run`: the run handles an event; `may_start(server)`: `Err(why)` when this run may not
/// start it (trust).
pub fn select(
    config: &Config,
    wanted: Option<&[String]>,
    event_run: bool,
    may_start: impl Fn(&McpServerConfig) -> Result<(), String>,
) -> Selection {
    let mut selection = Selection::default();
    // Server → its named tools (`None` once the note names the whole server).
    let mut narrowed: BTreeMap<&str, Option<Vec<String>>> = BTreeMap::new();
    match wanted {
        None => {
            for name in config.mcp_servers.keys() {
                narrowed.insert(name, None);
            }
        }
        Some(entries) => {
            for entry in entries {
                let e = parse_entry(entry);
                if !config.mcp_servers.contains_key(e.server) {
                    if config.ignored_mcp_servers().contains(&e.server) {
                        continue;
                    }
                    let why = match config.broken_mcp_servers.get(e.server) {
                        Some(reason) => format!("MCP server `{}` is misconfigured: {reason}", e.server),
                        None => {
                            format!("live.tools names `{}`, which is not a configured MCP server", e.server)
                        }
                    };
                    if !selection.left_out.contains(&why) {
                        selection.left_out.push(why);
                    }
                    continue;
                }
                let slot = narrowed.entry(e.server).or_insert_with(|| Some(Vec::new()));
                match (slot.as_mut(), e.tool) {
                    (Some(tools), Some(t)) => tools.push(t.to_owned()),
                    (_, None) => *slot = None,
                    (None, Some(_)) => {}
                }
            }
        }
    }
    if let Some(ignored) = &config.ignored_folder {
        for name in config.ignored_mcp_servers() {
            if wanted.is_none_or(|w| w.iter().any(|e| parse_entry(e).server == name)) {
                selection.left_out.push(format!(
                    "MCP server `{name}` comes from {}, which is not used: {}",
                    ignored.path.display(),
                    ignored.trust.reason()
                ));
            }
        }
    }
    for (name, tools) in narrowed {
        let Some(config) = config.mcp_servers.get(name) else { continue };
        if event_run && !config.events {
            selection
                .left_out
                .push(format!("MCP server `{name}` is not offered to event runs (events = false)"));
            continue;
        }
        if let Err(why) = may_start(config) {
            selection.left_out.push(format!("MCP server `{name}` is not used: {why}"));
            continue;
        }
        selection.servers.push(Selected { name: name.to_owned(), config: config.clone(), tools });
    }
    selection
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Layer, Origin};

    fn config() -> Config {
        let text = r#"
[mcp.servers.time]
command = ["mcp-server-time"]

[mcp.servers.github]
command = ["gh-mcp"]
events = true

[mcp.servers.broken]
events = true
"#;
        let path = std::path::PathBuf::from("/w/.livenote.toml");
        let layers = [Layer::Toml { text, path: &path, origin: Origin::Workspace }];
        Config::from_layers(&layers, &|_: &str| None).0
    }

    fn names(s: &Selection) -> Vec<(&str, Option<Vec<String>>)> {
        s.servers.iter().map(|s| (s.name.as_str(), s.tools.clone())).collect()
    }

    #[test]
    fn every_server_by_default_and_what_the_note_names() {
        let c = config();
        let all = select(&c, None, false, |_| Ok(()));
        assert_eq!(names(&all), [("github", None), ("time", None)]);
        assert!(all.left_out.is_empty());
        let wanted: Vec<String> =
            ["github.list_issues", "github.get_issue", "nosuch", "broken"].map(String::from).to_vec();
        let some = select(&c, Some(&wanted), false, |_| Ok(()));
        assert_eq!(names(&some), [("github", Some(vec!["list_issues".to_owned(), "get_issue".to_owned()]))]);
        assert_eq!(
            some.left_out,
            [
                "live.tools names `nosuch`, which is not a configured MCP server",
                "MCP server `broken` is misconfigured: no `command` (e.g. command = [\"uvx\", \"mcp-server-time\"]) or `url`"
            ]
        );
        let whole: Vec<String> = ["github.list_issues", "github"].map(String::from).to_vec();
        assert_eq!(names(&select(&c, Some(&whole), false, |_| Ok(()))), [("github", None)]);
        assert!(select(&c, Some(&[]), false, |_| Ok(())).servers.is_empty(), "an empty list: no MCP tools");
    }

    #[test]
    fn event_runs_and_untrusted_servers_are_left_out() {
        let c = config();
        let events = select(&c, None, true, |_| Ok(()));
        assert_eq!(names(&events), [("github", None)]);
        assert_eq!(events.left_out, ["MCP server `time` is not offered to event runs (events = false)"]);
        let untrusted = select(&c, None, false, |_| Err("the folder is not trusted".to_owned()));
        assert!(untrusted.servers.is_empty());
        assert_eq!(untrusted.left_out.len(), 2);
    }
}
