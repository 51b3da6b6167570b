//! Warm search where there is no inotify: never available, so every search reads the disk
//! (see `warm.rs` for the Linux implementation).

use super::walk::{FileRef, Scope};
use std::path::Path;
use std::sync::Arc;

/// The in-memory copy of a folder's searchable files: here it never holds anything.
#[derive(Debug, Default)]
pub struct Warm {
    /// The folder's keyword index, open between searches (it needs no change feed: a kept
    /// connection is checked against the index file, and the index against the files).
    pub(crate) keyword: crate::keyword::Kept,
}

impl Warm {
    /// Always `None`: the caller walks the disk.
    pub(crate) fn files(&self, _root: &Path, _scope: &Scope) -> Option<(Arc<Vec<FileRef>>, u64)> {
        None
    }

    /// Always false: indexes sync on every search.
    pub(crate) fn is_stamped(&self, _key: &'static str, _generation: u64) -> bool {
        false
    }

    /// Always `None`: there is no change feed to tell.
    pub fn generation(&self, _root: &Path) -> Option<u64> {
        None
    }

    /// Closes the keyword index kept open between searches, if any (see `warm.rs`).
    pub fn close_index(&self) {
        self.keyword.clear();
    }

    /// Nothing is held.
    pub fn held_bytes(&self) -> usize {
        0
    }

    /// Does nothing.
    pub(crate) fn stamp(&self, _key: &'static str, _generation: u64) {}
}
