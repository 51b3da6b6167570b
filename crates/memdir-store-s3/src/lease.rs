//! Locks as lease objects, shared by every process that opens the same memory.
//!
//! A lock is the object `.memdir/<tenant>/locks/<name>` holding a small JSON record: who holds
//! it (a random owner id), whether it is `held` or `free`, a renewal counter and the holder's
//! expiry time. Every change to it is a conditional put, so exactly one taker wins:
//!
//! - **take**: create it (`If-None-Match: *`) when absent, or replace a `free` or stale record
//!   with `If-Match` on the ETag just read;
//! - **renew**: while held, a task rewrites the record every third of the lease with `If-Match`,
//!   so the ETag keeps changing;
//! - **release**: rewrite it as `free` with `If-Match` (never a delete, which S3 cannot make
//!   conditional: a holder that lost its lease must not remove the next holder's).
//!
//! A record is stale when its expiry has passed by the waiter's clock (allowing two seconds of
//! skew), or when the waiter has seen the same ETag for a whole lease by its own monotonic
//! clock (no renewal: the holder crashed), which needs no clock agreement at all. So a crashed
//! writer blocks the memory for one lease (30 s by default) at most. A holder stalled for longer
//! than its lease loses the lock; its renewal then fails and says so in the log.

use crate::{Put, Tenant, random_id};
use bytes::Bytes;
use memdir_store::StoreError;
use memdir_store::bridge::Bridge;
use memdir_store::store::{LockGuard, LockName, Reentry};
use object_store::path::Path as Key;
use object_store::{PutMode, UpdateVersion};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The clock difference between machines a lease's expiry allows for.
const SKEW_MS: i64 = 2_000;

/// The record a lease object holds.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Record {
    owner: String,
    state: State,
    /// Bumped at each renewal, so the object's ETag changes.
    n: u64,
    /// Unix milliseconds, by the holder's clock.
    expires_ms: i64,
}

#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum State {
    Held,
    Free,
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

/// The lease object of a lock. File locks are named by a hash, so any path makes a key.
fn lease_key(t: &Tenant, name: LockName<'_>) -> Result<Key, StoreError> {
    let leaf = match name {
        LockName::Git => "git".to_string(),
        LockName::Index => "index".to_string(),
        LockName::File(p) => {
            let h = Sha256::digest(p.as_str().as_bytes());
            let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
            format!("file-{hex}")
        }
    };
    t.state_key(&format!("locks/{leaf}"))
}

fn encode(r: &Record) -> Result<Bytes, StoreError> {
    serde_json::to_vec(r)
        .map(Bytes::from)
        .map_err(|e| StoreError::Backend(format!("s3: cannot write a lease: {e}")))
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The state shared by a held lease's guard and its renewal task.
struct Holding {
    /// The ETag of the record as last written by this holder; `None` once released or lost.
    etag: tokio::sync::Mutex<Option<String>>,
    owner: String,
    stop: tokio::sync::Notify,
}

/// Takes the lock `name` of memory `t`, waiting for it.
pub(crate) fn take(
    t: &Arc<Tenant>,
    bridge: &Arc<Bridge>,
    name: LockName<'_>,
) -> Result<Box<dyn LockGuard>, StoreError> {
    let shown = name.to_string();
    // A thread asking again for a lock it holds would wait for itself for a whole lease.
    let held = Reentry::enter(&format!("{}|{}", t.endpoint, t.url.shown()), &shown, &name)?;
    let key = lease_key(t, name)?;
    let owner = random_id();
    let tenant = t.clone();
    let (k, o) = (key.clone(), owner.clone());
    let got = bridge.run(async move { acquire(&tenant, &k, &o).await });
    let etag = got?;
    let holding = Arc::new(Holding {
        etag: tokio::sync::Mutex::new(Some(etag)),
        owner,
        stop: tokio::sync::Notify::new(),
    });
    let (tenant, h, k) = (t.clone(), holding.clone(), key.clone());
    // The renewal task runs on the store's runtime for as long as the guard lives.
    let _ = bridge.run(async move {
        tokio::spawn(renew(tenant, h, k, shown));
        Ok(())
    });
    Ok(Box::new(Lease {
        t: t.clone(),
        bridge: bridge.clone(),
        key,
        holding,
        _held: held,
    }))
}

/// Waits until the lease is ours; returns the ETag of our record.
async fn acquire(t: &Tenant, key: &Key, owner: &str) -> Result<String, StoreError> {
    let mine = |n: u64| {
        encode(&Record {
            owner: owner.to_string(),
            state: State::Held,
            n,
            expires_ms: now_ms() + ms(t.lease),
        })
    };
    let mut wait = Duration::from_millis(10);
    // The ETag seen last and since when: unchanged for a whole lease means nobody renews it.
    let mut seen: Option<(String, Instant)> = None;
    loop {
        let (mode, n) = match t.get(key).await? {
            None => (PutMode::Create, 0),
            Some((body, etag)) => {
                let record = serde_json::from_slice::<Record>(&body).ok();
                let etag_s = etag.clone().unwrap_or_default();
                let unchanged_for = match &seen {
                    Some((e, since)) if *e == etag_s => since.elapsed(),
                    _ => {
                        seen = Some((etag_s, Instant::now()));
                        Duration::ZERO
                    }
                };
                let takeable = match &record {
                    // A record memdir cannot read is treated as a crashed holder's.
                    None => unchanged_for >= t.lease,
                    Some(r) => {
                        r.state == State::Free
                            || now_ms() > r.expires_ms.saturating_add(SKEW_MS)
                            || unchanged_for >= t.lease
                    }
                };
                if !takeable {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 3 / 2).min(Duration::from_millis(250));
                    continue;
                }
                let n = record.map_or(0, |r| r.n + 1);
                (
                    PutMode::Update(UpdateVersion {
                        e_tag: etag,
                        version: None,
                    }),
                    n,
                )
            }
        };
        if let Put::Done(etag) = t.put(key, mine(n)?, mode, None).await? {
            return etag.ok_or_else(|| {
                StoreError::Backend(
                    "s3: the server returned no ETag for a lease: memdir needs ETags for locks"
                        .into(),
                )
            });
        }
        // Another taker won the race: look again.
    }
}

/// Rewrites the record every third of the lease until told to stop.
async fn renew(t: Arc<Tenant>, h: Arc<Holding>, key: Key, name: String) {
    let every = t.lease / 3;
    let mut n = 1u64 << 32;
    loop {
        tokio::select! {
            () = h.stop.notified() => return,
            () = tokio::time::sleep(every) => {}
        }
        let mut etag = h.etag.lock().await;
        let Some(current) = etag.clone() else { return };
        n += 1;
        let body = match encode(&Record {
            owner: h.owner.clone(),
            state: State::Held,
            n,
            expires_ms: now_ms() + ms(t.lease),
        }) {
            Ok(b) => b,
            Err(_) => return,
        };
        let mode = PutMode::Update(UpdateVersion {
            e_tag: Some(current),
            version: None,
        });
        match t.put(&key, body, mode, None).await {
            Ok(Put::Done(Some(new))) => *etag = Some(new),
            Ok(Put::Done(None) | Put::Lost) => {
                tracing::warn!(
                    "lost lock {name} of {}: it was not renewed within its lease and another writer took it",
                    t.url.shown()
                );
                *etag = None;
                return;
            }
            // A failed renewal is tried again at the next tick; the lease still runs.
            Err(e) => tracing::warn!("cannot renew lock {name} of {}: {e}", t.url.shown()),
        }
    }
}

/// A held lease; dropping it stops the renewals and marks the record free.
struct Lease {
    t: Arc<Tenant>,
    bridge: Arc<Bridge>,
    key: Key,
    holding: Arc<Holding>,
    /// Released after the record is marked free, when the guard's fields drop.
    _held: Reentry,
}

impl LockGuard for Lease {}

impl Drop for Lease {
    fn drop(&mut self) {
        let (t, h, key) = (self.t.clone(), self.holding.clone(), self.key.clone());
        let _ = self.bridge.run(async move {
            h.stop.notify_one();
            let mut etag = h.etag.lock().await;
            if let Some(current) = etag.take() {
                let body = encode(&Record {
                    owner: h.owner.clone(),
                    state: State::Free,
                    n: 0,
                    expires_ms: 0,
                })?;
                let mode = PutMode::Update(UpdateVersion {
                    e_tag: Some(current),
                    version: None,
                });
                // If this fails the lease simply runs out.
                let _ = t.put(&key, body, mode, None).await;
            }
            Ok(())
        });
    }
}
