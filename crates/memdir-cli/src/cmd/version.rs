//! `memdir version`

use crate::env::Env;
use crate::ui::{CliError, CliResult, exit, out};

/// Print a file's version (its git blob id). Pass it to `write --base` or `edit --base` so a
/// change made by someone else in between is refused instead of overwritten.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  v=$(memdir version core.md) && memdir edit core.md --base \"$v\" --old tea --new coffee"
)]
pub struct Args {
    /// A file inside the memory folder.
    pub path: String,
}

/// Runs `version`.
pub fn run(a: Args, env: &Env) -> CliResult {
    match env.open()?.version(&a.path)? {
        Some(v) => out(&v),
        None => Err(CliError {
            message: format!("{} does not exist", a.path),
            code: exit::NOT_FOUND,
        }),
    }
}
