//! Each tenant's gate secrets (the ledger's key and the head memdir last wrote) in a table of
//! their own, `memdir.gate_keys`, beside the tenant's files but not among them: whoever can
//! rewrite a tenant's `files` and `meta` rows alone (a restored dump, a tenant's import, a bug
//! that writes any path) can neither read the key nor make the remembered head agree with a
//! forged ledger. `gate verify` then finds a ledger rewritten whole, or cut with its head.
//!
//! The table is created on first use (under an advisory lock, so two processes do not race),
//! outside the numbered migrations: it is additive, and nothing else refers to it. Removing a
//! tenant removes its row.

use crate::{Db, db_err, pool_err};
use memdir_store::bridge::Bridge;
use memdir_store::{KeyStore, StoreError};
use std::sync::Arc;

/// The gates' secrets of one tenant, in `memdir.gate_keys`.
pub struct PgKeys {
    pub(crate) db: Arc<Db>,
    pub(crate) bridge: Arc<Bridge>,
}

const CREATE: &str = "
CREATE TABLE IF NOT EXISTS memdir.gate_keys (
    tenant text NOT NULL REFERENCES memdir.tenants ON DELETE CASCADE,
    name   text NOT NULL,
    value  bytea NOT NULL,
    PRIMARY KEY (tenant, name)
)";

impl PgKeys {
    /// Runs `sql` with the tenant, the name and the value, once the table exists.
    fn run<T: Send + 'static>(
        &self,
        name: &str,
        value: Option<Vec<u8>>,
        f: impl FnOnce(Vec<tokio_postgres::Row>, u64) -> T + Send + 'static,
        sql: &'static str,
    ) -> Result<T, StoreError> {
        let (db, name) = (self.db.clone(), name.to_string());
        self.bridge.run(async move {
            let mut c = db.pool.get().await.map_err(pool_err)?;
            let exists: bool = c
                .query_one("SELECT to_regclass('memdir.gate_keys') IS NOT NULL", &[])
                .await
                .map_err(db_err)?
                .get(0);
            if !exists {
                let tx = c.transaction().await.map_err(db_err)?;
                tx.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended('memdir/gate_keys', 0))",
                    &[],
                )
                .await
                .map_err(db_err)?;
                tx.batch_execute(CREATE).await.map_err(db_err)?;
                tx.commit().await.map_err(db_err)?;
            }
            match value {
                None => {
                    let rows = c.query(sql, &[&db.tenant, &name]).await.map_err(db_err)?;
                    Ok(f(rows, 0))
                }
                Some(v) => {
                    let n = c
                        .execute(sql, &[&db.tenant, &name, &v])
                        .await
                        .map_err(db_err)?;
                    Ok(f(Vec::new(), n))
                }
            }
        })
    }
}

impl KeyStore for PgKeys {
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.run(
            name,
            None,
            |rows, _| rows.first().map(|r| r.get::<_, Vec<u8>>(0)),
            "SELECT value FROM memdir.gate_keys WHERE tenant = $1 AND name = $2",
        )
    }

    fn create(&self, name: &str, bytes: &[u8]) -> Result<bool, StoreError> {
        self.run(
            name,
            Some(bytes.to_vec()),
            |_, n| n == 1,
            "INSERT INTO memdir.gate_keys (tenant, name, value) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
        )
    }

    fn replace(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.run(
            name,
            Some(bytes.to_vec()),
            |_, _| (),
            "INSERT INTO memdir.gate_keys (tenant, name, value) VALUES ($1, $2, $3)
             ON CONFLICT (tenant, name) DO UPDATE SET value = excluded.value",
        )
    }

    fn shown(&self) -> String {
        format!(
            "the database's memdir.gate_keys (tenant {})",
            self.db.tenant
        )
    }
}
