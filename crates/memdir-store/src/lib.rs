//! memdir's storage seams: what every backend implements, and what every backend shares.
//!
//! A backend is a [`Store`] (files with versions and preconditions, and the [`Locks`] every
//! process opening the same memory shares), a [`History`](history::History) of changes, and
//! optionally a [`VectorStore`](vectors::VectorStore) for the vector index's rows. A service
//! backend also keeps a [`Tenants`](registry::Tenants) registry. The traits speak in
//! [`MemPath`](memdir_core::path::MemPath)s, bytes and neutral values; nothing here touches a
//! disk, a database or the network, so a backend crate depends on this crate and
//! `memdir-core` only. [`InMemoryStore`] is the reference implementation and the strict fake
//! the engine's tests run on; every backend passes the same conformance suite
//! (`memdir-store-tests`).
//!
//! ```
//! use memdir_core::path::MemPath;
//! use memdir_store::{InMemoryStore, Precondition, Store, Version};
//! let store = InMemoryStore::new();
//! let path = MemPath::parse("notes/a.md").unwrap();
//! let v = store.write_if(&path, b"hello\n", &Precondition::Absent).unwrap();
//! assert_eq!(v, Version::of(b"hello\n"));
//! assert!(store.write_if(&path, b"again\n", &Precondition::Absent).is_err());
//! ```
#![deny(missing_docs)]

pub mod backend;
#[cfg(feature = "bridge")]
pub mod bridge;
pub mod history;
pub mod in_memory;
pub mod keys;
pub mod paths;
pub mod registry;
pub mod signins;
pub mod store;
pub mod vectors;

pub use backend::{Backend, CopyReport, copy};
pub use history::{Actor, History, Source};
pub use in_memory::{InMemoryHistory, InMemoryStore};
pub use keys::KeyStore;
pub use store::{
    Contents, Entry, EntryKind, LockGuard, LockName, Locks, Precondition, Prefetched, Reader,
    Store, StoreError, Version, Want,
};
