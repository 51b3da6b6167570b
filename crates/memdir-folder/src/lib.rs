//! memdir's local folder backend: a memory as a folder of plain files, with its history in git.
//!
//! [`FolderStore`] confines every path under the root (`openat2(RESOLVE_BENEATH)`), writes whole
//! files by temp, fsync and rename, and locks with `flock`; [`FolderStore::backend`] pairs it with
//! its [`GitHistory`](git::GitHistory). Beside them: the one folder [`walk`], the inotify change
//! [`feed`], the [`stamp`] rule that tells a changed file from an unchanged one, and the folder
//! service's tenant registry ([`tenants::FolderTenants`]). This crate and `memdir-search` are
//! the only ones that touch the file system.
//!
//! ```
//! use memdir_core::path::MemPath;
//! use memdir_folder::FolderStore;
//! use memdir_store::Store;
//! let dir = tempfile::tempdir().unwrap();
//! let store = FolderStore::create(dir.path()).unwrap();
//! store.write(&MemPath::parse("notes/a.md").unwrap(), b"hello\n").unwrap();
//! assert_eq!(std::fs::read(dir.path().join("notes/a.md")).unwrap(), b"hello\n");
//! ```
#![deny(missing_docs)]

pub mod atomic;
pub mod feed;
pub mod git;
pub mod keys;
pub mod stamp;
mod store;
pub mod tenants;
pub mod walk;

pub use store::{FolderStore, META_DIR, Touched};
