//! A throwaway PostgreSQL database per test, or a clear skip when there is no server.
//!
//! Every test creates its own database (a unique name, `TEMPLATE template0`) on the server at
//! `MEMDIR_TEST_PG` (default `postgres://postgres@127.0.0.1:5432`) and drops it when done. With no
//! server the test passes after saying on stderr that it was skipped; `MEMDIR_REQUIRE_PG=1`
//! (set by `.ci/run`) turns that skip into a failure.
//!
//! Compiled with the `test-support` feature only (this crate's own tests and the CLI's use it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// One test's database.
pub struct TestDb {
    /// The server, without a database name.
    server: String,
    /// The database's name.
    pub name: String,
}

fn server() -> String {
    std::env::var("MEMDIR_TEST_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

/// Runs SQL on the server's `postgres` database from a private runtime.
pub fn admin(server: &str, db: &str, sql: &str) -> Result<(), String> {
    let url = format!("{server}/{db}");
    let sql = sql.to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let (client, conn) = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            tokio_postgres::connect(&url, tokio_postgres::NoTls),
        )
        .await
        .map_err(|_| "timed out".to_string())?
        .map_err(|e| e.to_string())?;
        let task = tokio::spawn(conn);
        let res = client.batch_execute(&sql).await.map_err(|e| e.to_string());
        drop(client);
        let _ = task.await;
        res
    })
}

/// Runs SQL on the test server's `postgres` database.
pub fn admin_server(sql: &str) -> Result<(), String> {
    admin(&server(), "postgres", sql)
}

impl TestDb {
    /// A fresh database, or `None` (after saying so) when no server answers.
    pub fn new() -> Option<TestDb> {
        let server = server();
        let name = format!(
            "memdir_test_{}_{}_{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_micros())
                .unwrap_or(0),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        match admin(
            &server,
            "postgres",
            &format!("CREATE DATABASE {name} TEMPLATE template0"),
        ) {
            Ok(()) => Some(TestDb { server, name }),
            Err(e) => {
                if std::env::var("MEMDIR_REQUIRE_PG").is_ok_and(|v| v == "1") {
                    panic!(
                        "PostgreSQL is required (MEMDIR_REQUIRE_PG=1) but {server} answered: {e}"
                    );
                }
                // Straight to stderr, past the test harness's capture, so a skip is never silent.
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED (no PostgreSQL at {server}: {e}); set MEMDIR_REQUIRE_PG=1 to fail instead"
                );
                None
            }
        }
    }

    /// The store URL of `tenant` in this database.
    pub fn url(&self, tenant: &str) -> String {
        format!("{}/{}?tenant={tenant}", self.server, self.name)
    }

    /// Runs SQL in this database.
    pub fn sql(&self, sql: &str) -> Result<(), String> {
        admin(&self.server, &self.name, sql)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let _ = admin(
            &self.server,
            "postgres",
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// A fresh database for this test, or return from the test (skipped).
#[macro_export]
macro_rules! pg_or_skip {
    () => {
        match $crate::testing::TestDb::new() {
            Some(db) => db,
            None => return,
        }
    };
}
