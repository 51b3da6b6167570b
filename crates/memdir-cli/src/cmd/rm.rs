//! `memdir rm`

use crate::app::Env;
use crate::ui::{CliResult, out};

/// Delete a file, or a folder with everything in it.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memdir rm notes/old-plan.md")]
pub struct Args {
    /// A path inside the memory folder.
    pub path: String,
}

/// Runs `rm`.
pub fn run(a: Args, env: &Env) -> CliResult {
    env.open()?.rm(&a.path)?;
    out(&format!("removed {}", a.path))
}
