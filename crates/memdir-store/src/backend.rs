//! What a memory is built from: a backend's store (with its locks), its history and its vector
//! rows, bundled so the engine never needs to know which backend it runs on.

use crate::history::History;
use crate::store::{EntryKind, Precondition, Store, StoreError, Version};
use crate::vectors::VectorStore;
use memdir_core::path::MemPath;
use std::sync::Arc;

/// A backend's parts: each backend gives its own implementations of the traits (a folder its
/// files and git, PostgreSQL its tables, S3 its objects).
#[derive(Clone)]
pub struct Backend {
    /// The files, and the locks of every process that opens the same memory.
    pub store: Arc<dyn Store>,
    /// The change history, when the backend keeps one.
    pub history: Option<Arc<dyn History>>,
    /// Where the vector index lives when the backend keeps it itself (PostgreSQL's tables);
    /// `None` keeps it in a SQLite file in the folder's `.memdir/` or the search cache folder.
    pub vectors: Option<Arc<dyn VectorStore>>,
}

impl Backend {
    /// A store without history.
    pub fn store_only(store: Arc<dyn Store>) -> Backend {
        Backend {
            store,
            history: None,
            vectors: None,
        }
    }
}

/// What [`copy`] moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CopyReport {
    /// Files written to the target.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Files the target already held with the same bytes.
    pub unchanged: usize,
}

/// Copies a memory between stores byte for byte: every file and folder, and the settings
/// (`.memdir/config.toml`). Caches and history are not copied (the target's history starts
/// with what it receives).
///
/// Nothing in the target is overwritten: a file that is there already must hold the same bytes,
/// or be empty (as `memdir init` leaves `core.md`); anything else is refused before the first
/// byte is written, so a refused copy changes nothing.
pub fn copy(from: &dyn Store, to: &dyn Store) -> Result<CopyReport, StoreError> {
    // Everything first (files with their bytes, and empty folders), then the checks, then writes.
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    let mut stack = vec![MemPath::root()];
    while let Some(d) = stack.pop() {
        let entries = from.list(&d)?;
        if entries.is_empty() && !d.is_root() {
            dirs.push(d.clone());
        }
        for e in entries {
            match e.kind {
                EntryKind::Dir => stack.push(e.path),
                EntryKind::File => {
                    let (bytes, v) = from.read_versioned(&e.path)?;
                    files.push((e.path, bytes, v));
                }
            }
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut plan = Vec::new();
    let mut report = CopyReport::default();
    for (path, bytes, v) in &files {
        let pre = match to.read_versioned(path) {
            Err(StoreError::NotFound(_)) => Precondition::Absent,
            Ok((_, there)) if &there == v => {
                report.unchanged += 1;
                continue;
            }
            Ok((old, there)) if old.is_empty() => Precondition::Matches(there),
            Ok(_) => {
                return Err(StoreError::Conflict(format!(
                    "{path} already exists in the target with other content: copy into an empty memory"
                )));
            }
            Err(e) => return Err(e),
        };
        plan.push((path, bytes, pre));
    }
    for (path, bytes, pre) in plan {
        let written = to.write_if(path, bytes, &pre)?;
        debug_assert_eq!(written, Version::of(bytes));
        report.files += 1;
        report.bytes += bytes.len() as u64;
    }
    for d in dirs {
        to.create_dir(&d)?;
    }
    if let Some(config) = from.read_meta("config.toml")? {
        to.write_meta("config.toml", &config)?;
    }
    Ok(report)
}
