//! The tenants of a memory service: who may reach which memory, by bearer token.
//!
//! A service root (a PostgreSQL database, or a folder of memories) holds many memories, one per
//! tenant, and a registry of credentials: each tenant has a name, a principal (the writer its
//! changes are recorded under, whatever a client says) and the SHA-256 of its bearer token. The
//! token itself is shown once, when it is made, and never stored: a registry that leaks gives
//! no one a way in.
//!
//! Looking a token up by its hash is safe against timing: the hash of a 256-bit random secret
//! tells an attacker nothing they can steer byte by byte. The folder registry still compares
//! hashes in constant time, since it scans them all anyway.
//!
//! ```
//! use memdir::tenants::{FolderTenants, Tenant, Tenants, new_token, token_hash};
//! let dir = tempfile::tempdir().unwrap();
//! let reg = FolderTenants::new(dir.path());
//! let token = new_token().unwrap();
//! reg.add(&Tenant::new("alice", "alice"), &token_hash(&token)).unwrap();
//! assert_eq!(reg.by_token(&token_hash(&token)).unwrap().unwrap().name, "alice");
//! assert!(reg.by_token(&token_hash("mdt_wrong")).unwrap().is_none());
//! ```

use crate::backend::Backend;
use crate::folder::FolderStore;
use crate::store::StoreError;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// How a memdir token starts, so one found in a log or a paste is recognisable.
pub const TOKEN_PREFIX: &str = "mdt_";

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

/// A new bearer token: `mdt_` and 64 hex digits from the operating system's CSPRNG.
pub fn new_token() -> Result<String, StoreError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| {
        StoreError::Backend(format!("no randomness from the operating system: {e}"))
    })?;
    let mut s = String::with_capacity(TOKEN_PREFIX.len() + 64);
    s.push_str(TOKEN_PREFIX);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    Ok(s)
}

/// What the registry keeps of a token: its SHA-256, in hex.
pub fn token_hash(token: &str) -> String {
    memdir_core::gates::sha256_hex(token.trim().as_bytes())
}

/// Compares two byte strings in time that depends only on their lengths.
pub fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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

    /// Replaces a tenant's token: the old one stops working at once.
    fn set_token(&self, name: &str, token_hash: &str) -> Result<(), StoreError>;

    /// Removes a tenant's credentials; with `purge`, its memory and history too.
    fn remove(&self, name: &str, purge: bool) -> Result<(), StoreError>;

    /// The tenant this token hash belongs to.
    fn by_token(&self, token_hash: &str) -> Result<Option<Tenant>, StoreError>;

    /// The tenant's memory, created (empty) when `create` and missing.
    fn backend(&self, name: &str, create: bool) -> Result<Backend, StoreError>;

    /// Fails when the registry cannot be reached (for a readiness probe).
    fn ready(&self) -> Result<(), StoreError> {
        self.list().map(drop)
    }
}

/// The registry of a folder of memories: `tenants.json` at the service root, and each
/// tenant's memory in `tenants/<name>/` (an ordinary memory folder with its own git history).
#[derive(Debug, Clone)]
pub struct FolderTenants {
    root: PathBuf,
}

/// The registry file's name in a service root.
pub const REGISTRY_FILE: &str = "tenants.json";
/// The folder, in a service root, that holds one memory folder per tenant.
pub const TENANTS_DIR: &str = "tenants";

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Registry {
    version: u32,
    tenants: Vec<Record>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Record {
    #[serde(flatten)]
    tenant: Tenant,
    token_sha256: String,
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Backend(format!("cannot {what} {}: {e}", path.display()))
}

fn no_tenant(name: &str) -> StoreError {
    StoreError::NotFound(format!(
        "no tenant {name:?}: `memdir tenant list` shows them"
    ))
}

impl FolderTenants {
    /// The registry of the service root `root`.
    pub fn new(root: &Path) -> FolderTenants {
        FolderTenants {
            root: root.to_path_buf(),
        }
    }

    /// True when `root` holds a tenant registry (so it is a service root, not one memory).
    pub fn is_service_root(root: &Path) -> bool {
        root.join(REGISTRY_FILE).is_file()
    }

    /// Refuses a memory folder: its notes would be mixed with tenants.
    fn not_a_memory(&self) -> Result<(), StoreError> {
        if self.root.join(crate::folder::META_DIR).exists() {
            return Err(StoreError::InvalidPath(format!(
                "{} is a memory folder, not a service root: give tenants a folder of their own",
                self.root.display()
            )));
        }
        Ok(())
    }

    fn registry_path(&self) -> PathBuf {
        self.root.join(REGISTRY_FILE)
    }

    fn memory_path(&self, name: &str) -> PathBuf {
        self.root.join(TENANTS_DIR).join(name)
    }

    fn read(&self) -> Result<Registry, StoreError> {
        let path = self.registry_path();
        match std::fs::read(&path) {
            Ok(b) => serde_json::from_slice(&b).map_err(|e| {
                StoreError::Backend(format!(
                    "the tenant registry {} is not valid: {e}",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Registry {
                version: 1,
                tenants: Vec::new(),
            }),
            Err(e) => Err(io_err("read", &path, e)),
        }
    }

    /// Runs a read-modify-write of the registry under its lock, and writes the result atomically.
    fn update<T>(
        &self,
        f: impl FnOnce(&mut Registry) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        std::fs::create_dir_all(&self.root).map_err(|e| io_err("create", &self.root, e))?;
        self.not_a_memory()?;
        let lock_path = self.root.join("tenants.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io_err("open", &lock_path, e))?;
        lock.lock().map_err(|e| io_err("lock", &lock_path, e))?;
        let mut reg = self.read()?;
        let out = f(&mut reg)?;
        reg.version = 1;
        let mut bytes = serde_json::to_vec_pretty(&reg)
            .map_err(|e| StoreError::Backend(format!("cannot encode the tenant registry: {e}")))?;
        bytes.push(b'\n');
        let path = self.registry_path();
        let tmp = self
            .root
            .join(format!(".{REGISTRY_FILE}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)?;
            std::fs::File::open(&self.root)?.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io_err("write", &path, e));
        }
        Ok(out)
    }
}

impl Tenants for FolderTenants {
    fn add(&self, tenant: &Tenant, token_hash: &str) -> Result<(), StoreError> {
        check_name(&tenant.name)?;
        check_principal(&tenant.principal)?;
        self.update(|reg| {
            if reg.tenants.iter().any(|r| r.tenant.name == tenant.name) {
                return Err(StoreError::Conflict(format!(
                    "tenant {:?} already exists: `memdir tenant rotate {}` gives it a new token",
                    tenant.name, tenant.name
                )));
            }
            let now = now_ms();
            reg.tenants.push(Record {
                tenant: Tenant {
                    created_ms: now,
                    token_set_ms: now,
                    ..tenant.clone()
                },
                token_sha256: token_hash.to_string(),
            });
            reg.tenants
                .sort_by(|a, b| a.tenant.name.cmp(&b.tenant.name));
            Ok(())
        })
    }

    fn list(&self) -> Result<Vec<Tenant>, StoreError> {
        self.not_a_memory()?;
        Ok(self.read()?.tenants.into_iter().map(|r| r.tenant).collect())
    }

    fn set_token(&self, name: &str, token_hash: &str) -> Result<(), StoreError> {
        self.update(|reg| {
            let r = reg
                .tenants
                .iter_mut()
                .find(|r| r.tenant.name == name)
                .ok_or_else(|| no_tenant(name))?;
            r.token_sha256 = token_hash.to_string();
            r.tenant.token_set_ms = now_ms();
            Ok(())
        })
    }

    fn remove(&self, name: &str, purge: bool) -> Result<(), StoreError> {
        check_name(name)?;
        self.update(|reg| {
            let before = reg.tenants.len();
            reg.tenants.retain(|r| r.tenant.name != name);
            let dir = self.memory_path(name);
            if before == reg.tenants.len() && !(purge && dir.exists()) {
                return Err(no_tenant(name));
            }
            Ok(())
        })?;
        if purge {
            let dir = self.memory_path(name);
            match std::fs::remove_dir_all(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err("delete", &dir, e)),
            }
        }
        Ok(())
    }

    fn by_token(&self, token_hash: &str) -> Result<Option<Tenant>, StoreError> {
        let reg = self.read()?;
        let mut found = None;
        // Every record is compared, in constant time, whichever matches.
        for r in reg.tenants {
            if same(r.token_sha256.as_bytes(), token_hash.as_bytes()) {
                found = Some(r.tenant);
            }
        }
        Ok(found)
    }

    fn backend(&self, name: &str, create: bool) -> Result<Backend, StoreError> {
        check_name(name)?;
        let dir = self.memory_path(name);
        let store = if create {
            FolderStore::create(&dir)?
        } else {
            FolderStore::open(&dir)?
        };
        Ok(Backend::folder(store))
    }

    fn ready(&self) -> Result<(), StoreError> {
        self.read().map(drop)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hashed() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() == 68);
        assert_ne!(a, b);
        assert_eq!(token_hash(&a).len(), 64);
        assert_ne!(token_hash(&a), token_hash(&b));
    }

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

    #[test]
    fn folder_registry_add_rotate_remove() {
        let dir = tempfile::tempdir().unwrap();
        let reg = FolderTenants::new(dir.path());
        reg.add(&Tenant::new("alice", "alice"), "h1").unwrap();
        assert!(matches!(
            reg.add(&Tenant::new("alice", "x"), "h2"),
            Err(StoreError::Conflict(_))
        ));
        reg.add(&Tenant::new("bob", "bob"), "h3").unwrap();
        assert_eq!(reg.list().unwrap().len(), 2);
        reg.set_token("alice", "h4").unwrap();
        assert!(reg.by_token("h1").unwrap().is_none());
        assert_eq!(reg.by_token("h4").unwrap().unwrap().name, "alice");
        reg.backend("bob", true).unwrap();
        assert!(dir.path().join("tenants/bob").is_dir());
        reg.remove("bob", true).unwrap();
        assert!(!dir.path().join("tenants/bob").exists());
        assert!(matches!(
            reg.remove("bob", false),
            Err(StoreError::NotFound(_))
        ));
        assert!(reg.by_token("h3").unwrap().is_none());
    }

    #[test]
    fn a_memory_folder_is_not_a_service_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".memdir")).unwrap();
        let reg = FolderTenants::new(dir.path());
        assert!(matches!(
            reg.add(&Tenant::new("alice", "alice"), "h"),
            Err(StoreError::InvalidPath(_))
        ));
    }
}
