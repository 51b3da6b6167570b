//! `memdir edit`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out};
use memdir_core::edit::EditOp;

/// Change part of a file in one step: replace text (--old/--new, exactly once or
/// --expected-count times), add a line at the end (--append) or start (--prepend), or replace the
/// body under a heading (--section HEADING --new TEXT). Text not found exits 1; an ambiguous or
/// malformed edit exits 2.
#[derive(Debug, clap::Args)]
#[command(
    group(clap::ArgGroup::new("mode").required(true).args(["old", "append", "prepend", "section"])),
    after_help = "Examples:\n  memdir edit core.md --old \"tea\" --new \"coffee\"\n  memdir edit notes/todo.md --append \"- call the bank\"\n  memdir edit notes/plan.md --section Status --new \"phase two started\"\n  memdir edit notes/x.md --old v1 --new v2 --expected-count 3"
)]
pub struct Args {
    /// A path inside the memory folder.
    pub path: String,
    /// Refuse unless the file is still at this version (from `memdir version PATH`): a stale
    /// edit is a conflict, never a lost update.
    #[arg(long, value_name = "VERSION")]
    pub base: Option<String>,
    /// Allow a rewrite of core.md that drops many of its lines (the old text stays in git).
    #[arg(long)]
    pub force: bool,
    /// The exact text to replace.
    #[arg(long, allow_hyphen_values = true, value_name = "TEXT")]
    pub old: Option<String>,
    /// The replacement text (may be empty), or with --section the section's new body.
    #[arg(long, allow_hyphen_values = true, value_name = "TEXT")]
    pub new: Option<String>,
    /// With --old: how many occurrences there are; all of them are replaced.
    #[arg(long, value_name = "N", value_parser = crate::cmd::positive)]
    pub expected_count: Option<usize>,
    /// Add a line (or lines) at the end of the file.
    #[arg(
        long,
        allow_hyphen_values = true,
        value_name = "TEXT",
        conflicts_with = "new"
    )]
    pub append: Option<String>,
    /// Add a line (or lines) at the start of the file, after a note's frontmatter.
    #[arg(
        long,
        allow_hyphen_values = true,
        value_name = "TEXT",
        conflicts_with = "new"
    )]
    pub prepend: Option<String>,
    /// Replace the body under the Markdown heading with this text (give the body with --new).
    #[arg(long, value_name = "HEADING")]
    pub section: Option<String>,
}

/// Runs `edit`.
pub fn run(a: Args, env: &Env) -> CliResult {
    if a.expected_count.is_some() && a.old.is_none() {
        return Err(CliError::invalid(
            "--expected-count goes with --old and --new: leave it out for this edit",
        ));
    }
    let need_new = |what: &str| {
        a.new.as_deref().ok_or_else(|| {
            CliError::invalid(format!(
                "{what} needs --new TEXT: the new text (\"\" to delete)"
            ))
        })
    };
    let op = match (&a.append, &a.prepend, &a.section, &a.old) {
        (Some(t), ..) => EditOp::Append(t),
        (_, Some(t), ..) => EditOp::Prepend(t),
        (_, _, Some(h), _) => EditOp::Section {
            heading: h,
            new: need_new("--section")?,
        },
        (_, _, _, Some(o)) => EditOp::Replace {
            old: o,
            new: need_new("--old")?,
            expected: a.expected_count.unwrap_or(1),
        },
        _ => {
            return Err(CliError::invalid(
                "give --old/--new, --append, --prepend or --section/--new",
            ));
        }
    };
    let done = env
        .open()?
        .with_base(a.base.as_deref())
        .with_force(a.force)
        .edit_with(&a.path, &op)?;
    let done = crate::ui::made(done)?;
    out(&format!("edited {}: {done}", a.path))
}
