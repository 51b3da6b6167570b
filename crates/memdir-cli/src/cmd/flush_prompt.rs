//! `memdir flush-prompt`

use crate::env::Env;
use crate::ui::{CliResult, out};

/// Print the text of the silent "write down what matters now" turn, for an agent loop to send
/// just before it compacts or clears the context (MCP: the save-before-compaction prompt).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir flush-prompt\n  my-agent --system-turn \"$(memdir flush-prompt)\""
)]
pub struct Args {}

/// Runs `flush-prompt`.
pub fn run(_a: Args, _env: &Env) -> CliResult {
    out(memdir_mcp::prompts::FLUSH)
}
