//! Quotas: a cap on how many bytes and files one memory may hold, for a service that keeps many.
//!
//! [`QuotaStore`] wraps any [`Store`] and refuses a write or an append that would take the
//! memory past its [`Quota`], with a message that says how full it is and what to do. Removes,
//! renames and rewrites that shrink a file always pass, so a memory over its quota (after the
//! operator lowered it) can always be cleaned up.
//!
//! Usage is counted from the store's own listing ([`Store::walk`]: one query on PostgreSQL, a
//! listing on S3, a walk of the folder) before each growing write. Two writers racing can each
//! pass the check: a memory can go over by at most what the writes in flight add, which the
//! service's request size limit bounds.
//!
//! ```
//! use memdir_mcp::quota::{Quota, QuotaStore};
//! use memdir::{InMemoryStore, Store};
//! use memdir_core::path::MemPath;
//! let store = QuotaStore::new(InMemoryStore::new(), Quota { max_bytes: Some(10), max_files: None });
//! store.write(&MemPath::parse("a.md").unwrap(), b"12345").unwrap();
//! let err = store.write(&MemPath::parse("b.md").unwrap(), b"123456").unwrap_err();
//! assert!(err.to_string().contains("quota"));
//! ```

use memdir::store::{Entry, LockGuard, LockName, Locks, Precondition, Store, StoreError, Version};
use memdir_core::path::MemPath;

/// The most a memory may hold; `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// Bytes in all files together.
    pub max_bytes: Option<u64>,
    /// Files (folders are not counted).
    pub max_files: Option<u64>,
}

impl Quota {
    /// True when nothing is limited.
    pub fn is_unlimited(&self) -> bool {
        self.max_bytes.is_none() && self.max_files.is_none()
    }
}

/// What a memory holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Bytes in all files.
    pub bytes: u64,
    /// Files.
    pub files: u64,
}

/// Counts a store's files and bytes.
pub fn usage(store: &dyn Store) -> Result<Usage, StoreError> {
    let mut u = Usage::default();
    for e in store.walk(&MemPath::root())? {
        u.bytes += e.size;
        u.files += 1;
    }
    Ok(u)
}

/// A store that refuses to grow past a quota.
pub struct QuotaStore<S> {
    inner: S,
    quota: Quota,
}

impl<S: Store> QuotaStore<S> {
    /// Wraps `inner`.
    pub fn new(inner: S, quota: Quota) -> QuotaStore<S> {
        QuotaStore { inner, quota }
    }

    /// Refuses a write that adds `add_bytes` (and a file, when `new_file`).
    fn check(&self, path: &MemPath, add_bytes: u64, new_file: bool) -> Result<(), StoreError> {
        if self.quota.is_unlimited() || (add_bytes == 0 && !new_file) {
            return Ok(());
        }
        let u = usage(&self.inner)?;
        if let Some(max) = self.quota.max_bytes
            && u.bytes.saturating_add(add_bytes) > max
        {
            return Err(StoreError::Conflict(format!(
                "over quota: writing {path} would make this memory {} bytes, past its quota of {max} bytes (it holds {} now): delete or archive old files, or shorten what you write",
                u.bytes.saturating_add(add_bytes),
                u.bytes
            )));
        }
        if let Some(max) = self.quota.max_files
            && new_file
            && u.files.saturating_add(1) > max
        {
            return Err(StoreError::Conflict(format!(
                "over quota: {path} would be file {} of this memory, past its quota of {max} files: merge or delete notes first",
                u.files + 1
            )));
        }
        Ok(())
    }
}

impl<S: Store> Locks for QuotaStore<S> {
    fn lock(&self, name: LockName<'_>) -> Result<Box<dyn LockGuard>, StoreError> {
        self.inner.lock(name)
    }
}

impl<S: Store> Store for QuotaStore<S> {
    fn read(&self, path: &MemPath) -> Result<Vec<u8>, StoreError> {
        self.inner.read(path)
    }

    fn read_versioned(&self, path: &MemPath) -> Result<(Vec<u8>, Version), StoreError> {
        self.inner.read_versioned(path)
    }

    fn write_if(
        &self,
        path: &MemPath,
        data: &[u8],
        pre: &Precondition,
    ) -> Result<Version, StoreError> {
        if !self.quota.is_unlimited() {
            let old = self.inner.stat(path)?.map(|e| e.size);
            let grows = (data.len() as u64).saturating_sub(old.unwrap_or(0));
            self.check(path, grows, old.is_none())?;
        }
        self.inner.write_if(path, data, pre)
    }

    fn append(&self, path: &MemPath, data: &[u8]) -> Result<(), StoreError> {
        if !self.quota.is_unlimited() {
            let new_file = self.inner.stat(path)?.is_none();
            self.check(path, data.len() as u64, new_file)?;
        }
        self.inner.append(path, data)
    }

    fn list(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        self.inner.list(dir)
    }

    fn stat(&self, path: &MemPath) -> Result<Option<Entry>, StoreError> {
        self.inner.stat(path)
    }

    fn remove(&self, path: &MemPath) -> Result<(), StoreError> {
        self.inner.remove(path)
    }

    fn rename(&self, from: &MemPath, to: &MemPath) -> Result<(), StoreError> {
        self.inner.rename(from, to)
    }

    fn create_dir(&self, path: &MemPath) -> Result<(), StoreError> {
        self.inner.create_dir(path)
    }

    fn read_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.read_meta(name)
    }

    fn write_meta(&self, name: &str, data: &[u8]) -> Result<(), StoreError> {
        self.inner.write_meta(name, data)
    }

    fn local_root(&self) -> Option<&std::path::Path> {
        self.inner.local_root()
    }

    fn read_all(
        &self,
        keep: &mut dyn FnMut(&MemPath) -> bool,
    ) -> Result<Vec<(MemPath, Vec<u8>)>, StoreError> {
        self.inner.read_all(keep)
    }

    fn clean_temp_files(&self, dir: &MemPath, deep: bool) -> Result<usize, StoreError> {
        self.inner.clean_temp_files(dir, deep)
    }

    fn cached_bytes(&self) -> usize {
        self.inner.cached_bytes()
    }

    fn prefetch(&self, wants: &[memdir::store::Want]) -> memdir::store::Prefetched {
        self.inner.prefetch(wants)
    }

    fn keys(&self) -> Option<std::sync::Arc<dyn memdir::keys::KeyStore>> {
        self.inner.keys()
    }

    fn walk(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        self.inner.walk(dir)
    }
}

/// The same backend with its store under `quota` (no change when it is unlimited).
pub fn with_quota(backend: memdir::Backend, quota: Quota) -> memdir::Backend {
    if quota.is_unlimited() {
        return backend;
    }
    memdir::Backend {
        store: std::sync::Arc::new(QuotaStore::new(backend.store, quota)),
        history: backend.history,
        vectors: backend.vectors,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use memdir::InMemoryStore;

    fn p(s: &str) -> MemPath {
        MemPath::parse(s).unwrap()
    }

    #[test]
    fn bytes_and_files_are_capped_and_shrinking_always_passes() {
        let s = QuotaStore::new(
            InMemoryStore::new(),
            Quota {
                max_bytes: Some(20),
                max_files: Some(2),
            },
        );
        s.write(&p("a.md"), b"0123456789").unwrap();
        s.append(&p("a.md"), b"01234").unwrap();
        let e = s.append(&p("a.md"), b"0123456789").unwrap_err();
        assert!(e.to_string().contains("past its quota of 20 bytes"), "{e}");
        s.write(&p("b.md"), b"x").unwrap();
        let e = s.write(&p("c.md"), b"x").unwrap_err();
        assert!(e.to_string().contains("quota of 2 files"), "{e}");
        // A rewrite that shrinks, a remove and a rename pass.
        s.write(&p("a.md"), b"0").unwrap();
        s.rename(&p("b.md"), &p("d.md")).unwrap();
        s.remove(&p("d.md")).unwrap();
        s.write(&p("c.md"), b"x").unwrap();
    }
}
