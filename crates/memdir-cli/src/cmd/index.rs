//! `memdir index`

use crate::app::Env;
use crate::ui::{CliResult, out, out_json};

/// Regenerate the index, MEMORY.md, from every note's frontmatter. Writes through memdir keep it
/// current; run this after editing notes by hand.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memdir index\n  memdir index --json | jq .unlisted")]
pub struct Args {
    /// Print JSON: listed, unlisted, size, cap, changed.
    #[arg(long)]
    pub json: bool,
}

/// Runs `index`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let report = memdir::index::refresh(&env.open()?)?;
    if a.json {
        return out_json(&report);
    }
    let mut text = String::new();
    for p in &report.unlisted {
        text.push_str(&format!(
            "not listed: {p} (no valid frontmatter with a name and a description)\n"
        ));
    }
    text.push_str(&format!(
        "{} {}: {} notes, {} lines, {} bytes (cap {} lines, {} bytes)\n",
        if report.changed { "wrote" } else { "unchanged" },
        report.path,
        report.listed,
        report.size.lines,
        report.size.bytes,
        report.cap.max_lines,
        report.cap.max_bytes
    ));
    if report.size.lines > report.cap.max_lines || report.size.bytes > report.cap.max_bytes {
        text.push_str(&format!(
            "{} is over its cap: context loads only what fits; merge or archive notes (see `memdir lint`)\n",
            report.path
        ));
    }
    out(&text)
}
