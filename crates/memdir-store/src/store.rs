//! Storage behind traits: [`Store`] (files with versions and preconditions) and [`Locks`] (named
//! cross-process locks); the change history is in [`crate::history`].
//!
//! The traits speak in [`MemPath`]s, bytes and neutral [`Entry`] values, so no `std::fs` type
//! crosses them, and every backend reports failures as one [`StoreError`]. Every backend runs
//! the same conformance suite (`crates/memdir-store-tests`).

use memdir_core::path::MemPath;

/// What went wrong in a store, in words any backend can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Nothing is at that path.
    #[error("{0}")]
    NotFound(String),
    /// The operation clashes with what is there (a target that exists, a lock held elsewhere).
    #[error("{0}")]
    Conflict(String),
    /// The path cannot be used: it leaves the root, crosses a symlink out, or has the wrong kind.
    #[error("{0}")]
    InvalidPath(String),
    /// The backend could not do it: I/O, the database or the network failed. Unlike the other
    /// kinds, the same request may succeed later or on a mended machine.
    #[error("{0}")]
    Unavailable(String),
}

/// The kind of thing at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
}

/// One listed item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its path from the root.
    pub path: MemPath,
    /// File or folder.
    pub kind: EntryKind,
    /// Size in bytes (0 for folders).
    pub size: u64,
    /// Last change, Unix milliseconds (0 when unknown).
    pub modified_ms: i64,
}

/// A file's version: the git blob id of its bytes (what `git hash-object` prints).
///
/// It is the same on every backend, so a version read from one store is valid against a copy
/// of the file in another, and a folder's version is the id `git log` shows for the file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version(String);

impl Version {
    /// The version of these bytes.
    pub fn of(data: &[u8]) -> Version {
        use sha1::Digest as _;
        let mut h = sha1::Sha1::new();
        h.update(format!("blob {}\0", data.len()).as_bytes());
        h.update(data);
        let mut hex = String::with_capacity(40);
        for b in h.finalize() {
            hex.push(char::from(HEX[usize::from(b >> 4)]));
            hex.push(char::from(HEX[usize::from(b & 15)]));
        }
        Version(hex)
    }

    /// A version as a caller gave it back (e.g. `--base`); not checked, only compared.
    pub fn from_string(s: impl Into<String>) -> Version {
        Version(s.into())
    }

    /// The version as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 characters, for messages.
    pub fn short(&self) -> &str {
        self.0.get(..12).unwrap_or(&self.0)
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What must be true of a file for a write to go ahead. The backend checks it atomically with
/// the write; when it does not hold, the write is refused with [`StoreError::Conflict`] and
/// nothing changes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Precondition {
    /// Write whatever is there.
    #[default]
    Any,
    /// Only create: refuse when anything (a file or a folder) is at the path.
    Absent,
    /// Only replace this version of an existing file.
    Matches(Version),
}

/// The refusal of a [`Precondition::Matches`] that did not hold, worded the same on every
/// backend: the file is at `now` (`None`: it is gone), not at `want`.
pub fn stale(path: &MemPath, want: &Version, now: Option<&Version>) -> StoreError {
    StoreError::Conflict(format!(
        "{path} changed since you read it (you had version {}, it is now {}): read it again and redo your edit",
        want.short(),
        now.map(Version::short).unwrap_or("deleted")
    ))
}

/// Held while a named lock is taken; dropping it releases the lock.
pub trait LockGuard: Send {
    /// Whether everything this thread writes and records through the store while the guard
    /// lives commits or rolls back with it, as one transaction (PostgreSQL's change lock): a
    /// change under it needs no journal, since a killed change leaves nothing. `false` by
    /// default.
    fn atomic(&self) -> bool {
        false
    }

    /// Releases the lock as dropping it does, saying whether what it guarded was kept: for an
    /// [`atomic`](LockGuard::atomic) guard, an error means the transaction did not commit and
    /// nothing written under it stays. `Ok` by default.
    fn release(self: Box<Self>) -> Result<(), StoreError> {
        Ok(())
    }
}

/// What a lock guards. Memdir's own locks and per-file locks are separate namespaces, so a file
/// named `git` or `index` never shares the lock of the history or of `MEMORY.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockName<'a> {
    /// The history: held by a change from its start to its commit.
    Git,
    /// `MEMORY.md`: held while a note's line in it is updated.
    Index,
    /// One file's read-modify-write (an edit, a new note, `core.md`'s and `state.md`'s caps).
    File(&'a MemPath),
}

impl std::fmt::Display for LockName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockName::Git => f.write_str("git"),
            LockName::Index => f.write_str("index"),
            LockName::File(p) => write!(f, "file:{p}"),
        }
    }
}

/// Named, exclusive locks shared by every process (and every store instance) that opens the
/// same memory: `flock` files for a folder, advisory locks for PostgreSQL.
pub trait Locks: Send + Sync {
    /// Takes an exclusive, cross-process lock, waiting for it. Taking a lock that the same
    /// thread already holds is an error, never a wait on itself. Dropping the guard releases it.
    fn lock(&self, name: LockName<'_>) -> Result<Box<dyn LockGuard>, StoreError>;
}

/// The one "already held by this thread" check of every backend's [`Locks`]: a thread asking
/// again for a lock it holds would wait for itself (a second `flock` descriptor, a second
/// database session, a lease renewed by no one), so the second ask is refused instead. It
/// holds while the value lives; a lock guard keeps it as a field.
#[derive(Debug)]
pub struct Reentry {
    key: (String, String, std::thread::ThreadId),
}

/// Locks held in this process, by memory, lock and thread.
static HELD: std::sync::Mutex<Vec<(String, String, std::thread::ThreadId)>> =
    std::sync::Mutex::new(Vec::new());

impl Reentry {
    /// Marks lock `lock` of the memory named `memory` (any text that tells memories apart in
    /// this process) as taken by this thread; refuses it when this thread holds it already.
    /// `name` is the lock as messages show it.
    pub fn enter(
        memory: &str,
        lock: &str,
        name: &dyn std::fmt::Display,
    ) -> Result<Reentry, StoreError> {
        let key = (
            memory.to_string(),
            lock.to_string(),
            std::thread::current().id(),
        );
        let mut all = HELD.lock().unwrap_or_else(|e| e.into_inner());
        if all.contains(&key) {
            return Err(StoreError::Unavailable(format!(
                "lock {name} is already held by this thread: this is a bug in memdir, please report it"
            )));
        }
        all.push(key.clone());
        Ok(Reentry { key })
    }
}

impl Drop for Reentry {
    fn drop(&mut self) {
        let mut all = HELD.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = all.iter().position(|h| h == &self.key) {
            all.swap_remove(i);
        }
    }
}

/// What a reader is about to read, given to [`Store::prefetch`] so a remote store can fetch it
/// all in one round trip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    /// A file (its bytes), or whatever is at that path.
    File(MemPath),
    /// A folder's listing, with the bytes of its files as `contents` says.
    Dir(MemPath, Contents),
    /// One of memdir's own files (`.memdir/<name>`).
    Meta(String),
    /// One of the secrets in the store's [`KeyStore`](crate::keys::KeyStore).
    Key(String),
}

/// Which files of a wanted folder come with their bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contents {
    /// None: the listing only.
    None,
    /// Every file directly in it.
    All,
    /// The last `n` names in byte order (dated logs: the newest days).
    Last(usize),
}

/// Held while prefetched reads are answered from what one [`Store::prefetch`] fetched;
/// dropping it lets them go. Reads of anything that was not fetched go to the store as usual.
#[must_use = "the prefetched reads are dropped with this guard"]
pub struct Prefetched(Option<Box<dyn FnOnce() + Send>>);

impl Prefetched {
    /// Nothing prefetched: every read goes to the store.
    pub fn none() -> Prefetched {
        Prefetched(None)
    }

    /// Prefetched reads that `end` lets go of.
    pub fn until(end: impl FnOnce() + Send + 'static) -> Prefetched {
        Prefetched(Some(Box::new(end)))
    }
}

impl Drop for Prefetched {
    fn drop(&mut self) {
        if let Some(end) = self.0.take() {
            end();
        }
    }
}

impl std::fmt::Debug for Prefetched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Prefetched"
        } else {
            "Prefetched(none)"
        })
    }
}

/// A memory's files. Every read, write, list, rename and delete goes through here.
pub trait Store: Locks {
    /// Reads a whole file.
    fn read(&self, path: &MemPath) -> Result<Vec<u8>, StoreError>;

    /// Reads a whole file with its version. Backends that keep the version beside the bytes
    /// return it; the default computes it.
    fn read_versioned(&self, path: &MemPath) -> Result<(Vec<u8>, Version), StoreError> {
        let data = self.read(path)?;
        let v = Version::of(&data);
        Ok((data, v))
    }

    /// Replaces (or creates) a whole file atomically when `pre` holds: readers see the old or
    /// the new content, never a mix, and a crash leaves one or the other. Missing parent
    /// folders are created. Returns the new version.
    fn write_if(
        &self,
        path: &MemPath,
        data: &[u8],
        pre: &Precondition,
    ) -> Result<Version, StoreError>;

    /// [`Store::write_if`] with [`Precondition::Any`].
    fn write(&self, path: &MemPath, data: &[u8]) -> Result<(), StoreError> {
        self.write_if(path, data, &Precondition::Any).map(drop)
    }

    /// Appends bytes under an exclusive lock, so concurrent appends never interleave.
    fn append(&self, path: &MemPath, data: &[u8]) -> Result<(), StoreError>;

    /// Lists a folder's direct children, sorted by name. Reserved folders are never listed.
    fn list(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError>;

    /// Describes one path, or `None` when nothing is there.
    fn stat(&self, path: &MemPath) -> Result<Option<Entry>, StoreError>;

    /// Deletes a file, or a folder with everything in it.
    fn remove(&self, path: &MemPath) -> Result<(), StoreError>;

    /// Moves a file or folder; never overwrites (an existing target is a conflict).
    fn rename(&self, from: &MemPath, to: &MemPath) -> Result<(), StoreError>;

    /// Creates a folder and its parents; no error if it exists.
    fn create_dir(&self, path: &MemPath) -> Result<(), StoreError>;

    /// Reads one of memdir's own files (`.memdir/<name>`), or `None` if absent.
    fn read_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Writes one of memdir's own files atomically.
    fn write_meta(&self, name: &str, data: &[u8]) -> Result<(), StoreError>;

    /// The root as a local directory, for tools that need real files (grep, SQLite indexes);
    /// `None` for remote backends.
    fn local_root(&self) -> Option<&std::path::Path> {
        None
    }

    /// Every file that `keep` accepts, with its bytes, in path order: what a search reads on a
    /// store without a local folder. A file removed between the listing and its read is left
    /// out. The default walks the root and reads each file; a remote backend overrides it to
    /// fetch only what changed since its last call (the S3 store keeps a cache by ETag).
    fn read_all(
        &self,
        keep: &mut dyn FnMut(&MemPath) -> bool,
    ) -> Result<Vec<(MemPath, Vec<u8>)>, StoreError> {
        let mut out = Vec::new();
        for e in self.walk(&MemPath::root())? {
            if !keep(&e.path) {
                continue;
            }
            match self.read(&e.path) {
                Ok(b) => out.push((e.path, b)),
                Err(StoreError::NotFound(_)) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(out)
    }

    /// Fetches what the calling thread is about to read (in one round trip for a remote
    /// store), so its reads of those paths, listings, meta files and keys are answered from
    /// what was fetched until the guard drops; a write, a lock or anything not fetched goes to
    /// the store as usual. Only for reads that need no lock (a context, a listing page): what
    /// is fetched is one consistent view, no fresher. A store that reads cheaply does nothing
    /// (the default); a failed prefetch only means the reads go to the store.
    fn prefetch(&self, wants: &[Want]) -> Prefetched {
        let _ = wants;
        Prefetched::none()
    }

    /// Bytes of file contents the store keeps in memory for repeat reads (a remote store's
    /// cache): what a service counts against its memory budget. 0 by default.
    fn cached_bytes(&self) -> usize {
        0
    }

    /// Where this backend keeps the memory's secrets outside its files (see
    /// [`KeyStore`](crate::keys::KeyStore)), when it keeps them itself: PostgreSQL's table.
    /// `None` by default; a folder's front end gives one in the user's state folder.
    fn keys(&self) -> Option<std::sync::Arc<dyn crate::keys::KeyStore>> {
        None
    }

    /// Removes temp files that writes killed part-way left in `dir` (under it too, with
    /// `deep`): only the backend's own temp names, of writers that are gone. Returns how many.
    fn clean_temp_files(&self, dir: &MemPath, deep: bool) -> Result<usize, StoreError> {
        let _ = (dir, deep);
        Ok(0)
    }

    /// Every file under `dir`, depth first, in path order.
    fn walk(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        let mut out = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            let mut subdirs = Vec::new();
            for e in self.list(&d)? {
                match e.kind {
                    EntryKind::File => out.push(e),
                    EntryKind::Dir => subdirs.push(e.path),
                }
            }
            stack.extend(subdirs.into_iter().rev());
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
}

/// The reading half of a [`Store`]: what code that only reads is handed, so it cannot write.
/// The engine hands its features this (a feature writes through its change), and search reads a
/// store without a local folder through it. Cheap to copy.
#[derive(Clone, Copy)]
pub struct Reader<'a>(&'a dyn Store);

impl<'a> Reader<'a> {
    /// The reading half of `store`.
    pub fn of(store: &'a dyn Store) -> Reader<'a> {
        Reader(store)
    }

    /// [`Store::read`].
    pub fn read(&self, path: &MemPath) -> Result<Vec<u8>, StoreError> {
        self.0.read(path)
    }

    /// [`Store::read_versioned`].
    pub fn read_versioned(&self, path: &MemPath) -> Result<(Vec<u8>, Version), StoreError> {
        self.0.read_versioned(path)
    }

    /// [`Store::list`].
    pub fn list(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        self.0.list(dir)
    }

    /// [`Store::stat`].
    pub fn stat(&self, path: &MemPath) -> Result<Option<Entry>, StoreError> {
        self.0.stat(path)
    }

    /// [`Store::read_meta`].
    pub fn read_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.read_meta(name)
    }

    /// [`Store::local_root`].
    pub fn local_root(&self) -> Option<&'a std::path::Path> {
        self.0.local_root()
    }

    /// [`Store::read_all`].
    pub fn read_all(
        &self,
        keep: &mut dyn FnMut(&MemPath) -> bool,
    ) -> Result<Vec<(MemPath, Vec<u8>)>, StoreError> {
        self.0.read_all(keep)
    }

    /// [`Store::prefetch`].
    pub fn prefetch(&self, wants: &[Want]) -> Prefetched {
        self.0.prefetch(wants)
    }

    /// [`Store::walk`].
    pub fn walk(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        self.0.walk(dir)
    }

    /// [`Store::keys`].
    pub fn keys(&self) -> Option<std::sync::Arc<dyn crate::keys::KeyStore>> {
        self.0.keys()
    }
}

impl std::fmt::Debug for Reader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reader")
    }
}

/// A shared store is a store: handles (and decorators such as a service's quota) pass one on.
impl Store for std::sync::Arc<dyn Store> {
    fn read(&self, path: &MemPath) -> Result<Vec<u8>, StoreError> {
        (**self).read(path)
    }

    fn read_versioned(&self, path: &MemPath) -> Result<(Vec<u8>, Version), StoreError> {
        (**self).read_versioned(path)
    }

    fn write_if(
        &self,
        path: &MemPath,
        data: &[u8],
        pre: &Precondition,
    ) -> Result<Version, StoreError> {
        (**self).write_if(path, data, pre)
    }

    fn append(&self, path: &MemPath, data: &[u8]) -> Result<(), StoreError> {
        (**self).append(path, data)
    }

    fn list(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        (**self).list(dir)
    }

    fn stat(&self, path: &MemPath) -> Result<Option<Entry>, StoreError> {
        (**self).stat(path)
    }

    fn remove(&self, path: &MemPath) -> Result<(), StoreError> {
        (**self).remove(path)
    }

    fn rename(&self, from: &MemPath, to: &MemPath) -> Result<(), StoreError> {
        (**self).rename(from, to)
    }

    fn create_dir(&self, path: &MemPath) -> Result<(), StoreError> {
        (**self).create_dir(path)
    }

    fn read_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).read_meta(name)
    }

    fn write_meta(&self, name: &str, data: &[u8]) -> Result<(), StoreError> {
        (**self).write_meta(name, data)
    }

    fn local_root(&self) -> Option<&std::path::Path> {
        (**self).local_root()
    }

    fn read_all(
        &self,
        keep: &mut dyn FnMut(&MemPath) -> bool,
    ) -> Result<Vec<(MemPath, Vec<u8>)>, StoreError> {
        (**self).read_all(keep)
    }

    fn clean_temp_files(&self, dir: &MemPath, deep: bool) -> Result<usize, StoreError> {
        (**self).clean_temp_files(dir, deep)
    }

    fn cached_bytes(&self) -> usize {
        (**self).cached_bytes()
    }

    fn prefetch(&self, wants: &[Want]) -> Prefetched {
        (**self).prefetch(wants)
    }

    fn keys(&self) -> Option<std::sync::Arc<dyn crate::keys::KeyStore>> {
        (**self).keys()
    }

    fn walk(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        (**self).walk(dir)
    }
}

impl Locks for std::sync::Arc<dyn Store> {
    fn lock(&self, name: LockName<'_>) -> Result<Box<dyn LockGuard>, StoreError> {
        (**self).lock(name)
    }
}

#[cfg(test)]
mod tests {
    use super::Version;

    /// A version is the id git gives the same bytes, so `git log` shows it for the file.
    #[test]
    fn a_version_is_the_git_blob_id() {
        for data in [&b""[..], b"hello\n", &[0u8, 255, 10, 13][..]] {
            let git = git2::Oid::hash_object(git2::ObjectType::Blob, data).map(|o| o.to_string());
            assert_eq!(Version::of(data).as_str(), git.as_deref().unwrap_or("?"));
        }
    }
}
