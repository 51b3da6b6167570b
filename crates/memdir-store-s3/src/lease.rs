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
//!
//! **Waiting, fairly.** A waiter looks again after a sleep drawn uniformly between zero and an
//! exponential step (10 ms doubling up to [`POLL_CAP`], 100 ms; [`NEXT_CAP`], 20 ms, for the
//! claimant below): full jitter, so waiters do not look in lockstep. Polling alone is not fair, though: whoever looks first after a release
//! wins, so a writer that just arrived (looking often) beat writers that had waited long
//! (looking seldom), and under steady contention one of them waited a minute. So the oldest
//! waiter *claims* the next turn in a second object, `locks/<name>.next` (`owner`, `since_ms`:
//! when it began to wait, by its clock), and refreshes the claim while it waits; a waiter that
//! began earlier replaces a younger claim. A free lease is taken only by its claimant, or by a
//! waiter no younger than the claimant, or when the claim is free or stale (its ETag unchanged
//! for [`CLAIM_STALE`], 2 s, by the reader's own clock: its claimant crashed or gave up). The
//! claimant frees the claim once it holds the lease. Turns thus go about in arrival order, and
//! a waiter's wait is bounded by the holds of the writers that arrived before it plus about
//! one claimant's poll (20 ms) per hand-over; a crashed claimant costs 2 s, a crashed holder
//! one lease.

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

/// A waiter's first backoff step; each later one doubles, up to [`POLL_CAP`].
const POLL_BASE: Duration = Duration::from_millis(10);

/// The longest step of a waiter's backoff: it sleeps at most this between two looks, so an
/// older waiter replaces a younger one's claim within one hold or two.
const POLL_CAP: Duration = Duration::from_millis(100);

/// The longest step of the claimant's backoff: it is next, so it looks often and the lease is
/// not left free for long between two holders.
const NEXT_CAP: Duration = Duration::from_millis(20);

/// A claim on the next turn whose ETag has not changed for this long, by the reader's own
/// clock, is a crashed or departed waiter's. Its claimant refreshes it at least every
/// [`CLAIM_REFRESH`], whatever its backoff.
const CLAIM_STALE: Duration = Duration::from_secs(2);

/// How often a claimant rewrites its claim while it waits.
const CLAIM_REFRESH: Duration = Duration::from_millis(500);

/// Full jitter: a sleep drawn uniformly from zero to the `attempt`th backoff step, capped at
/// `cap`.
fn jittered(attempt: u32, cap: Duration) -> Duration {
    let step = POLL_BASE.saturating_mul(1 << attempt.min(8)).min(cap);
    let most = u64::try_from(step.as_micros()).unwrap_or(u64::MAX);
    let r = getrandom::u64().unwrap_or_else(|_| {
        // Without the OS generator, the clock's low bits still spread waiters apart.
        jiff::Timestamp::now()
            .subsec_nanosecond()
            .unsigned_abs()
            .into()
    });
    Duration::from_micros(r % most.saturating_add(1))
}

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

/// A claim on a lock's next turn (`locks/<name>.next`): the waiter that has waited longest.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Claim {
    owner: String,
    /// `held` while its owner waits, `free` once it has the lease.
    state: State,
    /// When its owner began to wait: Unix milliseconds, by its clock.
    since_ms: i64,
    /// Bumped at each refresh, so the object's ETag changes.
    n: u64,
}

/// One waiter's view of a lock's claim object.
struct Claims<'a> {
    t: &'a Tenant,
    key: Key,
    owner: &'a str,
    since_ms: i64,
    /// The claim's ETag seen last and since when, by this waiter's clock.
    seen: Option<(String, Instant)>,
    /// The ETag of our own claim as last written, and when.
    mine: Option<(String, Instant)>,
}

/// What a waiter found in the claim object.
enum Found {
    /// No claim that holds anyone back: none, a free one, or a stale one (with its ETag).
    Open(Option<String>),
    /// Our own claim, with its record and ETag.
    Mine(Claim, Option<String>),
    /// A live claim of another waiter, with its record and ETag.
    Theirs(Claim, Option<String>),
}

impl<'a> Claims<'a> {
    fn new(t: &'a Tenant, lease: &Key, owner: &'a str) -> Result<Claims<'a>, StoreError> {
        let key = Key::parse(format!("{}.next", lease.as_ref()))
            .map_err(|e| StoreError::Unavailable(format!("s3: bad lock key {lease}: {e}")))?;
        Ok(Claims {
            t,
            key,
            owner,
            since_ms: now_ms(),
            seen: None,
            mine: None,
        })
    }

    /// True when a claim made at `since_ms` by `owner` came before ours.
    fn before_us(&self, c: &Claim) -> bool {
        (c.since_ms, c.owner.as_str()) < (self.since_ms, self.owner)
    }

    async fn look(&mut self) -> Result<Found, StoreError> {
        let Some((body, etag)) = self.t.get(&self.key).await? else {
            return Ok(Found::Open(None));
        };
        let etag_s = etag.clone().unwrap_or_default();
        let unchanged_for = match &self.seen {
            Some((e, since)) if *e == etag_s => since.elapsed(),
            _ => {
                self.seen = Some((etag_s, Instant::now()));
                Duration::ZERO
            }
        };
        Ok(match serde_json::from_slice::<Claim>(&body) {
            Ok(c) if c.owner == self.owner => Found::Mine(c, etag),
            Ok(c) if c.state == State::Held && unchanged_for < CLAIM_STALE => {
                Found::Theirs(c, etag)
            }
            // Free, stale, or not a record memdir can read.
            _ => Found::Open(etag),
        })
    }

    /// May this waiter take a free lease? Not while a waiter that came first claims the turn.
    async fn may_take(&mut self) -> Result<bool, StoreError> {
        Ok(match self.look().await? {
            Found::Theirs(c, _) => !self.before_us(&c),
            Found::Open(_) | Found::Mine(..) => true,
        })
    }

    /// While the lease is held: claim the next turn if nobody who came first has, or refresh
    /// our claim. A lost race is no error: the next look sees who won. Returns how long to
    /// sleep before the next look: the claimant looks more often.
    async fn claim(&mut self, attempt: u32) -> Result<Duration, StoreError> {
        let (n, mode) = match self.look().await? {
            Found::Theirs(c, _) if self.before_us(&c) => return Ok(jittered(attempt, POLL_CAP)),
            Found::Mine(c, etag) => {
                if self
                    .mine
                    .as_ref()
                    .is_some_and(|(_, at)| at.elapsed() < CLAIM_REFRESH)
                {
                    return Ok(jittered(attempt, NEXT_CAP));
                }
                (c.n + 1, update(etag))
            }
            Found::Theirs(c, etag) => (c.n + 1, update(etag)),
            Found::Open(None) => (0, PutMode::Create),
            Found::Open(etag) => (0, update(etag)),
        };
        let body = serde_json::to_vec(&Claim {
            owner: self.owner.to_string(),
            state: State::Held,
            since_ms: self.since_ms,
            n,
        })
        .map_err(|e| StoreError::Unavailable(format!("s3: cannot write a claim: {e}")))?;
        if let Put::Done(Some(etag)) = self.t.put(&self.key, body.into(), mode, None).await? {
            self.mine = Some((etag, Instant::now()));
            return Ok(jittered(attempt, NEXT_CAP));
        }
        Ok(jittered(attempt, POLL_CAP))
    }

    /// Once the lease is ours: free our claim, unless another waiter has replaced it since.
    async fn done(self) {
        let Some((etag, _)) = self.mine else { return };
        let free = Claim {
            owner: self.owner.to_string(),
            state: State::Free,
            since_ms: 0,
            n: 0,
        };
        if let Ok(body) = serde_json::to_vec(&free) {
            // If this fails the claim goes stale and holds nobody back after CLAIM_STALE.
            let _ = self
                .t
                .put(&self.key, body.into(), update(Some(etag)), None)
                .await;
        }
    }
}

fn update(etag: Option<String>) -> PutMode {
    PutMode::Update(UpdateVersion {
        e_tag: etag,
        version: None,
    })
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
        .map_err(|e| StoreError::Unavailable(format!("s3: cannot write a lease: {e}")))
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

/// Waits until the lease is ours, in turn (see the module's docs); returns the ETag of our
/// record.
async fn acquire(t: &Tenant, key: &Key, owner: &str) -> Result<String, StoreError> {
    let mine = |n: u64| {
        encode(&Record {
            owner: owner.to_string(),
            state: State::Held,
            n,
            expires_ms: now_ms() + ms(t.lease),
        })
    };
    let mut claims = Claims::new(t, key, owner)?;
    let mut attempt = 0u32;
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
                    let pause = claims.claim(attempt).await?;
                    tokio::time::sleep(pause).await;
                    attempt = attempt.saturating_add(1);
                    continue;
                }
                let n = record.map_or(0, |r| r.n + 1);
                (update(etag), n)
            }
        };
        if !claims.may_take().await? {
            // Free, but a waiter that came first has the next turn.
            tokio::time::sleep(jittered(attempt, POLL_CAP)).await;
            attempt = attempt.saturating_add(1);
            continue;
        }
        if let Put::Done(etag) = t.put(key, mine(n)?, mode, None).await? {
            claims.done().await;
            return etag.ok_or_else(|| {
                StoreError::Unavailable(
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
