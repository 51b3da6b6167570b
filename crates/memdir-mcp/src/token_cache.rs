//! Which tenant a bearer token reaches, remembered briefly by one instance of the service.
//!
//! Without it every request asks the registry (one indexed query on PostgreSQL). An entry is
//! used for at most `ttl` after the lookup that made it, so a token rotated or removed on any
//! instance, or directly in the database, stops working everywhere within `ttl`. Tokens that
//! reach no tenant are never remembered: a new tenant's token works at once, and unknown tokens
//! cannot fill the cache. The cache is bounded (least recently used out first).

use hashlink::LruCache;
use memdir::tenants::Tenant;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Token hash → tenant, with when it was looked up.
pub(crate) struct TokenCache {
    ttl: Duration,
    map: Mutex<LruCache<String, (Tenant, Instant)>>,
}

impl TokenCache {
    /// A cache of at most `cap` tokens, each kept for `ttl` (zero: nothing is kept).
    pub(crate) fn new(ttl: Duration, cap: usize) -> TokenCache {
        TokenCache {
            ttl,
            map: Mutex::new(LruCache::new(cap.max(1))),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<String, (Tenant, Instant)>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The tenant of `hash` if it was looked up less than `ttl` ago.
    pub(crate) fn get(&self, hash: &str) -> Option<Tenant> {
        let mut map = self.lock();
        match map.get(hash) {
            Some((t, at)) if at.elapsed() < self.ttl => Some(t.clone()),
            Some(_) => {
                map.remove(hash);
                None
            }
            None => None,
        }
    }

    /// Remembers what a lookup of `hash` found.
    pub(crate) fn put(&self, hash: String, tenant: Tenant) {
        if !self.ttl.is_zero() {
            self.lock().insert(hash, (tenant, Instant::now()));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn entries_last_the_ttl_and_the_cache_stays_bounded() {
        let c = TokenCache::new(Duration::from_millis(50), 2);
        c.put("a".into(), Tenant::new("alice", "alice"));
        assert_eq!(c.get("a").unwrap().name, "alice");
        std::thread::sleep(Duration::from_millis(60));
        assert!(c.get("a").is_none());
        for k in ["a", "b", "c"] {
            c.put(k.into(), Tenant::new(k, k));
        }
        assert!(c.get("a").is_none());
        assert!(c.get("c").is_some());
        let off = TokenCache::new(Duration::ZERO, 2);
        off.put("a".into(), Tenant::new("alice", "alice"));
        assert!(off.get("a").is_none());
    }
}
