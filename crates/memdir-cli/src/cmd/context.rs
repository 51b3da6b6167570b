//! `memdir context`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out, out_json};
use memdir_core::config::MIN_CONTEXT_TOKENS;
use serde::Serialize;

/// Print the context: core, the index, state, the most recent days of logs, live scratch notes,
/// and a pointer to the rest, within a token budget. Layers that are missing are left out; this
/// never fails on a partial folder.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir context\n  memdir context --max-tokens 8000\n  memdir context --json | jq '.sections[] | {name, tokens}'"
)]
pub struct Args {
    /// Print JSON: each section with its bytes and estimated tokens.
    #[arg(long)]
    pub json: bool,
    /// The most tokens (bytes / 4) to load [default: [context] max_tokens, 4000]
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,
}

#[derive(Serialize)]
struct JsonContext<'a> {
    sections: &'a [memdir_core::context::Section],
    bytes: usize,
    tokens: usize,
    max_tokens: usize,
}

/// Runs `context`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let mem = env.open()?;
    let max = a.max_tokens.unwrap_or(mem.config().context.max_tokens);
    if max < MIN_CONTEXT_TOKENS {
        return Err(CliError::invalid(format!(
            "--max-tokens {max} is too small: give at least {MIN_CONTEXT_TOKENS}"
        )));
    }
    let ctx = mem.context_within(max)?;
    if a.json {
        let bytes = ctx.sections.iter().map(|s| s.bytes).sum();
        let tokens = ctx.sections.iter().map(|s| s.tokens).sum();
        out_json(&JsonContext {
            sections: &ctx.sections,
            bytes,
            tokens,
            max_tokens: max,
        })
    } else {
        out(&ctx.render())
    }
}
