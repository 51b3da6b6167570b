//! What a command needs from the environment (the memory's location, the clock, the writer and
//! source, `HOME` and the XDG folders), read once from the options and variables, and how a
//! command opens its memory from it.

use crate::cli::Cli;
use crate::dirs::{cache_home, default_root};
use crate::store::Location;
use crate::ui::CliError;
use memdir::{Clock, Memory};
use std::path::PathBuf;

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

/// Reads the options and the environment into an [`Env`], refusing bad values with what to do.
pub fn build_env(cli: &Cli) -> Result<Env, CliError> {
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
