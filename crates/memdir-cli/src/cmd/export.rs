//! `memdir export`

use crate::env::Env;
use crate::store::Location;
use crate::ui::{CliResult, out};

/// Copy this memory into another store, byte for byte: every file and folder and the settings.
/// The target is created when missing and must not hold other content; it gets a history of
/// its own, starting with this copy. With `--format claude-code|openclaw DIR`, write the memory
/// in that tool's layout instead, so the tool can use it (nothing there is written over).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir export --to ~/memory-copy
  memdir --store 'postgres://127.0.0.1/memdir?tenant=alice' export --to ./alice
  memdir export --format claude-code ~/.claude/projects/-home-me-src-app/memory
  memdir export --format openclaw ~/.openclaw/workspace")]
pub struct Args {
    /// Where to copy to: a folder path or postgres://HOST/DB?tenant=NAME
    #[arg(long, value_name = "DIR|URL", conflicts_with_all = ["format", "dir"])]
    pub to: Option<String>,

    /// Write the memory in this tool's layout: claude-code or openclaw
    #[arg(long, value_name = "LAYOUT", requires = "dir")]
    pub format: Option<String>,

    /// The folder to write with --format (created when missing).
    #[arg(value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
}

/// Runs `export`.
pub fn run(a: Args, env: &Env) -> CliResult {
    match (a.to, a.format, a.dir) {
        (Some(to), None, None) => {
            let to = Location::parse(&to)?;
            copy(&env.location, &to, env)
        }
        (None, Some(format), Some(dir)) => to_layout(&format, &dir, env),
        _ => Err(crate::ui::CliError::invalid(
            "say where to export: `--to DIR|URL` for a byte-for-byte copy, or `--format claude-code|openclaw DIR`",
        )),
    }
}

/// Writes the memory into `dir` in a host's layout.
fn to_layout(format: &str, dir: &std::path::Path, env: &Env) -> CliResult {
    use memdir_core::host::LayoutName;
    let to = LayoutName::parse(format).map_err(crate::ui::CliError::invalid)?;
    if to == LayoutName::Memdir {
        return Err(crate::ui::CliError::invalid(
            "--format memdir is this memory's own layout: use `--to DIR` for a copy",
        ));
    }
    let mem = env.open()?;
    if let Location::Folder(root) = &env.location
        && let (Ok(a), Ok(b)) = (root.canonicalize(), dir.canonicalize())
        && a == b
    {
        return Err(crate::ui::CliError::invalid(
            "the target is this memory itself: name another folder",
        ));
    }
    let target = memdir::FolderStore::create(dir)?;
    let report = mem.export_layout(to, &target)?;
    out(&format!(
        "wrote {} files in the {to} layout to {}{}{}",
        report.written.len(),
        dir.display(),
        match report.unchanged.len() {
            0 => String::new(),
            n => format!("; {n} already there"),
        },
        match report.left_out {
            0 => String::new(),
            n =>
                format!("; left out {n} of memdir's own files (index, scratch, archive, proposals)"),
        }
    ))
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
