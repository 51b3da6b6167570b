//! A memory service's tenants in PostgreSQL: `memdir.credentials` beside the memories.
//!
//! Every tenant's store shares one connection pool (and runtime), so a service with thousands
//! of tenants holds a bounded number of connections. A token is looked up by its SHA-256 (kept
//! as its 32 bytes) through the table's unique index: the hash of a random 256-bit secret gives
//! nothing to steer by timing.

use crate::held::Handle;
use crate::{Connect, PgStore, TENANT_PARAM, db_err};
use deadpool_postgres::Pool;
use memdir_store::StoreError;
use memdir_store::bridge::Bridge;
use memdir_store::registry::{DAY_MS, Job, Schedule, Tenant, Tenants, check_name, check_principal};
use std::sync::Arc;

/// Connections a service's shared pool keeps at most. A change holds up to three at once (its
/// history lock, a file lock, a write), so the service bounds its concurrent tool calls well
/// below this.
pub const SERVICE_POOL_SIZE: usize = 48;

/// The tenants of one database, and their memories.
pub struct PgTenants {
    pub(crate) pool: Pool,
    pub(crate) bridge: Arc<Bridge>,
    connect: String,
    /// This handle's (instance's) own id in the jobs it claims, random.
    holder: i64,
}

impl std::fmt::Debug for PgTenants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgTenants").finish_non_exhaustive()
    }
}

/// A random id for a handle's job claims (std's hasher keys come from the OS's randomness).
fn random_holder() -> i64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    // Never 0, the column's default (a row no handle holds).
    (h.finish() as i64) | 1
}

fn no_tenant(name: &str) -> StoreError {
    StoreError::NotFound(format!(
        "no tenant {name:?}: `memdir tenant list` shows them"
    ))
}

impl PgTenants {
    /// Connects to the service database `url` names (`postgres://HOST/DB`, no `tenant`), creating
    /// the database when `create` and it is missing.
    pub fn open(url: &str, create: bool) -> Result<PgTenants, StoreError> {
        PgTenants::open_sized(url, create, SERVICE_POOL_SIZE)
    }

    /// [`PgTenants::open`] with a pool of at most `pool_size` connections (the operator's
    /// `[store] pool_size`): each instance of a service holds up to this many of the server's.
    pub fn open_sized(url: &str, create: bool, pool_size: usize) -> Result<PgTenants, StoreError> {
        if pool_size == 0 {
            return Err(StoreError::InvalidPath(
                "the connection pool size is 0: set it to at least 1".into(),
            ));
        }
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        if query
            .split('&')
            .any(|p| p.split('=').next() == Some(TENANT_PARAM))
        {
            return Err(StoreError::InvalidPath(format!(
                "a service's store URL names no tenant: use {base} (each tenant is chosen by its token)"
            )));
        }
        let connected = match crate::pool_sized(url, pool_size) {
            Err(Connect::NoDatabase(config)) if create => {
                crate::create_database(&config)?;
                crate::pool_sized(url, pool_size)
            }
            other => other,
        };
        let (pool, bridge) = connected.map_err(StoreError::from)?;
        Ok(PgTenants {
            pool,
            bridge,
            connect: url.to_string(),
            holder: random_holder(),
        })
    }

    /// A tenant's store over the shared pool.
    pub fn store(&self, name: &str) -> Result<PgStore, StoreError> {
        check_name(name)?;
        Ok(PgStore::of(
            self.pool.clone(),
            self.bridge.clone(),
            &self.connect,
            name.to_string(),
        ))
    }
}

/// SQL for when a job is next due by the database's clock: `every` (milliseconds, a bigint
/// parameter) from now, or with `at` (milliseconds after midnight UTC, NULL for none) from the
/// latest such time of day at or before now, so a late run (an instance was down) does not move
/// the next one off its time. The clock is read once: `now_ms()` is volatile, and two readings
/// a millisecond apart put the run a millisecond off its time of day.
fn next_due(at: &str, every: &str) -> String {
    format!(
        "CASE WHEN {at}::bigint IS NULL THEN memdir.now_ms() + {every}::bigint
         ELSE (SELECT n - mod(mod(n - {at}::bigint, {DAY_MS}) + {DAY_MS}, {DAY_MS}) + {every}::bigint
               FROM (SELECT memdir.now_ms() AS n) AS clock) END"
    )
}

/// Marks a job done when `holder` still holds it: due again by `schedule`, its lease released.
async fn done(
    c: &Handle,
    name: &str,
    job: Job,
    holder: i64,
    schedule: Schedule,
) -> Result<(), StoreError> {
    c.execute(
        &format!(
            "UPDATE memdir.jobs SET due_ms = {}, lease_ms = 0
             WHERE tenant = $1 AND job = $2 AND holder = $3",
            next_due("$4", "$5")
        ),
        &[
            &name,
            &job.name(),
            &holder,
            &schedule.at_ms,
            &schedule.every_ms,
        ],
    )
    .await
    .map_err(db_err)?;
    Ok(())
}

fn tenant_of(r: &tokio_postgres::Row) -> Tenant {
    Tenant {
        name: r.get(0),
        principal: r.get(1),
        created_ms: r.get(2),
        token_set_ms: r.get(3),
    }
}

impl Tenants for PgTenants {
    fn add(&self, tenant: &Tenant, token_hash: &str) -> Result<(), StoreError> {
        check_name(&tenant.name)?;
        check_principal(&tenant.principal)?;
        let (pool, t, h) = (self.pool.clone(), tenant.clone(), token_hash.to_string());
        self.bridge.run(async move {
            let mut c = Handle::pooled(&pool).await?;
            let tx = c.tx().await?;
            tx.execute(
                "INSERT INTO memdir.tenants (tenant, created_ms) VALUES ($1, memdir.now_ms())
                 ON CONFLICT DO NOTHING",
                &[&t.name],
            )
            .await
            .map_err(db_err)?;
            let added = tx
                .execute(
                    "INSERT INTO memdir.credentials (tenant, principal, token_digest, created_ms, token_set_ms)
                     VALUES ($1, $2, decode($3, 'hex'), memdir.now_ms(), memdir.now_ms())
                     ON CONFLICT (tenant) DO NOTHING",
                    &[&t.name, &t.principal, &h],
                )
                .await
                .map_err(db_err)?;
            if added == 0 {
                return Err(StoreError::Conflict(format!(
                    "tenant {:?} already exists: `memdir tenant rotate {}` gives it a new token",
                    t.name, t.name
                )));
            }
            tx.execute(
                "INSERT INTO memdir.jobs (tenant, job) VALUES ($1, 'sweep'), ($1, 'consolidate')
                 ON CONFLICT DO NOTHING",
                &[&t.name],
            )
            .await
            .map_err(db_err)?;
            tx.commit().await.map_err(db_err)
        })
    }

    /// Due jobs by the database's clock (one clock for every instance), oldest first; a row
    /// another instance is claiming is skipped, not waited for. Rows of tenants without
    /// credentials (removed, memory kept) are claimed and marked done without a run.
    fn claim_jobs(
        &self,
        job: Job,
        schedule: Schedule,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<Tenant>, StoreError> {
        let (pool, holder) = (self.pool.clone(), self.holder);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            if let Some(at) = schedule.at_ms {
                // A run at a time of day: a tenant's first is at the next such time, not now.
                c.execute(
                    &format!(
                        "UPDATE memdir.jobs SET due_ms = {} WHERE job = $1 AND due_ms = 0",
                        next_due("$2", "$3")
                    ),
                    &[&job.name(), &Some(at), &DAY_MS],
                )
                .await
                .map_err(db_err)?;
            }
            let rows = c
                .query(
                    "WITH due AS (
                         SELECT tenant FROM memdir.jobs
                         WHERE job = $1 AND due_ms <= memdir.now_ms() AND lease_ms <= memdir.now_ms()
                         ORDER BY due_ms LIMIT $2 FOR UPDATE SKIP LOCKED),
                     claimed AS (
                         UPDATE memdir.jobs j SET lease_ms = memdir.now_ms() + $3, holder = $4
                         FROM due WHERE j.job = $1 AND j.tenant = due.tenant
                         RETURNING j.tenant)
                     SELECT cl.tenant, c.principal, c.created_ms, c.token_set_ms
                     FROM claimed cl LEFT JOIN memdir.credentials c ON c.tenant = cl.tenant",
                    &[&job.name(), &limit, &lease_ms, &holder],
                )
                .await
                .map_err(db_err)?;
            let mut out = Vec::new();
            for r in rows {
                if r.get::<_, Option<String>>(1).is_none() {
                    done(&c, &r.get::<_, String>(0), job, holder, schedule).await?;
                    continue;
                }
                out.push(tenant_of(&r));
            }
            Ok(out)
        })
    }

    fn renew_job(&self, name: &str, job: Job, lease_ms: i64) -> Result<bool, StoreError> {
        let (pool, name, holder) = (self.pool.clone(), name.to_string(), self.holder);
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let n = c
                .execute(
                    "UPDATE memdir.jobs SET lease_ms = memdir.now_ms() + $3
                     WHERE tenant = $1 AND job = $2 AND holder = $4 AND lease_ms > 0",
                    &[&name, &job.name(), &lease_ms, &holder],
                )
                .await
                .map_err(db_err)?;
            Ok(n == 1)
        })
    }

    fn job_done(&self, name: &str, job: Job, schedule: Schedule) -> Result<(), StoreError> {
        let (pool, name, holder) = (self.pool.clone(), name.to_string(), self.holder);
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            done(&c, &name, job, holder, schedule).await
        })
    }

    fn list(&self) -> Result<Vec<Tenant>, StoreError> {
        let pool = self.pool.clone();
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let rows = c
                .query(
                    "SELECT tenant, principal, created_ms, token_set_ms FROM memdir.credentials
                     ORDER BY tenant COLLATE \"C\"",
                    &[],
                )
                .await
                .map_err(db_err)?;
            Ok(rows.iter().map(tenant_of).collect())
        })
    }

    /// An index scan from `after`, whatever the number of tenants.
    fn list_page(&self, after: Option<&str>, limit: usize) -> Result<Vec<Tenant>, StoreError> {
        let pool = self.pool.clone();
        let after = after.map(str::to_string);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let rows = c
                .query(
                    "SELECT tenant, principal, created_ms, token_set_ms FROM memdir.credentials
                     WHERE tenant COLLATE \"C\" > coalesce($1, '')
                     ORDER BY tenant COLLATE \"C\" LIMIT $2",
                    &[&after, &limit],
                )
                .await
                .map_err(db_err)?;
            Ok(rows.iter().map(tenant_of).collect())
        })
    }

    fn set_token(&self, name: &str, token_hash: &str) -> Result<(), StoreError> {
        let (pool, n, h) = (self.pool.clone(), name.to_string(), token_hash.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let n_set = c
                .execute(
                    "UPDATE memdir.credentials SET token_digest = decode($2, 'hex'), token_set_ms = memdir.now_ms()
                     WHERE tenant = $1",
                    &[&n, &h],
                )
                .await
                .map_err(db_err)?;
            if n_set == 0 {
                return Err(no_tenant(&n));
            }
            Ok(())
        })
    }

    fn remove(&self, name: &str, purge: bool) -> Result<(), StoreError> {
        check_name(name)?;
        let (pool, n) = (self.pool.clone(), name.to_string());
        self.bridge.run(async move {
            let mut c = Handle::pooled(&pool).await?;
            let tx = c.tx().await?;
            let creds = tx
                .execute("DELETE FROM memdir.credentials WHERE tenant = $1", &[&n])
                .await
                .map_err(db_err)?;
            let mut memory = 0;
            if purge {
                // The tenant's tree lock, so no change of its own is half-way through.
                tx.execute(
                    "SELECT pg_advisory_xact_lock(memdir.lock_key('tree', $1, ''))",
                    &[&n],
                )
                .await
                .map_err(db_err)?;
                tx.execute(
                    "DELETE FROM memdir.history WHERE tenant_id = memdir.tenant_id($1)",
                    &[&n],
                )
                .await
                .map_err(db_err)?;
                for table in [
                    "memdir.files",
                    "memdir.meta",
                    "memdir.pending",
                    "memdir.vector_files",
                    "memdir.vector_meta",
                    "memdir.vector_live",
                ] {
                    tx.execute(&format!("DELETE FROM {table} WHERE tenant = $1"), &[&n])
                        .await
                        .map_err(db_err)?;
                }
                memory = tx
                    .execute("DELETE FROM memdir.tenants WHERE tenant = $1", &[&n])
                    .await
                    .map_err(db_err)?;
            }
            if creds == 0 && memory == 0 {
                return Err(no_tenant(&n));
            }
            tx.commit().await.map_err(db_err)
        })
    }

    fn by_token(&self, token_hash: &str) -> Result<Option<Tenant>, StoreError> {
        let (pool, h) = (self.pool.clone(), token_hash.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let row = c
                .query_opt(
                    "SELECT tenant, principal, created_ms, token_set_ms FROM memdir.credentials
                     WHERE token_digest = decode($1, 'hex')",
                    &[&h],
                )
                .await
                .map_err(db_err)?;
            Ok(row.as_ref().map(tenant_of))
        })
    }

    fn get(&self, name: &str) -> Result<Option<Tenant>, StoreError> {
        let (pool, n) = (self.pool.clone(), name.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let row = c
                .query_opt(
                    "SELECT tenant, principal, created_ms, token_set_ms FROM memdir.credentials
                     WHERE tenant = $1",
                    &[&n],
                )
                .await
                .map_err(db_err)?;
            Ok(row.as_ref().map(tenant_of))
        })
    }

    fn backend(&self, name: &str, create: bool) -> Result<memdir_store::Backend, StoreError> {
        let store = self.store(name)?;
        let (pool, n) = (self.pool.clone(), name.to_string());
        let exists = self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            if create {
                c.execute(
                    "INSERT INTO memdir.tenants (tenant, created_ms) VALUES ($1, memdir.now_ms())
                     ON CONFLICT DO NOTHING",
                    &[&n],
                )
                .await
                .map_err(db_err)?;
            }
            let row = c
                .query_opt("SELECT 1 FROM memdir.tenants WHERE tenant = $1", &[&n])
                .await
                .map_err(db_err)?;
            Ok(row.is_some())
        })?;
        if !exists {
            return Err(no_tenant(name));
        }
        Ok(store.backend())
    }

    fn ready(&self) -> Result<(), StoreError> {
        let pool = self.pool.clone();
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            c.query_one("SELECT 1", &[]).await.map_err(db_err)?;
            Ok(())
        })
    }
}
