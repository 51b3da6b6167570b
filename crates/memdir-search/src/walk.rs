//! Which files a search reads: everything under the root except memdir's and git's folders
//! and temp files of writes in progress, narrowed by `--path` and, for dated files, by
//! `--since`/`--until`, in path order (so daily logs come in date order).

use super::SearchRequest;
use crate::error::Error;
use globset::GlobSet;
use jiff::civil::Date;
use memdir_core::log::date_of_file_name;
use memdir_core::path::MemPath;
pub(crate) use memdir_folder::walk::{is_internal, open_file, visit};
use memdir_store::store::Reader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Top folders whose files are named by their date.
const DATED_DIRS: [&str; 2] = [memdir_core::log::LOG_DIR, memdir_core::state::ARCHIVE_DIR];

/// The filters of one search, checked once up front so a bad glob fails before any I/O.
pub(crate) struct Scope {
    glob: Option<GlobSet>,
    since: Option<Date>,
    until: Option<Date>,
}

/// A file to search.
#[derive(Debug, Clone)]
pub(crate) struct FileRef {
    /// Path from the root with `/` separators.
    pub rel: String,
    /// Path on disk.
    pub abs: PathBuf,
    /// The date in a dated file's name.
    pub date: Option<Date>,
    /// The file's bytes when a warm search holds them in memory; `None` means read the disk.
    pub held: Option<Arc<Held>>,
}

/// A file's bytes, held in memory by warm search.
#[derive(Debug)]
pub(crate) struct Held {
    /// The whole file.
    pub bytes: Vec<u8>,
    /// The same bytes with ASCII letters lowercased, for a fast case-insensitive literal test.
    pub folded: Vec<u8>,
    /// True if it holds a NUL byte anywhere (grep stops at the first, as for a file on disk).
    pub binary: bool,
    /// True if it holds one of the two non-ASCII letters that case-fold to an ASCII one
    /// (U+212A KELVIN SIGN to `k`, U+017F LONG S to `s`), which an ASCII fold cannot see.
    pub exotic_fold: bool,
}

impl Held {
    /// The memory it takes, in bytes.
    pub fn size(&self) -> usize {
        self.bytes.len() + self.folded.len()
    }

    /// Takes a file's bytes.
    pub fn new(bytes: Vec<u8>) -> Held {
        Held {
            folded: bytes.to_ascii_lowercase(),
            binary: memchr::memchr(0, &bytes).is_some(),
            exotic_fold: has_case_twins(&bytes),
            bytes,
        }
    }
}

impl FileRef {
    /// The file at `rel` (with `/` separators) under `root`, its bytes not read.
    pub fn new(root: &Path, rel: String) -> FileRef {
        FileRef {
            abs: root.join(&rel),
            date: date_of(&rel),
            rel,
            held: None,
        }
    }

    /// The date as `YYYY-MM-DD`.
    pub fn date_string(&self) -> Option<String> {
        self.date.map(|d| d.to_string())
    }
}

impl Scope {
    /// Compiles the request's filters.
    pub fn new(req: &SearchRequest) -> Result<Scope, Error> {
        let glob = match req.path_glob.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(g) => Some(compile_glob(g)?),
        };
        Ok(Scope {
            glob,
            since: req.since,
            until: req.until,
        })
    }

    /// No filters: every file.
    pub fn everything() -> Scope {
        Scope {
            glob: None,
            since: None,
            until: None,
        }
    }

    /// True if nothing is filtered out.
    pub fn is_everything(&self) -> bool {
        self.glob.is_none() && self.since.is_none() && self.until.is_none()
    }

    /// True if the file at `rel`, dated `date`, is searched.
    pub fn keeps(&self, rel: &str, date: Option<Date>) -> bool {
        if let Some(g) = &self.glob
            && !g.is_match(rel)
        {
            return false;
        }
        match date {
            Some(d) => self.since.is_none_or(|s| d >= s) && self.until.is_none_or(|u| d <= u),
            None => true,
        }
    }
}

fn compile_glob(g: &str) -> Result<GlobSet, Error> {
    memdir_core::path::path_glob(g).map_err(Error::Invalid)
}

/// True if `bytes` hold U+212A KELVIN SIGN or U+017F LONG S, the two non-ASCII letters that
/// case-fold to ASCII ones (`k`, `s`).
pub(crate) fn has_case_twins(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, "\u{212A}".as_bytes()).is_some()
        || memchr::memmem::find(bytes, "\u{17F}".as_bytes()).is_some()
}

/// The date of a file under a dated folder, from its name.
pub(crate) fn date_of(rel: &str) -> Option<Date> {
    let top = rel.split('/').next()?;
    if !DATED_DIRS.contains(&top) {
        return None;
    }
    date_of_file_name(rel.rsplit('/').next()?)
}

/// Every file of a store in scope, in path order, read whole through the store: the corpus of
/// a memory that has no local folder. A file removed between the listing and the read is gone.
pub(crate) fn from_store(store: Reader<'_>, scope: &Scope) -> Result<Vec<FileRef>, Error> {
    let mut keep = |p: &MemPath| {
        let rel = p.as_str();
        !rel.split('/').any(is_internal) && scope.keeps(rel, date_of(rel))
    };
    Ok(store
        .read_all(&mut keep)?
        .into_iter()
        .map(|(path, bytes)| FileRef {
            date: date_of(path.as_str()),
            rel: path.as_str().to_string(),
            abs: PathBuf::new(),
            held: Some(Arc::new(Held::new(bytes))),
        })
        .collect())
}

/// Every regular file in scope, in path order. Symlinks are not followed, so nothing outside
/// the root is ever read.
pub(crate) fn files(root: &Path, scope: &Scope) -> Vec<FileRef> {
    let mut out = Vec::new();
    each_file(root, scope, &mut |f| out.push(f));
    out
}

/// Hands each regular file in scope to `found` as the walk reaches it, in path order.
pub(crate) fn each_file(root: &Path, scope: &Scope, found: &mut dyn FnMut(FileRef)) {
    visit::<std::convert::Infallible>(root, "", &mut |_| Ok(true), &mut |rel| {
        let f = FileRef::new(root, rel);
        if scope.keeps(&f.rel, f.date) {
            found(f);
        }
    })
    .unwrap_or_else(|never| match never {});
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_yields_whole_paths_in_byte_order() {
        let dir = tempfile::tempdir().unwrap();
        // Sorting each folder by its plain names would put `a/b/c.md` before `a.md` and `b/x`
        // before `b-c/x`; in byte order `-` < `.` < `/` < `0`.
        for rel in [
            "a.md",
            "a/z.md",
            "a/b/c.md",
            "a0",
            "b-c/x",
            "b/x",
            "b.md",
            "B",
            "é",
            "log/2026-01-02.md",
            "log/2026-01-01.md",
            "a/b.md",
        ] {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let got: Vec<String> = files(dir.path(), &Scope::everything())
            .into_iter()
            .map(|f| f.rel)
            .collect();
        let mut want = got.clone();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(got.len(), 12);
    }
}
