//! `live.tools`: which MCP tools a note's runs may use. Each entry names a server of the
//! configuration (`time`: all its tools) or one tool of one (`github.list_issues`). Server
//! names hold no `.` (the configuration refuses them), so the first `.` splits the two.
//!
//! What the configuration and the tool-list cache know about MCP servers comes in as an
//! [`McpCatalog`]: plain data, so validation, completion and hover stay pure.

/// One entry of `live.tools`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolEntry<'a> {
    pub server: &'a str,
    /// `None`: every tool of the server.
    pub tool: Option<&'a str>,
}

/// `time` → server `time`; `github.list_issues` → tool `list_issues` of server `github`.
pub fn parse_entry(entry: &str) -> ToolEntry<'_> {
    let entry = entry.trim();
    match entry.split_once('.') {
        Some((server, tool)) => ToolEntry { server, tool: Some(tool) },
        None => ToolEntry { server: entry, tool: None },
    }
}

/// An entry as YAML: plain when it reads back as the same string, else double-quoted.
pub fn entry_yaml(entry: &str) -> String {
    let plain = entry.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && entry.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    if plain { entry.to_owned() } else { super::rewrite::yaml_string(entry) }
}

/// The MCP servers a note may name, with their tools when a run has listed them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpCatalog {
    pub servers: Vec<McpServerInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerInfo {
    pub name: String,
    /// From the server's latest `tools/list`; `None` until a run has listed them.
    pub tools: Option<Vec<McpToolInfo>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpToolInfo {
    pub name: String,
    pub description: Option<String>,
    /// The names of its arguments, required ones first (from its input schema).
    pub params: Vec<String>,
}

impl McpCatalog {
    pub fn server(&self, name: &str) -> Option<&McpServerInfo> {
        self.servers.iter().find(|s| s.name == name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|s| s.name.as_str())
    }
}

impl McpServerInfo {
    pub fn tool(&self, name: &str) -> Option<&McpToolInfo> {
        self.tools.as_ref()?.iter().find(|t| t.name == name)
    }
}

/// The argument names of a JSON Schema object, required ones first, for people to read.
pub fn schema_params(schema: &serde_json::Value) -> Vec<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(serde_json::Value::as_array)
        .map(|r| r.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<String> = schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    names.sort_by_key(|n| !required.contains(&n.as_str()));
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_split_at_the_first_dot() {
        assert_eq!(parse_entry("time"), ToolEntry { server: "time", tool: None });
        assert_eq!(
            parse_entry(" github.list_issues "),
            ToolEntry { server: "github", tool: Some("list_issues") }
        );
        assert_eq!(parse_entry("fs.read.file"), ToolEntry { server: "fs", tool: Some("read.file") });
    }

    #[test]
    fn params_list_required_first() {
        let schema = serde_json::json!({
            "properties": {"a": {}, "limit": {}, "query": {}},
            "required": ["query"]
        });
        assert_eq!(schema_params(&schema), ["query", "a", "limit"]);
        assert!(schema_params(&serde_json::json!(true)).is_empty());
    }
}
