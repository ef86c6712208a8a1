//! The fields checked against the workspace's configuration: `provider:` against the known
//! providers, `tools:` against the configured MCP servers and their cached tool lists.

use super::*;

impl Cx<'_> {
    pub(super) fn check_provider(&mut self, name: &str, node: &Node, opts: &Options) {
        let Some(known) = opts.providers else { return };
        if known.iter().any(|k| k == name) {
            return;
        }
        let span = self.widen(node.span.clone());
        let list = if known.is_empty() {
            "none are configured".to_owned()
        } else {
            format!("configured: {}", known.join(", "))
        };
        let near = crate::text::words::closest(
            name,
            known.iter().map(String::as_str),
            crate::text::words::typo_budget(name),
        );
        let hint = near.map(|n| format!("did you mean `{n}`? ")).unwrap_or_default();
        let mut d = Diagnostic::error(
            Code::UnknownProvider,
            span.clone(),
            format!("no provider named `{name}` ({hint}{list}); see [providers.*] in .livenote.toml"),
        );
        // The likely one first (and preferred), then the others by closeness.
        let mut order: Vec<&String> = known.iter().collect();
        order.sort_by_key(|k| (Some(k.as_str()) != near, crate::text::words::edit_distance(name, k)));
        for k in order {
            let quoted = format!("\"{k}\"");
            d = d.with_fix(
                format!("Use provider `{k}`"),
                vec![TextEdit::replace(span.clone(), quoted)],
                known.len() == 1 || Some(k.as_str()) == near,
            );
        }
        self.push(d);
    }

    /// `tools`: a list of server names or `server.tool` names; `None` when absent (or null).
    pub(super) fn tools(&mut self, e: &Entry, opts: &Options) -> Option<Vec<Spanned<String>>> {
        let entries = self.name_list(
            e,
            "a list of MCP server names or `server.tool` names, like [time, \"github.list_issues\"]",
            "name an MCP server, or one of its tools as `server.tool`",
            "an MCP server name or `server.tool`, as text",
        )?;
        if let Some(catalog) = opts.mcp {
            for entry in &entries {
                self.check_tool(entry, catalog);
            }
        }
        Some(entries)
    }

    /// A list of names (`tools`, `skills`): each non-empty string with its place; an empty or
    /// non-string entry is reported and left out. `None` when absent (or null) or not a list.
    pub(super) fn name_list(
        &mut self,
        e: &Entry,
        expected: &str,
        empty_hint: &str,
        item_expected: &str,
    ) -> Option<Vec<Spanned<String>>> {
        let key = e.key.as_str();
        let items = match &e.value.kind {
            Kind::Seq(items) => items,
            Kind::Scalar(Scalar::Null) => return None,
            _ => {
                self.wrong_type(key, &e.value, expected);
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
                        format!("an entry of `{key}` is empty: {empty_hint}"),
                    ));
                }
                _ => self.wrong_type(key, item, item_expected),
            }
        }
        Some(entries)
    }

    /// An entry of `tools` against the configured servers, and against the server's tools
    /// when a run has listed them.
    pub(super) fn check_tool(&mut self, entry: &Spanned<String>, catalog: &crate::note::tools::McpCatalog) {
        use crate::text::words::{closest, edit_distance, typo_budget};
        let parsed = crate::note::tools::parse_entry(&entry.value);
        let span = self.widen(entry.span.clone());
        let Some(server) = catalog.server(parsed.server) else {
            let known: Vec<&str> = catalog.names().collect();
            let list = if known.is_empty() {
                "none are configured".to_owned()
            } else {
                format!("configured: {}", known.join(", "))
            };
            let near = closest(parsed.server, known.iter().copied(), typo_budget(parsed.server));
            let hint = near.map(|n| format!("did you mean `{n}`? ")).unwrap_or_default();
            let mut d = Diagnostic::warning(
                Code::UnknownTool,
                span.clone(),
                format!(
                    "no MCP server named `{}` ({hint}{list}); see [mcp.servers.*] in .livenote.toml",
                    parsed.server
                ),
            );
            let mut order = known.clone();
            order.sort_by_key(|k| (Some(*k) != near, edit_distance(parsed.server, k)));
            // Another server rarely has a tool of the same name: only the likely one then.
            if parsed.tool.is_some() {
                order.retain(|k| Some(*k) == near);
            }
            for k in order {
                let with = match parsed.tool {
                    Some(t) => format!("{k}.{t}"),
                    None => k.to_owned(),
                };
                d = d.with_fix(
                    format!("Use `{with}`"),
                    vec![TextEdit::replace(span.clone(), crate::note::tools::entry_yaml(&with))],
                    known.len() == 1 || Some(k) == near,
                );
            }
            self.push(d);
            return;
        };
        let (Some(tool), Some(tools)) = (parsed.tool, server.tools.as_ref()) else { return };
        if tools.iter().any(|t| t.name == tool) {
            return;
        }
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let near = closest(tool, names.iter().copied(), typo_budget(tool));
        let hint = near.map(|n| format!("did you mean `{n}`? ")).unwrap_or_default();
        let list = if names.is_empty() {
            "it lists none".to_owned()
        } else {
            format!("its tools: {}", names.join(", "))
        };
        let mut d = Diagnostic::warning(
            Code::UnknownTool,
            span.clone(),
            format!("the MCP server `{}` has no tool `{tool}` ({hint}{list})", server.name),
        );
        if let Some(n) = near {
            let with = format!("{}.{n}", server.name);
            d = d.with_fix(
                format!("Use `{with}`"),
                vec![TextEdit::replace(span, crate::note::tools::entry_yaml(&with))],
                true,
            );
        }
        self.push(d);
    }
}
