//! The conformance suite on the local folder store.
#![allow(clippy::unwrap_used)]

use memdir::{Backend, FolderStore};
use memdir_store_tests::Harness;

/// Each tenant is a folder under one temp dir; opening it again is a second `FolderStore`
/// on the same folder, as a second process would have.
struct Folders(tempfile::TempDir);

impl Harness for Folders {
    fn open(&self, tenant: &str) -> Backend {
        let root = self.0.path().join(tenant);
        FolderStore::create(&root).unwrap().backend()
    }

    fn raw_hits(&self, tenant: &str, needle: &str) -> Option<Vec<String>> {
        Some(memdir_store_tests::folder_hits(
            &self.0.path().join(tenant),
            needle,
        ))
    }
}

fn harness() -> Folders {
    Folders(tempfile::tempdir().unwrap())
}

memdir_store_tests::store_tests!(harness());
