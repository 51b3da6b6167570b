//! The conformance suite through pgbouncer in transaction mode (issue 35, item 5): a pooler that
//! hands each transaction whatever server connection is free, so a statement must not rely on
//! a named prepared statement outside a transaction, and a lock must not outlive its
//! transaction. Each test starts its own pgbouncer (see `testing::Pgbouncer`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir_store_pg::testing as common;

use memdir_store::Backend;
use memdir_store_pg::PgStore;
use memdir_store_tests::Harness;

/// Every store opened through the pooler; the pooler goes first, then the database.
struct Pooled(common::Pgbouncer, common::TestDb);

impl Harness for Pooled {
    fn open(&self, tenant: &str) -> Backend {
        PgStore::create(&self.0.url(&self.1, Some(tenant)))
            .unwrap()
            .backend()
    }

    /// The database's rows, read directly (not through the pooler).
    fn raw_hits(&self, _tenant: &str, needle: &str) -> Option<Vec<String>> {
        Some(self.1.raw_hits(needle))
    }
}

fn pooled() -> Option<Pooled> {
    let db = common::TestDb::new()?;
    Some(Pooled(common::Pgbouncer::start(&db)?, db))
}

memdir_store_tests::store_tests!(optional pooled());
