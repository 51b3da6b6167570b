//! `memdir forget` on a folder: history is rewritten with libgit2 so that no commit, tree or
//! blob reachable from any ref still holds what is forgotten, reflogs are expired and every
//! object the new history does not reach is removed from `.git/objects`.
//!
//! # Why a kill at any point leaves the old history or the new one
//!
//! The rewrite runs in steps, each of which leaves a repository `git fsck` accepts:
//!
//! 1. Every new object (blobs without the lines, trees, commits, annotated tags, and the commit
//!    that records the forget) is written to an in-memory object database (libgit2's
//!    mempack), never to `.git/objects`. A kill here leaves nothing behind.
//! 2. One pack of every object the new history reaches is written into a temp folder inside
//!    `.git`, then renamed into `objects/pack/`, the `.pack` before its `.idx` (git reads a pack
//!    only through its `.idx`). A kill here leaves the old history with a spare pack.
//! 3. The refs are moved to the new tips, then git's index is rebuilt from the new `HEAD` tree.
//!    From the first ref moved, the new history is live; every object it or the index needs is
//!    in the new pack, and the old objects are still there for anything still pointing at them.
//! 4. The reflogs are deleted (they name old commits), then every pack but the new one and every
//!    loose object is removed. Nothing live needs them any more.
//!
//! A kill after step 3 began leaves the new history with old objects still on disk: the
//! forgotten bytes are unreachable but not yet gone. Running forget again finishes the job:
//! it always repacks and prunes, even when there is nothing left to rewrite.
//!
//! What this cannot reach: clones and copies someone made before, backups, and the file
//! system's own free blocks.

use crate::git::repo::{Git, backend};
use git2::{ObjectType, Oid, Repository, Signature, Time};
use memdir_core::forget::{Forget, Scrub};
use memdir_store::StoreError;
use memdir_store::history::{Change, ForgetReport, Rewritten};
use std::collections::HashMap;
use std::path::Path;

/// The temp folder inside `.git` the new pack is written to before it is moved in.
const TMP_DIR: &str = "memdir-forget.tmp";

fn io(what: &str, e: std::io::Error) -> StoreError {
    StoreError::Unavailable(format!("git: {what}: {e}"))
}

/// Rewrites trees and blobs, each once.
struct Rewriter<'r> {
    repo: &'r Repository,
    forget: &'r Forget,
    /// (tree, its folder) → the rewritten tree, `None` when nothing is left in it.
    trees: HashMap<(Oid, String), Option<Oid>>,
    /// (blob, whether the forget covers its path) → the rewritten blob, `None`: dropped.
    blobs: HashMap<(Oid, bool), Option<Oid>>,
    versions: usize,
    lines: usize,
}

impl Rewriter<'_> {
    fn blob(&mut self, id: Oid, path: &str) -> Result<Option<Oid>, StoreError> {
        let covered = self.forget.covers(path);
        if !covered {
            return Ok(Some(id));
        }
        if let Some(done) = self.blobs.get(&(id, covered)) {
            return Ok(*done);
        }
        let blob = self.repo.find_blob(id).map_err(backend)?;
        let out = match self.forget.scrub(path, blob.content()) {
            Scrub::Keep => Some(id),
            Scrub::Drop => {
                self.versions += 1;
                None
            }
            Scrub::Rewrite(bytes, n) => {
                self.versions += 1;
                self.lines += n;
                Some(self.repo.blob(&bytes).map_err(backend)?)
            }
        };
        self.blobs.insert((id, covered), out);
        Ok(out)
    }

    fn tree(&mut self, id: Oid, dir: &str) -> Result<Option<Oid>, StoreError> {
        let key = (id, dir.to_string());
        if let Some(done) = self.trees.get(&key) {
            return Ok(*done);
        }
        let tree = self.repo.find_tree(id).map_err(backend)?;
        let mut entries = Vec::with_capacity(tree.len());
        let mut changed = false;
        for e in tree.iter() {
            let name = e.name_bytes().to_vec();
            let path = format!("{dir}{}", String::from_utf8_lossy(&name));
            let new = match e.kind() {
                Some(ObjectType::Tree) => self.tree(e.id(), &format!("{path}/"))?,
                Some(ObjectType::Blob) => self.blob(e.id(), &path)?,
                // A submodule's commit: not ours to rewrite.
                _ => Some(e.id()),
            };
            changed |= new != Some(e.id());
            if let Some(n) = new {
                entries.push((name, n, e.filemode_raw()));
            }
        }
        let out = if !changed {
            Some(id)
        } else if entries.is_empty() {
            None
        } else {
            let mut b = self.repo.treebuilder(None).map_err(backend)?;
            for (name, oid, mode) in &entries {
                b.insert(name.as_slice(), *oid, *mode).map_err(backend)?;
            }
            Some(b.write().map_err(backend)?)
        };
        self.trees.insert(key, out);
        Ok(out)
    }

    /// True when `c` holds, and its first parent does not, a file version that was rewritten
    /// or dropped.
    fn introduced(&self, c: &git2::Commit<'_>) -> Result<bool, StoreError> {
        let tree = c.tree().map_err(backend)?;
        let parent = match c.parent(0) {
            Ok(p) => Some(p.tree().map_err(backend)?),
            Err(_) => None,
        };
        let diff = self
            .repo
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), None)
            .map_err(backend)?;
        Ok(diff.deltas().any(|d| {
            let id = d.new_file().id();
            self.blobs
                .get(&(id, true))
                .is_some_and(|new| *new != Some(id))
        }))
    }

    /// The rewritten tree of a commit: an empty tree when nothing is left.
    fn root(&mut self, id: Oid) -> Result<Oid, StoreError> {
        match self.tree(id, "")? {
            Some(t) => Ok(t),
            None => self
                .repo
                .treebuilder(None)
                .and_then(|b| b.write())
                .map_err(backend),
        }
    }
}

/// A ref to move: its name, where it points now and where it will.
struct Move {
    name: String,
    old: Oid,
    new: Oid,
}

impl Git {
    /// Rewrites history without what `forget` names, records `record` on top of `HEAD`, and
    /// prunes every object the new history does not reach (see the module docs for the order
    /// and why a kill leaves a sound repository). With `dry_run`, nothing is written.
    pub fn forget(
        &self,
        forget: &Forget,
        record: &Change<'_>,
        dry_run: bool,
    ) -> Result<ForgetReport, StoreError> {
        let dot_git = self.repo.path().to_path_buf();
        if !dry_run {
            // A forget killed before it moved its pack in leaves the temp folder.
            remove_dir_if_there(&dot_git.join(TMP_DIR))?;
        }
        // A handle of its own: its new objects go to memory until the pack is written.
        let repo = Repository::open(&dot_git).map_err(backend)?;
        let odb = repo.odb().map_err(backend)?;
        let _mempack = odb.add_new_mempack_backend(1000).map_err(backend)?;
        let mut rw = Rewriter {
            repo: &repo,
            forget,
            trees: HashMap::new(),
            blobs: HashMap::new(),
            versions: 0,
            lines: 0,
        };

        // Every ref and where its commits are.
        let mut tips: Vec<(String, Oid)> = Vec::new();
        let mut others: Vec<Oid> = Vec::new();
        for r in repo.references().map_err(backend)? {
            let r = r.map_err(backend)?;
            let (Some(name), Some(target)) = (r.name().ok().map(str::to_string), r.target()) else {
                continue; // symbolic (HEAD, origin/HEAD): follows the ref it names
            };
            tips.push((name, target));
        }
        if repo.head_detached().unwrap_or(false)
            && let Some(t) = repo.head().ok().and_then(|h| h.target())
        {
            tips.push(("HEAD".to_string(), t));
        }
        let mut walk = repo.revwalk().map_err(backend)?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
            .map_err(backend)?;
        let mut pushed = false;
        for (_, t) in &tips {
            match repo
                .find_object(*t, None)
                .map_err(backend)?
                .peel_to_commit()
            {
                Ok(c) => {
                    walk.push(c.id()).map_err(backend)?;
                    pushed = true;
                }
                Err(_) => others.push(*t),
            }
        }

        // Parents before children, so each commit's parents are already mapped.
        let mut map: HashMap<Oid, Oid> = HashMap::new();
        let mut report = ForgetReport::default();
        if pushed {
            for oid in walk {
                let oid = oid.map_err(backend)?;
                let c = repo.find_commit(oid).map_err(backend)?;
                let tree = rw.root(c.tree_id())?;
                let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
                let scrubbed = forget.scrub_message(&message);
                let parents: Vec<Oid> = c
                    .parent_ids()
                    .map(|p| map.get(&p).copied().unwrap_or(p))
                    .collect();
                // Listed when this commit itself brought in a version that changed (or its
                // message held the text), not when it only carries an earlier one along.
                let own_change =
                    scrubbed.is_some() || (tree != c.tree_id() && rw.introduced(&c)?);
                if !own_change && parents.iter().eq(c.parent_ids().collect::<Vec<_>>().iter()) {
                    map.insert(oid, oid);
                    continue;
                }
                let tree = repo.find_tree(tree).map_err(backend)?;
                let parents: Vec<git2::Commit> = parents
                    .iter()
                    .map(|p| repo.find_commit(*p))
                    .collect::<Result<_, _>>()
                    .map_err(backend)?;
                let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
                let new = repo
                    .commit(
                        None,
                        &c.author(),
                        &c.committer(),
                        scrubbed.as_deref().unwrap_or(&message),
                        &tree,
                        &parent_refs,
                    )
                    .map_err(backend)?;
                map.insert(oid, new);
                if own_change {
                    report.rewritten.push(Rewritten {
                        old: oid.to_string(),
                        new: new.to_string(),
                    });
                }
            }
        }
        report.versions = rw.versions;
        report.lines = rw.lines;
        if dry_run {
            return Ok(report);
        }

        // Where each ref goes: commits through the map, annotated tags as new tags.
        let mut moves = Vec::new();
        for (name, old) in &tips {
            let obj = repo.find_object(*old, None).map_err(backend)?;
            let new = match obj.kind() {
                Some(ObjectType::Commit) => map.get(old).copied().unwrap_or(*old),
                Some(ObjectType::Tag) => {
                    let tag = obj
                        .as_tag()
                        .ok_or_else(|| backend_text("a tag that is not one"))?;
                    let Ok(target) = tag.target().and_then(|t| t.peel_to_commit()) else {
                        continue;
                    };
                    let new_target = map.get(&target.id()).copied().unwrap_or(target.id());
                    if new_target == target.id() {
                        *old
                    } else {
                        let new_obj = repo.find_object(new_target, None).map_err(backend)?;
                        let tagger = match tag.tagger() {
                            Some(t) => t.to_owned(),
                            None => memdir_sig(record)?,
                        };
                        let text = tag.message().ok().flatten().unwrap_or_default();
                        let text = forget
                            .scrub_message(text)
                            .unwrap_or_else(|| text.to_string());
                        repo.tag_annotation_create(
                            tag.name().ok().unwrap_or("tag"),
                            &new_obj,
                            &tagger,
                            &text,
                        )
                        .map_err(backend)?
                    }
                }
                _ => *old,
            };
            moves.push(Move {
                name: name.clone(),
                old: *old,
                new,
            });
        }

        // The change that records the forget, on HEAD's new tip.
        let head_ref = match repo
            .find_reference("HEAD")
            .map_err(backend)?
            .symbolic_target()
        {
            Ok(Some(t)) => t.to_string(),
            _ => "HEAD".to_string(),
        };
        if let Some(m) = moves.iter_mut().find(|m| m.name == head_ref) {
            let parent = repo.find_commit(m.new).map_err(backend)?;
            let tree = parent.tree().map_err(backend)?;
            let time = Time::new(record.at.as_second(), 0);
            let email = format!(
                "{}@memdir.invalid",
                record.actor.writer.replace(char::is_whitespace, "-")
            );
            let author = Signature::new(&record.actor.writer, &email, &time).map_err(backend)?;
            let id = repo
                .commit(
                    None,
                    &author,
                    &memdir_sig(record)?,
                    &record.message(),
                    &tree,
                    &[&parent],
                )
                .map_err(backend)?;
            m.new = id;
            report.recorded = Some(id.to_string());
        }

        // Step 2: one pack of everything the new history reaches, moved in .pack first.
        let tmp = dot_git.join(TMP_DIR);
        std::fs::create_dir_all(&tmp).map_err(|e| io("temp folder", e))?;
        let mut pb = repo.packbuilder().map_err(backend)?;
        let mut reach = repo.revwalk().map_err(backend)?;
        let mut any = false;
        for m in &moves {
            let obj = repo.find_object(m.new, None).map_err(backend)?;
            if obj.kind() == Some(ObjectType::Tag) {
                pb.insert_object(m.new, None).map_err(backend)?;
            }
            if let Ok(c) = obj.peel_to_commit() {
                reach.push(c.id()).map_err(backend)?;
                any = true;
            }
        }
        if any {
            pb.insert_walk(&mut reach).map_err(backend)?;
        }
        for o in &others {
            pb.insert_recursive(*o, None).map_err(backend)?;
        }
        pb.write(&tmp, 0o444).map_err(backend)?;
        let pack_name = match pb.name().map_err(backend)? {
            Some(n) => format!("pack-{n}"),
            None => return Err(backend_text("the new pack has no name")),
        };
        let pack_dir = dot_git.join("objects/pack");
        std::fs::create_dir_all(&pack_dir).map_err(|e| io("objects/pack", e))?;
        let mut exts: Vec<String> = std::fs::read_dir(&tmp)
            .map_err(|e| io("temp folder", e))?
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| n.starts_with(&pack_name))
            .collect();
        // The .idx last: git sees a pack only through it.
        exts.sort_by_key(|n| n.ends_with(".idx"));
        for name in &exts {
            sync_file(&tmp.join(name))?;
            std::fs::rename(tmp.join(name), pack_dir.join(name))
                .map_err(|e| io("moving the new pack in", e))?;
        }
        sync_dir(&pack_dir)?;

        // Step 3: the refs, then the index.
        for m in &moves {
            if m.new == m.old {
                continue;
            }
            if m.name == "HEAD" {
                repo.set_head_detached(m.new).map_err(backend)?;
            } else {
                repo.reference(&m.name, m.new, true, "memdir forget")
                    .map_err(backend)?;
            }
        }
        if let Ok(tree) = repo.head().and_then(|h| h.peel_to_tree()) {
            let mut index = repo.index().map_err(backend)?;
            index.read_tree(&tree).map_err(backend)?;
            index.write().map_err(backend)?;
        }

        // Step 4: reflogs, then every object outside the new pack.
        remove_dir_if_there(&dot_git.join("logs"))?;
        prune(&dot_git, &pack_name)?;
        remove_dir_if_there(&tmp)?;
        Ok(report)
    }

    /// Records `change` as a commit on `HEAD` with `HEAD`'s tree (a change that wrote no file).
    pub fn commit_empty(&self, change: &Change<'_>) -> Result<Option<Oid>, StoreError> {
        let Ok(parent) = self.repo.head().and_then(|h| h.peel_to_commit()) else {
            return Ok(None);
        };
        let tree = parent.tree().map_err(backend)?;
        let time = Time::new(change.at.as_second(), 0);
        let email = format!(
            "{}@memdir.invalid",
            change.actor.writer.replace(char::is_whitespace, "-")
        );
        let author = Signature::new(&change.actor.writer, &email, &time).map_err(backend)?;
        let id = self
            .repo
            .commit(
                Some("HEAD"),
                &author,
                &memdir_sig(change)?,
                &change.message(),
                &tree,
                &[&parent],
            )
            .map_err(backend)?;
        Ok(Some(id))
    }
}

fn backend_text(what: &str) -> StoreError {
    StoreError::Unavailable(format!("git: {what}"))
}

fn memdir_sig(change: &Change<'_>) -> Result<Signature<'static>, StoreError> {
    Signature::new(
        "memdir",
        "memdir@memdir.invalid",
        &Time::new(change.at.as_second(), 0),
    )
    .map_err(backend)
}

fn remove_dir_if_there(dir: &Path) -> Result<(), StoreError> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(&format!("removing {}", dir.display()), e)),
    }
}

fn sync_file(path: &Path) -> Result<(), StoreError> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| io("syncing the new pack", e))
}

fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    std::fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| io("syncing objects/pack", e))
}

/// Removes the caches that list objects (commit-graph, multi-pack index, `info/packs`), which
/// would name objects that are gone, then every pack but `keep` (its `.idx` first, so git stops
/// reading it before its data goes) and every loose object.
fn prune(dot_git: &Path, keep: &str) -> Result<(), StoreError> {
    let objects = dot_git.join("objects");
    let pack_dir = objects.join("pack");
    // The caches first: a commit-graph naming a commit that is gone fails `git fsck` (found
    // by `memdir-bench forget-crash`: a kill between the two steps left one).
    for cache in ["info/packs", "info/commit-graph"] {
        remove_file_if_there(&objects.join(cache))?;
    }
    remove_dir_if_there(&objects.join("info/commit-graphs"))?;
    for midx in [
        "multi-pack-index",
        "multi-pack-index.bitmap",
        "multi-pack-index.rev",
    ] {
        remove_file_if_there(&pack_dir.join(midx))?;
    }
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&pack_dir)
        .map_err(|e| io("objects/pack", e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with(&format!("{keep}.")))
        })
        .collect();
    files.sort_by_key(|p| p.extension().is_none_or(|e| e != "idx"));
    for f in files {
        if f.is_dir() {
            remove_dir_if_there(&f)?;
        } else {
            remove_file_if_there(&f)?;
        }
    }
    for e in std::fs::read_dir(&objects)
        .map_err(|e| io("objects", e))?
        .flatten()
    {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
            remove_dir_if_there(&e.path())?;
        }
    }
    Ok(())
}

fn remove_file_if_there(path: &Path) -> Result<(), StoreError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(&format!("removing {}", path.display()), e)),
    }
}
