//! The local cache of file contents that keeps search fast: a search lists the memory once
//! (the listing carries every object's ETag) and fetches only objects whose ETag is not the one
//! cached, so a repeat search on an unchanged memory sends one `LIST` and no `GET`.
//!
//! An entry is one file under the cache folder, named by the SHA-256 of the endpoint, bucket and
//! key, holding the ETag on its first line and then the bytes; it is written to a temp file and
//! renamed, so a crash never leaves a torn entry. S3 gives an object a new ETag whenever its
//! bytes change, so an entry is used only when the listing's ETag equals the one it holds; a key
//! that changed is simply overwritten. Without a cache folder the entries live in memory.
//!
//! Size cap and eviction: when the entries pass the cap (256 MiB by default,
//! [`DEFAULT_CACHE_CAP`](crate::DEFAULT_CACHE_CAP)), the least recently used ones (by the
//! entry file's modification time, which a hit refreshes; in memory, by last use) are removed
//! until the total is at most three quarters of the cap. Deleting the cache folder at any time
//! is safe: it only costs the next search a full read.

use crate::{PARALLEL_GETS, Tenant};
use futures::{StreamExt, TryStreamExt};
use memdir_core::path::MemPath;
use memdir_store::{Entry, StoreError};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// An entry held in memory: its ETag, bytes and when it was last used (a tick count).
type Held = (String, Vec<u8>, u64);

/// File contents by key and ETag, on disk or in memory.
pub struct Cache {
    dir: Option<PathBuf>,
    cap: u64,
    /// Entries held in memory (when there is no folder), by name.
    mem: Mutex<HashMap<String, Held>>,
    clock: std::sync::atomic::AtomicU64,
}

impl Cache {
    /// A cache under `dir` (in memory when `None`) holding at most about `cap` bytes.
    pub fn new(dir: Option<PathBuf>, cap: u64) -> Cache {
        Cache {
            dir,
            cap,
            mem: Mutex::new(HashMap::new()),
            clock: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn tick(&self) -> u64 {
        self.clock
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The bytes cached for `name` if they are those of `etag`.
    fn get(&self, name: &str, etag: &str) -> Option<Vec<u8>> {
        let Some(dir) = &self.dir else {
            let mut mem = self.mem.lock().unwrap_or_else(|e| e.into_inner());
            let now = self.tick();
            let (tag, bytes, used) = mem.get_mut(name)?;
            if tag != etag {
                return None;
            }
            *used = now;
            return Some(bytes.clone());
        };
        let path = dir.join(name);
        let raw = std::fs::read(&path).ok()?;
        let nl = memchr_newline(&raw)?;
        if &raw[..nl] != etag.as_bytes() {
            return None;
        }
        // A hit makes the entry recently used, for eviction.
        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        Some(raw[nl + 1..].to_vec())
    }

    /// Keeps `bytes` as the content of `name` at `etag`. A cache that cannot be written is
    /// only slower, so failures are logged and dropped.
    fn put(&self, name: &str, etag: &str, bytes: &[u8]) {
        let Some(dir) = &self.dir else {
            let now = self.tick();
            self.mem
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(name.to_string(), (etag.to_string(), bytes.to_vec(), now));
            return;
        };
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            tmp.write_all(etag.as_bytes())?;
            tmp.write_all(b"\n")?;
            tmp.write_all(bytes)?;
            tmp.persist(dir.join(name)).map_err(|e| e.error)?;
            Ok(())
        };
        if let Err(e) = write() {
            tracing::debug!("cannot write the s3 cache under {}: {e}", dir.display());
        }
    }

    /// Drops the entry of object `key` of `t` (forget: its bytes must not stay on this disk).
    pub(crate) fn forget(&self, t: &Tenant, key: &str) {
        let name = entry_name(t, key);
        match &self.dir {
            None => {
                self.mem
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&name);
            }
            Some(dir) => match std::fs::remove_file(dir.join(&name)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    t.warn(format!(
                        "forget could not delete the read cache entry {}: {e}",
                        dir.join(&name).display()
                    ));
                }
                _ => {}
            },
        }
    }

    /// Drops the least recently used entries while the cache is over its cap.
    fn evict(&self) {
        let Some(dir) = &self.dir else {
            let mut mem = self.mem.lock().unwrap_or_else(|e| e.into_inner());
            let mut total: u64 = mem.values().map(|(_, b, _)| b.len() as u64).sum();
            if total <= self.cap {
                return;
            }
            let mut by_use: Vec<(u64, String, u64)> = mem
                .iter()
                .map(|(k, (_, b, used))| (*used, k.clone(), b.len() as u64))
                .collect();
            by_use.sort();
            for (_, k, size) in by_use {
                if total <= self.cap / 4 * 3 {
                    break;
                }
                mem.remove(&k);
                total -= size;
            }
            return;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, PathBuf, u64)> = entries
            .flatten()
            .filter_map(|e| {
                let m = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
                Some((m.modified().ok()?, e.path(), m.len()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.2).sum();
        if total <= self.cap {
            return;
        }
        files.sort();
        for (_, path, size) in files {
            if total <= self.cap / 4 * 3 {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= size;
            }
        }
    }
}

fn memchr_newline(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

/// The entry name of an object: the SHA-256 of where it lives.
fn entry_name(t: &Tenant, key: &str) -> String {
    let mut h = Sha256::new();
    for part in [t.endpoint.as_str(), t.url.bucket.as_str(), key] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of every listed file: from the cache when its ETag is unchanged, else fetched
/// (several at once) and cached. A file deleted since the listing is left out.
pub(crate) async fn read_through(
    t: &Tenant,
    listed: Vec<(Entry, Option<String>)>,
) -> Result<Vec<(MemPath, Vec<u8>)>, StoreError> {
    let mut slots: Vec<Option<Vec<u8>>> = Vec::with_capacity(listed.len());
    let mut misses = Vec::new();
    for (i, (e, etag)) in listed.iter().enumerate() {
        let key = t.key(&e.path)?;
        let name = entry_name(t, key.as_ref());
        let hit = etag.as_deref().and_then(|tag| t.cache.get(&name, tag));
        if hit.is_none() {
            misses.push((i, key, name));
        }
        slots.push(hit);
    }
    let fetched: Vec<(usize, Option<Vec<u8>>)> = futures::stream::iter(misses)
        .map(|(i, key, name)| async move {
            let got = t.get(&key).await?;
            Ok::<_, StoreError>((
                i,
                got.map(|(bytes, etag)| {
                    if let Some(tag) = etag {
                        t.cache.put(&name, &tag, &bytes);
                    }
                    bytes.to_vec()
                }),
            ))
        })
        .buffer_unordered(PARALLEL_GETS)
        .try_collect()
        .await?;
    let any_fetched = !fetched.is_empty();
    for (i, bytes) in fetched {
        slots[i] = bytes;
    }
    if any_fetched {
        t.cache.evict();
    }
    Ok(listed
        .into_iter()
        .zip(slots)
        .filter_map(|((e, _), b)| Some((e.path, b?)))
        .collect())
}
