//! [`Store::prefetch`](memdir_store::Store::prefetch) on PostgreSQL: everything a reader names
//! (files, folders' listings with their files' bytes, meta files, gate keys) in one query, kept
//! for the calling thread until its guard drops, so a warm `memory_context` is one statement
//! instead of one (and an existence check) per file.
//!
//! What the query did not fetch is read from the database as before. A write, a lock or any
//! other change made through this store (or its keys) by the thread drops the thread's
//! snapshot first, so nothing it fetched is ever answered after the thread changed something.

use crate::{Db, ancestors, db_err, entry, parent_str, settings};
use memdir_core::path::MemPath;
use memdir_store::paths;
use memdir_store::store::{Contents, Want};
use memdir_store::{Entry, StoreError};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::ThreadId;

/// Each thread's snapshot, by the number its guard knows it by.
#[derive(Default)]
pub(crate) struct Snapshots {
    by_thread: std::sync::Mutex<HashMap<ThreadId, (u64, Arc<Snapshot>)>>,
    next: AtomicU64,
}

/// One row of `memdir.files` as fetched.
struct Row {
    path: String,
    is_dir: bool,
    size: i64,
    modified_ms: i64,
    /// `None`: the bytes were not asked for.
    content: Option<Vec<u8>>,
    version: Option<String>,
}

/// What one prefetch fetched.
#[derive(Default)]
pub(crate) struct Snapshot {
    /// Rows in the order `list` gives them (`ORDER BY path`).
    rows: Vec<Row>,
    by_path: HashMap<String, usize>,
    /// Paths whose row, or its absence, the query saw.
    known: HashSet<String>,
    /// Folders whose every child the query saw.
    listed: HashSet<String>,
    meta: HashMap<String, Option<Vec<u8>>>,
    keys: HashMap<String, Option<Vec<u8>>>,
}

impl Snapshots {
    /// The calling thread's snapshot, if it holds one.
    pub(crate) fn current(&self) -> Option<Arc<Snapshot>> {
        let all = self.by_thread.lock().unwrap_or_else(|e| e.into_inner());
        all.get(&std::thread::current().id())
            .map(|(_, s)| s.clone())
    }

    /// Drops the calling thread's snapshot: it is about to change something.
    pub(crate) fn forget(&self) {
        let mut all = self.by_thread.lock().unwrap_or_else(|e| e.into_inner());
        if !all.is_empty() {
            all.remove(&std::thread::current().id());
        }
    }

    /// Keeps `snap` for the calling thread; the number to end it by.
    fn keep(&self, snap: Snapshot) -> u64 {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut all = self.by_thread.lock().unwrap_or_else(|e| e.into_inner());
        all.insert(std::thread::current().id(), (n, Arc::new(snap)));
        n
    }

    /// Ends snapshot `n` of `thread`, unless a later one replaced it.
    fn end(&self, thread: ThreadId, n: u64) {
        let mut all = self.by_thread.lock().unwrap_or_else(|e| e.into_inner());
        if all.get(&thread).is_some_and(|(m, _)| *m == n) {
            all.remove(&thread);
        }
    }
}

/// Fetches `wants` in one query and keeps them for the calling thread; the guard ends them.
/// A thread that already holds a snapshot keeps it (the outer guard ends it).
pub(crate) fn prefetch(
    db: &Arc<Db>,
    bridge: &memdir_store::bridge::Bridge,
    wants: &[Want],
) -> memdir_store::Prefetched {
    if wants.is_empty() || db.snaps.current().is_some() {
        return memdir_store::Prefetched::none();
    }
    let mut paths: Vec<String> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let (mut dirs, mut last): (Vec<String>, Vec<i64>) = (Vec::new(), Vec::new());
    let (mut metas, mut keys): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for w in wants {
        match w {
            Want::File(p) if !p.is_root() => {
                paths.extend(ancestors(p));
                paths.push(p.as_str().to_string());
                files.push(p.as_str().to_string());
            }
            Want::File(_) => {}
            Want::Dir(p, contents) => {
                paths.extend(ancestors(p));
                paths.push(p.as_str().to_string());
                dirs.push(p.as_str().to_string());
                last.push(match contents {
                    Contents::None => 0,
                    Contents::All => i64::MAX,
                    Contents::Last(n) => i64::try_from(*n).unwrap_or(i64::MAX),
                });
            }
            Want::Meta(n) => metas.push(n.clone()),
            Want::Key(n) => keys.push(n.clone()),
        }
    }
    paths.retain(|p| !p.is_empty());
    paths.sort();
    paths.dedup();
    let db2 = db.clone();
    let (q_paths, q_dirs, q_metas, q_keys) =
        (paths.clone(), dirs.clone(), metas.clone(), keys.clone());
    let fetched = bridge.run(async move {
        let c = db2.conn().await?;
        // The paths asked for and their folders, every child of a wanted folder (with its
        // bytes when asked: all, or the last n by name), then the meta files and the keys.
        let rows = c
            .query(
                "WITH f AS (
                     SELECT path, parent, is_dir, size, modified_ms, version, content,
                            row_number() OVER (PARTITION BY parent ORDER BY path COLLATE \"C\" DESC) AS rn
                     FROM memdir.files
                     WHERE tenant = $1 AND (path = ANY($2) OR parent = ANY($4)))
                 SELECT 0 AS kind, f.path AS name, f.is_dir, f.size, f.modified_ms, f.version,
                        CASE WHEN NOT f.is_dir AND (f.path = ANY($3) OR EXISTS (
                            SELECT 1 FROM unnest($4::text[], $5::int8[]) AS w(d, n)
                            WHERE w.d = f.parent AND f.rn <= w.n)) THEN f.content END,
                        NULL::bytea, NULL::bytea
                 FROM f
                 UNION ALL
                 SELECT 1, m.name, false, 0, 0, NULL, m.content, m.delta, d.content
                 FROM memdir.meta m LEFT JOIN memdir.defaults d ON d.hash = m.base
                 WHERE m.tenant = $1 AND m.name = ANY($6)
                 UNION ALL
                 SELECT 2, k.name, false, 0, 0, NULL, k.value, NULL, NULL
                 FROM memdir.gate_keys k WHERE k.tenant = $1 AND k.name = ANY($7)
                 ORDER BY kind, name",
                &[
                    &db2.tenant,
                    &q_paths,
                    &files,
                    &q_dirs,
                    &last,
                    &q_metas,
                    &q_keys,
                ],
            )
            .await
            .map_err(db_err)?;
        Ok(rows)
    });
    // A failed prefetch costs nothing but the round trip: every read goes to the database.
    let Ok(rows) = fetched else {
        return memdir_store::Prefetched::none();
    };
    let mut snap = Snapshot {
        known: paths.into_iter().collect(),
        listed: dirs.into_iter().collect(),
        meta: metas.into_iter().map(|m| (m, None)).collect(),
        keys: keys.into_iter().map(|k| (k, None)).collect(),
        ..Snapshot::default()
    };
    for r in rows {
        let kind: i32 = r.get(0);
        let name: String = r.get(1);
        match kind {
            0 => {
                snap.by_path.insert(name.clone(), snap.rows.len());
                snap.rows.push(Row {
                    path: name,
                    is_dir: r.get(2),
                    size: r.get(3),
                    modified_ms: r.get(4),
                    version: r.get(5),
                    content: r.get(6),
                });
            }
            1 => match settings::read_form(r.get(6), r.get(7), r.get(8)) {
                Ok(b) => {
                    snap.meta.insert(name, Some(b));
                }
                // Unreadable here: the read itself will say why.
                Err(_) => {
                    snap.meta.remove(&name);
                }
            },
            _ => {
                snap.keys.insert(name, r.get(6));
            }
        }
    }
    let n = db.snaps.keep(snap);
    let (db, thread) = (db.clone(), std::thread::current().id());
    memdir_store::Prefetched::until(move || db.snaps.end(thread, n))
}

impl Snapshot {
    fn row(&self, path: &str) -> Option<&Row> {
        self.by_path.get(path).and_then(|&i| self.rows.get(i))
    }

    /// Whether the query saw `path`'s row or would have.
    fn knows(&self, path: &str) -> bool {
        self.known.contains(path) || (!path.is_empty() && self.listed.contains(parent_str(path)))
    }

    /// Why `path` is not there, as the database would say, when the snapshot can tell.
    fn missing(&self, path: &MemPath) -> Option<StoreError> {
        let mut all_known = true;
        for a in ancestors(path) {
            match self.row(&a) {
                Some(r) if !r.is_dir => return Some(paths::part_is_file(path.as_str())),
                Some(_) => {}
                None => all_known &= self.knows(&a),
            }
        }
        all_known.then(|| {
            StoreError::NotFound(format!("{} does not exist", crate::shown(path.as_str())))
        })
    }

    /// A file's bytes and version; `None` when the snapshot cannot answer.
    pub(crate) fn read(&self, path: &MemPath) -> Option<Result<(Vec<u8>, String), StoreError>> {
        match self.row(path.as_str()) {
            Some(r) if r.is_dir => Some(Err(paths::is_folder(path.as_str()))),
            Some(r) => {
                let data = r.content.clone()?;
                let v = r
                    .version
                    .clone()
                    .unwrap_or_else(|| crate::version_of(&data));
                Some(Ok((data, v)))
            }
            None if self.knows(path.as_str()) => self.missing(path).map(Err),
            None => None,
        }
    }

    /// What is at `path`; `None` when the snapshot cannot answer.
    pub(crate) fn stat(&self, path: &MemPath) -> Option<Result<Option<Entry>, StoreError>> {
        match self.row(path.as_str()) {
            Some(r) => Some(entry(&r.path, r.is_dir, r.size, r.modified_ms).map(Some)),
            None if self.knows(path.as_str()) => Some(Ok(None)),
            None => None,
        }
    }

    /// A folder's children in the database's order; `None` when the snapshot cannot answer.
    pub(crate) fn list(&self, dir: &MemPath) -> Option<Result<Vec<Entry>, StoreError>> {
        if !self.listed.contains(dir.as_str()) {
            return None;
        }
        if !dir.is_root() {
            match self.row(dir.as_str()) {
                Some(r) if !r.is_dir => return Some(Err(paths::part_is_file(dir.as_str()))),
                Some(_) => {}
                None => return self.missing(dir).map(Err),
            }
        }
        Some(
            self.rows
                .iter()
                .filter(|r| r.path != dir.as_str() && parent_str(&r.path) == dir.as_str())
                .map(|r| entry(&r.path, r.is_dir, r.size, r.modified_ms))
                .collect(),
        )
    }

    /// A meta file; `None` when the snapshot cannot answer.
    pub(crate) fn meta(&self, name: &str) -> Option<Option<Vec<u8>>> {
        self.meta.get(name).cloned()
    }

    /// A gate key; `None` when the snapshot cannot answer.
    pub(crate) fn key(&self, name: &str) -> Option<Option<Vec<u8>>> {
        self.keys.get(name).cloned()
    }
}
