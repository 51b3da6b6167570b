//! The page of a memory service: every tenant's person signs in to their own memory.
//!
//! A person arrives with a single-use link (`memdir tenant link NAME`, valid
//! [`CODE_TTL_MINUTES`](crate::auth::CODE_TTL_MINUTES)) or with a short-lived signed token from
//! the product's own login ([`crate::sso`]). Either becomes a session kept, hashed, in the
//! service's registry ([`SignIns`]), so every instance honours a sign-out and a restart keeps
//! people signed in. The session names its tenant: the URLs are the same for everyone
//! (`/ui/files/core.md` is each person's own core), and nothing of another tenant can be named,
//! so a person of one tenant finds nothing of another (`404`).

use crate::auth::{
    self, ABSOLUTE_DAYS, AuthError, CODE_TTL_MINUTES, IDLE_HOURS, Session, TOUCH_EVERY_SECS,
    csrf_of, sha256_hex,
};
use crate::sso::{LEEWAY_SECS, Sso, SsoError};
use jiff::Timestamp;
use memdir::{Clock, Memory};
use std::sync::Arc;

pub use memdir_store::signins::{PersonSession, SignIns};

/// Opens a tenant's memory by name, as the service runs it (`None`: no such tenant, or its
/// credentials were removed).
pub type TenantMemories = Arc<dyn Fn(&str) -> Result<Option<Memory>, String> + Send + Sync>;

/// What the page of a service stands on.
pub struct ServicePage {
    /// Codes and sessions, shared by every instance.
    pub sign_ins: Arc<dyn SignIns>,
    /// The tenants' memories.
    pub memories: TenantMemories,
    /// Sign-in by a product's signed token, when the operator configured it.
    pub sso: Option<Sso>,
    /// The clock expiries are measured with.
    pub clock: Clock,
}

fn ms(t: Timestamp) -> i64 {
    t.as_millisecond()
}

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn store_err(e: memdir::StoreError) -> AuthError {
    AuthError::Store(e.to_string())
}

/// Makes a single-use sign-in code for `person` of `tenant`, valid for
/// [`CODE_TTL_MINUTES`] after `now`, and returns it (the registry keeps its hash only).
pub fn new_code(
    sign_ins: &dyn SignIns,
    tenant: &str,
    person: &str,
    now: Timestamp,
) -> Result<String, AuthError> {
    check_person(person)?;
    let code = auth::secret()?;
    let expires = ms(now) + CODE_TTL_MINUTES * 60_000;
    sign_ins
        .add_code(&sha256_hex(&code), tenant, person, expires, ms(now))
        .map_err(store_err)?;
    Ok(code)
}

fn check_person(person: &str) -> Result<(), AuthError> {
    memdir::tenants::check_principal(person).map_err(|_| AuthError::BadPerson(person.into()))
}

impl ServicePage {
    fn now(&self) -> Timestamp {
        self.clock.now().timestamp()
    }

    fn memory(&self, tenant: &str) -> Result<Option<Memory>, AuthError> {
        (self.memories)(tenant).map_err(AuthError::Store)
    }

    /// True when `code` would sign in now.
    pub(crate) fn code_is_valid(&self, code: &str) -> Result<bool, AuthError> {
        Ok(self
            .sign_ins
            .peek_code(&sha256_hex(code), ms(self.now()))
            .map_err(store_err)?
            .is_some())
    }

    /// Uses up `code` and starts its person's session; returns the cookie's secret.
    pub(crate) fn sign_in_code(&self, code: &str) -> Result<String, AuthError> {
        let (tenant, person) = self
            .sign_ins
            .take_code(&sha256_hex(code), ms(self.now()))
            .map_err(store_err)?
            .ok_or(AuthError::BadLink)?;
        self.start(&tenant, &person)
    }

    /// The person a signed token would sign in, checked but not used up.
    pub(crate) fn check_token(&self, token: &str) -> Result<crate::sso::Claims, AuthError> {
        let sso = self.sso.as_ref().ok_or_else(|| {
            AuthError::Sso(SsoError::Invalid(
                "this service does not take sign-in tokens ([ui.sso] is not configured)".into(),
            ))
        })?;
        let claims = sso.verify(token, self.now().as_second())?;
        check_person(&claims.person)?;
        if self.memory(&claims.tenant)?.is_none() {
            return Err(AuthError::NoTenant);
        }
        Ok(claims)
    }

    /// Uses up a signed token and starts its person's session; returns the cookie's secret.
    pub(crate) fn sign_in_token(&self, token: &str) -> Result<String, AuthError> {
        let claims = self.check_token(token)?;
        let until = (claims.exp + LEEWAY_SECS) * 1000;
        let first = self
            .sign_ins
            .spend_token(&sha256_hex(token), &claims.tenant, &claims.person, until)
            .map_err(store_err)?;
        if !first {
            return Err(SsoError::Reused.into());
        }
        self.start(&claims.tenant, &claims.person)
    }

    fn start(&self, tenant: &str, person: &str) -> Result<String, AuthError> {
        if self.memory(tenant)?.is_none() {
            return Err(AuthError::NoTenant);
        }
        let secret = auth::secret()?;
        let now = ms(self.now());
        let (idle, absolute) = (IDLE_HOURS * 3_600_000, ABSOLUTE_DAYS * 86_400_000);
        self.sign_ins
            .forget_sessions(now - idle, now - absolute)
            .map_err(store_err)?;
        self.sign_ins
            .start_session(&sha256_hex(&secret), tenant, person, now)
            .map_err(store_err)?;
        Ok(secret)
    }

    /// The session whose cookie holds `secret`, if signed in, not expired, and its tenant is
    /// still served.
    pub(crate) fn session(&self, secret: &str) -> Result<Option<Session>, AuthError> {
        let key = sha256_hex(secret);
        let Some(found) = self.sign_ins.session(&key).map_err(store_err)? else {
            return Ok(None);
        };
        let now = self.now();
        if !auth::alive_at(at(found.created_ms), at(found.seen_ms), now) {
            return Ok(None);
        }
        let Some(mem) = self.memory(&found.tenant)? else {
            return Ok(None);
        };
        if ms(now) - found.seen_ms >= TOUCH_EVERY_SECS * 1000 {
            self.sign_ins
                .touch_session(&key, ms(now))
                .map_err(store_err)?;
        }
        Ok(Some(Session {
            person: found.person,
            csrf: csrf_of(secret),
            key,
            mem,
        }))
    }

    /// Ends a session on every instance.
    pub(crate) fn sign_out(&self, s: &Session) -> Result<(), AuthError> {
        self.sign_ins.end_session(&s.key).map_err(store_err)
    }
}
