//! `memdir note`

use crate::env::Env;
use crate::ui::{CliError, CliResult, body_arg, out};
use memdir::notes::NoteRequest;

/// Work with notes: Markdown files with a frontmatter, listed in the index (MEMORY.md).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub command: NoteCommand,
}

/// Note subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum NoteCommand {
    /// Write notes/<NAME>.md with a frontmatter, then refresh the index
    #[command(
        after_help = "Examples:\n  memdir note new payment-retry-policy --type project \\\n    --description \"retry queue must never re-attempt a captured payment\" \\\n    \"The retry worker treats 'captured' as terminal. Related: [[refund-flow]]\"\n  memdir note new q4-freeze -d \"no deploys until the audit ends\" --tags ops,release --expires 2w\n  memdir note new people/priya --type user --description \"leads payments\" - < priya.md"
    )]
    New(NewArgs),
    /// Mark OLD as superseded by NEW: OLD's frontmatter gets `superseded_by: "[[NEW]]"`, it leaves
    /// the index and ranks below NEW in search (grep still finds it)
    #[command(
        after_help = "Examples:\n  memdir note supersede payment-retry-policy payment-retry-v2\n  memdir note supersede notes/old-plan.md \"[[q4-plan]]\" --reason \"the plan changed in review\""
    )]
    Supersede(SupersedeArgs),
}

/// `memdir note supersede`
#[derive(Debug, clap::Args)]
pub struct SupersedeArgs {
    /// The note that is no longer current: its name, [[name]] or path.
    pub old: String,
    /// The note that replaces it: its name, [[name]] or path.
    pub new: String,
}

/// `memdir note new`
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// A slug, or slugs joined by `/` for a folder: `payment-retry-policy`, `people/priya`
    /// (`notes/people/priya` and `notes/people/priya.md` mean the same note).
    pub name: String,
    /// One line saying what the note holds; the index shows it.
    #[arg(long, short = 'd')]
    pub description: String,
    /// The kind of note: user, feedback, project, reference, or another word.
    #[arg(long = "type", short = 't', value_name = "TYPE")]
    pub kind: Option<String>,
    /// Tags, one word each, separated by commas (`--tags ops,release`) or given again.
    #[arg(long, value_name = "TAG,...", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// When `sweep` moves the note to archive/: YYYY-MM-DD, tomorrow, or days or weeks from
    /// today (30d, 2w). The note stays in the index until then.
    #[arg(long, value_name = "DATE")]
    pub expires: Option<String>,
    /// Replace the note if it exists.
    #[arg(long)]
    pub force: bool,
    /// The body; `-` reads stdin; absent writes only the frontmatter.
    #[arg(allow_hyphen_values = true)]
    pub body: Option<String>,
}

/// Runs `note`.
pub fn run(a: Args, env: &Env) -> CliResult {
    match a.command {
        NoteCommand::New(n) => {
            let body = body_arg(n.body.as_deref())?;
            let name = note_name(&n.name);
            let expires = n
                .expires
                .as_deref()
                .map(|e| {
                    memdir_core::day::parse_future_day(e, env.clock.now().date())
                        .map_err(|m| CliError::invalid(format!("--expires: {m}")))
                })
                .transpose()?;
            let path = env.open()?.note_new(&NoteRequest {
                name: &name,
                description: &n.description,
                kind: n.kind.as_deref(),
                tags: &n.tags,
                expires,
                body: &body,
                force: n.force,
            })?;
            out(&format!("wrote {path}"))
        }
        NoteCommand::Supersede(s) => {
            let done = env.open()?.note_supersede(&s.old, &s.new)?;
            out(&if done.changed {
                format!(
                    "{} is superseded by [[{}]] ({})",
                    done.old, done.link, done.new
                )
            } else {
                format!(
                    "{} is already superseded by [[{}]] ({}): nothing to do",
                    done.old, done.link, done.new
                )
            })
        }
    }
}

/// The note's name for a NAME given as its path: `notes/foo`, `/memories/notes/foo.md` and
/// `foo` all name `foo` (notes live under `notes/`, so the prefix is not part of the name).
fn note_name(given: &str) -> String {
    let Ok(path) = memdir_core::path::MemPath::parse(given) else {
        // Not a path at all: the engine says what is wrong with it as a name.
        return given.to_string();
    };
    let under_notes = path
        .as_str()
        .strip_prefix(memdir_core::note::NOTES_DIR)
        .and_then(|r| r.strip_prefix('/'));
    match under_notes {
        Some(rest) => rest.strip_suffix(".md").unwrap_or(rest).to_string(),
        None => given.to_string(),
    }
}
