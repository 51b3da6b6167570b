//! The path refusals every backend words the same way, so a caller (and a test) sees one
//! message whichever store holds the memory.

use crate::store::StoreError;
use memdir_core::path::MemPath;
use std::fmt::Display;

/// The refusal of an operation on the memory root itself.
pub fn root_refused() -> StoreError {
    StoreError::InvalidPath("that operation needs a file or folder, not the memory root".into())
}

/// Refuses the memory root: the operation needs a file or folder.
pub fn not_root(path: &MemPath) -> Result<(), StoreError> {
    if path.is_root() {
        return Err(root_refused());
    }
    Ok(())
}

/// A folder on the way to `path` is a file.
pub fn part_is_file(path: impl Display) -> StoreError {
    StoreError::InvalidPath(format!(
        "{path}: a part of the path is a file, not a folder"
    ))
}

/// `path` is a folder where a file was expected.
pub fn is_folder(path: impl Display) -> StoreError {
    StoreError::InvalidPath(format!("{path} is a folder, not a file"))
}

/// A move's target exists: moves never overwrite.
pub fn exists_already(to: impl Display) -> StoreError {
    StoreError::Conflict(format!(
        "{to} already exists: moving never overwrites; remove it first or pick another name"
    ))
}
