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
        let server = std::env::var("MEMDIR_TEST_PG")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
        let out = std::process::Command::new("pg_dump")
            .arg(format!(
                "--dbname={}/{}",
                server.trim_end_matches('/'),
                self.0.name
            ))
            .args(["--data-only", "--schema=memdir"])
            .output()
            .expect("pg_dump runs");
        assert!(out.status.success(), "{out:?}");
        let dump = String::from_utf8_lossy(&out.stdout);
        let hex: String = needle.bytes().map(|b| format!("{b:02x}")).collect();
        Some(
            dump.lines()
                .filter(|l| l.contains(needle) || l.contains(&hex))
                .map(|l| l.chars().take(120).collect())
                .collect(),
        )
    }
}

memdir_store_tests::store_tests!(optional common::TestDb::new().map(Pg));
