//! `memdir import`

use crate::app::Env;
use crate::store::Location;
use crate::ui::CliResult;

/// Copy a memory from another store into this one, byte for byte: every file and folder and the
/// settings. This memory is created when missing and must not hold other content.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:
  memdir --store 'postgres://127.0.0.1/memdir?tenant=alice' import --from ~/.local/share/memdir")]
pub struct Args {
    /// Where to copy from: a folder path or postgres://HOST/DB?tenant=NAME
    #[arg(long, value_name = "DIR|URL")]
    pub from: String,
}

/// Runs `import`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let from = Location::parse(&a.from)?;
    crate::cmd::export::copy(&from, &env.location, env)
}
