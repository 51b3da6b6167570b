//! `memdir sweep`

use crate::env::Env;
use crate::ui::{CliResult, out};

/// Delete expired scratch notes, and move expired notes and old state.md entries into archive/.
/// Safe to run any time; odd names in scratch/ are left alone; nothing but scratch is deleted.
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
    let moved = if a.dry_run {
        "would archive"
    } else {
        "archived"
    };
    for n in &report.archived_notes {
        text.push_str(&format!("{moved} {} to {} (expired)\n", n.from, n.to));
    }
    if let Some(to) = &report.state_archive {
        text.push_str(&format!(
            "{moved} {} state.md entr{} to {to}\n",
            report.archived_state_entries,
            if report.archived_state_entries == 1 {
                "y"
            } else {
                "ies"
            }
        ));
    }
    out(&text)
}
