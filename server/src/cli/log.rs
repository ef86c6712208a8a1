//! Where the log goes. Every command logs warnings and errors to stderr, and `livenote watch`
//! also its run lines (fire, skip, done, failed: they are its report). `-v` (repeatable) and
//! `-q` move livenote's own level; `LIVENOTE_LOG` (tracing's EnvFilter syntax) replaces both.
//! `livenote lsp` keeps stderr to warnings and errors (editors record stderr as errors), sends
//! the lines a user should see to the editor (`window/logMessage`, [`crate::lsp::log`]) and,
//! with `--log-file`, appends its whole log (INFO and up, or what `LIVENOTE_LOG` says) there.

use std::io::Write;
use std::path::Path;

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, fmt};

use crate::lsp::log::ClientLog;

/// Overrides the levels the command and its flags choose.
pub const ENV: &str = "LIVENOTE_LOG";

/// Levels of livenote's own lines, quietest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl Level {
    const ALL: [Level; 5] = [Level::Error, Level::Warn, Level::Info, Level::Debug, Level::Trace];

    /// `-q` (errors only), else `verbose` levels above `default`.
    pub fn from_flags(default: Level, verbose: u8, quiet: bool) -> Level {
        if quiet {
            return Level::Error;
        }
        let at = (default as usize).saturating_add(usize::from(verbose));
        Level::ALL[at.min(Level::ALL.len() - 1)]
    }

    /// The filter: other crates keep to warnings (or errors) whatever livenote's level.
    fn directive(self) -> String {
        match self {
            Level::Error => "error".to_owned(),
            Level::Warn => "warn".to_owned(),
            Level::Info => "warn,livenote=info".to_owned(),
            Level::Debug => "warn,livenote=debug".to_owned(),
            Level::Trace => "warn,livenote=trace".to_owned(),
        }
    }
}

/// What a command's log needs.
pub struct Setup<'a> {
    /// stderr's level from the command and its flags.
    pub level: Level,
    /// `livenote lsp`: the editor gets the lines a user should see, and stderr keeps to the
    /// flags' level even when `LIVENOTE_LOG` is set and a log file takes it.
    pub lsp: bool,
    /// `livenote lsp --log-file`.
    pub log_file: Option<&'a Path>,
}

/// Install the process's subscriber. Returns the lines for the editor under `lsp`. Problems
/// (a bad `LIVENOTE_LOG`, a log file that cannot be opened) are logged once it is installed,
/// so the editor hears of them too; nothing here ends the process.
pub fn init(setup: &Setup<'_>) -> Option<ClientLog> {
    let mut problems = Vec::new();
    let env = std::env::var(ENV).ok().filter(|v| !v.trim().is_empty()).filter(|v| match EnvFilter::builder()
        .parse(v)
    {
        Ok(_) => true,
        Err(e) => {
            problems.push(format!("{ENV}={v:?} is not a log filter ({e}); using the default levels"));
            false
        }
    });
    let file = setup.log_file.and_then(|path| match crate::workspace::confine::open_append(path) {
        Ok(f) => Some(f),
        Err(e) => {
            // The error names the path.
            problems.push(format!("--log-file: {e}; logging to stderr and the editor only"));
            None
        }
    });
    let stderr = match (&env, &file) {
        (Some(env), None) => env.clone(),
        _ => setup.level.directive(),
    };
    let file_level = env.clone().unwrap_or_else(|| setup.level.max(Level::Info).directive());
    let filter = |directives: &str| EnvFilter::builder().parse_lossy(directives);

    let stderr_layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .compact()
        .with_filter(filter(&stderr));
    let file_layer = file.map(|f| {
        fmt::layer()
            .with_writer(std::sync::Mutex::new(f))
            .with_target(false)
            .with_ansi(false)
            .compact()
            .with_filter(filter(&file_level))
    });
    let (client_layer, client_log) = match setup.lsp {
        true => {
            let (layer, log) = crate::lsp::log::client_log();
            (Some(layer.with_filter(LevelFilter::INFO)), Some(log))
        }
        false => (None, None),
    };
    let installed =
        tracing_subscriber::registry().with(stderr_layer).with(file_layer).with(client_layer).try_init();
    if installed.is_err() {
        let _ = writeln!(std::io::stderr(), "livenote: a logger was already installed");
    }
    for p in problems {
        tracing::warn!("{p}");
    }
    client_log
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_move_the_level_from_the_commands_default() {
        assert_eq!(Level::from_flags(Level::Warn, 0, false), Level::Warn);
        assert_eq!(Level::from_flags(Level::Warn, 1, false), Level::Info);
        assert_eq!(Level::from_flags(Level::Warn, 2, false), Level::Debug);
        assert_eq!(Level::from_flags(Level::Warn, 9, false), Level::Trace);
        assert_eq!(Level::from_flags(Level::Info, 1, false), Level::Debug);
        assert_eq!(Level::from_flags(Level::Info, 0, true), Level::Error);
    }
}
