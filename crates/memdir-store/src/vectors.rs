//! Where the vector index keeps its chunks and embeddings: the seam between semantic search and
//! the storage of its cache.
//!
//! Search decides what to embed and scores the query itself (cosine over unit vectors, the
//! same code on every backend); a [`VectorStore`] only keeps rows. A folder (or a remote store
//! with a cache folder) keeps them in `.memdir/vectors.sqlite`; a backend with tables of its own
//! (PostgreSQL) can keep them there, so every process serving the memory shares one index and
//! no local disk is needed. Like every index it is a cache: dropping it costs a re-embedding,
//! never data.

use crate::store::StoreError;

/// A file as the vector index last embedded it: how the next sync tells a changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFile {
    /// The file's path in the memory.
    pub path: String,
    /// Its size in bytes when embedded.
    pub size: i64,
    /// Its modification time in nanoseconds, or a value that never counts as unchanged for a
    /// file read through a store.
    pub mtime_ns: i64,
    /// The content hash its chunks were made from.
    pub hash: String,
}

/// One chunk to keep: where it starts, the text a hit shows, and its embedding.
#[derive(Debug, Clone, Copy)]
pub struct ChunkVector<'a> {
    /// The chunk's first line (1-based).
    pub line: u64,
    /// The line shown for a hit on this chunk.
    pub shown: &'a str,
    /// The chunk's embedding (a unit vector).
    pub vector: &'a [f32],
}

/// One file's chunks, replacing whatever the index held for its path.
#[derive(Debug, Clone)]
pub struct FileVectors<'a> {
    /// The file as it was embedded.
    pub file: IndexedFile,
    /// The date in its name, for dated files (`YYYY-MM-DD`).
    pub date: Option<String>,
    /// Its chunks, in file order.
    pub chunks: Vec<ChunkVector<'a>>,
}

/// A chunk as a scan yields it: path, first line, shown text and the embedding as little-endian
/// `f32` bytes (the stored form, so a scan copies nothing).
pub type ChunkVisit<'v> = dyn FnMut(&str, u64, &str, &[u8]) + 'v;

/// Fills a fresh index during [`VectorStore::rebuild`]. A caller whose own failure is richer
/// than a [`StoreError`] keeps it aside and returns any error here to abandon the build.
pub type RebuildFill<'f> = dyn FnMut(&dyn VectorStore) -> Result<(), StoreError> + 'f;

/// The rows of a vector index. Implementations keep writes atomic per call: a `put` of several
/// files lands whole or not at all, so an interrupted build keeps what it finished.
pub trait VectorStore: Send + Sync {
    /// A recorded setting (`model`, `chunking`, `dims`), if any.
    fn meta(&self, key: &str) -> Result<Option<String>, StoreError>;
    /// Records settings, replacing earlier values.
    fn set_meta(&self, pairs: &[(&str, &str)]) -> Result<(), StoreError>;
    /// Every file the index holds.
    fn files(&self) -> Result<Vec<IndexedFile>, StoreError>;
    /// Replaces the chunks of these files, in one transaction.
    fn put(&self, files: &[FileVectors<'_>]) -> Result<(), StoreError>;
    /// Records new stamps of files whose content did not change, and drops files that are gone.
    fn retouch(&self, touched: &[IndexedFile], gone: &[String]) -> Result<(), StoreError>;
    /// How many files the index holds.
    fn file_count(&self) -> Result<usize, StoreError> {
        Ok(self.files()?.len())
    }
    /// How many chunks the index holds.
    fn chunk_count(&self) -> Result<usize, StoreError>;
    /// Calls `visit` for every chunk, in no particular order.
    fn scan(&self, visit: &mut ChunkVisit<'_>) -> Result<(), StoreError>;
    /// Builds a new index with `fill` and swaps it in atomically when `fill` succeeds: searches
    /// meanwhile see the whole old index, and a failed build leaves it untouched.
    fn rebuild(&self, fill: &mut RebuildFill<'_>) -> Result<(), StoreError>;
    /// Bytes of vectors this store holds in memory between searches (what a service counts
    /// against its memory budget).
    fn cached_bytes(&self) -> usize {
        0
    }
}

/// Encodes an embedding as the little-endian `f32` bytes every store keeps.
pub fn to_le_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
