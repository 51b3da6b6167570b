//! The conformance suite on PostgreSQL: every store-level and engine-level check the folder
//! and in-memory stores pass, against a real server (a throwaway database per test).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir_store_pg::testing as common;

use memdir_store::Backend;
use memdir_store_pg::PgStore;
use memdir_store_tests::Harness;

/// Tenants are memories of one test database; opening a tenant again is a second store (its
/// own pool and runtime) onto the same rows, as a second server would have.
struct Pg(common::TestDb);

impl Harness for Pg {
    fn open(&self, tenant: &str) -> Backend {
        PgStore::create(&self.0.url(tenant)).unwrap().backend()
    }

    /// Every row of every memdir table (all tenants of the test database), as `pg_dump` writes
    /// them: text as text, `bytea` as hex.
    fn raw_hits(&self, _tenant: &str, needle: &str) -> Option<Vec<String>> {
        Some(self.0.raw_hits(needle))
    }
}

memdir_store_tests::store_tests!(optional common::TestDb::new().map(Pg));
