//! Shortening text for one-line fields, logs, transcripts and model-facing results: one home,
//! so every cut lands on a character boundary and says it was cut the same way.

/// Whitespace runs (newlines included) folded to one space, then [`clip`]ped to `max`
/// characters: for runtime fields, summaries and log lines.
pub fn one_line(s: &str, max: usize) -> String {
    clip(&s.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

/// At most `max` characters, the last one `…` when something was cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let cut: String = s.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub fn prefix_bytes(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The first `max` characters of `s`, or `None` when it has no more than that.
pub fn prefix_chars(s: &str, max: usize) -> Option<&str> {
    s.char_indices().nth(max).map(|(i, _)| &s[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_character_boundaries() {
        assert_eq!(one_line("a\n  b\tc", 10), "a b c");
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(clip("héllo!", 5), "héll…");
        assert_eq!(prefix_bytes("héllo", 2), "h");
        assert_eq!(prefix_bytes("héllo", 99), "héllo");
        assert_eq!(prefix_chars("héllo", 2), Some("hé"));
        assert_eq!(prefix_chars("hé", 2), None);
    }
}
