//! `memdir rm`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out};
use memdir::EntryKind;

/// Delete a file, or with -r a folder and everything in it.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir rm notes/old-plan.md\n  memdir rm scratch/deploy-plan     # a scratch note by its name\n  memdir rm -r notes/2025            # a folder"
)]
pub struct Args {
    /// A path inside the memory folder, or `scratch/<name>` for a scratch note.
    pub path: String,
    /// Delete a folder with everything in it.
    #[arg(short, long)]
    pub recursive: bool,
}

/// Runs `rm`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let mem = env.open()?;
    let path = crate::cmd::scratch::resolve(&mem, &a.path)?;
    let p = memdir_core::path::MemPath::parse(&path).map_err(memdir::Error::from)?;
    if !a.recursive
        && !p.is_root()
        && mem
            .store()
            .stat(&p)?
            .is_some_and(|e| e.kind == EntryKind::Dir)
    {
        return Err(CliError::invalid(format!(
            "{path} is a folder: delete it and everything in it with `memdir rm -r {path}`"
        )));
    }
    mem.rm(&path)?;
    out(&format!("removed {path}"))
}
