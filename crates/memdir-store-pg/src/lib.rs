//! memdir's PostgreSQL store: a memory is a tenant, its files are rows.
//!
//! A store is opened from a URL such as `postgres://127.0.0.1/memdir?tenant=alice`: the
//! connection string PostgreSQL's own clients take, plus the `tenant` that names the memory. The
//! crate owns its schema (`memdir.*`, see `schema.rs`) and brings it up to date on connect.
//!
//! Files and folders are rows of `memdir.files` keyed by (tenant, path); a folder has a row of
//! its own, so empty folders exist as they do on disk, and writing `a/b/c.md` creates `a` and
//! `a/b` as the folder store does. Whole-file writes and appends to a file that exists are one
//! `UPDATE` (an append is `content = content || $new`, so concurrent appends never lose or
//! interleave a line); anything that changes the tree (a new file, a remove, a rename, a new
//! folder) runs in a transaction holding the tenant's transaction-scoped advisory lock, so its
//! checks ("is a parent a file?", "does the target exist?") cannot race another change.
//! [`Store::lock`] is a transaction advisory lock in a transaction held open while the guard
//! lives, released when the guard drops (commit) or the session dies, and safe behind a pooler
//! in transaction mode (every lock memdir takes is transaction-scoped). The change lock's
//! transaction is the change's: every call of the thread holding it runs inside it (`held.rs`),
//! and every statement is sent unnamed, so pgbouncer in transaction mode serves memdir as is.
//!
//! ```no_run
//! use memdir_store::Store;
//! use memdir_core::path::MemPath;
//! let store = memdir_store_pg::PgStore::create("postgres://127.0.0.1/memdir?tenant=alice")?;
//! store.append(&MemPath::parse("log/2026-12-01.md")?, b"- 09:15 decided\n")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod delta;
mod held;
mod history;
mod keys;
mod prefetch;
mod schema;
mod settings;
mod signins;
mod tenants;
#[cfg(feature = "test-support")]
pub mod testing;
mod vectors;

pub use history::PgHistory;
pub use keys::PgKeys;
pub use tenants::{PgTenants, SERVICE_POOL_SIZE};
pub use vectors::PgVectors;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use held::{Handle, Held, Tx};
use memdir_core::path::MemPath;
use memdir_store::bridge::Bridge;
use memdir_store::paths;
use memdir_store::store::{LockGuard, LockName, Locks, Precondition, Reentry, Version};
use memdir_store::{Entry, EntryKind, Store, StoreError};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tokio_postgres::NoTls;

/// The URL query parameter that names the memory.
pub const TENANT_PARAM: &str = "tenant";

/// Connections one store keeps at most: each held lock pins one, and a change holds a few.
const POOL_SIZE: usize = 16;

/// A memory stored in PostgreSQL.
pub struct PgStore {
    db: Arc<Db>,
    bridge: Arc<Bridge>,
    /// What `read_all` last fetched: each file's bytes under its row stamp (the row version's
    /// `xmin` and the size), so a repeat search fetches only rows that changed since.
    cache: Mutex<ReadCache>,
}

/// Files' bytes by path, with the stamp they were read at, and their total size.
#[derive(Default)]
struct ReadCache {
    files: std::collections::HashMap<String, (String, Arc<[u8]>)>,
    bytes: usize,
}

/// A store keeps at most this many bytes of file contents for repeat searches; past it, every
/// search fetches what it needs.
const READ_CACHE_MAX: usize = 256 << 20;

/// What every query needs: the pool and the tenant.
struct Db {
    pool: Pool,
    tenant: String,
    /// The database and tenant, naming the memory for [`HELD`].
    memory: String,
    /// What each thread prefetched (see `prefetch.rs`).
    snaps: prefetch::Snapshots,
    /// The changes in progress, one per thread that holds the change lock (see `held.rs`).
    held: Mutex<Vec<Arc<Held>>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("tenant", &self.db.tenant)
            .finish_non_exhaustive()
    }
}

/// A store URL split into the connection settings and the tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgUrl {
    /// The URL without the `tenant` parameter, as PostgreSQL's clients take it.
    pub connect: String,
    /// The memory's name.
    pub tenant: String,
}

impl PgUrl {
    /// Splits `postgres://...?tenant=NAME` (or `postgresql://`).
    pub fn parse(url: &str) -> Result<PgUrl, StoreError> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(StoreError::InvalidPath(
                "a postgresql store URL starts with postgres:// (e.g. postgres://127.0.0.1/memdir?tenant=alice)".into(),
            ));
        }
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut tenant = None;
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some((TENANT_PARAM, v)) => tenant = Some(v.to_string()),
                _ => rest.push(pair),
            }
        }
        let tenant = tenant.ok_or_else(|| {
            StoreError::InvalidPath(format!(
                "the store URL names no memory: add ?{TENANT_PARAM}=NAME (e.g. {base}?{TENANT_PARAM}=alice)"
            ))
        })?;
        check_tenant(&tenant)?;
        let connect = if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", rest.join("&"))
        };
        Ok(PgUrl { connect, tenant })
    }
}

/// Tenant names: 1 to 128 letters, digits, `-`, `_`, `.` or `@`, so they are safe in any URL,
/// log line or lock key.
fn check_tenant(t: &str) -> Result<(), StoreError> {
    let ok = !t.is_empty()
        && t.len() <= 128
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidPath(format!(
            "bad tenant {t:?}: use 1 to 128 letters, digits, '-', '_', '.' or '@'"
        )))
    }
}

/// A database error in the store's neutral words, with PostgreSQL's own message when it has one.
pub(crate) fn db_err(e: tokio_postgres::Error) -> StoreError {
    match e.as_db_error() {
        Some(d) => StoreError::Unavailable(format!("postgresql: {}", d.message())),
        None => StoreError::Unavailable(format!("postgresql: {e}")),
    }
}

/// Why a connection failed: the database does not exist (which `create` can mend), or anything else.
pub(crate) enum Connect {
    NoDatabase(Box<tokio_postgres::Config>),
    Other(StoreError),
}

impl From<StoreError> for Connect {
    fn from(e: StoreError) -> Connect {
        Connect::Other(e)
    }
}

impl From<Connect> for StoreError {
    fn from(c: Connect) -> StoreError {
        match c {
            Connect::Other(e) => e,
            Connect::NoDatabase(config) => StoreError::NotFound(format!(
                "the database {:?} does not exist: `memdir init` creates it, or run createdb",
                config.get_dbname().unwrap_or_default()
            )),
        }
    }
}

/// Creates the database `config` names, connecting to the server's `postgres` database to do it.
pub(crate) fn create_database(config: &tokio_postgres::Config) -> Result<(), StoreError> {
    let name = config.get_dbname().unwrap_or_default().to_string();
    let mut admin = config.clone();
    admin.dbname("postgres");
    Bridge::new("memdir-pg", "postgresql")?.run(async move {
        let (client, conn) = admin.connect(NoTls).await.map_err(|e| {
            StoreError::Unavailable(format!(
                "the database {name:?} does not exist and cannot be created: {}",
                db_message(&e)
            ))
        })?;
        let task = tokio::spawn(conn);
        let quoted = format!("\"{}\"", name.replace('"', "\"\""));
        let made = client
            .batch_execute(&format!("CREATE DATABASE {quoted}"))
            .await;
        drop(client);
        let _ = task.await;
        match made {
            // Another process made it first: as good.
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::DUPLICATE_DATABASE) => {
                Ok(())
            }
            Err(e) => Err(StoreError::Unavailable(format!(
                "the database {name:?} does not exist and cannot be created: {}",
                db_message(&e)
            ))),
            Ok(()) => Ok(()),
        }
    })
}

/// PostgreSQL's own message for an error, else the client's.
fn db_message(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => d.message().to_string(),
        None => e.to_string(),
    }
}

/// A pool error's message, without a prefix.
fn pool_message(e: deadpool_postgres::PoolError) -> String {
    match e {
        deadpool_postgres::PoolError::Backend(e) => db_message(&e),
        e => e.to_string(),
    }
}

fn pool_err(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => db_err(e),
        e => StoreError::Unavailable(format!("postgresql: cannot get a connection: {e}")),
    }
}

impl PgStore {
    /// Opens an existing memory; a tenant that was never created is not found.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        let store = Self::connect(url).map_err(StoreError::from)?;
        let db = store.db.clone();
        let exists = store.bridge.run(async move {
            let c = Handle::pooled(&db.pool).await?;
            let row = c
                .query_opt(
                    "SELECT 1 FROM memdir.tenants WHERE tenant = $1",
                    &[&db.tenant],
                )
                .await
                .map_err(db_err)?;
            Ok(row.is_some())
        })?;
        if !exists {
            return Err(StoreError::NotFound(format!(
                "memory {:?} does not exist in that database: run `memdir init` first",
                store.db.tenant
            )));
        }
        Ok(store)
    }

    /// Creates the memory if needed (and its database, when the server has none of that
    /// name), then opens it.
    pub fn create(url: &str) -> Result<PgStore, StoreError> {
        let store = match Self::connect(url) {
            Err(Connect::NoDatabase(config)) => {
                create_database(&config)?;
                Self::connect(url)
            }
            other => other,
        }?;
        let db = store.db.clone();
        store.bridge.run(async move {
            let c = Handle::pooled(&db.pool).await?;
            c.execute(
                "INSERT INTO memdir.tenants (tenant, created_ms) VALUES ($1, memdir.now_ms())
                 ON CONFLICT DO NOTHING",
                &[&db.tenant],
            )
            .await
            .map_err(db_err)?;
            Ok(())
        })?;
        Ok(store)
    }

    /// Writes a whole file if what is there is what the caller expects (checked atomically
    /// with the write), and returns the new version.
    pub fn write_if(&self, path: &MemPath, data: &[u8], pre: Pre) -> Result<String, StoreError> {
        self.db.snaps.forget();
        let (path, data) = (path.clone(), data.to_vec());
        self.call(|db| async move {
            let v = version_of(&data);
            db.put(path, data, Put::Write(pre)).await?;
            Ok(v)
        })
    }

    /// A file's content and version.
    pub fn read_versioned(&self, path: &MemPath) -> Result<(Vec<u8>, String), StoreError> {
        if path.is_root() {
            return Err(StoreError::InvalidPath(
                "the memory root is a folder, not a file".into(),
            ));
        }
        if let Some(answer) = self.db.snaps.current().and_then(|s| s.read(path)) {
            return answer;
        }
        let path = path.clone();
        self.call(|db| async move {
            let c = db.conn().await?;
            let row = c
                .query_opt(
                    "SELECT is_dir, content, version FROM memdir.files
                     WHERE tenant = $1 AND path = $2",
                    &[&db.tenant, &path.as_str()],
                )
                .await
                .map_err(db_err)?;
            match row {
                Some(r) if r.get::<_, bool>(0) => Err(paths::is_folder(path.as_str())),
                Some(r) => {
                    let data: Vec<u8> = r.get(1);
                    let v: Option<String> = r.get(2);
                    let v = v.unwrap_or_else(|| version_of(&data));
                    Ok((data, v))
                }
                None => Err(db.missing(&c.plain(), &path).await),
            }
        })
    }

    /// The memory's change history, kept in the same database.
    pub fn history(&self) -> PgHistory {
        PgHistory {
            db: self.db.clone(),
            bridge: self.bridge.clone(),
        }
    }

    /// The store, its history and its vector index as the engine's [`Backend`](memdir_store::Backend).
    pub fn backend(self) -> memdir_store::Backend {
        let history = self.history();
        let vectors = PgVectors::new(self.db.clone(), self.bridge.clone());
        memdir_store::Backend {
            store: Arc::new(self),
            history: Some(Arc::new(history)),
            vectors: Some(Arc::new(vectors)),
        }
    }

    /// The memory's name.
    pub fn tenant(&self) -> &str {
        &self.db.tenant
    }

    /// Connects, and brings the schema up to date.
    fn connect(url: &str) -> Result<PgStore, Connect> {
        let PgUrl { connect, tenant } = PgUrl::parse(url)?;
        let (pool, bridge) = pool(&connect)?;
        Ok(PgStore::of(pool, bridge, &connect, tenant))
    }

    /// The store of `tenant` over a pool that may serve others too.
    pub(crate) fn of(pool: Pool, bridge: Arc<Bridge>, connect: &str, tenant: String) -> PgStore {
        let memory = format!("{connect}?{TENANT_PARAM}={tenant}");
        let db = Arc::new(Db {
            pool,
            tenant,
            memory,
            snaps: prefetch::Snapshots::default(),
            held: Mutex::new(Vec::new()),
        });
        PgStore {
            db,
            bridge,
            cache: Mutex::new(ReadCache::default()),
        }
    }

    /// Runs one call against the database on the store's runtime.
    fn call<T, F, Fut>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Arc<Db>) -> Fut,
        Fut: std::future::Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        let out = self.bridge.run(f(self.db.clone()));
        // A database error inside a change has aborted its transaction: it cannot commit.
        if let Err(e @ StoreError::Unavailable(_)) = &out
            && let Some(h) = self.db.held_by(std::thread::current().id())
        {
            h.fail(e);
        }
        out
    }
}

/// A pool of `size` connections to the database `connect` names (a URL without a tenant), on a
/// runtime of its own, with the schema brought up to date.
pub(crate) fn pool_sized(connect: &str, size: usize) -> Result<(Pool, Arc<Bridge>), Connect> {
    let config: tokio_postgres::Config = connect
        .parse()
        .map_err(|e| StoreError::InvalidPath(format!("bad postgresql URL: {e}")))?;
    let bridge = Arc::new(Bridge::new("memdir-pg", "postgresql")?);
    let manager = Manager::from_config(
        config.clone(),
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(size)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(Duration::from_secs(60)))
        .create_timeout(Some(Duration::from_secs(10)))
        .build()
        .map_err(|e| StoreError::Unavailable(format!("postgresql: {e}")))?;
    let p = pool.clone();
    let no_db = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = no_db.clone();
    let migrated = bridge.run(async move {
        let mut c = p.get().await.map_err(|e| {
            if let deadpool_postgres::PoolError::Backend(e) = &e
                && e.code() == Some(&tokio_postgres::error::SqlState::INVALID_CATALOG_NAME)
            {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            StoreError::Unavailable(format!(
                "cannot connect to postgresql: {}: is the server running and the URL right?",
                pool_message(e)
            ))
        })?;
        let client: &mut tokio_postgres::Client = &mut c;
        schema::migrate(client).await
    });
    match migrated {
        Err(_) if no_db.load(std::sync::atomic::Ordering::Relaxed) => {
            Err(Connect::NoDatabase(Box::new(config)))
        }
        Err(e) => Err(e.into()),
        Ok(()) => Ok((pool, bridge)),
    }
}

fn pool(connect: &str) -> Result<(Pool, Arc<Bridge>), Connect> {
    pool_sized(connect, POOL_SIZE)
}

/// `a/b/c` → `["a", "a/b"]`: the folders that must exist for `path` to.
fn ancestors(path: &MemPath) -> Vec<String> {
    let s = path.as_str();
    s.match_indices('/')
        .map(|(i, _)| s[..i].to_string())
        .collect()
}

fn parent_str(path: &str) -> &str {
    path.rsplit_once('/').map(|(p, _)| p).unwrap_or("")
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

type Conn = deadpool_postgres::Object;

impl Db {
    /// The connection for a call: the change's, when the calling thread holds one on this
    /// tenant (an append it kept is sent first), else one from the pool.
    async fn conn(&self) -> Result<Handle, StoreError> {
        if let Some(h) = memdir_store::bridge::caller().and_then(|t| self.held_by(t)) {
            let mut c = Handle::Held(h.conn.clone().lock_owned().await);
            if let Some((path, data)) = h.take_deferred() {
                self.put_on(&mut c, &path, &data, &Put::Append)
                    .await
                    .inspect_err(|e| h.fail(e))?;
            }
            return Ok(c);
        }
        Handle::pooled(&self.pool).await
    }

    /// The change `thread` holds on this tenant, if any.
    fn held_by(&self, thread: std::thread::ThreadId) -> Option<Arc<Held>> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.iter().find(|h| h.thread == thread).cloned()
    }

    /// Why `path` is not there: a file where a folder should be, or simply nothing.
    async fn missing(&self, c: &Tx<'_>, path: &MemPath) -> StoreError {
        let parts = ancestors(path);
        let sql = "SELECT 1 FROM memdir.files WHERE tenant = $1 AND path = ANY($2) AND NOT is_dir";
        match c.query_opt(sql, &[&self.tenant, &parts]).await {
            Ok(Some(_)) => paths::part_is_file(path.as_str()),
            Ok(None) => StoreError::NotFound(format!("{} does not exist", shown(path.as_str()))),
            Err(e) => db_err(e),
        }
    }

    /// Makes every folder in `dirs` exist, refusing when one of them is a file. Runs inside a
    /// transaction that holds the tenant lock.
    async fn ensure_dirs(
        &self,
        tx: &Tx<'_>,
        dirs: &[String],
        shown_path: &str,
    ) -> Result<(), StoreError> {
        if dirs.is_empty() {
            return Ok(());
        }
        let sql =
            "SELECT path FROM memdir.files WHERE tenant = $1 AND path = ANY($2) AND NOT is_dir";
        if let Some(row) = tx
            .query_opt(sql, &[&self.tenant, &dirs])
            .await
            .map_err(db_err)?
        {
            let file: String = row.get(0);
            return Err(if file == shown_path {
                StoreError::Conflict(format!("{file} already exists"))
            } else {
                paths::part_is_file(shown_path)
            });
        }
        let parents: Vec<&str> = dirs.iter().map(|d| parent_str(d)).collect();
        tx.execute(
            "INSERT INTO memdir.files (tenant, path, parent, is_dir, content, modified_ms, version)
             SELECT $1, p, pp, true, '', memdir.now_ms(), NULL
             FROM unnest($2::text[], $3::text[]) AS t(p, pp)
             ON CONFLICT DO NOTHING",
            &[&self.tenant, &dirs, &parents],
        )
        .await
        .map_err(db_err)?;
        Ok(())
    }

    /// Starts a transaction that holds the tenant's lock on the tree, so its checks ("is a
    /// parent a file?", "is the target free?") hold until it commits.
    async fn tree_tx<'c>(&self, c: &'c mut Handle) -> Result<Tx<'c>, StoreError> {
        let tx = c.tx().await?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(memdir.lock_key('tree', $1, ''))",
            &[&self.tenant],
        )
        .await
        .map_err(db_err)?;
        Ok(tx)
    }

    /// Locks the rows of `path` and everything under it. Every writer locks a file's row before
    /// its `pending` row (the one-statement rewrite and append do so too), so two writers never
    /// wait for each other in a circle.
    async fn lock_rows(&self, tx: &Tx<'_>, path: &str) -> Result<(), StoreError> {
        tx.execute(
            "SELECT 1 FROM memdir.files WHERE tenant = $1
               AND (path = $2 OR (path >= $2 || '/' AND path < $2 || '0'))
             ORDER BY path FOR UPDATE",
            &[&self.tenant, &path],
        )
        .await
        .map_err(db_err)?;
        Ok(())
    }

    /// Notes the content of `paths` before their first write since the last recorded change
    /// (for history), inside the write's transaction.
    async fn touch(&self, tx: &Tx<'_>, paths: &[&str]) -> Result<(), StoreError> {
        tx.execute(
            "INSERT INTO memdir.pending (tenant, path, existed, content)
             SELECT $1, t.p, f.path IS NOT NULL, coalesce(f.content, '')
             FROM unnest($2::text[]) AS t(p)
             LEFT JOIN memdir.files f ON f.tenant = $1 AND f.path = t.p AND NOT f.is_dir
             ON CONFLICT DO NOTHING",
            &[&self.tenant, &paths],
        )
        .await
        .map_err(db_err)?;
        Ok(())
    }

    /// Writes a file that may not exist yet: under the tree lock, with its folders made first.
    async fn put_new(
        &self,
        c: &mut Handle,
        path: &MemPath,
        data: &[u8],
        how: &Put,
    ) -> Result<(), StoreError> {
        let sql = match how {
            Put::Append => {
                "INSERT INTO memdir.files (tenant, path, parent, is_dir, content, modified_ms, version)
                 VALUES ($1, $2, $3, false, $4, memdir.now_ms(), $5)
                 ON CONFLICT (tenant, path) DO UPDATE
                 SET content = files.content || EXCLUDED.content,
                     modified_ms = EXCLUDED.modified_ms, version = NULL
                 WHERE NOT files.is_dir"
            }
            Put::Write(Pre::Absent) => {
                "INSERT INTO memdir.files (tenant, path, parent, is_dir, content, modified_ms, version)
                 VALUES ($1, $2, $3, false, $4, memdir.now_ms(), $5)
                 ON CONFLICT (tenant, path) DO NOTHING"
            }
            Put::Write(_) => {
                "INSERT INTO memdir.files (tenant, path, parent, is_dir, content, modified_ms, version)
                 VALUES ($1, $2, $3, false, $4, memdir.now_ms(), $5)
                 ON CONFLICT (tenant, path) DO UPDATE
                 SET content = EXCLUDED.content,
                     modified_ms = EXCLUDED.modified_ms, version = EXCLUDED.version
                 WHERE NOT files.is_dir"
            }
        };
        let version = match how {
            Put::Append => None,
            Put::Write(_) => Some(version_of(data)),
        };
        let tx = self.tree_tx(c).await?;
        self.ensure_dirs(&tx, &ancestors(path), path.as_str())
            .await?;
        self.lock_rows(&tx, path.as_str()).await?;
        self.touch(&tx, &[path.as_str()]).await?;
        let parent = parent_str(path.as_str());
        let n = tx
            .execute(
                sql,
                &[&self.tenant, &path.as_str(), &parent, &data, &version],
            )
            .await
            .map_err(db_err)?;
        if n == 0 {
            let is_dir = tx
                .query_opt(
                    "SELECT 1 FROM memdir.files WHERE tenant = $1 AND path = $2 AND is_dir",
                    &[&self.tenant, &path.as_str()],
                )
                .await
                .map_err(db_err)?
                .is_some();
            // Create-only refuses whatever is there, a folder too, as a conflict.
            return Err(if is_dir && !matches!(how, Put::Write(Pre::Absent)) {
                paths::is_folder(path.as_str())
            } else {
                StoreError::Conflict(format!("{path} already exists"))
            });
        }
        tx.commit().await.map_err(db_err)
    }

    /// Rewrites or appends to a file that exists in one statement, which also notes its old
    /// content for history; `false` when there is no such file.
    async fn put_existing(
        &self,
        c: &Handle,
        path: &MemPath,
        data: &[u8],
        append: bool,
    ) -> Result<bool, StoreError> {
        let sql = if append {
            "WITH old AS MATERIALIZED (
                 SELECT content AS before FROM memdir.files
                 WHERE tenant = $1 AND path = $2 AND NOT is_dir FOR UPDATE),
             rec AS (
                 INSERT INTO memdir.pending (tenant, path, existed, content)
                 SELECT $1, $2, true, before FROM old
                 ON CONFLICT DO NOTHING)
             UPDATE memdir.files SET content = content || $3, modified_ms = memdir.now_ms(),
                 version = NULL
             FROM old WHERE tenant = $1 AND path = $2 AND NOT is_dir"
        } else {
            "WITH old AS MATERIALIZED (
                 SELECT content AS before FROM memdir.files
                 WHERE tenant = $1 AND path = $2 AND NOT is_dir FOR UPDATE),
             rec AS (
                 INSERT INTO memdir.pending (tenant, path, existed, content)
                 SELECT $1, $2, true, before FROM old
                 ON CONFLICT DO NOTHING)
             UPDATE memdir.files SET content = $3, modified_ms = memdir.now_ms(), version = $4
             FROM old WHERE tenant = $1 AND path = $2 AND NOT is_dir"
        };
        let version = (!append).then(|| version_of(data));
        let n = if append {
            c.execute(sql, &[&self.tenant, &path.as_str(), &data]).await
        } else {
            c.execute(sql, &[&self.tenant, &path.as_str(), &data, &version])
                .await
        }
        .map_err(db_err)?;
        Ok(n == 1)
    }

    /// Rewrites a file only if its version is `want`, checked under the row's lock.
    async fn put_matching(
        &self,
        c: &mut Handle,
        path: &MemPath,
        data: &[u8],
        want: &str,
    ) -> Result<(), StoreError> {
        let tx = c.tx().await?;
        let row = tx
            .query_opt(
                "SELECT version, CASE WHEN version IS NULL THEN content END FROM memdir.files
                 WHERE tenant = $1 AND path = $2 AND NOT is_dir FOR UPDATE",
                &[&self.tenant, &path.as_str()],
            )
            .await
            .map_err(db_err)?;
        let now = row.map(|r| {
            let v: Option<String> = r.get(0);
            v.unwrap_or_else(|| version_of(&r.get::<_, Vec<u8>>(1)))
        });
        if now.as_deref() != Some(want) {
            return Err(stale(path, want, now.as_deref()));
        }
        self.touch(&tx, &[path.as_str()]).await?;
        tx.execute(
            "UPDATE memdir.files SET content = $3, modified_ms = memdir.now_ms(), version = $4
             WHERE tenant = $1 AND path = $2",
            &[&self.tenant, &path.as_str(), &data, &version_of(data)],
        )
        .await
        .map_err(db_err)?;
        tx.commit().await.map_err(db_err)
    }

    /// Every whole-file write and append. A change's append is kept to go with its record
    /// (see `held.rs`).
    async fn put(&self, path: MemPath, data: Vec<u8>, how: Put) -> Result<(), StoreError> {
        paths::not_root(&path)?;
        if matches!(how, Put::Append)
            && !data.is_empty()
            && let Some(h) = memdir_store::bridge::caller().and_then(|t| self.held_by(t))
        {
            if let Some((p, d)) = h.defer(path, data) {
                // Two appends in one change: the first goes now, the second with the record.
                let mut c = Handle::Held(h.conn.clone().lock_owned().await);
                self.put_on(&mut c, &p, &d, &Put::Append)
                    .await
                    .inspect_err(|e| h.fail(e))?;
            }
            return Ok(());
        }
        let mut c = self.conn().await?;
        self.put_on(&mut c, &path, &data, &how).await
    }

    /// [`Db::put`] on the connection `c`, now.
    async fn put_on(
        &self,
        c: &mut Handle,
        path: &MemPath,
        data: &[u8],
        how: &Put,
    ) -> Result<(), StoreError> {
        match how {
            Put::Write(Pre::Matches(v)) => return self.put_matching(c, path, data, v).await,
            Put::Write(Pre::Absent) => {}
            Put::Write(Pre::Any) => {
                if self.put_existing(c, path, data, false).await? {
                    return Ok(());
                }
            }
            Put::Append => {
                if self.put_existing(c, path, data, true).await? {
                    return Ok(());
                }
            }
        }
        self.put_new(c, path, data, how).await
    }
}

/// What a write expects to find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pre {
    /// Anything: replace or create.
    Any,
    /// Nothing: create only.
    Absent,
    /// The file at this version.
    Matches(String),
}

/// A whole-file write (with its precondition) or an append.
pub(crate) enum Put {
    Write(Pre),
    Append,
}

/// The version of some bytes: their git blob id, the same on every backend.
fn version_of(data: &[u8]) -> String {
    memdir_store::Version::of(data).to_string()
}

fn stale(path: &MemPath, want: &str, now: Option<&str>) -> StoreError {
    let short = |v: &str| v.get(..12).unwrap_or(v).to_string();
    StoreError::Conflict(format!(
        "{path} changed since you read it (you had version {}, it is now {}): read it again and redo your edit",
        short(want),
        now.map(short).unwrap_or_else(|| "deleted".into())
    ))
}

impl Store for PgStore {
    fn read(&self, path: &MemPath) -> Result<Vec<u8>, StoreError> {
        self.read_versioned(path).map(|(data, _)| data)
    }

    fn read_versioned(&self, path: &MemPath) -> Result<(Vec<u8>, Version), StoreError> {
        PgStore::read_versioned(self, path).map(|(data, v)| (data, Version::from_string(v)))
    }

    fn write_if(
        &self,
        path: &MemPath,
        data: &[u8],
        pre: &Precondition,
    ) -> Result<Version, StoreError> {
        let pre = match pre {
            Precondition::Any => Pre::Any,
            Precondition::Absent => Pre::Absent,
            Precondition::Matches(v) => Pre::Matches(v.as_str().to_string()),
        };
        PgStore::write_if(self, path, data, pre).map(Version::from_string)
    }

    fn append(&self, path: &MemPath, data: &[u8]) -> Result<(), StoreError> {
        self.db.snaps.forget();
        let (path, data) = (path.clone(), data.to_vec());
        self.call(|db| async move { db.put(path, data, Put::Append).await })
    }

    fn list(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        if let Some(answer) = self.db.snaps.current().and_then(|s| s.list(dir)) {
            return answer;
        }
        let dir = dir.clone();
        self.call(|db| async move {
            let c = db.conn().await?;
            // The folder's own row and its children, in one snapshot.
            let rows = c
                .query(
                    "SELECT path, is_dir, size, modified_ms FROM memdir.files
                     WHERE tenant = $1 AND (path = $2 OR parent = $2) ORDER BY path",
                    &[&db.tenant, &dir.as_str()],
                )
                .await
                .map_err(db_err)?;
            let mut out = Vec::with_capacity(rows.len());
            let mut found = dir.is_root();
            for r in rows {
                let p: &str = r.get(0);
                let is_dir: bool = r.get(1);
                if p == dir.as_str() {
                    if !is_dir {
                        return Err(paths::part_is_file(p));
                    }
                    found = true;
                    continue;
                }
                out.push(entry(p, is_dir, r.get(2), r.get(3))?);
            }
            if !found {
                return Err(db.missing(&c.plain(), &dir).await);
            }
            Ok(out)
        })
    }

    fn stat(&self, path: &MemPath) -> Result<Option<Entry>, StoreError> {
        if path.is_root() {
            return Ok(Some(Entry {
                path: MemPath::root(),
                kind: EntryKind::Dir,
                size: 0,
                modified_ms: 0,
            }));
        }
        if let Some(answer) = self.db.snaps.current().and_then(|s| s.stat(path)) {
            return answer;
        }
        let path = path.clone();
        self.call(|db| async move {
            let c = db.conn().await?;
            let row = c
                .query_opt(
                    "SELECT path, is_dir, size, modified_ms FROM memdir.files
                     WHERE tenant = $1 AND path = $2",
                    &[&db.tenant, &path.as_str()],
                )
                .await
                .map_err(db_err)?;
            row.map(|r| entry(r.get(0), r.get(1), r.get(2), r.get(3)))
                .transpose()
        })
    }

    /// Two queries whatever the tenant's size: the paths, then the bytes of those `keep` takes.
    fn read_all(
        &self,
        keep: &mut dyn FnMut(&MemPath) -> bool,
    ) -> Result<Vec<(MemPath, Vec<u8>)>, StoreError> {
        // Each file's row stamp: `xmin` is the transaction that wrote the row's current version,
        // so any committed change to a file (a write, an append, a re-creation) changes it.
        let stamps: Vec<(String, String)> = self.call(|db| async move {
            let c = db.conn().await?;
            let rows = c
                .query(
                    "SELECT path, xmin::text || '/' || size::text FROM memdir.files
                     WHERE tenant = $1 AND NOT is_dir",
                    &[&db.tenant],
                )
                .await
                .map_err(db_err)?;
            Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
        })?;
        let mut wanted = Vec::new();
        let mut fetch = Vec::new();
        {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            // Files that are gone leave the cache.
            let listed: std::collections::HashSet<&str> =
                stamps.iter().map(|(p, _)| p.as_str()).collect();
            let gone: Vec<String> = cache
                .files
                .keys()
                .filter(|p| !listed.contains(p.as_str()))
                .cloned()
                .collect();
            for p in gone {
                if let Some((_, b)) = cache.files.remove(&p) {
                    cache.bytes -= b.len();
                }
            }
            for (p, stamp) in stamps {
                let path = MemPath::parse(&p).map_err(|e| {
                    StoreError::Unavailable(format!("postgresql: a stored path is invalid: {e}"))
                })?;
                if !keep(&path) {
                    continue;
                }
                if cache.files.get(&p).is_none_or(|(s, _)| *s != stamp) {
                    fetch.push(p.clone());
                }
                wanted.push((path, p, stamp));
            }
        }
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let fetched: Vec<(String, String, Vec<u8>)> = if fetch.is_empty() {
            Vec::new()
        } else {
            self.call(|db| async move {
                let c = db.conn().await?;
                let rows = c
                    .query(
                        "SELECT path, xmin::text || '/' || size::text, content FROM memdir.files
                         WHERE tenant = $1 AND NOT is_dir AND path = ANY($2)",
                        &[&db.tenant, &fetch],
                    )
                    .await
                    .map_err(db_err)?;
                Ok(rows
                    .into_iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2)))
                    .collect())
            })?
        };
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut fresh: std::collections::HashMap<String, (String, Arc<[u8]>)> = fetched
            .into_iter()
            .map(|(p, stamp, bytes)| (p, (stamp, Arc::from(bytes))))
            .collect();
        let mut out = Vec::with_capacity(wanted.len());
        for (path, p, stamp) in wanted {
            // A row fetched now wins (it may be newer than the listing); else the cached bytes
            // of the stamp the listing saw; a file removed in between is left out.
            let bytes = match fresh.get(&p) {
                Some((_, b)) => b.clone(),
                None => match cache.files.get(&p) {
                    Some((s, b)) if *s == stamp => b.clone(),
                    _ => continue,
                },
            };
            out.push((path, bytes.to_vec()));
        }
        // Keep what was fetched for the next search, within the cap.
        for (p, (stamp, bytes)) in fresh.drain() {
            let len = bytes.len();
            if let Some((_, old)) = cache.files.remove(&p) {
                cache.bytes -= old.len();
            }
            if cache.bytes + len <= READ_CACHE_MAX {
                cache.bytes += len;
                cache.files.insert(p, (stamp, bytes));
            }
        }
        // Path order as every store gives it (bytes), not the database's collation.
        out.sort_by(|a: &(MemPath, Vec<u8>), b| a.0.cmp(&b.0));
        Ok(out)
    }

    fn prefetch(&self, wants: &[memdir_store::Want]) -> memdir_store::Prefetched {
        prefetch::prefetch(&self.db, &self.bridge, wants)
    }

    fn keys(&self) -> Option<Arc<dyn memdir_store::KeyStore>> {
        Some(Arc::new(PgKeys {
            db: self.db.clone(),
            bridge: self.bridge.clone(),
        }))
    }

    fn cached_bytes(&self) -> usize {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).bytes
    }

    fn remove(&self, path: &MemPath) -> Result<(), StoreError> {
        self.db.snaps.forget();
        paths::not_root(path)?;
        let path = path.clone();
        self.call(|db| async move {
            let mut c = db.conn().await?;
            let tx = db.tree_tx(&mut c).await?;
            db.lock_rows(&tx, path.as_str()).await?;
            tx.execute(
                "INSERT INTO memdir.pending (tenant, path, existed, content)
                 SELECT tenant, path, true, content FROM memdir.files
                 WHERE tenant = $1 AND NOT is_dir
                   AND (path = $2 OR (path >= $2 || '/' AND path < $2 || '0'))
                 ON CONFLICT DO NOTHING",
                &[&db.tenant, &path.as_str()],
            )
            .await
            .map_err(db_err)?;
            let n = tx
                .execute(
                    "DELETE FROM memdir.files WHERE tenant = $1
                     AND (path = $2 OR (path >= $2 || '/' AND path < $2 || '0'))",
                    &[&db.tenant, &path.as_str()],
                )
                .await
                .map_err(db_err)?;
            if n == 0 {
                return Err(db.missing(&tx, &path).await);
            }
            tx.commit().await.map_err(db_err)
        })
    }

    fn rename(&self, from: &MemPath, to: &MemPath) -> Result<(), StoreError> {
        self.db.snaps.forget();
        paths::not_root(from)?;
        if to.starts_with(from) {
            return Err(StoreError::InvalidPath(format!(
                "cannot move {from} into itself"
            )));
        }
        let (from, to) = (from.clone(), to.clone());
        self.call(|db| async move {
            let mut c = db.conn().await?;
            let tx = db.tree_tx(&mut c).await?;
            let kind = tx
                .query_opt(
                    "SELECT is_dir FROM memdir.files WHERE tenant = $1 AND path = $2",
                    &[&db.tenant, &from.as_str()],
                )
                .await
                .map_err(db_err)?;
            if kind.is_none() {
                return Err(db.missing(&tx, &from).await);
            }
            db.ensure_dirs(&tx, &ancestors(&to), to.as_str()).await?;
            let taken = tx
                .query_opt(
                    "SELECT 1 FROM memdir.files WHERE tenant = $1 AND path = $2",
                    &[&db.tenant, &to.as_str()],
                )
                .await
                .map_err(db_err)?;
            if taken.is_some() {
                return Err(paths::exists_already(to));
            }
            db.lock_rows(&tx, from.as_str()).await?;
            // Both ends of every moved file, for history: the old paths held content, the new
            // ones were free.
            tx.execute(
                "INSERT INTO memdir.pending (tenant, path, existed, content)
                 SELECT tenant, path, true, content FROM memdir.files
                 WHERE tenant = $1 AND NOT is_dir
                   AND (path = $2 OR (path >= $2 || '/' AND path < $2 || '0'))
                 UNION ALL
                 SELECT tenant, $3 || substr(path, char_length($2) + 1), false, ''
                 FROM memdir.files
                 WHERE tenant = $1 AND NOT is_dir
                   AND (path = $2 OR (path >= $2 || '/' AND path < $2 || '0'))
                 ON CONFLICT DO NOTHING",
                &[&db.tenant, &from.as_str(), &to.as_str()],
            )
            .await
            .map_err(db_err)?;
            tx.execute(
                "UPDATE memdir.files SET
                     path = $3 || substr(path, char_length($2) + 1),
                     parent = CASE WHEN path = $2 THEN $4
                              ELSE $3 || substr(parent, char_length($2) + 1) END
                 WHERE tenant = $1
                   AND (path = $2 OR (path >= $2 || '/' AND path < $2 || '0'))",
                &[
                    &db.tenant,
                    &from.as_str(),
                    &to.as_str(),
                    &parent_str(to.as_str()),
                ],
            )
            .await
            .map_err(db_err)?;
            tx.commit().await.map_err(db_err)
        })
    }

    fn create_dir(&self, path: &MemPath) -> Result<(), StoreError> {
        self.db.snaps.forget();
        if path.is_root() {
            return Ok(());
        }
        let path = path.clone();
        self.call(|db| async move {
            let mut c = db.conn().await?;
            let tx = db.tree_tx(&mut c).await?;
            let mut dirs = ancestors(&path);
            dirs.push(path.as_str().to_string());
            db.ensure_dirs(&tx, &dirs, path.as_str()).await?;
            tx.commit().await.map_err(db_err)
        })
    }

    fn read_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(answer) = self.db.snaps.current().and_then(|s| s.meta(name)) {
            return Ok(answer);
        }
        let name = name.to_string();
        self.call(|db| async move { db.read_meta(&name).await })
    }

    fn write_meta(&self, name: &str, data: &[u8]) -> Result<(), StoreError> {
        self.db.snaps.forget();
        let (name, data) = (name.to_string(), data.to_vec());
        self.call(|db| async move {
            let c = db.conn().await?;
            if name == settings::CONFIG_META {
                return settings::write(&c.plain(), &db.tenant, &data).await;
            }
            c.execute(
                "INSERT INTO memdir.meta (tenant, name, content) VALUES ($1, $2, $3)
                 ON CONFLICT (tenant, name) DO UPDATE SET content = EXCLUDED.content",
                &[&db.tenant, &name, &data],
            )
            .await
            .map_err(db_err)?;
            Ok(())
        })
    }

    fn walk(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        let dir = dir.clone();
        self.call(|db| async move {
            let c = db.conn().await?;
            let rows = c
                .query(
                    "SELECT path, is_dir, size, modified_ms FROM memdir.files
                     WHERE tenant = $1 AND (path = $2
                        OR $2 = '' OR (path >= $2 || '/' AND path < $2 || '0'))
                     ORDER BY path",
                    &[&db.tenant, &dir.as_str()],
                )
                .await
                .map_err(db_err)?;
            let mut out = Vec::new();
            let mut found = dir.is_root();
            for r in rows {
                let p: &str = r.get(0);
                let is_dir: bool = r.get(1);
                if p == dir.as_str() {
                    if !is_dir {
                        return Err(paths::part_is_file(p));
                    }
                    found = true;
                } else if !is_dir {
                    out.push(entry(p, false, r.get(2), r.get(3))?);
                }
            }
            if !found {
                return Err(db.missing(&c.plain(), &dir).await);
            }
            Ok(out)
        })
    }
}

impl Locks for PgStore {
    fn lock(&self, name: LockName<'_>) -> Result<Box<dyn LockGuard>, StoreError> {
        self.db.snaps.forget();
        let key = name.to_string();
        // A second session asking for an advisory lock this thread holds through another
        // session would wait for itself forever.
        let held = Reentry::enter(&self.db.memory, &key, &name)?;
        if self.db.held_by(std::thread::current().id()).is_some() {
            // Inside this thread's change: taken in the change's transaction, so it is
            // released when the change commits or rolls back.
            self.call(|db| async move {
                let c = db.conn().await?;
                c.execute(
                    "SELECT pg_advisory_xact_lock(memdir.lock_key('lock', $1, $2))",
                    &[&db.tenant, &key],
                )
                .await
                .map_err(db_err)?;
                Ok(())
            })?;
            return Ok(Box::new(PgLock {
                kind: Kind::InChange,
                db: self.db.clone(),
                bridge: self.bridge.clone(),
                _held: held,
            }));
        }
        // The change lock also takes the history lock (one record at a time), so the change's
        // record needs no statement of its own to take it.
        let change = matches!(name, LockName::Git);
        let sql = if change {
            "SELECT pg_advisory_xact_lock(memdir.lock_key('lock', $1, $2)),
                    pg_advisory_xact_lock(memdir.lock_key('history', $1, ''))"
        } else {
            "SELECT pg_advisory_xact_lock(memdir.lock_key('lock', $1, $2))"
        };
        let taken = self.call(|db| async move {
            let c = db.pool.get().await.map_err(pool_err)?;
            // A transaction-scoped lock in a transaction left open while the guard lives: a
            // pooler in transaction mode keeps one server connection for the whole transaction,
            // where a session lock would stay on a connection the pooler hands to others.
            c.batch_execute("BEGIN").await.map_err(db_err)?;
            let params: [(&(dyn tokio_postgres::types::ToSql + Sync), _); 2] = [
                (&db.tenant, tokio_postgres::types::Type::TEXT),
                (&key, tokio_postgres::types::Type::TEXT),
            ];
            if let Err(e) = c.execute_typed(sql, &params).await {
                drop(deadpool_postgres::Object::take(c));
                return Err(db_err(e));
            }
            Ok(c)
        })?;
        let kind = if change {
            let h = Arc::new(Held::new(taken));
            self.db
                .held
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(h.clone());
            Kind::Change(h)
        } else {
            Kind::Own(Box::new(taken))
        };
        Ok(Box::new(PgLock {
            kind,
            db: self.db.clone(),
            bridge: self.bridge.clone(),
            _held: held,
        }))
    }
}

fn entry(path: &str, is_dir: bool, size: i64, modified_ms: i64) -> Result<Entry, StoreError> {
    let path = MemPath::parse(path).map_err(|e| {
        StoreError::Unavailable(format!("postgresql: a stored path is invalid: {e}"))
    })?;
    Ok(Entry {
        path,
        kind: if is_dir {
            EntryKind::Dir
        } else {
            EntryKind::File
        },
        size: u64::try_from(size).unwrap_or(0),
        modified_ms,
    })
}

/// A held advisory lock: a transaction-scoped lock in a transaction open on a connection of its
/// own, or on the change's (the change lock's own transaction: see `held.rs`). Releasing it
/// commits (which releases the lock) and gives the connection back; if the commit cannot be
/// confirmed the connection is closed instead, which ends the transaction and so the lock.
struct PgLock {
    kind: Kind,
    db: Arc<Db>,
    bridge: Arc<Bridge>,
    /// Released after the unlock, when the guard's fields drop.
    _held: Reentry,
}

enum Kind {
    /// A lock in a transaction of its own.
    Own(Box<Conn>),
    /// The change lock: its transaction is the change's.
    Change(Arc<Held>),
    /// A lock taken inside this thread's change, released with it.
    InChange,
    /// Released already.
    Done,
}

impl PgLock {
    /// Ends the lock's transaction: commits it, or rolls it back when the change it carries
    /// cannot commit, and says which.
    fn end(&mut self) -> Result<(), StoreError> {
        match std::mem::replace(&mut self.kind, Kind::Done) {
            Kind::Own(c) => self.bridge.run(async move {
                if let Err(e) = c.batch_execute("COMMIT").await {
                    drop(deadpool_postgres::Object::take(*c));
                    return Err(db_err(e));
                }
                Ok(())
            }),
            Kind::Change(h) => {
                // Later calls of this thread go to the pool again.
                self.db
                    .held
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .retain(|x| !Arc::ptr_eq(x, &h));
                let db = self.db.clone();
                self.bridge.run(async move {
                    let mut c = Handle::Held(h.conn.clone().lock_owned().await);
                    if h.failure().is_none()
                        && let Some((path, data)) = h.take_deferred()
                        && let Err(e) = db.put_on(&mut c, &path, &data, &Put::Append).await
                    {
                        h.fail(&e);
                    }
                    let end = if h.failure().is_some() {
                        "ROLLBACK"
                    } else {
                        "COMMIT"
                    };
                    let ended = c.batch_execute(end).await;
                    drop(c);
                    let failure = h.failure();
                    // A connection whose transaction may still be open never goes back.
                    if ended.is_err()
                        && let Ok(held) = Arc::try_unwrap(h)
                        && let Ok(m) = Arc::try_unwrap(held.conn)
                    {
                        drop(deadpool_postgres::Object::take(m.into_inner()));
                    }
                    match (failure, ended) {
                        (Some(e), _) => Err(StoreError::Unavailable(format!(
                            "the change was rolled back, nothing of it is kept: {e}"
                        ))),
                        (None, Err(e)) => Err(db_err(e)),
                        (None, Ok(())) => Ok(()),
                    }
                })
            }
            Kind::InChange | Kind::Done => Ok(()),
        }
    }
}

impl LockGuard for PgLock {
    fn atomic(&self) -> bool {
        matches!(self.kind, Kind::Change(_))
    }

    fn release(mut self: Box<Self>) -> Result<(), StoreError> {
        self.end()
    }
}

impl Drop for PgLock {
    fn drop(&mut self) {
        let _ = self.end();
    }
}
