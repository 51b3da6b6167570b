//! The command line: the clap tree of every command and its global options. Parsing only: what
//! the options mean for the memory is read in `env.rs`.

use crate::cmd;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// memdir: long-term memory for AI agents, as plain files.
#[derive(Debug, Parser)]
#[command(name = "memdir", version, about = "memdir: long-term memory for AI agents, as plain files", after_help = AFTER_HELP)]
pub struct Cli {
    /// The memory folder [env: MEMDIR_ROOT; default: $XDG_DATA_HOME/memdir or ~/.local/share/memdir]
    #[arg(long, global = true, value_name = "DIR", help_heading = STORE_OPTIONS)]
    pub root: Option<PathBuf>,

    /// Where the memory lives: a folder path, or postgres://HOST/DB?tenant=NAME
    /// [env: MEMDIR_STORE; default: the memory folder]
    #[arg(long, global = true, value_name = "URL", help_heading = STORE_OPTIONS)]
    pub store: Option<String>,

    /// Where the layers live: memdir, claude-code (Claude Code's auto memory folder) or
    /// openclaw (an OpenClaw workspace) [default: `[layout]` in .memdir/config.toml, else memdir]
    #[arg(long, global = true, value_name = "LAYOUT", help_heading = STORE_OPTIONS)]
    pub layout: Option<String>,

    /// Who is writing: recorded as the git author; non-main writers log to their own file
    /// [env: MEMDIR_WRITER; default: main]
    #[arg(long, global = true, value_name = "NAME", help_heading = WRITE_OPTIONS)]
    pub writer: Option<String>,

    /// Where the content comes from: user, agent or external (untrusted: fenced in context,
    /// never in core) [env: MEMDIR_SOURCE; default: user]
    #[arg(long, global = true, value_name = "SOURCE", help_heading = WRITE_OPTIONS)]
    pub source: Option<String>,

    /// Why this change is made: recorded in its git commit
    #[arg(long, global = true, value_name = "TEXT", help_heading = WRITE_OPTIONS)]
    pub reason: Option<String>,

    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The help heading of the options that choose the memory (every command takes them).
const STORE_OPTIONS: &str = "Memory options";
/// The help heading of the options that label a change (they matter to commands that write).
const WRITE_OPTIONS: &str = "Change options (for commands that write)";

const AFTER_HELP: &str = "\
Environment:
  MEMDIR_ROOT   the memory folder when --root is not given
  MEMDIR_STORE  where the memory lives (a folder or postgres://HOST/DB?tenant=NAME) when
                neither --store nor --root is given; it wins over MEMDIR_ROOT
  MEMDIR_NOW    pretend the time is this RFC 3339 instant (tests, replays)
  MEMDIR_MODEL_DIR  the local embedding model for --mode semantic|hybrid, over [embed] in config
  MEMDIR_WRITER the writer identity when --writer is not given
  MEMDIR_SOURCE the source label when --source is not given
  TZ            the time zone of log dates and times

Exit codes: 0 ok, 1 nothing found, 2 bad input or usage, 3 other failures.";

/// Every command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the memory folder's layout (safe to run again)
    Init(cmd::init::Args),
    /// Print what an agent loads every turn: core, the index, state, recent logs, live scratch
    Context(cmd::context::Args),
    /// Append a line to today's log
    Log(cmd::log::Args),
    /// Write a scratch note that expires
    Scratch(cmd::scratch::Args),
    /// Print a file
    Read(cmd::read::Args),
    /// Create or replace a file
    Write(cmd::write::Args),
    /// Change part of a file: replace a text, append or prepend a line, replace a section
    Edit(cmd::edit::Args),
    /// List a folder
    Ls(cmd::ls::Args),
    /// Delete a file or folder
    Rm(cmd::rm::Args),
    /// Move a file or folder (never overwrites)
    Mv(cmd::mv::Args),
    /// Write a note with a frontmatter (`note new`); the index lists it
    Note(cmd::note::Args),
    /// Regenerate the note index, MEMORY.md, from the notes' frontmatter
    Index(cmd::index::Args),
    /// Rebuild the search indexes in .memdir/ (keyword, vectors) from the files
    Reindex(cmd::reindex::Args),
    /// Add a dated line to state.md, or list its entries
    State(cmd::state::Args),
    /// List a note's [[links]] and backlinks
    Links(cmd::links::Args),
    /// Check notes, links, the index, caps and sizes; exit 2 on errors
    Lint(cmd::lint::Args),
    /// Search memory: exact lines (grep) or the best lines for a question (ranked)
    Search(cmd::search::Args),
    /// Delete expired scratch; archive expired notes and old state.md lines
    Sweep(cmd::sweep::Args),
    /// Run one tool call (default: the Anthropic memory tool) from JSON on stdin
    Tool(cmd::tool::Args),
    /// Serve MCP over stdin/stdout (for `claude mcp add memdir -- memdir mcp`)
    Mcp(cmd::mcp::Args),
    /// Serve MCP over streamable HTTP (loopback by default); on a service root, every tenant
    Serve(cmd::serve::Args),
    /// Print (and open) a single-use sign-in link to the person's page of the running serve
    Ui(cmd::ui::Args),
    /// Add, list, rotate or remove the tenants of a memory service
    Tenant(cmd::tenant::Args),
    /// Claude Code hooks: session-start context, pre-compact reminder
    Hook(cmd::hook::Args),
    /// Print the save-before-compaction turn
    FlushPrompt(cmd::flush_prompt::Args),
    /// Store a large output under offload/ and print a short reference
    Offload(cmd::offload::Args),
    /// Print a shell completion script
    Completions(cmd::completions::Args),
    /// Print the man page
    Man(cmd::man::Args),
    /// Show the changes recorded in git: who, when, what and why
    History(cmd::history::Args),
    /// Show who last changed each line of a file, and why
    Blame(cmd::blame::Args),
    /// Show what changed recently, who changed it and why (`--since today`, `3d`, `last week`)
    Recent(cmd::recent::Args),
    /// Revert a change with a new commit (never rewrites history)
    Undo(cmd::undo::Args),
    /// Remove a file or the lines holding a text from the files and all of history
    Forget(cmd::forget::Args),
    /// List, accept or reject proposals (changes to core memory, notes superseded by newer ones)
    Review(cmd::review::Args),
    /// Propose tidy-ups from the logs since the last run (for cron): core facts, stale lines
    Consolidate(cmd::consolidate::Args),
    /// Print a file's version, for `write --base` / `edit --base`
    Version(cmd::version::Args),
    /// Gates on irreversible actions: request, check, approve, verify the ledger
    Gate(cmd::gate::Args),
    /// Register memdir with an agent host: MCP server and hooks (claude-code, cursor)
    Install(cmd::install::Args),
    /// Remove what `memdir install` added, and nothing else
    Uninstall(cmd::install::UninstallArgs),
    /// Copy this memory into another store (`--to DIR|URL`), or write it in Claude Code's or
    /// OpenClaw's layout (`--format claude-code|openclaw DIR`)
    Export(cmd::export::Args),
    /// Bring in memory kept elsewhere (claude-code DIR, openclaw DIR, chatgpt FILE, claude
    /// FILE), or copy another store into this one (`--from DIR|URL`)
    Import(cmd::import::Args),
}
