//! `memdir init`

use crate::app::Env;
use crate::ui::{CliResult, out};

/// Create the layout: core.md, log/, scratch/, .memdir/config.toml, and a git repository for
/// provenance. Existing files are kept.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memdir --root ~/agent-memory init")]
pub struct Args {
    /// Do not make the folder a git repository (no provenance history).
    #[arg(long)]
    pub no_git: bool,
}

/// Runs `init`.
pub fn run(a: Args, env: &Env) -> CliResult {
    memdir::Memory::init_with(&env.root, env.clock.clone(), !a.no_git)?;
    out(&format!("memory folder ready at {}", env.root.display()))
}
