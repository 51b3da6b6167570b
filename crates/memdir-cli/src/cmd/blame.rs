//! `memdir blame`

use crate::env::Env;
use crate::ui::{CliResult, out, out_json};

/// Show, per line of a file, the commit, writer, date and reason that last changed it.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  memdir blame core.md")]
pub struct Args {
    /// A file inside the memory folder.
    pub path: String,
    /// One JSON object per line.
    #[arg(long)]
    pub json: bool,
}

/// Runs `blame`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let lines = env.open()?.blame(&a.path)?;
    let mut text = String::new();
    for l in &lines {
        if a.json {
            out_json(l)?;
            continue;
        }
        text.push_str(&format!(
            "{} {} {:<12} {:>4}| {}{}\n",
            &l.commit[..10],
            l.date,
            l.writer,
            l.line,
            l.text,
            l.reason
                .as_deref()
                .map(|r| format!("   # {r}"))
                .unwrap_or_default()
        ));
    }
    out(&text)
}
