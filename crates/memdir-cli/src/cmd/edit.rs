//! `memdir edit`

use crate::app::Env;
use crate::ui::{CliResult, out};

/// Replace exactly one occurrence of OLD with NEW. Fails if OLD is absent (exit 1) or occurs
/// more than once (exit 2).
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memdir edit core.md --old \"tea\" --new \"coffee\"")]
pub struct Args {
    /// A path inside the memory folder.
    pub path: String,
    /// The exact text to replace.
    #[arg(long, allow_hyphen_values = true)]
    pub old: String,
    /// The replacement text (may be empty).
    #[arg(long, allow_hyphen_values = true)]
    pub new: String,
}

/// Runs `edit`.
pub fn run(a: Args, env: &Env) -> CliResult {
    env.open()?.edit(&a.path, &a.old, &a.new)?;
    out(&format!("edited {}", a.path))
}
