//! `memdir read`

use crate::app::Env;
use crate::ui::{CliResult, out_bytes};

/// Print a file of the memory folder.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memdir read core.md\n  memdir read /memories/people/priya.md")]
pub struct Args {
    /// A path inside the memory folder (`notes/x.md`, `/notes/x.md`, `/memories/notes/x.md`).
    pub path: String,
}

/// Runs `read`.
pub fn run(a: Args, env: &Env) -> CliResult {
    out_bytes(&env.open()?.read(&a.path)?)
}
