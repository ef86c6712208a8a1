//! The version of a source item: a hash of what a reader would see, stored in the source's
//! seen-file and compared on every poll, so it must not change with the Rust version or the
//! machine (std's `DefaultHasher` promises neither): SHA-256, cut to 16 hex digits.

/// A short, stable hex hash of `parts`, each length-prefixed so `("ab", "c")` ≠ `("a", "bc")`.
pub fn hash(parts: &[&str]) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for p in parts {
        ctx.update(&(p.len() as u64).to_le_bytes());
        ctx.update(p.as_bytes());
    }
    ctx.finish().as_ref().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::hash;

    #[test]
    fn parts_are_delimited_and_the_hash_is_fixed() {
        assert_ne!(hash(&["ab", "c"]), hash(&["a", "bc"]));
        assert_eq!(hash(&["a", "b"]), hash(&["a", "b"]));
        // A stored version must read the same after an upgrade: the value itself is pinned.
        expect_test::expect!["e0d460800811c9da"].assert_eq(&hash(&["livenote"]));
    }
}
