//! The history seam: every change made through memdir is recorded with its writer, reason and
//! source, and can be listed, blamed and reverted.
//!
//! [`History`] is the trait; [`GitHistory`] records into a git repository at a folder's root
//! (hand edits, made outside memdir, are a folder-only concern it handles in
//! [`History::prepare`]); a database backend keeps tables. The engine calls `prepare` and
//! `commit` under the `git` change lock, so records never interleave.

use crate::folder::Touched;
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
    /// True when what the change wrote is not known path by path: it is finished for a
    /// process that was killed (see the journal in `change.rs`), so a folder compares its whole
    /// tree instead of staging the paths this process touched.
    pub whole_tree: bool,
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
///
/// With [`GitHistory::with_touched`] (as [`Backend::folder`](crate::Backend::folder) builds it),
/// a change's commit stages only the paths the folder store's writes touched, so its cost does
/// not grow with the folder. Hand edits are still found by comparing the whole folder with
/// git's index before each change ([`History::prepare`]): a one-shot process has no change feed
/// that could say what a person edited, and a missed edit would be recorded under memdir's
/// writer. A change finished for a killed process ([`Change::whole_tree`]) compares the whole
/// tree too, since what it wrote is known only to the process that died.
#[derive(Debug, Clone)]
pub struct GitHistory {
    root: PathBuf,
    warnings: Arc<Mutex<Vec<String>>>,
    touched: Option<Touched>,
}

impl GitHistory {
    /// The history of the folder at `root` (recording once `.git` exists there).
    pub fn new(root: &Path) -> GitHistory {
        GitHistory {
            root: root.to_path_buf(),
            warnings: Arc::default(),
            touched: None,
        }
    }

    /// This history, committing only the paths in `touched` (the folder store's record of its
    /// writes) instead of comparing the whole tree with git's index.
    pub fn with_touched(mut self, touched: Touched) -> GitHistory {
        self.touched = Some(touched);
        self
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
            git.commit_hand_edits(at)?;
            // The change's own writes are recorded from here on; anything written before it
            // began was just recorded as a hand edit, as it always has been.
            if let Some(t) = &self.touched {
                t.start();
            }
            Ok(())
        })
    }

    fn commit(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        // Recovery commits a killed change before `prepare` runs, so a git lock that change
        // left is cleared here too (both run under the change lock).
        let touched = self.touched.as_ref().and_then(Touched::take);
        let oid = self.with_repo(|git| {
            for line in git.clear_stale_locks() {
                git_warn(git, line);
            }
            let message = change.message();
            match touched {
                Some(paths) if !change.whole_tree => {
                    git.commit_paths(change.actor, &message, change.at, &paths)
                }
                _ => git.commit_all(change.actor, &message, change.at),
            }
        })?;
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

/// One step of blame for a backend that keeps each version of a file: `lines` are the previous
/// version's lines with the change each came from; returns `text`'s lines, where a line kept
/// from the previous version keeps its change and every other line is `me`'s.
pub fn carry_lines(lines: &[(String, usize)], text: &str, me: usize) -> Vec<(String, usize)> {
    let new: Vec<&str> = text.lines().collect();
    let old: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
    let mut next = Vec::with_capacity(new.len());
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
        match op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for i in 0..len {
                    next.push((new[new_index + i].to_string(), lines[old_index + i].1));
                }
            }
            similar::DiffOp::Delete { .. } => {}
            similar::DiffOp::Insert {
                new_index, new_len, ..
            }
            | similar::DiffOp::Replace {
                new_index, new_len, ..
            } => {
                for i in 0..new_len {
                    next.push((new[new_index + i].to_string(), me));
                }
            }
        }
    }
    next
}

/// Lines with their endings, so a merge gives back bytes exactly.
fn split_lines(b: &[u8]) -> Vec<&[u8]> {
    b.split_inclusive(|&c| c == b'\n').collect()
}

/// The edits that turn `base` into `other`: (base range, replacement lines).
fn hunks<'a>(
    base: &[&'a [u8]],
    other: &[&'a [u8]],
) -> Vec<(std::ops::Range<usize>, Vec<&'a [u8]>)> {
    similar::capture_diff_slices(similar::Algorithm::Myers, base, other)
        .iter()
        .filter_map(|op| match *op {
            similar::DiffOp::Equal { .. } => None,
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => Some((old_index..old_index + old_len, Vec::new())),
            similar::DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => Some((
                old_index..old_index,
                other[new_index..new_index + new_len].to_vec(),
            )),
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => Some((
                old_index..old_index + old_len,
                other[new_index..new_index + new_len].to_vec(),
            )),
        })
        .collect()
}

/// Later changes touch the same lines as the change being undone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoConflict;

/// What undoing one file's change gives, for a backend that keeps each version (its revert):
/// the file's content `before` and `after` the change (`None`: absent) and `now`.
/// `Ok(None)` when there is nothing to write (the file is already as the undo wants);
/// `Ok(Some(want))` to write `want` (`None`: remove the file); a conflict when later changes
/// touch the same or neighbouring lines, or the file was created or removed since.
pub fn undo_file(
    before: Option<Vec<u8>>,
    after: Option<Vec<u8>>,
    now: Option<Vec<u8>>,
) -> Result<Option<Option<Vec<u8>>>, UndoConflict> {
    let want = if now == after {
        before
    } else if now == before {
        return Ok(None);
    } else {
        match (&before, &after, &now) {
            (Some(b), Some(a), Some(n)) => Some(merge_lines(a, n, b).ok_or(UndoConflict)?),
            _ => return Err(UndoConflict),
        }
    };
    Ok((want != now).then_some(want))
}

/// A three-way merge of line edits, for a backend's revert: `base` changed to `ours` by later
/// changes and to `theirs` by the undo. `None` when the two touch the same or neighbouring
/// lines (as git refuses).
pub fn merge_lines(base: &[u8], ours: &[u8], theirs: &[u8]) -> Option<Vec<u8>> {
    let b = split_lines(base);
    let mut edits: Vec<(std::ops::Range<usize>, Vec<&[u8]>)> = hunks(&b, &split_lines(ours));
    let mine = hunks(&b, &split_lines(theirs));
    for (r, _) in &mine {
        if edits
            .iter()
            .any(|(o, _)| r.start <= o.end && o.start <= r.end)
        {
            return None;
        }
    }
    edits.extend(mine);
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = Vec::with_capacity(ours.len());
    let mut at = 0;
    for (r, lines) in edits {
        for l in &b[at..r.start] {
            out.extend_from_slice(l);
        }
        for l in lines {
            out.extend_from_slice(l);
        }
        at = r.end;
    }
    for l in &b[at..] {
        out.extend_from_slice(l);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{UndoConflict, carry_lines, merge_lines, undo_file};

    #[test]
    fn undo_file_restores_skips_merges_or_refuses() {
        let v = |s: &str| Some(s.as_bytes().to_vec());
        // Untouched since: back to before; a created file is removed.
        assert_eq!(undo_file(v("a\n"), v("b\n"), v("b\n")), Ok(Some(v("a\n"))));
        assert_eq!(undo_file(None, v("b\n"), v("b\n")), Ok(Some(None)));
        // Already as before: nothing to write.
        assert_eq!(undo_file(v("a\n"), v("b\n"), v("a\n")), Ok(None));
        // A later edit elsewhere merges; one on the same line, or a removal, conflicts.
        assert_eq!(
            undo_file(v("a\nx\ny\nz\n"), v("A\nx\ny\nz\n"), v("A\nx\ny\nZ\n")),
            Ok(Some(v("a\nx\ny\nZ\n")))
        );
        assert_eq!(undo_file(v("a\n"), v("b\n"), v("c\n")), Err(UndoConflict));
        assert_eq!(undo_file(v("a\n"), v("b\n"), None), Err(UndoConflict));
    }

    #[test]
    fn merge_applies_edits_to_separate_lines_and_refuses_overlaps() {
        let base = b"a\nb\nc\nd\ne\n";
        // Later: line e changed; undo wants line a back to its old text.
        assert_eq!(
            merge_lines(base, b"a\nb\nc\nd\nE\n", b"A\nb\nc\nd\ne\n").as_deref(),
            Some(&b"A\nb\nc\nd\nE\n"[..])
        );
        assert_eq!(
            merge_lines(base, b"X\nb\nc\nd\ne\n", b"A\nb\nc\nd\ne\n"),
            None
        );
        // Neighbouring lines conflict, as in git.
        assert_eq!(
            merge_lines(base, b"a\nB\nc\nd\ne\n", b"A\nb\nc\nd\ne\n"),
            None
        );
    }

    #[test]
    fn blame_keeps_the_change_of_kept_lines() {
        let one = carry_lines(&[], "a\nb\n", 0);
        let two = carry_lines(&one, "a\nx\nb\n", 1);
        let owners: Vec<(&str, usize)> = two.iter().map(|(l, o)| (l.as_str(), *o)).collect();
        assert_eq!(owners, [("a", 0), ("x", 1), ("b", 0)]);
    }
}
