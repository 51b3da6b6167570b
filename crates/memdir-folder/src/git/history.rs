//! A folder's history in git: [`GitHistory`] records into a git repository at a folder's root
//! (hand edits, made outside memdir, are a folder-only concern it handles in
//! [`History::prepare`]). The seam itself, [`History`], lives in `memdir-store`.

use crate::feed::{Event, Feed, Kind};
use crate::git::repo::Git;
use crate::store::Touched;
use jiff::Timestamp;
use memdir_core::path::MemPath;
use memdir_store::StoreError;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

fn git_warn(git: &Git, line: String) {
    git.push_warning(line);
}

use memdir_core::forget::Forget;
use memdir_store::history::{
    BlameLine, Change, Changes, FileChange, ForgetReport, History, HistoryEntry,
};

/// History in a git repository at a folder's root.
///
/// With [`GitHistory::with_touched`] (as [`FolderStore::backend`](crate::FolderStore::backend) builds it),
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

    fn forget(
        &self,
        forget: &Forget,
        record: &Change<'_>,
        dry_run: bool,
    ) -> Result<ForgetReport, StoreError> {
        let mut follow = self.follow();
        // The rewrite replaces git's packs, refs and index: a repository kept open would
        // hold the old ones.
        follow.git = None;
        let out = self.repo()?.forget(forget, record, dry_run);
        if !dry_run {
            follow.whole = true;
            follow.seen = None;
        }
        out
    }

    fn record_empty(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        let mut follow = self.follow();
        follow.git = None;
        let id = self.repo()?.commit_empty(change)?;
        follow.seen = None;
        Ok(id.map(|o| o.to_string()))
    }

    fn revert(&self, id: &str) -> Result<(String, Changes), StoreError> {
        let git = self.repo()?;
        let target = git.resolve(Some(id))?;
        let changes = git.revert_changes(target)?;
        Ok((target.to_string(), changes))
    }

    fn files_of(&self, id: &str) -> Result<(String, Vec<FileChange>), StoreError> {
        let git = self.repo()?;
        let target = git.resolve(Some(id))?;
        Ok((target.to_string(), git.files_of(target)?))
    }
}

#[cfg(test)]
mod tests {
    use super::Follow;
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
}
