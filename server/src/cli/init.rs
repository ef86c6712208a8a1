//! `livenote init [DIR]`: a starting configuration and one example live note, so a new user
//! sees a note update with no account: the `command` provider runs `date`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

const CONFIG: &str = r#"# livenote configuration for this workspace. See docs/providers.md.
[agent]
provider = "clock"          # used by notes without `provider:`

[providers.clock]
kind = "command"            # any program: gets the run as JSON on stdin, prints the new body
command = ["sh", "-c", "printf 'It is %s.\n' \"$(date '+%H:%M on %A %d %B')\""]
timeout = "30s"

# A model provider (OpenAI-compatible, e.g. a local Ollama):
# [providers.local]
# kind = "openai"
# base_url = "http://127.0.0.1:11434/v1"
# model = "llama3.1"

[scheduler]
enabled = true
exclude = []
"#;

const NOTE: &str = r#"---
live:
  objective: |
    Say what time it is, in one short sentence.
  triggers:
    cronExpr: "*/5 * * * *"
---

# What time is it?
"#;

pub fn run(dir: Option<PathBuf>, out: &mut impl Write) -> Result<u8> {
    let dir = dir.unwrap_or_else(|| PathBuf::from("."));
    crate::workspace::given::create_folder(&dir)?;
    let mut created = Vec::new();
    for (name, text) in [(".livenote.toml", CONFIG), ("what-time-is-it.md", NOTE)] {
        let p = dir.join(name);
        // The usual mode of a new file (0644 under a 022 umask); never over anything there.
        match crate::workspace::write::create_new(&p, text) {
            Ok(()) => created.push(p.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                writeln!(out, "kept {} (already there)", p.display())?;
            }
            Err(e) => return Err(anyhow::Error::new(e).context(format!("create {}", p.display()))),
        }
    }
    for c in &created {
        writeln!(out, "created {c}")?;
    }
    // The configuration livenote just wrote is the user's own: trust the folder with exactly
    // that content. A `.livenote.toml` that was already there is not (it may have come with a
    // cloned folder): the user reviews it and runs `livenote trust`.
    let wrote_config = created.iter().any(|c| c.ends_with(".livenote.toml"));
    let store = crate::workspace::trust::TrustStore::user();
    // A kept configuration the user trusted already (`init .` again) needs no second trust.
    let already = !wrote_config && store.as_ref().is_some_and(|s| s.is_trusted(&dir));
    let trusted = already
        || (wrote_config
            && match store {
                Some(store) => {
                    let expected: crate::workspace::trust::Digest =
                        Some(crate::workspace::trust::digest_bytes(CONFIG.as_bytes()));
                    match store.trust_expecting(&dir, Some(&expected)) {
                        Ok(r) => {
                            writeln!(out, "trusted {} with the .livenote.toml written now", r.path)?;
                            true
                        }
                        Err(e) => {
                            tracing::warn!("trust {}: {e}", dir.display());
                            false
                        }
                    }
                }
                None => false,
            });
    if trusted {
        writeln!(
            out,
            "next: `livenote run {}` updates the note now; `livenote watch {}` keeps it updated",
            dir.join("what-time-is-it.md").display(),
            dir.display()
        )?;
    } else {
        writeln!(
            out,
            "next: review {}, then `livenote trust {d}`; `livenote run {}` updates the note now and `livenote watch {d}` keeps it updated",
            dir.join(".livenote.toml").display(),
            dir.join("what-time-is-it.md").display(),
            d = dir.display()
        )?;
    }
    Ok(0)
}
