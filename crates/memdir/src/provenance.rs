//! Provenance: who changed what, and why. The records are the history seam's
//! (`memdir-store`); a folder keeps them in git (`memdir-folder`).

use crate::store::{Store, StoreError};
use memdir_core::path::MemPath;

pub use memdir_folder::git::{GIT_LOCK_GRACE, Git};
pub use memdir_store::history::{
    Actor, BlameLine, Changes, HAND_EDIT, HistoryEntry, REASON_TRAILER, SOURCE_TRAILER, Source,
    message,
};

/// Applies changes (from [`Git::revert_changes`]) through a store.
pub fn apply(store: &dyn Store, changes: &[(MemPath, Option<Vec<u8>>)]) -> Result<(), StoreError> {
    for (path, content) in changes {
        match content {
            Some(c) => store.write(path, c)?,
            None => match store.remove(path) {
                Ok(()) | Err(StoreError::NotFound(_)) => {}
                Err(e) => return Err(e),
            },
        }
    }
    Ok(())
}
