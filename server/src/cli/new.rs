//! `livenote new NAME [PATH]`: a note written from a template: the workspace's own
//! `templates/NAME.md` when it has one, else a built-in (`daily`, `digest`, `tracker`). Never
//! over an existing file. The note is checked as `livenote check` would, and its diagnostics
//! printed; errors (a workspace template with a broken block) exit 1, the note written all the same
//! so it can be fixed in place.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::templates;

pub fn run(name: &str, path: Option<PathBuf>, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    if !templates::valid_name(name) {
        writeln!(
            err,
            "livenote: new: `{name}` is not a template name (letters, digits, `-` and `_`); {}",
            known()
        )?;
        return Ok(2);
    }
    let builtin = templates::builtin(name);
    let path = path.unwrap_or_else(|| {
        PathBuf::from(builtin.map_or_else(|| format!("{name}.md"), |t| t.default_file.to_owned()))
    });
    if !matches!(path.extension().and_then(|e| e.to_str()), Some("md" | "markdown")) {
        anyhow::bail!("new: {} is not a markdown file (`.md`)", path.display());
    }
    let file_name = path.file_name().with_context(|| format!("new: {} names no file", path.display()))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let file = crate::workspace::given::note_folder(parent)?.join(file_name);
    let root = crate::workspace::note_root(&file);
    let own = root.join("templates").join(format!("{name}.md"));
    let (text, from) = if own.is_file() {
        let text = crate::workspace::read_note(&own)
            .map_err(|e| anyhow::anyhow!("new: templates/{name}.md: {e}"))?;
        (text, format!("templates/{name}.md"))
    } else if let Some(t) = builtin {
        (t.text.to_owned(), format!("the built-in `{name}` template"))
    } else {
        writeln!(err, "livenote: new: no template `{name}`: {}", known())?;
        return Ok(2);
    };
    let title = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let note = templates::render(&text, &title);
    let rel = crate::workspace::NotePath::of_or_whole(&root, &file);
    if let Err(e) = crate::workspace::write::create_new(&file, &note) {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            writeln!(err, "livenote: new: {rel} exists; nothing was written (give another PATH)")?;
            return Ok(1);
        }
        return Err(e).with_context(|| format!("new: write {rel}"));
    }
    tracing::info!("create {rel} from {from}");
    writeln!(out, "wrote {rel} from {from}")?;
    // Checked as `livenote check` checks it (one home: survey::check), so what `new` prints is
    // what `check` will say of the note, information diagnostics included.
    let now = crate::schedule::Clock::now(&crate::schedule::SystemClock);
    let shown = rel.to_string();
    let checked =
        crate::survey::check(std::slice::from_ref(&file), now, &crate::schedule::Zone::Local, &|_| {
            shown.clone()
        });
    let items = checked.items;
    for i in &items {
        let message = crate::text::escape::terminal(&i.message);
        writeln!(out, "{}:{}:{}: {} {} {message}", i.path, i.line, i.column, i.severity, i.code)?;
    }
    Ok(if items.iter().any(|i| i.severity == "error") { 1 } else { 0 })
}

/// The built-in templates, for a message.
fn known() -> String {
    let names: Vec<&str> = templates::BUILTIN.iter().map(|t| t.name).collect();
    format!("built in: {}; a workspace adds its own as templates/NAME.md", names.join(", "))
}
