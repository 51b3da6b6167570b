//! `memdir import`

use crate::env::Env;
use crate::store::Location;
use crate::ui::{CliError, CliResult, out, out_json};
use memdir::import::{ChatFormat, FileAction, ImportReport, ImportSource};
use memdir_core::host::LayoutName;
use std::path::{Path, PathBuf};

/// Bring memory kept elsewhere into this one: a Claude Code auto memory folder, an OpenClaw
/// workspace, or a ChatGPT or Claude conversation export (one commit per import, and running
/// it again adds nothing already there). With `--from`, copy another memdir store byte for byte
/// into this one (which must not hold other content), or save a folder of agent session
/// transcripts (a Claude Code project folder, a Codex CLI sessions folder) under sessions/.
#[derive(Debug, clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:
  memdir import claude-code ~/.claude/projects/-home-me-src-app/memory
  memdir import openclaw ~/.openclaw/workspace --dry-run
  memdir import chatgpt ~/Downloads/chatgpt-export/conversations.json
  memdir import claude ~/Downloads/claude-export
  memdir --store 'postgres://127.0.0.1/memdir?tenant=alice' import --from ~/.local/share/memdir
  memdir import --from ~/.claude/projects/-home-me-src-app    # session transcripts -> sessions/
  memdir import --from ~/.codex/sessions"
)]
pub struct Args {
    /// Where to copy from: a folder path or postgres://HOST/DB?tenant=NAME; or a folder of
    /// session transcripts (`~/.claude/projects/<project>`, `~/.codex/sessions`)
    #[arg(long, value_name = "DIR|URL")]
    pub from: Option<String>,

    /// What to import.
    #[command(subcommand)]
    pub what: Option<What>,
}

/// The kinds of memory kept elsewhere.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Claude Code's auto memory folder: topic files become notes (MEMORY.md's lines give
    /// those without frontmatter a name and description)
    ClaudeCode(FolderArgs),
    /// An OpenClaw workspace: MEMORY.md becomes core, memory/YYYY-MM-DD.md daily notes become
    /// logs (writer openclaw), other Markdown files notes under openclaw/
    Openclaw(FolderArgs),
    /// A ChatGPT data export (conversations.json): one log line per turn, one note per
    /// conversation
    Chatgpt(ChatArgs),
    /// A Claude data export (conversations.json): one log line per turn, one note per
    /// conversation
    Claude(ChatArgs),
}

/// A folder to import.
#[derive(Debug, clap::Args)]
pub struct FolderArgs {
    /// The folder.
    pub dir: PathBuf,
    /// Print what would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The largest export read by default, in MiB. An import holds three to four times the file
/// in memory while it parses (the text, the parsed tree, the turns), so this keeps it near 1 GiB.
pub const DEFAULT_MAX_EXPORT_MIB: u64 = 256;

/// A conversation export to import.
#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    /// conversations.json, or the unzipped export folder that holds it.
    pub path: PathBuf,
    /// The largest export to read, in MiB; the import needs three to four times this in memory.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_MAX_EXPORT_MIB,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_size: u64,
    /// Print what would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `import`.
pub fn run(a: Args, env: &Env) -> CliResult {
    match (a.from, a.what) {
        (Some(from), None) => {
            // A folder of agent session transcripts is saved under sessions/, as the hooks do.
            if let Some((host, files)) = crate::cmd::sessions::transcripts(Path::new(&from)) {
                return crate::cmd::sessions::import(Path::new(&from), host, &files, env);
            }
            let from = Location::parse(&from)?;
            if let Location::Folder(dir) = &from
                && !dir.exists()
            {
                return Err(CliError {
                    message: format!(
                        "nothing to import at {}: give a memdir folder, a postgres:// or s3:// URL, or a Claude Code or Codex CLI transcript folder",
                        dir.display()
                    ),
                    code: crate::ui::exit::NOT_FOUND,
                });
            }
            crate::cmd::export::copy(&from, &env.location, env)
        }
        (None, Some(what)) => import(what, env),
        _ => Err(CliError::invalid(
            "say what to import: `memdir import claude-code DIR`, `openclaw DIR`, `chatgpt FILE`, `claude FILE`, or `--from DIR|URL` for another memdir store",
        )),
    }
}

fn import(what: What, env: &Env) -> CliResult {
    let (report, dry_run, json) = match what {
        What::ClaudeCode(f) => folder(LayoutName::ClaudeCode, f, env)?,
        What::Openclaw(f) => folder(LayoutName::OpenClaw, f, env)?,
        What::Chatgpt(c) => chats(ChatFormat::ChatGpt, c, env)?,
        What::Claude(c) => chats(ChatFormat::Claude, c, env)?,
    };
    if json {
        return out_json(&report);
    }
    out(&render(&report, dry_run))
}

/// This memory, created (in the `--layout` given, else memdir's) when it does not exist yet.
fn open_or_create(env: &Env) -> Result<memdir::Memory, CliError> {
    env.check_root()?;
    match env.location.open(false) {
        Err(e) if e.code == crate::ui::exit::NOT_FOUND => {
            memdir::Memory::init_layout(
                env.location.open(true)?,
                env.clock.clone(),
                true,
                env.layout,
            )?;
        }
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    env.open()
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

fn folder(
    layout: LayoutName,
    a: FolderArgs,
    env: &Env,
) -> Result<(ImportReport, bool, bool), CliError> {
    if !a.dir.is_dir() {
        return Err(CliError {
            message: format!(
                "{} is not a folder: give the {layout} folder to import",
                shown(&a.dir)
            ),
            code: crate::ui::exit::NOT_FOUND,
        });
    }
    if let Location::Folder(root) = &env.location
        && same_folder(root, &a.dir)
    {
        return Err(CliError::invalid(format!(
            "{} is this memory itself: to use a {layout} folder in place, run `memdir --root {} --layout {layout} init --existing`",
            shown(&a.dir),
            shown(&a.dir)
        )));
    }
    let source = memdir::FolderStore::open(&a.dir)?;
    let mem = open_or_create(env)?;
    let label = format!("{layout} {}", shown(&a.dir));
    let report = mem.import(
        ImportSource::Folder {
            layout,
            store: &source,
        },
        &label,
        a.dry_run,
    )?;
    Ok((report, a.dry_run, a.json))
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn chats(
    format: ChatFormat,
    a: ChatArgs,
    env: &Env,
) -> Result<(ImportReport, bool, bool), CliError> {
    let file = if a.path.is_dir() {
        a.path.join("conversations.json")
    } else {
        a.path.clone()
    };
    let json = read_export(&file, a.max_size).map_err(|e| CliError {
        message: match e.kind() {
            std::io::ErrorKind::FileTooLarge => format!(
                "{} is larger than {} MiB, the most an import reads: give --max-size with a larger number of MiB (the import needs three to four times the file's size in memory)",
                shown(&file),
                a.max_size
            ),
            std::io::ErrorKind::NotFound => format!(
                "{} does not exist: give the export's conversations.json, or the unzipped export folder",
                shown(&file)
            ),
            _ => format!("cannot read {}: {e}", shown(&file)),
        },
        code: match e.kind() {
            std::io::ErrorKind::NotFound => crate::ui::exit::NOT_FOUND,
            // Too large for the limit the user may raise: bad input, like any refused argument.
            std::io::ErrorKind::FileTooLarge => crate::ui::exit::INVALID,
            _ => crate::ui::exit::FAILURE,
        },
    })?;
    let mem = open_or_create(env)?;
    let label = format!("{} {}", format.writer(), shown(&file));
    let report = mem.import(
        ImportSource::Chats {
            format,
            json: &json,
        },
        &label,
        a.dry_run,
    )?;
    Ok((report, a.dry_run, a.json))
}

/// Reads the export as text, refusing one over `max_mib` MiB before it reads more than that
/// (a file that grows while it is read included).
fn read_export(file: &Path, max_mib: u64) -> std::io::Result<String> {
    use std::io::Read;
    let max = max_mib.saturating_mul(1 << 20);
    let f = std::fs::File::open(file)?;
    let too_large = || std::io::Error::from(std::io::ErrorKind::FileTooLarge);
    let len = f.metadata()?.len();
    if len > max {
        return Err(too_large());
    }
    let mut text = String::with_capacity(usize::try_from(len).unwrap_or(0));
    f.take(max.saturating_add(1)).read_to_string(&mut text)?;
    if text.len() as u64 > max {
        return Err(too_large());
    }
    Ok(text)
}

/// The report for people: one line per file written (or that would be), then a summary.
fn render(r: &ImportReport, dry_run: bool) -> String {
    let mut text = String::new();
    let (mut new, mut changed, mut same, mut kept) = (0, 0, 0, 0);
    for f in &r.files {
        let from = f
            .from
            .as_deref()
            .map(|s| format!(" (from {s})"))
            .unwrap_or_default();
        let line = match &f.action {
            FileAction::Create => {
                new += 1;
                format!("create {}{from}", f.path)
            }
            FileAction::Append { entries } => {
                changed += 1;
                format!(
                    "append {entries} entr{} to {}{from}",
                    if *entries == 1 { "y" } else { "ies" },
                    f.path
                )
            }
            FileAction::Update => {
                changed += 1;
                format!("update {}{from}", f.path)
            }
            FileAction::Unchanged => {
                same += 1;
                continue;
            }
            FileAction::Kept { why } => {
                kept += 1;
                format!("kept {}{from}: {why}", f.path)
            }
        };
        text.push_str(&line);
        text.push('\n');
    }
    for (path, why) in &r.skipped {
        text.push_str(&format!("skipped {path}: {why}\n"));
    }
    let verb = if dry_run { "would import" } else { "imported" };
    let what = if r.conversations > 0 || r.turns > 0 {
        format!("{} turns of {} conversations", r.turns, r.conversations)
    } else {
        format!("{} files", r.files.len())
    };
    text.push_str(&format!(
        "{verb} {what} from {}: {new} new file(s), {changed} changed, {same} already up to date, {kept} kept as they were; {} log entr{} added, {} already there\n",
        r.source,
        r.entries_added,
        if r.entries_added == 1 { "y" } else { "ies" },
        r.entries_present
    ));
    text
}
