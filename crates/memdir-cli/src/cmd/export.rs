//! `memdir export`

use crate::app::Env;
use crate::store::Location;
use crate::ui::{CliResult, out};

/// Copy this memory into another store, byte for byte: every file and folder and the settings.
/// The target is created when missing and must not hold other content; it gets a history of
/// its own, starting with this copy.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir export --to ~/memory-copy
  memdir --store 'postgres://127.0.0.1/memdir?tenant=alice' export --to ./alice")]
pub struct Args {
    /// Where to copy to: a folder path or postgres://HOST/DB?tenant=NAME
    #[arg(long, value_name = "DIR|URL")]
    pub to: String,
}

/// Runs `export`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let to = Location::parse(&a.to)?;
    copy(&env.location, &to, env)
}

/// Copies the memory at `from` into `to` and starts `to`'s history.
pub fn copy(from: &Location, to: &Location, env: &Env) -> CliResult {
    if from == to {
        return Err(crate::ui::CliError::invalid(
            "the source and the target are the same memory: name another one",
        ));
    }
    let source = from.open(false)?;
    let target = to.open(true)?;
    let report = memdir::copy(source.store.as_ref(), target.store.as_ref())?;
    memdir::Memory::init_backend(target, env.clock.clone(), true)?;
    out(&format!(
        "copied {} files ({} bytes) from {} to {}{}",
        report.files,
        report.bytes,
        from.shown(),
        to.shown(),
        match report.unchanged {
            0 => String::new(),
            n => format!("; {n} already there"),
        }
    ))
}
