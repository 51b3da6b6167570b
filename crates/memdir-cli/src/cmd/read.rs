//! `memdir read`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out_bytes};
use std::io::IsTerminal as _;

/// Print a file of the memory folder, exactly as stored. On a terminal, a file that does not end
/// with a newline gets one, so the prompt starts on its own line (piped output stays exact).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir read core.md\n  memdir read /memories/people/priya.md\n  memdir read log/2026-11-30.md --lines 40:80\n  memdir read scratch/deploy-plan            # a scratch note by its name\n  memdir read '[[payment-retry-policy]]'     # a note by its name, resolved like a link"
)]
pub struct Args {
    /// A path inside the memory folder (`notes/x.md`, `/notes/x.md`, `/memories/notes/x.md`),
    /// `scratch/<name>` for a scratch note, or a note's name as a link names it
    /// (`payment-retry-policy` or `[[payment-retry-policy]]`).
    pub path: String,
    /// Only these lines, counted from 1 and both included: `40:80`, `40:` (to the end), `:80`.
    #[arg(long, value_name = "FROM:TO", value_parser = parse_lines)]
    pub lines: Option<(usize, usize)>,
}

fn parse_lines(s: &str) -> Result<(usize, usize), String> {
    let bad =
        || format!("bad line range {s:?}: use FROM:TO counted from 1, e.g. 40:80, 40: or :80");
    let (from, to) = s.split_once(':').ok_or_else(bad)?;
    let num = |t: &str, default: usize| match t.trim() {
        "" => Ok(default),
        t => t.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(bad),
    };
    let (from, to) = (num(from, 1)?, num(to, usize::MAX)?);
    if from > to {
        return Err(format!("bad line range {s:?}: {from} is after {to}"));
    }
    Ok((from, to))
}

/// Runs `read`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let mem = env.open()?;
    let path = crate::cmd::scratch::resolve(&mem, &a.path)?;
    // A name (`payment-retry-policy`, `[[payment-retry-policy]]`) resolves like a link.
    let path = mem.resolve_note(&path)?;
    let bytes = mem.read(&path)?;
    let bytes = match a.lines {
        None => bytes,
        Some((from, to)) => {
            let total = bytes.split_inclusive(|b| *b == b'\n').count();
            if from > total {
                return Err(CliError::invalid(format!(
                    "{path} has {total} lines: --lines starts after its end"
                )));
            }
            bytes
                .split_inclusive(|b| *b == b'\n')
                .skip(from - 1)
                .take(to - from + 1)
                .flatten()
                .copied()
                .collect()
        }
    };
    out_bytes(&bytes)?;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") && std::io::stdout().is_terminal() {
        out_bytes(b"\n")?;
    }
    Ok(())
}
