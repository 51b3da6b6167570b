//! The history seam: every change made through memdir is recorded with its writer, reason and
//! source, and can be listed, blamed and reverted.
//!
//! [`History`] is the trait; [`GitHistory`] records into a git repository at a folder's root
//! (hand edits, made outside memdir, are a folder-only concern it handles in
//! [`History::prepare`]); a database backend keeps tables. The engine calls `prepare` and
//! `commit` under the `git` change lock, so records never interleave.

use crate::provenance::{Actor, Git, message};
use crate::store::StoreError;
use jiff::Timestamp;
use memdir_core::path::MemPath;
use std::path::{Path, PathBuf};

pub use crate::provenance::{BlameLine, Changes, HistoryEntry};

/// One change about to be recorded.
#[derive(Debug, Clone)]
pub struct Change<'a> {
    /// The operation (`write`, `edit`, `note new`, `undo`, ...).
    pub op: &'a str,
    /// The path (or `from -> to`) it was made on.
    pub path: &'a str,
    /// Why, when the writer said.
    pub reason: Option<&'a str>,
    /// Who made it.
    pub actor: &'a Actor,
    /// When.
    pub at: Timestamp,
}

impl Change<'_> {
    /// The commit message git records: `op path`, the reason, then the trailers.
    pub fn message(&self) -> String {
        message(self.op, self.path, self.reason, self.actor.source)
    }
}

/// A memory's change history.
///
/// Ids are opaque text (a folder's are git commit ids); a prefix of an id that names one
/// change is accepted by [`History::revert`]. Entries come newest first.
pub trait History: Send + Sync {
    /// True when this memory records history (a folder without a repository does not).
    fn enabled(&self) -> bool;

    /// Starts recording (idempotent): a folder becomes a git repository and what is there is
    /// the first commit.
    fn start(&self, at: Timestamp) -> Result<(), StoreError>;

    /// Called under the change lock before a change is applied: records whatever changed
    /// outside memdir since the last change (a folder's hand edits, authored
    /// [`HAND_EDIT`](crate::provenance::HAND_EDIT)), so it is never mixed into memdir's own record.
    fn prepare(&self, at: Timestamp) -> Result<(), StoreError>;

    /// Records what changed since `prepare` as one change; `None` when nothing changed.
    fn commit(&self, change: &Change<'_>) -> Result<Option<String>, StoreError>;

    /// Changes that touched `path` (all when `None`), newest first, at most `limit`.
    fn history(
        &self,
        path: Option<&MemPath>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError>;

    /// Who last changed each line of a file, and why.
    fn blame(&self, path: &MemPath) -> Result<Vec<BlameLine>, StoreError>;

    /// The file contents that undo change `id` (a prefix naming one change) on top of the
    /// current state, with the change's full id. Later changes to the same lines are a
    /// conflict. Nothing is written: the engine writes the contents back through the store and
    /// records that as a new change.
    fn revert(&self, id: &str) -> Result<(String, Changes), StoreError>;
}

/// History in a git repository at a folder's root.
#[derive(Debug, Clone)]
pub struct GitHistory {
    root: PathBuf,
}

impl GitHistory {
    /// The history of the folder at `root` (recording once `.git` exists there).
    pub fn new(root: &Path) -> GitHistory {
        GitHistory {
            root: root.to_path_buf(),
        }
    }

    fn repo(&self) -> Result<Git, StoreError> {
        Git::open(&self.root).ok_or_else(|| {
            StoreError::NotFound(
                "this memory folder has no git history: run `memdir init` (without --no-git) to start one".into(),
            )
        })
    }
}

impl History for GitHistory {
    fn enabled(&self) -> bool {
        self.root.join(".git").exists()
    }

    fn start(&self, at: Timestamp) -> Result<(), StoreError> {
        Git::init(&self.root, at).map(drop)
    }

    fn prepare(&self, at: Timestamp) -> Result<(), StoreError> {
        self.repo()?.commit_hand_edits(at).map(drop)
    }

    fn commit(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        let oid = self
            .repo()?
            .commit_all(change.actor, &change.message(), change.at)?;
        Ok(oid.map(|o| o.to_string()))
    }

    fn history(
        &self,
        path: Option<&MemPath>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        self.repo()?.history(path, limit)
    }

    fn blame(&self, path: &MemPath) -> Result<Vec<BlameLine>, StoreError> {
        self.repo()?.blame(path)
    }

    fn revert(&self, id: &str) -> Result<(String, Changes), StoreError> {
        let git = self.repo()?;
        let target = git.resolve(Some(id))?;
        let changes = git.revert_changes(target)?;
        Ok((target.to_string(), changes))
    }
}
