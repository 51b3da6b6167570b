//! `memdir completions`

use crate::cli::Cli;
use crate::env::Env;
use crate::ui::CliResult;
use clap::CommandFactory;

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir completions bash > ~/.local/share/bash-completion/completions/memdir
  memdir completions zsh > \"${fpath[1]}/_memdir\"
  memdir completions fish > ~/.config/fish/completions/memdir.fish")]
pub struct Args {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// Runs `completions`.
pub fn run(a: Args, _env: &Env) -> CliResult {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "memdir", &mut buf);
    crate::ui::out_bytes(&buf)
}
