//! `memdir man`

use crate::cli::Cli;
use crate::env::Env;
use crate::ui::{CliResult, out_bytes};
use clap::CommandFactory;

/// Print the man page (roff): one complete page, memdir(1), with every command and subcommand.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir man | man -l -\n  memdir man > ~/.local/share/man/man1/memdir.1   # then: man memdir"
)]
pub struct Args {}

/// Escapes text for a no-fill roff block: backslashes, and a leading `.` or `'` that roff would
/// read as a request.
fn roff_text(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.replace('\\', "\\e");
        if line.starts_with(['.', '\'']) {
            out.push_str("\\&");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Appends a section per command under `cmd` (depth first), each its full `--help` text.
fn commands(cmd: &clap::Command, path: &str, out: &mut String) {
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let path = format!("{path} {}", sub.get_name());
        out.push_str(&format!(".SS \"{path}\"\n.nf\n"));
        out.push_str(&roff_text(
            sub.clone().render_long_help().to_string().trim_end(),
        ));
        out.push_str(".fi\n");
        commands(sub, &path, out);
    }
}

/// Runs `man`.
pub fn run(_a: Args, _env: &Env) -> CliResult {
    let mut cmd = Cli::command()
        .about("long-term memory for AI agents, as plain files")
        .disable_help_subcommand(true);
    // Usage lines and global options reach the subcommands only once the tree is built.
    cmd.build();
    let page = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    page.render_title(&mut buf)?;
    page.render_name_section(&mut buf)?;
    page.render_synopsis_section(&mut buf)?;
    page.render_description_section(&mut buf)?;
    page.render_options_section(&mut buf)?;
    let mut text = String::from(".SH COMMANDS\n");
    commands(&cmd, "memdir", &mut text);
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        text.push_str(".SH \"ENVIRONMENT AND EXIT CODES\"\n.nf\n");
        text.push_str(&roff_text(after.to_string().trim_end()));
        text.push_str(".fi\n");
    }
    buf.extend_from_slice(text.as_bytes());
    page.render_version_section(&mut buf)?;
    out_bytes(&buf)
}
