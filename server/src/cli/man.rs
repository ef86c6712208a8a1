//! `livenote man`: manual pages rendered from the same command definition as `--help` and the
//! shell completions, so the three never disagree.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// Print livenote(1), or with `out` write one page per command there (livenote.1,
/// livenote-check.1, ...) and list the files written.
pub fn run(out_dir: Option<&Path>, out: &mut impl Write) -> anyhow::Result<u8> {
    let cmd = <super::Cli as clap::CommandFactory>::command();
    let Some(dir) = out_dir else {
        // Rendered into memory first: a closed pipe (`livenote man | head`) is then one error.
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page)?;
        out.write_all(&page)?;
        return Ok(0);
    };
    if !dir.is_dir() {
        anyhow::bail!("{} is not a folder (create it first)", dir.display());
    }
    let mut cmd = cmd;
    cmd.build();
    let mut written = Vec::new();
    pages(&cmd, dir, &mut written)?;
    for path in written {
        writeln!(out, "{}", path.display())?;
    }
    Ok(0)
}

/// One page for the command and each visible subcommand, depth first.
fn pages(cmd: &clap::Command, dir: &Path, written: &mut Vec<std::path::PathBuf>) -> anyhow::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    let path = dir.join(man.get_filename());
    let mut page = Vec::new();
    man.render(&mut page)?;
    std::fs::write(&path, page).with_context(|| format!("write {}", path.display()))?;
    written.push(path);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub, dir, written)?;
    }
    Ok(())
}
