//! Counted nouns: "1 note", "3 notes", "0 errors". One home, so no message says "1 headings"
//! or hedges with "line(s)".

/// A whole number with its thousands separated by commas: `12345` as "12,345" (token counts,
/// characters of a budget).
pub fn grouped(n: impl TryInto<u64>) -> String {
    let digits = n.try_into().unwrap_or(u64::MAX).to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` as an English ordinal: "1st", "2nd", "3rd", "11th", "22nd".
pub fn ordinal(n: impl Into<u64>) -> String {
    let n: u64 = n.into();
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// `n` and `noun`, the noun plural unless `n` is 1: `count(1, "note")` is "1 note",
/// `count(2, "entry")` is "2 entries".
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {}", plural(n, noun))
}

/// `noun` as it reads after the number `n`: itself for 1, else its plural by the regular
/// English rules (`-s`; `-es` after s, x, z, ch, sh; `-ies` after a consonant and y). Nouns
/// with an irregular plural have no place here.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        return noun.to_owned();
    }
    let consonant_y =
        noun.strip_suffix('y').filter(|stem| stem.chars().last().is_some_and(|c| !"aeiou".contains(c)));
    if let Some(stem) = consonant_y {
        format!("{stem}ies")
    } else if ["s", "x", "z", "ch", "sh"].iter().any(|end| noun.ends_with(end)) {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// A size for people: "4 MiB", "512 KiB", "1000 bytes" (exact, so a limit reads as it was set).
pub fn bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else {
        count(n as usize, "byte")
    }
}

/// A size for people, rounded: "812 bytes", "12 KiB", "3.4 MiB" (for sizes nobody set).
pub fn approx_bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= 1024 {
        format!("{} KiB", (n + 512) / 1024)
    } else {
        count(n as usize, "byte")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_everything_else_plural() {
        assert_eq!(count(1, "heading"), "1 heading");
        assert_eq!(count(0, "note"), "0 notes");
        assert_eq!(count(2, "error"), "2 errors");
        assert_eq!(count(3, "entry"), "3 entries");
        assert_eq!(count(2, "day"), "2 days");
        assert_eq!(count(4, "match"), "4 matches");
        assert_eq!(count(2, "more line"), "2 more lines");
        assert_eq!(plural(1, "candidate"), "candidate");
        assert_eq!(plural(5, "minute"), "minutes");
        assert_eq!(bytes(4 * 1024 * 1024), "4 MiB");
        assert_eq!(bytes(512 * 1024), "512 KiB");
        assert_eq!(bytes(1), "1 byte");
        assert_eq!(bytes(1000), "1000 bytes");
        assert_eq!(approx_bytes(812), "812 bytes");
        assert_eq!(approx_bytes(12 * 1024 + 300), "12 KiB");
        assert_eq!(approx_bytes(3_565_158), "3.4 MiB");
    }
}
