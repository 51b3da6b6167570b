//! The memory folder's layers: core, daily logs, scratch, and everything else.

use crate::backend::Backend;
use crate::clock::Clock;
use crate::consolidate::{Options as ConsolidateOptions, Report as ConsolidateReport};
use crate::ctx::Ctx;
use crate::error::Error;
use crate::folder::FolderStore;
use crate::gates::{Answer, Presence, Verdict, VerifyReport};
use crate::host::ExportReport;
use crate::import::{ImportReport, ImportSource};
use crate::layers::{Context, LogReceipt, SweepReport};
use crate::lint::LintReport;
use crate::notes::{LinkGraph, LinksReport, NoteRequest, Superseded};
use crate::outcome::Outcome;
use crate::proposals::Proposal;
use crate::provenance::Actor;
use crate::provenance::{BlameLine, HistoryEntry};
use crate::recent::{Recent, RecentQuery};
use crate::state::StateReceipt;
use crate::store::{Entry, LockName, Precondition, Store, Version};
use memdir_core::config::{Config, with_git_disabled};
use memdir_core::context::Section;
use memdir_core::edit::EditOp;
use memdir_core::gates::{Request, RequestState};
use memdir_core::host::{FolderLayout, LayoutName};
use memdir_core::log::LOG_DIR;
use memdir_core::path::MemPath;
use memdir_core::scratch::SCRATCH_DIR;
use memdir_embed::{EmbedConfig, Embedder};
use memdir_search::{
    EmbedderSlot, HitRef, HybridOptions, Progress, SearchOutcome, SearchRequest, VectorStats,
};
use std::path::Path;
use std::sync::Arc;

pub use memdir_core::host::CORE_FILE;

/// A memory folder, its settings, its clock, and who is writing: the engine's facade. Each
/// method hands the memory's [`Ctx`] to one feature.
///
/// Cloning is cheap; `with_*` methods give a copy that carries one change's identity, reason or
/// expected version, so signatures stay small.
#[derive(Clone)]
pub struct Memory {
    cx: Ctx,
}

/// The facade's proof for [`Ctx::backend_store`]: only this file can make one, so nothing
/// inside the engine writes except through a change.
pub(crate) struct Facade(());

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
                store.create_dir(&MemPath::known(dir))?;
            }
            if store.stat(&MemPath::known(CORE_FILE))?.is_none() {
                store.write(&MemPath::known(CORE_FILE), b"")?;
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
            && mem.cx.config.git.enabled
            && let Some(h) = &mem.cx.history
        {
            let _lock = mem.cx.backend_store(&Facade(())).lock(LockName::Git)?;
            h.start(mem.cx.clock.now().timestamp())?;
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
            cx: Ctx::new(
                store,
                history,
                vectors,
                config,
                config_error,
                clock,
                warnings,
            ),
        })
    }

    /// This memory, written by `actor`.
    pub fn with_actor(&self, actor: Actor) -> Memory {
        Memory {
            cx: self.cx.with_actor(actor),
        }
    }

    /// This memory, recording that its changes came through `via` (`web` for memdir's page) in
    /// each change's trailers.
    pub fn with_via(&self, via: Option<&'static str>) -> Memory {
        Memory {
            cx: {
                let mut cx = self.cx.clone();
                cx.via = via;
                cx
            },
        }
    }

    /// This memory, recording `reason` with the next change.
    pub fn with_reason(&self, reason: Option<&str>) -> Memory {
        Memory {
            cx: self.cx.with_reason(reason),
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
            cx: {
                let mut cx = self.cx.clone();
                cx.expect = pre;
                cx
            },
        }
    }

    /// This memory, allowing a rewrite of core that drops many lines.
    pub fn with_force(&self, force: bool) -> Memory {
        Memory {
            cx: {
                let mut cx = self.cx.clone();
                cx.force = force;
                cx
            },
        }
    }

    /// This memory in a long-lived process (an MCP server, a service): its history follows
    /// the backend's change feed from the next change on, so finding what changed outside
    /// memdir (a folder's hand edits) costs what changed instead of a walk of the whole
    /// memory. The history is shared with every copy of this memory, which all follow too.
    /// Where the feed is unavailable (no inotify, out of watches) changes compare the whole
    /// folder, as before.
    pub fn with_history_feed(&self) -> Memory {
        if let Some(h) = &self.cx.history {
            h.follow_changes();
        }
        self.clone()
    }

    /// This memory without the powers only a person holds, whatever the source label says:
    /// the gates' policy cannot be changed through it and nothing can be forgotten through
    /// history. It is what an agent's tools are handed (a label is what a caller claims; this
    /// is what the front end grants).
    pub fn without_person_powers(&self) -> Memory {
        Memory {
            cx: {
                let mut cx = self.cx.clone();
                cx.person_powers = false;
                cx
            },
        }
    }

    /// This memory, writing under the stricter of its own `[secrets] policy` and `floor`: a
    /// service's operator sets `floor` for every tenant, and a tenant may be stricter, never
    /// looser.
    pub fn with_secrets_at_least(&self, floor: memdir_core::config::SecretPolicy) -> Memory {
        let mut mem = self.clone();
        mem.cx.config.secrets.policy = mem.cx.config.secrets.policy.stricter(floor);
        mem
    }

    /// This memory read and written in the layout `name` (the `--layout` option), whatever
    /// the config says.
    pub fn with_layout(&self, name: LayoutName) -> Memory {
        let mut config = self.cx.config.clone();
        config.layout.name = name;
        Memory {
            cx: {
                let mut cx = self.cx.clone();
                cx.config = config;
                cx
            },
        }
    }
}

/// One short method per operation: each hands the context to its feature.
impl Memory {
    /// The store underneath.
    pub fn store(&self) -> &Arc<dyn Store> {
        self.cx.backend_store(&Facade(()))
    }

    /// The settings in force.
    pub fn config(&self) -> &Config {
        self.cx.config()
    }

    /// Where each layer lives in this folder (`[layout]` in the config, or
    /// [`Memory::with_layout`]).
    pub fn layout(&self) -> FolderLayout {
        self.cx.layout()
    }

    /// The clock in use.
    pub fn clock(&self) -> &Clock {
        self.cx.clock()
    }

    /// Who is writing.
    pub fn actor(&self) -> &Actor {
        self.cx.actor()
    }

    /// The reason recorded with the next change.
    pub fn reason(&self) -> Option<&str> {
        self.cx.reason()
    }

    /// The channel changes are recorded as coming through.
    pub fn via(&self) -> Option<&'static str> {
        self.cx.via()
    }

    /// The warnings since the last call (a file git cannot record, a stale git lock removed,
    /// an interrupted change finished, a change saved whose history lags), one line each.
    /// Every copy made with a `with_*` method shares them.
    pub fn take_warnings(&self) -> Vec<String> {
        self.cx.take_warnings()
    }

    /// This memory, with the gates' key and remembered head kept in `dir`, outside the memory
    /// folder (the CLI uses the user's state folder): the ledger's head is then sealed with the
    /// key, and `gate verify` finds a ledger rewritten whole, or deleted with its head, by a
    /// writer of the folder alone. The key is made on the next append.
    pub fn with_gate_keys(&self, dir: impl Into<std::path::PathBuf>) -> Memory {
        let mut mem = self.clone();
        mem.cx.gate_keys = Some(Arc::from(dir.into().as_path()));
        mem
    }

    /// The secrets already stored in the memory's files (`memdir lint --secrets`), by file then
    /// line: what was written before the guard, by hand, or under `policy = "off"`. Binary files
    /// are skipped.
    pub fn secrets_on_disk(&self) -> Result<Vec<crate::guard::StoredSecret>, Error> {
        crate::guard::secrets_on_disk(&self.cx)
    }

    /// Builds the context within the configured budget (`[context] max_tokens`).
    pub fn context(&self) -> Result<Context, Error> {
        crate::layers::context(&self.cx)
    }

    /// Builds the context within `max_tokens` (estimated as bytes / 4): see [`fit`].
    pub fn context_within(&self, max_tokens: usize) -> Result<Context, Error> {
        crate::layers::context_within(&self.cx, max_tokens)
    }

    /// Every section of the context, before any budget: core, the index, state and the guard
    /// and proposals lines, the most recent `[context] log_days` days that have a log, live
    /// scratch notes, then a pointer to the rest. Missing layers are simply empty.
    pub fn context_sections(&self) -> Result<Vec<Section>, Error> {
        crate::layers::context_sections(&self.cx)
    }

    /// One day's log as the context shows it (every writer's file merged, external entries
    /// fenced), or `None` when the day has no log. For readers that show a log to an agent.
    pub fn day_log_shown(&self, date: jiff::civil::Date) -> Result<Option<String>, Error> {
        crate::layers::day_log_shown(&self.cx, date)
    }

    /// Appends one entry to today's log. Writers other than the main one append to their own
    /// file, `log/YYYY-MM-DD.<writer>.md`, so they never contend on one file.
    pub fn log(&self, text: &str) -> Result<LogReceipt, Error> {
        crate::layers::log(&self.cx, text)
    }

    /// Writes a scratch note that expires after `ttl_ms` (the configured default when `None`).
    /// A note with the same name is replaced.
    pub fn scratch(&self, name: &str, ttl_ms: Option<i64>, body: &str) -> Result<String, Error> {
        crate::layers::scratch(&self.cx, name, ttl_ms, body)
    }

    /// Deletes expired scratch notes. Idempotent; odd names and folders are skipped.
    pub fn sweep(&self, dry_run: bool) -> Result<SweepReport, Error> {
        crate::layers::sweep(&self.cx, dry_run)
    }

    /// A file's version: its git blob id (as `git hash-object` prints), or `None` if absent.
    pub fn version(&self, path: &str) -> Result<Option<String>, Error> {
        crate::files::version(&self.cx, path)
    }

    /// Reads a file's bytes.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, Error> {
        crate::files::read(&self.cx, path)
    }

    /// Creates or replaces a file. `core.md` is checked against its cap and the core policy
    /// first; a change to core the policy gates becomes [`Outcome::Proposed`] (not made).
    pub fn write(&self, path: &str, content: &str) -> Result<Outcome, Error> {
        crate::files::write(&self.cx, path, content)
    }

    /// Appends `text` to the end of a file that is never loaded into the context (a session
    /// transcript under `sessions/`, an offload, the archive), creating it when absent: only the
    /// new bytes are written, and an append cut short is cut back by the next change, as a log
    /// entry's is. A precondition ([`Memory::with_precondition`]) is checked against the file as
    /// it was before the append. Notes, scratch notes, logs and the files loaded on every turn
    /// are refused: they are written whole, or with [`Memory::log`].
    pub fn append(&self, path: &str, text: &str) -> Result<(), Error> {
        crate::files::append(&self.cx, path, text)
    }

    /// Replaces exactly one occurrence of `old` with `new` in a file.
    pub fn edit(&self, path: &str, old: &str, new: &str) -> Result<Outcome, Error> {
        crate::files::edit(&self.cx, path, old, new)
    }

    /// Applies one partial edit (append, prepend, a section, or a replacement with an expected
    /// count) as one change: the same version check (`with_base`), caps, core gate, trust label,
    /// index update and history record as [`Memory::edit`]. Returns what was done, in one line, or
    /// [`Outcome::Proposed`] for a gated change to core.
    pub fn edit_with(&self, path: &str, op: &EditOp<'_>) -> Result<Outcome<String>, Error> {
        crate::files::edit_with(&self.cx, path, op)
    }

    /// Lists a folder (or describes one file).
    pub fn ls(&self, path: &str) -> Result<Vec<Entry>, Error> {
        crate::files::ls(&self.cx, path)
    }

    /// Deletes a file or a folder.
    pub fn rm(&self, path: &str) -> Result<(), Error> {
        crate::files::rm(&self.cx, path)
    }

    /// Moves a file or folder; never overwrites.
    pub fn mv(&self, from: &str, to: &str) -> Result<(), Error> {
        crate::files::mv(&self.cx, from, to)
    }

    /// Commits that changed `path` (all when `None`), newest first.
    pub fn history(&self, path: Option<&str>, limit: usize) -> Result<Vec<HistoryEntry>, Error> {
        crate::change::history(&self.cx, path, limit)
    }

    /// Who last changed each line of a file, and why.
    pub fn blame(&self, path: &str) -> Result<Vec<BlameLine>, Error> {
        crate::change::blame(&self.cx, path)
    }

    /// Reverts a commit with a new commit (recorded as `undo <commit id>`); returns the reverted
    /// commit's id. History is never rewritten.
    ///
    /// Without a commit it steps back: the newest change memdir made that is neither an undo
    /// nor undone already, so undoing twice undoes the last two changes. Naming an undo's commit
    /// reverts that undo (a redo).
    pub fn undo(&self, commit: Option<&str>) -> Result<String, Error> {
        crate::change::undo(&self.cx, commit)
    }

    /// The files change `commit` (a prefix naming one) touched, each before and after it, with
    /// the change's full id: its diff, and any file as of any change.
    pub fn change_files(
        &self,
        commit: &str,
    ) -> Result<(String, Vec<crate::history::FileChange>), Error> {
        crate::change::change_files(&self.cx, commit)
    }

    /// Runs consolidation: see the module documentation.
    pub fn consolidate(&self, opts: &ConsolidateOptions) -> Result<ConsolidateReport, Error> {
        crate::consolidate::consolidate(&self.cx, opts)
    }

    /// Asks the gate for `req` (the reason is this memory's reason, required). Records the
    /// request and its decision in the ledger; never performs the action.
    pub fn gate_request(&self, req: &Request) -> Result<Answer, Error> {
        crate::gates::gate_request(&self.cx, req)
    }

    /// Where a request stands, in the shape of its first answer: pending while it waits,
    /// allowed with its token once a person approved it, denied once denied, used or expired.
    pub fn gate_status(&self, id: &str) -> Result<Answer, Error> {
        crate::gates::gate_status(&self.cx, id)
    }

    /// The executor's check: `Ok` exactly once for a token issued for this kind, target and
    /// amount, while it is valid; the use is recorded. Every refusal is recorded too.
    pub fn gate_check(&self, presented: &str, req: &Request) -> Result<RequestState, Error> {
        crate::gates::gate_check(&self.cx, presented, req)
    }

    /// How long the token an approval of a `kind` request hands out stays valid, in
    /// milliseconds (the policy's `approval_ttl` for the kind); `None` when `gates.toml` is
    /// missing, does not parse or has no table for the kind, so an approval would be refused.
    pub fn gate_approval_ttl(&self, kind: &str) -> Result<Option<i64>, Error> {
        crate::gates::gate_approval_ttl(&self.cx, kind)
    }

    /// Requests that wait for a person, oldest first.
    pub fn gate_pending(&self) -> Result<Vec<RequestState>, Error> {
        crate::gates::gate_pending(&self.cx)
    }

    /// A person approves or denies a pending request. Only the user, at a terminal or signed in
    /// to the page, may: any other attempt is refused and recorded in the ledger.
    pub fn gate_decide(
        &self,
        id: &str,
        verdict: Verdict,
        presence: Presence,
    ) -> Result<RequestState, Error> {
        crate::gates::gate_decide(&self.cx, id, verdict, presence)
    }

    /// Checks the whole ledger: every line's hash, the chain of `prev` hashes, consecutive
    /// numbers, and the end against the head memdir recorded. The error says where it breaks.
    pub fn gate_verify(&self) -> Result<VerifyReport, Error> {
        crate::gates::gate_verify(&self.cx)
    }

    /// Imports `source` into this memory as one change (`label` names the source in its
    /// commit). With `dry_run`, nothing is written and the report says what would be.
    pub fn import(
        &self,
        source: ImportSource<'_>,
        label: &str,
        dry_run: bool,
    ) -> Result<ImportReport, Error> {
        crate::import::import(&self.cx, source, label, dry_run)
    }

    /// Checks the folder; never changes it.
    pub fn lint(&self) -> Result<LintReport, Error> {
        crate::lint::lint(&self.cx)
    }

    /// Writes `notes/<name>.md` with frontmatter (name, description, type, created) and the body,
    /// then refreshes the index. Refuses to replace an existing note unless `force` is set, and
    /// refuses a note that would take the index over its cap. Returns the path written.
    pub fn note_new(&self, req: &NoteRequest<'_>) -> Result<String, Error> {
        crate::notes::note_new(&self.cx, req)
    }

    /// Marks the note `old` as superseded by the note `new` (paths or names): `old` leaves the
    /// index and ranks below `new` in search. Refuses a missing note, `old` == `new` and a cycle.
    pub fn note_supersede(&self, old: &str, new: &str) -> Result<Superseded, Error> {
        crate::notes::note_supersede(&self.cx, old, new)
    }

    /// Regenerates the index, `MEMORY.md`, from every note's frontmatter (recorded as one change).
    pub fn regenerate_index(&self) -> Result<crate::note_index::IndexReport, Error> {
        crate::notes::regenerate_index(&self.cx)
    }

    /// The path a reader asked for: a path that exists is taken as it is; otherwise a note's
    /// name (`payment-retry-policy` or `[[payment-retry-policy]]`) resolved like a link (name,
    /// then file name, then path). Errors when neither finds anything.
    pub fn resolve_note(&self, input: &str) -> Result<String, Error> {
        crate::notes::resolve_note(&self.cx, input)
    }

    /// A note and the notes around it, for context in one call: its outgoing links and its
    /// backlinks, then theirs, up to `depth` steps (at most [`GRAPH_MAX_DEPTH`], and at most
    /// [`GRAPH_MAX_NODES`] notes), each with its name and description.
    pub fn link_graph(&self, target: &str, depth: usize) -> Result<LinkGraph, Error> {
        crate::notes::link_graph(&self.cx, target, depth)
    }

    /// Finds a note by link target (name, then stem, then path) and lists its outgoing links and
    /// the links that point to it.
    pub fn links(&self, target: &str) -> Result<LinksReport, Error> {
        crate::notes::links(&self.cx, target)
    }

    /// Every note read and parsed, with its links resolved: kept between calls and re-read
    /// only where a file changed (see [`crate::catalogue`]).
    pub fn notes(&self) -> Result<Arc<crate::catalogue::Notes>, Error> {
        crate::catalogue::notes(&self.cx)
    }

    /// Pending proposals, oldest first.
    pub fn proposals(&self) -> Result<Vec<Proposal>, Error> {
        crate::proposals::proposals(&self.cx)
    }

    /// Applies a proposal as the user would, then deletes it. Refused if core changed since.
    pub fn accept_proposal(&self, id: &str) -> Result<Proposal, Error> {
        crate::proposals::accept_proposal(&self.cx, id)
    }

    /// Rejects a proposal: it moves to `archive/proposals/`, like an accepted one.
    pub fn reject_proposal(&self, id: &str) -> Result<Proposal, Error> {
        crate::proposals::reject_proposal(&self.cx, id)
    }

    /// Recent changes, newest first: from history when this memory keeps one, else from the
    /// files' modification times (no writer or reason then).
    pub fn recent(&self, q: &RecentQuery) -> Result<Recent, Error> {
        crate::recent::recent(&self.cx, q)
    }

    /// Adds `- <today> text` at the end of the layout's running-state file (`state.md`;
    /// created when absent) as one change, under its cap. External content is refused: the file
    /// loads on every turn.
    pub fn state_add(&self, text: &str) -> Result<StateReceipt, Error> {
        crate::state::state_add(&self.cx, text)
    }

    /// The dated entries of the running-state file (`state.md`), in file order (none when the
    /// file is absent).
    pub fn state_entries(&self) -> Result<Vec<crate::state::Entry>, Error> {
        crate::state::state_entries(&self.cx)
    }

    /// Writes this memory into `target` (a folder) in a host's layout: Claude Code's (topic
    /// files, and a `MEMORY.md` that starts with core and links every note) or OpenClaw's
    /// (core as `MEMORY.md`, logs in `memory/`, notes in `memory/notes/`). Nothing is written
    /// over: a file already there with other bytes refuses the whole export before any write.
    pub fn export_layout(&self, to: LayoutName, target: &dyn Store) -> Result<ExportReport, Error> {
        crate::host::export_layout(&self.cx, to, target)
    }
}

/// Search: the engine hands [`memdir_search`] what it needs once (a [`Searcher`]) and maps its
/// error; nothing in search calls back into the engine.
impl Memory {
    /// Forgets a file or every line holding a text, in the files and in every version history
    /// keeps (see [`crate::forget`]); `glob` is the `--path` `what` was built with, recorded
    /// instead of the text. Only source `user` may; any other is refused and recorded.
    pub fn forget(
        &self,
        what: &memdir_core::forget::Forget,
        glob: Option<&str>,
        dry_run: bool,
    ) -> Result<crate::forget::ForgetOutcome, Error> {
        crate::forget::forget(&self.cx, what, glob, dry_run)
    }

    /// Searches the memory folder.
    ///
    /// Fails with [`Error::Invalid`] on a bad regular expression, glob or empty pattern.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchOutcome, Error> {
        Ok(self.cx.searcher().search(req)?)
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
        let found = self.cx.searcher().search_each(req, progress, &mut |h| {
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
        Ok(self.cx.searcher().search_hybrid(req, options)?)
    }

    /// Rebuilds the keyword index of ranked mode from the files and returns how many files it
    /// holds. Never needed for correctness (every ranked search updates the index first); it
    /// is the cure for an index that was damaged in a way its checks cannot see.
    pub fn rebuild_search_index(&self) -> Result<usize, Error> {
        Ok(self.cx.searcher().rebuild_keyword_index()?)
    }

    /// Brings the vector index up to date with the files, reporting progress; fails when the
    /// index was built with another model or chunking (see [`Memory::rebuild_vector_index`]).
    pub fn sync_vector_index(&self, progress: Progress<'_>) -> Result<VectorStats, Error> {
        Ok(self.cx.searcher().sync_vector_index(progress)?)
    }

    /// Builds a new vector index with the configured embedder and swaps it in atomically.
    pub fn rebuild_vector_index(&self, progress: Progress<'_>) -> Result<VectorStats, Error> {
        Ok(self.cx.searcher().rebuild_vector_index(progress)?)
    }

    /// True when semantic and hybrid search have an embedder configured.
    pub fn has_embedder(&self) -> bool {
        self.cx.embedder.is_configured()
    }

    /// Uses the embedder this config describes for semantic and hybrid search (loaded lazily,
    /// on the first search that needs it).
    pub fn with_embed_config(mut self, config: EmbedConfig) -> Memory {
        self.cx.embedder = Arc::new(EmbedderSlot::from_config(config));
        self
    }

    /// Uses an embedder that is already built (the bench shares one model across folders).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Memory {
        self.cx.embedder = Arc::new(EmbedderSlot::preset(embedder));
        self
    }

    /// This memory, keeping its searchable files in memory between searches, for a process
    /// that searches many times (an MCP server, a service, a library user). The first search
    /// reads the files; later ones re-read only what the kernel reports changed (inotify), so
    /// a search still sees every write that finished before it began, from any process. Costs
    /// memory about twice the size of the folder (capped at 512 MiB); where inotify is unavailable
    /// searches read the disk as before. Clones made from the result share the copy.
    ///
    /// Either way the keyword index stays open between ranked searches (SQLite's set-up,
    /// schema and statements are not paid again): the folder's own, or a store's in its
    /// [`Memory::with_search_cache`] folder (a store has no copy: its own cache serves reads).
    pub fn with_warm_search(&self) -> Memory {
        let mut mem = self.clone();
        if mem.cx.warm.is_none() {
            mem.cx.warm = Some(Arc::default());
        }
        mem
    }

    /// This memory's warm search state, held weakly (`None` without
    /// [`Memory::with_warm_search`]): a front end that deletes a store's search cache folder,
    /// or bounds how many indexes stay open, closes this memory's kept index through it
    /// ([`memdir_search::Warm::close_index`]) without keeping a closed memory alive.
    pub fn warm_handle(&self) -> Option<std::sync::Weak<memdir_search::Warm>> {
        self.cx.warm.as_ref().map(Arc::downgrade)
    }

    /// Bytes of files held in memory for this memory's searches: warm search's copy (as of its
    /// last search) and the store's own cache (a remote store's). What a service counts against
    /// its memory budget.
    pub fn warm_bytes(&self) -> usize {
        self.cx.warm.as_ref().map_or(0, |w| w.held_bytes())
            + self.cx.backend_store(&Facade(())).cached_bytes()
            + self.cx.vectors.as_ref().map_or(0, |v| v.cached_bytes())
    }

    /// This memory, keeping the search indexes of a store without a local folder in `dir`
    /// (created when needed), so a ranked search re-indexes only the files that changed since
    /// the last one instead of the whole memory. One folder per memory: the front end names it
    /// (the CLI: under `$XDG_CACHE_HOME/memdir/`). Ignored for a folder store, whose indexes
    /// live in its own `.memdir/`. Like every index, the cache can be deleted at any time.
    pub fn with_search_cache(&self, dir: impl Into<std::path::PathBuf>) -> Memory {
        let mut mem = self.clone();
        mem.cx.search_cache = Some(Arc::from(dir.into().as_path()));
        mem
    }
}
