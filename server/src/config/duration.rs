//! Durations as configuration writes them: "500ms", "30s", "10m", "1h", "1h30m".

use std::time::Duration;

/// Why a duration did not parse. The message quotes the input (durations are never secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("empty duration; write e.g. \"30s\", \"10m\", \"1h\" or \"500ms\"")]
    Empty,
    #[error("invalid duration \"{0}\": expected a number, e.g. \"30s\"")]
    MissingNumber(String),
    #[error("invalid duration \"{0}\": missing unit (ms, s, m or h), e.g. \"{0}s\"")]
    MissingUnit(String),
    #[error("invalid duration \"{input}\": unknown unit \"{unit}\" (use ms, s, m or h)")]
    UnknownUnit { input: String, unit: String },
    #[error("invalid duration \"{0}\": too large")]
    TooLarge(String),
}

/// Parse "500ms", "30s", "10m", "1h", or sums like "1h30m" (spaces between parts allowed).
pub fn parse_duration(input: &str) -> Result<Duration, DurationError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(DurationError::Empty);
    }
    let mut rest = s;
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(DurationError::MissingNumber(s.to_owned()));
        }
        let number: u64 = rest[..digits].parse().map_err(|_| DurationError::TooLarge(s.to_owned()))?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = rest[unit_len..].trim_start();
        let part = match unit {
            "ms" => Some(Duration::from_millis(number)),
            "s" => Some(Duration::from_secs(number)),
            "m" => number.checked_mul(60).map(Duration::from_secs),
            "h" => number.checked_mul(3600).map(Duration::from_secs),
            "" if rest.is_empty() => return Err(DurationError::MissingUnit(s.to_owned())),
            "" => {
                return Err(DurationError::UnknownUnit {
                    input: s.to_owned(),
                    unit: rest.chars().take(8).collect(),
                });
            }
            other => return Err(DurationError::UnknownUnit { input: s.to_owned(), unit: other.to_owned() }),
        };
        total =
            part.and_then(|p| total.checked_add(p)).ok_or_else(|| DurationError::TooLarge(s.to_owned()))?;
    }
    Ok(total)
}

/// The shortest form [`parse_duration`] reads back: "30s", "10m", "1h30m", "1500ms" → "1s500ms".
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".to_owned();
    }
    let (h, m, s, rest) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    let mut out = String::new();
    for (n, unit) in [(h, "h"), (m, "m"), (s, "s"), (rest, "ms")] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    out
}

#[cfg(test)]
#[path = "duration_tests.rs"]
mod tests;
