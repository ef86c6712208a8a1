use super::*;

/// `time` with its tools listed by a run, `github` not run yet (its tools unknown).
pub(super) fn catalog() -> crate::note::tools::McpCatalog {
    use crate::note::tools::{McpCatalog, McpServerInfo, McpToolInfo};
    let tool = |name: &str| McpToolInfo { name: name.to_owned(), description: None, params: Vec::new() };
    McpCatalog {
        servers: vec![
            McpServerInfo { name: "github".to_owned(), tools: None },
            McpServerInfo {
                name: "time".to_owned(),
                tools: Some(vec![tool("get_current_time"), tool("convert_time")]),
            },
        ],
    }
}

fn render_tools(text: &str, mcp: Option<&crate::note::tools::McpCatalog>) -> String {
    let a =
        analyze(text, &Options { providers: None, mcp, skills: None, scan_body: true, max_backoff: None });
    let idx = LineIndex::new(text);
    let mut out = String::new();
    for d in &a.diagnostics {
        let s = idx.position(text, d.range.start, Encoding::Scalar);
        let e = idx.position(text, d.range.end, Encoding::Scalar);
        out.push_str(&format!(
            "{}:{}-{}:{} {} {} {}\n",
            s.line + 1,
            s.col + 1,
            e.line + 1,
            e.col + 1,
            d.severity.as_str(),
            d.code.as_str(),
            d.message
        ));
        for f in &d.fixes {
            let after = edit::apply(text, &f.edits).unwrap_or_else(|e| panic!("{e}"));
            let line = after.lines().nth(s.line as usize).unwrap_or_default();
            out.push_str(&format!("  fix{}: {} → {line}\n", if f.preferred { "*" } else { "" }, f.title));
        }
    }
    let tools = a.live.as_ref().and_then(|l| l.tool_names());
    out.push_str(&format!("tools: {tools:?}\n"));
    out
}

#[test]
fn unknown_tool() {
    let note = "---\nlive:\n  objective: y\n  tools: [tme, \"time.get_time\", github.anything, nosuch.x, time]\n---\n";
    expect![[r#"
        4:11-4:14 warning live/unknown-tool no MCP server named `tme` (did you mean `time`? configured: github, time); see [mcp.servers.*] in .livenote.toml
          fix*: Use `time` →   tools: [time, "time.get_time", github.anything, nosuch.x, time]
          fix: Use `github` →   tools: [github, "time.get_time", github.anything, nosuch.x, time]
        4:16-4:31 warning live/unknown-tool the MCP server `time` has no tool `get_time` (its tools: get_current_time, convert_time)
        4:50-4:58 warning live/unknown-tool no MCP server named `nosuch` (configured: github, time); see [mcp.servers.*] in .livenote.toml
        tools: Some(["tme", "time.get_time", "github.anything", "nosuch.x", "time"])
    "#]].assert_eq(&render_tools(note, Some(&catalog())));
    // Without configuration the check is skipped; the entries are still read.
    expect![[r#"
        tools: Some(["tme", "time.get_time", "github.anything", "nosuch.x", "time"])
    "#]]
    .assert_eq(&render_tools(note, None));
    // A block list, an empty list, no servers at all.
    let block = "---\nlive:\n  objective: y\n  tools:\n    - github\n    - timee.get_current_time\n---\n";
    expect![[r#"
        6:7-6:29 warning live/unknown-tool no MCP server named `timee` (did you mean `time`? configured: github, time); see [mcp.servers.*] in .livenote.toml
          fix*: Use `time.get_current_time` →     - time.get_current_time
        tools: Some(["github", "timee.get_current_time"])
    "#]].assert_eq(&render_tools(block, Some(&catalog())));
    let empty = "---\nlive:\n  objective: y\n  tools: []\n---\n";
    expect![[r#"
        tools: Some([])
    "#]]
    .assert_eq(&render_tools(empty, Some(&catalog())));
    let none = crate::note::tools::McpCatalog::default();
    expect![[r#"
        4:11-4:14 warning live/unknown-tool no MCP server named `tme` (none are configured); see [mcp.servers.*] in .livenote.toml
        4:16-4:31 warning live/unknown-tool no MCP server named `time` (none are configured); see [mcp.servers.*] in .livenote.toml
        4:33-4:48 warning live/unknown-tool no MCP server named `github` (none are configured); see [mcp.servers.*] in .livenote.toml
        4:50-4:58 warning live/unknown-tool no MCP server named `nosuch` (none are configured); see [mcp.servers.*] in .livenote.toml
        4:60-4:64 warning live/unknown-tool no MCP server named `time` (none are configured); see [mcp.servers.*] in .livenote.toml
        tools: Some(["tme", "time.get_time", "github.anything", "nosuch.x", "time"])
    "#]].assert_eq(&render_tools(note, Some(&none)));
}

#[test]
fn tools_must_be_a_list_of_names() {
    check(
        "---\nlive:\n  objective: y\n  tools: time\n---\n",
        expect![[r#"
            4:10-4:14 error live/wrong-type `tools` must be a list of MCP server names or `server.tool` names, like [time, "github.list_issues"], found a string
            live: has_errors=true
        "#]],
    );
    check(
        "---\nlive:\n  objective: y\n  tools: [time, 3, \"\", {a: b}]\n---\n",
        expect![[r#"
            4:17-4:18 error live/wrong-type `tools` must be an MCP server name or `server.tool`, as text, found an integer
            4:20-4:22 error live/empty-value an entry of `tools` is empty: name an MCP server, or one of its tools as `server.tool`
            4:24-4:30 error live/wrong-type `tools` must be an MCP server name or `server.tool`, as text, found a mapping
            live: has_errors=true
        "#]],
    );
}
