//! `memdir hook`

use crate::cmd::mcp::open_or_init;
use crate::env::Env;
use crate::ui::{CliError, CliResult, out, read_stdin};
use memdir_mcp::hook;

/// Claude Code hooks: they read the hook's JSON on stdin and print what Claude Code expects.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples (settings.json; see the README for the whole block):
  \"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"memdir hook session-start\"}]}]
  \"PreCompact\":   [{\"hooks\": [{\"type\": \"command\", \"command\": \"memdir hook pre-compact\"}]}]
  echo '{\"hook_event_name\": \"SessionStart\", \"source\": \"startup\"}' | memdir hook session-start"
)]
pub struct Args {
    /// The hook event.
    #[command(subcommand)]
    pub event: Event,
}

/// The events memdir answers.
#[derive(Debug, clap::Subcommand)]
pub enum Event {
    /// Print the memory context as SessionStart `additionalContext` JSON (under 10,000 characters;
    /// sections that do not fit are named by file instead).
    SessionStart,
    /// Print the save-before-compaction reminder.
    PreCompact,
}

/// Runs `hook`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let input = hook::parse_input(&read_stdin()?).map_err(CliError::invalid)?;
    match a.event {
        Event::SessionStart => {
            let mem = open_or_init(env)?;
            out(&hook::session_start(&mem, &input)?)
        }
        Event::PreCompact => out(&hook::pre_compact(&input)),
    }
}
