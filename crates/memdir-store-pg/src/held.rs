//! The change in progress: while a thread holds a tenant's change lock (`git`), every call it
//! makes through that tenant's store, history, keys and vectors runs on the lock's connection,
//! inside the lock's transaction. The change's writes and its history record then commit
//! together when the lock is released, and a killed change (its connection gone) rolls back
//! whole, so the engine keeps no journal for it ([`LockGuard::atomic`]).
//!
//! A change's log append is not sent on its own: it is kept here and sent with the change's
//! record as one statement (`memory_log` is `BEGIN`, the lock, that statement, `COMMIT`). Any
//! other call on the connection before the record sends it first, so the change always reads
//! what it wrote.
//!
//! Every statement is sent as an unnamed one with its parameters' types (`query_typed`), in
//! one round trip: a named prepared statement lives on one server connection, and a pooler in
//! transaction mode (pgbouncer) may run the statement's next message on another.
//!
//! [`LockGuard::atomic`]: memdir_store::store::LockGuard::atomic

use crate::Conn;
use memdir_core::path::MemPath;
use memdir_store::StoreError;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use tokio_postgres::Row;
use tokio_postgres::types::{ToSql, Type};

/// One thread's change in progress on one tenant.
pub(crate) struct Held {
    /// The thread that holds the change lock.
    pub(crate) thread: ThreadId,
    /// The lock's connection, in its transaction.
    pub(crate) conn: Arc<tokio::sync::Mutex<Conn>>,
    /// An append not sent yet (see the module docs).
    deferred: Mutex<Option<(MemPath, Vec<u8>)>>,
    /// Why the change cannot commit: a statement of it failed (PostgreSQL has aborted the
    /// transaction), or its record did.
    failed: Mutex<Option<StoreError>>,
}

impl Held {
    pub(crate) fn new(conn: Conn) -> Held {
        Held {
            thread: std::thread::current().id(),
            conn: Arc::new(tokio::sync::Mutex::new(conn)),
            deferred: Mutex::new(None),
            failed: Mutex::new(None),
        }
    }

    /// Keeps an append to send later; gives back one kept before, to send now.
    pub(crate) fn defer(&self, path: MemPath, data: Vec<u8>) -> Option<(MemPath, Vec<u8>)> {
        self.deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace((path, data))
    }

    /// The append kept to send, if any.
    pub(crate) fn take_deferred(&self) -> Option<(MemPath, Vec<u8>)> {
        self.deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Marks the change as one that cannot commit (the first reason stays).
    pub(crate) fn fail(&self, e: &StoreError) {
        let mut f = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            *f = Some(e.clone());
        }
    }

    /// Why the change cannot commit, if it cannot.
    pub(crate) fn failure(&self) -> Option<StoreError> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A connection for one call: the pool's, or the change's when the calling thread holds one.
pub(crate) enum Handle {
    Pool(Box<Conn>),
    Held(tokio::sync::OwnedMutexGuard<Conn>),
}

impl std::ops::Deref for Handle {
    type Target = deadpool_postgres::ClientWrapper;
    fn deref(&self) -> &deadpool_postgres::ClientWrapper {
        match self {
            Handle::Pool(c) => c,
            Handle::Held(g) => g,
        }
    }
}

/// The types parameters are sent as, tried in order: the first one a value encodes as is its
/// type (so `&str` is text, `i64` bigint, `Vec<u8>` bytea, `None` whatever its `Some` would be).
const TYPES: &[Type] = &[
    Type::TEXT,
    Type::INT8,
    Type::BYTEA,
    Type::BOOL,
    Type::INT4,
    Type::INT2,
    Type::FLOAT8,
    Type::FLOAT4,
    Type::TEXT_ARRAY,
    Type::INT8_ARRAY,
    Type::BYTEA_ARRAY,
    Type::INT4_ARRAY,
    Type::FLOAT4_ARRAY,
    Type::BOOL_ARRAY,
];

/// Each parameter with the type it is sent as (see [`TYPES`]; one that fits none is refused
/// with the client's own error when the statement is sent).
fn typed<'p>(params: Params<'p>) -> Vec<(&'p (dyn ToSql + Sync), Type)> {
    let mut buf = bytes::BytesMut::new();
    params
        .iter()
        .map(|&v| {
            let t = TYPES.iter().find(|t| {
                buf.clear();
                v.to_sql_checked(t, &mut buf).is_ok()
            });
            (v, t.cloned().unwrap_or(Type::UNKNOWN))
        })
        .collect()
}

/// The client under a connection.
fn client(c: &Handle) -> &tokio_postgres::Client {
    c
}

impl Handle {
    /// A connection from `pool`.
    pub(crate) async fn pooled(pool: &deadpool_postgres::Pool) -> Result<Handle, StoreError> {
        Ok(Handle::Pool(Box::new(
            pool.get().await.map_err(crate::pool_err)?,
        )))
    }

    pub(crate) async fn execute(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<u64, tokio_postgres::Error> {
        client(self).execute_typed(sql, &typed(params)).await
    }

    pub(crate) async fn query(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        client(self).query_typed(sql, &typed(params)).await
    }

    pub(crate) async fn query_opt(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Option<Row>, tokio_postgres::Error> {
        client(self).query_typed_opt(sql, &typed(params)).await
    }

    pub(crate) async fn query_one(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Row, tokio_postgres::Error> {
        client(self).query_typed_one(sql, &typed(params)).await
    }

    /// A transaction of its own on a pooled connection; on the change's connection, the
    /// change's transaction (whose commit is the change's).
    pub(crate) async fn tx(&mut self) -> Result<Tx<'_>, StoreError> {
        match self {
            Handle::Pool(c) => Ok(Tx::Own(c.transaction().await.map_err(crate::db_err)?)),
            Handle::Held(g) => Ok(Tx::Plain(g)),
        }
    }

    /// A read-only snapshot transaction for reads that must agree; on the change's connection,
    /// the change's transaction (which holds the history lock, so history cannot move).
    pub(crate) async fn read_tx(&mut self) -> Result<Tx<'_>, StoreError> {
        match self {
            Handle::Pool(c) => Ok(Tx::Own(
                c.build_transaction()
                    .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                    .read_only(true)
                    .start()
                    .await
                    .map_err(crate::db_err)?,
            )),
            Handle::Held(g) => Ok(Tx::Plain(g)),
        }
    }

    /// The connection as it is, each statement on its own (or in the change's transaction).
    pub(crate) fn plain(&self) -> Tx<'_> {
        Tx::Plain(self)
    }
}

/// Where a group of statements runs: a transaction of its own, a migration's, or a connection
/// as it is (autocommit, or the change's transaction).
pub(crate) enum Tx<'a> {
    Own(deadpool_postgres::Transaction<'a>),
    Raw(&'a tokio_postgres::Transaction<'a>),
    Plain(&'a tokio_postgres::Client),
}

macro_rules! on {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Tx::Own(t) => {
                let $c: &tokio_postgres::Transaction<'_> = t;
                $e
            }
            Tx::Raw(t) => {
                let $c: &tokio_postgres::Transaction<'_> = t;
                $e
            }
            Tx::Plain(cl) => {
                let $c: &tokio_postgres::Client = cl;
                $e
            }
        }
    };
}

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

impl Tx<'_> {
    pub(crate) async fn execute(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<u64, tokio_postgres::Error> {
        on!(self, c => c.execute_typed(sql, &typed(params)).await)
    }

    pub(crate) async fn query(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        on!(self, c => c.query_typed(sql, &typed(params)).await)
    }

    pub(crate) async fn query_opt(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Option<Row>, tokio_postgres::Error> {
        on!(self, c => c.query_typed_opt(sql, &typed(params)).await)
    }

    pub(crate) async fn query_one(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Row, tokio_postgres::Error> {
        on!(self, c => c.query_typed_one(sql, &typed(params)).await)
    }

    /// Rolls back a transaction of its own; otherwise nothing, so only for a group that has
    /// written nothing yet (a dry run that has only read).
    pub(crate) async fn rollback(self) -> Result<(), tokio_postgres::Error> {
        match self {
            Tx::Own(t) => t.rollback().await,
            Tx::Raw(_) | Tx::Plain(_) => Ok(()),
        }
    }

    /// Commits a transaction of its own; otherwise nothing (the change commits when its lock
    /// is released, a migration when it is done).
    pub(crate) async fn commit(self) -> Result<(), tokio_postgres::Error> {
        match self {
            Tx::Own(t) => t.commit().await,
            Tx::Raw(_) | Tx::Plain(_) => Ok(()),
        }
    }
}
