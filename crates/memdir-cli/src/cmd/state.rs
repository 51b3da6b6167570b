//! `memdir state`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out, out_json, read_stdin};

/// Running state, `state.md`: one dated line per entry (`- YYYY-MM-DD text`), loaded every turn;
/// `sweep` archives entries older than `[state] archive_after`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir state add on call until Friday\n  memdir state\n  memdir state list --json | jq -r '.[].text'"
)]
pub struct Args {
    /// What to do (default: list).
    #[command(subcommand)]
    pub command: Option<StateCommand>,
}

/// State subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum StateCommand {
    /// Add an entry dated today at the end of state.md (created when absent)
    Add(AddArgs),
    /// List the dated entries of state.md, oldest first
    List(ListArgs),
}

/// `memdir state add`
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The text; several words are joined with spaces; `-` reads stdin (later lines are kept,
    /// indented under the entry).
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
    pub text: Vec<String>,
}

/// `memdir state list`
#[derive(Debug, Default, clap::Args)]
pub struct ListArgs {
    /// Print JSON: an array of {date, text, line}.
    #[arg(long)]
    pub json: bool,
}

/// Runs `state`.
pub fn run(a: Args, env: &Env) -> CliResult {
    match a.command {
        Some(StateCommand::Add(add)) => {
            let text = if add.text.len() == 1 && add.text[0] == "-" {
                read_stdin()?
            } else {
                add.text.join(" ")
            };
            let receipt = env.open()?.state_add(&text)?;
            out(&format!("added to {}: {}", receipt.path, receipt.entry))
        }
        Some(StateCommand::List(l)) => list(&l, env),
        None => list(&ListArgs::default(), env),
    }
}

fn list(a: &ListArgs, env: &Env) -> CliResult {
    let entries = env.open()?.state_entries()?;
    if a.json {
        return out_json(&entries);
    }
    if entries.is_empty() {
        return Err(CliError {
            message: "no entries in state.md: add one with `memdir state add TEXT`".to_string(),
            code: crate::ui::exit::NOT_FOUND,
        });
    }
    let mut text = String::new();
    for e in &entries {
        let mut lines = e.text.lines();
        text.push_str(&format!(
            "{} {}\n",
            e.date,
            lines.next().unwrap_or_default()
        ));
        for more in lines {
            text.push_str(&format!("           {more}\n"));
        }
    }
    out(&text)
}
