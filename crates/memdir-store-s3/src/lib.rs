//! memdir's S3 store: a memory is a prefix of objects in any S3-compatible bucket.
//!
//! A store is opened from a URL such as `s3://bucket/memories?tenant=alice`; credentials,
//! region and endpoint come from the `AWS_*` settings the front end read from its environment
//! ([`S3Config`]). Each file is one object, `memories/alice/notes/x.md`; folders are implied
//! by keys, and an empty folder is a zero-byte `.memdir` object inside it. memdir's own state
//! (settings, the change journal, contents kept for history, lock leases, move intents) lives
//! beside the tenants under `memories/.memdir/alice/`, so listing a memory never lists its
//! history. docs/format.md has the layout.
//!
//! There is no server of ours in between, so every guarantee comes from S3's conditional
//! requests: a whole-file write with [`Precondition::Absent`] is a put with `If-None-Match: *`,
//! one with [`Precondition::Matches`] a put with `If-Match` on the ETag of the version read, so a
//! stale edit is a conflict, never a lost update. An append reads the file and puts it back
//! with `If-Match`, retrying (bounded) when another writer got there first. Locks are lease
//! objects taken and renewed with the same conditional puts ([`lease`]). A rename is a copy
//! then a delete; a folder move writes an intent first, so a crash mid-move is finished by the
//! next open. Searches read a memory's files through [`Store::read_all`], which lists once and
//! fetches only objects whose ETag changed since the last search ([`cache`]).
//!
//! ```no_run
//! use memdir_store::Store;
//! use memdir_core::path::MemPath;
//! use memdir_store_s3::{S3Config, S3Store};
//! let config = S3Config::new("s3://bucket/memories?tenant=alice")?
//!     .with_aws("AWS_REGION", "eu-west-1");
//! let store = S3Store::create(config)?;
//! store.append(&MemPath::parse("log/2026-12-01.md")?, b"- 09:15 decided\n")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod cache;
mod config;
mod forget;
mod history;
pub mod lease;
mod versions;

pub use config::{DEFAULT_CACHE_CAP, DEFAULT_LEASE, S3Config, S3Url, TENANT_PARAM};
pub use history::S3History;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use memdir_core::path::MemPath;
use memdir_store::bridge::Bridge;
use memdir_store::paths;
use memdir_store::store::{LockGuard, LockName, Locks, Precondition, Version, stale};
use memdir_store::{Backend, Entry, EntryKind, Store, StoreError};
use object_store::path::Path as Key;
use object_store::{
    Attribute, Attributes, GetOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions,
    PutPayload, UpdateVersion,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The name of the object that marks an empty folder (`notes/empty/.memdir`). `.memdir` is a
/// reserved name, so no file of the memory can have it.
pub const FOLDER_MARKER: &str = ".memdir";

/// The object metadata key that carries a file's version (its git blob id), so a conditional
/// write can check a version with a `HEAD` instead of reading the whole file.
const VERSION_META: &str = "memdir-version";

/// The object metadata key that carries the ids of the latest appends to a file, so an append
/// whose answer was lost can tell that it landed (see `append_once`).
const APPENDS_META: &str = "memdir-appends";

/// The object metadata key that carries the id of the whole-file write that made the object.
const WRITE_META: &str = "memdir-write";

/// How many append ids a file's metadata keeps (24 characters each, far below S3's 2 KB).
const APPEND_IDS: usize = 24;

/// How many times an append re-reads and retries when other writers keep changing the file.
pub const APPEND_TRIES: u32 = 60;

/// How many objects are fetched at once when many are needed (a search's first read).
const PARALLEL_GETS: usize = 16;

/// A memory stored in an S3 bucket.
pub struct S3Store {
    t: Arc<Tenant>,
    bridge: Arc<Bridge>,
}

impl std::fmt::Debug for S3Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Store")
            .field("url", &self.t.url.shown())
            .field("endpoint", &self.t.endpoint)
            .finish_non_exhaustive()
    }
}

/// Requests sent to S3 by one store, by kind: what the benchmarks and the cache tests count.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RequestCounts {
    /// `GET` of an object's bytes.
    pub get: u64,
    /// `HEAD` of an object.
    pub head: u64,
    /// `PUT` (plain or conditional).
    pub put: u64,
    /// `LIST` pages.
    pub list: u64,
    /// `DELETE` (one per object).
    pub delete: u64,
}

#[derive(Default)]
struct Counters {
    get: AtomicU64,
    head: AtomicU64,
    put: AtomicU64,
    list: AtomicU64,
    delete: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// A file's state before the changes since the last history record, and after the latest.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub(crate) before: Option<Version>,
    pub(crate) after: Option<Bytes>,
}

/// One memory: the client, its keys, and what this process remembers about it.
pub(crate) struct Tenant {
    pub(crate) os: Arc<dyn ObjectStore>,
    pub(crate) url: S3Url,
    /// The endpoint, for messages and the cache's keys; never a secret.
    pub(crate) endpoint: String,
    /// `prefix/tenant`: where the files are.
    base: String,
    /// `prefix/.memdir/tenant`: where memdir's own state is.
    state: String,
    pub(crate) lease: Duration,
    counts: Counters,
    /// Files changed since the last history record (only while a history is attached).
    pub(crate) pending: Mutex<BTreeMap<MemPath, Pending>>,
    pub(crate) recording: AtomicBool,
    /// Versions known to be kept under `blobs/` already (while the journal is the one in
    /// `head_seen`: a forget deletes contents).
    pub(crate) known_blobs: Mutex<std::collections::HashSet<String>>,
    /// The journal this process last read the history head as naming.
    pub(crate) head_seen: Mutex<Option<String>>,
    pub(crate) cache: cache::Cache,
    /// Appends in flight, by key.
    batches: Mutex<BTreeMap<String, Arc<Mutex<Batch>>>>,
    /// Presigns the requests object_store does not send (older object versions).
    signer: Arc<dyn object_store::signer::Signer>,
    /// Sends those requests.
    http: reqwest::Client,
    /// What went wrong without failing an operation, for the front end to show.
    pub(crate) warnings: Mutex<Vec<String>>,
}

/// What a `PUT` came to.
pub(crate) enum Put {
    /// Written; the new ETag.
    Done(Option<String>),
    /// The precondition failed: something is there (create) or it changed (update).
    Lost,
}

/// What a `HEAD` says about a file.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) etag: Option<String>,
    pub(crate) version: Option<Version>,
    /// The id of the whole-file write that made it, when memdir made it.
    pub(crate) write: Option<String>,
}

pub(crate) fn s3_err(what: &str, e: object_store::Error) -> StoreError {
    // object_store's messages carry the request's cause (the status and S3's error code);
    // credentials are never part of them.
    StoreError::Unavailable(format!("s3: {what}: {e}"))
}

/// `a/b/c` → `[a, a/b]`: the folders that must exist for `path` to.
fn ancestors(path: &MemPath) -> Vec<MemPath> {
    let mut out = Vec::new();
    let mut p = path.parent();
    while let Some(d) = p {
        if d.is_root() {
            break;
        }
        p = d.parent();
        out.push(d);
    }
    out.reverse();
    out
}

/// A few random bytes as hex, for lease owners and move ids.
pub(crate) fn random_id() -> String {
    let mut b = [0u8; 12];
    if getrandom::fill(&mut b).is_err() {
        // Without the OS generator, time and thread still make an id unique enough for one run.
        let n = jiff::Timestamp::now().as_nanosecond();
        return format!("{n:x}{:?}", std::thread::current().id()).replace(['(', ')'], "");
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Tenant {
    /// The object of a file.
    pub(crate) fn key(&self, path: &MemPath) -> Result<Key, StoreError> {
        let k = if path.is_root() {
            self.base.clone()
        } else {
            format!("{}/{path}", self.base)
        };
        Key::parse(&k).map_err(|_| {
            StoreError::InvalidPath(format!(
                "{path}: S3 keys cannot hold control characters: rename the file"
            ))
        })
    }

    /// An object of memdir's own state (`meta/config.toml`, `journal/...`).
    pub(crate) fn state_key(&self, rest: &str) -> Result<Key, StoreError> {
        Key::parse(format!("{}/{rest}", self.state))
            .map_err(|e| StoreError::Unavailable(format!("s3: bad state key {rest:?}: {e}")))
    }

    /// The file a key names, or `None` for keys that are not a file of this memory (markers).
    fn path_of(&self, key: &Key) -> Option<MemPath> {
        let rest = key.as_ref().strip_prefix(&self.base)?.strip_prefix('/')?;
        if rest.rsplit('/').next() == Some(FOLDER_MARKER) {
            return None;
        }
        MemPath::parse(rest).ok().filter(|p| !p.is_root())
    }

    pub(crate) fn count_list(&self) {
        bump(&self.counts.list);
    }

    pub(crate) fn count_get(&self) {
        bump(&self.counts.get);
    }

    pub(crate) fn count_delete(&self) {
        bump(&self.counts.delete);
    }

    /// Keeps a warning for [`memdir_store::History::take_warnings`], and logs it.
    pub(crate) fn warn(&self, message: String) {
        tracing::warn!("{message}");
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(message);
    }

    pub(crate) fn counts(&self) -> RequestCounts {
        let c = &self.counts;
        RequestCounts {
            get: c.get.load(Ordering::Relaxed),
            head: c.head.load(Ordering::Relaxed),
            put: c.put.load(Ordering::Relaxed),
            list: c.list.load(Ordering::Relaxed),
            delete: c.delete.load(Ordering::Relaxed),
        }
    }

    /// An object's bytes and ETag, or `None` when there is none.
    pub(crate) async fn get(
        &self,
        key: &Key,
    ) -> Result<Option<(Bytes, Option<String>)>, StoreError> {
        bump(&self.counts.get);
        match self.os.get(key).await {
            Ok(r) => {
                let etag = r.meta.e_tag.clone();
                let bytes = r.bytes().await.map_err(|e| s3_err("read", e))?;
                Ok(Some((bytes, etag)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(s3_err("read", e)),
        }
    }

    /// An object's ETag and the version memdir stored with it, or `None` when there is none.
    pub(crate) async fn head(&self, key: &Key) -> Result<Option<Head>, StoreError> {
        bump(&self.counts.head);
        let opts = GetOptions {
            head: true,
            ..GetOptions::default()
        };
        match self.os.get_opts(key, opts).await {
            Ok(r) => Ok(Some(Head {
                etag: r.meta.e_tag.clone(),
                version: r
                    .attributes
                    .get(&Attribute::Metadata(VERSION_META.into()))
                    .map(|v| Version::from_string(v.as_ref())),
                write: r
                    .attributes
                    .get(&Attribute::Metadata(WRITE_META.into()))
                    .map(|v| v.as_ref().to_string()),
            })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(s3_err("stat", e)),
        }
    }

    /// Puts an object; `version` is stored as its metadata when given.
    pub(crate) async fn put(
        &self,
        key: &Key,
        data: Bytes,
        mode: PutMode,
        version: Option<&Version>,
    ) -> Result<Put, StoreError> {
        let meta = version.map(|v| (VERSION_META, v.as_str().to_string()));
        self.put_meta(key, data, mode, meta.into_iter().collect())
            .await
    }

    /// Puts an object with these metadata entries.
    async fn put_meta(
        &self,
        key: &Key,
        data: Bytes,
        mode: PutMode,
        meta: Vec<(&'static str, String)>,
    ) -> Result<Put, StoreError> {
        bump(&self.counts.put);
        let mut attributes = Attributes::new();
        for (k, v) in meta {
            attributes.insert(Attribute::Metadata(k.into()), v.into());
        }
        let opts = PutOptions {
            mode,
            attributes,
            ..PutOptions::default()
        };
        match self.os.put_opts(key, PutPayload::from(data), opts).await {
            Ok(r) => Ok(Put::Done(r.e_tag)),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => Ok(Put::Lost),
            Err(object_store::Error::NotImplemented { .. }) => {
                Err(StoreError::Unavailable(format!(
                    "s3: {} does not support conditional writes (If-Match / If-None-Match), which memdir needs to never lose an update",
                    self.endpoint
                )))
            }
            Err(e) => Err(s3_err("write", e)),
        }
    }

    /// An object's bytes, ETag and the ids of the appends that made it (newest last).
    async fn get_appended(
        &self,
        key: &Key,
    ) -> Result<Option<(Bytes, Option<String>, Vec<String>)>, StoreError> {
        bump(&self.counts.get);
        match self.os.get(key).await {
            Ok(r) => {
                let etag = r.meta.e_tag.clone();
                let ids = r
                    .attributes
                    .get(&Attribute::Metadata(APPENDS_META.into()))
                    .map(|v| v.as_ref().split(' ').map(str::to_string).collect())
                    .unwrap_or_default();
                let bytes = r.bytes().await.map_err(|e| s3_err("read", e))?;
                Ok(Some((bytes, etag, ids)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(s3_err("read", e)),
        }
    }

    pub(crate) async fn delete(&self, key: &Key) -> Result<(), StoreError> {
        bump(&self.counts.delete);
        match self.os.delete(key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(s3_err("delete", e)),
        }
    }

    /// Every object under `prefix` (a folder of keys), in key order.
    pub(crate) async fn list_all(
        &self,
        prefix: &Key,
    ) -> Result<Vec<object_store::ObjectMeta>, StoreError> {
        bump(&self.counts.list);
        let mut out: Vec<object_store::ObjectMeta> = self
            .os
            .list(Some(prefix))
            .try_collect()
            .await
            .map_err(|e| s3_err("list", e))?;
        out.sort_by(|a, b| a.location.cmp(&b.location));
        Ok(out)
    }

    /// True when any object has a key under `path/` (it is a folder).
    async fn has_children(&self, path: &MemPath) -> Result<bool, StoreError> {
        if path.is_root() {
            return Ok(true);
        }
        bump(&self.counts.list);
        let key = self.key(path)?;
        match self.os.list(Some(&key)).next().await {
            None => Ok(false),
            Some(Ok(_)) => Ok(true),
            Some(Err(e)) => Err(s3_err("list", e)),
        }
    }

    /// The first of `path`'s folders that is a file instead, if any.
    async fn file_above(&self, path: &MemPath) -> Result<Option<MemPath>, StoreError> {
        let dirs = ancestors(path);
        let keys = dirs
            .iter()
            .map(|d| self.key(d))
            .collect::<Result<Vec<_>, _>>()?;
        let heads = futures::future::try_join_all(keys.iter().map(|k| self.head(k))).await?;
        Ok(dirs
            .into_iter()
            .zip(heads)
            .find(|(_, h)| h.is_some())
            .map(|(d, _)| d))
    }

    /// Why nothing is at `path`: a file where one of its folders should be, or simply nothing.
    async fn missing(&self, path: &MemPath) -> StoreError {
        match self.file_above(path).await {
            Ok(Some(_)) => paths::part_is_file(path),
            Ok(None) => StoreError::NotFound(format!("{path} does not exist")),
            Err(e) => e,
        }
    }

    /// Refuses a new file at `path` under a file, or over a folder.
    async fn check_new_file(&self, path: &MemPath, pre: &Precondition) -> Result<(), StoreError> {
        let (above, dir) =
            futures::future::try_join(self.file_above(path), self.has_children(path)).await?;
        if above.is_some() {
            return Err(paths::part_is_file(path));
        }
        if dir {
            return Err(match pre {
                Precondition::Absent => {
                    StoreError::Conflict(format!("{path} already exists (a folder)"))
                }
                _ => paths::is_folder(path),
            });
        }
        Ok(())
    }

    /// A file's version and ETag: from its metadata when memdir wrote it, else from its bytes.
    async fn current(&self, key: &Key) -> Result<Option<(Version, Option<String>)>, StoreError> {
        match self.head(key).await? {
            None => Ok(None),
            Some(Head {
                version: Some(v),
                etag,
                ..
            }) => Ok(Some((v, etag))),
            Some(Head { version: None, .. }) => Ok(self
                .get(key)
                .await?
                .map(|(b, etag)| (Version::of(&b), etag))),
        }
    }

    fn recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    fn is_pending(&self, path: &MemPath) -> bool {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(path)
    }

    /// Notes `path`'s state before its first change since the last history record, keeping its
    /// content under `blobs/` so history can give it back. `bytes` is the content when the
    /// caller read it anyway.
    async fn remember_before(
        &self,
        path: &MemPath,
        before: Option<Version>,
        bytes: Option<Bytes>,
    ) -> Result<(), StoreError> {
        if !self.recording() || self.is_pending(path) {
            return Ok(());
        }
        if let Some(v) = &before {
            self.keep_blob(v, bytes, Some(path)).await?;
        }
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(path.clone())
            .or_insert(Pending {
                before,
                after: None,
            });
        Ok(())
    }

    /// Notes `path`'s state before its first change, looking it up.
    async fn remember_current(&self, path: &MemPath) -> Result<(), StoreError> {
        if !self.recording() || self.is_pending(path) {
            return Ok(());
        }
        let now = self.current(&self.key(path)?).await?;
        self.remember_before(path, now.map(|(v, _)| v), None).await
    }

    /// Notes what `path` holds after a change (`None`: removed).
    fn remember_after(&self, path: &MemPath, after: Option<Bytes>) {
        if !self.recording() {
            return;
        }
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = pending.get_mut(path) {
            p.after = after;
        }
    }

    /// Keeps content `v` under `blobs/`, taking it from `bytes` or from the file at `path`.
    pub(crate) async fn keep_blob(
        &self,
        v: &Version,
        bytes: Option<Bytes>,
        path: Option<&MemPath>,
    ) -> Result<(), StoreError> {
        if self
            .known_blobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(v.as_str())
        {
            return Ok(());
        }
        let key = self.state_key(&format!("blobs/{v}"))?;
        let bytes = match bytes {
            Some(b) => Some(b),
            None if self.head(&key).await?.is_some() => None,
            None => match path {
                Some(p) => self
                    .get(&self.key(p)?)
                    .await?
                    .map(|(b, _)| b)
                    .filter(|b| &Version::of(b) == v),
                None => None,
            },
        };
        if let Some(b) = bytes {
            self.put(&key, b, PutMode::Create, Some(v)).await?;
        }
        self.known_blobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(v.as_str().to_string());
        Ok(())
    }

    async fn read(&self, path: &MemPath) -> Result<(Bytes, Version), StoreError> {
        if path.is_root() {
            return Err(StoreError::InvalidPath(
                "the memory root is a folder, not a file".into(),
            ));
        }
        match self.get(&self.key(path)?).await? {
            Some((b, _)) => {
                let v = Version::of(&b);
                Ok((b, v))
            }
            None if self.has_children(path).await? => Err(paths::is_folder(path)),
            None => Err(self.missing(path).await),
        }
    }

    async fn write_if(
        &self,
        path: &MemPath,
        data: Bytes,
        pre: &Precondition,
    ) -> Result<Version, StoreError> {
        paths::not_root(path)?;
        let key = self.key(path)?;
        let v = Version::of(&data);
        let mode = match pre {
            Precondition::Any => {
                // A file that is there already passed the tree checks when it was made.
                let now = self.current(&key).await?;
                if now.is_none() {
                    self.check_new_file(path, pre).await?;
                }
                self.remember_before(path, now.map(|(v, _)| v), None)
                    .await?;
                PutMode::Overwrite
            }
            Precondition::Absent => {
                self.check_new_file(path, pre).await?;
                self.remember_before(path, None, None).await?;
                PutMode::Create
            }
            Precondition::Matches(want) => {
                let Some((now, etag)) = self.current(&key).await? else {
                    return Err(stale(path, want, None));
                };
                if &now != want {
                    return Err(stale(path, want, Some(&now)));
                }
                self.remember_before(path, Some(now), None).await?;
                PutMode::Update(UpdateVersion {
                    e_tag: etag,
                    version: None,
                })
            }
        };
        // The write's id lets a refused retry tell that its first try landed after all.
        let me = random_id();
        let meta = vec![
            (VERSION_META, v.as_str().to_string()),
            (WRITE_META, me.clone()),
        ];
        match self.put_meta(&key, data.clone(), mode, meta).await? {
            Put::Done(_) => {
                self.remember_after(path, Some(data));
                Ok(v)
            }
            Put::Lost => {
                let head = self.head(&key).await?;
                if head.as_ref().and_then(|h| h.write.as_deref()) == Some(me.as_str()) {
                    self.remember_after(path, Some(data));
                    return Ok(v);
                }
                let now = match head {
                    None => None,
                    Some(_) => self.current(&key).await?.map(|(v, _)| v),
                };
                Err(match pre {
                    Precondition::Matches(want) => stale(path, want, now.as_ref()),
                    _ => StoreError::Conflict(format!("{path} already exists")),
                })
            }
        }
    }

    /// Appends `data`. Appends that arrive on this store while another is running are sent
    /// together as the next compare-and-swap (each caller's bytes stay whole and in one
    /// piece), so many writers in one process cost one request pair per round, not one each.
    async fn append(&self, path: &MemPath, data: Vec<u8>) -> Result<(), StoreError> {
        paths::not_root(path)?;
        let key = self.key(path)?;
        let batch = self.batch(&key);
        let (tx, rx) = tokio::sync::oneshot::channel();
        let lead = {
            let mut b = batch.lock().unwrap_or_else(|e| e.into_inner());
            b.queue.push((data, tx));
            !std::mem::replace(&mut b.leading, true)
        };
        if lead {
            loop {
                let group = {
                    let mut b = batch.lock().unwrap_or_else(|e| e.into_inner());
                    if b.queue.is_empty() {
                        b.leading = false;
                        break;
                    }
                    std::mem::take(&mut b.queue)
                };
                let all: Vec<u8> = group.iter().flat_map(|(d, _)| d.iter().copied()).collect();
                let res = self.append_once(path, &key, &all).await;
                for (_, tx) in group {
                    let _ = tx.send(res.clone());
                }
            }
        }
        rx.await.unwrap_or_else(|_| {
            Err(StoreError::Unavailable(
                "s3: an append was interrupted: check the file and try again".into(),
            ))
        })
    }

    /// The queue of appends to `key` on this store.
    fn batch(&self, key: &Key) -> Arc<Mutex<Batch>> {
        let mut all = self.batches.lock().unwrap_or_else(|e| e.into_inner());
        // Entries nobody else holds are idle: drop them, so the map stays small.
        all.retain(|_, b| Arc::strong_count(b) > 1);
        all.entry(key.as_ref().to_string()).or_default().clone()
    }

    /// One append as a compare-and-swap: read the file and its ETag, put it back longer with
    /// `If-Match`, and start over when another writer changed it in between.
    ///
    /// A put can land even though its answer was lost (a server error after the write, a
    /// timeout, and the client's retry then fails its precondition); sending the bytes again
    /// would duplicate them. So each attempt carries a random id, kept in the object's metadata
    /// with the ids of the appends before it, and a read that finds our id knows we are done.
    async fn append_once(&self, path: &MemPath, key: &Key, data: &[u8]) -> Result<(), StoreError> {
        let mut checked = false;
        let mut tried: Vec<String> = Vec::new();
        for attempt in 0..APPEND_TRIES {
            if attempt > 0 {
                tokio::time::sleep(backoff(attempt)).await;
            }
            let got = self.get_appended(key).await?;
            if let Some((b, _, ids)) = &got
                && tried.iter().any(|t| ids.contains(t))
            {
                // An earlier attempt landed after all.
                self.remember_after(path, Some(b.clone()));
                return Ok(());
            }
            let (mode, old, mut ids) = match got {
                Some((old, etag, ids)) => (
                    PutMode::Update(UpdateVersion {
                        e_tag: etag,
                        version: None,
                    }),
                    Some(old),
                    ids,
                ),
                None => {
                    if !checked {
                        self.check_new_file(path, &Precondition::Any).await?;
                        checked = true;
                    }
                    (PutMode::Create, None, Vec::new())
                }
            };
            let mut new = Vec::with_capacity(old.as_ref().map_or(0, |o| o.len()) + data.len());
            if let Some(o) = &old {
                new.extend_from_slice(o);
            }
            new.extend_from_slice(data);
            let new = Bytes::from(new);
            let v = Version::of(&new);
            self.remember_before(path, old.as_ref().map(|o| Version::of(o)), old.clone())
                .await?;
            let me = random_id();
            ids.push(me.clone());
            let keep = ids.len().saturating_sub(APPEND_IDS);
            let meta = vec![
                (VERSION_META, v.as_str().to_string()),
                (APPENDS_META, ids[keep..].join(" ")),
            ];
            tried.push(me);
            if let Put::Done(_) = self.put_meta(key, new.clone(), mode, meta).await? {
                self.remember_after(path, Some(new));
                return Ok(());
            }
        }
        Err(StoreError::Conflict(format!(
            "could not append to {path}: other writers changed it {APPEND_TRIES} times in a row; try again"
        )))
    }

    async fn list(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        let key = self.key(dir)?;
        bump(&self.counts.list);
        let listed = self
            .os
            .list_with_delimiter(Some(&key))
            .await
            .map_err(|e| s3_err("list", e))?;
        let mut out = BTreeMap::new();
        let mut any = false;
        for o in listed.objects {
            any = true;
            if let Some(p) = self.path_of(&o.location) {
                out.insert(
                    p.clone(),
                    Entry {
                        path: p,
                        kind: EntryKind::File,
                        size: o.size,
                        modified_ms: o.last_modified.timestamp_millis(),
                    },
                );
            }
        }
        for c in listed.common_prefixes {
            any = true;
            let Some(rest) = c.as_ref().strip_prefix(&self.base) else {
                continue;
            };
            let Ok(p) = MemPath::parse(rest.trim_start_matches('/')) else {
                continue;
            };
            if p.is_root() {
                continue;
            }
            out.insert(
                p.clone(),
                Entry {
                    path: p,
                    kind: EntryKind::Dir,
                    size: 0,
                    modified_ms: 0,
                },
            );
        }
        if !any && !dir.is_root() {
            return Err(match self.head(&key).await? {
                Some(_) => paths::part_is_file(dir),
                None => match self.missing(dir).await {
                    StoreError::NotFound(_) => {
                        StoreError::NotFound(format!("{dir} does not exist"))
                    }
                    e => e,
                },
            });
        }
        Ok(out.into_values().collect())
    }

    /// Every file under `dir` with its ETag, in path order, from one flat listing.
    pub(crate) async fn walk(
        &self,
        dir: &MemPath,
    ) -> Result<Vec<(Entry, Option<String>)>, StoreError> {
        let key = self.key(dir)?;
        let objects = self.list_all(&key).await?;
        if objects.is_empty() && !dir.is_root() {
            return Err(match self.head(&key).await? {
                Some(_) => paths::part_is_file(dir),
                None => StoreError::NotFound(format!("{dir} does not exist")),
            });
        }
        let mut out: Vec<(Entry, Option<String>)> = objects
            .into_iter()
            .filter_map(|o| {
                let p = self.path_of(&o.location)?;
                Some((
                    Entry {
                        path: p,
                        kind: EntryKind::File,
                        size: o.size,
                        modified_ms: o.last_modified.timestamp_millis(),
                    },
                    o.e_tag,
                ))
            })
            .collect();
        out.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        Ok(out)
    }

    async fn stat(&self, path: &MemPath) -> Result<Option<Entry>, StoreError> {
        if path.is_root() {
            return Ok(Some(dir_entry(MemPath::root())));
        }
        let key = self.key(path)?;
        bump(&self.counts.head);
        let (file, dir) = futures::future::join(self.os.head(&key), self.has_children(path)).await;
        match file {
            Ok(m) => {
                return Ok(Some(Entry {
                    path: path.clone(),
                    kind: EntryKind::File,
                    size: m.size,
                    modified_ms: m.last_modified.timestamp_millis(),
                }));
            }
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(s3_err("stat", e)),
        }
        Ok(dir?.then(|| dir_entry(path.clone())))
    }

    /// Puts the marker that keeps `dir` a folder when it holds nothing else.
    async fn mark_folder(&self, dir: &MemPath) -> Result<(), StoreError> {
        if dir.is_root() {
            return Ok(());
        }
        // `MemPath` refuses the reserved name, so the marker's key is built from the folder's.
        let key =
            Key::parse(format!("{}/{FOLDER_MARKER}", self.key(dir)?.as_ref())).map_err(|_| {
                StoreError::InvalidPath(format!("{dir}: S3 keys cannot hold control characters"))
            })?;
        self.put(&key, Bytes::new(), PutMode::Overwrite, None)
            .await
            .map(drop)
    }

    async fn remove(&self, path: &MemPath) -> Result<(), StoreError> {
        paths::not_root(path)?;
        let key = self.key(path)?;
        let (file, under) =
            futures::future::try_join(self.current(&key), self.list_all(&key)).await?;
        if file.is_none() && under.is_empty() {
            return Err(self.missing(path).await);
        }
        if let Some((v, _)) = &file {
            self.remember_before(path, Some(v.clone()), None).await?;
        }
        if self.recording() {
            for o in &under {
                if let Some(p) = self.path_of(&o.location) {
                    self.remember_current(&p).await?;
                }
            }
        }
        let mut keys: Vec<Key> = under.into_iter().map(|o| o.location).collect();
        if file.is_some() {
            keys.push(key);
        }
        self.delete_all(keys).await?;
        self.remember_after(path, None);
        for p in self.pending_under(path) {
            self.remember_after(&p, None);
        }
        // The folder it was in stays a folder, as on disk.
        if let Some(parent) = path.parent() {
            self.mark_folder(&parent).await?;
        }
        Ok(())
    }

    fn pending_under(&self, dir: &MemPath) -> Vec<MemPath> {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .filter(|p| *p != dir && p.starts_with(dir))
            .cloned()
            .collect()
    }

    async fn delete_all(&self, keys: Vec<Key>) -> Result<(), StoreError> {
        futures::stream::iter(keys)
            .map(|k| async move { self.delete(&k).await })
            .buffer_unordered(PARALLEL_GETS)
            .try_collect::<Vec<()>>()
            .await
            .map(drop)
    }

    async fn rename(&self, from: &MemPath, to: &MemPath) -> Result<(), StoreError> {
        paths::not_root(from)?;
        paths::not_root(to)?;
        if to.starts_with(from) {
            return Err(StoreError::InvalidPath(format!(
                "cannot move {from} into itself"
            )));
        }
        let (from_key, to_key) = (self.key(from)?, self.key(to)?);
        let (file, under, target, target_dir, above) = futures::future::try_join5(
            self.get(&from_key),
            self.list_all(&from_key),
            self.head(&to_key),
            self.has_children(to),
            self.file_above(to),
        )
        .await?;
        if file.is_none() && under.is_empty() {
            return Err(self.missing(from).await);
        }
        if target.is_some() || target_dir {
            return Err(paths::exists_already(to));
        }
        if above.is_some() {
            return Err(paths::part_is_file(to));
        }
        match file {
            Some((bytes, _)) => {
                let v = Version::of(&bytes);
                self.remember_before(from, Some(v.clone()), Some(bytes.clone()))
                    .await?;
                self.remember_before(to, None, None).await?;
                // Create-only, so a file that appeared at the target since is never replaced.
                if let Put::Lost = self
                    .put(&to_key, bytes.clone(), PutMode::Create, Some(&v))
                    .await?
                {
                    return Err(paths::exists_already(to));
                }
                self.delete(&from_key).await?;
                self.remember_after(to, Some(bytes));
                self.remember_after(from, None);
            }
            None => {
                let moves = under
                    .into_iter()
                    .map(|o| {
                        let rest = o
                            .location
                            .as_ref()
                            .strip_prefix(from_key.as_ref())
                            .unwrap_or_default()
                            .to_string();
                        (o.location, rest)
                    })
                    .collect();
                self.move_folder(from, to, moves).await?;
            }
        }
        if let Some(parent) = from.parent() {
            self.mark_folder(&parent).await?;
        }
        Ok(())
    }

    /// Moves every object of folder `from` (key, rest of the key after `from`) to `to`:
    /// an intent, every copy, every delete, then the intent's removal. A crash in between
    /// leaves the intent, and [`Tenant::finish_moves`] completes the move forward.
    async fn move_folder(
        &self,
        from: &MemPath,
        to: &MemPath,
        objects: Vec<(Key, String)>,
    ) -> Result<(), StoreError> {
        let intent = MoveIntent {
            from: from.as_str().to_string(),
            to: to.as_str().to_string(),
            rests: objects.iter().map(|(_, r)| r.clone()).collect(),
        };
        let body = serde_json::to_vec(&intent)
            .map_err(|e| StoreError::Unavailable(format!("s3: cannot record a move: {e}")))?;
        let intent_key = self.state_key(&format!("moves/{}", random_id()))?;
        self.put(&intent_key, Bytes::from(body), PutMode::Create, None)
            .await?;
        self.carry_out(&intent).await?;
        self.delete(&intent_key).await
    }

    /// Copies what is still to copy, then deletes the sources. Safe to run again: a copy that
    /// is there already is left alone, and a source is deleted only once its copy exists.
    async fn carry_out(&self, m: &MoveIntent) -> Result<(), StoreError> {
        let parse = |s: &str| {
            MemPath::parse(s)
                .map_err(|e| StoreError::Unavailable(format!("s3: bad move intent: {e}")))
        };
        let (from, to) = (parse(&m.from)?, parse(&m.to)?);
        let (from_key, to_key) = (self.key(&from)?, self.key(&to)?);
        let pairs: Vec<(Key, Key)> = m
            .rests
            .iter()
            .map(|r| {
                let src = Key::parse(format!("{}{r}", from_key.as_ref()));
                let dst = Key::parse(format!("{}{r}", to_key.as_ref()));
                match (src, dst) {
                    (Ok(s), Ok(d)) => Ok((s, d)),
                    _ => Err(StoreError::Unavailable(format!(
                        "s3: bad key in a move intent: {r:?}"
                    ))),
                }
            })
            .collect::<Result<_, _>>()?;
        futures::stream::iter(pairs.clone())
            .map(|(src, dst)| async move {
                let Some((bytes, _)) = self.get(&src).await? else {
                    return Ok(());
                };
                let path = self.path_of(&src);
                let v = Version::of(&bytes);
                if let Some(p) = &path {
                    self.remember_before(p, Some(v.clone()), Some(bytes.clone()))
                        .await?;
                }
                let moved = self.path_of(&dst);
                if let Some(p) = &moved {
                    self.remember_before(p, None, None).await?;
                }
                let meta = path.is_some().then_some(&v);
                self.put(&dst, bytes.clone(), PutMode::Create, meta).await?;
                if let Some(p) = &moved {
                    self.remember_after(p, Some(bytes));
                }
                Ok::<(), StoreError>(())
            })
            .buffer_unordered(PARALLEL_GETS)
            .try_collect::<Vec<()>>()
            .await?;
        self.delete_all(pairs.iter().map(|(s, _)| s.clone()).collect())
            .await?;
        for (src, _) in &pairs {
            if let Some(p) = self.path_of(src) {
                self.remember_after(&p, None);
            }
        }
        // The moved folder exists even when it held only empty folders.
        self.mark_folder(&to).await
    }

    /// Completes folder moves a crashed writer left half done (their intents are still there).
    async fn finish_moves(&self) -> Result<(), StoreError> {
        let prefix = self.state_key("moves")?;
        for o in self.list_all(&prefix).await? {
            let Some((body, _)) = self.get(&o.location).await? else {
                continue;
            };
            // An intent younger than a lease may belong to a move still running.
            let age = jiff::Timestamp::now().as_millisecond() - o.last_modified.timestamp_millis();
            if age < i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX) {
                continue;
            }
            let Ok(intent) = serde_json::from_slice::<MoveIntent>(&body) else {
                continue;
            };
            tracing::warn!(
                "finishing a move of {} to {} that a crashed writer left half done",
                intent.from,
                intent.to
            );
            self.carry_out(&intent).await?;
            self.delete(&o.location).await?;
        }
        Ok(())
    }

    async fn create_dir(&self, path: &MemPath) -> Result<(), StoreError> {
        if path.is_root() {
            return Ok(());
        }
        let (above, file) =
            futures::future::try_join(self.file_above(path), self.head(&self.key(path)?)).await?;
        if above.is_some() {
            return Err(paths::part_is_file(path));
        }
        if file.is_some() {
            return Err(StoreError::Conflict(format!("{path} already exists")));
        }
        self.mark_folder(path).await
    }
}

/// A folder move in progress: the object keys below `from`, as the rest after `from`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct MoveIntent {
    from: String,
    to: String,
    rests: Vec<String>,
}

fn dir_entry(path: MemPath) -> Entry {
    Entry {
        path,
        kind: EntryKind::Dir,
        size: 0,
        modified_ms: 0,
    }
}

/// The wait before retry `attempt` of an append: doubling from 5 ms to at most 320 ms, with
/// jitter so that writers that collided do not collide again in step.
fn backoff(attempt: u32) -> Duration {
    let cap = 5u64 << attempt.min(6);
    let jitter = getrandom::u64().unwrap_or(u64::from(attempt)) % cap.max(1);
    Duration::from_millis(cap / 2 + jitter / 2)
}

/// Where the leader of a batch tells one waiting append how it went.
type Answer = tokio::sync::oneshot::Sender<Result<(), StoreError>>;

/// Appends waiting for one file on one store: the first caller sends everyone's bytes.
#[derive(Default)]
struct Batch {
    queue: Vec<(Vec<u8>, Answer)>,
    leading: bool,
}

impl S3Store {
    /// Opens an existing memory; a tenant that was never created is not found.
    pub fn open(config: S3Config) -> Result<S3Store, StoreError> {
        let store = Self::connect(config)?;
        let marker = store.t.state_key("tenant")?;
        let exists =
            store.call(move |t| async move { t.head(&marker).await.map(|h| h.is_some()) })?;
        if !exists {
            return Err(StoreError::NotFound(format!(
                "memory {:?} does not exist in s3://{}/{}: run `memdir init` first",
                store.t.url.tenant, store.t.url.bucket, store.t.url.prefix
            )));
        }
        store.call(|t| async move { t.finish_moves().await })?;
        Ok(store)
    }

    /// Creates the memory if needed, then opens it. The bucket must exist.
    pub fn create(config: S3Config) -> Result<S3Store, StoreError> {
        let store = Self::connect(config)?;
        let marker = store.t.state_key("tenant")?;
        let created = jiff::Timestamp::now().to_string();
        store.call(move |t| async move {
            match t.put(&marker, Bytes::from(created), PutMode::Create, None).await {
                Ok(_) => Ok(()),
                Err(StoreError::Unavailable(m)) if m.contains("NoSuchBucket") || m.contains("not found") || m.contains("404") => {
                    Err(StoreError::NotFound(format!(
                        "bucket {:?} does not exist at {}: create it first (memdir never creates buckets)",
                        t.url.bucket, t.endpoint
                    )))
                }
                Err(e) => Err(e),
            }
        })?;
        store.call(|t| async move { t.finish_moves().await })?;
        Ok(store)
    }

    fn connect(config: S3Config) -> Result<S3Store, StoreError> {
        // rustls takes its crypto from the process default; ring is the one this build carries.
        // Installing fails harmlessly when a provider is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let retry = object_store::RetryConfig {
            max_retries: 3,
            retry_timeout: Duration::from_secs(15),
            ..object_store::RetryConfig::default()
        };
        let client = object_store::ClientOptions::new()
            .with_timeout(Duration::from_secs(60))
            .with_connect_timeout(Duration::from_secs(5));
        // Client options first: the AWS settings below may change them (AWS_ALLOW_HTTP).
        let mut builder = object_store::aws::AmazonS3Builder::new()
            .with_client_options(client)
            .with_retry(retry);
        for (name, value) in &config.aws {
            if let Ok(key) = name
                .to_ascii_lowercase()
                .parse::<object_store::aws::AmazonS3ConfigKey>()
            {
                builder = builder.with_config(key, value);
            }
        }
        let endpoint = config.endpoint().map(str::to_string);
        if let Some(e) = &endpoint
            && e.starts_with("http://")
        {
            // A plain-HTTP endpoint was asked for by name (a local S3-compatible server).
            builder = builder.with_allow_http(true);
        }
        let os = builder
            .with_bucket_name(&config.url.bucket)
            .with_conditional_put(object_store::aws::S3ConditionalPut::ETagMatch)
            .build()
            .map_err(|e| StoreError::InvalidPath(format!("cannot set up the S3 client: {e}")))?;
        let os = Arc::new(os);
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| StoreError::InvalidPath(format!("cannot set up the S3 client: {e}")))?;
        let url = config.url;
        let join = |a: &str, b: &str| {
            if a.is_empty() {
                b.to_string()
            } else {
                format!("{a}/{b}")
            }
        };
        let t = Tenant {
            signer: os.clone(),
            http,
            warnings: Mutex::new(Vec::new()),
            os,
            base: join(&url.prefix, &url.tenant),
            state: join(&url.prefix, &format!(".memdir/{}", url.tenant)),
            endpoint: endpoint.unwrap_or_else(|| "AWS S3".into()),
            cache: cache::Cache::new(config.cache_dir, config.cache_cap),
            url,
            lease: config.lease,
            counts: Counters::default(),
            pending: Mutex::new(BTreeMap::new()),
            recording: AtomicBool::new(false),
            known_blobs: Mutex::new(Default::default()),
            head_seen: Mutex::new(None),
            batches: Mutex::new(BTreeMap::new()),
        };
        Ok(S3Store {
            t: Arc::new(t),
            bridge: Arc::new(Bridge::new("memdir-s3", "s3")?),
        })
    }

    /// This store with its history, as a [`Backend`].
    pub fn backend(self) -> Backend {
        let history = self.history();
        Backend {
            store: Arc::new(self),
            history: Some(Arc::new(history)),
            vectors: None,
        }
    }

    /// The memory's change history, kept in the same bucket. From now on this store notes what
    /// each write replaced, for the history to record.
    pub fn history(&self) -> S3History {
        self.t.recording.store(true, Ordering::Relaxed);
        S3History {
            t: self.t.clone(),
            bridge: self.bridge.clone(),
        }
    }

    /// The memory's name.
    pub fn tenant(&self) -> &str {
        &self.t.url.tenant
    }

    /// How many requests of each kind this store (and every handle sharing it) has sent.
    pub fn requests(&self) -> RequestCounts {
        self.t.counts()
    }

    /// Runs one call on the store's runtime.
    fn call<T, F, Fut>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(Arc<Tenant>) -> Fut,
        Fut: std::future::Future<Output = Result<T, StoreError>> + Send + 'static,
    {
        self.bridge.run(f(self.t.clone()))
    }
}

impl Store for S3Store {
    fn read(&self, path: &MemPath) -> Result<Vec<u8>, StoreError> {
        self.read_versioned(path).map(|(b, _)| b)
    }

    fn read_versioned(&self, path: &MemPath) -> Result<(Vec<u8>, Version), StoreError> {
        let path = path.clone();
        self.call(|t| async move {
            let (b, v) = t.read(&path).await?;
            Ok((b.to_vec(), v))
        })
    }

    fn write_if(
        &self,
        path: &MemPath,
        data: &[u8],
        pre: &Precondition,
    ) -> Result<Version, StoreError> {
        let (path, data, pre) = (path.clone(), Bytes::copy_from_slice(data), pre.clone());
        self.call(|t| async move { t.write_if(&path, data, &pre).await })
    }

    fn append(&self, path: &MemPath, data: &[u8]) -> Result<(), StoreError> {
        let (path, data) = (path.clone(), data.to_vec());
        self.call(|t| async move { t.append(&path, data).await })
    }

    fn list(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        let dir = dir.clone();
        self.call(|t| async move { t.list(&dir).await })
    }

    fn stat(&self, path: &MemPath) -> Result<Option<Entry>, StoreError> {
        let path = path.clone();
        self.call(|t| async move { t.stat(&path).await })
    }

    fn remove(&self, path: &MemPath) -> Result<(), StoreError> {
        let path = path.clone();
        self.call(|t| async move { t.remove(&path).await })
    }

    fn rename(&self, from: &MemPath, to: &MemPath) -> Result<(), StoreError> {
        let (from, to) = (from.clone(), to.clone());
        self.call(|t| async move { t.rename(&from, &to).await })
    }

    fn create_dir(&self, path: &MemPath) -> Result<(), StoreError> {
        let path = path.clone();
        self.call(|t| async move { t.create_dir(&path).await })
    }

    fn read_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let key = self.t.state_key(&format!("meta/{name}"))?;
        self.call(|t| async move { Ok(t.get(&key).await?.map(|(b, _)| b.to_vec())) })
    }

    fn write_meta(&self, name: &str, data: &[u8]) -> Result<(), StoreError> {
        let key = self.t.state_key(&format!("meta/{name}"))?;
        let data = Bytes::copy_from_slice(data);
        self.call(|t| async move { t.put(&key, data, PutMode::Overwrite, None).await.map(drop) })
    }

    fn walk(&self, dir: &MemPath) -> Result<Vec<Entry>, StoreError> {
        let dir = dir.clone();
        self.call(|t| async move { Ok(t.walk(&dir).await?.into_iter().map(|(e, _)| e).collect()) })
    }

    fn read_all(
        &self,
        keep: &mut dyn FnMut(&MemPath) -> bool,
    ) -> Result<Vec<(MemPath, Vec<u8>)>, StoreError> {
        let listed = self.call(|t| async move { t.walk(&MemPath::root()).await })?;
        let wanted: Vec<(Entry, Option<String>)> =
            listed.into_iter().filter(|(e, _)| keep(&e.path)).collect();
        self.call(|t| async move { cache::read_through(&t, wanted).await })
    }
}

impl Locks for S3Store {
    fn lock(&self, name: LockName<'_>) -> Result<Box<dyn LockGuard>, StoreError> {
        lease::take(&self.t, &self.bridge, name)
    }
}
