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
    /// Refuse unless the file is still at this version (from `memdir version PATH`): a stale
    /// edit is a conflict, never a lost update.
    #[arg(long, value_name = "VERSION")]
    pub base: Option<String>,
    /// Allow a rewrite of core.md that drops many of its lines (the old text stays in git).
    #[arg(long)]
    pub force: bool,
    /// The exact text to replace.
    #[arg(long, allow_hyphen_values = true)]
    pub old: String,
    /// The replacement text (may be empty).
    #[arg(long, allow_hyphen_values = true)]
    pub new: String,
}

/// Runs `edit`.
pub fn run(a: Args, env: &Env) -> CliResult {
    env.open()?
        .with_base(a.base.as_deref())
        .with_force(a.force)
        .edit(&a.path, &a.old, &a.new)?;
    out(&format!("edited {}", a.path))
}
