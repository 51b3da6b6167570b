//! The local-folder store: a memory folder confined under its root.
//!
//! Confinement: the root is opened once as a directory handle and every path is resolved
//! relative to it with `openat2(RESOLVE_BENEATH)` (cap-std, falling back to its own
//! component-by-component resolution on old kernels). So there is no check-then-use race: a
//! symlink that leads outside the root, even one swapped in while memdir runs, makes the open
//! fail instead of landing a byte outside. Symlinks that stay inside the root are followed.
//!
//! Writes: a whole-file write goes to a hidden temp file in the same folder, is fsynced, renamed
//! over the target, and the folder is fsynced. Appends take an exclusive `flock` on the file.

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};
use memdir_core::path::{MemPath, RESERVED};
use memdir_store::paths;
use memdir_store::store::{
    Entry, EntryKind, LockGuard, LockName, Locks, Precondition, Reentry, Store, StoreError,
    Version, stale,
};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// memdir's own folder inside the root.
pub const META_DIR: &str = ".memdir";

/// A memory folder on local disk.
#[derive(Debug)]
pub struct FolderStore {
    root: Dir,
    root_path: PathBuf,
    touched: Touched,
}

/// The paths a folder store's writes touched during a change: every file written or appended
/// to, every file or folder removed, both ends of a move. The folder's git history starts the
/// record when a change begins ([`Touched::start`]) and stages exactly these paths for the
/// change's commit ([`Touched::take`]), instead of comparing the whole tree.
///
/// A path is recorded before the file system is touched, so a write that fails part-way (a
/// folder removal that stopped half-way) is still staged; staging a path that did not change
/// records nothing. Outside a change nothing is recorded, so a long-lived process without
/// history keeps no list.
#[derive(Debug, Clone, Default)]
pub struct Touched(std::sync::Arc<Mutex<Option<Vec<String>>>>);

impl Touched {
    fn record(&self, path: &MemPath) {
        if let Some(paths) = self.0.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            paths.push(path.to_string());
        }
    }

    /// Starts an empty record: writes from now on are recorded.
    pub fn start(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
    }

    /// The paths recorded since [`Touched::start`], sorted, each once, and stops recording;
    /// `None` when no record was started.
    pub fn take(&self) -> Option<Vec<String>> {
        let mut paths = self.0.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        paths.sort();
        paths.dedup();
        Some(paths)
    }
}

use crate::atomic::TEMP_PREFIX;

/// A temp file older than this belongs to a write that died: a live write renames its temp
/// file within moments.
const TEMP_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

impl FolderStore {
    /// Opens an existing memory folder.
    pub fn open(root: &Path) -> Result<FolderStore, StoreError> {
        let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => StoreError::NotFound(format!(
                "memory folder {} does not exist: run `memdir init` first",
                root.display()
            )),
            _ => StoreError::Unavailable(format!(
                "cannot open memory folder {}: {e}",
                root.display()
            )),
        })?;
        Ok(FolderStore {
            root: dir,
            root_path: root.to_path_buf(),
            touched: Touched::default(),
        })
    }

    /// Creates the folder (and its parents) if needed, then opens it.
    pub fn create(root: &Path) -> Result<FolderStore, StoreError> {
        std::fs::create_dir_all(root).map_err(|e| {
            StoreError::Unavailable(format!(
                "cannot create memory folder {}: {e}",
                root.display()
            ))
        })?;
        Self::open(root)
    }

    /// This folder as a backend: its files and its git history, which commits only the paths
    /// this store's writes touched.
    pub fn backend(self) -> memdir_store::Backend {
        let history = crate::git::GitHistory::new(self.root_path()).with_touched(self.touched());
        memdir_store::Backend {
            store: std::sync::Arc::new(self),
            history: Some(std::sync::Arc::new(history)),
            vectors: None,
        }
    }

    /// The root's path on disk, for tools that work on real files (search indexes).
    pub fn root_path(&self) -> &Path {
        &self.root_path
    }

    /// The record of the paths this store's writes touch (shared: every clone sees the same).
    pub fn touched(&self) -> Touched {
        self.touched.clone()
    }

    /// Opens the folder that holds `path`, creating it when asked, and returns it with the
    /// final component's name.
    fn parent_of<'p>(&self, path: &'p MemPath, create: bool) -> Result<(Dir, &'p str), StoreError> {
        let name = path.file_name().ok_or_else(paths::root_refused)?;
        let parent = path.parent().unwrap_or_default();
        match self.open_dir(&parent, create) {
            Ok(dir) => Ok((dir, name)),
            // A missing folder means the file the caller named is missing: say which.
            Err(StoreError::NotFound(_)) => {
                Err(StoreError::NotFound(format!("{path} does not exist")))
            }
            Err(e) => Err(e),
        }
    }

    fn open_dir(&self, dir: &MemPath, create: bool) -> Result<Dir, StoreError> {
        if dir.is_root() {
            return self.root.try_clone().map_err(|e| io_err(e, dir));
        }
        match self.root.open_dir(dir.as_str()) {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                self.root
                    .create_dir_all(dir.as_str())
                    .map_err(|e| io_err(e, dir))?;
                self.root.open_dir(dir.as_str()).map_err(|e| io_err(e, dir))
            }
            other => other.map_err(|e| io_err(e, dir)),
        }
    }

    fn meta_dir(&self) -> Result<Dir, StoreError> {
        self.root
            .create_dir_all(META_DIR)
            .and_then(|_| self.root.open_dir(META_DIR))
            .map_err(|e| StoreError::Unavailable(format!("cannot open {META_DIR}/: {e}")))
    }
}

/// Writes `data` to `name` in `dir` through a temp file and a rename ([`crate::atomic`]).
fn atomic_write(dir: &Dir, name: &str, data: &[u8], shown: &str) -> Result<(), StoreError> {
    crate::atomic::write_in(dir, name, data, false).map_err(|e| io_err_str(e, shown))
}

/// [`atomic_write`]; with `create_only` the rename refuses an existing target
/// (`RENAME_NOREPLACE`), so "create only" needs no lock.
fn atomic_write_with(
    dir: &Dir,
    name: &str,
    data: &[u8],
    shown: &str,
    create_only: bool,
) -> Result<(), StoreError> {
    crate::atomic::write_in(dir, name, data, create_only).map_err(|e| io_err_str(e, shown))
}

/// Appends `data` all or nothing, under the caller's lock: when `data` is whole lines (it ends
/// with a newline, as every log and state entry does), a file whose last line has no newline (a
/// fragment a crash or a hand edit left) gets one first, so the new entry never glues onto it;
/// other bytes are appended exactly, as on every store. A write that fails part-way (a full
/// disk) is cut back to where it began.
fn append_whole(file: &std::fs::File, data: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let start = file.metadata()?.len();
    let mut last = [0u8; 1];
    let heal = start > 0 && file.read_at(&mut last, start - 1)? == 1 && last[0] != b'\n';
    let mut buf = Vec::with_capacity(data.len() + 1);
    if heal && data.ends_with(b"\n") {
        buf.push(b'\n');
    }
    buf.extend_from_slice(data);
    let mut f = file;
    match f.write_all(&buf).and_then(|()| file.sync_data()) {
        Ok(()) => Ok(()),
        Err(e) => {
            // Cut back what part of the entry made it: the append did not happen.
            let _ = file.set_len(start).and_then(|()| file.sync_data());
            Err(e)
        }
    }
}

/// A stable name for a path (FNV-1a, the same in every build and process), for files under
/// `.memdir/` that stand for it.
fn path_hash(path: &MemPath) -> String {
    let hash = path
        .as_str()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    format!("{hash:016x}")
}

fn to_millis(t: io::Result<cap_std::time::SystemTime>) -> i64 {
    t.ok()
        .and_then(|t| t.into_std().duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn io_err(e: io::Error, path: &MemPath) -> StoreError {
    io_err_str(e, if path.is_root() { "/" } else { path.as_str() })
}

/// Maps an I/O error to the store's neutral kinds, with a message that names the path.
fn io_err_str(e: io::Error, path: &str) -> StoreError {
    match e.kind() {
        io::ErrorKind::NotFound => StoreError::NotFound(format!("{path} does not exist")),
        io::ErrorKind::AlreadyExists => StoreError::Conflict(format!("{path} already exists")),
        io::ErrorKind::IsADirectory => paths::is_folder(path),
        io::ErrorKind::NotADirectory => paths::part_is_file(path),
        io::ErrorKind::DirectoryNotEmpty => StoreError::Conflict(format!("{path} is not empty")),
        // cap-std reports an escape (a `..` or a symlink leading out) as PermissionDenied.
        io::ErrorKind::PermissionDenied if e.to_string().contains("outside") => {
            StoreError::InvalidPath(format!(
                "{path} leads outside the memory folder (through a symlink): refused"
            ))
        }
        _ if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            StoreError::InvalidPath(format!(
                "{path}: too many symlinks in a row (a symlink loop): remove the loop or the symlink"
            ))
        }
        _ if e.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error()) => {
            StoreError::InvalidPath(format!(
                "{path} leads outside the memory folder (through a symlink): refused"
            ))
        }
        _ => StoreError::Unavailable(format!("{path}: {e}")),
    }
}

/// Names `list` never shows: memdir's and git's folders, and temp files of writes in progress.
fn is_hidden_internal(name: &str) -> bool {
    RESERVED.contains(&name) || is_temp_name(name)
}

/// Temp files of an atomic write in progress: `.<name>.<pid>.<n>.tmp`.
fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// The process id in one of memdir's own temp names: `.memdir-<pid>-<n>.tmp`, or the older
/// `.<name>.<pid>.<n>.tmp`. `None` for any other name, which a cleanup never touches.
fn temp_owner(name: &str) -> Option<u32> {
    let stem = name.strip_suffix(".tmp")?;
    if let Some(rest) = stem.strip_prefix(TEMP_PREFIX) {
        let (pid, n) = rest.split_once('-')?;
        n.parse::<u64>().ok()?;
        return pid.parse().ok();
    }
    let mut parts = stem.strip_prefix('.')?.rsplitn(3, '.');
    let n = parts.next()?;
    let pid = parts.next()?;
    parts.next().filter(|n| !n.is_empty())?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// True when no process `pid` runs (Linux lists every live process under `/proc`).
fn process_gone(pid: u32) -> bool {
    pid != 0
        && std::fs::metadata("/proc/self").is_ok()
        && std::fs::metadata(format!("/proc/{pid}")).is_err()
}

/// Opens a file to read without ever waiting: `O_NONBLOCK`, so a FIFO or a device does not
/// hang the open, then refuses anything but a regular file.
fn open_regular(
    dir: &Dir,
    name: &str,
    opts: &mut OpenOptions,
    shown: &str,
) -> Result<std::fs::File, StoreError> {
    use cap_std::fs::OpenOptionsExt;
    opts.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    let file = dir.open_with(name, opts).map_err(|e| {
        // A FIFO opened for writing with no reader says ENXIO: it is a special file all the same.
        if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) {
            not_regular(shown)
        } else {
            io_err_str(e, shown)
        }
    })?;
    let file = file.into_std();
    let meta = file.metadata().map_err(|e| io_err_str(e, shown))?;
    if meta.is_dir() {
        return Err(paths::is_folder(shown));
    }
    if !meta.is_file() {
        return Err(not_regular(shown));
    }
    // Reads and writes of a regular file never block, but the flag has no business staying.
    rustix::fs::fcntl_setfl(
        &file,
        rustix::fs::fcntl_getfl(&file).map_err(|e| io_err_str(e.into(), shown))?
            - rustix::fs::OFlags::NONBLOCK,
    )
    .map_err(|e| io_err_str(e.into(), shown))?;
    Ok(file)
}

fn not_regular(shown: &str) -> StoreError {
    StoreError::InvalidPath(format!(
        "{shown} is not a regular file (a FIFO, socket or device): memdir only reads and writes plain files; remove it or move it out of the memory folder"
    ))
}

/// Reads a whole regular file (see [`open_regular`]).
fn read_regular(dir: &Dir, name: &str, shown: &str) -> Result<Vec<u8>, StoreError> {
    use std::io::Read;
    let mut file = open_regular(dir, name, OpenOptions::new().read(true), shown)?;
    let mut out = Vec::new();
    file.read_to_end(&mut out)
        .map_err(|e| io_err_str(e, shown))?;
    Ok(out)
}

/// The file under `.memdir/locks/` that stands for a lock. File locks are named by a hash of
/// the path (`file-<hex>.lock`), so they never meet `git.lock` or `index.lock` and a long path
/// still fits in a file name.
fn lock_file_name(name: LockName<'_>) -> String {
    match name {
        LockName::Git => "git.lock".into(),
        LockName::Index => "index.lock".into(),
        LockName::File(p) => format!("file-{}.lock", path_hash(p)),
    }
}

struct FileLock {
    _file: std::fs::File,
    _held: Reentry,
}

impl LockGuard for FileLock {}

impl Store for FolderStore {
    fn local_root(&self) -> Option<&Path> {
        Some(&self.root_path)
    }

    fn read(&self, path: &MemPath) -> Result<Vec<u8>, StoreError> {
        if path.is_root() {
            return Err(StoreError::InvalidPath(
                "the memory root is a folder, not a file".into(),
            ));
        }
        read_regular(&self.root, path.as_str(), path.as_str())
    }

    fn write_if(
        &self,
        path: &MemPath,
        data: &[u8],
        pre: &Precondition,
    ) -> Result<Version, StoreError> {
        self.touched.record(path);
        let (dir, name) = self.parent_of(path, true)?;
        // A version check and the write are one step for every memdir process: they hold the
        // file's write lock (`write-<hash>.lock`), taken nowhere else, so it nests inside any
        // lock of the engine's.
        let _held = match pre {
            Precondition::Matches(_) => Some(self.take_lock(
                format!("write-{}.lock", path_hash(path)),
                &format_args!("write:{path}"),
            )?),
            _ => None,
        };
        let current = dir.symlink_metadata(name).ok();
        if let Some(m) = &current
            && !m.is_dir()
            && !m.is_file()
            && !m.file_type().is_symlink()
        {
            return Err(not_regular(path.as_str()));
        }
        if current.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(match pre {
                Precondition::Absent => {
                    StoreError::Conflict(format!("{path} already exists (a folder)"))
                }
                _ => paths::is_folder(path),
            });
        }
        match pre {
            Precondition::Any => atomic_write(&dir, name, data, path.as_str())?,
            Precondition::Absent => atomic_write_with(&dir, name, data, path.as_str(), true)?,
            Precondition::Matches(want) => {
                let now = match read_regular(&dir, name, path.as_str()) {
                    Ok(b) => Some(Version::of(&b)),
                    Err(StoreError::NotFound(_)) => None,
                    Err(e) => return Err(e),
                };
                if now.as_ref() != Some(want) {
                    return Err(stale(path, want, now.as_ref()));
                }
                atomic_write(&dir, name, data, path.as_str())?
            }
        }
        Ok(Version::of(data))
    }

    fn append(&self, path: &MemPath, data: &[u8]) -> Result<(), StoreError> {
        self.touched.record(path);
        let (dir, name) = self.parent_of(path, true)?;
        let file = open_regular(
            &dir,
            name,
            OpenOptions::new().read(true).append(true).create(true),
            path.as_str(),
        )?;
        file.lock().map_err(|e| io_err(e, path))?;
        let res = append_whole(&file, data);
        let _ = file.unlock();
        res.map_err(|e| io_err(e, path))
    }

    fn list(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        let d = self.open_dir(dir, false)?;
        let mut out = Vec::new();
        for ent in d.entries().map_err(|e| io_err(e, dir))? {
            let ent = ent.map_err(|e| io_err(e, dir))?;
            let name = ent.file_name();
            let Some(name) = name.to_str() else { continue };
            if is_hidden_internal(name) {
                continue;
            }
            // Follow in-root symlinks; skip ones that lead out or dangle. Anything else is
            // stat'ed beside its folder's handle (one `statx`): following a name safely costs an
            // open, a stat and a close, which `context` paid for each of a year's 365 logs.
            let meta = match ent.file_type() {
                Ok(t) if !t.is_symlink() => ent.metadata(),
                _ => d.metadata(name),
            };
            let Ok(meta) = meta else { continue };
            let Ok(path) = dir.join(name) else { continue };
            let kind = if meta.is_dir() {
                EntryKind::Dir
            } else if meta.is_file() {
                EntryKind::File
            } else {
                continue;
            };
            out.push(Entry {
                path,
                kind,
                size: if kind == EntryKind::File {
                    meta.len()
                } else {
                    0
                },
                modified_ms: to_millis(meta.modified()),
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn clean_temp_files(&self, dir: &MemPath, deep: bool) -> Result<usize, StoreError> {
        let mut removed = 0;
        let start = match self.open_dir(dir, false) {
            Ok(d) => d,
            // No folder, no temp files (a change killed before it made the folder).
            Err(StoreError::NotFound(_) | StoreError::InvalidPath(_)) => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut stack: Vec<(Dir, String)> = vec![(start, dir.to_string())];
        if dir.is_root()
            && let Ok(meta) = self.root.open_dir(META_DIR)
        {
            stack.push((meta, META_DIR.to_string()));
        }
        while let Some((d, shown)) = stack.pop() {
            let Ok(entries) = d.entries() else { continue };
            for ent in entries.flatten() {
                let name = ent.file_name();
                let Some(name) = name.to_str() else { continue };
                let Ok(meta) = d.symlink_metadata(name) else {
                    continue;
                };
                if meta.is_dir() {
                    if deep
                        && name != ".git"
                        && let Ok(sub) = d.open_dir(name)
                    {
                        stack.push((sub, format!("{shown}/{name}")));
                    }
                    continue;
                }
                let Some(pid) = temp_owner(name) else {
                    continue;
                };
                let old = meta
                    .modified()
                    .ok()
                    .and_then(|m| m.into_std().elapsed().ok())
                    .is_some_and(|age| age > TEMP_MAX_AGE);
                if meta.is_file()
                    && pid != std::process::id()
                    && (old || process_gone(pid))
                    && d.remove_file(name).is_ok()
                {
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// Every file under `dir`. Symlinked folders are not walked into: one may loop
    /// (`notes/self -> .`) or show the same files twice; their files are reached under their
    /// real path. A symlinked file inside the root is listed like any file.
    fn walk(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        let mut out = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            let handle = match self.open_dir(&d, false) {
                Ok(h) => h,
                // A folder that vanished mid-walk (or a start that is a file) has no files.
                Err(StoreError::NotFound(_)) if &d != dir => continue,
                Err(e) => return Err(e),
            };
            for ent in handle.entries().map_err(|e| io_err(e, &d))? {
                let ent = ent.map_err(|e| io_err(e, &d))?;
                let name = ent.file_name();
                let Some(name) = name.to_str() else { continue };
                if is_hidden_internal(name) {
                    continue;
                }
                let Ok(path) = d.join(name) else { continue };
                let Ok(own) = handle.symlink_metadata(name) else {
                    continue;
                };
                if own.is_dir() {
                    stack.push(path);
                    continue;
                }
                let meta = if own.file_type().is_symlink() {
                    match handle.metadata(name) {
                        Ok(m) if m.is_file() => m,
                        _ => continue,
                    }
                } else if own.is_file() {
                    own
                } else {
                    continue;
                };
                out.push(Entry {
                    path,
                    kind: EntryKind::File,
                    size: meta.len(),
                    modified_ms: to_millis(meta.modified()),
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn stat(&self, path: &MemPath) -> Result<Option<Entry>, StoreError> {
        let meta = if path.is_root() {
            self.root.dir_metadata()
        } else {
            self.root.metadata(path.as_str())
        };
        match meta {
            Ok(m) => Ok(Some(Entry {
                path: path.clone(),
                kind: if m.is_dir() {
                    EntryKind::Dir
                } else {
                    EntryKind::File
                },
                size: if m.is_dir() { 0 } else { m.len() },
                modified_ms: to_millis(m.modified()),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(e, path)),
        }
    }

    fn remove(&self, path: &MemPath) -> Result<(), StoreError> {
        self.touched.record(path);
        let (dir, name) = self.parent_of(path, false)?;
        let meta = dir.symlink_metadata(name).map_err(|e| io_err(e, path))?;
        let res = if meta.is_dir() {
            dir.remove_dir_all(name)
        } else {
            dir.remove_file(name)
        };
        res.map_err(|e| io_err(e, path))?;
        crate::atomic::sync_dir(&dir).map_err(|e| io_err(e, path))
    }

    fn rename(&self, from: &MemPath, to: &MemPath) -> Result<(), StoreError> {
        if to.starts_with(from) {
            return Err(StoreError::InvalidPath(format!(
                "cannot move {from} into itself"
            )));
        }
        self.touched.record(from);
        self.touched.record(to);
        let (from_dir, from_name) = self.parent_of(from, false)?;
        from_dir
            .symlink_metadata(from_name)
            .map_err(|e| io_err(e, from))?;
        let (to_dir, to_name) = self.parent_of(to, true)?;
        let flags = rustix::fs::RenameFlags::NOREPLACE;
        match rustix::fs::renameat_with(&from_dir, from_name, &to_dir, to_name, flags) {
            Ok(()) => {}
            Err(rustix::io::Errno::EXIST) | Err(rustix::io::Errno::NOTEMPTY) => {
                return Err(paths::exists_already(to));
            }
            Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOSYS) => {
                // A file system without RENAME_NOREPLACE: check, then rename (not race-free).
                if to_dir.symlink_metadata(to_name).is_ok() {
                    return Err(StoreError::Conflict(format!("{to} already exists")));
                }
                from_dir
                    .rename(from_name, &to_dir, to_name)
                    .map_err(|e| io_err(e, to))?;
            }
            Err(e) => return Err(io_err(e.into(), to)),
        }
        crate::atomic::sync_dir(&to_dir).map_err(|e| io_err(e, to))?;
        crate::atomic::sync_dir(&from_dir).map_err(|e| io_err(e, from))
    }

    fn create_dir(&self, path: &MemPath) -> Result<(), StoreError> {
        if path.is_root() {
            return Ok(());
        }
        self.root
            .create_dir_all(path.as_str())
            .map_err(|e| io_err(e, path))
    }

    fn read_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let shown = format!("{META_DIR}/{name}");
        match read_regular(&self.root, &shown, &shown) {
            Ok(b) => Ok(Some(b)),
            Err(StoreError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn write_meta(&self, name: &str, data: &[u8]) -> Result<(), StoreError> {
        let meta = self.meta_dir()?;
        atomic_write(&meta, name, data, &format!("{META_DIR}/{name}"))
    }
}

impl Locks for FolderStore {
    fn lock(&self, name: LockName<'_>) -> Result<Box<dyn LockGuard>, StoreError> {
        Ok(Box::new(self.take_lock(lock_file_name(name), &name)?))
    }
}

impl FolderStore {
    /// Takes the `flock` on `.memdir/locks/<file>`, refusing one this thread holds already.
    fn take_lock(
        &self,
        file: String,
        name: &dyn std::fmt::Display,
    ) -> Result<FileLock, StoreError> {
        // `flock` on a second descriptor waits for the first one forever, so a thread taking
        // a lock it holds would hang every writer.
        let held = Reentry::enter(&self.root_path.to_string_lossy(), &file, name)?;
        let taken = (|| {
            let meta = self.meta_dir()?;
            meta.create_dir_all("locks")
                .map_err(|e| StoreError::Unavailable(format!("cannot create lock folder: {e}")))?;
            let f = meta
                .open_with(
                    format!("locks/{file}"),
                    OpenOptions::new().write(true).create(true).truncate(false),
                )
                .map_err(|e| StoreError::Unavailable(format!("cannot open lock {name}: {e}")))?
                .into_std();
            f.lock()
                .map_err(|e| StoreError::Unavailable(format!("cannot take lock {name}: {e}")))?;
            Ok(f)
        })();
        taken.map(|f| FileLock {
            _file: f,
            _held: held,
        })
    }
}
