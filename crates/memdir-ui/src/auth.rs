//! A person's sign-in, apart from every agent credential: single-use sign-in codes and the
//! sessions they become, both kept hashed under the memory's `.memdir/`.
//!
//! `memdir ui` (or `memdir serve` on start) adds a random code to `.memdir/ui-signin`; the link
//! that carries it is printed, never stored. Opening the link and pressing "Sign in" removes
//! the code (so it works once) and adds a session to `.memdir/ui-sessions`. The cookie holds
//! the session's secret; the file holds only its SHA-256, so reading `.memdir/` gives no way
//! in. Every request reads the file, so a sign-out in one `serve` holds in every other one
//! over the same memory, and a restart keeps people signed in. Both files change under one
//! cross-process lock, so a code is never used twice, even by two processes at once.
//!
//! The CSRF token of a session's forms is derived from its secret (`sha256("csrf" || secret)`):
//! the server recomputes it from the cookie, so it needs no storage, differs per session, and
//! does not reveal the secret.

use jiff::{Timestamp, ToSpan as _};
use memdir::{Memory, Store};
use memdir_core::path::MemPath;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The file under `.memdir/` holding pending sign-in codes (hashed).
pub const CODES_FILE: &str = "ui-signin";
/// The file under `.memdir/` holding sessions (hashed).
pub const SESSIONS_FILE: &str = "ui-sessions";
/// The file under `.memdir/` where a running `memdir serve` with its page on says where it is.
pub const SERVE_FILE: &str = "ui-serve";
/// The name of the session cookie. `/mcp` and `/v1/` refuse any request that carries it.
pub const SESSION_COOKIE: &str = "memdir_session";
/// How long a sign-in code works.
pub const CODE_TTL_MINUTES: i64 = 10;
/// A session ends after this long without a request.
pub const IDLE_HOURS: i64 = 12;
/// A session ends this long after sign-in, however busy.
pub const ABSOLUTE_DAYS: i64 = 7;
/// A session's last-seen time is written at most this often (seconds), not on every request.
pub(crate) const TOUCH_EVERY_SECS: i64 = 60;
/// Pending codes kept at most: the oldest go first.
const MAX_CODES: usize = 16;
/// Sessions kept at most: the least recently used go first.
const MAX_SESSIONS: usize = 64;

/// Why sign-in or a session was refused.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The code is unknown, used, or expired.
    #[error(
        "this sign-in link is not valid: it was used already, has expired (after {CODE_TTL_MINUTES} minutes) or was never made; run `memdir ui` for a new one"
    )]
    BadCode,
    /// A service's sign-in link is unknown, used, or expired.
    #[error(
        "this sign-in link is not valid: it was used already, has expired (after {CODE_TTL_MINUTES} minutes) or was never made; ask for a new one"
    )]
    BadLink,
    /// A signed token from a product's login was refused.
    #[error(transparent)]
    Sso(#[from] crate::sso::SsoError),
    /// The person's name cannot be a writer's.
    #[error(
        "the person {0:?} cannot sign in: a person is recorded as the writer of their changes, so use 1-64 lowercase letters, digits and dashes"
    )]
    BadPerson(String),
    /// The tenant a link or token names is not served.
    #[error("this sign-in names a memory this service does not hold: ask for a new sign-in")]
    NoTenant,
    /// The store failed.
    #[error("{0}")]
    Store(String),
}

impl From<memdir::StoreError> for AuthError {
    fn from(e: memdir::StoreError) -> AuthError {
        AuthError::Store(e.to_string())
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Codes {
    v: u32,
    codes: Vec<Code>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Code {
    sha256: String,
    expires: Timestamp,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Sessions {
    v: u32,
    sessions: Vec<SessionRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SessionRecord {
    sha256: String,
    person: String,
    created: Timestamp,
    seen: Timestamp,
}

/// A signed-in person, as a handler sees them.
#[derive(Clone)]
pub struct Session {
    /// Who signed in (recorded as the writer of their changes).
    pub person: String,
    /// The token every form of this session must carry.
    pub csrf: String,
    /// The hash the session is stored under.
    pub(crate) key: String,
    /// The memory the person sees (a service's: their tenant's).
    pub(crate) mem: Memory,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("person", &self.person)
            .finish_non_exhaustive()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn sha256_hex(s: &str) -> String {
    hex(&Sha256::digest(s.as_bytes()))
}

/// 32 random bytes from the operating system, as 64 hex digits.
pub(crate) fn secret() -> Result<String, AuthError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b)
        .map_err(|e| AuthError::Store(format!("no randomness from the operating system: {e}")))?;
    Ok(hex(&b))
}

/// The CSRF token of the session whose cookie holds `secret`.
pub fn csrf_of(secret: &str) -> String {
    sha256_hex(&format!("memdir-ui-csrf\0{secret}"))
}

/// Compares two strings in time independent of where they differ.
pub fn same(a: &str, b: &str) -> bool {
    memdir::tenants::same(a.as_bytes(), b.as_bytes())
}

fn read_json<T: for<'de> Deserialize<'de> + Default>(
    store: &dyn Store,
    name: &str,
) -> Result<T, AuthError> {
    match store.read_meta(name)? {
        None => Ok(T::default()),
        // A file that does not parse (cut by hand, from a future version) holds no valid
        // credential: it is treated as empty and replaced on the next change.
        Some(b) => Ok(serde_json::from_slice(&b).unwrap_or_default()),
    }
}

fn write_json<T: Serialize>(store: &dyn Store, name: &str, value: &T) -> Result<(), AuthError> {
    let text = serde_json::to_vec_pretty(value).map_err(|e| AuthError::Store(e.to_string()))?;
    Ok(store.write_meta(name, &text)?)
}

/// Runs `f` under the lock every process takes to change the sign-in files.
fn locked<T>(
    mem: &Memory,
    f: impl FnOnce(&dyn Store) -> Result<T, AuthError>,
) -> Result<T, AuthError> {
    let name = MemPath::parse("ui-auth").map_err(|e| AuthError::Store(e.to_string()))?;
    let _lock = mem.store().lock(memdir::LockName::File(&name))?;
    f(mem.store().as_ref())
}

fn now(mem: &Memory) -> Timestamp {
    mem.clock().now().timestamp()
}

/// Makes a new sign-in code, valid for [`CODE_TTL_MINUTES`], and returns it (the only copy:
/// the file keeps its hash).
pub fn new_code(mem: &Memory) -> Result<String, AuthError> {
    let code = secret()?;
    let t = now(mem);
    let expires = t
        .checked_add(CODE_TTL_MINUTES.minutes())
        .map_err(|e| AuthError::Store(e.to_string()))?;
    locked(mem, |store| {
        let mut all: Codes = read_json(store, CODES_FILE)?;
        all.v = 1;
        all.codes.retain(|c| c.expires > t);
        all.codes.push(Code {
            sha256: sha256_hex(&code),
            expires,
        });
        let extra = all.codes.len().saturating_sub(MAX_CODES);
        all.codes.drain(..extra);
        write_json(store, CODES_FILE, &all)
    })?;
    Ok(code)
}

/// True when `code` would sign in now (the page that shows the sign-in button asks).
pub fn code_is_valid(mem: &Memory, code: &str) -> Result<bool, AuthError> {
    let t = now(mem);
    let want = sha256_hex(code);
    let all: Codes = read_json(mem.store().as_ref(), CODES_FILE)?;
    Ok(all
        .codes
        .iter()
        .any(|c| c.expires > t && same(&c.sha256, &want)))
}

/// Uses up `code` and starts a session for `person`; returns the cookie's secret.
pub fn sign_in(mem: &Memory, code: &str, person: &str) -> Result<String, AuthError> {
    let t = now(mem);
    let want = sha256_hex(code);
    let session = secret()?;
    locked(mem, |store| {
        let mut codes: Codes = read_json(store, CODES_FILE)?;
        let before = codes.codes.len();
        let mut found = false;
        codes.codes.retain(|c| {
            let hit = same(&c.sha256, &want);
            found |= hit && c.expires > t;
            !hit && c.expires > t
        });
        if codes.codes.len() != before {
            codes.v = 1;
            write_json(store, CODES_FILE, &codes)?;
        }
        if !found {
            return Err(AuthError::BadCode);
        }
        let mut all: Sessions = read_json(store, SESSIONS_FILE)?;
        all.v = 1;
        all.sessions.retain(|s| alive(s, t));
        all.sessions.push(SessionRecord {
            sha256: sha256_hex(&session),
            person: person.to_string(),
            created: t,
            seen: t,
        });
        all.sessions.sort_by_key(|s| std::cmp::Reverse(s.seen));
        all.sessions.truncate(MAX_SESSIONS);
        write_json(store, SESSIONS_FILE, &all)
    })?;
    Ok(session)
}

fn alive(s: &SessionRecord, t: Timestamp) -> bool {
    alive_at(s.created, s.seen, t)
}

/// True when a session started at `created` and last used at `seen` is still signed in at `t`.
pub(crate) fn alive_at(created: Timestamp, seen: Timestamp, t: Timestamp) -> bool {
    let idle_ok = seen
        .checked_add(IDLE_HOURS.hours())
        .is_ok_and(|end| t < end);
    let abs_ok = created
        .checked_add((ABSOLUTE_DAYS * 24).hours())
        .is_ok_and(|end| t < end);
    idle_ok && abs_ok
}

/// The session whose cookie holds `secret`, if it is signed in and has not expired; its idle
/// time starts again.
pub fn session(mem: &Memory, secret: &str) -> Result<Option<Session>, AuthError> {
    let t = now(mem);
    let key = sha256_hex(secret);
    let all: Sessions = read_json(mem.store().as_ref(), SESSIONS_FILE)?;
    let Some(found) = all.sessions.iter().find(|s| same(&s.sha256, &key)).cloned() else {
        return Ok(None);
    };
    if !alive(&found, t) {
        return Ok(None);
    }
    if t.duration_since(found.seen).as_secs() >= TOUCH_EVERY_SECS {
        locked(mem, |store| {
            let mut all: Sessions = read_json(store, SESSIONS_FILE)?;
            // Signed out meanwhile: it stays out.
            if let Some(s) = all.sessions.iter_mut().find(|s| s.sha256 == key) {
                s.seen = t;
                write_json(store, SESSIONS_FILE, &all)?;
            }
            Ok(())
        })?;
    }
    Ok(Some(Session {
        person: found.person,
        csrf: csrf_of(secret),
        key,
        mem: mem.clone(),
    }))
}

/// Ends a session, in every process that serves this memory.
pub fn sign_out(mem: &Memory, session: &Session) -> Result<(), AuthError> {
    locked(mem, |store| {
        let mut all: Sessions = read_json(store, SESSIONS_FILE)?;
        all.sessions.retain(|s| s.sha256 != session.key);
        write_json(store, SESSIONS_FILE, &all)
    })
}

/// Where a running `memdir serve` serves the page: the URL people open, and the address it
/// listens on (to check it is still running).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announced {
    /// The base URL, without a trailing slash (`http://127.0.0.1:8707`).
    pub base_url: String,
    /// The address the server listens on.
    pub listen: Option<std::net::SocketAddr>,
}

/// Records where the page of a running `memdir serve` is, for `memdir ui`: the base URL on the
/// first line of `.memdir/ui-serve`, the listening address on the second.
pub fn announce(
    mem: &Memory,
    base_url: &str,
    listen: std::net::SocketAddr,
) -> Result<(), AuthError> {
    let text = format!("{}\n{listen}\n", base_url.trim_end_matches('/'));
    Ok(mem.store().write_meta(SERVE_FILE, text.as_bytes())?)
}

/// Says no page is served any more (the server stopped).
pub fn withdraw(mem: &Memory) -> Result<(), AuthError> {
    Ok(mem.store().write_meta(SERVE_FILE, b"")?)
}

/// Where a running `memdir serve` said its page is, if one did.
pub fn announced(mem: &Memory) -> Result<Option<Announced>, AuthError> {
    let Some(bytes) = mem.store().read_meta(SERVE_FILE)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines().map(str::trim);
    let Some(base) = lines.next().filter(|l| !l.is_empty()) else {
        return Ok(None);
    };
    Ok(Some(Announced {
        base_url: base.to_string(),
        listen: lines.next().and_then(|l| l.parse().ok()),
    }))
}

/// The sign-in link for `code` on the page at `base_url` (no trailing slash).
pub fn link(base_url: &str, code: &str) -> String {
    format!("{}/ui/signin?code={code}", base_url.trim_end_matches('/'))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use memdir::Clock;

    fn mem_at(dir: &std::path::Path, at: &str) -> Memory {
        let clock = Clock::fixed(at.parse().unwrap(), jiff::tz::TimeZone::UTC);
        Memory::init_with(dir, clock, false).unwrap()
    }

    #[test]
    fn a_code_signs_in_once_and_only_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let mem = mem_at(dir.path(), "2026-12-01T09:00:00Z");
        let code = new_code(&mem).unwrap();
        assert!(code_is_valid(&mem, &code).unwrap());
        let secret = sign_in(&mem, &code, "ana").unwrap();
        assert!(matches!(
            sign_in(&mem, &code, "ana"),
            Err(AuthError::BadCode)
        ));
        let s = session(&mem, &secret).unwrap().unwrap();
        assert_eq!(s.person, "ana");
        assert_eq!(s.csrf, csrf_of(&secret));

        let late = new_code(&mem).unwrap();
        let later = mem_at(dir.path(), "2026-12-01T09:10:01Z");
        assert!(!code_is_valid(&later, &late).unwrap());
        assert!(matches!(
            sign_in(&later, &late, "ana"),
            Err(AuthError::BadCode)
        ));
        assert!(matches!(
            sign_in(&mem, "00", "ana"),
            Err(AuthError::BadCode)
        ));
    }

    #[test]
    fn sessions_end_idle_absolute_and_on_sign_out() {
        let dir = tempfile::tempdir().unwrap();
        let mem = mem_at(dir.path(), "2026-12-01T09:00:00Z");
        let secret = sign_in(&mem, &new_code(&mem).unwrap(), "ana").unwrap();
        // The files hold hashes only.
        let text = std::fs::read_to_string(dir.path().join(".memdir").join(SESSIONS_FILE)).unwrap();
        assert!(!text.contains(&secret));
        // Used every 11 hours, it lives until the seventh day after sign-in.
        for at in ["2026-12-01T20:00:00Z", "2026-12-02T07:00:00Z"] {
            assert!(
                session(&mem_at(dir.path(), at), &secret).unwrap().is_some(),
                "{at}"
            );
        }
        assert!(
            session(&mem_at(dir.path(), "2026-12-02T19:00:01Z"), &secret)
                .unwrap()
                .is_none()
        );

        let mem = mem_at(dir.path(), "2026-12-03T09:00:00Z");
        let secret = sign_in(&mem, &new_code(&mem).unwrap(), "ana").unwrap();
        let mut at = mem.clock().now().timestamp();
        for _ in 0..14 {
            at = at.checked_add(11.hours()).unwrap();
            let m = mem_at(dir.path(), &at.to_string());
            let alive = session(&m, &secret).unwrap().is_some();
            assert_eq!(alive, at < "2026-12-10T09:00:00Z".parse().unwrap(), "{at}");
        }

        let mem = mem_at(dir.path(), "2026-12-20T09:00:00Z");
        let secret = sign_in(&mem, &new_code(&mem).unwrap(), "ana").unwrap();
        let s = session(&mem, &secret).unwrap().unwrap();
        sign_out(&mem, &s).unwrap();
        assert!(session(&mem, &secret).unwrap().is_none());
    }
}
