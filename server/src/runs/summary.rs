//! The summary of a run whose provider gave none: what the note now holds, read from the new
//! content. "Updated: <first line>" for a plain line; a heading or a line that introduces a
//! list ("Most recently changed files:") is a title, summarised with what follows it rather than
//! stacked after "Updated:" with its colon.

/// How many list items a summary names before "and N more".
const ITEMS_SHOWN: usize = 3;

/// The summary of `body` (the run's new content, markdown).
pub fn of_body(body: &str) -> String {
    let mut lines = body.lines().map(str::trim).filter(|l| !l.is_empty() && !is_markup(l));
    let Some(first) = lines.next() else { return "Updated.".to_owned() };
    let is_heading = first.starts_with('#');
    let text = plain(first);
    if !(is_heading || text.ends_with(':')) {
        return if text.is_empty() { "Updated.".to_owned() } else { format!("Updated: {text}") };
    }
    let title = text.trim_end_matches(':').trim_end();
    // What the title introduces: up to the next heading.
    let under: Vec<&str> = lines.take_while(|l| !l.starts_with('#')).collect();
    let detail = match under.first() {
        None => return format!("Updated: {title}"),
        Some(l) if is_list_item(l) => {
            let items: Vec<String> = under
                .iter()
                .take_while(|l| is_list_item(l))
                .map(|l| plain(l))
                .filter(|t| !t.is_empty())
                .collect();
            let shown = items.iter().take(ITEMS_SHOWN).cloned().collect::<Vec<_>>().join(", ");
            match items.len().saturating_sub(ITEMS_SHOWN) {
                0 => shown,
                more => format!("{shown} and {more} more"),
            }
        }
        Some(l) => plain(l),
    };
    if title.is_empty() { detail } else { format!("{title}: {detail}") }
}

/// A line of markup alone: a code fence, a thematic break, a table rule, an HTML comment.
fn is_markup(line: &str) -> bool {
    line.starts_with("```")
        || line.starts_with("~~~")
        || line.starts_with("<!--")
        || (line.len() >= 3 && line.chars().all(|c| matches!(c, '-' | '*' | '_' | ' ' | '|' | ':' | '=')))
}

fn is_list_item(line: &str) -> bool {
    list_marker_len(line).is_some()
}

/// The length of a list marker and its space (`- `, `* `, `+ `, `1. `, `2) `), if any.
fn list_marker_len(line: &str) -> Option<usize> {
    if line.starts_with("- ") || line.starts_with("* ") || line.starts_with("+ ") {
        return Some(2);
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &line[digits..];
    (digits > 0 && (rest.starts_with(". ") || rest.starts_with(") "))).then_some(digits + 2)
}

/// The words of a line without its markdown markers: heading marks, a list marker and a task
/// box, a quote marker, emphasis around the whole line.
fn plain(line: &str) -> String {
    let mut t = line.trim_start_matches('#').trim_start();
    t = t.trim_start_matches('>').trim_start();
    if let Some(n) = list_marker_len(t) {
        t = &t[n..];
    }
    for task in ["[ ] ", "[x] ", "[X] "] {
        t = t.strip_prefix(task).unwrap_or(t);
    }
    let t = t.trim();
    for mark in ["**", "__", "*", "_"] {
        if let Some(inner) = t.strip_prefix(mark).and_then(|s| s.strip_suffix(mark))
            && !inner.is_empty()
        {
            return inner.trim().to_owned();
        }
    }
    t.to_owned()
}

#[cfg(test)]
mod tests {
    use super::of_body;

    #[test]
    fn a_plain_first_line_is_what_was_updated() {
        assert_eq!(of_body("It is 17:46 on Wednesday.\n"), "Updated: It is 17:46 on Wednesday.");
        assert_eq!(of_body("\n\n  Agent wrote this.  \nmore\n"), "Updated: Agent wrote this.");
        assert_eq!(of_body(""), "Updated.");
        assert_eq!(of_body("```\n"), "Updated.");
    }

    #[test]
    fn a_line_that_introduces_a_list_names_its_first_items() {
        let body = "Most recently changed files:\n\n- recent-changes.md\n- weekday-briefing.md\n- scripts/word-count.sh\n- scripts/newest-files.sh\n- scripts/clock.sh\n";
        assert_eq!(
            of_body(body),
            "Most recently changed files: recent-changes.md, weekday-briefing.md, scripts/word-count.sh and 2 more"
        );
        assert_eq!(of_body("Today:\n1. standup\n2) review\n"), "Today: standup, review");
        assert_eq!(of_body("To do:\n- [ ] **buy milk**\n"), "To do: buy milk");
        assert_eq!(of_body("Nothing changed:\n"), "Updated: Nothing changed");
    }

    #[test]
    fn a_heading_is_a_title_for_what_follows() {
        assert_eq!(of_body("## Weather\n\nSunny, 20 °C.\nWind from the west.\n"), "Weather: Sunny, 20 °C.");
        assert_eq!(of_body("# Clock\n"), "Updated: Clock");
        assert_eq!(of_body("## Open questions\n\n## Calendar\n- 10:00 standup\n"), "Updated: Open questions");
        assert_eq!(of_body("---\n> All quiet.\n"), "Updated: All quiet.");
    }
}
