//! `memdir links`

use crate::env::Env;
use crate::ui::{CliResult, out, out_json};
use memdir::notes::LinkRef;

/// List a note's outgoing [[links]] and its backlinks, with file:line. NAME resolves like a link:
/// frontmatter name first, then file name, then path. For a note that does not exist yet, the
/// links that name it are listed.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir links payment-retry-policy\n  memdir links people/priya --json\n  memdir links payment-retry-policy --depth 2   # the notes around it, with descriptions"
)]
pub struct Args {
    /// The note: a name, a file name without .md, or a path.
    pub name: String,
    /// Also walk the notes around it, this many link steps out (1 to 3): each note with how it
    /// was reached and its description.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=3))]
    pub depth: Option<u8>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `links`.
pub fn run(a: Args, env: &Env) -> CliResult {
    if let Some(depth) = a.depth {
        let graph = env.open()?.link_graph(&a.name, usize::from(depth))?;
        if a.json {
            return out_json(&graph);
        }
        return out(&memdir_mcp::tools::render_graph(&graph));
    }
    let report = env.open()?.links(&a.name)?;
    if a.json {
        return out_json(&report);
    }
    let mut text = match &report.name {
        _ if report.missing => format!(
            "{}: no note has this name yet; these links point at it (write it with `memdir note new {} -d DESCRIPTION`)\n",
            report.path, report.path
        ),
        Some(n) => format!("{} ({n})\n", report.path),
        None => format!("{}\n", report.path),
    };
    let list = |title: &str, refs: &[LinkRef], text: &mut String, show_target: bool| {
        text.push_str(&format!("{title}:\n"));
        if refs.is_empty() {
            text.push_str("  (none)\n");
        }
        for r in refs {
            text.push_str(&format!("  {}:{} {}", r.file, r.line, r.link.raw));
            if show_target {
                match &r.resolves_to {
                    Some(to) => text.push_str(&format!(" -> {to}")),
                    None => text.push_str(" -> (broken)"),
                }
            }
            text.push('\n');
        }
    };
    if !report.missing {
        list("outgoing", &report.outgoing, &mut text, true);
    }
    list("backlinks", &report.backlinks, &mut text, false);
    out(&text)
}
