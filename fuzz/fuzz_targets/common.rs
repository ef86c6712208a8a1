//! Helpers shared by the fuzz targets (included with `mod common;`).
#![allow(dead_code)]

use livenote::note::frontmatter;
use livenote::note::yaml::{self, Kind, Node, Scalar};

/// A YAML tree without byte spans, to compare a frontmatter before and after an edit.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Map(Vec<(String, V)>),
    Seq(Vec<V>),
    Null,
    Bool(bool),
    Int(i64),
    /// Bits, so that NaN equals itself.
    Float(u64),
    Str(String),
    Bad,
}

impl V {
    pub fn of(n: &Node) -> V {
        match &n.kind {
            Kind::Map(es) => V::Map(es.iter().map(|e| (e.key.clone(), V::of(&e.value))).collect()),
            Kind::Seq(items) => V::Seq(items.iter().map(V::of).collect()),
            Kind::Scalar(Scalar::Null) => V::Null,
            Kind::Scalar(Scalar::Bool(b)) => V::Bool(*b),
            Kind::Scalar(Scalar::Int(i)) => V::Int(*i),
            Kind::Scalar(Scalar::Float(f)) => V::Float(f.to_bits()),
            Kind::Scalar(Scalar::Str(s)) => V::Str(s.clone()),
            Kind::Bad => V::Bad,
        }
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        match self {
            V::Map(es) => es.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        match self {
            V::Map(es) => es.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Remove `key` from a mapping (no-op otherwise).
    pub fn remove(&mut self, key: &str) {
        if let V::Map(es) = self {
            es.retain(|(k, _)| k != key);
        }
    }
}

/// The frontmatter's YAML as a span-free tree: `None` when the note has no closed frontmatter
/// or its YAML does not parse; `Some(V::Null)` for an empty one.
pub fn tree(text: &str) -> Option<V> {
    let fm = frontmatter::locate(text)?;
    fm.close.as_ref()?;
    match yaml::parse(text, fm.content.clone()) {
        Ok(Some(n)) => Some(V::of(&n)),
        Ok(None) => Some(V::Null),
        Err(_) => None,
    }
}

/// Whether `at` starts a line of `text` (or follows a BOM at the very start).
pub fn at_line_start(text: &str, at: usize) -> bool {
    at == 0 || at == frontmatter::bom_len(text) || text.as_bytes()[at - 1] == b'\n'
}
