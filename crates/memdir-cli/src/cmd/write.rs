//! `memdir write`

use crate::env::Env;
use crate::ui::{CliResult, body_arg, made, out};

/// Create or replace a file, atomically, with exactly the given bytes (no newline is added; `read`
/// adds one on a terminal). Writes to core.md are checked against its cap.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir write people/priya.md \"Priya leads payments.\"\n  cat draft.md | memdir write notes/plan.md -"
)]
pub struct Args {
    /// A path inside the memory folder.
    pub path: String,
    /// Refuse unless the file is still at this version (from `memdir version PATH`): a stale
    /// edit is a conflict, never a lost update.
    #[arg(long, value_name = "VERSION")]
    pub base: Option<String>,
    /// Allow a rewrite of core.md that drops many of its lines (the old text stays in git).
    #[arg(long)]
    pub force: bool,
    /// The content; `-` reads stdin; absent writes an empty file.
    #[arg(allow_hyphen_values = true)]
    pub body: Option<String>,
}

/// Runs `write`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let body = body_arg(a.body.as_deref())?;
    // The path inside the memory, as the other commands show it: `/etc/x.md` is `etc/x.md`.
    let path = memdir_core::path::MemPath::parse_file(&a.path).map_err(memdir::Error::from)?;
    let outcome = env
        .open()?
        .with_base(a.base.as_deref())
        .with_force(a.force)
        .write(&a.path, &body)?;
    made(outcome)?;
    out(&format!("wrote {}", path.as_str()))
}
