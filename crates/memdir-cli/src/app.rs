//! Argument parsing, engine construction from the environment, and dispatch.

use crate::cmd;
use crate::store::Location;
use crate::ui::{CliError, CliResult, exit};
use clap::{Parser, Subcommand};
use memdir::{Clock, Memory};
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
    /// List, accept or reject proposals to change core memory
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

/// What a command needs from the environment, read once here and nowhere below.
pub struct Env {
    /// Where the memory lives.
    pub location: Location,
    /// The memory folder (the current folder for a store that is not one): relative model
    /// paths in the config are taken from here.
    pub root: PathBuf,
    /// Where the search indexes of a store that is not a folder are cached (under
    /// `$XDG_CACHE_HOME/memdir/`, else `~/.cache/memdir/`); `None` for a folder.
    pub search_cache: Option<PathBuf>,
    /// The clock.
    pub clock: Clock,
    /// `MEMDIR_MODEL_DIR`: the local embedding model for this command, over the config.
    pub model_dir: Option<PathBuf>,
    /// Who writes, and the trust label of what they write.
    pub actor: memdir::Actor,
    /// Why, for the change this command makes.
    pub reason: Option<String>,
    /// True when --source or MEMDIR_SOURCE chose the source (agent surfaces default to `agent`).
    pub source_given: bool,
    /// True when --writer or MEMDIR_WRITER named the writer; otherwise it is the folder's
    /// `[writers] main`.
    pub writer_given: bool,
    /// `HOME`: where `memdir install` finds the user's agent settings.
    pub home: Option<PathBuf>,
    /// `XDG_STATE_HOME`: where `memdir install` records what it changed.
    pub state_home: Option<PathBuf>,
    /// The memories this command opened, whose warnings are printed when it ends.
    pub opened: std::cell::RefCell<Vec<Memory>>,
    /// `--layout`: the folder's layout for this command, over the config's `[layout]`.
    pub layout: Option<memdir_core::host::LayoutName>,
}

impl Env {
    /// Opens the memory.
    pub fn open(&self) -> Result<Memory, CliError> {
        self.check_root()?;
        let mem = self.with_layout(self.with_cache(Memory::open_backend(
            self.location.open(false)?,
            self.clock.clone(),
        )?));
        let mem = mem
            .with_actor(self.actor_for(&mem))
            .with_reason(self.reason.as_deref());
        self.opened.borrow_mut().push(mem.clone());
        // The embedder loads lazily; a bad [embed] section only matters to vector search,
        // which reports it through `embed_config`.
        Ok(match self.embed_config(&mem) {
            Ok(c) => mem.with_embed_config(c),
            Err(_) => mem,
        })
    }

    /// `mem` in the layout `--layout` named, else as its config says.
    pub fn with_layout(&self, mem: Memory) -> Memory {
        match self.layout {
            Some(l) => mem.with_layout(l),
            None => mem,
        }
    }

    /// `mem` with what it keeps outside itself: the search cache of a store that is not a
    /// folder, and the gate key of a folder or an S3 memory (`$XDG_STATE_HOME/memdir/gates/<id>/`,
    /// else `~/.local/state/memdir/gates/<id>/`, `<id>` from the folder's path or the S3 URL),
    /// so a writer of the memory's files alone cannot forge its gate ledger. PostgreSQL keeps
    /// it in the database, outside the tenant's rows (the store's own key store).
    pub fn with_cache(&self, mem: Memory) -> Memory {
        let mem = match &self.search_cache {
            Some(dir) => mem.with_search_cache(dir),
            None => mem,
        };
        let state = self
            .state_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".local/state")));
        match (&self.location, state) {
            (Location::Folder(root), Some(state)) => {
                let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
                let id = memdir_core::gates::sha256_hex(root.as_os_str().as_encoded_bytes());
                mem.with_gate_keys(state.join("memdir/gates").join(&id[..16]))
            }
            (Location::S3(url), Some(state)) => {
                let id = memdir_core::gates::sha256_hex(url.as_bytes());
                mem.with_gate_keys(state.join("memdir/gates").join(&id[..16]))
            }
            _ => mem,
        }
    }

    /// Who writes to `mem`: the writer named on the command line or in the environment, else the
    /// folder's main writer (`[writers] main`).
    pub fn actor_for(&self, mem: &Memory) -> memdir::Actor {
        let mut actor = self.actor.clone();
        if !self.writer_given {
            actor.writer = mem.config().writers.main.clone();
        }
        actor
    }

    /// Refuses a root that is a file (or lies under one) with what to do, before the store
    /// meets it with an operating-system error.
    pub fn check_root(&self) -> Result<(), CliError> {
        if !matches!(self.location, Location::Folder(_)) {
            return Ok(());
        }
        let not_a_folder = |what: &str| {
            Err(CliError::invalid(format!(
                "the memory folder {} {what}: pass --root DIR or set MEMDIR_ROOT to a folder",
                self.root.display()
            )))
        };
        match std::fs::metadata(&self.root) {
            Ok(m) if !m.is_dir() => not_a_folder("is a file, not a folder"),
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
                not_a_folder("is inside a file, not a folder")
            }
            _ => Ok(()),
        }
    }

    /// The embedder the config and `MEMDIR_MODEL_DIR` select; the API key is read here, from
    /// the variable `embed.api_key_env` names.
    pub fn embed_config(&self, mem: &Memory) -> Result<memdir::embed::EmbedConfig, CliError> {
        let settings = &mem.config().embed;
        let api_key = settings
            .api_key_env
            .as_deref()
            .and_then(|name| std::env::var(name).ok())
            .filter(|k| !k.is_empty());
        Ok(memdir::search::embed_config(
            settings,
            &self.root,
            self.model_dir.clone(),
            api_key,
        )?)
    }
}

fn default_root() -> Result<PathBuf, CliError> {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(x).join("memdir"));
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".local/share/memdir")),
        None => Err(CliError::invalid(
            "no memory folder: pass --root DIR or set MEMDIR_ROOT",
        )),
    }
}

/// `$XDG_CACHE_HOME`, else `~/.cache`: where memdir keeps caches of stores that are not folders.
pub(crate) fn cache_home() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(x));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".cache"))
}

fn build_env(cli: &Cli) -> Result<Env, CliError> {
    let env_store = || std::env::var("MEMDIR_STORE").ok().filter(|v| !v.is_empty());
    let location = match (&cli.store, &cli.root) {
        (Some(_), Some(_)) => {
            return Err(CliError::invalid(
                "pass --store or --root, not both: --store takes a folder path too",
            ));
        }
        (Some(s), None) => Location::parse(s)?,
        (None, Some(r)) => Location::Folder(r.clone()),
        (None, None) => match (
            env_store(),
            std::env::var_os("MEMDIR_ROOT").filter(|v| !v.is_empty()),
        ) {
            (Some(s), _) => Location::parse(&s)?,
            (None, Some(r)) => Location::Folder(PathBuf::from(r)),
            (None, None) => Location::Folder(default_root()?),
        },
    };
    let root = match &location {
        Location::Folder(r) => r.clone(),
        Location::Postgres(_) | Location::S3(_) => PathBuf::from("."),
    };
    let search_cache = match &location {
        Location::Folder(_) => None,
        other => cache_home().map(|c| c.join("memdir").join(other.cache_name())),
    };
    let tz = system_time_zone().unwrap_or_else(|_| {
        // jiff falls back to UTC; a misspelt TZ would otherwise move every log line silently.
        if let Some(name) = std::env::var_os("TZ").filter(|v| !v.is_empty()) {
            eprintln!(
                "memdir: warning: TZ={name:?} is not a known time zone, so times are in UTC; set TZ to a name like Europe/Berlin or unset it"
            );
        }
        jiff::tz::TimeZone::UTC
    });
    let clock = match std::env::var("MEMDIR_NOW") {
        Ok(s) if !s.is_empty() => {
            let ts: jiff::Timestamp = s.parse().map_err(|_| {
                CliError::invalid(format!(
                    "MEMDIR_NOW={s:?} is not a time: use an RFC 3339 instant like 2026-11-30T09:00:00Z, or unset it to use the clock"
                ))
            })?;
            Clock::fixed(ts, tz)
        }
        _ => Clock::system(tz),
    };
    let model_dir = std::env::var_os("MEMDIR_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let env_or = |flag: &Option<String>, var: &str| {
        flag.clone()
            .or_else(|| std::env::var(var).ok().filter(|v| !v.is_empty()))
    };
    let writer_flag = env_or(&cli.writer, "MEMDIR_WRITER");
    let writer_given = writer_flag.is_some();
    let writer = writer_flag.unwrap_or_else(|| "main".to_string());
    if writer.trim().is_empty() || writer.contains(['\n', '<', '>']) {
        return Err(CliError::invalid(format!("bad writer name {writer:?}")));
    }
    let source_flag = env_or(&cli.source, "MEMDIR_SOURCE");
    let source_given = source_flag.is_some();
    let source = match source_flag {
        Some(s) => s.parse().map_err(CliError::invalid)?,
        None => memdir::Source::User,
    };
    Ok(Env {
        location,
        root,
        search_cache,
        clock,
        model_dir,
        actor: memdir::Actor { writer, source },
        reason: cli.reason.clone(),
        source_given,
        writer_given,
        home: std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        state_home: std::env::var_os("XDG_STATE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        opened: std::cell::RefCell::default(),
        layout: cli
            .layout
            .as_deref()
            .map(memdir_core::host::LayoutName::parse)
            .transpose()
            .map_err(CliError::invalid)?,
    })
}

/// Prints what went wrong without failing the command, one line each on stderr.
fn print_warnings(env: &Env) {
    for mem in env.opened.borrow().iter() {
        for line in mem.take_warnings() {
            eprintln!("memdir: warning: {}", without_os_error_numbers(&line));
        }
    }
}

/// Runs the program and returns its exit code.
pub fn main() -> i32 {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("memdir: internal error: {info}; please report this");
    }));
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::INVALID
            } else {
                exit::OK
            };
            let _ = e.print();
            return code;
        }
    };
    let result = build_env(&cli).and_then(|env| {
        let result = dispatch(cli.command, &env);
        print_warnings(&env);
        result
    });
    match result {
        Ok(()) => exit::OK,
        Err(e) if e.code == exit::OK => {
            // A closed stdout leaves nothing more to say, so its error is dropped.
            let _ = crate::ui::out(&e.message);
            exit::OK
        }
        Err(e) => {
            if !e.message.is_empty() {
                eprintln!("memdir: {}", without_os_error_numbers(&e.message));
            }
            e.code
        }
    }
}

/// Drops the " (os error N)" that Rust appends to system errors: the words before it already
/// say what happened, and the number means nothing to a person.
fn without_os_error_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(" (os error ") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + " (os error ".len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            rest = &tail[digits + 1..];
        } else {
            out.push_str(" (os error ");
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

fn dispatch(command: Command, env: &Env) -> CliResult {
    match command {
        Command::Init(a) => cmd::init::run(a, env),
        Command::Context(a) => cmd::context::run(a, env),
        Command::Log(a) => cmd::log::run(a, env),
        Command::Scratch(a) => cmd::scratch::run(a, env),
        Command::Read(a) => cmd::read::run(a, env),
        Command::Write(a) => cmd::write::run(a, env),
        Command::Edit(a) => cmd::edit::run(a, env),
        Command::Ls(a) => cmd::ls::run(a, env),
        Command::Rm(a) => cmd::rm::run(a, env),
        Command::Mv(a) => cmd::mv::run(a, env),
        Command::Note(a) => cmd::note::run(a, env),
        Command::Index(a) => cmd::index::run(a, env),
        Command::Reindex(a) => cmd::reindex::run(a, env),
        Command::State(a) => cmd::state::run(a, env),
        Command::Links(a) => cmd::links::run(a, env),
        Command::Lint(a) => cmd::lint::run(a, env),
        Command::Search(a) => cmd::search::run(a, env),
        Command::Sweep(a) => cmd::sweep::run(a, env),
        Command::Tool(a) => cmd::tool::run(a, env),
        Command::Mcp(a) => cmd::mcp::run(a, env),
        Command::Serve(a) => cmd::serve::run(a, env),
        Command::Ui(a) => cmd::ui::run(a, env),
        Command::Tenant(a) => cmd::tenant::run(a, env),
        Command::Hook(a) => cmd::hook::run(a, env),
        Command::FlushPrompt(a) => cmd::flush_prompt::run(a, env),
        Command::Offload(a) => cmd::offload::run(a, env),
        Command::Completions(a) => cmd::completions::run(a, env),
        Command::Man(a) => cmd::man::run(a, env),
        Command::History(a) => cmd::history::run(a, env),
        Command::Blame(a) => cmd::blame::run(a, env),
        Command::Recent(a) => cmd::recent::run(a, env),
        Command::Undo(a) => cmd::undo::run(a, env),
        Command::Review(a) => cmd::review::run(a, env),
        Command::Consolidate(a) => cmd::consolidate::run(a, env),
        Command::Version(a) => cmd::version::run(a, env),
        Command::Gate(a) => cmd::gate::run(a, env),
        Command::Install(a) => cmd::install::run(a, env),
        Command::Uninstall(a) => cmd::install::run_uninstall(a, env),
        Command::Export(a) => cmd::export::run(a, env),
        Command::Import(a) => cmd::import::run(a, env),
    }
}

/// The system time zone, read without jiff's walk of the zoneinfo folder.
///
/// The first time jiff looks a zone up by name it lists every file under
/// `/usr/share/zoneinfo` (about 1,800 on Debian), to answer case-insensitive lookups: that was
/// 58% of the instructions of `memdir context` on an empty folder. Here the zone's file is read
/// directly when `TZ` names one (under `TZDIR`, else `/usr/share/zoneinfo`), or, without `TZ`,
/// `/etc/localtime` under the name its symlink gives; anything else (a POSIX rule such as
/// `EST5EDT`, `:path`, a name in other case, a copied `/etc/localtime`) goes to jiff as before.
fn system_time_zone() -> Result<jiff::tz::TimeZone, jiff::Error> {
    let direct = match std::env::var_os("TZ") {
        None => std::fs::read_link("/etc/localtime")
            .ok()
            .and_then(|link| {
                let link = link.to_str()?;
                Some(link.split_once("zoneinfo/")?.1.to_string())
            })
            .zip(std::fs::read("/etc/localtime").ok()),
        Some(tz) => tz.to_str().filter(|n| is_zone_name(n)).and_then(|name| {
            let dir = std::env::var_os("TZDIR")
                .filter(|d| !d.is_empty())
                .map_or_else(|| PathBuf::from("/usr/share/zoneinfo"), PathBuf::from);
            let bytes = std::fs::read(dir.join(name)).ok()?;
            Some((name.to_string(), bytes))
        }),
    };
    if let Some((name, bytes)) = direct
        && let Ok(tz) = jiff::tz::TimeZone::tzif(&name, &bytes)
    {
        return Ok(tz);
    }
    jiff::tz::TimeZone::try_system()
}

/// An IANA zone name as a relative path that stays inside the zoneinfo folder
/// (`Europe/Berlin`, `Etc/GMT+1`, `UTC`).
fn is_zone_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('/').all(|part| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+'))
        })
}
