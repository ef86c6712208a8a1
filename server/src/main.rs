//! The `livenote` binary: parse the command line, set up logging to stderr, run.

use std::process::ExitCode;

fn main() -> ExitCode {
    livenote::cli::main()
}
