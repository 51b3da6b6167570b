//! `memdir init`

use crate::env::Env;
use crate::store::Location;
use crate::ui::{CliResult, out};

/// Create the layout: core.md, log/, scratch/, .memdir/config.toml, and a git repository for
/// provenance. Existing files are kept. With `--existing`, adopt a folder another tool keeps
/// (Claude Code's auto memory, an OpenClaw workspace) as it is: its layout is detected (or
/// taken from `--layout`) and recorded in the config, and no file of it is touched.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir --root ~/agent-memory init
  memdir --root ~/.claude/projects/-home-me-src-app/memory init --existing
  memdir --root ~/.openclaw/workspace --layout openclaw init --existing")]
pub struct Args {
    /// Do not make the folder a git repository (no provenance history).
    #[arg(long)]
    pub no_git: bool,

    /// Adopt the folder as it is: detect its layout (memdir, claude-code or openclaw) unless
    /// --layout names it, record it in .memdir/config.toml, and create no layer files.
    #[arg(long)]
    pub existing: bool,
}

/// Runs `init`.
pub fn run(a: Args, env: &Env) -> CliResult {
    env.check_root()?;
    let backend = env.location.open(true)?;
    // A folder adopted before keeps the layout its config names; only a new one is surveyed.
    let configured = backend.store.read_meta("config.toml")?.is_some();
    let layout = match (env.layout, a.existing && !configured) {
        (Some(l), _) => Some(l),
        (None, true) => {
            Some(memdir::host::detect_layout(backend.store.as_ref())?.unwrap_or_default())
        }
        (None, false) => None,
    };
    let mem = memdir::Memory::init_layout(backend, env.clock.clone(), !a.no_git, layout)?;
    let name = mem.layout().name;
    let shown = match &env.location {
        Location::Folder(root) => format!("memory folder ready at {}", root.display()),
        other => format!("memory ready at {}", other.shown()),
    };
    match name {
        memdir_core::host::LayoutName::Memdir => out(&shown),
        other => out(&format!(
            "{shown} (layout {other}: its files are used in place)"
        )),
    }
}
