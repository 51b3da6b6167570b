//! `memdir man`

use crate::app::{Cli, Env};
use crate::ui::{CliResult, out_bytes};
use clap::CommandFactory;

/// Print the man page (roff) for memdir and its commands.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir man | man -l -\n  memdir man > /usr/local/share/man/man1/memdir.1"
)]
pub struct Args {}

/// Runs `man`.
pub fn run(_a: Args, _env: &Env) -> CliResult {
    let cmd = Cli::command();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    // One page: the top command, then a section per subcommand.
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page = clap_mangen::Man::new(sub.clone());
        buf.extend_from_slice(b".SH \"MEMDIR ");
        buf.extend_from_slice(sub.get_name().to_uppercase().as_bytes());
        buf.extend_from_slice(b"\"\n");
        page.render_description_section(&mut buf)?;
        page.render_options_section(&mut buf)?;
        if sub.get_after_help().is_some() {
            page.render_extra_section(&mut buf)?;
        }
    }
    out_bytes(&buf)
}
