//! `memdir undo`

use crate::env::Env;
use crate::ui::{CliResult, out};

/// Revert one change (default: the newest) with a new commit. History is never rewritten.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memdir undo\n  memdir undo 3f2a9c1e")]
pub struct Args {
    /// The commit to revert (an id or prefix from `memdir history`).
    pub commit: Option<String>,
}

/// Runs `undo`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let mem = env.open()?;
    let id = mem.undo(a.commit.as_deref())?;
    out(&format!("reverted {id}"))
}
