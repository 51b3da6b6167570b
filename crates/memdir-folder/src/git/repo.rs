//! Git provenance: every change made through memdir becomes a commit by its writer.
//!
//! The memory folder is an ordinary git repository, so `git log -p` works on it. memdir commits
//! with libgit2 (vendored), in-process. Each change runs as: take the `git` lock, commit whatever
//! was edited by hand since the last commit (authored `hand-edit`), apply the change, commit it
//! (authored by the writer, message naming the operation, the path and the reason). So a hand
//! edit is never swept into memdir's commit. The change's commit stages only the paths the
//! folder store touched ([`Git::commit_paths`]); finding hand edits compares the whole folder
//! with git's index ([`Git::commit_hand_edits`]), since nothing else can tell what a person
//! changed. `.memdir/` and temp files are excluded through
//! `.git/info/exclude`, which is not part of memory.
//!
//! Undo never rewrites history: it computes the revert with libgit2, and the engine writes the
//! reverted files back through the store (so confinement holds), then commits that.

use git2::{Oid, Repository, Signature, StatusOptions, Time};
use jiff::Timestamp;
use memdir_core::path::MemPath;
use memdir_store::StoreError;
use std::path::Path;

use memdir_store::history::{
    Actor, BlameLine, Changes, FileChange, HAND_EDIT, HistoryEntry, REASON_TRAILER, SOURCE_TRAILER,
    Source,
};

/// The message of a commit that records hand edits.
const HAND_EDIT_MESSAGE: &str =
    "hand edit\n\nchanges made outside memdir, recorded before memdir's next change\n";

fn hand_editor() -> Actor {
    Actor {
        writer: HAND_EDIT.to_string(),
        source: Source::User,
    }
}

/// A git repository at the memory root.
pub struct Git {
    pub(super) repo: Repository,
    warnings: std::cell::RefCell<Vec<String>>,
}

/// How long a fresh git lock file is left to its owner before memdir takes it as stale.
pub const GIT_LOCK_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

fn broken(root: &Path, why: &str) -> StoreError {
    StoreError::Unavailable(format!(
        "the git repository at {} is broken ({why}): repair it (`git fsck`), or move .git away and run `memdir init` to start a new history",
        root.join(".git").display()
    ))
}

pub(super) fn backend(e: git2::Error) -> StoreError {
    StoreError::Unavailable(format!("git: {}", e.message()))
}

fn trailer(message: &str, key: &str) -> Option<String> {
    message.lines().rev().find_map(|l| {
        l.strip_prefix(key)
            .and_then(|r| r.strip_prefix(": "))
            .map(|v| v.trim().to_string())
    })
}

fn rfc3339(t: Time) -> String {
    memdir_store::history::rfc3339(t.seconds())
}

impl Git {
    fn from_repo(repo: Repository) -> Git {
        Git {
            repo,
            warnings: std::cell::RefCell::default(),
        }
    }

    /// Keeps a warning for [`Git::take_warnings`].
    pub fn push_warning(&self, line: String) {
        self.warn(line);
    }

    fn warn(&self, line: String) {
        self.warnings.borrow_mut().push(line);
    }

    /// What went wrong but did not stop the commit (files left out of history), one line each.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.warnings.borrow_mut())
    }

    /// Opens the repository at `root`: `None` when there is none, an error that says how to
    /// repair it when `.git` is there but broken (no objects, a `.git` file pointing nowhere),
    /// so history is never switched off silently.
    pub fn open(root: &Path) -> Result<Option<Git>, StoreError> {
        let dot_git = root.join(".git");
        if std::fs::symlink_metadata(&dot_git).is_err() {
            return Ok(None);
        }
        match Repository::open(root) {
            Ok(repo) if repo.workdir().is_some() => Ok(Some(Git::from_repo(repo))),
            Ok(_) => Err(broken(root, "it is a bare repository")),
            Err(e) => Err(broken(root, e.message())),
        }
    }

    /// Removes git's lock files that a killed memdir left (`.git/index.lock`, `HEAD.lock`, the
    /// branch's `refs/heads/<branch>.lock`), which would fail every later commit. Called only
    /// under memdir's `git` change lock, so no memdir process is inside git; a lock younger than
    /// [`GIT_LOCK_GRACE`] may be a person's `git` command and is given that long to finish.
    /// Returns one line per lock removed.
    pub fn clear_stale_locks(&self) -> Vec<String> {
        let dir = self.repo.path();
        let mut locks = vec![dir.join("index.lock"), dir.join("HEAD.lock")];
        if let Ok(head) = self.repo.find_reference("HEAD")
            && let Ok(Some(target)) = head.symbolic_target()
        {
            locks.push(dir.join(format!("{target}.lock")));
        }
        let mut removed = Vec::new();
        for lock in locks {
            let Ok(meta) = std::fs::symlink_metadata(&lock) else {
                continue;
            };
            let age = meta
                .modified()
                .ok()
                .and_then(|m| m.elapsed().ok())
                .unwrap_or_default();
            if age < GIT_LOCK_GRACE {
                std::thread::sleep(GIT_LOCK_GRACE - age);
            }
            if std::fs::remove_file(&lock).is_ok() {
                let shown = lock
                    .strip_prefix(dir)
                    .unwrap_or(&lock)
                    .display()
                    .to_string();
                removed.push(format!(
                    "removed a stale git lock .git/{shown} left by an interrupted change"
                ));
            }
        }
        removed
    }

    /// Makes `root` a repository (idempotent) with `.memdir/` excluded, and commits what is
    /// there as the first commit.
    pub fn init(root: &Path, now: Timestamp) -> Result<Git, StoreError> {
        let repo = match Repository::open(root) {
            Ok(r) => r,
            Err(_) => Repository::init(root).map_err(backend)?,
        };
        let info = repo.path().join("info");
        std::fs::create_dir_all(&info).map_err(|e| StoreError::Unavailable(format!("git: {e}")))?;
        let exclude = info.join("exclude");
        let current = std::fs::read_to_string(&exclude).unwrap_or_default();
        if !current.lines().any(|l| l == "/.memdir/") {
            let text = format!("{current}# memdir's own state and temp files\n/.memdir/\n.*.tmp\n");
            std::fs::write(&exclude, text)
                .map_err(|e| StoreError::Unavailable(format!("git: {e}")))?;
        }
        let git = Git::from_repo(repo);
        git.commit_all(
            &Actor {
                writer: "memdir".into(),
                source: Source::User,
            },
            "init memory folder\n",
            now,
        )?;
        Ok(git)
    }

    /// The paths that differ from the index (ignoring excluded files): `(path, deleted)`.
    fn changed_paths(&self) -> Result<Vec<(String, bool)>, StoreError> {
        let mut opts = StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(false)
            .include_unmodified(false);
        let statuses = self.repo.statuses(Some(&mut opts)).map_err(backend)?;
        let mut out = Vec::new();
        for entry in statuses.iter() {
            let Ok(path) = entry.path() else { continue };
            let st = entry.status();
            let worktree = st.intersects(
                git2::Status::WT_NEW
                    | git2::Status::WT_MODIFIED
                    | git2::Status::WT_DELETED
                    | git2::Status::WT_TYPECHANGE
                    | git2::Status::WT_RENAMED,
            );
            let staged = st.intersects(
                git2::Status::INDEX_NEW
                    | git2::Status::INDEX_MODIFIED
                    | git2::Status::INDEX_DELETED
                    | git2::Status::INDEX_TYPECHANGE
                    | git2::Status::INDEX_RENAMED,
            );
            if worktree || staged {
                out.push((path.to_string(), st.contains(git2::Status::WT_DELETED)));
            }
        }
        Ok(out)
    }

    /// The paths among `paths` (relative to `dir`) that git would stop recording if `rules`
    /// were the `.gitignore` of `dir`, and does record today.
    pub fn hidden_by(&self, rules: &str, paths: &[String]) -> Result<Vec<String>, StoreError> {
        let before: Vec<bool> = paths
            .iter()
            .map(|p| self.repo.is_path_ignored(p).unwrap_or(false))
            .collect();
        // The rules go to this handle only (libgit2 keeps them in memory), never to disk.
        let check = Repository::open(self.repo.path()).map_err(backend)?;
        check.add_ignore_rule(rules).map_err(backend)?;
        Ok(paths
            .iter()
            .zip(before)
            .filter(|(p, was)| !was && check.is_path_ignored(p.as_str()).unwrap_or(false))
            .map(|(p, _)| p.clone())
            .collect())
    }

    /// git's index, read again from disk if another process rewrote it since this repository
    /// last read or wrote it (a repository kept open between changes).
    fn index(&self) -> Result<git2::Index, StoreError> {
        let mut index = self.repo.index().map_err(backend)?;
        index.read(false).map_err(backend)?;
        Ok(index)
    }

    /// Commits edits made by hand since the last commit, authored `hand-edit`.
    pub fn commit_hand_edits(&self, now: Timestamp) -> Result<Option<Oid>, StoreError> {
        if self.changed_paths()?.is_empty() {
            return Ok(None);
        }
        self.commit_all(&hand_editor(), HAND_EDIT_MESSAGE, now)
    }

    /// Commits what was edited by hand at `paths` (the folder's change feed names them), as
    /// [`Git::commit_hand_edits`] would record it, without comparing the rest of the tree.
    pub fn commit_hand_edit_paths(
        &self,
        now: Timestamp,
        paths: &[String],
    ) -> Result<Option<Oid>, StoreError> {
        self.commit_paths(&hand_editor(), HAND_EDIT_MESSAGE, now, paths)
    }

    /// Stages every change and commits it; `None` when nothing changed. This compares the
    /// whole tree with git's index: the first commit, hand edits, and a change finished for a
    /// killed process, whose paths are not known, go this way.
    pub fn commit_all(
        &self,
        actor: &Actor,
        message: &str,
        now: Timestamp,
    ) -> Result<Option<Oid>, StoreError> {
        let mut index = self.index()?;
        // Each changed path is staged on its own, so one file git cannot record (a name it
        // refuses, a nested repository, a folder nested too deep; put there by hand, as memdir
        // refuses such paths) is left out with a warning instead of stopping every commit.
        for (path, deleted) in self.changed_paths()? {
            if deleted {
                unstage(&mut index, &path);
            } else {
                self.stage(&mut index, &path);
            }
        }
        self.commit_index(&mut index, actor, message, now)
    }

    /// Stages exactly `paths` (files, or folders whose files are all staged; a path that is
    /// gone is removed, with everything under it) and commits them; `None` when nothing
    /// changed. The cost follows the paths, not the folder: no status walk. A path this cannot
    /// stage as the whole-tree walk would (under a symlinked folder, or a folder holding a
    /// nested repository) makes it fall back to [`Git::commit_all`], so the commit records
    /// the same tree either way.
    pub fn commit_paths(
        &self,
        actor: &Actor,
        message: &str,
        now: Timestamp,
        paths: &[String],
    ) -> Result<Option<Oid>, StoreError> {
        let Some(root) = self.repo.workdir().map(Path::to_path_buf) else {
            return self.commit_all(actor, message, now);
        };
        let mut index = self.index()?;
        let mut folders = false;
        for path in paths {
            match self.stage_touched(&mut index, &root, path) {
                Some(folder) => folders |= folder,
                None => {
                    // Drop what was staged in memory; the walk stages it all again.
                    index.read(true).map_err(backend)?;
                    return self.commit_all(actor, message, now);
                }
            }
        }
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let tree = match (&parent, folders) {
            (Some(p), false) => self.updated_tree(&index, &p.tree().map_err(backend)?, paths)?,
            _ => None,
        };
        match tree {
            Some(tree_id) => {
                index.write().map_err(backend)?;
                self.commit_tree(tree_id, parent, actor, message, now)
            }
            // A folder moved in, or a file where a folder was: the index writes the tree.
            None => self.commit_index(&mut index, actor, message, now),
        }
    }

    /// HEAD's tree with `paths` set to what the index now holds for them, built from the
    /// trees along those paths only; `None` when a path changes between a file and a folder,
    /// which the index's own tree writing handles.
    fn updated_tree(
        &self,
        index: &git2::Index,
        head: &git2::Tree<'_>,
        paths: &[String],
    ) -> Result<Option<Oid>, StoreError> {
        let mut updates = git2::build::TreeUpdateBuilder::new();
        for path in paths {
            let p = Path::new(path);
            let in_head = head.get_path(p).ok();
            // A file under a path HEAD holds as a file: a type change.
            let mut ancestor = p.parent();
            while let Some(a) = ancestor.filter(|a| !a.as_os_str().is_empty()) {
                if let Ok(e) = head.get_path(a)
                    && e.kind() != Some(git2::ObjectType::Tree)
                {
                    return Ok(None);
                }
                ancestor = a.parent();
            }
            match index.get_path(p, 0) {
                Some(e) => {
                    if in_head
                        .as_ref()
                        .is_some_and(|t| t.kind() == Some(git2::ObjectType::Tree))
                    {
                        return Ok(None);
                    }
                    updates.upsert(path.as_str(), e.id, file_mode(e.mode));
                }
                None if in_head.is_some() => {
                    updates.remove(path.as_str());
                }
                None => {}
            }
        }
        Ok(Some(
            updates.create_updated(&self.repo, head).map_err(backend)?,
        ))
    }

    /// Stages one touched path as the whole-tree walk would: `Some(true)` when it was a folder,
    /// `None` when that needs the walk.
    fn stage_touched(&self, index: &mut git2::Index, root: &Path, path: &str) -> Option<bool> {
        // A symlinked folder on the way: git records the link, the walk decides what that means.
        let mut at = root.to_path_buf();
        let parts: Vec<&str> = path.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => return None,
                Ok(m) if m.is_dir() => {}
                // A parent that is gone (or became a file): so is the path.
                _ => {
                    unstage(index, path);
                    return Some(false);
                }
            }
        }
        match std::fs::symlink_metadata(root.join(path)) {
            Err(_) => {
                unstage(index, path);
                Some(false)
            }
            Ok(m) if m.is_dir() => {
                // A folder moved here: what the index holds under it goes, what is there comes.
                let _ = index.remove_dir(Path::new(path), 0);
                self.stage_folder(index, root, path).map(|()| true)
            }
            Ok(m) if m.is_file() || m.file_type().is_symlink() => {
                // A folder replaced by a file leaves index entries under the file's name.
                let _ = index.remove_dir(Path::new(path), 0);
                self.stage_file(index, path);
                Some(false)
            }
            // A FIFO or a socket: git records nothing, and the walk skips it too.
            Ok(_) => Some(false),
        }
    }

    /// Stages every file under the folder `dir`; `None` when it holds a nested repository.
    fn stage_folder(&self, index: &mut git2::Index, root: &Path, dir: &str) -> Option<()> {
        let mut stack = vec![dir.to_string()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(root.join(&d)) else {
                continue;
            };
            for ent in entries.flatten() {
                let name = ent.file_name();
                let Some(name) = name.to_str() else { continue };
                if name == ".git" {
                    return None;
                }
                let rel = format!("{d}/{name}");
                let Ok(ft) = ent.file_type() else { continue };
                if ft.is_dir() {
                    stack.push(rel);
                } else if ft.is_file() || ft.is_symlink() {
                    self.stage_file(index, &rel);
                }
            }
        }
        Some(())
    }

    /// Stages a file that exists, unless git would not record it as the walk does: a new
    /// file that is ignored (`.gitignore`, `.git/info/exclude`) stays out.
    fn stage_file(&self, index: &mut git2::Index, path: &str) {
        let tracked = index.get_path(Path::new(path), 0).is_some();
        if !tracked && self.repo.is_path_ignored(path).unwrap_or(false) {
            return;
        }
        self.stage(index, path);
    }

    /// Adds one path to the index, warning when git cannot record it, so one odd file never
    /// stops a commit.
    fn stage(&self, index: &mut git2::Index, path: &str) {
        let p = Path::new(path);
        if let Err(e) = MemPath::parse(path.trim_end_matches('/')) {
            self.warn(format!(
                "{path} stays out of history: {e}; rename or remove it"
            ));
            return;
        }
        if let Err(e) = index.add_path(p) {
            self.warn(format!(
                "git cannot record {path} ({}), so it stays out of history: rename or remove it",
                e.message()
            ));
        }
    }

    /// Writes the index's tree and commits it on HEAD; `None` when the tree is HEAD's.
    fn commit_index(
        &self,
        index: &mut git2::Index,
        actor: &Actor,
        message: &str,
        now: Timestamp,
    ) -> Result<Option<Oid>, StoreError> {
        let tree_id = match index.write_tree() {
            Ok(t) => t,
            Err(e) => {
                // Fall back to HEAD's index so a bad entry never sticks in git's index file.
                let _ = index.read(true);
                return Err(backend(e));
            }
        };
        index.write().map_err(backend)?;
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        self.commit_tree(tree_id, parent, actor, message, now)
    }

    /// Commits `tree_id` on `parent` (HEAD) and moves HEAD; `None` when it is the parent's tree.
    fn commit_tree(
        &self,
        tree_id: Oid,
        parent: Option<git2::Commit<'_>>,
        actor: &Actor,
        message: &str,
        now: Timestamp,
    ) -> Result<Option<Oid>, StoreError> {
        if let Some(p) = &parent
            && p.tree_id() == tree_id
        {
            return Ok(None);
        }
        let tree = self.repo.find_tree(tree_id).map_err(backend)?;
        let time = Time::new(now.as_second(), 0);
        let email = format!(
            "{}@memdir.invalid",
            actor.writer.replace(char::is_whitespace, "-")
        );
        let author = Signature::new(&actor.writer, &email, &time).map_err(backend)?;
        let committer =
            Signature::new("memdir", "memdir@memdir.invalid", &time).map_err(backend)?;
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        let oid = self
            .repo
            .commit(Some("HEAD"), &author, &committer, message, &tree, &parents)
            .map_err(backend)?;
        Ok(Some(oid))
    }

    /// Commits touching `path` (all when `None`), newest first.
    pub fn history(
        &self,
        path: Option<&MemPath>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let mut walk = self.repo.revwalk().map_err(backend)?;
        if walk.push_head().is_err() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for oid in walk {
            let oid = oid.map_err(backend)?;
            let commit = self.repo.find_commit(oid).map_err(backend)?;
            if let Some(p) = path
                && !self.touches(&commit, p)?
            {
                continue;
            }
            let msg = commit.message().unwrap_or_default().to_string();
            out.push(HistoryEntry {
                commit: oid.to_string(),
                writer: commit.author().name().unwrap_or_default().to_string(),
                date: rfc3339(commit.time()),
                summary: commit
                    .summary()
                    .ok()
                    .flatten()
                    .unwrap_or_default()
                    .to_string(),
                reason: trailer(&msg, REASON_TRAILER),
                source: trailer(&msg, SOURCE_TRAILER),
            });
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    fn touches(&self, commit: &git2::Commit, path: &MemPath) -> Result<bool, StoreError> {
        let entry_id =
            |tree: &git2::Tree| tree.get_path(Path::new(path.as_str())).ok().map(|e| e.id());
        let tree = commit.tree().map_err(backend)?;
        let mine = entry_id(&tree);
        let before = match commit.parent(0) {
            Ok(p) => entry_id(&p.tree().map_err(backend)?),
            Err(_) => None,
        };
        Ok(mine != before)
    }

    /// Who last changed each line of a committed file.
    pub fn blame(&self, path: &MemPath) -> Result<Vec<BlameLine>, StoreError> {
        let blame = self
            .repo
            .blame_file(Path::new(path.as_str()), None)
            .map_err(|e| match e.code() {
                git2::ErrorCode::NotFound => {
                    StoreError::NotFound(format!("{path} has no history yet"))
                }
                _ => backend(e),
            })?;
        let head = self
            .repo
            .head()
            .and_then(|h| h.peel_to_tree())
            .map_err(backend)?;
        let entry = head
            .get_path(Path::new(path.as_str()))
            .map_err(|_| StoreError::NotFound(format!("{path} has no history yet")))?;
        let blob = self.repo.find_blob(entry.id()).map_err(backend)?;
        let text = String::from_utf8_lossy(blob.content()).into_owned();
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let Some(hunk) = blame.get_line(i + 1) else {
                continue;
            };
            let id = hunk.final_commit_id();
            let commit = self.repo.find_commit(id).map_err(backend)?;
            let msg = commit.message().unwrap_or_default().to_string();
            out.push(BlameLine {
                line: i + 1,
                commit: id.to_string(),
                writer: commit.author().name().unwrap_or_default().to_string(),
                date: rfc3339(commit.time()),
                reason: trailer(&msg, REASON_TRAILER),
                text: line.to_string(),
            });
        }
        Ok(out)
    }

    /// Resolves a commit id prefix, or the newest commit not authored by a hand edit.
    pub fn resolve(&self, spec: Option<&str>) -> Result<Oid, StoreError> {
        match spec {
            Some(s) => self
                .repo
                .revparse_single(s)
                .and_then(|o| o.peel_to_commit())
                .map(|c| c.id())
                .map_err(|_| {
                    StoreError::NotFound(format!("no commit {s:?}: see `memdir history`"))
                }),
            None => {
                let h = self.history(None, 1)?;
                let Some(first) = h.first() else {
                    return Err(StoreError::NotFound(
                        "nothing to undo: no commits yet".into(),
                    ));
                };
                Oid::from_str(&first.commit).map_err(backend)
            }
        }
    }

    /// The file changes that revert `commit` on top of HEAD: `(path, Some(content))` to write,
    /// `(path, None)` to delete. Conflicts (later changes to the same lines) are refused.
    pub fn revert_changes(&self, commit: Oid) -> Result<Changes, StoreError> {
        let target = self.repo.find_commit(commit).map_err(backend)?;
        if target.parent_count() == 0 {
            return Err(StoreError::Conflict(
                "cannot undo the first commit: it created the folder".into(),
            ));
        }
        let head = self
            .repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .map_err(backend)?;
        let mut index = self
            .repo
            .revert_commit(&target, &head, 0, None)
            .map_err(backend)?;
        if index.has_conflicts() {
            return Err(StoreError::Conflict(format!(
                "cannot undo {}: later changes touch the same lines; edit the file instead",
                &commit.to_string()[..8]
            )));
        }
        let new_tree = self
            .repo
            .find_tree(index.write_tree_to(&self.repo).map_err(backend)?)
            .map_err(backend)?;
        let head_tree = head.tree().map_err(backend)?;
        let diff = self
            .repo
            .diff_tree_to_tree(Some(&head_tree), Some(&new_tree), None)
            .map_err(backend)?;
        let mut out = Vec::new();
        for delta in diff.deltas() {
            out.push((delta_path(&delta)?, self.content(delta.new_file())?));
        }
        Ok(out)
    }

    /// A diff side's bytes, `None` where the file is absent on that side.
    fn content(&self, f: git2::DiffFile<'_>) -> Result<Option<Vec<u8>>, StoreError> {
        if !f.exists() {
            return Ok(None);
        }
        let blob = self.repo.find_blob(f.id()).map_err(backend)?;
        Ok(Some(blob.content().to_vec()))
    }

    /// The files `commit` touched, each as it was in its parent and in the commit (`None`:
    /// absent), in path order. The first commit is compared with nothing.
    pub fn files_of(&self, commit: Oid) -> Result<Vec<FileChange>, StoreError> {
        let target = self.repo.find_commit(commit).map_err(backend)?;
        let tree = target.tree().map_err(backend)?;
        let parent = match target.parent_count() {
            0 => None,
            _ => Some(target.parent(0).and_then(|p| p.tree()).map_err(backend)?),
        };
        let diff = self
            .repo
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), None)
            .map_err(backend)?;
        let mut out = Vec::new();
        for delta in diff.deltas() {
            out.push(FileChange {
                path: delta_path(&delta)?,
                before: self.content(delta.old_file())?,
                after: self.content(delta.new_file())?,
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
}

/// The tree mode of an index entry's mode (git keeps only these).
fn file_mode(mode: u32) -> git2::FileMode {
    match mode {
        0o100755 => git2::FileMode::BlobExecutable,
        0o120000 => git2::FileMode::Link,
        0o160000 => git2::FileMode::Commit,
        _ => git2::FileMode::Blob,
    }
}

/// Removes a path from the index, with everything under it when it was a folder.
fn unstage(index: &mut git2::Index, path: &str) {
    let p = Path::new(path);
    // Either may find nothing to remove: the path was never recorded.
    let _ = index.remove_path(p);
    let _ = index.remove_dir(p, 0);
}

/// The memory path a diff entry is about (its new path, or its old one when it was removed).
fn delta_path(delta: &git2::DiffDelta<'_>) -> Result<MemPath, StoreError> {
    let path = delta
        .new_file()
        .path()
        .or(delta.old_file().path())
        .and_then(|p| p.to_str())
        .unwrap_or_default();
    MemPath::parse_file(path).map_err(|e| StoreError::InvalidPath(e.to_string()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn files_of(git: &Git, oid: Oid) -> Vec<String> {
        let commit = git.repo.find_commit(oid).unwrap();
        let mut out = Vec::new();
        commit
            .tree()
            .unwrap()
            .walk(git2::TreeWalkMode::PreOrder, |dir, e| {
                if e.kind() == Some(git2::ObjectType::Blob) {
                    out.push(format!("{dir}{}", e.name().unwrap_or_default()));
                }
                git2::TreeWalkResult::Ok
            })
            .unwrap();
        out
    }

    #[test]
    fn commit_paths_stages_only_what_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = Timestamp::from_second(1_796_032_800).unwrap();
        std::fs::write(root.join("core.md"), "").unwrap();
        let git = Git::init(root, now).unwrap();
        let me = Actor::default();
        std::fs::create_dir_all(root.join("notes/sub")).unwrap();
        std::fs::write(root.join("notes/a.md"), "a\n").unwrap();
        std::fs::write(root.join("notes/sub/b.md"), "b\n").unwrap();
        std::fs::write(root.join("hand.md"), "by hand\n").unwrap();
        // A folder path stages the files under it; a file that is not named stays out.
        let one = git
            .commit_paths(&me, "write notes\n", now, &["notes".into()])
            .unwrap()
            .unwrap();
        assert_eq!(
            files_of(&git, one),
            ["core.md", "notes/a.md", "notes/sub/b.md"]
        );
        // A path that is gone is removed with everything under it; an ignored new file stays out.
        std::fs::remove_dir_all(root.join("notes/sub")).unwrap();
        std::fs::write(root.join(".x.tmp"), "temp\n").unwrap();
        let two = git
            .commit_paths(&me, "rm\n", now, &["notes/sub".into(), ".x.tmp".into()])
            .unwrap()
            .unwrap();
        assert_eq!(files_of(&git, two), ["core.md", "notes/a.md"]);
        // Nothing changed at the paths: no commit.
        assert_eq!(
            git.commit_paths(&me, "noop\n", now, &["notes/a.md".into()])
                .unwrap(),
            None
        );
        // The file left out is what the whole-tree walk finds as a hand edit.
        let hand = git.commit_hand_edits(now).unwrap().unwrap();
        assert_eq!(files_of(&git, hand), ["core.md", "hand.md", "notes/a.md"]);
    }

    #[test]
    fn a_symlinked_folder_on_the_way_falls_back_to_the_whole_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let now = Timestamp::from_second(1_796_032_800).unwrap();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::os::unix::fs::symlink("real", root.join("link")).unwrap();
        let git = Git::init(root, now).unwrap();
        std::fs::write(root.join("real/x.md"), "x\n").unwrap();
        let oid = git
            .commit_paths(&Actor::default(), "write\n", now, &["link/x.md".into()])
            .unwrap()
            .unwrap();
        // The walk records the real file, and the link as a link.
        assert_eq!(files_of(&git, oid), ["link", "real/x.md"]);
    }
}
