//! `Ctx`: all a feature may read (the store, the history, the settings and layout, the clock,
//! who is writing and why, the search context) and the warnings it leaves for the front end.
//! Features are functions over a `Ctx`; the [`crate::Memory`] facade hands it to them.
//!
//! A `Ctx` reads: [`Ctx::store`] is the store's reading half. The one handle that writes is a
//! [`Change`](crate::change::Change): only `change.rs` can ask for the writing half
//! ([`Ctx::writer`] takes a proof only it can make), so every byte a feature stores goes through
//! a change's lock, journal, guard and commit.

use crate::clock::Clock;
use crate::error::Error;
use crate::history::History;
use crate::provenance::Actor;
use crate::store::{Entry, Precondition, Reader, Store, StoreError, Version};
use memdir_core::config::Config;
use memdir_core::host::FolderLayout;
use memdir_core::path::MemPath;
use memdir_search::{Corpus, EmbedderSlot, Searcher};
use std::sync::Arc;

/// The most warnings kept until a front end takes them.
const MAX_WARNINGS: usize = 64;

/// A memory folder, its settings, its clock, and who is writing: what every feature reads.
/// Cloning is cheap.
#[derive(Clone)]
pub(crate) struct Ctx {
    /// Private: features read through [`Ctx::store`] and write through a change.
    store: Arc<dyn Store>,
    pub(crate) history: Option<Arc<dyn History>>,
    pub(crate) config: Config,
    pub(crate) clock: Clock,
    /// The embedder of semantic and hybrid search, loaded on first use.
    pub(crate) embedder: Arc<EmbedderSlot>,
    /// The in-memory copy of the searchable files, when warm search is on.
    pub(crate) warm: Option<Arc<memdir_search::Warm>>,
    /// Every note parsed, kept between calls and re-read where a file changed (shared by
    /// every copy of this context).
    pub(crate) catalogue: Arc<crate::catalogue::Catalogue>,
    /// Where the search indexes of a store without a local folder live (see
    /// [`Memory::with_search_cache`]); a folder keeps them in its own `.memdir/`.
    pub(crate) search_cache: Option<Arc<std::path::Path>>,
    /// Where the gates' key and remembered head live, outside the memory folder (see
    /// [`Memory::with_gate_keys`]).
    pub(crate) gate_keys: Option<Arc<std::path::Path>>,
    /// The backend's own vector index, when it keeps one (else a SQLite file, see
    /// [`crate::vectors`]).
    pub(crate) vectors: Option<Arc<dyn crate::vectors::VectorStore>>,
    pub(crate) actor: Actor,
    pub(crate) reason: Option<String>,
    /// The channel changes come through, recorded as a trailer (`web` for memdir's page).
    pub(crate) via: Option<&'static str>,
    pub(crate) expect: Precondition,
    pub(crate) force: bool,
    /// Whether a person's powers (changing the gates' policy, forgetting) may be used through
    /// this memory at all; see [`Memory::without_person_powers`].
    pub(crate) person_powers: bool,
    /// What went wrong without failing the operation, for the front end to show.
    pub(crate) warnings: Arc<std::sync::Mutex<Vec<String>>>,
    /// Why `.memdir/config.toml` could not be read (then `config` is the defaults).
    pub(crate) config_error: Option<String>,
}

impl Ctx {
    /// This context, written by `actor`.
    pub(crate) fn with_actor(&self, actor: Actor) -> Ctx {
        Ctx {
            actor,
            ..self.clone()
        }
    }

    /// This context, refusing a whole-file write unless the file is still at `version`.
    pub(crate) fn with_base(&self, version: Option<&str>) -> Ctx {
        Ctx {
            expect: match version {
                Some(v) => Precondition::Matches(Version::from_string(v)),
                None => Precondition::Any,
            },
            ..self.clone()
        }
    }

    /// This context, recording `reason` with the next change.
    pub(crate) fn with_reason(&self, reason: Option<&str>) -> Ctx {
        Ctx {
            reason: reason.map(|r| crate::guard::reason(self, r)),
            ..self.clone()
        }
    }

    /// The channel changes are recorded as coming through.
    pub(crate) fn via(&self) -> Option<&'static str> {
        self.via
    }

    /// True when a person's powers may be used through this memory (they are withheld from an
    /// agent's tools, see [`Memory::without_person_powers`]); the source label must still say
    /// `user`.
    pub(crate) fn has_person_powers(&self) -> bool {
        self.person_powers
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
    pub(crate) fn take_warnings(&self) -> Vec<String> {
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
    pub(crate) fn actor(&self) -> &Actor {
        &self.actor
    }

    /// True when a large rewrite of core was explicitly allowed.
    pub(crate) fn forced(&self) -> bool {
        self.force
    }

    /// The reason recorded with the next change.
    pub(crate) fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The history changes are recorded in, when this memory keeps one.
    pub(crate) fn history_backend(&self) -> Option<&Arc<dyn History>> {
        self.history
            .as_ref()
            .filter(|h| self.config.git.enabled && h.enabled())
    }

    /// Refuses the change early (before a cap check or a proposal) when the expected version
    /// does not hold. The store checks it again, atomically with the write.
    pub(crate) fn check_base(&self, p: &MemPath, current: Option<&[u8]>) -> Result<(), Error> {
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

    /// A context over `store`, with the defaults of everything else.
    pub(crate) fn new(
        store: Arc<dyn Store>,
        history: Option<Arc<dyn History>>,
        vectors: Option<Arc<dyn crate::vectors::VectorStore>>,
        config: Config,
        config_error: Option<String>,
        clock: Clock,
        warnings: Arc<std::sync::Mutex<Vec<String>>>,
    ) -> Ctx {
        Ctx {
            store,
            history,
            config,
            clock,
            embedder: Arc::default(),
            warm: None,
            catalogue: Arc::default(),
            search_cache: None,
            gate_keys: None,
            vectors,
            actor: Actor::default(),
            reason: None,
            via: None,
            expect: Precondition::Any,
            force: false,
            person_powers: true,
            warnings,
            config_error,
        }
    }

    /// The store's reading half: a feature writes through its [`Change`](crate::change::Change).
    pub(crate) fn store(&self) -> Reader<'_> {
        Reader::of(self.store.as_ref())
    }

    /// The store's writing half, for `change.rs` alone: [`crate::change::Writes`] cannot be
    /// made anywhere else.
    pub(crate) fn writer(&self, _proof: &crate::change::Writes) -> &dyn Store {
        self.store.as_ref()
    }

    /// The whole store, for the facade to hand front ends (their own files under `.memdir/`,
    /// copies between stores): [`crate::memory::Facade`] cannot be made outside `memory.rs`.
    pub(crate) fn backend_store(&self, _proof: &crate::memory::Facade) -> &Arc<dyn Store> {
        &self.store
    }

    /// The settings in force.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// Where each layer lives in this folder (`[layout]` in the config, or
    /// [`Memory::with_layout`]).
    pub(crate) fn layout(&self) -> FolderLayout {
        FolderLayout::of(self.config.layout.name)
    }

    /// The always-loaded file of this folder's layout (`core.md`, or OpenClaw's `MEMORY.md`).
    pub(crate) fn core_file(&self) -> &'static str {
        self.layout().core
    }

    /// The clock in use.
    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Reads a text file; `None` when it does not exist.
    pub(crate) fn read_opt(&self, path: &MemPath) -> Result<Option<String>, Error> {
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
    pub(crate) fn list_opt(&self, dir: &MemPath) -> Result<Vec<Entry>, Error> {
        match self.store.list(dir) {
            Ok(v) => Ok(v),
            Err(StoreError::NotFound(_)) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }

    /// What a search of this memory is handed: where its files are, today, the warm copy, the
    /// embedder and the backend's own vector index.
    pub(crate) fn searcher(&self) -> Searcher<'_> {
        Searcher {
            corpus: match self.store.local_root() {
                Some(root) => Corpus::Folder(root),
                None => Corpus::Store {
                    store: self.store(),
                    cache: self.search_cache.as_deref(),
                },
            },
            today: self.clock.now().date(),
            warm: self.warm.as_deref(),
            embedder: &self.embedder,
            vectors: self.vectors.as_ref(),
        }
    }
}
