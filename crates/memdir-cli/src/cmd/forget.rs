//! `memdir forget`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out, out_json};
use memdir_core::forget::Forget;

/// Remove a file, or every line holding a text, from the files and from all of history.
///
/// Unlike `rm` and `undo`, which keep every earlier version, forget rewrites history so that
/// no version holds it any more (a folder's git: every commit, tree and blob; reflogs expired;
/// unreachable objects pruned), and drops the search indexes. Only a person (source `user`)
/// may forget; the forget is recorded as a change that says how much went, never what.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir forget notes/home-address.md\n  memdir forget --match \"12 Elm Street\" --dry-run\n  memdir forget --match sk-live- --path \"*.md\" --reason \"leaked key\"\n\nWhat it cannot reach: clones and copies made before, and backups: rotate those after."
)]
pub struct Args {
    /// The file to forget, in every version.
    #[arg(conflicts_with = "text", required_unless_present = "text")]
    pub path: Option<String>,
    /// Forget every line that contains this text (byte for byte, case and all).
    #[arg(long = "match", value_name = "TEXT")]
    pub text: Option<String>,
    /// With --match: only in files this glob matches (`notes/**`, `*.md`, a folder).
    #[arg(long = "path", value_name = "GLOB", requires = "text")]
    pub glob: Option<String>,
    /// Show what would be removed, and from how many versions; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `forget`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let what = match (&a.path, &a.text) {
        (Some(p), _) => {
            let p = memdir_core::path::MemPath::parse_file(p).map_err(memdir::Error::from)?;
            Forget::file(p)
        }
        (None, Some(t)) => Forget::lines(t, a.glob.as_deref()).map_err(CliError::invalid)?,
        (None, None) => return Err(CliError::invalid("name a file, or a text with --match")),
    };
    let mem = env.open()?;
    let done = mem.forget(&what, a.glob.as_deref(), a.dry_run)?;
    if a.json {
        return out_json(&done);
    }
    let verb = if done.dry_run {
        "would forget"
    } else {
        "forgot"
    };
    let mut text = String::new();
    for f in &done.files {
        if f.removed {
            text.push_str(&format!("{verb} {}\n", f.path));
        } else {
            text.push_str(&format!(
                "{verb} {} line{} in {}\n",
                f.lines,
                if f.lines == 1 { "" } else { "s" },
                f.path
            ));
        }
    }
    if done.files.is_empty() {
        text.push_str("no current file holds it\n");
    }
    match &done.history {
        Some(h) => {
            let rewrite = if done.dry_run {
                "would rewrite"
            } else {
                "rewrote"
            };
            text.push_str(&format!(
                "{rewrite} {} commit{} in history ({} file version{})\n",
                h.rewritten.len(),
                if h.rewritten.len() == 1 { "" } else { "s" },
                h.versions,
                if h.versions == 1 { "" } else { "s" }
            ));
            for r in &h.rewritten {
                let short = |s: &str| s.get(..10).unwrap_or(s).to_string();
                if done.dry_run {
                    text.push_str(&format!("  {}\n", short(&r.old)));
                } else {
                    text.push_str(&format!("  {} -> {}\n", short(&r.old), short(&r.new)));
                }
            }
            if let Some(id) = &h.recorded {
                text.push_str(&format!(
                    "recorded as {}; copies made before (clones, backups) still hold it\n",
                    id.get(..10).unwrap_or(id)
                ));
            }
        }
        None => text.push_str("this memory keeps no history\n"),
    }
    out(&text)
}
