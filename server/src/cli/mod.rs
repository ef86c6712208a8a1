//! The command line: `livenote check`, `livenote list`, ... The only layer that prints; every
//! command returns its exit status (0 fine, 1 problems found, 2 usage or I/O failure).

mod ask;
mod check;
mod diff;
mod event;
mod history;
mod init;
mod list;
mod log;
mod make_live;
mod man;
mod mcp;
mod memory;
mod new;
mod restore;
mod run;
mod signal;
mod skills;
mod sources;
mod stop;
mod tick;
mod undo;
mod watch;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "livenote",
    version,
    about = "Keeps markdown notes live: a language server and CLI",
    // Our own `help`, so that `livenote help --help` works like every other command.
    disable_help_subcommand = true,
    after_help = "Logs go to stderr: warnings and errors (`watch` and `tick` add one line per fire, skip, \
done and failed; `lsp` sends what you should see to the editor). -v/-q change that; LIVENOTE_LOG (e.g. \
`debug`, `livenote=trace`: tracing's EnvFilter syntax) overrides both."
)]
pub struct Cli {
    /// Log more: `-v` info, `-vv` debug, `-vvv` trace (`watch`: one level more than its own).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Log errors only.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate notes: `file:line:col: severity code message`; exit 1 when any has errors.
    Check {
        /// Notes or folders (default: the current folder).
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Run the language server over stdio (for editors).
    ///
    /// Its stderr gets warnings and errors; the editor gets what you should see (runs, trust,
    /// configuration problems) as log messages (window/logMessage); `--log-file` keeps it all.
    Lsp {
        /// Accepted and ignored: stdio is the only transport, and some clients
        /// (vscode-languageclient's `TransportKind.stdio`) always pass it.
        #[arg(long, hide = true)]
        stdio: bool,
        /// Append the whole log (INFO and up, or as LIVENOTE_LOG says) to this file; it must be a
        /// regular file or not exist yet (its folder must).
        #[arg(long, value_name = "PATH")]
        log_file: Option<PathBuf>,
    },
    /// Serve the workspace DIR to chat assistants as an MCP server over stdio.
    ///
    /// Tools: list_live_notes, note_status, make_live, extend_objective, set_triggers,
    /// run_note, stop_run, set_active, make_passive, undo_last_run, note_history, check; the
    /// prompt make_live_note; the live notes as resources
    /// (livenote://<path>). Runs use the folder's .livenote.toml only when it is trusted, as
    /// `livenote run` does. stdout carries the protocol; the log goes to stderr.
    Mcp {
        /// The workspace folder (default: the current folder); it must exist.
        dir: Option<PathBuf>,
    },
    /// Run one note now (manual run; ignores `active`, `until` and backoff; in an untrusted folder only
    /// your own configuration is used, and a note that needs the folder's does not run).
    Run {
        /// The note to run.
        note: PathBuf,
        /// Extra context for the agent.
        #[arg(long)]
        context: Option<String>,
        /// The workspace folder (default: found from the note).
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long, hide = true)]
        clock_file: Option<PathBuf>,
    },
    /// Ask livenote about a note in a sentence; the configured model acts on it and says what it did.
    ///
    /// "keep an eye on the pollen count too", "every weekday at nine instead", "pause it", "run
    /// it now with last week's numbers", "why did it not run this morning?": the model (`[agent]
    /// provider`) gets the note, its status and latest runs, and livenote's own operations as
    /// tools: extend the objective (never replaced), set triggers, pause or resume, make live,
    /// and only when the sentence asks for it run now, stop, undo the last run or make passive.
    /// Changes are checked first and written as `make-live` writes them (an invalid block is
    /// never written); the reply goes to stdout. Without a model, prints how to set one up and
    /// the direct commands. Exit 0 when the model answered, 1 when it failed, an action was
    /// refused or there is no model.
    Ask {
        /// The note to ask about.
        note: PathBuf,
        /// What you want, in one sentence.
        sentence: String,
        /// The workspace folder (default: found from the note).
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long, hide = true)]
        clock_file: Option<PathBuf>,
    },
    /// Make a note live (created when missing), or change a live note's objective and the
    /// triggers given; refused, with nothing written, when the note would have errors.
    ///
    /// `--describe` lets the configured model draft the objective, triggers, tools and skills
    /// from one sentence, the note's title and first lines; a draft that would not be valid is
    /// never written: the sentence becomes the objective (manual only) and a warning says why,
    /// as it does without a model provider. On a live note the sentence extends the block: the
    /// objective keeps every word, and the output says what changed. `livenote mcp`'s
    /// `make_live` does the same edit.
    #[command(name = "make-live")]
    MakeLive {
        /// The note (`.md`); its folder must exist.
        note: PathBuf,
        /// What the note should keep being: what to show, from where, how fresh, in what layout.
        #[arg(long, required_unless_present = "describe")]
        objective: Option<String>,
        /// A cron expression in local time (`0 9 * * 1-5`); `""` removes the note's.
        #[arg(long, value_name = "EXPR")]
        cron: Option<String>,
        /// A daily band, `HH:MM-HH:MM` (repeat for more); replaces the note's windows.
        #[arg(long, value_name = "HH:MM-HH:MM")]
        window: Vec<String>,
        /// Which incoming events should update the note, in words; `""` removes the note's.
        #[arg(long, value_name = "TEXT")]
        event: Option<String>,
        /// One sentence ("keep the latest Rust release notes, every Monday morning") for the
        /// configured model to draft the block from.
        #[arg(long, value_name = "TEXT", conflicts_with_all = ["objective", "cron", "window", "event"])]
        describe: Option<String>,
        /// Run the note once afterwards, as `livenote run` (nothing else runs it: not a draft).
        #[arg(long)]
        run: bool,
        /// The workspace folder (default: found from the note).
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long, hide = true)]
        clock_file: Option<PathBuf>,
    },
    /// The headless scheduler: fire due notes in DIR until interrupted, with one log line per
    /// fire, skip, done and failed on stderr.
    Watch {
        /// The workspace folder (default: the current folder); it must exist.
        dir: Option<PathBuf>,
        /// Read "now" from this file (RFC 3339), for end-to-end tests.
        #[arg(long, hide = true)]
        clock_file: Option<PathBuf>,
    },
    /// One pass for cron, a systemd timer, a CI schedule or a CronJob: fire the notes of DIR due
    /// now and process its pending events, wait for those runs, and exit.
    ///
    /// The notes and events are those `watch` would run at this instant, with one log line per
    /// fire, skip, done and failed on stderr. A note already running in another livenote process
    /// (`watch`, an editor, another tick) is skipped, and a note a run has just attempted is not
    /// due: ticks in a row, or beside `watch`, run nothing twice. Exit status: 0, 1 when a run
    /// failed, 2 on a usage error or when DIR is not trusted (`livenote trust DIR`).
    Tick {
        /// The workspace folder (default: the current folder); it must exist.
        dir: Option<PathBuf>,
        /// Print what would fire and which events would be processed, one line each, and run
        /// nothing (nothing is written).
        #[arg(long)]
        dry_run: bool,
        /// Also fire a note whose latest occurrence was neither run nor tried, by any machine,
        /// and could last fire (the end of a cron's 2-minute grace, of a window's band) no more
        /// than DURATION ago (`15m`, `1h`): for schedules that start late (GitHub Actions, a
        /// CronJob every few minutes). One run per occurrence. In place of the folder's
        /// `[scheduler] catch_up` for this tick.
        #[arg(long, value_name = "DURATION")]
        catch_up: Option<String>,
        /// Leave the sources (`[sources.NAME]`) unpolled: fire and process only what is
        /// already due or queued.
        #[arg(long)]
        no_sources: bool,
        /// Read "now" from this file (RFC 3339), for end-to-end tests.
        #[arg(long, hide = true)]
        clock_file: Option<PathBuf>,
    },
    /// Queue an event for the live notes of DIR; the payload is read from stdin (at most 1 MiB).
    Event {
        /// Who produced the event (e.g. `gmail`).
        #[arg(long)]
        source: String,
        /// What happened (e.g. `email.synced`).
        #[arg(long = "type", value_name = "TYPE")]
        kind: String,
        /// Offer the event to this note only, without routing.
        #[arg(long)]
        target: Option<PathBuf>,
        /// The payload is JSON (kept as a JSON value instead of text).
        #[arg(long)]
        json: bool,
        /// The workspace folder (default: the current folder).
        dir: Option<PathBuf>,
    },
    /// Trust a workspace folder with its `.livenote.toml` as it is now: its configuration is
    /// then used, and its notes run on schedule and on events. A changed file needs trust again.
    Trust {
        /// The folder (default: the current folder); it must exist.
        dir: Option<PathBuf>,
        /// List the trusted folders (and whether their config changed since) instead.
        #[arg(long, conflicts_with = "dir")]
        list: bool,
    },
    /// Write a note from a template: `daily` (today's page: calendar, emails, priorities; three
    /// windows and in-day events), `digest` (a weekly digest), `tracker` (the state of one thing
    /// and its log), or the workspace's own `templates/NAME.md`, which wins over a built-in of
    /// the same name. Never over an existing file; the note's diagnostics are printed (exit 1 on
    /// errors).
    New {
        /// The template.
        name: String,
        /// The note to write (default: Today.md for `daily`, else NAME.md); its folder must exist.
        path: Option<PathBuf>,
    },
    /// Create `.livenote.toml` and an example live note in DIR.
    Init {
        /// The folder to set up (default: the current folder; created if missing).
        dir: Option<PathBuf>,
    },
    /// List live notes with their status, what is due and when they fire next.
    List {
        /// The workspace folder (default: the current folder).
        dir: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
        /// Evaluate schedules at this instant instead of now: RFC 3339 (`2026-11-24T08:00:00+01:00`,
        /// times are then shown in that offset) or a local date-time (`2026-11-24T08:00`). A cron
        /// occurrence exactly at the instant counts as firing then.
        #[arg(long)]
        at: Option<String>,
    },
    /// Withdraw the trust of a folder: its `.livenote.toml` is ignored again and nothing runs
    /// on its own there.
    Untrust {
        /// The trusted folder.
        dir: PathBuf,
    },
    /// Stop the note's run, whichever livenote process holds it (watch, an editor, run).
    Stop {
        /// The note whose run to stop.
        note: PathBuf,
    },
    /// Restore the body from before the latest run that changed it (itself undoable).
    Undo {
        /// The note to restore.
        note: PathBuf,
        /// Restore even though the body was edited since that run (the current body is kept in
        /// history).
        #[arg(long)]
        force: bool,
    },
    /// The note's runs, newest first: outcome, summary, lines changed, whether undo can restore.
    History {
        /// The note whose runs to list.
        note: PathBuf,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// What a run changed in the note's body, as a unified diff (default: the latest run that
    /// changed it).
    Diff {
        /// The note.
        note: PathBuf,
        /// The run's id, as `livenote history` lists it.
        run: Option<String>,
    },
    /// Restore the body kept from before a run (itself undoable: `livenote undo` brings the
    /// current body back).
    Restore {
        /// The note to restore.
        note: PathBuf,
        /// The run whose snapshot to restore, as `livenote history` lists it.
        run: String,
        /// Restore even though the body was edited since the latest run (the current body is
        /// kept in history).
        #[arg(long)]
        force: bool,
    },
    /// The agent's memory of a live note (facts kept across its runs), newest first; `show KEY`,
    /// `rm KEY` or `clear` it.
    Memory {
        /// The live note.
        note: PathBuf,
        #[command(subcommand)]
        action: Option<memory::Action>,
        #[arg(long, value_enum, default_value_t, global = true)]
        format: Format,
    },
    /// List the skills notes may name in `live.skills`: name, source, file, description.
    ///
    /// Skills come from the workspace's skills/ folder (`[skills] dirs`), the user's
    /// skills/ beside their config file and livenote itself; a workspace skill overrides a
    /// user's of the same name, which overrides a built-in one (the shadowed one is listed as
    /// overridden). Runs use the workspace's skills only when the folder is trusted.
    Skills {
        /// The workspace folder (default: the current folder).
        dir: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// List the sources of DIR (`[sources.NAME]`): kind, last poll, items seen, next poll, last
    /// error; `poll NAME` polls one now.
    ///
    /// Sources come from your own config or a trusted folder's `.livenote.toml`; `watch` and
    /// the language server poll them when due (see docs/sources.md).
    #[command(args_conflicts_with_subcommands = true)]
    Sources {
        #[command(subcommand)]
        action: Option<sources::Action>,
        /// The workspace folder (default: the current folder).
        dir: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Print a shell completion script: `livenote completions bash > ~/.local/share/bash-completion/completions/livenote`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page livenote(1) in roff (`livenote man | man -l -`), or write one page
    /// per command into a folder (`livenote man --out ~/.local/share/man/man1`).
    Man {
        /// Write livenote.1, livenote-check.1, ... into this existing folder instead.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Explain livenote or one of its commands (`livenote help run`, as `livenote run --help`).
    Help {
        /// The command to explain (default: livenote itself).
        command: Option<String>,
    },
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let code = run(cli);
    // The MCP servers runs started end with the process (their process groups).
    crate::mcp::shutdown();
    ExitCode::from(code)
}

/// Run a parsed command, logging as its flags say; returns the exit status.
pub fn run(cli: Cli) -> u8 {
    // `watch` and `tick` report their runs in their log: that is their output.
    let default = match cli.command {
        Command::Watch { .. } | Command::Tick { .. } => log::Level::Info,
        _ => log::Level::Warn,
    };
    let log_file = match &cli.command {
        Command::Lsp { log_file, .. } => log_file.as_deref(),
        _ => None,
    };
    let client_log = log::init(&log::Setup {
        level: log::Level::from_flags(default, cli.verbose, cli.quiet),
        lsp: matches!(cli.command, Command::Lsp { .. }),
        log_file,
    });
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        Command::Check { paths, format } => check::run(&paths, format, &mut out),
        Command::List { dir, format, at } => list::run(dir, format, at.as_deref(), &mut out),
        Command::Skills { dir, format } => skills::run(dir, format, &mut out),
        Command::Sources { action: None, dir, format } => sources::list(dir, format, &mut out),
        Command::Sources {
            action: Some(sources::Action::Poll { name, dir, dry_run, clock_file }), ..
        } => sources::poll(&name, dir, dry_run, clock_file, &mut out),
        Command::Lsp { .. } => {
            drop(out);
            return lsp(client_log);
        }
        Command::Mcp { dir } => {
            drop(out);
            return mcp::run(dir);
        }
        Command::Run { note, context, workspace, clock_file } => {
            drop(out);
            return finish(run::run(note, context, workspace, clock_file));
        }
        Command::MakeLive { note, objective, cron, window, event, describe, run, workspace, clock_file } => {
            let args = make_live::Args {
                note,
                objective,
                cron,
                windows: window,
                event,
                describe,
                run,
                workspace,
                clock_file,
            };
            make_live::run(args, &mut out, &mut std::io::stderr())
        }
        Command::Ask { note, sentence, workspace, clock_file } => {
            let args = ask::Args { note, sentence, workspace, clock_file };
            ask::run(args, &mut out, &mut std::io::stderr())
        }
        Command::Watch { dir, clock_file } => {
            drop(out);
            return finish(watch::run(dir, clock_file));
        }
        Command::Tick { dir, dry_run, catch_up, no_sources, clock_file } => {
            // A dry run prints its list on stdout; `tick::run` takes stdout itself.
            drop(out);
            let opts = tick::Options { dry_run, catch_up: catch_up.as_deref(), no_sources, clock_file };
            return finish(tick::run(dir, opts));
        }
        Command::Event { source, kind, target, json, dir } => {
            let args = event::Args { source, kind, target, json, dir };
            event::run(args, &mut std::io::stdin().lock(), &mut out, &mut std::io::stderr())
        }
        Command::Trust { dir: _, list: true } => trust_list(&mut out),
        Command::Trust { dir, list: false } => trust(dir, &mut out),
        Command::Untrust { dir } => untrust(&dir, &mut out),
        Command::Init { dir } => init::run(dir, &mut out),
        Command::New { name, path } => new::run(&name, path, &mut out, &mut std::io::stderr()),
        Command::Completions { shell } => {
            // Into a buffer first: the generator panics on a write error (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "livenote",
                &mut script,
            );
            out.write_all(&script).map(|()| 0).map_err(anyhow::Error::from)
        }
        Command::Man { out: dir } => man::run(dir.as_deref(), &mut out),
        Command::Help { command } => help(command.as_deref(), &mut out),
        Command::Stop { note } => stop::run(&note, &mut out, &mut std::io::stderr()),
        Command::Undo { note, force } => undo::run(&note, force, &mut out, &mut std::io::stderr()),
        Command::History { note, format } => history::run(&note, format, &mut out),
        Command::Diff { note, run } => diff::run(&note, run.as_deref(), &mut out, &mut std::io::stderr()),
        Command::Restore { note, run, force } => {
            restore::run(&note, &run, force, &mut out, &mut std::io::stderr())
        }
        Command::Memory { note, action, format } => {
            memory::run(&note, action, format, &mut out, &mut std::io::stderr())
        }
    };
    let _ = out.flush();
    match result {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "livenote: {e:#}");
            2
        }
    }
}

fn finish(r: anyhow::Result<u8>) -> u8 {
    r.unwrap_or_else(|e| {
        let _ = writeln!(std::io::stderr(), "livenote: {e:#}");
        2
    })
}

fn trust_store() -> anyhow::Result<crate::workspace::trust::TrustStore> {
    crate::workspace::trust::TrustStore::user()
        .ok_or_else(|| anyhow::anyhow!("no home or data folder to keep the trust store in"))
}

/// `livenote trust [DIR]`: DIR must be an existing folder (never its parent), and is trusted
/// with its `.livenote.toml` as it is now.
fn trust(dir: Option<PathBuf>, out: &mut impl Write) -> anyhow::Result<u8> {
    let dir = dir.unwrap_or_else(|| PathBuf::from("."));
    let store = trust_store()?;
    let record = store.trust(&dir).map_err(|e| anyhow::anyhow!("trust: {e}"))?;
    let config = match &record.config {
        Some(d) => format!("its .livenote.toml as it is now ({})", short_digest(d)),
        None => "no .livenote.toml (one added later needs trust again)".to_owned(),
    };
    writeln!(
        out,
        "trusted {} with {config}: its configuration is used and its live notes run on schedule and on events",
        record.path
    )?;
    let files: Vec<&str> = record.files.iter().flatten().map(|(f, _)| f.as_str()).collect();
    if !files.is_empty() {
        writeln!(out, "the trust covers the files it runs as they are now: {}", files.join(", "))?;
    }
    Ok(0)
}

/// `livenote untrust DIR`.
fn untrust(dir: &std::path::Path, out: &mut impl Write) -> anyhow::Result<u8> {
    let store = trust_store()?;
    if store.untrust(dir).map_err(|e| anyhow::anyhow!("untrust: {e}"))? {
        writeln!(
            out,
            "untrusted {}: its .livenote.toml is ignored and nothing runs on its own",
            dir.display()
        )?;
        Ok(0)
    } else {
        let _ = writeln!(std::io::stderr(), "livenote: {} was not trusted", dir.display());
        Ok(1)
    }
}

/// `livenote trust --list`: one trusted folder a line, with whether its trust is in effect.
fn trust_list(out: &mut impl Write) -> anyhow::Result<u8> {
    use crate::workspace::trust::{Trust, TrustList};
    let store = trust_store()?;
    let (records, legacy) = store.records().map_err(|e| anyhow::anyhow!("trust --list: {e}"))?;
    let list: TrustList = store.list();
    for r in &records {
        let config = r.config.as_deref().map_or_else(|| "no .livenote.toml".to_owned(), short_digest);
        let state = if !std::path::Path::new(&r.path).is_dir() {
            "folder missing".to_owned()
        } else {
            let path = std::path::Path::new(&r.path);
            match crate::workspace::trust::read_config_bytes(path) {
                Err(e) => format!("CHANGED since ({e}): not in effect until trusted again"),
                Ok(bytes) => match list.check_content(path, bytes.as_deref()) {
                    Trust::Trusted { .. } => "trusted".to_owned(),
                    Trust::Changed { file: Some(f), .. } => {
                        format!("CHANGED since ({f}): not in effect until trusted again")
                    }
                    _ => "CHANGED since: not in effect until trusted again".to_owned(),
                },
            }
        };
        writeln!(out, "{}\t{state}\t{config}\t{}", r.path, r.trusted_at)?;
        // The programs the trust covers, so a `git pull` that changed one is easy to review.
        for (file, digest) in r.files.iter().flatten() {
            let digest = digest.as_deref().map_or_else(|| "not there".to_owned(), short_digest);
            writeln!(out, "\truns {file}\t{digest}")?;
        }
    }
    for l in &legacy {
        writeln!(
            out,
            "{}\tnot in effect: listed by an older livenote that did not record the config's content (trust the workspace folders you mean again)",
            l.display()
        )?;
    }
    if records.is_empty() && legacy.is_empty() {
        writeln!(out, "(no trusted folders)")?;
    }
    Ok(0)
}

/// `sha256:` and the first 12 hex digits: enough to tell versions apart at a glance.
fn short_digest(d: &str) -> String {
    d.get(..19).unwrap_or(d).to_owned()
}

/// Serve LSP on stdio. stdout carries the protocol, so nothing else may print there.
fn lsp(log: Option<crate::lsp::log::ClientLog>) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "livenote: start the async runtime: {e}");
            return 2;
        }
    };
    let status = runtime.block_on(async {
        let mut shutdown = signal::Shutdown::listen();
        tokio::select! {
            status = crate::lsp::run_stdio(log) => status,
            signal = shutdown.recv() => {
                tracing::info!("stop serving: {signal}");
                1
            }
        }
    });
    // File operations still under way get a moment to finish; nothing may hold up the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    status
}

/// `livenote help [COMMAND]`: the long help of livenote or of one command.
fn help(command: Option<&str>, out: &mut impl Write) -> anyhow::Result<u8> {
    let mut cli = <Cli as clap::CommandFactory>::command();
    // Built, the commands know their full names (`livenote run`) for their usage lines.
    cli.build();
    let text = match command {
        None => cli.render_long_help(),
        Some(name) => match cli.find_subcommand_mut(name) {
            Some(sub) => sub.render_long_help(),
            None => {
                let _ =
                    writeln!(std::io::stderr(), "livenote: no command `{name}`; `livenote help` lists them");
                return Ok(2);
            }
        },
    };
    write!(out, "{text}")?;
    Ok(0)
}
