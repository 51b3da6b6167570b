//! How a change is recorded: under the `git` lock, hand edits committed first, then the change
//! committed by its writer. Without a repository a change is just applied.

use crate::error::Error;
use crate::memory::Memory;
use crate::provenance::{BlameLine, Git, HAND_EDIT, HistoryEntry, apply, message};
use crate::store::{LockGuard, LockName};
use memdir_core::path::MemPath;

/// An open change; call [`Tx::commit`] once the files are written.
pub(crate) struct Tx<'a> {
    mem: &'a Memory,
    git: Option<Git>,
    op: String,
    path: String,
    _lock: Option<Box<dyn LockGuard>>,
}

impl Memory {
    /// Starts a change named `op` on `path`.
    pub(crate) fn begin(&self, op: &str, path: &str) -> Result<Tx<'_>, Error> {
        let git = self.git_root().and_then(Git::open);
        let lock = match &git {
            Some(g) => {
                let lock = self.store().lock(LockName::Git)?;
                g.commit_hand_edits(self.clock().now().timestamp())?;
                Some(lock)
            }
            None => None,
        };
        Ok(Tx {
            mem: self,
            git,
            op: op.to_string(),
            path: path.to_string(),
            _lock: lock,
        })
    }
}

impl Tx<'_> {
    /// Commits what the change wrote (nothing when there is no repository or no change).
    pub(crate) fn commit(self) -> Result<(), Error> {
        if let Some(git) = &self.git {
            let actor = self.mem.actor();
            let msg = message(&self.op, &self.path, self.mem.reason(), actor.source);
            git.commit_all(actor, &msg, self.mem.clock().now().timestamp())?;
        }
        Ok(())
    }
}

impl Memory {
    fn repo(&self) -> Result<Git, Error> {
        self.git_root().and_then(Git::open).ok_or_else(|| {
            Error::Invalid(
                "this memory folder has no git history: run `memdir init` (without --no-git) to start one".into(),
            )
        })
    }

    /// Commits that changed `path` (all when `None`), newest first.
    pub fn history(&self, path: Option<&str>, limit: usize) -> Result<Vec<HistoryEntry>, Error> {
        let p = path.map(MemPath::parse_file).transpose()?;
        Ok(self.repo()?.history(p.as_ref(), limit)?)
    }

    /// Who last changed each line of a file, and why.
    pub fn blame(&self, path: &str) -> Result<Vec<BlameLine>, Error> {
        let p = MemPath::parse_file(path)?;
        Ok(self.repo()?.blame(&p)?)
    }

    /// Reverts a commit (default: the newest one memdir made) with a new commit; returns the
    /// reverted commit's id. History is never rewritten.
    pub fn undo(&self, commit: Option<&str>) -> Result<String, Error> {
        let git = self.repo()?;
        let tx = self.begin("undo", commit.unwrap_or("last change"))?;
        let target = match commit {
            Some(c) => git.resolve(Some(c))?,
            None => {
                let newest = git
                    .history(None, 200)?
                    .into_iter()
                    .find(|h| h.writer != HAND_EDIT)
                    .ok_or_else(|| Error::NotFound("nothing to undo".into()))?;
                git.resolve(Some(&newest.commit))?
            }
        };
        let changes = git.revert_changes(target)?;
        apply(self.store().as_ref(), &changes)?;
        let id = target.to_string();
        let reason = format!("undo {}", &id[..10]);
        let mem = if self.reason().is_some() {
            self.clone()
        } else {
            self.with_reason(Some(&reason))
        };
        Tx { mem: &mem, ..tx }.commit()?;
        Ok(id)
    }
}
