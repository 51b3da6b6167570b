//! The conformance suite every memdir storage backend runs, with the same expectations.
//!
//! A backend's test file implements [`Harness`] (how to open a memory by tenant name) and
//! calls [`store_tests!`], which expands to one `#[test]` per check below: store level (round
//! trips, atomic replace, listing, removal, renames, preconditions, concurrent appends, locks
//! across store instances, Unicode names, large files, tenant isolation) and engine level
//! (context, notes and `MEMORY.md`, proposals, sweep, undo, search), where the engine's
//! answers on the backend must equal its answers on the in-memory reference store.
//!
//! ```text
//! struct Folders(tempfile::TempDir);
//! impl memdir_store_tests::Harness for Folders {
//!     fn open(&self, tenant: &str) -> memdir::Backend {
//!         let root = self.0.path().join(tenant);
//!         memdir::FolderStore::create(&root).unwrap().backend()
//!     }
//! }
//! memdir_store_tests::store_tests!(Folders(tempfile::tempdir().unwrap()));
//! ```
#![deny(missing_docs)]
// This crate is test code: a failed expectation is a panic with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod engine;
mod store;

pub use engine::*;
pub use store::*;

use memdir::Backend;

/// How a backend's tests open memories.
///
/// Each test builds a fresh harness, so every tenant starts empty. Opening the same tenant
/// twice gives two independent handles onto the same memory (a second process, a second
/// server); different tenants never see each other's files.
pub trait Harness {
    /// Opens (creating when needed) the memory named `tenant`.
    fn open(&self, tenant: &str) -> Backend;
}

/// Expands to one `#[test]` per conformance check, each given a fresh harness from `$make`.
#[macro_export]
macro_rules! store_tests {
    // A backend whose service may be missing: `$make` gives an `Option` of a harness, and a
    // test given `None` returns at once (the harness has said why it skips).
    (optional $make:expr) => {
        $crate::store_tests!(@each_opt $make;
            round_trip, atomic_replace, listing, remove_recursive, rename_never_overwrites,
            preconditions, preconditions_race, appends_concurrent, lock_excludes_second_instance,
            unicode_names, large_files, tenants_isolated,
            engine_context, engine_notes_and_index, engine_proposals, engine_sweep,
            engine_undo, engine_search, engine_vectors, engine_supersede
        );
    };
    (@each_opt $make:expr; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let Some(harness) = $make else { return };
                $crate::$name(&harness);
            }
        )*
    };
    ($make:expr) => {
        $crate::store_tests!(@each $make;
            round_trip, atomic_replace, listing, remove_recursive, rename_never_overwrites,
            preconditions, preconditions_race, appends_concurrent, lock_excludes_second_instance,
            unicode_names, large_files, tenants_isolated,
            engine_context, engine_notes_and_index, engine_proposals, engine_sweep,
            engine_undo, engine_search, engine_vectors, engine_supersede
        );
    };
    (@each $make:expr; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let harness = $make;
                $crate::$name(&harness);
            }
        )*
    };
}
