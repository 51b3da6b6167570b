//! The registry of a folder of memories: `tenants.json` at the service root, and each tenant's
//! memory in `tenants/<name>/`.

use crate::store::FolderStore;
use memdir_store::registry::{Tenant, Tenants, check_name, check_principal, same};
use memdir_store::{Backend, StoreError};
use std::path::{Path, PathBuf};

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
    StoreError::Unavailable(format!("cannot {what} {}: {e}", path.display()))
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
        if self.root.join(crate::META_DIR).exists() {
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
                StoreError::Unavailable(format!(
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
        let mut bytes = serde_json::to_vec_pretty(&reg).map_err(|e| {
            StoreError::Unavailable(format!("cannot encode the tenant registry: {e}"))
        })?;
        bytes.push(b'\n');
        let path = self.registry_path();
        crate::atomic::write(&path, &bytes).map_err(|e| io_err("write", &path, e))?;
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
        Ok(store.backend())
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
