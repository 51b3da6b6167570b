//! `memdir log`

use crate::env::Env;
use crate::ui::{CliResult, out, read_stdin};

/// Append one entry to today's log (`log/YYYY-MM-DD.md`, local time).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir log decided to ship on Friday\n  git log -1 --format=%s | memdir log -"
)]
pub struct Args {
    /// The text; several words are joined with spaces; `-` reads stdin.
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
    pub text: Vec<String>,
}

/// Runs `log`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let text = if a.text.len() == 1 && a.text[0] == "-" {
        read_stdin()?
    } else {
        a.text.join(" ")
    };
    let receipt = env.open()?.log(&text)?;
    out(&format!("logged to {}", receipt.path))
}
