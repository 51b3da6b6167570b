//! The one walk of a memory folder: every regular file under the root in path order, never
//! entering memdir's or git's folders, never following a symlink. The change feed watches what
//! it walks; search builds its corpus on it. It knows nothing of what a caller looks for: a
//! caller filters with `enter` and `file`.

use memdir_core::path::RESERVED;
use std::path::Path;

/// True for a name inside the root that is never searched: memdir's and git's folders, and the
/// temp file of a write in progress.
pub fn is_internal(name: &str) -> bool {
    RESERVED.contains(&name) || (name.starts_with('.') && name.ends_with(".tmp"))
}

/// Opens a file the walk found for reading, refusing a symlink put there since (`O_NOFOLLOW`),
/// so a search never reads outside the root. The folders above it were walked without
/// following links.
pub fn open_file(abs: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let nofollow = i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0);
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nofollow)
        .open(abs)
}

/// Lists the folder `rel` under `root` (`""` is the root) and everything below it: `enter` is
/// called with each folder before it is listed and may skip it (`Ok(false)`) or stop the walk;
/// `file` gets the path of each regular file, in path order (byte order of the whole path from
/// the root, so a caller can search files while the walk goes on and still report in order).
/// Never enters memdir's or git's folders, leaves out in-flight temp files, symlinks, other
/// special files and names that are not UTF-8, and skips what vanishes or cannot be read
/// mid-walk, like `grep -s`.
pub fn visit<E>(
    root: &Path,
    rel: &str,
    enter: &mut dyn FnMut(&str) -> Result<bool, E>,
    file: &mut dyn FnMut(String),
) -> Result<(), E> {
    if !enter(rel)? {
        return Ok(());
    }
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    // A folder sorts as its name with a `/` after it: every path under `a` starts `a/`, so
    // sorting siblings this way and going depth-first yields whole paths in byte order.
    let mut names: Vec<(String, bool)> = Vec::new();
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if is_internal(&name) {
            continue;
        }
        // The entry's own type (from the directory listing): a symlink is neither.
        match entry.file_type() {
            Ok(t) if t.is_dir() => names.push((name + "/", true)),
            Ok(t) if t.is_file() => names.push((name, false)),
            _ => {}
        }
    }
    names.sort_unstable();
    for (mut name, is_dir) in names {
        if is_dir {
            name.pop();
        }
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if is_dir {
            visit(root, &child, enter, file)?;
        } else {
            file(child);
        }
    }
    Ok(())
}
