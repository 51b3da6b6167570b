//! The vector index: `.memdir/vectors.sqlite`, chunks of the files with their embeddings.
//!
//! Like the keyword index it is a cache, never the source of truth: delete it and the next
//! semantic or hybrid search builds it again. Every such search first brings it up to date
//! with the files (a file whose size and modification time are unchanged is trusted; any other
//! is hashed and re-embedded only if its content changed; files that are gone are dropped).
//!
//! The index records the embedder's model id, the vector length and the chunking rules. When
//! the configured embedder or the chunking no longer matches, vector search pauses with an
//! error that says to run `memdir reindex`, rather than mixing vectors of two models;
//! keyword search is untouched. A rebuild writes a new file beside the old one and renames it
//! over, so searches running meanwhile see either the whole old index or the whole new one.
//!
//! Tables: `meta(key, value)`; `files(id, path, size, mtime_ns, hash, date)`;
//! `chunks(file_id, line, shown, vec)` with `vec` the little-endian `f32` embedding.

use super::chunk::{CHUNKING, chunks};
use super::walk::{FileRef, Scope, open_file};
use super::{Budget, DEFAULT_RANKED_LIMIT, SearchHit, SearchOutcome, SearchRequest, Why};
use crate::Searcher;
use crate::error::Error;
use memdir_core::config::EmbedSettings;
use memdir_embed::{EmbedConfig, Embedder, EndpointConfig};
use memdir_folder::stamp::{change_stamp, content_hash, unchanged};
use memdir_store::store::StoreError;
use memdir_store::vectors::{
    ChunkVector, ChunkVisit, FileVectors, IndexedFile, RebuildFill, VectorStore, to_le_bytes,
};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The index file's name inside `.memdir/`.
pub(crate) const VECTOR_FILE: &str = "vectors.sqlite";

/// Bump when the tables change.
const SCHEMA: &str = "1";

/// Files bigger than this are embedded by their first this-many bytes only.
const MAX_EMBEDDED_BYTES: usize = 8 << 20;

/// Chunks sent to the embedder at once while indexing (it batches further inside).
const EMBED_GROUP: usize = 256;

/// A group embedded and written in less than this doubles the next group's size...
const FAST_GROUP: std::time::Duration = std::time::Duration::from_millis(250);

/// ...up to this many chunks.
const MAX_EMBED_GROUP: usize = 8192;

const CREATE: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    date TEXT
);
CREATE TABLE IF NOT EXISTS chunks(
    file_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    shown TEXT NOT NULL,
    vec BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
";

fn db_err(e: rusqlite::Error) -> Error {
    Error::Store(store_err(e))
}

fn store_err(e: rusqlite::Error) -> StoreError {
    StoreError::Unavailable(format!(
        "vector index: {e}; run `memdir reindex` or delete .memdir/{VECTOR_FILE}"
    ))
}

fn embed_err(e: memdir_embed::EmbedError) -> Error {
    Error::Embed(e.to_string())
}

/// Reports indexing progress: `(chunks embedded so far, chunks to embed)`.
pub type Progress<'a> = &'a dyn Fn(u64, u64);

/// What a sync or rebuild of the vector index did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct VectorStats {
    /// Files whose chunks were embedded.
    pub files_embedded: usize,
    /// Chunks embedded.
    pub chunks_embedded: usize,
    /// Files dropped because they are gone.
    pub files_removed: usize,
    /// Chunks in the index afterwards.
    pub chunks_total: usize,
}

/// The embedder a memory's searches use, loaded on first use (loading a local model reads ~90 MB).
#[derive(Default)]
pub struct EmbedderSlot {
    config: EmbedConfig,
    preset: Option<Arc<dyn Embedder>>,
    loaded: OnceLock<Result<Arc<dyn Embedder>, String>>,
}

impl EmbedderSlot {
    fn get(&self) -> Result<Arc<dyn Embedder>, Error> {
        if let Some(e) = &self.preset {
            return Ok(Arc::clone(e));
        }
        let loaded = self.loaded.get_or_init(|| match memdir_embed::open(&self.config) {
            Ok(Some(e)) => Ok(Arc::from(e)),
            Ok(None) => Err(
                "vector search needs an embedder: set [embed] provider = \"local\" and model_dir in .memdir/config.toml, or MEMDIR_MODEL_DIR=<dir>; keyword search works without one (--mode ranked)"
                    .to_string(),
            ),
            Err(e) => Err(e.to_string()),
        });
        match loaded {
            Ok(e) => Ok(Arc::clone(e)),
            Err(msg) => Err(Error::Invalid(msg.clone())),
        }
    }
}

/// Turns the `[embed]` settings into an embedder config. `model_dir` (from `MEMDIR_MODEL_DIR`)
/// selects the local model whatever the file says; `api_key` is the value of the variable the
/// settings name, read by the binary. Relative model paths are taken from `root`.
pub fn embed_config(
    settings: &EmbedSettings,
    root: &Path,
    model_dir: Option<PathBuf>,
    api_key: Option<String>,
) -> Result<EmbedConfig, Error> {
    if let Some(dir) = model_dir {
        return Ok(EmbedConfig::Local {
            model_dir: root.join(dir),
        });
    }
    match settings.provider.as_str() {
        "local" => {
            let dir = settings.model_dir.as_deref().filter(|d| !d.is_empty()).ok_or_else(|| {
                Error::Invalid(
                    "embed.provider is \"local\" but embed.model_dir is not set: set it to the model's folder in .memdir/config.toml".to_string(),
                )
            })?;
            Ok(EmbedConfig::Local {
                model_dir: root.join(dir),
            })
        }
        "openai" => {
            let (Some(url), Some(model)) = (settings.url.as_deref(), settings.model.as_deref())
            else {
                return Err(Error::Invalid(
                    "embed.provider is \"openai\" but embed.url or embed.model is not set: set both in .memdir/config.toml".to_string(),
                ));
            };
            let mut c = EndpointConfig::new(url, model);
            c.api_key = api_key;
            c.batch_size = settings.batch_size.max(1);
            c.timeout = Duration::from_secs(settings.timeout_secs.max(1));
            c.retries = settings.retries;
            Ok(EmbedConfig::Endpoint(c))
        }
        _ => Ok(EmbedConfig::None),
    }
}

impl EmbedderSlot {
    /// The embedder this config describes, loaded lazily (on the first search that needs it).
    pub fn from_config(config: EmbedConfig) -> EmbedderSlot {
        EmbedderSlot {
            config,
            ..EmbedderSlot::default()
        }
    }

    /// An embedder that is already built (the bench shares one model across folders).
    pub fn preset(embedder: Arc<dyn Embedder>) -> EmbedderSlot {
        EmbedderSlot {
            preset: Some(embedder),
            ..EmbedderSlot::default()
        }
    }

    /// True when an embedder is configured (it may still fail to load).
    pub fn is_configured(&self) -> bool {
        self.preset.is_some() || self.config != EmbedConfig::None
    }
}

impl Searcher<'_> {
    /// Brings the vector index up to date with the files, reporting progress; fails when the
    /// index was built with another model or chunking (see [`Searcher::rebuild_vector_index`]).
    pub fn sync_vector_index(&self, progress: Progress<'_>) -> Result<VectorStats, Error> {
        let embedder = self.embedder.get()?;
        let index = self.vector_store()?;
        check(index.as_ref(), embedder.as_ref())?;
        let (all, _) = self.corpus_files(&Scope::everything())?;
        sync(index.as_ref(), &all, embedder.as_ref(), progress)
    }

    /// Builds a new vector index with the configured embedder and swaps it in atomically.
    pub fn rebuild_vector_index(&self, progress: Progress<'_>) -> Result<VectorStats, Error> {
        let embedder = self.embedder.get()?;
        let index = self.vector_store()?;
        let (all, _) = self.corpus_files(&Scope::everything())?;
        let mut stats = VectorStats::default();
        // The seam speaks `StoreError`; the fill's own error (an embedder's, say) is kept here
        // so the caller sees it as it was.
        let mut failed = None;
        let built = index.rebuild(
            &mut |fresh| match sync(fresh, &all, embedder.as_ref(), progress) {
                Ok(s) => {
                    stats = s;
                    Ok(())
                }
                Err(e) => {
                    let line = e.to_string();
                    failed = Some(e);
                    Err(StoreError::Unavailable(line))
                }
            },
        );
        if let Some(e) = failed {
            return Err(e);
        }
        built?;
        Ok(stats)
    }

    /// Where the vector index lives: the backend's own (its tables), else a SQLite file in
    /// `.memdir/` of the folder or of the store's cache folder.
    fn vector_store(&self) -> Result<Arc<dyn VectorStore>, Error> {
        if let Some(v) = self.vectors {
            return Ok(Arc::clone(v));
        }
        let path = self
            .corpus
            .vector_root()?
            .join(memdir_folder::META_DIR)
            .join(VECTOR_FILE);
        Ok(Arc::new(SqliteVectors::open(&path)?))
    }
}

/// The vector index in a SQLite file (`.memdir/vectors.sqlite` of a folder or a cache folder).
pub(crate) struct SqliteVectors {
    path: PathBuf,
    conn: Mutex<Connection>,
}

fn meta(conn: &Connection, key: &str) -> Option<String> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()
        .ok()
        .flatten()
}

impl SqliteVectors {
    /// Opens the index at `path`, starting a new one if it is missing, corrupt or of another
    /// schema.
    pub(crate) fn open(path: &Path) -> Result<SqliteVectors, Error> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let usable = Connection::open(path)
            .ok()
            .filter(|c| c.busy_timeout(Duration::from_secs(30)).is_ok())
            .filter(|c| c.execute_batch(CREATE).is_ok() && meta_schema_ok(c));
        match usable {
            Some(conn) => {
                map_for_reading(&conn);
                Ok(SqliteVectors {
                    path: path.to_path_buf(),
                    conn: Mutex::new(conn),
                })
            }
            None => {
                let _ = std::fs::remove_file(path);
                SqliteVectors::create(path, false)
            }
        }
    }

    /// Creates an empty index at `path`. A `scratch` one (a rebuild's, swapped in only once
    /// it is complete and synced) keeps no journal on disk and never syncs.
    fn create(path: &Path, scratch: bool) -> Result<SqliteVectors, Error> {
        let conn = Connection::open(path).map_err(db_err)?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(db_err)?;
        if scratch {
            conn.execute_batch("PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY;")
                .map_err(db_err)?;
        }
        let tx = conn.unchecked_transaction().map_err(db_err)?;
        tx.execute_batch(CREATE).map_err(db_err)?;
        tx.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?1)",
            [SCHEMA],
        )
        .map_err(db_err)?;
        tx.commit().map_err(db_err)?;
        Ok(SqliteVectors {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Lets SQLite read the index through a memory map: a search reads every vector, and copying
/// each page out of the page cache was a third of the scan.
fn map_for_reading(conn: &Connection) {
    // A hint: without it reads are copies, as before.
    let _ = conn.pragma_update(None, "mmap_size", 1i64 << 30);
}

impl VectorStore for SqliteVectors {
    fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(meta(&self.conn(), key))
    }

    fn set_meta(&self, pairs: &[(&str, &str)]) -> Result<(), StoreError> {
        let conn = self.conn();
        for (k, v) in pairs {
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
                [k, v],
            )
            .map_err(store_err)?;
        }
        Ok(())
    }

    fn files(&self) -> Result<Vec<IndexedFile>, StoreError> {
        let conn = self.conn();
        let mut st = conn
            .prepare("SELECT path, size, mtime_ns, hash FROM files")
            .map_err(store_err)?;
        let rows = st
            .query_map([], |r| {
                Ok(IndexedFile {
                    path: r.get(0)?,
                    size: r.get(1)?,
                    mtime_ns: r.get(2)?,
                    hash: r.get(3)?,
                })
            })
            .map_err(store_err)?;
        rows.collect::<Result<_, _>>().map_err(store_err)
    }

    fn put(&self, files: &[FileVectors<'_>]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(store_err)?;
        for f in files {
            delete_path(&tx, &f.file.path)?;
            tx.execute(
                "INSERT INTO files(path, size, mtime_ns, hash, date) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    f.file.path,
                    f.file.size,
                    f.file.mtime_ns,
                    f.file.hash,
                    f.date
                ],
            )
            .map_err(store_err)?;
            let id = tx.last_insert_rowid();
            let mut st = tx
                .prepare_cached(
                    "INSERT INTO chunks(file_id, line, shown, vec) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(store_err)?;
            for c in &f.chunks {
                let line = i64::try_from(c.line).unwrap_or(i64::MAX);
                st.execute(params![id, line, c.shown, to_le_bytes(c.vector)])
                    .map_err(store_err)?;
            }
        }
        tx.commit().map_err(store_err)
    }

    fn retouch(&self, touched: &[IndexedFile], gone: &[String]) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(store_err)?;
        for f in touched {
            tx.execute(
                "UPDATE files SET size = ?1, mtime_ns = ?2 WHERE path = ?3",
                params![f.size, f.mtime_ns, f.path],
            )
            .map_err(store_err)?;
        }
        for path in gone {
            delete_path(&tx, path)?;
        }
        tx.commit().map_err(store_err)
    }

    fn file_count(&self) -> Result<usize, StoreError> {
        let n: i64 = self
            .conn()
            .query_row("SELECT count(*) FROM files", [], |r| r.get(0))
            .map_err(store_err)?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    fn chunk_count(&self) -> Result<usize, StoreError> {
        let n: i64 = self
            .conn()
            .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))
            .map_err(store_err)?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    fn scan(&self, visit: &mut ChunkVisit<'_>) -> Result<(), StoreError> {
        let conn = self.conn();
        let mut st = conn
            .prepare("SELECT f.path, c.line, c.shown, c.vec FROM chunks c JOIN files f ON f.id = c.file_id")
            .map_err(store_err)?;
        let mut rows = st.query([]).map_err(store_err)?;
        while let Some(r) = rows.next().map_err(store_err)? {
            let path = r
                .get_ref(0)
                .and_then(|v| Ok(v.as_str()?))
                .map_err(store_err)?;
            let line: i64 = r.get(1).map_err(store_err)?;
            let shown = r
                .get_ref(2)
                .and_then(|v| Ok(v.as_str()?))
                .map_err(store_err)?;
            let blob = r
                .get_ref(3)
                .and_then(|v| Ok(v.as_blob()?))
                .map_err(store_err)?;
            visit(path, u64::try_from(line).unwrap_or(0), shown, blob);
        }
        Ok(())
    }

    fn rebuild(&self, fill: &mut RebuildFill<'_>) -> Result<(), StoreError> {
        let path = &self.path;
        let tmp = path.with_file_name(format!("{VECTOR_FILE}.rebuild-{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        // Nothing reads the new file before the swap, and a crash leaves only a temp file: no
        // journal on disk and no sync per group of chunks (84 syncs for 2,760 chunks, half the
        // build's time), but one sync of the whole file before the swap.
        let filled = SqliteVectors::create(&tmp, true)
            .map_err(|e| match e {
                Error::Store(e) => e,
                other => StoreError::Unavailable(other.to_string()),
            })
            .and_then(|fresh| fill(&fresh));
        if let Err(e) = filled {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        // A journal left by a crashed writer of the old file must not be replayed on the new one.
        let _ = std::fs::remove_file(path.with_file_name(format!("{VECTOR_FILE}-journal")));
        memdir_folder::atomic::replace_with(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            StoreError::Unavailable(format!(
                "cannot swap in the new vector index {}: {e}",
                path.display()
            ))
        })?;
        // This handle now names the replaced file: later calls through it go to the new one.
        if let Ok(conn) = Connection::open(path) {
            let _ = conn.busy_timeout(Duration::from_secs(30));
            map_for_reading(&conn);
            *self.conn() = conn;
        }
        Ok(())
    }
}

/// Fails with a clear message when the index was built by another model or chunking.
pub(crate) fn check(index: &dyn VectorStore, embedder: &dyn Embedder) -> Result<(), Error> {
    let (Some(model), Some(chunking)) = (index.meta("model")?, index.meta("chunking")?) else {
        return Ok(()); // Nothing embedded yet: the first sync records the model.
    };
    let mut differs = Vec::new();
    if model != embedder.model_id() {
        differs.push(format!(
            "model {model} (configured: {})",
            embedder.model_id()
        ));
    }
    if chunking != CHUNKING {
        differs.push(format!("chunking {chunking} (now: {CHUNKING})"));
    }
    if differs.is_empty() {
        return Ok(());
    }
    Err(Error::Store(StoreError::Conflict(format!(
        "vector search is paused: the vector index was built with {}; run `memdir reindex` to re-embed (keyword search still works: --mode ranked)",
        differs.join(" and ")
    ))))
}

/// A file to embed: the file as it will be recorded, its date and its chunks.
type Pending<'a> = (
    IndexedFile,
    Option<String>,
    Vec<super::chunk::Chunk>,
    &'a FileRef,
);

/// Brings the index up to date with `all`.
pub(crate) fn sync(
    index: &dyn VectorStore,
    all: &[FileRef],
    embedder: &dyn Embedder,
    progress: Progress<'_>,
) -> Result<VectorStats, Error> {
    let mut stats = VectorStats::default();
    let mut known: HashMap<String, IndexedFile> = index
        .files()?
        .into_iter()
        .map(|f| (f.path.clone(), f))
        .collect();
    // Files to (re)embed, with their chunks.
    let mut pending: Vec<Pending<'_>> = Vec::new();
    let mut touched = Vec::new();
    for f in all {
        let (size, mtime, bytes) = match (&f.held, f.abs.as_os_str().is_empty()) {
            // A file read from a store (no path on disk) is held whole: judged by content,
            // with a time that never counts as unchanged.
            (Some(held), true) => {
                let size = i64::try_from(held.bytes.len()).unwrap_or(i64::MAX);
                (
                    size,
                    memdir_folder::stamp::UNTRUSTED,
                    std::borrow::Cow::Borrowed(&held.bytes[..]),
                )
            }
            _ => {
                // O_NOFOLLOW: a symlink put where the walk saw a file is never read through.
                let Ok(mut file) = open_file(&f.abs) else {
                    continue;
                };
                let Ok(m) = file.metadata() else {
                    continue;
                };
                let (size, mtime) = change_stamp(&m);
                if known
                    .get(&f.rel)
                    .is_some_and(|k| unchanged((k.size, k.mtime_ns), (size, mtime)))
                {
                    known.remove(&f.rel);
                    continue;
                }
                let mut bytes = Vec::new();
                if std::io::Read::read_to_end(&mut file, &mut bytes).is_err() {
                    continue;
                }
                (size, mtime, std::borrow::Cow::Owned(bytes))
            }
        };
        let old = known.remove(&f.rel);
        let hash = content_hash(&bytes);
        let file = IndexedFile {
            path: f.rel.clone(),
            size,
            mtime_ns: mtime,
            hash,
        };
        if old.as_ref().is_some_and(|k| k.hash == file.hash) {
            if old.is_some_and(|k| (k.size, k.mtime_ns) != (size, mtime)) {
                touched.push(file);
            }
            continue;
        }
        let pieces = if bytes.iter().take(8192).any(|b| *b == 0) {
            Vec::new() // Binary: nothing to embed.
        } else {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_EMBEDDED_BYTES)]);
            chunks(&text, f.date.is_some())
        };
        pending.push((file, f.date_string(), pieces, f));
    }
    let gone: Vec<String> = known.into_keys().collect();

    let total: u64 = pending.iter().map(|p| p.2.len() as u64).sum();
    let mut done = 0u64;
    if total > 0 {
        progress(0, total);
    }
    // Embed in groups of whole files, writing each group in one transaction, so an
    // interrupted build keeps what it finished. A group that embedded quickly (a static model
    // embeds 256 chunks in ~25 ms, less than its commit) makes the next one twice as large, so
    // a fast embedder is not held back by commits and at most a second's work is ever lost.
    let mut group = EMBED_GROUP;
    let mut start = 0;
    while start < pending.len() {
        let began = std::time::Instant::now();
        let mut end = start;
        let mut n = 0;
        while end < pending.len() && (end == start || n + pending[end].2.len() <= group) {
            n += pending[end].2.len();
            end += 1;
        }
        let texts: Vec<&str> = pending[start..end]
            .iter()
            .flat_map(|p| p.2.iter().map(|c| c.embed.as_str()))
            .collect();
        let vectors = if texts.is_empty() {
            Vec::new()
        } else {
            embedder.embed(&texts).map_err(embed_err)?
        };
        if vectors.len() != texts.len() {
            return Err(Error::Embed(
                "the embedder returned the wrong number of vectors".to_string(),
            ));
        }
        if start == 0 {
            record_model(index, embedder, vectors.first().map(Vec::len))?;
        }
        let shown: Vec<Vec<String>> = pending[start..end]
            .iter()
            .map(|p| {
                p.2.iter()
                    .map(|c| super::grep::line_text(c.shown.as_bytes()))
                    .collect()
            })
            .collect();
        let mut vi = vectors.iter();
        let files: Vec<FileVectors<'_>> = pending[start..end]
            .iter()
            .zip(&shown)
            .map(|((file, date, pieces, _), shown)| FileVectors {
                file: file.clone(),
                date: date.clone(),
                chunks: pieces
                    .iter()
                    .zip(shown)
                    .zip(vi.by_ref())
                    .map(|((c, s), v)| ChunkVector {
                        line: c.line,
                        shown: s,
                        vector: v,
                    })
                    .collect(),
            })
            .collect();
        index.put(&files)?;
        stats.files_embedded += files.len();
        stats.chunks_embedded += n;
        done += n as u64;
        progress(done, total);
        start = end;
        if began.elapsed() < FAST_GROUP {
            group = (group * 2).min(MAX_EMBED_GROUP);
        }
    }
    if !touched.is_empty() || !gone.is_empty() {
        index.retouch(&touched, &gone)?;
    }
    stats.files_removed = gone.len();
    // An index with nothing to embed still records its model (once).
    if pending.is_empty() && index.meta("model")?.as_deref() != Some(embedder.model_id()) {
        record_model(index, embedder, None)?;
    }
    stats.chunks_total = index.chunk_count()?;
    Ok(stats)
}

/// Writes the model id, chunking and (once known) vector length into the index's settings.
fn record_model(
    index: &dyn VectorStore,
    embedder: &dyn Embedder,
    dims: Option<usize>,
) -> Result<(), Error> {
    let dims = dims.map(|d| d.to_string());
    let mut pairs = vec![("model", embedder.model_id()), ("chunking", CHUNKING)];
    if let Some(d) = &dims {
        pairs.push(("dims", d));
    }
    Ok(index.set_meta(&pairs)?)
}

/// Scores every chunk of a file in scope against `query` (a unit vector): `(file, line, shown
/// text, cosine)`, in no particular order.
pub(crate) fn score_all<'f>(
    index: &dyn VectorStore,
    query: &[f32],
    in_scope: &HashMap<&str, &'f FileRef>,
) -> Result<Vec<(&'f FileRef, u64, String, f32)>, Error> {
    if let Some(dims) = index.meta("dims")?.and_then(|d| d.parse::<usize>().ok())
        && dims != query.len()
    {
        return Err(Error::Store(StoreError::Conflict(format!(
            "vector search is paused: the vector index holds vectors of length {dims} but the embedder gives {}; run `memdir reindex`",
            query.len()
        ))));
    }
    let mut out = Vec::new();
    index.scan(&mut |path, line, shown, blob| {
        if let Some(f) = in_scope.get(path) {
            out.push((*f, line, shown.to_string(), dot_blob(query, blob)));
        }
    })?;
    Ok(out)
}

fn meta_schema_ok(c: &Connection) -> bool {
    match meta(c, "schema") {
        Some(s) => s == SCHEMA,
        // A fresh file: stamp it.
        None => c
            .execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?1)",
                [SCHEMA],
            )
            .is_ok(),
    }
}

fn delete_path(tx: &Connection, path: &str) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM chunks WHERE file_id IN (SELECT id FROM files WHERE path = ?1)",
        [path],
    )
    .map_err(store_err)?;
    tx.execute("DELETE FROM files WHERE path = ?1", [path])
        .map_err(store_err)?;
    Ok(())
}

/// The dot product of a query and a stored embedding (little-endian `f32` bytes).
fn dot_blob(q: &[f32], blob: &[u8]) -> f32 {
    blob.chunks_exact(4)
        .zip(q)
        .map(|(b, x)| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) * x)
        .sum()
}

/// The name the vector index's sync is recorded under in a warm memory.
const STAMP: &str = "vector-index";

/// Embeds the query and scores every chunk in scope, best first (ties by path and line): the
/// shared first step of semantic and hybrid search. The query goes through the encoder on its
/// own thread while the index is opened and brought up to date.
pub(crate) fn dense_scores<'f>(
    searcher: &Searcher<'_>,
    (all, generation): (&'f [FileRef], Option<u64>),
    scope: &Scope,
    query: &str,
    progress: Progress<'_>,
) -> Result<Vec<(&'f FileRef, u64, String, f32)>, Error> {
    let embedder = searcher.embedder.get()?;
    let (index, q) = std::thread::scope(|s| {
        let q = s.spawn(|| embedder.embed_query(&[query]));
        let index = fresh_vector_index(searcher, (all, generation), embedder.as_ref(), progress);
        let q = q.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        (index, q)
    });
    let index = index?;
    let q = q.map_err(embed_err)?.into_iter().next().unwrap_or_default();
    let in_scope: HashMap<&str, &FileRef> = all
        .iter()
        .filter(|f| scope.keeps(&f.rel, f.date))
        .map(|f| (f.rel.as_str(), f))
        .collect();
    let mut scored = score_all(index.as_ref(), &q, &in_scope)?;
    scored.sort_by(|a, b| {
        b.3.total_cmp(&a.3)
            .then_with(|| a.0.rel.cmp(&b.0.rel))
            .then(a.1.cmp(&b.1))
    });
    Ok(scored)
}

/// Opens the vector index and brings it up to date with `all`. A warm memory skips the sync
/// when no file changed since its last one and the index still lists every file (a deleted
/// index is refilled). `progress` hears of the chunks embedded.
fn fresh_vector_index(
    searcher: &Searcher<'_>,
    (all, generation): (&[FileRef], Option<u64>),
    embedder: &dyn Embedder,
    progress: Progress<'_>,
) -> Result<Arc<dyn VectorStore>, Error> {
    let index = searcher.vector_store()?;
    check(index.as_ref(), embedder)?;
    let warm = searcher.warm.zip(generation);
    let in_step =
        warm.is_some_and(|(w, g)| w.is_stamped(STAMP, g)) && index.file_count()? == all.len();
    if !in_step {
        sync(index.as_ref(), all, embedder, progress)?;
        if let Some((w, g)) = warm {
            w.stamp(STAMP, g);
        }
    }
    Ok(index)
}

/// Semantic mode: the chunks closest in meaning to the query, best first.
pub(crate) fn search(
    searcher: &Searcher<'_>,
    scope: &Scope,
    req: &SearchRequest,
    progress: Progress<'_>,
) -> Result<SearchOutcome, Error> {
    let (all, generation) = searcher.corpus_files(&Scope::everything())?;
    let scored = dense_scores(searcher, (&all, generation), scope, &req.pattern, progress)?;
    let ranked = scored.into_iter().map(|(f, line, text, s)| {
        let why = Why {
            meaning: f64::from(s),
            ..Why::default()
        };
        (f, line, text, f64::from(s), Some(why))
    });
    Ok(finish(ranked, req))
}

/// A ranked line: its file, line number, text, score and the score's parts.
pub(crate) type Ranked<'f> = (&'f FileRef, u64, String, f64, Option<Why>);

/// Takes the best `limit` results under the output budget (ranked, semantic and hybrid modes).
/// Results left out by the budget, or past a limit the request set, count as omitted, so the
/// caller can say how many more there are.
pub(crate) fn finish<'f>(
    ranked: impl Iterator<Item = Ranked<'f>>,
    req: &SearchRequest,
) -> SearchOutcome {
    if !req.files {
        return finish_lines(ranked, req);
    }
    // One hit per file, its best line (the list is best first); every other file counted.
    let mut seen = std::collections::HashSet::new();
    let best = ranked.filter(|(f, ..)| seen.insert(f.rel.clone()));
    let outcome = finish_lines(
        best,
        &SearchRequest {
            limit: Some(req.limit.unwrap_or(DEFAULT_RANKED_LIMIT)),
            ..req.clone()
        },
    );
    debug_assert_eq!(outcome.hits.len() + outcome.omitted, seen.len());
    outcome
}

fn finish_lines<'f>(
    mut ranked: impl Iterator<Item = Ranked<'f>>,
    req: &SearchRequest,
) -> SearchOutcome {
    let limit = req.limit.unwrap_or(DEFAULT_RANKED_LIMIT);
    let mut budget = Budget::new(req.max_bytes, None);
    let mut outcome = SearchOutcome::default();
    for (f, line, text, score, why) in ranked.by_ref().take(limit) {
        let hit = SearchHit {
            path: f.rel.clone(),
            line,
            text,
            score: Some(score),
            date: f.date_string(),
            is_context: false,
            external: false,
            why,
        };
        if outcome.omitted > 0 || !budget.take(&hit.as_ref()) {
            outcome.omitted += 1;
            continue;
        }
        outcome.hits.push(hit);
    }
    if req.limit.is_some() {
        outcome.omitted += ranked.count();
    }
    outcome
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Stands in for the model: the sync's file handling is under test, not the vectors.
    struct Flat;

    impl Embedder for Flat {
        fn model_id(&self) -> &str {
            "flat"
        }
        fn dimensions(&self) -> usize {
            2
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, memdir_embed::EmbedError> {
            Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
        }
    }

    #[test]
    fn sync_never_reads_through_a_symlink_put_where_the_walk_saw_a_file() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "secret words\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("notes")).unwrap();
        std::fs::write(root.join("notes/real.md"), "real words\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("notes/a.md"))
            .unwrap();
        // As if notes/a.md had been a regular file when the folder was walked.
        let files = [
            FileRef::new(root, "notes/a.md".to_string()),
            FileRef::new(root, "notes/real.md".to_string()),
        ];
        let index = SqliteVectors::open(&root.join("v.sqlite")).unwrap();
        let stats = sync(&index, &files, &Flat, &|_, _| {}).unwrap();
        assert_eq!(stats.files_embedded, 1);
        let shown: Vec<String> = index
            .conn()
            .prepare("SELECT shown FROM chunks")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(shown, ["real words"]);
    }
}
