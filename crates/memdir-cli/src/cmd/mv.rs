//! `memdir mv`

use crate::env::Env;
use crate::ui::{CliResult, out};

/// Move a file or folder. Never overwrites: an existing target is an error.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memdir mv notes/draft.md notes/final.md")]
pub struct Args {
    /// What to move.
    pub from: String,
    /// Where to.
    pub to: String,
}

/// Runs `mv`.
pub fn run(a: Args, env: &Env) -> CliResult {
    env.open()?.mv(&a.from, &a.to)?;
    out(&format!("moved {} to {}", a.from, a.to))
}
