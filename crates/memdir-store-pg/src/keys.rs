//! Each tenant's gate secrets (the ledger's key and the head memdir last wrote) in a table of
//! their own, `memdir.gate_keys`, beside the tenant's files but not among them: whoever can
//! rewrite a tenant's `files` and `meta` rows alone (a restored dump, a tenant's import, a bug
//! that writes any path) can neither read the key nor make the remembered head agree with a
//! forged ledger. `gate verify` then finds a ledger rewritten whole, or cut with its head.
//!
//! The table is migration 7 (`IF NOT EXISTS`: a database where an earlier build made it on first
//! use keeps it). Removing a tenant removes its row.

use crate::held::Handle;
use crate::{Db, db_err};
use memdir_store::bridge::Bridge;
use memdir_store::{KeyStore, StoreError};
use std::sync::Arc;

/// The gates' secrets of one tenant, in `memdir.gate_keys`.
pub struct PgKeys {
    pub(crate) db: Arc<Db>,
    pub(crate) bridge: Arc<Bridge>,
}

/// Migration 7: the table.
pub(crate) const MIGRATION: &str = "
CREATE TABLE IF NOT EXISTS memdir.gate_keys (
    tenant text NOT NULL REFERENCES memdir.tenants ON DELETE CASCADE,
    name   text NOT NULL,
    value  bytea NOT NULL,
    PRIMARY KEY (tenant, name)
)";

impl PgKeys {
    /// Runs `sql` with the tenant, the name and the value.
    fn run<T: Send + 'static>(
        &self,
        name: &str,
        value: Option<Vec<u8>>,
        f: impl FnOnce(Vec<tokio_postgres::Row>, u64) -> T + Send + 'static,
        sql: &'static str,
    ) -> Result<T, StoreError> {
        let (db, name) = (self.db.clone(), name.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&db.pool).await?;
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
        if let Some(answer) = self.db.snaps.current().and_then(|s| s.key(name)) {
            return Ok(answer);
        }
        self.run(
            name,
            None,
            |rows, _| rows.first().map(|r| r.get::<_, Vec<u8>>(0)),
            "SELECT value FROM memdir.gate_keys WHERE tenant = $1 AND name = $2",
        )
    }

    fn create(&self, name: &str, bytes: &[u8]) -> Result<bool, StoreError> {
        self.db.snaps.forget();
        self.run(
            name,
            Some(bytes.to_vec()),
            |_, n| n == 1,
            "INSERT INTO memdir.gate_keys (tenant, name, value) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
        )
    }

    fn replace(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.db.snaps.forget();
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
