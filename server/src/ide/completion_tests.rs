use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::*;
use crate::ide::fixture::{cursor, with_ctx};
use crate::note::Severity;
use crate::status::RunFacts;

fn complete(fixture: &str) -> (String, Vec<CompletionItem>) {
    let (text, offset) = cursor(fixture);
    // As a client that does not resolve items gets them: documentation included.
    let items = with_ctx(&text, RunFacts::default(), |ctx| {
        let mut items = completion(ctx, offset);
        for item in &mut items {
            item.resolve_now(ctx.now, ctx.tz);
        }
        items
    });
    (text, items)
}

/// One item per line: `label  kind  detail  -> insert_text`, after the text the items
/// replace (shown per item when it differs from the first's).
fn render(text: &str, items: &[CompletionItem]) -> String {
    let Some(first) = items.first() else { return "(none)\n".to_owned() };
    let mut out = format!("replaces {:?}\n", &text[first.replace.clone()]);
    for it in items {
        let detail = it.detail.as_deref().unwrap_or("-");
        let insert = it.insert_text.replace('\r', "\\r").replace('\n', "\\n");
        let own = if it.replace == first.replace {
            String::new()
        } else {
            format!("  [replaces {:?}]", &text[it.replace.clone()])
        };
        out.push_str(&format!("{}  {:?}  {detail}  -> {insert}{own}\n", it.label, it.kind));
    }
    out
}

fn check(fixture: &str, expect: Expect) {
    let (text, items) = complete(fixture);
    expect.assert_eq(&render(&text, &items));
}

/// `text` with `item` applied and its snippet placeholders filled with their defaults.
fn apply(text: &str, item: &CompletionItem) -> String {
    let insert = if item.snippet { expand_snippet(&item.insert_text) } else { item.insert_text.clone() };
    format!("{}{insert}{}", &text[..item.replace.start], &text[item.replace.end..])
}

/// Replaces `${n:default}` by its default and drops `$n`, undoing `\` escapes.
fn expand_snippet(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                chars.by_ref().take_while(|c| *c != ':').for_each(drop);
            }
            '$' => while chars.next_if(char::is_ascii_digit).is_some() {},
            '}' => {}
            c => out.push(c),
        }
    }
    out
}

#[test]
fn live_scaffold_without_frontmatter() {
    check(
        "$0",
        expect![[r#"
                replaces ""
                live  Snippet  make this note live (adds frontmatter)  -> ---\nlive:\n  objective: ${1:"Keep this note up to date with the latest information on its topic."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"\n---\n
            "#]],
    );
    check(
        "$0# Weather in Paris\n\nSunny.\n",
        expect![[r#"
                replaces ""
                live  Snippet  make this note live (adds frontmatter)  -> ---\nlive:\n  objective: ${1:"Keep this note about \\"Weather in Paris\\" up to date."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"\n---\n
            "#]],
    );
    // A typed prefix on a line of its own keeps that line's break.
    check(
        "liv$0\n# Paris\n",
        expect![[r#"
                replaces "liv"
                live  Snippet  make this note live (adds frontmatter)  -> ---\nlive:\n  objective: ${1:"Keep this note about \\"Paris\\" up to date."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"\n---
            "#]],
    );
    check(
        "---$0",
        expect![[r#"
                replaces "---"
                ---  Snippet  make this note live (adds frontmatter)  -> ---\nlive:\n  objective: ${1:"Keep this note up to date with the latest information on its topic."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"\n---\n
            "#]],
    );
    check(
        "\u{feff}$0# Paris\r\nbody\r\n",
        expect![[r#"
                replaces ""
                live  Snippet  make this note live (adds frontmatter)  -> ---\r\nlive:\r\n  objective: ${1:"Keep this note about \\"Paris\\" up to date."}\r\n  triggers:\r\n    cronExpr: "${2:0 9 * * *}"\r\n---\r\n
            "#]],
    );
    let (text, items) = complete("$0\u{feff}# Paris\n");
    let Some(item) = items.first() else { panic!("no scaffold before a BOM") };
    assert!(apply(&text, item).starts_with("\u{feff}---\nlive:\n"), "{:?}", apply(&text, item));
    check("# Paris\n$0", expect!["(none)\n"]);
    check("Hello$0 world\n", expect!["(none)\n"]);
}

#[test]
fn live_scaffold_at_top_level() {
    check(
        "---\ntitle: x\n$0\n---\n# Weather\n",
        expect![[r#"
                replaces ""
                live  Snippet  make this note live  -> live:\n  objective: ${1:"Keep this note about \\"Weather\\" up to date."}\n  triggers:\n    cronExpr: "${2:0 9 * * *}"
            "#]],
    );
    check(
        "---\r\ntags:\r\n    - a\r\nli$0\r\n---\r\n",
        expect![[r#"
                replaces "li"
                live  Snippet  make this note live  -> live:\r\n  objective: ${1:"Keep this note up to date with the latest information on its topic."}\r\n  triggers:\r\n    cronExpr: "${2:0 9 * * *}"
            "#]],
    );
    // Renaming a key: the colon is already there.
    check(
        "---\nlvie$0: x\n---\n",
        expect![[r#"
            replaces "lvie"
            live  Key  make this note live  -> live
        "#]],
    );
    // The indentation of the user's other keys is followed.
    check(
        "---\nmeta:\n    a: 1\nl$0\n---\n",
        expect![[r#"
                replaces "l"
                live  Snippet  make this note live  -> live:\n    objective: ${1:"Keep this note up to date with the latest information on its topic."}\n    triggers:\n        cronExpr: "${2:0 9 * * *}"
            "#]],
    );
    check("---\nlive :$0\n---\n", expect!["(none)\n"]);
    check("---\nlive $0:\n---\n", expect!["(none)\n"]);
    check("---\nlive:\n  objective: x\n$0\n---\n", expect!["(none)\n"]);
    check("---\ntitle: x\n  $0\n---\n", expect!["(none)\n"]);
}

#[test]
fn scaffolds_produce_valid_blocks() {
    let fixtures = [
        "$0",
        "$0# Weather: \"Paris\" $HOME {x}\n\nSunny.\n",
        "$0# Paris\r\nbody\r\n",
        "---\ntitle: x\n$0\n---\n# T\n",
        "---\r\ntitle: x\r\n$0\r\n---\r\n",
        "---\nlive:\n  objective: x\n  $0\n---\n",
        "---\nlive:\n    objective: x\n    $0\n---\n",
        "---\nlive:\n  objective: x\n  triggers: $0\n---\n",
        "---\nlive:\n  objective: x\n  triggers:\n    $0\n---\n",
        "---\nlive:\n  objective: x\n  triggers:\n    windows: $0\n---\n",
        "---\nlive:\n  objective: x\n  triggers:\n    windows:\n      - startTime: \"06:00\"\n        endTime: \"07:00\"\n      $0\n---\n",
    ];
    for fixture in fixtures {
        let (text, items) = complete(fixture);
        let snippets: Vec<_> = items.iter().filter(|i| i.snippet).collect();
        assert!(!snippets.is_empty(), "no snippet for {fixture:?}");
        for item in snippets {
            let applied = apply(&text, item);
            let analysis = crate::ide::fixture::analysis(&applied, &[]);
            let errors: Vec<_> =
                analysis.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
            assert!(analysis.live.is_some(), "no live block after {:?}:\n{applied}", item.label);
            // Only the keys a half-written block still lacks may be missing.
            assert!(
                errors.iter().all(|d| d.message.contains("objective")),
                "{:?} gives errors {errors:?}:\n{applied}",
                item.label
            );
        }
    }
}

#[test]
fn keys_under_live() {
    check(
        "---\nlive:\n  obj$0",
        expect![[r#"
            replaces "obj"
            objective  Key  text, required  -> objective: 
            active  Key  true | false  -> active: 
            triggers  Key  cron, windows, events  -> triggers:\n    cronExpr: "${1:0 9 * * *}"
            provider  Key  provider name  -> provider: 
            model  Key  text  -> model: 
            tools  Key  list of MCP servers or server.tool  -> tools: 
            until  Key  date or timestamp  -> until: 
            maxChars  Key  characters, a whole number  -> maxChars: 
            skills  Key  list of skill names  -> skills: 
            sources  Key  list of source names  -> sources: 
            notify  Key  changes | failures | all | false  -> notify: 
        "#]],
    );
    // Present keys and runtime fields are not offered.
    check(
        "---\nlive:\n  objective: x\n  $0\n  triggers:\n    cronExpr: \"0 9 * * *\"\n  lastRunAt: \"2026-11-23T15:02:00Z\"\n---\n",
        expect![[r#"
            replaces ""
            active  Key  true | false  -> active: 
            provider  Key  provider name  -> provider: 
            model  Key  text  -> model: 
            tools  Key  list of MCP servers or server.tool  -> tools: 
            until  Key  date or timestamp  -> until: 
            maxChars  Key  characters, a whole number  -> maxChars: 
            skills  Key  list of skill names  -> skills: 
            sources  Key  list of source names  -> sources: 
            notify  Key  changes | failures | all | false  -> notify: 
        "#]],
    );
    // The key being renamed is not "present"; only its name is replaced.
    check(
        "---\nlive:\n  objective: x\n  act$0ve: true\n  model: m\n---\n",
        expect![[r#"
            replaces "actve"
            active  Key  true | false  -> active
            triggers  Key  cron, windows, events  -> triggers
            provider  Key  provider name  -> provider
            tools  Key  list of MCP servers or server.tool  -> tools
            until  Key  date or timestamp  -> until
            maxChars  Key  characters, a whole number  -> maxChars
            skills  Key  list of skill names  -> skills
            sources  Key  list of source names  -> sources
            notify  Key  changes | failures | all | false  -> notify
        "#]],
    );
    // The note's own indentation is followed.
    check(
        "---\nlive:\n    objective: x\n    tr$0\n---\n",
        expect![[r#"
            replaces "tr"
            active  Key  true | false  -> active: 
            triggers  Key  cron, windows, events  -> triggers:\n        cronExpr: "${1:0 9 * * *}"
            provider  Key  provider name  -> provider: 
            model  Key  text  -> model: 
            tools  Key  list of MCP servers or server.tool  -> tools: 
            until  Key  date or timestamp  -> until: 
            maxChars  Key  characters, a whole number  -> maxChars: 
            skills  Key  list of skill names  -> skills: 
            sources  Key  list of source names  -> sources: 
            notify  Key  changes | failures | all | false  -> notify: 
        "#]],
    );
}

#[test]
fn keys_under_triggers_and_windows() {
    check(
        "---\nlive:\n  objective: x\n  triggers:\n    $0\n---\n",
        expect![[r#"
                replaces ""
                cronExpr  Key  cron expression  -> cronExpr: 
                windows  Key  list of daily time windows  -> windows:\n      - startTime: "${1:09:00}"\n        endTime: "${2:12:00}"
                eventMatchCriteria  Key  text  -> eventMatchCriteria: 
            "#]],
    );
    check(
        "---\nlive:\n  objective: x\n  triggers:\n    cronExpr: \"0 9 * * *\"\n    $0\n---\n",
        expect![[r#"
                replaces ""
                windows  Key  list of daily time windows  -> windows:\n      - startTime: "${1:09:00}"\n        endTime: "${2:12:00}"
                eventMatchCriteria  Key  text  -> eventMatchCriteria: 
            "#]],
    );
    check(
        "---\nlive:\n  triggers:\n    windows:\n      - $0\n---\n",
        expect![[r#"
                replaces ""
                startTime  Key  HH:MM local time, required  -> startTime: 
                endTime  Key  HH:MM local time, required  -> endTime: 
            "#]],
    );
    // Only the keys of the cursor's own item count as present.
    check(
        "---\nlive:\n  triggers:\n    windows:\n      - startTime: \"06:00\"\n        endTime: \"07:00\"\n      - startTime: \"09:00\"\n        e$0\n---\n",
        expect![[r#"
                replaces "e"
                endTime  Key  HH:MM local time, required  -> endTime: 
            "#]],
    );
    // At the items' dash column: a new item.
    check(
        "---\nlive:\n  triggers:\n    windows:\n      - startTime: \"06:00\"\n        endTime: \"07:00\"\n      $0\n---\n",
        expect![[r#"
                replaces ""
                window  Snippet  - startTime: "09:00", endTime: "12:00"  -> - startTime: "${1:09:00}"\n        endTime: "${2:12:00}"
            "#]],
    );
}

#[test]
fn no_keys_where_they_cannot_go() {
    // Deeper than the siblings, inside a block scalar, in comments, under the user's keys.
    check("---\nlive:\n  objective: x\n      $0\n---\n", expect!["(none)\n"]);
    check("---\nlive:\n  objective: |\n    Keep it short.\n\n    $0\n---\n", expect!["(none)\n"]);
    check(
        "---\nlive:\n  objective: |\n    Keep it short.\n  $0\n---\n",
        expect![[r#"
            replaces ""
            active  Key  true | false  -> active: 
            triggers  Key  cron, windows, events  -> triggers:\n    cronExpr: "${1:0 9 * * *}"
            provider  Key  provider name  -> provider: 
            model  Key  text  -> model: 
            tools  Key  list of MCP servers or server.tool  -> tools: 
            until  Key  date or timestamp  -> until: 
            maxChars  Key  characters, a whole number  -> maxChars: 
            skills  Key  list of skill names  -> skills: 
            sources  Key  list of source names  -> sources: 
            notify  Key  changes | failures | all | false  -> notify: 
        "#]],
    );
    check("---\nlive:\n  # a$0\n---\n", expect!["(none)\n"]);
    check("---\ntags:\n  $0\n---\n", expect!["(none)\n"]);
    check("---\nlive:\n  objective: x\n  foo bar$0\n---\n", expect!["(none)\n"]);
    // Outside the frontmatter.
    check("---\nlive:\n  objective: x\n---\n$0", expect!["(none)\n"]);
    check("---$0\nlive:\n  objective: x\n---\n", expect!["(none)\n"]);
    check("---\nlive:\n  objective: x\n$0---\n", expect!["(none)\n"]);
}

#[test]
fn boolean_values() {
    check(
        "---\nlive:\n  active: $0\n---\n",
        expect![[r#"
                replaces ""
                true  Value  runs on its triggers  -> true
                false  Value  paused: nothing fires until resumed  -> false
            "#]],
    );
    check(
        "---\nlive:\n  active:$0",
        expect![[r#"
                replaces ""
                true  Value  runs on its triggers  ->  true
                false  Value  paused: nothing fires until resumed  ->  false
            "#]],
    );
    check(
        "---\r\nlive:\r\n  active: tr$0ue  # c\r\n---\r\n",
        expect![[r#"
                replaces "true"
                true  Value  runs on its triggers  -> true
                false  Value  paused: nothing fires until resumed  -> false
            "#]],
    );
    // In the trailing comment.
    check("---\nlive:\n  active: true # c$0\n---\n", expect!["(none)\n"]);
}

#[test]
fn notify_values() {
    check(
        "---\nlive:\n  notify: $0\n---\n",
        expect![[r#"
        replaces ""
        changes  Value  tell when a run changed the body  -> changes
        failures  Value  tell when a run failed  -> failures
        all  Value  tell after every run  -> all
        false  Value  never tell  -> false
    "#]],
    );
}

#[test]
fn cron_presets() {
    check(
        "---\nlive:\n  triggers:\n    cronExpr: $0\n---\n",
        expect![[r#"
                replaces ""
                */15 * * * *  Preset  every 15 minutes  -> "*/15 * * * *"
                */30 * * * *  Preset  every 30 minutes  -> "*/30 * * * *"
                0 * * * *  Preset  every hour, on the hour  -> "0 * * * *"
                0 */2 * * *  Preset  every 2 hours  -> "0 */2 * * *"
                0 9-17 * * 1-5  Preset  every hour from 09:00 to 17:00 on weekdays  -> "0 9-17 * * 1-5"
                0 9 * * *  Preset  daily at 09:00  -> "0 9 * * *"
                0 9 * * 1-5  Preset  09:00 on weekdays  -> "0 9 * * 1-5"
                0 8,17 * * *  Preset  08:00 and 17:00 every day  -> "0 8,17 * * *"
                0 9 * * 1  Preset  09:00 on Mondays  -> "0 9 * * 1"
                0 17 * * 5  Preset  17:00 on Fridays  -> "0 17 * * 5"
                0 9 1 * *  Preset  09:00 on the 1st of every month  -> "0 9 1 * *"
                0 0 * * 0  Preset  midnight on Sundays  -> "0 0 * * 0"
            "#]],
    );
    // Inside quotes only the expression is replaced.
    let (text, items) = complete("---\nlive:\n  triggers:\n    cronExpr: \"0 9$0 * * *\"  # daily\n---\n");
    let Some(item) = items.iter().find(|i| i.label == "0 9 * * 1-5") else { panic!("no preset") };
    expect![[r#"
            ---
            live:
              triggers:
                cronExpr: "0 9 * * 1-5"  # daily
            ---
        "#]]
    .assert_eq(&apply(&text, item));
    // An unclosed quote gets closed.
    let (text, items) = complete("---\nlive:\n  triggers:\n    cronExpr: '$0\n---\n");
    let Some(item) = items.iter().find(|i| i.label == "0 * * * *") else { panic!("no preset") };
    assert_eq!(apply(&text, item), "---\nlive:\n  triggers:\n    cronExpr: '0 * * * *'\n---\n");
    // An unquoted value is replaced whole, and quoted.
    let (text, items) = complete("---\nlive:\n  triggers:\n    cronExpr: 0 9 *$0\n---\n");
    let Some(item) = items.iter().find(|i| i.label == "0 9 * * *") else { panic!("no preset") };
    assert_eq!(apply(&text, item), "---\nlive:\n  triggers:\n    cronExpr: \"0 9 * * *\"\n---\n");
    // Each preset documents its next fire times.
    expect![[r#"
            Next:
            - Mon 23 Nov 10:00 CST
            - Mon 23 Nov 11:00 CST
            - Mon 23 Nov 12:00 CST"#]]
    .assert_eq(
        items.iter().find(|i| i.label == "0 * * * *").and_then(|i| i.documentation.as_deref()).unwrap_or(""),
    );
}

#[test]
fn provider_and_objective_values() {
    check(
        "---\nlive:\n  objective: x\n  provider: cl$0\n---\n",
        expect![[r#"
                replaces "cl"
                local  Provider  configured provider  -> local
                claude  Provider  configured provider  -> claude
            "#]],
    );
    check(
        "---\nlive:\n  objective: $0\n---\n# Tokyo weather 🌤\n",
        expect![[r#"
                replaces ""
                Keep this note about "Tokyo weather 🌤" up to date.  Value  from the note's title  -> "Keep this note about \"Tokyo weather 🌤\" up to date."
            "#]],
    );
    // Nothing for free text, runtime fields or the user's keys.
    check("---\nlive:\n  model: $0\n---\n", expect!["(none)\n"]);
    check("---\nlive:\n  lastRunAt: $0\n---\n", expect!["(none)\n"]);
    check("---\ntitle: $0\nlive:\n  objective: x\n---\n", expect!["(none)\n"]);
}

#[test]
fn tools_values() {
    // After `tools:`: a new list, with the servers and the tools a run listed.
    check(
        "---\nlive:\n  objective: x\n  tools:$0\n---\n",
        expect![[r#"
            replaces ""
            github  McpServer  MCP server: all its tools  ->  [github]
            time  McpServer  MCP server: all 2 tools  ->  [time]
            time.get_current_time  McpTool  Get current time in a specific timezone  ->  [time.get_current_time]
            time.convert_time  McpTool  Convert time between timezones  ->  [time.convert_time]
        "#]],
    );
    // Inside a flow list: the entry around the cursor; those named already are left out.
    check(
        "---\nlive:\n  objective: x\n  tools: [time, ti$0]\n---\n",
        expect![[r#"
        replaces "ti"
        github  McpServer  MCP server: all its tools  -> github
        time.get_current_time  McpTool  Get current time in a specific timezone  -> time.get_current_time
        time.convert_time  McpTool  Convert time between timezones  -> time.convert_time
    "#]],
    );
    check(
        "---\nlive:\n  objective: x\n  tools: [\"tim$0\", github]\n---\n",
        expect![[r#"
        replaces "tim"
        time  McpServer  MCP server: all 2 tools  -> time
        time.get_current_time  McpTool  Get current time in a specific timezone  -> time.get_current_time
        time.convert_time  McpTool  Convert time between timezones  -> time.convert_time
    "#]],
    );
    check(
        "---\nlive:\n  objective: x\n  tools: [gith$0\n---\n",
        expect![[r#"
        replaces "gith"
        github  McpServer  MCP server: all its tools  -> github
        time  McpServer  MCP server: all 2 tools  -> time
        time.get_current_time  McpTool  Get current time in a specific timezone  -> time.get_current_time
        time.convert_time  McpTool  Convert time between timezones  -> time.convert_time
    "#]],
    );
    // A block list.
    check(
        "---\nlive:\n  objective: x\n  tools:\n    - github\n    - $0\n---\n",
        expect![[r#"
        replaces ""
        time  McpServer  MCP server: all 2 tools  -> time
        time.get_current_time  McpTool  Get current time in a specific timezone  -> time.get_current_time
        time.convert_time  McpTool  Convert time between timezones  -> time.convert_time
    "#]],
    );
    check(
        "---\nlive:\n  objective: x\n  tools:\n  - ti$0me  # mine\n---\n",
        expect![[r#"
        replaces "time"
        github  McpServer  MCP server: all its tools  -> github
        time  McpServer  MCP server: all 2 tools  -> time
        time.get_current_time  McpTool  Get current time in a specific timezone  -> time.get_current_time
        time.convert_time  McpTool  Convert time between timezones  -> time.convert_time
    "#]],
    );
    // Not after the list, nor in a list elsewhere.
    check("---\nlive:\n  objective: x\n  tools: [time]$0\n---\n", expect!["(none)\n"]);
    check("---\ntags:\n  - $0\nlive:\n  objective: x\n---\n", expect!["(none)\n"]);
    let (text, items) = complete("---\nlive:\n  objective: x\n  tools: [time.get$0]\n---\n");
    let item =
        items.iter().find(|i| i.label == "time.get_current_time").unwrap_or_else(|| panic!("{items:?}"));
    assert_eq!(apply(&text, item), "---\nlive:\n  objective: x\n  tools: [time.get_current_time]\n---\n");
    assert_eq!(
        item.documentation.as_deref(),
        Some("Get current time in a specific timezone\n\nArguments: `timezone`")
    );
}

#[test]
fn window_values() {
    check(
        "---\nlive:\n  triggers:\n    windows:\n      - startTime: $0\n---\n",
        expect![[r#"
                replaces ""
                07:00  Value  -  -> "07:00"
                08:00  Value  -  -> "08:00"
                09:00  Value  -  -> "09:00"
                12:00  Value  -  -> "12:00"
                13:00  Value  -  -> "13:00"
                17:00  Value  -  -> "17:00"
            "#]],
    );
    check(
        "---\nlive:\n  triggers:\n    windows:\n      - startTime: '12:00'\n        endTime: \"$0\"\n---\n",
        expect![[r#"
                replaces ""
                12:00  Value  band 12:00–12:00  -> 12:00
                13:00  Value  band 12:00–13:00  -> 13:00
                17:00  Value  band 12:00–17:00  -> 17:00
                18:00  Value  band 12:00–18:00  -> 18:00
                23:59  Value  band 12:00–23:59  -> 23:59
            "#]],
    );
    check(
        "---\nlive:\n  triggers: $0\n---\n",
        expect![[r#"
                replaces " "
                cronExpr  Snippet  cronExpr: "0 9 * * *"  -> \n    cronExpr: "${1:0 9 * * *}"
            "#]],
    );
    check(
        "---\r\nlive:\r\n  triggers:\r\n    windows:$0\r\n---\r\n",
        expect![[r#"
                replaces ""
                window  Snippet  - startTime: "09:00", endTime: "12:00"  -> \r\n      - startTime: "${1:09:00}"\r\n        endTime: "${2:12:00}"
            "#]],
    );
}

#[test]
fn unicode_before_the_cursor() {
    check(
        "---\ntitle: 東京の天気 🌤\nlive:\n  objective: \"天気を保つ ☀️\"\n  $0\n---\n",
        expect![[r#"
            replaces ""
            active  Key  true | false  -> active: 
            triggers  Key  cron, windows, events  -> triggers:\n    cronExpr: "${1:0 9 * * *}"
            provider  Key  provider name  -> provider: 
            model  Key  text  -> model: 
            tools  Key  list of MCP servers or server.tool  -> tools: 
            until  Key  date or timestamp  -> until: 
            maxChars  Key  characters, a whole number  -> maxChars: 
            skills  Key  list of skill names  -> skills: 
            sources  Key  list of source names  -> sources: 
            notify  Key  changes | failures | all | false  -> notify: 
        "#]],
    );
    check(
        "---\r\ntitle: 東京 🌤\r\nlive:\r\n  objective: 天気\r\n  active: f$0",
        expect![[r#"
                replaces "f"
                true  Value  runs on its triggers  -> true
                false  Value  paused: nothing fires until resumed  -> false
            "#]],
    );
}

#[test]
fn offsets_inside_characters_are_floored() {
    let text = "---\nlive:\n  objective: 天気\n  \n---\n";
    let inside = text.find('天').map_or(0, |i| i + 1);
    with_ctx(text, RunFacts::default(), |ctx| {
        assert_eq!(completion(ctx, inside), completion(ctx, inside - 1));
        assert!(completion(ctx, text.len() + 10).is_empty());
    });
    // Between `\r` and `\n` the cursor is on no line.
    let text = "---\nlive:\r\n  \r\n---\r\n";
    with_ctx(text, RunFacts::default(), |ctx| {
        let Some(cr) = text.find("  \r").map(|i| i + 3) else { panic!("no CR") };
        assert!(completion(ctx, cr).is_empty());
        assert!(!completion(ctx, cr - 1).is_empty());
        assert!(crate::ide::hover::hover(ctx, cr).is_none());
    });
}

/// Pieces of frontmatter, half-typed YAML, line endings and multibyte text, so generated
/// notes reach every branch; arbitrary strings cover the rest.
pub(in crate::ide) fn arb_note() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "---",
        "...",
        "\n",
        "\r\n",
        "\r",
        "\u{feff}",
        "live:",
        "live: ",
        "  ",
        "    ",
        "- ",
        "-",
        "objective: ",
        "objective: |",
        "triggers:",
        "triggers: ",
        "cronExpr: ",
        "\"0 9 * * *\"",
        "*/2 * * * *",
        "0 9 * *",
        "windows:",
        "startTime: ",
        "endTime: ",
        "\"09:00\"",
        "'12:00'",
        "9:00",
        "lastRunAt: ",
        "lastAttemptAt: ",
        "\"2026-11-23T15:02:00Z\"",
        "lastRunError: ",
        "null",
        "active: ",
        "true",
        "provider: ",
        "model: ",
        "title: ",
        "# T",
        "#",
        ":",
        "\"",
        "'",
        "|",
        ">",
        "[",
        "{",
        "é",
        "日本",
        "🎉",
        "x",
    ];
    // Line breaks and indentation come often, so that the pieces form lines and levels.
    let piece = prop_oneof![4 => prop::sample::select(PIECES), 1 => Just("\n"), 1 => Just("\n  "), 1 => Just("\n    ")];
    let body = prop::collection::vec(piece, 0..40).prop_map(|v| v.concat());
    let open = prop::sample::select(&["", "---\n", "---\r\n", "\u{feff}---\n"][..]);
    let close = prop::sample::select(&["", "\n---\n# T\n", "\n---"][..]);
    prop_oneof![
        4 => (open, body, close).prop_map(|(o, b, c)| format!("{o}{b}{c}")),
        1 => any::<String>(),
        1 => any::<String>().prop_map(|s| format!("---\nlive:\n  {s}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Any offset into any text: no panic, and every range is a slice of the cursor's line
    /// that contains the (floored) cursor.
    #[test]
    fn never_panics(text in arb_note()) {
        with_ctx(&text, RunFacts::default(), |ctx| {
            for offset in 0..=text.len() + 2 {
                let at = floor_offset(&text, offset);
                for item in completion(ctx, offset) {
                    let r = item.replace;
                    prop_assert!(r.start <= at && at <= r.end && r.end <= text.len(), "{r:?} at {at}");
                    prop_assert!(text.get(r.clone()).is_some_and(|s| !s.contains('\n')), "{r:?}");
                }
            }
            Ok(())
        })?;
    }
}

#[test]
fn documentation_comes_from_the_schema() {
    let (_, items) = complete("---\nlive:\n  triggers:\n    cr$0\n---\n");
    let Some(doc) = items.first().and_then(|i| i.documentation.as_deref()) else { panic!("no doc") };
    assert!(doc.contains("Vixie"), "{doc}");
}

#[test]
fn skills_are_offered_in_every_list_form() {
    check(
        "---\nlive:\n  objective: x\n  skills:$0\n---\n",
        expect![[r#"
            replaces ""
            weekly-digest  Skill  workspace skill  ->  [weekly-digest]
            writing-live-notes  Skill  built-in skill  ->  [writing-live-notes]
        "#]],
    );
    // Those the note lists already are left out; quotes the user opened are kept.
    check(
        "---\nlive:\n  objective: x\n  skills: [writing-live-notes, \"wee$0\"]\n---\n",
        expect![[r#"
            replaces "wee"
            weekly-digest  Skill  workspace skill  -> weekly-digest
        "#]],
    );
    check(
        "---\nlive:\n  objective: x\n  skills:\n    - weekly-digest\n    - $0\n---\n",
        expect![[r#"
            replaces ""
            writing-live-notes  Skill  built-in skill  -> writing-live-notes
        "#]],
    );
}

/// The presets' next fire times are left for later (`completionItem/resolve`): the list itself
/// does no schedule arithmetic, and resolving gives what an eager list has.
#[test]
fn preset_fire_times_are_left_for_later() {
    let (text, offset) = cursor("---\nlive:\n  triggers:\n    cronExpr: \"$0\"\n---\n");
    with_ctx(&text, RunFacts::default(), |ctx| {
        let items = completion(ctx, offset);
        let presets: Vec<&CompletionItem> =
            items.iter().filter(|i| i.kind == CompletionKind::Preset).collect();
        assert!(!presets.is_empty());
        for item in &presets {
            assert_eq!(item.documentation, None, "{item:?}");
            assert_eq!(item.later, Some(LaterDoc::NextFires(item.label.clone())), "{item:?}");
            let mut resolved = (*item).clone();
            resolved.resolve_now(ctx.now, ctx.tz);
            assert!(
                resolved.documentation.as_deref().is_some_and(|d| d.starts_with("Next:\n- ")),
                "{resolved:?}"
            );
            assert_eq!(resolved.later, None);
        }
    });
}
