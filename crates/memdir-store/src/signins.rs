//! A memory service's person sign-ins: the seam behind the page of every tenant.
//!
//! A person of a tenant signs in with a single-use code (from `memdir tenant link`) or a
//! short-lived signed token from the product's own login; either becomes a session whose
//! cookie the browser keeps. The registry keeps only SHA-256 hashes of codes, spent tokens and
//! session secrets, so reading it gives no way in. Every instance of the service reads the same
//! rows on every request, so a sign-out on one holds on all, and a restart keeps people signed
//! in. What a session may do, and for how long, is the page's business: the registry stores
//! times, the page decides.

use crate::store::StoreError;

/// A signed-in person, as the registry keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonSession {
    /// The tenant whose memory the person sees.
    pub tenant: String,
    /// Who signed in (recorded as the writer of their changes).
    pub person: String,
    /// When the session started, Unix milliseconds.
    pub created_ms: i64,
    /// When the session was last used (at most a minute or so stale), Unix milliseconds.
    pub seen_ms: i64,
}

/// The sign-in codes and sessions of a service's people.
pub trait SignIns: Send + Sync {
    /// Records a single-use code (its hash) for `person` of `tenant`, working until
    /// `expires_ms`; codes and spent tokens past their expiry at `now_ms` are forgotten.
    fn add_code(
        &self,
        code_sha256: &str,
        tenant: &str,
        person: &str,
        expires_ms: i64,
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// The tenant and person of an unused code that works at `now_ms`, leaving it unused.
    fn peek_code(
        &self,
        code_sha256: &str,
        now_ms: i64,
    ) -> Result<Option<(String, String)>, StoreError>;

    /// Uses up a code that works at `now_ms`: its tenant and person, once; `None` for a code
    /// that is unknown, expired or used (also when two requests race for it: one wins).
    fn take_code(
        &self,
        code_sha256: &str,
        now_ms: i64,
    ) -> Result<Option<(String, String)>, StoreError>;

    /// Records a signed token (its hash) as used until `expires_ms`: true the first time,
    /// false when it was used already.
    fn spend_token(
        &self,
        token_sha256: &str,
        tenant: &str,
        person: &str,
        expires_ms: i64,
    ) -> Result<bool, StoreError>;

    /// Starts a session (its secret's hash) for `person` of `tenant` at `now_ms`.
    fn start_session(
        &self,
        session_sha256: &str,
        tenant: &str,
        person: &str,
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// The session with this hash, if it was started and not ended.
    fn session(&self, session_sha256: &str) -> Result<Option<PersonSession>, StoreError>;

    /// Marks the session used at `now_ms`.
    fn touch_session(&self, session_sha256: &str, now_ms: i64) -> Result<(), StoreError>;

    /// Ends a session, for every instance.
    fn end_session(&self, session_sha256: &str) -> Result<(), StoreError>;

    /// Forgets sessions last used before `seen_before_ms` or started before
    /// `created_before_ms` (they can no longer sign anyone in).
    fn forget_sessions(
        &self,
        seen_before_ms: i64,
        created_before_ms: i64,
    ) -> Result<(), StoreError>;

    /// Records the URL the service's page is served at (the last instance to start says), for
    /// `memdir tenant link` to build links with.
    fn announce(&self, base_url: &str, now_ms: i64) -> Result<(), StoreError>;

    /// The URL the page was last announced at.
    fn announced(&self) -> Result<Option<String>, StoreError>;
}
