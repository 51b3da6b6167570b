//! `memdir review`

use crate::env::Env;
use crate::ui::{CliResult, out, out_json};

/// List proposals (to change core memory, or to mark a note superseded), or accept or reject
/// one.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir review\n  memdir review accept 20261130-091500-claude-1a2b3c\n  memdir review reject 20261130-091500-claude-1a2b3c"
)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub action: Option<Action>,
    /// List as JSON, one object per proposal.
    #[arg(long)]
    pub json: bool,
}

/// A review decision.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Apply the proposal (to core.md, or mark the note superseded) and remove it.
    Accept {
        /// The proposal id.
        id: String,
    },
    /// Remove the proposal without applying it (git keeps it).
    Reject {
        /// The proposal id.
        id: String,
    },
}

/// Runs `review`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let mem = env.open()?;
    match a.action {
        Some(Action::Accept { id }) => {
            let p = mem.accept_proposal(&id)?;
            match &p.superseded_by {
                Some(new) => out(&format!(
                    "accepted {} from {}: {} is superseded by {new}",
                    p.id, p.writer, p.target
                )),
                None => out(&format!(
                    "accepted {} from {}: {} updated",
                    p.id, p.writer, p.target
                )),
            }
        }
        Some(Action::Reject { id }) => {
            let p = mem.reject_proposal(&id)?;
            out(&format!("rejected {} from {}", p.id, p.writer))
        }
        None => {
            let list = mem.proposals()?;
            if a.json {
                for p in &list {
                    out_json(p)?;
                }
                return Ok(());
            }
            if list.is_empty() {
                return out("no proposals");
            }
            let mut text = String::new();
            for p in &list {
                text.push_str(&format!(
                    "{}  by {}  {}\n",
                    p.id,
                    p.writer,
                    if p.reason.is_empty() {
                        "(no reason given)"
                    } else {
                        &p.reason
                    }
                ));
                if let Some(new) = &p.superseded_by {
                    text.push_str(&format!(
                        "    proposes: {} is superseded by {new}\n",
                        p.target
                    ));
                }
                for e in &p.evidence {
                    text.push_str(&format!("    evidence: {e}\n"));
                }
                for l in p
                    .diff
                    .lines()
                    .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
                {
                    text.push_str(&format!("    {l}\n"));
                }
            }
            out(&text)
        }
    }
}
