//! The conformance suite on the in-memory store.

use memdir::history::History;
use memdir::{Backend, InMemoryStore};
use memdir_store_tests::Harness;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Tenants by name. Opening one again gives a second store handle onto the same memory (as a
/// second server over one database would have) and the same history.
#[derive(Default)]
struct Memories(Mutex<HashMap<String, Tenant>>);

/// One memory: its files and its history.
type Tenant = (InMemoryStore, Option<Arc<dyn History>>);

impl Harness for Memories {
    fn open(&self, tenant: &str) -> Backend {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (store, history) = all.entry(tenant.to_string()).or_insert_with(|| {
            let b = InMemoryStore::new();
            let h = b.backend().history;
            (b, h)
        });
        Backend {
            store: Arc::new(store.clone()),
            history: history.clone(),
            vectors: None,
        }
    }

    /// The history's snapshots are all it keeps, and the suite reads every change's.
    fn raw_hits(&self, _tenant: &str, _needle: &str) -> Option<Vec<String>> {
        None
    }
}

memdir_store_tests::store_tests!(Memories::default());
