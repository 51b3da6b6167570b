//! memdir's engine: a memory folder of plain files, with layers, caps, context and sweep.
//!
//! The binary (and later the MCP and HTTP front ends) build a [`Memory`] from a [`Store`] and a
//! [`Clock`] and call its methods; nothing here reads environment variables.
//!
//! ```
//! use memdir::{Clock, Memory};
//! let dir = tempfile::tempdir().unwrap();
//! let clock = Clock::fixed("2026-11-30T09:15:00Z".parse().unwrap(), jiff::tz::TimeZone::UTC);
//! let mem = Memory::init(dir.path(), clock).unwrap();
//! mem.log("decided to use PostgreSQL").unwrap();
//! let ctx = mem.context().unwrap();
//! assert!(ctx.render().contains("- 09:15 decided to use PostgreSQL"));
//! ```
#![deny(missing_docs)]

pub mod archive;
pub mod catalogue;
mod change;
mod clock;
pub mod consolidate;
mod ctx;
mod error;
mod files;
pub mod forget;
pub mod gates;
pub mod guard;
pub mod history;
pub mod host;
pub mod import;
mod layers;
pub mod lint;
mod memory;
pub mod note_index;
pub mod notes;
mod outcome;
mod prefetch;
pub mod proposals;
pub mod provenance;
pub mod recent;
pub mod state;
pub mod tenants;
mod trust;

pub use clock::Clock;
pub use error::{Error, ErrorKind};
pub use layers::{Context, LogReceipt, SweepReport};
/// The embedders of the vector index (local model, OpenAI-compatible endpoint).
pub use memdir_embed as embed;
pub use memdir_folder as folder;
pub use memdir_folder::FolderStore;
/// Search: grep, ranked, semantic and hybrid, and the keyword and vector indexes.
pub use memdir_search as search;
pub use memdir_store::{Backend, CopyReport, InMemoryHistory, InMemoryStore, copy};
pub use memdir_store::{backend, keys, store, vectors};
pub use memory::{CORE_FILE, Memory};
pub use outcome::Outcome;
pub use provenance::{Actor, Source};
pub use store::{Entry, EntryKind, LockName, Locks, Precondition, Store, StoreError, Version};
