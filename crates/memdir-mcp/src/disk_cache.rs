//! The instance's local search cache under a byte budget (`[limits] cache_bytes`; issue 35,
//! item 3): a tenant of a database or object store keeps its keyword (and vector) index in a
//! folder of its own under one cache root, `ROOT/<tenant>/`. Those folders are rebuilt from the
//! tenant's files on its next search, so they can be dropped: after each request the tenant's
//! folder is measured, and while the folders together are over the budget the least recently
//! used tenant's folder is deleted. A tenant with a request in flight is never deleted under
//! it (its turn comes after); the tenant just used goes last, and only when it alone is over
//! the budget. Folders left by an earlier run are counted (oldest first) when the service
//! starts, so no tenant's files stay on the instance's disk without a bound.
//!
//! A tenant's keyword index stays open between its searches (its memory's warm state keeps
//! the connection), for the `open` most recently used tenants only: one that falls out of
//! them has its index closed (each open index holds three descriptors and its page cache),
//! and a tenant's index is closed before its folder is deleted, so a deleted index's bytes
//! never stay on the disk behind an open connection.

use hashlink::LruCache;
use memdir::search::Warm;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Weak};

/// The cache root, its budget and what each tenant's folder holds.
pub(crate) struct DiskCache {
    root: PathBuf,
    budget: u64,
    /// Tenants whose keyword index may stay open (`[limits] max_open_indexes`).
    open: usize,
    table: Mutex<Table>,
    /// Bytes of every tenant's folder, as last measured.
    pub(crate) bytes: Gauge,
    /// Tenants' folders deleted to stay within the budget.
    pub(crate) evictions: Counter,
}

struct Table {
    /// By tenant name, least recently used first.
    lru: LruCache<String, Slot>,
    total: u64,
    /// Tenants that may have their index open (in their slot's warm state), least recently
    /// used first.
    indexes: LruCache<String, ()>,
}

/// Closes the index a tenant's memory keeps open, if the memory is still open.
fn close(w: &Weak<Warm>) {
    if let Some(w) = w.upgrade() {
        w.close_index();
    }
}

struct Slot {
    bytes: u64,
    /// Requests of the tenant in flight.
    busy: usize,
    /// Its memory's warm state as of its last request, where its index is kept open (also
    /// one the person's page opened, which is not among `indexes`).
    warm: Option<Weak<Warm>>,
}

/// One request of a tenant: its folder is measured, and the cache brought within its budget,
/// when this drops.
pub(crate) struct InUse<'a> {
    cache: &'a DiskCache,
    name: String,
}

/// Bytes of the files under `dir` (0 when it does not exist); symlinks are not followed.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        let Ok(m) = e.path().symlink_metadata() else {
            continue;
        };
        n += if m.is_dir() {
            dir_bytes(&e.path())
        } else {
            m.len()
        };
    }
    n
}

/// Whether `name` is one folder directly under the root (tenant names are; this only guards).
fn plain(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\'])
}

impl DiskCache {
    /// The cache under `root` within `budget` bytes, with at most `open` tenants' indexes
    /// kept open, counting what an earlier run left there (oldest first) and deleting past the
    /// budget at once.
    pub(crate) fn new(root: PathBuf, budget: u64, open: usize) -> DiskCache {
        let mut found: Vec<(std::time::SystemTime, String, u64)> = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Ok(m) = e.path().symlink_metadata() else {
                    continue;
                };
                if !m.is_dir() || !plain(&name) {
                    continue;
                }
                let when = m.modified().unwrap_or(std::time::UNIX_EPOCH);
                found.push((when, name, dir_bytes(&e.path())));
            }
        }
        found.sort();
        let mut lru = LruCache::new_unbounded();
        let mut total = 0;
        for (_, name, bytes) in found {
            total += bytes;
            lru.insert(
                name,
                Slot {
                    bytes,
                    busy: 0,
                    warm: None,
                },
            );
        }
        let cache = DiskCache {
            root,
            budget,
            open,
            table: Mutex::new(Table {
                lru,
                total,
                indexes: LruCache::new_unbounded(),
            }),
            bytes: Gauge::default(),
            evictions: Counter::default(),
        };
        let mut t = cache.lock();
        cache.shrink(&mut t, None);
        drop(t);
        cache
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks a request of tenant `name` as in flight (its folder is not deleted meanwhile);
    /// `warm` is its memory's warm state, where its index is kept open between searches.
    pub(crate) fn enter(&self, name: &str, warm: Option<Weak<Warm>>) -> InUse<'_> {
        let mut t = self.lock();
        match t.lru.get_mut(name) {
            Some(s) => {
                s.busy += 1;
                if warm.is_some() {
                    s.warm.clone_from(&warm);
                }
            }
            None => {
                t.lru.insert(
                    name.to_string(),
                    Slot {
                        bytes: 0,
                        busy: 1,
                        warm,
                    },
                );
            }
        }
        InUse {
            cache: self,
            name: name.to_string(),
        }
    }

    /// Deletes the least recently used idle tenants' folders until the total is within the
    /// budget; `last` (the tenant just used) goes only when nothing else is left to delete.
    fn shrink(&self, t: &mut Table, last: Option<&str>) {
        if t.total > self.budget {
            let order: Vec<String> = t
                .lru
                .iter()
                .filter(|(k, s)| s.busy == 0 && Some(k.as_str()) != last)
                .map(|(k, _)| k.clone())
                .chain(last.map(str::to_string))
                .collect();
            for name in order {
                if t.total <= self.budget {
                    break;
                }
                if t.lru.peek(&name).is_none_or(|s| s.busy > 0) {
                    continue;
                }
                let dir = self.root.join(&name);
                // Its index is closed first: an open connection would keep the deleted file's
                // bytes on the disk.
                t.indexes.remove(&name);
                if let Some(w) = t.lru.peek(&name).and_then(|s| s.warm.as_ref()) {
                    close(w);
                }
                // Deleted under the lock: a request of this tenant that starts now waits, then
                // builds its index again.
                let gone = match std::fs::remove_dir_all(&dir) {
                    Ok(()) => true,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                    Err(e) => {
                        tracing::warn!(error = %e, "could not delete a tenant's search cache");
                        false
                    }
                };
                if gone && let Some(s) = t.lru.remove(&name) {
                    t.total -= s.bytes;
                    self.evictions.inc();
                }
            }
        }
        self.bytes.set(i64::try_from(t.total).unwrap_or(i64::MAX));
    }
}

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        let c = self.cache;
        let bytes = if plain(&self.name) {
            dir_bytes(&c.root.join(&self.name))
        } else {
            0
        };
        let mut t = c.lock();
        let old = match t.lru.peek_mut(&self.name) {
            Some(s) => {
                s.busy = s.busy.saturating_sub(1);
                std::mem::replace(&mut s.bytes, bytes)
            }
            None => {
                t.lru.insert(
                    self.name.clone(),
                    Slot {
                        bytes,
                        busy: 0,
                        warm: None,
                    },
                );
                0
            }
        };
        t.total = t.total - old.min(t.total) + bytes;
        // A tenant with a folder may have its index open: it is now the most recently used,
        // and past the bound the least recently used one's is closed.
        // (Closed after the lock is let go: closing a connection writes its log back.)
        let mut past = Vec::new();
        if bytes > 0 {
            t.indexes.insert(self.name.clone(), ());
            while t.indexes.len() > c.open {
                let Some((name, ())) = t.indexes.remove_lru() else {
                    break;
                };
                past.extend(t.lru.peek(&name).and_then(|s| s.warm.clone()));
            }
        }
        c.shrink(&mut t, Some(&self.name));
        drop(t);
        past.iter().for_each(close);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fill(root: &Path, name: &str, bytes: usize) {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(root.join(name).join("search.sqlite"), vec![0u8; bytes]).unwrap();
    }

    /// The least recently used idle tenant goes first; a busy one is kept; what an earlier run
    /// left is counted and cut at start.
    #[test]
    fn keeps_the_folders_within_the_budget_least_recently_used_first() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        fill(root, "old1", 400);
        fill(root, "old2", 400);
        let c = DiskCache::new(root.to_path_buf(), 1000, 8);
        assert!(dir_bytes(root) <= 1000);
        for n in ["a", "b", "c"] {
            let u = c.enter(n, None);
            fill(root, n, 300);
            drop(u);
            assert!(dir_bytes(root) <= 1000, "{}", dir_bytes(root));
        }
        // "b" is busy: a new tenant pushes out "c"'s elders but never "b".
        let b = c.enter("b", None);
        let d2 = c.enter("d", None);
        fill(root, "d", 300);
        drop(d2);
        assert!(root.join("b").exists());
        assert!(root.join("d").exists());
        drop(b);
        assert!(dir_bytes(root) <= 1000, "{}", dir_bytes(root));
        // One tenant alone over the budget does not stay.
        let e = c.enter("e", None);
        fill(root, "e", 2000);
        drop(e);
        assert!(!root.join("e").exists());
        assert!(c.evictions.get() >= 4);
    }
}
