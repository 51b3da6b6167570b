//! `memdir history`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out, out_json};

/// Show the changes recorded in git, newest first: commit, date, writer, what and why.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir history\n  memdir history core.md --limit 5\n  git -C \"$MEMDIR_ROOT\" log -p   # the same history, with diffs"
)]
pub struct Args {
    /// Only changes to this file.
    pub path: Option<String>,
    /// How many commits to show.
    #[arg(long, default_value_t = 20, value_parser = crate::cmd::positive)]
    pub limit: usize,
    /// One JSON object per commit.
    #[arg(long)]
    pub json: bool,
}

/// Runs `history`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let entries = env.open()?.history(a.path.as_deref(), a.limit)?;
    if entries.is_empty() {
        return Err(CliError {
            message: match &a.path {
                Some(p) => format!("no changes recorded for {p}"),
                None => "no changes recorded yet".to_string(),
            },
            code: crate::ui::exit::NOT_FOUND,
        });
    }
    let mut text = String::new();
    for e in &entries {
        if a.json {
            out_json(e)?;
            continue;
        }
        text.push_str(&format!(
            "{}  {}  {:<12} {}",
            &e.commit[..10],
            e.date,
            e.writer,
            e.summary
        ));
        if let Some(r) = &e.reason {
            text.push_str(&format!("  — {r}"));
        }
        if let Some(s) = e.source.as_deref().filter(|s| *s != "user") {
            text.push_str(&format!("  [{s}]"));
        }
        text.push('\n');
    }
    out(&text)
}
