use super::*;

/// The examples of docs/diagnostics.md: each bad one produces its code, each good one does not.
#[test]
fn every_doc_example_behaves_as_documented() {
    let docs = include_str!("../../../docs/diagnostics.md");
    let providers = ["local".to_owned()];
    let mcp = super::tools::catalog();
    let skills = skill_catalog();
    let mut checked = 0;
    for section in docs.split("\n## `").skip(1) {
        let Some((code, rest)) = section.split_once('`') else { continue };
        let blocks = code_blocks(rest);
        assert_eq!(blocks.len(), 2, "{code}: expected a bad and a good example");
        for (i, (lang, body)) in blocks.iter().enumerate() {
            let note = if *lang == "yaml" { format!("---\n{body}---\n# Note\n") } else { body.clone() };
            let mut a = analyze(
                &note,
                &Options {
                    providers: Some(&providers),
                    mcp: Some(&mcp),
                    skills: Some(&skills),
                    scan_body: true,
                    max_backoff: None,
                },
            );
            // An instructions file (`AGENTS.md`), checked with the budget its example names.
            if code == Code::InstructionsTooLong.as_str() {
                a.diagnostics.extend(instructions_too_long(&note, 200));
            }
            // `live/expired` depends on the instant: the examples are read on 2026-11-25.
            if code == Code::Expired.as_str() {
                let now = DateTime::parse_from_rfc3339("2026-11-25T12:00:00Z")
                    .map(|t| t.to_utc())
                    .unwrap_or_default();
                a.diagnostics.extend(crate::note::expiry::diagnostics(&note, a.live.as_ref(), now, &Utc));
            }
            // A skill file (`skills/*.md`); the examples say `skills/digest.md` is named
            // `weekly-digest`.
            if code == Code::SkillMissingField.as_str() || code == Code::DuplicateSkill.as_str() {
                let head = crate::note::skills::head(&note);
                let dup = head.name.is_some_and(|n| n.value == "weekly-digest").then_some("skills/digest.md");
                a.diagnostics = crate::note::skills::file_diagnostics(&note, dup);
            }
            // A conflict copy is told by its file name: the bad example is the copy's, the good
            // one the original's.
            if code == Code::SyncConflictCopy.as_str() {
                let name = if i == 0 { "notes.sync-conflict-20261123-101502-ABCDEF7.md" } else { "notes.md" };
                a.diagnostics.extend(crate::note::conflict::diagnostics(name, a.live.as_ref()));
            }
            // Whether the folder has a source is the configuration's: none for no-event-source's
            // bad example, `[sources.mail]` for the rest.
            if code == Code::NoEventSource.as_str() || code == Code::UnknownSource.as_str() {
                let mail = crate::note::sources::SourceRef {
                    name: "mail".to_owned(),
                    kind: "imap",
                    waiting_for_trust: false,
                };
                let sources =
                    if i == 1 || code == Code::UnknownSource.as_str() { vec![mail] } else { Vec::new() };
                a.diagnostics.extend(crate::note::sources::source_diagnostics(
                    &note,
                    a.live.as_ref(),
                    &sources,
                ));
            }
            let has = a.diagnostics.iter().any(|d| d.code.as_str() == code);
            let bad = i == 0;
            assert_eq!(
                has,
                bad,
                "{code} example {} ({}):\n{note}\n{:#?}",
                i,
                if bad { "bad" } else { "good" },
                a.diagnostics
            );
            if !bad {
                assert!(
                    !a.has_errors(),
                    "{code}: the good example has errors:\n{note}\n{:#?}",
                    a.diagnostics
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, Code::ALL.len());
}

/// Fenced blocks (``` or ~~~) of a markdown section as (language, body).
fn code_blocks(section: &str) -> Vec<(&str, String)> {
    let mut out = Vec::new();
    let mut open: Option<(&str, &str, String)> = None;
    for line in section.lines() {
        match &mut open {
            None => {
                for fence in ["```", "~~~"] {
                    if let Some(lang) = line.strip_prefix(fence) {
                        open = Some((fence, lang, String::new()));
                    }
                }
            }
            Some((fence, lang, body)) => {
                if line == *fence {
                    out.push((*lang, std::mem::take(body)));
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    out
}
