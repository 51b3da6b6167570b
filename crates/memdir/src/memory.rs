//! The memory folder's layers: core, daily logs, scratch, and everything else.

use crate::backend::Backend;
use crate::clock::Clock;
use crate::error::Error;
use crate::folder::FolderStore;
use crate::history::History;
use crate::proposals::proposed;
use crate::provenance::{Actor, Source};
use crate::store::{Entry, EntryKind, LockName, Precondition, Store, StoreError, Version};
use memdir_core::config::{Config, with_git_disabled};
use memdir_core::context::{Fill, Section, fence_untrusted, fit, nest_headings, render, tokens};
use memdir_core::edit::{EditError, EditOp, Edited};
use memdir_core::host::{FolderLayout, LayoutName};
use memdir_core::log::{
    EXTERNAL_MARK, EXTERNAL_SCRATCH_MARK, LOG_DIR, format_entry, parse_entries,
};
use memdir_core::path::MemPath;
use memdir_core::scratch::{SCRATCH_DIR, ScratchName, validate_slug};
use memdir_embed::{EmbedConfig, Embedder};
use memdir_search::{
    Corpus, EmbedderSlot, HitRef, HybridOptions, Progress, SearchOutcome, SearchRequest, Searcher,
    VectorStats,
};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

/// The version of some content: its git blob id ([`Version::of`] as text).
pub fn content_version(data: &[u8]) -> String {
    Version::of(data).as_str().to_string()
}

/// The most warnings kept until a front end takes them.
const MAX_WARNINGS: usize = 64;

pub use memdir_core::host::CORE_FILE;

/// The last line of every context: where the rest of memory is and how to reach it.
pub const POINTER: &str = "Not loaded above: older logs, notes and the archive. Search them with \
`memdir search <words>` (MCP: memory_search) and open a file with `memdir read <path>` (MCP: memory_read).";

/// A memory folder, its settings, its clock, and who is writing.
///
/// Cloning is cheap; `with_*` methods give a copy that carries one change's identity, reason or
/// expected version, so signatures stay small.
#[derive(Clone)]
pub struct Memory {
    store: Arc<dyn Store>,
    history: Option<Arc<dyn History>>,
    config: Config,
    clock: Clock,
    /// The embedder of semantic and hybrid search, loaded on first use.
    pub(crate) embedder: Arc<EmbedderSlot>,
    /// The in-memory copy of the searchable files, when warm search is on.
    pub(crate) warm: Option<Arc<memdir_search::Warm>>,
    /// Where the search indexes of a store without a local folder live (see
    /// [`Memory::with_search_cache`]); a folder keeps them in its own `.memdir/`.
    pub(crate) search_cache: Option<Arc<std::path::Path>>,
    /// Where the gates' key and remembered head live, outside the memory folder (see
    /// [`Memory::with_gate_keys`]).
    pub(crate) gate_keys: Option<Arc<std::path::Path>>,
    /// The backend's own vector index, when it keeps one (else a SQLite file, see
    /// [`crate::vectors`]).
    pub(crate) vectors: Option<Arc<dyn crate::vectors::VectorStore>>,
    actor: Actor,
    reason: Option<String>,
    /// The channel changes come through, recorded as a trailer (`web` for memdir's page).
    via: Option<&'static str>,
    expect: Precondition,
    force: bool,
    agent_surface: bool,
    /// What went wrong without failing the operation, for the front end to show.
    warnings: Arc<std::sync::Mutex<Vec<String>>>,
    /// Why `.memdir/config.toml` could not be read (then `config` is the defaults).
    config_error: Option<String>,
}

/// The assembled context, most stable section first.
#[derive(Debug, Clone, Serialize)]
pub struct Context {
    /// The sections in load order.
    pub sections: Vec<Section>,
}

impl Context {
    /// The context as Markdown.
    pub fn render(&self) -> String {
        render(&self.sections)
    }
}

/// Where a log entry went.
#[derive(Debug, Clone, Serialize)]
pub struct LogReceipt {
    /// The log file, e.g. `log/2026-11-30.md`.
    pub path: String,
    /// The entry as written.
    pub entry: String,
}

/// What a sweep removed (or would remove, on a dry run).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SweepReport {
    /// Expired scratch notes removed.
    pub removed: Vec<String>,
    /// Items in `scratch/` left alone because they are not scratch notes.
    pub skipped: Vec<String>,
    /// Notes whose `expires` date has passed, moved into `archive/`.
    pub archived_notes: Vec<crate::archive::Archived>,
    /// Entries of `state.md` older than `state.archive_after`, moved into the archive.
    pub archived_state_entries: usize,
    /// The archive file those state entries went to (`archive/YYYY-MM-DD.md`).
    pub state_archive: Option<String>,
}

fn mp(s: &str) -> MemPath {
    // Only called with the constant, known-good layer paths below.
    MemPath::parse(s).unwrap_or_default()
}

impl Memory {
    /// Opens an existing memory folder on local disk.
    pub fn open(root: &Path, clock: Clock) -> Result<Memory, Error> {
        Memory::open_backend(FolderStore::open(root)?.backend(), clock)
    }

    /// Creates the layout (idempotent: nothing that exists is touched), makes the folder a git
    /// repository for provenance, and opens it.
    pub fn init(root: &Path, clock: Clock) -> Result<Memory, Error> {
        Memory::init_with(root, clock, true)
    }

    /// Like [`Memory::init`]; `git: false` opts out of the repository and records that in the
    /// config (`[git] enabled = false`), so a later `init` does not start one.
    pub fn init_with(root: &Path, clock: Clock, git: bool) -> Result<Memory, Error> {
        Memory::init_backend(FolderStore::create(root)?.backend(), clock, git)
    }

    /// Creates the layout in any backend (idempotent) and opens it; `git: false` records no
    /// history and remembers that in the config (`[git] enabled = false`).
    pub fn init_backend(backend: Backend, clock: Clock, git: bool) -> Result<Memory, Error> {
        Memory::init_layout(backend, clock, git, None)
    }

    /// Like [`Memory::init_backend`] for a folder in `layout` (`None`: the one its config
    /// names, else memdir's own). memdir's own layout gets its empty `core.md`, `log/` and
    /// `scratch/`; a host's layout (`claude-code`, `openclaw`) gets nothing but `.memdir/`
    /// (whose config records the layout) and the history, so the host's files stay exactly as
    /// they are. A layout other than the one an existing config names is refused.
    pub fn init_layout(
        backend: Backend,
        clock: Clock,
        git: bool,
        layout: Option<LayoutName>,
    ) -> Result<Memory, Error> {
        let store = &backend.store;
        // `--no-git` is remembered in the config, so a later `init` does not start a repository.
        let config = match store.read_meta("config.toml")? {
            Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            None => String::new(),
        };
        let configured = Config::from_toml(&config).ok().map(|c| c.layout.name);
        let layout = match (layout, configured) {
            (Some(want), Some(have)) if !config.is_empty() && want != have => {
                return Err(Error::Invalid(format!(
                    "this memory's config says its layout is {have}, not {want}: change `[layout] name` in .memdir/config.toml first"
                )));
            }
            (Some(want), _) => want,
            (None, Some(have)) if !config.is_empty() => have,
            (None, _) => LayoutName::Memdir,
        };
        if layout == LayoutName::Memdir {
            for dir in [LOG_DIR, SCRATCH_DIR] {
                store.create_dir(&mp(dir))?;
            }
            if store.stat(&mp(CORE_FILE))?.is_none() {
                store.write(&mp(CORE_FILE), b"")?;
            }
        }
        let template = memdir_core::config::template_with_layout(layout);
        let config = match (config.is_empty(), git) {
            (true, true) => Some(template),
            (true, false) => Some(with_git_disabled(&template).map_err(Error::Invalid)?),
            (false, false) if Config::from_toml(&config).is_ok_and(|c| c.git.enabled) => {
                Some(with_git_disabled(&config).map_err(Error::Invalid)?)
            }
            (false, _) => None,
        };
        if let Some(text) = config {
            store.write_meta("config.toml", text.as_bytes())?;
        }
        let mem = Memory::open_backend(backend, clock)?;
        if git
            && mem.config.git.enabled
            && let Some(h) = &mem.history
        {
            let _lock = mem.store.lock(LockName::Git)?;
            h.start(mem.clock.now().timestamp())?;
        }
        Ok(mem)
    }

    /// Wraps a store without history; reads `.memdir/config.toml` through it.
    pub fn from_store(store: Arc<dyn Store>, clock: Clock) -> Result<Memory, Error> {
        Memory::open_backend(Backend::store_only(store), clock)
    }

    /// Opens a memory in any backend; reads `.memdir/config.toml` through its store.
    pub fn open_backend(backend: Backend, clock: Clock) -> Result<Memory, Error> {
        let Backend {
            store,
            history,
            vectors,
        } = backend;
        // A bad config does not stop reads: they go on with the defaults and a warning, and
        // every change is refused until the file is fixed (see `begin`).
        let (config, config_error) = match store.read_meta("config.toml")? {
            Some(bytes) => match Config::from_toml(&String::from_utf8_lossy(&bytes)) {
                Ok(c) => (c, None),
                Err(e) => (Config::default(), Some(e)),
            },
            None => (Config::default(), None),
        };
        let warnings: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        if let Some(e) = &config_error {
            warnings
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!("{e}; reading with the default settings, and changes are refused until it is fixed"));
        }
        Ok(Memory {
            config_error,
            store,
            history,
            config,
            clock,
            embedder: Arc::default(),
            warm: None,
            actor: Actor::default(),
            reason: None,
            via: None,
            expect: Precondition::Any,
            force: false,
            agent_surface: false,
            search_cache: None,
            gate_keys: None,
            vectors,
            warnings,
        })
    }

    /// This memory, written by `actor`.
    pub fn with_actor(&self, actor: Actor) -> Memory {
        Memory {
            actor,
            ..self.clone()
        }
    }

    /// This memory, recording that its changes came through `via` (`web` for memdir's page) in
    /// each change's trailers.
    pub fn with_via(&self, via: Option<&'static str>) -> Memory {
        Memory {
            via,
            ..self.clone()
        }
    }

    /// The channel changes are recorded as coming through.
    pub fn via(&self) -> Option<&'static str> {
        self.via
    }

    /// This memory, recording `reason` with the next change.
    pub fn with_reason(&self, reason: Option<&str>) -> Memory {
        Memory {
            reason: reason.map(|r| crate::guard::reason(self, r)),
            ..self.clone()
        }
    }

    /// This memory, refusing a whole-file write or edit unless the file is still at `version`
    /// (from [`Memory::version`]): a stale edit is a conflict, never a lost update.
    pub fn with_base(&self, version: Option<&str>) -> Memory {
        self.with_precondition(match version {
            Some(v) => Precondition::Matches(Version::from_string(v)),
            None => Precondition::Any,
        })
    }

    /// This memory, writing a whole file only when `pre` holds (checked by the store, atomically
    /// with the write): [`Precondition::Absent`] only creates, `Matches` is [`Memory::with_base`].
    pub fn with_precondition(&self, pre: Precondition) -> Memory {
        Memory {
            expect: pre,
            ..self.clone()
        }
    }

    /// This memory, allowing a rewrite of core that drops many lines.
    pub fn with_force(&self, force: bool) -> Memory {
        Memory {
            force,
            ..self.clone()
        }
    }

    /// This memory in a long-lived process (an MCP server, a service): its history follows
    /// the backend's change feed from the next change on, so finding what changed outside
    /// memdir (a folder's hand edits) costs what changed instead of a walk of the whole
    /// memory. The history is shared with every copy of this memory, which all follow too.
    /// Where the feed is unavailable (no inotify, out of watches) changes compare the whole
    /// folder, as before.
    pub fn with_history_feed(&self) -> Memory {
        if let Some(h) = &self.history {
            h.follow_changes();
        }
        self.clone()
    }

    /// This memory as an agent's tools see it: the gates' policy and ledger can never be
    /// changed through it, whatever the source label says.
    pub fn for_agent(&self) -> Memory {
        Memory {
            agent_surface: true,
            ..self.clone()
        }
    }

    /// True when this memory serves an agent's tools (see [`Memory::for_agent`]).
    pub(crate) fn is_agent_surface(&self) -> bool {
        self.agent_surface
    }

    /// Refuses a change while the config cannot be read: it would run on the wrong settings.
    pub(crate) fn refuse_bad_config(&self) -> Result<(), Error> {
        match &self.config_error {
            Some(e) => Err(Error::Invalid(format!(
                "{e}; fix it before changing memory"
            ))),
            None => Ok(()),
        }
    }

    /// Keeps a warning: something went wrong that did not fail the operation.
    pub(crate) fn warn(&self, line: String) {
        let mut all = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        // A long-running server that never asks keeps only the latest few.
        if all.len() >= MAX_WARNINGS {
            all.remove(0);
        }
        all.push(line);
    }

    /// The warnings since the last call (a file git cannot record, a stale git lock removed,
    /// an interrupted change finished, a change saved whose history lags), one line each.
    /// Every copy made with a `with_*` method shares them.
    pub fn take_warnings(&self) -> Vec<String> {
        let all = std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()));
        // The same file left out of two commits of one change is one warning.
        let mut out: Vec<String> = Vec::with_capacity(all.len());
        for line in all {
            if !out.contains(&line) {
                out.push(line);
            }
        }
        out
    }

    /// Who is writing.
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// True when a large rewrite of core was explicitly allowed.
    pub(crate) fn forced(&self) -> bool {
        self.force
    }

    /// The reason recorded with the next change.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The history changes are recorded in, when this memory keeps one.
    pub(crate) fn history_backend(&self) -> Option<&Arc<dyn History>> {
        self.history
            .as_ref()
            .filter(|h| self.config.git.enabled && h.enabled())
    }

    /// A file's version: its git blob id (as `git hash-object` prints), or `None` if absent.
    pub fn version(&self, path: &str) -> Result<Option<String>, Error> {
        let p = MemPath::parse_file(path)?;
        match self.store.read(&p) {
            Ok(b) => Ok(Some(content_version(&b))),
            Err(StoreError::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Refuses the change early (before a cap check or a proposal) when the expected version
    /// does not hold. The store checks it again, atomically with the write.
    fn check_base(&self, p: &MemPath, current: Option<&[u8]>) -> Result<(), Error> {
        match &self.expect {
            Precondition::Any => Ok(()),
            Precondition::Absent if current.is_some() => Err(Error::Store(StoreError::Conflict(
                format!("{p} already exists"),
            ))),
            Precondition::Absent => Ok(()),
            Precondition::Matches(want) => {
                let now = current.map(Version::of);
                if now.as_ref() == Some(want) {
                    Ok(())
                } else {
                    Err(crate::store::stale(p, want, now.as_ref()).into())
                }
            }
        }
    }

    /// The store underneath.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The settings in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Where each layer lives in this folder (`[layout]` in the config, or
    /// [`Memory::with_layout`]).
    pub fn layout(&self) -> FolderLayout {
        FolderLayout::of(self.config.layout.name)
    }

    /// This memory read and written in the layout `name` (the `--layout` option), whatever
    /// the config says.
    pub fn with_layout(&self, name: LayoutName) -> Memory {
        let mut config = self.config.clone();
        config.layout.name = name;
        Memory {
            config,
            ..self.clone()
        }
    }

    /// The always-loaded file of this folder's layout (`core.md`, or OpenClaw's `MEMORY.md`).
    pub(crate) fn core_file(&self) -> &'static str {
        self.layout().core
    }

    /// The clock in use.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Reads a text file; `None` when it does not exist.
    fn read_opt(&self, path: &MemPath) -> Result<Option<String>, Error> {
        Ok(self
            .read_bytes_opt(path)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// Reads a file's bytes; `None` when it does not exist.
    pub(crate) fn read_bytes_opt(&self, path: &MemPath) -> Result<Option<Vec<u8>>, Error> {
        match self.store.read(path) {
            Ok(b) => Ok(Some(b)),
            Err(StoreError::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Lists a folder, empty when it does not exist.
    fn list_opt(&self, dir: &MemPath) -> Result<Vec<Entry>, Error> {
        match self.store.list(dir) {
            Ok(v) => Ok(v),
            Err(StoreError::NotFound(_)) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// Builds the context within the configured budget (`[context] max_tokens`).
    pub fn context(&self) -> Result<Context, Error> {
        self.context_within(self.config.context.max_tokens)
    }

    /// Builds the context within `max_tokens` (estimated as bytes / 4): see [`fit`].
    pub fn context_within(&self, max_tokens: usize) -> Result<Context, Error> {
        Ok(Context {
            sections: fit(self.context_sections()?, max_tokens, &tokens),
        })
    }

    /// Every section of the context, before any budget: core, the index, state and the guard
    /// and proposals lines, the most recent `[context] log_days` days that have a log, live
    /// scratch notes, then a pointer to the rest. Missing layers are simply empty.
    pub fn context_sections(&self) -> Result<Vec<Section>, Error> {
        let _prefetched = crate::prefetch::context(self);
        // A change killed part-way may have left MEMORY.md behind its notes: finish it first.
        self.heal_if_interrupted();
        let now = self.clock.now();
        let mut sections = Vec::new();
        let layout = self.layout();
        let core = self.read_opt(&mp(layout.core))?.unwrap_or_default();
        let core = if core.trim().is_empty() {
            "(empty)".to_string()
        } else {
            nest_headings(&core)
        };
        sections.push(Section::new(
            "core",
            format!("Core memory ({})", layout.core),
            Some(layout.core.to_string()),
            core,
        ));
        sections.extend(crate::index::context_sections(self)?);
        let logs = self.list_opt(&mp(layout.log_dir))?;
        let today = now.date();
        for date in recent_days(&layout, &logs, today, self.config.context.log_days) {
            if let Some((path, text)) = self.day_log(&logs, date)?
                && !text.trim().is_empty()
            {
                let ago = today.since(date).map(|s| s.get_days()).unwrap_or(0);
                let label = match ago {
                    0 => "today".to_string(),
                    1 => "yesterday".to_string(),
                    n => format!("{n} days ago"),
                };
                sections.push(
                    Section::new(
                        format!("log:{date}"),
                        format!("Log {date} ({label})"),
                        Some(path),
                        text,
                    )
                    .with_fill(Fill::Tail),
                );
            }
        }
        let now_ms = now.timestamp().as_millisecond();
        for e in self.list_opt(&mp(layout.scratch))? {
            let Some(name) = e.path.file_name().and_then(ScratchName::parse) else {
                continue;
            };
            if e.kind != EntryKind::File || name.expires_ms <= now_ms {
                continue;
            }
            let Some(text) = self.read_opt(&e.path)? else {
                continue;
            };
            let text = match crate::trust::external_scratch_body(&text) {
                Some(rest) => fence_untrusted(rest),
                None => nest_headings(&text),
            };
            let expires = jiff::Timestamp::from_millisecond(name.expires_ms)
                .map(|t| {
                    t.to_zoned_datetime(now.time_zone().clone())
                        .strftime("%Y-%m-%d %H:%M")
                        .to_string()
                })
                .unwrap_or_default();
            sections.push(Section::new(
                format!("scratch:{}", name.slug),
                format!("Scratch: {} (expires {expires})", name.slug),
                Some(e.path.to_string()),
                text,
            ));
        }
        sections.push(Section::new("pointer", "", None, POINTER.to_string()));
        Ok(sections)
    }

    /// One day's log as the context shows it (every writer's file merged, external entries
    /// fenced), or `None` when the day has no log. For readers that show a log to an agent.
    pub fn day_log_shown(&self, date: jiff::civil::Date) -> Result<Option<String>, Error> {
        let logs = self.list_opt(&mp(self.layout().log_dir))?;
        Ok(self.day_log(&logs, date)?.map(|(_, text)| text))
    }

    /// One day's log for the context: the main file and every writer's file merged in time
    /// order (stable, main first), non-main lines tagged with their writer, and entries from
    /// external sources fenced (a run of them in one block). Returns the main path and the text.
    fn day_log(
        &self,
        logs: &[Entry],
        date: jiff::civil::Date,
    ) -> Result<Option<(String, String)>, Error> {
        let layout = self.layout();
        let main = layout.log_path(date);
        let mut files: Vec<(Option<String>, String)> = Vec::new();
        for e in logs {
            let Some(name) = e.path.file_name() else {
                continue;
            };
            if e.kind != EntryKind::File || layout.log_name_date(name) != Some(date) {
                continue;
            }
            let writer = layout.log_name_writer(name).map(str::to_string);
            if let Some(text) = self.read_opt(&e.path)? {
                files.push((writer, text));
            }
        }
        if files.is_empty() {
            return Ok(None);
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut entries: Vec<(String, usize, bool, String)> = Vec::new();
        for (writer, text) in &files {
            for entry in parse_entries(text) {
                let key = entry.time.clone().unwrap_or_default();
                let mut line = entry.text.clone();
                if let (Some(w), Some(t)) = (writer, &entry.time) {
                    let prefix = format!("- {t} ");
                    if let Some(rest) = line.strip_prefix(&prefix) {
                        line = format!("{prefix}({w}) {rest}");
                    }
                }
                let external = entry
                    .text
                    .get(8..)
                    .is_some_and(|r| r.starts_with(EXTERNAL_MARK));
                entries.push((key, entries.len(), external, line));
            }
        }
        if files.len() > 1 {
            entries.sort_by(|a, b| (a.0.as_str(), a.1).cmp(&(b.0.as_str(), b.1)));
        }
        let mut out = String::new();
        let mut run = String::new();
        for (_, _, external, line) in entries {
            if external {
                run.push_str(&line);
                continue;
            }
            if !run.is_empty() {
                out.push_str(&fence_untrusted(&std::mem::take(&mut run)));
            }
            out.push_str(&line);
        }
        if !run.is_empty() {
            out.push_str(&fence_untrusted(&run));
        }
        Ok(Some((main, out)))
    }

    /// Appends one entry to today's log. Writers other than the main one append to their own
    /// file, `log/YYYY-MM-DD.<writer>.md`, so they never contend on one file.
    pub fn log(&self, text: &str) -> Result<LogReceipt, Error> {
        let now = self.clock.now();
        let path = if self.actor.writer == self.config.writers.main {
            self.layout().log_path(now.date())
        } else {
            validate_slug(&self.actor.writer)
                .map_err(|e| Error::Invalid(format!("writer: {e}")))?;
            self.layout()
                .writer_log_path(now.date(), &self.actor.writer)
        };
        let guarded = crate::guard::content(self, &path, text, None)?;
        let text = &*guarded.text;
        let marked;
        let text = if self.actor.source == Source::External {
            marked = format!("{EXTERNAL_MARK} {text}");
            marked.as_str()
        } else {
            text
        };
        let entry = format_entry(now.time(), text).map_err(Error::Invalid)?;
        let file = MemPath::parse_file(&path)?;
        let tx = self
            .begin_append("log", &file, &entry)?
            .redacted(&guarded.redacted);
        self.store.append(&file, entry.as_bytes())?;
        tx.commit()?;
        Ok(LogReceipt { path, entry })
    }

    /// Writes a scratch note that expires after `ttl_ms` (the configured default when `None`).
    /// A note with the same name is replaced.
    pub fn scratch(&self, name: &str, ttl_ms: Option<i64>, body: &str) -> Result<String, Error> {
        validate_slug(name).map_err(Error::Invalid)?;
        let ttl = match ttl_ms {
            Some(t) => t,
            None => memdir_core::duration::parse_ttl(&self.config.scratch.default_ttl)
                .map_err(Error::Invalid)?,
        };
        let expires_ms = self
            .clock
            .now()
            .timestamp()
            .as_millisecond()
            .saturating_add(ttl);
        let file = ScratchName {
            expires_ms,
            slug: name.to_string(),
        }
        .file_name();
        let scratch = mp(self.layout().scratch);
        let path = scratch.join(&file)?;
        let guarded = crate::guard::content(self, path.as_str(), body, None)?;
        let body = &*guarded.text;
        let body = if self.actor.source == Source::External {
            format!("{EXTERNAL_SCRATCH_MARK}\n{body}")
        } else {
            body.to_string()
        };
        let tx = self
            .begin("scratch", path.as_str())?
            .redacted(&guarded.redacted);
        self.store.write(&path, body.as_bytes())?;
        for e in self.list_opt(&scratch)? {
            if e.path != path
                && e.path
                    .file_name()
                    .and_then(ScratchName::parse)
                    .is_some_and(|n| n.slug == name)
            {
                self.store.remove(&e.path)?;
            }
        }
        tx.commit()?;
        Ok(path.to_string())
    }

    /// Reads a file's bytes.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, Error> {
        let p = MemPath::parse_file(path)?;
        Ok(self.store.read(&p)?)
    }

    /// Creates or replaces a file. `core.md` is checked against its cap and the core policy first.
    pub fn write(&self, path: &str, content: &str) -> Result<(), Error> {
        let p = MemPath::parse_file(path)?;
        self.refuse_gate_files(&p)?;
        let guarded = crate::guard::content(self, p.as_str(), content, None)?;
        let content = &*guarded.text;
        self.refuse_hiding_ignore(&p, content)?;
        let mut tx = self.begin("write", p.as_str())?.redacted(&guarded.redacted);
        let core_file = self.core_file();
        if p.as_str() == core_file {
            let _lock = self.store.lock(LockName::File(&p))?;
            let current = self.read_opt(&p)?;
            self.check_base(&p, current.as_deref().map(str::as_bytes))?;
            let current = current.unwrap_or_default();
            self.config.core.cap().check(core_file, &current, content)?;
            if !self.gate_core(&current, content)? {
                let id = self.write_proposal(&current, content)?;
                tx.recorded_as("propose", core_file).commit()?;
                return Err(proposed(core_file, &id));
            }
            self.store.write_if(&p, content.as_bytes(), &self.expect)?;
        } else {
            let current =
                if self.expect != Precondition::Any || crate::trust::needs_current(self, &p) {
                    self.read_bytes_opt(&p)?
                } else {
                    None
                };
            if self.expect != Precondition::Any {
                self.check_base(&p, current.as_deref())?;
            }
            let current = current.map(|b| String::from_utf8_lossy(&b).into_owned());
            let content = &crate::trust::label(self, &p, current.as_deref(), content)?;
            match crate::notes::write_hook(self, &p, content, false, &self.expect) {
                Some(done) => self.applied_anyway(&mut tx, &p, content, done)?,
                None => drop(self.store.write_if(&p, content.as_bytes(), &self.expect)?),
            }
        }
        tx.commit()
    }

    /// Refuses a `.gitignore` that would hide memory from history: any file there now, or one
    /// of the layout's files, that git records today and would not after the write.
    fn refuse_hiding_ignore(&self, p: &MemPath, content: &str) -> Result<(), Error> {
        if p.file_name() != Some(".gitignore") {
            return Ok(());
        }
        let Some(h) = self.history_backend() else {
            return Ok(());
        };
        let dir = p.parent().unwrap_or_default();
        let mut paths: Vec<String> = self
            .store
            .walk(&dir)?
            .into_iter()
            .filter(|e| e.path != *p)
            .filter_map(|e| {
                let rel = e.path.as_str().strip_prefix(dir.as_str())?;
                Some(rel.trim_start_matches('/').to_string())
            })
            .collect();
        let layout = self.layout();
        paths.extend([
            layout.core.to_string(),
            layout.index_file.to_string(),
            layout.state.to_string(),
            format!("{}/2026-01-01.md", layout.log_dir),
            format!("{}/a.md", layout.notes_dir),
            "a.md".to_string(),
        ]);
        let hidden = h.hidden_by_ignore(content, &paths)?;
        if let Some(first) = hidden.first() {
            let first = if dir.is_root() {
                first.clone()
            } else {
                format!("{dir}/{first}")
            };
            return Err(Error::Invalid(format!(
                "{p} would hide memory from history ({first} and {} more would no longer be recorded): ignore only files that are not memory",
                hidden.len() - 1
            )));
        }
        Ok(())
    }

    /// A note write whose follow-up (`MEMORY.md`) failed after the note itself was written is
    /// applied: it is reported with a warning, and the next change regenerates the index. A
    /// failure before the write is the change's failure.
    fn applied_anyway(
        &self,
        tx: &mut crate::change::Tx<'_>,
        p: &MemPath,
        content: &str,
        done: Result<(), Error>,
    ) -> Result<(), Error> {
        let Err(e) = done else { return Ok(()) };
        let written = matches!(e.kind(), crate::ErrorKind::Backend)
            && self.read_bytes_opt(p).ok().flatten().as_deref() == Some(content.as_bytes());
        if !written {
            return Err(e);
        }
        self.warn(format!(
            "{p} is saved, but updating MEMORY.md failed ({e}): the next change or `memdir context` regenerates it"
        ));
        tx.lagging();
        Ok(())
    }

    /// Replaces exactly one occurrence of `old` with `new` in a file.
    pub fn edit(&self, path: &str, old: &str, new: &str) -> Result<(), Error> {
        self.edit_with(
            path,
            &EditOp::Replace {
                old,
                new,
                expected: 1,
            },
        )
        .map(drop)
    }

    /// Applies one partial edit (append, prepend, a section, or a replacement with an expected
    /// count) as one change: the same version check (`with_base`), caps, core gate, trust label,
    /// index update and history record as [`Memory::edit`]. Returns what was done, in one line.
    pub fn edit_with(&self, path: &str, op: &EditOp<'_>) -> Result<String, Error> {
        let p = MemPath::parse_file(path)?;
        self.refuse_gate_files(&p)?;
        let mut tx = self.begin("edit", p.as_str())?;
        let _lock = self.store.lock(LockName::File(&p))?;
        let (bytes, read_version) = self.store.read_versioned(&p)?;
        self.check_base(&p, Some(&bytes))?;
        // The replacement goes only over the version the edit was computed from.
        let pre = Precondition::Matches(read_version);
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::Invalid(format!(
                "{p} is not UTF-8 text: it cannot be edited by text"
            ))
        })?;
        let Edited {
            text: updated,
            summary,
        } = memdir_core::edit::apply_to(p.as_str(), &text, op).map_err(|e| match e {
            EditError::NotFound(m) => Error::NotFound(m),
            EditError::Invalid(m) => Error::Invalid(m),
        })?;
        let guarded = crate::guard::content(self, p.as_str(), &updated, Some(&text))?;
        tx = tx.redacted(&guarded.redacted);
        let updated = guarded.text.into_owned();
        let core_file = self.core_file();
        if p.as_str() == core_file {
            self.config.core.cap().check(core_file, &text, &updated)?;
            if !self.gate_core(&text, &updated)? {
                let id = self.write_proposal(&text, &updated)?;
                tx.recorded_as("propose", core_file).commit()?;
                return Err(proposed(core_file, &id));
            }
        }
        self.refuse_hiding_ignore(&p, &updated)?;
        let updated = crate::trust::label(self, &p, Some(&text), &updated)?;
        match crate::notes::write_hook(self, &p, &updated, true, &pre) {
            Some(done) => self.applied_anyway(&mut tx, &p, &updated, done)?,
            None => drop(self.store.write_if(&p, updated.as_bytes(), &pre)?),
        }
        tx.commit()?;
        Ok(summary)
    }

    /// Lists a folder (or describes one file).
    pub fn ls(&self, path: &str) -> Result<Vec<Entry>, Error> {
        let p = MemPath::parse(path)?;
        match self.store.stat(&p)? {
            None => Err(Error::NotFound(format!("{} does not exist", display(&p)))),
            Some(e) if e.kind == EntryKind::File => Ok(vec![e]),
            Some(_) => Ok(self.store.list(&p)?),
        }
    }

    /// Deletes a file or a folder.
    pub fn rm(&self, path: &str) -> Result<(), Error> {
        let p = MemPath::parse(path)?;
        if p.is_root() {
            return Err(Error::Invalid("cannot delete the memory root".into()));
        }
        self.refuse_gate_files(&p)?;
        let tx = self.begin("rm", p.as_str())?;
        if p.as_str() == self.core_file() {
            self.refuse_core_move_unless_user()?;
        }
        // A note's text, for the index to drop its line without reading every note.
        let gone = match self.store.stat(&p)? {
            Some(e) if e.kind == EntryKind::File && p.as_str().ends_with(".md") => {
                self.read_opt(&p)?
            }
            _ => None,
        };
        self.store.remove(&p)?;
        crate::notes::after_change(self, &[&p], gone.as_deref())?;
        tx.commit()
    }

    /// Moves a file or folder; never overwrites.
    pub fn mv(&self, from: &str, to: &str) -> Result<(), Error> {
        let f = MemPath::parse(from)?;
        let t = MemPath::parse(to)?;
        if f.is_root() || t.is_root() {
            return Err(Error::Invalid("cannot move the memory root".into()));
        }
        self.refuse_gate_files(&f)?;
        self.refuse_gate_files(&t)?;
        let tx = self.begin("mv", &format!("{f} -> {t}"))?;
        let core_file = self.core_file();
        // The moved file's text, when it is one file: the index updates from it.
        let moved = if t.as_str() == core_file {
            let _lock = self.store.lock(LockName::File(&t))?;
            self.refuse_core_move_unless_user()?;
            let incoming = self.read_opt(&f)?.unwrap_or_default();
            self.config.core.cap().check(core_file, "", &incoming)?;
            self.store.rename(&f, &t)?;
            None
        } else {
            if f.as_str() == core_file {
                self.refuse_core_move_unless_user()?;
            }
            let text = match self.store.stat(&f)? {
                Some(e) if e.kind == EntryKind::File => self.read_opt(&f)?,
                _ => None,
            };
            let remark = crate::trust::check_move(self, &f, &t, text.as_deref())?;
            crate::index::check_move(self, &f, &t, text.as_deref())?;
            self.store.rename(&f, &t)?;
            if remark && let Some(text) = &text {
                let marked = crate::trust::mark(&self.layout(), &t, text);
                if marked != text.as_str() {
                    self.store.write(&t, marked.as_bytes())?;
                }
            }
            text
        };
        crate::notes::after_change(self, &[&f, &t], moved.as_deref())?;
        tx.commit()
    }

    /// Deletes expired scratch notes. Idempotent; odd names and folders are skipped.
    pub fn sweep(&self, dry_run: bool) -> Result<SweepReport, Error> {
        let tx = if dry_run {
            None
        } else {
            Some(self.begin("sweep", self.layout().scratch)?)
        };
        let now_ms = self.clock.now().timestamp().as_millisecond();
        let mut report = SweepReport::default();
        for e in self.list_opt(&mp(self.layout().scratch))? {
            let parsed = e.path.file_name().and_then(ScratchName::parse);
            match parsed {
                Some(n) if e.kind == EntryKind::File => {
                    if n.expires_ms <= now_ms {
                        if !dry_run {
                            match self.store.remove(&e.path) {
                                Ok(()) | Err(StoreError::NotFound(_)) => {}
                                Err(err) => return Err(err.into()),
                            }
                        }
                        report.removed.push(e.path.to_string());
                    }
                }
                _ => report.skipped.push(e.path.to_string()),
            }
        }
        crate::archive::sweep(self, dry_run, &mut report)?;
        if !dry_run {
            // Temp files of writes that were killed (only memdir's own names, of dead processes).
            self.store.clean_temp_files(&MemPath::root(), true)?;
        }
        if let Some(tx) = tx {
            tx.commit()?;
        }
        Ok(report)
    }
}

/// Search: the engine hands [`memdir_search`] what it needs once (a [`Searcher`]) and maps its
/// error; nothing in search calls back into the engine.
impl Memory {
    /// What a search of this memory is handed: where its files are, today, the warm copy, the
    /// embedder and the backend's own vector index.
    fn searcher(&self) -> Searcher<'_> {
        Searcher {
            corpus: match self.store.local_root() {
                Some(root) => Corpus::Folder(root),
                None => Corpus::Store {
                    store: self.store.as_ref(),
                    cache: self.search_cache.as_deref(),
                },
            },
            today: self.clock.now().date(),
            warm: self.warm.as_deref(),
            embedder: &self.embedder,
            vectors: self.vectors.as_ref(),
        }
    }

    /// Searches the memory folder.
    ///
    /// Fails with [`Error::Invalid`] on a bad regular expression, glob or empty pattern.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchOutcome, Error> {
        Ok(self.searcher().search(req)?)
    }

    /// Like [`Memory::search`], but hands each result line to `each` as soon as it is known,
    /// in the same order, so a front end can print while grep is still reading (a search
    /// with many matches never holds them all). Returns how many matches were left out by the
    /// budget; an error from `each` (a closed pipe) stops the search and is returned.
    pub fn search_each(
        &self,
        req: &SearchRequest,
        each: &mut dyn FnMut(HitRef<'_>) -> Result<(), Error>,
    ) -> Result<usize, Error> {
        self.search_each_with_progress(req, &|_, _| {}, each)
    }

    /// Like [`Memory::search_each`], telling `progress` of the chunks a semantic or hybrid
    /// search embeds first (files changed since the vector index was last brought up to date),
    /// as [`Memory::sync_vector_index`] does: a front end shows a bar without syncing the index
    /// in a separate pass before the search.
    pub fn search_each_with_progress(
        &self,
        req: &SearchRequest,
        progress: Progress<'_>,
        each: &mut dyn FnMut(HitRef<'_>) -> Result<(), Error>,
    ) -> Result<usize, Error> {
        // `each` speaks the engine's error; search stops on any error and the first one is
        // handed back as it was.
        let mut stopped = None;
        let found = self.searcher().search_each(req, progress, &mut |h| {
            each(h).map_err(|e| {
                let line = e.to_string();
                stopped = Some(e);
                memdir_search::Error::Invalid(line)
            })
        });
        match stopped {
            Some(e) => Err(e),
            None => Ok(found?),
        }
    }

    /// A hybrid search with the given options (`search` with `Mode::Hybrid` uses
    /// [`HybridOptions::default`]); for benchmarks that compare fusions.
    pub fn search_hybrid(
        &self,
        req: &SearchRequest,
        options: &HybridOptions,
    ) -> Result<SearchOutcome, Error> {
        Ok(self.searcher().search_hybrid(req, options)?)
    }

    /// Rebuilds the keyword index of ranked mode from the files and returns how many files it
    /// holds. Never needed for correctness (every ranked search updates the index first); it
    /// is the cure for an index that was damaged in a way its checks cannot see.
    pub fn rebuild_search_index(&self) -> Result<usize, Error> {
        Ok(self.searcher().rebuild_keyword_index()?)
    }

    /// Brings the vector index up to date with the files, reporting progress; fails when the
    /// index was built with another model or chunking (see [`Memory::rebuild_vector_index`]).
    pub fn sync_vector_index(&self, progress: Progress<'_>) -> Result<VectorStats, Error> {
        Ok(self.searcher().sync_vector_index(progress)?)
    }

    /// Builds a new vector index with the configured embedder and swaps it in atomically.
    pub fn rebuild_vector_index(&self, progress: Progress<'_>) -> Result<VectorStats, Error> {
        Ok(self.searcher().rebuild_vector_index(progress)?)
    }

    /// True when semantic and hybrid search have an embedder configured.
    pub fn has_embedder(&self) -> bool {
        self.embedder.is_configured()
    }

    /// Uses the embedder this config describes for semantic and hybrid search (loaded lazily,
    /// on the first search that needs it).
    pub fn with_embed_config(mut self, config: EmbedConfig) -> Memory {
        self.embedder = Arc::new(EmbedderSlot::from_config(config));
        self
    }

    /// Uses an embedder that is already built (the bench shares one model across folders).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Memory {
        self.embedder = Arc::new(EmbedderSlot::preset(embedder));
        self
    }

    /// This memory, keeping its searchable files in memory between searches, for a process
    /// that searches many times (an MCP server, a service, a library user). The first search
    /// reads the files; later ones re-read only what the kernel reports changed (inotify), so
    /// a search still sees every write that finished before it began, from any process. Costs
    /// memory about twice the size of the folder (capped at 512 MiB); where inotify is unavailable
    /// searches read the disk as before. Clones made from the result share the copy.
    pub fn with_warm_search(&self) -> Memory {
        let mut mem = self.clone();
        if mem.warm.is_none() {
            mem.warm = Some(Arc::default());
        }
        mem
    }

    /// Bytes of files held in memory for this memory's searches: warm search's copy (as of its
    /// last search) and the store's own cache (a remote store's). What a service counts against
    /// its memory budget.
    pub fn warm_bytes(&self) -> usize {
        self.warm.as_ref().map_or(0, |w| w.held_bytes())
            + self.store.cached_bytes()
            + self.vectors.as_ref().map_or(0, |v| v.cached_bytes())
    }

    /// This memory, keeping the search indexes of a store without a local folder in `dir`
    /// (created when needed), so a ranked search re-indexes only the files that changed since
    /// the last one instead of the whole memory. One folder per memory: the front end names it
    /// (the CLI: under `$XDG_CACHE_HOME/memdir/`). Ignored for a folder store, whose indexes
    /// live in its own `.memdir/`. Like every index, the cache can be deleted at any time.
    pub fn with_search_cache(&self, dir: impl Into<std::path::PathBuf>) -> Memory {
        let mut mem = self.clone();
        mem.search_cache = Some(Arc::from(dir.into().as_path()));
        mem
    }
}

fn display(p: &MemPath) -> &str {
    if p.is_root() { "/" } else { p.as_str() }
}

/// The `n` most recent days up to `today` that have a log file (of any writer), oldest first.
fn recent_days(
    layout: &FolderLayout,
    logs: &[Entry],
    today: jiff::civil::Date,
    n: usize,
) -> Vec<jiff::civil::Date> {
    let mut days: Vec<jiff::civil::Date> = logs
        .iter()
        .filter(|e| e.kind == EntryKind::File)
        .filter_map(|e| e.path.file_name().and_then(|n| layout.log_name_date(n)))
        .filter(|d| *d <= today)
        .collect();
    days.sort_unstable();
    days.dedup();
    let skip = days.len().saturating_sub(n);
    days.split_off(skip)
}
