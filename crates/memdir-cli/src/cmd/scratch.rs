//! `memdir scratch`

use crate::env::Env;
use crate::ui::{CliError, CliResult, body_arg, out};

/// Write a scratch note, `scratch/<expiry-ms>-<name>.md`, that `sweep` deletes once expired.
/// A note with the same name is replaced. `read` and `rm` take `scratch/<name>` for it.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir scratch deploy-plan --ttl 2h \"canary first, then 10%\"\n  pbpaste | memdir scratch draft -\n  memdir read scratch/deploy-plan"
)]
pub struct Args {
    /// A slug: lowercase letters, digits and dashes.
    pub name: String,
    /// How long it lives: 90 (minutes), 30m, 2h, 1d, 1w [default: 60m, or scratch.default_ttl]
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

/// The path to use for `path`: itself, unless it is `scratch/<name>` (with or without `.md`),
/// names no file, and the live scratch note `<name>` exists; then that note's file.
pub fn resolve(mem: &memdir::Memory, path: &str) -> Result<String, CliError> {
    use memdir_core::path::MemPath;
    use memdir_core::scratch::{SCRATCH_DIR, ScratchName};
    let p = MemPath::parse(path).map_err(memdir::Error::from)?;
    let in_scratch = p.parent().is_some_and(|d| d.as_str() == SCRATCH_DIR);
    let Some(name) = p.file_name().filter(|_| in_scratch) else {
        return Ok(path.to_string());
    };
    if mem.store().stat(&p)?.is_some() {
        return Ok(path.to_string());
    }
    let slug = name.strip_suffix(".md").unwrap_or(name);
    let found = mem
        .ls(SCRATCH_DIR)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| {
            e.path
                .file_name()
                .and_then(ScratchName::parse)
                .is_some_and(|n| n.slug == slug)
        })
        .max_by_key(|e| e.path.as_str().to_string());
    Ok(found.map_or_else(|| path.to_string(), |e| e.path.as_str().to_string()))
}
