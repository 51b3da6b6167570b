//! The one way memdir replaces a file on local disk: write a temp file in the same folder,
//! fsync it, rename it over the target, fsync the folder. Readers see the old bytes or the new,
//! never a mix, and a crash leaves one or the other (plus, at worst, a temp file that a
//! cleanup can tell from anything else by its name). The memory folder's store, the folder
//! service's registry, the search caches and `memdir install`'s edits of a host's settings all
//! go through here.

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// How memdir's temp files start: `.memdir-<pid>-<n>.tmp`.
pub const TEMP_PREFIX: &str = ".memdir-";

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temp file name of this process's own. Short and not derived from the target's name, so a
/// target name near the file system's 255-byte limit can still be written.
fn temp_name() -> String {
    format!(
        "{TEMP_PREFIX}{}-{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Replaces (or creates) `name` in the open folder `dir` with `data`. With `create_only` the
/// rename refuses an existing target (`RENAME_NOREPLACE`, an `AlreadyExists` error), so
/// "create only" needs no lock.
pub fn write_in(dir: &Dir, name: &str, data: &[u8], create_only: bool) -> io::Result<()> {
    write_in_keeping(dir, name, data, create_only, None)
}

fn write_in_keeping(
    dir: &Dir,
    name: &str,
    data: &[u8],
    create_only: bool,
    permissions: Option<cap_std::fs::Permissions>,
) -> io::Result<()> {
    let tmp = temp_name();
    let result = (|| -> io::Result<()> {
        let mut f = dir.open_with(&tmp, OpenOptions::new().write(true).create_new(true))?;
        f.write_all(data)?;
        if let Some(p) = permissions {
            f.set_permissions(p)?;
        }
        f.sync_all()?;
        drop(f);
        if create_only {
            rustix::fs::renameat_with(dir, &tmp, dir, name, rustix::fs::RenameFlags::NOREPLACE)?;
        } else {
            dir.rename(&tmp, dir, name)?;
        }
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    result
}

/// Replaces (or creates) the file at `path`, a file outside any memory folder (the service's
/// registry, a host's settings file), creating its folder when missing. A file it replaces
/// keeps its permissions.
pub fn write(path: &Path, data: &[u8]) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    std::fs::create_dir_all(parent)?;
    let dir = Dir::open_ambient_dir(parent, ambient_authority())?;
    let permissions = dir.metadata(name).ok().map(|m| m.permissions());
    write_in_keeping(&dir, name, data, false, permissions)
}

/// Renames a finished temp file `tmp` over `path` (same folder) after syncing it, then syncs
/// the folder: for a file built in place by another writer (SQLite's rebuild of an index).
pub fn replace_with(tmp: &Path, path: &Path) -> io::Result<()> {
    std::fs::File::open(tmp)?.sync_all()?;
    std::fs::rename(tmp, path)?;
    if let Some(dir) = path.parent() {
        let dir = Dir::open_ambient_dir(
            if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            },
            ambient_authority(),
        )?;
        sync_dir(&dir)?;
    }
    Ok(())
}

/// Syncs a folder, so a rename in it survives a crash.
pub(crate) fn sync_dir(dir: &Dir) -> io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    // cap-std hands back its own O_PATH handle for ".", which cannot be fsynced; a fresh
    // read-only open of "." relative to the handle cannot leave the folder.
    let fd = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(rustix::fs::fsync(&fd)?)
}
