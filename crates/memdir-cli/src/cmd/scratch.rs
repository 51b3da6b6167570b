//! `memdir scratch`

use crate::app::Env;
use crate::ui::{CliError, CliResult, body_arg, out};

/// Write a scratch note, `scratch/<expiry-ms>-<name>.md`, that `sweep` deletes once expired.
/// A note with the same name is replaced.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir scratch deploy-plan --ttl 2h \"canary first, then 10%\"\n  pbpaste | memdir scratch draft -"
)]
pub struct Args {
    /// A slug: lowercase letters, digits and dashes.
    pub name: String,
    /// How long it lives: 90 (minutes), 30m, 2h, 1d [default: 60m, or scratch.default_ttl]
    #[arg(long, value_name = "DURATION")]
    pub ttl: Option<String>,
    /// The text; `-` reads stdin.
    #[arg(allow_hyphen_values = true)]
    pub body: Option<String>,
}

/// Runs `scratch`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let ttl = a
        .ttl
        .as_deref()
        .map(memdir_core::duration::parse_ttl)
        .transpose()
        .map_err(CliError::invalid)?;
    let body = body_arg(a.body.as_deref())?;
    let path = env.open()?.scratch(&a.name, ttl, &body)?;
    out(&format!("wrote {path}"))
}
