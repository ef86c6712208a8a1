//! "Did you mean": how far apart two names are, and the closest of a few. One home for every
//! did-you-mean of livenote (note keys, config keys, provider names).

/// Levenshtein distance in Unicode scalar values.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `name` within `max` edits (the first on a tie).
pub fn closest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>, max: usize) -> Option<&'c str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= max)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// How many edits still read as a typo of a name this long: 1 for short names, about a third
/// of the length for longer ones.
pub fn typo_budget(name: &str) -> usize {
    (name.chars().count() / 3).clamp(1, 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_the_closest() {
        assert_eq!(edit_distance("claud", "claude"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("claud", ["local", "claude"], 2), Some("claude"));
        assert_eq!(closest("zzz", ["local", "claude"], 2), None);
        assert_eq!(typo_budget("gpt"), 1);
        assert_eq!(typo_budget("anthropic"), 3);
    }
}
