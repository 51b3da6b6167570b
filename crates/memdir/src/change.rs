//! How a change is recorded: under the `git` change lock (taken whether or not history is
//! kept, so two changes never interleave), whatever changed outside memdir is recorded first,
//! then the change is recorded by its writer through the [`History`] seam.

use crate::error::Error;
use crate::history::{Change, History};
use crate::memory::Memory;
use crate::provenance::{BlameLine, HAND_EDIT, HistoryEntry, apply};
use crate::store::{LockGuard, LockName};
use memdir_core::path::MemPath;
use std::sync::Arc;

/// An open change; call [`Tx::commit`] once the files are written.
pub(crate) struct Tx<'a> {
    mem: &'a Memory,
    history: Option<Arc<dyn History>>,
    op: String,
    path: String,
    _lock: Box<dyn LockGuard>,
}

impl Memory {
    /// Starts a change named `op` on `path`. Every change holds the change lock until it is
    /// committed, with or without history: it serialises writers, so what a change read is
    /// still current when it writes.
    pub(crate) fn begin(&self, op: &str, path: &str) -> Result<Tx<'_>, Error> {
        let lock = self.store().lock(LockName::Git)?;
        let history = self.history_backend().cloned();
        if let Some(h) = &history {
            h.prepare(self.clock().now().timestamp())?;
        }
        Ok(Tx {
            mem: self,
            history,
            op: op.to_string(),
            path: path.to_string(),
            _lock: lock,
        })
    }
}

impl Tx<'_> {
    /// This change, recorded as `op` on `path` instead of what it began as (a write to core
    /// that became a proposal is recorded as `propose core.md`).
    pub(crate) fn recorded_as(self, op: &str, path: &str) -> Self {
        Tx {
            op: op.to_string(),
            path: path.to_string(),
            ..self
        }
    }

    /// Records what the change wrote (nothing when there is no history or no change).
    pub(crate) fn commit(self) -> Result<(), Error> {
        if let Some(h) = &self.history {
            h.commit(&Change {
                op: &self.op,
                path: &self.path,
                reason: self.mem.reason(),
                actor: self.mem.actor(),
                at: self.mem.clock().now().timestamp(),
            })?;
        }
        Ok(())
    }
}

impl Memory {
    fn repo(&self) -> Result<&Arc<dyn History>, Error> {
        if !self.config().git.enabled {
            return Err(Error::Invalid(
                "git history is off for this memory folder ([git] enabled = false in .memdir/config.toml): set it to true, then run `memdir init` to start recording".into(),
            ));
        }
        self.history_backend().ok_or_else(|| {
            Error::Invalid(
                "this memory folder has no git history: run `memdir init` to start one".into(),
            )
        })
    }

    /// Commits that changed `path` (all when `None`), newest first.
    pub fn history(&self, path: Option<&str>, limit: usize) -> Result<Vec<HistoryEntry>, Error> {
        let p = path.map(MemPath::parse_file).transpose()?;
        let mut entries = self.repo()?.history(p.as_ref(), limit)?;
        for e in &mut entries {
            e.date = self.clock().local_text(&e.date);
        }
        Ok(entries)
    }

    /// Who last changed each line of a file, and why.
    pub fn blame(&self, path: &str) -> Result<Vec<BlameLine>, Error> {
        let p = MemPath::parse_file(path)?;
        let mut lines = self.repo()?.blame(&p)?;
        for l in &mut lines {
            l.date = self.clock().local_text(&l.date);
        }
        Ok(lines)
    }

    /// Reverts a commit with a new commit (recorded as `undo <commit id>`); returns the reverted
    /// commit's id. History is never rewritten.
    ///
    /// Without a commit it steps back: the newest change memdir made that is neither an undo
    /// nor undone already, so undoing twice undoes the last two changes. Naming an undo's commit
    /// reverts that undo (a redo).
    pub fn undo(&self, commit: Option<&str>) -> Result<String, Error> {
        let history = self.repo()?.clone();
        let tx = self.begin("undo", commit.unwrap_or("last change"))?;
        let target = match commit {
            Some(c) => c.to_string(),
            None => step_back(&history.history(None, 1000)?)?,
        };
        let (id, changes) = history.revert(&target)?;
        for (path, _) in &changes {
            self.refuse_gate_files(path)?;
        }
        apply(self.store().as_ref(), &changes)?;
        let reason = format!("undo {}", id.get(..10).unwrap_or(&id));
        let mem = if self.reason().is_some() {
            self.clone()
        } else {
            self.with_reason(Some(&reason))
        };
        Tx { mem: &mem, ..tx }.recorded_as("undo", &id).commit()?;
        Ok(id)
    }
}

/// The commit a plain `undo` reverts: walking back from the newest, an undo that was itself
/// undone is skipped, a live undo marks its target as undone and is skipped, and the first
/// other change memdir made (not a hand edit) is the one.
fn step_back(history: &[HistoryEntry]) -> Result<String, Error> {
    let mut undone: Vec<&str> = Vec::new();
    for h in history {
        if h.writer == HAND_EDIT {
            continue;
        }
        let is_undone = undone.iter().any(|u| h.commit.starts_with(u));
        if let Some(target) = h.summary.strip_prefix("undo ") {
            // Undos made before the target was named in the summary name it in the reason.
            let target = match target.trim() {
                "last change" => h.reason.as_deref().and_then(|r| r.strip_prefix("undo ")),
                t => Some(t),
            };
            if let Some(t) = target.map(str::trim).filter(|t| t.len() >= 4)
                && !is_undone
            {
                undone.push(t);
            }
            continue;
        }
        if !is_undone {
            return Ok(h.commit.clone());
        }
    }
    Err(Error::NotFound("nothing to undo".into()))
}
