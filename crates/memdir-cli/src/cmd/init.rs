//! `memdir init`

use crate::app::Env;
use crate::store::Location;
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
    env.check_root()?;
    memdir::Memory::init_backend(env.location.open(true)?, env.clock.clone(), !a.no_git)?;
    match &env.location {
        Location::Folder(root) => out(&format!("memory folder ready at {}", root.display())),
        other => out(&format!("memory ready at {}", other.shown())),
    }
}
