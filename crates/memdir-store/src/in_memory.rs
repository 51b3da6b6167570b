//! A memory held in process memory: a second, real backend of the storage traits, for fast
//! engine tests and for embedding memdir without a disk.
//!
//! [`InMemoryStore`] keeps files in a sorted map (folders are implied by paths, or made empty with
//! `create_dir`); clones share the same memory, as two servers share one database, so locks
//! taken through one clone exclude the other. [`InMemoryHistory`] records a snapshot of every file
//! per change, which makes history, blame and revert plain comparisons.

use crate::backend::Backend;
use crate::history::{
    BlameLine, Change, Changes, FileChange, ForgetReport, History, HistoryEntry, Rewritten,
};
use crate::paths;
use crate::store::{
    Entry, EntryKind, LockGuard, LockName, Locks, Precondition, Reentry, Store, StoreError,
    Version, stale,
};
use jiff::Timestamp;
use memdir_core::forget::{Forget, Scrub};
use memdir_core::path::MemPath;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// One file: its bytes and when it last changed (Unix milliseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
struct File {
    data: Vec<u8>,
    modified_ms: i64,
}

#[derive(Debug, Default)]
struct Files {
    files: BTreeMap<MemPath, File>,
    /// Folders made explicitly (folders that hold files are implied).
    dirs: BTreeSet<MemPath>,
    meta: BTreeMap<String, Vec<u8>>,
}

#[derive(Debug, Default)]
struct Inner {
    files: Mutex<Files>,
    /// Locks held, by name.
    locks: Mutex<HashSet<String>>,
    released: Condvar,
}

/// Files in process memory. Cloning gives another handle to the same memory.
#[derive(Debug, Clone, Default)]
pub struct InMemoryStore {
    inner: Arc<Inner>,
}

fn now_ms() -> i64 {
    Timestamp::now().as_millisecond()
}

fn poisoned() -> StoreError {
    StoreError::Unavailable(
        "the in-memory store is unusable after a panic in another thread".into(),
    )
}

impl InMemoryStore {
    /// An empty memory.
    pub fn new() -> InMemoryStore {
        InMemoryStore::default()
    }

    /// This store with a history of its own, as a [`Backend`].
    pub fn backend(&self) -> Backend {
        Backend {
            store: Arc::new(self.clone()),
            history: Some(Arc::new(InMemoryHistory::new(self))),
            vectors: None,
        }
    }

    fn files(&self) -> Result<MutexGuard<'_, Files>, StoreError> {
        self.inner.files.lock().map_err(|_| poisoned())
    }
}

impl Files {
    fn is_dir(&self, p: &MemPath) -> bool {
        p.is_root()
            || self.dirs.contains(p)
            || self
                .files
                .keys()
                .chain(self.dirs.iter())
                .any(|f| f != p && f.starts_with(p))
    }

    fn kind(&self, p: &MemPath) -> Option<EntryKind> {
        if self.files.contains_key(p) {
            Some(EntryKind::File)
        } else if self.is_dir(p) {
            Some(EntryKind::Dir)
        } else {
            None
        }
    }

    /// Refuses a write whose parent path runs through a file.
    fn check_parents(&self, p: &MemPath) -> Result<(), StoreError> {
        let mut parent = p.parent();
        while let Some(d) = parent {
            if d.is_root() {
                break;
            }
            if self.files.contains_key(&d) {
                return Err(paths::part_is_file(p));
            }
            parent = d.parent();
        }
        Ok(())
    }

    /// Every path at or under `p`: files and explicit folders.
    fn under(&self, p: &MemPath) -> (Vec<MemPath>, Vec<MemPath>) {
        let files = self
            .files
            .keys()
            .filter(|f| f.starts_with(p))
            .cloned()
            .collect();
        let dirs = self
            .dirs
            .iter()
            .filter(|d| d.starts_with(p))
            .cloned()
            .collect();
        (files, dirs)
    }
}

/// `path` moved from under `from` to under `to`.
fn moved(path: &MemPath, from: &MemPath, to: &MemPath) -> Result<MemPath, StoreError> {
    let rest = path
        .as_str()
        .strip_prefix(from.as_str())
        .unwrap_or_default()
        .trim_start_matches('/');
    if rest.is_empty() {
        Ok(to.clone())
    } else {
        MemPath::parse(&format!("{to}/{rest}")).map_err(|e| StoreError::InvalidPath(e.to_string()))
    }
}

struct InMemoryLock {
    inner: Arc<Inner>,
    name: String,
    _held: Reentry,
}

impl LockGuard for InMemoryLock {}

impl Drop for InMemoryLock {
    fn drop(&mut self) {
        if let Ok(mut held) = self.inner.locks.lock() {
            held.remove(&self.name);
        }
        self.inner.released.notify_all();
    }
}

impl Locks for InMemoryStore {
    fn lock(&self, name: LockName<'_>) -> Result<Box<dyn LockGuard>, StoreError> {
        let key = name.to_string();
        let reentry = Reentry::enter(&format!("{:p}", Arc::as_ptr(&self.inner)), &key, &name)?;
        let mut held = self.inner.locks.lock().map_err(|_| poisoned())?;
        while held.contains(&key) {
            held = self.inner.released.wait(held).map_err(|_| poisoned())?;
        }
        held.insert(key.clone());
        Ok(Box::new(InMemoryLock {
            inner: self.inner.clone(),
            name: key,
            _held: reentry,
        }))
    }
}

impl Store for InMemoryStore {
    fn read(&self, path: &MemPath) -> Result<Vec<u8>, StoreError> {
        let f = self.files()?;
        match f.files.get(path) {
            Some(file) => Ok(file.data.clone()),
            None if f.is_dir(path) => Err(paths::is_folder(shown(path))),
            None => Err(StoreError::NotFound(format!("{path} does not exist"))),
        }
    }

    fn write_if(
        &self,
        path: &MemPath,
        data: &[u8],
        pre: &Precondition,
    ) -> Result<Version, StoreError> {
        if path.is_root() {
            return Err(paths::root_refused());
        }
        let mut f = self.files()?;
        f.check_parents(path)?;
        let current = f.files.get(path).map(|c| Version::of(&c.data));
        if current.is_none() && f.is_dir(path) {
            return Err(match pre {
                Precondition::Absent => {
                    StoreError::Conflict(format!("{path} already exists (a folder)"))
                }
                _ => paths::is_folder(path),
            });
        }
        match pre {
            Precondition::Any => {}
            Precondition::Absent if current.is_some() => {
                return Err(StoreError::Conflict(format!("{path} already exists")));
            }
            Precondition::Absent => {}
            Precondition::Matches(want) if current.as_ref() != Some(want) => {
                return Err(stale(path, want, current.as_ref()));
            }
            Precondition::Matches(_) => {}
        }
        f.files.insert(
            path.clone(),
            File {
                data: data.to_vec(),
                modified_ms: now_ms(),
            },
        );
        Ok(Version::of(data))
    }

    fn append(&self, path: &MemPath, data: &[u8]) -> Result<(), StoreError> {
        if path.is_root() {
            return Err(paths::root_refused());
        }
        let mut f = self.files()?;
        f.check_parents(path)?;
        if !f.files.contains_key(path) && f.is_dir(path) {
            return Err(paths::is_folder(path));
        }
        let file = f.files.entry(path.clone()).or_insert(File {
            data: Vec::new(),
            modified_ms: 0,
        });
        file.data.extend_from_slice(data);
        file.modified_ms = now_ms();
        Ok(())
    }

    fn list(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        let f = self.files()?;
        match f.kind(dir) {
            None => {
                return Err(StoreError::NotFound(format!(
                    "{} does not exist",
                    shown(dir)
                )));
            }
            Some(EntryKind::File) => {
                return Err(paths::part_is_file(dir));
            }
            Some(EntryKind::Dir) => {}
        }
        let mut out: BTreeMap<MemPath, Entry> = BTreeMap::new();
        let child = |p: &MemPath| -> Option<MemPath> {
            let rest = if dir.is_root() {
                p.as_str()
            } else {
                p.as_str().strip_prefix(dir.as_str())?.strip_prefix('/')?
            };
            let first = rest.split('/').next()?;
            dir.join(first).ok()
        };
        for (p, file) in &f.files {
            let Some(c) = child(p) else { continue };
            let entry = if &c == p {
                Entry {
                    path: c.clone(),
                    kind: EntryKind::File,
                    size: file.data.len() as u64,
                    modified_ms: file.modified_ms,
                }
            } else {
                dir_entry(c.clone())
            };
            out.entry(c).or_insert(entry);
        }
        for d in &f.dirs {
            if let Some(c) = child(d) {
                out.entry(c.clone()).or_insert_with(|| dir_entry(c));
            }
        }
        Ok(out.into_values().collect())
    }

    fn stat(&self, path: &MemPath) -> Result<Option<Entry>, StoreError> {
        let f = self.files()?;
        Ok(match f.files.get(path) {
            Some(file) => Some(Entry {
                path: path.clone(),
                kind: EntryKind::File,
                size: file.data.len() as u64,
                modified_ms: file.modified_ms,
            }),
            None if f.is_dir(path) => Some(dir_entry(path.clone())),
            None => None,
        })
    }

    fn remove(&self, path: &MemPath) -> Result<(), StoreError> {
        if path.is_root() {
            return Err(paths::root_refused());
        }
        let mut f = self.files()?;
        if f.kind(path).is_none() {
            return Err(StoreError::NotFound(format!("{path} does not exist")));
        }
        let (files, dirs) = f.under(path);
        for p in files {
            f.files.remove(&p);
        }
        for d in dirs {
            f.dirs.remove(&d);
        }
        // The parent stays a folder even when it is now empty, as on disk.
        if let Some(parent) = path.parent().filter(|p| !p.is_root()) {
            f.dirs.insert(parent);
        }
        Ok(())
    }

    fn rename(&self, from: &MemPath, to: &MemPath) -> Result<(), StoreError> {
        if from.is_root() || to.is_root() {
            return Err(paths::root_refused());
        }
        if to.starts_with(from) {
            return Err(StoreError::InvalidPath(format!(
                "cannot move {from} into itself"
            )));
        }
        let mut f = self.files()?;
        if f.kind(from).is_none() {
            return Err(StoreError::NotFound(format!("{from} does not exist")));
        }
        if f.kind(to).is_some() {
            return Err(paths::exists_already(to));
        }
        f.check_parents(to)?;
        let (files, dirs) = f.under(from);
        let was_dir = f.kind(from) == Some(EntryKind::Dir);
        let mut moved_files = Vec::new();
        for p in files {
            let file = f.files.remove(&p);
            moved_files.push((moved(&p, from, to)?, file));
        }
        for (p, file) in moved_files {
            if let Some(file) = file {
                f.files.insert(p, file);
            }
        }
        for d in dirs {
            f.dirs.remove(&d);
            f.dirs.insert(moved(&d, from, to)?);
        }
        if was_dir {
            f.dirs.insert(to.clone());
        }
        if let Some(parent) = from.parent().filter(|p| !p.is_root()) {
            f.dirs.insert(parent);
        }
        Ok(())
    }

    fn create_dir(&self, path: &MemPath) -> Result<(), StoreError> {
        if path.is_root() {
            return Ok(());
        }
        let mut f = self.files()?;
        if f.files.contains_key(path) {
            return Err(StoreError::Conflict(format!("{path} already exists")));
        }
        f.check_parents(path)?;
        f.dirs.insert(path.clone());
        Ok(())
    }

    fn read_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.files()?.meta.get(name).cloned())
    }

    fn write_meta(&self, name: &str, data: &[u8]) -> Result<(), StoreError> {
        self.files()?.meta.insert(name.to_string(), data.to_vec());
        Ok(())
    }
}

fn dir_entry(path: MemPath) -> Entry {
    Entry {
        path,
        kind: EntryKind::Dir,
        size: 0,
        modified_ms: 0,
    }
}

fn shown(p: &MemPath) -> &str {
    if p.is_root() { "/" } else { p.as_str() }
}

/// One recorded change: who, why, when, and every file as it was after it.
#[derive(Debug, Clone)]
struct Record {
    entry: HistoryEntry,
    files: BTreeMap<MemPath, Vec<u8>>,
}

/// A change's id: from its place in history, message, time and writer.
fn record_id(n: usize, message: &str, at: &str, writer: &str) -> String {
    Version::of(format!("{n}\n{message}\n{at}\n{writer}").as_bytes())
        .as_str()
        .to_string()
}

/// The history of a [`InMemoryStore`]: a snapshot of every file per change.
#[derive(Debug)]
pub struct InMemoryHistory {
    store: InMemoryStore,
    records: Mutex<Vec<Record>>,
}

impl InMemoryHistory {
    /// The history of `store` (empty until [`History::start`]).
    pub fn new(store: &InMemoryStore) -> InMemoryHistory {
        InMemoryHistory {
            store: store.clone(),
            records: Mutex::new(Vec::new()),
        }
    }

    fn snapshot(&self) -> Result<BTreeMap<MemPath, Vec<u8>>, StoreError> {
        Ok(self
            .store
            .files()?
            .files
            .iter()
            .map(|(p, f)| (p.clone(), f.data.clone()))
            .collect())
    }

    fn records(&self) -> Result<MutexGuard<'_, Vec<Record>>, StoreError> {
        self.records.lock().map_err(|_| poisoned())
    }

    /// Appends a record when the files differ from the last one.
    fn record(
        &self,
        writer: &str,
        message: &str,
        reason: Option<String>,
        source: Option<String>,
        at: Timestamp,
    ) -> Result<Option<String>, StoreError> {
        let files = self.snapshot()?;
        let mut records = self.records()?;
        if records.last().is_some_and(|r| r.files == files) {
            return Ok(None);
        }
        Ok(Some(push(
            &mut records,
            files,
            writer,
            message,
            reason,
            source,
            at,
        )))
    }
}

/// Appends a record of `files` and returns its id.
fn push(
    records: &mut Vec<Record>,
    files: BTreeMap<MemPath, Vec<u8>>,
    writer: &str,
    message: &str,
    reason: Option<String>,
    source: Option<String>,
    at: Timestamp,
) -> String {
    let id = record_id(records.len(), message, &at.to_string(), writer);
    records.push(Record {
        entry: HistoryEntry {
            commit: id.clone(),
            writer: writer.to_string(),
            date: crate::history::rfc3339(at.as_second()),
            summary: message.lines().next().unwrap_or_default().to_string(),
            reason,
            source,
        },
        files,
    });
    id
}

/// What a change records as its reason: trimmed, on one line, `None` when blank.
fn one_line(reason: Option<&str>) -> Option<String> {
    reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| r.replace('\n', " "))
}

impl History for InMemoryHistory {
    fn enabled(&self) -> bool {
        true
    }

    fn start(&self, at: Timestamp) -> Result<(), StoreError> {
        if self.records()?.is_empty() {
            self.record(
                "memdir",
                "init memory folder",
                None,
                Some("user".into()),
                at,
            )?;
        }
        Ok(())
    }

    fn prepare(&self, _at: Timestamp) -> Result<(), StoreError> {
        // Nothing writes this memory except through memdir: there are no hand edits.
        Ok(())
    }

    fn commit(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        self.record(
            &change.actor.writer,
            &change.message(),
            one_line(change.reason),
            Some(change.actor.source.as_str().to_string()),
            change.at,
        )
    }

    fn record_empty(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        let files = self.snapshot()?;
        let mut records = self.records()?;
        Ok(Some(push(
            &mut records,
            files,
            &change.actor.writer,
            &change.message(),
            one_line(change.reason),
            Some(change.actor.source.as_str().to_string()),
            change.at,
        )))
    }

    /// Scrubs every snapshot, summary and reason; a change whose own difference (or message)
    /// held what is forgotten gets a new id. Then records the forget over the files as they are.
    fn forget(
        &self,
        forget: &Forget,
        record: &Change<'_>,
        dry_run: bool,
    ) -> Result<ForgetReport, StoreError> {
        let files = self.snapshot()?;
        let mut records = self.records()?;
        let mut report = ForgetReport::default();
        let mut clean: Vec<Record> = Vec::with_capacity(records.len());
        for (i, r) in records.iter().enumerate() {
            let mut new = r.clone();
            for (p, b) in &r.files {
                match forget.scrub(p.as_str(), b) {
                    Scrub::Keep => {}
                    Scrub::Drop => {
                        new.files.remove(p);
                    }
                    Scrub::Rewrite(out, _) => {
                        new.files.insert(p.clone(), out);
                    }
                }
            }
            let summary = forget.scrub_message(&r.entry.summary);
            let reason = r
                .entry
                .reason
                .as_deref()
                .and_then(|t| forget.scrub_message(t));
            // The versions this change made that changed: what a change-by-change history counts.
            let parent = i.checked_sub(1).map(|j| &records[j].files);
            let mut rewrote = summary.is_some() || reason.is_some();
            for (p, b) in &r.files {
                if parent.and_then(|f| f.get(p)) == Some(b) {
                    continue;
                }
                match forget.scrub(p.as_str(), b) {
                    Scrub::Keep => {}
                    Scrub::Drop => {
                        report.versions += 1;
                        rewrote = true;
                    }
                    Scrub::Rewrite(_, n) => {
                        report.versions += 1;
                        report.lines += n;
                        rewrote = true;
                    }
                }
            }
            // A file the change deleted whose earlier version held it.
            rewrote |= parent.is_some_and(|f| {
                f.iter().any(|(p, b)| {
                    !r.files.contains_key(p) && forget.scrub(p.as_str(), b) != Scrub::Keep
                })
            });
            if rewrote {
                if let Some(s) = summary {
                    new.entry.summary = s;
                }
                if let Some(s) = reason {
                    new.entry.reason = Some(s);
                }
                let seed = format!("{}\n{:?}", new.entry.summary, new.entry.reason);
                new.entry.commit = record_id(i, &seed, &new.entry.date, &new.entry.writer);
                report.rewritten.push(Rewritten {
                    old: r.entry.commit.clone(),
                    new: new.entry.commit.clone(),
                });
            }
            clean.push(new);
        }
        if dry_run {
            return Ok(report);
        }
        *records = clean;
        report.recorded = Some(push(
            &mut records,
            files,
            &record.actor.writer,
            &record.message(),
            one_line(record.reason),
            Some(record.actor.source.as_str().to_string()),
            record.at,
        ));
        Ok(report)
    }

    fn history(
        &self,
        path: Option<&MemPath>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let records = self.records()?;
        let mut out = Vec::new();
        for (i, r) in records.iter().enumerate().rev() {
            if let Some(p) = path {
                let before = i.checked_sub(1).and_then(|j| records[j].files.get(p));
                if r.files.get(p) == before {
                    continue;
                }
            }
            out.push(r.entry.clone());
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    fn blame(&self, path: &MemPath) -> Result<Vec<BlameLine>, StoreError> {
        let records = self.records()?;
        // The file after each record that changed it (a record holds every file).
        let mut versions = Vec::new();
        let mut before = None;
        for r in records.iter() {
            let now = r.files.get(path);
            if now == before {
                continue;
            }
            before = now;
            let who = crate::history::BlameWho {
                commit: r.entry.commit.clone(),
                writer: r.entry.writer.clone(),
                date: r.entry.date.clone(),
                reason: r.entry.reason.clone(),
            };
            versions.push((who, now.map(|b| String::from_utf8_lossy(b).into_owned())));
        }
        crate::history::blame_versions(path, versions)
    }

    fn revert(&self, id: &str) -> Result<(String, Changes), StoreError> {
        let records = self.records()?;
        let i = find(&records, id)?;
        let target = &records[i];
        let Some(parent) = i.checked_sub(1).map(|j| &records[j]) else {
            return Err(StoreError::Conflict(
                "cannot undo the first commit: it created the folder".into(),
            ));
        };
        let now = self.snapshot()?;
        let paths: BTreeSet<&MemPath> = target.files.keys().chain(parent.files.keys()).collect();
        let mut out = Vec::new();
        for p in paths {
            let (before, after) = (parent.files.get(p), target.files.get(p));
            if before == after {
                continue;
            }
            if now.get(p) != after {
                return Err(StoreError::Conflict(format!(
                    "cannot undo {}: later changes touch the same lines; edit the file instead",
                    target.entry.commit.get(..8).unwrap_or_default()
                )));
            }
            out.push((p.clone(), before.cloned()));
        }
        Ok((target.entry.commit.clone(), out))
    }

    fn files_of(&self, id: &str) -> Result<(String, Vec<FileChange>), StoreError> {
        let records = self.records()?;
        let i = find(&records, id)?;
        let target = &records[i];
        let empty = BTreeMap::new();
        let parent = i.checked_sub(1).map_or(&empty, |j| &records[j].files);
        let paths: BTreeSet<&MemPath> = target.files.keys().chain(parent.keys()).collect();
        let out = paths
            .into_iter()
            .map(|p| FileChange {
                path: p.clone(),
                before: parent.get(p).cloned(),
                after: target.files.get(p).cloned(),
            })
            .filter(|f| f.before != f.after)
            .collect();
        Ok((target.entry.commit.clone(), out))
    }
}

/// The index of the one record whose id starts with `id`.
fn find(records: &[Record], id: &str) -> Result<usize, StoreError> {
    let found: Vec<usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| !id.is_empty() && r.entry.commit.starts_with(id))
        .map(|(i, _)| i)
        .collect();
    match found.as_slice() {
        [i] => Ok(*i),
        _ => Err(StoreError::NotFound(format!(
            "no commit {id:?}: see `memdir history`"
        ))),
    }
}
