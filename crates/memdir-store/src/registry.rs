//! The tenants of a memory service: the registry seam every service backend implements.
//!
//! A service root (a PostgreSQL database, or a folder of memories) holds many memories, one per
//! tenant, and a registry of credentials: each tenant has a name, a principal (the writer its
//! changes are recorded under, whatever a client says) and the SHA-256 of its bearer token.
//! Minting and hashing tokens is the service's business; a registry keeps hashes only.

use crate::backend::Backend;
use crate::store::StoreError;

/// One tenant: its memory's name and the principal its changes are recorded under.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tenant {
    /// The memory's name (1 to 128 letters, digits, `-`, `_`, `.` or `@`).
    pub name: String,
    /// The writer recorded in history for this tenant's changes.
    pub principal: String,
    /// When the tenant was added, Unix milliseconds.
    #[serde(default)]
    pub created_ms: i64,
    /// When its token was last set (added or rotated), Unix milliseconds.
    #[serde(default)]
    pub token_set_ms: i64,
}

impl Tenant {
    /// A tenant named `name` whose changes are recorded as `principal`.
    pub fn new(name: &str, principal: &str) -> Tenant {
        Tenant {
            name: name.to_string(),
            principal: principal.to_string(),
            created_ms: 0,
            token_set_ms: 0,
        }
    }
}

/// Refuses a tenant name that is not 1 to 128 letters, digits, `-`, `_`, `.` or `@` (and not
/// `.` or `..`), so a name is safe in a URL, a log line, a lock key and a folder name.
pub fn check_name(name: &str) -> Result<(), StoreError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidPath(format!(
            "bad tenant name {name:?}: use 1 to 128 letters, digits, '-', '_', '.' or '@'"
        )))
    }
}

/// Refuses a principal that is not a writer name (1-64 lowercase letters, digits and dashes):
/// it is recorded as the writer of every change the tenant makes.
pub fn check_principal(p: &str) -> Result<(), StoreError> {
    memdir_core::scratch::validate_slug(p).map_err(|_| {
        StoreError::InvalidPath(format!(
            "bad principal {p:?}: it is the writer of the tenant's changes, so use 1-64 lowercase letters, digits and dashes, e.g. alice"
        ))
    })
}

/// A principal made from a tenant's name: lowercase, other characters as dashes.
pub fn default_principal(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(64).collect();
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "tenant".to_string()
    } else {
        out
    }
}

/// A registry of tenants and the memories they reach.
pub trait Tenants: Send + Sync {
    /// Registers a tenant with its token's hash. A tenant of that name that already has a
    /// token is a conflict; a memory of that name without one (made by `init`) is adopted.
    fn add(&self, tenant: &Tenant, token_hash: &str) -> Result<(), StoreError>;

    /// Every registered tenant, by name.
    fn list(&self) -> Result<Vec<Tenant>, StoreError>;

    /// At most `limit` tenants whose names come after `after` (in byte order), by name: one
    /// page of the list, for registries too large to list at once. A registry that can read
    /// a page without reading the rest says so by overriding this.
    fn list_page(&self, after: Option<&str>, limit: usize) -> Result<Vec<Tenant>, StoreError> {
        let mut all = self.list()?;
        all.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(all
            .into_iter()
            .filter(|t| after.is_none_or(|a| t.name.as_str() > a))
            .take(limit)
            .collect())
    }

    /// Replaces a tenant's token: the old one stops working at once.
    fn set_token(&self, name: &str, token_hash: &str) -> Result<(), StoreError>;

    /// Removes a tenant's credentials; with `purge`, its memory and history too.
    fn remove(&self, name: &str, purge: bool) -> Result<(), StoreError>;

    /// The tenant this token hash belongs to.
    fn by_token(&self, token_hash: &str) -> Result<Option<Tenant>, StoreError>;

    /// The registered tenant of this name.
    fn get(&self, name: &str) -> Result<Option<Tenant>, StoreError> {
        Ok(self.list()?.into_iter().find(|t| t.name == name))
    }

    /// The tenant's memory, created (empty) when `create` and missing.
    fn backend(&self, name: &str, create: bool) -> Result<Backend, StoreError>;

    /// Claims at most `limit` registered tenants whose `job` is due, for `lease_ms`: no other
    /// instance (registry handle) claims them until [`Tenants::job_done`] or the lease ends (then
    /// another takes over what a stopped one left). A tenant's job never run is due at once, or
    /// with `schedule.at_ms` at the next such time of day. A registry that keeps no schedule runs
    /// no jobs (the default: none are due).
    fn claim_jobs(
        &self,
        job: Job,
        schedule: Schedule,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<Tenant>, StoreError> {
        let _ = (job, schedule, lease_ms, limit);
        Ok(Vec::new())
    }

    /// Extends this handle's claim on tenant `name`'s `job` by `lease_ms` from now; false when
    /// the claim is no longer its own (its lease ended and another instance took the tenant), so
    /// the job must not run here.
    fn renew_job(&self, name: &str, job: Job, lease_ms: i64) -> Result<bool, StoreError> {
        let _ = (name, job, lease_ms);
        Ok(false)
    }

    /// Marks tenant `name`'s `job` done (when this handle still holds it): the next run is due
    /// by `schedule`.
    fn job_done(&self, name: &str, job: Job, schedule: Schedule) -> Result<(), StoreError> {
        let _ = (name, job, schedule);
        Ok(())
    }

    /// Fails when the registry cannot be reached (for a readiness probe).
    fn ready(&self) -> Result<(), StoreError> {
        self.list_page(None, 1).map(drop)
    }
}

/// A job the service runs for every registered tenant on a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// Expired scratch and notes, old state lines (`memdir sweep`).
    Sweep,
    /// Proposals from the logs (`memdir consolidate`).
    Consolidate,
}

impl Job {
    /// The job's name as the registry keeps it.
    pub fn name(self) -> &'static str {
        match self {
            Job::Sweep => "sweep",
            Job::Consolidate => "consolidate",
        }
    }
}

/// When a tenant's job is due again after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Milliseconds from one run to the next (with `at_ms`, a whole number of days).
    pub every_ms: i64,
    /// Runs start at this many milliseconds after midnight UTC (`None`: whenever due).
    pub at_ms: Option<i64>,
}

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// Compares two byte strings in time that depends only on their lengths.
pub fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn principals_are_writer_names() {
        assert_eq!(
            default_principal("Alice.Smith@example.com"),
            "alice-smith-example-com"
        );
        assert_eq!(default_principal("@@"), "tenant");
        check_principal("alice").unwrap();
        assert!(check_principal("alice@example.com").is_err());
    }

    #[test]
    fn names_are_checked() {
        for bad in ["", ".", "..", "a/b", "a b", "ä", &"x".repeat(129)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["alice", "a.b-c_d@e", "1"] {
            check_name(good).unwrap();
        }
    }
}
