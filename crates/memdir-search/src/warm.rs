//! Warm search: a long-lived process's copy of the searchable files, kept current by inotify.
//!
//! A one-shot search walks the folder and reads every file in scope, about 1,200 opens and
//! reads on a year of memory, which is most of its time. A process that searches many times
//! (the MCP server, `memdir serve`, a library user) can keep the files' bytes in memory
//! instead: the first search reads them, and every later search first drains the kernel's
//! queue of change events for the folder and re-reads only what changed.
//!
//! Why this never serves stale bytes: the kernel queues an event before the write that caused
//! it returns, and the queue is drained under the same lock that guards the copies, before any
//! copy is used. So a search sees every write that finished before it began, from this
//! process, another process or an editor. A copy is taken under that lock too, after the
//! drain, so a write racing with the read leaves an event that the next search drains. If the
//! queue overflows, or a watch cannot be added, the copy starts over from a fresh walk; where
//! inotify is unavailable, searches read the disk as one-shot searches do.
//!
//! What is searched is exactly what [`walk::files`](super::walk::files) finds: regular files,
//! no symlinks followed, `.memdir/`, `.git/` and in-flight temp files left out.

use super::walk::{FileRef, Held, Scope, open_file};
use memdir_folder::feed::{Feed, Kind, Lost};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Memory for held files at most (their bytes and ASCII-folded copies); files past this are
/// read from disk on every search. The cap is on what is held: a file is measured before it is
/// read, and never read past what still fits, so one huge file cannot make the copy (or its
/// transient read buffer) larger than this.
const MAX_BYTES: usize = 512 << 20;

/// Generations are drawn from one counter, so a number never means two different states, even
/// across a start-over.
static GENERATION: AtomicU64 = AtomicU64::new(0);

fn next_generation() -> u64 {
    GENERATION.fetch_add(1, Ordering::Relaxed) + 1
}

/// The in-memory copy of a folder's searchable files, kept up to date with inotify, shared by
/// the searches of one memory. Cheap to create: nothing happens until the first search.
#[derive(Default)]
pub struct Warm {
    state: Mutex<Option<State>>,
    /// Set when the copy could not be started (no inotify here, or the watch limit reached):
    /// searches then read the disk without trying again each time.
    unavailable: AtomicBool,
    /// The held files' bytes as of the last search, readable without the lock.
    held: std::sync::atomic::AtomicUsize,
    /// The folder's keyword index, open between searches.
    pub(crate) keyword: crate::keyword::Kept,
}

impl std::fmt::Debug for Warm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Warm")
    }
}

struct State {
    feed: Feed,
    files: BTreeMap<String, Entry>,
    /// Memory taken by the held files in `files`.
    bytes: usize,
    /// Bumped by every change seen; equal generations mean the same files and bytes.
    generation: u64,
    /// What other caches (the keyword index) last synced against, by name.
    stamps: HashMap<&'static str, u64>,
    /// The list of every file with its bytes, as last handed out; dropped on any change.
    everything: Option<Arc<Vec<FileRef>>>,
}

struct Entry {
    file: FileRef,
}

impl Warm {
    /// The files in scope, in path order, each with its bytes where they are held in memory;
    /// `None` when warm search cannot run here (no inotify, or the watch limit is reached), and
    /// the caller walks the disk instead. Also returns the copy's generation.
    pub(crate) fn files(&self, root: &Path, scope: &Scope) -> Option<(Arc<Vec<FileRef>>, u64)> {
        self.current(root, |state| (state.snapshot(scope), state.generation))
    }

    /// The copy's generation once every queued change is applied: two equal answers mean no
    /// file under `root` changed in between, from this process, another one or an editor (the
    /// kernel queues the event before a write returns). `None` when warm search cannot run
    /// here. Nothing is read: other caches of the same files (the engine's note catalogue)
    /// use it to skip even a listing when nothing changed.
    pub fn generation(&self, root: &Path) -> Option<u64> {
        self.current(root, |state| state.generation)
    }

    /// Runs `f` on the copy of `root` with every queued change applied, starting the copy
    /// (or starting it over) when needed.
    fn current<T>(&self, root: &Path, f: impl FnOnce(&mut State) -> T) -> Option<T> {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if guard.as_ref().is_some_and(|s| s.feed.root() != root) {
            *guard = None;
        }
        if let Some(state) = guard.as_mut()
            && state.drain().is_err()
        {
            *guard = None;
        }
        if guard.is_none() {
            if self.unavailable.load(Ordering::Relaxed) {
                return None;
            }
            *guard = State::start(root).ok();
            if guard.is_none() {
                self.unavailable.store(true, Ordering::Relaxed);
            }
        }
        let Some(state) = guard.as_mut() else {
            self.held.store(0, Ordering::Relaxed);
            return None;
        };
        let out = f(state);
        self.held.store(state.bytes, Ordering::Relaxed);
        Some(out)
    }

    /// Closes the keyword index kept open between searches, if any (the next search opens it
    /// again): for a front end about to delete the cache folder it lives in, or holding too
    /// many open.
    pub fn close_index(&self) {
        self.keyword.clear();
    }

    /// Bytes held in memory as of the last search.
    pub fn held_bytes(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// True if the cache named `key` was last marked at `generation`.
    pub(crate) fn is_stamped(&self, key: &'static str, generation: u64) -> bool {
        let guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .as_ref()
            .is_some_and(|s| s.stamps.get(key) == Some(&generation))
    }

    /// Records that the cache named `key` is in step with the files at `generation`.
    pub(crate) fn stamp(&self, key: &'static str, generation: u64) {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = guard.as_mut() {
            s.stamps.insert(key, generation);
        }
    }
}

impl State {
    /// Watches every folder and lists every file (their bytes are read on first use).
    fn start(root: &Path) -> Result<State, Lost> {
        let mut found = Vec::new();
        let feed = Feed::start(root, &mut |f| found.push(f))?;
        let mut state = State {
            feed,
            files: BTreeMap::new(),
            bytes: 0,
            generation: next_generation(),
            stamps: HashMap::new(),
            everything: None,
        };
        for f in found {
            state.add_file(f);
        }
        Ok(state)
    }

    fn add_file(&mut self, rel: String) {
        self.forget(&rel);
        let file = FileRef::new(self.feed.root(), rel.clone());
        self.files.insert(rel, Entry { file });
    }

    fn forget(&mut self, rel: &str) {
        if let Some(e) = self.files.remove(rel)
            && let Some(h) = e.file.held
        {
            self.bytes -= h.size();
        }
    }

    fn drop_bytes(&mut self, rel: &str) {
        if let Some(e) = self.files.get_mut(rel)
            && let Some(h) = e.file.held.take()
        {
            self.bytes -= h.size();
        }
    }

    /// Drops a folder that was deleted or moved away, with its files.
    fn forget_dir(&mut self, rel: &str) {
        let prefix = format!("{rel}/");
        let gone: Vec<String> = self
            .files
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.clone())
            .collect();
        for k in gone {
            self.forget(&k);
        }
    }

    /// Applies every queued change event.
    fn drain(&mut self) -> Result<(), Lost> {
        for ev in self.feed.drain()? {
            self.generation = next_generation();
            self.everything = None;
            if ev.dir {
                // A folder's files that arrived with it follow as events of their own.
                if ev.kind != Kind::Changed {
                    self.forget_dir(&ev.rel);
                }
                continue;
            }
            if ev.kind == Kind::Left {
                self.forget(&ev.rel);
            } else if ev.kind == Kind::Arrived || !self.files.contains_key(&ev.rel) {
                // A new name: a regular file is searched; a symlink or anything else is not.
                match std::fs::symlink_metadata(self.feed.root().join(&ev.rel)) {
                    Ok(m) if m.file_type().is_file() => self.add_file(ev.rel),
                    _ => self.forget(&ev.rel),
                }
            } else {
                self.drop_bytes(&ev.rel);
            }
        }
        Ok(())
    }

    /// The files in scope with their bytes, reading the ones not held yet. The list of every
    /// file is kept and handed out again until something changes.
    fn snapshot(&mut self, scope: &Scope) -> Arc<Vec<FileRef>> {
        if scope.is_everything() {
            if let Some(all) = &self.everything {
                return all.clone();
            }
            let all = Arc::new(self.read_in(scope));
            // Only a list with every file's bytes is worth keeping (past the memory cap, some
            // are read from disk each time).
            if all.iter().all(|f| f.held.is_some()) {
                self.everything = Some(all.clone());
            }
            return all;
        }
        Arc::new(self.read_in(scope))
    }

    fn read_in(&mut self, scope: &Scope) -> Vec<FileRef> {
        let mut out = Vec::new();
        let mut bytes = self.bytes;
        for e in self.files.values_mut() {
            if !scope.keeps(&e.file.rel, e.file.date) {
                continue;
            }
            if e.file.held.is_none()
                && let Some(b) = read(&e.file.abs, MAX_BYTES.saturating_sub(bytes))
            {
                let held = Held::new(b);
                bytes += held.size();
                e.file.held = Some(Arc::new(held));
            }
            out.push(e.file.clone());
        }
        self.bytes = bytes;
        out
    }
}

/// A file's bytes if holding them fits in `room` bytes of memory. Held bytes cost twice their
/// length (the bytes and their folded copy), so at most `room / 2` bytes are read: the size is
/// checked first, and a file that grows past it while being read is given up, not held.
fn read(abs: &Path, room: usize) -> Option<Vec<u8>> {
    let most = room / 2;
    let f = open_file(abs).ok()?;
    let len = usize::try_from(f.metadata().ok()?.len()).ok()?;
    if len > most {
        return None;
    }
    let mut b = Vec::with_capacity(len);
    f.take(u64::try_from(most).ok()?.saturating_add(1))
        .read_to_end(&mut b)
        .ok()?;
    (b.len() <= most).then_some(b)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Issue 13, item 13: the cap was checked before a file was read, so one file larger than
    /// the cap was read whole and held twice. A sparse file stands in for a big one: measured,
    /// it is never read.
    #[test]
    fn a_file_larger_than_the_cap_is_never_held() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("small.md"), "alpha\n").unwrap();
        let big = std::fs::File::create(dir.path().join("big.md")).unwrap();
        big.set_len(900 << 20).unwrap();
        let warm = Warm::default();
        let (files, _) = warm.files(dir.path(), &Scope::everything()).unwrap();
        let held = |rel: &str| files.iter().find(|f| f.rel == rel).unwrap().held.is_some();
        assert!(!held("big.md"), "a 900 MiB file was read into memory");
        assert!(held("small.md"));
        let guard = warm.state.lock().unwrap();
        assert!(guard.as_ref().unwrap().bytes <= MAX_BYTES);
    }

    #[test]
    fn a_read_stops_at_the_room_left() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.md");
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read(&p, 20).unwrap().len(), 10);
        assert!(read(&p, 19).is_none());
        assert!(read(&p, 0).is_none());
    }
}
