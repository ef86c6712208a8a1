//! A source-neutral value tree, so TOML (with spans) and JSON (without) share one reader.

use std::ops::Range;

pub(super) struct Node {
    pub(super) val: Val,
    pub(super) span: Option<Range<usize>>,
}

pub(super) enum Val {
    Null,
    Bool(bool),
    /// `None` when out of the i64 range.
    Int(Option<i64>),
    Float,
    Str(String),
    Array(Vec<Node>),
    Table(Vec<Entry>),
    Datetime,
}

pub(super) struct Entry {
    pub(super) key: String,
    pub(super) key_span: Option<Range<usize>>,
    pub(super) node: Node,
}

pub(super) fn describe(val: &Val) -> &'static str {
    match val {
        Val::Null => "null",
        Val::Bool(_) => "a boolean",
        Val::Int(_) => "an integer",
        Val::Float => "a float",
        Val::Str(_) => "a string",
        Val::Array(_) => "an array",
        Val::Table(_) => "a table",
        Val::Datetime => "a date-time",
    }
}

pub(super) fn toml_table(t: &toml::de::DeTable<'_>) -> Vec<Entry> {
    t.iter()
        .map(|(k, v)| Entry { key: k.get_ref().to_string(), key_span: Some(k.span()), node: toml_node(v) })
        .collect()
}

fn toml_node(v: &toml::Spanned<toml::de::DeValue<'_>>) -> Node {
    use toml::de::DeValue;
    let val = match v.get_ref() {
        DeValue::String(s) => Val::Str(s.to_string()),
        DeValue::Integer(i) => Val::Int(i64::from_str_radix(i.as_str(), i.radix()).ok()),
        DeValue::Float(_) => Val::Float,
        DeValue::Boolean(b) => Val::Bool(*b),
        DeValue::Datetime(_) => Val::Datetime,
        DeValue::Array(a) => Val::Array(a.iter().map(toml_node).collect()),
        DeValue::Table(t) => Val::Table(toml_table(t)),
    };
    Node { val, span: Some(v.span()) }
}

pub(super) fn from_json(v: &serde_json::Value) -> Node {
    use serde_json::Value;
    let val = match v {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) if n.is_i64() || n.is_u64() => Val::Int(n.as_i64()),
        Value::Number(_) => Val::Float,
        Value::String(s) => Val::Str(s.clone()),
        Value::Array(a) => Val::Array(a.iter().map(from_json).collect()),
        Value::Object(o) => Val::Table(
            o.iter().map(|(k, v)| Entry { key: k.clone(), key_span: None, node: from_json(v) }).collect(),
        ),
    };
    Node { val, span: None }
}
