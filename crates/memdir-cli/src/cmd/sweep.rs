//! `memdir sweep`

use crate::app::Env;
use crate::ui::{CliResult, out};

/// Delete expired scratch notes. Safe to run any time; odd names in scratch/ are left alone.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memdir sweep --dry-run\n  memdir sweep")]
pub struct Args {
    /// Say what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `sweep`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let report = env.open()?.sweep(a.dry_run)?;
    let verb = if a.dry_run { "would remove" } else { "removed" };
    let mut text = String::new();
    for p in &report.removed {
        text.push_str(&format!("{verb} {p}\n"));
    }
    for p in &report.skipped {
        text.push_str(&format!("skipped {p} (not a scratch note)\n"));
    }
    text.push_str(&format!(
        "{verb} {} expired scratch note(s)\n",
        report.removed.len()
    ));
    out(&text)
}
