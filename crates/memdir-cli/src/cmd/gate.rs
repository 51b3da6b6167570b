//! `memdir gate`

use crate::env::Env;
use crate::ui::{CliError, CliResult, exit, out, out_json};
use memdir::gates::{Answer, Presence, Verdict};
use memdir_core::gates::{Amount, Request};
use std::io::IsTerminal;

/// Gates on irreversible actions: ask before acting, check the token before executing, and let
/// a person approve. The policy is `gates.toml` at the memory root; the hash-chained ledger is
/// `gates/ledger/`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir gate request payment --target landlord --amount 40 --reason \"december rent\" --json
  memdir gate check \"$TOKEN\" --kind payment --target landlord --amount 40 && pay landlord 40
  memdir gate pending
  memdir gate approve 20261201-0a1b2c3d       (a person, at a terminal)
  memdir gate status 20261201-0a1b2c3d --json
  memdir gate verify

Exit codes: request: 0 allowed or pending, 2 denied; check: 0 once for a valid token, 2 refused;
verify: 0 intact, 2 broken (the message says where).")]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// A gate action.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Ask for an action: allowed (with a single-use token), denied (with the rule) or pending.
    Request {
        /// The action kind: a table of gates.toml (payment, deploy, ...).
        kind: String,
        /// Who or what the action is for.
        #[arg(long)]
        target: String,
        /// How much, for kinds with amounts.
        #[arg(long, value_name = "N")]
        amount: Option<String>,
        /// Print `{"decision": ..., "token"|"rule"|"id": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// Where a pending request stands (with its token once a person approved it).
    Status {
        /// The request id.
        id: String,
        /// Print the same JSON shape as `request --json`.
        #[arg(long)]
        json: bool,
    },
    /// For the executor: exit 0 once for a valid token of exactly this kind, target and amount.
    Check {
        /// The token.
        token: String,
        /// The action kind.
        #[arg(long)]
        kind: String,
        /// The target.
        #[arg(long)]
        target: String,
        /// The amount.
        #[arg(long, value_name = "N")]
        amount: Option<String>,
    },
    /// List requests that wait for a person.
    Pending {
        /// One JSON object per request.
        #[arg(long)]
        json: bool,
    },
    /// Approve a pending request (the user, at a terminal, only).
    Approve {
        /// The request id.
        id: String,
    },
    /// Deny a pending request (the user, at a terminal, only); --reason says why.
    Deny {
        /// The request id.
        id: String,
    },
    /// Check the ledger's hash chain; say where it breaks.
    Verify {
        /// Print `{"entries": N, "files": M}`.
        #[arg(long)]
        json: bool,
    },
}

fn amount(s: Option<String>) -> Result<Option<Amount>, CliError> {
    s.map(|s| s.parse::<Amount>().map_err(CliError::invalid))
        .transpose()
}

fn answer(a: &Answer, json: bool) -> CliResult {
    if json {
        out_json(a)?;
    } else {
        out(&a.message())?;
    }
    match a {
        Answer::Denied { .. } => Err(CliError::silent(exit::INVALID)),
        _ => Ok(()),
    }
}

/// Runs `gate`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let mem = env.open()?;
    match a.action {
        Action::Request {
            kind,
            target,
            amount: n,
            json,
        } => {
            let req = Request {
                kind,
                target,
                amount: amount(n)?,
            };
            answer(&mem.gate_request(&req)?, json)
        }
        Action::Status { id, json } => answer(&mem.gate_status(&id)?, json),
        Action::Check {
            token,
            kind,
            target,
            amount: n,
        } => {
            let req = Request {
                kind,
                target,
                amount: amount(n)?,
            };
            let r = mem.gate_check(&token, &req)?;
            out(&format!("ok: token of request {} used; go ahead", r.id))
        }
        Action::Pending { json } => {
            let list = mem.gate_pending()?;
            if json {
                for r in &list {
                    out_json(&serde_json::json!({
                        "id": r.id,
                        "time": mem.clock().local(r.time),
                        "kind": r.request.kind,
                        "target": r.request.target,
                        "amount": r.request.amount.map(|a| a.to_string()),
                        "writer": r.writer,
                        "reason": r.reason,
                    }))?;
                }
                return Ok(());
            }
            if list.is_empty() {
                return out("no requests wait for approval");
            }
            let mut text = String::new();
            for r in &list {
                text.push_str(&format!(
                    "{}  {}  by {} at {}: {}\n",
                    r.id,
                    r.request,
                    r.writer,
                    mem.clock().local(r.time),
                    r.reason
                ));
            }
            out(&text)
        }
        Action::Approve { id } => decide(&mem, &id, Verdict::Approve),
        Action::Deny { id } => decide(&mem, &id, Verdict::Deny),
        Action::Verify { json } => {
            let r = mem.gate_verify()?;
            if json {
                return out_json(&r);
            }
            out(&format!(
                "ledger intact: {} entries in {} file(s), every hash and link checks out",
                r.entries, r.files
            ))
        }
    }
}

/// A person's verdict: only from a terminal (stdin is a TTY) with source `user`; the engine
/// refuses and records anything else.
fn decide(mem: &memdir::Memory, id: &str, verdict: Verdict) -> CliResult {
    let presence = if std::io::stdin().is_terminal() {
        Presence::Terminal
    } else {
        Presence::Unattended
    };
    let r = mem.gate_decide(id, verdict, presence)?;
    match verdict {
        Verdict::Approve => out(&format!(
            "approved {}: {}; its token works until {} (the requester gets it with `memdir gate status {}`)",
            r.id,
            r.request,
            r.expires.map(|e| mem.clock().local(e)).unwrap_or_default(),
            r.id
        )),
        Verdict::Deny => out(&format!("denied {}", r.id)),
    }
}
