//! The conformance suite every memdir storage backend runs, with the same expectations.
//!
//! A backend's test file implements [`Harness`] (how to open a memory by tenant name) and
//! calls [`store_tests!`], which expands to one `#[test]` per check below: store level (round
//! trips, atomic replace, listing, removal, renames, preconditions, concurrent appends, locks
//! across store instances, Unicode names, large files, tenant isolation) and engine level
//! (context, notes and `MEMORY.md`, proposals, sweep, undo, search, forget), where the engine's
//! answers on the backend must equal its answers on the in-memory reference store.
//!
//! ```text
//! struct Folders(tempfile::TempDir);
//! impl memdir_store_tests::Harness for Folders {
//!     fn open(&self, tenant: &str) -> memdir::Backend {
//!         let root = self.0.path().join(tenant);
//!         memdir::FolderStore::create(&root).unwrap().backend()
//!     }
//!     fn raw_hits(&self, tenant: &str, needle: &str) -> Option<Vec<String>> {
//!         Some(memdir_store_tests::folder_hits(&self.0.path().join(tenant), needle))
//!     }
//! }
//! memdir_store_tests::store_tests!(Folders(tempfile::tempdir().unwrap()));
//! ```
#![deny(missing_docs)]
// This crate is test code: a failed expectation is a panic with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod engine;
mod forget;
mod store;

pub use engine::*;
pub use forget::*;
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

    /// Where the backend's own storage of `tenant` still holds `needle`, byte for byte, one
    /// line per place: every object and older object version in a bucket, every row of a
    /// database, every file of a folder and every object of its git. `None` when the backend
    /// keeps nothing the seams do not show (the in-memory store), so the suite's reads of every
    /// change are the whole check.
    fn raw_hits(&self, tenant: &str, needle: &str) -> Option<Vec<String>>;
}

/// Where a folder memory at `root` still holds `needle`: any of its files byte for byte
/// (`.git` and `.memdir` too), and any object of its git repository, whose packs are
/// compressed (`git cat-file --batch-all-objects`, unreachable objects too).
pub fn folder_hits(root: &std::path::Path, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
            {
                hits.push(p.display().to_string());
            }
        }
    }
    if root.join(".git").exists() {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["cat-file", "--batch-all-objects", "--batch"])
            .output()
            .expect("git runs");
        assert!(out.status.success(), "{out:?}");
        if String::from_utf8_lossy(&out.stdout).contains(needle) {
            hits.push("an object of .git".into());
        }
    }
    hits
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
            engine_undo, engine_search, engine_vectors, engine_forget, engine_supersede,
            engine_supersede_proposal
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
            engine_undo, engine_search, engine_vectors, engine_forget, engine_supersede,
            engine_supersede_proposal
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
