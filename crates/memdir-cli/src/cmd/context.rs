//! `memdir context`

use crate::app::Env;
use crate::ui::{CliResult, out, out_json};
use serde::Serialize;

/// Print the context: core, yesterday's and today's log, live scratch notes, and a pointer to
/// the rest. Layers that are missing are left out; this never fails on a partial folder.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir context\n  memdir context --json | jq '.sections[] | {name, tokens}'"
)]
pub struct Args {
    /// Print JSON: each section with its bytes and estimated tokens.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct JsonContext<'a> {
    sections: &'a [memdir_core::context::Section],
    bytes: usize,
    tokens: usize,
}

/// Runs `context`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let ctx = env.open()?.context()?;
    if a.json {
        let bytes = ctx.sections.iter().map(|s| s.bytes).sum();
        let tokens = ctx.sections.iter().map(|s| s.tokens).sum();
        out_json(&JsonContext {
            sections: &ctx.sections,
            bytes,
            tokens,
        })
    } else {
        out(&ctx.render())
    }
}
