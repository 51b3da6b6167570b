//! The vector index in the database: semantic and hybrid search over a PostgreSQL memory need
//! no local disk, and every process serving the memory shares one index.
//!
//! Embeddings are `bytea` of little-endian `f32` (the form the SQLite index keeps), scored by the
//! engine's own cosine: the database here has no `pgvector`, and a brute-force scan over a
//! memory's chunks is well under a millisecond per thousand in the engine. Tables (migration 3):
//! `vector_live` (the build searches read, and `gen`, bumped by every change), `vector_meta`,
//! `vector_files` (each with the `gen` of its last write) and `vector_chunks`, all keyed by
//! tenant and build. A rebuild fills a new build and switches `vector_live` to it in one
//! transaction, so searches see the whole old index or the whole new one.
//!
//! A store keeps the chunks it last scanned in memory (capped) and asks the database only for
//! `gen` before a search: when another process changed the index, it fetches the files whose
//! `gen` is newer than its copy, in one snapshot.

use crate::{Db, db_err};
use memdir_store::StoreError;
use memdir_store::bridge::Bridge;
use memdir_store::vectors::{ChunkVisit, FileVectors, IndexedFile, RebuildFill, VectorStore};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Bytes of embeddings a store keeps between searches at most; past it, a search fetches them.
const CACHE_MAX: usize = 256 << 20;

/// A tenant's vector index in the database.
pub struct PgVectors {
    db: Arc<Db>,
    bridge: Arc<Bridge>,
    /// `None` for the build searches read; a build being filled by a rebuild otherwise.
    build: Option<i64>,
    cache: Mutex<Cache>,
}

/// One chunk as kept in memory: first line, shown text, embedding bytes.
type Kept = (u64, String, Arc<[u8]>);

/// The chunks of the last scan, by file, as of the build and `gen` it saw.
#[derive(Default)]
struct Cache {
    seen: Option<(i64, i64)>,
    files: HashMap<String, (i64, Vec<Kept>)>,
    bytes: usize,
}

impl PgVectors {
    pub(crate) fn new(db: Arc<Db>, bridge: Arc<Bridge>) -> PgVectors {
        PgVectors {
            db,
            bridge,
            build: None,
            cache: Mutex::new(Cache::default()),
        }
    }

    fn call<T, F, Fut>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Arc<Db>, Option<i64>) -> Fut,
        Fut: std::future::Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        self.bridge.run(f(self.db.clone(), self.build))
    }

    /// Rows of `table` (`vector_files` or `vector_chunks`) in the build this store reads.
    fn count_rows(&self, table: &'static str) -> Result<usize, StoreError> {
        self.call(move |db, build| async move {
            let c = db.conn().await?;
            let n: i64 = c
                .query_one(
                    &format!(
                        "SELECT count(*) FROM memdir.{table} WHERE tenant = $1 AND build = {BUILD}"
                    ),
                    &[&db.tenant, &build],
                )
                .await
                .map_err(db_err)?
                .get(0);
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Starts a write: for the live build, takes the tenant's vector lock, creates the live row if
/// needed and, for a change to the chunks (`bump`), bumps `gen`; returns the build and `gen`
/// the write goes under.
async fn begin_write(
    tx: &crate::held::Tx<'_>,
    tenant: &str,
    build: Option<i64>,
    bump: bool,
) -> Result<(i64, i64), StoreError> {
    if let Some(b) = build {
        return Ok((b, 0));
    }
    tx.execute(
        "SELECT pg_advisory_xact_lock(memdir.lock_key('vectors', $1, ''))",
        &[&tenant],
    )
    .await
    .map_err(db_err)?;
    tx.execute(
        "INSERT INTO memdir.vector_live (tenant, build, gen) VALUES ($1, 0, 0)
         ON CONFLICT (tenant) DO NOTHING",
        &[&tenant],
    )
    .await
    .map_err(db_err)?;
    let row = tx
        .query_one(
            "UPDATE memdir.vector_live SET gen = gen + $2::bigint WHERE tenant = $1 RETURNING build, gen",
            &[&tenant, &i64::from(bump)],
        )
        .await
        .map_err(db_err)?;
    Ok((row.get(0), row.get(1)))
}

/// The build a read looks at, as an SQL expression over `$1` (tenant) and `$2` (a build or NULL).
const BUILD: &str =
    "coalesce($2::bigint, coalesce((SELECT build FROM memdir.vector_live WHERE tenant = $1), 0))";

impl VectorStore for PgVectors {
    fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        let key = key.to_string();
        self.call(|db, build| async move {
            let c = db.conn().await?;
            let row = c
                .query_opt(
                    &format!(
                        "SELECT value FROM memdir.vector_meta
                         WHERE tenant = $1 AND build = {BUILD} AND key = $3"
                    ),
                    &[&db.tenant, &build, &key],
                )
                .await
                .map_err(db_err)?;
            Ok(row.map(|r| r.get(0)))
        })
    }

    fn set_meta(&self, pairs: &[(&str, &str)]) -> Result<(), StoreError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.call(|db, build| async move {
            let mut c = db.conn().await?;
            let tx = c.tx().await?;
            // Settings change nothing a scan holds: no new `gen`, but the tenant's lock.
            let (build, _) = begin_write(&tx, &db.tenant, build, false).await?;
            for (k, v) in &pairs {
                tx.execute(
                    "INSERT INTO memdir.vector_meta (tenant, build, key, value) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (tenant, build, key) DO UPDATE SET value = EXCLUDED.value",
                    &[&db.tenant, &build, k, v],
                )
                .await
                .map_err(db_err)?;
            }
            tx.commit().await.map_err(db_err)
        })
    }

    fn files(&self) -> Result<Vec<IndexedFile>, StoreError> {
        self.call(|db, build| async move {
            let c = db.conn().await?;
            let rows = c
                .query(
                    &format!(
                        "SELECT path, size, mtime_ns, hash FROM memdir.vector_files
                         WHERE tenant = $1 AND build = {BUILD}"
                    ),
                    &[&db.tenant, &build],
                )
                .await
                .map_err(db_err)?;
            Ok(rows
                .into_iter()
                .map(|r| IndexedFile {
                    path: r.get(0),
                    size: r.get(1),
                    mtime_ns: r.get(2),
                    hash: r.get(3),
                })
                .collect())
        })
    }

    fn put(&self, files: &[FileVectors<'_>]) -> Result<(), StoreError> {
        // Owned rows: the call runs on the store's runtime.
        type Row = (Vec<i64>, Vec<Vec<u8>>, Vec<Vec<u8>>);
        let files: Vec<(IndexedFile, Option<String>, Row)> = files
            .iter()
            .map(|f| {
                let lines = f
                    .chunks
                    .iter()
                    .map(|c| i64::try_from(c.line).unwrap_or(i64::MAX))
                    .collect();
                let shown = f
                    .chunks
                    .iter()
                    .map(|c| c.shown.as_bytes().to_vec())
                    .collect();
                let vecs = f
                    .chunks
                    .iter()
                    .map(|c| memdir_store::vectors::to_le_bytes(c.vector))
                    .collect();
                (f.file.clone(), f.date.clone(), (lines, shown, vecs))
            })
            .collect();
        self.call(|db, build| async move {
            let mut c = db.conn().await?;
            let tx = c.tx().await?;
            let (build, gen_) = begin_write(&tx, &db.tenant, build, true).await?;
            for (f, date, (lines, shown, vecs)) in &files {
                // The chunks go with the file row (ON DELETE CASCADE).
                tx.execute(
                    "DELETE FROM memdir.vector_files WHERE tenant = $1 AND build = $2 AND path = $3",
                    &[&db.tenant, &build, &f.path],
                )
                .await
                .map_err(db_err)?;
                tx.execute(
                    "INSERT INTO memdir.vector_files
                         (tenant, build, path, size, mtime_ns, hash, date, gen)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    &[
                        &db.tenant, &build, &f.path, &f.size, &f.mtime_ns, &f.hash, date, &gen_,
                    ],
                )
                .await
                .map_err(db_err)?;
                tx.execute(
                    "INSERT INTO memdir.vector_chunks (tenant, build, path, line, shown, vec)
                     SELECT $1, $2, $3, l, s, v FROM unnest($4::bigint[], $5::bytea[], $6::bytea[]) AS u(l, s, v)",
                    &[&db.tenant, &build, &f.path, lines, shown, vecs],
                )
                .await
                .map_err(db_err)?;
            }
            tx.commit().await.map_err(db_err)
        })
    }

    fn retouch(&self, touched: &[IndexedFile], gone: &[String]) -> Result<(), StoreError> {
        let touched = touched.to_vec();
        let gone = gone.to_vec();
        self.call(|db, build| async move {
            let mut c = db.conn().await?;
            let tx = c.tx().await?;
            let (build, _) = begin_write(&tx, &db.tenant, build, !gone.is_empty()).await?;
            for f in &touched {
                tx.execute(
                    "UPDATE memdir.vector_files SET size = $4, mtime_ns = $5
                     WHERE tenant = $1 AND build = $2 AND path = $3",
                    &[&db.tenant, &build, &f.path, &f.size, &f.mtime_ns],
                )
                .await
                .map_err(db_err)?;
            }
            tx.execute(
                "DELETE FROM memdir.vector_files WHERE tenant = $1 AND build = $2 AND path = ANY($3)",
                &[&db.tenant, &build, &gone],
            )
            .await
            .map_err(db_err)?;
            tx.commit().await.map_err(db_err)
        })
    }

    fn file_count(&self) -> Result<usize, StoreError> {
        self.count_rows("vector_files")
    }

    fn chunk_count(&self) -> Result<usize, StoreError> {
        self.count_rows("vector_chunks")
    }

    fn scan(&self, visit: &mut ChunkVisit<'_>) -> Result<(), StoreError> {
        // Held for the whole scan: two searches never interleave their updates of the copy.
        let mut cache = self.cache();
        let seen = cache.seen;
        let known: HashMap<String, i64> = cache
            .files
            .iter()
            .map(|(p, (g, _))| (p.clone(), *g))
            .collect();
        // One snapshot: the live build and gen, the files, and the chunks of those newer than
        // this store's copy.
        type Fetched = (
            i64,
            i64,
            Vec<(String, i64)>,
            Vec<(String, i64, Vec<u8>, Vec<u8>)>,
        );
        let (build, gen_, listed, chunks): Fetched = self.call(|db, build| async move {
            let mut c = db.conn().await?;
            let tx = c.read_tx().await?;
            let (b, g) = match build {
                Some(b) => (b, -1),
                None => tx
                    .query_opt(
                        "SELECT build, gen FROM memdir.vector_live WHERE tenant = $1",
                        &[&db.tenant],
                    )
                    .await
                    .map_err(db_err)?
                    .map_or((0, 0), |r| (r.get(0), r.get(1))),
            };
            if build.is_none() && seen == Some((b, g)) {
                return Ok((b, g, Vec::new(), Vec::new()));
            }
            let listed: Vec<(String, i64)> = tx
                .query(
                    "SELECT path, gen FROM memdir.vector_files WHERE tenant = $1 AND build = $2",
                    &[&db.tenant, &b],
                )
                .await
                .map_err(db_err)?
                .into_iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            let same_build = seen.is_some_and(|(sb, _)| sb == b) && build.is_none();
            let fetch: Vec<&str> = listed
                .iter()
                .filter(|(p, g)| !same_build || known.get(p) != Some(g))
                .map(|(p, _)| p.as_str())
                .collect();
            let chunks = if fetch.is_empty() {
                Vec::new()
            } else {
                tx.query(
                    "SELECT path, line, shown, vec FROM memdir.vector_chunks
                     WHERE tenant = $1 AND build = $2 AND path = ANY($3)",
                    &[&db.tenant, &b, &fetch],
                )
                .await
                .map_err(db_err)?
                .into_iter()
                .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
                .collect()
            };
            tx.commit().await.map_err(db_err)?;
            Ok((b, g, listed, chunks))
        })?;
        if self.build.is_some() || cache.seen != Some((build, gen_)) {
            if cache.seen.is_none_or(|(b, _)| b != build) || self.build.is_some() {
                *cache = Cache::default();
            }
            // Files fetched now replace the copy's; files no longer listed leave it.
            let listed: HashMap<String, i64> = listed.into_iter().collect();
            let Cache { files, bytes, .. } = &mut *cache;
            files.retain(|p, (g, kept)| {
                let keep = listed.get(p) == Some(g);
                if !keep {
                    *bytes -= kept.iter().map(|k| k.2.len() + k.1.len()).sum::<usize>();
                }
                keep
            });
            for (p, g) in &listed {
                files.entry(p.clone()).or_insert_with(|| (*g, Vec::new()));
            }
            for (path, line, shown, vec) in chunks {
                if let Some((_, kept)) = files.get_mut(&path) {
                    let shown = String::from_utf8_lossy(&shown).into_owned();
                    *bytes += vec.len() + shown.len();
                    kept.push((u64::try_from(line).unwrap_or(0), shown, Arc::from(vec)));
                }
            }
            cache.seen = Some((build, gen_));
        }
        for (path, (_, kept)) in &cache.files {
            for (line, shown, vec) in kept {
                visit(path, *line, shown, vec);
            }
        }
        // Too big to keep (or a build being filled): the next scan fetches again.
        if cache.bytes > CACHE_MAX || self.build.is_some() {
            *cache = Cache::default();
        }
        Ok(())
    }

    fn rebuild(&self, fill: &mut RebuildFill<'_>) -> Result<(), StoreError> {
        if self.build.is_some() {
            return Err(StoreError::Conflict(
                "a vector index being rebuilt cannot be rebuilt again".into(),
            ));
        }
        let build: i64 = self.call(|db, _| async move {
            let c = db.conn().await?;
            Ok(c.query_one("SELECT nextval('memdir.vector_builds')", &[])
                .await
                .map_err(db_err)?
                .get(0))
        })?;
        let fresh = PgVectors {
            db: self.db.clone(),
            bridge: self.bridge.clone(),
            build: Some(build),
            cache: Mutex::new(Cache::default()),
        };
        let filled = fill(&fresh);
        let ok = filled.is_ok();
        let swapped = self.call(move |db, _| async move {
            let mut c = db.conn().await?;
            let tx = c.tx().await?;
            if ok {
                begin_write(&tx, &db.tenant, None, true).await?;
                tx.execute(
                    "UPDATE memdir.vector_live SET build = $2 WHERE tenant = $1",
                    &[&db.tenant, &build],
                )
                .await
                .map_err(db_err)?;
            }
            // A build switched in drops the others; a failed one leaves nothing behind.
            let which = if ok { "<>" } else { "=" };
            for table in ["vector_files", "vector_meta"] {
                tx.execute(
                    &format!("DELETE FROM memdir.{table} WHERE tenant = $1 AND build {which} $2"),
                    &[&db.tenant, &build],
                )
                .await
                .map_err(db_err)?;
            }
            tx.commit().await.map_err(db_err)
        });
        filled.and(swapped)
    }

    fn cached_bytes(&self) -> usize {
        self.cache().bytes
    }
}
