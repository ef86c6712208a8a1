//! The import rule of docs/architecture.md, kept by CI rather than by review: the module map
//! there lists every top-level module of `server/src` from the bottom layer up, and no module
//! imports from one listed above it; no two modules (files) import each other, directly or
//! round a longer loop. Tests (`*_tests.rs`, `tests.rs`, an inline `mod tests`) are left out:
//! a test may reach anywhere. And no file of `server/src` is over 800 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules in the map's order (bottom first): its lines `  name/` or `  name.rs`.
fn map_order() -> Vec<String> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
    let text = std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("read {}: {e}", doc.display()));
    let start = text.find("## The module map").expect("docs/architecture.md has '## The module map'");
    // The block runs from its opening fence to the next line that is a fence alone (an entry's
    // text may mention ```track fences).
    let mut lines = text[start..].lines().skip_while(|l| !l.starts_with("```")).skip(1);
    let mut order = Vec::new();
    for line in lines.by_ref().take_while(|l| l.trim_end() != "```") {
        let Some(entry) = line.strip_prefix("  ") else { continue };
        if entry.starts_with(' ') {
            continue;
        }
        let word = entry.split_whitespace().next().unwrap_or("");
        let name = word.strip_suffix('/').or_else(|| word.strip_suffix(".rs"));
        if let Some(name) =
            name.filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        {
            order.push(name.to_owned());
        }
    }
    order
}

/// Every non-test source file: its module path (`lsp::refresh`, `note`) and its text without
/// comments and without a trailing inline `mod tests`.
fn sources() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src_dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("list {}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            if !name.ends_with(".rs") || name.ends_with("_tests.rs") || name == "tests.rs" {
                continue;
            }
            let rel = path.strip_prefix(src_dir()).expect("under src").with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                continue;
            }
            let text =
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            out.insert(parts.join("::"), code_of(&text));
        }
    }
    out
}

/// `text` without comments (doc comments name modules they do not import), the contents of
/// string literals, and an inline test module at its end.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let (mut in_str, mut in_comment) = (false, false);
    while let Some(c) = chars.next() {
        if in_comment {
            if c == '\n' {
                in_comment = false;
                out.push(c);
            }
            continue;
        }
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_str = false;
                    out.push(c);
                }
                _ => {}
            }
            continue;
        }
        match c {
            '/' if chars.peek() == Some(&'/') => in_comment = true,
            '"' => {
                in_str = true;
                out.push(c);
            }
            // A char literal ('"') would open a string: skip it whole.
            '\'' if chars.peek() == Some(&'"') => {
                chars.next();
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// The paths `code` names through `crate::` and `super::` (relative to `module`), each as
/// written (`lsp::state::State`, `config::{Env, X}` expanded to `config::Env`, `config::X`).
fn named_paths(module: &str, code: &str) -> Vec<String> {
    // A file `a/b.rs` is module a::b; its `super` is `a`. A `mod.rs` is module `a`; its `super`
    // is the crate root.
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut out = Vec::new();
    for (prefix, base) in [("crate::", String::new()), ("super::", parent.to_owned())] {
        let mut from = 0;
        while let Some(i) = code[from..].find(prefix) {
            let at = from + i;
            from = at + prefix.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            for path in expand(&code[from..]) {
                out.push(if base.is_empty() { path } else { format!("{base}::{path}") });
            }
        }
    }
    out
}

/// The paths at the start of `rest`: `a::b::C` → [`a::b::C`]; `a::{X, b::{c, d}}` →
/// [`a::X`, `a::b::c`, `a::b::d`]; `{a, b}` → [`a`, `b`].
fn expand(rest: &str) -> Vec<String> {
    if let Some(group) = rest.strip_prefix('{') {
        let mut paths = Vec::new();
        let mut depth = 0;
        let mut item = String::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    paths.extend(expand(item.trim()));
                    item.clear();
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        paths.extend(expand(item.trim()));
        return paths;
    }
    let ident = |s: &str| s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    let mut segments = Vec::new();
    let mut s = rest;
    loop {
        let n = ident(s);
        if n == 0 {
            break;
        }
        segments.push(&s[..n]);
        s = &s[n..];
        match s.strip_prefix("::") {
            Some(group) if group.starts_with('{') => {
                let base = segments.join("::");
                return expand(group).into_iter().map(|p| format!("{base}::{p}")).collect();
            }
            Some(more) => s = more,
            None => break,
        }
    }
    if segments.is_empty() { Vec::new() } else { vec![segments.join("::")] }
}

/// The longest module of `modules` that `path` starts with.
fn resolve<'a>(path: &str, modules: &'a BTreeSet<String>) -> Option<&'a String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len()).rev().find_map(|k| modules.get(&parts[..k].join("::")))
}

/// Module → the other modules it imports (a child's imports of its own ancestors left out: a
/// `mod.rs` declares its children, so child → parent is how a module's parts share its types).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = sources();
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut g = BTreeMap::new();
    for (module, code) in &files {
        let mut deps = BTreeSet::new();
        for path in named_paths(module, code) {
            if let Some(target) = resolve(&path, &modules) {
                let is_ancestor = module.starts_with(&format!("{target}::"));
                if target != module && !is_ancestor {
                    deps.insert(target.clone());
                }
            }
        }
        g.insert(module.clone(), deps);
    }
    g
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

#[test]
fn the_module_map_lists_the_tree() {
    let order = map_order();
    let mut tree = BTreeSet::new();
    for entry in std::fs::read_dir(src_dir()).expect("list server/src") {
        let path = entry.expect("an entry").path();
        let name = path.file_stem().and_then(|n| n.to_str()).unwrap_or("").to_owned();
        // A top-level module's tests (`status_tests.rs`) are part of it, not a module of the map.
        let is_tests = name.ends_with("_tests") || name == "tests";
        if name != "lib"
            && name != "main"
            && !is_tests
            && (path.is_dir() || path.extension().is_some_and(|e| e == "rs"))
        {
            tree.insert(name);
        }
    }
    let listed: BTreeSet<String> = order.iter().cloned().collect();
    let missing: Vec<_> = tree.difference(&listed).collect();
    let gone: Vec<_> = listed.difference(&tree).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "docs/architecture.md's module map and server/src differ: not in the map {missing:?}, not in the tree {gone:?}"
    );
    assert_eq!(order.len(), listed.len(), "a module is listed twice in the map: {order:?}");
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let order = map_order();
    let rank: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    let mut wrong = Vec::new();
    for (module, deps) in graph() {
        for dep in deps {
            let (from, to) = (top(&module), top(&dep));
            if from == to {
                continue;
            }
            if let (Some(a), Some(b)) = (rank.get(from), rank.get(to))
                && b > a
            {
                wrong.push(format!("{module} imports {dep} (`{to}` is listed above `{from}`)"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports from a layer above (docs/architecture.md, the module map, bottom first):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_modules_import_each_other() {
    let g = graph();
    // Tarjan's strongly connected components: any of more than one module is a cycle.
    struct Walk<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        cycles: Vec<Vec<&'a str>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.g.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low[v];
                    self.low.insert(v, lv.min(lw));
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low[v];
                    self.low.insert(v, lv.min(iw));
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort_unstable();
                    self.cycles.push(comp);
                }
            }
        }
    }
    let mut walk = Walk {
        g: &g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        cycles: Vec::new(),
    };
    for v in g.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    assert!(walk.cycles.is_empty(), "modules that import each other (round a loop): {:?}", walk.cycles);
}

#[test]
fn the_import_reader_sees_what_the_rule_needs() {
    // The reader itself, on the shapes the tree uses: a test that cannot fail is no test.
    let code = code_of(
        "use crate::{config::{Env, MachineConfig}, text};\nuse super::state::State; // crate::lsp in a comment\nfn f() { crate::schedule::due::x(); \"crate::cli\"; '\"'; }\n#[cfg(test)]\nmod tests {\n use crate::cli;\n}\n",
    );
    let mut paths = named_paths("lsp::refresh", &code);
    paths.sort();
    assert_eq!(
        paths,
        ["config::Env", "config::MachineConfig", "lsp::state::State", "schedule::due::x", "text"],
        "a string's `crate::cli` and the test module's import are not imports"
    );
}

/// Rooms that stay small (issue 34): no file under `server/src`, tests included, over 800
/// lines as a reader opens it. A long file is split by responsibility; a long test file by
/// topic, into sibling `_tests.rs` modules.
#[test]
fn no_source_file_is_over_800_lines() {
    const MAX_LINES: usize = 800;
    let mut long = Vec::new();
    let mut stack = vec![src_dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("list {}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text =
                    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
                let lines = text.lines().count();
                if lines > MAX_LINES {
                    long.push(format!(
                        "{} ({lines} lines)",
                        path.strip_prefix(src_dir()).unwrap_or(&path).display()
                    ));
                }
            }
        }
    }
    long.sort();
    assert!(long.is_empty(), "files over {MAX_LINES} lines: {long:?}");
}
