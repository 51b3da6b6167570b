//! The history seam: every change made through memdir is recorded with its writer, reason and
//! source, and can be listed, blamed and reverted.
//!
//! [`History`] is the trait; [`GitHistory`] records into a git repository at a folder's root
//! (hand edits, made outside memdir, are a folder-only concern it handles in
//! [`History::prepare`]); a database backend keeps tables. The engine calls `prepare` and
//! `commit` under the `git` change lock, so records never interleave.

use crate::feed::{Event, Feed, Kind};
use crate::folder::Touched;
use crate::provenance::{Actor, Git, message};
use crate::store::StoreError;
use jiff::Timestamp;
use memdir_core::path::MemPath;
use std::collections::BTreeSet;
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

    /// Asks this history, in a long-lived process, to follow the backend's change feed from
    /// now on, so that [`History::prepare`] costs what changed outside memdir rather than the
    /// size of the memory. Backends without hand edits have nothing to follow (the default).
    fn follow_changes(&self) {}
}

/// History in a git repository at a folder's root.
///
/// With [`GitHistory::with_touched`] (as [`Backend::folder`](crate::Backend::folder) builds it),
/// a change's commit stages only the paths the folder store's writes touched, so its cost does
/// not grow with the folder. Hand edits are found by comparing the whole folder with git's
/// index before each change ([`History::prepare`]): a one-shot process has no change feed that
/// could say what a person edited, and a missed edit would be recorded under memdir's writer.
/// A long-lived process can [`follow_changes`](History::follow_changes): the folder's inotify
/// feed then names the paths changed outside memdir, and only those are compared (see
/// [`Follow`]). A change finished for a killed process ([`Change::whole_tree`]) compares the
/// whole tree, since what it wrote is known only to the process that died.
#[derive(Debug, Clone)]
pub struct GitHistory {
    root: PathBuf,
    warnings: Arc<Mutex<Vec<String>>>,
    touched: Option<Touched>,
    follow: Arc<Mutex<Follow>>,
}

/// What a history that follows the folder's change feed knows between changes.
///
/// Why no hand edit is missed: the feed watches every folder before the whole-tree comparison
/// that starts it, so every later change to a file is an event. At each commit, the events
/// queued so far are drained *before* the change's paths are staged: events for those paths
/// are memdir's own writes (whose bytes the staging reads after the drain), every other path is
/// kept for the next `prepare`, which stages exactly the kept paths as a hand edit. What the
/// feed cannot narrow down makes that `prepare` compare the whole tree again: a lost feed, a
/// `.gitignore` changed (it changes what git records elsewhere), a path inside a nested
/// repository, or git's own files (`index`, `HEAD`, the branch, `packed-refs`, `config`,
/// `info/exclude`) changed by anyone but this process since its last commit, as another
/// memdir process or a person's `git add` does.
#[derive(Default)]
struct Follow {
    /// Set by [`History::follow_changes`].
    on: bool,
    /// The feed could not start here (no inotify, out of watches): compare the whole tree.
    unavailable: bool,
    feed: Option<Feed>,
    /// Paths changed outside memdir since the last `prepare`.
    pending: BTreeSet<String>,
    /// Something the feed cannot narrow down happened since the last `prepare`.
    whole: bool,
    /// git's own files as this process last left them.
    seen: Option<Vec<Stamp>>,
    /// How many times `prepare` compared the whole tree.
    walks: usize,
    /// The repository, kept open between changes.
    git: Option<Git>,
}

impl std::fmt::Debug for Follow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follow")
            .field("on", &self.on)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

/// A file's identity and times, or `None` when it is absent: git replaces its files by renaming
/// a new one over them, so any rewrite changes the inode, and an edit in place the times.
type Stamp = Option<(u64, u64, u64, i64, i64, i64, i64)>;

/// The stamps of git's files that change what a comparison with the index would find.
fn git_stamps(root: &Path) -> Vec<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let git = root.join(".git");
    let stamp = |p: PathBuf| -> Stamp {
        std::fs::symlink_metadata(p).ok().map(|m| {
            (
                m.dev(),
                m.ino(),
                m.size(),
                m.mtime(),
                m.mtime_nsec(),
                m.ctime(),
                m.ctime_nsec(),
            )
        })
    };
    let mut out: Vec<Stamp> = ["index", "HEAD", "packed-refs", "config", "info/exclude"]
        .into_iter()
        .map(|f| stamp(git.join(f)))
        .collect();
    // The branch HEAD names (a detached HEAD is HEAD's own stamp).
    if let Ok(head) = std::fs::read_to_string(git.join("HEAD"))
        && let Some(branch) = head.trim().strip_prefix("ref: ")
        && MemPath::parse(branch).is_ok()
    {
        out.push(stamp(git.join(branch)));
    }
    out
}

impl Follow {
    /// Takes in what the feed reported. `mine`: the paths the change being committed wrote,
    /// whose events are its own.
    fn note(&mut self, events: Vec<Event>, mine: &[String]) {
        let under = |rel: &str, p: &str| {
            p == rel
                || (p.len() > rel.len() && p.starts_with(rel) && p.as_bytes()[rel.len()] == b'/')
        };
        for ev in events {
            if ev.rel.rsplit('/').next() == Some(".gitignore") {
                self.whole = true;
            }
            // git records no folder attributes; a folder that arrived reports its files.
            if ev.dir && ev.kind == Kind::Changed {
                continue;
            }
            // One of this change's paths, or a folder made for one of them (its other files
            // are reported on their own). A folder that left is kept even when it held one of
            // them: a folder moved away reports none of the files it took along.
            let made_for_mine = ev.dir && ev.kind == Kind::Arrived;
            if mine
                .iter()
                .any(|m| under(m, &ev.rel) || (made_for_mine && under(&ev.rel, m)))
            {
                continue;
            }
            self.pending.insert(ev.rel);
        }
    }

    /// Drains the feed; a feed that is not running (or just got lost) is started, and the
    /// next `prepare` compares the whole tree.
    fn drain(&mut self, root: &Path, mine: &[String]) {
        if let Some(feed) = &mut self.feed {
            match feed.drain() {
                Ok(events) => {
                    self.note(events, mine);
                    return;
                }
                Err(_) => self.feed = None,
            }
        }
        self.whole = true;
        if self.on && !self.unavailable {
            match Feed::start(root, &mut |_| {}) {
                Ok(feed) => self.feed = Some(feed),
                Err(_) => self.unavailable = true,
            }
        }
    }

    /// The paths to compare with git's index before a change, or `None` for the whole tree.
    fn narrowed(&mut self, root: &Path) -> Option<Vec<String>> {
        if !self.on || self.unavailable {
            return None;
        }
        self.drain(root, &[]);
        if self.seen.as_ref() != Some(&git_stamps(root)) {
            // Someone else changed git's files: read them afresh.
            self.git = None;
            return None;
        }
        if self.whole {
            return None;
        }
        let nested = |p: &str| {
            let mut dir = Path::new(p).parent();
            while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
                if std::fs::symlink_metadata(root.join(d).join(".git")).is_ok() {
                    return true;
                }
                dir = d.parent();
            }
            false
        };
        if self.pending.iter().any(|p| nested(p)) {
            return None;
        }
        // A folder staged stages (or removes) everything under it.
        let covered = |p: &str| {
            p.match_indices('/')
                .any(|(i, _)| self.pending.contains(&p[..i]))
        };
        Some(
            self.pending
                .iter()
                .filter(|p| !covered(p))
                .cloned()
                .collect(),
        )
    }

    /// After memdir recorded something: git's files are as this process left them, and the
    /// tree compared holds everything up to the feed's last drain.
    fn recorded(&mut self, root: &Path, whole: bool) {
        if !self.on {
            return;
        }
        if whole {
            self.whole = self.feed.is_none();
            self.pending.clear();
        }
        self.seen = Some(git_stamps(root));
    }
}

impl GitHistory {
    /// The history of the folder at `root` (recording once `.git` exists there).
    pub fn new(root: &Path) -> GitHistory {
        GitHistory {
            root: root.to_path_buf(),
            warnings: Arc::default(),
            touched: None,
            follow: Arc::default(),
        }
    }

    /// How many times finding hand edits compared the whole folder with git's index: before
    /// every change, unless the history follows the folder's change feed
    /// ([`History::follow_changes`]). For tests and benchmarks of what the feed saves.
    pub fn whole_tree_comparisons(&self) -> usize {
        self.follow().walks
    }

    fn follow(&self) -> std::sync::MutexGuard<'_, Follow> {
        self.follow.lock().unwrap_or_else(|e| e.into_inner())
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

    /// Runs `f` on the repository and keeps what it warned about. A history that follows the
    /// change feed keeps the repository open between changes, so git's index is read again
    /// only when someone else rewrote it; any failure closes it, so nothing half-staged stays.
    fn with_repo<T>(
        &self,
        follow: &mut Follow,
        f: impl FnOnce(&Git) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let git = match follow.git.take() {
            Some(git) => git,
            None => self.repo()?,
        };
        let out = f(&git);
        let lines = git.take_warnings();
        if !lines.is_empty() {
            self.warnings
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(lines);
        }
        if out.is_ok() && follow.on {
            follow.git = Some(git);
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
        let mut follow = self.follow();
        match follow.narrowed(&self.root) {
            // The feed names what changed outside memdir: only that is compared.
            Some(paths) => {
                if !paths.is_empty() {
                    self.with_repo(&mut follow, |git| {
                        for line in git.clear_stale_locks() {
                            git_warn(git, line);
                        }
                        git.commit_hand_edit_paths(at, &paths)
                    })?;
                    follow.pending.clear();
                    follow.recorded(&self.root, false);
                }
            }
            None => {
                follow.walks += 1;
                self.with_repo(&mut follow, |git| {
                    for line in git.clear_stale_locks() {
                        git_warn(git, line);
                    }
                    git.commit_hand_edits(at)
                })?;
                follow.recorded(&self.root, true);
            }
        }
        // The change's own writes are recorded from here on; anything written before it
        // began was just recorded as a hand edit, as it always has been.
        if let Some(t) = &self.touched {
            t.start();
        }
        Ok(())
    }

    fn commit(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        // Recovery commits a killed change before `prepare` runs, so a git lock that change
        // left is cleared here too (both run under the change lock).
        let touched = self.touched.as_ref().and_then(Touched::take);
        let mut follow = self.follow();
        // Before anything is staged: events so far on the change's paths are its own writes,
        // whose bytes the staging reads next; any other path waits for the next `prepare`.
        if follow.feed.is_some() {
            follow.drain(&self.root, touched.as_deref().unwrap_or_default());
        }
        let whole = touched.is_none() || change.whole_tree;
        let oid = self.with_repo(&mut follow, |git| {
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
        follow.recorded(&self.root, whole);
        Ok(oid.map(|o| o.to_string()))
    }

    fn follow_changes(&self) {
        self.follow().on = true;
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
    use super::{Follow, UndoConflict, carry_lines, merge_lines, undo_file};
    use crate::feed::{Event, Kind};

    fn ev(rel: &str, dir: bool, kind: Kind) -> Event {
        Event {
            rel: rel.into(),
            dir,
            kind,
        }
    }

    /// Which of the feed's events a commit takes for its own writes: its paths and a folder
    /// made for them, never a folder that left with other files in it.
    #[test]
    fn a_commit_takes_only_its_own_paths_out_of_the_feed() {
        let mut f = Follow::default();
        let mine = ["notes/sub/a.md".to_string(), "log/d.md".to_string()];
        f.note(
            vec![
                ev("notes/sub", true, Kind::Arrived),
                ev("notes/sub/a.md", false, Kind::Arrived),
                ev("notes/sub/b.md", false, Kind::Arrived),
                ev("log/d.md", false, Kind::Changed),
                ev("log/d.md.bak", false, Kind::Changed),
                ev("log", true, Kind::Changed),
                // A person moved the folder away mid-change: its other files go with it, and
                // only this event says so.
                ev("notes/sub", true, Kind::Left),
            ],
            &mine,
        );
        let pending: Vec<&str> = f.pending.iter().map(String::as_str).collect();
        assert_eq!(pending, ["log/d.md.bak", "notes/sub", "notes/sub/b.md"]);
        assert!(!f.whole);
        f.note(vec![ev("drafts/.gitignore", false, Kind::Changed)], &[]);
        assert!(f.whole, "a .gitignore changes what git records elsewhere");
    }

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
