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
use std::sync::{Arc, Mutex};

fn git_warn(git: &Git, line: String) {
    git.push_warning(line);
}

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

    /// The paths among `paths` that history would stop recording if `rules` became the
    /// `.gitignore` they sit under (a folder's git; other backends ignore nothing).
    fn hidden_by_ignore(&self, rules: &str, paths: &[String]) -> Result<Vec<String>, StoreError> {
        let _ = (rules, paths);
        Ok(Vec::new())
    }

    /// Refuses a path history could never record (a file inside a nested repository), before
    /// anything is written.
    fn check_recordable(&self, path: &MemPath) -> Result<(), StoreError> {
        let _ = path;
        Ok(())
    }

    /// What went wrong since the last call without failing a change (a file left out of
    /// history, a stale git lock removed), one line each, for the front end to show.
    fn take_warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// History in a git repository at a folder's root.
#[derive(Debug, Clone)]
pub struct GitHistory {
    root: PathBuf,
    warnings: Arc<Mutex<Vec<String>>>,
}

impl GitHistory {
    /// The history of the folder at `root` (recording once `.git` exists there).
    pub fn new(root: &Path) -> GitHistory {
        GitHistory {
            root: root.to_path_buf(),
            warnings: Arc::default(),
        }
    }

    fn repo(&self) -> Result<Git, StoreError> {
        Git::open(&self.root)?.ok_or_else(|| {
            StoreError::NotFound(
                "this memory folder has no git history: run `memdir init` (without --no-git) to start one".into(),
            )
        })
    }

    /// Runs `f` on the repository and keeps what it warned about.
    fn with_repo<T>(&self, f: impl FnOnce(&Git) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let git = self.repo()?;
        let out = f(&git);
        let lines = git.take_warnings();
        if !lines.is_empty() {
            self.warnings
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(lines);
        }
        out
    }
}

impl History for GitHistory {
    fn enabled(&self) -> bool {
        // A `.git` that is there but broken counts: opening it then says how to repair it.
        std::fs::symlink_metadata(self.root.join(".git")).is_ok()
    }

    fn start(&self, at: Timestamp) -> Result<(), StoreError> {
        Git::init(&self.root, at).map(drop)
    }

    fn prepare(&self, at: Timestamp) -> Result<(), StoreError> {
        self.with_repo(|git| {
            for line in git.clear_stale_locks() {
                git_warn(git, line);
            }
            git.commit_hand_edits(at).map(drop)
        })
    }

    fn commit(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        let oid =
            self.with_repo(|git| git.commit_all(change.actor, &change.message(), change.at))?;
        Ok(oid.map(|o| o.to_string()))
    }

    fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn hidden_by_ignore(&self, rules: &str, paths: &[String]) -> Result<Vec<String>, StoreError> {
        self.repo()?.hidden_by(rules, paths)
    }

    fn check_recordable(&self, path: &MemPath) -> Result<(), StoreError> {
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| !d.is_root()) {
            if std::fs::symlink_metadata(self.root.join(d.as_str()).join(".git")).is_ok() {
                return Err(StoreError::InvalidPath(format!(
                    "{path} is inside {d}/, a separate git repository, which memdir's history cannot record: write it elsewhere, or remove {d}/.git"
                )));
            }
            dir = d.parent();
        }
        Ok(())
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
