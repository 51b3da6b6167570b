//! `memdir init`

use crate::app::Env;
use crate::ui::{CliResult, out};

/// Create the layout: core.md, log/, scratch/, .memdir/config.toml. Existing files are kept.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memdir --root ~/agent-memory init")]
pub struct Args {}

/// Runs `init`.
pub fn run(_: Args, env: &Env) -> CliResult {
    memdir::Memory::init(&env.root, env.clock.clone())?;
    out(&format!("memory folder ready at {}", env.root.display()))
}
