//! `memdir ls`

use crate::env::Env;
use crate::ui::{CliResult, out};
use memdir::EntryKind;

/// List a folder: one path a line, folders end with `/`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memdir ls\n  memdir ls log")]
pub struct Args {
    /// A folder (default: the root).
    pub path: Option<String>,
}

/// Runs `ls`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let entries = env.open()?.ls(a.path.as_deref().unwrap_or(""))?;
    let mut text = String::new();
    for e in entries {
        text.push_str(e.path.as_str());
        if e.kind == EntryKind::Dir {
            text.push('/');
        }
        text.push('\n');
    }
    out(&text)
}
