//! `memdir recent`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out, out_json};
use memdir::recent::{RecentQuery, parse_window};

/// Show what changed recently, who changed it and why, newest first: from the history (git,
/// or the PostgreSQL tables), or from file modification times where none is kept.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir recent\n  memdir recent --since today\n  memdir recent --since 3d --path notes/\n  memdir recent --since 'last week' --writer claude --json\n\nA window is today, yesterday, 3d, 2w, 6h, 30m, last week, last month or YYYY-MM-DD."
)]
pub struct Args {
    /// Only changes since this window: today, 3d, 6h, last week, YYYY-MM-DD.
    #[arg(long, value_name = "WINDOW")]
    pub since: Option<String>,
    /// Only changes to this file or folder.
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,
    /// Only changes by this writer.
    #[arg(long = "by", value_name = "WRITER")]
    pub by: Option<String>,
    /// The most changes to show.
    #[arg(long, value_name = "N", value_parser = crate::cmd::positive, default_value_t = memdir::recent::DEFAULT_LIMIT)]
    pub limit: usize,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `recent`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let mem = env.open()?;
    let since = a
        .since
        .as_deref()
        .map(|s| parse_window(s, &mem.clock().now()))
        .transpose()
        .map_err(|e| CliError::invalid(format!("--since: {e}")))?;
    let recent = mem.recent(&RecentQuery {
        since,
        path: a.path,
        writer: a.by,
        limit: Some(a.limit),
    })?;
    if a.json {
        return out_json(&recent);
    }
    out(recent.render().trim_end())
}
